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
use crate::derived::gpu_time::{
    GPU_ACTIVE, GpuTime, IDLE_BETWEEN, IDLE_INSIDE, Selection, UNKNOWN,
};
use crate::error::Result;
use crate::hlo::thunk_info::ThunkInfo;
use crate::output::notes::Notes;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

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
    /// The programs folded (`--program`, `--exclude-program`).
    pub programs: crate::derived::programs::ProgramFilter,
}

/// The stacks a thunk's time is shared among, as the notebook's preference lists.
fn locations(mode: GpuMode, info: Option<&ThunkInfo>) -> Vec<Vec<&str>> {
    // The frames are borrowed from the infos (they were Strings allocated per frame of
    // every thunk: 2 % of `--by source`).
    let unknown = || vec![vec![GPU_ACTIVE, UNKNOWN]];
    let Some(info) = info else {
        return unknown();
    };
    let mut first: Vec<Vec<&str>> = Vec::new();
    let mut second: Vec<Vec<&str>> = Vec::new();
    for (op_name, frames) in info.insts() {
        match mode {
            GpuMode::Source => {
                if !frames.is_empty() {
                    let mut s = Vec::with_capacity(frames.len() + 2);
                    s.push(GPU_ACTIVE);
                    s.extend(frames.iter().map(|f| &**f));
                    if !op_name.is_empty() {
                        s.push(op_name);
                    }
                    first.push(s);
                }
                if !op_name.is_empty() {
                    second.push(vec![GPU_ACTIVE, UNKNOWN, op_name]);
                }
            }
            GpuMode::OpName if !op_name.is_empty() => {
                let mut s = vec![GPU_ACTIVE];
                s.extend(op_name.split('/'));
                first.push(s);
            }
            _ => {}
        }
    }
    if mode == GpuMode::Opcode {
        return vec![vec![GPU_ACTIVE, info.opcode()]];
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

/// Folds the GPU time of `acc` by `options.mode`; `hlo` are the dump sources (archives
/// among the inputs and `--hlo`).
pub fn fold(
    time: &GpuTime,
    options: &GpuOptions,
    hlo: &[PathBuf],
    notes: &Notes,
) -> Result<Folded> {
    notes.progress().phase("folding");
    let selection = time.select(
        options.include_warmup,
        options.top_modules,
        &options.programs,
        notes,
    )?;
    let mut folded = Folded::default();
    let module_frame = |program: &str| format!("{} ({program})", selection.module_name(program));
    for ((program, name, device), ns) in selection.thunks() {
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
        ThunkInfo::of("fusion", insts)
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
}
