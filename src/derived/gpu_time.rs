//! GPU time of module and thunk executions, aggregated for any number of inputs
//! ([`GpuTime`]), and the rule for which executions count ([`Selection`]): the notebook's
//! `steady_state` with `top_module_ids`. Shared by every view of GPU time — the flame
//! graphs of njx-flamefold and the thunk tables of njx-thunks — so that they all divide
//! the same time; the partial result of `njx-flamefold --partial` (kind [`PARTIAL`]).
//!
//! Only aggregates are held: time per (program, thunk) and per (device, program), so
//! memory follows the number of distinct thunks, not of ranks or executions; profiles are
//! read one input path per core at a time.

use crate::derived::executions::{self, Executions, Phase, Warmup};
use crate::derived::partial;
use crate::derived::programs::ProgramFilter;
use crate::error::Result;
use crate::hlo::thunk_info::{self, Infos, Wanted};
use crate::output::notes::Notes;
use crate::records::{Module, Thunk, is_autotuning};
use crate::source::records::RecordStream;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The top frame of busy GPU time.
pub const GPU_ACTIVE: &str = "[GPU active]";
/// The frame of time without known source or op_name.
pub const UNKNOWN: &str = "[Unknown]";
/// Module time not covered by thunks.
pub const IDLE_INSIDE: &str = "[GPU idle during module execution]";
/// Time between modules.
pub const IDLE_BETWEEN: &str = "[GPU idle between module executions]";

/// Per program: its module name and times.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
struct ProgramAcc {
    name: String,
    module_ns: i64,
    thunk_ns: i64,
}

impl ProgramAcc {
    fn merge(&mut self, o: &ProgramAcc) {
        if self.name.is_empty() || (!o.name.is_empty() && o.name < self.name) {
            self.name.clone_from(&o.name);
        }
        self.module_ns = self.module_ns.saturating_add(o.module_ns);
        self.thunk_ns = self.thunk_ns.saturating_add(o.thunk_ns);
    }
}

/// Per (device, program): first start, last end, module and thunk time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Span {
    start: i64,
    end: i64,
    module_ns: i64,
    thunk_ns: i64,
}

impl Default for Span {
    fn default() -> Self {
        Span {
            start: i64::MAX,
            end: i64::MIN,
            module_ns: 0,
            thunk_ns: 0,
        }
    }
}

impl Span {
    fn merge(&mut self, o: &Span) {
        self.start = self.start.min(o.start);
        self.end = self.end.max(o.end);
        self.module_ns = self.module_ns.saturating_add(o.module_ns);
        self.thunk_ns = self.thunk_ns.saturating_add(o.thunk_ns);
    }
}

/// GPU time aggregated from execution records, per [`Phase`] (warm-up is decided when
/// folding, over everything read): what the flame graphs need of any number of inputs,
/// and the partial result of `njx-flamefold --partial` (kind [`PARTIAL`]). Time per
/// (program, thunk) — per device too only for `--by device` — and per (device,
/// program), so memory follows the distinct thunks, not the ranks or executions.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuTime {
    /// The ranks read into it: carried beside its data in partial results.
    #[serde(skip)]
    pub(crate) seen: crate::derived::ranks::Seen,

    warmup: Warmup,
    /// Whether thunk time is kept per device.
    by_device: bool,
    #[serde(with = "crate::derived::partial::pairs")]
    programs: BTreeMap<(String, Phase), ProgramAcc>,
    #[serde(with = "crate::derived::partial::pairs")]
    spans: BTreeMap<(u32, String, Phase), Span>,
    #[serde(with = "crate::derived::partial::pairs")]
    thunks: BTreeMap<(String, String, Option<u32>, Phase), i64>,
    /// Program → (profile, program id, module name): where to look for its dumps.
    dumps_of: BTreeMap<String, BTreeSet<(String, u64, String)>>,
    modules_read: u64,
    thunks_read: u64,
    /// What the HLO dumps say of every thunk, read when writing a partial result (the
    /// reduce step need not have the dumps).
    #[serde(default, with = "crate::hlo::thunk_info::interned")]
    infos: Option<Infos>,
    /// The last (program, profile, program id, module) added to `dumps_of`.
    #[serde(skip)]
    last_dump: Option<(String, String, u64, String)>,
    /// Whether `infos` are taken from the profiles' own dumps as they are read.
    #[serde(skip)]
    collect_infos: bool,
    /// Whether GPU time is kept per thunk (`thunks`): the flame graphs fold it; njx-thunks
    /// keeps its own statistics per thunk and does without (half its memory per thunk).
    #[serde(skip, default = "keeps_thunks")]
    keep_thunks: bool,
}

