//! Kernel and memory-operation records (`njx-export --table kernels|memops`) and their
//! summary (`njx-kernels`), through the built binaries: on an export made here, every
//! figure worked out below from the fixture; on the real exports, against SQL written
//! here over the same files.

use crate::common::nsys_sqlite::*;
use crate::common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const PID: u64 = 100;
const LAUNCH: i64 = 1;
const K1: i64 = 2;
const K1_SHORT: i64 = 3;
const K2: i64 = 4;
const K2_SHORT: i64 = 5;
const MEMCPY: i64 = 6;

/// Process 100. Thread 1 pushes `outer` [0, 1000] and in it `inner` [100, 300]; thread 2
/// pushes `elsewhere` [0, 1000]; thread 3 has no ranges. Kernels (device, start–end):
///
/// | corr | call (thread, time) | kernel | range |
/// |---|---|---|---|
/// | 1 | 1, 150–160 | k1, dev 0, 10000–10100 | inner |
/// | 2 | 1, 400–410 | k1, dev 0, 10200–10500 | outer |
/// | 3 | 1, 2000–2010 | k2, dev 0, 10600–10650 | none (after outer) |
/// | 4 | 3, 150–160 | k1, dev 1, 9000–9400 | none (thread without ranges) |
/// | 5 | no call | k2, dev 0, 20000–20010 | none, no tid |
///
/// Memory operations: corr 6 (thread 1, 450–460) copies 4096 B HtoD, 11000–11100; corr 7
/// (thread 2, 500–510) 100 B DtoH, 12000–12010; corr 8 (thread 1, 120–130, in `inner`)
/// sets 16 B to 7, 13000–13004; corr 9 (thread 1, 600–610) 64 B of copyKind 10 (PtoP),
/// 14000–14002.
fn export(path: &Path, with_enum: bool) {
    let db = NsysDb::create(path);
    let t = |tid| gtid(PID, tid);
    let p = gpid(PID);
    db.string(LAUNCH, "cudaLaunchKernel_v7000");
    db.string(K1, "void k1<float>(int)");
    db.string(K1_SHORT, "k1");
    db.string(K2, "void k2()");
    db.string(K2_SHORT, "k2");
    db.string(MEMCPY, "cudaMemcpyAsync_v3020");
    db.range(0, 1000, t(1), "outer");
    db.range(100, 300, t(1), "inner");
    db.range(0, 1000, t(2), "elsewhere");
    db.call_named(150, 160, t(1), 1, LAUNCH);
    db.call_named(400, 410, t(1), 2, LAUNCH);
    db.call_named(2000, 2010, t(1), 3, LAUNCH);
    db.call_named(150, 160, t(3), 4, LAUNCH);
    db.kernel_named(0, 7, 10_000, 10_100, p, 1, K1, K1_SHORT, 64);
    db.kernel_named(0, 7, 10_200, 10_500, p, 2, K1, K1_SHORT, 64);
    db.kernel_named(0, 8, 10_600, 10_650, p, 3, K2, K2_SHORT, 1);
    db.kernel_named(1, 7, 9_000, 9_400, p, 4, K1, K1_SHORT, 64);
    db.kernel_named(0, 7, 20_000, 20_010, p, 5, K2, K2_SHORT, 1);
    db.call_named(450, 460, t(1), 6, MEMCPY);
    db.call_named(500, 510, t(2), 7, MEMCPY);
    db.call_named(120, 130, t(1), 8, MEMCPY);
    db.call_named(600, 610, t(1), 9, MEMCPY);
    db.memcpy_of(11_000, 11_100, p, 6, 4096, 1);
    db.memcpy_of(12_000, 12_010, p, 7, 100, 2);
    db.sql(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, \
         correlationId, globalPid, value, bytes, memKind) \
         VALUES (13000, 13004, 0, 1, 7, 8, ?1, 7, 16, 2)",
        [p],
    );
    db.memcpy_of(14_000, 14_002, p, 9, 64, 10);
    if with_enum {
        // The export's own names win: value 2 is renamed here to show it.
        db.sql(
            "CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT)",
            [],
        );
        for (id, name) in [
            (1, "CUDA_MEMCPY_KIND_HTOD"),
            (2, "CUDA_MEMCPY_KIND_DTOX"),
            (10, "CUDA_MEMCPY_KIND_PTOP"),
        ] {
            db.sql(
                "INSERT INTO ENUM_CUDA_MEMCPY_OPER (id, name, label) VALUES (?1, ?2, ?2)",
                rusqlite::params![id, name],
            );
        }
    }
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn fixture(with_enum: bool) -> (tempfile::TempDir, String) {
    let dir = tempdir();
    let file = dir.path().join("k.sqlite");
    export(&file, with_enum);
    let file = path_str(&file).to_string();
    (dir, file)
}

