//! `njx-pgle` through the built binary on thunk and module records made here: the peer's
//! statistic (slowest communication, fastest compute, over steady-state executions on
//! every device; full time = exposed + hidden), exact microseconds, the text format parsed
//! back by a protobuf text-format parser njx did not write (prost-reflect, against XLA's
//! `ProfiledInstructionsProto` compiled by protox), programs that get no file, partial
//! results, and the error paths. The archive case (scheduling names from the HLO dumps)
//! is in `modules_archive.rs`, beside its fixture.

use crate::common::*;
use serde_json::{Value, json};
use std::path::Path;

/// A fingerprint (`fingerprint_before_lhs`).
pub(crate) const FPA: &str = "0123456789abcdef0123456789abcdef";

/// XLA's `tsl/profiler/protobuf/profiled_instructions.proto`: the same package, message,
/// field names and numbers.
const SCHEMA: &str = include_str!("../data/profiled_instructions.proto");

/// Parses a profile as XLA does (text format into `ProfiledInstructionsProto`): (name,
/// cost_us) of every `costs` entry, in order.
pub(crate) fn parse_back(text: &str) -> Vec<(String, f64)> {
    let dir = tempdir();
    write(dir.path(), "profiled_instructions.proto", SCHEMA.as_bytes());
    let pool = protox::Compiler::new([dir.path()])
        .unwrap()
        .open_files(["profiled_instructions.proto"])
        .unwrap()
        .descriptor_pool();
    let desc = pool
        .get_message_by_name("tensorflow.profiler.ProfiledInstructionsProto")
        .unwrap();
    let msg = prost_reflect::DynamicMessage::parse_text_format(desc, text)
        .unwrap_or_else(|e| panic!("not a ProfiledInstructionsProto: {e}\n{text}"));
    let costs = msg.get_field_by_name("costs").unwrap();
    costs
        .as_list()
        .unwrap()
        .iter()
        .map(|v| {
            let m = v.as_message().unwrap();
            let name = m.get_field_by_name("name").unwrap();
            let cost = m.get_field_by_name("cost_us").unwrap();
            (name.as_str().unwrap().to_string(), cost.as_f64().unwrap())
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn thunk(
    program: &str,
    device: u32,
    execution: u32,
    name: &str,
    dur: i64,
    hidden: i64,
    comm: bool,
    warmup: bool,
) -> Value {
    json!({
        "profile": format!("rank{device}"), "program": program, "program_id": 7,
        "module": "jit_a", "execution": execution, "device": device, "name": name,
        "thunk_execution": 0, "start_ns": 1_000 * i64::from(execution), "dur_ns": dur,
        "hidden_ns": hidden, "comm": comm, "warmup": warmup,
        "collective": if comm { json!("all-gather") } else { Value::Null },
        "group_size": if comm { json!(2) } else { Value::Null },
        "message_bytes": if comm { json!(1024) } else { Value::Null },
    })
}

fn module(program: &str, device: u32, execution: u32, dur: i64, warmup: bool) -> Value {
    json!({
        "profile": format!("rank{device}"), "program": program, "program_id": 7,
        "name": "jit_a", "execution": execution, "device": device,
        "start_ns": 1_000 * i64::from(execution), "dur_ns": dur, "thunks": 3,
        "warmup": warmup,
    })
}

const ODD: &str = "custom-call \"x\"\\y";

/// Thunk records of two devices: per device (`0`, `1`) the lines of that device. Steady
/// state: fusion.1 (compute) 500 and 300 ns on device 0, 400 on device 1 (fastest 300;
/// 100 in warm-up); all-gather-start.1 (communication) 1000 + 500 hidden on device 0,
/// 200 + 1700 hidden on device 1 (slowest full time 1900; 5000 in warm-up); the oddly
/// named custom call 1234567 ns. Program `17` (keyed by id: no fingerprint), `unknown`
/// (autotuning) and `jit_a` (keyed by module name) get no file.
fn records() -> [Vec<Value>; 2] {
    [
        vec![
            thunk(FPA, 0, 0, "fusion.1", 100, 0, false, true),
            thunk(FPA, 0, 0, "all-gather-start.1", 4000, 1000, true, true),
            thunk(FPA, 0, 1, "fusion.1", 500, 0, false, false),
            thunk(FPA, 0, 1, "all-gather-start.1", 1000, 500, true, false),
            thunk(FPA, 0, 2, "fusion.1", 300, 0, false, false),
            thunk(FPA, 0, 2, ODD, 1_234_567, 0, false, false),
            thunk("17", 0, 1, "fusion.9", 50, 0, false, false),
            thunk("unknown", 0, 1, "fusion", 60, 0, false, false),
            thunk("jit_a", 0, 1, "fusion.1", 70, 0, false, false),
        ],
        vec![
            thunk(FPA, 1, 1, "fusion.1", 400, 0, false, false),
            thunk(FPA, 1, 1, "all-gather-start.1", 200, 1700, true, false),
        ],
    ]
}

fn lines(values: &[Value]) -> String {
    values.iter().map(|v| format!("{v}\n")).collect()
}

fn modules() -> String {
    lines(&[
        module(FPA, 0, 0, 9_000, true),
        module(FPA, 0, 1, 3_000, false),
        module(FPA, 0, 2, 2_000, false),
        module(FPA, 1, 1, 2_500, false),
    ])
}

/// Runs njx-pgle `args` (the output folder is `-o dir/out`); (stdout, stderr).
fn pgle(dir: &Path, args: &[&str], stdin: &[u8]) -> (String, String) {
    let out = dir.join("out");
    let mut all = vec!["-o", out.to_str().unwrap()];
    all.extend_from_slice(args);
    let got = run("njx-pgle", &all, stdin);
    assert!(got.status.success(), "{}", stderr_of(&got));
    let stderr = stderr_of(&got);
    (String::from_utf8(got.stdout).unwrap(), stderr)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const STEADY: &str = "costs { name: \"all-gather-start.1\" cost_us: 1.900 }
costs { name: \"custom-call \\\"x\\\"\\\\y\" cost_us: 1234.567 }
costs { name: \"fusion.1\" cost_us: 0.300 }
";

#[test]
fn steady_state_slowest_communication_fastest_compute_in_exact_microseconds() {
    let dir = tempdir();
    let [a, b] = records();
    let thunks = write(
        dir.path(),
        "thunks.jsonl",
        lines(&[a, b].concat()).as_bytes(),
    );
    let mods = write(dir.path(), "modules.jsonl", modules().as_bytes());
    let (stdout, stderr) = pgle(dir.path(), &["--format", "json", &thunks, &mods], b"");
    let text = read(&dir.path().join("out").join(format!("{FPA}.pbtxt")));
    assert_eq!(text, STEADY);
    // As XLA reads it: the escaped name comes back whole, the costs exactly.
    assert_eq!(
        parse_back(&text),
        [
            ("all-gather-start.1".to_string(), 1.9),
            (ODD.to_string(), 1234.567),
            ("fusion.1".to_string(), 0.3),
        ]
    );
    // One file: none for the id-keyed program nor for autotuning.
    let files: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files, [format!("{FPA}.pbtxt")]);
    let rows = json_lines(&stdout);
    assert_eq!(rows.len(), 1, "{stdout}");
    assert_eq!(rows[0]["fingerprint"], FPA);
    assert_eq!(rows[0]["module"], "jit_a");
    assert_eq!(rows[0]["instructions"], 3);
    assert_eq!(rows[0]["communication"], 1);
    // Steady-state module time: 3000 + 2000 + 2500 ns.
    assert!((rows[0]["module_ms"].as_f64().unwrap() - 0.0075).abs() < 1e-12);
    assert!(stderr.contains("program 17 (jit_a)"), "{stderr}");
    assert!(
        stderr.contains("without fingerprint_before_lhs"),
        "{stderr}"
    );
    // Records keyed by module name (njx-export --program-key name): no file either.
    assert!(
        stderr.contains("program jit_a (jit_a): records keyed by"),
        "{stderr}"
    );
    assert!(stderr.contains("program unknown"), "{stderr}");
    assert!(
        stderr.contains("3 instructions from records, without their HLO dump"),
        "{stderr}"
    );
}

#[test]
fn include_warmup_counts_initialisation_and_records_come_on_stdin() {
    let dir = tempdir();
    let [a, b] = records();
    let (_, _) = pgle(
        dir.path(),
        &["--include-warmup", "-q"],
        lines(&[a, b].concat()).as_bytes(),
    );
    let text = read(&dir.path().join("out").join(format!("{FPA}.pbtxt")));
    // The warm-up executions: fusion.1 100 ns (faster), all-gather 4000 + 1000 (slower).
    assert!(
        text.starts_with("costs { name: \"all-gather-start.1\" cost_us: 5.000 }\n"),
        "{text}"
    );
    assert!(
        text.ends_with("costs { name: \"fusion.1\" cost_us: 0.100 }\n"),
        "{text}"
    );
}

#[test]
fn partial_results_of_each_device_reduce_to_the_same_profile() {
    let dir = tempdir();
    let [a, b] = records();
    let mut partials = String::new();
    for (i, part) in [a, b].iter().enumerate() {
        let f = write(dir.path(), &format!("d{i}.jsonl"), lines(part).as_bytes());
        let got = run("njx-pgle", &["--partial", &f], b"");
        assert!(got.status.success(), "{}", stderr_of(&got));
        let text = String::from_utf8(crate::common::gunzip(got.stdout)).unwrap();
        assert!(text.starts_with("{\"njx_partial\":\"pgle\""), "{text}");
        partials.push_str(&text);
    }
    // Device 0 alone: its own slowest all-gather (1500) and fastest fusion (300).
    pgle(
        dir.path(),
        &["-q", dir.path().join("d0.jsonl").to_str().unwrap()],
        b"",
    );
    let alone = read(&dir.path().join("out").join(format!("{FPA}.pbtxt")));
    assert!(
        alone.contains("\"all-gather-start.1\" cost_us: 1.500 }"),
        "{alone}"
    );
    pgle(dir.path(), &["-q"], partials.as_bytes());
    let merged = read(&dir.path().join("out").join(format!("{FPA}.pbtxt")));
    assert_eq!(merged, STEADY);
}

#[test]
fn files_are_replaced_whole_and_others_left_alone() {
    let dir = tempdir();
    let out = dir.path().join("out");
    write(&out, "other.pbtxt", b"costs { name: \"x\" cost_us: 1 }\n");
    write(&out, &format!("{FPA}.pbtxt"), b"stale\n");
    let [a, b] = records();
    pgle(dir.path(), &["-q"], lines(&[a, b].concat()).as_bytes());
    assert_eq!(read(&out.join(format!("{FPA}.pbtxt"))), STEADY);
    assert_eq!(
        read(&out.join("other.pbtxt")),
        "costs { name: \"x\" cost_us: 1 }\n"
    );
    // No temporary file left behind.
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 2);
}

#[test]
fn error_paths() {
    let dir = tempdir();
    let [a, _] = records();
    let input = lines(&a);
    // No output folder: usage.
    let got = run("njx-pgle", &[], input.as_bytes());
    assert_eq!(got.status.code(), Some(2), "{}", stderr_of(&got));
    assert!(stderr_of(&got).contains("-o DIR is required"));
    // A file where the folder should be: usage, before reading.
    let file = write(dir.path(), "file", b"x");
    let got = run("njx-pgle", &["-o", &file, "missing.zip"], b"");
    assert_eq!(got.status.code(), Some(2), "{}", stderr_of(&got));
    assert!(
        stderr_of(&got).contains("not a folder"),
        "{}",
        stderr_of(&got)
    );
    // Nothing to write: a data error, and no folder made.
    let out = dir.path().join("none");
    let only_unknown = lines(&[thunk("unknown", 0, 1, "fusion", 60, 0, false, false)]);
    let got = run(
        "njx-pgle",
        &["-o", out.to_str().unwrap()],
        only_unknown.as_bytes(),
    );
    assert_eq!(got.status.code(), Some(1), "{}", stderr_of(&got));
    assert!(stderr_of(&got).contains("no profile to write"));
    assert!(!out.exists());
    // A bad record names its line.
    let bad = format!("{}{{\"profile\": 1}}\n", lines(&a[..1]));
    let got = run("njx-pgle", &["-o", out.to_str().unwrap()], bad.as_bytes());
    assert_eq!(got.status.code(), Some(1), "{}", stderr_of(&got));
    assert!(stderr_of(&got).contains(":2"), "{}", stderr_of(&got));
}

// ---------------------------------------------------------------- real profiles

/// The costs of nsys-jax's own pgle_costs steps on the pax archives (its analysis stops at
/// `scheduling_name` there; `scripts/pgle-peer.py` runs the same steps, on rank 0 and on
/// the four merged by nsys-jax-combine): per fingerprint the instructions and the sum of
/// their costs, µs, to the nanosecond. `scripts/check-pgle.sh` compares every instruction.
const PAX_ALL: [(&str, usize, &str); 7] = [
    ("6f8097e242d8bf3b64f63c04c3f09c47", 2, "2815543.704"),
    ("25fa0b3e673a92036f22550cd7bcb068", 2576, "128416.708"),
    ("04555b1419fd4e5b8933dc47fbf80dbb", 2576, "128420.824"),
    ("e1c23df2884f6139160f4efb0a03afb4", 1, "2.144"),
    ("b07ab1ee1a53560b050381a7fed3dc49", 1, "2.271"),
    ("a4d9b2d8e813c9232594fb8e95886e18", 1, "2.240"),
    ("f5953886c1ff272a4d72292fb5efc1d7", 1, "2.176"),
];
const PAX_RANK0: [(&str, usize, &str); 6] = [
    ("25fa0b3e673a92036f22550cd7bcb068", 2576, "128230.185"),
    ("6f8097e242d8bf3b64f63c04c3f09c47", 2, "1620.056"),
    ("b07ab1ee1a53560b050381a7fed3dc49", 1, "2.271"),
    ("a4d9b2d8e813c9232594fb8e95886e18", 1, "2.240"),
    ("e1c23df2884f6139160f4efb0a03afb4", 1, "2.177"),
    ("f5953886c1ff272a4d72292fb5efc1d7", 1, "2.176"),
];

/// (instructions, sum of costs in ns) of each profile in `dir`, parsed as XLA does.
fn sums(dir: &Path) -> std::collections::BTreeMap<String, (usize, i64)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let costs = parse_back(&read(&path));
            let ns: i64 = costs.iter().map(|c| (c.1 * 1000.0).round() as i64).sum();
            let fp = path.file_stem().unwrap().to_str().unwrap().to_string();
            (fp, (costs.len(), ns))
        })
        .collect()
}

fn expected(rows: &[(&str, usize, &str)]) -> std::collections::BTreeMap<String, (usize, i64)> {
    rows.iter()
        .map(|&(fp, n, us)| {
            let ns = (us.parse::<f64>().unwrap() * 1000.0).round() as i64;
            (fp.to_string(), (n, ns))
        })
        .collect()
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn pax_profiles_agree_with_the_peer() {
    let Some(data) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let archives = pax_archives(&data);
    let dir = tempdir();
    let mut args: Vec<&str> = vec!["--format", "json"];
    args.extend(archives.iter().map(String::as_str));
    let (stdout, stderr) = pgle(dir.path(), &args, b"");
    assert_eq!(sums(&dir.path().join("out")), expected(&PAX_ALL));
    let rows = json_lines(&stdout);
    assert_eq!(rows.len(), 7);
    // Largest steady-state module time first: the barrier-like psum, then the step.
    assert_eq!(rows[0]["module"], "jit__psum");
    assert_eq!(rows[1]["communication"], 23);
    assert!(
        stderr.contains("5158 instructions have no scheduling_name"),
        "{stderr}"
    );
    assert!(
        stderr.contains("module pjit__wrapped_step_fn ran as 2 programs ("),
        "{stderr}"
    );
    let one = tempdir();
    pgle(one.path(), &["-q", &archives[0]], b"");
    assert_eq!(sums(&one.path().join("out")), expected(&PAX_RANK0));
}
