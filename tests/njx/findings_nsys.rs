//! The findings of nsys's expert system (`report/findings/nsys.rs`): each cause planted in
//! a synthetic SQLite export and found with its exact size, a healthy export where each
//! rule passes, exports missing what a rule needs (undecided, saying why), and the real
//! PyTorch export of `../shared/data`, every figure equal to an SQL query of the export.

use crate::common::nsys_sqlite::*;
use crate::common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const PID: u64 = 9;
const LAUNCH: i64 = 1;
const MEMCPY: i64 = 3;
const MEMCPY_ASYNC: i64 = 4;
const DEVICE_SYNC: i64 = 5;
const STREAM_SYNC: i64 = 6;

fn strings(n: &NsysDb) {
    n.string(LAUNCH, "cudaLaunchKernel_v7000");
    n.string(MEMCPY, "cudaMemcpy_v3020");
    n.string(MEMCPY_ASYNC, "cudaMemcpyAsync_v3020");
    n.string(DEVICE_SYNC, "cudaDeviceSynchronize_v3020");
    n.string(STREAM_SYNC, "cudaStreamSynchronize_v3020");
}

/// Device 0, from 1 to 11 ms: kernels 1–2 ms and 7–8 ms (a 5 ms gap between, the only
/// one of 1 ms or more), a staged 4 KiB HtoD cudaMemcpy (8.0–8.01 ms) nsys leaves out, a
/// synchronous 1 MiB cudaMemcpy DtoH (GPU 8.2–8.4 ms, its call 8.1–8.9 ms: 800,000 ns of
/// host; the GPU idle from 8.1 ms to its next work at 9.0 ms but for the copy: 700,000
/// ns), a pageable 1 MiB cudaMemcpyAsync HtoD (GPU 9.0–9.2 ms, call 8.95–9.65 ms: 700,000
/// ns of host; the GPU idle from 8.95 to 9.9 ms but for the copy: 750,000 ns), a kernel
/// 9.9–10.3 ms with one on another stream inside it (9.95–10.2 ms, counted once), a
/// cudaDeviceSynchronize 9.7–10.3 ms (600,000 ns of host; the GPU idle from 9.7 ms to its
/// next kernel, 10.9–11.0 ms, but for the kernel: 800,000 ns).
/// Device 1: 100 kernels of 3 µs, one every 4 µs from 20 ms.
fn planted(dir: &Path) -> String {
    let path = dir.join("planted.sqlite");
    let n = NsysDb::create(&path);
    strings(&n);
    let (g, p) = (gtid(PID, 1), gpid(PID));
    n.kernel_stream(0, 7, 1_000_000, 2_000_000, p, 1);
    n.kernel_stream(0, 7, 7_000_000, 8_000_000, p, 2);
    n.call_named(7_990_000, 8_020_000, g, 3, MEMCPY);
    n.memcpy_kinds(0, 8_000_000, 8_010_000, p, 3, 4096, 1, 0, 2);
    n.call_named(8_100_000, 8_900_000, g, 4, MEMCPY);
    n.memcpy_kinds(0, 8_200_000, 8_400_000, p, 4, 1 << 20, 2, 2, 0);
    n.call_named(8_950_000, 9_650_000, g, 5, MEMCPY_ASYNC);
    n.memcpy_kinds(0, 9_000_000, 9_200_000, p, 5, 1 << 20, 1, 0, 2);
    n.kernel_stream(0, 7, 9_900_000, 10_300_000, p, 6);
    n.kernel_stream(0, 8, 9_950_000, 10_200_000, p, 7);
    n.call_named(9_700_000, 10_300_000, g, 8, DEVICE_SYNC);
    n.kernel_stream(0, 7, 10_900_000, 11_000_000, p, 9);
    for i in 0..100 {
        let s = 20_000_000 + i * 4_000;
        n.kernel_stream(1, 7, s, s + 3_000, p, 100 + i);
    }
    path.to_str().unwrap().to_string()
}