fn keeps_thunks() -> bool {
    true
}

/// The kind of [`GpuTime`]'s partial results.
pub const PARTIAL: &str = "gpu-time";

/// The GPU time that counts, warm-up decided: what is folded.
#[derive(Debug)]
struct Settled<'a> {
    programs: BTreeMap<&'a str, ProgramAcc>,
    spans: BTreeMap<(u32, &'a str), Span>,
    thunks: BTreeMap<(&'a str, &'a str, Option<u32>), i64>,
    thunks_read: u64,
}

impl GpuTime {
    /// An empty aggregate; thunk time per device too when `by_device`; with
    /// `collect_infos` (the modes that need the HLO dumps), what each profile's own dumps
    /// say of its thunks too, taken while they are decoded for the executions.
    pub fn new(by_device: bool, collect_infos: bool) -> GpuTime {
        GpuTime {
            by_device,
            collect_infos,
            keep_thunks: true,
            ..GpuTime::default()
        }
    }

    /// The aggregate without GPU time per thunk (njx-thunks, which keeps its own).
    pub fn without_thunk_time(mut self) -> GpuTime {
        self.keep_thunks = false;
        self
    }

    fn module(&mut self, m: &Module, phase: Phase) {
        self.modules_read += 1;
        let p = self.programs.entry((m.program.clone(), phase)).or_default();
        if p.name.is_empty() || m.name < p.name {
            p.name.clone_from(&m.name);
        }
        p.module_ns = p.module_ns.saturating_add(m.dur_ns);
        let s = self
            .spans
            .entry((m.device, m.program.clone(), phase))
            .or_default();
        s.start = s.start.min(m.start_ns);
        s.end = s.end.max(m.start_ns + m.dur_ns);
        s.module_ns = s.module_ns.saturating_add(m.dur_ns);
    }

    fn thunk(&mut self, t: &Thunk, phase: Phase) {
        self.thunks_read += 1;
        let p = self.programs.entry((t.program.clone(), phase)).or_default();
        // Module records name the program; thunk records do too (their module).
        if p.name.is_empty() || t.module < p.name {
            p.name.clone_from(&t.module);
        }
        p.thunk_ns = p.thunk_ns.saturating_add(t.dur_ns);
        // Saturating throughout: records read back may carry any times.
        let s = self
            .spans
            .entry((t.device, t.program.clone(), phase))
            .or_default();
        s.thunk_ns = s.thunk_ns.saturating_add(t.dur_ns);
        if self.keep_thunks {
            let device = self.by_device.then_some(t.device);
            let k = self
                .thunks
                .entry((t.program.clone(), t.name.clone(), device, phase))
                .or_default();
            *k = k.saturating_add(t.dur_ns);
        }
        if let Some(id) = t.program_id {
            // Consecutive thunks mostly share all four.
            let same = self.last_dump.as_ref().is_some_and(|(prog, prof, i, m)| {
                *i == id && *prog == t.program && **prof == *t.profile && *m == t.module
            });
            if !same {
                let key = (t.profile.to_string(), id, t.module.clone());
                self.dumps_of
                    .entry(t.program.clone())
                    .or_default()
                    .insert(key.clone());
                self.last_dump = Some((t.program.clone(), key.0, key.1, key.2));
            }
        }
    }

    /// Adds one module record (its warm-up already decided).
    pub fn add_module(&mut self, m: &Module) {
        self.warmup.variants.add(&m.name, &m.program, m.device);
        self.module(m, Phase::of_record(m.warmup));
    }

    /// Adds one thunk record (its warm-up already decided).
    pub fn add_thunk(&mut self, t: &Thunk) {
        self.warmup.variants.add(&t.module, &t.program, t.device);
        self.thunk(t, Phase::of_record(t.warmup));
    }

