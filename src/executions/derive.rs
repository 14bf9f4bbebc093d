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
//! - programs are identified by the HLO fingerprint, devices by the launcher threads;
//! - communication thunks' time is split into the part hidden behind compute thunks of
//!   the same program on the same device and the exposed rest.

use super::devices::{Thread, map_threads};
use crate::error::{Error, Result};
use crate::record::{GpuRange, Module, Thunk};
use crate::source::devices::Launchers;
use crate::source::xla_names::{is_module, is_thunk, module, thunk_op};
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
/// numbered per process ([`super::devices`]).
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
    // Parent after dropping NCCL ranges.
    let parent_of = |i: usize| -> Option<usize> {
        let mut p = ranges[i].parent.and_then(|p| by_id.get(&p).copied());
        while let Some(pi) = p {
            if !is_nccl(&ranges[pi].name) {
                break;
            }
            p = ranges[pi].parent.and_then(|q| by_id.get(&q).copied());
        }
        p
    };
    let first_module_start = ranges
        .iter()
        .filter(|r| is_module(&r.name))
        .map(|r| r.start_ns)
        .min();
    // Thunk → module, keeping only the deepest thunks.
    let mut has_child_thunk: HashSet<usize> = HashSet::new();
    let mut thunk_module: Vec<(usize, usize)> = Vec::new();
    let (mut early, mut orphans) = (0usize, 0usize);
    for &i in &order {
        let r = &ranges[i];
        if !is_thunk(&r.name) || is_nccl(&r.name) {
            continue;
        }
        if first_module_start.is_none_or(|first| r.start_ns < first) {
            early += 1;
            continue;
        }
        let mut p = parent_of(i);
        let mut module = None;
        while let Some(pi) = p {
            if is_module(&ranges[pi].name) {
                module = Some(pi);
                break;
            }
            if is_thunk(&ranges[pi].name) {
                has_child_thunk.insert(pi);
            }
            p = parent_of(pi);
        }
        match module {
            Some(m) => thunk_module.push((i, m)),
            None => orphans += 1,
        }
    }
    thunk_module.retain(|(t, _)| !has_child_thunk.contains(t));
    if early > 0 {
        out.notes.push(format!(
            "ignored {early} thunks that start before the first module"
        ));
    }
    if orphans > 0 {
        out.notes.push(format!(
            "ignored {orphans} thunks outside any XlaModule range"
        ));
    }
    // Modules with thunks, in range order.
    let mut modules: Vec<usize> = thunk_module.iter().map(|&(_, m)| m).collect();
    modules.sort_by_key(|&m| ranges[m].id);
    modules.dedup();
    drop_cut_short(ranges, &mut modules, &mut out.notes);
    let kept: HashSet<usize> = modules.iter().copied().collect();
    thunk_module.retain(|(_, m)| kept.contains(m));

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
    // Devices of the threads that ran each program (the threads of its modules with
    // thunks).
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
            thunks: thunk_count[&m],
            warmup: false,
        });
        *n += 1;
    }
    // Thunk executions.
    let mut thunk_exec: HashMap<(usize, String), u32> = HashMap::new();
    let mut comm_cache: HashMap<(String, String), Option<Comm>> = HashMap::new();
    let mut thunks: Vec<(usize, Thunk)> = Vec::with_capacity(thunk_module.len());
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
        thunks.push((
            mi,
            Thunk {
                profile: profile.clone(),
                program: module.program.clone(),
                program_id: module.program_id,
                module: module.name.clone(),
                execution: module.execution,
                device: module.device,
                name,
                thunk_execution: *n,
                start_ns: r.start_ns,
                dur_ns: r.dur_ns,
                hidden_ns: 0,
                comm: comm.is_some(),
                warmup: false,
                collective: comm.as_ref().map(|c| c.collective.clone()),
                group_size: comm.as_ref().map(|c| c.group_size),
                message_bytes: comm.as_ref().map(|c| c.message_bytes),
            },
        ));
        *n += 1;
    }
    thunks.sort_by_key(|(mi, t)| (*mi, t.start_ns));
    out.thunks = thunks.into_iter().map(|(_, t)| t).collect();
    split_hidden(&mut out.thunks);
    Ok(out)
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
