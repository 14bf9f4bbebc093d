//! njx-compile-summary: golden output on a hand-computed profile with parallel
//! compilation, and the peer's published figures on the real pax profiles.

use crate::common::*;
use serde_json::Value;
use std::collections::HashMap;

fn fixture() -> (tempfile::TempDir, String) {
    let dir = tempdir();
    let path = write(dir.path(), "trace.csv", COMPILE_CSV.as_bytes());
    (dir, path)
}

#[test]
fn per_compilation_block_in_the_guides_format() {
    let (_dir, path) = fixture();
    // See COMPILE_CSV for how the 1000 ms divide.
    let expected = "\
Compilation: TSL:XlaCompile:#module=jit_f,program_id=3#: 1.000000
 XlaCompileBackend        32.0%  0.320000
 XlaCompileGpuAsm         26.7%  0.266667
 XlaOptimizeLlvmIr        13.3%  0.133333
 XlaCompile               10.0%  0.100000
 XlaPasses                10.0%  0.100000
 XlaAutotunerCompilation   8.0%  0.080000
";
    assert_eq!(ok("njx-compile-summary", &[&path]), expected);
    // Raw records in, prepared records in, or the CSV itself: the same report.
    let raw = ok("njx-export", &[&path]);
    let out = run("njx-compile-summary", &[], raw.as_bytes());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
    let prepared = ok("njx-ranges", &["--xla-compile", &path]);
    let out = run("njx-compile-summary", &[], prepared.as_bytes());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
}

#[test]
fn passes_keep_their_names() {
    let (_dir, path) = fixture();
    let out = ok("njx-compile-summary", &["--passes", "--by", "name", &path]);
    assert!(
        out.contains(" XlaPass:#name=algsimp#       5.0%  0.050000\n"),
        "{out}"
    );
    assert!(
        out.contains(" XlaPassPipeline:#name=opt#   5.0%  0.050000\n"),
        "{out}"
    );
    assert!(!out.contains("XlaPasses"));
}

#[test]
fn total_as_json_and_csv() {
    let (_dir, path) = fixture();
    let rows = json_lines(&ok(
        "njx-compile-summary",
        &["--total", "--format", "json", &path],
    ));
    let got: Vec<(&str, i64)> = rows
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["self_ns"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("XlaCompileBackend", 320_000_000),
            ("XlaCompileGpuAsm", 266_666_667),
            ("XlaOptimizeLlvmIr", 133_333_333),
            ("XlaCompile", 100_000_000),
            ("XlaPasses", 100_000_000),
            ("XlaAutotunerCompilation", 80_000_000),
        ]
    );
    assert!((rows[5]["cumulative_percent"].as_f64().unwrap() - 100.0).abs() < 1e-9);
    let csv = ok(
        "njx-compile-summary",
        &["--total", "--format", "csv", "--top", "2", &path],
    );
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "name,self_ns,percent,cumulative_percent,compilations,wall_ns"
    );
    assert_eq!(lines.len(), 3);
    // The cumulative threshold stops at the first line reaching it.
    let out = ok(
        "njx-compile-summary",
        &["--total", "--threshold", "55", "--format", "json", &path],
    );
    assert_eq!(json_lines(&out).len(), 2);
}

#[test]
fn usage_errors_and_inputs_without_compilations() {
    let out = run("njx-compile-summary", &["--threshold", "120"], b"");
    assert_eq!(out.status.code(), Some(2));
    let dir = tempdir();
    let only_module: String = COMPILE_CSV
        .lines()
        .enumerate()
        .filter(|(i, _)| *i == 0 || *i == 12)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    let path = write(dir.path(), "m.csv", only_module.as_bytes());
    assert_eq!(
        ok("njx-compile-summary", &[&path]),
        "No XlaCompile ranges in the input.\n"
    );
}

/// Per compilation of `--format json` block rows: (Σ self_ns, Σ percent, wall_ns).
fn block_sums(rows: &[Value]) -> HashMap<u64, (i64, f64, i64)> {
    let mut blocks: HashMap<u64, (i64, f64, i64)> = HashMap::new();
    for r in rows {
        let e = blocks
            .entry(r["compilation_id"].as_u64().unwrap())
            .or_insert((0, 0.0, r["wall_ns"].as_i64().unwrap()));
        e.0 += r["self_ns"].as_i64().unwrap();
        e.1 += r["percent"].as_f64().unwrap();
    }
    blocks
}

fn reference() -> Option<(std::path::PathBuf, Value)> {
    let dir = shared_data("pax_fsdp4_4proc")?;
    let text = std::fs::read_to_string(dir.join("reference-nsys-jax.json")).unwrap();
    Some((dir, serde_json::from_str(&text).unwrap()))
}

