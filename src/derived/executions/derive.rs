//! From NVTX ranges projected onto the GPU to module and thunk executions, the frames
//! nsys-jax's `load_profiler_data` builds (`_load_nvtx_gpu_proj_trace_single`,
//! `_classify_comms`, `_calculate_overlap`), re-implemented:
//!
//! - `NCCL:` ranges are dropped and their children re-parented to their parent;
//! - each `Thunk` range is attributed to its nearest `XlaModule` ancestor; a thunk with
//!   thunks below it is replaced by them (only the deepest thunks are kept), and thunks
//!   that start before the first module are edge effects of the capture and ignored;
//! - a module whose last execution had clearly fewer GPU operations than the others
//!   (below mean − std) was cut short by the end of the capture and is dropped;
//!
//! and, for the layout of XLA since 2026 (NVIDIA/JAX-Toolbox PR #2296 lists its changes;
//! nsys-jax 2024 failed on each), beyond what nsys-jax reads:
//!
//! - every `XlaModule` range is a module execution, also one without thunk ranges below
//!   it (command buffers, modules whose communication shows only as NCCL ranges);
//!   nsys-jax kept only modules with thunks, which on profiles of older XLA are all;
//! - a thunk range with no `XlaModule` ancestor (async thunks at the top level) belongs
//!   to the module execution of its thread whose GPU span holds it; where several do, or
//!   where only modules of other threads of its process do, the one whose HLO dump has the
//!   thunk's instruction with the `unique_hlo_op_id` it carries. Such records say
//!   `reconstructed: module`; what no module holds is left out and named in a note;
//! - an NCCL range outside every thunk (communication with no thunk range) belongs to
//!   its module execution the same way, and the n-th of them in an execution (in host
//!   order) is the n-th collective of the program's HLO schedule that has no thunk range
//!   there ([`crate::hlo::CollectiveOrder`]): a thunk record with the collective's name,
//!   kind and size, `reconstructed: nccl`. Where the counts differ or the order is not
//!   known, the NCCL ranges are left out and counted in a note. NCCL ranges inside thunks
//!   are dropped as nsys-jax drops them;
//! - programs are identified by the HLO fingerprint, devices by the launcher threads;
//! - communication thunks' time is split into the part hidden behind compute thunks of
//!   the same program on the same device and the exposed rest.

use super::thread_devices::{Thread, map_threads};
use crate::error::{Error, Result};
use crate::records::{GpuRange, Module, Reconstructed, Thunk};
use crate::source::devices::Launchers;
use crate::source::xla_names::{is_module, is_thunk, module, thunk_op, thunk_unique_id};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// A communication instruction, as the HLO describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comm {
    /// Collective kind (`all-gather`, `all-reduce`, …).
    pub collective: String,
    /// Devices taking part.
    pub group_size: u32,
    /// Message size in bytes, NCCL's conventions.
    pub message_bytes: u64,
}

/// What the HLO dumps tell about programs and instructions.
pub trait ProgramInfo {
    /// The stable key of XLA program `program_id` named `name` (its HLO fingerprint), or
    /// `unknown` when the range carries no program id (autotuning executions).
    fn program_key(&mut self, program_id: Option<u64>, name: &str) -> Result<String>;
    /// The communication `instruction` of program `program_id` (module `module`)
    /// performs, if any.
    fn communication(
        &mut self,
        program_id: u64,
        module: &str,
        instruction: &str,
    ) -> Result<Option<Comm>>;
    /// The unique id of `instruction` in the dump of program `program_id`: `None` where
    /// there is no dump, `Some(None)` where the dump has no such instruction.
    fn instruction_id(
        &mut self,
        program_id: u64,
        module: &str,
        instruction: &str,
    ) -> Result<Option<Option<i64>>>;
    /// The NCCL collectives one execution of program `program_id` runs, in order.
    fn collective_schedule(&mut self, program_id: u64, module: &str) -> Result<CollectiveSchedule>;
}

/// The collectives one execution of a program runs, in order, as the HLO schedule says.
#[derive(Debug, Clone)]
pub enum CollectiveSchedule {
    /// Each NCCL collective's instruction name (the thunk name it would have) and what it
    /// moves, in the order they run.
    Known(Vec<(String, Comm)>),
    /// Why the order is not known (no dump, no schedule, a loop without a trip count…).
    Unknown(String),
}