#[test]
fn kernels_carry_their_launch_and_innermost_range_in_device_then_start_order() {
    let (_dir, file) = fixture(false);
    let out = run("njx-export", &["--table", "kernels", &file], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let recs = json_lines(&String::from_utf8(out.stdout.clone()).unwrap());
    let corr: Vec<u64> = recs
        .iter()
        .map(|r| r["correlation_id"].as_u64().unwrap())
        .collect();
    assert_eq!(corr, [1, 2, 3, 5, 4]);
    let r = &recs[0];
    assert_eq!(r["profile"], "k");
    assert_eq!(r["device"], 0);
    assert_eq!(r["stream"], 7);
    assert_eq!(r["start_ns"], 10_000);
    assert_eq!(r["end_ns"], 10_100);
    assert_eq!(r["dur_ns"], 100);
    assert_eq!(r["name"], "void k1<float>(int)");
    assert_eq!(r["short_name"], "k1");
    assert_eq!(
        [&r["grid_x"], &r["grid_y"], &r["grid_z"]],
        [&Value::from(64), &Value::from(2), &Value::from(1)]
    );
    assert_eq!(
        [&r["block_x"], &r["block_y"], &r["block_z"]],
        [&Value::from(128), &Value::from(1), &Value::from(1)]
    );
    assert_eq!(r["registers_per_thread"], 40);
    assert_eq!(r["static_shared_bytes"], 256);
    assert_eq!(r["dynamic_shared_bytes"], 1024);
    assert_eq!(r["pid"], PID);
    assert_eq!(r["tid"], 1);
    assert_eq!(r["api"], "cudaLaunchKernel_v7000");
    // The innermost range containing the call, with its id as --table ranges gives it.
    assert_eq!(r["range"], "inner");
    assert_eq!(r["range_id"], 2);
    assert_eq!(recs[1]["range"], "outer");
    assert_eq!(recs[1]["range_id"], 1);
    // After every range of its thread.
    assert_eq!(recs[2]["range"], Value::Null);
    assert_eq!(recs[2]["stream"], 8);
    // No call: no thread, API or range; the process from the kernel itself.
    assert_eq!(recs[3]["tid"], Value::Null);
    assert_eq!(recs[3]["api"], Value::Null);
    assert_eq!(recs[3]["pid"], PID);
    // Thread 3 has no ranges: thread 1's and 2's ranges around its call are not its.
    assert_eq!(recs[4]["device"], 1);
    assert_eq!(recs[4]["tid"], 3);
    assert_eq!(recs[4]["range"], Value::Null);
    let err = stderr_of(&out);
    assert!(
        err.contains("1 of 5 kernels have no CUDA API call"),
        "{err}"
    );
    assert!(
        err.contains("2 of 5 kernels were launched outside"),
        "{err}"
    );

    // The range ids are those of --table ranges.
    let ranges = json_lines(&ok("njx-export", &[&file]));
    let inner = ranges.iter().find(|r| r["name"] == "inner").unwrap();
    assert_eq!(inner["id"], 2);

    // CSV: the same fields, nulls empty.
    let csv = ok(
        "njx-export",
        &["--table", "kernels", "--format", "csv", &file],
    );
    let header = csv.lines().next().unwrap();
    assert!(header.starts_with("profile,device,stream,correlation_id,start_ns,end_ns,dur_ns"));
    assert!(
        header
            .ends_with("pid,tid,api,range,range_id,module,program_id,thunk,graph_id,graph_node_id")
    );
    // Outside XLA ranges: no module, program or thunk.
    for r in &recs {
        assert_eq!(
            [&r["module"], &r["program_id"], &r["thunk"]],
            [&Value::Null, &Value::Null, &Value::Null]
        );
    }
}

#[test]
fn memops_carry_kind_bytes_direction_and_memory_kinds() {
    for with_enum in [false, true] {
        let (_dir, file) = fixture(with_enum);
        let recs = json_lines(&ok("njx-export", &["--table", "memops", &file]));
        let brief: Vec<(String, u64, Value, Value)> = recs
            .iter()
            .map(|r| {
                (
                    r["kind"].as_str().unwrap().to_string(),
                    r["bytes"].as_u64().unwrap(),
                    r["direction"].clone(),
                    r["range"].clone(),
                )
            })
            .collect();
        let dtoh = if with_enum { "DtoX" } else { "DtoH" };
        assert_eq!(
            brief,
            [
                ("memcpy".into(), 4096, "HtoD".into(), "outer".into()),
                ("memcpy".into(), 100, dtoh.into(), "elsewhere".into()),
                ("memset".into(), 16, Value::Null, "inner".into()),
                ("memcpy".into(), 64, "PtoP".into(), "outer".into()),
            ],
            "with_enum {with_enum}"
        );
        assert_eq!(recs[0]["src_kind"], "pinned");
        assert_eq!(recs[0]["dst_kind"], "device");
        assert_eq!(recs[0]["api"], "cudaMemcpyAsync_v3020");
        assert_eq!(recs[0]["dur_ns"], 100);
        assert_eq!(recs[2]["value"], 7);
        assert_eq!(recs[2]["dst_kind"], "device");
        assert_eq!(recs[2]["src_kind"], Value::Null);
        assert_eq!(recs[1]["tid"], 2);
    }
}

/// A row of njx-kernels' JSON output by name.
fn summary_rows(json: &str) -> BTreeMap<String, Value> {
    json_lines(json)
        .into_iter()
        .map(|r| (r["name"].as_str().unwrap().to_string(), r))
        .collect()
}

fn close(a: &Value, b: f64) -> bool {
    (a.as_f64().unwrap() - b).abs() < 1e-6 * b.abs().max(1.0)
}

#[test]
fn the_summary_gives_nsys_statistics_per_kernel_name() {
    let (_dir, file) = fixture(false);
    let records = ok("njx-export", &["--table", "kernels", &file]);
    let out = ok_with("njx-kernels", &["--format", "json"], records.as_bytes());
    let rows = summary_rows(&out);
    assert_eq!(rows.len(), 2);
    // k1: 100, 300, 400 ns. Mean 266.67; median 300; sample std
    // sqrt(((−166.67)² + 33.33² + 133.33²) / 2) = sqrt(23333.33) = 152.75; the records
    // write times to the nearest nanosecond.
    let k1 = &rows["void k1<float>(int)"];
    assert_eq!(k1["count"], 3);
    assert_eq!(k1["total_ns"], 800);
    assert_eq!(k1["mean_ns"], 267);
    assert_eq!(k1["median_ns"], 300);
    assert_eq!(k1["min_ns"], 100);
    assert_eq!(k1["max_ns"], 400);
    assert_eq!(k1["std_ns"], 153);
    assert!(close(&k1["percent"], 800.0 * 100.0 / 860.0));
    assert_eq!(k1["bytes"], Value::Null);
    // k2: 50 and 10 ns: median the mean of the two, std sqrt(2 · 20²) = 28.28.
    let k2 = &rows["void k2()"];
    assert_eq!(k2["count"], 2);
    assert_eq!(k2["median_ns"], 30);
    assert_eq!(k2["std_ns"], 28);
    // The largest total first.
    let first = json_lines(&out)[0]["name"].clone();
    assert_eq!(first, "void k1<float>(int)");

    // Straight from the export, by short name and by range; a table for people.
    let by_short = summary_rows(&ok(
        "njx-kernels",
        &["--by", "short-name", "--format", "json", &file],
    ));
    assert_eq!(by_short["k1"]["total_ns"], 800);
    let by_range = summary_rows(&ok(
        "njx-kernels",
        &["--by", "range", "--format", "json", &file],
    ));
    assert_eq!(by_range["inner"]["total_ns"], 100);
    assert_eq!(by_range["outer"]["total_ns"], 300);
    assert_eq!(by_range["(none)"]["total_ns"], 460);
    let table = ok("njx-kernels", &[&file]);
    assert!(table.starts_with("Time (%)"), "{table}");
    assert!(table.contains("void k1<float>(int)"));

    // Memory operations by kind and direction, with their bytes.
    let memops = ok("njx-export", &["--table", "memops", &file]);
    let m = summary_rows(&ok_with(
        "njx-kernels",
        &["--format", "json"],
        memops.as_bytes(),
    ));
    assert_eq!(m["memcpy HtoD"]["bytes"], 4096);
    assert_eq!(m["memcpy HtoD"]["total_ns"], 100);
    assert_eq!(m["memset"]["count"], 1);
    assert_eq!(m["memset"]["bytes"], 16);
    assert_eq!(m["memset"]["std_ns"], 0.0);
    let direct = summary_rows(&ok(
        "njx-kernels",
        &["--table", "memops", "--format", "json", &file],
    ));
    assert_eq!(direct, m);
}

/// Rows of `--per-device` (and `--by device`): (name, device) → row.
fn rows_per_gpu(json: &str) -> BTreeMap<(String, u64), Value> {
    json_lines(json)
        .into_iter()
        .map(|r| {
            let key = (
                r["name"].as_str().unwrap().to_string(),
                r["device"].as_u64().expect("a device in every row per GPU"),
            );
            (key, r)
        })
        .collect()
}

/// Issue 32: kernels per GPU. The fixture's kernels: k1 on device 0 (100, 300 ns) and on
/// device 1 (400 ns); k2 on device 0 (50, 10 ns). `--by device`: one row per GPU;
/// `--per-device`: one per name and GPU; every row says its GPU where it has one; the
/// table shows it when there are several; records summarise as the export does.
#[test]
fn kernels_per_gpu() {
    let (dir, file) = fixture(false);
    let by_device = ok(
        "njx-kernels",
        &["--by", "device", "--format", "json", &file],
    );
    let rows = rows_per_gpu(&by_device);
    assert_eq!(rows.len(), 2, "{by_device}");
    let d0 = &rows[&("device 0".to_string(), 0)];
    assert_eq!(
        (d0["count"].clone(), d0["total_ns"].clone()),
        (4.into(), 460.into())
    );
    assert_eq!(d0["min_ns"], 10);
    assert_eq!(d0["max_ns"], 300);
    assert!(close(&d0["percent"], 460.0 * 100.0 / 860.0));
    let d1 = &rows[&("device 1".to_string(), 1)];
    assert_eq!(
        (d1["count"].clone(), d1["total_ns"].clone()),
        (1.into(), 400.into())
    );
    assert_eq!(d0["profile"], d1["profile"]);
    assert!(d0["profile"].is_string());
    // The largest GPU first.
    assert_eq!(json_lines(&by_device)[0]["device"], 0);

    // Per name and GPU.
    let per = rows_per_gpu(&ok(
        "njx-kernels",
        &["--per-device", "--format", "json", &file],
    ));
    let k1 = "void k1<float>(int)".to_string();
    let k2 = "void k2()".to_string();
    assert_eq!(per.len(), 3);
    assert_eq!(per[&(k1.clone(), 0)]["total_ns"], 400);
    assert_eq!(per[&(k1.clone(), 0)]["count"], 2);
    assert_eq!(per[&(k1.clone(), 1)]["total_ns"], 400);
    assert_eq!(per[&(k2.clone(), 0)]["total_ns"], 60);
    // Over every GPU (the default, as nsys' cuda_gpu_kern_sum): k1 ran on two, k2 on one.
    let all = summary_rows(&ok("njx-kernels", &["--format", "json", &file]));
    assert_eq!(all[&k1]["device"], Value::Null);
    assert_eq!(all[&k1]["profile"], Value::Null);
    assert_eq!(all[&k2]["device"], 0);
    // CSV has the columns too, after the others.
    let csv = ok("njx-kernels", &["--by", "device", "--format", "csv", &file]);
    let header = csv.lines().next().unwrap();
    assert!(header.ends_with(",bytes,device,profile"), "{header}");

    // The table: the GPU of each row when there are several (`several` for k1).
    let table = ok("njx-kernels", &[&file]);
    let head = table.lines().next().unwrap();
    assert!(head.contains("Device") && head.ends_with("Name"), "{table}");
    let k1_line = table.lines().find(|l| l.ends_with(&k1)).unwrap();
    assert!(k1_line.contains(" several "), "{table}");
    let k2_line = table.lines().find(|l| l.ends_with(&k2)).unwrap();
    assert!(k2_line.contains(" 0 "), "{table}");
    // --by device names the GPU already: no Device column.
    let table = ok("njx-kernels", &["--by", "device", &file]);
    assert!(!table.lines().next().unwrap().contains("Device"), "{table}");
    assert!(table.contains("device 1"), "{table}");

    // Records (the map step of many ranks: njx-export per rank, then `cat`) give the same.
    let records = ok("njx-export", &["--table", "kernels", &file]);
    let from_records = ok_with(
        "njx-kernels",
        &["--by", "device", "--format", "json"],
        records.as_bytes(),
    );
    assert_eq!(from_records, by_device);
    // Two profiles, both with a device 0: four GPUs, named with their profile.
    let other = dir.path().join("other.sqlite");
    std::fs::copy(&file, &other).unwrap();
    let other_records = ok("njx-export", &["--table", "kernels", path_str(&other)]);
    let both = ok_with(
        "njx-kernels",
        &["--by", "device", "--format", "json"],
        (records + &other_records).as_bytes(),
    );
    let names: Vec<String> = json_lines(&both)
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 4, "{both}");
    assert!(names.contains(&"device 0 (other)".to_string()), "{names:?}");
    assert!(names.contains(&"device 1 (k)".to_string()), "{names:?}");
    // Memory operations per GPU too (all on device 0 here).
    let memops = rows_per_gpu(&ok(
        "njx-kernels",
        &[
            "--by", "device", "--table", "memops", "--format", "json", &file,
        ],
    ));
    assert_eq!(memops[&("device 0".to_string(), 0)]["count"], 4);
    assert_eq!(
        memops[&("device 0".to_string(), 0)]["bytes"],
        4096 + 100 + 16 + 64
    );
}

