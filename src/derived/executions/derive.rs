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
//!
//! What the 2026 layout needs beyond nsys-jax (ranges outside module ranges given to
//! module executions, NCCL-only communication named from the schedule) is in
//! `layout2026.rs`.

pub use super::building::{CollectiveSchedule, Comm, Derived, ProgramInfo};
use super::building::{Programs, ThunkRecords};
use super::layout2026::{Spans, attribute_nccl, attribute_thunks, name_nccl};
use super::thread_devices::{Thread, map_threads};
use crate::error::{Error, Result};
use crate::records::{GpuRange, Module, Reconstructed, Thunk};
use crate::source::devices::Launchers;
use crate::source::xla_names::{is_module, is_thunk, module, thunk_op};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

fn is_nccl(name: &str) -> bool {
    // The recipe form without domains names NCCL ranges `nccl…`.
    name.starts_with("NCCL:") || name.starts_with("nccl")
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
    let by_id = index_by_id(ranges, place)?;
    check_forest(ranges, &by_id, place)?;
    let Tree {
        mut thunk_module,
        parentless,
        nccl,
        early,
    } = Tree::of(ranges, &order, &by_id);
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

    let program = programs(ranges, &modules, info)?;
    // Thunks and NCCL ranges outside every module range: to the module execution of
    // their thread (else of their process) whose span holds them.
    let spans = Spans::new(ranges, &modules);
    let attributed = attribute_thunks(
        ranges,
        &spans,
        &program,
        &parentless,
        info,
        &mut thunk_module,
        &mut out.notes,
    )?;
    let nccl_module = attribute_nccl(ranges, &spans, &nccl, &mut out.notes)?;

    let device_of = devices_of_threads(
        ranges,
        &modules,
        &program,
        launchers,
        first_process,
        place,
        &mut out,
    )?;
    let device = |i: usize| device_of.get(&(ranges[i].pid, ranges[i].tid)).copied();
    let unmapped = modules.iter().filter(|&&m| device(m).is_none()).count();
    if unmapped > 0 {
        out.notes.push(format!(
            "ignored {unmapped} module executions on threads with no known device"
        ));
    }
    let module_index = module_records(
        profile,
        ranges,
        &modules,
        &program,
        &device,
        &thunk_module,
        &mut out.modules,
    );
    let mut thunks = thunk_records(
        ranges,
        &thunk_module,
        &module_index,
        &out.modules,
        &attributed,
        info,
    )?;
    name_nccl(
        ranges,
        &nccl_module,
        &module_index,
        &mut thunks,
        info,
        &mut out,
    )?;
    thunks
        .list
        .sort_by_key(|(mi, id, t)| (*mi, t.start_ns, *id));
    out.thunks = thunks.list.into_iter().map(|(_, _, t)| t).collect();
    split_hidden(&mut out.thunks);
    Ok(out)
}

/// Each range's row by range id. Ids must be unique: a repeated id makes parents
/// ambiguous.
fn index_by_id(ranges: &[GpuRange], place: &str) -> Result<HashMap<u64, usize>> {
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
    Ok(by_id)
}

/// Parents must form a forest: a range that is its own ancestor would make every
/// walk up from it endless. Each range is walked up once (state 1 on the path, 2 done).
fn check_forest(ranges: &[GpuRange], by_id: &HashMap<u64, usize>, place: &str) -> Result<()> {
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
    Ok(())
}

/// The thunk and NCCL ranges of a profile placed in its range tree.
struct Tree {
    /// (thunk, module) for each deepest thunk with a module range above it.
    thunk_module: Vec<(usize, usize)>,
    /// Deepest thunks with no module range above them (XLA since 2026).
    parentless: Vec<usize>,
    /// NCCL ranges outside every thunk (the outermost of nested ones), with their module.
    nccl: Vec<(usize, Option<usize>)>,
    /// Thunks that start before the first module.
    early: usize,
}