/// 50 kernels of 100 µs, one every 101 µs; a pinned cudaMemcpyAsync; a 1 µs
/// cudaStreamSynchronize.
fn healthy(dir: &Path) -> String {
    let path = dir.join("healthy.sqlite");
    let n = NsysDb::create(&path);
    strings(&n);
    let (g, p) = (gtid(PID, 1), gpid(PID));
    for i in 0..50 {
        let s = 1_000_000 + i * 101_000;
        n.kernel_stream(0, 7, s, s + 100_000, p, 1 + i);
    }
    n.call_named(1_000_000, 1_002_000, g, 100, MEMCPY_ASYNC);
    n.memcpy_kinds(0, 1_010_000, 1_020_000, p, 100, 1 << 20, 1, 1, 2);
    n.call_named(2_000_000, 2_001_000, g, 101, STREAM_SYNC);
    path.to_str().unwrap().to_string()
}

fn report(inputs: &[&str]) -> Value {
    report_json(&inputs.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

/// (status, why) of a rule that did not fire.
fn quiet(rep: &Value, rule: &str) -> (String, String) {
    rep["rules_quiet"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["rule"] == rule)
        .map(|q| {
            (
                q["status"].as_str().unwrap().to_string(),
                q["why"].as_str().unwrap().to_string(),
            )
        })
        .unwrap_or_default()
}

fn one<'a>(rep: &'a Value, rule: &str) -> &'a Value {
    let f = fired(rep, rule);
    assert_eq!(f.len(), 1, "{rule}: {}", rep["findings"]);
    f[0]
}

