//! Findings (issue 40, its first rules): exact rules over the step and the communication
//! aggregate, each saying what it found in the user's terms, what removing the cause could
//! save per step at most, and what to change. Every rule that ran is listed: fired, passed
//! (with the figure it judged), or undecided (why the data cannot say).
//!
//! The XLA flags named in the advice are those of XLA's `xla/debug_options_flags.cc`
//! (openxla/xla): `xla_gpu_enable_latency_hiding_scheduler`,
//! `xla_gpu_enable_pipelined_all_gather`, `xla_gpu_enable_pipelined_reduce_scatter`,
//! `xla_gpu_enable_pipelined_all_reduce` and `xla_gpu_enable_command_buffer`.

use super::whole::Whole;
use crate::analysis::collectives::ProgramComm;
use crate::analysis::step::Step;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
pub use thresholds::Thresholds;

mod comm;
mod compile;
pub mod diff;
mod gemm;
mod memory;
pub mod nsys;
mod steps;
pub mod thresholds;

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The rule that found it.
    pub rule: &'static str,
    /// `high` or `moderate`.
    pub severity: &'static str,
    /// One line in the user's terms.
    pub title: String,
    /// The program key it is about, where one.
    pub program: Option<String>,
    /// What in the program: a collective kind, a module name.
    pub key: Option<String>,
    /// The device it is about, where one.
    pub device: Option<u32>,
    /// At most what removing the cause saves per step, ns.
    pub saving_ns: i64,
    /// `saving_ns` as a share of the step, percent.
    pub share_pct: f64,
    /// The figures it was computed from and the threshold it crossed.
    pub evidence: Value,
    /// What to change.
    pub advice: String,
    /// The njx command that shows the detail.
    pub command: String,
}

/// A rule that ran and did not fire: passed (the figure it judged) or undecided (why).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Quiet {
    /// The rule.
    pub rule: &'static str,
    /// `passed` or `undecided`.
    pub status: &'static str,
    /// The figure judged against its threshold, or why the data cannot decide.
    pub why: String,
}

/// The findings (by saving, greatest first) and the rules that did not fire.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Findings {
    /// What was found, the greatest saving first.
    pub findings: Vec<Finding>,
    /// The rules that ran and found nothing, or could not decide.
    pub quiet: Vec<Quiet>,
}

/// The rules, in the order they run: those over the step, the communication, the
/// compilations and the dumps, then those over the CUDA activity tables
/// ([`nsys::RULES`]).
pub const RULES: [&str; 20] = [
    "exposed-communication",
    "host-gaps",
    "idle-in-module",
    "straggler",
    "barrier",
    "compiled-differently",
    "irregular-steps",
    "variability",
    "small-collectives",
    "low-bus-bandwidth",
    "compile-time",
    "recompilation",
    "memory",
    "profile-trust",
    "gemm-efficiency",
    nsys::RULES[0],
    nsys::RULES[1],
    nsys::RULES[2],
    nsys::RULES[3],
    nsys::RULES[4],
];

pub(super) fn severity(t: &Thresholds, share: f64) -> &'static str {
    if share >= t.high_pct {
        "high"
    } else {
        "moderate"
    }
}

fn pct(part: i64, whole: i64) -> f64 {
    if whole > 0 {
        100.0 * part as f64 / whole as f64
    } else {
        0.0
    }
}

fn ms(ns: i64) -> String {
    format!("{} ms", crate::output::numbers::ms(ns as f64))
}

impl Findings {
    fn pass(&mut self, rule: &'static str, why: String) {
        self.quiet.push(Quiet {
            rule,
            status: "passed",
            why,
        });
    }

    fn undecided(&mut self, rule: &'static str, why: &str) {
        self.quiet.push(Quiet {
            rule,
            status: "undecided",
            why: why.to_string(),
        });
    }
}

