//! The nsys-jax Analysis notebook's thunk views as tables (`njx-thunks`): the top thunks
//! by GPU time (its `thunk_summary`), GPU time by HLO opcode with the idle time during
//! module executions (its `op_runtime`), and the variability of each compute thunk's
//! execution time (its `compute_duration_stats`, with the slowest executions).
//!
//! The executions that count are those of the flame graphs ([`gpu::Selection`]): steady
//! state, autotuning left out, and for the top and opcode views the programs that cover
//! 99% of module time, so that `njx-thunks --view opcode` divides exactly the time of
//! `njx-flamefold --by opcode`. As in the notebook, variability is over every program's
//! steady-state compute (not communication) thunks.
//!
//! Only aggregates are held ([`ThunkTime`]): per (program, thunk, phase) a count, exact
//! sums of durations and their squares, and the few slowest executions, beside the
//! flame graphs' [`GpuTime`] (selection, idle time, what the dumps say). Names are held
//! once and keys are numbers ([`crate::util::compact`]), and the rows are made one at a time as
//! they are written: about 200 bytes per distinct thunk in all.

use crate::derived::executions::{self, Executions, Phase, Warmup};
use crate::derived::gpu_time::{GpuTime, IDLE_INSIDE, Selection, UNKNOWN};
use crate::derived::partial;
use crate::error::{Error, Result};
use crate::hlo::thunk_info::{self, Infos};
use crate::output::notes::Notes;
use crate::output::{Format, RecordWriter, write_table_with};
use crate::records::{Module, Thunk};
use crate::source::records::RecordStream;
use crate::util::compact::{Names, Table};
use crate::util::stats::Sums;
use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;

/// Which table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum View {
    /// One row per thunk, largest total GPU time first, with its share of all thunk time.
    Top,
    /// One row per HLO opcode, with the idle time during module executions, shares of
    /// module time.
    Opcode,
    /// One row per compute thunk executed at least twice: mean, standard deviation,
    /// coefficient of variation and the slowest executions, largest mean first.
    Variability,
}

/// What `njx-thunks` reports.
#[derive(Debug, Clone)]
pub struct Options {
    /// Which table.
    pub view: View,
    /// Table, JSON Lines or CSV.
    pub format: Format,
    /// At most this many rows.
    pub top: Option<usize>,
    /// Keep the largest programs until they cover this fraction of module time.
    pub top_modules: f64,
    /// Count initialisation executions too.
    pub include_warmup: bool,
    /// Variability: keep thunks whose coefficient of variation exceeds this (0 keeps all).
    pub min_cv: f64,
    /// Archives or XLA dump folders holding HLO dumps, besides the archives among the
    /// inputs.
    pub hlo: Vec<PathBuf>,
}

/// How many of the slowest executions of each thunk are kept.
pub const SLOWEST: usize = 3;

/// One execution of a thunk, as the variability view names it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Slow {
    dur_ns: i64,
    device: u32,
    execution: u32,
    thunk_execution: u32,
}

impl Slow {
    /// Slowest first; ties by device, then execution, so that merges are exact.
    fn key(&self) -> (std::cmp::Reverse<i64>, u32, u32, u32) {
        (
            std::cmp::Reverse(self.dur_ns),
            self.device,
            self.execution,
            self.thunk_execution,
        )
    }
}

/// The executions of one thunk of one program in one phase.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
struct Stats {
    n: u64,
    dur: Sums,
    /// Whether it is a communication thunk.
    comm: bool,
    /// The slowest executions, slowest first, at most [`SLOWEST`].
    slowest: Slowest,
}

/// The slowest executions of a thunk, slowest first, held in place (no allocation per
/// thunk); written and read as the list of them.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Slowest {
    n: u8,
    items: [Slow; SLOWEST],
}

impl Slowest {
    fn as_slice(&self) -> &[Slow] {
        &self.items[..usize::from(self.n)]
    }

    fn first(&self) -> Option<&Slow> {
        self.as_slice().first()
    }

    /// Keeps `s` if it is among the slowest.
    fn keep(&mut self, s: Slow) {
        let n = usize::from(self.n);
        let at = self.items[..n].partition_point(|k| k.key() < s.key());
        if at < SLOWEST {
            let end = (n + 1).min(SLOWEST);
            self.items.copy_within(at..end - 1, at + 1);
            self.items[at] = s;
            self.n = end as u8;
        }
    }
}

