//! Findings (issue 40, its first rules): each found with its planted size in records of
//! known times, and silent on a healthy run; the pax run's findings.

use crate::common::*;
use serde_json::{Value, json};

/// What to plant in [`run`]: ns between steps, ns taken from the compute thunk (left idle
/// inside the module), ns of the all-reduce left exposed, and a 4-byte barrier program.
#[derive(Default, Clone, Copy)]
struct Plant {
    gap: i64,
    idle: i64,
    exposed: i64,
    barrier: bool,
    /// ns device 1 arrives late at each all-reduce (device 0 waits: its exposed time grows).
    late: i64,
    /// Device 1 runs `jit_step` as another program (p1b), its modules this many ns longer.
    variant: Option<i64>,
}

/// Two devices, `jit_step` executions 0–4 back to back, 10,000 ns each: a 9,800 ns fusion
/// then an all-reduce of 1,000 ns, 900 of them hidden (100 exposed): a healthy step
/// (1 % idle in the module, 1 % exposed). With `plant`, its causes.
fn run(plant: Plant) -> (String, String) {
    let (mut modules, mut thunks) = (Vec::new(), Vec::new());
    for device in 0..2u32 {
        let module = |program: &str, name: &str, e: u32, start: i64, dur: i64| {
            json!({"profile": format!("rank{device}"), "program": program, "program_id": 1,
                "name": name, "execution": e, "device": device, "start_ns": start,
                "dur_ns": dur, "thunks": 2, "warmup": e == 0, "autotuning": false})
            .to_string()
        };
        let thunk = |program: &str,
                     name: &str,
                     e: u32,
                     t: &str,
                     start: i64,
                     dur: i64,
                     comm: Option<(i64, u64)>| {
            json!({"profile": format!("rank{device}"), "program": program, "program_id": 1,
                "module": name, "execution": e, "device": device, "name": t,
                "thunk_execution": 0, "start_ns": start, "dur_ns": dur,
                "hidden_ns": comm.map_or(0, |c| c.0), "comm": comm.is_some(), "warmup": e == 0,
                "collective": if comm.is_some() { json!("all-reduce") } else { Value::Null },
                "group_size": if comm.is_some() { json!(2) } else { Value::Null },
                "message_bytes": comm.map(|c| c.1)})
            .to_string()
        };
        let (p1, longer) = match plant.variant {
            Some(ns) if device == 1 => ("p1b", ns),
            _ => ("p1", 0),
        };
        for e in 0..5u32 {
            let s = 1_000_000 + i64::from(e) * (10_000 + plant.gap + longer);
            modules.push(module(p1, "jit_step", e, s, 10_000 + longer));
            let wait = if device == 0 { plant.late } else { 0 };
            let fusion = 9_800 - plant.idle - plant.exposed - wait + longer;
            thunks.push(thunk(p1, "jit_step", e, "fusion.1", s, fusion, None));
            let (exposed, hidden) = (100 + plant.exposed + wait, 900 - plant.exposed.min(900));
            thunks.push(thunk(
                p1,
                "jit_step",
                e,
                "all-reduce-start",
                s + 10_000 + longer - exposed,
                exposed,
                Some((hidden, 1_000_000)),
            ));
        }
        if plant.barrier {
            // After the steps: device 0 arrives 50,000 ns late, device 1 waits for it.
            for e in 0..4u32 {
                let s = 2_000_000 + i64::from(e) * 100_000;
                let wait = if device == 1 { 50_000 } else { 0 };
                modules.push(module("p2", "jit__psum", e, s, 1_000 + wait));
                thunks.push(thunk(
                    "p2",
                    "jit__psum",
                    e,
                    "all-reduce-start",
                    s,
                    1_000 + wait,
                    Some((0, 4)),
                ));
            }
        }
    }
    (modules.join("\n") + "\n", thunks.join("\n") + "\n")
}

/// njx-report's JSON of `records`.
fn report_of(records: (String, String)) -> Value {
    report_of_records(&records.0, &records.1)
}

fn fired<'a>(rep: &'a Value, rule: &str) -> Vec<&'a Value> {
    rep["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .collect()
}

