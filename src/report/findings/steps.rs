//! Rules over the steps themselves: `irregular-steps`.

use super::{Finding, Findings, Thresholds, ms, pct};
use crate::analysis::step::{OneStep, Step};
use serde_json::json;
use std::collections::BTreeMap;

/// `irregular-steps`: steps longer than [`Thresholds::irregular_factor`] × the median
/// step of their device. The saving is their excess over that median, per step (summed
/// and divided by every step counted): what the step would lose if they ran as the
/// others do. Fires on any such step (a one-off stall is worth knowing of), its severity
/// by that share.
pub(super) fn irregular_steps(t: &Thresholds, step: &Step, out: &mut Findings) {
    const RULE: &str = "irregular-steps";
    let mut by_device: BTreeMap<u32, Vec<&OneStep>> = BTreeMap::new();
    for s in &step.each {
        by_device.entry(s.device).or_default().push(s);
    }
    // (step, its device's median, its device's first step start).
    let mut irregular: Vec<(&OneStep, i64, i64)> = Vec::new();
    let mut medians = Vec::new();
    for steps in by_device.values() {
        let mut lengths: Vec<i64> = steps.iter().map(|s| s.step_ns).collect();
        lengths.sort_unstable();
        let median = median(&lengths);
        medians.push(median);
        let first = steps.iter().map(|s| s.start_ns).min().unwrap_or(0);
        for s in steps {
            if s.step_ns as f64 > t.irregular_factor * median as f64 {
                irregular.push((s, median, first));
            }
        }
    }
    let count = step.each.len().max(1) as i64;
    if irregular.is_empty() {
        let worst = (by_device.values().zip(&medians))
            .flat_map(|(steps, m)| {
                steps
                    .iter()
                    .map(move |s| s.step_ns as f64 / (*m).max(1) as f64)
            })
            .fold(0.0, f64::max);
        out.pass(
            RULE,
            format!(
                "the longest step is {worst:.2}× its device's median (fires over {}×)",
                t.irregular_factor
            ),
        );
        return;
    }
    irregular.sort_by(|a, b| {
        (b.0.step_ns - b.1)
            .cmp(&(a.0.step_ns - a.1))
            .then(a.0.device.cmp(&b.0.device))
    });
    let excess: i64 = irregular.iter().map(|(s, m, _)| s.step_ns - m).sum();
    let saving = (excess + count / 2) / count;
    let share = pct(saving, step.figures.step_ns);
    let (worst, median, first) = irregular[0];
    let devices: std::collections::BTreeSet<u32> = irregular.iter().map(|i| i.0.device).collect();
    out.findings.push(Finding {
        rule: RULE,
        severity: super::severity(t, share),
        title: format!(
            "{} of {} steps of {} ran over {}× their device's median; the longest, {} on device \
             {} (execution {}, {} s into its steps), against a median of {}",
            irregular.len(),
            step.each.len(),
            step.module,
            t.irregular_factor,
            ms(worst.step_ns),
            worst.device,
            worst.execution,
            format_args!("{:.3}", (worst.start_ns - first) as f64 / 1e9),
            ms(median)
        ),
        program: Some(step.program.clone()),
        key: Some(step.module.clone()),
        device: (devices.len() == 1).then_some(worst.device),
        saving_ns: saving,
        share_pct: share,
        evidence: json!({
            "irregular": irregular.iter().map(|(s, m, first)| json!({
                "device": s.device, "execution": s.execution, "step_ns": s.step_ns,
                "median_ns": m, "after_ns": s.start_ns - first,
            })).collect::<Vec<_>>(),
            "steps": step.each.len(), "excess_ns": excess, "step_ns": step.figures.step_ns,
            "threshold_factor": t.irregular_factor,
        }),
        advice: "Look at what happened in those steps on the timeline: a garbage collection, a \
             checkpoint, a data-loader stall, a recompilation, throttling; if it recurs every \
             N steps, it is periodic host work (logging, evaluation) that could overlap the \
             step; njx-export --table modules lists every execution"
            .to_string(),
        command: "njx-timeline -o timeline.json INPUTS".to_string(),
    });
}

