//! End to end through the built binaries: `njx-export --table modules|thunks` and
//! `njx-modules` on two small nsys-jax archives made here, `rank0.zip` (process 0,
//! device 0) and `rank1.zip` (process 1, device 1, its clock 5 ms ahead). Each holds the
//! first-form `nvtx_gpu_proj_trace/trace.parquet`, `thread-metadata.parquet`, the HLO dump
//! of program 7 (`jit_step`) and a push/pop CSV in which program 7's compilation was
//! profiled.
//!
//! Every expected figure below is worked out from the fixture's constants by the rules of
//! nsys-jax (`load_profiler_data`, `align_profiler_data_timestamps`,
//! `apply_warmup_heuristics`, `remove_autotuning_detail` and the summary script), not by
//! running the code under test. Tests named `nsys_jax_*` at the end check behaviour where
//! njx was found to differ from nsys-jax; their assertions state what nsys-jax does.

use crate::common::gpu_spans::*;
use crate::common::*;
use prost::Message;
use serde_json::{Value, json};
use std::path::Path;

// ---------------------------------------------------------------- the fixture

const GPU_PROJ: &str = "nvtx_gpu_proj_trace/trace.parquet";

/// The part of the all-reduce that `fusion.1` (100–400 µs into the module) hides: the
/// all-reduce starts at 300 µs. The command buffer thunk (450–900 µs) overlaps the
/// all-reduce too, but only its inner `fusion.2` (700–850 µs) is a thunk, and that does not.
const HIDDEN: i64 = 100_000;
/// The clock correction: the skews of device 1's all-reduce ends from the mean of both
/// devices are (5 ms + [−60, +40, 0, +80] µs) / 2 = 2.470, 2.520, 2.500, 2.540 ms, whose
/// median is (2.500 + 2.520) / 2 = 2.510 ms; device 0's are their negatives. Device 0's
/// times therefore move 2.51 ms later and device 1's 2.51 ms earlier.
const CORRECTION: i64 = 2_510_000;
/// The push/pop table of one rank (`report_nvtx_pushpop_trace.csv.xz`, before xz): the
/// compilation of jit_step (program 7), so program 7's compilation was profiled. With
/// `autotuner`, the backend holds an `XlaAutotunerCompilation` whose nested
/// `XlaCompileBackend` compiles the extracted autotuning module (program 99, which has
/// no dump). With `compiled` false the table holds no compilation at all.
fn pushpop_csv(rank: usize, compiled: bool, autotuner: bool) -> String {
    let p = pid(rank);
    let o = rank as i64 * OFFSET;
    let mut csv = String::from(
        "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree\n",
    );
    if !compiled {
        csv += &format!(
            "{},{},1000000,0,1000000,TSL:XlaModule:#hlo_module=jit_step#,{p},{p},0,0,1,,:1,TSL:XlaModule:#hlo_module=jit_step#\n",
            o + 9_000_000,
            o + 10_000_000,
        );
        return csv;
    }
    let (s, e) = (o + 500_000, o + 2_500_000);
    csv += &format!(
        "{s},{e},2000000,1500000,500000,\"TSL:XlaCompile:#module=jit_step,program_id=7#\",{p},{p},0,1,1,,:1,\"TSL:XlaCompile:#module=jit_step,program_id=7#\"\n"
    );
    let (s, e) = (o + 600_000, o + 2_100_000);
    if autotuner {
        csv += &format!(
            "{s},{e},1500000,800000,700000,\"TSL:XlaCompileBackend:#module=jit_step,program_id=7#\",{p},{p},1,1,2,1,:1:2,\"--TSL:XlaCompileBackend:#module=jit_step,program_id=7#\"\n"
        );
        let (s, e) = (o + 700_000, o + 1_500_000);
        csv += &format!(
            "{s},{e},800000,600000,200000,TSL:XlaAutotunerCompilation,{p},{p},2,1,3,2,:1:2:3,----TSL:XlaAutotunerCompilation\n"
        );
        let (s, e) = (o + 800_000, o + 1_400_000);
        csv += &format!(
            "{s},{e},600000,0,600000,\"TSL:XlaCompileBackend:#module=extracted,program_id=99#\",{p},{p},3,0,4,3,:1:2:3:4,\"------TSL:XlaCompileBackend:#module=extracted,program_id=99#\"\n"
        );
    } else {
        csv += &format!(
            "{s},{e},1500000,0,1500000,\"TSL:XlaCompileBackend:#module=jit_step,program_id=7#\",{p},{p},1,0,2,1,:1:2,\"--TSL:XlaCompileBackend:#module=jit_step,program_id=7#\"\n"
        );
    }
    csv
}

/// Variations of an archive.
#[derive(Clone, Copy)]
struct Opts {
    gpu_proj: bool,
    corrupt_dump: bool,
    compiled: bool,
    autotuner: bool,
    scheduling_names: bool,
    /// `fingerprint_before_lhs` of the dump, none as XLA before the attribute.
    fingerprint: Option<&'static str>,
}

const NORMAL: Opts = Opts {
    gpu_proj: true,
    corrupt_dump: false,
    compiled: true,
    autotuner: false,
    scheduling_names: false,
    fingerprint: Some(FP),
};

