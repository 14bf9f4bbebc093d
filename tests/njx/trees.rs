//! Inconsistent push/pop range trees, through the built binaries: each is refused with
//! exit 1 by every tool that reads ranges, the message naming the file, the line and the
//! range ids involved (`source/ranges/check.rs`).

use crate::common::*;

const COLS: [&str; 14] = [
    "Start (ns)",
    "End (ns)",
    "Duration (ns)",
    "DurChild (ns)",
    "DurNonChild (ns)",
    "Name",
    "PID",
    "TID",
    "Lvl",
    "NumChild",
    "RangeId",
    "ParentId",
    "RangeStack",
    "NameTree",
];

/// The rows of [`COMPILE_CSV`] as cells (its names hold commas inside quotes), without
/// their `RangeStack` paths, which would otherwise be the first thing an edit of ids
/// contradicts (that check has a case of its own).
fn rows() -> Vec<Vec<String>> {
    let mut csv = csv::ReaderBuilder::new().from_reader(COMPILE_CSV.as_bytes());
    csv.records()
        .map(|r| {
            let mut row: Vec<String> = r.unwrap().iter().map(str::to_string).collect();
            row[12].clear();
            row
        })
        .collect()
}

fn col(name: &str) -> usize {
    COLS.iter().position(|c| *c == name).unwrap()
}

/// [`COMPILE_CSV`] with the cells of range `id` set as given; `Duration` and
/// `DurNonChild` follow `Start`, `End` and `DurChild` unless set themselves.
fn edited(rows: &[Vec<String>], id: &str, set: &[(&str, &str)]) -> Vec<Vec<String>> {
    let mut rows = rows.to_vec();
    let row = rows
        .iter_mut()
        .find(|r| r[col("RangeId")] == id)
        .expect("range in the fixture");
    for (name, value) in set {
        row[col(name)] = value.to_string();
    }
    let int = |r: &Vec<String>, c: &str| r[col(c)].parse::<i128>().unwrap();
    if !set.iter().any(|(n, _)| *n == "Duration (ns)") {
        row[col("Duration (ns)")] = (int(row, "End (ns)") - int(row, "Start (ns)")).to_string();
    }
    if !set.iter().any(|(n, _)| *n == "DurNonChild (ns)") {
        row[col("DurNonChild (ns)")] =
            (int(row, "Duration (ns)") - int(row, "DurChild (ns)")).to_string();
    }
    rows
}

fn to_csv(header: &[&str], rows: &[Vec<String>]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header).unwrap();
    for r in rows {
        w.write_record(r).unwrap();
    }
    w.into_inner().unwrap()
}

