//! njx-export on nsys SQLite exports and `.nsys-rep` reports, through the built binary:
//! the push/pop tree with `nvtx_pushpop_trace` semantics, names and domains, start/end
//! ranges, the GPU projection (memcpy, memset, graph launches, processes, threads),
//! schema drift, error paths; and conformance on real exports checked against a
//! brute-force computation.

use crate::common::nsys_sqlite::*;
use crate::common::*;
use rusqlite::params;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A range record as njx-export writes it for an SQLite input.
#[allow(clippy::too_many_arguments)]
fn range(
    profile: &str,
    (pid, tid): (u64, u64),
    id: i64,
    parent: Option<i64>,
    depth: u32,
    (start, end): (i64, i64),
    (child, children): (i64, u32),
    name: &str,
) -> Value {
    json!({
        "profile": profile, "pid": pid, "tid": tid, "id": id, "parent": parent,
        "depth": depth, "start_ns": start, "end_ns": end, "dur_ns": end - start,
        "child_ns": child, "self_ns": end - start - child, "children": children,
        "name": name,
    })
}

#[test]
fn push_pop_ranges_nest_per_thread_as_nsys_reports_them() {
    let dir = tempdir();
    let file = dir.path().join("trace.sqlite");
    let db = NsysDb::create(&file);
    let (t1, t2, p8) = (gtid(7, 1), gtid(7, 2), gtid(8, 1));
    // Rows in no particular order: children before parents, threads interleaved.
    let a1 = db.range(150, 200, t1, "a1");
    let other = db.range(120, 180, t2, "other thread");
    let outer = db.range(100, 1000, t1, "outer");
    let a = db.range(100, 400, t1, "a");
    let b = db.range(500, 900, t1, "b");
    let b1 = db.range(500, 900, t1, "b1 (same times as b)");
    let after = db.range(1000, 1100, t1, "after");
    let zero = db.range(1100, 1100, t1, "zero length at the end of after");
    let proc8 = db.range(100, 1000, p8, "other process");
    drop(db);
    let got = json_lines(&ok("njx-export", &[path_str(&file)]));
    let p = "trace";
    let expected = vec![
        range(p, (7, 1), outer, None, 0, (100, 1000), (700, 2), "outer"),
        range(
            p,
            (8, 1),
            proc8,
            None,
            0,
            (100, 1000),
            (0, 0),
            "other process",
        ),
        range(p, (7, 1), a, Some(outer), 1, (100, 400), (50, 1), "a"),
        range(
            p,
            (7, 2),
            other,
            None,
            0,
            (120, 180),
            (0, 0),
            "other thread",
        ),
        range(p, (7, 1), a1, Some(a), 2, (150, 200), (0, 0), "a1"),
        range(p, (7, 1), b, Some(outer), 1, (500, 900), (400, 1), "b"),
        range(
            p,
            (7, 1),
            b1,
            Some(b),
            2,
            (500, 900),
            (0, 0),
            "b1 (same times as b)",
        ),
        range(p, (7, 1), after, None, 0, (1000, 1100), (0, 1), "after"),
        range(
            p,
            (7, 1),
            zero,
            Some(after),
            1,
            (1100, 1100),
            (0, 0),
            "zero length at the end of after",
        ),
    ];
    assert_eq!(got, expected);

    // Parents come first, so the range tools take the export as it is.
    let through = json_lines(&ok("njx-ranges", &[path_str(&file)]));
    assert_eq!(through.len(), expected.len());
    let summary = ok("njx-compile-summary", &["--total", path_str(&file)]);
    assert!(!summary.is_empty());

    // CSV output has the range header.
    let csv = ok("njx-export", &["--format", "csv", path_str(&file)]);
    assert_eq!(
        csv.lines().next().unwrap(),
        "profile,pid,tid,id,parent,depth,start_ns,end_ns,dur_ns,child_ns,self_ns,children,name"
    );
    assert_eq!(csv.lines().count(), expected.len() + 1);
}

#[test]
fn names_come_from_registered_strings_and_domains_of_the_same_process() {
    let dir = tempdir();
    let file = dir.path().join("names.sqlite");
    let db = NsysDb::create(&file);
    let (t1, t3, t4, p8) = (gtid(7, 1), gtid(7, 3), gtid(7, 4), gtid(8, 1));
    db.string(10, "XlaModule:#hlo_module=jit_f#");
    db.string(11, "TSL");
    // Domain 1 of process 7 is named by a registered string, on another thread than its
    // ranges; domain 2 by literal text (its later re-creation is ignored); domain 1 of
    // process 8 is another domain.
    db.nvtx(DOMAIN_CREATE, 1, None, t3, None, Some(11), 1);
    db.domain(2, t3, 2, "NCCL");
    db.domain(3, t4, 2, "LATE");
    db.domain(4, p8, 1, "Other");
    type Case<'a> = (i64, Option<&'a str>, Option<i64>, i64, i64, &'a str);
    let cases: Vec<Case> = vec![
        // (event type, text, textId, domain, gtid, expected name)
        (
            PUSH_POP,
            None,
            Some(10),
            1,
            t1,
            "TSL:XlaModule:#hlo_module=jit_f#",
        ),
        (
            PUSH_POP,
            Some("ncclAllReduce"),
            None,
            2,
            t1,
            "NCCL:ncclAllReduce",
        ),
        (PUSH_POP, Some("x"), None, 1, p8, "Other:x"),
        (PUSH_POP, Some("plain"), None, 0, t1, "plain"),
        (
            PUSH_POP,
            Some("no such domain"),
            None,
            5,
            t1,
            "no such domain",
        ),
        (PUSH_POP, Some("fallback"), Some(99), 0, t1, "fallback"),
        (PUSH_POP, None, None, 0, t1, ""),
        (NVTXT_PUSH_POP, Some("nvtxt"), None, 0, t1, "nvtxt"),
    ];
    for (i, (event_type, text, text_id, domain, g, _)) in cases.iter().enumerate() {
        let start = 100 * (i as i64 + 1);
        db.nvtx(
            *event_type,
            start,
            Some(start + 10),
            *g,
            *text,
            *text_id,
            *domain,
        );
    }
    // Marks are not ranges.
    db.nvtx(MARK, 5, None, t1, Some("a mark"), None, 0);
    drop(db);
    let got = json_lines(&ok("njx-export", &[path_str(&file)]));
    let names: Vec<&str> = got.iter().map(|r| r["name"].as_str().unwrap()).collect();
    let expected: Vec<&str> = cases.iter().map(|c| c.5).collect();
    assert_eq!(names, expected);
    assert_eq!(got[2]["pid"], 8);
}