/// Writes `dir/rank<rank>.zip` and returns its path.
fn archive(dir: &Path, rank: usize, opts: Opts) -> String {
    let trace = gpu_proj_trace(rank);
    let threads = thread_metadata(rank);
    let mut dump = xz(&step_hlo(opts.scheduling_names, opts.fingerprint).encode_to_vec());
    if opts.corrupt_dump {
        dump.truncate(dump.len() / 2);
    }
    let pushpop = xz(pushpop_csv(rank, opts.compiled, opts.autotuner).as_bytes());
    let mut members: Vec<(&str, &[u8])> = vec![
        ("thread-metadata.parquet", &threads[..]),
        ("report_nvtx_pushpop_trace.csv.xz", &pushpop[..]),
        (DUMP, &dump[..]),
    ];
    if opts.gpu_proj {
        members.insert(0, (GPU_PROJ, &trace[..]));
    }
    write(dir, &format!("rank{rank}.zip"), &zip(&members, false))
}

/// rank0.zip and rank1.zip with `opts`, in a fresh folder.
fn archives(opts: Opts) -> (tempfile::TempDir, String, String) {
    let dir = tempdir();
    let r0 = archive(dir.path(), 0, opts);
    let r1 = archive(dir.path(), 1, opts);
    (dir, r0, r1)
}

// ---------------------------------------------------------------- expectations

/// How far device `rank`'s times move when clocks are aligned.
fn shift(rank: usize, align: bool) -> i64 {
    match (align, rank) {
        (false, _) => 0,
        (true, 0) => CORRECTION,
        (true, _) => -CORRECTION,
    }
}

/// The module records of one rank, in output order (range order: the autotuning
/// executions, then jit_step). Warm-up: program 7's compilation was profiled and the
/// profile has communication, so its executions 0 and 1 are initialisation; the
/// `unknown` program was not compiled in the profile, so only its execution 0 is.
fn expected_modules(rank: usize, align: bool) -> Vec<Value> {
    let o = rank as i64 * OFFSET + shift(rank, align);
    let profile = format!("rank{rank}");
    let mut out = Vec::new();
    for (j, (s, d)) in AUTOTUNE_RUNS.into_iter().enumerate() {
        out.push(json!({
            "profile": profile, "program": "unknown", "program_id": null, "name": "extracted",
            "execution": j, "device": rank, "start_ns": o + s, "dur_ns": d, "thunks": 1,
            "warmup": j == 0,
        }));
    }
    for (k, dur) in MODULE_DUR[rank].into_iter().enumerate() {
        out.push(json!({
            "profile": profile, "program": FP, "program_id": 7, "name": "jit_step",
            "execution": k, "device": rank, "start_ns": o + base(k),
            "dur_ns": dur, "thunks": 3, "warmup": k < 2,
        }));
    }
    out
}

/// The thunk records of one rank, by module execution then start.
fn expected_thunks(rank: usize, align: bool) -> Vec<Value> {
    let o = rank as i64 * OFFSET + shift(rank, align);
    let profile = format!("rank{rank}");
    let mut out = Vec::new();
    let compute = |program: Value,
                   id: Value,
                   module: &str,
                   execution: usize,
                   name: &str,
                   start: i64,
                   dur: i64,
                   warmup: bool| {
        json!({
            "profile": profile, "program": program, "program_id": id, "module": module,
            "execution": execution, "device": rank, "name": name, "thunk_execution": 0,
            "start_ns": start, "dur_ns": dur, "hidden_ns": 0, "comm": false,
            "warmup": warmup, "collective": null, "group_size": null, "message_bytes": null,
        })
    };
    for (j, (s, d)) in AUTOTUNE_RUNS.into_iter().enumerate() {
        out.push(compute(
            json!("unknown"),
            Value::Null,
            "extracted",
            j,
            "fusion",
            o + s + 50_000,
            d - 100_000,
            j == 0,
        ));
    }
    for (k, ar) in ALL_REDUCE_DUR[rank].into_iter().enumerate() {
        let b = o + base(k);
        let warmup = k < 2;
        out.push(compute(
            json!(FP),
            json!(7),
            "jit_step",
            k,
            "fusion.1",
            b + 100_000,
            300_000,
            warmup,
        ));
        out.push(json!({
            "profile": profile, "program": FP, "program_id": 7, "module": "jit_step",
            "execution": k, "device": rank, "name": "all-reduce-start.1",
            "thunk_execution": 0, "start_ns": b + 300_000,
            "dur_ns": ar - HIDDEN, "hidden_ns": HIDDEN, "comm": true,
            "warmup": warmup, "collective": "all-reduce", "group_size": 2,
            "message_bytes": 4096,
        }));
        out.push(compute(
            json!(FP),
            json!(7),
            "jit_step",
            k,
            "fusion.2",
            b + 700_000,
            150_000,
            warmup,
        ));
    }
    out
}

/// Checks that every field of `expected` has its value in `actual` (records may carry
/// more fields than these).
fn assert_fields(actual: &Value, expected: &Value, what: &str) {
    let (Some(a), Some(e)) = (actual.as_object(), expected.as_object()) else {
        panic!("{what}: not objects: {actual} / {expected}");
    };
    for (k, v) in e {
        assert_eq!(a.get(k), Some(v), "{what}: field `{k}` of {actual}");
    }
}

