//! `njx-timeline` through the built binary: the Trace Event JSON of records made here
//! (every slice, lane and metadata event worked out by hand, names that need escaping),
//! of an nsys SQLite export against what `njx-export` writes of it, streaming from stdin,
//! and the real pax archives against `njx-export --table modules|thunks|ranges`.

use crate::common::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};

/// The trace's events, after checking the object's shape.
fn events(text: &str) -> Vec<Value> {
    let trace: Value = serde_json::from_str(text).expect("the output is one JSON object");
    assert_eq!(trace["displayTimeUnit"], "ns");
    trace["traceEvents"].as_array().unwrap().clone()
}

fn slices<'a>(events: &'a [Value], cat: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == cat)
        .collect()
}

/// Microseconds back to nanoseconds (written with three decimals: exact in an f64 for
/// any time a profile holds).
fn ns(v: &Value) -> i64 {
    (v.as_f64().unwrap() * 1000.0).round() as i64
}

fn total(slices: &[&Value]) -> i64 {
    slices.iter().map(|e| ns(&e["dur"])).sum()
}

/// Names of processes (by pid) and threads (by pid, tid) from the metadata events.
type Names = (HashMap<u64, String>, HashMap<(u64, u64), String>);

fn names(events: &[Value]) -> Names {
    let mut p = HashMap::new();
    let mut t = HashMap::new();
    for e in events.iter().filter(|e| e["ph"] == "M") {
        let (pid, tid) = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        let name = e["args"]["name"].as_str().map(String::from);
        match e["name"].as_str().unwrap() {
            "process_name" => assert!(p.insert(pid, name.unwrap()).is_none()),
            "thread_name" => assert!(t.insert((pid, tid), name.unwrap()).is_none()),
            _ => {}
        }
    }
    (p, t)
}

/// Every complete event's track is named, and the slices of each track nest.
fn check_tracks(events: &[Value]) {
    let (procs, threads) = names(events);
    let mut tracks: BTreeMap<(u64, u64), Vec<(i64, i64)>> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let (pid, tid) = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        assert!(procs.contains_key(&pid), "process {pid} unnamed");
        assert!(
            threads.contains_key(&(pid, tid)),
            "thread {pid}/{tid} unnamed"
        );
        let s = ns(&e["ts"]);
        tracks
            .entry((pid, tid))
            .or_default()
            .push((s, s + ns(&e["dur"])));
    }
    for (track, mut iv) in tracks {
        iv.sort_by_key(|&(s, e)| (s, -e));
        let mut open: Vec<i64> = Vec::new();
        for (s, e) in iv {
            while open.last().is_some_and(|&end| end <= s) {
                open.pop();
            }
            assert!(
                open.last().is_none_or(|&end| e <= end),
                "{track:?}: {s}..{e} misnested"
            );
            open.push(e);
        }
    }
}

const MODULES: &str = r#"{"profile":"r0","program":"p","program_id":3,"name":"jit_f","execution":0,"device":1,"start_ns":1000,"dur_ns":10000,"thunks":3,"warmup":true}
{"profile":"r0","program":"p","program_id":3,"name":"jit_f","execution":1,"device":1,"start_ns":20000,"dur_ns":10000,"thunks":3,"warmup":false}
"#;

/// Execution 1: fusion.1 and fusion.2 overlap (two streams) without nesting; the
/// all-reduce runs 2 µs of which fusion.2 hides 1.5.
const THUNKS: &str = r#"{"profile":"r0","program":"p","program_id":3,"module":"jit_f","execution":1,"device":1,"name":"fusion.1","thunk_execution":0,"start_ns":21000,"dur_ns":3000,"hidden_ns":0,"comm":false,"warmup":false,"collective":null,"group_size":null,"message_bytes":null}
{"profile":"r0","program":"p","program_id":3,"module":"jit_f","execution":1,"device":1,"name":"fusion.2\"\n<é>","thunk_execution":0,"start_ns":23000,"dur_ns":3000,"hidden_ns":0,"comm":false,"warmup":false,"collective":null,"group_size":null,"message_bytes":null}
{"profile":"r0","program":"p","program_id":3,"module":"jit_f","execution":1,"device":1,"name":"all-reduce.3","thunk_execution":0,"start_ns":24500,"dur_ns":500,"hidden_ns":1500,"comm":true,"warmup":false,"collective":"all-reduce","group_size":4,"message_bytes":4096}
"#;

