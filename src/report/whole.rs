//! [`Whole`]: every aggregate the report is made of, filled from one reading of each input
//! path, and mergeable as a partial result (`njx-report --partial`).

use crate::analysis::compile::Total;
use crate::analysis::{collectives, heap, modules, step, thunks};
use crate::derived::executions::{Executions, Phase, Warmup, WithoutXla};
use crate::derived::partial;
use crate::error::Result;
use crate::output::notes::Notes;
use crate::records::{Module, Thunk};
use crate::source::records::RecordStream;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

/// The kind of [`Whole`]'s partial results.
pub const PARTIAL: &str = "report";

/// What was read, for the report's header.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Read {
    /// Profiles (one per process of an archive, one per export).
    pub profiles: BTreeSet<String>,
    /// Devices that ran modules or thunks.
    pub devices: BTreeSet<u32>,
    /// Module executions read (every phase).
    pub module_executions: u64,
    /// Thunk executions read (every phase).
    pub thunk_executions: u64,
    /// Input paths read as profiles, and how many of them held XLA module ranges.
    pub profile_paths: u64,
    /// Of those, how many held XLA module ranges.
    pub xla_paths: u64,
    /// Record streams read (module or thunk records).
    pub record_streams: u64,
}

impl Read {
    fn merge(&mut self, o: Read) {
        self.profiles.extend(o.profiles);
        self.devices.extend(o.devices);
        self.module_executions = self.module_executions.saturating_add(o.module_executions);
        self.thunk_executions = self.thunk_executions.saturating_add(o.thunk_executions);
        self.profile_paths += o.profile_paths;
        self.xla_paths += o.xla_paths;
        self.record_streams += o.record_streams;
    }

    fn module(&mut self, m: &Module) {
        self.devices.insert(m.device);
        self.module_executions += 1;
    }

    fn thunk(&mut self, t: &Thunk) {
        self.devices.insert(t.device);
        self.thunk_executions += 1;
    }
}

/// Every aggregate of the report: the module summary's, the collectives report's, the
/// thunk views' (with the flame graphs' GPU time), the compilation totals, and what was
/// read. Each is the aggregate its own tool builds (so every number is the tool's), all
/// filled from the same executions of one reading of each input path.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Whole {
    /// The ranks read into it: carried beside its data in partial results.
    #[serde(skip)]
    pub(crate) seen: crate::derived::ranks::Seen,

    pub(super) modules: modules::Partial,
    pub(super) collectives: collectives::Partial,
    pub(super) thunks: thunks::ThunkTime,
    /// Kept by name with every pass ([`Total::of`]).
    pub(super) compile: Total,
    pub(super) read: Read,
    /// Every module execution's span and thunk time per device: the step.
    #[serde(default)]
    pub(super) steps: step::Executed,
    /// The heap of each program that ran, by program key (its fingerprint): that of the
    /// dump whose place sorts first among those of the input paths that ran it, so that
    /// any grouping of partial results keeps the same one.
    #[serde(default)]
    pub(super) heaps: BTreeMap<String, Heap>,
    /// When each module was compiled and first ran, and each profile's span.
    #[serde(default)]
    pub(super) compilations: crate::analysis::compile::Compilations,
    /// The GEMMs of each program that ran, by program key then instruction (from the same
    /// dumps as its heap).
    #[serde(default)]
    pub(super) gemms: BTreeMap<String, BTreeMap<String, crate::analysis::gemm::Gemm>>,
    /// The GPU models the profiles recorded (`TARGET_INFO_GPU`), with the least memory
    /// recorded for each, bytes.
    #[serde(default)]
    pub(super) gpus: BTreeMap<String, Option<u64>>,
    /// Why a program's heap could not be made (its dump and what is wrong), said once.
    #[serde(default)]
    pub(super) heap_problems: BTreeSet<String>,
    /// Program key → the place of the dump that took its heap (the first in place order so
    /// far), shared by the input paths read at once, so that a heap is made about once,
    /// not once per rank.
    #[serde(skip)]
    claims: Option<Arc<Mutex<HashMap<String, String>>>>,
    /// What the page's wait and lateness pictures need, where asked for: clocks are
    /// aligned once every profile is read, so these are kept until then. Not in partial
    /// results (the clocks of different partials cannot be compared).
    #[serde(skip)]
    pub(super) clocks: Option<Clocks>,
}