impl Serialize for Slowest {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        self.as_slice().serialize(ser)
    }
}

impl<'de> Deserialize<'de> for Slowest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let list = Vec::<Slow>::deserialize(d)?;
        let mut out = Slowest::default();
        list.into_iter().for_each(|s| out.keep(s));
        Ok(out)
    }
}

impl Stats {
    fn add(&mut self, t: &Thunk) {
        self.n += 1;
        self.dur.add(t.dur_ns);
        self.comm |= t.comm;
        self.keep(Slow {
            dur_ns: t.dur_ns,
            device: t.device,
            execution: t.execution,
            thunk_execution: t.thunk_execution,
        });
    }

    fn keep(&mut self, s: Slow) {
        self.slowest.keep(s);
    }

    fn merge(&mut self, o: &Stats) {
        self.n = self.n.saturating_add(o.n);
        self.dur.merge(o.dur);
        self.comm |= o.comm;
        o.slowest.as_slice().iter().for_each(|&s| self.keep(s));
    }
}

/// A key of [`ThunkStats`]: the numbers of the program's and the thunk's names, and the
/// phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    program: u32,
    name: u32,
    phase: Phase,
}

/// Per (program, thunk, [`Phase`]) the execution statistics, every name held once.
/// Written and read as the list of `[[program, thunk, phase], statistics]` in key order.
#[derive(Debug, Default, Clone)]
struct ThunkStats {
    names: Names,
    table: Table<Key, Stats>,
}

impl ThunkStats {
    /// The statistics of (program, name, phase), new ones where they are not held; and
    /// whether they were new.
    fn entry(&mut self, program: &str, name: &str, phase: Phase) -> (&mut Stats, bool) {
        let key = Key {
            program: self.names.id(program),
            name: self.names.id(name),
            phase,
        };
        self.table.entry(key)
    }

    /// Entry `i`: (program, thunk, phase) and its statistics.
    fn get(&self, i: u32) -> ((&str, &str, Phase), &Stats) {
        let (k, s) = self.table.get(i as usize);
        (
            (self.names.get(k.program), self.names.get(k.name), k.phase),
            s,
        )
    }

    /// The entries for which `keep` holds, in the order of (program, thunk, phase).
    fn sorted(&self, keep: impl Fn((&str, &str, Phase), &Stats) -> bool) -> Vec<u32> {
        // Each name's rank among all names: the entries are then sorted by numbers.
        let mut by_name: Vec<u32> = (0..self.names.len() as u32).collect();
        by_name.sort_unstable_by(|&a, &b| self.names.get(a).cmp(self.names.get(b)));
        let mut rank = vec![0u32; by_name.len()];
        for (r, &id) in by_name.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        drop(by_name);
        let keys = self.table.keys();
        let mut order: Vec<u32> = (0..keys.len() as u32)
            .filter(|&i| {
                let (key, s) = self.get(i);
                keep(key, s)
            })
            .collect();
        order.sort_unstable_by_key(|&i| {
            let k = keys[i as usize];
            (rank[k.program as usize], rank[k.name as usize], k.phase)
        });
        order
    }

    /// `order` (entries in key order) cut into the runs of each (program, thunk).
    fn runs(&self, order: &[u32]) -> Vec<Run> {
        let keys = self.table.keys();
        let mut runs: Vec<Run> = Vec::new();
        for (at, &i) in order.iter().enumerate() {
            let k = keys[i as usize];
            match runs.last_mut() {
                Some(r)
                    if {
                        let first = keys[order[r.at as usize] as usize];
                        (first.program, first.name) == (k.program, k.name)
                    } =>
                {
                    r.len += 1
                }
                _ => runs.push(Run {
                    at: at as u32,
                    len: 1,
                }),
            }
        }
        runs
    }
}

impl PartialEq for ThunkStats {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.sorted(|_, _| true), other.sorted(|_, _| true));
        a.len() == b.len() && a.iter().zip(&b).all(|(&i, &j)| self.get(i) == other.get(j))
    }
}

impl Serialize for ThunkStats {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        ser.collect_seq(self.sorted(|_, _| true).into_iter().map(|i| self.get(i)))
    }
}