/// Per GPU on the real 2-GPU export against SQLite's own `GROUP BY deviceId`.
#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn real_two_gpu_export_per_device_matches_sql() {
    let Some(dir) = shared_data("pytorch_nsys2026_sqlite") else {
        return;
    };
    let file = dir.join("h100_2gpu_1s.sqlite");
    if !file.is_file() {
        eprintln!("SKIPPED: {} not found", file.display());
        return;
    }
    let conn = rusqlite::Connection::open(&file).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT deviceId, count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL \
             GROUP BY deviceId",
        )
        .unwrap();
    let want: BTreeMap<u64, (u64, i64)> = stmt
        .query_map([], |r| {
            let (device, count): (i64, i64) = (r.get(0)?, r.get(1)?);
            Ok((device as u64, (count as u64, r.get(2)?)))
        })
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(want.len(), 2, "two GPUs in {}", file.display());
    let got: BTreeMap<u64, (u64, i64)> = json_lines(&ok(
        "njx-kernels",
        &["--by", "device", "--format", "json", path_str(&file)],
    ))
    .iter()
    .map(|r| {
        let device = r["device"].as_u64().unwrap();
        assert_eq!(r["name"], format!("device {device}"));
        (
            device,
            (
                r["count"].as_u64().unwrap(),
                r["total_ns"].as_i64().unwrap(),
            ),
        )
    })
    .collect();
    assert_eq!(got, want);
    // Per name and GPU: each GPU's rows add up to its total.
    let per = json_lines(&ok(
        "njx-kernels",
        &["--per-device", "--format", "json", path_str(&file)],
    ));
    for (device, (count, total)) in &want {
        let rows = per.iter().filter(|r| r["device"] == *device);
        let (c, t) = rows.fold((0, 0), |(c, t), r| {
            (
                c + r["count"].as_u64().unwrap(),
                t + r["total_ns"].as_i64().unwrap(),
            )
        });
        assert_eq!((c, t), (*count, *total), "device {device}");
    }
}

