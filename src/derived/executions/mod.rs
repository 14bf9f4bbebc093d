//! Execution records: XLA module and thunk executions per device (`njx-export --table
//! modules|thunks`), the frames nsys-jax's `load_profiler_data` builds, derived from each
//! profile's tables (the source layer's [`Profiles`]) and HLO dumps ([`crate::hlo`]).
//!
//! Each profile's GPU projection, launcher threads and compiled programs are read, module
//! and thunk executions derived ([`derive`]), initialisation executions marked, and,
//! across several profiles, the device clocks aligned on the collectives that span every
//! device. Execution records written by `njx-export` are read back with [`read_records`].
//!
//! Analyses that only aggregate read profiles one at a time ([`each_mapped`]): each profile's
//! executions come with their [`Phase`] (what is known of warm-up when it is read), and
//! [`Warmup`] decides the undecided ones once every profile has been seen, so memory
//! holds one profile per core, not every rank.
//!
//! An input path none of whose profiles holds an XLA module range (`XlaModule` NVTX ranges
//! with GPU work: a PyTorch or CUDA profile) has no executions to give: it is refused in
//! one line that says so and names the tools that read such a profile ([`NO_XLA`]), with
//! none of the notes of reading it (which would be about the GPU projection and HLO dumps
//! of programs it does not have). A tool that draws the other things it holds too
//! ([`visit_with`], [`WithoutXla::Skip`]) passes over it instead.

pub mod derive;
pub mod devices;
mod spill;

use crate::error::{Error, Result};
use crate::hlo::{CollectiveOrder, Dumps, HloModule, Instruction, ProgramKey};
use crate::output::notes::Notes;
use crate::output::progress::Progress;
use crate::records::{Module, Thunk};
use crate::source::{self, Archive, ProfileTables, Profiles, xla_names};
use crate::util::parallel::{parallel_map, workers};
use derive::{CollectiveSchedule, Comm, Derived, ProgramInfo};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Module and thunk executions of every profile read.
#[derive(Debug, Default)]
pub struct Executions {
    /// Module executions.
    pub modules: Vec<Module>,
    /// Thunk executions.
    pub thunks: Vec<Thunk>,
    /// Programs whose compilation the profiles recorded (`unknown` for compilations
    /// without a dump: autotuning candidates).
    pub compiled: HashSet<String>,
    /// The HLO dumps of the input's own archive that were read (in member order), when
    /// asked for ([`DumpsKept::Keep`]): what an analysis needs of them beyond the records
    /// is taken while they are decoded, not decoded again.
    pub dumps: Vec<Arc<HloModule>>,
    /// The programs each module name ran as, where, with their collective sequences.
    pub variants: Variants,
}

/// Whether the HLO dumps read for an input path travel with its [`Executions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpsKept {
    /// Dropped once the executions are derived.
    Drop,
    /// Kept in [`Executions::dumps`].
    Keep,
}

/// How programs are keyed across profiles (the records' `program`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum KeyBy {
    /// The HLO fingerprint (`fingerprint_before_lhs`), as nsys-jax keys them: ranks that
    /// compiled a program differently run different programs.
    #[default]
    Fingerprint,
    /// The module name: the programs one name runs as on different devices are analysed
    /// together (each device should run one of them; their collective sequences are
    /// compared and said on stderr).
    Name,
}

/// Where the HLO dumps of programs come from besides each archive's own (`--hlo`:
/// archives or XLA dump folders), and how programs are keyed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hlo<'a> {
    /// Archives or XLA dump folders.
    pub dumps: &'a [PathBuf],
    /// How programs are keyed.
    pub key: KeyBy,
}

/// Per-device clock corrections applied, nanoseconds to subtract from device times.
pub type Corrections = BTreeMap<u32, f64>;

/// What is said, after its place, of an input without XLA module ranges: one line, the
/// error of every tool that reads executions ([`WithoutXla::Refuse`]).
pub const NO_XLA: &str = "holds no XLA module ranges (XlaModule NVTX ranges with GPU work), \
     so nothing for this tool; njx-kernels, njx-ranges, njx-timeline, njx-flamefold --by \
     stack and njx-export --table ranges|gpu-ranges|kernels|memops|payloads read it";

/// What becomes of an input path whose profiles hold no XLA module range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WithoutXla {
    /// Refused ([`NO_XLA`], exit 1): executions are all the tool reads, and an empty
    /// table would read as an answer (no time in XLA programs) where there is none.
    Refuse,
    /// Passed over without a note: the tool draws the other things the input holds.
    Skip,
}

/// Reads module and thunk executions from nsys-jax archives (every profile of each),
/// archives njx-capture wrote, nsys SQLite exports and `.nsys-rep` reports, aligning
/// device clocks across them when `align` is set. HLO dumps come from each archive
/// itself and from `hlo` (archives or XLA dump folders), the only source for SQLite
/// exports. What was left out or corrected goes to `notes`.
pub fn load(paths: &[PathBuf], hlo: Hlo<'_>, align: bool, notes: &Notes) -> Result<Executions> {
    let mut all = Executions::default();
    visit(paths, hlo, align, Want::Both, notes, &mut |e| {
        match e {
            Execution::Module(m) => all.modules.push(m),
            Execution::Thunk(t) => all.thunks.push(t),
        }
        Ok(())
    })?;
    Ok(all)
}