/// Every rule over `whole` and its `step`.
pub fn findings(whole: &Whole, step: &Result<Step, String>, t: &Thresholds) -> Findings {
    let mut out = Findings::default();
    let comm = whole.collectives.program_comm();
    match step {
        Ok(step) => {
            exposed_communication(t, step, &comm, &mut out);
            idle(t, step, &mut out);
            straggler(t, step, &comm, &mut out);
            steps::irregular_steps(t, step, &mut out);
            steps::variability(t, step, &whole.thunks, &mut out);
            let instances = whole.collectives.steady_instances();
            comm::small_collectives(t, step, &instances, &mut out);
            comm::low_bus_bandwidth(t, step, &instances, &whole.gpus, &mut out);
            gemm::gemm_efficiency(t, step, &whole.thunks, &whole.gemms, &whole.gpus, &mut out);
        }
        Err(why) => {
            for rule in [
                "exposed-communication",
                "host-gaps",
                "idle-in-module",
                "straggler",
                "irregular-steps",
                "variability",
                "small-collectives",
                "low-bus-bandwidth",
                "gemm-efficiency",
            ] {
                out.undecided(rule, &format!("no step: {why}"));
            }
        }
    }
    barrier(t, step.as_ref().ok(), &comm, &mut out);
    compile::compile_time(t, &whole.compilations, &mut out);
    compile::recompilation(t, step.as_ref().ok(), &whole.compilations, &mut out);
    memory::memory(t, &whole.heaps, &whole.gpus, &mut out);
    let xla = super::sections::no_xla(whole).is_none();
    steps::profile_trust(t, step, xla, &mut out);
    let variants = &crate::derived::partial::Aggregate::warmup(&whole.modules).variants;
    compiled_differently(t, step.as_ref().ok(), variants, &mut out);
    rank(&mut out);
    out
}

/// `exposed-communication`: per collective kind of the main module's programs, its part
/// of the step's exposed communication (the step's figure split by each kind's share of
/// the exposed time of those programs' collectives in steady state).
fn exposed_communication(
    t: &Thresholds,
    step: &Step,
    comm: &BTreeMap<String, ProgramComm>,
    out: &mut Findings,
) {
    const RULE: &str = "exposed-communication";
    let mut kinds: BTreeMap<&str, i64> = BTreeMap::new();
    for p in comm.values().filter(|p| p.name == step.module) {
        for (kind, (exposed, _)) in &p.by_kind {
            *kinds.entry(kind).or_default() += exposed;
        }
    }
    let total: i64 = kinds.values().sum();
    let step_ns = step.figures.step_ns;
    let exposed = step.figures.exposed_communication_ns;
    if total <= 0 || exposed <= 0 {
        out.pass(
            RULE,
            format!("no exposed communication in the steps of {}", step.module),
        );
        return;
    }
    let mut fired = false;
    for (kind, k) in kinds {
        let saving = (i128::from(exposed) * i128::from(k) / i128::from(total)) as i64;
        let share = pct(saving, step_ns);
        if share < t.moderate_pct {
            continue;
        }
        fired = true;
        let pipelined = match kind {
            "all-gather" => " and --xla_gpu_enable_pipelined_all_gather=true",
            "reduce-scatter" => " and --xla_gpu_enable_pipelined_reduce_scatter=true",
            "all-reduce" => " and --xla_gpu_enable_pipelined_all_reduce=true",
            _ => "",
        };
        out.findings.push(Finding {
            rule: RULE,
            severity: severity(t, share),
            title: format!(
                "{kind} in {} leaves {} per step exposed ({share:.1} % of the step)",
                step.module,
                ms(saving)
            ),
            program: Some(step.program.clone()),
            key: Some(kind.to_string()),
            device: None,
            saving_ns: saving,
            share_pct: share,
            evidence: json!({
                "exposed_communication_ns": exposed, "kind_share_of_exposed": k as f64 / total as f64,
                "step_ns": step_ns, "threshold_pct": t.moderate_pct,
            }),
            advice: format!(
                "Let XLA overlap it with compute: XLA_FLAGS=--xla_gpu_enable_latency_hiding_scheduler=true{pipelined}; \
                 check which instances stay exposed with the command"
            ),
            command: format!(
                "njx-collectives --table hidden-by-program --program {} INPUTS",
                step.module
            ),
        });
    }
    if !fired {
        out.pass(
            RULE,
            format!(
                "exposed communication {} per step, {:.1} % of the step, under {} % for every kind",
                ms(exposed),
                pct(exposed, step_ns),
                t.moderate_pct
            ),
        );
    }
}