fn assert_records(actual: &[Value], expected: &[Value], what: &str) {
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert_fields(a, e, &format!("{what} record {i}"));
    }
    assert_eq!(actual.len(), expected.len(), "{what}: record count");
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs a tool that must succeed; returns (stdout, stderr).
fn ok_with_stderr(tool: &str, args: &[&str]) -> (String, String) {
    let out = run(tool, args, b"");
    assert!(
        out.status.success(),
        "{tool} {args:?} failed: {}",
        stderr(&out)
    );
    (
        String::from_utf8(out.stdout.clone()).expect("utf-8 output"),
        stderr(&out),
    )
}

/// Lines of `stderr` containing `needle`.
fn count_lines(stderr: &str, needle: &str) -> usize {
    stderr.lines().filter(|l| l.contains(needle)).count()
}

// ---------------------------------------------------------------- njx-export

#[test]
fn modules_of_both_ranks_with_clocks_aligned() {
    let (_dir, r0, r1) = archives(NORMAL);
    let (out, err) = ok_with_stderr("njx-export", &["--table", "modules", &r0, &r1]);
    let got = json_lines(&out);
    let mut expected = expected_modules(0, true);
    expected.extend(expected_modules(1, true));
    assert_records(&got, &expected, "modules");

    // Program = fingerprint on both ranks; device = the rank; executions 0..3 per device.
    for rank in 0..2 {
        let execs: Vec<u64> = got
            .iter()
            .filter(|m| m["device"] == rank && m["program"] == FP)
            .map(|m| m["execution"].as_u64().unwrap())
            .collect();
        assert_eq!(execs, [0, 1, 2, 3], "device {rank}");
    }

    // The alignment correction, on stderr.
    assert!(
        err.contains("clock alignment: device 0 corrected by +2.510000 ms"),
        "{err}"
    );
    assert!(
        err.contains("clock alignment: device 1 corrected by -2.510000 ms"),
        "{err}"
    );
    // What was left out, per rank, naming the table.
    for rank in 0..2 {
        let place = format!("rank{rank}.zip!{GPU_PROJ}: ");
        assert_eq!(
            count_lines(
                &err,
                &format!("{place}ignored 1 thunks that start before the first module")
            ),
            1,
            "{err}"
        );
        assert_eq!(
            count_lines(
                &err,
                &format!(
                    "{place}dropped the last execution of {STEP}: 3 GPU operations \
                     against 11.0 ± 1.0 before"
                )
            ),
            1,
            "{err}"
        );
    }
    // A complete profile with a dump of every program needs no other message.
    assert!(!err.contains("no HLO dump"), "{err}");
    assert!(!err.contains("not instructions"), "{err}");
    assert!(!err.contains("no steady-state"), "{err}");
}

#[test]
fn thunks_of_both_ranks_with_clocks_aligned() {
    let (_dir, r0, r1) = archives(NORMAL);
    let (out, err) = ok_with_stderr("njx-export", &["--table", "thunks", &r0, &r1]);
    let got = json_lines(&out);
    let mut expected = expected_thunks(0, true);
    expected.extend(expected_thunks(1, true));
    assert_records(&got, &expected, "thunks");

    let names: std::collections::BTreeSet<&str> =
        got.iter().map(|t| t["name"].as_str().unwrap()).collect();
    // The early thunk, the command buffer around fusion.2 and the NCCL range are absent;
    // the thunk below the NCCL range is kept (re-parented to its module).
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        ["all-reduce-start.1", "fusion", "fusion.1", "fusion.2"]
    );
    // The cut-short fifth execution left no thunk behind (its fusion.1 included).
    assert!(got.iter().all(|t| t["execution"].as_u64().unwrap() < 4));
    assert_eq!(
        got.iter()
            .filter(|t| t["name"] == "fusion.1" && t["dur_ns"] == 50_000)
            .count(),
        0
    );
    // Exactly one communication thunk per jit_step execution and device.
    let comm: Vec<&Value> = got.iter().filter(|t| t["comm"] == true).collect();
    assert_eq!(comm.len(), 2 * EXECS);
    assert!(comm.iter().all(|t| t["name"] == "all-reduce-start.1"
        && t["collective"] == "all-reduce"
        && t["group_size"] == 2
        && t["message_bytes"] == 4096
        && t["hidden_ns"] == HIDDEN));
    assert!(err.contains("clock alignment: device 1 corrected by -2.510000 ms"));
    assert_eq!(count_lines(&err, "ignored 1 thunks that start before"), 2);
    assert_eq!(count_lines(&err, "dropped the last execution of"), 2);
}

#[test]
fn no_align_keeps_each_devices_clock() {
    let (_dir, r0, r1) = archives(NORMAL);
    for table in ["modules", "thunks"] {
        let (out, err) = ok_with_stderr("njx-export", &["--table", table, "--no-align", &r0, &r1]);
        let got = json_lines(&out);
        let mut expected = if table == "modules" {
            expected_modules(0, false)
        } else {
            expected_thunks(0, false)
        };
        expected.extend(if table == "modules" {
            expected_modules(1, false)
        } else {
            expected_thunks(1, false)
        });
        assert_records(&got, &expected, table);
        assert!(!err.contains("clock alignment"), "{err}");
        // The other messages stay.
        assert_eq!(
            count_lines(&err, "dropped the last execution of"),
            2,
            "{err}"
        );
    }
}