/// One execution record.
#[derive(Debug, Clone, PartialEq)]
pub enum Execution {
    /// A module execution.
    Module(Module),
    /// A thunk execution.
    Thunk(Thunk),
}

/// Which records [`visit`] hands over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Module executions.
    Modules,
    /// Thunk executions.
    Thunks,
    /// Both, every module's before every thunk's of the same input path.
    Both,
}

/// Hands every execution of `paths` to `f`, as [`load`] would hold them (warm-up marked,
/// clocks aligned when `align`), in the same order, without holding them: a first pass
/// derives each input path's executions ([`each`]), keeps what the warm-up rule and the
/// alignment need (programs, and the end times of the collectives over every device) and
/// parks the records in a temporary file (TMPDIR); the second reads them back with the
/// decisions applied. Memory holds one input path per core and the collectives' end
/// times, not every rank.
pub fn visit(
    paths: &[PathBuf],
    hlo: Hlo<'_>,
    align: bool,
    want: Want,
    notes: &Notes,
    f: &mut dyn FnMut(Execution) -> Result<()>,
) -> Result<()> {
    visit_with(paths, hlo, align, want, WithoutXla::Refuse, notes, f)
}

/// [`visit`], with inputs without XLA module ranges refused or passed over as `without`
/// says.
pub fn visit_with(
    paths: &[PathBuf],
    hlo: Hlo<'_>,
    align: bool,
    want: Want,
    without: WithoutXla,
    notes: &Notes,
    f: &mut dyn FnMut(Execution) -> Result<()>,
) -> Result<()> {
    let mut warmup = Warmup::default();
    let mut alignment = Alignment::default();
    let mut parked = spill::Spill::new()?;
    each_with(paths, hlo, DumpsKept::Drop, without, notes, |part| {
        // nsys-jax decides warm-up over everything it analyses at once: a program
        // compiled in one profile, or communication in any, counts for all of them.
        warmup.add(&part);
        if align {
            alignment.add(&part.thunks);
        }
        parked.put(
            if want == Want::Thunks {
                &[]
            } else {
                &part.modules
            },
            if want == Want::Modules {
                &[]
            } else {
                &part.thunks
            },
        )
    })?;
    let rule = warmup.rule();
    if let Some(n) = rule.note() {
        notes.note(n);
    }
    for n in warmup.variants.notes() {
        notes.note(n);
    }
    let corrections = if align { alignment.corrections() } else { None };
    for (device, ns) in corrections.iter().flatten() {
        notes.note(format!(
            "clock alignment: device {device} corrected by {:+.6} ms",
            -ns / 1e6 + 0.0
        ));
    }
    let shift = |device: u32| {
        corrections
            .as_ref()
            .and_then(|c| c.get(&device))
            .map_or(0, |c| c.round() as i64)
    };
    notes.progress().phase("writing records");
    parked.read(&mut |e| {
        f(match e {
            Execution::Module(mut m) => {
                m.warmup = rule.module_is_warmup(&m.program, Phase::of_profile(m.execution));
                m.start_ns -= shift(m.device);
                Execution::Module(m)
            }
            Execution::Thunk(mut t) => {
                t.warmup = rule.thunk_is_warmup(&t.program, Phase::of_profile(t.execution));
                t.start_ns -= shift(t.device);
                Execution::Thunk(t)
            }
        })
    })
}

/// What clock alignment needs of the profiles read (nsys-jax's
/// `align_profiler_data_timestamps`): the devices that communicate and the end times of
/// the collectives with the largest group, per instance, in reading order.
#[derive(Debug, Default)]
pub struct Alignment {
    devices: BTreeSet<u32>,
    max_group: Option<u32>,
    ends: HashMap<InstanceKey, Vec<(u32, i64)>>,
}

/// A collective instance: (program, execution, thunk, thunk execution).
type InstanceKey = (String, u32, String, u32);

impl Alignment {
    /// Takes in thunk executions.
    pub fn add(&mut self, thunks: &[Thunk]) {
        for t in thunks.iter().filter(|t| t.comm) {
            self.devices.insert(t.device);
            let Some(g) = t.group_size else { continue };
            match self.max_group {
                Some(m) if g < m => continue,
                Some(m) if g == m => {}
                _ => {
                    self.max_group = Some(g);
                    self.ends.clear();
                }
            }
            let key = (
                t.program.clone(),
                t.execution,
                t.name.clone(),
                t.thunk_execution,
            );
            self.ends
                .entry(key)
                .or_default()
                .push((t.device, t.start_ns + t.dur_ns + t.hidden_ns));
        }
    }