/// The median of sorted `v` (the lower middle of an even count), 0 for none.
fn median(v: &[i64]) -> i64 {
    if v.is_empty() {
        0
    } else {
        v[(v.len() - 1) / 2]
    }
}

/// `variability`: the main module's compute thunks whose time varies over their
/// executions (across devices and executions, steady state) with a coefficient of
/// variation over [`Thresholds::variability_cv`] (njx-thunks' variability view with
/// `--min-cv`). The saving bounds what running every execution as fast as its fastest
/// would save: Σ over those thunks of (total − executions × fastest), divided by the main
/// module's steady executions over devices (one per step).
pub(super) fn variability(
    t: &Thresholds,
    step: &Step,
    thunks: &crate::analysis::thunks::ThunkTime,
    out: &mut Findings,
) {
    const RULE: &str = "variability";
    use crate::analysis::thunks;
    if let Some(problem) = thunks.thunks_beyond_modules() {
        out.undecided(RULE, &format!("njx-thunks refuses the input: {problem}"));
        return;
    }
    let rows = match super::thunk_view(thunks, thunks::View::Variability, t.variability_cv, |r| {
        r.varying()
    }) {
        Ok(rows) => rows,
        Err(why) => {
            out.undecided(RULE, &why);
            return;
        }
    };
    let mut excess: Vec<(i128, &thunks::Varying)> = rows
        .iter()
        .filter(|v| v.row.module == step.module)
        .filter_map(|v| {
            let fastest = v.fastest_ns?;
            Some((
                v.total_ns - i128::from(v.row.executions) * i128::from(fastest),
                v,
            ))
        })
        .collect();
    let unknown = rows
        .iter()
        .filter(|v| v.row.module == step.module && v.fastest_ns.is_none())
        .count();
    excess.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.row.thunk.cmp(&b.1.row.thunk)));
    let executions = step.executions();
    let total: i128 = excess.iter().map(|e| e.0).sum();
    let saving = i64::try_from(total / executions.max(1) as i128).unwrap_or(i64::MAX);
    let share = pct(saving, step.figures.step_ns);
    if excess.is_empty() || share < t.moderate_pct {
        let why = if excess.is_empty() && unknown == 0 {
            format!(
                "no compute thunk of {} varies by over {} % of its mean",
                step.module,
                100.0 * t.variability_cv
            )
        } else if excess.is_empty() {
            format!(
                "{unknown} compute thunks of {} vary, but the partial results read do not carry \
                 their fastest executions",
                step.module
            )
        } else {
            format!(
                "{} compute thunks of {} vary by over {} % of their mean; running each as its \
                 fastest would save {} per step, {share:.1} % of the step (fires from {} %)",
                excess.len(),
                step.module,
                100.0 * t.variability_cv,
                ms(saving),
                t.moderate_pct
            )
        };
        out.pass(RULE, why);
        return;
    }
    let worst = excess[0].1;
    let named = |v: &thunks::Varying| match &v.row.op_name {
        Some(op) => format!("{} ({op})", v.row.thunk),
        None => v.row.thunk.clone(),
    };
    out.findings.push(Finding {
        rule: RULE,
        severity: super::severity(t, share),
        title: format!(
            "{} compute thunks of {} vary by over {} % of their mean; the most, {}, runs {} \
             on average against {} at its fastest (cv {:.2})",
            excess.len(),
            step.module,
            100.0 * t.variability_cv,
            named(worst),
            ms(worst.row.mean_ns.round() as i64),
            ms(worst.fastest_ns.unwrap_or(0)),
            worst.row.cv.unwrap_or(0.0)
        ),
        program: Some(worst.row.program.clone()),
        key: Some(worst.row.thunk.clone()),
        device: None,
        saving_ns: saving,
        share_pct: share,
        evidence: json!({
            "thunks": excess.iter().take(5).map(|(x, v)| json!({
                "thunk": v.row.thunk, "op_name": v.row.op_name, "executions": v.row.executions,
                "mean_ns": v.row.mean_ns.round() as i64, "fastest_ns": v.fastest_ns,
                "cv": v.row.cv, "excess_ns": i64::try_from(*x).unwrap_or(i64::MAX),
            })).collect::<Vec<_>>(),
            "varying_thunks": excess.len(), "excess_ns": i64::try_from(total).unwrap_or(i64::MAX),
            "executions": executions, "step_ns": step.figures.step_ns,
            "threshold_cv": t.variability_cv, "threshold_pct": t.moderate_pct,
        }),
        advice: "See where the slow executions are (their devices and executions are in the \
                 command's slowest columns): on one device, that device is slower (clocks, \
                 thermals, a noisy neighbour); in some executions, something ran beside them \
                 (another stream's work, host interference); autotuning left on in steady \
                 state shows as this too"
            .to_string(),
        command: format!(
            "njx-thunks --view variability --min-cv {} INPUTS",
            t.variability_cv
        ),
    });
}