fn by_category(args: &[&str]) -> HashMap<String, f64> {
    let mut a = vec![
        "--total", "--by", "category", "--passes", "--format", "json",
    ];
    a.extend_from_slice(args);
    json_lines(&ok("njx-compile-summary", &a))
        .into_iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["self_ns"].as_f64().unwrap() / 1e6,
            )
        })
        .collect()
}

fn assert_matches_peer(got: &HashMap<String, f64>, peer: &Value, total_ms: f64) {
    let peer = peer.as_object().unwrap();
    assert_eq!(got.len(), peer.len(), "categories: {got:?}");
    for (cat, want) in peer {
        let want = want.as_f64().unwrap();
        let have = got[cat];
        assert!(
            (have - want).abs() <= 1e-3 * want.max(1.0),
            "{cat}: {have} ms, peer {want} ms"
        );
    }
    let sum: f64 = got.values().sum();
    assert!(
        (sum - total_ms).abs() < 1e-3 * total_ms,
        "{sum} vs {total_ms}"
    );
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn proc0_matches_the_peers_compile_time_per_category() {
    let Some((dir, reference)) = reference() else {
        return;
    };
    let proc0 = dir.join("pax_fsdp4_4proc_proc0.zip");
    let got = by_category(&[proc0.to_str().unwrap()]);
    let total = reference["proc0"]["compile_total_ms"].as_f64().unwrap();
    assert!((total - 69_388.0).abs() < 1.0);
    assert_matches_peer(
        &got,
        &reference["proc0"]["compile_self_ms_by_category"],
        total,
    );
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn four_processes_match_the_peers_total() {
    let Some((dir, reference)) = reference() else {
        return;
    };
    let paths: Vec<String> = pax_archives(&dir);
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let got = by_category(&args);
    let combined = &reference["combined_4proc"];
    let total = combined["compile_total_ms"].as_f64().unwrap();
    assert!((total - 263_526.0).abs() < 1.0);
    assert_matches_peer(&got, &combined["compile_self_ms_by_category"], total);
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn proc0_prints_17_blocks_each_within_100_percent() {
    let Some((dir, _)) = reference() else {
        return;
    };
    let proc0 = dir.join("pax_fsdp4_4proc_proc0.zip");
    let out = ok("njx-compile-summary", &[proc0.to_str().unwrap()]);
    let mut blocks: Vec<(f64, f64, f64)> = Vec::new(); // (wall s, sum s, sum %)
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix("Compilation: ") {
            assert!(rest.starts_with("TSL:XlaCompile:#module="), "{line}");
            let wall: f64 = rest.rsplit(": ").next().unwrap().parse().unwrap();
            blocks.push((wall, 0.0, 0.0));
        } else {
            assert!(line.starts_with(' '), "{line}");
            let fields: Vec<&str> = line.split_whitespace().collect();
            let last = blocks.last_mut().unwrap();
            last.1 += fields[2].parse::<f64>().unwrap();
            last.2 += fields[1].trim_end_matches('%').parse::<f64>().unwrap();
        }
    }
    assert_eq!(blocks.len(), 17);
    for (wall, sum, pct) in &blocks {
        // Seconds are printed to the microsecond, percents to 0.1.
        assert!((sum - wall).abs() < 1e-5 * 20.0, "{sum} vs {wall}");
        assert!(*pct <= 100.0 + 0.05 * 20.0, "{pct}");
    }
    let total: f64 = blocks.iter().map(|b| b.0).sum();
    assert!((total - 69.388405).abs() < 1e-5);
    // Unrounded: every block adds up to its wall time, never past 100%.
    let rows = json_lines(&ok(
        "njx-compile-summary",
        &["--format", "json", proc0.to_str().unwrap()],
    ));
    let blocks = block_sums(&rows);
    assert_eq!(blocks.len(), 17);
    for (_, pct, _) in blocks.values() {
        assert!((pct - 100.0).abs() < 1e-9, "{pct}");
    }
}

#[test]
fn the_demo_profile_adds_up() {
    // examples/data/compile_trace.csv.xz, made by examples/gen_pushpop.rs: four
    // compilations with parallel worker threads; scripts/demo.sh runs on it.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/data/compile_trace.csv.xz"
    );
    let rows = json_lines(&ok("njx-compile-summary", &["--format", "json", path]));
    let blocks = block_sums(&rows);
    assert_eq!(blocks.len(), 4);
    for (sum, _, wall) in blocks.values() {
        // Each line is rounded to the nanosecond.
        assert!((sum - wall).abs() <= 12, "{sum} vs {wall}");
    }
    let total = ok("njx-compile-summary", &["--total", path]);
    assert!(
        total.starts_with("Compilation time: 1.527027 s in 4 compilations (1 profile)\n"),
        "{total}"
    );
}