/// A record given twice in a row counts once; records out of njx-export's order (the same
/// file given twice) are said, not counted silently (issue 28).
#[test]
fn repeated_and_reordered_records_are_said() {
    let (_dir, file) = fixture(false);
    let records = ok("njx-export", &["--table", "kernels", &file]);
    let lines: Vec<&str> = records.lines().collect();
    let once = summary_rows(&ok_with(
        "njx-kernels",
        &["--format", "json"],
        records.as_bytes(),
    ));
    // One record repeated right after itself: the same rows, said.
    let mut doubled: Vec<&str> = lines.clone();
    doubled.insert(2, lines[1]);
    let out = run(
        "njx-kernels",
        &["--format", "json"],
        (doubled.join("\n") + "\n").as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(summary_rows(&String::from_utf8_lossy(&out.stdout)), once);
    let err = stderr_of(&out);
    assert!(
        err.contains("1 records repeat the record before them on their device"),
        "{err}"
    );
    // The whole file twice: said, and counted twice but where a record repeats the last
    // one of its device (device 1's only kernel, a k1): 3 + 2 k1 instances.
    let twice = format!("{records}{records}");
    let out = run("njx-kernels", &["--format", "json"], twice.as_bytes());
    assert!(out.status.success(), "{}", stderr_of(&out));
    let rows = summary_rows(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(rows["void k1<float>(int)"]["count"], 5);
    assert_eq!(rows["void k2()"]["count"], 4);
    let err = stderr_of(&out);
    assert!(
        err.contains("records start before the record before them on their device"),
        "{err}"
    );
    assert!(
        err.contains("if some were given twice, they count twice"),
        "{err}"
    );
}

#[test]
fn a_profile_given_twice_is_refused_naming_both() {
    let (dir, file) = fixture(false);
    let copy = dir.path().join("copy.sqlite");
    std::fs::copy(&file, &copy).unwrap();
    let copy = path_str(&copy);
    let records = write(
        dir.path(),
        "k.jsonl",
        ok("njx-export", &["--table", "kernels", &file]).as_bytes(),
    );
    for args in [
        vec!["njx-kernels", file.as_str(), copy],
        vec!["njx-kernels", file.as_str(), records.as_str()],
        vec!["njx-kernels", "--table", "memops", file.as_str(), copy],
        vec![
            "njx-diff",
            "--by",
            "kernel",
            file.as_str(),
            copy,
            "--vs",
            file.as_str(),
        ],
    ] {
        let out = run(args[0], &args[1..], b"");
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("k.sqlite") && err.contains("is read twice") && err.contains("device 0"),
            "{args:?}: {err}"
        );
    }
    let err = stderr_of(&run("njx-kernels", &[&file, copy], b""));
    assert!(err.contains("first kernel execution"), "{err}");
    // Each side of a comparison is its own run: the same profile on both is compared.
    ok("njx-diff", &["--by", "kernel", &file, "--vs", copy]);
}

#[test]
fn other_records_and_inputs_without_kernel_tables_are_refused_by_name() {
    let (dir, file) = fixture(false);
    // Range records piped into the summary.
    let ranges = ok("njx-export", &[&file]);
    let out = run("njx-kernels", &[], ranges.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("these are ranges records"),
        "{}",
        stderr_of(&out)
    );
    // An nsys-jax archive without an SQLite export.
    let zip = zip(
        &[("report_nvtx_pushpop_trace.csv", COMPILE_CSV.as_bytes())],
        false,
    );
    let archive = write(dir.path(), "rank0.zip", &zip);
    for tool in ["njx-export", "njx-kernels"] {
        let out = run(tool, &["--table", "kernels", &archive], b"");
        assert_eq!(out.status.code(), Some(1), "{tool}");
        let err = stderr_of(&out);
        assert!(err.contains("rank0.zip"), "{err}");
        assert!(err.contains("nsys SQLite export"), "{err}");
    }
    // An export that recorded no kernels: no records, and said.
    let empty = dir.path().join("empty.sqlite");
    NsysDb::with_tables(&empty, &["META_DATA_EXPORT", "StringIds"]);
    let out = run("njx-export", &["--table", "kernels", path_str(&empty)], b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let err = stderr_of(&out);
    assert!(
        err.contains("empty.sqlite: no CUPTI_ACTIVITY_KIND_KERNEL table"),
        "{err}"
    );
    // Two calls of one process with one correlation id.
    let db = NsysDb::create(&empty);
    db.string(1, "k");
    db.call(10, 20, gtid(PID, 1), 1);
    db.call(30, 40, gtid(PID, 2), 1);
    db.kernel(100, 200, gpid(PID), 1);
    drop(db);
    let out = run("njx-export", &["--table", "kernels", path_str(&empty)], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("two CUDA API calls of process 100 with correlationId 1"),
        "{}",
        stderr_of(&out)
    );
}

/// Per kernel name: (count, total ns), by SQL over the export itself.
fn sql_kernels(file: &Path) -> BTreeMap<String, (i64, i64)> {
    let conn = rusqlite::Connection::open(file).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT s.value, count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN StringIds s ON s.id = k.demangledName GROUP BY 1",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

/// Memory copies per direction label: (count, bytes), by SQL.
fn sql_memcpy(file: &Path) -> BTreeMap<String, (i64, i64)> {
    let conn = rusqlite::Connection::open(file).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT e.label, count(*), sum(m.bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY m \
             JOIN ENUM_CUDA_MEMCPY_OPER e ON e.id = m.copyKind GROUP BY 1",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn real_exports_give_the_kernels_and_copies_sql_gives() {
    let (Some(nvfuser), Some(testcuda)) = (
        shared_data("nvfuser_nsys_sqlite"),
        shared_data("testcuda_nsys2026_sqlite"),
    ) else {
        return;
    };
    let files = [
        (nvfuser.join("report1_nsys2025.1.1.sqlite"), 18),
        (nvfuser.join("report2_nsys2024.6.2.sqlite"), 19),
        (testcuda.join("report1_nsys2026.1.1.sqlite"), 4),
    ];
    for (file, kernels) in &files {
        let f = path_str(file);
        let recs = json_lines(&ok("njx-export", &["--table", "kernels", f]));
        assert_eq!(recs.len(), *kernels, "{f}");
        // Order: device, start, correlation id.
        let keys: Vec<(u64, i64, u64)> = recs
            .iter()
            .map(|r| {
                (
                    r["device"].as_u64().unwrap(),
                    r["start_ns"].as_i64().unwrap(),
                    r["correlation_id"].as_u64().unwrap(),
                )
            })
            .collect();
        assert!(keys.windows(2).all(|w| w[0] <= w[1]), "{f}");
        assert!(
            recs.iter().all(|r| r["api"].is_string()),
            "{f}: every launch found"
        );
        let summary = summary_rows(&ok("njx-kernels", &["--format", "json", f]));
        let want = sql_kernels(file);
        let got: BTreeMap<String, (i64, i64)> = summary
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    (
                        v["count"].as_i64().unwrap(),
                        v["total_ns"].as_i64().unwrap(),
                    ),
                )
            })
            .collect();
        assert_eq!(got, want, "{f}");
        let percent: f64 = summary
            .values()
            .map(|v| v["percent"].as_f64().unwrap())
            .sum();
        assert!((percent - 100.0).abs() < 1e-9, "{f}");

        // Copies by direction: label from the export's enum, short name from njx.
        let memops = json_lines(&ok("njx-export", &["--table", "memops", f]));
        let mut got: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        for m in memops.iter().filter(|m| m["kind"] == "memcpy") {
            let label = match m["direction"].as_str().unwrap() {
                "HtoD" => "Host-to-Device",
                "DtoH" => "Device-to-Host",
                "DtoD" => "Device-to-Device",
                other => panic!("{f}: direction {other} not in this data"),
            };
            let e = got.entry(label.to_string()).or_default();
            e.0 += 1;
            e.1 += m["bytes"].as_i64().unwrap();
        }
        assert_eq!(got, sql_memcpy(file), "{f}");

        // Not XLA programs: no module, program or thunk anywhere.
        for r in recs.iter().chain(&memops) {
            for field in ["module", "program_id", "thunk"] {
                assert!(r.get(field).is_some(), "{f}: field {field} present");
                assert_eq!(r[field], Value::Null, "{f}: {field} of {r}");
            }
        }
        let by_module = summary_rows(&ok(
            "njx-kernels",
            &["--by", "module", "--format", "json", f],
        ));
        assert_eq!(by_module.keys().collect::<Vec<_>>(), ["(none)"], "{f}");
        assert_eq!(by_module["(none)"]["count"], *kernels, "{f}");
    }
    // The ranges of the first export's kernels, against a brute-force containment query:
    // the innermost push/pop range of the launching thread containing the call.
    let file = &files[0].0;
    let conn = rusqlite::Connection::open(file).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT k.correlationId, (SELECT e.rowid FROM NVTX_EVENTS e WHERE e.eventType = 59 \
             AND e.globalTid = r.globalTid AND e.start <= r.start AND r.end <= e.end \
             ORDER BY e.start DESC, e.end ASC LIMIT 1) FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId",
        )
        .unwrap();
    let want: BTreeMap<i64, Option<i64>> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let got: BTreeMap<i64, Option<i64>> =
        json_lines(&ok("njx-export", &["--table", "kernels", path_str(file)]))
            .iter()
            .map(|r| {
                (
                    r["correlation_id"].as_i64().unwrap(),
                    r["range_id"].as_i64(),
                )
            })
            .collect();
    assert_eq!(got, want);
    assert_eq!(got.values().filter(|v| v.is_some()).count(), 8);
}

