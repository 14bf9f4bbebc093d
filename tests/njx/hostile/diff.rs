//! njx-diff (issue 31) on hostile and broken inputs: either side broken in each member its
//! reading decodes, partial results of the wrong kind, the wrong --by, broken or of a newer
//! version, record streams of the wrong kind, bad numbers and outputs on the command line,
//! and a failure in the second side (nothing written: not the comparison, not the folded
//! stacks). Each refusal names the file (and member or line).

use super::fixtures::*;
use super::harness::{Case, Expect, Run};
use crate::args;
use crate::common::write;
use std::path::Path;

const TOOL: &str = "njx-diff";

/// One side's partial result of the valid archive, by `by`, made by the built tool.
fn diff_partial(d: &Path, by: &str) -> String {
    let archive = write_archive(d);
    let out = std::process::Command::new(crate::common::exe(TOOL))
        .args(["-q", "--by", by, "--partial", &archive])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(&archive).unwrap();
    write(d, &format!("{by}.part"), &crate::common::gunzip(out.stdout))
}

/// A valid archive under another name, for the other side.
fn other_archive(d: &Path) -> String {
    write(d, "after.zip", &archive())
}

pub fn cases() -> Vec<Case> {
    use Expect::*;
    let mut v = Vec::new();
    for by in ["program", "instruction", "collective", "compile-pass"] {
        v.push(Case::new(
            format!("valid archives, --by {by}"),
            TOOL,
            Accepted,
            move |d: &Path| {
                Run::new(args![
                    "--by",
                    by,
                    write_archive(d),
                    "--vs",
                    other_archive(d)
                ])
            },
        ));
        v.push(Case::new(
            format!("its own partial results, --by {by}"),
            TOOL,
            Accepted,
            move |d: &Path| {
                let p = diff_partial(d, by);
                Run::new(args!["--by", by, p.clone(), "--vs", p])
            },
        ));
    }
    v.push(Case::new(
        "valid archives, CSV, folded and picture",
        TOOL,
        Accepted,
        |d: &Path| {
            let (f, s) = (d.join("d.folded"), d.join("d.svg"));
            Run::new(args![
                "--format",
                "csv",
                "--by",
                "instruction",
                "--folded",
                f.to_str().unwrap(),
                "--svg",
                s.to_str().unwrap(),
                write_archive(d),
                "--vs",
                other_archive(d)
            ])
            .output(f)
            .output(s)
        },
    ));
    v.push(Case::new(
        "thunk and module records",
        TOOL,
        Accepted,
        |d: &Path| {
            let t = write(d, "t.jsonl", jsonl(&thunk_records()).as_bytes());
            let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
            Run::new(args![
                "--by",
                "instruction",
                t.clone(),
                m.clone(),
                "--vs",
                m,
                t
            ])
        },
    ));
    for (label, member) in [
        ("GPU projection", GPU_PROJ),
        ("push/pop table", PUSHPOP),
        ("HLO dump", DUMP),
    ] {
        v.push(Case::new(
            format!("the after side's {label} is garbage"),
            TOOL,
            Refused,
            move |d: &Path| {
                let zip = archive_with_garbage(member);
                let bad = write(d, "rank1.zip", &zip);
                Run::new(args!["--by", "instruction", write_archive(d), "--vs", bad])
                    .name("rank1.zip")
            },
        ));
        v.push(Case::new(
            format!("the before side's {label} is cut short"),
            TOOL,
            Refused,
            move |d: &Path| {
                let zip = archive_with_cut(member);
                let bad = write(d, "rank1.zip", &zip);
                Run::new(args!["--by", "compile-pass", bad, "--vs", write_archive(d)])
                    .name("rank1.zip")
            },
        ));
    }
    for (what, option, file) in [
        ("output", "-o", "diff.txt"),
        ("folded stacks", "--folded", "d.folded"),
    ] {
        v.push(Case::new(
            format!("the after side's second archive broken: no {what} written"),
            TOOL,
            Refused,
            move |d: &Path| {
                let good = write_archive(d);
                let zip = archive();
                let bad = write(d, "rank1.zip", &zip[..zip.len() / 3]);
                let out = d.join(file);
                Run::new(args![
                    option,
                    out.to_str().unwrap(),
                    good.clone(),
                    "--vs",
                    good,
                    bad
                ])
                .name("rank1.zip")
                .output(out)
            },
        ));
    }
    v.push(Case::new(
        "a partial result of njx-modules",
        TOOL,
        Refused,
        |d: &Path| {
            let p = write(
                d,
                "m.part",
                b"{\"njx_partial\":\"modules\",\"version\":3,\"data\":{}}\n",
            );
            Run::new(args![p, "--vs", write_archive(d)])
                .name("m.part:1")
                .name("modules")
        },
    ));
    v.push(Case::new(
        "its partial result of another --by",
        TOOL,
        Usage,
        |d: &Path| {
            let p = diff_partial(d, "collective");
            Run::new(args!["--by", "program", p, "--vs", write_archive(d)]).name("--by collective")
        },
    ));
    v.push(Case::new(
        "its partial result with its data cut",
        TOOL,
        Refused,
        |d: &Path| {
            let p = diff_partial(d, "program");
            let text = std::fs::read_to_string(&p).unwrap();
            std::fs::write(&p, &text[..text.len() / 2]).unwrap();
            Run::new(args![write_archive(d), "--vs", p]).name("program.part:1")
        },
    ));
    v.push(Case::new(
        "its partial result of a newer version",
        TOOL,
        Refused,
        |d: &Path| {
            let p = diff_partial(d, "program");
            let text = std::fs::read_to_string(&p).unwrap();
            std::fs::write(&p, text.replacen("\"version\":3", "\"version\":99", 1)).unwrap();
            Run::new(args![write_archive(d), "--vs", p]).name("program.part:1")
        },
    ));
    v.push(Case::new(
        "range records compared by program",
        TOOL,
        Refused,
        |d: &Path| {
            let r = write(d, "r.jsonl", jsonl(&tree().records("t")).as_bytes());
            Run::new(args![r.clone(), "--vs", r]).name("r.jsonl")
        },
    ));
    v.push(Case::new(
        "range records compared by compile pass",
        TOOL,
        Accepted,
        |d: &Path| {
            let r = write(d, "r.jsonl", jsonl(&tree().records("t")).as_bytes());
            Run::new(args!["--by", "compile-pass", r.clone(), "--vs", r])
        },
    ));
    v.push(Case::new(
        "thunk records, line 2 not JSON",
        TOOL,
        Refused,
        |d: &Path| {
            let mut text = jsonl(&thunk_records());
            let at = text.find('\n').unwrap() + 1;
            text.insert_str(at, "{not json\n");
            let t = write(d, "t.jsonl", text.as_bytes());
            Run::new(args!["--by", "collective", write_archive(d), "--vs", t]).name("t.jsonl:2")
        },
    ));
    v.push(Case::new(
        "empty files on both sides",
        TOOL,
        Refused,
        |d: &Path| {
            // Nothing read is no answer (issue 44): refused, naming the file.
            let e = write(d, "e.jsonl", b"");
            Run::new(args![e.clone(), "--vs", e]).name("e.jsonl: empty")
        },
    ));
    v.push(Case::new(
        "kernels of an archive without an export",
        TOOL,
        Refused,
        |d: &Path| {
            let a = write_archive(d);
            Run::new(args!["--by", "kernel", a.clone(), "--vs", a]).name("rank0.zip")
        },
    ));
    v.push(Case::new(
        "--hlo names no file",
        TOOL,
        Refused,
        |d: &Path| {
            let missing = d.join("no-such-dump");
            let a = write_archive(d);
            Run::new(args![
                "--hlo",
                missing.to_str().unwrap(),
                "--by",
                "instruction",
                a.clone(),
                "--vs",
                a
            ])
            .name("no-such-dump")
        },
    ));
    for (option, value) in [
        ("--alpha", "0"),
        ("--alpha", "1.5"),
        ("--min-samples", "1"),
        ("--min-change", "-3"),
        ("--fail-if-slower", "-5"),
        ("--fail-if-slower", "total:"),
        ("--top", "99999999999999999999999"),
    ] {
        v.push(Case::new(
            format!("{option} {value}"),
            TOOL,
            Usage,
            move |d: &Path| {
                let a = write_archive(d);
                // `--option=value`: a value with a leading `-` is then the option's.
                Run::new(args![format!("{option}={value}"), a.clone(), "--vs", a]).name(option)
            },
        ));
    }
    v.push(Case::new(
        "--vs with nothing after it",
        TOOL,
        Usage,
        |d: &Path| Run::new(args![write_archive(d), "--vs"]).name("--vs"),
    ));
    v.push(Case::new(
        "--folded is an input",
        TOOL,
        Usage,
        |d: &Path| {
            let a = write_archive(d);
            Run::new(args!["--folded", a.clone(), a.clone(), "--vs", a]).name("rank0.zip")
        },
    ));
    v.push(Case::new(
        "--svg in a folder that is not there",
        TOOL,
        Refused,
        |d: &Path| {
            let page = d.join("no-such-folder/d.svg");
            let a = write_archive(d);
            Run::new(args!["--svg", page.to_str().unwrap(), a.clone(), "--vs", a])
                .name("no-such-folder")
                .output(page)
        },
    ));
    v
}