#[test]
fn each_planted_cause_is_found_with_its_exact_size() {
    let dir = tempdir();
    let db = planted(dir.path());
    let rep = report(&[&db]);
    let span = 10_000_000;

    let idle = one(&rep, "gpu-idle");
    assert_eq!(idle["device"], 0);
    assert_eq!(idle["severity"], "high");
    assert_eq!(idle["saving_ns"], 5_000_000);
    let e = &idle["evidence"];
    assert_eq!(e["of"], "span");
    assert_eq!(e["span_ns"], span);
    assert_eq!(e["gaps"], 1);
    assert_eq!(e["gaps_ns"], 5_000_000);
    assert_eq!(e["largest_gap_ns"], 5_000_000);
    assert_eq!(e["largest_gap_start_ns"], 2_000_000);
    // Busy: 1 + 1 ms of kernels, 10 µs + 200 µs + 200 µs of copies, 400 µs of the kernel
    // holding the other stream's, 100 µs.
    assert_eq!(e["busy_ns"], 2_910_000);
    assert_eq!(e["idle_ns"], span - 2_910_000);
    let share = idle["share_pct"].as_f64().unwrap();
    assert!((share - 100.0 * 5e6 / span as f64).abs() < 1e-9, "{share}");

    let short = one(&rep, "short-kernels");
    assert_eq!(short["device"], 1);
    assert_eq!(short["evidence"]["short_kernels"], 100);
    assert_eq!(short["evidence"]["short_ns"], 300_000);
    assert_eq!(short["saving_ns"], 300_000);
    assert_eq!(short["evidence"]["span_ns"], 399_000);
    assert_eq!(short["severity"], "high");

    let sync = one(&rep, "sync-memcpy");
    assert_eq!(sync["device"], 0);
    // The staged 4 KiB HtoD copy is left out: one copy, its call's 800,000 ns of host, the
    // GPU idle 700,000 ns of them.
    assert_eq!(sync["evidence"]["copies"], 1);
    assert_eq!(sync["evidence"]["host_ns"], 800_000);
    assert_eq!(sync["saving_ns"], 700_000);
    assert_eq!(sync["evidence"]["gpu_ns"], 200_000);
    assert_eq!(sync["evidence"]["longest_call_start_ns"], 8_100_000);
    assert_eq!(sync["severity"], "moderate");

    let pageable = one(&rep, "pageable-memcpy");
    assert_eq!(pageable["evidence"]["copies"], 1);
    assert_eq!(pageable["evidence"]["host_ns"], 700_000);
    assert_eq!(pageable["saving_ns"], 750_000);
    assert_eq!(pageable["evidence"]["bytes"], 1 << 20);
    assert_eq!(pageable["evidence"]["longest_call_start_ns"], 8_950_000);

    let api = one(&rep, "sync-api");
    assert_eq!(api["key"], "cudaDeviceSynchronize");
    assert_eq!(api["evidence"]["host_ns"], 600_000);
    assert_eq!(api["saving_ns"], 800_000);
    assert_eq!(api["evidence"]["calls"], 1);
    assert_eq!(api["evidence"]["longest_call_start_ns"], 9_700_000);
    // The GPU that waited: device 0; device 1 had not started.
    assert_eq!(api["device"], 0);
    assert_eq!(api["evidence"]["gpu_idle_ns"]["1"], 0);
    assert_eq!(api["evidence"]["span_ns"], span);

    // The greatest saving first; the text says it is over the span, not per step.
    let savings: Vec<i64> = rep["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["saving_ns"].as_i64().unwrap())
        .collect();
    assert!(savings.windows(2).all(|w| w[0] >= w[1]), "{savings:?}");
    let text = ok("njx-report", &["-q", &db]);
    assert!(
        text.contains("could save up to 5.000 ms over the profiled span"),
        "{text}"
    );
    // A gap threshold above the gap: it is no longer counted.
    let rep = serde_json::from_str::<Value>(&ok(
        "njx-report",
        &[
            "-q",
            "--format",
            "json",
            "--threshold",
            "gpu-idle.gap-ms=5.5",
            &db,
        ],
    ))
    .unwrap();
    assert!(fired(&rep, "gpu-idle").is_empty());
    assert_eq!(quiet(&rep, "gpu-idle").0, "passed");
}

#[test]
fn a_healthy_export_passes_every_rule() {
    let dir = tempdir();
    let db = healthy(dir.path());
    let rep = report(&[&db]);
    for rule in njx::report::findings::nsys::RULES {
        assert!(fired(&rep, rule).is_empty(), "{rule}: {}", rep["findings"]);
        assert_eq!(
            quiet(&rep, rule).0,
            "passed",
            "{rule}: {}",
            rep["rules_quiet"]
        );
    }
    assert!(
        quiet(&rep, "sync-api")
            .1
            .contains("cudaStreamSynchronize blocked the host of healthy 1 times for 0.001 ms"),
        "{:?}",
        quiet(&rep, "sync-api")
    );
}

#[test]
fn an_export_without_what_a_rule_needs_leaves_it_undecided_saying_why() {
    let dir = tempdir();
    // No CUDA API calls: the GPU's idle time is known, which call synchronised is not.
    let path = dir.path().join("noruntime.sqlite");
    let tables: Vec<&str> = [
        "META_DATA_EXPORT",
        "StringIds",
        "CUPTI_ACTIVITY_KIND_KERNEL",
    ]
    .to_vec();
    let n = NsysDb::with_tables(&path, &tables);
    n.string(1, "k");
    n.kernel_stream(0, 7, 0, 1_000_000, gpid(PID), 1);
    n.kernel_stream(0, 7, 3_000_000, 4_000_000, gpid(PID), 2);
    let rep = report(&[path.to_str().unwrap()]);
    assert_eq!(one(&rep, "gpu-idle")["saving_ns"], 2_000_000);
    for rule in ["sync-memcpy", "pageable-memcpy"] {
        let (status, why) = quiet(&rep, rule);
        assert_eq!(status, "undecided", "{rule}");
        assert!(why.contains("no CUDA memcpy table"), "{rule}: {why}");
    }
    let (status, why) = quiet(&rep, "sync-api");
    assert_eq!(status, "undecided");
    assert_eq!(why, "no CUDA runtime API table in the inputs");

    // A memcpy table without srcKind and dstKind: pageable or not is unknown.
    let path = dir.path().join("nokinds.sqlite");
    let n = NsysDb::with_tables(
        &path,
        &[
            "META_DATA_EXPORT",
            "StringIds",
            "CUPTI_ACTIVITY_KIND_RUNTIME",
        ],
    );
    n.sql(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, \
         streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, \
         copyKind INTEGER)",
        [],
    );
    strings(&n);
    n.call_named(0, 500_000, gtid(PID, 1), 1, MEMCPY_ASYNC);
    n.sql(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (100, 400000, 0, 7, 1, ?1, 1048576, 1)",
        [gpid(PID)],
    );
    let rep = report(&[path.to_str().unwrap()]);
    let (status, why) = quiet(&rep, "pageable-memcpy");
    assert_eq!(status, "undecided");
    assert!(why.contains("no srcKind and dstKind"), "{why}");
    assert_eq!(quiet(&rep, "sync-memcpy").0, "passed");
    let (status, why) = quiet(&rep, "short-kernels");
    assert_eq!(status, "undecided");
    assert!(why.contains("no CUDA kernel table"), "{why}");

    // Records only: no CUDA activity tables at all.
    let (m, t) = (
        r#"{"profile":"r","program":"p","program_id":1,"name":"jit_f","execution":0,"device":0,"start_ns":0,"dur_ns":10,"thunks":1,"warmup":true,"autotuning":false}"#,
        r#"{"profile":"r","program":"p","program_id":1,"module":"jit_f","execution":0,"device":0,"name":"f","thunk_execution":0,"start_ns":0,"dur_ns":10,"hidden_ns":0,"comm":false,"warmup":true,"collective":null,"group_size":null,"message_bytes":null}"#,
    );
    let rep = report_of_records(&format!("{m}\n"), &format!("{t}\n"));
    for rule in njx::report::findings::nsys::RULES {
        let (status, why) = quiet(&rep, rule);
        assert_eq!(status, "undecided", "{rule}");
        assert!(why.contains("no CUDA activity tables"), "{rule}: {why}");
    }
}

