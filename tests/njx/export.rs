//! njx-export through the built binary: every input form gives the same records, the
//! records agree with the report field by field, and every kind of bad input gives
//! exit 1 with a message naming the file and line.

use crate::common::*;
use serde_json::Value;
use std::io::Read;
use std::process::{Command, Stdio};

/// The expected records of COMPILE_CSV: the report's own fields under njx names.
fn expected_from_csv(csv_text: &str, profile: &str, with_pid: bool) -> Vec<Value> {
    let mut rdr = csv::Reader::from_reader(csv_text.as_bytes());
    rdr.records()
        .map(|r| {
            let r = r.unwrap();
            let n = |i: usize| r[i].parse::<i64>().unwrap();
            serde_json::json!({
                "profile": profile,
                "pid": if with_pid { Value::from(n(6)) } else { Value::Null },
                "tid": n(7),
                "id": n(10),
                "parent": if r[11].is_empty() { Value::Null } else { Value::from(n(11)) },
                "depth": n(8),
                "start_ns": n(0),
                "end_ns": n(1),
                "dur_ns": n(2),
                "child_ns": n(3),
                "self_ns": n(4),
                "children": n(9),
                "name": &r[5],
            })
        })
        .collect()
}

#[test]
fn csv_records_agree_with_the_report_field_by_field() {
    let dir = tempdir();
    let path = write(dir.path(), "trace.csv", COMPILE_CSV.as_bytes());
    let got = json_lines(&ok("njx-export", &[&path]));
    assert_eq!(got, expected_from_csv(COMPILE_CSV, "trace", true));
}