    /// On the collectives whose groups span every device, each device's clock is
    /// corrected by the median over those collectives of how far its end time is from
    /// the mean end time of all devices. `None` where alignment does not apply (one
    /// device, or no collective over all devices).
    pub fn corrections(&self) -> Option<Corrections> {
        let max_group = self.max_group?;
        if max_group < 2 || self.devices.len() != max_group as usize {
            return None;
        }
        let mut skews: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
        for ends in self.ends.values() {
            let mean = ends.iter().map(|&(_, e)| e as f64).sum::<f64>() / ends.len() as f64;
            for &(d, e) in ends {
                skews.entry(d).or_default().push(e as f64 - mean);
            }
        }
        Some(
            skews
                .into_iter()
                .map(|(d, mut s)| {
                    s.sort_by(f64::total_cmp);
                    let n = s.len();
                    let median = if n % 2 == 1 {
                        s[n / 2]
                    } else {
                        (s[n / 2 - 1] + s[n / 2]) / 2.0
                    };
                    (d, median)
                })
                .collect(),
        )
    }
}

/// Hands the executions of each input path (every profile of it) to `f`, in input order,
/// warm-up not yet marked and clocks not aligned. Paths are read as many at a time as
/// there are cores (decoding the xz-compressed tables and HLO dumps is most of the
/// work), each handed over and dropped before the next are read.
pub fn each(
    paths: &[PathBuf],
    hlo: Hlo<'_>,
    dumps: DumpsKept,
    notes: &Notes,
    f: impl FnMut(Executions) -> Result<()>,
) -> Result<()> {
    each_with(paths, hlo, dumps, WithoutXla::Refuse, notes, f)
}

/// [`each`], with inputs without XLA module ranges refused or passed over as `without`
/// says.
fn each_with(
    paths: &[PathBuf],
    hlo: Hlo<'_>,
    dumps: DumpsKept,
    without: WithoutXla,
    notes: &Notes,
    f: impl FnMut(Executions) -> Result<()>,
) -> Result<()> {
    each_path(paths, hlo, dumps, without, notes, &|part, _| Ok(part), f)
}

/// [`each`], with `map` applied to each input path's executions on the thread that read
/// them (what an analysis makes of one input path, such as its partial aggregate), and
/// its results handed to `f` in input order.
pub fn each_mapped<T: Send>(
    paths: &[PathBuf],
    hlo: Hlo<'_>,
    dumps: DumpsKept,
    notes: &Notes,
    map: &(dyn Fn(Executions, &Notes) -> Result<T> + Sync),
    f: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    each_path(paths, hlo, dumps, WithoutXla::Refuse, notes, map, f)
}

/// [`each_mapped`], with inputs without XLA module ranges refused or passed over as
/// `without` says.
fn each_path<T: Send>(
    paths: &[PathBuf],
    hlo: Hlo<'_>,
    dumps: DumpsKept,
    without: WithoutXla,
    notes: &Notes,
    map: &(dyn Fn(Executions, &Notes) -> Result<T> + Sync),
    mut f: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    let processes = Processes::new(paths);
    let inputs: Vec<(usize, &PathBuf)> = paths.iter().enumerate().collect();
    for chunk in inputs.chunks(workers()) {
        for (result, kept) in parallel_map(chunk, |&(k, p)| {
            let kept = notes.apart();
            let mapped = load_path(p, k, &processes, hlo, dumps, without, &kept)
                .and_then(|part| map(part, &kept));
            notes.progress().input_done();
            (mapped, kept)
        }) {
            let part = result?;
            notes.forward(kept);
            f(part)?;
        }
    }
    Ok(())
}

/// Whether an execution is initialisation, as far as is known when it is read. Records
/// carry the answer (`njx-export` decided it over all its inputs); for executions 0 and
/// 1 of a program read from profiles it depends on every profile (whether the program's
/// compilation was profiled, whether any profile communicates) and [`Warmup`] decides
/// it at the end; later executions are always steady state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Steady state.
    Steady,
    /// Initialisation.
    Warmup,
    /// Execution 0 of a program, read from a profile.
    First,
    /// Execution 1 of a program, read from a profile.
    Second,
}

impl Phase {
    /// The phase of a record, from its `warmup` field.
    pub fn of_record(warmup: bool) -> Phase {
        if warmup { Phase::Warmup } else { Phase::Steady }
    }

    /// The phase of execution `execution` of a program, read from a profile.
    pub fn of_profile(execution: u32) -> Phase {
        match execution {
            0 => Phase::First,
            1 => Phase::Second,
            _ => Phase::Steady,
        }
    }

    fn execution(self) -> Option<u32> {
        match self {
            Phase::First => Some(0),
            Phase::Second => Some(1),
            _ => None,
        }
    }
}

/// What nsys-jax's warm-up rule (`apply_warmup_heuristics`) needs to know of all the
/// profiles read: the programs whose compilation was profiled, whether any profile
/// communicates, and which early executions exist. Small (programs, not executions),
/// and merged exactly in any order, so it travels in partial results.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warmup {
    /// Programs whose compilation a profile recorded.
    pub compiled: BTreeSet<String>,
    /// Whether any profile has a communication thunk.
    pub has_comm: bool,
    /// Module executions read from profiles.
    pub modules: Early,
    /// Thunk executions read from profiles.
    pub thunks: Early,
    /// The programs run under each module name, and where (absent from partial results
    /// written before it was added).
    #[serde(default)]
    pub variants: Variants,
}

