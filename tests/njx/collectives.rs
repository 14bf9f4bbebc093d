//! njx-collectives: bandwidth, hidden share, wait and straggler tables on thunk records
//! with known skews, and the peer's communication summary on the real pax profiles.

use crate::common::*;
use serde_json::{Value, json};

/// One thunk record.
fn thunk(
    device: u32,
    exec: u32,
    name: &str,
    start: i64,
    dur: i64,
    hidden: i64,
    comm: bool,
) -> String {
    json!({
        "profile": format!("rank{device}"), "program": "p1", "program_id": 1, "module": "jit_step",
        "execution": exec, "device": device, "name": name, "thunk_execution": 0,
        "start_ns": start, "dur_ns": dur, "hidden_ns": hidden, "comm": comm, "warmup": exec == 0,
        "collective": if comm { json!("all-reduce") } else { Value::Null },
        "group_size": if comm { json!(2) } else { Value::Null },
        "message_bytes": if comm { json!(1_000_000) } else { Value::Null },
    })
    .to_string()
}

/// Two devices, executions 0 (warm-up) to 3 of one program: a 1 MB all-reduce after a
/// 1000 ns fusion. Device 1 arrives late by 300, 500 and 100 ns in executions 1–3, so
/// device 0's exposed time is longer by that much; 200 ns of each all-reduce are hidden.
fn records() -> String {
    let mut lines = Vec::new();
    for (exec, late) in [(0u32, 0i64), (1, 300), (2, 500), (3, 100)] {
        let base = 10_000 * i64::from(exec);
        for device in 0..2u32 {
            lines.push(thunk(device, exec, "fusion.1", base, 1000, 0, false));
            let exposed = 1000 + if device == 0 { late } else { 0 };
            lines.push(thunk(
                device,
                exec,
                "all-reduce-start",
                base + 800,
                exposed,
                200,
                true,
            ));
        }
    }
    lines.join("\n") + "\n"
}

fn tables(args: &[&str], input: &str) -> Vec<Value> {
    let mut a = vec!["--format", "json"];
    a.extend_from_slice(args);
    let out = run("njx-collectives", &a, input.as_bytes());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_lines(&String::from_utf8(out.stdout).unwrap())
}

fn table<'a>(rows: &'a [Value], name: &str) -> Vec<&'a Value> {
    rows.iter().filter(|r| r["table"] == name).collect()
}