/// XLA's ranges, process 100. Thread 1 pushes module
/// `TSL:XlaModule:#hlo_module=jit_f,program_id=7#` [0, 1000], in it the thunk
/// `TSL:Thunk:#hlo_op=fusion.1#` [100, 300] holding a plain range `inner` [150, 250], and
/// the thunk `Thunk:#hlo_op=fusion.2,unique_hlo_op_id=3#` [550, 700]; then a thunk outside
/// every module, `TSL:Thunk:#hlo_op=stray.1#` [2000, 3000]. Thread 2 pushes
/// `XlaModule:#hlo_module=jit_g#` [0, 1000] (no program id), in it the thunk
/// `TSL:Thunk:#hlo_op=outer.1#` [0, 900], and in that a second module
/// `TSL:XlaModule:#hlo_module=jit_h,program_id=2#` [100, 800].
///
/// | corr | call (thread, time) | kernel (dev, time, ns) | module, program, thunk |
/// |---|---|---|---|
/// | 1 | 1, 160–170 | 0, 10000–10100, 100 | jit_f, 7, fusion.1 (range `inner`) |
/// | 2 | 1, 400–410 | 0, 10200–10500, 300 | jit_f, 7, none |
/// | 3 | 1, 600–610 | 0, 10800–10830, 30 | jit_f, 7, fusion.2 |
/// | 4 | 1, 2100–2110 | 0, 11000–11050, 50 | none (the thunk is outside modules) |
/// | 5 | 1, 5000–5010 | 0, 11100–11110, 10 | none (outside every range) |
/// | 6 | 2, 200–210 | 1, 9000–9400, 400 | jit_h, 2, none (its thunk is outside jit_h) |
/// | 7 | 2, 850–860 | 1, 9500–9520, 20 | jit_g, none, outer.1 |
///
/// Memory copies: corr 8 (thread 1, 180–190) 4096 B HtoD, 12000–12100, in fusion.1;
/// corr 9 (thread 1, 5100–5110) 64 B, 12200–12202, outside.
pub(crate) fn xla_export(path: &Path) {
    let db = NsysDb::create(path);
    let t = |tid| gtid(PID, tid);
    let p = gpid(PID);
    db.string(LAUNCH, "cudaLaunchKernel_v7000");
    db.string(K1, "void k1<float>(int)");
    db.string(K1_SHORT, "k1");
    db.string(MEMCPY, "cudaMemcpyAsync_v3020");
    db.range(
        0,
        1000,
        t(1),
        "TSL:XlaModule:#hlo_module=jit_f,program_id=7#",
    );
    db.range(100, 300, t(1), "TSL:Thunk:#hlo_op=fusion.1#");
    db.range(150, 250, t(1), "inner");
    db.range(550, 700, t(1), "Thunk:#hlo_op=fusion.2,unique_hlo_op_id=3#");
    db.range(2000, 3000, t(1), "TSL:Thunk:#hlo_op=stray.1#");
    db.range(0, 1000, t(2), "XlaModule:#hlo_module=jit_g#");
    db.range(0, 900, t(2), "TSL:Thunk:#hlo_op=outer.1#");
    db.range(
        100,
        800,
        t(2),
        "TSL:XlaModule:#hlo_module=jit_h,program_id=2#",
    );
    let launches = [
        (1, 160, 0, 10_000, 10_100),
        (1, 400, 0, 10_200, 10_500),
        (1, 600, 0, 10_800, 10_830),
        (1, 2100, 0, 11_000, 11_050),
        (1, 5000, 0, 11_100, 11_110),
        (2, 200, 1, 9_000, 9_400),
        (2, 850, 1, 9_500, 9_520),
    ];
    for (i, (tid, call, dev, start, end)) in launches.into_iter().enumerate() {
        let corr = i as i64 + 1;
        db.call_named(call, call + 10, t(tid), corr, LAUNCH);
        db.kernel_named(dev, 7, start, end, p, corr, K1, K1_SHORT, 1);
    }
    db.call_named(180, 190, t(1), 8, MEMCPY);
    db.call_named(5100, 5110, t(1), 9, MEMCPY);
    db.memcpy_of(12_000, 12_100, p, 8, 4096, 1);
    db.memcpy_of(12_200, 12_202, p, 9, 64, 1);
}

