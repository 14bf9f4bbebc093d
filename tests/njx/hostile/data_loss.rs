//! Data loss: an output (`-o`, `--svg`, `--plot`) that is also an input — by the same
//! path, another spelling of it, a hard link, a symbolic link, a member of an input
//! folder, an `--hlo` dump, a `--diff` file — must be refused before anything is read;
//! a failure part-way must leave nothing at the final output path and what was there
//! untouched; njx-capture must never lose its archive. (The harness checks every input's
//! bytes, and that nothing changed in the case's folder except a successful output.)

use super::fixtures::*;
use super::harness::{Case, Expect, Run, at};
use crate::args;
use crate::common::{script, write, xz};
use std::os::unix::fs::symlink;
use std::path::Path;

/// The input each tool reads, written to `dir`: its path.
fn input_of(tool: &str, d: &Path) -> String {
    match tool {
        "njx-export" => write(d, "t.csv", tree().csv().as_bytes()),
        "njx-modules" => write(d, "m.jsonl", jsonl(&module_records()).as_bytes()),
        "njx-collectives" | "njx-report" => {
            write(d, "th.jsonl", jsonl(&thunk_records()).as_bytes())
        }
        _ => write(d, "r.jsonl", jsonl(&tree().records("t")).as_bytes()),
    }
}

const TOOLS: &[&str] = &[
    "njx-export",
    "njx-ranges",
    "njx-compile-summary",
    "njx-flamefold",
    "njx-modules",
    "njx-collectives",
    "njx-report",
];

/// How the output names the input.
#[derive(Clone, Copy, Debug)]
enum Alias {
    Same,
    Relative,
    DotDot,
    HardLink,
    SymLink,
}