/// `host-gaps` and `idle-in-module`: the step's GPU idle between and inside module
/// executions.
fn idle(t: &Thresholds, step: &Step, out: &mut Findings) {
    let f = &step.figures;
    let rules = [
        (
            "host-gaps",
            f.idle_between_modules_ns,
            "GPU idle between module executions",
            "The GPU waits for the host between programs: keep the step in one jitted \
             function, move host work (data loading, logging of device values, \
             block_until_ready, .item()) out of the step or overlap it (prefetch the next \
             batch to the device); see the gaps on the timeline with the command",
            "njx-timeline -o timeline.json INPUTS",
        ),
        (
            "idle-in-module",
            f.idle_in_modules_ns,
            "GPU idle inside module executions",
            "The GPU waits between the thunks of a program (kernel launch overhead, host \
             callbacks, synchronisation): record more of them into CUDA graphs with \
             XLA_FLAGS=--xla_gpu_enable_command_buffer (its command types, e.g. FUSION, \
             CUBLAS, CUSTOM_CALL)",
            "njx-thunks --view opcode INPUTS",
        ),
    ];
    for (rule, ns, what, advice, command) in rules {
        let share = pct(ns, f.step_ns);
        if share < t.moderate_pct {
            out.pass(
                rule,
                format!("{what}: {} per step, {share:.1} % of the step", ms(ns)),
            );
            continue;
        }
        let (worst, worst_ns) = step
            .per_device
            .iter()
            .map(|d| {
                let v = if rule == "host-gaps" {
                    d.figures.idle_between_modules_ns
                } else {
                    d.figures.idle_in_modules_ns
                };
                (d.device, v)
            })
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            .unwrap_or((0, 0));
        out.findings.push(Finding {
            rule,
            severity: severity(t, share),
            title: format!(
                "{what}: {} per step ({share:.1} % of the step; most on device {worst}, {})",
                ms(ns),
                ms(worst_ns)
            ),
            program: Some(step.program.clone()),
            key: Some(step.module.clone()),
            device: None,
            saving_ns: ns,
            share_pct: share,
            evidence: json!({
                "idle_ns": ns, "step_ns": f.step_ns, "threshold_pct": t.moderate_pct,
                "worst_device": worst, "worst_device_idle_ns": worst_ns,
            }),
            advice: advice.to_string(),
            command: command.to_string(),
        });
    }
}

/// `straggler`: in the main module's programs, a device that arrives last at collectives
/// [`t.straggler_share`] times more often than its share (1 / devices), or is late by
/// [`t.straggler_late_pct`] of the step per step; its lateness per step (what the others
/// wait for it, per main-module execution) at least [`t.moderate_pct`] of the step.
fn straggler(
    t: &Thresholds,
    step: &Step,
    comm: &BTreeMap<String, ProgramComm>,
    out: &mut Findings,
) {
    const RULE: &str = "straggler";
    let mut arrivals: BTreeMap<u32, (usize, usize, f64)> = BTreeMap::new();
    for p in comm.values().filter(|p| p.name == step.module) {
        for (d, (n, last, late)) in &p.arrivals {
            let e = arrivals.entry(*d).or_default();
            e.0 += n;
            e.1 += last;
            e.2 += late;
        }
    }
    if arrivals.len() < 2 {
        out.undecided(
            RULE,
            &format!("no collective of {} spans two devices", step.module),
        );
        return;
    }
    let count = arrivals.len();
    let devices = count as f64;
    // Executions of the main module per device: one more than its steps.
    let executions = |device: u32| {
        step.per_device
            .iter()
            .find(|d| d.device == device)
            .map_or(0, |d| d.figures.steps + 1)
    };
    let step_ns = step.figures.step_ns;
    let mut worst: Option<(u32, f64, f64)> = None;
    let mut fired = false;
    for (device, (n, last, late)) in arrivals {
        let execs = executions(device);
        if n == 0 || execs == 0 {
            continue;
        }
        let share = last as f64 / n as f64;
        let per_step = (late / execs as f64).round() as i64;
        let step_pct = pct(per_step, step_ns);
        if worst.is_none_or(|w| step_pct > w.2) {
            worst = Some((device, share, step_pct));
        }
        let often = share >= t.straggler_share / devices;
        if step_pct < t.moderate_pct || !(often || step_pct >= t.straggler_late_pct) {
            continue;
        }
        fired = true;
        out.findings.push(Finding {
            rule: RULE,
            severity: severity(t, step_pct),
            title: format!(
                "device {device} arrives last at {}'s collectives in {last} of {n} instances \
                 ({:.0} %, against {:.0} % by chance), {} per step late: the others wait for it",
                step.module,
                100.0 * share,
                100.0 / devices,
                ms(per_step)
            ),
            program: Some(step.program.clone()),
            key: Some(step.module.clone()),
            device: Some(device),
            saving_ns: per_step,
            share_pct: step_pct,
            evidence: json!({
                "instances": n, "last": last, "lateness_ns": late.round() as i64,
                "p_value_last": binomial_tail(n, last, 1.0 / devices),
                "executions": execs, "devices": count, "step_ns": step_ns,
                "threshold_share": t.straggler_share / devices, "threshold_pct": t.moderate_pct,
            }),
            advice: format!(
                "Find what device {device} does before the collectives that the others do not: \
                 a slower host (data loading, CPU affinity, another process), longer compute \
                 thunks (njx-thunks --view variability), throttling; its lateness along the \
                 module is in njx-collectives --lateness-plot"
            ),
            command: format!(
                "njx-collectives --table stragglers-by-program --program {} INPUTS",
                step.module
            ),
        });
    }
    if !fired {
        let (d, share, p) = worst.unwrap_or((0, 0.0, 0.0));
        out.pass(
            RULE,
            format!(
                "the latest device, {d}, is last in {:.0} % of instances and {p:.2} % of the \
                 step late per step (fires from {} %)",
                100.0 * share,
                t.moderate_pct
            ),
        );
    }
}

