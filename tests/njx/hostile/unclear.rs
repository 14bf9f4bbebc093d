//! Unclear errors: a write error must name the output (`-o /dev/full`, `--svg`,
//! `--plot`); a tree error must name the file and the line (or the archive's member and
//! line, or the Parquet row); every other refusal names its file.

use super::fixtures::*;
use super::formats::{ZipEntry, zip_raw};
use super::harness::{Case, Expect, Run};
use crate::args;
use crate::common::{gzip, pushpop_parquet, write, xz};
use std::path::Path;

/// The records tools read back: range records (JSON Lines).
fn ranges_jsonl(d: &Path) -> String {
    write(d, "r.jsonl", jsonl(&tree().records("t")).as_bytes())
}

/// The tree with its child row 2 (id 3, line 4) listed before its parent (line 3).
fn child_first() -> Table {
    let mut t = tree();
    t.rows.swap(1, 2);
    t
}

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    let refused = Expect::Refused;
    // Write errors name the output.
    type Args = fn(&Path) -> Vec<String>;
    let full: &[(&str, &'static str, Args)] = &[
        ("-o /dev/full", "njx-export", |d| {
            args![
                write(d, "t.csv", tree().csv().as_bytes()),
                "-o",
                "/dev/full"
            ]
        }),
        ("--format csv -o /dev/full", "njx-export", |d| {
            args![
                "--format",
                "csv",
                write(d, "t.csv", tree().csv().as_bytes()),
                "-o",
                "/dev/full"
            ]
        }),
        ("-o /dev/full", "njx-ranges", |d| {
            args![ranges_jsonl(d), "-o", "/dev/full"]
        }),
        ("-o /dev/full", "njx-compile-summary", |d| {
            args![ranges_jsonl(d), "-o", "/dev/full"]
        }),
        ("--format json -o /dev/full", "njx-compile-summary", |d| {
            args![
                "--total",
                "--format",
                "json",
                ranges_jsonl(d),
                "-o",
                "/dev/full"
            ]
        }),
        ("-o /dev/full", "njx-flamefold", |d| {
            args![ranges_jsonl(d), "-o", "/dev/full"]
        }),
        ("--svg /dev/full", "njx-flamefold", |d| {
            args![ranges_jsonl(d), "--svg", "/dev/full"]
        }),
        ("--diff -o /dev/full", "njx-flamefold", |d| {
            let a = write(d, "a.folded", FOLDED_A.as_bytes());
            let b = write(d, "b.folded", FOLDED_B.as_bytes());
            args!["--diff", a, b, "-o", "/dev/full"]
        }),
        ("-o /dev/full", "njx-modules", |d| {
            args![
                write(d, "m.jsonl", jsonl(&module_records()).as_bytes()),
                "-o",
                "/dev/full"
            ]
        }),
        ("--partial -o /dev/full", "njx-modules", |d| {
            args![
                "--partial",
                write(d, "m.jsonl", jsonl(&module_records()).as_bytes()),
                "-o",
                "/dev/full"
            ]
        }),
        ("-o /dev/full", "njx-collectives", |d| {
            args![
                write(d, "th.jsonl", jsonl(&thunk_records()).as_bytes()),
                "-o",
                "/dev/full"
            ]
        }),
        ("--plot /dev/full", "njx-collectives", |d| {
            args![
                write(d, "th.jsonl", jsonl(&thunk_records()).as_bytes()),
                "--plot",
                "/dev/full"
            ]
        }),
    ];
    for &(label, tool, make) in full {
        v.push(Case::new(label, tool, refused, move |d: &Path| {
            Run::new(make(d)).name("/dev/full")
        }));
    }

    // Tree errors name the file and the line.
    type Tree = fn(&Path) -> (Vec<String>, Vec<String>);
    let trees: &[(&str, &[&'static str], Tree)] = &[
        (
            "a child before its parent, csv",
            &["njx-ranges", "njx-compile-summary", "njx-flamefold"],
            |d| {
                (
                    args![write(d, "t.csv", child_first().csv().as_bytes())],
                    args!["t.csv:3"],
                )
            },
        ),
        (
            "a child before its parent, gzip csv",
            &["njx-ranges"],
            |d| {
                (
                    args![write(d, "t.csv.gz", &gzip(child_first().csv().as_bytes()))],
                    args!["t.csv.gz:3"],
                )
            },
        ),
        (
            "a child before its parent, records",
            &["njx-ranges", "njx-flamefold"],
            |d| {
                (
                    args![write(
                        d,
                        "r.jsonl",
                        jsonl(&child_first().records("t")).as_bytes()
                    )],
                    args!["r.jsonl:2"],
                )
            },
        ),
        (
            "a child before its parent, record csv",
            &["njx-compile-summary"],
            |d| {
                (
                    args![write(
                        d,
                        "r.csv",
                        records_csv(&child_first().records("t")).as_bytes()
                    )],
                    args!["r.csv:3"],
                )
            },
        ),
        (
            "a child before its parent, archive member",
            &["njx-ranges"],
            |d| {
                let e = archive_entries(&[(PUSHPOP, xz(child_first().csv().as_bytes()))]);
                (
                    args![write(d, "rank0.zip", &zip_raw(&e, None))],
                    args![format!("rank0.zip!{PUSHPOP}:3")],
                )
            },
        ),
        ("a child before its parent, parquet", &["njx-ranges"], |d| {
            (
                args![write(
                    d,
                    "t.parquet",
                    &pushpop_parquet(&child_first().csv())
                )],
                args!["t.parquet", "row 2"],
            )
        }),
        (
            "the same records in two files",
            &["njx-ranges", "njx-compile-summary"],
            |d| {
                let a = ranges_jsonl(d);
                let b = write(d, "again.jsonl", jsonl(&tree().records("t")).as_bytes());
                (args![a, b], args!["again.jsonl:"])
            },
        ),
        ("a repeated RangeId", &["njx-ranges"], |d| {
            let mut t = tree();
            t.set(5, "RangeId", 1);
            (
                args![write(d, "t.csv", t.csv().as_bytes())],
                args!["t.csv:7"],
            )
        }),
    ];
    for &(label, tools, make) in trees {
        for &tool in tools {
            v.push(Case::new(
                format!("tree error: {label}"),
                tool,
                refused,
                move |d: &Path| {
                    let (a, names) = make(d);
                    let mut run = Run::new(a);
                    for n in names {
                        run = run.name(n);
                    }
                    run
                },
            ));
        }
    }
    v.push(Case::new(
        "tree error on stdin",
        "njx-ranges",
        refused,
        |_: &Path| {
            Run::new(Vec::new())
                .stdin(jsonl(&child_first().records("t")).into_bytes())
                .name("-:2")
        },
    ));

    // Other refusals name their file (and line).
    type Other = fn(&Path) -> (Vec<String>, Vec<String>);
    let others: &[(&str, &'static str, Expect, Other)] = &[
        ("a bad cell", "njx-export", refused, |d| {
            let mut t = tree();
            t.set(4, "TID", "x1");
            (
                args![write(d, "t.csv", t.csv().as_bytes())],
                args!["t.csv:6", "TID"],
            )
        }),
        ("a row with too few fields", "njx-export", refused, |d| {
            let mut text = tree().csv();
            text.push_str("1,2,3\n");
            (args![write(d, "t.csv", text.as_bytes())], args!["t.csv:8"])
        }),
        ("a malformed JSON line", "njx-ranges", refused, |d| {
            let mut text = jsonl(&tree().records("t")[..2]);
            text.push_str("{\"profile\": \n");
            (
                args![write(d, "r.jsonl", text.as_bytes())],
                args!["r.jsonl:3"],
            )
        }),
        (
            "a malformed thunk record",
            "njx-collectives",
            refused,
            |d| {
                let mut text = jsonl(&thunk_records()[..4]);
                text.push_str("{\"profile\": 5}\n");
                (
                    args![write(d, "th.jsonl", text.as_bytes())],
                    args!["th.jsonl:5"],
                )
            },
        ),
        ("a malformed module record", "njx-modules", refused, |d| {
            let mut text = jsonl(&module_records()[..1]);
            text.push_str("[]\n");
            (
                args![write(d, "m.jsonl", text.as_bytes())],
                args!["m.jsonl:2"],
            )
        }),
        ("a bad folded line", "njx-flamefold", refused, |d| {
            let a = write(d, "a.folded", FOLDED_A.as_bytes());
            let b = write(d, "b.folded", b"a;b 10\nno count here\n");
            (args!["--diff", a, b], args!["b.folded:2"])
        }),
        (
            "a partial result of another version",
            "njx-modules",
            refused,
            |d| {
                let p = write(
                    d,
                    "p.jsonl",
                    b"{\"njx_partial\":\"modules\",\"version\":99,\"data\":{}}\n",
                );
                (args![p], args!["p.jsonl:1"])
            },
        ),
        ("a missing input", "njx-export", refused, |d| {
            (
                args![d.join("missing.csv").to_str().unwrap()],
                args!["missing.csv"],
            )
        }),
        ("an empty input", "njx-ranges", refused, |d| {
            (args![write(d, "empty.jsonl", b"")], args!["empty.jsonl"])
        }),
        ("a folder that is no archive", "njx-export", refused, |d| {
            write(d, "notes/readme.txt", b"hello");
            (args![d.join("notes").to_str().unwrap()], args!["notes"])
        }),
        (
            "a zip that is no nsys-jax archive",
            "njx-export",
            refused,
            |d| {
                let z = zip_raw(&[ZipEntry::deflated("readme.txt", b"hello")], None);
                (args![write(d, "other.zip", &z)], args!["other.zip"])
            },
        ),
        ("garbage in an --hlo dump", "njx-flamefold", refused, |d| {
            let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
            let t = write(d, "t.jsonl", jsonl(&thunk_records()).as_bytes());
            write(&d.join("xla_dump"), DUMP_FILE, b"\xff\xff\xff\xff garbage");
            let h = d.join("xla_dump").to_str().unwrap().to_string();
            (args!["--by", "source", m, t, "--hlo", h], args![DUMP_FILE])
        }),
        ("gzip with trailing garbage", "njx-export", refused, |d| {
            let mut g = gzip(tree().csv().as_bytes());
            g.extend_from_slice(b"trailing garbage");
            (args![write(d, "t.csv.gz", &g)], args!["t.csv.gz"])
        }),
        (
            "an SQLite file that is no nsys export",
            "njx-export",
            Expect::RefusedOrNoted,
            |d| {
                let p = d.join("other.sqlite");
                let c = rusqlite::Connection::open(&p).unwrap();
                c.execute_batch("CREATE TABLE foo (x INTEGER); INSERT INTO foo VALUES (1);")
                    .unwrap();
                drop(c);
                (args![p.to_str().unwrap()], args!["other.sqlite"])
            },
        ),
        (
            "a report without nsys on PATH",
            "njx-export",
            refused,
            |d| {
                (
                    args![write(d, "r.nsys-rep", b"not really a report")],
                    args!["nsys"],
                )
            },
        ),
        ("binary garbage", "njx-export", refused, |d| {
            let bytes: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect();
            (args![write(d, "junk.bin", &bytes)], args!["junk.bin"])
        }),
    ];
    for &(label, tool, expect, make) in others {
        v.push(Case::new(label, tool, expect, move |d: &Path| {
            let (a, names) = make(d);
            let mut run = Run::new(a);
            if label.contains("nsys on PATH") {
                run = run.env("PATH", "/nonexistent");
            }
            for n in names {
                run = run.name(n);
            }
            run
        }));
    }
    v
}
