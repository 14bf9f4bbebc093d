//! Issue 28: hostile record streams for the tools added after the first campaign, which
//! read thunk, module and kernel records (njx-thunks, njx-timeline, njx-pgle, njx-kernels),
//! and the cross-tool classes of the issue: times that are no integers or out of range,
//! ids past their width, records of two tables mixed, records given twice, names that are
//! huge, many or full of terminal escapes, and an unwritable stderr.

use super::fixtures::*;
use super::harness::{Case, Expect, Run};
use crate::args;
use serde_json::{Value, json};
use std::path::Path;

/// JSON Lines of `records`.
fn lines(records: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records {
        out.extend_from_slice(r.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

/// The tools that read thunk records, with the arguments each needs besides its input.
fn thunk_readers(d: &Path) -> Vec<(&'static str, Vec<String>)> {
    vec![
        ("njx-thunks", vec![]),
        ("njx-timeline", vec![]),
        (
            "njx-pgle",
            vec!["-o".into(), d.join("pgle").to_str().unwrap().into()],
        ),
        ("njx-collectives", vec![]),
        ("njx-report", vec![]),
    ]
}

/// A kernel record (njx-export --table kernels).
fn kernel(name: &str, start: Value, dur: Value) -> Value {
    json!({
        "profile": "run", "device": 0, "stream": 7, "correlation_id": 1, "start_ns": start,
        "end_ns": 0, "dur_ns": dur, "name": name, "short_name": name, "grid_x": 1,
        "grid_y": 1, "grid_z": 1, "block_x": 1, "block_y": 1, "block_z": 1,
        "registers_per_thread": 8, "static_shared_bytes": 0, "dynamic_shared_bytes": 0,
        "pid": 1, "tid": 1, "api": null, "range": null, "range_id": null
    })
}

pub fn cases() -> Vec<Case> {
    use Expect::{Accepted, Refused, Survives};
    type Edit = fn(&mut Vec<Value>);
    let edits: &[(&str, Edit, Expect)] = &[
        (
            "a start time that is a fraction",
            |v| v[1]["start_ns"] = json!(1.5),
            Refused,
        ),
        (
            "a start time of 1e300",
            |v| v[1]["start_ns"] = json!(1e300),
            Refused,
        ),
        (
            "a start time past 2^61 ns",
            |v| v[1]["start_ns"] = json!(i64::MAX),
            Refused,
        ),
        (
            "a negative duration",
            |v| v[1]["dur_ns"] = json!(-5),
            Refused,
        ),
        (
            "a device past 32 bits",
            |v| v[1]["device"] = json!(4_294_967_296u64),
            Refused,
        ),
        (
            "a time as text",
            |v| v[1]["start_ns"] = json!("100"),
            Refused,
        ),
        (
            "a module record among thunk records",
            |v| {
                v.insert(
                    2,
                    json!({
                        "profile": "rank0", "program": FP, "program_id": 7,
                        "name": "jit_step", "execution": 0, "device": 0,
                        "start_ns": 0, "dur_ns": 4000, "thunks": 3, "warmup": true,
                    }),
                )
            },
            Refused,
        ),
        (
            "a thunk listed twice in its execution",
            |v| {
                let again = v[0].clone();
                v.insert(1, again)
            },
            Refused,
        ),
        (
            "a thunk named with terminal escapes",
            |v| v[1]["name"] = json!("fusion\u{1b}]0;owned\u{7}\u{1b}[31m.1"),
            Survives,
        ),
        (
            "a thunk named with 1 MB of text",
            |v| v[1]["name"] = json!("f".repeat(1 << 20)),
            Survives,
        ),
    ];
    let mut v = Vec::new();
    for &(label, edit, expect) in edits {
        for tool in ["njx-thunks", "njx-timeline", "njx-pgle", "njx-collectives"] {
            v.push(Case::new(
                format!("thunk records: {label}"),
                tool,
                expect,
                move |d: &Path| {
                    let mut records = thunk_records();
                    edit(&mut records);
                    let path = d.join("t.jsonl");
                    std::fs::write(&path, lines(&records)).unwrap();
                    let (_, mut args) = thunk_readers(d)
                        .into_iter()
                        .find(|(t, _)| *t == tool)
                        .unwrap();
                    args.push(path.to_str().unwrap().into());
                    let run = Run::new(args).name("t.jsonl");
                    if tool == "njx-pgle" {
                        // The profile folder and the program's profile, on success.
                        run.output(d.join("pgle"))
                            .output(d.join("pgle").join(format!("{FP}.pbtxt")))
                    } else {
                        run
                    }
                },
            ));
        }
    }
    // 100,000 distinct thunks, each run once in steady state: bounded time and memory.
    for tool in ["njx-thunks", "njx-timeline"] {
        v.push(Case::new(
            "thunk records: 100,000 distinct thunk names",
            tool,
            Accepted,
            move |d: &Path| {
                let mut out = Vec::new();
                for k in 0..100_000i64 {
                    let r = thunk(0, 1, &format!("fusion.{k}"), 10 * k, 5, false);
                    out.extend_from_slice(r.to_string().as_bytes());
                    out.push(b'\n');
                }
                let path = d.join("t.jsonl");
                std::fs::write(&path, out).unwrap();
                Run::new(args![path.to_str().unwrap()]).name("t.jsonl")
            },
        ));
    }
    // Kernel records.
    type Make = fn() -> Vec<Value>;
    let kernels: &[(&str, Make, Expect)] = &[
        (
            "a duration that is a fraction",
            || vec![kernel("k", json!(0), json!(2.5))],
            Refused,
        ),
        (
            "a duration of 1e300",
            || vec![kernel("k", json!(0), json!(1e300))],
            Refused,
        ),
        (
            "a kernel named with terminal escapes",
            || vec![kernel("k\u{1b}[2J", json!(0), json!(5))],
            Survives,
        ),
        (
            "a thunk record among kernel records",
            || {
                vec![
                    kernel("k", json!(0), json!(5)),
                    thunk(0, 1, "fusion.1", 0, 5, false),
                ]
            },
            Refused,
        ),
    ];
    // Each through the grouping by GPU and the rows per GPU too (issue 32), and GPUs that
    // are hostile themselves.
    /// A kernel of 5 ns at `start` on `device`, consistent but for what the case breaks.
    fn on(device: Value, start: i64) -> Value {
        let mut k = kernel("k", json!(start), json!(5));
        k["end_ns"] = json!(start + 5);
        k["device"] = device;
        k
    }
    fn kernels_on(device: Value) -> Vec<Value> {
        vec![on(json!(0), 0), on(device, 10)]
    }
    let gpus: &[(&str, Make, Expect)] = &[
        (
            "a device id past 32 bits",
            || kernels_on(json!(4_294_967_296u64)),
            Refused,
        ),
        ("a negative device id", || kernels_on(json!(-1)), Refused),
        (
            "a device id that is text",
            || kernels_on(json!("0")),
            Refused,
        ),
        ("no device id", || kernels_on(Value::Null), Refused),
        (
            "100,000 GPUs of one profile",
            || {
                (0..100_000u32)
                    .map(|g| on(json!(g), i64::from(g)))
                    .collect()
            },
            Accepted,
        ),
    ];
    let grouped: [&[&str]; 3] = [&[], &["--by", "device"], &["--per-device"]];
    for &(label, make, expect) in kernels.iter().chain(gpus) {
        for by in grouped {
            let named = if by.is_empty() {
                String::new()
            } else {
                format!(" ({})", by.join(" "))
            };
            v.push(Case::new(
                format!("kernel records: {label}{named}"),
                "njx-kernels",
                expect,
                move |d: &Path| {
                    let path = d.join("k.jsonl");
                    std::fs::write(&path, lines(&make())).unwrap();
                    let mut a: Vec<String> = by.iter().map(|s| s.to_string()).collect();
                    a.push(path.to_str().unwrap().into());
                    Run::new(a).name("k.jsonl")
                },
            ));
        }
    }
    v
}
