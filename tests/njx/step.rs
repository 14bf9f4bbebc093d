//! The step (issue 40): the main program's steps per device, their parts adding up to the
//! nanosecond, on records built with known times, with a gap planted between steps, and
//! on the real pax run (directly and reduced from partial results).

use crate::common::*;
use serde_json::{Value, json};

/// Module and thunk records of two devices: `jit_step` (program p1) executions 0–3 every
/// 20,000 ns from 1,000,000 (execution 0 warm-up), each 8,000 ns long with thunks of
/// 3,000 + 2,000 ns compute and 1,000 ns exposed communication (500 hidden); and
/// `jit_other` (p2) 10,000 ns into each, 2,000 ns long with 1,500 ns of compute.
/// Executions from `from` on are `gap` ns later on the devices of `on`.
fn records(gap: i64, from: u32, on: &[u32]) -> (String, String) {
    let (mut modules, mut thunks) = (Vec::new(), Vec::new());
    for device in 0..2u32 {
        for e in 0..4u32 {
            let shift = if e >= from && on.contains(&device) {
                gap
            } else {
                0
            };
            let s = 1_000_000 + 20_000 * i64::from(e) + shift;
            let module = |program: &str, id: u64, name: &str, start: i64, dur: i64, n: u32| {
                json!({"profile": format!("rank{device}"), "program": program, "program_id": id,
                    "name": name, "execution": e, "device": device, "start_ns": start,
                    "dur_ns": dur, "thunks": n, "warmup": e == 0, "autotuning": false})
                .to_string()
            };
            let thunk =
                |program: &str, name: &str, thunk: &str, start: i64, dur: i64, hidden: i64| {
                    let comm = hidden > 0;
                    json!({"profile": format!("rank{device}"), "program": program, "program_id": 1,
                    "module": name, "execution": e, "device": device, "name": thunk,
                    "thunk_execution": 0, "start_ns": start, "dur_ns": dur, "hidden_ns": hidden,
                    "comm": comm, "warmup": e == 0,
                    "collective": if comm { json!("all-reduce") } else { Value::Null },
                    "group_size": if comm { json!(2) } else { Value::Null },
                    "message_bytes": if comm { json!(1_000_000) } else { Value::Null }})
                    .to_string()
                };
            modules.push(module("p1", 1, "jit_step", s, 8000, 3));
            thunks.push(thunk("p1", "jit_step", "fusion.1", s, 3000, 0));
            thunks.push(thunk(
                "p1",
                "jit_step",
                "all-reduce-start",
                s + 3000,
                1000,
                500,
            ));
            thunks.push(thunk("p1", "jit_step", "fusion.2", s + 4500, 2000, 0));
            modules.push(module("p2", 2, "jit_other", s + 10_000, 2000, 1));
            thunks.push(thunk("p2", "jit_other", "fusion.9", s + 10_000, 1500, 0));
        }
    }
    (modules.join("\n") + "\n", thunks.join("\n") + "\n")
}

/// njx-report's `step` of `records`.
fn step_of(records: (String, String)) -> Value {
    report_of_records(&records.0, &records.1)["step"].clone()
}

/// The four parts add up to the step.
fn adds_up(f: &Value) {
    let part = |k: &str| f[k].as_i64().unwrap();
    assert_eq!(
        part("compute_ns")
            + part("exposed_communication_ns")
            + part("idle_in_modules_ns")
            + part("idle_between_modules_ns"),
        part("step_ns"),
        "{f}"
    );
}

#[test]
fn a_step_of_known_times_has_known_parts() {
    let step = step_of(records(0, 0, &[]));
    assert_eq!(step["module"], "jit_step");
    assert_eq!(step["program"], "p1");
    // Executions 1, 2, 3 in steady state: two steps on each of two devices.
    assert_eq!(step["steps"], 4);
    assert_eq!(step["per_device"].as_array().unwrap().len(), 2);
    // 20,000 ns: the modules' span 8,000 + 2,000; compute 5,000 + 1,500, exposed 1,000.
    assert_eq!(step["step_ns"], 20_000);
    assert_eq!(step["compute_ns"], 6_500);
    assert_eq!(step["exposed_communication_ns"], 1_000);
    assert_eq!(step["idle_in_modules_ns"], 2_500);
    assert_eq!(step["idle_between_modules_ns"], 10_000);
    assert_eq!(
        step["other_programs"],
        json!([{"name": "jit_other", "ns": 2000}])
    );
    adds_up(&step);
    for d in step["per_device"].as_array().unwrap() {
        adds_up(d);
    }
}