#[test]
fn start_end_ranges_are_roots_of_their_own_with_the_flag() {
    let dir = tempdir();
    let file = dir.path().join("se.sqlite");
    let db = NsysDb::create(&file);
    let (t1, t2) = (gtid(1, 1), gtid(1, 2));
    let outer = db.range(0, 100, t1, "outer");
    let inner = db.range(10, 20, t1, "inner");
    let se = db.nvtx(START_END, 5, Some(50), t1, Some("se"), None, 0);
    db.sql(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid, \
         domainId) VALUES (30, 200, ?1, 'se across threads', ?2, ?3, 0)",
        params![NVTXT_START_END, t1, t2],
    );
    let se2 = db.conn.last_insert_rowid();
    drop(db);
    let plain = json_lines(&ok("njx-export", &[path_str(&file)]));
    let ids: Vec<i64> = plain.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, vec![outer, inner]);
    assert_eq!(plain[0]["children"], 1);

    let got = json_lines(&ok("njx-export", &["--start-end", path_str(&file)]));
    let p = "se";
    assert_eq!(
        got,
        vec![
            range(p, (1, 1), outer, None, 0, (0, 100), (10, 1), "outer"),
            range(p, (1, 1), se, None, 0, (5, 50), (0, 0), "se"),
            range(p, (1, 1), inner, Some(outer), 1, (10, 20), (0, 0), "inner"),
            range(
                p,
                (1, 1),
                se2,
                None,
                0,
                (30, 200),
                (0, 0),
                "se across threads"
            ),
        ]
    );
}