impl<'de> Deserialize<'de> for ThunkStats {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = ThunkStats;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of [[program, thunk, phase], statistics]")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<ThunkStats, A::Error> {
                let mut stats = ThunkStats::default();
                type Entry = ((String, String, Phase), Stats);
                while let Some(((program, name, phase), s)) = seq.next_element::<Entry>()? {
                    let (slot, new) = stats.entry(&program, &name, phase);
                    if !new {
                        return Err(serde::de::Error::custom("a key is given twice"));
                    }
                    *slot = s;
                }
                Ok(stats)
            }
        }
        d.deserialize_seq(Entries)
    }
}

/// The entries of one (program, thunk) in a sorted list of entries: `len` from `at`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Run {
    at: u32,
    len: u32,
}

/// Thunk executions aggregated for the three views, of any number of inputs, and the
/// partial result of `njx-thunks --partial` (kind [`PARTIAL`]): the flame graphs'
/// [`GpuTime`] and per (program, thunk, [`Phase`]) the execution statistics.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThunkTime {
    gpu: GpuTime,
    stats: ThunkStats,
}

/// The kind of [`ThunkTime`]'s partial results.
pub const PARTIAL: &str = "thunks";

impl ThunkTime {
    /// An empty aggregate; with `collect_infos`, what the profiles' own dumps say of
    /// their thunks is taken as they are read.
    pub fn new(collect_infos: bool) -> ThunkTime {
        ThunkTime {
            gpu: GpuTime::new(false, collect_infos).without_thunk_time(),
            stats: ThunkStats::default(),
        }
    }

    fn thunk(&mut self, t: &Thunk, phase: Phase) {
        self.stats.entry(&t.program, &t.name, phase).0.add(t);
    }
}

impl partial::Aggregate for ThunkTime {
    const KIND: &'static str = PARTIAL;
    const TABLE: &'static str = "modules|thunks";

    fn add_records(&mut self, mut s: RecordStream, _: &Notes) -> Result<()> {
        if s.first_line_has("thunk_execution")? {
            s.read(&mut |t: Thunk| {
                self.gpu.add_thunk(&t);
                self.thunk(&t, Phase::of_record(t.warmup));
                Ok(())
            })
        } else {
            s.read(&mut |m: Module| {
                self.gpu.add_module(&m);
                Ok(())
            })
        }
        .map(drop)
    }

    fn add_profile(&mut self, part: &Executions, notes: &Notes) -> Result<()> {
        self.gpu.add_profile(part, notes)?;
        for t in &part.thunks {
            self.thunk(t, Phase::of_profile(t.execution));
        }
        Ok(())
    }

    fn wants_dumps(&self) -> bool {
        partial::Aggregate::wants_dumps(&self.gpu)
    }

    fn merge(&mut self, mut other: Self, notes: &Notes) -> Result<()> {
        self.gpu.merge(other.gpu, notes);
        // The smaller into the larger (the first input into the empty total: moved).
        if other.stats.table.len() > self.stats.table.len() {
            std::mem::swap(&mut self.stats, &mut other.stats);
        }
        for i in 0..other.stats.table.len() as u32 {
            let ((program, name, phase), s) = other.stats.get(i);
            self.stats.entry(program, name, phase).0.merge(s);
        }
        Ok(())
    }

    fn warmup(&self) -> &Warmup {
        partial::Aggregate::warmup(&self.gpu)
    }
}

/// A row of the top view.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TopRow {
    /// Program key.
    pub program: String,
    /// Module name.
    pub module: String,
    /// The thunk: its HLO instruction.
    pub thunk: String,
    /// The instruction's JAX op_name, from the HLO dump (null without one; empty where
    /// the instruction has none).
    pub op_name: Option<String>,
    /// The instruction's HLO opcode, from the HLO dump (null without one).
    pub opcode: Option<String>,
    /// Executions counted, over devices.
    pub executions: u64,
    /// GPU time over devices and executions (exposed time for communication), ns.
    pub total_ns: i64,
    /// GPU time per execution, mean, ns.
    pub mean_ns: f64,
    /// Share of the time of all thunks shown and not, percent.
    pub percent: f64,
}