#[test]
fn known_skews_give_known_tables() {
    let rows = tables(&[], &records());
    // Fastest device per instance: device 1, exposed 1000 + hidden 200 = 1200 ns for
    // 1e6 bytes: algbw 833.33 GB/s, busbw × 2(n−1)/n = × 1.
    let bw = table(&rows, "bandwidth");
    assert_eq!(bw.len(), 1);
    assert_eq!(bw[0]["count"], 3);
    assert!((bw[0]["busbw_mean_gbps"].as_f64().unwrap() - 1e6 / 1200.0).abs() < 1e-9);
    assert_eq!(bw[0]["busbw_stderr_gbps"].as_f64().unwrap(), 0.0);
    // Hidden: 6 × 200 over 6 × 1200 + 900 of lateness.
    let hidden = table(&rows, "hidden");
    let ratio = 1200.0 / (6.0 * 1200.0 + 900.0);
    assert!((hidden[0]["hidden_ratio"].as_f64().unwrap() - ratio).abs() < 1e-12);
    assert_eq!(hidden[1]["collective"], "overall");
    // Wait: 300, 500, 100 → mean 300, std 200.
    let wait = table(&rows, "wait");
    assert_eq!(wait[0]["executions"], 3);
    assert_eq!(wait[0]["wait_mean_ns"], 300.0);
    assert_eq!(wait[0]["wait_std_ns"], 200.0);
    // Module time from its thunks: 0 to 800 + 1000 + 200 + lateness (device 0) or not.
    let module = (3.0 * 2000.0 + 900.0 + 3.0 * 2000.0) / 6.0;
    assert!((wait[0]["module_mean_ns"].as_f64().unwrap() - module).abs() < 1e-9);
    // Stragglers: device 1 is last every time, 300 ns late on average.
    let s = table(&rows, "stragglers");
    assert_eq!(
        (s[0]["device"].as_u64(), s[0]["last"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(
        (s[1]["device"].as_u64(), s[1]["last"].as_u64()),
        (Some(1), Some(3))
    );
    assert_eq!(s[1]["lateness_mean_ns"], 300.0);
    assert_eq!(s[1]["last_percent"], 100.0);
    // With warm-up: one more instance, with no lateness.
    let rows = tables(&["--include-warmup"], &records());
    assert_eq!(table(&rows, "bandwidth")[0]["count"], 4);
    assert_eq!(table(&rows, "wait")[0]["wait_mean_ns"], 225.0);
}

#[test]
fn the_report_as_csv_has_one_table_column() {
    let out = run(
        "njx-collectives",
        &["--format", "csv"],
        records().as_bytes(),
    );
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let headers = rdr.headers().unwrap().clone();
    assert_eq!(&headers[0], "table");
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    let tables: Vec<&str> = rows.iter().map(|r| &r[0]).collect();
    assert_eq!(
        tables,
        [
            "bandwidth",
            "hidden",
            "hidden",
            "hidden-by-program",
            "hidden-by-program",
            "wait",
            "stragglers",
            "stragglers",
            "stragglers-by-program",
            "stragglers-by-program"
        ]
    );
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    assert_eq!(&rows[5][col("wait_mean_ns")], "300");
    assert_eq!(&rows[0][col("wait_mean_ns")], "");
}

#[test]
fn one_table_keeps_its_json_column_order() {
    let input = records();
    let json = tables(&["--table", "wait"], &input);
    assert!(json.iter().all(|r| r["table"] == "wait"), "{json:?}");
    let out = run(
        "njx-collectives",
        &["--table", "stragglers", "--format", "csv"],
        input.as_bytes(),
    );
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        "table,device,instances,last,last_percent,lateness_mean_ns"
    );
    assert_eq!(text.lines().count(), 3, "{text}");
    // The table for people: that section alone, the wait one with its footnote.
    let out = run("njx-collectives", &["--table", "wait"], input.as_bytes());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("Wait time per module execution"), "{text}");
    assert!(text.contains("so it can pass 100 %"), "{text}");
    assert!(
        !text.contains("Bus bandwidth") && !text.contains("Stragglers"),
        "{text}"
    );
    // Bandwidths with 4 significant digits, however small.
    let out = run(
        "njx-collectives",
        &["--table", "bandwidth"],
        input.as_bytes(),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let busbw = text
        .lines()
        .nth(2)
        .unwrap()
        .split_whitespace()
        .nth(2)
        .unwrap();
    let digits = busbw.replace('.', "").trim_start_matches('0').len();
    assert_eq!(digits, 4, "{text}");
}

#[test]
fn collective_records_carry_bandwidths() {
    let out = run(
        "njx-collectives",
        &["--records", "--include-warmup"],
        records().as_bytes(),
    );
    let recs = json_lines(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(recs.len(), 8);
    let slow = recs
        .iter()
        .find(|r| r["device"] == 0 && r["execution"] == 2)
        .unwrap();
    // 1e6 B over 1500 + 200 ns.
    assert!((slow["algbw_gbps"].as_f64().unwrap() - 1e6 / 1700.0).abs() < 1e-9);
    assert_eq!(slow["busbw_gbps"], slow["algbw_gbps"]);
    let out = run(
        "njx-collectives",
        &["--records", "--format", "csv"],
        records().as_bytes(),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with(",message_bytes,reconstructed,algbw_gbps,busbw_gbps,autotuning")
    );
    assert_eq!(text.lines().count(), 7);
}

#[test]
fn no_communication_is_one_line_and_success() {
    let input = thunk(0, 1, "fusion.1", 0, 10, 0, false);
    let out = run("njx-collectives", &[], input.as_bytes());
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "No communication in the input (steady state).\n"
    );
    let out = run("njx-collectives", &[], b"garbage\n");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn the_pax_profiles_match_the_peers_communication_summary() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let paths: Vec<String> = pax_archives(&dir);
    let mut args = vec!["--table", "thunks"];
    args.extend(paths.iter().map(String::as_str));
    let thunks = ok("njx-export", &args);
    let svg = tempdir();
    let svg_path = svg.path().join("busbw.svg");
    let rows = tables(&["--plot", svg_path.to_str().unwrap()], &thunks);
    let text = std::fs::read_to_string(dir.join("reference-nsys-jax.json")).unwrap();
    let reference: Value = serde_json::from_str(&text).unwrap();
    let reference = &reference["combined_4proc"];
    let peer = reference["busbw_gbps"].as_object().unwrap();
    let bw = table(&rows, "bandwidth");
    assert_eq!(bw.len(), peer.len());
    for r in bw {
        let key = format!(
            "{}/{}",
            r["collective"].as_str().unwrap(),
            r["message_bytes"]
        );
        let want = &peer[&key];
        assert_eq!(r["count"], want["n"], "{key}");
        let (m, w) = (
            r["busbw_mean_gbps"].as_f64().unwrap(),
            want["mean"].as_f64().unwrap(),
        );
        assert!((m - w).abs() <= 0.005 * w, "{key}: {m} vs {w}");
        let (s, ws) = (
            r["busbw_stderr_gbps"].as_f64().unwrap(),
            want["stderr"].as_f64().unwrap(),
        );
        assert!((s - ws).abs() <= 0.05 * ws, "{key}: {s} vs {ws}");
    }
    for r in table(&rows, "hidden") {
        let c = r["collective"].as_str().unwrap();
        if c == "overall" {
            assert!((r["hidden_ratio"].as_f64().unwrap() - 0.006498033414832545).abs() < 1e-4);
        } else {
            let want = reference["hidden_ratio"][c].as_f64().unwrap();
            assert!(
                (r["hidden_ratio"].as_f64().unwrap() - want).abs() < 1e-4,
                "{c}"
            );
        }
    }
    // reference-summary.txt: wait 1.7(4) ms, 1.383 % for the step function on ranks 0–2.
    let wait = table(&rows, "wait");
    let step = wait
        .iter()
        .find(|r| r["program"] == "25fa0b3e673a92036f22550cd7bcb068")
        .unwrap();
    assert!((step["wait_mean_ns"].as_f64().unwrap() / 1e6 - 1.749).abs() < 0.001);
    assert!((step["wait_percent"].as_f64().unwrap() - 1.383).abs() < 0.001);
    // The plot: a point per bandwidth row (and one per legend entry), an error bar per
    // row with a standard error, round decade ticks on both log axes.
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let texts = svg_texts(&svg);
    for c in ["all-gather", "all-reduce", "reduce-scatter"] {
        assert!(texts.iter().any(|t| t == c), "{c}: {texts:?}");
    }
    let bandwidth: Vec<_> = rows.iter().filter(|r| r["table"] == "bandwidth").collect();
    // Filled circles (plotters outlines each point's circle too): points and legend.
    let filled = svg
        .split("<circle")
        .skip(1)
        .filter(|c| !c[..c.find("/>").unwrap()].contains(r#"fill="none""#))
        .count();
    assert_eq!(filled, bandwidth.len() + 3);
    let with_error = bandwidth
        .iter()
        .filter(|r| r["busbw_stderr_gbps"].as_f64().is_some_and(|e| e > 0.0))
        .count();
    assert!(with_error > 0);
    // An error bar: three lines (two whiskers and the stem) in the series' colour; the
    // axes and grid are black.
    let coloured_lines = svg
        .split("<line")
        .skip(1)
        .filter(|l| !l[..l.find("/>").unwrap()].contains(r##"stroke="#000000""##))
        .count();
    assert_eq!(coloured_lines, 3 * with_error);
    for tick in ["1 kB", "1 MB", "10 MB", "0.01", "1", "100"] {
        assert!(texts.iter().any(|t| t == tick), "{tick}: {texts:?}");
    }
    assert!(texts.iter().any(|t| t == "bus bandwidth [GB/s]"));
}

/// As [`records`], but device 1 starts each all-reduce late (300, 500 and 100 ns in
/// executions 1–3; on time in the warm-up) and device 0 waits for it: both take their
/// 1200 ns once device 1 is there, so every instance's wait is device 1's lateness.
fn late_arrivals() -> String {
    late_arrivals_by([300, 500, 100])
}

/// [`late_arrivals`], device 1 late by `lates` in executions 1–3.
fn late_arrivals_by(lates: [i64; 3]) -> String {
    let mut lines = Vec::new();
    for (exec, late) in [(0u32, 0i64), (1, lates[0]), (2, lates[1]), (3, lates[2])] {
        let base = 10_000 * i64::from(exec);
        for device in 0..2u32 {
            lines.push(thunk(device, exec, "fusion.1", base, 800, 0, false));
            let (start, exposed) = if device == 0 {
                (base + 800, 1000 + late)
            } else {
                (base + 800 + late, 1000)
            };
            lines.push(thunk(
                device,
                exec,
                "all-reduce-start",
                start,
                exposed,
                200,
                true,
            ));
        }
    }
    lines.join("\n") + "\n"
}

#[test]
fn wait_per_instance_is_last_end_minus_first_start_minus_the_fastest() {
    let rows = tables(&["--table", "instances"], &late_arrivals());
    assert_eq!(rows.len(), 3, "{rows:?}");
    for (r, late) in rows.iter().zip([300.0, 500.0, 100.0]) {
        assert_eq!(r["table"], "instances");
        assert_eq!(r["collective"], "all-reduce");
        assert_eq!(r["devices"], 2);
        assert_eq!(r["fastest_ns"], 1200);
        assert_eq!(r["wait_ns"].as_f64(), Some(late));
        assert_eq!(r["wait_ratio"].as_f64(), Some(late / 1200.0));
        assert_eq!(r["last_device"], 1);
        assert_eq!(r["last_late_ns"].as_f64(), Some(late));
        assert_eq!(r["message_bytes"], 1_000_000);
    }
    assert_eq!(
        rows.iter()
            .map(|r| r["execution"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1, 2, 3]
    );
}

#[test]
fn wait_quantiles_and_histogram() {
    let q = tables(&["--table", "wait-quantiles"], &late_arrivals());
    assert_eq!(q.len(), 1);
    let q = &q[0];
    assert_eq!(q["instances"], 3);
    for (field, v) in [
        ("wait_min_ns", 100.0),
        ("wait_p25_ns", 200.0),
        ("wait_median_ns", 300.0),
        ("wait_p75_ns", 400.0),
        ("wait_p90_ns", 460.0),
        ("wait_p99_ns", 496.0),
        ("wait_max_ns", 500.0),
        ("wait_mean_ns", 300.0),
        ("ratio_median", 0.25),
    ] {
        assert!(
            (q[field].as_f64().unwrap() - v).abs() < 1e-9,
            "{field}: {q}"
        );
    }
    let h = tables(&["--table", "wait-histogram"], &late_arrivals());
    let bins: Vec<(u64, u64, u64)> = h
        .iter()
        .map(|r| {
            (
                r["bin_lo_ns"].as_u64().unwrap(),
                r["bin_hi_ns"].as_u64().unwrap(),
                r["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(bins, [(100, 200, 1), (200, 500, 1), (500, 1000, 1)]);
    // The warm-up execution (device 1 on time) adds a wait of zero.
    let h = tables(
        &["--table", "wait-histogram", "--include-warmup"],
        &late_arrivals(),
    );
    assert_eq!(h[0]["bin_lo_ns"], 0);
    assert_eq!(h[0]["bin_hi_ns"], 0);
    assert_eq!(h[0]["count"], 1);
}

#[test]
fn lateness_along_the_module() {
    let rows = tables(&["--table", "lateness"], &late_arrivals());
    assert_eq!(rows.len(), 2, "{rows:?}");
    for (r, (device, late)) in rows.iter().zip([(0, 0.0), (1, 300.0)]) {
        assert_eq!(r["device"], device);
        assert_eq!(r["thunk"], "all-reduce-start");
        assert_eq!(r["executions"], 3);
        // The first arrival is 800 ns after the module's first thunk started.
        assert_eq!(r["offset_ns"].as_f64(), Some(800.0));
        assert!(
            (r["lateness_ns"].as_f64().unwrap() - late).abs() < 1e-9,
            "{r}"
        );
    }
    // CSV: the JSON fields in order.
    let out = ok_with(
        "njx-collectives",
        &["--table", "lateness", "--format", "csv"],
        late_arrivals().as_bytes(),
    );
    assert_eq!(
        out.lines().next().unwrap(),
        "table,program,name,thunk,thunk_execution,collective,offset_ns,device,executions,\
         lateness_ns"
    );
}

/// The tables of `njx-collectives --table`, the report's six then those on aligned
/// clocks.
pub(crate) const TABLES: [&str; 10] = [
    "bandwidth",
    "hidden",
    "hidden-by-program",
    "wait",
    "stragglers",
    "stragglers-by-program",
    "instances",
    "wait-quantiles",
    "wait-histogram",
    "lateness",
];

#[test]
fn each_table_has_the_same_fields_in_json_and_csv_and_times_in_whole_nanoseconds() {
    // Device 1 late by 300, 500 and 101 ns: means and quantiles fall between nanoseconds.
    let input = late_arrivals_by([300, 500, 101]);
    let mut all: Vec<Value> = Vec::new();
    for part in TABLES {
        let rows = tables(&["--table", part], &input);
        assert!(!rows.is_empty(), "{part}");
        let csv = ok_with(
            "njx-collectives",
            &["--table", part, "--format", "csv"],
            input.as_bytes(),
        );
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let fields: Vec<&str> = rows[0]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            header, fields,
            "{part}: the CSV's columns are the JSON's fields"
        );
        let lines: Vec<&str> = lines.collect();
        assert_eq!(lines.len(), rows.len(), "{part}");
        for (row, line) in rows.iter().zip(lines) {
            let cells: Vec<&str> = line.split(',').collect();
            assert_eq!(cells.len(), header.len(), "{part}: {line}");
            assert_eq!(cells[0], part, "{line}");
            for (field, cell) in header.iter().zip(&cells) {
                if field.ends_with("_ns") {
                    let v = &row[*field];
                    assert!(
                        v.is_i64() || v.is_u64() || v.is_null(),
                        "{part} {field}: {row}"
                    );
                    assert!(
                        cell.is_empty() || cell.parse::<i64>().is_ok(),
                        "{part} {field}: {line}"
                    );
                }
            }
            all.push(row.clone());
        }
    }
    // Rounded to the nearest nanosecond: the mean of 300, 500 and 101 is 300.33, their
    // first quartile 200.5.
    // Each row says its table (`cells[0] == part` above, the `table` field).
    let quantiles = table(&all, "wait-quantiles")[0];
    assert_eq!(quantiles["wait_mean_ns"], 300);
    assert_eq!(quantiles["wait_p25_ns"], 201);
    assert_eq!(table(&all, "wait")[0]["wait_mean_ns"], 300);
    let late = table(&all, "lateness")
        .into_iter()
        .find(|r| r["device"] == 1)
        .unwrap();
    assert_eq!(late["lateness_ns"], 300);
    // The whole report as CSV: the same `table` column.
    let csv = ok_with("njx-collectives", &["--format", "csv"], input.as_bytes());
    assert!(csv.starts_with("table,collective,"), "{csv}");
}

#[test]
fn the_default_report_leaves_the_timing_tables_out() {
    let rows = tables(&[], &late_arrivals());
    let mut names: Vec<&str> = rows.iter().map(|r| r["table"].as_str().unwrap()).collect();
    names.dedup();
    assert_eq!(
        names,
        [
            "bandwidth",
            "hidden",
            "hidden-by-program",
            "wait",
            "stragglers",
            "stragglers-by-program"
        ]
    );
}

/// [`records`] and a barrier: program p2 (`jit__psum`), one all-reduce per execution
/// after the step's, nothing hidden, device 0 arriving 5000 ns after device 1 each time.
fn with_a_barrier() -> String {
    let mut lines = Vec::new();
    for exec in 0..4u32 {
        let base = 1_000_000 + 10_000 * i64::from(exec);
        for device in 0..2u32 {
            let exposed = 1000 + if device == 1 { 5000 } else { 0 };
            let line = thunk(device, exec, "all-reduce-start", base, exposed, 0, true);
            let mut v: Value = serde_json::from_str(&line).unwrap();
            v["program"] = json!("p2");
            v["program_id"] = json!(2);
            v["module"] = json!("jit__psum");
            lines.push(v.to_string());
        }
    }
    records() + &lines.join("\n") + "\n"
}

#[test]
fn hidden_and_stragglers_per_program_tell_a_barrier_from_the_step() {
    let rows = tables(&[], &with_a_barrier());
    let ratio = |r: &Value| r["hidden_ratio"].as_f64().unwrap();
    // The whole run: the barrier's 3 × 7000 ns, nothing hidden, swamp the step's share.
    let whole = table(&rows, "hidden");
    assert_eq!(whole[1]["collective"], "overall");
    assert!((ratio(whole[1]) - 1200.0 / (8100.0 + 21000.0)).abs() < 1e-12);
    // Per program, the most communication first, each its collectives then its overall.
    let by: Vec<(&str, &str, &str)> = table(&rows, "hidden-by-program")
        .iter()
        .map(|r| {
            (
                r["program"].as_str().unwrap(),
                r["name"].as_str().unwrap(),
                r["collective"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        by,
        [
            ("p2", "jit__psum", "all-reduce"),
            ("p2", "jit__psum", "overall"),
            ("p1", "jit_step", "all-reduce"),
            ("p1", "jit_step", "overall"),
        ]
    );
    let by = table(&rows, "hidden-by-program");
    assert_eq!(ratio(by[1]), 0.0);
    assert_eq!(by[1]["total_ns"], 21000);
    assert!((ratio(by[3]) - 1200.0 / 8100.0).abs() < 1e-12);
    // Stragglers: the whole table mixes the barrier's late device 0 with the step's late
    // device 1; per program each is found with its own lateness.
    let whole = table(&rows, "stragglers");
    assert_eq!(whole[0]["last"], 3);
    assert_eq!(whole[0]["lateness_mean_ns"], 5000.0);
    let by: Vec<(&str, u64, u64, Value)> = table(&rows, "stragglers-by-program")
        .iter()
        .map(|r| {
            (
                r["program"].as_str().unwrap(),
                r["device"].as_u64().unwrap(),
                r["last"].as_u64().unwrap(),
                r["lateness_mean_ns"].clone(),
            )
        })
        .collect();
    assert_eq!(
        by,
        [
            ("p2", 0, 3, json!(5000)),
            ("p2", 1, 0, Value::Null),
            ("p1", 0, 0, Value::Null),
            ("p1", 1, 3, json!(300)),
        ]
    );
    // --program keeps one program's rows, and its figures are the whole table's then.
    let step = tables(&["--program", "jit_step"], &with_a_barrier());
    assert!(
        table(&step, "stragglers-by-program")
            .iter()
            .all(|r| r["program"] == "p1")
    );
    assert_eq!(
        ratio(table(&step, "hidden")[1]),
        ratio(table(&step, "hidden-by-program")[1])
    );
}

#[test]
fn wait_and_lateness_pictures() {
    let dir = tempdir();
    let wait = dir.path().join("wait.svg");
    let late = dir.path().join("late.svg");
    let table = ok_with(
        "njx-collectives",
        &[
            "--wait-plot",
            wait.to_str().unwrap(),
            "--lateness-plot",
            late.to_str().unwrap(),
        ],
        late_arrivals().as_bytes(),
    );
    // The report is the default one.
    assert!(table.contains("Bus bandwidth"), "{table}");
    let texts = svg_texts(&std::fs::read_to_string(&wait).unwrap());
    assert!(texts.iter().any(|t| t == "all-reduce"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "1 MB"), "{texts:?}");
    let texts = svg_texts(&std::fs::read_to_string(&late).unwrap());
    assert!(texts.iter().any(|t| t == "jit_step (p1)"), "{texts:?}");
    assert!(
        texts.iter().any(|t| t == "device 1 (mean 0.0003 ms)"),
        "{texts:?}"
    );
    // Partial results cannot be compared across devices.
    let out = run(
        "njx-collectives",
        &["--partial", "--wait-plot", wait.to_str().unwrap()],
        late_arrivals().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(2));
}

/// Two programs over three devices: device 1 is the late one in `jit_a` (program p1),
/// device 0 in `jit_b` (p2), so each panel of the lateness picture lists its devices in
/// another order.
fn late_in_turn() -> String {
    let mut lines = Vec::new();
    for (program, module, late_device, offset) in
        [("p1", "jit_a", 1u32, 0i64), ("p2", "jit_b", 0, 1_000_000)]
    {
        for (exec, late) in [(0u32, 0i64), (1, 300), (2, 500), (3, 100)] {
            let base = offset + 10_000 * i64::from(exec);
            for device in 0..3u32 {
                let (start, exposed) = if device == late_device {
                    (base + 800 + late, 1000)
                } else {
                    (base + 800 + 10 * i64::from(device), 1000 + late)
                };
                for (name, start, dur, comm) in [
                    ("fusion.1", base, 800, false),
                    ("all-reduce-start", start, exposed, true),
                ] {
                    let mut t: Value =
                        serde_json::from_str(&thunk(device, exec, name, start, dur, 200, comm))
                            .unwrap();
                    t["program"] = json!(program);
                    t["module"] = json!(module);
                    t["group_size"] = if comm { json!(3) } else { Value::Null };
                    if !comm {
                        t["hidden_ns"] = json!(0);
                    }
                    lines.push(t.to_string());
                }
            }
        }
    }
    lines.join("\n") + "\n"
}

/// Per panel of a lateness picture (by its caption), each device's colour in its legend:
/// the legend's texts `device N (mean …)` and its lines (stroke width 3), in order.
fn legend_colours(svg: &str, captions: &[&str]) -> Vec<Vec<(u32, String)>> {
    let mut panels: Vec<(Vec<u32>, Vec<String>)> = Vec::new();
    for line in svg.lines().map(str::trim) {
        if captions.contains(&line) {
            panels.push(Default::default());
        }
        let Some((devices, strokes)) = panels.last_mut() else {
            continue;
        };
        if let Some(rest) = line.strip_prefix("device ") {
            devices.push(rest.split(' ').next().unwrap().parse().unwrap());
        } else if line.starts_with("<polyline") && line.contains(r#"stroke-width="3""#) {
            let stroke = line.split(r#"stroke=""#).nth(1).unwrap();
            strokes.push(stroke[..stroke.find('"').unwrap()].to_string());
        }
    }
    panels
        .into_iter()
        .map(|(devices, strokes)| {
            assert_eq!(devices.len(), strokes.len(), "{devices:?} {strokes:?}");
            devices.into_iter().zip(strokes).collect()
        })
        .collect()
}

#[test]
fn a_device_has_one_colour_in_every_panel_of_the_lateness_picture() {
    let dir = tempdir();
    let late = dir.path().join("late.svg");
    ok_with(
        "njx-collectives",
        &["--lateness-plot", late.to_str().unwrap()],
        late_in_turn().as_bytes(),
    );
    let svg = std::fs::read_to_string(&late).unwrap();
    let panels = legend_colours(&svg, &["jit_a (p1)", "jit_b (p2)"]);
    assert_eq!(panels.len(), 2, "{svg}");
    // Each panel lists its latest device first: the orders differ, the colours do not.
    assert_eq!(panels[0][0].0, 1, "{panels:?}");
    assert_eq!(panels[1][0].0, 0, "{panels:?}");
    let mut colour: std::collections::BTreeMap<u32, &str> = Default::default();
    for panel in &panels {
        assert_eq!(panel.len(), 3, "{panels:?}");
        for (device, stroke) in panel {
            let c = *colour.entry(*device).or_insert(stroke);
            assert_eq!(c, stroke, "device {device}: {panels:?}");
        }
    }
    let mut distinct: Vec<&str> = colour.values().copied().collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 3, "{colour:?}");
}

/// The notebook's wait per collective instance on the pax profiles (checked against the
/// peer with scripts/check-notebook.py: the 72 instances over two or more devices agree
/// within 0.3 ns), from the archives (clocks aligned here) and from njx-export's records.
#[test]
fn the_pax_waits_match_the_notebooks() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let paths: Vec<String> = pax_archives(&dir);
    let mut args = vec!["--table", "wait-quantiles", "--format", "json"];
    args.extend(paths.iter().map(String::as_str));
    let out = run("njx-collectives", &args, b"");
    assert!(out.status.success());
    let err = stderr_of(&out);
    assert!(
        err.contains("69 of 141 collective instances ran on one device only"),
        "{err}"
    );
    let rows = json_lines(&String::from_utf8(out.stdout).unwrap());
    let medians: Vec<(String, u64, f64)> = rows
        .iter()
        .map(|r| {
            (
                r["collective"].as_str().unwrap().to_string(),
                r["instances"].as_u64().unwrap(),
                (r["wait_median_ns"].as_f64().unwrap() / 1e3).round(),
            )
        })
        .collect();
    assert_eq!(
        medians,
        [
            ("all-gather".to_string(), 30, 47.0),
            ("all-reduce".to_string(), 30, 26.0),
            ("reduce-scatter".to_string(), 12, 22.0),
        ]
    );
    let mut args = vec!["--table", "thunks"];
    args.extend(paths.iter().map(String::as_str));
    let thunks = ok("njx-export", &args);
    let from_records = ok_with(
        "njx-collectives",
        &["--table", "wait-quantiles", "--format", "json"],
        thunks.as_bytes(),
    );
    assert_eq!(json_lines(&from_records), rows);
}