/// `barrier`: a program all of whose collectives carry at most [`t.barrier_bytes`] bytes and
/// whose communication is at least [`t.barrier_comm_pct`] of its module time: not device
/// work but devices waiting for each other. Its saving is its time inside the step.
fn barrier(
    t: &Thresholds,
    step: Option<&Step>,
    comm: &BTreeMap<String, ProgramComm>,
    out: &mut Findings,
) {
    const RULE: &str = "barrier";
    if comm.is_empty() {
        out.undecided(RULE, "no communication in steady state");
        return;
    }
    let mut fired = false;
    for (program, p) in comm {
        let exposed: i64 = p.by_kind.values().map(|v| v.0).sum();
        let full: i64 = p.by_kind.values().map(|v| v.0 + v.1).sum();
        let comm_pct = pct(full, p.module_ns);
        let small = p
            .largest_message
            .is_some_and(|b| b as f64 <= t.barrier_bytes);
        if !small || comm_pct < t.barrier_comm_pct || step.is_some_and(|s| s.module == p.name) {
            continue;
        }
        fired = true;
        let in_step = step
            .and_then(|s| s.figures.other_programs.iter().find(|o| o.name == p.name))
            .map_or(0, |o| o.ns);
        let step_ns = step.map_or(0, |s| s.figures.step_ns);
        let share = pct(in_step, step_ns);
        let kinds: Vec<&str> = p.by_kind.keys().map(String::as_str).collect();
        let whom = p.last().map_or(String::new(), |(d, n, late)| {
            format!(
                "; it waits for device {d} (last in {n} of {} instances, {} late on average)",
                p.instances,
                ms(late.round() as i64)
            )
        });
        out.findings.push(Finding {
            rule: RULE,
            severity: severity(t, share.max(pct(p.module_ns, whole_module_ns(comm)))),
            title: format!(
                "{} is a barrier, not device work: its {} carries at most {} B and takes \
                 {comm_pct:.0} % of its time{whom}",
                p.name,
                kinds.join(", "),
                p.largest_message.unwrap_or(0)
            ),
            program: Some(program.clone()),
            key: Some(p.name.clone()),
            device: p.last().map(|l| l.0),
            saving_ns: in_step,
            share_pct: share,
            evidence: json!({
                "largest_message_bytes": p.largest_message, "communication_ns": full,
                "exposed_ns": exposed, "module_ns": p.module_ns, "in_step_ns": in_step,
                "threshold_bytes": t.barrier_bytes, "threshold_comm_pct": t.barrier_comm_pct,
            }),
            advice: "Its time is the others waiting for the last device (see its stragglers): \
                     leave it out of the analysis with --exclude-program, and look at what that \
                     device does before it (host work, a longer step); a multihost \
                     sync_global_devices or a psum used as a barrier costs what the slowest \
                     process is late"
                .to_string(),
            command: format!(
                "njx-collectives --table stragglers-by-program --program {} INPUTS",
                p.name
            ),
        });
    }
    if !fired {
        out.pass(
            RULE,
            format!(
                "no program whose collectives all carry at most {} B and take \
                 {} % of its time",
                t.barrier_bytes, t.barrier_comm_pct
            ),
        );
    }
}

