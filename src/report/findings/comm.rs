//! Rules over collective instances: `small-collectives` and `low-bus-bandwidth`.

use super::{Finding, Findings, Thresholds, ms, pct};
use crate::analysis::collectives::Instance;
use crate::analysis::step::Step;
use crate::output::numbers::mib;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

/// NVLink's peak per direction, GB/s, by the GPU model's name as the driver gives it:
/// NVIDIA's data sheets give the bidirectional figure (V100 SXM2 300 GB/s, A100 SXM 600,
/// H100 SXM and H200 900, H100 NVL 600, B200 and GB200 1.8 TB/s), halved here. First
/// match wins; PCIe cards are left out (their link depends on the slot and bridge).
pub const NVLINK_PEAKS: [(&str, f64); 7] = [
    ("GB200", 900.0),
    ("B200", 900.0),
    ("H200", 450.0),
    ("H100 NVL", 300.0),
    ("H100 80GB HBM3", 450.0),
    ("A100-SXM", 300.0),
    ("V100-SXM", 150.0),
];

/// The per-direction peak of the slowest of `gpus` and where it comes from, or why none.
fn peak(t: &Thresholds, gpus: &BTreeMap<String, Option<u64>>) -> Result<(f64, String), String> {
    if t.peak_gbps > 0.0 {
        return Ok((
            t.peak_gbps,
            "--threshold low-bus-bandwidth.peak-gbps".to_string(),
        ));
    }
    if gpus.is_empty() {
        return Err(
            "the input does not say which GPU it ran on (nsys's TARGET_INFO_GPU); \
                    give the link's peak with --threshold low-bus-bandwidth.peak-gbps=GBPS"
                .to_string(),
        );
    }
    let mut found: Vec<(f64, String)> = Vec::new();
    for name in gpus.keys() {
        match NVLINK_PEAKS.iter().find(|(model, _)| name.contains(model)) {
            Some((model, p)) => found.push((
                *p,
                format!("{name}: NVLink {p} GB/s per direction ({model})"),
            )),
            None => {
                return Err(format!(
                    "no NVLink peak known for {name}; give it with --threshold \
                     low-bus-bandwidth.peak-gbps=GBPS"
                ));
            }
        }
    }
    found.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(found.swap_remove(0))
}

/// A threshold in bytes for people.
fn bytes(b: f64) -> String {
    mib(b as i64)
}

/// Distinct (program, execution) of `instances`: the module executions they ran in.
fn executions(instances: &[&Instance]) -> usize {
    (instances.iter())
        .map(|i| (&i.program, i.execution))
        .collect::<BTreeSet<_>>()
        .len()
}

/// The per-step share of an amount summed over `execs` executions of the main module.
fn per_step(total: i64, execs: usize) -> i64 {
    let n = execs.max(1) as i64;
    (total + n / 2) / n
}