#[test]
fn ranges_never_ended_end_at_the_last_timestamp() {
    let dir = tempdir();
    let file = dir.path().join("open.sqlite");
    let db = NsysDb::create(&file);
    let open = db.nvtx(
        PUSH_POP,
        50,
        None,
        gtid(1, 1),
        Some("never popped"),
        None,
        0,
    );
    db.range(0, 300, gtid(1, 2), "other");
    drop(db);
    let out = run("njx-export", &[path_str(&file)], b"");
    assert!(out.status.success(), "{}", stderr_of(&out));
    let got = json_lines(&String::from_utf8(out.stdout.clone()).unwrap());
    let r = got.iter().find(|r| r["id"] == open).unwrap();
    assert_eq!(
        (r["end_ns"].as_i64(), r["dur_ns"].as_i64()),
        (Some(300), Some(250))
    );
    assert!(
        stderr_of(&out).contains("1 NVTX ranges never ended"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn ranges_without_text_or_text_id_are_named_empty_and_counted() {
    let dir = tempdir();
    let file = dir.path().join("nameless.sqlite");
    let db = NsysDb::create(&file);
    db.domain(0, gtid(1, 1), 1, "TSL");
    let outer = db.range(0, 1000, gtid(1, 1), "outer");
    let bare = db.nvtx(PUSH_POP, 10, Some(20), gtid(1, 1), None, None, 0);
    let in_domain = db.nvtx(PUSH_POP, 30, Some(40), gtid(1, 1), None, None, 1);
    // An empty text is a name, if an empty one: not counted.
    db.nvtx(PUSH_POP, 50, Some(60), gtid(1, 1), Some(""), None, 0);
    db.call(12, 14, gtid(1, 1), 1);
    db.kernel(100, 200, gpid(1), 1);
    drop(db);
    let out = run("njx-export", &[path_str(&file)], b"");
    assert!(out.status.success(), "{}", stderr_of(&out));
    let got = json_lines(&String::from_utf8(out.stdout.clone()).unwrap());
    let name = |id: i64| got.iter().find(|r| r["id"] == id).unwrap()["name"].clone();
    assert_eq!(
        (name(outer), name(bare), name(in_domain)),
        (json!("outer"), json!(""), json!("TSL:"))
    );
    let note = format!(
        "njx-export: {}: 2 NVTX ranges have no name (neither text nor textId); named with \
         the empty string\n",
        file.display()
    );
    assert_eq!(stderr_of(&out), note);
    // The GPU projection reads the same ranges and says the same.
    let (got, out) = gpu_ranges(&file);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!((&got[1]["id"], &got[1]["name"]), (&json!(bare), &json!("")));
    assert!(stderr_of(&out).contains(&note), "{}", stderr_of(&out));
}

/// njx-export with `NJX_SORT_RECORDS` set: the readers' sorts and spills then hold that
/// many records in memory.
fn run_with_sort_records(args: &[&str], records: &str) -> Output {
    Command::new(exe("njx-export"))
        .args(args)
        .env("NJX_SORT_RECORDS", records)
        .stdin(Stdio::null())
        .output()
        .expect("run njx-export")
}

#[test]
fn sorting_through_temporary_files_changes_nothing() {
    let dir = tempdir();
    let file = dir.path().join("spill.sqlite");
    let db = NsysDb::create(&file);
    let threads = [gtid(7, 1), gtid(7, 2), gtid(8, 1)];
    let mut seed: u64 = 1;
    let mut rand = |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) % n) as i64
    };
    // Ranges on coarse times (equal starts and ends, zero lengths, some not nested), on
    // three threads, rows in no order.
    let mut rows = Vec::new();
    for (t, &g) in threads.iter().enumerate() {
        for step in 0..20 {
            let s = step * 100 + t as i64;
            rows.push((s, s + 90, g));
            for k in 0..4 {
                let a = s + k * 20 + rand(3) * 5;
                rows.push((a, a + rand(5) * 5, g));
            }
        }
    }
    for i in (1..rows.len()).rev() {
        rows.swap(i, rand(i as u64 + 1) as usize);
    }
    for (i, &(start, end, g)) in rows.iter().enumerate() {
        db.range(start, end, g, &format!("r{}", i % 7));
    }
    // Ranges never ended end at the last timestamp (5000), tied with one that ends there:
    // the row decides, so the one ended comes first and contains them.
    db.range(4000, 5000, threads[1], "the last timestamp");
    let a = db.range(3000, 5000, threads[0], "ends at the last timestamp");
    let u = db.nvtx(PUSH_POP, 3000, None, threads[0], Some("never"), None, 0);
    let u2 = db.nvtx(
        PUSH_POP,
        3500,
        None,
        threads[0],
        Some("never, inner"),
        None,
        0,
    );
    db.nvtx(START_END, 150, Some(950), threads[0], Some("se"), None, 0);
    db.nvtx(START_END, 2000, None, threads[2], Some("se open"), None, 0);
    // Three executions of an XLA module, each with a thunk launching a kernel, in a process
    // of their own, so that the module table has records to sort.
    let xla = gtid(9, 1);
    for k in 0..3 {
        let s = 4000 + k * 100;
        db.range(s, s + 90, xla, "XlaModule:#hlo_module=jit_f,program_id=1#");
        db.range(s + 10, s + 60, xla, "Thunk:#hlo_op=fusion.1#");
        db.call(s + 20, s + 21, xla, 1000 + k);
        db.kernel(s + 30, s + 50, gpid(9), 1000 + k);
    }
    // Launches: some calls inside ranges, some not, one process per thread group.
    for c in 0..90 {
        let g = threads[(c % 3) as usize];
        let s = c * 23 + rand(10);
        db.call(s, s + rand(3), g, c);
        db.kernel(
            s + 100,
            s + 150 + rand(20),
            gpid(if c % 3 == 2 { 8 } else { 7 }),
            c,
        );
    }
    drop(db);

    let f = path_str(&file);
    let cases: [&[&str]; 5] = [
        &[f],
        &["--start-end", f],
        &["--table", "gpu-ranges", f],
        &["--table", "gpu-ranges", "--start-end", f],
        &["--table", "modules", f],
    ];
    for args in cases {
        let held = run_with_sort_records(args, "100000");
        assert!(held.status.success(), "{args:?}: {}", stderr_of(&held));
        assert!(!held.stdout.is_empty(), "{args:?}");
        for records in ["1", "2", "7"] {
            let spilled = run_with_sort_records(args, records);
            assert_eq!(
                String::from_utf8_lossy(&spilled.stdout),
                String::from_utf8_lossy(&held.stdout),
                "{args:?} with {records} records held"
            );
            assert_eq!(stderr_of(&spilled), stderr_of(&held));
            assert_eq!(spilled.status.code(), held.status.code());
        }
    }

    let got = json_lines(&String::from_utf8(run_with_sort_records(&[f], "2").stdout).unwrap());
    assert_eq!(got.len(), rows.len() + 4 + 6);
    let find = |id: i64| got.iter().find(|r| r["id"] == id).unwrap();
    let p = "spill";
    assert_eq!(
        find(a),
        &range(
            p,
            (7, 1),
            a,
            None,
            0,
            (3000, 5000),
            (2000, 1),
            "ends at the last timestamp"
        )
    );
    assert_eq!(
        find(u),
        &range(p, (7, 1), u, Some(a), 1, (3000, 5000), (1500, 1), "never")
    );
    assert_eq!(
        find(u2),
        &range(
            p,
            (7, 1),
            u2,
            Some(u),
            2,
            (3500, 5000),
            (0, 0),
            "never, inner"
        )
    );
    // Parents first, in start order; every child counted once.
    let mut seen = HashSet::new();
    let mut children: HashMap<i64, (u64, i64)> = HashMap::new();
    let mut last_start = i64::MIN;
    for r in &got {
        let start = r["start_ns"].as_i64().unwrap();
        assert!(start >= last_start);
        last_start = start;
        if let Some(parent) = r["parent"].as_i64() {
            assert!(seen.contains(&parent), "{r}");
            let e = children.entry(parent).or_default();
            e.0 += 1;
            e.1 += r["dur_ns"].as_i64().unwrap();
        }
        seen.insert(r["id"].as_i64().unwrap());
    }
    for r in &got {
        let (n, child) = children
            .get(&r["id"].as_i64().unwrap())
            .copied()
            .unwrap_or_default();
        assert_eq!(
            (r["children"].as_u64(), r["child_ns"].as_i64()),
            (Some(n), Some(child)),
            "{r}"
        );
    }
}