    /// Adds the executions of one input path (warm-up decided when folding) and, when
    /// collecting them, what the dumps read for it say of its thunks.
    pub fn add_profile(&mut self, part: &Executions, notes: &Notes) -> Result<()> {
        self.warmup.add(part);
        for m in &part.modules {
            self.module(m, Phase::of_profile(m.execution));
        }
        for t in &part.thunks {
            self.thunk(t, Phase::of_profile(t.execution));
        }
        if self.collect_infos && !part.dumps.is_empty() {
            let mut names: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
            for t in &part.thunks {
                names.entry(&t.program).or_default().insert(&t.name);
            }
            let mut interner = thunk_info::Interner::default();
            let carried = self.infos.get_or_insert_default();
            // In member order, as `source_infos` reads an archive's dumps.
            for hlo in &part.dumps {
                let key = crate::hlo::ProgramKey::of(hlo, hlo.id() as u64).record();
                let Some(names) = names.get(key.as_str()) else {
                    continue;
                };
                let infos = thunk_info::module_infos(hlo, names, &mut interner)?;
                let slot = carried.entry(key).or_insert(None);
                *slot = thunk_info::combine(slot.take(), Some(infos), hlo.place(), notes);
            }
        }
        Ok(())
    }

    /// Merges another aggregate in (of the same `by_device`); where the infos of a thunk
    /// disagree, a note.
    pub fn merge(&mut self, other: GpuTime, notes: &Notes) {
        self.warmup.merge(other.warmup);
        for (k, p) in other.programs {
            self.programs.entry(k).or_default().merge(&p);
        }
        for (k, s) in other.spans {
            self.spans.entry(k).or_default().merge(&s);
        }
        for (k, ns) in other.thunks {
            let t = self.thunks.entry(k).or_default();
            *t = t.saturating_add(ns);
        }
        for (k, from) in other.dumps_of {
            self.dumps_of.entry(k).or_default().extend(from);
        }
        self.modules_read = self.modules_read.saturating_add(other.modules_read);
        self.thunks_read = self.thunks_read.saturating_add(other.thunks_read);
        if let Some(theirs) = other.infos {
            let mine = self.infos.get_or_insert_default();
            for (program, infos) in theirs {
                let slot = mine.entry(program).or_insert(None);
                *slot = thunk_info::combine(slot.take(), infos, "a later input", notes);
            }
        }
    }

    /// Whether HLO infos travel with this aggregate (partial results in the input).
    pub fn has_infos(&self) -> bool {
        self.infos.is_some()
    }

    /// Reads what the HLO dumps of `hlo` say of every thunk aggregated, to travel in a
    /// partial result: for the programs whose infos were not taken from the profiles as
    /// they were read (those of record inputs, or of dumps given with `--hlo` only).
    pub fn attach_infos(&mut self, hlo: &[PathBuf], notes: &Notes) -> Result<()> {
        let names: BTreeSet<(String, String)> = self
            .thunks
            .keys()
            .map(|(program, name, _, _)| (program.clone(), name.clone()))
            .collect();
        self.attach_infos_of(&names, hlo, notes)
    }

    /// [`GpuTime::attach_infos`] for the thunks `thunks` (program, name) names.
    pub fn attach_infos_of(
        &mut self,
        thunks: &BTreeSet<(String, String)>,
        hlo: &[PathBuf],
        notes: &Notes,
    ) -> Result<()> {
        let carried = self.infos.as_ref();
        let mut names: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (program, name) in thunks {
            if carried.is_none_or(|c| !c.contains_key(program.as_str())) {
                names.entry(program).or_default().insert(name);
            }
        }
        let empty = BTreeSet::new();
        let wanted: BTreeMap<&str, Wanted<'_>> = names
            .into_iter()
            .map(|(program, names)| {
                (
                    program,
                    Wanted {
                        from: self.dumps_of.get(program).unwrap_or(&empty),
                        names,
                    },
                )
            })
            .collect();
        let wanted: BTreeMap<&str, &Wanted<'_>> = wanted.iter().map(|(&p, w)| (p, w)).collect();
        let infos = thunk_info::read_infos(hlo, &wanted, notes)?;
        let mut carried = self.infos.take().unwrap_or_default();
        for (program, infos) in infos {
            let slot = carried.entry(program).or_insert(None);
            *slot = thunk_info::combine(slot.take(), infos, "a partial result", notes);
        }
        self.infos = Some(carried);
        Ok(())
    }