/// `small-collectives`: in the main module, collectives of at most
/// [`Thresholds::small_bytes`] whose bus bandwidth is under
/// [`Thresholds::small_busbw_pct`] of the best that kind reached in the run (any size):
/// latency-bound messages XLA could combine. The saving bounds their exposed time per
/// step (the last device's, which waits for none): combining them removes at most that.
pub(super) fn small_collectives(t: &Thresholds, step: &Step, all: &[Instance], out: &mut Findings) {
    const RULE: &str = "small-collectives";
    let mut best: BTreeMap<&str, f64> = BTreeMap::new();
    for i in all {
        if let (Some(k), Some(b)) = (&i.kind, i.best_busbw_gbps.filter(|b| b.is_finite())) {
            let e = best.entry(k).or_insert(b);
            *e = e.max(b);
        }
    }
    let main: Vec<&Instance> = all
        .iter()
        .filter(|i| i.module == step.module && i.devices > 1)
        .collect();
    if main.is_empty() {
        out.undecided(
            RULE,
            &format!("no collective of {} spans two devices", step.module),
        );
        return;
    }
    let execs = executions(&main);
    let small: Vec<&Instance> = (main.iter().copied())
        .filter(|i| {
            let (Some(k), Some(bytes), Some(b)) = (&i.kind, i.message_bytes, i.best_busbw_gbps)
            else {
                return false;
            };
            let top = best.get(k.as_str()).copied().unwrap_or(0.0);
            (bytes as f64) <= t.small_bytes && b < top * t.small_busbw_pct / 100.0
        })
        .collect();
    let exposed: i64 = small.iter().map(|i| i.exposed_min_ns).sum();
    let saving = per_step(exposed, execs);
    let share = pct(saving, step.figures.step_ns);
    let count = small.len() as f64 / execs.max(1) as f64;
    if small.is_empty() {
        out.pass(
            RULE,
            format!(
                "no collective of {} carries at most {} at under {} % of its kind's best bus \
                 bandwidth",
                step.module,
                bytes(t.small_bytes),
                t.small_busbw_pct
            ),
        );
        return;
    }
    if share < t.moderate_pct {
        out.pass(
            RULE,
            format!(
                "{count:.1} collectives per step of {} carry at most {} at under {} % of their \
                 kind's best bus bandwidth, exposed {} per step, {share:.1} % of the step (fires \
                 from {} %)",
                step.module,
                bytes(t.small_bytes),
                t.small_busbw_pct,
                ms(saving),
                t.moderate_pct
            ),
        );
        return;
    }
    let mut kinds: BTreeMap<&str, (usize, i64)> = BTreeMap::new();
    for i in &small {
        let e = kinds.entry(i.kind.as_deref().unwrap_or("")).or_default();
        e.0 += 1;
        e.1 += i.exposed_min_ns;
    }
    let listed: Vec<String> = kinds
        .iter()
        .map(|(k, (n, _))| format!("{:.1} {k}", *n as f64 / execs as f64))
        .collect();
    out.findings.push(Finding {
        rule: RULE,
        severity: super::severity(t, share),
        title: format!(
            "{count:.1} small collectives per step in {} ({}), each at most {} and under {} % \
             of its kind's best bus bandwidth, leave {} per step exposed",
            step.module,
            listed.join(", "),
            bytes(t.small_bytes),
            t.small_busbw_pct,
            ms(saving)
        ),
        program: Some(step.program.clone()),
        key: Some(step.module.clone()),
        device: None,
        saving_ns: saving,
        share_pct: share,
        evidence: json!({
            "per_kind": kinds.iter().map(|(k, (n, e))| (k.to_string(), json!({
                "instances": n, "exposed_ns": e,
                "best_busbw_gbps": best.get(k).copied(),
            }))).collect::<BTreeMap<String, _>>(),
            "executions": execs, "exposed_ns": exposed, "step_ns": step.figures.step_ns,
            "threshold_bytes": t.small_bytes, "threshold_busbw_pct": t.small_busbw_pct,
            "threshold_pct": t.moderate_pct,
        }),
        advice: "Let XLA combine them into fewer, larger collectives: raise \
                 XLA_FLAGS=--xla_gpu_all_reduce_combine_threshold_bytes, \
                 --xla_gpu_all_gather_combine_threshold_bytes and \
                 --xla_gpu_reduce_scatter_combine_threshold_bytes (bytes; e.g. 134217728), \
                 and let the latency-hiding scheduler overlap what remains \
                 (--xla_gpu_enable_latency_hiding_scheduler=true)"
            .to_string(),
        command: format!(
            "njx-collectives --table bandwidth --program {} INPUTS",
            step.module
        ),
    });
}