fn is_nccl(name: &str) -> bool {
    // The recipe form without domains names NCCL ranges `nccl…`.
    name.starts_with("NCCL:") || name.starts_with("nccl")
}

/// Module and thunk executions of one profile, with what was left out and why.
#[derive(Debug, Default)]
pub struct Derived {
    /// Module executions, in range order.
    pub modules: Vec<Module>,
    /// Thunk executions, by module execution then start.
    pub thunks: Vec<Thunk>,
    /// Messages for stderr: ranges left out and why.
    pub notes: Vec<String>,
    /// Messages for stderr said once per run: what was assumed alike for many profiles.
    pub once: Vec<String>,
    /// Devices per process, where devices were numbered per process.
    pub per_process: Option<u32>,
}

/// Builds the module and thunk executions of one profile from its GPU-projected ranges
/// (all of them, any order) and its launcher threads. `place` names the profile in
/// errors; `first_process` gives its first process's index, asked for where devices are
/// numbered per process ([`super::thread_devices`]).
pub fn derive(
    profile: &Arc<str>,
    place: &str,
    ranges: &[GpuRange],
    launchers: &Launchers,
    first_process: &mut dyn FnMut() -> Result<u32>,
    info: &mut dyn ProgramInfo,
) -> Result<Derived> {
    let mut out = Derived::default();
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| ranges[i].id);
    let mut by_id: HashMap<u64, usize> = HashMap::with_capacity(ranges.len());
    for (i, r) in ranges.iter().enumerate() {
        if by_id.insert(r.id, i).is_some() {
            // nsys-jax stops here too, with the same advice.
            return Err(Error::data(
                place,
                format!(
                    "range id {} appears on several rows of the GPU projection, so parents \
                     cannot be told apart (unpatched nsys 2024.5 and 2024.6 repeat ids when \
                     CUDA graphs are traced): profile with \
                     XLA_FLAGS=--xla_gpu_enable_command_buffer= or with an nsys that numbers \
                     ranges uniquely",
                    r.id
                ),
            ));
        }
    }
    // Parents must form a forest: a range that is its own ancestor would make every
    // walk up from it endless. Each range is walked up once (state 1 on the path, 2 done).
    let mut state = vec![0u8; ranges.len()];
    let mut path = Vec::new();
    for start in 0..ranges.len() {
        let mut at = Some(start);
        while let Some(i) = at.filter(|&i| state[i] != 2) {
            if state[i] == 1 {
                return Err(Error::data(
                    place,
                    format!(
                        "range {} is its own ancestor in the GPU projection (a parent cycle)",
                        ranges[i].id
                    ),
                ));
            }
            state[i] = 1;
            path.push(i);
            at = ranges[i].parent.and_then(|p| by_id.get(&p).copied());
        }
        for i in path.drain(..) {
            state[i] = 2;
        }
    }
    let first_module_start = ranges
        .iter()
        .filter(|r| is_module(&r.name))
        .map(|r| r.start_ns)
        .min();
    // Thunk → module, keeping only the deepest thunks. Thunks and NCCL ranges with no
    // module range above them (XLA since 2026) are attributed by time below.
    let mut has_child_thunk: HashSet<usize> = HashSet::new();
    let mut thunk_module: Vec<(usize, usize)> = Vec::new();
    let mut parentless: Vec<usize> = Vec::new();
    // NCCL ranges outside every thunk (the outermost of nested ones), with their module.
    let mut nccl: Vec<(usize, Option<usize>)> = Vec::new();
    let mut nccl_over_thunk: HashSet<usize> = HashSet::new();
    let mut early = 0usize;
    let raw_parent = |i: usize| ranges[i].parent.and_then(|p| by_id.get(&p).copied());
    for &i in &order {
        let r = &ranges[i];
        let nccl_range = is_nccl(&r.name);
        if !nccl_range && !is_thunk(&r.name) {
            continue;
        }
        if first_module_start.is_none_or(|first| r.start_ns < first) {
            early += usize::from(!nccl_range);
            continue;
        }
        if nccl_range && raw_parent(i).is_some_and(|p| is_nccl(&ranges[p].name)) {
            continue;
        }
        let mut p = raw_parent(i);
        let mut module = None;
        let mut in_thunk = false;
        while let Some(pi) = p {
            let name = &ranges[pi].name;
            if is_nccl(name) {
                if !nccl_range {
                    nccl_over_thunk.insert(pi);
                }
            } else if is_module(name) {
                module = Some(pi);
                break;
            } else if is_thunk(name) {
                in_thunk = true;
                if !nccl_range {
                    has_child_thunk.insert(pi);
                }
            }
            p = raw_parent(pi);
        }
        match (nccl_range, module) {
            (true, _) if in_thunk => {}
            (true, m) => nccl.push((i, m)),
            (false, Some(m)) => thunk_module.push((i, m)),
            (false, None) => parentless.push(i),
        }
    }
    thunk_module.retain(|(t, _)| !has_child_thunk.contains(t));
    parentless.retain(|t| !has_child_thunk.contains(t));
    // An NCCL range with thunks below it is no collective's own range.
    nccl.retain(|(n, _)| !nccl_over_thunk.contains(n));
    if early > 0 {
        out.notes.push(format!(
            "ignored {early} thunks that start before the first module"
        ));
    }
    // Every module range is a module execution, with or without thunk ranges below it.
    let mut modules: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&i| is_module(&ranges[i].name))
        .collect();
    drop_cut_short(ranges, &mut modules, &mut out.notes);

    // Program identity.
    let mut program: HashMap<usize, (String, Option<u64>, String)> = HashMap::new();
    for &m in &modules {
        let name = &ranges[m].name;
        let (short, id) = match module(name) {
            Some((short, id)) => (short.to_string(), id),
            None => (name.clone(), None),
        };
        let key = info.program_key(id, &short)?;
        program.insert(m, (key, id, short));
    }
    // Thunks and NCCL ranges outside every module range: to the module execution of
    // their thread (else of their process) whose span holds them.
    let spans = Spans::new(ranges, &modules);
    let mut attributed: HashSet<usize> = HashSet::new();
    let mut unplaced: Vec<usize> = Vec::new();
    let mut unconfirmed = 0usize;
    for &t in &parentless {
        let id = thunk_unique_id(&ranges[t].name);
        let op = thunk_op(&ranges[t].name).unwrap_or(&ranges[t].name);
        let mut confirmed = |m: usize| -> Result<Option<bool>> {
            let (key, program_id, short) = &program[&m];
            match (program_id, key.as_str()) {
                (Some(pid), k) if k != "unknown" => {
                    Ok(info.instruction_id(*pid, short, op)?.map(|found| {
                        found.is_some_and(|found| id.is_none_or(|id| found as u64 == id))
                    }))
                }
                _ => Ok(None),
            }
        };
        match spans.attribute(&ranges[t], &mut confirmed)? {
            Some((m, sure)) => {
                unconfirmed += usize::from(!sure);
                attributed.insert(t);
                thunk_module.push((t, m));
            }
            None => unplaced.push(t),
        }
    }
    if !attributed.is_empty() {
        out.notes.push(format!(
            "{} thunks had no XlaModule range around them: each given to the module \
             execution of its thread (else of its process) whose span holds it (records: \
             reconstructed = module)",
            attributed.len()
        ));
    }
    if unconfirmed > 0 {
        out.notes.push(format!(
            "{unconfirmed} of the thunks given to a module execution by time are not \
             instructions of that program's HLO dump with the unique id they carry"
        ));
    }
    if !unplaced.is_empty() {
        out.notes.push(format!(
            "left out {} thunks outside any XlaModule range, on their thread or in their \
             process, at their time: {}",
            unplaced.len(),
            names_of(ranges, &unplaced)
        ));
    }
    let mut nccl_module: Vec<(usize, usize)> = Vec::new();
    let mut nccl_unplaced: Vec<usize> = Vec::new();
    for &(n, m) in &nccl {
        match m {
            Some(m) => nccl_module.push((n, m)),
            None => match spans.attribute(&ranges[n], &mut |_| Ok(None))? {
                Some((m, _)) => nccl_module.push((n, m)),
                None => nccl_unplaced.push(n),
            },
        }
    }
    if !nccl_unplaced.is_empty() {
        out.notes.push(format!(
            "left out {} NCCL ranges outside any thunk and any XlaModule range, on their \
             thread or in their process, at their time: {}",
            nccl_unplaced.len(),
            names_of(ranges, &nccl_unplaced)
        ));
    }

    // Devices of the threads that ran each program.
    let mut threads_by_program: BTreeMap<&str, BTreeSet<Thread>> = BTreeMap::new();
    for &m in &modules {
        threads_by_program
            .entry(program[&m].0.as_str())
            .or_default()
            .insert((ranges[m].pid, ranges[m].tid));
    }
    let mapping = map_threads(launchers, &threads_by_program, first_process, place)?;
    out.once.extend(mapping.note);
    out.per_process = mapping.per_process;
    let device_of = mapping.device_of;
    let device = |i: usize| device_of.get(&(ranges[i].pid, ranges[i].tid)).copied();
    let unmapped = modules.iter().filter(|&&m| device(m).is_none()).count();
    if unmapped > 0 {
        out.notes.push(format!(
            "ignored {unmapped} module executions on threads with no known device"
        ));
    }
    // Executions per (device, program), in range order.
    let mut counter: HashMap<(u32, String), u32> = HashMap::new();
    let mut module_index: HashMap<usize, usize> = HashMap::new();
    let mut thunk_count: HashMap<usize, u32> = HashMap::new();
    for &(_, m) in &thunk_module {
        *thunk_count.entry(m).or_default() += 1;
    }
    let mut nccl_by_module: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &(n, m) in &nccl_module {
        nccl_by_module.entry(m).or_default().push(n);
    }
    for &m in &modules {
        let Some(dev) = device(m) else { continue };
        let (key, id, short) = &program[&m];
        let n = counter.entry((dev, key.clone())).or_default();
        let r = &ranges[m];
        module_index.insert(m, out.modules.len());
        out.modules.push(Module {
            profile: profile.clone(),
            program: key.clone(),
            program_id: *id,
            name: short.clone(),
            execution: *n,
            device: dev,
            start_ns: r.start_ns,
            dur_ns: r.dur_ns,
            thunks: thunk_count.get(&m).copied().unwrap_or(0),
            warmup: false,
        });
        *n += 1;
    }
    // Thunk executions.
    let mut thunk_exec: HashMap<(usize, String), u32> = HashMap::new();
    let mut comm_cache: HashMap<(String, String), Option<Comm>> = HashMap::new();
    // (module execution, range id, thunk)
    let mut thunks: Vec<(usize, u64, Thunk)> = Vec::with_capacity(thunk_module.len());
    for &(t, m) in &thunk_module {
        let Some(&mi) = module_index.get(&m) else {
            continue;
        };
        let module = &out.modules[mi];
        let r = &ranges[t];
        let name = thunk_op(&r.name).unwrap_or(&r.name).to_string();
        let n = thunk_exec.entry((mi, name.clone())).or_default();
        let comm = match module.program_id {
            Some(id) if module.program != "unknown" => {
                let key = (module.program.clone(), name.clone());
                match comm_cache.get(&key) {
                    Some(c) => c.clone(),
                    None => {
                        let c = info.communication(id, &module.name, &name)?;
                        comm_cache.insert(key, c.clone());
                        c
                    }
                }
            }
            _ => None,
        };
        let how = attributed.contains(&t).then_some(Reconstructed::Module);
        let thunk = thunk_of(module, name, *n, r, comm.as_ref(), how);
        thunks.push((mi, r.id, thunk));
        *n += 1;
    }
    // Communication seen only as NCCL ranges: the n-th NCCL range of an execution (in
    // host order) is the n-th of the program's collectives (in schedule order) that has
    // no thunk range in that execution.
    let mut orders: HashMap<String, CollectiveSchedule> = HashMap::new();
    let no_dump = CollectiveSchedule::Unknown("there is no HLO dump of the program".into());
    let mut unmatched: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut matched = 0usize;
    // The communication thunk ranges of each execution with NCCL ranges, counted by name
    // (one pass, not one per execution).
    let nccl_executions: HashSet<usize> = nccl_by_module
        .keys()
        .filter_map(|m| module_index.get(m).copied())
        .collect();
    let mut comm_ranges: HashMap<usize, HashMap<String, usize>> = HashMap::new();
    for (mi, _, t) in &thunks {
        if t.comm && nccl_executions.contains(mi) {
            *comm_ranges
                .entry(*mi)
                .or_default()
                .entry(t.name.clone())
                .or_default() += 1;
        }
    }
    for (m, mut ns) in nccl_by_module {
        let Some(&mi) = module_index.get(&m) else {
            continue;
        };
        let module = out.modules[mi].clone();
        let order = match module.program_id {
            Some(id) if module.program != "unknown" => {
                if !orders.contains_key(&module.program) {
                    let o = info.collective_schedule(id, &module.name)?;
                    orders.insert(module.program.clone(), o);
                }
                &orders[&module.program]
            }
            _ => &no_dump,
        };
        let expected: Vec<&(String, Comm)> = match order {
            CollectiveSchedule::Known(all) => {
                // Less those with a thunk range in this execution, once each.
                let mut seen = comm_ranges.remove(&mi).unwrap_or_default();
                all.iter()
                    .filter(|(name, _)| match seen.get_mut(name.as_str()) {
                        Some(k) if *k > 0 => {
                            *k -= 1;
                            false
                        }
                        _ => true,
                    })
                    .collect()
            }
            CollectiveSchedule::Unknown(why) => {
                let e = unmatched
                    .entry(module.name.clone())
                    .or_insert((0, why.clone()));
                e.0 += ns.len();
                continue;
            }
        };
        if expected.len() != ns.len() {
            let e = unmatched.entry(module.name.clone()).or_insert((
                0,
                format!(
                    "an execution has {} NCCL ranges outside thunks where its HLO schedule has \
                     {} collectives without a thunk range",
                    ns.len(),
                    expected.len()
                ),
            ));
            e.0 += ns.len();
            continue;
        }
        ns.sort_by_key(|&n| {
            let r = &ranges[n];
            (r.cpu_start_ns.unwrap_or(r.start_ns), r.start_ns, r.id)
        });
        for (&n, (name, comm)) in ns.iter().zip(expected) {
            let r = &ranges[n];
            let k = thunk_exec.entry((mi, name.clone())).or_default();
            let thunk = thunk_of(
                &module,
                name.clone(),
                *k,
                r,
                Some(comm),
                Some(Reconstructed::Nccl),
            );
            thunks.push((mi, r.id, thunk));
            *k += 1;
            out.modules[mi].thunks += 1;
            matched += 1;
        }
    }
    if matched > 0 {
        out.notes.push(format!(
            "{matched} collectives had no thunk range, only an NCCL range: each matched to \
             the program's collectives in HLO schedule order (records: reconstructed = nccl)"
        ));
    }
    for (module, (n, why)) in unmatched {
        out.notes.push(format!(
            "left out {n} NCCL ranges outside thunks in executions of {module}: they cannot \
             be matched to its collectives, {why}"
        ));
    }
    thunks.sort_by_key(|(mi, id, t)| (*mi, t.start_ns, *id));
    out.thunks = thunks.into_iter().map(|(_, _, t)| t).collect();
    split_hidden(&mut out.thunks);
    Ok(out)
}