    /// Thunks that take more GPU time than the module executions they belong to, on a
    /// device where module executions were read: a thunk's exposed time lies inside its
    /// module execution (the idle time during module executions is their difference).
    pub fn thunks_beyond_modules(&self) -> Option<String> {
        let (&(device, ref program, _), s) = self
            .spans
            .iter()
            .find(|(_, s)| s.module_ns > 0 && s.thunk_ns > s.module_ns)?;
        let name = self
            .programs
            .iter()
            .find(|((p, _), _)| p == program)
            .map_or("", |(_, p)| p.name.as_str());
        Some(format!(
            "the thunks of program {program} ({name}) on device {device} take {} ns of GPU \
             time, more than its module executions ({} ns): thunks outside their module \
             executions, or module and thunk records of different runs",
            s.thunk_ns, s.module_ns
        ))
    }

    /// The time that counts: steady state (unless `include_warmup`), autotuning left out,
    /// of the programs `kept` (all where `None`).
    fn settle(&self, include_warmup: bool, kept: Option<&BTreeSet<&str>>) -> Settled<'_> {
        let rule = self.warmup.rule();
        // Autotuning executions (program `unknown`) belong to initialisation too.
        let counts = |program: &str, warmup: bool| {
            (include_warmup || (!warmup && !is_autotuning(program)))
                && kept.is_none_or(|k| k.contains(program))
        };
        let mut out = Settled {
            programs: BTreeMap::new(),
            spans: BTreeMap::new(),
            thunks: BTreeMap::new(),
            thunks_read: self.thunks_read,
        };
        // A program's time counts for modules and thunks separately (the two rules).
        for ((program, phase), p) in &self.programs {
            let (m, t) = (
                counts(program, rule.module_is_warmup(program, *phase)),
                counts(program, rule.thunk_is_warmup(program, *phase)),
            );
            if !m && !t {
                continue;
            }
            let part = ProgramAcc {
                name: p.name.clone(),
                module_ns: if m { p.module_ns } else { 0 },
                thunk_ns: if t { p.thunk_ns } else { 0 },
            };
            out.programs.entry(program).or_default().merge(&part);
        }
        for ((device, program, phase), s) in &self.spans {
            let (m, t) = (
                counts(program, rule.module_is_warmup(program, *phase)),
                counts(program, rule.thunk_is_warmup(program, *phase)),
            );
            if !m && !t {
                continue;
            }
            let part = if m {
                Span {
                    thunk_ns: if t { s.thunk_ns } else { 0 },
                    ..s.clone()
                }
            } else {
                Span {
                    thunk_ns: s.thunk_ns,
                    ..Span::default()
                }
            };
            out.spans
                .entry((*device, program))
                .or_default()
                .merge(&part);
        }
        for ((program, name, device, phase), ns) in &self.thunks {
            if counts(program, rule.thunk_is_warmup(program, *phase)) {
                let t = out.thunks.entry((program, name, *device)).or_default();
                *t = t.saturating_add(*ns); // partial results may carry any times
            }
        }
        out
    }
}

impl<'a> Settled<'a> {
    fn has_modules(&self) -> bool {
        self.programs.values().any(|p| p.module_ns > 0)
    }

    /// The programs that cover `fraction` of the time, largest first (the notebook's
    /// `top_module_ids`): module time, or thunk time when there are no module records.
    fn top_programs(&self, fraction: f64) -> Vec<&'a str> {
        let by_modules = self.has_modules();
        let time = |p: &ProgramAcc| if by_modules { p.module_ns } else { p.thunk_ns };
        let mut programs: Vec<(&'a str, i64)> =
            self.programs.iter().map(|(k, p)| (*k, time(p))).collect();
        programs.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let total: i64 = programs.iter().map(|p| p.1).fold(0, i64::saturating_add);
        let mut seen = 0.0;
        let mut out = Vec::new();
        for (key, ns) in programs {
            if seen < fraction {
                out.push(key);
            }
            seen += ns as f64 / total.max(1) as f64;
        }
        out
    }
}