/// The thunk executions the wait distributions and lateness are made of, kept as read
/// (clocks not aligned, warm-up undecided): every communication thunk execution, and the
/// first thunk execution of each module execution on each device (where its module
/// starts). Their number follows the collective instances × devices, as the pictures'
/// input does; each is kept in 32 bytes (its device and clock, and the number of what it
/// shares with the other devices' executions of its instance, kept once: [`Parts`]), not
/// as a whole record (some 300 bytes with its strings).
#[derive(Debug, Default, Clone)]
pub struct Clocks {
    /// What the executions kept share, each once.
    parts: Parts,
    /// The executions kept, in input order.
    kept: Vec<Kept>,
    /// Whether only profiles were read: records and partial results carry clocks of their
    /// own (or none), which are not aligned with these.
    pub profiles_only: bool,
}

/// What thunk executions of one instance on different devices share: the execution with
/// its device and times zeroed and its profile left out (the pictures use neither), each
/// once, found by the hash of (program, execution, thunk, thunk execution).
#[derive(Debug, Default, Clone)]
struct Parts {
    all: Vec<Thunk>,
    by_instance: HashMap<u64, Vec<u32>>,
}

/// One execution kept: its [`Parts`] number, device and clock.
#[derive(Debug, Clone, Copy)]
struct Kept {
    part: u32,
    device: u32,
    start_ns: i64,
    dur_ns: i64,
    hidden_ns: i64,
}

/// What `t` shares with the other devices' executions of its instance: every field but
/// the profile, the device and the times (listed whole, so that a field added to
/// [`Thunk`] must be placed here).
fn shared_part(t: &Thunk) -> impl PartialEq + '_ {
    let Thunk {
        profile: _,
        device: _,
        start_ns: _,
        dur_ns: _,
        hidden_ns: _,
        program,
        program_id,
        module,
        execution,
        name,
        thunk_execution,
        comm,
        warmup,
        collective,
        group_size,
        message_bytes,
        reconstructed,
        autotuning,
    } = t;
    (
        (
            program,
            program_id,
            module,
            execution,
            name,
            thunk_execution,
        ),
        (
            comm,
            warmup,
            collective,
            group_size,
            message_bytes,
            reconstructed,
            autotuning,
        ),
    )
}

impl Parts {
    /// The number of `t`'s shared part, added where new (the only copy made).
    fn number(&mut self, t: &Thunk) -> u32 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (
            t.program.as_str(),
            t.execution,
            t.name.as_str(),
            t.thunk_execution,
        )
            .hash(&mut h);
        let numbers = self.by_instance.entry(h.finish()).or_default();
        let all = &self.all;
        if let Some(n) = numbers
            .iter()
            .find(|n| shared_part(&all[**n as usize]) == shared_part(t))
        {
            return *n;
        }
        let n = u32::try_from(self.all.len()).expect("fewer than 2^32 collective instances");
        self.all.push(Thunk {
            profile: Arc::from(""),
            device: 0,
            start_ns: 0,
            dur_ns: 0,
            hidden_ns: 0,
            ..t.clone()
        });
        numbers.push(n);
        n
    }
}

impl Clocks {
    fn keep(&mut self, t: &Thunk) {
        self.kept.push(Kept {
            part: self.parts.number(t),
            device: t.device,
            start_ns: t.start_ns,
            dur_ns: t.dur_ns,
            hidden_ns: t.hidden_ns,
        });
    }

    /// The executions kept, in input order (their profile left empty).
    pub fn thunks(&self) -> impl Iterator<Item = Thunk> + '_ {
        self.kept.iter().map(|k| Thunk {
            device: k.device,
            start_ns: k.start_ns,
            dur_ns: k.dur_ns,
            hidden_ns: k.hidden_ns,
            ..self.parts.all[k.part as usize].clone()
        })
    }

    fn add(&mut self, part: &Executions) {
        let mut first: HashMap<(&str, u32, u32), usize> = HashMap::new();
        for (i, t) in part.thunks.iter().enumerate() {
            if t.comm {
                self.keep(t);
            }
            let at = first
                .entry((&t.program, t.execution, t.device))
                .or_insert(i);
            if t.start_ns < part.thunks[*at].start_ns {
                *at = i;
            }
        }
        let mut firsts: Vec<usize> = first.into_values().collect();
        firsts.sort_unstable();
        for i in firsts {
            let t = &part.thunks[i];
            if !t.comm {
                self.keep(t);
            }
        }
    }

    /// Takes in another's executions after this one's, its parts numbered here once.
    fn extend(&mut self, other: Clocks) {
        let numbers: Vec<u32> = other
            .parts
            .all
            .iter()
            .map(|t| self.parts.number(t))
            .collect();
        self.kept.extend(other.kept.into_iter().map(|k| Kept {
            part: numbers[k.part as usize],
            ..k
        }));
    }
}