fn alias(d: &Path, input: &str, how: Alias) -> String {
    let name = Path::new(input).file_name().unwrap().to_str().unwrap();
    match how {
        Alias::Same => input.to_string(),
        Alias::Relative => format!("./{name}"),
        Alias::DotDot => {
            std::fs::create_dir(d.join("sub")).unwrap();
            at(d, &format!("sub/../{name}"))
        }
        Alias::HardLink => {
            let l = d.join(format!("hard-{name}"));
            std::fs::hard_link(input, &l).unwrap();
            l.to_str().unwrap().to_string()
        }
        Alias::SymLink => {
            let l = d.join(format!("link-{name}"));
            symlink(input, &l).unwrap();
            l.to_str().unwrap().to_string()
        }
    }
}

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    let usage = Expect::Usage;
    // -o naming the input, every tool, every spelling.
    for &tool in TOOLS {
        for how in [
            Alias::Same,
            Alias::Relative,
            Alias::DotDot,
            Alias::HardLink,
            Alias::SymLink,
        ] {
            v.push(Case::new(
                format!("-o is the input ({how:?})"),
                tool,
                usage,
                move |d: &Path| {
                    let input = input_of(tool, d);
                    let out = alias(d, &input, how);
                    let name = Path::new(&input)
                        .file_name()
                        .unwrap()
                        .to_str()
                        .unwrap()
                        .to_string();
                    Run::new(args![input, "-o", out]).output(out).name(name)
                },
            ));
        }
    }
    for how in [Alias::Same, Alias::HardLink, Alias::SymLink] {
        v.push(Case::new(
            format!("--svg is the input ({how:?})"),
            "njx-flamefold",
            usage,
            move |d: &Path| {
                let input = input_of("njx-flamefold", d);
                let out = alias(d, &input, how);
                Run::new(args![input, "--svg", out])
                    .output(out)
                    .name("r.jsonl")
            },
        ));
        v.push(Case::new(
            format!("--plot is the input ({how:?})"),
            "njx-collectives",
            usage,
            move |d: &Path| {
                let input = input_of("njx-collectives", d);
                let out = alias(d, &input, how);
                Run::new(args![input, "--plot", out])
                    .output(out)
                    .name("th.jsonl")
            },
        ));
    }
    type Setup = fn(&Path) -> (Vec<String>, String, String);
    let others: &[(&str, &'static str, Setup)] = &[
        ("-o is the zip archive", "njx-export", |d| {
            let a = write_archive(d);
            (args![a, "-o", a], a.clone(), "rank0.zip".into())
        }),
        (
            "--format parquet -o is the zip archive",
            "njx-export",
            |d| {
                let a = write_archive(d);
                (
                    args!["--table", "thunks", "--format", "parquet", a, "-o", a],
                    a.clone(),
                    "rank0.zip".into(),
                )
            },
        ),
        ("-o is the SQLite export", "njx-export", |d| {
            let e = write_sqlite(d, "e.sqlite");
            (args![e, "-o", e], e.clone(), "e.sqlite".into())
        }),
        ("-o is a member of the input folder", "njx-export", |d| {
            let root = write_extracted(d, "rank0");
            let m = format!("{root}/{PUSHPOP}");
            (args![root, "-o", m], m.clone(), PUSHPOP.into())
        }),
        ("-o is the --hlo dump", "njx-export", |d| {
            let e = write_sqlite(d, "e.sqlite");
            let h = write_dump_dir(d, "xla_dump");
            let dump = format!("{h}/{DUMP_FILE}");
            (
                args!["--table", "thunks", e, "--hlo", h, "-o", dump],
                dump.clone(),
                DUMP_FILE.into(),
            )
        }),
        ("-o is the --hlo archive", "njx-flamefold", |d| {
            let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
            let t = write(d, "t.jsonl", jsonl(&thunk_records()).as_bytes());
            let a = write_archive(d);
            (
                args!["--by", "source", m, t, "--hlo", a, "-o", a],
                a.clone(),
                "rank0.zip".into(),
            )
        }),
        ("--svg is the --hlo dump", "njx-flamefold", |d| {
            let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
            let t = write(d, "t.jsonl", jsonl(&thunk_records()).as_bytes());
            let h = write_dump_dir(d, "xla_dump");
            let dump = format!("{h}/{DUMP_FILE}");
            (
                args!["--by", "source", m, t, "--hlo", h, "--svg", dump],
                dump.clone(),
                DUMP_FILE.into(),
            )
        }),
        ("-o is --diff BEFORE", "njx-flamefold", |d| {
            let a = write(d, "a.folded", FOLDED_A.as_bytes());
            let b = write(d, "b.folded", FOLDED_B.as_bytes());
            (args!["--diff", a, b, "-o", a], a.clone(), "a.folded".into())
        }),
        ("--svg is --diff AFTER", "njx-flamefold", |d| {
            let a = write(d, "a.folded", FOLDED_A.as_bytes());
            let b = write(d, "b.folded", FOLDED_B.as_bytes());
            (
                args!["--diff", a, b, "--svg", b],
                b.clone(),
                "b.folded".into(),
            )
        }),
        ("--partial -o is the input", "njx-modules", |d| {
            let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
            (args!["--partial", m, "-o", m], m.clone(), "m.jsonl".into())
        }),
        ("-o is the second input", "njx-ranges", |d| {
            let a = write(d, "a.jsonl", jsonl(&tree().records("a")).as_bytes());
            let b = write(d, "b.jsonl", jsonl(&tree().records("b")).as_bytes());
            (args![a, b, "-o", b], b.clone(), "b.jsonl".into())
        }),
        (
            "-o is the input, also given twice",
            "njx-compile-summary",
            |d| {
                let a = write(d, "a.jsonl", jsonl(&tree().records("a")).as_bytes());
                (args![a, a, "-o", a], a.clone(), "a.jsonl".into())
            },
        ),
    ];
    for &(label, tool, setup) in others {
        v.push(Case::new(label, tool, usage, move |d: &Path| {
            let (a, out, name) = setup(d);
            Run::new(a).output(out).name(name)
        }));
    }

    // A failure part-way: a good input, then a bad one; records as Parquet too (a file
    // written a row group at a time).
    for &tool in TOOLS {
        for (existing, parquet) in [(false, false), (true, false), (false, true), (true, true)] {
            if parquet && matches!(tool, "njx-flamefold" | "njx-report") {
                continue; // no records
            }
            v.push(Case::new(
                format!(
                    "good then bad input, -o {}{}",
                    if existing { "existing" } else { "new" },
                    if parquet { ", --format parquet" } else { "" }
                ),
                tool,
                Expect::Refused,
                move |d: &Path| {
                    let good = input_of(tool, d);
                    let bad = if tool == "njx-export" {
                        let mut t = tree();
                        t.set(4, "TID", "x1");
                        write(d, "bad.csv", t.csv().as_bytes())
                    } else {
                        // Records of another profile (so no id repeats), then a broken line.
                        let mut text = match tool {
                            "njx-modules" | "njx-collectives" => String::new(),
                            _ => jsonl(&tree().records("u")),
                        };
                        text.push_str("{\"profile\": oops\n");
                        write(d, "bad.jsonl", text.as_bytes())
                    };
                    let out = d.join("out.txt");
                    if existing {
                        std::fs::write(&out, "the previous output\n").unwrap();
                    }
                    let badname = Path::new(&bad)
                        .file_name()
                        .unwrap()
                        .to_str()
                        .unwrap()
                        .to_string();
                    let mut a = args![good, bad, "-o", out.to_str().unwrap()];
                    if parquet {
                        a.extend(args!["--format", "parquet"]);
                    }
                    Run::new(a).output(out).name(badname)
                },
            ));
        }
    }
    for existing in [false, true] {
        let tag = if existing { "existing" } else { "new" };
        v.push(Case::new(
            format!("bad input, --svg {tag}"),
            "njx-flamefold",
            Expect::Refused,
            move |d: &Path| {
                let good = input_of("njx-flamefold", d);
                let bad = write(d, "bad.jsonl", b"{\"profile\": oops\n");
                let out = d.join("f.svg");
                if existing {
                    std::fs::write(&out, "<svg/>").unwrap();
                }
                Run::new(args![good, bad, "--svg", out.to_str().unwrap()])
                    .output(out)
                    .name("bad.jsonl")
            },
        ));
        v.push(Case::new(
            format!("bad input, --plot {tag}"),
            "njx-collectives",
            Expect::Refused,
            move |d: &Path| {
                let good = input_of("njx-collectives", d);
                let bad = write(d, "bad.jsonl", b"{\"profile\": oops\n");
                let out = d.join("p.svg");
                if existing {
                    std::fs::write(&out, "<svg/>").unwrap();
                }
                Run::new(args![good, bad, "--plot", out.to_str().unwrap()])
                    .output(out)
                    .name("bad.jsonl")
            },
        ));
        v.push(Case::new(
            format!("bad --diff AFTER, -o and --svg {tag}"),
            "njx-flamefold",
            Expect::Refused,
            move |d: &Path| {
                let a = write(d, "a.folded", FOLDED_A.as_bytes());
                let b = write(d, "b.folded", b"a;b 10\nnot a folded line\n");
                let out = d.join("diff.svg");
                if existing {
                    std::fs::write(&out, "<svg/>").unwrap();
                }
                Run::new(args!["--diff", a, b, "--svg", out.to_str().unwrap()])
                    .output(out)
                    .name("b.folded")
            },
        ));
        v.push(Case::new(
            format!("a corrupt archive after a good one, -o {tag}"),
            "njx-export",
            Expect::Refused,
            move |d: &Path| {
                let good = write_archive(d);
                let mut z = archive();
                let n = z.len();
                z.truncate(n / 2);
                let bad = write(d, "rank1.zip", &z);
                let out = d.join("thunks.jsonl");
                if existing {
                    std::fs::write(&out, "{}\n").unwrap();
                }
                Run::new(args![
                    "--table",
                    "thunks",
                    good,
                    bad,
                    "-o",
                    out.to_str().unwrap()
                ])
                .output(out)
                .name("rank1.zip")
            },
        ));
    }
    v.push(Case::new(
        "a bad row after 50,000 good ones, -o existing",
        "njx-export",
        Expect::Refused,
        |d: &Path| {
            let mut text = deep_csv(50_000, false);
            text.push_str("1,2,1,0,1,bad,1,1,0,0,x,,:1,bad\n");
            let p = write(d, "t.csv.xz", &xz(text.as_bytes()));
            let out = d.join("out.jsonl");
            std::fs::write(&out, "the previous output\n").unwrap();
            Run::new(args![p, "-o", out.to_str().unwrap()])
                .output(out)
                .name("t.csv.xz:50002")
        },
    ));
    // Outputs that cannot be written.
    type Unwritable = fn(&Path) -> (Vec<String>, String);
    let unwritable: &[(&str, &'static str, Unwritable)] = &[
        ("-o in a missing folder", "njx-export", |d| {
            let i = input_of("njx-export", d);
            (args![i, "-o", at(d, "nodir/out.jsonl")], "out.jsonl".into())
        }),
        ("-o is a folder", "njx-ranges", |d| {
            let i = input_of("njx-ranges", d);
            std::fs::create_dir(d.join("outdir")).unwrap();
            (args![i, "-o", at(d, "outdir")], "outdir".into())
        }),
        ("-o under a regular file", "njx-compile-summary", |d| {
            let i = input_of("njx-compile-summary", d);
            (
                args![i.clone(), "-o", format!("{i}/out.txt")],
                "out.txt".into(),
            )
        }),
        ("--svg in a missing folder", "njx-flamefold", |d| {
            let i = input_of("njx-flamefold", d);
            (args![i, "--svg", at(d, "nodir/f.svg")], "f.svg".into())
        }),
        ("--plot is a folder", "njx-collectives", |d| {
            let i = input_of("njx-collectives", d);
            std::fs::create_dir(d.join("plot.svg")).unwrap();
            (args![i, "--plot", at(d, "plot.svg")], "plot.svg".into())
        }),
        (
            "-o is a dangling link into a missing folder",
            "njx-modules",
            |d| {
                let i = input_of("njx-modules", d);
                symlink(d.join("nodir/out.txt"), d.join("out.txt")).unwrap();
                (args![i, "-o", at(d, "out.txt")], "out.txt".into())
            },
        ),
    ];
    v.push(Case::new(
        "-o is a link to a file in another folder",
        "njx-ranges",
        Expect::Accepted,
        |d: &Path| {
            let i = input_of("njx-ranges", d);
            std::fs::create_dir(d.join("results")).unwrap();
            write(d, "results/old.jsonl", b"the previous output\n");
            symlink("results/old.jsonl", d.join("current.jsonl")).unwrap();
            let target = d.join("results/old.jsonl");
            let link = d.join("current.jsonl");
            let (t, l) = (target.clone(), link.clone());
            Run::new(args![i, "-o", link.to_str().unwrap()])
                .output(target)
                .output(link)
                .check(move |_, _| {
                    if !std::fs::symlink_metadata(&l).is_ok_and(|m| m.file_type().is_symlink()) {
                        return Err("the link was replaced by a file".into());
                    }
                    match std::fs::read(&t) {
                        Ok(b) if b != b"the previous output\n" => Ok(()),
                        _ => Err("the link's target did not get the output".into()),
                    }
                })
        },
    ));
    for &(label, tool, setup) in unwritable {
        v.push(Case::new(label, tool, Expect::Refused, move |d: &Path| {
            let (a, name) = setup(d);
            Run::new(a).name(name)
        }));
    }
    v.extend(capture());
    v
}

/// A stand-in `nsys` in `d/bin` (no log, so the case's folder keeps its content):
/// `profile` runs the program and writes the report unless `FAKE_NSYS_NO_REPORT`;
/// `export` copies a fixture export, fails with `FAKE_NSYS_EXPORT_FAIL`, writes garbage
/// with `FAKE_NSYS_EXPORT_GARBAGE`. Returns the arguments' prefix and the PATH.
fn capture_setup(d: &Path) -> String {
    std::fs::create_dir(d.join("bin")).unwrap();
    write_sqlite(d, "fixture.sqlite");
    script(
        &d.join("bin/nsys"),
        &format!(
            r#"#!/bin/sh
cmd="$1"; shift
case "$cmd" in
profile)
  while [ $# -gt 0 ]; do
    if [ "$1" = --output ]; then out="$2"; shift 2; break; fi
    shift
  done
  "$@"
  status=$?
  [ -n "$FAKE_NSYS_NO_REPORT" ] || printf 'fake report' > "$out.nsys-rep"
  exit $status;;
export)
  while [ $# -gt 1 ]; do
    if [ "$1" = --output ]; then out="$2"; fi
    shift
  done
  [ -z "$FAKE_NSYS_EXPORT_FAIL" ] || exit 3
  if [ -n "$FAKE_NSYS_EXPORT_GARBAGE" ]; then echo garbage > "$out"; exit 0; fi
  cp '{}' "$out";;
esac
"#,
            d.join("fixture.sqlite").display()
        ),
    );
    script(&d.join("program"), "#!/bin/sh\nexit 0\n");
    format!("{}:/usr/bin:/bin", d.join("bin").display())
}

/// An archive at `path` must still be a zip holding `report.sqlite`.
fn archive_kept(path: &Path) -> Result<(), String> {
    let f = std::fs::File::open(path).map_err(|e| format!("the archive is gone: {e}"))?;
    let z = zip::ZipArchive::new(f).map_err(|e| format!("the archive is no longer a zip: {e}"))?;
    if z.file_names()
        .any(|n| n.is_ok_and(|n| n == "report.sqlite"))
    {
        Ok(())
    } else {
        Err("the archive lost its report.sqlite".into())
    }
}

fn capture() -> Vec<Case> {
    let mut v = Vec::new();
    let failing: &[(&str, &str, Expect)] = &[
        (
            "nsys writes no report",
            "FAKE_NSYS_NO_REPORT",
            Expect::Refused,
        ),
        (
            "nsys export fails",
            "FAKE_NSYS_EXPORT_FAIL",
            Expect::Refused,
        ),
        (
            "nsys export writes garbage",
            "FAKE_NSYS_EXPORT_GARBAGE",
            Expect::Survives,
        ),
    ];
    for &(label, var, expect) in failing {
        v.push(Case::new(
            format!("capture -f over an archive, {label}"),
            "njx-capture",
            expect,
            move |d: &Path| {
                let path = capture_setup(d);
                let old = write(d, "out.zip", b"the previous archive");
                Run::new(args!["-f", "-o", "out", at(d, "program")])
                    .env("PATH", path)
                    .env(var, "1")
                    .output(old)
                    .name("out.zip")
            },
        ));
    }
    v.push(Case::new(
        "capture over an existing archive without -f",
        "njx-capture",
        Expect::Refused,
        |d: &Path| {
            let path = capture_setup(d);
            write(d, "out.zip", b"the previous archive");
            Run::new(args!["-o", "out", at(d, "program")])
                .env("PATH", path)
                .name("out.zip")
        },
    ));
    v.push(Case::new(
        "capture to an archive name that is a folder",
        "njx-capture",
        Expect::Refused,
        |d: &Path| {
            let path = capture_setup(d);
            std::fs::create_dir(d.join("out.zip")).unwrap();
            write(&d.join("out.zip"), "keep.txt", b"keep");
            Run::new(args!["-f", "-o", "out", at(d, "program")])
                .env("PATH", path)
                .name("out.zip")
        },
    ));
    let analyses: &[(&str, &str)] = &[
        ("an analysis that removes the archive", "rm -f \"$1\""),
        (
            "an analysis that overwrites the archive",
            "echo garbage > \"$NJX_ARCHIVE\"",
        ),
        ("an analysis that truncates the archive", ": > \"$1\""),
        (
            "an analysis that puts a folder in its place",
            "rm -f \"$1\" && mkdir \"$1\"",
        ),
        (
            "an analysis that moves the archive away",
            "mv \"$1\" \"$1.moved\"",
        ),
    ];
    for &(label, pipeline) in analyses {
        v.push(Case::new(
            format!("capture with {label}"),
            "njx-capture",
            Expect::Survives,
            move |d: &Path| {
                let path = capture_setup(d);
                let out = d.join("out.zip");
                let moved = d.join("out.zip.moved");
                let check_at = out.clone();
                Run::new(args!["-o", "out", "--analysis", pipeline, at(d, "program")])
                    .env("PATH", path)
                    .loose(out)
                    .loose(moved)
                    .name("out.zip")
                    .check(move |_, _| archive_kept(&check_at))
            },
        ));
    }
    v
}
