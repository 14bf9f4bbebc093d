//! `njx-thunks` through the built binary: the three views on the records and XLA dump of
//! `flamefold`'s fixture and on records made here with varying durations (every number
//! worked out by hand), partial results, the error paths, and conformance with
//! `njx-flamefold` on the real pax archives.

use crate::common::*;
use crate::flamefold::{FP, folded, gpu_fixture, hlo_dump};
use serde_json::{Value, json};
use std::collections::BTreeMap;

fn rows(args: &[&str]) -> (Vec<Value>, String) {
    let out = run("njx-thunks", args, b"");
    assert!(out.status.success(), "{}", stderr_of(&out));
    (
        json_lines(&String::from_utf8_lossy(&out.stdout)),
        stderr_of(&out),
    )
}

fn close(got: &Value, want: f64) -> bool {
    (got.as_f64().unwrap() - want).abs() < 1e-6 * want.abs().max(1.0)
}

/// Steady state of flamefold's fixture: 2 devices × 2 executions of jit_f; fusion.1 800
/// µs, custom-call.2 400, copy.3 200 (1400 in all), `small` left out (under 1%).
#[test]
fn top_view_lists_thunks_with_op_names_and_shares() {
    let (_dir, m, t, dump) = gpu_fixture();
    let (got, err) = rows(&["--format", "json", &m, &t, "--hlo", &dump]);
    assert_eq!(got.len(), 3, "{got:?}");
    let want = [
        ("fusion.1", "jit(f)/mul", "fusion", 800_000, 400.0 / 7.0),
        (
            "custom-call.2",
            "jit(f)/dot",
            "custom-call",
            400_000,
            200.0 / 7.0,
        ),
        ("copy.3", "", "copy", 200_000, 100.0 / 7.0),
    ];
    for (row, (thunk, op_name, opcode, total, percent)) in got.iter().zip(want) {
        assert_eq!(row["program"], FP);
        assert_eq!(row["module"], "jit_f");
        assert_eq!(row["thunk"], thunk);
        assert_eq!(row["op_name"], op_name);
        assert_eq!(row["opcode"], opcode);
        assert_eq!(row["executions"], 4);
        assert_eq!(row["total_ns"], total);
        assert!(close(&row["mean_ns"], total as f64 / 4.0), "{row}");
        assert!(close(&row["percent"], percent), "{row}");
    }
    assert!(err.contains("1 of 2 programs"), "{err}");
    // Without dumps: no op_name or opcode, the same times; --top cuts.
    let (got, _) = rows(&["--format", "json", "--top", "1", &m, &t]);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["thunk"], "fusion.1");
    assert!(got[0]["op_name"].is_null() && got[0]["opcode"].is_null());
    // --include-warmup and --top-modules 1: executions 0 and `small` too.
    let (got, _) = rows(&[
        "--format",
        "json",
        "--include-warmup",
        "--top-modules",
        "1",
        &m,
        &t,
    ]);
    let by: BTreeMap<&str, &Value> = got
        .iter()
        .map(|r| (r["thunk"].as_str().unwrap(), r))
        .collect();
    assert_eq!(by["fusion.1"]["executions"], 6);
    assert_eq!(by["fusion.1"]["total_ns"], 1_200_000);
    assert_eq!(by["fusion.9"]["total_ns"], 20_000);
}

/// Module time 2400 µs, thunks 1400: 1000 µs idle during modules, shares of 2400.
#[test]
fn opcode_view_adds_the_idle_time_during_modules() {
    let (_dir, m, t, dump) = gpu_fixture();
    let (got, _) = rows(&[
        "--view", "opcode", "--format", "json", &m, &t, "--hlo", &dump,
    ]);
    let want = [
        ("[GPU idle during module execution]", 0, 1_000_000),
        ("fusion", 1, 800_000),
        ("custom-call", 1, 400_000),
        ("copy", 1, 200_000),
    ];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (row, (opcode, thunks, total)) in got.iter().zip(want) {
        assert_eq!(row["opcode"], opcode);
        assert_eq!(row["thunks"], thunks);
        assert_eq!(row["total_ns"], total);
        assert!(
            close(&row["percent"], 100.0 * total as f64 / 2_400_000.0),
            "{row}"
        );
    }
    // The same time as njx-flamefold --by opcode.
    let stacks = folded(&ok(
        "njx-flamefold",
        &["--by", "opcode", &m, &t, "--hlo", &dump],
    ));
    for row in &got {
        let opcode = row["opcode"].as_str().unwrap();
        let stack = if opcode.starts_with('[') {
            opcode.to_string()
        } else {
            format!("[GPU active];{opcode}")
        };
        assert_eq!(
            row["total_ns"].as_u64(),
            stacks.get(&stack).copied(),
            "{stack}"
        );
    }
    // For people: a table with the header and the idle row first.
    let text = ok("njx-thunks", &["--view", "opcode", &m, &t, "--hlo", &dump]);
    let mut lines = text.lines();
    assert!(lines.next().unwrap().contains("percent"), "{text}");
    let first = lines.next().unwrap();
    assert!(
        first.contains("41.67") && first.contains("1.000") && first.contains("[GPU idle"),
        "{text}"
    );
}