#[test]
fn one_rank_alone_needs_no_alignment() {
    // One device: nothing to align against, so times are the rank's own.
    let (_dir, _r0, r1) = archives(NORMAL);
    let (out, err) = ok_with_stderr("njx-export", &["--table", "modules", &r1]);
    assert_records(
        &json_lines(&out),
        &expected_modules(1, false),
        "rank1 modules",
    );
    assert!(!err.contains("clock alignment"), "{err}");
    let (out, _) = ok_with_stderr("njx-export", &["--table", "thunks", &r1]);
    assert_records(
        &json_lines(&out),
        &expected_thunks(1, false),
        "rank1 thunks",
    );
}

#[test]
fn csv_output_has_the_same_records() {
    let (_dir, r0, r1) = archives(NORMAL);
    let (out, _) = ok_with_stderr(
        "njx-export",
        &["--table", "thunks", "--format", "csv", &r0, &r1],
    );
    let mut rdr = csv::Reader::from_reader(out.as_bytes());
    let headers = rdr.headers().unwrap().clone();
    for h in [
        "profile",
        "program",
        "program_id",
        "module",
        "execution",
        "device",
        "name",
        "thunk_execution",
        "start_ns",
        "dur_ns",
        "hidden_ns",
        "comm",
        "warmup",
        "collective",
        "group_size",
        "message_bytes",
    ] {
        assert!(headers.iter().any(|c| c == h), "no column {h}: {headers:?}");
    }
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 2 * (AUTOTUNE_RUNS.len() + 3 * EXECS));
    let col = |name: &str| headers.iter().position(|c| c == name).unwrap();
    let comm: Vec<&csv::StringRecord> = rows
        .iter()
        .filter(|r| &r[col("name")] == "all-reduce-start.1")
        .collect();
    assert_eq!(comm.len(), 2 * EXECS);
    for r in comm {
        assert_eq!(&r[col("collective")], "all-reduce");
        assert_eq!(&r[col("group_size")], "2");
        assert_eq!(&r[col("message_bytes")], "4096");
        assert_eq!(&r[col("hidden_ns")], HIDDEN.to_string());
    }
}

// ---------------------------------------------------------------- njx-modules

/// The summary line of `program` in njx-modules JSON output.
fn summary_of<'a>(lines: &'a [Value], program: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| l["program"] == program)
        .unwrap_or_else(|| panic!("no summary of {program}: {lines:?}"))
}

fn assert_summary(
    s: &Value,
    name: &str,
    executions: u64,
    thunks: f64,
    (mean, std): (f64, f64),
    sum: i64,
    percent: f64,
) {
    let what = format!("{s}");
    assert_eq!(s["name"], name, "{what}");
    assert_eq!(s["executions"], executions, "{what}");
    assert!(close(s["thunks_mean"].as_f64().unwrap(), thunks), "{what}");
    assert!(close(s["thunks_std"].as_f64().unwrap(), 0.0), "{what}");
    // Times are written to the nearest nanosecond.
    assert_eq!(s["dur_mean_ns"], mean.round() as i64, "{what}");
    assert_eq!(s["dur_std_ns"], std.round() as i64, "{what}");
    assert_eq!(s["dur_sum_ns"], sum, "{what}");
    assert!(close(s["percent"].as_f64().unwrap(), percent), "{what}");
}

// Steady state of jit_step: executions 2 and 3 of each device, durations 1.05, 1.20
// (device 0), 1.25, 1.10 ms (device 1): mean 1.15 ms, deviations −100, +50, +100,
// −50 µs, sample variance 2.5e10 / 3 ns², std 91 287.092 917 527 68 ns.
const STEADY_MEAN: f64 = 1_150_000.0;
const STEADY_STD: f64 = 91_287.092_917_527_68;
// With warm-up: all eight, sum 8.85 ms, mean 1.106 25 ms, squared deviations summing to
// 5.71875e10 ns², std sqrt(5.71875e10 / 7) = 90 386.076 677 455 45 ns.
const ALL_MEAN: f64 = 1_106_250.0;
const ALL_STD: f64 = 90_386.076_677_455_45;

#[test]
fn njx_modules_summarises_the_steady_state() {
    let (_dir, r0, r1) = archives(NORMAL);
    // From the records (the canonical pipeline) and from the archives directly.
    let (records, _) = ok_with_stderr("njx-export", &["--table", "modules", &r0, &r1]);
    let piped = run("njx-modules", &["--format", "json"], records.as_bytes());
    assert!(piped.status.success(), "{}", stderr(&piped));
    let piped = String::from_utf8(piped.stdout).unwrap();
    let (direct, err) = ok_with_stderr("njx-modules", &["--format", "json", &r0, &r1]);
    assert!(err.contains("dropped the last execution of"), "{err}");
    for out in [&piped, &direct] {
        let lines = json_lines(out);
        // Autotuning executions and warm-up are left out: jit_step alone.
        assert_eq!(lines.len(), 1, "{out}");
        assert_summary(
            summary_of(&lines, FP),
            "jit_step",
            4,
            3.0,
            (STEADY_MEAN, STEADY_STD),
            4_600_000,
            100.0,
        );
    }

    // The table.
    let table = ok("njx-modules", &[&r0, &r1]);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2, "{table}");
    assert_eq!(
        rows[0],
        [
            "program",
            "name",
            "executions",
            "thunks",
            "ms",
            "mean",
            "ms",
            "std",
            "percent"
        ],
        "{table}"
    );
    assert_eq!(
        rows[1],
        [FP, "jit_step", "4", "3", "1.150000", "0.091287", "100.000"],
        "{table}"
    );
}