#[test]
fn zero_length_and_overlapping_kernels_are_counted_once_without_panic() {
    let dir = tempdir();
    let path = dir.path().join("odd.sqlite");
    let n = NsysDb::create(&path);
    strings(&n);
    let p = gpid(PID);
    // Two streams overlapping, zero-length kernels inside a gap and at the ends.
    n.kernel_stream(0, 7, 1_000_000, 2_000_000, p, 1);
    n.kernel_stream(0, 8, 1_500_000, 2_500_000, p, 2);
    n.kernel_stream(0, 7, 4_000_000, 4_000_000, p, 3);
    n.kernel_stream(0, 7, 7_000_000, 8_000_000, p, 4);
    n.kernel_stream(0, 9, 8_000_000, 8_000_000, p, 5);
    let rep = report(&[path.to_str().unwrap()]);
    let idle = one(&rep, "gpu-idle");
    let e = &idle["evidence"];
    assert_eq!(e["span_ns"], 7_000_000);
    assert_eq!(e["busy_ns"], 2_500_000);
    // The zero-length kernel at 4 ms splits the 4.5 ms idle into 1.5 and 3 ms gaps.
    assert_eq!(e["gaps"], 2);
    assert_eq!(e["gaps_ns"], 4_500_000);
    assert_eq!(e["largest_gap_ns"], 3_000_000);
    assert_eq!(e["largest_gap_start_ns"], 4_000_000);
    // Two zero-length kernels are short, and take no time: the rule passes.
    let (status, why) = quiet(&rep, "short-kernels");
    assert_eq!(status, "passed");
    assert!(
        why.contains("ran 2 of its 5 kernels in under 10 µs, 0.000 ms"),
        "{why}"
    );
}

