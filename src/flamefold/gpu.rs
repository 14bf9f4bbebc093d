//! GPU time of XLA thunks folded by Python source, op_name, opcode, module or device:
//! the flame graphs of the nsys-jax Analysis notebook (the cell that builds
//! `src_runtime`, `op_name_runtime` and `op_runtime`).
//!
//! As there, the steady-state executions of the programs that make up 99% of module time
//! (`--top-modules`) count; each thunk's time, summed over devices and executions, goes
//! under `[GPU active]`, and two more stacks complete the GPU's wall time:
//! `[GPU idle during module execution]` (module time less thunk time) and
//! `[GPU idle between module executions]` (per device, first module start to last module
//! end, less module time, summed over devices).
//!
//! By source, a thunk's time is shared equally among the distinct stacks
//! `[GPU active];<Python frames…>;<op_name>` of its HLO instruction and of the
//! instructions of the computations it calls directly (those with frames); without any
//! frames among the distinct `[GPU active];[Unknown];<op_name>`; without op_names it is
//! `[GPU active];[Unknown]`. By op_name the stacks are `[GPU active];<op_name split on
//! />`. Several dumps of one program (one per process) must agree on opcode and op_names;
//! stacks that differ keep their common outer and inner frames around
//! `[inconsistent metadata]`.
//!
//! Only aggregates are held ([`GpuTime`]): time per (program, thunk) and per (device,
//! program), so memory follows the number of distinct thunks, not of ranks or
//! executions; profiles are read one input path per core at a time.

use super::Folded;
use crate::error::Result;
use crate::executions::{self, Executions, Phase, Warmup};
use crate::hlo::{Dumps, HloModule, Instruction, ProgramKey};
use crate::notes::Notes;
use crate::parallel::{parallel_map, workers};
use crate::partial;
use crate::record::{Module, Thunk};
use crate::source;
use crate::source::records::RecordStream;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the GPU time is folded by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuMode {
    /// Python stack frames of the HLO instructions.
    Source,
    /// JAX op_name, split on `/`.
    OpName,
    /// HLO opcode (`fusion`, `custom-call`, …).
    Opcode,
    /// Program, then thunk.
    Module,
    /// Device, then program and thunk.
    Device,
}

impl GpuMode {
    /// Whether the mode needs the HLO dumps.
    pub fn needs_hlo(self) -> bool {
        matches!(self, GpuMode::Source | GpuMode::OpName | GpuMode::Opcode)
    }
}

/// Options of the GPU modes.
#[derive(Debug, Clone)]
pub struct GpuOptions {
    /// What to fold by.
    pub mode: GpuMode,
    /// Keep the largest programs until they cover this fraction of module time.
    pub top_modules: f64,
    /// Count initialisation executions too.
    pub include_warmup: bool,
}