/// The execution of thunk `name` (its `n`-th in `module`'s execution) over range `r`.
fn thunk_of(
    module: &Module,
    name: String,
    n: u32,
    r: &GpuRange,
    comm: Option<&Comm>,
    reconstructed: Option<Reconstructed>,
) -> Thunk {
    Thunk {
        profile: module.profile.clone(),
        program: module.program.clone(),
        program_id: module.program_id,
        module: module.name.clone(),
        execution: module.execution,
        device: module.device,
        name,
        thunk_execution: n,
        start_ns: r.start_ns,
        dur_ns: r.dur_ns,
        hidden_ns: 0,
        comm: comm.is_some(),
        warmup: false,
        collective: comm.map(|c| c.collective.clone()),
        group_size: comm.map(|c| c.group_size),
        message_bytes: comm.map(|c| c.message_bytes),
        reconstructed,
    }
}

/// The module ranges of a profile by thread and by process, for finding the module
/// execution whose span holds a range that has no module range above it.
struct Spans {
    by_thread: HashMap<(Option<u64>, u64), Holders>,
    by_process: HashMap<Option<u64>, Holders>,
}

/// Spans sorted by start, with the running maximum of their ends, so that a search for
/// the spans holding a time stops once no earlier span can reach it.
#[derive(Default)]
struct Holders {
    spans: Vec<(i64, i64, usize)>,
    max_end: Vec<i64>,
}

