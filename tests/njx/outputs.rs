//! Outputs, through the built binaries: written under a temporary name beside the
//! destination and moved into place only on success; an output that is also an input is
//! refused before anything is read; a folder that cannot be written is refused before the
//! work; write errors name the file; every time a record writes (a field `…_ns`) is whole
//! nanoseconds, in JSON and CSV alike.

use crate::common::*;
use std::path::Path;

/// The example push/pop CSV shipped in the repo, copied to `dir`.
fn csv_in(dir: &Path) -> String {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/compile_trace.csv.xz");
    let bytes = std::fs::read(example).unwrap();
    write(dir, "trace.csv.xz", &bytes)
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let dir = tempdir();
    let input = csv_in(dir.path());
    let before = std::fs::read(&input).unwrap();
    let records = write(
        dir.path(),
        "ranges.jsonl",
        &ok("njx-export", &[&input]).into_bytes(),
    );
    let records_before = std::fs::read(&records).unwrap();
    // The same file under another name too (a hard link).
    let link = dir.path().join("link.csv.xz");
    std::fs::hard_link(&input, &link).unwrap();
    let link = link.to_str().unwrap();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("njx-export", vec![&input, "-o", &input]),
        ("njx-export", vec![&input, "-o", link]),
        ("njx-ranges", vec![&records, "-o", &records]),
        ("njx-compile-summary", vec![&records, "-o", &records]),
        ("njx-flamefold", vec![&records, "-o", &records]),
        ("njx-flamefold", vec![&records, "--svg", &records]),
        ("njx-modules", vec![&input, "-o", &input]),
        ("njx-collectives", vec![&input, "-o", &input]),
        ("njx-collectives", vec![&input, "--plot", &input]),
    ];
    for (tool, args) in cases {
        let out = run(tool, &args, b"");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{tool} {args:?}: {err}");
        // An input that is compressed data is refused by the overwrite rule first
        // (issue 44), before the two are compared: either way it is kept.
        assert!(
            err.contains("the output is also the input")
                || err.contains("would overwrite it, and it holds xz data"),
            "{tool}: {err}"
        );
    }
    assert_eq!(std::fs::read(&input).unwrap(), before);
    assert_eq!(std::fs::read(&records).unwrap(), records_before);
}

#[test]
fn a_failure_part_way_leaves_nothing_at_the_final_path() {
    let dir = tempdir();
    let input = csv_in(dir.path());
    let bad = write(dir.path(), "bad.csv", b"not a table\n");
    let old = write(dir.path(), "out.jsonl", b"the previous output\n");
    // The good input is exported, then the bad one fails.
    let out = run("njx-export", &[&input, &bad, "-o", &old], b"");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read(&old).unwrap(), b"the previous output\n");
    let new = dir.path().join("new.jsonl");
    let out = run(
        "njx-export",
        &[&input, &bad, "-o", new.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(!new.exists());
    // No temporary file is left behind either.
    assert_eq!(
        entries(dir.path()),
        ["bad.csv", "out.jsonl", "trace.csv.xz"]
    );
    // On success the output replaces the old one, with a new file's permissions.
    let out = run("njx-export", &[&input, "-o", &old], b"");
    assert!(out.status.success());
    let text = std::fs::read_to_string(&old).unwrap();
    assert_eq!(text, ok("njx-export", &[&input]));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&old).unwrap().permissions().mode() & 0o777;
        assert_ne!(mode & 0o644, 0, "{mode:o}");
        assert_eq!(mode & 0o600, 0o600, "{mode:o}");
    }
    assert_eq!(
        entries(dir.path()),
        ["bad.csv", "out.jsonl", "trace.csv.xz"]
    );
}

