//! Issue 15, "Hostile and broken inputs": a campaign of hostile and broken inputs of every
//! kind, through the built binaries. Every case runs one tool in a fresh folder under
//! `ulimit -v` (1 GiB) and a wall-clock limit, and keeps these invariants: no signal
//! (panic abort, stack overflow, out of memory), exit 0, 1 or 2, no `panicked`, `memory
//! allocation of`, `RUST_BACKTRACE` or `stack overflow` on stderr, every input unchanged,
//! no `*.njx-partial` file or other new file left, an output path changed only when the
//! tool succeeds, nothing left in `$TMPDIR`. On top, each case expects an outcome
//! ([`harness::Expect`]): a refusal naming the file (member, line), a usage error, a
//! refusal or a note, success, or only survival (mutated and fuzzed inputs).
//!
//! One `#[test]` per class runs the class's cases and reports every failing case at once:
//!
//! - `combine`: njx-combine's members (hostile names, links), inputs and outputs;
//! - `crashes`: deep nesting, sizes and counts the file claims (zip headers, Parquet
//!   footers), truncations, bit flips;
//! - `memory`: gigabyte lines in small compressed streams, gigabyte members, deep stacks,
//!   endless devices;
//! - `hangs`: link loops, FIFOs and sockets in folders, endless SQLite views, cyclic HLO
//!   stack frames, whole file systems as inputs;
//! - `data_loss`: outputs that are inputs, failures part-way, njx-capture's archive;
//! - `overwrite`: every output option of every tool pointed at an archive (as a glob
//!   expands), an SQLite export, a partial result, a report, xz data and an HLO dump;
//! - `inconsistent`: range trees, records, SQLite ids, HLO references and command-line
//!   numbers that do not add up;
//! - `unclear`: write errors and tree errors must name the file and line;
//! - `heap`: njx-heap and njx-pgle on hostile HLO dumps: buffer assignments that do not
//!   add up, call-graph cycles, huge fan-out, overflowing shapes, 200,000 live buffers.
//!
//! - `report`: njx-report's one reading, partial results and options.
//! - `diff`: njx-diff's two sides, partial results, options and outputs.
//!
//! `baseline` checks that the unbroken fixtures are accepted, so that a refusal of a
//! broken copy is about what was broken.

mod combine;
mod crashes;
mod data_loss;
mod diff;
mod fixtures;
mod formats;
mod hangs;
mod harness;
mod heap;
mod inconsistent;
mod known;
mod memory;
mod overwrite;
mod report;
mod streams;
mod unclear;

use crate::args;
use fixtures::*;
use harness::{Case, Expect, Run, at, run_class};

/// Every class's case list (cheap: fixtures are written only when a case runs).
fn classes() -> Vec<(&'static str, Vec<Case>)> {
    vec![
        ("combine", combine::cases()),
        ("crashes", crashes::cases()),
        ("memory", memory::cases()),
        ("hangs", hangs::cases()),
        ("data_loss", data_loss::cases()),
        ("overwrite", overwrite::cases()),
        ("inconsistent", inconsistent::cases()),
        ("unclear", unclear::cases()),
        ("streams", streams::cases()),
        ("heap", heap::cases()),
        ("report", report::cases()),
        ("diff", diff::cases()),
    ]
}

#[test]
fn the_campaign_has_at_least_300_cases() {
    let counts: Vec<(&str, usize)> = classes().iter().map(|(n, c)| (*n, c.len())).collect();
    let total: usize = counts.iter().map(|c| c.1).sum();
    eprintln!("hostile cases per class: {counts:?}, total {total}");
    assert!(total >= 300, "only {total} cases: {counts:?}");
}

#[test]
fn diff() {
    run_class("diff", diff::cases());
}

#[test]
fn combine() {
    run_class("combine", combine::cases());
}

#[test]
fn crashes() {
    run_class("crashes", crashes::cases());
}

#[test]
fn memory() {
    run_class("memory", memory::cases());
}

#[test]
fn hangs() {
    run_class("hangs", hangs::cases());
}

#[test]
fn data_loss() {
    run_class("data_loss", data_loss::cases());
}

#[test]
fn overwrite() {
    run_class("overwrite", overwrite::cases());
}

#[test]
fn inconsistent() {
    run_class("inconsistent", inconsistent::cases());
}

#[test]
fn unclear() {
    run_class("unclear", unclear::cases());
}

#[test]
fn streams() {
    run_class("streams", streams::cases());
}

#[test]
fn heap() {
    run_class("heap", heap::cases());
}