/// Thunk records of jit_f on devices 0 and 1, executions 0 (warm-up) to 3; durations
/// in µs. fusion.1: 100 everywhere but 400 on device 1 in execution 3 (5000 in warm-up);
/// custom-call.2 50 always; copy.3 10 on device 0, 12 on device 1; all-reduce.4, a
/// communication thunk, 5 × (1 + execution).
fn varied() -> String {
    let mut lines = String::new();
    for device in 0..2u32 {
        for k in 0..4u32 {
            let fusion = match (k, device) {
                (0, _) => 5000,
                (3, 1) => 400,
                _ => 100,
            };
            let thunks = [
                ("fusion.1", fusion, false),
                ("custom-call.2", 50, false),
                ("copy.3", 10 + 2 * i64::from(device), false),
                ("all-reduce.4", 5 * (1 + i64::from(k)), true),
            ];
            let mut at = 10_000_000 * i64::from(k);
            for (name, us, comm) in thunks {
                let r = json!({"profile": format!("r{device}"), "program": FP,
                    "program_id": 3, "module": "jit_f", "execution": k, "device": device,
                    "name": name, "thunk_execution": 0, "start_ns": at, "dur_ns": us * 1000,
                    "hidden_ns": 0, "comm": comm, "warmup": k == 0,
                    "collective": comm.then_some("all-reduce"),
                    "group_size": comm.then_some(2), "message_bytes": comm.then_some(4096)});
                lines.push_str(&(r.to_string() + "\n"));
                at += us * 1000;
            }
        }
    }
    lines
}

/// fusion.1 over 6 steady executions: mean 150 µs, sample std √(75000/5) = 122.474 µs,
/// cv 0.8165, slowest 400 (device 1, execution 3) then 100 (device 0, executions 1 and
/// 2). copy.3: mean 11, std √(6/5) = 1.0954, cv 0.0996, under 10%; custom-call.2 cv 0;
/// all-reduce.4 communication: never shown.
#[test]
fn variability_view_gives_mean_std_cv_and_the_slowest_executions() {
    let dir = tempdir();
    let t = write(dir.path(), "thunks.jsonl", varied().as_bytes());
    let dump = dir.path().join("xla_dump");
    write(
        &dump,
        "module_0003.jit_f.sm_8.0_gpu_after_optimizations.hlo.pb",
        &hlo_dump(),
    );
    let dump = dump.to_str().unwrap();
    let (got, err) = rows(&[
        "--view",
        "variability",
        "--format",
        "json",
        &t,
        "--hlo",
        dump,
    ]);
    assert!(err.contains("no module records"), "{err}");
    assert_eq!(got.len(), 1, "{got:?}");
    let f = &got[0];
    assert_eq!(f["thunk"], "fusion.1");
    assert_eq!(f["opcode"], "fusion");
    assert_eq!(f["op_name"], "jit(f)/mul");
    assert_eq!(f["executions"], 6);
    assert_eq!(f["mean_ns"], 150_000, "{f}");
    // sqrt(15 000) µs = 122 474.487 ns, written to the nearest nanosecond; the cv is of
    // the value computed.
    assert_eq!(f["std_ns"], 122_474, "{f}");
    assert!(close(&f["cv"], 15_000f64.sqrt() / 150.0), "{f}");
    assert_eq!(f["max_ns"], 400_000);
    let slowest: Vec<(i64, i64, i64)> = (1..=3)
        .map(|i| {
            let g = |k: &str| f[format!("slowest{i}_{k}")].as_i64().unwrap();
            (g("ns"), g("device"), g("execution"))
        })
        .collect();
    assert_eq!(
        slowest,
        vec![(400_000, 1, 3), (100_000, 0, 1), (100_000, 0, 2)]
    );
    // --min-cv 0: every compute thunk, largest mean first; the communication one never.
    let (got, _) = rows(&[
        "--view",
        "variability",
        "--format",
        "json",
        "--min-cv",
        "0",
        &t,
    ]);
    let names: Vec<&str> = got.iter().map(|r| r["thunk"].as_str().unwrap()).collect();
    assert_eq!(names, ["fusion.1", "custom-call.2", "copy.3"]);
    assert!(got[1]["std_ns"] == 0.0 && got[1]["cv"] == 0.0, "{}", got[1]);
    // sqrt(1.2) µs = 1095.445 ns, written to the nearest nanosecond.
    assert_eq!(got[2]["std_ns"], 1095, "{}", got[2]);
    assert!(close(&got[2]["cv"], 1.2f64.sqrt() / 11.0), "{}", got[2]);
    assert_eq!(got[2]["slowest3_ns"], 12_000);
    // --include-warmup: execution 0's 5000 µs is the slowest.
    let (got, _) = rows(&[
        "--view",
        "variability",
        "--format",
        "json",
        "--include-warmup",
        &t,
    ]);
    assert_eq!(got[0]["executions"], 8);
    assert_eq!(got[0]["max_ns"], 5_000_000);
    assert_eq!(got[0]["slowest2_execution"], 0);
    // CSV: the same fields, one header.
    let csv = ok(
        "njx-thunks",
        &["--view", "variability", "--format", "csv", &t],
    );
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with(
            "program,module,thunk,op_name,opcode,executions,mean_ns,std_ns,cv,max_ns,slowest1_ns"
        ),
        "{header}"
    );
    assert_eq!(lines.count(), 1);
    // For people: times in µs, the slowest with device/execution.
    let text = ok("njx-thunks", &["--view", "variability", &t]);
    assert!(
        text.contains("150.0") && text.contains("122.5") && text.contains("81.6"),
        "{text}"
    );
    assert!(
        text.contains("400.0 (1/3), 100.0 (0/1), 100.0 (0/2)"),
        "{text}"
    );
}