/// A row of the opcode view.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OpcodeRow {
    /// HLO opcode, `[Unknown]` for thunks without a dump, or
    /// `[GPU idle during module execution]`.
    pub opcode: String,
    /// Distinct thunks (program, instruction) of the opcode; 0 for the idle row.
    pub thunks: u64,
    /// GPU time, ns.
    pub total_ns: i64,
    /// Share of module time (of thunk time without module records), percent.
    pub percent: f64,
}

/// A row of the variability view.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct VariabilityRow {
    /// Program key.
    pub program: String,
    /// Module name.
    pub module: String,
    /// The thunk: its HLO instruction.
    pub thunk: String,
    /// JAX op_name from the HLO dump (null without one).
    pub op_name: Option<String>,
    /// HLO opcode from the HLO dump (null without one).
    pub opcode: Option<String>,
    /// Executions, over devices.
    pub executions: u64,
    /// Mean execution time, ns.
    pub mean_ns: f64,
    /// Sample standard deviation (divisor n − 1, as pandas), ns.
    pub std_ns: f64,
    /// Coefficient of variation, std / mean (null for a mean of 0).
    pub cv: Option<f64>,
    /// The slowest execution, ns.
    pub max_ns: i64,
    /// The slowest execution: its time, device, module execution and thunk execution.
    pub slowest1_ns: Option<i64>,
    pub slowest1_device: Option<u32>,
    pub slowest1_execution: Option<u32>,
    pub slowest1_thunk_execution: Option<u32>,
    /// The second slowest.
    pub slowest2_ns: Option<i64>,
    pub slowest2_device: Option<u32>,
    pub slowest2_execution: Option<u32>,
    pub slowest2_thunk_execution: Option<u32>,
    /// The third slowest.
    pub slowest3_ns: Option<i64>,
    pub slowest3_device: Option<u32>,
    pub slowest3_execution: Option<u32>,
    pub slowest3_thunk_execution: Option<u32>,
}

impl VariabilityRow {
    fn set_slowest(&mut self, slowest: &[Slow]) {
        let get = |i: usize| slowest.get(i).copied();
        let s = get(0);
        self.slowest1_ns = s.map(|s| s.dur_ns);
        self.slowest1_device = s.map(|s| s.device);
        self.slowest1_execution = s.map(|s| s.execution);
        self.slowest1_thunk_execution = s.map(|s| s.thunk_execution);
        let s = get(1);
        self.slowest2_ns = s.map(|s| s.dur_ns);
        self.slowest2_device = s.map(|s| s.device);
        self.slowest2_execution = s.map(|s| s.execution);
        self.slowest2_thunk_execution = s.map(|s| s.thunk_execution);
        let s = get(2);
        self.slowest3_ns = s.map(|s| s.dur_ns);
        self.slowest3_device = s.map(|s| s.device);
        self.slowest3_execution = s.map(|s| s.execution);
        self.slowest3_thunk_execution = s.map(|s| s.thunk_execution);
    }

    fn slowest(&self) -> Vec<(i64, u32, u32, u32)> {
        [
            (
                self.slowest1_ns,
                self.slowest1_device,
                self.slowest1_execution,
                self.slowest1_thunk_execution,
            ),
            (
                self.slowest2_ns,
                self.slowest2_device,
                self.slowest2_execution,
                self.slowest2_thunk_execution,
            ),
            (
                self.slowest3_ns,
                self.slowest3_device,
                self.slowest3_execution,
                self.slowest3_thunk_execution,
            ),
        ]
        .into_iter()
        .filter_map(|(n, d, e, t)| Some((n?, d?, e?, t?)))
        .collect()
    }
}