/// Per device: copies, host ns, GPU ns, bytes, and the calls (start, end).
type Copies = BTreeMap<i64, (i64, i64, i64, i64, Vec<(i64, i64)>)>;
/// Per API: calls, host ns, threads, and the calls (start, end).
type Apis = BTreeMap<i64, (i64, i64, BTreeSet<i64>, Vec<(i64, i64)>)>;

/// `ops` merged: when the GPU was busy, in order, none overlapping.
fn merge(mut ops: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    ops.sort();
    let mut busy: Vec<(i64, i64)> = Vec::new();
    for (s, e) in ops {
        match busy.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => busy.push((s, e)),
        }
    }
    busy
}

/// The GPU's idle time from each call's start to its next operation after the call's end
/// (none where one runs on at the end), within its span, overlapping windows once.
fn waited(busy: &[(i64, i64)], calls: &[(i64, i64)]) -> i64 {
    let (first, last) = (busy[0].0, busy[busy.len() - 1].1);
    let windows: Vec<(i64, i64)> = calls
        .iter()
        .filter_map(|&(s, e)| {
            let next = busy.iter().find(|b| b.1 > e).map_or(e, |b| b.0.max(e));
            let (a, b) = (s.max(first), next.min(last));
            (a < b).then_some((a, b))
        })
        .collect();
    merge(windows)
        .iter()
        .map(|&(a, b)| {
            let overlap: i64 = busy
                .iter()
                .map(|&(s, e)| (e.min(b) - s.max(a)).max(0))
                .sum();
            b - a - overlap
        })
        .sum()
}