impl Tree {
    /// Places the thunk and NCCL ranges of `ranges` (visited in `order`), `by_id` giving
    /// each range's row by id.
    fn of(ranges: &[GpuRange], order: &[usize], by_id: &HashMap<u64, usize>) -> Tree {
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
        // NCCL ranges outside every thunk (the outermost of nested ones), with their
        // module.
        let mut nccl: Vec<(usize, Option<usize>)> = Vec::new();
        let mut nccl_over_thunk: HashSet<usize> = HashSet::new();
        let mut early = 0usize;
        let raw_parent = |i: usize| ranges[i].parent.and_then(|p| by_id.get(&p).copied());
        for &i in order {
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
        Tree {
            thunk_module,
            parentless,
            nccl,
            early,
        }
    }
}

/// Program identity of each module range of `modules`.
fn programs(
    ranges: &[GpuRange],
    modules: &[usize],
    info: &mut dyn ProgramInfo,
) -> Result<Programs> {
    let mut program = Programs::new();
    for &m in modules {
        let name = &ranges[m].name;
        let (short, id) = match module(name) {
            Some((short, id)) => (short.to_string(), id),
            None => (name.clone(), None),
        };
        let key = info.program_key(id, &short)?;
        program.insert(m, (key, id, short));
    }
    Ok(program)
}

/// Devices of the threads that ran each program; what was assumed and the devices per
/// process go to `out`.
fn devices_of_threads(
    ranges: &[GpuRange],
    modules: &[usize],
    program: &Programs,
    launchers: &Launchers,
    first_process: &mut dyn FnMut() -> Result<u32>,
    place: &str,
    out: &mut Derived,
) -> Result<HashMap<Thread, u32>> {
    let mut threads_by_program: BTreeMap<&str, BTreeSet<Thread>> = BTreeMap::new();
    for &m in modules {
        threads_by_program
            .entry(program[&m].0.as_str())
            .or_default()
            .insert((ranges[m].pid, ranges[m].tid));
    }
    let mapping = map_threads(launchers, &threads_by_program, first_process, place)?;
    out.once.extend(mapping.note);
    out.per_process = mapping.per_process;
    Ok(mapping.device_of)
}

/// The module executions of `modules` on a known device (`device` of a module range),
/// added to `records`, numbered per (device, program) in range order. Returns each
/// module range's index in `records`.
fn module_records(
    profile: &Arc<str>,
    ranges: &[GpuRange],
    modules: &[usize],
    program: &Programs,
    device: &dyn Fn(usize) -> Option<u32>,
    thunk_module: &[(usize, usize)],
    records: &mut Vec<Module>,
) -> HashMap<usize, usize> {
    // Executions per (device, program), in range order.
    let mut counter: HashMap<(u32, String), u32> = HashMap::new();
    let mut module_index: HashMap<usize, usize> = HashMap::new();
    let mut thunk_count: HashMap<usize, u32> = HashMap::new();
    for &(_, m) in thunk_module {
        *thunk_count.entry(m).or_default() += 1;
    }
    for &m in modules {
        let Some(dev) = device(m) else { continue };
        let (key, id, short) = &program[&m];
        let n = counter.entry((dev, key.clone())).or_default();
        let r = &ranges[m];
        module_index.insert(m, records.len());
        records.push(Module {
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
            autotuning: crate::records::is_autotuning(key),
        });
        *n += 1;
    }
    module_index
}

/// The thunk executions of `thunk_module` whose module execution is in `modules`
/// (`module_index`), with what each communicates; those in `attributed` were given to
/// their module by time.
fn thunk_records(
    ranges: &[GpuRange],
    thunk_module: &[(usize, usize)],
    module_index: &HashMap<usize, usize>,
    modules: &[Module],
    attributed: &HashSet<usize>,
    info: &mut dyn ProgramInfo,
) -> Result<ThunkRecords> {
    let mut comm_cache: HashMap<(String, String), Option<Comm>> = HashMap::new();
    let mut thunks = ThunkRecords::with_capacity(thunk_module.len());
    for &(t, m) in thunk_module {
        let Some(&mi) = module_index.get(&m) else {
            continue;
        };
        let module = &modules[mi];
        let r = &ranges[t];
        let name = thunk_op(&r.name).unwrap_or(&r.name).to_string();
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
        thunks.push(mi, module, name, r, comm.as_ref(), how);
    }
    Ok(thunks)
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