/// `profile-trust`: what the other findings cannot be trusted for: fewer steady steps
/// per device than [`Thresholds::min_steps`] (means of one or two steps are anecdotes),
/// no step at all, or main-module executions whose thunks ran in command buffers (CUDA
/// graphs), where no thunk range is recorded: their time shows as GPU idle inside the
/// module and their collectives as absent. Its saving is 0: it says how far to trust the
/// others.
pub(super) fn profile_trust(
    t: &Thresholds,
    step: &Result<Step, String>,
    xla: bool,
    out: &mut Findings,
) {
    const RULE: &str = "profile-trust";
    if !xla {
        out.undecided(
            RULE,
            "no XLA module executions: no step whose figures to trust or doubt",
        );
        return;
    }
    let mut doubts: Vec<String> = Vec::new();
    let mut evidence = serde_json::Map::new();
    evidence.insert("threshold_steps".into(), json!(t.min_steps));
    let mut program = None;
    match step {
        Err(why) => doubts.push(format!("there is no step to judge ({why})")),
        Ok(step) => {
            program = Some(step.program.clone());
            let fewest = step
                .per_device
                .iter()
                .map(|d| d.figures.steps)
                .min()
                .unwrap_or(0);
            evidence.insert("fewest_steps".into(), json!(fewest));
            if (fewest as f64) < t.min_steps {
                doubts.push(format!(
                    "a device has only {fewest} steady step{} of {} (the means are of so few; \
                     profile more steps, e.g. njx-capture's or nsys's capture range over more \
                     iterations)",
                    if fewest == 1 { "" } else { "s" },
                    step.module
                ));
            }
            let (none, all) = step.without_thunks;
            evidence.insert("executions_without_thunks".into(), json!(none));
            evidence.insert("executions".into(), json!(all));
            if none > 0 {
                doubts.push(format!(
                    "{none} of {all} steady executions of {} recorded no thunk (command \
                     buffers: their thunks' time counts as idle inside the module, their \
                     collectives are not seen; profile with \
                     XLA_FLAGS=--xla_gpu_enable_command_buffer= to see them)",
                    step.module
                ));
            }
        }
    }
    if doubts.is_empty() {
        out.pass(
            RULE,
            format!(
                "at least {} steady steps per device, every execution with its thunks",
                t.min_steps
            ),
        );
        return;
    }
    out.findings.push(Finding {
        rule: RULE,
        severity: "moderate",
        title: format!("trust the figures with care: {}", doubts.join("; ")),
        program,
        key: None,
        device: None,
        saving_ns: 0,
        share_pct: 0.0,
        evidence: serde_json::Value::Object(evidence),
        advice: "Profile more steady steps (and past the warm-up) and, to attribute time to \
                 thunks, without command buffers; the other findings are computed from what \
                 this profile holds"
            .to_string(),
        command: "njx-modules INPUTS".to_string(),
    });
}