#[test]
fn kernels_and_memops_carry_the_xla_module_and_thunk_that_launched_them() {
    let dir = tempdir();
    let file = dir.path().join("x.sqlite");
    xla_export(&file);
    let file = path_str(&file);
    let recs = json_lines(&ok("njx-export", &["--table", "kernels", file]));
    let got: Vec<(u64, Value, Value, Value, Value)> = recs
        .iter()
        .map(|r| {
            (
                r["correlation_id"].as_u64().unwrap(),
                r["module"].clone(),
                r["program_id"].clone(),
                r["thunk"].clone(),
                r["range"].clone(),
            )
        })
        .collect();
    let n = Value::Null;
    assert_eq!(
        got,
        [
            (
                1,
                "jit_f".into(),
                7.into(),
                "fusion.1".into(),
                "inner".into()
            ),
            (
                2,
                "jit_f".into(),
                7.into(),
                n.clone(),
                "TSL:XlaModule:#hlo_module=jit_f,program_id=7#".into()
            ),
            (
                3,
                "jit_f".into(),
                7.into(),
                "fusion.2".into(),
                "Thunk:#hlo_op=fusion.2,unique_hlo_op_id=3#".into()
            ),
            (
                4,
                n.clone(),
                n.clone(),
                n.clone(),
                "TSL:Thunk:#hlo_op=stray.1#".into()
            ),
            (5, n.clone(), n.clone(), n.clone(), n.clone()),
            (
                6,
                "jit_h".into(),
                2.into(),
                n.clone(),
                "TSL:XlaModule:#hlo_module=jit_h,program_id=2#".into()
            ),
            (
                7,
                "jit_g".into(),
                n.clone(),
                "outer.1".into(),
                "TSL:Thunk:#hlo_op=outer.1#".into()
            ),
        ]
    );
    // CSV: the new fields last, nulls empty.
    let csv = ok(
        "njx-export",
        &["--table", "kernels", "--format", "csv", file],
    );
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .ends_with(",range,range_id,module,program_id,thunk,graph_id,graph_node_id")
    );
    assert!(
        lines.next().unwrap().ends_with(",jit_f,7,fusion.1,,"),
        "{csv}"
    );
    assert!(lines.next().unwrap().ends_with(",jit_f,7,,,"), "{csv}");
    assert!(
        lines.last().unwrap().ends_with(",jit_g,,outer.1,,"),
        "{csv}"
    );

    // Memory operations the same way.
    let memops = json_lines(&ok("njx-export", &["--table", "memops", file]));
    assert_eq!(memops[0]["module"], "jit_f");
    assert_eq!(memops[0]["program_id"], 7);
    assert_eq!(memops[0]["thunk"], "fusion.1");
    assert_eq!(memops[1]["module"], Value::Null);
    assert_eq!(memops[1]["thunk"], Value::Null);

    // GPU time per module and per thunk, from the export and from the records (CSV too).
    let totals = |rows: &BTreeMap<String, Value>| -> BTreeMap<String, (i64, i64)> {
        rows.iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    (
                        v["count"].as_i64().unwrap(),
                        v["total_ns"].as_i64().unwrap(),
                    ),
                )
            })
            .collect()
    };
    let want_module: BTreeMap<String, (i64, i64)> = [
        ("jit_f", (3, 430)),
        ("jit_h", (1, 400)),
        ("jit_g", (1, 20)),
        ("(none)", (2, 60)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let want_thunk: BTreeMap<String, (i64, i64)> = [
        ("fusion.1", (1, 100)),
        ("fusion.2", (1, 30)),
        ("outer.1", (1, 20)),
        ("(none)", (4, 760)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let records = ok("njx-export", &["--table", "kernels", file]);
    for (by, want) in [("module", &want_module), ("thunk", &want_thunk)] {
        let direct = summary_rows(&ok("njx-kernels", &["--by", by, "--format", "json", file]));
        assert_eq!(&totals(&direct), want, "--by {by}");
        let piped = summary_rows(&ok_with(
            "njx-kernels",
            &["--by", by, "--format", "json"],
            records.as_bytes(),
        ));
        assert_eq!(&totals(&piped), want, "--by {by}, piped");
        let piped_csv = summary_rows(&ok_with(
            "njx-kernels",
            &["--by", by, "--format", "json"],
            csv.as_bytes(),
        ));
        assert_eq!(&totals(&piped_csv), want, "--by {by}, CSV piped");
    }
    // Largest first, in the table for people.
    let table = ok("njx-kernels", &["--by", "module", file]);
    let names: Vec<&str> = table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    assert_eq!(names, ["jit_f", "jit_h", "(none)", "jit_g"], "{table}");
    // Memory operations per thunk, with their bytes.
    let m = summary_rows(&ok(
        "njx-kernels",
        &[
            "--by", "thunk", "--table", "memops", "--format", "json", file,
        ],
    ));
    assert_eq!(m["fusion.1"]["bytes"], 4096);
    assert_eq!(m["(none)"]["bytes"], 64);
}

#[test]
fn old_kernel_records_without_the_xla_fields_still_summarise() {
    // Records written before module/program_id/thunk (and graph_id/graph_node_id)
    // existed: CSV and JSON.
    let (_dir, file) = fixture(false);
    let csv = ok(
        "njx-export",
        &["--table", "kernels", "--format", "csv", &file],
    );
    let old_csv: String = csv
        .lines()
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            format!("{}\n", cells[..cells.len() - 5].join(","))
        })
        .collect();
    assert!(old_csv.lines().next().unwrap().ends_with(",range,range_id"));
    let rows = summary_rows(&ok_with(
        "njx-kernels",
        &["--by", "module", "--format", "json"],
        old_csv.as_bytes(),
    ));
    assert_eq!(rows["(none)"]["count"], 5);
    let json = ok("njx-export", &["--table", "kernels", &file]);
    let old_json: String = json_lines(&json)
        .into_iter()
        .map(|mut r| {
            let o = r.as_object_mut().unwrap();
            for f in ["module", "program_id", "thunk", "graph_id", "graph_node_id"] {
                o.remove(f);
            }
            format!("{r}\n")
        })
        .collect();
    let rows = summary_rows(&ok_with(
        "njx-kernels",
        &["--by", "thunk", "--format", "json"],
        old_json.as_bytes(),
    ));
    assert_eq!(rows["(none)"]["total_ns"], 860);
}

const GRAPH_LAUNCH: i64 = 7;
const GRAPH_KERNEL: i64 = 8;

/// An XLA command buffer run as a CUDA graph, as nsys 2026 exports it with
/// `--cuda-graph-trace=node` (the kernel table of nsys 2026.2, [`KERNEL_2026`]). Process
/// 100, thread 1 pushes the module `TSL:XlaModule:#hlo_module=jit_cb,program_id=4#`
/// [0, 1000] and no thunk range: inside a command buffer XLA pushes none.
///
/// | corr | call (thread 1) | operations (device 0, ns) | graph, node |
/// |---|---|---|---|
/// | 1 | `cudaLaunchKernel` 100–110 | kernel 10000–10100 (100) | none |
/// | 2 | `cudaGraphLaunch` 200–230 | kernels 10200–10300 (100), 10300–10450 (150), 10450–10500 (50) | 5; 11, 12, 13 |
/// | 2 | the same | a 4096 B DtoD copy 10500–10520 | none (no column); 14 |
/// | 3 | `cudaGraphLaunch` 2000–2010, outside every range | kernel 11000–11040 (40) | 5, 11 |
fn graph_export(path: &Path) {
    let db = NsysDb::create(path);
    db.kernels_2026();
    let t = gtid(PID, 1);
    let p = gpid(PID);
    db.string(GRAPH_KERNEL, "k");
    db.string(LAUNCH, "cudaLaunchKernel_v7000");
    db.string(GRAPH_LAUNCH, "cudaGraphLaunch_v10000");
    db.range(0, 1000, t, "TSL:XlaModule:#hlo_module=jit_cb,program_id=4#");
    db.call_named(100, 110, t, 1, LAUNCH);
    db.graph_kernel(0, 10_000, 10_100, p, 1, None, None);
    db.call_named(200, 230, t, 2, GRAPH_LAUNCH);
    for (start, end, node) in [
        (10_200, 10_300, 11),
        (10_300, 10_450, 12),
        (10_450, 10_500, 13),
    ] {
        db.graph_kernel(0, start, end, p, 2, Some(5), Some(node));
    }
    db.graph_memcpy(10_500, 10_520, p, 2, 14);
    db.call_named(2000, 2010, t, 3, GRAPH_LAUNCH);
    db.graph_kernel(0, 11_000, 11_040, p, 3, Some(5), Some(11));
}

#[test]
fn graph_kernels_carry_their_graph_and_the_module_around_the_graph_launch() {
    let dir = tempdir();
    let file = dir.path().join("g.sqlite");
    graph_export(&file);
    let file = path_str(&file);
    let out = run("njx-export", &["--table", "kernels", file], b"");
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    // Nothing traced as whole graphs here: no note of it.
    assert!(!err.contains("whole graphs"), "{err}");
    let text = String::from_utf8(out.stdout).unwrap();
    let recs = json_lines(&text);
    let module = "TSL:XlaModule:#hlo_module=jit_cb,program_id=4#";
    let n = Value::Null;
    let got: Vec<[Value; 8]> = recs
        .iter()
        .map(|r| {
            [
                "correlation_id",
                "dur_ns",
                "graph_id",
                "graph_node_id",
                "api",
                "module",
                "program_id",
                "thunk",
            ]
            .map(|f| r[f].clone())
        })
        .collect();
    let graph = |corr: u64, dur: u64, node: u64| -> [Value; 8] {
        [
            corr.into(),
            dur.into(),
            5.into(),
            node.into(),
            "cudaGraphLaunch_v10000".into(),
            "jit_cb".into(),
            4.into(),
            n.clone(),
        ]
    };
    let mut outside = graph(3, 40, 11);
    outside[5] = n.clone();
    outside[6] = n.clone();
    assert_eq!(
        got,
        [
            [
                1.into(),
                100.into(),
                n.clone(),
                n.clone(),
                "cudaLaunchKernel_v7000".into(),
                "jit_cb".into(),
                4.into(),
                n.clone(),
            ],
            graph(2, 100, 11),
            graph(2, 150, 12),
            graph(2, 50, 13),
            outside,
        ]
    );
    // The graph's kernels are in the module range, the last one in none.
    let ranges: Vec<Value> = recs.iter().map(|r| r["range"].clone()).collect();
    assert_eq!(
        ranges,
        [module, module, module, module]
            .map(Value::from)
            .into_iter()
            .chain([n.clone()])
            .collect::<Vec<_>>()
    );
    // The graph fields come last, in JSON and CSV (nulls empty).
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].ends_with(r#","thunk":null,"graph_id":null,"graph_node_id":null}"#),
        "{text}"
    );
    assert!(
        lines[1].ends_with(r#","thunk":null,"graph_id":5,"graph_node_id":11}"#),
        "{text}"
    );
    let csv = ok(
        "njx-export",
        &["--table", "kernels", "--format", "csv", file],
    );
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .ends_with(",module,program_id,thunk,graph_id,graph_node_id")
    );
    assert!(lines.next().unwrap().ends_with(",jit_cb,4,,,"), "{csv}");
    assert!(lines.next().unwrap().ends_with(",jit_cb,4,,5,11"), "{csv}");
    // The copy node: a node id, no graph id (2026 copy tables have no graphId).
    let memops = json_lines(&ok("njx-export", &["--table", "memops", file]));
    assert_eq!(memops.len(), 1);
    let m = &memops[0];
    assert_eq!(
        [
            &m["graph_id"],
            &m["graph_node_id"],
            &m["module"],
            &m["api"],
            &m["direction"]
        ],
        [
            &n,
            &14.into(),
            &"jit_cb".into(),
            &"cudaGraphLaunch_v10000".into(),
            &"DtoD".into()
        ]
    );

    // njx-kernels counts every graph kernel, from the export and from the records.
    let records = ok("njx-export", &["--table", "kernels", file]);
    let totals = |rows: BTreeMap<String, Value>| -> BTreeMap<String, (i64, i64)> {
        rows.into_iter()
            .map(|(k, v)| {
                (
                    k,
                    (
                        v["count"].as_i64().unwrap(),
                        v["total_ns"].as_i64().unwrap(),
                    ),
                )
            })
            .collect()
    };
    let want = |rows: &[(&str, (i64, i64))]| -> BTreeMap<String, (i64, i64)> {
        rows.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    };
    for (by, expected) in [
        ("name", want(&[("k", (5, 440))])),
        ("module", want(&[("jit_cb", (4, 400)), ("(none)", (1, 40))])),
        ("thunk", want(&[("(none)", (5, 440))])),
        (
            "graph",
            want(&[("graph 5", (4, 340)), ("(none)", (1, 100))]),
        ),
    ] {
        let direct = summary_rows(&ok("njx-kernels", &["--by", by, "--format", "json", file]));
        assert_eq!(totals(direct), expected, "--by {by}");
        let piped = summary_rows(&ok_with(
            "njx-kernels",
            &["--by", by, "--format", "json"],
            records.as_bytes(),
        ));
        assert_eq!(totals(piped), expected, "--by {by}, piped");
    }
    let m = summary_rows(&ok(
        "njx-kernels",
        &[
            "--by", "graph", "--table", "memops", "--format", "json", file,
        ],
    ));
    assert_eq!(m["(graph, id not recorded)"]["count"], 1);
    assert_eq!(m["(graph, id not recorded)"]["bytes"], 4096);
}

