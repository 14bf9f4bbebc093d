//! `memory`: the largest program's allocations against the device's memory.

use super::{Finding, Findings, Thresholds, pct};
use crate::output::numbers::mib;
use crate::report::whole::Heap;
use serde_json::json;
use std::collections::BTreeMap;

/// `memory`: the program whose buffer assignment allocates the most (parameters,
/// outputs, temporaries and constants: njx-heap's `total`), against the least memory of
/// the GPUs the profiles recorded (nsys's `TARGET_INFO_GPU.totalMemory`); it fires from
/// [`Thresholds::memory_pct`] of it: little headroom, where XLA rematerialises (recomputes)
/// to fit and a larger batch will not. Memory is not step time: its saving is 0. Where
/// the device's memory is unknown, the temporaries' share of the program is said.
pub(super) fn memory(
    t: &Thresholds,
    heaps: &BTreeMap<String, Heap>,
    gpus: &BTreeMap<String, Option<u64>>,
    out: &mut Findings,
) {
    const RULE: &str = "memory";
    let largest = heaps.values().flat_map(|h| h.peaks.iter()).max_by(|a, b| {
        a.total_bytes
            .cmp(&b.total_bytes)
            .then(b.program.cmp(&a.program))
    });
    let Some(p) = largest else {
        out.undecided(
            RULE,
            "no buffer assignment of a program that ran (in the after-optimizations HLO \
             dumps, which archives hold and --hlo gives)",
        );
        return;
    };
    let device = gpus
        .iter()
        .filter_map(|(name, m)| Some((name, (*m)?)))
        .min_by_key(|(_, m)| *m);
    let Some((gpu, memory)) = device else {
        out.undecided(
            RULE,
            &format!(
                "the device's memory is not recorded (nsys's TARGET_INFO_GPU); the largest \
                 program, {}, allocates {}, {:.0} % of it temporaries",
                p.program,
                mib(p.total_bytes),
                pct(p.temp_bytes, p.total_bytes)
            ),
        );
        return;
    };
    let share = pct(p.total_bytes, i64::try_from(memory).unwrap_or(i64::MAX));
    if share < t.memory_pct {
        out.pass(
            RULE,
            format!(
                "the largest program, {}, allocates {} of the {} of {gpu}, {share:.0} % (fires \
                 from {} %)",
                p.program,
                mib(p.total_bytes),
                mib(memory as i64),
                t.memory_pct
            ),
        );
        return;
    }
    out.findings.push(Finding {
        rule: RULE,
        severity: if share >= 100.0 { "high" } else { "moderate" },
        title: format!(
            "{} allocates {} of the {} of {gpu} ({share:.0} %), {} of it temporaries: little \
             headroom",
            p.program,
            mib(p.total_bytes),
            mib(memory as i64),
            mib(p.temp_bytes)
        ),
        program: Some(p.program.clone()),
        key: Some(p.program.clone()),
        device: None,
        saving_ns: 0,
        share_pct: 0.0,
        evidence: json!({
            "of": "memory", "total_bytes": p.total_bytes, "temp_bytes": p.temp_bytes,
            "parameter_bytes": p.parameter_bytes, "output_bytes": p.output_bytes,
            "peak_bytes": p.peak_bytes, "peak_at": p.peak_at, "device_memory_bytes": memory,
            "gpu": gpu, "memory_pct": share, "threshold_pct": t.memory_pct,
        }),
        advice: "See what is live at the peak with the command (its largest buffers); shard \
                 more (parameters, optimizer state), rematerialise on purpose \
                 (jax.checkpoint with a policy) rather than leaving XLA to, offload to host \
                 memory, or lower the batch; XLA_PYTHON_CLIENT_MEM_FRACTION bounds what JAX \
                 preallocates"
            .to_string(),
        command: format!("njx-heap --view buffers --program {} INPUTS", p.program),
    });
}