/// The programs (keys) run under each module name, with the devices that ran each and
/// their collective sequences: ranks that compiled one program differently show as one
/// name with several keys, whose executions are not compared with each other's unless
/// programs are keyed by name ([`KeyBy::Name`]).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variants {
    /// Module name → program key (fingerprint) → where it ran.
    pub by_name: BTreeMap<String, BTreeMap<String, Variant>>,
    /// Whether the records were keyed by name ([`KeyBy::Name`]).
    #[serde(default)]
    pub keyed_by_name: bool,
}

/// Where one program ran, and what it communicated.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    /// Devices that ran it.
    pub devices: BTreeSet<u32>,
    /// Digests of its collective sequence (each device's first execution: the
    /// communication thunks' instruction, kind, group size and message size, in order),
    /// where read from profiles.
    #[serde(default)]
    pub collectives: BTreeSet<u64>,
}

impl Variants {
    /// Takes in that `device` ran program `program` named `name`.
    pub fn add(&mut self, name: &str, program: &str, device: u32) {
        if program == "unknown" {
            return;
        }
        let keys = match self.by_name.get_mut(name) {
            Some(keys) => keys,
            None => self.by_name.entry(name.to_string()).or_default(),
        };
        match keys.get_mut(program) {
            Some(v) => {
                v.devices.insert(device);
            }
            None => {
                let mut v = Variant::default();
                v.devices.insert(device);
                keys.insert(program.to_string(), v);
            }
        }
    }

    /// Takes in the executions of one profile (keyed by fingerprint): where each program
    /// ran and the collective sequence of each device's first execution of it.
    fn add_profile(&mut self, modules: &[Module], thunks: &[Thunk]) {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let mut first: HashMap<(&str, u32), u32> = HashMap::new();
        for m in modules {
            self.add(&m.name, &m.program, m.device);
            let e = first
                .entry((m.program.as_str(), m.device))
                .or_insert(m.execution);
            *e = (*e).min(m.execution);
        }
        let mut digests: HashMap<(&str, u32), (&str, DefaultHasher)> = HashMap::new();
        for t in thunks {
            if first.get(&(t.program.as_str(), t.device)) != Some(&t.execution) {
                continue;
            }
            let (_, h) = digests
                .entry((t.program.as_str(), t.device))
                .or_insert_with(|| (t.module.as_str(), DefaultHasher::new()));
            if t.comm {
                (&t.name, &t.collective, t.group_size, t.message_bytes).hash(h);
            }
        }
        for ((program, _), (name, h)) in digests {
            if let Some(v) = self
                .by_name
                .get_mut(name)
                .and_then(|keys| keys.get_mut(program))
            {
                v.collectives.insert(h.finish());
            }
        }
    }

    /// Takes in another's.
    pub fn merge(&mut self, other: &Variants) {
        self.keyed_by_name |= other.keyed_by_name;
        for (name, keys) in &other.by_name {
            let mine = match self.by_name.get_mut(name) {
                Some(mine) => mine,
                None => self.by_name.entry(name.clone()).or_default(),
            };
            for (key, v) in keys {
                let m = match mine.get_mut(key) {
                    Some(m) => m,
                    None => mine.entry(key.clone()).or_default(),
                };
                m.devices.extend(&v.devices);
                m.collectives.extend(&v.collectives);
            }
        }
    }

    /// What to say of each module name that ran as several programs: with programs keyed
    /// by fingerprint, when each ran on devices of its own, together on every device seen
    /// (the ranks compiled it differently, as rank 3 of the pax profiles did its step
    /// function); with programs keyed by name, always, with whether their collective
    /// sequences agree (what makes comparing their collectives by instruction name safe)
    /// and whether a device ran several of them.
    pub fn notes(&self) -> Vec<String> {
        let all: BTreeSet<u32> = self
            .by_name
            .values()
            .flat_map(|keys| keys.values())
            .flat_map(|v| v.devices.iter().copied())
            .collect();
        let mut out = Vec::new();
        for (name, keys) in &self.by_name {
            if keys.len() < 2 {
                continue;
            }
            let count: usize = keys.values().map(|v| v.devices.len()).sum();
            let union: BTreeSet<u32> = keys
                .values()
                .flat_map(|v| v.devices.iter().copied())
                .collect();
            let list: Vec<String> = keys
                .iter()
                .map(|(key, v)| format!("{key} on {}", device_list(&v.devices)))
                .collect();
            let ran = format!("{} programs ({})", keys.len(), list.join(", "));
            if !self.keyed_by_name {
                if count == union.len() && union == all {
                    out.push(format!(
                        "module {name} was compiled differently across devices: {ran}; each \
                         is compared only across its own devices, so wait, straggler and \
                         alignment figures leave the others out (--program-key name \
                         analyses them together)"
                    ));
                }
                continue;
            }
            let digests: BTreeSet<u64> = keys
                .values()
                .flat_map(|v| v.collectives.iter().copied())
                .collect();
            let known = keys.values().all(|v| !v.collectives.is_empty());
            let verdict = if !known {
                "their collective sequences were not all read (records or partial results \
                 keyed by name carry none): not checked"
                    .to_string()
            } else if digests.len() == 1 {
                "their collective sequences are identical (each device's first execution: \
                 instruction names, kinds, group sizes and message sizes, in order), so their \
                 collectives pair up by instruction name"
                    .to_string()
            } else {
                "their collective sequences differ (instruction names, kinds, group sizes or \
                 message sizes): collectives paired by instruction name may not be the same \
                 operation"
                    .to_string()
            };
            let shared = if count == union.len() {
                String::new()
            } else {
                "; some devices ran several of them, whose executions are counted together"
                    .to_string()
            };
            out.push(format!(
                "module {name} ran as {ran}, analysed together (--program-key name): \
                 {verdict}{shared}"
            ));
        }
        out
    }
}