impl Holders {
    fn add(&mut self, start: i64, end: i64, m: usize) {
        self.spans.push((start, end, m));
    }

    fn seal(&mut self) {
        self.spans.sort_unstable();
        let mut m = i64::MIN;
        self.max_end = self
            .spans
            .iter()
            .map(|&(_, e, _)| {
                m = m.max(e);
                m
            })
            .collect();
    }

    /// The modules whose span holds `[start, end]` whole, else those that hold `start`;
    /// the latest-starting (innermost) first.
    fn holding(&self, start: i64, end: i64) -> Vec<usize> {
        let upto = self.spans.partition_point(|&(s, _, _)| s <= start);
        let (mut whole, mut part) = (Vec::new(), Vec::new());
        for j in (0..upto).rev() {
            if self.max_end[j] < start {
                break;
            }
            let (_, e, m) = self.spans[j];
            if e >= end {
                whole.push(m);
            } else if e > start {
                part.push(m);
            }
        }
        if whole.is_empty() { part } else { whole }
    }
}

impl Spans {
    fn new(ranges: &[GpuRange], modules: &[usize]) -> Spans {
        let mut spans = Spans {
            by_thread: HashMap::new(),
            by_process: HashMap::new(),
        };
        for &m in modules {
            let r = &ranges[m];
            let end = r.start_ns.saturating_add(r.dur_ns);
            spans
                .by_thread
                .entry((r.pid, r.tid))
                .or_default()
                .add(r.start_ns, end, m);
            spans
                .by_process
                .entry(r.pid)
                .or_default()
                .add(r.start_ns, end, m);
        }
        spans.by_thread.values_mut().for_each(Holders::seal);
        spans.by_process.values_mut().for_each(Holders::seal);
        spans
    }