/// Reads module and thunk executions from every input: record streams (JSON Lines or
/// CSV; a file of module records and one of thunk records, in any order), partial
/// results, nsys-jax archives and nsys SQLite exports or reports (both tables derived as
/// `njx-export --table` does, one input path at a time, HLO dumps also from `hlo`).
/// With `collect_infos`, what each archive's own dumps say of its thunks is taken as they
/// are decoded for the executions ([`GpuTime::new`]), so they are decoded once.
pub fn read_gpu_time(
    paths: &[PathBuf],
    hlo: &[PathBuf],
    by_device: bool,
    collect_infos: bool,
    notes: &Notes,
) -> Result<GpuTime> {
    // Clock alignment shifts each device as a whole: no time here depends on it.
    // Thunk infos are keyed by fingerprint: flame graphs key programs so.
    let keyed = executions::Hlo {
        dumps: hlo,
        key: executions::KeyBy::Fingerprint,
    };
    partial::aggregate(paths, keyed, notes, || {
        GpuTime::new(by_device, collect_infos)
    })
}

impl partial::Aggregate for GpuTime {
    fn seen(&self) -> &crate::derived::ranks::Seen {
        &self.seen
    }

    fn seen_mut(&mut self) -> &mut crate::derived::ranks::Seen {
        &mut self.seen
    }

    const KIND: &'static str = PARTIAL;
    const TABLE: &'static str = "modules|thunks";

    // GPU time per program: no figure compares a program's devices.
    fn compares_devices(&self) -> bool {
        false
    }

    fn add_records(&mut self, mut s: RecordStream, _: &Notes) -> Result<()> {
        if s.first_line_has("thunk_execution")? {
            s.read(&mut |t: Thunk| {
                self.add_thunk(&t);
                Ok(())
            })
        } else {
            s.read(&mut |m: Module| {
                self.add_module(&m);
                Ok(())
            })
        }
        .map(drop)
    }

    fn add_profile(&mut self, part: &Executions, notes: &Notes) -> Result<()> {
        GpuTime::add_profile(self, part, notes)
    }

    fn wants_dumps(&self) -> bool {
        self.collect_infos
    }

    fn merge(&mut self, other: Self, notes: &Notes) -> Result<()> {
        if other.by_device != self.by_device {
            return Err(crate::error::Error::Usage(
                "partial results written with and without --by device cannot be merged: \
                 write them with the same --by"
                    .to_string(),
            ));
        }
        GpuTime::merge(self, other, notes);
        Ok(())
    }

    fn warmup(&self) -> &Warmup {
        &self.warmup
    }
}

/// The executions that count and the programs among them that make up most of the time:
/// the notebook's `steady_state` with `top_module_ids` (steady-state executions unless
/// warm-up is included, autotuning left out; the largest programs until they cover a
/// fraction of module time, or of thunk time without module records). Shared by every
/// view of GPU time (flame graphs, `njx-thunks`), so that they all divide the same time.
#[derive(Debug)]
pub struct Selection<'a> {
    settled: Settled<'a>,
    rule: crate::derived::executions::Rule<'a>,
    include_warmup: bool,
    chosen: BTreeSet<&'a str>,
    /// The programs `--program` and `--exclude-program` keep (`None`: every one).
    kept: Option<BTreeSet<&'a str>>,
}

impl<'a> Selection<'a> {
    /// Whether the thunk executions of `program` in `phase` count (steady state unless
    /// warm-up is included, never autotuning), whatever the program's share.
    pub fn thunk_counts(&self, program: &str, phase: Phase) -> bool {
        (self.include_warmup
            || (!self.rule.thunk_is_warmup(program, phase) && !is_autotuning(program)))
            && self.kept.as_ref().is_none_or(|k| k.contains(program))
    }

    /// Whether `program` is among those that cover the fraction of the time.
    pub fn is_chosen(&self, program: &str) -> bool {
        self.chosen.contains(program)
    }

    /// The module name of `program` (empty when unknown).
    pub fn module_name(&self, program: &str) -> &str {
        self.settled
            .programs
            .get(program)
            .map_or("", |p| p.name.as_str())
    }

