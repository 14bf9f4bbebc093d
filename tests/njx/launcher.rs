//! `njx`: lists every tool with one line, and runs a tool by its short name with the
//! tool's own output and exit status.

use crate::common::*;

#[test]
fn njx_lists_every_tool_with_one_line() {
    for args in [&[][..], &["--help"], &["-h"]] {
        let out = run("njx", args, b"");
        assert_eq!(out.status.code(), Some(0), "njx {args:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        for cmd in njx::commands() {
            let name = cmd.get_name();
            let about = cmd.get_about().unwrap().to_string();
            let first_word = about.split_whitespace().next().unwrap();
            let line = text
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{name} ")))
                .unwrap_or_else(|| panic!("njx {args:?} does not list {name}:\n{text}"));
            assert!(line.contains(first_word), "{line}");
        }
        // Wrapped to the 100 columns of the tools' own help where no terminal is.
        assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    }
}

#[test]
fn njx_runs_a_tool_by_its_short_name_as_the_tool_itself() {
    let run_both = |args: &[&str]| {
        let mut short = vec![args[0].trim_start_matches("njx-")];
        short.extend_from_slice(&args[1..]);
        (run("njx", &short, b""), run(args[0], &args[1..], b""))
    };
    // Output, notes and exit status are the tool's: a report, a version, an error.
    let rank0 = example("run/rank0.zip");
    for args in [
        &["njx-modules", rank0.as_str()][..],
        &["njx-report", "--version"],
        &["njx-modules", "no/such/file.zip"],
        &["njx-report", "--no-such-option"],
    ] {
        let (via, direct) = run_both(args);
        assert_eq!(via.status.code(), direct.status.code(), "{args:?}");
        assert_eq!(via.stdout, direct.stdout, "{args:?}");
        assert_eq!(via.stderr, direct.stderr, "{args:?}");
    }
    // The full name works too.
    let out = run("njx", &["njx-modules", "--version"], b"");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("njx-modules "));
}

#[test]
fn njx_refuses_a_tool_it_has_not_naming_those_it_has() {
    let out = run("njx", &["reprot", "run.zip"], b"");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no tool is named \"reprot\""), "{err}");
    assert!(err.contains("report, diff"), "{err}");
    let out = run("njx", &["--no-such-option"], b"");
    assert_eq!(out.status.code(), Some(2));
    // Names that are not a tool's, nor a way to another program: refused, nothing run.
    for name in [
        "",
        "njx-",
        "njx",
        "../bin/sh",
        "report/../../sh",
        "REPORT",
        "report ",
    ] {
        let out = run("njx", &[name, "--version"], b"");
        assert_eq!(out.status.code(), Some(2), "{name:?}");
        assert!(out.stdout.is_empty(), "{name:?}");
    }
    // A name that is not UTF-8.
    use std::os::unix::ffi::OsStrExt;
    let out = std::process::Command::new(exe("njx"))
        .arg(std::ffi::OsStr::from_bytes(b"rep\xffort"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A file of `examples/data`, as a string.
fn example(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/data")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}