/// `compiled-differently`: a module that ran as different programs (HLO fingerprints) on
/// different devices, each device one of them. Its figures that compare devices leave the
/// others out; where it is the main module, the saving is how much longer the slowest
/// program's devices' mean step is than the fastest's.
fn compiled_differently(
    t: &Thresholds,
    step: Option<&Step>,
    variants: &crate::derived::executions::Variants,
    out: &mut Findings,
) {
    const RULE: &str = "compiled-differently";
    let mut fired = false;
    for (name, keys) in &variants.by_name {
        // Each device one of the programs (a device running two is a recompilation).
        let count: usize = keys.values().map(|v| v.devices.len()).sum();
        let devices: std::collections::BTreeSet<u32> = keys
            .values()
            .flat_map(|v| v.devices.iter().copied())
            .collect();
        if keys.len() < 2 || count != devices.len() {
            continue;
        }
        fired = true;
        let ran: Vec<String> = keys
            .iter()
            .map(|(key, v)| {
                format!(
                    "{key} on {}",
                    crate::derived::executions::device_list(&v.devices)
                )
            })
            .collect();
        // Per program, its devices' mean step (the main module only).
        let mean_step = |devices: &std::collections::BTreeSet<u32>| {
            let steps: Vec<i64> = step?
                .per_device
                .iter()
                .filter(|d| devices.contains(&d.device))
                .map(|d| d.figures.step_ns)
                .collect();
            (!steps.is_empty()).then(|| steps.iter().sum::<i64>() / steps.len() as i64)
        };
        let main = step.filter(|s| s.module == *name);
        let means: Vec<i64> = if main.is_some() {
            keys.values()
                .filter_map(|v| mean_step(&v.devices))
                .collect()
        } else {
            Vec::new()
        };
        let saving = match (means.iter().max(), means.iter().min()) {
            (Some(hi), Some(lo)) => hi - lo,
            _ => 0,
        };
        let step_ns = main.map_or(0, |s| s.figures.step_ns);
        let share = pct(saving, step_ns);
        out.findings.push(Finding {
            rule: RULE,
            severity: severity(t, share),
            title: format!(
                "module {name} was compiled into {} different programs on different devices ({}){}",
                keys.len(),
                ran.join(", "),
                if main.is_some() {
                    format!(
                        "; their devices' mean steps differ by {}",
                        ms(saving)
                    )
                } else {
                    String::new()
                }
            ),
            program: keys.keys().next().cloned(),
            key: Some(name.clone()),
            device: None,
            saving_ns: saving,
            share_pct: share,
            evidence: json!({
                "programs": keys.iter().map(|(k, v)| (k.clone(), v.devices.iter().copied().collect::<Vec<u32>>())).collect::<BTreeMap<String, Vec<u32>>>(),
                "mean_steps_ns": means, "step_ns": step_ns,
            }),
            advice: "The same function compiled to different HLO on some processes: give every \
                     process the same XLA_FLAGS, library versions, input shapes and shardings; \
                     compare a device of each program with njx-diff --by instruction; until \
                     then, njx-modules --program-key name analyses them together"
                .to_string(),
            command: "njx-modules --program-key name INPUTS".to_string(),
        });
    }
    if !fired {
        out.pass(
            RULE,
            "every module ran as one program on every device".to_string(),
        );
    }
}

/// P(X ≥ k) for X ~ Binomial(n, p): how likely a device is last `k` or more times of `n`
/// by chance alone, each device equally likely (the anchors' binomial test; evidence, not
/// a threshold).
fn binomial_tail(n: usize, k: usize, p: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if !(0.0..=1.0).contains(&p) || k > n {
        return 0.0;
    }
    // Σ_{i ≥ k} C(n, i) p^i (1 − p)^(n − i), each term in logs.
    let ln_choose = |i: usize| -> f64 {
        (1..=i)
            .map(|j| ((n - i + j) as f64).ln() - (j as f64).ln())
            .sum()
    };
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    (k..=n)
        .map(|i| {
            let q = if n - i == 0 { 0.0 } else { (n - i) as f64 * lq };
            (ln_choose(i) + i as f64 * lp + q).exp()
        })
        .sum::<f64>()
        .min(1.0)
}