#[test]
fn partial_results_reduce_to_the_same_tables() {
    let (dir, m, t, dump) = gpu_fixture();
    let a = ok("njx-thunks", &["--partial", &m, "--hlo", &dump]);
    let b = ok("njx-thunks", &["--partial", &t, "--hlo", &dump]);
    let pa = write(dir.path(), "a.part", a.as_bytes());
    let pb = write(dir.path(), "b.part", b.as_bytes());
    for view in ["top", "opcode", "variability"] {
        let direct = ok(
            "njx-thunks",
            &[
                "--view", view, "--format", "json", "--min-cv", "0", &m, &t, "--hlo", &dump,
            ],
        );
        // The partials carry what the dumps say: no --hlo at the reduce step.
        let reduced = ok(
            "njx-thunks",
            &[
                "--view", view, "--format", "json", "--min-cv", "0", &pa, &pb,
            ],
        );
        assert_eq!(direct, reduced, "--view {view}");
    }
    // Partials of another tool are refused.
    let other = ok("njx-modules", &["--partial", &m]);
    let other = write(dir.path(), "m.part", other.as_bytes());
    let out = run("njx-thunks", &[&other], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("kind `modules`, not `thunks`"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn error_paths() {
    let (_dir, m, t, _dump) = gpu_fixture();
    // The opcode view needs dumps: said before reading (a corrupt input after the
    // records is not reached), unless an input may be a partial result carrying them;
    // a partial without them is refused once read.
    let dir = tempfile::tempdir().unwrap();
    let corrupt = write(dir.path(), "corrupt.jsonl", b"{\"profile\": 1\n");
    for args in [vec![m.as_str(), &t], vec![&m, &t, &corrupt]] {
        let out = run(
            "njx-thunks",
            &[&["--view", "opcode"][..], &args].concat(),
            b"",
        );
        assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
        assert!(stderr_of(&out).contains("--hlo"), "{}", stderr_of(&out));
    }
    let bare = ok("njx-thunks", &["--partial", &m, &t]);
    let bare = write(dir.path(), "bare.part", bare.as_bytes());
    let out = run("njx-thunks", &["--view", "opcode", &bare], b"");
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("--hlo"), "{}", stderr_of(&out));
    let out = run("njx-thunks", &["--top-modules", "0", &m, &t], b"");
    assert_eq!(out.status.code(), Some(2));
    // --min-cv: a finite number from 0 (NaN was taken as 0), refused before any input is
    // read (the input here does not exist).
    for v in ["NaN", "inf", "-0.5"] {
        let out = run(
            "njx-thunks",
            &[&format!("--min-cv={v}"), "/missing/t.jsonl"],
            b"",
        );
        assert_eq!(out.status.code(), Some(2), "{v}");
        let err = stderr_of(&out);
        assert!(err.contains(&format!("--min-cv {v}")), "{err}");
        assert!(!err.contains("/missing"), "{err}");
    }
    // Range records, or a trace CSV: named for what they are.
    let dir = tempdir();
    let csv = write(dir.path(), "trace.csv", COMPILE_CSV.as_bytes());
    let out = run("njx-thunks", &[&csv], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert!(
        err.contains("trace.csv") && err.contains("not modules|thunks records"),
        "{err}"
    );
    let records = ok("njx-export", &[&csv]);
    let out = run("njx-thunks", &[], records.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr_of(&out).contains("-:1"), "{}", stderr_of(&out));
    // Nothing in the input: refused (issue 44), not an empty table.
    let empty = write(dir.path(), "empty.jsonl", b"");
    let out = run("njx-thunks", &[&empty], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr_of(&out).contains("empty.jsonl: empty: nothing to read"));
}

// ---------------------------------------------------------------- real profiles

/// On the four pax archives: the opcode view divides exactly the time of `njx-flamefold
/// --by opcode` (same selection, same idle time during modules), matches the notebook's
/// `op_runtime` (tests/data/pax-flamefold-reference.json), and the top view sums to
/// [GPU active].
#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn pax_views_agree_with_flamefold_and_the_notebook() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let archives = pax_archives(&dir);
    let reference: Value =
        serde_json::from_str(include_str!("../data/pax-flamefold-reference.json")).unwrap();
    let r = &reference["combined"];
    let mut args = vec!["--by", "opcode"];
    args.extend(archives.iter().map(String::as_str));
    let stacks = folded(&ok("njx-flamefold", &args));
    let mut args = vec!["--view", "opcode", "--format", "json"];
    args.extend(archives.iter().map(String::as_str));
    let (opcodes, _) = rows(&args);
    assert!(opcodes.len() > 3);
    for row in &opcodes {
        let opcode = row["opcode"].as_str().unwrap();
        let stack = if opcode.starts_with('[') {
            opcode.to_string()
        } else {
            format!("[GPU active];{opcode}")
        };
        assert_eq!(
            row["total_ns"].as_u64(),
            stacks.get(&stack).copied(),
            "{stack}"
        );
    }
    let module_ms = r["all_modules_active_ms"].as_f64().unwrap();
    let ms = |v: &Value| v.as_f64().unwrap();
    for pair in r["op_runtime"].as_array().unwrap() {
        let opcode = pair[0].as_str().unwrap();
        if opcode.starts_with('_') {
            continue;
        }
        let ours = if opcode.starts_with("GPU idle") {
            "[GPU idle during module execution]"
        } else {
            opcode
        };
        let row = opcodes
            .iter()
            .find(|r| r["opcode"] == ours)
            .unwrap_or_else(|| panic!("no {ours}"));
        let got = row["total_ns"].as_f64().unwrap() / 1e6;
        assert!(
            (got - ms(&pair[1])).abs() < 1e-5,
            "{opcode}: {got} vs {}",
            pair[1]
        );
        let share = 100.0 * ms(&pair[1]) / module_ms;
        assert!((ms(&row["percent"]) - share).abs() < 1e-6, "{opcode}");
    }
    // Top view: every thunk of the chosen programs, summing to [GPU active].
    args[1] = "top";
    let (top, _) = rows(&args);
    let total: i64 = top.iter().map(|r| r["total_ns"].as_i64().unwrap()).sum();
    let active: u64 = stacks
        .iter()
        .filter(|(s, _)| s.starts_with("[GPU active];"))
        .map(|(_, c)| c)
        .sum();
    assert_eq!(total as u64, active);
    let want = r["all_thunks_active_ms"].as_f64().unwrap();
    assert!(((total as f64 / 1e6) - want).abs() / want < 1e-9);
    let percent: f64 = top.iter().map(|r| ms(&r["percent"])).sum();
    assert!((percent - 100.0).abs() < 1e-6);
    assert!(
        top.iter()
            .all(|r| r["opcode"].is_string() && r["op_name"].is_string())
    );
    assert!(
        top.windows(2)
            .all(|w| w[0]["total_ns"].as_i64() >= w[1]["total_ns"].as_i64())
    );
    // Variability: compute thunks executed twice or more, their cv above 10%.
    args[1] = "variability";
    let (var, _) = rows(&args);
    assert!(!var.is_empty());
    for row in &var {
        assert!(row["executions"].as_u64().unwrap() >= 2);
        assert!(ms(&row["cv"]) > 0.1, "{row}");
        // The cv of the values computed; the records write them to the nearest
        // nanosecond, each at most half a nanosecond off.
        let (std, mean, cv) = (ms(&row["std_ns"]), ms(&row["mean_ns"]), ms(&row["cv"]));
        assert!(
            (cv - std / mean).abs() <= 0.5 * (1.0 + cv) / (mean - 0.5) + 1e-12,
            "{row}"
        );
        assert_eq!(row["max_ns"], row["slowest1_ns"]);
        assert!(row["max_ns"].as_f64().unwrap() >= ms(&row["mean_ns"]));
    }
}