/// Reads module and thunk executions from every input: record streams (a file of module
/// records and one of thunk records, in any order), partial results, nsys-jax archives
/// and nsys SQLite exports or reports (one input path at a time, HLO dumps also from
/// `options.hlo`); an error where the view needs the dumps and none are given.
pub fn read(options: &Options, inputs: &[PathBuf], notes: &Notes) -> Result<ThunkTime> {
    // Before reading: a wrong number is said at once, not after the inputs are read.
    check(options)?;
    let no_dumps = || {
        Error::Usage(
            "--view opcode needs the HLO dumps: pass the nsys-jax archives as inputs or with \
             --hlo"
                .to_string(),
        )
    };
    let no_sources =
        options.view == View::Opcode && thunk_info::dump_sources(inputs, &options.hlo).is_empty();
    if no_sources && !inputs.iter().any(|p| may_be_partial(p)) {
        return Err(no_dumps());
    }
    // Clock alignment shifts each device as a whole: no time here depends on it.
    let keyed = executions::Hlo {
        dumps: &options.hlo,
        key: executions::KeyBy::Fingerprint,
    };
    let time = partial::aggregate(inputs, keyed, notes, || ThunkTime::new(true))?;
    // Partial results may carry what the dumps say; those read did not.
    if no_sources && !time.gpu.has_infos() {
        return Err(no_dumps());
    }
    time.gpu.check_within_modules(inputs)?;
    Ok(time)
}

/// Whether `path` may be a partial result, which can carry what the dumps say: stdin, an
/// input that does not open (its error is said when it is read), or text whose first line
/// names a partial result.
fn may_be_partial(path: &std::path::Path) -> bool {
    use std::io::BufRead;
    if path == std::path::Path::new("-") {
        return true;
    }
    let Ok(s) =
        crate::source::open_text(path, "records", &crate::output::progress::Progress::none())
    else {
        return true;
    };
    let mut head = Vec::new();
    if std::io::Read::take(s.reader, 1 << 16)
        .read_until(b'\n', &mut head)
        .is_err()
    {
        return true;
    }
    let field = format!("\"{}\"", partial::FIELD);
    memchr::memmem::find(&head, field.as_bytes()).is_some()
}

/// The partial result of `inputs` (`njx-thunks --partial`): their aggregate with what the
/// HLO dumps say of each thunk, so the reduce step needs neither archives nor dumps.
pub fn partial(options: &Options, inputs: &[PathBuf], notes: &Notes) -> Result<ThunkTime> {
    let mut time = read(options, inputs, notes)?;
    let sources = thunk_info::dump_sources(inputs, &options.hlo);
    if !sources.is_empty() {
        let thunks: BTreeSet<(String, String)> = (0..time.stats.table.len() as u32)
            .map(|i| {
                let ((program, name, _), _) = time.stats.get(i);
                (program.to_string(), name.to_string())
            })
            .collect();
        time.gpu.attach_infos_of(&thunks, &sources, notes)?;
    }
    Ok(time)
}

/// Refuses numbers out of range: `--top-modules` a fraction in (0, 1], `--min-cv` a
/// finite number ≥ 0 (NaN was taken as 0, keeping every thunk).
fn check(options: &Options) -> Result<()> {
    if !(options.top_modules > 0.0 && options.top_modules <= 1.0) {
        return Err(Error::Usage(format!(
            "--top-modules {}: a fraction in (0, 1]",
            options.top_modules
        )));
    }
    if !(options.min_cv.is_finite() && options.min_cv >= 0.0) {
        return Err(Error::Usage(format!(
            "--min-cv {}: a coefficient of variation, a finite number from 0",
            options.min_cv
        )));
    }
    Ok(())
}

/// The rows of one view of an aggregate, made one at a time as they are written.
pub struct Rows<'a> {
    time: &'a ThunkTime,
    selection: Selection<'a>,
    /// What the dumps say of the thunks, where there are dumps.
    infos: Option<Infos>,
    /// The entries that count, in key order; the views' runs point into it.
    order: Vec<u32>,
    view: Chosen,
}

/// The rows of each view, in their order.
enum Chosen {
    /// Largest total first, and the total of every thunk.
    Top(Vec<Run>, i128),
    Opcode(Vec<OpcodeRow>),
    /// Largest mean first.
    Variability(Vec<Run>),
}