/// A gpu-range record as njx-export writes it for an SQLite input.
fn gpu(
    (pid, tid): (u64, u64),
    (id, parent, depth, children): (i64, Option<i64>, u32, u32),
    name: &str,
    (start, end, ops): (i64, i64, u64),
    (cpu_start, cpu_end): (i64, i64),
) -> Value {
    json!({
        "profile": "gpu", "pid": pid, "tid": tid, "id": id, "parent": parent,
        "depth": depth, "children": children, "name": name, "start_ns": start,
        "dur_ns": end - start, "cpu_start_ns": cpu_start, "cpu_dur_ns": cpu_end - cpu_start,
        "gpu_ops": ops, "device": null, "stream": null,
    })
}

/// Process 7 with two threads and process 8: kernels, a memcpy, a memset, a CUDA graph
/// launch (three kernels, one correlation id), ranges without GPU work, calls outside
/// every range, a kernel without its call, and the same correlation id in both processes.
fn gpu_fixture(file: &Path) -> [i64; 8] {
    let db = NsysDb::create(file);
    let (t1, t2, p8) = (gtid(7, 1), gtid(7, 2), gtid(8, 1));
    let (g7, g8) = (gpid(7), gpid(8));
    let step = db.range(0, 1000, t1, "step");
    let fwd = db.range(10, 400, t1, "fwd");
    let k1 = db.range(20, 50, t1, "k1");
    db.range(60, 80, t1, "no GPU work");
    let graph = db.range(420, 500, t1, "graph");
    db.range(600, 700, t1, "idle");
    let r2 = db.range(0, 1000, t2, "t2");
    let r8 = db.range(0, 1000, p8, "p8");
    db.call(25, 30, t1, 1);
    db.kernel(500, 600, g7, 1);
    db.call(100, 110, t1, 2);
    db.memcpy(610, 650, g7, 2);
    db.call(430, 440, t1, 3);
    for (s, e) in [(700, 720), (720, 760), (760, 800)] {
        db.kernel(s, e, g7, 3);
    }
    // Straddles the end of `step`: in no range.
    db.call(990, 1010, t1, 4);
    db.memset(1100, 1200, g7, 4);
    db.call(2000, 2010, t1, 5);
    db.kernel(2100, 2200, g7, 5);
    db.call(50, 60, t2, 6);
    db.memset(300, 320, g7, 6);
    db.kernel(3000, 3100, g7, 77);
    db.call(500, 510, p8, 1);
    db.kernel(900, 950, g8, 1);
    // A call without GPU work.
    db.call(30, 40, t1, 8);
    [step, fwd, k1, graph, r2, r8, 0, 0]
}

#[test]
fn gpu_projection_follows_launches_through_their_calls() {
    let dir = tempdir();
    let file = dir.path().join("gpu.sqlite");
    let [step, fwd, k1, graph, r2, r8, ..] = gpu_fixture(&file);
    let (got, out) = gpu_ranges(&file);
    let expected = vec![
        gpu((7, 2), (r2, None, 0, 0), "t2", (300, 320, 1), (0, 1000)),
        gpu((7, 1), (step, None, 0, 2), "step", (500, 800, 3), (0, 1000)),
        gpu(
            (7, 1),
            (fwd, Some(step), 1, 1),
            "fwd",
            (500, 650, 2),
            (10, 400),
        ),
        gpu((7, 1), (k1, Some(fwd), 2, 0), "k1", (500, 600, 1), (20, 50)),
        gpu(
            (7, 1),
            (graph, Some(step), 1, 0),
            "graph",
            (700, 800, 1),
            (420, 500),
        ),
        gpu((8, 1), (r8, None, 0, 0), "p8", (900, 950, 1), (0, 1000)),
    ];
    assert_eq!(got, expected);
    let err = stderr_of(&out);
    assert!(
        err.contains("2 of 8 CUDA launches with GPU work were made outside every NVTX range"),
        "{err}"
    );
    assert!(
        err.contains("1 of 8 GPU launches have no CUDA API call"),
        "{err}"
    );

    // The same with --start-end: a start/end range on thread 1 takes the calls within it.
    let db = rusqlite::Connection::open(&file).unwrap();
    db.execute(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) \
         VALUES (0, 3000, ?1, 'se', ?2, 0)",
        params![START_END, gtid(7, 1)],
    )
    .unwrap();
    let se = db.last_insert_rowid();
    drop(db);
    let with = json_lines(&ok(
        "njx-export",
        &["--table", "gpu-ranges", "--start-end", path_str(&file)],
    ));
    assert_eq!(with.len(), expected.len() + 1);
    let r = with
        .iter()
        .find(|r| r["id"] == se)
        .expect("start/end range");
    assert_eq!(
        r,
        &gpu((7, 1), (se, None, 0, 0), "se", (500, 2200, 5), (0, 3000))
    );
    // Without the flag the start/end range is not there.
    let without = json_lines(&ok(
        "njx-export",
        &["--table", "gpu-ranges", path_str(&file)],
    ));
    assert_eq!(without, expected);
}

#[test]
fn gpu_projection_says_ranges_never_ended() {
    let dir = tempdir();
    let file = dir.path().join("gpu.sqlite");
    let db = NsysDb::create(&file);
    let open = db.nvtx(PUSH_POP, 50, None, gtid(1, 1), Some("open"), None, 0);
    db.range(0, 300, gtid(1, 2), "other");
    db.call(100, 110, gtid(1, 1), 1);
    db.kernel(120, 140, gpid(1), 1);
    drop(db);
    let (got, out) = gpu_ranges(&file);
    // Ended at the last NVTX timestamp (300), as in the range table.
    assert_eq!(
        got,
        vec![gpu(
            (1, 1),
            (open, None, 0, 0),
            "open",
            (120, 140, 1),
            (50, 300)
        )]
    );
    assert_eq!(
        stderr_of(&out),
        format!(
            "njx-export: {}: 1 NVTX ranges never ended; they end at the last NVTX timestamp, \
             as in nsys' reports\n",
            file.display()
        )
    );
}

