//! njx-report (issue 30) on hostile and broken inputs: archives broken in each of the
//! members its one reading decodes (the GPU projection, the push/pop table it now keeps for
//! the compile time, the HLO dumps), partial results of the wrong kind or broken, record
//! streams of the wrong kind, bad numbers on the command line, and a failure in the second
//! of two inputs (nothing written). Each refusal names the file (and member or line).

use super::fixtures::*;
use super::harness::{Case, Expect, Run};
use crate::args;
use crate::common::write;
use std::path::Path;

const TOOL: &str = "njx-report";

/// A report partial result of the valid archive, made by the built tool.
fn report_partial(d: &Path) -> String {
    let archive = write_archive(d);
    let out = std::process::Command::new(crate::common::exe(TOOL))
        .args(["-q", "--partial", &archive])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(&archive).unwrap();
    write(d, "r.part", &crate::common::gunzip(out.stdout))
}

pub fn cases() -> Vec<Case> {
    use Expect::*;
    let mut v = Vec::new();
    v.push(Case::new("valid archive", TOOL, Accepted, |d: &Path| {
        Run::new(args![write_archive(d)])
    }));
    v.push(Case::new(
        "valid archive, JSON",
        TOOL,
        Accepted,
        |d: &Path| Run::new(args!["--format", "json", write_archive(d)]),
    ));
    v.push(Case::new(
        "valid extracted archive",
        TOOL,
        Accepted,
        |d: &Path| Run::new(args![write_extracted(d, "rank0")]),
    ));
    // Its kernels name strings StringIds lacks: refused, as njx-kernels refuses it.
    v.push(Case::new(
        "SQLite export whose kernels name no string",
        TOOL,
        Refused,
        |d: &Path| Run::new(args![write_sqlite(d, "e.sqlite")]).name("e.sqlite"),
    ));
    v.push(Case::new(
        "thunk and module records",
        TOOL,
        Accepted,
        |d: &Path| {
            let t = write(d, "t.jsonl", jsonl(&thunk_records()).as_bytes());
            let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
            Run::new(args![t, m])
        },
    ));
    v.push(Case::new(
        "its own partial result",
        TOOL,
        Accepted,
        |d: &Path| Run::new(args![report_partial(d)]),
    ));
    for (label, member) in [
        ("GPU projection", GPU_PROJ),
        ("push/pop table", PUSHPOP),
        ("HLO dump", DUMP),
    ] {
        v.push(Case::new(
            format!("archive whose {label} is garbage"),
            TOOL,
            Refused,
            move |d: &Path| {
                let zip = archive_with_garbage(member);
                Run::new(args![write(d, "rank0.zip", &zip)]).name("rank0.zip")
            },
        ));
        v.push(Case::new(
            format!("archive whose {label} is cut short"),
            TOOL,
            Refused,
            move |d: &Path| {
                let zip = archive_with_cut(member);
                Run::new(args![write(d, "rank0.zip", &zip)]).name("rank0.zip")
            },
        ));
    }
    v.push(Case::new(
        "archive cut in half",
        TOOL,
        Refused,
        |d: &Path| {
            let zip = archive();
            Run::new(args![write(d, "rank0.zip", &zip[..zip.len() / 2])]).name("rank0.zip")
        },
    ));
    // The report (-o) or the page (--html): neither is written when an input fails.
    for (what, option, file) in [
        ("output", "-o", "report.txt"),
        ("page", "--html", "run.html"),
    ] {
        v.push(Case::new(
            format!("second of two archives broken: no {what} written"),
            TOOL,
            Refused,
            move |d: &Path| {
                let good = write_archive(d);
                let zip = archive();
                let bad = write(d, "rank1.zip", &zip[..zip.len() / 3]);
                let out = d.join(file);
                Run::new(args![option, out.to_str().unwrap(), good, bad])
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
            Run::new(args![p]).name("m.part:1").name("modules")
        },
    ));
    v.push(Case::new(
        "its partial result given to njx-modules",
        "njx-modules",
        Refused,
        |d: &Path| {
            Run::new(args![report_partial(d)])
                .name("r.part:1")
                .name("report")
        },
    ));
    v.push(Case::new(
        "its partial result with its data cut",
        TOOL,
        Refused,
        |d: &Path| {
            let p = report_partial(d);
            let text = std::fs::read_to_string(&p).unwrap();
            std::fs::write(&p, &text[..text.len() / 2]).unwrap();
            Run::new(args![p]).name("r.part:1")
        },
    ));
    v.push(Case::new(
        "its partial result of a newer version",
        TOOL,
        Refused,
        |d: &Path| {
            let p = report_partial(d);
            let text = std::fs::read_to_string(&p).unwrap();
            std::fs::write(&p, text.replacen("\"version\":3", "\"version\":99", 1)).unwrap();
            Run::new(args![p]).name("r.part:1")
        },
    ));
    v.push(Case::new("range records", TOOL, Refused, |d: &Path| {
        let r = write(d, "r.jsonl", jsonl(&tree().records("t")).as_bytes());
        Run::new(args![r]).name("r.jsonl")
    }));
    v.push(Case::new(
        "thunk records, line 2 not JSON",
        TOOL,
        Refused,
        |d: &Path| {
            let mut text = jsonl(&thunk_records());
            let at = text.find('\n').unwrap() + 1;
            text.insert_str(at, "{not json\n");
            Run::new(args![write(d, "t.jsonl", text.as_bytes())]).name("t.jsonl:2")
        },
    ));
    // Nothing read is no answer (issue 44): refused, naming the file.
    v.push(Case::new("an empty file", TOOL, Refused, |d: &Path| {
        Run::new(args![write(d, "e.jsonl", b"")]).name("e.jsonl: empty")
    }));
    v.push(Case::new(
        "--hlo names no file",
        TOOL,
        Refused,
        |d: &Path| {
            let missing = d.join("no-such-dump");
            Run::new(args!["--hlo", missing.to_str().unwrap(), write_archive(d)])
                .name("no-such-dump")
        },
    ));
    v.push(Case::new(
        "--rows past every integer",
        TOOL,
        Usage,
        |d: &Path| {
            Run::new(args!["--rows", "99999999999999999999999", write_archive(d)]).name("--rows")
        },
    ));
    v.push(Case::new(
        "--html in a folder that is not there",
        TOOL,
        Refused,
        |d: &Path| {
            let page = d.join("no-such-folder/run.html");
            Run::new(args!["--html", page.to_str().unwrap(), write_archive(d)])
                .name("no-such-folder")
                .output(page)
        },
    ));
    v.push(Case::new("--html is the input", TOOL, Usage, |d: &Path| {
        let a = write_archive(d);
        Run::new(args!["--html", a.clone(), a]).name("rank0.zip")
    }));
    v.push(Case::new(
        "valid archive, with the page",
        TOOL,
        Accepted,
        |d: &Path| {
            let page = d.join("run.html");
            Run::new(args!["--html", page.to_str().unwrap(), write_archive(d)]).output(page)
        },
    ));
    v.push(Case::new("--rows 0", TOOL, Accepted, |d: &Path| {
        Run::new(args!["--rows", "0", write_archive(d)])
    }));
    v.push(Case::new("--format html", TOOL, Usage, |d: &Path| {
        Run::new(args!["--format", "csv", write_archive(d)]).name("--format")
    }));
    // The findings of nsys's rules on exports lacking what they need: the report stands,
    // the rules without their table undecided (tests/njx/findings_nsys.rs checks the why).
    v.push(Case::new(
        "SQLite export of kernels without a CUDA API table",
        TOOL,
        Accepted,
        |d: &Path| {
            use crate::common::nsys_sqlite::*;
            let path = d.join("k.sqlite");
            let n = NsysDb::with_tables(
                &path,
                &[
                    "META_DATA_EXPORT",
                    "StringIds",
                    "CUPTI_ACTIVITY_KIND_KERNEL",
                ],
            );
            n.string(1, "k");
            n.kernel(0, 1_000, gpid(9), 1);
            n.kernel(5_000_000, 5_000_000, gpid(9), 2);
            Run::new(args![path.to_str().unwrap()])
        },
    ));
    // A synchronisation call (it launched nothing) naming a string StringIds lacks: the
    // kernel tables read well, the five rules are undecided and a note names the id.
    v.push(Case::new(
        "SQLite export whose synchronisation call names no string",
        TOOL,
        RefusedOrNoted,
        |d: &Path| {
            use crate::common::nsys_sqlite::*;
            let path = d.join("s.sqlite");
            let n = NsysDb::create(&path);
            n.string(1, "k");
            n.kernel(0, 1_000, gpid(9), 1);
            n.call_named(2_000, 3_000, gtid(9, 1), 2, 99);
            Run::new(args![path.to_str().unwrap()])
                .name("s.sqlite")
                .name("99")
        },
    ));
    v
}