/// The module time of every program with communication, summed.
fn whole_module_ns(comm: &BTreeMap<String, ProgramComm>) -> i64 {
    comm.values().map(|p| p.module_ns).sum()
}

/// What a rule reads of njx-thunks' `view` (steady state, every program, no cut): made
/// by `take` from the view's rows, or why njx-thunks refuses the aggregate.
fn thunk_view<T>(
    time: &crate::analysis::thunks::ThunkTime,
    view: crate::analysis::thunks::View,
    min_cv: f64,
    take: impl Fn(&crate::analysis::thunks::Rows<'_>) -> T,
) -> std::result::Result<T, String> {
    use crate::analysis::thunks;
    let options = thunks::Options {
        view,
        format: crate::output::Format::Table,
        top: None,
        top_modules: 1.0,
        include_warmup: false,
        min_cv,
        hlo: Vec::new(),
        partial: false,
        programs: Default::default(),
    };
    let quiet = crate::output::notes::Notes::kept();
    thunks::rows(time, &options, &[], &quiet)
        .map(|rows| take(&rows))
        .map_err(|e| format!("njx-thunks refuses the input: {e}"))
}

/// The report's section that shows the detail of a rule's findings (a section id of
/// [`crate::report::SECTIONS`], or the step's own, `step`).
pub fn section_of(rule: &str) -> &'static str {
    match rule {
        "exposed-communication" => "hidden-by-program",
        "straggler" | "barrier" => "stragglers-by-program",
        "compiled-differently" => "modules",
        "variability" => "variability",
        "gemm-efficiency" => "thunks",
        "small-collectives" | "low-bus-bandwidth" => "bandwidth",
        "compile-time" | "recompilation" => "compile",
        "memory" => "heap",
        "gpu-idle" | "short-kernels" | "sync-api" => "kernels",
        "sync-memcpy" | "pageable-memcpy" => "memops",
        _ => "step",
    }
}

/// What a finding could save, in words: per step, or over the profiled span where there
/// is no step (`"of": "span"` in its evidence); nothing for a finding about no step time
/// (start-up, memory, trust: a saving of 0).
pub fn saving_text(x: &Finding) -> String {
    if x.saving_ns == 0 {
        String::new()
    } else if x.evidence.get("of").and_then(Value::as_str) == Some("span") {
        format!(
            "could save up to {} over the profiled span ({:.1} % of it)",
            ms(x.saving_ns),
            x.share_pct
        )
    } else {
        format!(
            "could save up to {} per step ({:.1} %)",
            ms(x.saving_ns),
            x.share_pct
        )
    }
}

/// Sorts findings by saving, greatest first (then by rule).
pub fn rank(f: &mut Findings) {
    f.findings
        .sort_by(|a, b| b.saving_ns.cmp(&a.saving_ns).then(a.rule.cmp(b.rule)));
}

/// The findings for people: one or two lines each, then the rules that did not fire.
pub fn lines(f: &Findings) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, x) in f.findings.iter().enumerate() {
        let saving = match saving_text(x) {
            t if t.is_empty() => t,
            t => format!(" — {t}"),
        };
        lines.push(format!(
            "{}. [{}] {}: {}{saving}",
            i + 1,
            x.severity,
            x.rule,
            x.title,
        ));
        lines.push(format!("   {} ({})", x.advice, x.command));
    }
    if f.findings.is_empty() {
        lines.push("No finding.".to_string());
    }
    for q in &f.quiet {
        lines.push(format!("{} {}: {}", q.status, q.rule, q.why));
    }
    lines
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_binomial_tail_is_the_chance_of_being_last_that_often() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(super::binomial_tail(4, 4, 0.5), 0.0625));
        assert!(close(super::binomial_tail(4, 3, 0.5), 5.0 / 16.0));
        assert!(close(super::binomial_tail(10, 0, 0.25), 1.0));
        assert!(close(
            super::binomial_tail(3, 1, 0.25),
            1.0 - 0.75f64.powi(3)
        ));
        assert_eq!(super::binomial_tail(3, 4, 0.25), 0.0);
    }

    #[test]
    fn every_rule_links_to_a_section_that_exists() {
        for rule in super::RULES {
            let id = super::section_of(rule);
            assert!(
                id == "step" || crate::report::SECTIONS.iter().any(|s| s.0 == id),
                "{rule}: {id}"
            );
        }
    }
}