#[test]
fn calls_sharing_a_correlation_id_in_one_process_are_refused() {
    let dir = tempdir();
    // Two processes may use one correlation id (the fixture has id 1 in processes 7 and 8);
    // two calls of one process may not, with GPU work of that id or without.
    let fails = |name: &str, fix: &dyn Fn(&NsysDb), needles: &[&str]| {
        let file = dir.path().join(name);
        gpu_fixture(&file);
        let db = NsysDb {
            conn: rusqlite::Connection::open(&file).unwrap(),
        };
        fix(&db);
        drop(db);
        let out = run(
            "njx-export",
            &["--table", "gpu-ranges", path_str(&file)],
            b"",
        );
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(out.stdout.is_empty());
        assert!(err.contains(path_str(&file)), "{err}");
        for n in needles {
            assert!(err.contains(n), "expected `{n}` in: {err}");
        }
    };
    // The fixture's calls are rows 1 to 8; 9 repeats the id of row 1 (which launched a
    // kernel) on the other thread.
    fails(
        "with-work.sqlite",
        &|db| db.call(800, 810, gtid(7, 2), 1),
        &[
            "table CUPTI_ACTIVITY_KIND_RUNTIME, rows 1 and 9: two CUDA API calls of process \
             7 with correlationId 1 (thread 1 at 25 ns; thread 2 at 800 ns)",
            "ambiguous",
        ],
    );
    // Id 8 launched nothing.
    fails(
        "without-work.sqlite",
        &|db| db.call(850, 860, gtid(7, 1), 8),
        &["rows 8 and 9", "process 7 with correlationId 8"],
    );
    // Calls after the last launch, (process 8, id 1), are read too.
    fails(
        "after-the-last-launch.sqlite",
        &|db| {
            db.call(850, 860, gtid(8, 1), 9);
            db.call(870, 880, gtid(8, 2), 9);
        },
        &["rows 9 and 10", "process 8 with correlationId 9"],
    );
    // One call in each table of API calls.
    fails(
        "two-tables.sqlite",
        &|db| {
            db.sql(
                "CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER AS \
                 SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE 0",
                [],
            );
            db.sql(
                "INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER \
                 (start, end, eventClass, globalTid, correlationId, nameId, returnValue) \
                 VALUES (430, 435, 0, ?1, 3, 1, 0)",
                params![gtid(7, 1)],
            );
        },
        &[
            "table CUPTI_ACTIVITY_KIND_RUNTIME, row 3 and table CUPTI_ACTIVITY_KIND_DRIVER, \
             row 1",
            "correlationId 3",
        ],
    );
}

#[test]
fn missing_tables_mean_nothing_was_recorded() {
    let dir = tempdir();
    let some = |name: &str, tables: &[&str]| -> PathBuf {
        let file = dir.path().join(name);
        let db = NsysDb::with_tables(&file, tables);
        if tables.contains(&"NVTX_EVENTS") {
            db.range(0, 100, gtid(1, 1), "r");
        }
        if tables.contains(&"CUPTI_ACTIVITY_KIND_RUNTIME") {
            db.call(10, 20, gtid(1, 1), 1);
        }
        if tables.contains(&"CUPTI_ACTIVITY_KIND_KERNEL") {
            db.kernel(30, 40, gpid(1), 1);
        }
        file
    };
    // Kernels only (no memcpy, memset, enum or string tables): projected.
    let f = some(
        "kernels.sqlite",
        &[
            "META_DATA_EXPORT",
            "NVTX_EVENTS",
            "CUPTI_ACTIVITY_KIND_RUNTIME",
            "CUPTI_ACTIVITY_KIND_KERNEL",
        ],
    );
    let got = json_lines(&ok("njx-export", &["--table", "gpu-ranges", path_str(&f)]));
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0]["start_ns"].as_i64(), got[0]["gpu_ops"].as_i64()),
        (Some(30), Some(1))
    );

    let cases: &[(&str, &[&str], &str)] = &[
        (
            "no-runtime.sqlite",
            &[
                "META_DATA_EXPORT",
                "NVTX_EVENTS",
                "CUPTI_ACTIVITY_KIND_KERNEL",
            ],
            "no CUPTI_ACTIVITY_KIND_RUNTIME table: the profile recorded no CUDA API calls",
        ),
        (
            "no-gpu.sqlite",
            &[
                "META_DATA_EXPORT",
                "NVTX_EVENTS",
                "CUPTI_ACTIVITY_KIND_RUNTIME",
            ],
            "table: the profile recorded no GPU work",
        ),
        (
            "no-nvtx.sqlite",
            &[
                "META_DATA_EXPORT",
                "CUPTI_ACTIVITY_KIND_RUNTIME",
                "CUPTI_ACTIVITY_KIND_KERNEL",
            ],
            "no NVTX_EVENTS table: the profile recorded no NVTX ranges",
        ),
    ];
    for (name, tables, message) in cases {
        let f = some(name, tables);
        let out = run("njx-export", &["--table", "gpu-ranges", path_str(&f)], b"");
        assert!(out.status.success(), "{name}: {}", stderr_of(&out));
        assert!(out.stdout.is_empty(), "{name}");
        let err = stderr_of(&out);
        assert!(err.contains(message) && err.contains(name), "{name}: {err}");
    }
}