#[test]
fn njx_modules_include_warmup_and_autotuning() {
    let (_dir, r0, r1) = archives(NORMAL);
    let (records, _) = ok_with_stderr("njx-export", &["--table", "modules", &r0, &r1]);
    let summary = |flags: &[&str]| -> Vec<Value> {
        let mut args = vec!["--format", "json"];
        args.extend_from_slice(flags);
        let out = run("njx-modules", &args, records.as_bytes());
        assert!(out.status.success(), "{}", stderr(&out));
        json_lines(&String::from_utf8(out.stdout).unwrap())
    };

    // --include-warmup: all eight executions of jit_step; autotuning still left out.
    let lines = summary(&["--include-warmup"]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_summary(
        summary_of(&lines, FP),
        "jit_step",
        8,
        3.0,
        (ALL_MEAN, ALL_STD),
        8_850_000,
        100.0,
    );

    // --include-autotuning: the steady autotuning executions (the second of each rank,
    // 0.25 ms) join: 4.6 ms of jit_step against 0.5 ms of `unknown`.
    let lines = summary(&["--include-autotuning"]);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["program"], FP, "largest total first");
    assert_summary(
        summary_of(&lines, FP),
        "jit_step",
        4,
        3.0,
        (STEADY_MEAN, STEADY_STD),
        4_600_000,
        100.0 * 4.6 / 5.1,
    );
    assert_summary(
        summary_of(&lines, "unknown"),
        "extracted",
        2,
        1.0,
        (250_000.0, 0.0),
        500_000,
        100.0 * 0.5 / 5.1,
    );

    // Both: every execution. `unknown`: 0.30, 0.25, 0.30, 0.25 ms, mean 0.275 ms,
    // sample std sqrt(4 × 25² µs² / 3) = 28 867.513 459 481 29 ns.
    let lines = summary(&["--include-warmup", "--include-autotuning"]);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_summary(
        summary_of(&lines, FP),
        "jit_step",
        8,
        3.0,
        (ALL_MEAN, ALL_STD),
        8_850_000,
        100.0 * 8.85 / 9.95,
    );
    assert_summary(
        summary_of(&lines, "unknown"),
        "extracted",
        4,
        1.0,
        (275_000.0, 28_867.513_459_481_29),
        1_100_000,
        100.0 * 1.1 / 9.95,
    );
}

// ---------------------------------------------------------------- njx-pgle

/// The PGLE profile of program 7 from `args` (into the folder `name` of `dir`): the file's text
/// and stderr.
fn pgle_profile(dir: &Path, name: &str, args: &[&str]) -> (String, String) {
    let out = dir.join(name);
    let mut all = vec!["-o", out.to_str().unwrap()];
    all.extend_from_slice(args);
    let got = run("njx-pgle", &all, b"");
    assert!(got.status.success(), "{}", stderr_of(&got));
    let files: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    // Autotuning (program unknown) gets none.
    assert_eq!(files, [format!("{FP}.pbtxt")]);
    let text = std::fs::read_to_string(out.join(format!("{FP}.pbtxt"))).unwrap();
    (text, stderr_of(&got).to_string())
}