/// The unbroken fixtures, accepted by every tool that reads them.
#[test]
fn baseline() {
    use crate::common::write;
    let ok = Expect::Accepted;
    let csv = |d: &std::path::Path| write(d, "t.csv", tree().csv().as_bytes());
    let mut cases = vec![
        Case::new("csv", "njx-export", ok, move |d| Run::new(args![csv(d)])),
        Case::new("csv ranges", "njx-ranges", ok, move |d| {
            Run::new(args![csv(d)])
        }),
        Case::new("csv compile", "njx-compile-summary", ok, move |d| {
            Run::new(args![csv(d)])
        }),
        Case::new("csv flamefold", "njx-flamefold", ok, move |d| {
            Run::new(args![csv(d)])
        }),
        Case::new("records", "njx-ranges", ok, |d| {
            Run::new(args![write(
                d,
                "r.jsonl",
                jsonl(&tree().records("t")).as_bytes()
            )])
        }),
        Case::new("records csv", "njx-compile-summary", ok, |d| {
            Run::new(args![write(
                d,
                "r.csv",
                records_csv(&tree().records("t")).as_bytes()
            )])
        }),
        Case::new("parquet", "njx-export", ok, |d| {
            Run::new(args![write(
                d,
                "t.parquet",
                &crate::common::pushpop_parquet(&tree().csv()),
            )])
        }),
        Case::new("deep csv", "njx-ranges", ok, |d| {
            Run::new(args![write(d, "deep.csv", deep_csv(50, false).as_bytes())])
        }),
        Case::new("deep compile csv", "njx-compile-summary", ok, |d| {
            Run::new(args![write(d, "deep.csv", deep_csv(50, true).as_bytes())])
        }),
        Case::new("deep jsonl", "njx-flamefold", ok, |d| {
            Run::new(args![write(d, "deep.jsonl", deep_jsonl(50).as_bytes())])
        }),
        Case::new("deep sqlite", "njx-ranges", ok, |d| {
            let p = d.join("deep.sqlite");
            deep_sqlite(&p, 50);
            Run::new(args![p.to_str().unwrap()])
        }),
        Case::new("sqlite", "njx-export", ok, |d| {
            Run::new(args![write_sqlite(d, "e.sqlite")])
        }),
        Case::new("sqlite gpu", "njx-export", ok, |d| {
            Run::new(args!["--table", "gpu-ranges", write_sqlite(d, "e.sqlite")])
        }),
        Case::new("sqlite thunks", "njx-export", ok, |d| {
            Run::new(args!["--table", "thunks", write_sqlite(d, "e.sqlite")])
        }),
        Case::new("thunk records", "njx-collectives", ok, |d| {
            Run::new(args![write(
                d,
                "t.jsonl",
                jsonl(&thunk_records()).as_bytes()
            )])
        }),
        Case::new("module records", "njx-modules", ok, |d| {
            Run::new(args![write(
                d,
                "m.jsonl",
                jsonl(&module_records()).as_bytes()
            )])
        }),
        Case::new("by source", "njx-flamefold", ok, |d| {
            let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
            let t = write(d, "t.jsonl", jsonl(&thunk_records()).as_bytes());
            let h = write_dump_dir(d, "xla_dump");
            Run::new(args!["--by", "source", m, t, "--hlo", h])
        }),
        Case::new("diff", "njx-flamefold", ok, |d| {
            let a = write(d, "a.folded", FOLDED_A.as_bytes());
            let b = write(d, "b.folded", FOLDED_B.as_bytes());
            Run::new(args!["--diff", a, b])
        }),
        Case::new("svg", "njx-flamefold", ok, move |d| {
            let out = at(d, "f.svg");
            Run::new(args![csv(d), "--svg", out.clone()]).output(out)
        }),
    ];
    for table in ["ranges", "gpu-ranges", "modules", "thunks"] {
        cases.push(Case::new(
            format!("archive {table}"),
            "njx-export",
            ok,
            move |d| Run::new(args!["--table", table, write_archive(d)]),
        ));
        cases.push(Case::new(
            format!("extracted {table}"),
            "njx-export",
            ok,
            move |d| Run::new(args!["--table", table, write_extracted(d, "rank0")]),
        ));
    }
    for tool in ["njx-modules", "njx-collectives"] {
        cases.push(Case::new("archive", tool, ok, |d| {
            Run::new(args![write_archive(d)])
        }));
    }
    cases.push(Case::new("archive by source", "njx-flamefold", ok, |d| {
        Run::new(args!["--by", "source", write_archive(d)])
    }));
    run_class("baseline", cases);
}

#[test]
fn report() {
    run_class("report", report::cases());
}