#[test]
fn an_export_without_nvtx_exports_nothing_and_says_so() {
    let dir = tempdir();
    let file = dir.path().join("cuda-only.sqlite");
    NsysDb::with_tables(&file, &["META_DATA_EXPORT", "StringIds"]);
    let out = run("njx-export", &[path_str(&file)], b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr_of(&out),
        format!(
            "njx-export: {}: no NVTX_EVENTS table: the profile recorded no NVTX ranges\n",
            file.display()
        )
    );
}

#[test]
fn bad_files_are_refused_naming_the_file_and_row() {
    let dir = tempdir();
    let fails = |file: &Path, args: &[&str], needles: &[&str]| {
        let mut all = args.to_vec();
        all.push(path_str(file));
        let out = run("njx-export", &all, b"");
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(path_str(file)), "{err}");
        for n in needles {
            assert!(err.contains(n), "expected `{n}` in: {err}");
        }
    };
    // SQLite's header, then garbage.
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend(std::iter::repeat_n(0xA5u8, 4000));
    let corrupt = PathBuf::from(write(dir.path(), "corrupt.sqlite", &bytes));
    fails(&corrupt, &[], &["not a readable SQLite database"]);
    fails(
        &corrupt,
        &["--table", "gpu-ranges"],
        &["not a readable SQLite database"],
    );

    // A database, but not nsys'.
    let other = dir.path().join("other.sqlite");
    let conn = rusqlite::Connection::open(&other).unwrap();
    conn.execute_batch("CREATE TABLE users (id INTEGER, name TEXT)")
        .unwrap();
    drop(conn);
    fails(&other, &[], &["not an nsys export", "tables: users"]);

    // A range ending before it starts.
    let backwards = dir.path().join("backwards.sqlite");
    let db = NsysDb::create(&backwards);
    db.range(0, 100, gtid(1, 1), "fine");
    let bad = db.range(500, 400, gtid(1, 1), "backwards");
    drop(db);
    fails(
        &backwards,
        &[],
        &[
            &format!("table NVTX_EVENTS, row {bad}"),
            "range ends (400) before it starts (500)",
        ],
    );

    // Text where a time belongs.
    let text = dir.path().join("text.sqlite");
    let db = NsysDb::create(&text);
    db.sql(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) \
         VALUES ('soon', 100, 59, 'r', 1)",
        [],
    );
    drop(db);
    fails(
        &text,
        &[],
        &[
            "row 1",
            "column `start`: expected an integer, found the text \"soon\"",
        ],
    );

    // A kernel ending before it starts.
    let kernel = dir.path().join("kernel.sqlite");
    let db = NsysDb::create(&kernel);
    db.range(0, 100, gtid(1, 1), "r");
    db.kernel(50, 40, gpid(1), 1);
    drop(db);
    fails(
        &kernel,
        &["--table", "gpu-ranges"],
        &[
            "table CUPTI_ACTIVITY_KIND_KERNEL, row 1",
            "ends (40) before it starts (50)",
        ],
    );

    // An NVTX table without a column nsys always writes.
    let nocol = dir.path().join("nocol.sqlite");
    let db = NsysDb::with_tables(&nocol, &["META_DATA_EXPORT"]);
    db.sql(
        "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT)",
        [],
    );
    drop(db);
    fails(
        &nocol,
        &[],
        &["table NVTX_EVENTS has no column `globalTid`"],
    );
}

#[test]
fn older_and_newer_schemas_are_read_by_column_name() {
    let dir = tempdir();
    let file = dir.path().join("old.sqlite");
    // The older name of the metadata table, columns in another order, extra columns, no
    // textId/domainId/endGlobalTid and no enum table; of the kernels' columns only those
    // every reader of the table requires (`deviceId` among them: the kernel table and the
    // launchers read it, and one rule holds for every reader).
    let conn = rusqlite::Connection::open(&file).unwrap();
    conn.execute_batch(
        "CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT);
         CREATE TABLE NVTX_EVENTS (text TEXT, globalTid INTEGER, eventType INTEGER,
             newColumn BLOB, end INTEGER, start INTEGER);
         CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (correlationId INTEGER, globalTid INTEGER,
             start INTEGER, end INTEGER, somethingNew INTEGER);
         CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (globalPid INTEGER, correlationId INTEGER,
             qmdLastCtaDone INTEGER, start INTEGER, end INTEGER, deviceId INTEGER);",
    )
    .unwrap();
    conn.execute(
        "INSERT INTO NVTX_EVENTS (text, globalTid, eventType, end, start) \
         VALUES ('outer', ?1, 59, 100, 0), ('inner', ?1, 59, 50, 10)",
        params![gtid(3, 4)],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (correlationId, globalTid, start, end) \
         VALUES (9, ?1, 20, 30)",
        params![gtid(3, 4)],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (globalPid, correlationId, start, end, \
         deviceId) VALUES (?1, 9, 200, 300, 0)",
        params![gpid(3)],
    )
    .unwrap();
    drop(conn);
    let got = json_lines(&ok("njx-export", &[path_str(&file)]));
    assert_eq!(got.len(), 2);
    assert_eq!(got[1]["parent"], got[0]["id"]);
    assert_eq!(
        (got[1]["pid"].as_u64(), got[1]["tid"].as_u64()),
        (Some(3), Some(4))
    );
    let g = json_lines(&ok(
        "njx-export",
        &["--table", "gpu-ranges", path_str(&file)],
    ));
    assert_eq!(g.len(), 2);
    assert!(g.iter().all(|r| r["start_ns"] == 200 && r["dur_ns"] == 100));
}

/// Runs njx-export with `PATH` and `TMPDIR` set.
fn run_with_path(args: &[&str], path: &str, tmp: &Path) -> Output {
    Command::new(exe("njx-export"))
        .args(args)
        .env("PATH", path)
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .output()
        .expect("run njx-export")
}

