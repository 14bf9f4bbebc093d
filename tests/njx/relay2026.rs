//! Conformance on XLA's 2026 NVTX layout: the four real pax archives re-laid into it
//! (`common/relay.rs`: thunk names with `unique_hlo_op_id`, communication thunks at the top
//! level with or without an `async-start` wrapper, communication only or partly as NCCL
//! ranges, modules without thunk ranges) give the records and reports of the originals.
//!
//! Where the re-laid run cannot give the same answer, the test says what it gives instead:
//! the executions of modules without thunk ranges count 0 thunks, have no thunk records
//! and so no PGLE profile; everything else is equal.

use crate::common::relay::{Summary, Variant, relay};
use crate::common::*;
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

/// The records of `njx-export --table TABLE` on `inputs`, and its stderr.
fn export(table: &str, inputs: &[String]) -> (Vec<Value>, String) {
    let mut args = vec!["--table", table];
    args.extend(inputs.iter().map(String::as_str));
    let out = run("njx-export", &args, b"");
    assert!(out.status.success(), "{}", stderr_of(&out));
    (
        json_lines(&String::from_utf8_lossy(&out.stdout)),
        stderr_of(&out),
    )
}

/// `records` without the fields named.
fn without(records: &[Value], fields: &[&str]) -> Vec<Value> {
    records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            for f in fields {
                r.as_object_mut().expect("object").remove(*f);
            }
            r
        })
        .collect()
}

/// The four archives re-laid into `dir`, with what each re-lay changed.
fn relaid(originals: &[String], dir: &Path, variant: Variant) -> (Vec<String>, Vec<Summary>) {
    let mut paths = Vec::new();
    let mut summaries = Vec::new();
    for o in originals {
        let out = dir.join(Path::new(o).file_name().expect("file name"));
        summaries.push(relay(Path::new(o), &out, variant).expect("re-lay"));
        paths.push(out.to_str().expect("utf-8").to_string());
    }
    (paths, summaries)
}

fn count(records: &[Value], field: &str, value: &str) -> usize {
    records.iter().filter(|r| r[field] == value).count()
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn every_2026_layout_of_the_pax_run_gives_the_original_records() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let originals = pax_archives(&dir);
    let (modules, _) = export("modules", &originals);
    let (thunks, _) = export("thunks", &originals);
    assert!(thunks.iter().all(|t| t["reconstructed"].is_null()));
    let comm = thunks.iter().filter(|t| t["comm"] == true).count();
    assert_eq!(comm, 480, "the pax run's communication thunks");
    for variant in Variant::ALL {
        let tmp = tempdir();
        let (inputs, summaries) = relaid(&originals, tmp.path(), variant);
        let total = |f: fn(&Summary) -> usize| summaries.iter().map(f).sum::<usize>();
        let what = variant.name();
        assert!(total(|s| s.ids) > 50_000, "{what}: {summaries:?}");
        let (got_modules, _) = export("modules", &inputs);
        let (got_thunks, stderr) = export("thunks", &inputs);
        // What the variant reconstructs, and says it did.
        let moved = total(|s| s.top_level);
        let nccl = total(|s| s.nccl);
        assert_eq!(
            count(&got_thunks, "reconstructed", "module"),
            moved,
            "{what}"
        );
        assert_eq!(count(&got_thunks, "reconstructed", "nccl"), nccl, "{what}");
        if moved > 0 {
            assert!(
                stderr.contains("had no XlaModule range around them"),
                "{stderr}"
            );
        }
        if nccl > 0 {
            assert!(stderr.contains("in HLO schedule order"), "{stderr}");
        }
        assert!(!stderr.contains("left out"), "{what}: {stderr}");
        match variant {
            Variant::Ids => assert_eq!((moved, nccl), (0, 0)),
            Variant::TopLevel | Variant::Wrapped => assert_eq!((moved, nccl), (comm, 0)),
            Variant::Nccl => assert_eq!((moved, nccl), (0, comm)),
            Variant::NcclPartial => assert_eq!((moved, nccl), (0, comm / 2)),
            Variant::Thunkless => assert_eq!((moved, nccl), (0, 0)),
            Variant::Mixed => assert!(moved > 0 && nccl > 0 && moved + nccl == comm),
        }
        let thunkless = total(|s| s.thunkless_modules);
        if thunkless == 0 {
            assert_eq!(got_modules, modules, "{what}: module records");
            assert_eq!(
                without(&got_thunks, &["reconstructed"]),
                without(&thunks, &["reconstructed"]),
                "{what}: thunk records"
            );
            continue;
        }
        // Modules without thunk ranges: the same executions, 0 thunks; the thunks of the
        // others unchanged.
        assert_eq!(
            without(&got_modules, &["thunks"]),
            without(&modules, &["thunks"]),
            "{what}: module records"
        );
        let key = |r: &Value| {
            format!(
                "{} {} {} {}",
                r["profile"], r["program"], r["device"], r["execution"]
            )
        };
        let empty: HashSet<String> = got_modules
            .iter()
            .filter(|m| m["thunks"] == 0)
            .map(key)
            .collect();
        assert_eq!(empty.len(), thunkless, "{what}");
        let kept: Vec<Value> = thunks
            .iter()
            .filter(|t| !empty.contains(&key(t)))
            .cloned()
            .collect();
        assert_eq!(
            without(&got_thunks, &["reconstructed"]),
            without(&kept, &["reconstructed"]),
            "{what}: thunk records"
        );
    }
}

/// Runs `tool` with `args` and returns its stdout.
fn output(tool: &str, args: &[&str]) -> String {
    let out = run(tool, args, b"");
    assert!(out.status.success(), "{tool} {args:?}: {}", stderr_of(&out));
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn the_mixed_2026_layout_of_the_pax_run_gives_the_original_reports() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let originals = pax_archives(&dir);
    let tmp = tempdir();
    let (inputs, _) = relaid(&originals, tmp.path(), Variant::Mixed);
    let with = |paths: &[String], first: &[&'static str]| -> Vec<String> {
        first
            .iter()
            .map(|s| s.to_string())
            .chain(paths.iter().cloned())
            .collect()
    };
    for (tool, args) in [
        ("njx-collectives", &[][..]),
        ("njx-collectives", &["--table", "instances"][..]),
        ("njx-collectives", &["--table", "lateness"][..]),
        ("njx-flamefold", &["--by", "source"][..]),
        ("njx-flamefold", &["--by", "op-name"][..]),
        ("njx-thunks", &[][..]),
    ] {
        let a = with(&originals, args);
        let b = with(&inputs, args);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let b: Vec<&str> = b.iter().map(String::as_str).collect();
        assert_eq!(output(tool, &b), output(tool, &a), "{tool} {args:?}");
    }
    // PGLE: the same profile for every program with thunks; none for those without.
    let (pa, pb) = (tmp.path().join("pgle-a"), tmp.path().join("pgle-b"));
    for (out, paths) in [(&pa, &originals), (&pb, &inputs)] {
        let o = out.to_str().expect("utf-8").to_string();
        let args = with(paths, &["-o"]);
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        args.insert(1, &o);
        output("njx-pgle", &args);
    }
    let relaid = entries(&pb);
    assert_eq!(relaid.len(), 3, "{relaid:?}");
    for name in &relaid {
        let a = std::fs::read(pa.join(name)).expect("original profile");
        let b = std::fs::read(pb.join(name)).expect("re-laid profile");
        assert_eq!(a, b, "{name}");
    }
}