    /// The module execution a range outside every module range belongs to, and whether
    /// that is sure: a module of its thread whose span holds it (where several do, the one
    /// whose dump `confirmed` has the instruction, else the innermost), else the one
    /// module of its process that holds it and is confirmed or cannot be asked.
    /// `confirmed(m)`: whether module range `m`'s program has the range's instruction,
    /// `None` where that cannot be told.
    fn attribute(
        &self,
        r: &GpuRange,
        confirmed: &mut dyn FnMut(usize) -> Result<Option<bool>>,
    ) -> Result<Option<(usize, bool)>> {
        let end = r.start_ns.saturating_add(r.dur_ns);
        let on_thread = self
            .by_thread
            .get(&(r.pid, r.tid))
            .map(|h| h.holding(r.start_ns, end))
            .unwrap_or_default();
        if let Some(&first) = on_thread.first() {
            if on_thread.len() > 1 {
                let mut sure = Vec::new();
                for &m in &on_thread {
                    if confirmed(m)? == Some(true) {
                        sure.push(m);
                    }
                }
                if let [m] = sure[..] {
                    return Ok(Some((m, true)));
                }
            }
            return Ok(Some((first, confirmed(first)? != Some(false))));
        }
        let in_process = self
            .by_process
            .get(&r.pid)
            .map(|h| h.holding(r.start_ns, end))
            .unwrap_or_default();
        let mut sure = Vec::new();
        let mut unknown = Vec::new();
        for &m in &in_process {
            match confirmed(m)? {
                Some(true) => sure.push(m),
                None => unknown.push(m),
                Some(false) => {}
            }
        }
        Ok(match (&sure[..], &unknown[..], in_process.len()) {
            ([m], _, _) => Some((*m, true)),
            ([], [m], 1) => Some((*m, true)),
            _ => None,
        })
    }
}

