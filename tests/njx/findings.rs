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
    /// On (device, execution), the fusion and so the module this many ns longer, the
    /// device's later executions that much later.
    slower: Option<(u32, u32, i64)>,
    /// A program `jit_big` after the steps: a 256 MiB all-reduce of 1,000 ns per
    /// execution (a bus bandwidth far above the step's 1 MB all-reduces).
    big: bool,
    /// Executions of `jit_step` per device (5 where 0).
    executions: u32,
    /// Device 1's steady executions of `jit_step` record no thunk (command buffers).
    no_thunks: bool,
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
        let executions = if plant.executions == 0 {
            5
        } else {
            plant.executions
        };
        for e in 0..executions {
            let (slower, shift) = match plant.slower {
                Some((d, at, ns)) if d == device && at == e => (ns, 0),
                Some((d, at, ns)) if d == device && e > at => (0, ns),
                _ => (0, 0),
            };
            let s = 1_000_000 + i64::from(e) * (10_000 + plant.gap + longer) + shift;
            let longer = longer + slower;
            modules.push(module(p1, "jit_step", e, s, 10_000 + longer));
            if plant.no_thunks && device == 1 && e > 0 {
                continue;
            }
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
        if plant.big {
            for e in 0..3u32 {
                let s = 3_000_000 + i64::from(e) * 100_000;
                modules.push(module("p3", "jit_big", e, s, 1_000));
                thunks.push(thunk(
                    "p3",
                    "jit_big",
                    e,
                    "all-reduce-start.9",
                    s,
                    1_000,
                    Some((0, 256 << 20)),
                ));
            }
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
    // What records do not carry (push/pop ranges, buffer assignments) leaves these
    // undecided, saying why.
    let of_profiles = ["compile-time", "recompilation", "memory", "gemm-efficiency"];
    for rule in njx::report::findings::RULES {
        // The rules of nsys's expert system read the CUDA activity tables, which records
        // do not carry either (tests/njx/findings_nsys.rs has them).
        let expected =
            if of_profiles.contains(&rule) || njx::report::findings::nsys::RULES.contains(&rule) {
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
    // Last in 4 of 4 with 2 devices: 1 chance in 16.
    assert_eq!(f[0]["evidence"]["p_value_last"], 0.0625);
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

/// njx-report's JSON of `paths` with `args` besides.
fn report_with_paths(paths: &[String], args: &[&str]) -> Value {
    let mut all = vec!["-q", "--format", "json"];
    all.extend_from_slice(args);
    all.extend(paths.iter().map(String::as_str));
    serde_json::from_str(&ok("njx-report", &all)).expect("one JSON object")
}

/// njx-report's JSON of `records` with `args` besides.
fn report_with(records: (String, String), args: &[&str]) -> Value {
    let dir = tempdir();
    let m = write(dir.path(), "modules.jsonl", records.0.as_bytes());
    let t = write(dir.path(), "thunks.jsonl", records.1.as_bytes());
    let mut all = vec!["-q", "--format", "json"];
    all.extend_from_slice(args);
    all.extend([m.as_str(), t.as_str()]);
    serde_json::from_str(&ok("njx-report", &all)).expect("one JSON object")
}

#[test]
fn one_slow_step_is_irregular_and_its_slow_thunk_varies_each_with_its_size() {
    // Device 1's execution 2: its fusion 8,000 ns longer, so is its step (18,000 ns).
    let rep = report_of(run(Plant {
        slower: Some((1, 2, 8_000)),
        ..Plant::default()
    }));
    assert_eq!(rep["step"]["step_ns"], 11_333, "68,000 ns over 6 steps");
    let f = fired(&rep, "irregular-steps");
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    // Its excess over its device's median (10,000), over the 6 steps.
    assert_eq!(f[0]["saving_ns"], 1_333);
    assert_eq!(f[0]["device"], 1);
    let one = &f[0]["evidence"]["irregular"];
    assert_eq!(one.as_array().unwrap().len(), 1, "{one}");
    assert_eq!(one[0]["execution"], 2);
    assert_eq!(one[0]["step_ns"], 18_000);
    assert_eq!(one[0]["median_ns"], 10_000);
    // fusion.1: 7 executions of 9,800 and one of 17,800 (cv 0.26): 8,000 ns above its
    // fastest, over 8 executions of the module.
    let v = fired(&rep, "variability");
    assert_eq!(v.len(), 1, "{}", rep["findings"]);
    assert_eq!(v[0]["key"], "fusion.1");
    assert_eq!(v[0]["saving_ns"], 1_000);
    assert_eq!(v[0]["evidence"]["thunks"][0]["fastest_ns"], 9_800);
    assert_eq!(v[0]["evidence"]["thunks"][0]["excess_ns"], 8_000);
    assert!(
        v[0]["command"]
            .as_str()
            .unwrap()
            .contains("--view variability")
    );
    // Healthy: both pass.
    let rep = report_of(run(Plant::default()));
    assert_eq!(quiet(&rep, "irregular-steps"), "passed");
    assert_eq!(quiet(&rep, "variability"), "passed");
}

#[test]
fn small_collectives_far_below_their_kinds_best_bandwidth_are_found_with_their_exposed_time() {
    // A 256 MiB all-reduce elsewhere reaches 268,435 GB/s; the step's 1 MB ones 1,000,
    // with 600 ns of each exposed.
    let rep = report_of(run(Plant {
        big: true,
        exposed: 500,
        ..Plant::default()
    }));
    let f = fired(&rep, "small-collectives");
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    assert_eq!(f[0]["saving_ns"], 600);
    assert_eq!(f[0]["evidence"]["per_kind"]["all-reduce"]["instances"], 4);
    let advice = f[0]["advice"].as_str().unwrap();
    assert!(advice.contains("--xla_gpu_all_reduce_combine_threshold_bytes"));
    // Without the large one, the step's are as fast as their kind gets.
    let rep = report_of(run(Plant {
        exposed: 500,
        ..Plant::default()
    }));
    assert_eq!(quiet(&rep, "small-collectives"), "passed");
}

#[test]
fn large_messages_under_half_the_links_peak_are_found_with_what_the_peak_would_save() {
    let slow = |peak: &str| {
        let peak = format!("low-bus-bandwidth.peak-gbps={peak}");
        report_with(
            run(Plant {
                exposed: 500,
                ..Plant::default()
            }),
            &[
                "--threshold",
                "low-bus-bandwidth.bytes=1000000",
                "--threshold",
                &peak,
            ],
        )
    };
    // 1,000 GB/s against 3,000: 600 ns exposed per step, 1/3 of it needed at the peak.
    let rep = slow("3000");
    let f = fired(&rep, "low-bus-bandwidth");
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    assert_eq!(f[0]["saving_ns"], 400);
    assert_eq!(f[0]["evidence"]["slow"][0]["busbw_mean_gbps"], 1000.0);
    assert_eq!(
        f[0]["evidence"]["peak_source"],
        "--threshold low-bus-bandwidth.peak-gbps"
    );
    // 1,000 of 1,500 is over half: passed.
    assert_eq!(quiet(&slow("1500"), "low-bus-bandwidth"), "passed");
    // Records say no GPU: without a peak given, undecided, saying how to give it.
    let rep = report_with(
        run(Plant::default()),
        &["--threshold", "low-bus-bandwidth.bytes=1000000"],
    );
    assert_eq!(quiet(&rep, "low-bus-bandwidth"), "undecided");
}

#[test]
fn too_few_steps_and_executions_without_thunks_are_what_the_figures_cannot_be_trusted_for() {
    let rep = report_of(run(Plant {
        executions: 3,
        ..Plant::default()
    }));
    let f = fired(&rep, "profile-trust");
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    assert_eq!(f[0]["evidence"]["fewest_steps"], 1);
    assert_eq!(f[0]["saving_ns"], 0);
    let rep = report_of(run(Plant {
        no_thunks: true,
        ..Plant::default()
    }));
    let f = fired(&rep, "profile-trust");
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    assert_eq!(f[0]["evidence"]["executions_without_thunks"], 4);
    assert_eq!(f[0]["evidence"]["executions"], 8);
    let title = f[0]["title"].as_str().unwrap();
    assert!(title.contains("4 of 8 steady executions"), "{title}");
    // Unknown thresholds are refused, naming the known ones.
    let dir = tempdir();
    let m = write(dir.path(), "m.jsonl", run(Plant::default()).0.as_bytes());
    let out = crate::common::run("njx-report", &["--threshold", "gap=1", &m], b"");
    assert_eq!(out.status.code(), Some(2));
    let e = stderr_of(&out);
    assert!(e.contains("gpu-idle.gap-ms"), "{e}");
}

#[test]
fn the_pax_runs_compilation_memory_and_bandwidth_figures_are_their_tools_figures() {
    let Some(pax) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let all = pax_archives(&pax);
    let rep = report_with_paths(
        &all,
        &[
            "--threshold",
            "moderate-pct=1",
            "--threshold",
            "memory.pct=30",
        ],
    );
    // compile-time: proc0's compilations, as njx-compile-summary sums them.
    let f = fired(&rep, "compile-time");
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    let summary = json_lines(&ok(
        "njx-compile-summary",
        &["--total", "--format", "json", &all[0]],
    ));
    assert_eq!(f[0]["evidence"]["profile"], "pax_fsdp4_4proc_proc0");
    assert_eq!(f[0]["evidence"]["compile_wall_ns"], summary[0]["wall_ns"]);
    assert_eq!(f[0]["evidence"]["compilations"], summary[0]["compilations"]);
    // memory: the step program's allocations, as njx-heap gives them, of the A100's 40 GB.
    let m = fired(&rep, "memory");
    assert_eq!(m.len(), 1, "{}", rep["findings"]);
    let heap = json_lines(&ok(
        "njx-heap",
        &["--view", "peak", "--format", "json", &all[0]],
    ));
    let step_heap = heap
        .iter()
        .find(|h| h["program"] == "pjit__wrapped_step_fn")
        .unwrap();
    assert_eq!(m[0]["evidence"]["total_bytes"], step_heap["total_bytes"]);
    assert_eq!(m[0]["evidence"]["gpu"], "NVIDIA A100-SXM4-40GB");
    // low-bus-bandwidth (from 1 % of the step): the bandwidth table's means.
    let b = fired(&rep, "low-bus-bandwidth");
    assert_eq!(b.len(), 1, "{}", rep["findings"]);
    let mut args = vec!["--table", "bandwidth", "--format", "json"];
    args.extend(all.iter().map(String::as_str));
    let table = json_lines(&ok("njx-collectives", &args));
    for slow in b[0]["evidence"]["slow"].as_array().unwrap() {
        let row = table
            .iter()
            .find(|r| {
                r["collective"] == slow["collective"] && r["message_bytes"] == slow["message_bytes"]
            })
            .unwrap_or_else(|| panic!("{slow} in the bandwidth table"));
        let (a, t) = (
            slow["busbw_mean_gbps"].as_f64().unwrap(),
            row["busbw_mean_gbps"].as_f64().unwrap(),
        );
        assert!((a - t).abs() <= 1e-9 * t, "{a} {t}");
    }
    assert_eq!(b[0]["evidence"]["peak_gbps"], 300.0);
}

#[test]
fn the_step_module_compiled_again_mid_run_is_a_recompilation_costing_its_time() {
    let Some(pax) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let all = pax_archives(&pax);
    let quiet_on = |rep: &Value| {
        fired(rep, "recompilation")
            .iter()
            .all(|f| f["key"] != "pjit__wrapped_step_fn")
    };
    assert!(quiet_on(&report_json(&all)), "the run as it is");
    // proc0 compiles the step module again, 40 ms, 1 µs into its first steady execution.
    let modules = json_lines(&ok("njx-export", &["--table", "modules", &all[0]]));
    let first = (modules.iter())
        .filter(|m| m["name"] == "pjit__wrapped_step_fn" && m["execution"] == 1)
        .map(|m| m["start_ns"].as_i64().unwrap())
        .min()
        .unwrap();
    let (s, d) = (first + 1_000, 40_000_000);
    let name = "TSL:XlaCompile:#module=pjit__wrapped_step_fn,program_id=77#";
    let row = format!(
        "{s},{},{d},0,{d},\"{name}\",4242,4242,0,0,10000000,,:10000000,\"{name}\"",
        s + d
    );
    let dir = tempdir();
    let planted = dir.path().join("proc0.zip");
    crate::common::plant::add_ranges(std::path::Path::new(&all[0]), &planted, &[row]);
    let mut inputs = vec![planted.display().to_string()];
    inputs.extend(all[1..].iter().cloned());
    let rep = report_json(&inputs);
    let f: Vec<&Value> = fired(&rep, "recompilation")
        .into_iter()
        .filter(|f| f["key"] == "pjit__wrapped_step_fn")
        .collect();
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    assert_eq!(f[0]["evidence"]["wall_ns"], d);
    // 40 ms over the 8 steps (2 on each of 4 devices).
    assert_eq!(rep["step"]["steps"], 8);
    assert_eq!(f[0]["saving_ns"], d / 8);
}

#[test]
fn njx_diff_findings_says_what_appeared_went_and_changed() {
    let dir = tempdir();
    let side = |name: &str, plant: Plant| {
        let (m, t) = run(plant);
        [
            write(dir.path(), &format!("{name}.modules.jsonl"), m.as_bytes()),
            write(dir.path(), &format!("{name}.thunks.jsonl"), t.as_bytes()),
        ]
    };
    let before = side(
        "before",
        Plant {
            idle: 2_000,
            ..Plant::default()
        },
    );
    let after = side(
        "after",
        Plant {
            gap: 1_000,
            idle: 1_000,
            ..Plant::default()
        },
    );
    let diff = |b: &[String; 2], a: &[String; 2]| {
        json_lines(&ok(
            "njx-diff",
            &[
                "-q",
                "--findings",
                "--format",
                "json",
                &b[0],
                &b[1],
                "--vs",
                &a[0],
                &a[1],
            ],
        ))
    };
    let changes = diff(&before, &after);
    let of = |rule: &str| {
        changes
            .iter()
            .find(|c| c["rule"] == rule)
            .unwrap_or_else(|| panic!("{rule} in {changes:?}"))
    };
    assert_eq!(of("host-gaps")["change"], "appeared");
    assert_eq!(of("host-gaps")["after_saving_ns"], 1_000);
    assert_eq!(of("host-gaps")["before_saving_ns"], Value::Null);
    // Idle inside the module: 2,100 ns of a 10,000 ns step before, 1,100 of 11,000 after.
    assert_eq!(of("idle-in-module")["change"], "changed");
    assert_eq!(of("idle-in-module")["before_saving_ns"], 2_100);
    assert_eq!(of("idle-in-module")["after_saving_ns"], 1_100);
    // A run against itself: every finding the same.
    let same = diff(&before, &before);
    assert!(!same.is_empty());
    assert!(same.iter().all(|c| c["change"] == "same"), "{same:?}");
    // And one that went.
    let went = diff(&after, &before);
    assert_eq!(
        went.iter().find(|c| c["rule"] == "host-gaps").unwrap()["change"],
        "went"
    );
}

#[test]
fn the_pax_runs_gemms_are_judged_against_the_a100s_bf16_peak_with_njx_thunks_times() {
    let Some(pax) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let all = pax_archives(&pax);
    // By default none takes 5 % of the step: passed.
    assert_eq!(quiet(&report_json(&all), "gemm-efficiency"), "passed");
    // From 1 % of the step, against 100 % of the peak: every one judged falls short.
    let rep = report_with_paths(
        &all,
        &[
            "--threshold",
            "gemm-efficiency.step-pct=1",
            "--threshold",
            "gemm-efficiency.pct=100",
        ],
    );
    let f = fired(&rep, "gemm-efficiency");
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    let gemms = f[0]["evidence"]["gemms"].as_array().unwrap();
    assert_eq!(gemms.len(), 5, "{gemms:?}");
    let mut args = vec!["--format", "json", "--top-modules", "1"];
    args.extend(all.iter().map(String::as_str));
    let top = json_lines(&ok("njx-thunks", &args));
    for g in gemms {
        assert_eq!(g["dtype"], "bf16");
        assert_eq!(g["peak_tflops"], 312.0);
        let row = (top.iter())
            .find(|r| r["thunk"] == g["thunk"] && r["module"] == "pjit__wrapped_step_fn")
            .unwrap_or_else(|| panic!("{g} in njx-thunks"));
        assert_eq!(
            g["mean_ns"].as_f64().unwrap().round(),
            row["mean_ns"].as_f64().unwrap()
        );
        let reached = g["flops"].as_f64().unwrap() / g["mean_ns"].as_f64().unwrap() / 1000.0;
        assert!((reached - g["tflops"].as_f64().unwrap()).abs() < 1e-9);
        assert!(reached < 312.0 && reached > 50.0, "{g}");
    }
}

/// `device-metadata.parquet` as nsys-jax writes it (pandas names nsys' `TARGET_INFO_GPU`
/// columns by tuples, as the pax archives have them): one GPU.
fn device_metadata(name: &str, memory: i64) -> Vec<u8> {
    use crate::common::pq::{parquet_table, pq_int, pq_text};
    parquet_table(
        &[
            pq_int("('TARGET_INFO_GPU', 'id')", &[Some(0)]),
            pq_text("('TARGET_INFO_GPU', 'name')", &[Some(name)]),
            pq_int("('TARGET_INFO_GPU', 'totalMemory')", &[Some(memory)]),
        ],
        1 << 20,
    )
}

#[test]
fn the_pax_step_program_on_a_gpu_of_16_gib_has_little_headroom() {
    let Some(pax) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let all = pax_archives(&pax);
    let dir = tempdir();
    // Every rank's GPU said to have 16 GiB (an A100 of 40 GB in truth).
    let small = 16i64 << 30;
    let planted: Vec<String> = all
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let dst = dir.path().join(format!("proc{i}.zip"));
            crate::common::plant::replace_member(
                std::path::Path::new(a),
                &dst,
                "device-metadata.parquet",
                device_metadata("NVIDIA A100-SXM4-16GB", small),
            );
            dst.display().to_string()
        })
        .collect();
    let rep = report_json(&planted);
    let f = fired(&rep, "memory");
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    let heap = json_lines(&ok(
        "njx-heap",
        &["--view", "peak", "--format", "json", &all[0]],
    ));
    let total = heap
        .iter()
        .find(|h| h["program"] == "pjit__wrapped_step_fn")
        .unwrap()["total_bytes"]
        .as_i64()
        .unwrap();
    assert_eq!(f[0]["evidence"]["total_bytes"], total);
    assert_eq!(f[0]["evidence"]["device_memory_bytes"], small);
    let pct = f[0]["evidence"]["memory_pct"].as_f64().unwrap();
    assert!((pct - 100.0 * total as f64 / small as f64).abs() < 1e-9);
    assert_eq!(f[0]["saving_ns"], 0);
    // The archives as they are: 39 % of 40 GB, passed.
    assert_eq!(quiet(&report_json(&all), "memory"), "passed");
}

#[test]
fn a_gemm_made_ten_times_slower_on_the_pax_run_is_found_with_what_the_peak_would_save() {
    let Some(pax) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let all = pax_archives(&pax);
    let dir = tempdir();
    const GEMM: &str = "custom-call.219.0";
    let plant = [crate::common::plant::Plant::shifted(
        Some("pjit__wrapped_step_fn"),
        GEMM,
        10.0,
    )];
    let planted: Vec<String> = all
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let dst = dir.path().join(format!("proc{i}.zip"));
            crate::common::plant::plant_archive(std::path::Path::new(a), &dst, &plant);
            dst.display().to_string()
        })
        .collect();
    let rep = report_json(&planted);
    let f = fired(&rep, "gemm-efficiency");
    assert_eq!(f.len(), 1, "{}", rep["findings"]);
    assert_eq!(f[0]["key"], GEMM);
    let gemms = f[0]["evidence"]["gemms"].as_array().unwrap();
    assert_eq!(gemms.len(), 1, "only the planted one: {gemms:?}");
    // Its time per step and what the peak would take, from njx-thunks' figures.
    let mut args = vec!["--format", "json", "--top-modules", "1"];
    args.extend(planted.iter().map(String::as_str));
    let top = json_lines(&ok("njx-thunks", &args));
    let row = top.iter().find(|r| r["thunk"] == GEMM).unwrap();
    let g = &gemms[0];
    assert_eq!(
        g["mean_ns"].as_f64().unwrap().round(),
        row["mean_ns"].as_f64().unwrap()
    );
    let step = &rep["step"];
    let execs =
        step["steps"].as_f64().unwrap() + step["per_device"].as_array().unwrap().len() as f64;
    let per_step = row["total_ns"].as_f64().unwrap() / execs;
    let at_peak = row["executions"].as_f64().unwrap() * g["flops"].as_f64().unwrap()
        / (312.0 * 1000.0)
        / execs;
    assert_eq!(
        f[0]["saving_ns"].as_i64().unwrap(),
        (per_step - at_peak).round() as i64
    );
    // A tenth of what it reached unplanted (83 % of the peak): under 40 %.
    assert!(g["tflops"].as_f64().unwrap() < 0.1 * 312.0, "{g}");
}