#[test]
fn a_gap_planted_between_steps_is_found_with_its_size() {
    // 7,000 ns more before execution 2 on device 1 only: its first step is 7,000 longer,
    // all of it GPU idle between modules; device 0 is untouched.
    let step = step_of(records(7_000, 2, &[1]));
    let dev = |d: usize| step["per_device"][d].clone();
    assert_eq!(dev(0)["idle_between_modules_ns"], 10_000);
    assert_eq!(dev(1)["idle_between_modules_ns"], 10_000 + 3_500);
    assert_eq!(dev(1)["step_max_ns"], 27_000);
    assert_eq!(dev(1)["compute_ns"], 6_500);
    assert_eq!(step["step_max_ns"], 27_000);
    assert_eq!(step["step_max_device"], 1);
    adds_up(&step);
    adds_up(&dev(1));
    // On every device: the mean step and its idle between grow by half the gap each.
    let step = step_of(records(7_000, 2, &[0, 1]));
    assert_eq!(step["step_ns"], 23_500);
    assert_eq!(step["idle_between_modules_ns"], 13_500);
    assert_eq!(step["compute_ns"], 6_500);
}

#[test]
fn too_few_steps_and_profiles_without_xla_say_why() {
    // Only executions 0 and 1: one steady execution per device, no whole step.
    let (m, t) = records(0, 0, &[]);
    let keep = |text: &str| {
        text.lines()
            .filter(|l| l.contains("\"execution\":0,") || l.contains("\"execution\":1,"))
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    };
    let dir = tempdir();
    let m = write(dir.path(), "modules.jsonl", keep(&m).as_bytes());
    let t = write(dir.path(), "thunks.jsonl", keep(&t).as_bytes());
    let out = ok("njx-report", &["-q", "--format", "json", &m, &t]);
    let rep: Value = serde_json::from_str(&out).unwrap();
    assert!(rep["step"].is_null());
    assert!(
        rep["step_absent"]
            .as_str()
            .unwrap()
            .contains("fewer than two steady executions of module jit_step"),
        "{rep}"
    );
    let text = ok("njx-report", &["-q", &m, &t]);
    assert!(
        text.contains("== The step ==\nNo step: fewer than two"),
        "{text}"
    );
}

#[test]
fn the_pax_step_adds_up_and_partials_give_the_same() {
    let Some(pax) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let all = pax_archives(&pax);
    let rep = report_json(&all);
    let step = &rep["step"];
    // The training step, not the barrier that takes 84 % of the module time.
    assert_eq!(step["module"], "pjit__wrapped_step_fn");
    assert_eq!(step["per_device"].as_array().unwrap().len(), 4);
    adds_up(step);
    for d in step["per_device"].as_array().unwrap() {
        adds_up(d);
        assert_eq!(d["steps"], 2);
    }
    // 126.5 ms of module time in a step of about 131 ms.
    let ms = |k: &str| step[k].as_f64().unwrap() / 1e6;
    assert!((125.0..140.0).contains(&ms("step_ns")), "{step}");
    assert!(ms("compute_ns") > 100.0, "{step}");
    // Reduced from one partial result per rank: the same step.
    let dir = tempdir();
    let mut partials = Vec::new();
    for (i, a) in all.iter().enumerate() {
        let p = dir.path().join(format!("rank{i}.partial"));
        ok(
            "njx-report",
            &["-q", "--partial", "-o", p.to_str().unwrap(), a],
        );
        partials.push(p.to_str().unwrap().to_string());
    }
    let reduced = report_json(&partials);
    assert_eq!(reduced["step"], *step);
    // And the same findings: partial results carry what every rule needs.
    assert_eq!(reduced["findings"], rep["findings"]);
    assert_eq!(reduced["rules_quiet"], rep["rules_quiet"]);
}

#[test]
fn degenerate_steps_still_add_up_or_say_why() {
    let (m, t) = records(0, 0, &[]);
    // Overlapping modules: jit_other starts inside jit_step (2,000 ns in, not 10,000), and
    // its compute overlaps the step's on another stream: counted once, capped at the span.
    let overlapped = (
        m.replace("\"start_ns\":1030000,", "\"start_ns\":1022000,"),
        t,
    );
    let step = step_of(overlapped.clone());
    adds_up(&step);
    for d in step["per_device"].as_array().unwrap() {
        adds_up(d);
    }
    // Device 1 with only one steady execution: left out; device 0 keeps its steps.
    let lone = |text: &str| {
        text.lines()
            .filter(|l| {
                !(l.contains("\"device\":1,")
                    && l.contains("\"jit_step\"")
                    && (l.contains("\"execution\":2,") || l.contains("\"execution\":3,")))
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    };
    let (m, t) = records(0, 0, &[]);
    let step = step_of((lone(&m), lone(&t)));
    let devices: Vec<u64> = step["per_device"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["device"].as_u64().unwrap())
        .collect();
    assert_eq!(devices, [0]);
    adds_up(&step);
    // Every steady execution at one time (zero-length steps): no step, said.
    let (m, t) = records(0, 0, &[]);
    let same = |text: &str| {
        text.replace("\"start_ns\":1040000,", "\"start_ns\":1020000,")
            .replace("\"start_ns\":1060000,", "\"start_ns\":1020000,")
    };
    let rep = report_of_records(&same(&m), &same(&t));
    assert!(rep["step"].is_null(), "{}", rep["step"]);
    assert!(rep["step_absent"].as_str().is_some());
}