#[test]
fn compressed_and_stdin_inputs_give_the_same_records() {
    let dir = tempdir();
    let plain = json_lines(&ok(
        "njx-export",
        &[&write(dir.path(), "t.csv", COMPILE_CSV.as_bytes())],
    ));
    // Compression is recognised by magic bytes, not by name.
    let gz = write(dir.path(), "t.data", &gzip(COMPILE_CSV.as_bytes()));
    let xzp = write(dir.path(), "t.csv.xz", &xz(COMPILE_CSV.as_bytes()));
    for path in [&gz, &xzp] {
        let got = json_lines(&ok("njx-export", &[path]));
        assert_eq!(got.len(), plain.len());
        for (g, p) in got.iter().zip(&plain) {
            let mut g = g.clone();
            g["profile"] = p["profile"].clone();
            assert_eq!(&g, p);
        }
    }
    let out = run("njx-export", &[], &xz(COMPILE_CSV.as_bytes()));
    assert!(out.status.success());
    let got = json_lines(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(got.len(), 12);
    assert_eq!(got[0]["profile"], "stdin");
    assert_eq!(got[11]["name"], "TSL:XlaModule:#module=jit_f#");
}

#[test]
fn archives_zipped_extracted_and_combined_name_their_profiles() {
    let dir = tempdir();
    let table = xz(COMPILE_CSV.as_bytes());
    let single = zip(&[("report_nvtx_pushpop_trace.csv.xz", &table)], false);
    let a = write(dir.path(), "rank0.zip", &single);
    let got = json_lines(&ok("njx-export", &[&a]));
    assert_eq!(got, expected_from_csv(COMPILE_CSV, "rank0", true));

    // The same archive extracted into a directory.
    write(
        &dir.path().join("rank1"),
        "report_nvtx_pushpop_trace.csv.xz",
        &table,
    );
    let d = dir.path().join("rank1");
    let got = json_lines(&ok("njx-export", &[d.to_str().unwrap()]));
    assert_eq!(got, expected_from_csv(COMPILE_CSV, "rank1", true));

    // nsys-jax-combine: one member per profile under the table's path.
    let combined = zip(
        &[
            ("report_nvtx_pushpop_trace.csv.xz/rankA", &table),
            ("report_nvtx_pushpop_trace.csv.xz/rankB", &table),
            ("thread-metadata.parquet", b"shared"),
        ],
        false,
    );
    let c = write(dir.path(), "combined.zip", &combined);
    let got = json_lines(&ok("njx-export", &[&c, &a]));
    let profiles: Vec<&str> = got.iter().map(|r| r["profile"].as_str().unwrap()).collect();
    assert_eq!(got.len(), 36);
    assert!(profiles[..12].iter().all(|p| *p == "rankA"));
    assert!(profiles[12..24].iter().all(|p| *p == "rankB"));
    assert!(profiles[24..].iter().all(|p| *p == "rank0"));

    // nsys-jax-combine since JAX-Toolbox#1536: a member only some profiles had is stored
    // once, plainly, so which profile's it is cannot be told: its ranges carry the
    // archive's name.
    let partly = zip(
        &[
            ("report_nvtx_pushpop_trace.csv.xz", &table),
            ("thread-metadata.parquet/rankA", b"a"),
            ("thread-metadata.parquet/rankB", b"b"),
        ],
        false,
    );
    let p = write(dir.path(), "partly.zip", &partly);
    let got = json_lines(&ok("njx-export", &[&p]));
    assert_eq!(got, expected_from_csv(COMPILE_CSV, "partly", true));
}

#[test]
fn parquet_table_in_archives_and_on_disk() {
    let dir = tempdir();
    let pq = pushpop_parquet(COMPILE_CSV);
    let expected = |profile: &str| expected_from_csv(COMPILE_CSV, profile, false);
    // Stored (read in place) and deflated (read into memory) members.
    for (name, stored) in [("stored.zip", true), ("deflated.zip", false)] {
        let z = zip(&[("report_nvtx_pushpop_trace.parquet", &pq)], stored);
        let p = write(dir.path(), name, &z);
        let got = json_lines(&ok("njx-export", &[&p]));
        assert_eq!(got, expected(name.trim_end_matches(".zip")), "{name}");
    }
    // Parquet is preferred over the legacy CSV when an archive has both.
    let both = zip(
        &[
            ("report_nvtx_pushpop_trace.parquet", &pq),
            ("report_nvtx_pushpop_trace.csv.xz", b"not read"),
        ],
        true,
    );
    let p = write(dir.path(), "both.zip", &both);
    assert_eq!(json_lines(&ok("njx-export", &[&p])), expected("both"));
    let p = write(dir.path(), "report.parquet", &pq);
    assert_eq!(json_lines(&ok("njx-export", &[&p])), expected("report"));
}

#[test]
fn csv_output_has_a_header_and_reads_back() {
    let dir = tempdir();
    let path = write(dir.path(), "trace.csv", COMPILE_CSV.as_bytes());
    let csv_out = ok("njx-export", &["--format", "csv", &path]);
    let mut lines = csv_out.lines();
    assert_eq!(
        lines.next().unwrap(),
        "profile,pid,tid,id,parent,depth,start_ns,end_ns,dur_ns,child_ns,self_ns,children,name"
    );
    assert_eq!(lines.count(), 12);
    // The CSV records read back (through njx-ranges with no filter, which writes each
    // tree in pre-order) as the same records.
    let back = write(dir.path(), "records.csv", csv_out.as_bytes());
    let mut got = json_lines(&ok("njx-ranges", &[&back]));
    got.sort_by_key(|r| r["id"].as_u64());
    assert_eq!(got, expected_from_csv(COMPILE_CSV, "trace", true));
}

/// `--table thunks --modules-to FILE`: the thunk records on stdout and the module records in
/// FILE, from one reading, each exactly what `--table thunks` and `--table modules` write
/// (JSON and Parquet); with another table it is refused.
#[test]
fn modules_to_writes_both_tables_from_one_reading() {
    let dir = tempdir();
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/run");
    let ranks = ["rank0.zip", "rank1.zip"].map(|r| example.join(r).to_str().unwrap().to_string());
    let modules = dir.path().join("modules.jsonl");
    let m = modules.to_str().unwrap();
    let thunks = ok(
        "njx-export",
        &["--table", "thunks", "--modules-to", m, &ranks[0], &ranks[1]],
    );
    assert_eq!(
        thunks,
        ok("njx-export", &["--table", "thunks", &ranks[0], &ranks[1]])
    );
    let want = ok("njx-export", &["--table", "modules", &ranks[0], &ranks[1]]);
    assert!(!want.is_empty());
    assert_eq!(std::fs::read_to_string(&modules).unwrap(), want);
    // Parquet, both files.
    let tp = dir.path().join("t.parquet");
    let mp = dir.path().join("m.parquet");
    let mp2 = dir.path().join("m2.parquet");
    ok(
        "njx-export",
        &[
            "--table",
            "thunks",
            "--format",
            "parquet",
            "-o",
            tp.to_str().unwrap(),
            "--modules-to",
            mp.to_str().unwrap(),
            &ranks[0],
            &ranks[1],
        ],
    );
    ok(
        "njx-export",
        &[
            "--table",
            "modules",
            "--format",
            "parquet",
            "-o",
            mp2.to_str().unwrap(),
            &ranks[0],
            &ranks[1],
        ],
    );
    assert_eq!(std::fs::read(&mp).unwrap(), std::fs::read(&mp2).unwrap());
    let out = run(
        "njx-export",
        &["--table", "modules", "--modules-to", m, &ranks[0]],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--modules-to goes with --table thunks"));
}

/// Runs njx-export on a file with `contents` and checks it fails with exit 1 and a
/// message containing each of `needles`.
fn fails_with(name: &str, contents: &[u8], needles: &[&str]) {
    let dir = tempdir();
    let path = write(dir.path(), name, contents);
    let out = run("njx-export", &[&path], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{name}: {err}");
    assert!(err.contains(name), "message does not name the file: {err}");
    for n in needles {
        assert!(err.contains(n), "message lacks {n:?}: {err}");
    }
}

fn replace_line(line: usize, with: &str) -> String {
    let mut lines: Vec<&str> = COMPILE_CSV.lines().collect();
    lines[line - 1] = with;
    lines.join("\n") + "\n"
}

#[test]
fn a_header_without_a_needed_column_is_refused() {
    let csv = COMPILE_CSV.replacen("RangeId", "Rangeld", 1);
    fails_with(
        "bad_header.csv",
        csv.as_bytes(),
        &[":1", "missing column RangeId"],
    );
}

#[test]
fn a_short_row_is_refused_with_its_line() {
    let csv = replace_line(5, "110000000,160000000,50000000");
    fails_with("short.csv", csv.as_bytes(), &[":5", "3 fields"]);
}

#[test]
fn a_non_numeric_time_is_refused_with_its_line_and_column() {
    let row = COMPILE_CSV
        .lines()
        .nth(3)
        .unwrap()
        .replacen("100000000", "1e8x", 1);
    let csv = replace_line(4, &row);
    fails_with("nan.csv", csv.as_bytes(), &[":4", "Start (ns)", "1e8x"]);
}

#[test]
fn a_truncated_xz_stream_is_refused() {
    let mut big = String::from(COMPILE_CSV);
    for _ in 0..200 {
        big.push_str(COMPILE_CSV.lines().nth(1).unwrap());
        big.push('\n');
    }
    let packed = xz(big.as_bytes());
    fails_with("cut.csv.xz", &packed[..packed.len() / 2], &["truncated"]);
}

#[test]
fn an_archive_without_the_table_is_refused() {
    let z = zip(&[("thread-metadata.parquet", b"x")], false);
    fails_with("empty_archive.zip", &z, &["no NVTX push/pop table"]);
}

#[test]
fn an_empty_file_is_refused() {
    fails_with("empty.csv", b"", &["empty input"]);
}

#[test]
fn an_inconsistent_row_is_refused() {
    // Duration that is not End - Start.
    let row = COMPILE_CSV
        .lines()
        .nth(1)
        .unwrap()
        .replacen(",50000000,0,", ",40000000,0,", 1);
    fails_with(
        "dur.csv",
        replace_line(2, &row).as_bytes(),
        &[":2", "Duration"],
    );
}

#[test]
fn a_missing_file_and_bad_usage_have_their_exit_codes() {
    let out = run("njx-export", &["does-not-exist.csv"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does-not-exist.csv"));
    let out = run("njx-export", &["--table", "nonsense"], b"");
    assert_eq!(out.status.code(), Some(2));
    let out = run("njx-export", &["--format", "table"], COMPILE_CSV.as_bytes());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_closed_stdout_ends_quietly_with_success() {
    let dir = tempdir();
    let mut big = String::from(COMPILE_CSV);
    // Ranges of their own after the example's, each its own root.
    for i in 0..50_000u64 {
        let (start, id) = (2_000_000_000 + i * 10, 100 + i);
        big.push_str(&format!(
            "{start},{},5,0,5,r,7,1,0,0,{id},,:{id},r\n",
            start + 5
        ));
    }
    let path = write(dir.path(), "big.csv", big.as_bytes());
    let mut child = Command::new(exe("njx-export"))
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 100];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .as_mut()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "stderr: {err}");
    assert_eq!(err, "");
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn real_archive_matches_its_csv_field_by_field() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let archive = dir.join("pax_fsdp4_4proc_proc0.zip");
    let got = json_lines(&ok("njx-export", &[archive.to_str().unwrap()]));
    assert_eq!(got.len(), 27_891);
    // Read the CSV inside independently.
    let file = std::fs::File::open(&archive).unwrap();
    let mut zip = zip::ZipArchive::new(file).unwrap();
    let mut member = zip.by_name("report_nvtx_pushpop_trace.csv.xz").unwrap();
    let mut packed = Vec::new();
    member.read_to_end(&mut packed).unwrap();
    let mut text = String::new();
    xz2::read::XzDecoder::new_multi_decoder(&packed[..])
        .read_to_string(&mut text)
        .unwrap();
    let expected = expected_from_csv(&text, "pax_fsdp4_4proc_proc0", true);
    assert_eq!(got.len(), expected.len());
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "record {i}");
    }
}

#[test]
fn a_zip_that_repeats_a_member_name_is_refused() {
    // Two members, then the second renamed to the first (same length: still a valid zip).
    let table = xz(COMPILE_CSV.as_bytes());
    let mut bytes = zip(
        &[
            ("report_nvtx_pushpop_trace.csv.xz", &table),
            ("report_nvtx_pushpop_trace.csv.xy", &table),
        ],
        true,
    );
    let (from, to) = (
        b"report_nvtx_pushpop_trace.csv.xy",
        b"report_nvtx_pushpop_trace.csv.xz",
    );
    let mut at = 0;
    while let Some(i) = bytes[at..].windows(from.len()).position(|w| w == from) {
        bytes[at + i..at + i + from.len()].copy_from_slice(to);
        at += i + from.len();
    }
    let dir = tempdir();
    let path = write(dir.path(), "dup.zip", &bytes);
    let out = run("njx-export", &[&path], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("dup.zip: 1 of its 2 members repeat a name"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}
