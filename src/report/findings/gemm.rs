//! `gemm-efficiency`: the main module's GEMM thunks against the GPU's peak.

use super::{Finding, Findings, Thresholds, pct};
use crate::analysis::gemm::Gemm;
use crate::analysis::step::Step;
use crate::analysis::thunks;
use serde_json::json;
use std::collections::BTreeMap;

/// Dense tensor-core peaks, TFLOP/s, by GPU model (as the driver names it) and the GEMM's
/// input type, from NVIDIA's data sheets (A100: 312 for 16-bit, 156 TF32, 624 int8; H100
/// SXM and H200: 989 for 16-bit, 1,979 FP8 and int8, 495 TF32; B200: 2,250 for 16-bit, 4,500
/// FP8; V100 SXM: 125 for 16-bit). f32 GEMMs are judged against TF32, which XLA uses for
/// them by default on these GPUs. First model match wins.
pub const GEMM_PEAKS: [(&str, &[(&str, f64)]); 4] = [
    (
        "A100",
        &[
            ("bf16", 312.0),
            ("f16", 312.0),
            ("f32", 156.0),
            ("s8", 624.0),
        ],
    ),
    ("H100 80GB HBM3", HOPPER),
    ("H200", HOPPER),
    (
        "B200",
        &[
            ("bf16", 2250.0),
            ("f16", 2250.0),
            ("f8e4m3fn", 4500.0),
            ("f8e5m2", 4500.0),
        ],
    ),
];

/// H100 SXM's and H200's dense peaks (the same tensor cores and clocks).
const HOPPER: &[(&str, f64)] = &[
    ("bf16", 989.4),
    ("f16", 989.4),
    ("f32", 494.7),
    ("f8e4m3fn", 1978.9),
    ("f8e5m2", 1978.9),
    ("s8", 1978.9),
];

/// The peak of the slowest GPU model of `gpus` for `dtype`, TFLOP/s.
fn peak(gpus: &BTreeMap<String, Option<u64>>, dtype: &str) -> Option<f64> {
    let mut least: Option<f64> = None;
    for name in gpus.keys() {
        let p = GEMM_PEAKS
            .iter()
            .find(|(model, _)| name.contains(model))?
            .1
            .iter()
            .find(|(t, _)| *t == dtype)?
            .1;
        least = Some(least.map_or(p, |l| l.min(p)));
    }
    least
}

/// `gemm-efficiency`: the main module's cuBLAS GEMM thunks (FLOPs from the HLO shapes,
/// `crate::analysis::gemm`) that take at least [`Thresholds::gemm_step_pct`] of the step
/// and reach under [`Thresholds::gemm_pct`] of the dtype's peak (mean time per execution).
/// The saving bounds what running them at the peak would save: their time − FLOPs / peak,
/// per main-module execution.
pub(super) fn gemm_efficiency(
    t: &Thresholds,
    step: &Step,
    thunk_time: &thunks::ThunkTime,
    gemms: &BTreeMap<String, BTreeMap<String, Gemm>>,
    gpus: &BTreeMap<String, Option<u64>>,
    out: &mut Findings,
) {
    const RULE: &str = "gemm-efficiency";
    if gemms.is_empty() {
        out.undecided(
            RULE,
            "no cuBLAS GEMM in the after-optimizations HLO dumps read (archives hold them, \
             --hlo gives them; dot fusions are not judged yet)",
        );
        return;
    }
    if gpus.is_empty() {
        out.undecided(
            RULE,
            "the input does not say which GPU it ran on (nsys's TARGET_INFO_GPU)",
        );
        return;
    }
    let rows = match super::thunk_view(thunk_time, thunks::View::Top, 0.0, |r| r.top_rows()) {
        Ok(rows) => rows,
        Err(why) => {
            out.undecided(RULE, &why);
            return;
        }
    };
    let executions = step.executions();
    let per_step = |ns: f64| ns / executions.max(1) as f64;
    // (row, gemm, TFLOP/s reached, peak, per-step time).
    let mut judged = Vec::new();
    let mut unknown_peak = None;
    for row in rows.iter().filter(|r| r.module == step.module) {
        let Some(g) = gemms.get(&row.program).and_then(|p| p.get(&row.thunk)) else {
            continue;
        };
        let time = per_step(row.total_ns as f64);
        if pct(time.round() as i64, step.figures.step_ns) < t.gemm_step_pct || row.mean_ns <= 0.0 {
            continue;
        }
        let Some(peak) = peak(gpus, &g.dtype) else {
            unknown_peak = Some(g.dtype.clone());
            continue;
        };
        let reached = g.flops / row.mean_ns / 1000.0;
        judged.push((row, g, reached, peak, time));
    }
    if judged.is_empty() {
        match unknown_peak {
            Some(dtype) => out.undecided(
                RULE,
                &format!(
                    "no peak known for {dtype} GEMMs on {}",
                    gpus.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            ),
            None => out.pass(
                RULE,
                format!(
                    "no GEMM of {} takes {} % of the step",
                    step.module, t.gemm_step_pct
                ),
            ),
        }
        return;
    }
    let slow: Vec<_> = judged
        .iter()
        .filter(|j| j.2 < j.3 * t.gemm_pct / 100.0)
        .collect();
    let saving: f64 = slow
        .iter()
        .map(|(row, g, _, peak, time)| {
            let at_peak = per_step(row.executions as f64 * g.flops / (peak * 1000.0));
            (time - at_peak).max(0.0)
        })
        .sum();
    let saving = saving.round() as i64;
    let share = pct(saving, step.figures.step_ns);
    let best = judged
        .iter()
        .map(|j| 100.0 * j.2 / j.3)
        .fold(f64::INFINITY, f64::min);
    if slow.is_empty() {
        out.pass(
            RULE,
            format!(
                "{} GEMMs of {} take {} % of the step or more; the least efficient reaches \
                 {best:.0} % of its peak (fires under {} %)",
                judged.len(),
                step.module,
                t.gemm_step_pct,
                t.gemm_pct
            ),
        );
        return;
    }
    let (row, g, reached, peak, _) = slow[0];
    out.findings.push(Finding {
        rule: RULE,
        severity: super::severity(t, share),
        title: format!(
            "{} GEMMs of {} run under {} % of the GPU's peak; {} ({}) reaches {reached:.0} of \
             {peak} TFLOP/s for {} ({:.0} %)",
            slow.len(),
            step.module,
            t.gemm_pct,
            row.thunk,
            row.op_name.as_deref().unwrap_or(""),
            g.dtype,
            100.0 * reached / peak
        ),
        program: Some(row.program.clone()),
        key: Some(row.thunk.clone()),
        device: None,
        saving_ns: saving,
        share_pct: share,
        evidence: json!({
            "gemms": slow.iter().map(|(row, g, reached, peak, time)| json!({
                "thunk": row.thunk, "dtype": g.dtype, "flops": g.flops,
                "mean_ns": row.mean_ns, "tflops": reached, "peak_tflops": peak,
                "per_step_ns": time,
            })).collect::<Vec<_>>(),
            "step_ns": step.figures.step_ns, "threshold_peak_pct": t.gemm_pct,
            "threshold_step_pct": t.gemm_step_pct,
        }),
        advice: "Small or oddly shaped GEMMs cannot fill the GPU: pad dimensions to multiples \
                 of 64 (at least 8/16), batch them, use bf16 or fp8 inputs, and check the \
                 layout XLA chose (njx-thunks shows their op_names, njx-flamefold where they \
                 come from)"
            .to_string(),
        command: format!("njx-thunks --program {} INPUTS", step.module),
    });
}