/// A program's heap: njx-heap's `--view peak` rows and the live total over each trace's
/// events (its `--svg`).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Heap {
    /// The place of the dump it was made from.
    from: String,
    /// Its `--view peak` rows.
    pub peaks: Vec<heap::PeakRecord>,
    /// The live total after each event, per trace.
    pub totals: Vec<Vec<i64>>,
}

/// njx-heap's view of the heaps of `whole`: one per program that ran, the largest peak
/// first (then by program name, id and key).
pub fn program_heaps(whole: &Whole) -> Vec<heap::ProgramHeap> {
    let mut heaps: Vec<(&String, &Heap)> = whole.heaps.iter().collect();
    let order = |h: &Heap| {
        let peak = h
            .peaks
            .iter()
            .filter_map(|p| p.peak_bytes)
            .max()
            .unwrap_or(0);
        let name = h.peaks.first().map(|p| (p.program.clone(), p.program_id));
        (std::cmp::Reverse(peak), name)
    };
    heaps.sort_by(|a, b| order(a.1).cmp(&order(b.1)).then_with(|| a.0.cmp(b.0)));
    heaps
        .into_iter()
        .map(|(_, h)| heap::ProgramHeap {
            peaks: h.peaks.clone(),
            buffers: Vec::new(),
            totals: h.totals.clone(),
        })
        .collect()
}

impl Whole {
    /// Keeps a GPU model and the least memory recorded for it.
    fn add_gpu(&mut self, name: &str, memory: Option<u64>) {
        let m = self.gpus.entry(name.to_string()).or_insert(memory);
        *m = match (*m, memory) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }

    /// The step of the main module ([`step::Executed::step`]) or of `main` (a module name
    /// or program key), or why there is none. A `main` that names no program that ran is
    /// a usage error, listing the modules.
    pub fn step(&self, main: Option<&str>) -> Result<std::result::Result<step::Step, String>> {
        if let Some(m) = main
            && !self.steps.knows(m)
        {
            let modules: Vec<&str> = self.steps.modules().into_iter().collect();
            return Err(crate::error::Error::Usage(format!(
                "--step-program {m}: no program of that name or key ran; the modules: {}",
                modules.join(", ")
            )));
        }
        let warmup = partial::Aggregate::warmup(&self.modules);
        Ok(self.steps.step(warmup, main))
    }

    /// How many programs ran (every phase, autotuning too).
    pub fn programs(&self) -> usize {
        self.modules.summary(true, true).len()
    }

    /// An empty aggregate that takes what the profiles' own dumps say of their thunks as
    /// they are read, and keeps GPU time per thunk for the flame graphs.
    pub fn new() -> Whole {
        Whole {
            thunks: thunks::ThunkTime::with_thunk_time(true),
            ..Whole::default()
        }
    }

    /// [`Whole::new`], sharing with the others made by the same `claims` which input path
    /// makes each program's heap; with `clocks`, keeping what the wait and lateness
    /// pictures need ([`Clocks`]).
    pub fn sharing(claims: &Arc<Mutex<HashMap<String, String>>>, clocks: bool) -> Whole {
        Whole {
            claims: Some(Arc::clone(claims)),
            clocks: clocks.then(|| Clocks {
                profiles_only: true,
                ..Clocks::default()
            }),
            ..Whole::new()
        }
    }

    /// The heaps of the programs whose dumps `part` read: each made unless a dump that sorts
    /// before its own claimed it (the dump that sorts first always makes its heap, and its
    /// heap is the one kept when the aggregates merge, in any order).
    fn add_heaps(&mut self, part: &Executions, notes: &Notes) -> Result<()> {
        for hlo in &part.dumps {
            let key = hlo
                .fingerprint()
                .map_or_else(|| format!("{} ({})", hlo.name(), hlo.id()), str::to_string);
            if let Some(claims) = &self.claims {
                let mut claims = claims.lock().unwrap_or_else(|e| e.into_inner());
                let place = hlo.place();
                let first = claims
                    .entry(key.clone())
                    .or_insert_with(|| place.to_string());
                if first.as_str() < place {
                    continue;
                }
                place.clone_into(first);
            }
            // What cannot be read of a GEMM leaves it unjudged, not the report failed.
            if let Ok(g) = crate::analysis::gemm::gemms(hlo)
                && !g.is_empty()
            {
                self.gemms.insert(key.clone(), g);
            }
            // A dump without a buffer assignment is said too (njx-heap's error, naming it).
            match heap::program_heap(hlo, notes) {
                Ok(h) => {
                    self.heaps.insert(
                        key,
                        Heap {
                            from: hlo.place().to_string(),
                            peaks: h.peaks,
                            totals: h.totals,
                        },
                    );
                }
                // A heap that does not add up is said; the rest of the report stands.
                Err(e) => {
                    self.heap_problems.insert(e.to_string());
                }
            }
        }
        Ok(())
    }
}

