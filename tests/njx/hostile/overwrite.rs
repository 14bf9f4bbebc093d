//! Overwrite (issue 44, item 1): an output never overwrites a profile or an analysis input.
//! `njx-report --html run/*.zip`, the page's name left out, made the shell's first archive
//! the page's path and exited 0 with the archive turned into HTML. Every output option of
//! every tool — found in the tools' own clap definitions, so a new one joins by itself —
//! is pointed at each kind of input the tools read: a zip archive (as a glob expands:
//! the victim first, the other ranks after it), an SQLite export, a partial result, an
//! `.nsys-rep` report, xz data and an HLO dump. Each must be refused (exit 2) naming the
//! file and the option, and leave the file byte for byte as it was (the harness compares
//! every file of the case's folder). With `-f` the same run may write over it.

use super::fixtures::*;
use super::harness::{Case, Expect, Run, at};
use crate::common::{ok, write, xz};
use std::path::Path;

/// Each tool's options that name a file or folder it writes (`FILE`, `DIR`, and `NAME` of
/// the archive writers' `-o`), as its clap definition says: `(tool, option)`, `-o` spelled
/// short.
pub fn output_options() -> Vec<(String, String)> {
    let mut v = Vec::new();
    for cmd in njx::commands() {
        for arg in cmd.get_arguments() {
            let names = arg.get_value_names().unwrap_or_default();
            // `NAME` is also a program's name (`--program NAME`): an output only as `-o`.
            let writes = names.iter().any(|n| {
                ["FILE", "DIR"].contains(&n.as_str())
                    || (n.as_str() == "NAME" && arg.get_long() == Some("output"))
            });
            if !writes || arg.is_positional() {
                continue;
            }
            let option = match (arg.get_short(), arg.get_long()) {
                (Some(s), _) => format!("-{s}"),
                (None, Some(l)) => format!("--{l}"),
                (None, None) => continue,
            };
            v.push((cmd.get_name().to_string(), option));
        }
    }
    v
}

/// An input of each kind, written into the case's folder as the victim: its file name.
#[derive(Clone, Copy, Debug)]
enum Victim {
    Archive,
    Sqlite,
    Partial,
    NsysRep,
    Xz,
    HloDump,
}

const VICTIMS: [Victim; 6] = [
    Victim::Archive,
    Victim::Sqlite,
    Victim::Partial,
    Victim::NsysRep,
    Victim::Xz,
    Victim::HloDump,
];

impl Victim {
    /// Writes the victim into `d` under a name that does not give its kind away where the
    /// kind has no name of its own (the first bytes decide): its path.
    fn write(self, d: &Path) -> String {
        match self {
            Victim::Archive => write_archive(d),
            Victim::Sqlite => write_sqlite(d, "e.sqlite"),
            Victim::Partial => {
                let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
                let partial = ok("njx-modules", &["--partial", &m]);
                std::fs::remove_file(&m).unwrap();
                write(d, "rank0.part", partial.as_bytes())
            }
            // The header every report starts with, then what nsys writes after it.
            Victim::NsysRep => write(
                d,
                "report.nsys-rep",
                b"NVIDIA Tegra Profiler Report\0\0\x01\x00rest of the report",
            ),
            Victim::Xz => write(d, "compile_trace.out", &xz(tree().csv().as_bytes())),
            Victim::HloDump => write(d, "module_0001.jit_step.out", &hlo_dump()),
        }
    }
}