impl Rows<'_> {
    /// How many rows.
    pub fn len(&self) -> usize {
        match &self.view {
            Chosen::Top(r, _) | Chosen::Variability(r) => r.len(),
            Chosen::Opcode(r) => r.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The (program, thunk) of a run and the statistics of its entries together.
    fn merged(&self, run: Run) -> ((&str, &str), Stats) {
        let mut merged = Stats::default();
        let mut key = ("", "");
        for &i in &self.order[run.at as usize..(run.at + run.len) as usize] {
            let ((program, name, _), s) = self.time.stats.get(i);
            key = (program, name);
            merged.merge(s);
        }
        (key, merged)
    }

    /// What the dumps say of a thunk: (op_name, opcode).
    fn info(&self, program: &str, name: &str) -> Option<(String, String)> {
        self.infos
            .as_ref()?
            .get(program)?
            .as_ref()?
            .get(name)?
            .as_ref()
            .map(|i| (i.op_name().to_string(), i.opcode().to_string()))
    }

    /// The names a row gives its thunk.
    fn named(&self, program: &str, name: &str) -> Named {
        let info = self.info(program, name);
        Named {
            program: program.to_string(),
            module: self.selection.module_name(program).to_string(),
            thunk: name.to_string(),
            op_name: info.as_ref().map(|i| i.0.clone()),
            opcode: info.map(|i| i.1),
        }
    }

    fn top_row(&self, run: Run, total: i128) -> TopRow {
        let ((program, name), s) = self.merged(run);
        let Named {
            program,
            module,
            thunk,
            op_name,
            opcode,
        } = self.named(program, name);
        TopRow {
            program,
            module,
            thunk,
            op_name,
            opcode,
            executions: s.n,
            total_ns: clamp(s.dur.sum()),
            mean_ns: s.dur.mean(s.n),
            percent: percent(s.dur.sum(), total),
        }
    }

    fn variability_row(&self, run: Run) -> VariabilityRow {
        let ((program, name), s) = self.merged(run);
        let (mean, std, cv) = spread(&s);
        let Named {
            program,
            module,
            thunk,
            op_name,
            opcode,
        } = self.named(program, name);
        let mut row = VariabilityRow {
            program,
            module,
            thunk,
            op_name,
            opcode,
            executions: s.n,
            mean_ns: mean,
            std_ns: std,
            cv,
            max_ns: s.slowest.first().map_or(0, |x| x.dur_ns),
            ..VariabilityRow::default()
        };
        row.set_slowest(s.slowest.as_slice());
        row
    }
}

/// What the top and variability rows name a thunk by: its program (key and module name),
/// its instruction, and what the dumps say of it.
struct Named {
    program: String,
    module: String,
    thunk: String,
    op_name: Option<String>,
    opcode: Option<String>,
}

/// Mean, sample standard deviation and coefficient of variation (none for a mean of 0).
fn spread(s: &Stats) -> (f64, f64, Option<f64>) {
    let mean = s.dur.mean(s.n);
    let std = s.dur.std(s.n).unwrap_or(0.0);
    (mean, std, (mean != 0.0).then(|| std / mean.abs()))
}

/// The rows of `options.view` of an aggregate; `inputs` are where it came from (their
/// archives, with `--hlo`, are the dumps read for op_names and opcodes).
pub fn rows<'a>(
    time: &'a ThunkTime,
    options: &Options,
    inputs: &[PathBuf],
    notes: &Notes,
) -> Result<Rows<'a>> {
    check(options)?;
    let selection = time
        .gpu
        .select(options.include_warmup, options.top_modules, notes);
    let variability = options.view == View::Variability;
    // Per (program, thunk): the executions that count.
    let order = time.stats.sorted(|(program, _, phase), s| {
        selection.thunk_counts(program, phase)
            && (variability || selection.is_chosen(program))
            && !(variability && s.comm)
    });
    let mut runs = time.stats.runs(&order);
    let mut rows = Rows {
        time,
        selection,
        infos: None,
        order,
        view: Chosen::Opcode(Vec::new()),
    };
    if variability {
        runs.retain(|&r| rows.merged(r).1.n >= 2);
    }
    let sources = thunk_info::dump_sources(inputs, &options.hlo);
    if !sources.is_empty() || time.gpu.has_infos() {
        let mut wanted: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for &run in &runs {
            let ((program, name, _), _) = time.stats.get(rows.order[run.at as usize]);
            wanted.entry(program).or_default().insert(name);
        }
        let infos = time.gpu.infos(&wanted, &sources, notes)?;
        note_missing(&infos, &wanted, &rows.selection, notes);
        rows.infos = Some(infos);
    }
    let mut view = match options.view {
        View::Top => {
            let mut total = 0i128;
            let mut totals: Vec<(i64, Run)> = runs
                .iter()
                .map(|&run| {
                    let sum = rows.merged(run).1.dur.sum();
                    total = total.saturating_add(sum);
                    (clamp(sum), run)
                })
                .collect();
            // Stable: ties stay in (program, thunk) order.
            totals.sort_by_key(|&(t, _)| std::cmp::Reverse(t));
            Chosen::Top(totals.into_iter().map(|(_, run)| run).collect(), total)
        }
        View::Opcode => Chosen::Opcode(opcode_rows(&rows, &runs)),
        View::Variability => {
            let mut means: Vec<(f64, Run)> = Vec::new();
            for run in runs {
                let (mean, _, cv) = spread(&rows.merged(run).1);
                // The notebook's `var_threshold`: σ/μ above it (0 keeps every thunk).
                if options.min_cv > 0.0 && cv.is_none_or(|cv| cv <= options.min_cv) {
                    continue;
                }
                means.push((mean, run));
            }
            // As the notebook's detailed view: the slowest (largest mean) of the variable
            // ones; stable, ties in (program, thunk) order.
            means.sort_by(|a, b| b.0.total_cmp(&a.0));
            Chosen::Variability(means.into_iter().map(|(_, run)| run).collect())
        }
    };
    if let Some(n) = options.top {
        match &mut view {
            Chosen::Top(r, _) | Chosen::Variability(r) => r.truncate(n),
            Chosen::Opcode(r) => r.truncate(n),
        }
    }
    rows.view = view;
    Ok(rows)
}