/// Keys the programs of executions by module name (autotuning executions stay
/// `unknown`), counting executions per (device, name) in time order.
fn key_by_name(modules: &mut [Module], thunks: &mut [Thunk]) {
    let mut order: Vec<usize> = (0..modules.len()).collect();
    order.sort_by_key(|&i| (modules[i].start_ns, i));
    let mut counter: HashMap<(u32, String), u32> = HashMap::new();
    // Old program → (device, old execution) → new execution.
    let mut renumbered: HashMap<String, HashMap<(u32, u32), u32>> = HashMap::new();
    for i in order {
        let m = &mut modules[i];
        if m.program == "unknown" {
            continue;
        }
        let n = counter.entry((m.device, m.name.clone())).or_default();
        let old = std::mem::replace(&mut m.program, m.name.clone());
        renumbered
            .entry(old)
            .or_default()
            .insert((m.device, m.execution), *n);
        m.execution = *n;
        *n += 1;
    }
    for t in thunks {
        let new = renumbered
            .get(t.program.as_str())
            .and_then(|by| by.get(&(t.device, t.execution)));
        if let Some(&n) = new {
            t.program = t.module.clone();
            t.execution = n;
        }
    }
}

/// `devices 0-2, 5` or `device 3`.
fn device_list(devices: &BTreeSet<u32>) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &d in devices {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == d => *end = d,
            _ => runs.push((d, d)),
        }
    }
    let text: Vec<String> = runs
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    format!(
        "device{} {}",
        if devices.len() == 1 { "" } else { "s" },
        text.join(", ")
    )
}

/// Which executions 0 and 1 of which programs were read, and whether a later one was.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Early {
    /// (program, execution 0 or 1).
    pub early: BTreeSet<(String, u32)>,
    /// Whether an execution 2 or later was read.
    pub later: bool,
}

impl Early {
    /// Takes in the (program, execution) of every execution read, each distinct early
    /// pair copied once.
    fn add<'a>(&mut self, executions: impl Iterator<Item = (&'a str, u32)>) {
        let mut seen: HashSet<(&str, u32)> = HashSet::new();
        for (program, execution) in executions {
            if execution >= 2 {
                self.later = true;
            } else if seen.insert((program, execution)) {
                self.early.insert((program.to_string(), execution));
            }
        }
    }
}

impl Warmup {
    /// Takes in what one profile's executions tell.
    pub fn add(&mut self, part: &Executions) {
        self.variants.merge(&part.variants);
        self.compiled.extend(part.compiled.iter().cloned());
        self.has_comm |= part.thunks.iter().any(|t| t.comm);
        self.modules.add(
            part.modules
                .iter()
                .map(|m| (m.program.as_str(), m.execution)),
        );
        self.thunks.add(
            part.thunks
                .iter()
                .map(|t| (t.program.as_str(), t.execution)),
        );
    }

    /// Takes in another's (of other profiles).
    pub fn merge(&mut self, other: Warmup) {
        self.compiled.extend(other.compiled);
        self.has_comm |= other.has_comm;
        self.variants.merge(&other.variants);
        for (mine, theirs) in [
            (&mut self.modules, other.modules),
            (&mut self.thunks, other.thunks),
        ] {
            mine.early.extend(theirs.early);
            mine.later |= theirs.later;
        }
    }

    /// The decision, once every profile is in.
    pub fn rule(&self) -> Rule<'_> {
        let steady = |e: &Early| {
            e.later
                || e.early
                    .iter()
                    .any(|(p, x)| *x >= threshold(&self.compiled, self.has_comm, p))
        };
        Rule {
            warmup: self,
            steady_modules: steady(&self.modules),
            steady_thunks: steady(&self.thunks),
        }
    }
}

/// Executions below this number are initialisation: the first of a program whose
/// compilation was profiled, one more when there is communication.
fn threshold(compiled: &BTreeSet<String>, has_comm: bool, program: &str) -> u32 {
    u32::from(compiled.contains(program)) + u32::from(has_comm)
}