#[test]
fn graph_launches_traced_whole_are_said_to_hide_their_kernels() {
    // nsys' default, --cuda-graph-trace=graph: one row per launch in
    // CUPTI_ACTIVITY_KIND_GRAPH_TRACE (its columns those of CUPTI's
    // CUpti_ActivityGraphTrace2 record), the graph's kernels in no table.
    let dir = tempdir();
    let path = dir.path().join("w.sqlite");
    graph_export(&path);
    let db = NsysDb {
        conn: rusqlite::Connection::open(&path).unwrap(),
    };
    db.sql(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, \
         end INTEGER NOT NULL, deviceId INTEGER, contextId INTEGER, greenContextId INTEGER, \
         streamId INTEGER, correlationId INTEGER, globalPid INTEGER, graphId INTEGER, \
         graphExecId INTEGER)",
        [],
    );
    for corr in [20, 21] {
        db.sql(
            "INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (12000, 13000, 0, 1, NULL, 7, \
             ?1, ?2, 6, 1)",
            rusqlite::params![corr, gpid(PID)],
        );
    }
    drop(db);
    let file = path_str(&path);
    for table in ["kernels", "memops"] {
        let out = run("njx-export", &["--table", table, file], b"");
        assert!(out.status.success());
        let err = stderr_of(&out);
        assert!(
            err.contains("2 CUDA graph launches were traced as whole graphs")
                && err.contains("CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
                && err.contains("--cuda-graph-trace=node"),
            "{err}"
        );
        // What is in the tables still reads.
        let n = json_lines(&String::from_utf8(out.stdout).unwrap()).len();
        assert_eq!(n, if table == "kernels" { 5 } else { 1 });
    }
}