/// The first few distinct names of `ranges[i]` for `i` in `which`, for a note.
fn names_of(ranges: &[GpuRange], which: &[usize]) -> String {
    let names: BTreeSet<&str> = which.iter().map(|&i| ranges[i].name.as_str()).collect();
    let mut text: Vec<String> = names.iter().take(3).map(|n| format!("`{n}`")).collect();
    if names.len() > 3 {
        text.push(format!("and {} other names", names.len() - 3));
    }
    text.join(", ")
}

/// Drops the last execution of a module (by name) when it had fewer GPU operations than
/// the mean less one standard deviation of the earlier ones: the capture ended in it.
fn drop_cut_short(ranges: &[GpuRange], modules: &mut Vec<usize>, notes: &mut Vec<String>) {
    let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for &m in modules.iter() {
        by_name.entry(ranges[m].name.as_str()).or_default().push(m);
    }
    let mut dropped = HashSet::new();
    for (name, ms) in by_name {
        let ops: Option<Vec<f64>> = ms
            .iter()
            .map(|&m| ranges[m].gpu_ops.map(|v| v as f64))
            .collect();
        let Some(ops) = ops else { continue };
        let (last, rest) = ops.split_last().expect("a module has executions");
        if rest.is_empty() {
            continue;
        }
        let mean = rest.iter().sum::<f64>() / rest.len() as f64;
        let std = (rest.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / rest.len() as f64).sqrt();
        if *last < mean - std {
            notes.push(format!(
                "dropped the last execution of {name}: {last} GPU operations against {mean:.1} ± {std:.1} before, cut short by the end of the capture"
            ));
            dropped.insert(*ms.last().expect("non-empty"));
        }
    }
    modules.retain(|m| !dropped.contains(m));
}