/// nsys-jax's warm-up rule applied: which executions are initialisation.
#[derive(Debug, Clone, Copy)]
pub struct Rule<'a> {
    warmup: &'a Warmup,
    steady_modules: bool,
    steady_thunks: bool,
}

impl Rule<'_> {
    fn is_warmup(&self, any_steady: bool, program: &str, phase: Phase) -> bool {
        match phase.execution() {
            None => phase == Phase::Warmup,
            // When nothing would be left in steady state, nothing is marked (as nsys-jax
            // does, with a warning: [`Rule::note`]).
            Some(x) => {
                any_steady && x < threshold(&self.warmup.compiled, self.warmup.has_comm, program)
            }
        }
    }

    /// Whether a module execution of `program` in `phase` is initialisation.
    pub fn module_is_warmup(&self, program: &str, phase: Phase) -> bool {
        self.is_warmup(self.steady_modules, program, phase)
    }

    /// Whether a thunk execution of `program` in `phase` is initialisation.
    pub fn thunk_is_warmup(&self, program: &str, phase: Phase) -> bool {
        self.is_warmup(self.steady_thunks, program, phase)
    }

    /// The warning when profiles have module executions but none in steady state.
    pub fn note(&self) -> Option<String> {
        let m = &self.warmup.modules;
        ((!m.early.is_empty() || m.later) && !self.steady_modules).then(|| {
            "no steady-state execution identified: every execution counts as steady state; \
             profile more iterations"
                .to_string()
        })
    }
}

/// Execution records (`table`: `modules` or `thunks`) from every input: record streams
/// (JSON Lines or CSV) as they are, profiles through [`load`] (clocks aligned when
/// `align`) and `pick`.
pub fn read_records<T: DeserializeOwned + crate::records::Check>(
    paths: &[PathBuf],
    table: &str,
    key: KeyBy,
    align: bool,
    notes: &Notes,
    pick: impl FnOnce(Executions) -> Vec<T>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    let profiles = source::split_inputs(paths, table, notes.progress(), &mut |s| {
        s.read(&mut |r: T| {
            out.push(r);
            Ok(())
        })
        .map(drop)
    })?;
    if !profiles.is_empty() {
        out.extend(pick(load(
            &profiles,
            Hlo { dumps: &[], key },
            align,
            notes,
        )?));
    }
    Ok(out)
}

/// Hands every thunk execution of `paths` to `f` without holding them: thunk records as
/// they are read (in input order), then the profiles through [`visit`] (warm-up marked,
/// clocks aligned when `align`).
pub fn each_thunk(
    paths: &[PathBuf],
    key: KeyBy,
    align: bool,
    notes: &Notes,
    f: &mut dyn FnMut(Thunk) -> Result<()>,
) -> Result<()> {
    let profiles = source::split_inputs(paths, "thunks", notes.progress(), &mut |s| {
        s.read(&mut |t: Thunk| f(t)).map(drop)
    })?;
    if profiles.is_empty() {
        return Ok(());
    }
    let hlo = Hlo { dumps: &[], key };
    visit(
        &profiles,
        hlo,
        align,
        Want::Thunks,
        notes,
        &mut |e| match e {
            Execution::Thunk(t) => f(t),
            Execution::Module(_) => Ok(()),
        },
    )
}

/// A source of HLO dumps: an archive and its index.
type DumpSource = (Archive, Dumps);

/// The HLO dumps of `--hlo` paths: archives or XLA dump folders.
fn hlo_sources(paths: &[PathBuf], progress: &Progress) -> Result<Vec<DumpSource>> {
    paths
        .iter()
        .map(|p| {
            let a = source::open_dumps(p, progress)?;
            let dumps = Dumps::new(&a);
            Ok((a, dumps))
        })
        .collect()
}

/// The process index of each input's first process, where devices are numbered per process
/// (`devices`): the processes of the inputs before it. Counted only when asked for (a
/// profile without launcher names), each input once: an input records its count when it
/// is cheap to know (an archive: one process per profile), and an input counted by
/// another is locked while it is (opening it again: for a `.nsys-rep` report, exporting
/// it again).
struct Processes<'a> {
    paths: &'a [PathBuf],
    counts: Vec<Mutex<Option<u32>>>,
    /// The first devices-per-process seen where devices were numbered per process, and
    /// where.
    per_process: Mutex<Option<(u32, String)>>,
}