/// nsys-jax's pgle_costs on the two archives: over executions 2 and 3 (0 and 1 are
/// warm-up: compilation profiled, communication), the fastest fusion.1 (300 µs) and
/// fusion.2 (150 µs) and the slowest all-reduce, exposed plus hidden: 280 µs (rank 1's
/// last); rank 0 alone 220 µs. Names are the dump's scheduling names, the instruction name
/// where it has none.
#[test]
fn njx_pgle_writes_the_peers_costs_under_scheduling_names() {
    let dir = tempdir();
    let opts = Opts {
        scheduling_names: true,
        ..NORMAL
    };
    let r0 = archive(dir.path(), 0, opts);
    let r1 = archive(dir.path(), 1, opts);
    let (text, stderr) = pgle_profile(dir.path(), "both", &[&r0, &r1]);
    assert_eq!(
        text,
        "costs { name: \"all-reduce-start.1\" cost_us: 280.000 }
costs { name: \"fusion.1\" cost_us: 300.000 }
costs { name: \"fusion.7\" cost_us: 150.000 }
"
    );
    assert_eq!(
        crate::pgle::parse_back(&text),
        [
            ("all-reduce-start.1".to_string(), 280.0),
            ("fusion.1".to_string(), 300.0),
            ("fusion.7".to_string(), 150.0),
        ]
    );
    assert!(
        stderr.contains("1 instructions have no scheduling_name in their HLO dump"),
        "{stderr}"
    );
    // One rank: its own slowest all-reduce.
    let (alone, _) = pgle_profile(dir.path(), "alone", &["-q", &r0]);
    assert!(
        alone.starts_with("costs { name: \"all-reduce-start.1\" cost_us: 220.000 }\n"),
        "{alone}"
    );
    // Partial results carry the scheduling names: the reduce step reads no archive.
    let mut partials = Vec::new();
    for r in [&r0, &r1] {
        let got = run("njx-pgle", &["--partial", r], b"");
        assert!(got.status.success(), "{}", stderr_of(&got));
        partials.extend_from_slice(&got.stdout);
    }
    let p = write(dir.path(), "all.pgle", &partials);
    let (reduced, _) = pgle_profile(dir.path(), "reduced", &["-q", &p]);
    assert_eq!(reduced, text);
    // Records carry no dump: instruction names (fusion.2, not fusion.7), said on stderr.
    let records = ok("njx-export", &["--table", "thunks", &r0, &r1]);
    let t = write(dir.path(), "thunks.jsonl", records.as_bytes());
    let (from_records, stderr) = pgle_profile(dir.path(), "records", &["-q", &t]);
    assert_eq!(from_records, text.replace("fusion.7", "fusion.2"));
    assert!(stderr.is_empty(), "{stderr}");
}

/// Dumps of XLA before `scheduling_name`: every instruction under its own name, and a note
/// saying how many.
#[test]
fn njx_pgle_falls_back_to_instruction_names_without_scheduling_names() {
    let (dir, r0, r1) = archives(NORMAL);
    let (text, stderr) = pgle_profile(dir.path(), "old", &[&r0, &r1]);
    assert_eq!(
        text,
        "costs { name: \"all-reduce-start.1\" cost_us: 280.000 }
costs { name: \"fusion.1\" cost_us: 300.000 }
costs { name: \"fusion.2\" cost_us: 150.000 }
"
    );
    assert!(
        stderr.contains("3 instructions have no scheduling_name in their HLO dump"),
        "{stderr}"
    );
}

/// Dumps of XLA before `fingerprint_before_lhs`: programs are keyed by id, XLA would look
/// for no file of them, so none is written and the tool says why (exit 1: nothing else
/// to write but autotuning).
#[test]
fn njx_pgle_writes_no_profile_for_a_program_without_fingerprint() {
    let (dir, r0, r1) = archives(Opts {
        fingerprint: None,
        ..NORMAL
    });
    let out = dir.path().join("pgle");
    let got = run("njx-pgle", &["-o", out.to_str().unwrap(), &r0, &r1], b"");
    assert_eq!(got.status.code(), Some(1), "{}", stderr_of(&got));
    let stderr = stderr_of(&got);
    assert!(
        stderr.contains("program 7 (jit_step): no fingerprint_before_lhs in its HLO dump"),
        "{stderr}"
    );
    assert!(stderr.contains("no profile to write"), "{stderr}");
    assert!(!out.exists());
}

/// A fingerprint names a file, so one from a dump that is not a plain hexadecimal name
/// (`../x`, an absolute path, a sub-folder) is refused naming the dump, and nothing is
/// written anywhere (issue 28: it wrote `<fingerprint>.pbtxt` outside the folder).
#[test]
fn njx_pgle_refuses_a_fingerprint_that_is_not_a_plain_file_name() {
    // (An empty attribute reads as none: no profile, said.)
    for fp in ["../escaped", "/njx-escaped", "a/b", "5d41\x1b[31m"] {
        let (dir, r0, _) = archives(Opts {
            fingerprint: Some(fp),
            ..NORMAL
        });
        let out = dir.path().join("sub").join("pgle");
        let got = run("njx-pgle", &["-o", out.to_str().unwrap(), &r0], b"");
        let stderr = stderr_of(&got);
        assert_eq!(got.status.code(), Some(1), "{fp}: {stderr}");
        assert!(
            stderr.contains("rank0.zip!dump/module_0007"),
            "{fp}: {stderr}"
        );
        assert!(
            stderr.contains("is not a hexadecimal HLO fingerprint"),
            "{fp}: {stderr}"
        );
        assert!(!out.exists(), "{fp}");
        assert!(!dir.path().join("sub").join("escaped.pbtxt").exists());
        assert!(!Path::new("/njx-escaped.pbtxt").exists());
        // A partial result carrying such a fingerprint is refused naming its line.
        let (dir2, r0, _) = archives(NORMAL);
        let good = run("njx-pgle", &["--partial", &r0], b"");
        assert!(good.status.success(), "{}", stderr_of(&good));
        let text = String::from_utf8(crate::common::gunzip(good.stdout)).unwrap();
        assert!(
            text.contains(&format!("\"fingerprint\":\"{FP}\"")),
            "{text}"
        );
        let bad = text.replace(
            &format!("\"fingerprint\":\"{FP}\""),
            &format!("\"fingerprint\":{}", serde_json::to_string(fp).unwrap()),
        );
        let part = write(dir2.path(), "bad.partial", bad.as_bytes());
        let out = dir2.path().join("pgle");
        let got = run("njx-pgle", &["-o", out.to_str().unwrap(), &part], b"");
        let stderr = stderr_of(&got);
        assert_eq!(got.status.code(), Some(1), "{fp}: {stderr}");
        assert!(stderr.contains("bad.partial:1"), "{fp}: {stderr}");
        assert!(!out.exists(), "{fp}");
    }
}

// ---------------------------------------------------------------- errors

#[test]
fn a_corrupt_dump_is_an_error_naming_it() {
    let dir = tempdir();
    let r0 = archive(
        dir.path(),
        0,
        Opts {
            corrupt_dump: true,
            ..NORMAL
        },
    );
    let r1 = archive(dir.path(), 1, NORMAL);
    for (tool, args) in [
        (
            "njx-export",
            vec!["--table", "modules", r0.as_str(), r1.as_str()],
        ),
        (
            "njx-export",
            vec!["--table", "thunks", r0.as_str(), r1.as_str()],
        ),
        ("njx-modules", vec![r0.as_str(), r1.as_str()]),
    ] {
        let out = run(tool, &args, b"");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{tool} {args:?}: {err}");
        assert!(err.contains(&format!("rank0.zip!{DUMP}")), "{tool}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(out.stdout.is_empty(), "{tool}: no records before the error");
    }
}

#[test]
fn an_archive_without_the_gpu_projection_is_an_error() {
    let dir = tempdir();
    let r0 = archive(
        dir.path(),
        0,
        Opts {
            gpu_proj: false,
            ..NORMAL
        },
    );
    let r1 = archive(dir.path(), 1, NORMAL);
    for args in [
        vec!["--table", "modules", r0.as_str(), r1.as_str()],
        vec!["--table", "thunks", r0.as_str()],
    ] {
        let out = run("njx-export", &args, b"");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("rank0.zip"), "{err}");
        assert!(err.contains(GPU_PROJ), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let out = run("njx-modules", &[&r0], b"");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(GPU_PROJ), "{}", stderr(&out));
}

// ---------------------------------------------------------------- warm-up across ranks

/// nsys-jax maps every profiled `XlaCompileBackend` to a program with
/// `_remap_program_id(…, allow_missing_protobuf=True)`, which gives `"unknown"` for a
/// program without an after-optimizations dump — such as the extracted module the
/// autotuner compiles inside `XlaAutotunerCompilation`. So `"unknown"` is among the
/// compiled programs of `apply_warmup_heuristics`, and the autotuning executions'
/// threshold is 1 (compiled) + 1 (communication) = 2: executions 0 and 1 are both
/// initialisation.
#[test]
fn nsys_jax_counts_autotuner_compilations_as_compiling_program_unknown() {
    let (_dir, r0, r1) = archives(Opts {
        autotuner: true,
        ..NORMAL
    });
    let (out, _) = ok_with_stderr("njx-export", &["--table", "modules", &r0, &r1]);
    let got = json_lines(&out);
    // jit_step is unaffected.
    for m in got.iter().filter(|m| m["program"] == FP) {
        assert_eq!(m["warmup"], m["execution"].as_u64().unwrap() < 2, "{m}");
    }
    let unknown: Vec<&Value> = got.iter().filter(|m| m["program"] == "unknown").collect();
    assert_eq!(unknown.len(), 4);
    for m in unknown {
        // Both autotuning executions of each device are initialisation.
        assert_eq!(m["warmup"], true, "{m}");
    }
}

/// nsys-jax analyses several ranks together with one `compile` frame for all of them,
/// so the compiled programs (fingerprints, the same on every rank) and "the profile has
/// communication" are global: when only rank 0's profile recorded the compilation of
/// jit_step, rank 1's executions 0 and 1 are still initialisation.
#[test]
fn nsys_jax_applies_the_warmup_rule_across_all_ranks() {
    let dir = tempdir();
    let r0 = archive(dir.path(), 0, NORMAL);
    let r1 = archive(
        dir.path(),
        1,
        Opts {
            compiled: false,
            ..NORMAL
        },
    );
    let (out, _) = ok_with_stderr("njx-export", &["--table", "modules", &r0, &r1]);
    for m in json_lines(&out)
        .iter()
        .filter(|m| m["program"] == FP && m["device"] == 1)
    {
        let k = m["execution"].as_u64().unwrap();
        // Executions 0 and 1 of device 1 are initialisation too.
        assert_eq!(m["warmup"], k < 2, "{m}");
    }
}

// ---------------------------------------------------------------- map/reduce

/// Runs `tool args…` with `stdin`, which must succeed; returns stdout.
fn ok_stdin(tool: &str, args: &[&str], stdin: &[u8]) -> String {
    let out = run(tool, args, stdin);
    assert!(
        out.status.success(),
        "{tool} {args:?} failed: {}",
        stderr(&out)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Each analysis' partial results of one rank at a time, reduced in any order and
/// grouping, give exactly its answer over both ranks. Only rank 0 profiled program 7's
/// compilation: rank 1 alone would count its execution 1 as steady state, so warm-up
/// must be decided over every partial, not per rank.
#[test]
fn partials_of_each_rank_reduce_to_the_answer_of_both() {
    let dir = tempdir();
    let r0 = archive(dir.path(), 0, NORMAL);
    let r1 = archive(
        dir.path(),
        1,
        Opts {
            compiled: false,
            autotuner: true,
            ..NORMAL
        },
    );
    let jobs: Vec<(&str, Vec<&str>)> = vec![
        ("njx-modules", vec!["--format", "json"]),
        ("njx-modules", vec!["--format", "json", "--include-warmup"]),
        (
            "njx-modules",
            vec!["--format", "json", "--include-autotuning"],
        ),
        ("njx-collectives", vec!["--format", "json"]),
        (
            "njx-collectives",
            vec!["--format", "json", "--include-warmup"],
        ),
        ("njx-flamefold", vec!["--by", "module"]),
        ("njx-flamefold", vec!["--by", "device", "--include-warmup"]),
        ("njx-flamefold", vec!["--by", "op-name"]),
        ("njx-flamefold", vec!["--by", "source"]),
    ];
    for (tool, flags) in jobs {
        let with = |extra: &[&str]| -> Vec<String> {
            let mut a: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
            a.extend(extra.iter().map(|s| s.to_string()));
            a
        };
        let ok = |tool: &str, args: &[String]| -> String {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            ok(tool, &args)
        };
        let direct = ok(tool, &with(&[&r0, &r1]));
        assert!(!direct.is_empty(), "{tool} {flags:?}: an answer to compare");
        // Map: one partial per rank (the --by of the flame graphs travels with them).
        let map_flags: Vec<&str> = flags
            .iter()
            .copied()
            .filter(|f| !f.starts_with("--include") && *f != "--format" && *f != "json")
            .collect();
        let part = |rank: &str| -> String {
            let mut a: Vec<String> = map_flags.iter().map(|s| s.to_string()).collect();
            a.extend(["--partial".to_string(), rank.to_string()]);
            let p = ok(tool, &a);
            assert_eq!(p.lines().count(), 1, "{tool}: one JSON line per partial");
            assert!(p.starts_with("{\"njx_partial\":"), "{p}");
            p
        };
        let (p0, p1) = (part(&r0), part(&r1));
        let f0 = write(dir.path(), "p0.part", p0.as_bytes());
        let f1 = write(dir.path(), "p1.part", p1.as_bytes());
        // Reduce: files in either order, and concatenated on stdin.
        assert_eq!(ok(tool, &with(&[&f0, &f1])), direct, "{tool} {flags:?}");
        assert_eq!(ok(tool, &with(&[&f1, &f0])), direct, "{tool} {flags:?}");
        let cat = format!("{p1}{p0}");
        assert_eq!(
            ok_stdin(tool, &flags, cat.as_bytes()),
            direct,
            "{tool} {flags:?}"
        );
        // A partial of partials, merged with nothing else, is the same partial result.
        let mut a: Vec<String> = map_flags.iter().map(|s| s.to_string()).collect();
        a.extend(["--partial".to_string(), f0.clone(), f1.clone()]);
        let both = write(dir.path(), "both.part", ok(tool, &a).as_bytes());
        assert_eq!(ok(tool, &with(&[&both])), direct, "{tool} {flags:?}");
    }
    // Thunk records alone name each program by its module.
    let thunks = ok("njx-export", &["--table", "thunks", &r0, &r1]);
    let folded = ok_stdin("njx-flamefold", &["--by", "module"], thunks.as_bytes());
    assert!(
        folded
            .lines()
            .all(|l| l.contains(&format!("jit_step ({FP})")) || l.contains("extracted (unknown)")),
        "{folded}"
    );
    // Warm-up over both ranks: 4 steady executions of jit_step, where rank 1 alone
    // would count 3 (its executions 1–3).
    let lines = json_lines(&ok("njx-modules", &["--format", "json", &r0, &r1]));
    assert_eq!(summary_of(&lines, FP)["executions"], 4, "{lines:?}");
    let lines = json_lines(&ok("njx-modules", &["--format", "json", &r1]));
    assert_eq!(summary_of(&lines, FP)["executions"], 3, "{lines:?}");
}

#[test]
fn a_partial_of_another_kind_or_version_is_an_error_naming_its_line() {
    let dir = tempdir();
    let r0 = archive(dir.path(), 0, NORMAL);
    let modules = ok("njx-modules", &["--partial", &r0]);
    let collectives = ok("njx-collectives", &["--partial", &r0]);
    let mixed = write(
        dir.path(),
        "mixed.part",
        format!("{modules}{collectives}").as_bytes(),
    );
    let out = run("njx-modules", &[&mixed], b"");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("mixed.part:2"), "{err}");
    assert!(err.contains("`collectives`, not `modules`"), "{err}");
    let future = write(
        dir.path(),
        "future.part",
        modules
            .replace("\"version\":3", "\"version\":99")
            .as_bytes(),
    );
    let out = run("njx-modules", &[&future], b"");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("future.part:1"), "{}", stderr(&out));
    assert!(stderr(&out).contains("version 99"), "{}", stderr(&out));
    // Flame graphs: partials of --by device and of another --by do not mix.
    let dev = write(
        dir.path(),
        "dev.part",
        ok("njx-flamefold", &["--by", "device", "--partial", &r0]).as_bytes(),
    );
    let out = run("njx-flamefold", &["--by", "module", &dev], b"");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--by device"), "{}", stderr(&out));
    let out = run("njx-flamefold", &["--partial", &r0], b"");
    assert_ne!(out.status.code(), Some(0), "--by stack has no partial");
}