/// The PyTorch export of nsys 2026.2 on two H100s: with every rule made to fire
/// (`moderate-pct=0`), each figure equals a query of the export made here.
#[test]
fn conformance_the_pytorch_export_figures_equal_queries_of_it() {
    let Some(dir) = shared_data("pytorch_nsys2026_sqlite") else {
        return;
    };
    let db = dir.join("h100_2gpu_1s.sqlite");
    let path = db.to_str().unwrap();
    let conn =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let rep: Value = serde_json::from_str(&ok(
        "njx-report",
        &[
            "-q",
            "--format",
            "json",
            "--threshold",
            "moderate-pct=0",
            path,
        ],
    ))
    .unwrap();
    let query = |sql: &str| -> Vec<Vec<i64>> {
        let mut stmt = conn.prepare(sql).unwrap();
        let cols = stmt.column_count();
        stmt.query_map([], |r| (0..cols).map(|i| r.get::<_, i64>(i)).collect())
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };

    // gpu-idle: each device's operations, merged here.
    let mut ops: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
    for r in query(
        "SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL \
         SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL \
         SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_MEMSET",
    ) {
        ops.entry(r[0]).or_default().push((r[1], r[2]));
    }
    let busy: BTreeMap<i64, Vec<(i64, i64)>> =
        ops.into_iter().map(|(d, o)| (d, merge(o))).collect();
    let idle = fired(&rep, "gpu-idle");
    assert_eq!(idle.len(), busy.len(), "{}", rep["findings"]);
    for (device, busy) in &busy {
        let e = &idle.iter().find(|f| f["device"] == *device).unwrap()["evidence"];
        let (first, last) = (busy[0].0, busy[busy.len() - 1].1);
        let time: i64 = busy.iter().map(|b| b.1 - b.0).sum();
        let gaps: Vec<i64> = busy
            .windows(2)
            .map(|w| w[1].0 - w[0].1)
            .filter(|g| *g >= 1_000_000)
            .collect();
        assert_eq!(e["first_ns"], first, "device {device}");
        assert_eq!(e["last_ns"], last, "device {device}");
        assert_eq!(e["busy_ns"], time, "device {device}");
        assert_eq!(e["idle_ns"], last - first - time, "device {device}");
        assert_eq!(e["gaps"], gaps.len(), "device {device}");
        assert_eq!(e["gaps_ns"], gaps.iter().sum::<i64>(), "device {device}");
    }

    // short-kernels: per device, those under 10 µs.
    let short = fired(&rep, "short-kernels");
    let rows = query(
        "SELECT deviceId, SUM(end - start < 10000), SUM(CASE WHEN end - start < 10000 \
         THEN end - start ELSE 0 END), COUNT(*), SUM(end - start) \
         FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY deviceId",
    );
    assert_eq!(short.len(), rows.len());
    for r in rows {
        let e = &short.iter().find(|f| f["device"] == r[0]).unwrap()["evidence"];
        assert_eq!(
            [
                &e["short_kernels"],
                &e["short_ns"],
                &e["kernels"],
                &e["kernel_ns"]
            ],
            [r[1], r[2], r[3], r[4]],
            "device {}",
            r[0]
        );
    }

    // The copies issued by calls of their process (nsys's join on the correlation id):
    // per device, how many, the calls' host time, the copies' GPU time and bytes, and the
    // GPU's idle time from the calls to its next work.
    let copies = |filter: &str| {
        let mut by_device = Copies::new();
        for r in query(&format!(
            "SELECT m.deviceId, r.start, r.end, m.end - m.start, m.bytes \
             FROM CUPTI_ACTIVITY_KIND_MEMCPY m \
             JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = m.correlationId \
             AND r.globalTid / 16777216 = m.globalPid / 16777216 \
             JOIN StringIds s ON s.id = r.nameId WHERE {filter}"
        )) {
            let d = by_device.entry(r[0]).or_default();
            d.0 += 1;
            d.1 += r[2] - r[1];
            d.2 += r[3];
            d.3 += r[4];
            d.4.push((r[1], r[2]));
        }
        by_device
    };
    let pageable = copies("s.value LIKE 'cudaMemcpy%Async%' AND (srcKind = 0 OR dstKind = 0)");
    let sync = copies(
        "s.value LIKE 'cudaMemcpy%' AND s.value NOT LIKE '%async%' \
         AND NOT (copyKind = 1 AND bytes <= 65536)",
    );
    for (rule, rows) in [("pageable-memcpy", pageable), ("sync-memcpy", sync)] {
        let found = fired(&rep, rule);
        assert_eq!(found.len(), rows.len(), "{rule}: {}", rep["findings"]);
        for (device, (n, host, gpu, bytes, calls)) in rows {
            let f = found.iter().find(|f| f["device"] == device).unwrap();
            let e = &f["evidence"];
            assert_eq!(
                [
                    &e["copies"],
                    &e["host_ns"],
                    &e["gpu_ns"],
                    &e["bytes"],
                    &f["saving_ns"]
                ],
                [n, host, gpu, bytes, waited(&busy[&device], &calls)],
                "{rule}, device {device}"
            );
        }
    }
    // Two per GPU, each device's pair issued by cudaMemcpyAsync from pageable memory.
    assert_eq!(fired(&rep, "pageable-memcpy").len(), 2);

    // sync-api: nsys's two names, their calls and host time, and the GPU that waited most
    // from the calls to its next work.
    let mut apis = Apis::new();
    for r in query(
        "SELECT CASE WHEN s.value LIKE 'cudaDeviceSynchronize%' THEN 0 ELSE 1 END, r.start, \
         r.end, r.globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME r \
         JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaDeviceSynchronize%' \
         OR s.value LIKE 'cudaStreamSynchronize%'",
    ) {
        let a = apis.entry(r[0]).or_default();
        a.0 += 1;
        a.1 += r[2] - r[1];
        a.2.insert(r[3]);
        a.3.push((r[1], r[2]));
    }
    let api = fired(&rep, "sync-api");
    assert_eq!(api.len(), apis.len());
    for (kind, (n, host, threads, calls)) in apis {
        let key = ["cudaDeviceSynchronize", "cudaStreamSynchronize"][kind as usize];
        let f = api.iter().find(|f| f["key"] == key).unwrap();
        let (device, most) = busy
            .iter()
            .map(|(d, b)| (*d, waited(b, &calls)))
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            .unwrap();
        assert_eq!(
            [
                &f["evidence"]["calls"],
                &f["evidence"]["host_ns"],
                &f["evidence"]["threads"],
                &f["saving_ns"],
                &f["device"]
            ],
            [n, host, threads.len() as i64, most, device],
            "{key}"
        );
    }
    // With the default thresholds: 8 cudaStreamSynchronize calls, 856,929,451 ns of host
    // time, in which the GPUs worked: no GPU waited 3 % of its span.
    let rep = report(&[path]);
    assert!(
        rep["findings"].as_array().unwrap().is_empty(),
        "{}",
        rep["findings"]
    );
    let (status, why) = quiet(&rep, "sync-api");
    assert_eq!(status, "passed");
    assert!(
        why.contains(
            "cudaStreamSynchronize blocked the host of h100_2gpu_1s 8 times for 856.929 ms"
        ),
        "{why}"
    );
}

