//! Partial results that scale (issue 41): written compact (gzip, HLO facts interned),
//! carrying their ranks and writer; a rank counts once at every level of a reduce; a
//! reduce reads `@list` files; old, empty and truncated partials are refused.

use crate::common::*;
use crate::golden::archive;
use serde_json::Value;
use std::path::Path;

/// `njx-report --partial INPUTS -o DIR/NAME`; the path.
fn partial(dir: &Path, name: &str, inputs: &[&str]) -> String {
    let out = dir.join(name);
    let mut args = vec!["-q", "--partial", "-o", out.to_str().unwrap()];
    args.extend_from_slice(inputs);
    ok("njx-report", &args);
    out.to_str().unwrap().to_string()
}

/// The JSON report of `inputs`.
fn report(inputs: &[&str]) -> Value {
    let mut args = vec!["-q", "--format", "json"];
    args.extend_from_slice(inputs);
    serde_json::from_str(&ok("njx-report", &args)).unwrap()
}

/// The report's sections and what was read, without the input paths.
fn answer(rep: &Value) -> (Value, Value) {
    let mut sections = rep["sections"].clone();
    // Kernels are read from profiles only: the section says which it had.
    for id in ["kernels", "memops"] {
        sections[id] = Value::Null;
    }
    (sections, rep["read"].clone())
}

/// The two example ranks' archives in `dir`, and their report partials.
fn two_ranks(dir: &Path) -> (Vec<String>, Vec<String>) {
    let ranks: Vec<String> = (0..2).map(|r| archive(dir, r)).collect();
    let parts = ranks
        .iter()
        .enumerate()
        .map(|(i, r)| partial(dir, &format!("p{i}.partial"), &[r]))
        .collect();
    (ranks, parts)
}

/// A failed run's exit status and stderr.
fn refused(tool: &str, args: &[&str]) -> (Option<i32>, String) {
    let out = run(tool, args, b"");
    (out.status.code(), stderr_of(&out))
}

#[test]
fn a_partial_is_gzip_with_its_version_writer_and_ranks() {
    let dir = tempdir();
    let r0 = archive(dir.path(), 0);
    let p = partial(dir.path(), "r0.partial", &[&r0]);
    let bytes = std::fs::read(&p).unwrap();
    assert!(bytes.starts_with(b"\x1f\x8b"), "written gzip-compressed");
    let json = String::from_utf8(gunzip(bytes.clone())).unwrap();
    assert_eq!(json.lines().count(), 1);
    let head: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(head["njx_partial"], "report");
    assert_eq!(head["version"], 3);
    assert!(
        head["writer"].as_str().unwrap().starts_with("njx-report "),
        "{}",
        head["writer"]
    );
    let ranks = head["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 1, "{ranks:?}");
    assert_eq!(ranks[0][2], r0.as_str());
    // The HLO facts interned: every string once, stacks and thunks by number.
    let infos = &head["data"]["thunks"]["gpu"]["infos"];
    let strings = infos["strings"].as_array().unwrap();
    let mut distinct: Vec<&str> = strings.iter().map(|s| s.as_str().unwrap()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), strings.len(), "each string once");
    assert!(!infos["programs"].as_array().unwrap().is_empty(), "{infos}");
    assert!(
        bytes.len() * 3 < json.len(),
        "compressed: {} of {}",
        bytes.len(),
        json.len()
    );
}