#[test]
fn unwritable_outputs_are_refused_naming_them() {
    let dir = tempdir();
    let input = csv_in(dir.path());
    let missing = dir.path().join("nodir/out.jsonl");
    let out = run(
        "njx-export",
        &[&input, "-o", missing.to_str().unwrap()],
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("out.jsonl: cannot write in its folder"),
        "{err}"
    );
    assert!(err.contains("nodir"), "{err}");
    // The plot's folder too, before the work.
    let plot = dir.path().join("nodir/busbw.svg");
    let out = run(
        "njx-collectives",
        &[&input, "--plot", plot.to_str().unwrap()],
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("busbw.svg: cannot write in its folder"),
        "{err}"
    );
    if Path::new("/dev/full").exists() {
        let out = run("njx-export", &[&input, "-o", "/dev/full"], b"");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("/dev/full: No space left on device"), "{err}");
    }
    // A device is written in place, not replaced.
    let out = run("njx-export", &[&input, "-o", "/dev/null"], b"");
    assert!(out.status.success());
    assert!(!Path::new("/dev/null").is_file());
}

/// Ctrl-C (SIGINT) or SIGTERM while a tool writes a file: the staged file beside the
/// destination is removed and the tool exits 128 + the signal (issue 28: the
/// `.NAME.XXXXXX.njx-partial` files were left behind).
#[cfg(unix)]
#[test]
fn a_signal_removes_the_staged_output_and_exits_with_its_number() {
    use std::process::{Command, Stdio};
    let dir = tempdir();
    for (tool, args, dest, signal, code) in [
        (
            "njx-timeline",
            vec!["-o", "trace.json"],
            "trace.json",
            "INT",
            130,
        ),
        (
            "njx-flamefold",
            vec!["--svg", "flame.svg"],
            "flame.svg",
            "TERM",
            143,
        ),
        (
            "njx-export",
            vec!["-o", "ranges.jsonl"],
            "ranges.jsonl",
            "HUP",
            129,
        ),
    ] {
        // Blocked reading stdin, which stays open: the output is staged by then.
        let child = Command::new(exe(tool))
            .args(&args)
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let staged = |d: &Path| {
            std::fs::read_dir(d)
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".njx-partial"))
                .count()
        };
        let start = std::time::Instant::now();
        while staged(dir.path()) == 0 && start.elapsed().as_secs() < 20 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(staged(dir.path()), 1, "{tool}: no staged file seen");
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{tool}: {out:?}");
        assert_eq!(staged(dir.path()), 0, "{tool}: staged file left");
        assert!(!dir.path().join(dest).exists(), "{tool}");
    }
}