/// Notes for the programs without a dump and the thunks their dump lacks.
fn note_missing(
    infos: &Infos,
    wanted: &BTreeMap<&str, BTreeSet<&str>>,
    selection: &Selection<'_>,
    notes: &Notes,
) {
    for (program, names) in wanted {
        let module = selection.module_name(program);
        match infos.get(*program).and_then(Option::as_ref) {
            None => notes.note(format!(
                "no HLO dump of program {program} ({module}): its thunks have no op_name \
                 or opcode ({UNKNOWN} by opcode)"
            )),
            Some(infos) => {
                for name in names {
                    if infos.get(*name).is_none_or(Option::is_none) {
                        notes.note(format!(
                            "program {program} ({module}): no instruction {name} in its HLO \
                             dump: no op_name or opcode ({UNKNOWN} by opcode)"
                        ));
                    }
                }
            }
        }
    }
}

fn percent(part: i128, whole: i128) -> f64 {
    if whole > 0 {
        100.0 * part as f64 / whole as f64
    } else {
        0.0
    }
}

/// Held at the ends of i64: only made-up records reach them.
fn clamp(ns: i128) -> i64 {
    ns.clamp(i64::MIN.into(), i64::MAX.into()) as i64
}

fn opcode_rows(rows: &Rows<'_>, runs: &[Run]) -> Vec<OpcodeRow> {
    let mut by_opcode: BTreeMap<String, (u64, i128)> = BTreeMap::new();
    for &run in runs {
        let ((program, name), s) = rows.merged(run);
        let opcode = rows
            .info(program, name)
            .map_or_else(|| UNKNOWN.to_string(), |i| i.1);
        let o = by_opcode.entry(opcode).or_default();
        o.0 += 1;
        o.1 = o.1.saturating_add(s.dur.sum());
    }
    let thunk_total: i128 = by_opcode
        .values()
        .map(|o| o.1)
        .fold(0, i128::saturating_add);
    // The notebook's `_total`: module time (2), with the idle time during modules as a
    // row of its own; thunk time where there are no module records.
    let totals = rows.selection.totals();
    let whole = totals.map_or(thunk_total, |t| i128::from(t.module_ns));
    let mut rows: Vec<OpcodeRow> = by_opcode
        .into_iter()
        .map(|(opcode, (thunks, ns))| OpcodeRow {
            opcode,
            thunks,
            total_ns: clamp(ns),
            percent: percent(ns, whole),
        })
        .collect();
    if let Some(t) = totals {
        rows.push(OpcodeRow {
            opcode: IDLE_INSIDE.to_string(),
            thunks: 0,
            total_ns: t.idle_inside(),
            percent: percent(t.idle_inside().into(), whole),
        });
    }
    rows.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.opcode.cmp(&b.opcode))
    });
    rows
}