#[test]
fn nsys_reports_are_exported_with_nsys_from_path() {
    let dir = tempdir();
    let fixture = dir.path().join("fixture.sqlite");
    let db = NsysDb::create(&fixture);
    db.range(0, 100, gtid(1, 1), "outer");
    db.range(10, 20, gtid(1, 1), "inner");
    drop(db);
    let report = PathBuf::from(write(
        dir.path(),
        "run1.nsys-rep",
        b"NVIDIA Tegra Profiler Report 2025@1@1@110",
    ));
    let bin = dir.path().join("bin");
    fake_nsys(&bin, &fixture, 0, 0.0);
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // The stand-in needs `cp` from the system's PATH.
    let system = std::env::var("PATH").unwrap_or_default();
    let with = |bin: &Path| format!("{}:{system}", bin.display());
    let out = run_with_path(&[path_str(&report)], &with(&bin), &tmp);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let got = json_lines(&String::from_utf8(out.stdout.clone()).unwrap());
    assert_eq!(got.len(), 2);
    assert_eq!(got[0]["profile"], "run1");
    assert_eq!(got[1]["parent"], got[0]["id"]);
    // nsys' chatter went to stderr, its arguments were the documented ones, and the
    // temporary export is gone.
    assert!(stderr_of(&out).contains("Processing events..."));
    let args = std::fs::read_to_string(bin.join("args")).unwrap();
    assert!(
        args.starts_with("export --type sqlite --force-overwrite true --output ")
            && args.trim_end().ends_with(path_str(&report)),
        "{args}"
    );
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);

    // Recognised by its header whatever its name, for every table.
    let renamed = PathBuf::from(write(
        dir.path(),
        "capture.bin",
        b"NVIDIA Tegra Profiler Report 2025@1@1@110",
    ));
    let out = run_with_path(
        &["--table", "gpu-ranges", path_str(&renamed)],
        &with(&bin),
        &tmp,
    );
    assert!(out.status.success(), "{}", stderr_of(&out));

    // nsys failing, and nsys missing.
    let failing = dir.path().join("failing");
    fake_nsys(&failing, &fixture, 3, 0.0);
    let out = run_with_path(&[path_str(&report)], &with(&failing), &tmp);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr_of(&out).contains("`nsys export --type sqlite` failed"));
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = run_with_path(&[path_str(&report)], path_str(&empty), &tmp);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert!(
        err.contains(path_str(&report))
            && err.contains("`nsys` is not on PATH")
            && err.contains("nsys export --type sqlite REPORT.nsys-rep"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
}

// ---- real exports ----------------------------------------------------------------------

/// One push/pop range read straight from a real export.
struct Raw {
    id: i64,
    gtid: i64,
    start: i64,
    end: i64,
    name: String,
}

fn raw_ranges(file: &Path) -> Vec<Raw> {
    let conn =
        rusqlite::Connection::open_with_flags(file, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT e.rowid, e.globalTid, e.start, e.end, coalesce(s.value, e.text, '') \
             FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId \
             WHERE e.eventType IN (59, 70)",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok(Raw {
            id: r.get(0)?,
            gtid: r.get(1)?,
            start: r.get(2)?,
            end: r.get(3)?,
            name: r.get(4)?,
        })
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// For each range, its tightest container on the same thread, by comparing every pair
/// of ranges of a thread (nsys' definition).
fn brute_force_parents(raw: &[Raw]) -> HashMap<i64, Option<i64>> {
    let mut by_thread: HashMap<i64, Vec<&Raw>> = HashMap::new();
    for r in raw {
        by_thread.entry(r.gtid).or_default().push(r);
    }
    let mut parents = HashMap::new();
    for ranges in by_thread.values() {
        for c in ranges {
            let mut best: Option<(i64, i64)> = None;
            for p in ranges {
                if p.id != c.id && p.start <= c.start && c.end <= p.end {
                    let tightness = (c.start - p.start) + (p.end - c.end);
                    if best.is_none_or(|(t, _)| tightness < t) {
                        best = Some((tightness, p.id));
                    }
                }
            }
            parents.insert(c.id, best.map(|b| b.1));
        }
    }
    parents
}

fn check_against_brute_force(file: &Path, expected_count: usize) {
    let raw = raw_ranges(file);
    assert_eq!(raw.len(), expected_count);
    let parents = brute_force_parents(&raw);
    let got = json_lines(&ok("njx-export", &[path_str(file)]));
    assert_eq!(got.len(), expected_count);
    let by_id: HashMap<i64, &Raw> = raw.iter().map(|r| (r.id, r)).collect();
    let mut children: HashMap<i64, (u64, i64)> = HashMap::new();
    for (id, parent) in &parents {
        if let Some(p) = parent {
            let r = by_id[id];
            let e = children.entry(*p).or_default();
            e.0 += 1;
            e.1 += r.end - r.start;
        }
    }
    let depth = |mut id: i64| {
        let mut d = 0;
        while let Some(p) = parents[&id] {
            d += 1;
            id = p;
        }
        d
    };
    let mut seen = HashSet::new();
    let mut last_start = i64::MIN;
    for rec in &got {
        let id = rec["id"].as_i64().unwrap();
        assert!(seen.insert(id), "duplicate id {id}");
        let r = by_id[&id];
        let (n, child) = children.get(&id).copied().unwrap_or_default();
        let expected = json!({
            "profile": rec["profile"], "pid": (r.gtid >> 24) & 0xFFFFFF,
            "tid": r.gtid & 0xFFFFFF, "id": id, "parent": parents[&id],
            "depth": depth(id), "start_ns": r.start, "end_ns": r.end,
            "dur_ns": r.end - r.start, "child_ns": child,
            "self_ns": r.end - r.start - child, "children": n, "name": r.name,
        });
        assert_eq!(rec, &expected);
        assert!(r.start >= last_start, "records in start order");
        last_start = r.start;
        if let Some(p) = parents[&id] {
            assert!(seen.contains(&p), "parent {p} written before {id}");
        }
    }
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn real_exports_give_the_tree_a_brute_force_containment_check_gives() {
    let Some(dir) = shared_data("nvfuser_nsys_sqlite") else {
        return;
    };
    check_against_brute_force(&dir.join("report1_nsys2025.1.1.sqlite"), 13_513);
    check_against_brute_force(&dir.join("report2_nsys2024.6.2.sqlite"), 652);
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn real_export_without_nvtx_reads_without_error() {
    let Some(dir) = shared_data("testcuda_nsys2026_sqlite") else {
        return;
    };
    let file = dir.join("report1_nsys2026.1.1.sqlite");
    for table in ["ranges", "gpu-ranges"] {
        let out = run("njx-export", &["--table", table, path_str(&file)], b"");
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
        assert!(out.stdout.is_empty());
        assert!(stderr_of(&out).contains("no NVTX_EVENTS table"));
    }
}

/// The GPU projection of every range of a real export, by brute force: the calls of the
/// range's thread that it contains, their launches' GPU work (kernels, memcpy, memset of
/// the call's process with its correlation id).
fn brute_force_projection(file: &Path) -> (HashMap<i64, (i64, i64, u64)>, usize) {
    let conn =
        rusqlite::Connection::open_with_flags(file, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut launches: HashMap<(i64, i64), (i64, i64)> = HashMap::new();
    let mut kernels = 0;
    for table in [
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
    ] {
        let mut stmt = conn
            .prepare(&format!(
                "SELECT globalPid, correlationId, start, end FROM {table}"
            ))
            .unwrap();
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap();
        for row in rows {
            let (gp, corr, s, e): (i64, i64, i64, i64) = row.unwrap();
            if table.ends_with("KERNEL") {
                kernels += 1;
            }
            let l = launches.entry((gp, corr)).or_insert((s, e));
            *l = (l.0.min(s), l.1.max(e));
        }
    }
    let mut stmt = conn
        .prepare("SELECT globalTid, correlationId, start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME")
        .unwrap();
    let calls: Vec<(i64, i64, i64, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut proj = HashMap::new();
    for r in raw_ranges(file) {
        let mut p: Option<(i64, i64, u64)> = None;
        for &(g, corr, s, e) in &calls {
            let gp = g & !0xFF_FFFF;
            if g == r.gtid
                && r.start <= s
                && e <= r.end
                && let Some(&(ls, le)) = launches.get(&(gp, corr))
            {
                p = Some(match p {
                    None => (ls, le, 1),
                    Some((a, b, n)) => (a.min(ls), b.max(le), n + 1),
                });
            }
        }
        if let Some(p) = p {
            proj.insert(r.id, p);
        }
    }
    (proj, kernels)
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn real_export_gpu_projection_matches_a_brute_force_projection() {
    let Some(dir) = shared_data("nvfuser_nsys_sqlite") else {
        return;
    };
    for (name, attributed_launches) in [
        ("report1_nsys2025.1.1.sqlite", 8),
        ("report2_nsys2024.6.2.sqlite", 2),
    ] {
        let file = dir.join(name);
        let (expected, kernels) = brute_force_projection(&file);
        let (got, _) = gpu_ranges(&file);
        assert_eq!(got.len(), expected.len(), "{name}");
        let ranges: HashMap<i64, Value> = json_lines(&ok("njx-export", &[path_str(&file)]))
            .into_iter()
            .map(|r| (r["id"].as_i64().unwrap(), r))
            .collect();
        let mut roots_ops = 0;
        for rec in &got {
            let id = rec["id"].as_i64().unwrap();
            let (s, e, n) = expected[&id];
            let cpu = &ranges[&id];
            assert_eq!(
                (
                    rec["start_ns"].as_i64().unwrap(),
                    rec["start_ns"].as_i64().unwrap() + rec["dur_ns"].as_i64().unwrap(),
                    rec["gpu_ops"].as_u64().unwrap()
                ),
                (s, e, n),
                "{name}: range {id}"
            );
            assert_eq!(rec["parent"], cpu["parent"], "{name}: range {id}");
            assert_eq!(rec["depth"], cpu["depth"]);
            assert_eq!(rec["name"], cpu["name"]);
            assert_eq!(rec["cpu_start_ns"], cpu["start_ns"]);
            assert_eq!(rec["cpu_dur_ns"], cpu["dur_ns"]);
            let kept_children = got.iter().filter(|g| g["parent"] == rec["id"]).count();
            assert_eq!(rec["children"].as_u64(), Some(kept_children as u64));
            if rec["parent"].is_null() {
                roots_ops += n;
            }
        }
        // Every launch made inside a range is in exactly one root.
        assert_eq!(roots_ops, attributed_launches, "{name}");
        assert!(kernels >= attributed_launches as usize);
    }
}

/// `njx-export --table gpu-ranges FILE`, which must succeed: its records, and the run.
fn gpu_ranges(file: &Path) -> (Vec<Value>, Output) {
    let out = run(
        "njx-export",
        &["--table", "gpu-ranges", path_str(file)],
        b"",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    (
        json_lines(&String::from_utf8(out.stdout.clone()).unwrap()),
        out,
    )
}