/// The top frame of busy GPU time.
pub const GPU_ACTIVE: &str = "[GPU active]";
/// The frame of time without known source or op_name.
pub const UNKNOWN: &str = "[Unknown]";
/// Module time not covered by thunks.
pub const IDLE_INSIDE: &str = "[GPU idle during module execution]";
/// Time between modules.
pub const IDLE_BETWEEN: &str = "[GPU idle between module executions]";
/// Where stacks of several dumps of one program differ.
pub const INCONSISTENT: &str = "[inconsistent metadata]";

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
    warmup: Warmup,
    /// Whether thunk time is kept per device.
    by_device: bool,
    #[serde(with = "crate::partial::pairs")]
    programs: BTreeMap<(String, Phase), ProgramAcc>,
    #[serde(with = "crate::partial::pairs")]
    spans: BTreeMap<(u32, String, Phase), Span>,
    #[serde(with = "crate::partial::pairs")]
    thunks: BTreeMap<(String, String, Option<u32>, Phase), i64>,
    /// Program → (profile, program id, module name): where to look for its dumps.
    dumps_of: BTreeMap<String, BTreeSet<(String, u64, String)>>,
    modules_read: u64,
    thunks_read: u64,
    /// What the HLO dumps say of every thunk, read when writing a partial result (the
    /// reduce step need not have the dumps).
    #[serde(default)]
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
            let mut interner = Interner::default();
            let carried = self.infos.get_or_insert_default();
            // In member order, as `source_infos` reads an archive's dumps.
            for hlo in &part.dumps {
                let key = ProgramKey::of(hlo, hlo.id() as u64).record();
                let Some(names) = names.get(key.as_str()) else {
                    continue;
                };
                let infos = module_infos(hlo, names, &mut interner)?;
                let slot = carried.entry(key).or_insert(None);
                *slot = combine(slot.take(), Some(infos), hlo.place(), notes);
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
                *slot = combine(slot.take(), infos, "a later input", notes);
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
        let infos = read_infos(hlo, &wanted, notes)?;
        let mut carried = self.infos.take().unwrap_or_default();
        for (program, infos) in infos {
            let slot = carried.entry(program).or_insert(None);
            *slot = combine(slot.take(), infos, "a partial result", notes);
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

    /// The time that counts: steady state (unless `include_warmup`), autotuning left out.
    fn settle(&self, include_warmup: bool) -> Settled<'_> {
        let rule = self.warmup.rule();
        // Autotuning executions (program `unknown`) belong to initialisation too.
        let counts =
            |program: &str, warmup: bool| include_warmup || (!warmup && program != "unknown");
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
    const KIND: &'static str = PARTIAL;
    const TABLE: &'static str = "modules|thunks";

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

/// What the HLO says about one thunk: its opcode and, for its instruction and those of
/// the computations it calls, the op_name and the Python frames. Op names and stacks are
/// shared ([`Interner`]): the instructions of a program repeat few of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThunkInfo {
    opcode: String,
    insts: Vec<(Arc<str>, Stack)>,
}

impl ThunkInfo {
    /// The HLO opcode of the thunk's instruction (`fusion`, `custom-call`, …).
    pub fn opcode(&self) -> &str {
        &self.opcode
    }

    /// The JAX op_name of the thunk's own instruction (empty where it has none).
    pub fn op_name(&self) -> &str {
        self.insts.first().map_or("", |(op_name, _)| op_name)
    }
}

/// A Python stack, outermost frame first (`file:line[function]`).
type Stack = Arc<[Arc<str>]>;

/// One allocation per distinct string and stack of the infos read together.
#[derive(Debug, Default)]
struct Interner {
    strings: HashSet<Arc<str>>,
    stacks: HashSet<Stack>,
}

impl Interner {
    fn string(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.strings.get(s) {
            return Arc::clone(a);
        }
        let a: Arc<str> = Arc::from(s);
        self.strings.insert(Arc::clone(&a));
        a
    }

    fn stack(&mut self, frames: Vec<Arc<str>>) -> Stack {
        if let Some(s) = self.stacks.get(&frames[..]) {
            return Arc::clone(s);
        }
        let s: Stack = Arc::from(frames);
        self.stacks.insert(Arc::clone(&s));
        s
    }
}

/// What one program needs from the dumps: where its executions came from (profile,
/// program id, module name) and the thunks to look up.
struct Wanted<'a> {
    from: &'a BTreeSet<(String, u64, String)>,
    names: BTreeSet<&'a str>,
}

/// Per program: per thunk, what the dumps say (`None` for a thunk no dump has), or `None`
/// for a program without any dump.
pub type Infos = BTreeMap<String, Option<BTreeMap<String, Option<ThunkInfo>>>>;

/// Reads the after-optimizations dumps the programs need from every source (archives,
/// also nsys-jax-combine ones, and XLA dump folders), each once, on every core: a dump is
/// a candidate when its file name has the program id and module name of an execution,
/// and it counts for the program whose key its fingerprint is. Several dumps of one
/// program (one per process, or one per compilation) are reduced in source order.
fn read_infos(
    sources: &[PathBuf],
    wanted: &BTreeMap<&str, &Wanted<'_>>,
    notes: &Notes,
) -> Result<Infos> {
    notes
        .progress()
        .phase("reading the HLO dumps' stack frames");
    let mut out: Infos = wanted.keys().map(|p| (p.to_string(), None)).collect();
    // As many sources at a time as there are cores, each reduced into `out` (in source
    // order) before the next are read: memory holds one source's infos per core, not
    // every rank's.
    let per_source = sources
        .chunks(workers())
        .flat_map(|chunk| parallel_map(chunk, |path| source_infos(path, wanted, notes.progress())));
    for found in per_source {
        for (program, place, infos) in found? {
            let slot = out
                .get_mut(&program)
                .expect("only wanted programs are read");
            *slot = combine(slot.take(), Some(infos), &place, notes);
        }
    }
    notes.progress().phase("folding");
    Ok(out)
}

/// Two sets of per-thunk infos of one program reduced into one, `a`'s first.
fn combine(
    a: Option<BTreeMap<String, Option<ThunkInfo>>>,
    b: Option<BTreeMap<String, Option<ThunkInfo>>>,
    place: &str,
    notes: &Notes,
) -> Option<BTreeMap<String, Option<ThunkInfo>>> {
    match (a, b) {
        (Some(mut acc), Some(infos)) => {
            for (name, info) in infos {
                let have = acc.entry(name.clone()).or_insert(None);
                *have = match (have.take(), info) {
                    (Some(a), Some(b)) => Some(reduce(a, b, &name, place, notes)),
                    (a, b) => a.or(b),
                };
            }
            Some(acc)
        }
        (a, b) => a.or(b),
    }
}