#[test]
fn kernel_records_from_before_the_graph_fields_still_summarise() {
    let dir = tempdir();
    let file = dir.path().join("g.sqlite");
    graph_export(&file);
    let file = path_str(&file);
    let json = ok("njx-export", &["--table", "kernels", file]);
    let old: String = json_lines(&json)
        .into_iter()
        .map(|mut r| {
            let o = r.as_object_mut().unwrap();
            o.remove("graph_id");
            o.remove("graph_node_id");
            format!("{r}\n")
        })
        .collect();
    let rows = summary_rows(&ok_with(
        "njx-kernels",
        &["--by", "graph", "--format", "json"],
        old.as_bytes(),
    ));
    assert_eq!(rows["(none)"]["count"], 5);
    let csv = ok(
        "njx-export",
        &["--table", "memops", "--format", "csv", file],
    );
    let old_csv: String = csv
        .lines()
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            format!("{}\n", cells[..cells.len() - 2].join(","))
        })
        .collect();
    assert!(
        old_csv
            .lines()
            .next()
            .unwrap()
            .ends_with(",program_id,thunk")
    );
    let rows = summary_rows(&ok_with(
        "njx-kernels",
        &["--by", "module", "--format", "json"],
        old_csv.as_bytes(),
    ));
    assert_eq!(rows["jit_cb"]["bytes"], 4096);
}

#[test]
fn negative_graph_ids_are_read_as_null_and_said() {
    let dir = tempdir();
    let path = dir.path().join("n.sqlite");
    graph_export(&path);
    let db = NsysDb {
        conn: rusqlite::Connection::open(&path).unwrap(),
    };
    db.call_named(3000, 3010, gtid(PID, 1), 4, GRAPH_LAUNCH);
    db.graph_kernel(0, 12_000, 12_010, gpid(PID), 4, Some(-5), Some(-1));
    drop(db);
    let out = run("njx-export", &["--table", "kernels", path_str(&path)], b"");
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(
            "n.sqlite: 1 of 6 kernels have a negative graphId or graphNodeId, which CUPTI \
             never gives (first: table CUPTI_ACTIVITY_KIND_KERNEL, row 6, graphId -5): read \
             as null"
        ),
        "{err}"
    );
    let recs = json_lines(&String::from_utf8(out.stdout).unwrap());
    let last = recs.last().unwrap();
    assert_eq!(last["correlation_id"], 4);
    assert_eq!(
        [&last["graph_id"], &last["graph_node_id"]],
        [&Value::Null; 2]
    );
}
