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
            "wait",
            "stragglers",
            "stragglers"
        ]
    );
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    assert_eq!(&rows[3][col("wait_mean_ns")], "300.0");
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
        "device,instances,last,last_percent,lateness_mean_ns"
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
            .ends_with(",message_bytes,algbw_gbps,busbw_gbps")
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