/// The arguments a tool needs besides the output to get as far as writing: none for most.
fn others(tool: &str, option: &str, input: &str) -> Vec<String> {
    match (tool, option) {
        ("njx-diff", _) => vec!["--vs".into(), input.into()],
        ("njx-export", "--modules-to") => vec!["--table".into(), "thunks".into()],
        _ => Vec::new(),
    }
}

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for (tool, option) in output_options() {
        let tool: &'static str = Box::leak(tool.into_boxed_str());
        // njx-combine and njx-capture write archives: any existing file is refused there
        // (exit 1, "exists; pass -f"), which the archive case shows.
        let archives = matches!(tool, "njx-combine" | "njx-capture");
        for victim in VICTIMS {
            if archives && !matches!(victim, Victim::Archive) {
                continue;
            }
            let option = option.clone();
            let expect = if archives {
                Expect::Refused
            } else {
                Expect::Usage
            };
            v.push(Case::new(
                format!("{option} names {victim:?}"),
                tool,
                expect,
                move |d: &Path| {
                    let victim = victim.write(d);
                    // As the shell expands `run/*.zip` after the option: the victim takes
                    // the option's place and the other rank follows as the input.
                    let input = write(d, "rank1.zip", &archive());
                    let mut args = vec![option.clone(), victim.clone(), input.clone()];
                    if tool == "njx-capture" {
                        args = vec![option.clone(), victim.clone(), "--".into(), "true".into()];
                    }
                    args.extend(others(tool, &option, &input));
                    let name = Path::new(&victim).file_name().unwrap().to_str().unwrap();
                    let mut run = Run::new(args).output(&victim).name(name);
                    if tool == "njx-capture" {
                        // An nsys that is never run: the archive is refused before.
                        let bin = d.join("bin");
                        std::fs::create_dir(&bin).unwrap();
                        crate::common::script(&bin.join("nsys"), "#!/bin/sh\nexit 1\n");
                        let path = std::env::var("PATH").unwrap_or_default();
                        run = run.env("PATH", format!("{}:{path}", bin.display()));
                    }
                    if !archives {
                        run = run.name(option.as_str());
                    }
                    run
                },
            ));
        }
    }
    // A page, picture or table named like an input is refused before it exists.
    for (tool, option, name) in [
        ("njx-report", "--html", "run.zip"),
        ("njx-modules", "-o", "modules.sqlite"),
        ("njx-flamefold", "--svg", "flame.nsys-rep"),
        ("njx-diff", "--svg", "d.ZIP"),
    ] {
        v.push(Case::new(
            format!("{option} named like an input ({name})"),
            tool,
            Expect::Usage,
            move |d: &Path| {
                let input = write(d, "rank1.zip", &archive());
                let mut args = vec![option.to_string(), at(d, name), input.clone()];
                args.extend(others(tool, option, &input));
                Run::new(args).output(at(d, name)).name(name).name(option)
            },
        ));
    }
    // -f says the user means it: the victim is written over, as asked.
    for (tool, option) in [("njx-report", "--html"), ("njx-modules", "-o")] {
        v.push(Case::new(
            format!("{option} over an archive with -f"),
            tool,
            Expect::Accepted,
            move |d: &Path| {
                let victim = write_archive(d);
                let input = write(d, "rank1.zip", &archive());
                Run::new(vec!["-f".into(), option.into(), victim.clone(), input])
                    .output(&victim)
                    .check(move |_, _| {
                        let now = std::fs::read(&victim).unwrap();
                        if now.starts_with(b"PK") {
                            Err("-f did not write the output over the archive".into())
                        } else {
                            Ok(())
                        }
                    })
            },
        ));
    }
    v
}

/// The options found are the ones users name: the enumeration itself is not empty or
/// blind to a kind of output.
#[test]
fn every_output_option_is_found() {
    let found = output_options();
    for (tool, option) in [
        ("njx-report", "--html"),
        ("njx-report", "-o"),
        ("njx-collectives", "--plot"),
        ("njx-collectives", "--wait-plot"),
        ("njx-collectives", "--lateness-plot"),
        ("njx-flamefold", "--svg"),
        ("njx-heap", "--svg"),
        ("njx-timeline", "-o"),
        ("njx-diff", "--svg"),
        ("njx-diff", "--folded"),
        ("njx-pgle", "-o"),
        ("njx-combine", "-o"),
        ("njx-capture", "-o"),
    ] {
        assert!(
            found.iter().any(|(t, o)| t == tool && o == option),
            "{tool} {option} not among the output options found: {found:?}"
        );
    }
    // Every tool that writes a file has -f.
    for cmd in njx::commands() {
        let writes = found.iter().any(|(t, _)| t == cmd.get_name());
        let force = cmd.get_arguments().any(|a| a.get_short() == Some('f'));
        assert!(
            !writes || force,
            "{} writes files but has no -f",
            cmd.get_name()
        );
    }
}