    /// Whether module executions were read (and so the idle time is known).
    pub fn has_modules(&self) -> bool {
        self.settled.has_modules()
    }

    /// GPU time per (program, thunk, device where kept per device) of the executions that
    /// count, of every program: what the flame graphs by module and device fold.
    pub fn thunks(&self) -> impl Iterator<Item = ((&'a str, &'a str, Option<u32>), i64)> + '_ {
        self.settled.thunks.iter().map(|(&k, &ns)| (k, ns))
    }

    /// GPU time per (program, thunk) over devices and executions, of the chosen programs.
    pub fn thunk_time(&self) -> BTreeMap<(&'a str, &'a str), i64> {
        let mut out: BTreeMap<(&str, &str), i64> = BTreeMap::new();
        for (&(program, name, _), &ns) in &self.settled.thunks {
            if self.chosen.contains(program) {
                let t = out.entry((program, name)).or_default();
                *t = t.saturating_add(ns);
            }
        }
        out
    }

    /// Per device: module time, thunk time, first start and last end of the chosen
    /// programs' module executions on it.
    pub fn devices(&self) -> BTreeMap<u32, (i64, i64, i64, i64)> {
        let mut devices: BTreeMap<u32, (i64, i64, i64, i64)> = BTreeMap::new();
        for (&(device, program), s) in &self.settled.spans {
            if !self.chosen.contains(program) || s.module_ns == 0 {
                continue;
            }
            // Saturating: partial results read back carry whatever times they were given.
            let d = devices.entry(device).or_insert((0, 0, i64::MAX, i64::MIN));
            d.0 = d.0.saturating_add(s.module_ns);
            d.1 = d.1.saturating_add(s.thunk_ns);
            d.2 = d.2.min(s.start);
            d.3 = d.3.max(s.end);
        }
        devices
    }

    /// The notebook's three totals over the chosen programs, summed over devices: (1)
    /// thunk time, (2) module time, (3) per device the first module start to the last
    /// module end; `None` without module records.
    pub fn totals(&self) -> Option<Totals> {
        if !self.has_modules() {
            return None;
        }
        let mut t = Totals::default();
        for (m, th, start, end) in self.devices().into_values() {
            t.module_ns = t.module_ns.saturating_add(m);
            t.thunk_ns = t.thunk_ns.saturating_add(th);
            t.wall_ns = t.wall_ns.saturating_add(end.saturating_sub(start));
        }
        Some(t)
    }
}

/// GPU time totals of the chosen programs' module executions ([`Selection::totals`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Totals {
    /// Thunk time on the devices and programs with module executions.
    pub thunk_ns: i64,
    /// Module time.
    pub module_ns: i64,
    /// Per device, first module start to last module end, summed.
    pub wall_ns: i64,
}

impl Totals {
    /// `[GPU idle during module execution]`: module time less thunk time.
    pub fn idle_inside(&self) -> i64 {
        self.module_ns.saturating_sub(self.thunk_ns).max(0)
    }

    /// `[GPU idle between module executions]`: wall time less module time.
    pub fn idle_between(&self) -> i64 {
        self.wall_ns.saturating_sub(self.module_ns).max(0)
    }
}

/// Refuses a `--top-modules` out of (0, 1]: the fraction of module time
/// [`GpuTime::select`] keeps programs for (njx-thunks, njx-flamefold, njx-report).
pub fn check_top_modules(fraction: f64) -> Result<()> {
    if fraction > 0.0 && fraction <= 1.0 {
        return Ok(());
    }
    Err(crate::error::Error::Usage(format!(
        "--top-modules {fraction}: a fraction in (0, 1]"
    )))
}