impl partial::Aggregate for Whole {
    fn seen(&self) -> &crate::derived::ranks::Seen {
        &self.seen
    }

    fn seen_mut(&mut self) -> &mut crate::derived::ranks::Seen {
        &mut self.seen
    }

    const KIND: &'static str = PARTIAL;
    const TABLE: &'static str = "modules|thunks";

    fn add_records(&mut self, mut s: RecordStream, notes: &Notes) -> Result<()> {
        self.read.record_streams += 1;
        if let Some(c) = &mut self.clocks {
            c.profiles_only = false;
        }
        let place = s.place.clone();
        if s.first_line_has("thunk_execution")? {
            let mut no_time = 0;
            s.read(&mut |t: Thunk| {
                no_time += u64::from(collectives::of_no_time(&t));
                self.read.thunk(&t);
                self.collectives.add_record(&t);
                self.thunks.add_thunk_record(&t);
                self.steps.add_thunk(&t, Phase::of_record(t.warmup));
                Ok(())
            })?;
            collectives::say_no_time(&place, no_time, notes);
        } else {
            s.read(&mut |m: Module| {
                self.read.module(&m);
                self.modules.add_record(&m);
                self.thunks.add_module_record(&m);
                self.steps.add_module(&m, Phase::of_record(m.warmup));
                Ok(())
            })?;
        }
        self.steps.pack();
        self.collectives.fold();
        Ok(())
    }

    fn add_profile(&mut self, part: &Executions, notes: &Notes) -> Result<()> {
        self.read.profile_paths += 1;
        if !part.modules.is_empty() {
            self.read.xla_paths += 1;
        }
        let profiles = part.modules.iter().map(|m| &m.profile);
        self.read.profiles.extend(profiles.map(|p| p.to_string()));
        part.modules.iter().for_each(|m| self.read.module(m));
        part.thunks.iter().for_each(|t| self.read.thunk(t));
        partial::Aggregate::add_profile(&mut self.modules, part, notes)?;
        partial::Aggregate::add_profile(&mut self.collectives, part, notes)?;
        partial::Aggregate::add_profile(&mut self.thunks, part, notes)?;
        let compilations = crate::analysis::compile::compilations_of_ranges(part.ranges.clone())?;
        self.compile.merge(&Total::of(&compilations));
        self.compilations.add(&compilations, part);
        self.steps.add_profile(part);
        for g in &part.gpus {
            self.add_gpu(&g.name, g.total_memory);
        }
        if let Some(c) = &mut self.clocks {
            c.add(part);
        }
        self.add_heaps(part, notes)
    }

    fn merge(&mut self, other: Self, notes: &Notes) -> Result<()> {
        partial::Aggregate::merge(&mut self.modules, other.modules, notes)?;
        partial::Aggregate::merge(&mut self.collectives, other.collectives, notes)?;
        partial::Aggregate::merge(&mut self.thunks, other.thunks, notes)?;
        self.compile.merge(&other.compile);
        self.compilations.merge(other.compilations);
        self.read.merge(other.read);
        self.steps.merge(other.steps);
        // The heap of each program from the dump that sorts first.
        for (key, h) in other.heaps {
            match self.heaps.get(&key) {
                Some(mine) if mine.from <= h.from => {}
                _ => {
                    self.heaps.insert(key, h);
                }
            }
        }
        self.heap_problems.extend(other.heap_problems);
        for (key, g) in other.gemms {
            self.gemms.entry(key).or_insert(g);
        }
        for (name, memory) in other.gpus {
            self.add_gpu(&name, memory);
        }
        // A partial result (read back) has none: the pictures cannot be drawn then.
        match (&mut self.clocks, other.clocks) {
            (Some(mine), Some(theirs)) => {
                mine.profiles_only &= theirs.profiles_only;
                mine.extend(theirs);
            }
            (Some(mine), None) => mine.profiles_only = false,
            (None, _) => {}
        }
        Ok(())
    }

    fn warmup(&self) -> &Warmup {
        partial::Aggregate::warmup(&self.modules)
    }

    fn wants_dumps(&self) -> bool {
        partial::Aggregate::wants_dumps(&self.thunks)
    }

    fn wants_ranges(&self) -> bool {
        true
    }

    fn without_xla(&self) -> WithoutXla {
        WithoutXla::Skip
    }
}