#[test]
fn inconsistent_trees_are_refused_naming_file_line_and_ids() {
    let base = rows();
    let swapped = {
        // Range 4 (a child of 3) listed before 3.
        let mut r = base.clone();
        r.swap(2, 3);
        r
    };
    // Range 2's id given to its grandchild 4 as well, both open at once.
    let duplicated = edited(&base, "4", &[("RangeId", "2")]);
    // (case, rows, `:line` of the message, words it must hold)
    type Case<'a> = (&'a str, Vec<Vec<String>>, &'a str, &'a [&'a str]);
    let cases: Vec<Case> = vec![
        (
            "own parent",
            edited(&base, "4", &[("ParentId", "4")]),
            ":5",
            &["range 4 is its own parent"],
        ),
        (
            "dangling parent",
            edited(&base, "4", &[("ParentId", "99")]),
            ":5",
            &["range 4", "parent 99"],
        ),
        (
            "parent on another thread",
            edited(&base, "4", &[("TID", "2")]),
            ":5",
            &["range 4", "parent 3"],
        ),
        ("child before parent", swapped, ":4", &["range 4"]),
        ("one id twice", duplicated, ":5", &["range id 2"]),
        (
            "child outside its parent",
            edited(&base, "4", &[("End (ns)", "250000000")]),
            ":5",
            &["range 4", "outside its parent 3"],
        ),
        (
            "range stack not ending at the range",
            edited(&base, "4", &[("RangeStack", ":2:3:9")]),
            ":5",
            &["RangeStack `:2:3:9` does not end with `:3:4`"],
        ),
        (
            "wrong level",
            edited(&base, "4", &[("Lvl", "5")]),
            ":5",
            &["range 4", "level 5", "nested 2 deep"],
        ),
        (
            "wrong child count",
            edited(&base, "3", &[("NumChild", "2")]),
            ":4",
            &["range 3", "NumChild 2", "1 children"],
        ),
        (
            "wrong child time",
            edited(&base, "3", &[("DurChild (ns)", "40000000")]),
            ":4",
            &["range 3", "DurChild 40000000", "50000000"],
        ),
        (
            "times beyond ±2^61 ns",
            edited(
                &base,
                "1",
                &[
                    ("Start (ns)", "-9000000000000000000"),
                    ("End (ns)", "9000000000000000000"),
                    ("Duration (ns)", "0"),
                    ("DurNonChild (ns)", "0"),
                ],
            ),
            ":2",
            &["beyond ±2^61 ns"],
        ),
    ];
    let dir = tempdir();
    let mut failures = Vec::new();
    for (name, rows, line, words) in &cases {
        let file = format!("{}.csv", name.replace(' ', "_"));
        let path = write(dir.path(), &file, &to_csv(&COLS, rows));
        for tool in [
            "njx-export",
            "njx-ranges",
            "njx-compile-summary",
            "njx-flamefold",
        ] {
            let out = run(tool, &[&path], b"");
            let err = String::from_utf8_lossy(&out.stderr);
            let place = format!("{file}{line}: ");
            if out.status.code() != Some(1)
                || !err.contains(&place)
                || !words.iter().all(|w| err.contains(w))
            {
                failures.push(format!(
                    "{name}: {tool} exit {:?}, wanted `{place}` and {words:?}: {err}",
                    out.status.code()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_duplicated_column_is_refused() {
    let dir = tempdir();
    let mut header = COLS.to_vec();
    header.push("Start (ns)");
    let rows: Vec<Vec<String>> = rows()
        .into_iter()
        .map(|mut r| {
            r.push(r[0].clone());
            r
        })
        .collect();
    let path = write(dir.path(), "twice.csv", &to_csv(&header, &rows));
    let out = run("njx-export", &[&path], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("twice.csv:1: column `Start (ns)` appears twice"),
        "{err}"
    );
}

#[test]
fn tree_errors_in_records_name_the_file_and_line() {
    let dir = tempdir();
    let csv = write(dir.path(), "trace.csv", COMPILE_CSV.as_bytes());
    let records = ok("njx-export", &[&csv]);
    // The fifth record repeated: its id is open twice.
    let mut lines: Vec<&str> = records.lines().collect();
    lines.insert(5, lines[4]);
    let path = write(dir.path(), "ranges.jsonl", lines.join("\n").as_bytes());
    let out = run("njx-ranges", &[&path], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("ranges.jsonl:6: "), "{err}");
    assert!(err.contains("range 5"), "{err}");
}

#[test]
fn interleaved_profiles_and_trees_open_at_the_end_are_said_as_such() {
    let dir = tempdir();
    let a = write(dir.path(), "a.csv", COMPILE_CSV.as_bytes());
    let b = write(dir.path(), "b.csv", COMPILE_CSV.as_bytes());
    let records = ok("njx-export", &[&a, &b]);
    let lines: Vec<&str> = records.lines().collect();
    let (first, second) = lines.split_at(lines.len() / 2);
    assert!(first.iter().all(|l| l.contains("\"profile\":\"a\"")));
    // One record of each profile in turn, as a sort by time would leave them.
    let mixed: Vec<&str> = first
        .iter()
        .zip(second)
        .flat_map(|(x, y)| [*x, *y])
        .collect();
    let mixed = write(dir.path(), "mixed.jsonl", mixed.join("\n").as_bytes());
    // Profile a's records resuming after b's, whole trees between.
    let resumed = [&first[..1], second, &first[1..]].concat();
    let resumed = write(dir.path(), "resumed.jsonl", resumed.join("\n").as_bytes());
    for tool in ["njx-ranges", "njx-compile-summary"] {
        for path in [&mixed, &resumed] {
            let out = run(tool, &[path], b"");
            let err = stderr_of(&out);
            assert_eq!(out.status.code(), Some(1), "{tool}: {err}");
            assert!(
                err.contains("each profile's records must come together"),
                "{tool}: {err}"
            );
        }
    }
    // Two runs' ranks, named alike in different folders, give profiles rank0, rank1,
    // rank0, rank1 input by input: not interleaved records, so read as before.
    let ranks: Vec<String> = ["run1", "run2"]
        .iter()
        .flat_map(|run| {
            ["rank0", "rank1"].map(|rank| {
                std::fs::create_dir_all(dir.path().join(run)).unwrap();
                write(
                    dir.path(),
                    &format!("{run}/{rank}.csv"),
                    COMPILE_CSV.as_bytes(),
                )
            })
        })
        .collect();
    let ranks: Vec<&str> = ranks.iter().map(String::as_str).collect();
    for tool in ["njx-ranges", "njx-compile-summary"] {
        let out = run(tool, &ranks, b"");
        assert!(out.status.success(), "{tool}: {}", stderr_of(&out));
    }
    // A tree left open by the end of the input: the error names the input, at its end.
    let cut = write(dir.path(), "cut.jsonl", first[..3].join("\n").as_bytes());
    let input = first[..3].join("\n");
    for tool in ["njx-ranges", "njx-compile-summary", "njx-flamefold"] {
        let out = run(tool, &[&cut], b"");
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{tool}: {err}");
        assert!(err.contains("cut.jsonl (at its end): "), "{tool}: {err}");
        let out = run(tool, &[], input.as_bytes());
        assert!(stderr_of(&out).contains("- (at its end): "), "{tool}");
    }
}

#[test]
fn an_id_given_again_after_its_range_ended_is_kept_and_counted() {
    let dir = tempdir();
    // The last range (12, a root at 1.2 s) takes the id of the first (1, ended at 50 ms).
    let rows = edited(&rows(), "12", &[("RangeId", "1")]);
    let path = write(dir.path(), "again.csv", &to_csv(&COLS, &rows));
    for tool in ["njx-export", "njx-ranges"] {
        let out = run(tool, &[&path], b"");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{tool}: {err}");
        assert!(
            err.contains(
                "again.csv:13: 1 range has an id given to a range before it (the first: id 1)"
            ),
            "{tool}: {err}"
        );
        assert_eq!(json_lines(&String::from_utf8_lossy(&out.stdout)).len(), 12);
    }
}