impl GpuTime {
    /// The executions that count and the programs that cover `top_modules` of the time
    /// among those `programs` keeps ([`Selection`]); notes say when programs are left out
    /// or ranked without modules. A `--program` or `--exclude-program` that names no
    /// program read is an error.
    pub fn select(
        &self,
        include_warmup: bool,
        top_modules: f64,
        programs: &ProgramFilter,
        notes: &Notes,
    ) -> Result<Selection<'_>> {
        let read = self
            .programs
            .iter()
            .map(|((k, _), p)| (k.as_str(), p.name.as_str()));
        if let Some(note) = programs.check(read)? {
            notes.note(note);
        }
        let kept: Option<BTreeSet<&str>> = (!programs.is_all()).then(|| {
            self.programs
                .iter()
                .filter(|((k, _), p)| programs.keeps(k, &p.name))
                .map(|((k, _), _)| k.as_str())
                .collect()
        });
        let settled = self.settle(include_warmup, kept.as_ref());
        let has_modules = self.programs.values().any(|p| p.module_ns > 0);
        if !has_modules && settled.thunks_read > 0 {
            notes.note(
                "no module records: programs ranked by thunk time, and the idle time left \
                 out (pass the module records or the archives too)",
            );
        }
        let programs = settled.top_programs(top_modules);
        if programs.len() < settled.programs.len() {
            notes.note(format!(
                "{} of {} programs cover {:.0}% of the time and are shown (--top-modules)",
                programs.len(),
                settled.programs.len(),
                top_modules * 100.0
            ));
        }
        Ok(Selection {
            chosen: programs.into_iter().collect(),
            rule: self.warmup.rule(),
            include_warmup,
            kept,
            settled,
        })
    }

    /// What the HLO dumps say of the thunks `wanted` (program → thunk names): taken from
    /// the profiles as they were read, carried by partial results, or read from `hlo`
    /// (archives and dump folders) for the rest. Per program, `None` where no dump of it
    /// was found; per thunk, `None` where its dump has no such instruction.
    pub fn infos(
        &self,
        wanted: &BTreeMap<&str, BTreeSet<&str>>,
        hlo: &[PathBuf],
        notes: &Notes,
    ) -> Result<Infos> {
        let empty = BTreeSet::new();
        let carried = self.infos.as_ref();
        let is_carried = |program: &str| carried.is_some_and(|c| c.contains_key(program));
        let to_read: BTreeMap<&str, Wanted<'_>> = wanted
            .iter()
            .filter(|(program, _)| !is_carried(program))
            .map(|(&program, names)| {
                (
                    program,
                    Wanted {
                        from: self.dumps_of.get(program).unwrap_or(&empty),
                        names: names.clone(),
                    },
                )
            })
            .collect();
        let to_read: BTreeMap<&str, &Wanted<'_>> = to_read.iter().map(|(&p, w)| (p, w)).collect();
        let mut read = thunk_info::read_infos(hlo, &to_read, notes)?;
        let mut out = Infos::new();
        for program in wanted.keys() {
            let infos = match carried.and_then(|c| c.get(*program)) {
                Some(c) => c.clone(),
                None => read.remove(*program).flatten(),
            };
            out.insert(program.to_string(), infos);
        }
        Ok(out)
    }

    /// An error naming `inputs` when they held module executions but not one thunk
    /// execution: module records alone (`njx-export --table modules … | njx-thunks`) only
    /// say which executions are warm-up; the thunks' tables would be empty.
    pub fn check_has_thunks(&self, inputs: &[PathBuf]) -> Result<()> {
        if self.thunks_read > 0 || self.modules_read == 0 {
            return Ok(());
        }
        Err(crate::error::Error::data(
            places(inputs),
            "module executions only, no thunk executions: give thunk records (njx-export \
             --table thunks; module records may come beside them for the warm-up rule), \
             partial results, or the profiles",
        ))
    }

    /// An error naming `inputs` when thunks take more time than their module executions
    /// ([`GpuTime::thunks_beyond_modules`]).
    pub fn check_within_modules(&self, inputs: &[PathBuf]) -> Result<()> {
        let Some(problem) = self.thunks_beyond_modules() else {
            return Ok(());
        };
        Err(crate::error::Error::data(places(inputs), problem))
    }
}

/// The first three of `inputs` for a message about them all, with how many more.
fn places(inputs: &[PathBuf]) -> String {
    let mut place: Vec<String> = inputs
        .iter()
        .take(3)
        .map(|p| p.display().to_string())
        .collect();
    if inputs.len() > 3 {
        place.push(format!("and {} more", inputs.len() - 3));
    }
    place.join(", ")
}