const RANGES: &str = r#"{"profile":"r0","pid":7,"tid":70,"id":1,"parent":null,"depth":0,"start_ns":500,"end_ns":9500,"dur_ns":9000,"child_ns":4000,"self_ns":5000,"children":1,"name":"XlaCompile:#module=jit_f#"}
{"profile":"r0","pid":7,"tid":70,"id":2,"parent":1,"depth":1,"start_ns":500,"end_ns":4500,"dur_ns":4000,"child_ns":0,"self_ns":4000,"children":0,"name":"XlaPass\\\"quoted\""}
{"profile":"r0","pid":7,"tid":71,"id":3,"parent":null,"depth":0,"start_ns":-1,"end_ns":1,"dur_ns":2,"child_ns":0,"self_ns":2,"children":0,"name":"early"}
"#;

#[test]
fn records_become_named_tracks_of_nested_slices() {
    let dir = tempdir();
    let m = write(dir.path(), "m.jsonl", MODULES.as_bytes());
    let t = write(dir.path(), "t.jsonl", THUNKS.as_bytes());
    let r = write(dir.path(), "r.jsonl", RANGES.as_bytes());
    let text = ok("njx-timeline", &[&m, &t, &r]);
    // Times as written: microseconds with exactly three decimals.
    assert!(text.contains(r#""ts":24.500,"dur":2.000,"#), "{text}");
    assert!(text.contains(r#""ts":-0.001,"dur":0.002,"#), "{text}");
    let ev = events(&text);
    check_tracks(&ev);
    let (procs, threads) = names(&ev);

    let modules = slices(&ev, "module");
    assert_eq!(modules.len(), 2);
    assert_eq!(total(&modules), 20_000);
    assert_eq!(ns(&modules[0]["ts"]), 1000);
    assert_eq!(
        modules[1]["args"],
        json!({"program": "p", "module": "jit_f", "execution": 1, "thunks": 3, "warmup": false})
    );
    let pid = modules[0]["pid"].as_u64().unwrap();
    assert_eq!(procs[&pid], "device 1 (r0)");
    let lane =
        |e: &Value| threads[&(e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap())].clone();
    assert_eq!(lane(modules[0]), "modules");

    // Overlapping compute thunks go to two lanes; names come back as written.
    let compute = slices(&ev, "compute");
    assert_eq!(compute.len(), 2);
    assert_eq!(total(&compute), 6000);
    assert_eq!(lane(compute[0]), "thunks");
    assert_eq!(lane(compute[1]), "thunks 2");
    assert_eq!(compute[1]["name"], "fusion.2\"\n<é>");

    // Communication: drawn over its whole time, its hidden and exposed parts in args.
    let comm = slices(&ev, "communication");
    assert_eq!(comm.len(), 1);
    assert_eq!(lane(comm[0]), "communication");
    assert_eq!(comm[0]["pid"].as_u64(), Some(pid));
    assert_eq!(ns(&comm[0]["ts"]), 24_500);
    assert_eq!(ns(&comm[0]["dur"]), 2000);
    assert_eq!(comm[0]["args"]["exposed_ns"], 500);
    assert_eq!(comm[0]["args"]["hidden_ns"], 1500);
    assert_eq!(comm[0]["args"]["collective"], "all-reduce");
    assert_eq!(comm[0]["cname"], "good");

    // Ranges: a process per profile and OS process, a thread per OS thread.
    let nvtx = slices(&ev, "nvtx");
    assert_eq!(nvtx.len(), 3);
    assert_eq!(total(&nvtx), 13_002);
    assert_eq!(nvtx[1]["name"], "XlaPass\\\"quoted\"");
    assert_eq!(ns(&nvtx[2]["ts"]), -1);
    assert_eq!(procs[&nvtx[0]["pid"].as_u64().unwrap()], "r0 pid 7");
    assert_eq!(lane(nvtx[0]), "thread 70");
    assert_eq!(lane(nvtx[2]), "thread 71");
    assert_ne!(nvtx[0]["tid"], nvtx[2]["tid"]);
    assert_ne!(nvtx[0]["pid"].as_u64(), Some(pid));

    // --steady leaves warm-up out; stdin works as a file does.
    let text = ok_with("njx-timeline", &["--steady"], MODULES.as_bytes());
    let ev = events(&text);
    assert_eq!(slices(&ev, "module").len(), 1);
}

#[test]
fn empty_input_is_refused_and_other_text_an_error() {
    // Nothing read is no answer (issue 44), and no half trace is left on stdout.
    let out = run("njx-timeline", &[], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(stderr_of(&out).contains("-: empty: nothing to read"));
    let out = run("njx-timeline", &[], b"{\"a\":1}\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("neither range, module nor thunk records"),
        "{}",
        stderr_of(&out)
    );
}

/// Slice counts and durations per category from `njx-export` records of `inputs`.
fn from_export(inputs: &[&str]) -> BTreeMap<&'static str, (usize, i64)> {
    let mut want = BTreeMap::new();
    for table in ["modules", "thunks", "ranges"] {
        let mut args = vec!["--table", table];
        args.extend(inputs);
        for r in json_lines(&ok("njx-export", &args)) {
            let (cat, dur) = match table {
                "modules" => ("module", r["dur_ns"].as_i64().unwrap()),
                "ranges" => ("nvtx", r["dur_ns"].as_i64().unwrap()),
                _ if r["comm"] == true => (
                    "communication",
                    r["dur_ns"].as_i64().unwrap() + r["hidden_ns"].as_i64().unwrap(),
                ),
                _ => ("compute", r["dur_ns"].as_i64().unwrap()),
            };
            let w = want.entry(cat).or_insert((0, 0));
            w.0 += 1;
            w.1 += dur;
        }
    }
    want
}

fn from_trace(ev: &[Value]) -> BTreeMap<&'static str, (usize, i64)> {
    ["module", "compute", "communication", "nvtx"]
        .into_iter()
        .map(|cat| {
            let s = slices(ev, cat);
            (cat, (s.len(), total(&s)))
        })
        .filter(|(_, (n, _))| *n > 0)
        .collect()
}

#[test]
fn an_sqlite_export_as_njx_export_reads_it() {
    let (_dir, db, _dump) = crate::modules_sqlite::fixture(true);
    let ev = events(&ok("njx-timeline", &[&db]));
    check_tracks(&ev);
    let want = from_export(&[&db]);
    assert_eq!(want["module"].0, 6);
    assert_eq!(from_trace(&ev), want);
}

/// The four pax archives: every module, thunk and range record is a slice of the same
/// duration, and every track is named and nests.
#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn pax_timeline_holds_every_record() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let archives = pax_archives(&dir);
    let args: Vec<&str> = archives.iter().map(String::as_str).collect();
    let ev = events(&ok("njx-timeline", &args));
    check_tracks(&ev);
    let want = from_export(&args);
    assert_eq!(want["module"].0, 1283);
    assert_eq!(from_trace(&ev), want);
    let (procs, _) = names(&ev);
    for d in 0..4 {
        assert!(
            procs
                .values()
                .any(|n| *n == format!("device {d} (pax_fsdp4_4proc_proc{d})")),
            "{procs:?}"
        );
    }
}