fn quiet(rep: &Value, rule: &str) -> String {
    rep["rules_quiet"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["rule"] == rule)
        .map(|q| q["status"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

#[test]
fn a_healthy_run_has_no_finding_and_every_rule_says_it_passed() {
    let rep = report_of(run(Plant::default()));
    assert_eq!(rep["step"]["step_ns"], 10_000);
    assert_eq!(rep["findings"], json!([]), "{}", rep["findings"]);
    for rule in njx::report::findings::RULES {
        // The rules of nsys's expert system read the CUDA activity tables, which records
        // do not carry: undecided, saying so (tests/njx/findings_nsys.rs has them).
        let expected = if njx::report::findings::nsys::RULES.contains(&rule) {
            "undecided"
        } else {
            "passed"
        };
        assert_eq!(
            quiet(&rep, rule),
            expected,
            "{rule}: {}",
            rep["rules_quiet"]
        );
    }
}

#[test]
fn a_gap_between_steps_is_a_host_gap_of_its_size() {
    let rep = report_of(run(Plant {
        gap: 1_000,
        ..Plant::default()
    }));
    let f = fired(&rep, "host-gaps");
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    assert_eq!(f[0]["saving_ns"], 1_000);
    assert_eq!(f[0]["severity"], "moderate");
    assert!((f[0]["share_pct"].as_f64().unwrap() - 100.0 / 11.0).abs() < 1e-9);
    assert!(
        f[0]["command"]
            .as_str()
            .unwrap()
            .starts_with("njx-timeline")
    );
    assert_eq!(rep["findings"].as_array().unwrap().len(), 1);
}

#[test]
fn idle_planted_inside_the_module_is_found_with_its_size() {
    // 2,000 ns of the fusion taken away: 2,100 idle in each module (100 there already).
    let rep = report_of(run(Plant {
        idle: 2_000,
        ..Plant::default()
    }));
    let f = fired(&rep, "idle-in-module");
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    assert_eq!(f[0]["saving_ns"], 2_100);
    assert_eq!(f[0]["severity"], "high");
    assert!(
        f[0]["advice"]
            .as_str()
            .unwrap()
            .contains("--xla_gpu_enable_command_buffer")
    );
}

#[test]
fn communication_left_exposed_is_found_per_kind_with_its_size() {
    // 900 ns more of the all-reduce exposed (none hidden): 1,000 exposed per step.
    let rep = report_of(run(Plant {
        exposed: 900,
        ..Plant::default()
    }));
    let f = fired(&rep, "exposed-communication");
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    assert_eq!(f[0]["key"], "all-reduce");
    assert_eq!(f[0]["saving_ns"], 1_000);
    assert_eq!(rep["step"]["exposed_communication_ns"], 1_000);
    let advice = f[0]["advice"].as_str().unwrap();
    assert!(
        advice.contains("--xla_gpu_enable_pipelined_all_reduce=true"),
        "{advice}"
    );
}

#[test]
fn a_tiny_collective_that_only_waits_is_a_barrier_waiting_for_its_late_device() {
    let rep = report_of(run(Plant {
        barrier: true,
        ..Plant::default()
    }));
    let f = fired(&rep, "barrier");
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    assert_eq!(f[0]["key"], "jit__psum");
    assert_eq!(f[0]["device"], 0, "device 0 arrives last");
    // Outside the steps: nothing to save in them.
    assert_eq!(f[0]["saving_ns"], 0);
    let title = f[0]["title"].as_str().unwrap();
    assert!(title.contains("at most 4 B"), "{title}");
    // The step is still the training step's, and healthy.
    assert_eq!(rep["step"]["module"], "jit_step");
    assert_eq!(rep["findings"].as_array().unwrap().len(), 1);
}

#[test]
fn the_pax_run_finds_the_barrier_and_the_host_gaps() {
    let Some(pax) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let all = pax_archives(&pax);
    let rep = report_json(&all);
    let barrier = fired(&rep, "barrier");
    assert_eq!(barrier.len(), 1, "{}", rep["findings"]);
    assert_eq!(barrier[0]["key"], "jit__psum");
    assert_eq!(barrier[0]["device"], 0);
    let gaps = fired(&rep, "host-gaps");
    assert_eq!(gaps.len(), 1, "{}", rep["findings"]);
    assert_eq!(gaps[0]["saving_ns"], rep["step"]["idle_between_modules_ns"]);
    assert_eq!(quiet(&rep, "exposed-communication"), "passed");
    // Device 3's compilation of the step, apart from devices 0-2's.
    let apart = fired(&rep, "compiled-differently");
    assert_eq!(apart.len(), 1, "{}", rep["findings"]);
    assert_eq!(apart[0]["key"], "pjit__wrapped_step_fn");
    let per = |d: usize| rep["step"]["per_device"][d]["step_ns"].as_i64().unwrap();
    assert_eq!(
        apart[0]["saving_ns"].as_i64().unwrap(),
        ((per(0) + per(1) + per(2)) / 3 - per(3)).abs()
    );
}

#[test]
fn a_device_late_at_every_collective_is_a_straggler_costing_its_lateness() {
    // Device 1 arrives 1,000 ns late at every all-reduce: device 0 waits that long.
    let rep = report_of(run(Plant {
        late: 1_000,
        ..Plant::default()
    }));
    let f = fired(&rep, "straggler");
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    assert_eq!(f[0]["device"], 1);
    assert_eq!(f[0]["saving_ns"], 1_000);
    assert_eq!(f[0]["evidence"]["last"], 4);
    assert!(
        f[0]["title"]
            .as_str()
            .unwrap()
            .contains("in 4 of 4 instances")
    );
    // Healthy: passed, with the figure it judged.
    let rep = report_of(run(Plant::default()));
    assert_eq!(quiet(&rep, "straggler"), "passed");
}

#[test]
fn a_module_compiled_differently_on_a_device_is_found_with_its_cost() {
    // Device 1 runs jit_step as p1b, 500 ns slower per step.
    let rep = report_of(run(Plant {
        variant: Some(500),
        ..Plant::default()
    }));
    let f = fired(&rep, "compiled-differently");
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    assert_eq!(f[0]["key"], "jit_step");
    assert_eq!(f[0]["saving_ns"], 500);
    assert_eq!(f[0]["evidence"]["programs"], json!({"p1": [0], "p1b": [1]}));
    // One step still: by module name, on both devices.
    assert_eq!(rep["step"]["per_device"].as_array().unwrap().len(), 2);
    let rep = report_of(run(Plant::default()));
    assert_eq!(quiet(&rep, "compiled-differently"), "passed");
}