/// Splits each communication thunk's time into the part overlapped by compute thunks of
/// the same program on the same device (`hidden_ns`, summed over those thunks) and the
/// exposed rest (`dur_ns`). Thunks must be grouped by module execution.
pub fn split_hidden(thunks: &mut [Thunk]) {
    let mut groups: HashMap<(&str, u32), Vec<usize>> = HashMap::new();
    for (i, t) in thunks.iter().enumerate() {
        groups
            .entry((t.program.as_str(), t.device))
            .or_default()
            .push(i);
    }
    let mut hidden: Vec<(usize, i64)> = Vec::new();
    for (_, mut idx) in groups {
        if !idx.iter().any(|&i| thunks[i].comm) {
            continue;
        }
        idx.sort_by_key(|&i| thunks[i].start_ns);
        // Compute thunks sorted by start, with the running maximum of their ends, so a
        // scan can stop once no earlier compute thunk can reach the communication.
        let compute: Vec<(i64, i64)> = idx
            .iter()
            .filter(|&&i| !thunks[i].comm)
            .map(|&i| (thunks[i].start_ns, thunks[i].start_ns + thunks[i].dur_ns))
            .collect();
        let mut max_end = Vec::with_capacity(compute.len());
        let mut m = i64::MIN;
        for &(_, e) in &compute {
            m = m.max(e);
            max_end.push(m);
        }
        for &i in idx.iter().filter(|&&i| thunks[i].comm) {
            let (s, e) = (thunks[i].start_ns, thunks[i].start_ns + thunks[i].dur_ns);
            // Compute thunks starting before the communication ends.
            let upto = compute.partition_point(|&(cs, _)| cs < e);
            let mut sum = 0;
            for j in (0..upto).rev() {
                if max_end[j] <= s {
                    break;
                }
                let (cs, ce) = compute[j];
                if ce > s {
                    sum += ce.min(e) - cs.max(s);
                }
            }
            hidden.push((i, sum));
        }
    }
    for (i, h) in hidden {
        thunks[i].dur_ns -= h;
        thunks[i].hidden_ns = h;
    }
}

/// Marks initialisation executions (nsys-jax `apply_warmup_heuristics`, the rule of
/// [`super::Warmup`]): the first execution of a program whose compilation was profiled,
/// plus one more when the profiles have communication. When that would leave no
/// steady-state execution at all, nothing is marked (as nsys-jax does, with a warning).
pub fn mark_warmup(
    modules: &mut [Module],
    thunks: &mut [Thunk],
    compiled: &HashSet<String>,
    has_comm: bool,
    notes: &mut Vec<String>,
) {
    let mut warmup = super::Warmup {
        compiled: compiled.iter().cloned().collect(),
        has_comm,
        ..Default::default()
    };
    warmup
        .modules
        .add(modules.iter().map(|m| (m.program.as_str(), m.execution)));
    warmup
        .thunks
        .add(thunks.iter().map(|t| (t.program.as_str(), t.execution)));
    let rule = warmup.rule();
    notes.extend(rule.note());
    let phase = super::Phase::of_profile;
    for m in modules.iter_mut() {
        m.warmup = rule.module_is_warmup(&m.program, phase(m.execution));
    }
    for t in thunks.iter_mut() {
        t.warmup = rule.thunk_is_warmup(&t.program, phase(t.execution));
    }
}