/// `low-bus-bandwidth`: message sizes of at least [`Thresholds::low_busbw_bytes`] whose
/// mean bus bandwidth (the bandwidth table's: the fastest device's per instance, over
/// every program's steady instances) is under [`Thresholds::low_busbw_pct`] of the link's
/// per-direction peak ([`NVLINK_PEAKS`] by GPU name, or the threshold given). The saving
/// bounds what the main module's instances of those sizes would save running at the
/// peak: their exposed time × (1 − bandwidth / peak), per step.
pub(super) fn low_bus_bandwidth(
    t: &Thresholds,
    step: &Step,
    all: &[Instance],
    gpus: &BTreeMap<String, Option<u64>>,
    out: &mut Findings,
) {
    const RULE: &str = "low-bus-bandwidth";
    let large: Vec<&Instance> = (all.iter())
        .filter(|i| {
            i.message_bytes
                .is_some_and(|b| b as f64 >= t.low_busbw_bytes)
        })
        .filter(|i| i.best_busbw_gbps.is_some_and(f64::is_finite) && i.kind.is_some())
        .collect();
    if large.is_empty() {
        out.pass(
            RULE,
            format!("no collective carries {} or more", bytes(t.low_busbw_bytes)),
        );
        return;
    }
    let (peak, source) = match peak(t, gpus) {
        Ok(p) => p,
        Err(why) => {
            out.undecided(RULE, &why);
            return;
        }
    };
    let mut sizes: BTreeMap<(&str, u64), Vec<f64>> = BTreeMap::new();
    for i in &large {
        let key = (
            i.kind.as_deref().unwrap_or(""),
            i.message_bytes.unwrap_or(0),
        );
        sizes
            .entry(key)
            .or_default()
            .push(i.best_busbw_gbps.unwrap_or(0.0));
    }
    let means: BTreeMap<(&str, u64), f64> = sizes
        .into_iter()
        .map(|(k, v)| (k, v.iter().sum::<f64>() / v.len() as f64))
        .collect();
    let slow: BTreeMap<(&str, u64), f64> = means
        .iter()
        .filter(|(_, m)| **m < peak * t.low_busbw_pct / 100.0)
        .map(|(k, m)| (*k, *m))
        .collect();
    let main: Vec<&Instance> = (all.iter())
        .filter(|i| i.module == step.module && i.devices > 1)
        .collect();
    let execs = executions(&main);
    let mut lost = 0.0;
    for i in &main {
        let key = (
            i.kind.as_deref().unwrap_or(""),
            i.message_bytes.unwrap_or(0),
        );
        if let (Some(m), true) = (slow.get(&key), i.message_bytes.is_some()) {
            lost += i.exposed_min_ns as f64 * (1.0 - m / peak).max(0.0);
        }
    }
    let saving = per_step(lost.round() as i64, execs);
    let share = pct(saving, step.figures.step_ns);
    let worst = means
        .iter()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(k, m)| (*k, *m));
    if slow.is_empty() || share < t.moderate_pct {
        let ((kind, bytes), m) = worst.unwrap_or((("", 0), 0.0));
        out.pass(
            RULE,
            format!(
                "the slowest large message, {kind} of {}, runs at {m:.1} GB/s, {:.0} % \
                 of {peak} GB/s ({source}); {} messages under {} % cost {} per step exposed, \
                 {share:.1} % of the step (fires from {} %)",
                mib(bytes as i64),
                100.0 * m / peak,
                slow.len(),
                t.low_busbw_pct,
                ms(saving),
                t.moderate_pct
            ),
        );
        return;
    }
    let ((kind, bytes), m) = worst.unwrap_or((("", 0), 0.0));
    out.findings.push(Finding {
        rule: RULE,
        severity: super::severity(t, share),
        title: format!(
            "{} large message sizes run under {} % of the link's peak ({peak} GB/s per \
             direction, {source}); the slowest, {kind} of {}, at {m:.1} GB/s",
            slow.len(),
            t.low_busbw_pct,
            mib(bytes as i64)
        ),
        program: Some(step.program.clone()),
        key: Some(kind.to_string()),
        device: None,
        saving_ns: saving,
        share_pct: share,
        evidence: json!({
            "slow": slow.iter().map(|((k, b), m)| json!({
                "collective": k, "message_bytes": b, "busbw_mean_gbps": m,
            })).collect::<Vec<_>>(),
            "peak_gbps": peak, "peak_source": source, "executions": execs,
            "step_ns": step.figures.step_ns, "threshold_bytes": t.low_busbw_bytes,
            "threshold_peak_pct": t.low_busbw_pct, "threshold_pct": t.moderate_pct,
        }),
        advice: "Check how NCCL connects the GPUs (NCCL_DEBUG=INFO prints the rings, trees and \
                 NVLS it chose; NCCL_ALGO and NCCL_PROTO force others); across nodes the \
                 network, not NVLink, is the limit (give its peak with --threshold \
                 low-bus-bandwidth.peak-gbps); compare with NCCL's own tests at these sizes"
            .to_string(),
        command: "njx-collectives --table bandwidth INPUTS".to_string(),
    });
}
