//! Rules over compilation: `compile-time` and `recompilation`.

use super::{Finding, Findings, Thresholds, ms, pct};
use crate::analysis::compile::{Compilations, Compiled};
use crate::analysis::step::Step;
use serde_json::json;
use std::collections::BTreeMap;

/// `compile-time`: the profile whose compilations (the wall time of its `XlaCompile`
/// ranges) take the greatest share of its span (its first to last recorded time), when
/// that share is at least [`Thresholds::compile_pct`]; with the autotuner's part of it.
/// Compilation delays the start, not the step: the saving per step is 0, and the severity
/// is by the profile's share.
pub(super) fn compile_time(t: &Thresholds, c: &Compilations, out: &mut Findings) {
    const RULE: &str = "compile-time";
    if c.spans.is_empty() {
        out.undecided(
            RULE,
            "no push/pop ranges read (records and njx-thunks' partial results carry none)",
        );
        return;
    }
    let mut per: BTreeMap<&str, (i64, i64, usize)> = BTreeMap::new();
    for x in &c.compiled {
        let e = per.entry(&x.profile).or_default();
        e.0 = e.0.saturating_add(x.wall_ns);
        e.1 = e.1.saturating_add(x.autotune_ns);
        e.2 += 1;
    }
    let share = |profile: &str, wall: i64| {
        c.spans
            .get(profile)
            .map_or(0.0, |(s, e)| pct(wall, e.saturating_sub(*s)))
    };
    let worst = per
        .iter()
        .map(|(p, v)| (*p, *v, share(p, v.0)))
        .max_by(|a, b| a.2.total_cmp(&b.2).then(b.0.cmp(a.0)));
    let Some((profile, (wall, autotune, count), profile_pct)) = worst else {
        out.pass(RULE, "no compilation recorded".to_string());
        return;
    };
    let (all_wall, all_autotune): (i64, i64) = per.values().fold((0, 0), |a, v| {
        (a.0.saturating_add(v.0), a.1.saturating_add(v.1))
    });
    let autotune_pct = pct(all_autotune, all_wall);
    let span = c.spans.get(profile).map_or(0, |(s, e)| e - s);
    if profile_pct < t.compile_pct {
        out.pass(
            RULE,
            format!(
                "compilation takes at most {profile_pct:.1} % of a profile ({profile}: {} of {}; \
                 fires from {} %)",
                ms(wall),
                ms(span),
                t.compile_pct
            ),
        );
        return;
    }
    out.findings.push(Finding {
        rule: RULE,
        severity: super::severity(t, profile_pct),
        title: format!(
            "compilation takes {profile_pct:.1} % of profile {profile} ({count} compilation{}, {} \
             of {}), {autotune_pct:.1} % of it autotuning: it delays the start, not the step",
            if count == 1 { "" } else { "s" },
            ms(wall),
            ms(span)
        ),
        program: None,
        key: Some(profile.to_string()),
        device: None,
        saving_ns: 0,
        share_pct: 0.0,
        evidence: json!({
            "of": "profile", "profile": profile, "compile_wall_ns": wall, "span_ns": span,
            "profile_pct": profile_pct, "autotune_ns": autotune, "compilations": count,
            "all_compile_wall_ns": all_wall, "all_autotune_ns": all_autotune,
            "threshold_pct": t.compile_pct,
        }),
        advice: "Cache what was compiled: JAX's persistent compilation cache \
                 (jax.config.update(\"jax_compilation_cache_dir\", DIR), with \
                 jax_persistent_cache_min_compile_time_secs lowered), and the autotuner's \
                 results (jax_persistent_cache_enable_xla_caches=\
                 \"xla_gpu_per_fusion_autotune_cache_dir\", or \
                 XLA_FLAGS=--xla_gpu_per_fusion_autotune_cache_dir=DIR); \
                 --xla_gpu_autotune_level=0 skips autotuning at some cost in speed"
            .to_string(),
        command: "njx-compile-summary --by category INPUTS".to_string(),
    });
}

/// `recompilation`: a module compiled again, in a profile, after its first steady
/// execution there (the first execution of a program is its warm-up; new shapes, dtypes or static arguments reach a jitted function mid-run). The
/// saving is those compilations' wall time spread over the steps counted (per step; 0
/// without a step).
pub(super) fn recompilation(
    t: &Thresholds,
    step: Option<&Step>,
    c: &Compilations,
    out: &mut Findings,
) {
    const RULE: &str = "recompilation";
    if c.spans.is_empty() {
        out.undecided(
            RULE,
            "no push/pop ranges read (records and njx-thunks' partial results carry none)",
        );
        return;
    }
    let mut again: BTreeMap<&str, Vec<&Compiled>> = BTreeMap::new();
    for x in &c.compiled {
        let first = c.first_runs.get(&(x.profile.clone(), x.module.clone()));
        if first.is_some_and(|f| x.start_ns > *f) {
            again.entry(&x.module).or_default().push(x);
        }
    }
    if again.is_empty() {
        out.pass(
            RULE,
            format!(
                "no module compiled again after its first steady execution ({} compilations)",
                c.compiled.len()
            ),
        );
        return;
    }
    let steps = step.map_or(0, |s| s.each.len());
    let step_ns = step.map_or(0, |s| s.figures.step_ns);
    let mut ranked: Vec<(&str, i64, &Vec<&Compiled>)> = again
        .iter()
        .map(|(m, v)| (*m, v.iter().map(|x| x.wall_ns).sum::<i64>(), v))
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    for (module, wall, list) in ranked {
        let saving = if steps > 0 {
            (wall + steps as i64 / 2) / steps as i64
        } else {
            0
        };
        let share = pct(saving, step_ns);
        let profiles: std::collections::BTreeSet<&str> =
            list.iter().map(|x| x.profile.as_str()).collect();
        out.findings.push(Finding {
            rule: RULE,
            severity: super::severity(t, share),
            title: format!(
                "module {module} was compiled again {} times after it ran in steady state (in {} \
                 profiles), {} of compilation",
                list.len(),
                profiles.len(),
                ms(wall)
            ),
            program: None,
            key: Some(module.to_string()),
            device: None,
            saving_ns: saving,
            share_pct: share,
            evidence: json!({
                "recompilations": list.iter().map(|x| json!({
                    "profile": x.profile, "start_ns": x.start_ns, "wall_ns": x.wall_ns,
                    "first_steady_ns": c.first_runs.get(&(x.profile.clone(), x.module.clone())),
                })).collect::<Vec<_>>(),
                "wall_ns": wall, "steps": steps, "step_ns": step_ns,
            }),
            advice: "Find what changed between the calls: jax.config.update(\"jax_log_compiles\", \
                     True) and jax.config.update(\"jax_explain_cache_misses\", True) say why each \
                     compilation happened; keep shapes, dtypes and static arguments fixed (pad \
                     or bucket varying shapes)"
                .to_string(),
            command: "njx-compile-summary INPUTS".to_string(),
        });
    }
}