/// An XLA profile: with a step, a saving is the profile's total over the device's steady
/// steps (rounded up), and its share is of the mean step.
#[test]
fn with_an_xla_step_a_saving_is_per_step() {
    let dir = tempdir();
    let path = dir.path().join("xla.sqlite");
    let n = NsysDb::create(&path);
    strings(&n);
    let launcher = gtid(PID, 101);
    n.domain(1, launcher, 1, "TSL");
    n.thread_name(
        launcher,
        1000,
        "XlaLauncher:#global=0,local=0,process=0,partition=0#",
    );
    // Six executions of jit_f, one every 2 ms, each a 30 µs kernel: 1.97 ms gaps.
    for k in 0..6 {
        let b = 1_000_000 + k * 2_000_000;
        let module = "XlaModule:#hlo_module=jit_f,program_id=3#";
        n.nvtx(
            PUSH_POP,
            b,
            Some(b + 60_000),
            launcher,
            Some(module),
            None,
            1,
        );
        let thunk = "Thunk:#hlo_op=fusion.1#";
        n.nvtx(
            PUSH_POP,
            b + 1_000,
            Some(b + 10_000),
            launcher,
            Some(thunk),
            None,
            1,
        );
        n.call_named(b + 2_000, b + 3_000, launcher, 1 + k, LAUNCH);
        n.kernel_stream(0, 7, b + 20_000, b + 50_000, gpid(PID), 1 + k);
    }
    let rep = report(&[path.to_str().unwrap()]);
    let step = &rep["step"];
    assert!(step.is_object(), "{}", rep["step_absent"]);
    let steps = step["per_device"][0]["steps"].as_i64().unwrap();
    let step_ns = step["step_ns"].as_i64().unwrap();
    assert!(steps > 0 && step_ns > 0, "{step}");
    let idle = one(&rep, "gpu-idle");
    assert_eq!(idle["evidence"]["of"], "step");
    assert_eq!(idle["evidence"]["gaps_ns"], 5 * 1_970_000);
    let per_step = (5 * 1_970_000 + steps - 1) / steps;
    assert_eq!(idle["saving_ns"], per_step);
    let share = idle["share_pct"].as_f64().unwrap();
    assert!(
        (share - 100.0 * per_step as f64 / step_ns as f64).abs() < 1e-9,
        "{share}"
    );
    let text = ok("njx-report", &["-q", path.to_str().unwrap()]);
    assert!(
        text.contains("gpu-idle") && text.contains(" per step ("),
        "{text}"
    );
}