/// The records' contract (docs/formats.md): times are integer nanoseconds. Every tool that
/// writes records (`--format json|csv`) is run on the example run and on an SQLite export,
/// in each of its tables and views, and every field whose name ends in `_ns` must be an
/// integer or null in the JSON (`5.0` is not one) and an integer or empty cell in the CSV:
/// a mean, standard deviation, quantile or difference is written as the nearest whole
/// nanosecond.
#[test]
fn every_ns_field_of_every_record_is_whole_nanoseconds() {
    use serde_json::Value;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/run");
    let (r0, r1) = (root.join("rank0.zip"), root.join("rank1.zip"));
    let (r0, r1) = (r0.to_str().unwrap(), r1.to_str().unwrap());
    let dir = tempdir();
    let db = dir.path().join("xla.sqlite");
    crate::kernels::xla_export(&db);
    let db = db.to_str().unwrap();
    let pgle = dir.path().join("pgle");
    let pgle = pgle.to_str().unwrap();

    let mut cases: Vec<(&str, Vec<&str>)> = Vec::new();
    for table in ["ranges", "gpu-ranges", "modules", "thunks"] {
        cases.push(("njx-export", vec!["--table", table, r0, r1]));
    }
    for table in ["ranges", "gpu-ranges", "kernels", "memops"] {
        cases.push(("njx-export", vec!["--table", table, db]));
    }
    cases.push(("njx-ranges", vec![r0, r1]));
    cases.push(("njx-ranges", vec!["--xla-compile", r0, r1]));
    for extra in [
        &[][..],
        &["--total"],
        &["--passes"],
        &["--total", "--passes"],
    ] {
        for by in ["category", "name"] {
            let mut args = extra.to_vec();
            args.extend(["--by", by, r0, r1]);
            cases.push(("njx-compile-summary", args));
        }
    }
    cases.push(("njx-modules", vec![r0, r1]));
    cases.push((
        "njx-modules",
        vec!["--include-warmup", "--include-autotuning", r0, r1],
    ));
    cases.push(("njx-modules", vec![db]));
    for view in ["top", "opcode", "variability"] {
        cases.push(("njx-thunks", vec!["--view", view, r0, r1]));
        cases.push((
            "njx-thunks",
            vec!["--view", view, "--include-warmup", r0, r1],
        ));
    }
    for by in [
        "name",
        "short-name",
        "range",
        "module",
        "thunk",
        "graph",
        "device",
    ] {
        cases.push(("njx-kernels", vec!["--by", by, db]));
    }
    cases.push(("njx-kernels", vec!["--per-device", db]));
    cases.push(("njx-kernels", vec!["--table", "memops", db]));
    cases.push(("njx-collectives", vec![r0, r1]));
    cases.push(("njx-collectives", vec!["--records", r0, r1]));
    for table in crate::collectives::TABLES {
        cases.push(("njx-collectives", vec!["--table", table, r0, r1]));
    }
    for view in ["peak", "buffers", "by-op-name", "by-source"] {
        cases.push(("njx-heap", vec!["--view", view, r0]));
    }
    cases.push(("njx-pgle", vec!["-o", pgle, r0, r1]));
    for by in ["program", "instruction", "collective", "compile-pass"] {
        cases.push(("njx-diff", vec!["--by", by, r0, "--vs", r1]));
    }
    cases.push(("njx-diff", vec!["--by", "kernel", db, "--vs", db]));
    // njx-report writes JSON only: each section is its tool's records.
    cases.push(("njx-report", vec![r0, r1]));
    cases.push(("njx-report", vec![db]));

    /// The fields `…_ns` of `v` (at any depth) that are neither an integer nor null.
    fn fractions(v: &Value, bad: &mut Vec<String>, seen: &mut usize) {
        match v {
            Value::Object(o) => {
                for (k, v) in o {
                    if k.ends_with("_ns") {
                        *seen += 1;
                        if !(v.is_null() || v.is_i64() || v.is_u64()) {
                            bad.push(format!("{k}: {v}"));
                        }
                    }
                    fractions(v, bad, seen);
                }
            }
            Value::Array(a) => a.iter().for_each(|v| fractions(v, bad, seen)),
            _ => {}
        }
    }

    let mut bad = Vec::new();
    let mut seen: std::collections::BTreeMap<&str, usize> = Default::default();
    for (tool, args) in &cases {
        let formats: &[&str] = if *tool == "njx-report" {
            &["json"]
        } else {
            &["json", "csv"]
        };
        for format in formats {
            let mut full = vec!["-q", "--format", format];
            full.extend(args);
            let text = ok(tool, &full);
            let mut wrong = Vec::new();
            let count = seen.entry(tool).or_default();
            if *format == "json" {
                for line in text.lines().filter(|l| !l.trim().is_empty()) {
                    let v: Value = serde_json::from_str(line).expect("a JSON record");
                    fractions(&v, &mut wrong, count);
                }
            } else {
                let mut r = csv::Reader::from_reader(text.as_bytes());
                let header = r.headers().expect("a CSV header").clone();
                for row in r.records() {
                    let row = row.expect("a CSV row");
                    for (k, cell) in header.iter().zip(row.iter()) {
                        if k.ends_with("_ns") {
                            *count += 1;
                            if !(cell.is_empty() || cell.parse::<i64>().is_ok()) {
                                wrong.push(format!("{k}: {cell}"));
                            }
                        }
                    }
                }
            }
            wrong.sort();
            wrong.dedup_by(|a, b| a.split(':').next() == b.split(':').next());
            if !wrong.is_empty() {
                bad.push(format!("{tool} {full:?}: {}", wrong.join(", ")));
            }
        }
    }
    // Each tool wrote times to check (njx-heap's records hold none, njx-pgle's its
    // `module_ms`).
    for tool in [
        "njx-export",
        "njx-ranges",
        "njx-compile-summary",
        "njx-modules",
        "njx-thunks",
        "njx-kernels",
        "njx-collectives",
        "njx-diff",
        "njx-report",
    ] {
        assert!(
            seen.get(tool).is_some_and(|&n| n > 0),
            "{tool} wrote no …_ns field: {seen:?}"
        );
    }
    assert!(
        bad.is_empty(),
        "fields …_ns that are not whole nanoseconds (the first of each field):\n{}",
        bad.join("\n")
    );
}