#[test]
fn a_rank_given_twice_is_refused_naming_both_inputs() {
    let dir = tempdir();
    let r0 = archive(dir.path(), 0);
    let r1 = archive(dir.path(), 1);
    // The same path twice, to every tool that reads executions.
    for (tool, flags) in [
        ("njx-modules", &[][..]),
        ("njx-collectives", &[]),
        ("njx-report", &[]),
        ("njx-export", &["--table", "modules"]),
        ("njx-flamefold", &["--by", "source"]),
    ] {
        let mut args = flags.to_vec();
        args.extend([r0.as_str(), &r1, &r0]);
        let (code, err) = refused(tool, &args);
        assert_eq!(code, Some(1), "{tool}: {err}");
        assert!(
            err.contains("given twice") && err.contains("rank0.zip"),
            "{tool}: {err}"
        );
    }
    // A copy under another name (a retried job): both paths named.
    let copy = dir.path().join("retried.zip");
    std::fs::copy(&r0, &copy).unwrap();
    let copy = copy.to_str().unwrap();
    let (code, err) = refused("njx-modules", &[&r0, copy]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("rank0.zip") && err.contains("retried.zip") && err.contains("device 0"),
        "{err}"
    );
    // A partial and its own archive.
    let p0 = partial(dir.path(), "p0.partial", &[&r0]);
    let (code, err) = refused("njx-report", &[&p0, copy]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("p0.partial") && err.contains("retried.zip"),
        "{err}"
    );
    // The same partial twice, as files and concatenated on stdin.
    let (code, err) = refused("njx-report", &[&p0, &p0]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("p0.partial"), "{err}");
    let twice = [std::fs::read(&p0).unwrap(), std::fs::read(&p0).unwrap()].concat();
    let out = run("njx-report", &["-q"], &twice);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("-:2"), "{}", stderr_of(&out));
    // Record streams are not profiles: each rank's modules and thunks go together.
    let modules = write(
        dir.path(),
        "m.jsonl",
        ok("njx-export", &["--table", "modules", &r0]).as_bytes(),
    );
    let thunks = write(
        dir.path(),
        "t.jsonl",
        ok("njx-export", &["--table", "thunks", &r0]).as_bytes(),
    );
    ok("njx-report", &["-q", &modules, &thunks]);
    // Module records are a rank's executions: the same stream twice is refused.
    let again = dir.path().join("m-again.jsonl");
    std::fs::copy(&modules, &again).unwrap();
    for tool in ["njx-modules", "njx-report"] {
        let (code, err) = refused(tool, &[&modules, again.to_str().unwrap()]);
        assert_eq!(code, Some(1), "{tool}: {err}");
        assert!(
            err.contains("m.jsonl") && err.contains("m-again.jsonl") && err.contains("device 0"),
            "{tool}: {err}"
        );
    }
    // So are thunk records, known by their first thunk execution (apart from module
    // records, whose first execution starts at the same nanosecond here).
    let again = dir.path().join("t-again.jsonl");
    std::fs::copy(&thunks, &again).unwrap();
    for tool in ["njx-collectives", "njx-thunks", "njx-report"] {
        let (code, err) = refused(tool, &[&thunks, again.to_str().unwrap()]);
        assert_eq!(code, Some(1), "{tool}: {err}");
        assert!(
            err.contains("t.jsonl")
                && err.contains("t-again.jsonl")
                && err.contains("first thunk execution"),
            "{tool}: {err}"
        );
    }
}