/// The rows of `inputs` as `options` ask, written to `out`.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    let time = read(options, inputs, notes)?;
    let rows = rows(&time, options, inputs, notes)?;
    write(options.format, &rows, out)
}

fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1e3)
}

/// Writes rows as a table for people, or as records.
pub fn write(format: Format, rows: &Rows<'_>, out: &mut dyn Write) -> Result<()> {
    if format != Format::Table {
        return match &rows.view {
            Chosen::Top(runs, total) => {
                write_each(out, format, runs, |&run| rows.top_row(run, *total))
            }
            Chosen::Opcode(r) => write_each(out, format, r, OpcodeRow::clone),
            Chosen::Variability(runs) => {
                write_each(out, format, runs, |&run| rows.variability_row(run))
            }
        };
    }
    if rows.is_empty() {
        writeln!(out, "No thunk executions in the input.").map_err(Error::Output)?;
        return out.flush().map_err(Error::Output);
    }
    let text = |s: Option<String>| s.unwrap_or_else(|| "-".into());
    let header = |cells: &[&str]| Cow::Owned(cells.iter().map(|c| c.to_string()).collect());
    match &rows.view {
        Chosen::Top(runs, total) => {
            let row = |i: usize| -> Cow<'_, [String]> {
                if i == 0 {
                    return header(&[
                        "percent",
                        "ms total",
                        "executions",
                        "µs mean",
                        "thunk",
                        "opcode",
                        "module",
                        "op_name",
                    ]);
                }
                let x = rows.top_row(runs[i - 1], *total);
                Cow::Owned(vec![
                    format!("{:.2}", x.percent),
                    ms(x.total_ns as f64),
                    x.executions.to_string(),
                    us(x.mean_ns),
                    x.thunk,
                    text(x.opcode),
                    format!("{} ({})", x.module, x.program),
                    text(x.op_name),
                ])
            };
            write_table_with(out, runs.len() + 1, &row, &[0, 1, 2, 3])?;
        }
        Chosen::Opcode(r) => {
            let row = |i: usize| -> Cow<'_, [String]> {
                if i == 0 {
                    return header(&["percent", "ms total", "thunks", "opcode"]);
                }
                let x = &r[i - 1];
                Cow::Owned(vec![
                    format!("{:.2}", x.percent),
                    ms(x.total_ns as f64),
                    x.thunks.to_string(),
                    x.opcode.clone(),
                ])
            };
            write_table_with(out, r.len() + 1, &row, &[0, 1, 2])?;
        }
        Chosen::Variability(runs) => {
            let row = |i: usize| -> Cow<'_, [String]> {
                if i == 0 {
                    return header(&[
                        "µs mean",
                        "µs std",
                        "cv %",
                        "executions",
                        "thunk",
                        "slowest µs (device/execution)",
                        "module",
                    ]);
                }
                let x = rows.variability_row(runs[i - 1]);
                let slowest = x
                    .slowest()
                    .iter()
                    .map(|&(ns, d, e, k)| {
                        let k = if k > 0 {
                            format!(".{k}")
                        } else {
                            String::new()
                        };
                        format!("{} ({d}/{e}{k})", us(ns as f64))
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                Cow::Owned(vec![
                    us(x.mean_ns),
                    us(x.std_ns),
                    x.cv.map_or("-".into(), |cv| format!("{:.1}", 100.0 * cv)),
                    x.executions.to_string(),
                    x.thunk,
                    slowest,
                    format!("{} ({})", x.module, x.program),
                ])
            };
            write_table_with(out, runs.len() + 1, &row, &[0, 1, 2, 3])?;
        }
    }
    out.flush().map_err(Error::Output)
}

/// Writes one record per item of `items`, made by `row` as it is written.
fn write_each<I, T: Serialize + Default>(
    out: &mut dyn Write,
    format: Format,
    items: &[I],
    row: impl Fn(&I) -> T,
) -> Result<()> {
    let mut w = RecordWriter::new(out, format)?;
    items.iter().try_for_each(|i| w.write(&row(i)))?;
    w.finish::<T>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_of_partial_results_saturate_when_merged() {
        let big = Stats {
            n: u64::MAX - 1,
            ..Stats::default()
        };
        let mut sum = big.clone();
        sum.merge(&big);
        assert_eq!(sum.n, u64::MAX);
    }
}