/// The infos of one source: (program, dump place, per-thunk infos) for each candidate
/// dump that belongs to a wanted program, in member order.
#[allow(clippy::type_complexity)]
fn source_infos(
    path: &Path,
    wanted: &BTreeMap<&str, &Wanted<'_>>,
    progress: &crate::progress::Progress,
) -> Result<Vec<(String, String, BTreeMap<String, Option<ThunkInfo>>)>> {
    let mut archive = source::open_dumps(path, progress)?;
    let mut dumps = Dumps::new(&archive);
    // Every copy of a candidate dump (one per profile in combine archives), in member
    // order: a dump whose file name has the program id and module name of an execution.
    let mut candidates: Vec<String> = wanted
        .values()
        .flat_map(|w| w.from.iter())
        .flat_map(|(_, id, module)| dumps.copies(*id, module).map(str::to_string))
        .collect();
    candidates.sort();
    candidates.dedup();
    let mut out = Vec::new();
    let mut interner = Interner::default();
    for member in candidates {
        let place = archive.member_place(&member);
        let hlo = dumps.read(&mut archive, &member)?;
        let key = ProgramKey::of(&hlo, hlo.id() as u64).record();
        // The same id may be another program in another process.
        let Some(w) = wanted.get(key.as_str()) else {
            continue;
        };
        let infos = module_infos(&hlo, &w.names, &mut interner)?;
        out.push((key, place, infos));
    }
    Ok(out)
}

/// What `hlo` says of each of the thunks `names` (`None` for a name it does not have).
fn module_infos(
    hlo: &HloModule,
    names: &BTreeSet<&str>,
    interner: &mut Interner,
) -> Result<BTreeMap<String, Option<ThunkInfo>>> {
    // Stack frame ids are the module's own: each stack is formatted once.
    let mut stacks: HashMap<i32, Stack> = HashMap::new();
    let mut stack_of = |i: &Instruction<'_>, interner: &mut Interner| -> Result<Stack> {
        let id = i.stack_frame_id();
        if let Some(s) = stacks.get(&id) {
            return Ok(Arc::clone(s));
        }
        let frames = i.stack_frames()?;
        let frames = frames
            .iter()
            .map(|f| interner.string(&f.to_string()))
            .collect();
        let s = interner.stack(frames);
        stacks.insert(id, Arc::clone(&s));
        Ok(s)
    };
    let mut out = BTreeMap::new();
    for &name in names {
        let info = match hlo.instruction(name) {
            None => None,
            Some(inst) => {
                let mut insts = Vec::new();
                for i in std::iter::once(inst).chain(inst.called_instructions()?) {
                    let stack = stack_of(&i, interner)?;
                    insts.push((interner.string(i.op_name()), stack));
                }
                Some(ThunkInfo {
                    opcode: inst.opcode().to_string(),
                    insts,
                })
            }
        };
        out.insert(name.to_string(), info);
    }
    Ok(out)
}