#[test]
fn a_tree_reduce_equals_one_reading_and_refuses_a_rank_counted_twice() {
    let dir = tempdir();
    let (ranks, parts) = two_ranks(dir.path());
    let whole = answer(&report(&[&ranks[0], &ranks[1]]));
    let one_level = answer(&report(&[&parts[0], &parts[1]]));
    assert_eq!(whole, one_level);
    // Two levels: partials of partials, and of a partial with an archive.
    let a = partial(dir.path(), "a.partial", &[&parts[0]]);
    let b = partial(dir.path(), "b.partial", &[&parts[1]]);
    let ab = partial(dir.path(), "ab.partial", &[&a, &b]);
    let mixed = partial(dir.path(), "mixed.partial", &[&a, &ranks[1]]);
    assert_eq!(answer(&report(&[&a, &b])), whole);
    assert_eq!(answer(&report(&[&ab])), whole);
    assert_eq!(answer(&report(&[&mixed])), whole);
    // The carried ranks name where each was read.
    let head: Value = serde_json::from_slice(&gunzip(std::fs::read(&ab).unwrap())).unwrap();
    let origins: Vec<&str> = head["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[2].as_str().unwrap())
        .collect();
    assert_eq!(origins, [&ranks[0], &ranks[1]]);
    // Rank 1 in both halves of a tree: refused, naming it and both partials.
    let (code, err) = refused("njx-report", &[&ab, &b]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("device 1")
            && err.contains("ab.partial")
            && err.contains("b.partial")
            && err.contains("rank1.zip"),
        "{err}"
    );
    // Also when writing the next level.
    let out = dir.path().join("abb.partial");
    let (code, _) = refused(
        "njx-report",
        &["--partial", "-o", out.to_str().unwrap(), &ab, &b],
    );
    assert_eq!(code, Some(1));
    assert!(!out.exists(), "no partial written");
}

#[test]
fn a_list_file_names_the_inputs() {
    let dir = tempdir();
    let (ranks, parts) = two_ranks(dir.path());
    let list = write(
        dir.path(),
        "parts.list",
        format!("{}\n\n{}\r\n", parts[0], parts[1]).as_bytes(),
    );
    let direct = report(&[&parts[0], &parts[1]]);
    let listed = report(&[&format!("@{list}")]);
    assert_eq!(answer(&direct), answer(&listed));
    assert_eq!(
        direct["inputs"], listed["inputs"],
        "the listed paths are the inputs"
    );
    // For the other tools too.
    let modules = ok("njx-modules", &["-q", &ranks[0], &ranks[1]]);
    let rank_list = write(dir.path(), "ranks.list", ranks.join("\n").as_bytes());
    assert_eq!(
        ok("njx-modules", &["-q", &format!("@{rank_list}")]),
        modules
    );
    let (code, err) = refused("njx-report", &["@missing.list"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("@missing.list"), "{err}");
}

#[test]
fn old_empty_truncated_and_disagreeing_partials() {
    let dir = tempdir();
    let r0 = archive(dir.path(), 0);
    let r1 = archive(dir.path(), 1);
    let p0 = partial(dir.path(), "p0.partial", &[&r0]);
    let json = String::from_utf8(gunzip(std::fs::read(&p0).unwrap())).unwrap();
    // Version 1, as njx wrote it before (no writer, no ranks).
    let head: Value = serde_json::from_str(&json).unwrap();
    let old = format!(
        "{{\"njx_partial\":\"report\",\"version\":1,\"data\":{}}}\n",
        head["data"]
    );
    let old = write(dir.path(), "old.partial", old.as_bytes());
    let (code, err) = refused("njx-report", &[&old]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("old.partial:1") && err.contains("version 1") && err.contains("an older njx"),
        "{err}"
    );
    // A newer one names its writer.
    let newer = json.replacen("\"version\":3", "\"version\":4", 1).replacen(
        "\"writer\":\"njx-report ",
        "\"writer\":\"njx-report 9.",
        1,
    );
    let newer = write(dir.path(), "newer.partial", newer.as_bytes());
    let (code, err) = refused("njx-report", &[&newer]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("version 4 written by njx-report 9."), "{err}");
    // Empty: a map step that wrote nothing.
    let empty = write(dir.path(), "empty.partial", b"");
    let (code, err) = refused("njx-report", &[&empty, &p0]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("empty.partial") && err.contains("empty"),
        "{err}"
    );
    // Truncated: the gzip stream ends early.
    let bytes = std::fs::read(&p0).unwrap();
    let cut = write(dir.path(), "cut.partial", &bytes[..bytes.len() / 2]);
    let (code, err) = refused("njx-report", &[&cut]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("cut.partial"), "{err}");
    // Another program's facts under the same fingerprint: said, the first kept.
    let infos = &head["data"]["thunks"]["gpu"]["infos"];
    let opcode = infos["programs"][0][1][0][1][0].as_u64().unwrap() as usize;
    let was = infos["strings"][opcode].as_str().unwrap().to_string();
    let mut other = head.clone();
    other["data"]["thunks"]["gpu"]["infos"]["strings"][opcode] =
        Value::from(format!("{was}-elsewhere"));
    let other = write(dir.path(), "other.partial", other.to_string().as_bytes());
    let out = run("njx-report", &[&other, &r1], b"");
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("opcode or op_names differ from another dump of the same program"),
        "{}",
        stderr_of(&out)
    );
}