impl<'a> Processes<'a> {
    fn new(paths: &'a [PathBuf]) -> Processes<'a> {
        Processes {
            paths,
            counts: paths.iter().map(|_| Mutex::new(None)).collect(),
            per_process: Mutex::new(None),
        }
    }

    /// Records that input `k` holds `n` processes.
    fn record(&self, k: usize, n: u32) {
        *self.counts[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(n);
    }

    /// Takes in that `place` numbered its devices per process with `n` per process; says
    /// when another profile had another number, whose device numbers then overlap
    /// (nsys-jax requires the same number in every profile).
    fn check_per_process(&self, n: u32, place: &str, notes: &Notes) {
        let mut first = self.per_process.lock().unwrap_or_else(|e| e.into_inner());
        match &*first {
            None => *first = Some((n, place.to_string())),
            Some((m, other)) if *m != n => notes.note(format!(
                "{place}: devices numbered per process with {n} per process, but {other} \
                 with {m}: device numbers of the two overlap (processes must drive as many \
                 GPUs each, or be named by XLA's launcher threads)"
            )),
            Some(_) => {}
        }
    }

    /// The process index of input `k`'s first process.
    fn first(&self, k: usize) -> Result<u32> {
        let mut first = 0;
        for j in 0..k {
            let mut count = self.counts[j].lock().unwrap_or_else(|e| e.into_inner());
            let n = match *count {
                Some(n) => n,
                None => {
                    let n = Profiles::open(&self.paths[j], &Progress::none())?.processes()?;
                    *count = Some(n);
                    n
                }
            };
            first += n;
        }
        Ok(first)
    }
}

/// The executions of every profile of `path` (the `k`-th input); an input none of whose
/// profiles holds an XLA module range is refused, or passed over, as `without` says, and
/// either way the notes of reading it are not said.
fn load_path(
    path: &Path,
    k: usize,
    processes: &Processes,
    hlo: Hlo<'_>,
    dumps: DumpsKept,
    without: WithoutXla,
    notes: &Notes,
) -> Result<Executions> {
    let mut part = Executions::default();
    let mut profiles = Profiles::open(path, notes.progress())?;
    if let Some(n) = profiles.processes_known() {
        processes.record(k, n);
    }
    // Said once the input is known to hold XLA module ranges.
    let held = notes.apart();
    let mut xla = false;
    let mut own = profiles.archive().map(|a| Dumps::new(a));
    let mut extra = hlo_sources(hlo.dumps, notes.progress())?;
    for i in 0..profiles.len() {
        let tables = profiles.tables(i, &held)?;
        let modules = (tables.gpu_ranges.iter()).any(|r| xla_names::is_module(&r.name));
        xla |= modules;
        let mut sources: Vec<(&mut Archive, &mut Dumps)> = Vec::new();
        if let (Some(a), Some(d)) = (profiles.archive(), own.as_mut()) {
            sources.push((a, d));
        }
        sources.extend(extra.iter_mut().map(|(a, d)| (a, d)));
        if sources.is_empty() && modules {
            held.note(format!(
                "{}: no HLO dumps (--hlo): programs are keyed by program id and communication \
                 is unknown",
                tables.place
            ));
        }
        // Process index of the profile's first process, where devices are numbered per
        // process: one process per profile of an archive.
        let first_process = || Ok(processes.first(k)? + i as u32);
        let place = tables.place.clone();
        let per_process = derive_profile(
            tables,
            first_process,
            hlo.key,
            &mut sources,
            &mut part,
            &held,
        )?;
        if let Some(n) = per_process {
            processes.check_per_process(n, &place, &held);
        }
    }
    match (xla, without) {
        (true, _) => notes.forward(held),
        (false, WithoutXla::Refuse) => {
            return Err(Error::data(source::place_of(path), NO_XLA));
        }
        (false, WithoutXla::Skip) => {}
    }
    if let (DumpsKept::Keep, Some(own)) = (dumps, own.as_mut()) {
        part.dumps = own.take_loaded();
    }
    Ok(part)
}

/// Derives the executions of one profile and adds them to `all`, the programs keyed by
/// the dumps of `sources` (the first that has a program's dump).
fn derive_profile<'s>(
    p: ProfileTables,
    first_process: impl FnOnce() -> Result<u32>,
    key_by: KeyBy,
    sources: &mut [(&'s mut Archive, &'s mut Dumps)],
    all: &mut Executions,
    notes: &Notes,
) -> Result<Option<u32>> {
    let mut programs = ArchivePrograms {
        sources,
        profile: &p.name,
        missing: HashSet::new(),
        unnamed: 0,
    };
    let mut first_process = Some(first_process);
    let mut derived = derive::derive(
        &p.name,
        &p.place,
        &p.gpu_ranges,
        &p.launchers,
        &mut || first_process.take().map_or(Ok(0), |f| f()),
        &mut programs,
    )?;
    for (id, name) in &p.compiled {
        // As nsys-jax's `_remap_program_id(…, allow_missing_protobuf=True)`: a
        // compilation without a dump (an autotuning candidate) is `unknown`. Its id too,
        // since executions without a dump are keyed by id (where nsys-jax stops).
        let key = programs.key(Some(*id), name)?;
        all.compiled.insert(match key_by {
            KeyBy::Name if !matches!(key, ProgramKey::Unknown) => name.clone(),
            _ => key.record(),
        });
        if matches!(key, ProgramKey::Missing(_)) {
            all.compiled.insert(ProgramKey::Unknown.record());
        }
    }
    let (missing, unnamed) = (programs.missing, programs.unnamed);
    if !missing.is_empty() {
        let mut ids: Vec<_> = missing.into_iter().collect();
        ids.sort();
        derived.notes.push(format!(
            "no HLO dump of program{} {}: keyed by program id, communication unknown",
            if ids.len() == 1 { "" } else { "s" },
            ids.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if unnamed > 0 {
        derived.notes.push(format!(
            "{unnamed} thunk names are not instructions of their module's HLO: counted as compute"
        ));
    }
    let Derived {
        mut modules,
        mut thunks,
        notes: derived_notes,
        once,
        per_process,
    } = derived;
    all.variants.add_profile(&modules, &thunks);
    if key_by == KeyBy::Name {
        all.variants.keyed_by_name = true;
        key_by_name(&mut modules, &mut thunks);
    }
    for n in derived_notes {
        notes.note(format!("{}: {n}", p.place));
    }
    for n in once {
        notes.once(n);
    }
    all.modules.extend(modules);
    all.thunks.extend(thunks);
    Ok(per_process)
}

/// [`ProgramInfo`] from HLO dumps: each program's dump is looked for in every source in
/// turn (the profile's own archive first).
struct ArchivePrograms<'a, 's> {
    sources: &'a mut [(&'s mut Archive, &'s mut Dumps)],
    profile: &'a str,
    missing: HashSet<u64>,
    unnamed: usize,
}

impl ArchivePrograms<'_, '_> {
    fn key(&mut self, program_id: Option<u64>, name: &str) -> Result<ProgramKey> {
        for (archive, dumps) in self.sources.iter_mut() {
            match dumps.program_key(archive, self.profile, program_id, name)? {
                ProgramKey::Missing(_) => continue,
                key => return Ok(key),
            }
        }
        Ok(program_id.map_or(ProgramKey::Unknown, ProgramKey::Missing))
    }
}

impl ProgramInfo for ArchivePrograms<'_, '_> {
    fn program_key(&mut self, program_id: Option<u64>, name: &str) -> Result<String> {
        let key = self.key(program_id, name)?;
        if let ProgramKey::Missing(id) = key {
            self.missing.insert(id);
        }
        Ok(key.record())
    }

    fn communication(
        &mut self,
        program_id: u64,
        module: &str,
        instruction: &str,
    ) -> Result<Option<Comm>> {
        let Some(hlo) = self.dump(program_id, module)? else {
            return Ok(None);
        };
        let Some(inst) = hlo.instruction(instruction) else {
            self.unnamed += 1;
            return Ok(None);
        };
        comm_of(&inst)
    }

    fn instruction_id(
        &mut self,
        program_id: u64,
        module: &str,
        instruction: &str,
    ) -> Result<Option<Option<i64>>> {
        Ok(self
            .dump(program_id, module)?
            .map(|hlo| hlo.instruction(instruction).map(|i| i.id())))
    }

    fn collective_schedule(&mut self, program_id: u64, module: &str) -> Result<CollectiveSchedule> {
        let Some(hlo) = self.dump(program_id, module)? else {
            return Ok(CollectiveSchedule::Unknown(
                "there is no HLO dump of the program".into(),
            ));
        };
        Ok(match hlo.collective_order()? {
            CollectiveOrder::Unknown(why) => CollectiveSchedule::Unknown(why),
            CollectiveOrder::Known(insts) => {
                let mut order = Vec::with_capacity(insts.len());
                for inst in insts {
                    if let Some(comm) = comm_of(&inst)? {
                        order.push((inst.name().to_string(), comm));
                    }
                }
                CollectiveSchedule::Known(order)
            }
        })
    }
}

impl ArchivePrograms<'_, '_> {
    /// The dump of program `program_id` (module `module`), from the first source that has
    /// it.
    fn dump(&mut self, program_id: u64, module: &str) -> Result<Option<Arc<HloModule>>> {
        for (archive, dumps) in self.sources.iter_mut() {
            if let Some(hlo) = dumps.load(archive, self.profile, program_id, module)? {
                return Ok(Some(hlo));
            }
        }
        Ok(None)
    }
}

/// What a communicating instruction moves, as the records say it.
fn comm_of(inst: &Instruction<'_>) -> Result<Option<Comm>> {
    Ok(inst.collective()?.map(|c| Comm {
        collective: c.kind.as_str().to_string(),
        group_size: c.group_size as u32,
        message_bytes: c.message_bytes,
    }))
}

/// Aligns device clocks across profiles as nsys-jax's `align_profiler_data_timestamps`
/// ([`Alignment`]), shifting every execution's start. Returns the corrections, or `None`
/// where alignment does not apply.
pub fn align_clocks(all: &mut Executions) -> Option<Corrections> {
    let mut alignment = Alignment::default();
    alignment.add(&all.thunks);
    let corrections = alignment.corrections()?;
    let shift = |device: u32| corrections.get(&device).map_or(0, |c| c.round() as i64);
    for m in &mut all.modules {
        m.start_ns -= shift(m.device);
    }
    for t in &mut all.thunks {
        t.start_ns -= shift(t.device);
    }
    Some(corrections)
}