/// Two dumps' view of one thunk as one: stacks that differ keep their common outer and
/// inner frames around [`INCONSISTENT`] (the notebook's `reduce_instructions_and_frames`).
fn reduce(mut a: ThunkInfo, b: ThunkInfo, name: &str, place: &str, notes: &Notes) -> ThunkInfo {
    let a_names: Vec<&Arc<str>> = a.insts.iter().map(|i| &i.0).collect();
    let b_names: Vec<&Arc<str>> = b.insts.iter().map(|i| &i.0).collect();
    if a.opcode != b.opcode || a_names != b_names {
        notes.note(format!(
            "{place}: thunk {name}: opcode or op_names differ from another dump of the same \
             program; the first dump's are used"
        ));
        return a;
    }
    for ((_, fa), (_, fb)) in a.insts.iter_mut().zip(b.insts) {
        if *fa == fb {
            continue;
        }
        let prefix = fa.iter().zip(fb.iter()).take_while(|(x, y)| x == y).count();
        let suffix = fa[prefix..]
            .iter()
            .rev()
            .zip(fb[prefix..].iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        let mut merged: Vec<Arc<str>> = fa[..prefix].to_vec();
        merged.push(Arc::from(INCONSISTENT));
        merged.extend(fa[fa.len() - suffix..].iter().cloned());
        *fa = Arc::from(merged);
    }
    a
}

/// The stacks a thunk's time is shared among, as the notebook's preference lists.
fn locations(mode: GpuMode, info: Option<&ThunkInfo>) -> Vec<Vec<String>> {
    let unknown = || vec![vec![GPU_ACTIVE.to_string(), UNKNOWN.to_string()]];
    let Some(info) = info else {
        return unknown();
    };
    let mut first: Vec<Vec<String>> = Vec::new();
    let mut second: Vec<Vec<String>> = Vec::new();
    for (op_name, frames) in &info.insts {
        match mode {
            GpuMode::Source => {
                if !frames.is_empty() {
                    let mut s = vec![GPU_ACTIVE.to_string()];
                    s.extend(frames.iter().map(|f| f.to_string()));
                    if !op_name.is_empty() {
                        s.push(op_name.to_string());
                    }
                    first.push(s);
                }
                if !op_name.is_empty() {
                    second.push(vec![
                        GPU_ACTIVE.to_string(),
                        UNKNOWN.to_string(),
                        op_name.to_string(),
                    ]);
                }
            }
            GpuMode::OpName if !op_name.is_empty() => {
                let mut s = vec![GPU_ACTIVE.to_string()];
                s.extend(op_name.split('/').map(str::to_string));
                first.push(s);
            }
            _ => {}
        }
    }
    if mode == GpuMode::Opcode {
        return vec![vec![GPU_ACTIVE.to_string(), info.opcode.clone()]];
    }
    // Distinct stacks only: the notebook collects them in sets.
    for list in [&mut first, &mut second] {
        list.sort();
        list.dedup();
    }
    if !first.is_empty() {
        first
    } else if !second.is_empty() {
        second
    } else {
        unknown()
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
    rule: crate::executions::Rule<'a>,
    include_warmup: bool,
    chosen: BTreeSet<&'a str>,
}

impl<'a> Selection<'a> {
    /// Whether the thunk executions of `program` in `phase` count (steady state unless
    /// warm-up is included, never autotuning), whatever the program's share.
    pub fn thunk_counts(&self, program: &str, phase: Phase) -> bool {
        self.include_warmup || (!self.rule.thunk_is_warmup(program, phase) && program != "unknown")
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
    fn devices(&self) -> BTreeMap<u32, (i64, i64, i64, i64)> {
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

impl GpuTime {
    /// The executions that count and the programs that cover `top_modules` of the time
    /// ([`Selection`]); notes say when programs are left out or ranked without modules.
    pub fn select(&self, include_warmup: bool, top_modules: f64, notes: &Notes) -> Selection<'_> {
        let settled = self.settle(include_warmup);
        if !settled.has_modules() && settled.thunks_read > 0 {
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
        Selection {
            chosen: programs.into_iter().collect(),
            rule: self.warmup.rule(),
            include_warmup,
            settled,
        }
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
        let mut read = read_infos(hlo, &to_read, notes)?;
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

    /// An error naming `inputs` when thunks take more time than their module executions
    /// ([`GpuTime::thunks_beyond_modules`]).
    pub fn check_within_modules(&self, inputs: &[PathBuf]) -> Result<()> {
        let Some(problem) = self.thunks_beyond_modules() else {
            return Ok(());
        };
        let mut place: Vec<String> = inputs
            .iter()
            .take(3)
            .map(|p| p.display().to_string())
            .collect();
        if inputs.len() > 3 {
            place.push(format!("and {} more", inputs.len() - 3));
        }
        Err(crate::error::Error::data(place.join(", "), problem))
    }
}

/// The sources of HLO dumps: the archives among `inputs`, then `hlo` (`--hlo`).
pub fn dump_sources(inputs: &[PathBuf], hlo: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = inputs
        .iter()
        .filter(|p| source::is_archive(p))
        .cloned()
        .collect();
    out.extend(hlo.iter().cloned());
    out
}

/// Folds the GPU time of `acc` by `options.mode`; `hlo` are the dump sources (archives
/// among the inputs and `--hlo`).
pub fn fold(
    time: &GpuTime,
    options: &GpuOptions,
    hlo: &[PathBuf],
    notes: &Notes,
) -> Result<Folded> {
    notes.progress().phase("folding");
    let selection = time.select(options.include_warmup, options.top_modules, notes);
    let acc = &selection.settled;
    let mut folded = Folded::default();
    let module_frame = |program: &str| format!("{} ({program})", selection.module_name(program));
    for (&(program, name, device), &ns) in &acc.thunks {
        if !selection.is_chosen(program) {
            continue;
        }
        match (options.mode, device) {
            (GpuMode::Device, Some(device)) => {
                let frames = [
                    format!("device {device}"),
                    GPU_ACTIVE.to_string(),
                    module_frame(program),
                    name.to_string(),
                ];
                folded.add_path(&frames, ns as f64);
            }
            (GpuMode::Module, _) => {
                let frames = [
                    GPU_ACTIVE.to_string(),
                    module_frame(program),
                    name.to_string(),
                ];
                folded.add_path(&frames, ns as f64);
            }
            _ => {}
        }
    }
    if options.mode.needs_hlo() {
        // Time per (program, thunk) over devices.
        let per_thunk = selection.thunk_time();
        let mut wanted: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for &(program, name) in per_thunk.keys() {
            wanted.entry(program).or_default().insert(name);
        }
        let infos = time.infos(&wanted, hlo, notes)?;
        for (program, names) in &wanted {
            let infos = infos.get(*program).and_then(Option::as_ref);
            if infos.is_none() {
                notes.note(format!(
                    "no HLO dump of program {program} ({}): its time goes under \
                     {GPU_ACTIVE};{UNKNOWN}",
                    module_frame(program)
                ));
            }
            for &name in names {
                let info = infos.and_then(|i| i.get(name)?.as_ref());
                if infos.is_some() && info.is_none() {
                    notes.note(format!(
                        "program {program}: no instruction {name} in its HLO dump: its time \
                         goes under {GPU_ACTIVE};{UNKNOWN}"
                    ));
                }
                let ns = per_thunk[&(*program, name)] as f64;
                let stacks = locations(options.mode, info);
                let share = ns / stacks.len() as f64;
                for s in stacks {
                    folded.add_path(&s, share);
                }
            }
        }
    }
    add_idle(&selection, options.mode, &mut folded);
    Ok(folded)
}

/// The two idle stacks, per device in `--by device`.
fn add_idle(selection: &Selection<'_>, mode: GpuMode, folded: &mut Folded) {
    if mode == GpuMode::Device {
        if !selection.has_modules() {
            return;
        }
        for (device, (m, t, start, end)) in selection.devices() {
            let root = format!("device {device}");
            folded.add_path(
                &[root.as_str(), IDLE_INSIDE],
                m.saturating_sub(t).max(0) as f64,
            );
            folded.add_path(
                &[root.as_str(), IDLE_BETWEEN],
                end.saturating_sub(start).saturating_sub(m).max(0) as f64,
            );
        }
    } else if let Some(totals) = selection.totals() {
        // The notebook's totals: (2) - (1) and (3) - (2), over all devices at once.
        folded.add_path(&[IDLE_INSIDE], totals.idle_inside() as f64);
        folded.add_path(&[IDLE_BETWEEN], totals.idle_between() as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(insts: &[(&str, &[&str])]) -> ThunkInfo {
        ThunkInfo {
            opcode: "fusion".into(),
            insts: insts
                .iter()
                .map(|(n, f)| (Arc::from(*n), f.iter().map(|&s| Arc::from(s)).collect()))
                .collect(),
        }
    }

    #[test]
    fn source_prefers_frames_then_op_names_then_unknown() {
        let i = info(&[
            ("jit(f)/dot", &["a.py:1[f]"]),
            ("jit(f)/add", &[]),
            ("", &[]),
        ]);
        assert_eq!(
            locations(GpuMode::Source, Some(&i)),
            vec![vec!["[GPU active]", "a.py:1[f]", "jit(f)/dot"]]
        );
        let i = info(&[
            ("jit(f)/dot", &[]),
            ("jit(f)/dot", &[]),
            ("jit(f)/add", &[]),
        ]);
        assert_eq!(locations(GpuMode::Source, Some(&i)).len(), 2);
        assert_eq!(
            locations(GpuMode::OpName, Some(&i))[0],
            vec!["[GPU active]", "jit(f)", "add"]
        );
        let i = info(&[("", &[])]);
        assert_eq!(
            locations(GpuMode::OpName, Some(&i)),
            vec![vec!["[GPU active]", "[Unknown]"]]
        );
    }

    #[test]
    fn differing_stacks_keep_common_ends() {
        let a = info(&[("x", &["m.py:1[main]", "a.py:2[f]", "lib.py:3[g]"])]);
        let b = info(&[("x", &["m.py:1[main]", "b.py:9[h]", "lib.py:3[g]"])]);
        let r = reduce(a, b, "fusion", "here", &Notes::kept());
        let merged: Vec<&str> = r.insts[0].1.iter().map(|f| &**f).collect();
        assert_eq!(merged, vec!["m.py:1[main]", INCONSISTENT, "lib.py:3[g]"]);
    }
}
