//! `njx-flamefold` through the built binary: NVTX trees by stack, GPU time by source,
//! op_name, opcode, module and device on records and an XLA dump folder made here (every
//! expected count worked out by hand from the fixture), the SVG, differential pairs, the
//! error paths, and conformance on the real pax archives.

use crate::common::*;
use njx::hlo::proto::{
    FrontendAttributes, HloComputationProto, HloInstructionProto, HloModuleProto, HloProto,
    OpMetadata, StackFrameIndexProto, stack_frame_index_proto,
};
use prost::Message;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

/// Parses folded output, checking every line is `stack count` with a whole count (as
/// speedscope and inferno read them), no empty frame, and the lines sorted by stack
/// without repeats.
pub(crate) fn folded(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut last: Option<String> = None;
    for line in text.lines() {
        let (stack, count) = line.rsplit_once(' ').expect("a space before the count");
        assert!(
            !count.is_empty() && count.bytes().all(|b| b.is_ascii_digit()),
            "{line}"
        );
        let count = count.parse::<u64>().expect("a number");
        assert!(
            stack.split(';').all(|f| !f.is_empty()),
            "empty frame: {line}"
        );
        if let Some(prev) = &last {
            assert!(
                prev.as_str() < stack,
                "not sorted or repeated: {prev} / {stack}"
            );
        }
        last = Some(stack.to_string());
        out.insert(stack.to_string(), count);
    }
    out
}

fn expect(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(s, c)| (s.to_string(), *c)).collect()
}

// ---------------------------------------------------------------- --by stack

/// The compilation of [`COMPILE_CSV`] after the `--xla-compile` preparation, in ms: the
/// shares that `njx-compile-summary` gives (see COMPILE_CSV), each under its path.
#[test]
fn compile_tree_folds_to_its_wall_time() {
    let dir = tempdir();
    let csv = write(dir.path(), "trace.csv", COMPILE_CSV.as_bytes());
    let ranges = ok("njx-export", &[&csv]);
    let prepared = run("njx-ranges", &["--xla-compile"], ranges.as_bytes());
    assert!(prepared.status.success());
    // Within compilations names are njx-compile-summary's; --full-names keeps them whole.
    for (extra, full) in [(None, false), (Some("--full-names"), true)] {
        let mut args = vec!["--unit", "us"];
        args.extend(extra);
        let out = run("njx-flamefold", &args, &prepared.stdout);
        assert!(out.status.success(), "{}", stderr_of(&out));
        let n = |clean: &str, whole: &str| {
            if full {
                whole.to_string()
            } else {
                clean.to_string()
            }
        };
        let c = n(
            "XlaCompile:#module=jit_f,program_id=3#",
            "TSL:XlaCompile:#module=jit_f,program_id=3#",
        );
        let b = format!(
            "{c};{}",
            n(
                "XlaCompileBackend",
                "TSL:XlaCompileBackend:#module=jit_f,program_id=3#"
            )
        );
        let p = format!(
            "{c};{}",
            n(
                "XlaPassPipeline:#name=opt#",
                "TSL:XlaPassPipeline:#name=opt,module=jit_f,program_id=3#"
            )
        );
        let pass = n(
            "XlaPass:#name=algsimp#",
            "TSL:XlaPass:#name=algsimp,module=jit_f,program_id=3#",
        );
        let asm = n("XlaCompileGpuAsm", "TSL:XlaCompileGpuAsm:#module=jit_f#");
        let llvm = n("XlaOptimizeLlvmIr", "TSL:XlaOptimizeLlvmIr:#module=jit_f#");
        let auto = n("XlaAutotunerCompilation", "TSL:XlaAutotunerCompilation");
        let want = expect(&[
            (&c, 100_000),
            (&p, 50_000),
            (&format!("{p};{pass}"), 50_000),
            (&b, 320_000),
            (&format!("{b};{auto}"), 80_000),
            // The 400 ms parallel span shared 400:200 between the two workers.
            (&format!("{b};{asm}"), 266_667),
            (&format!("{b};{llvm}"), 133_333),
        ]);
        let got = folded(&String::from_utf8_lossy(&out.stdout));
        assert_eq!(got, want);
        assert_eq!(
            got.values().sum::<u64>(),
            1_000_000,
            "the wall time, 1000 ms"
        );
    }
}

/// Without the preparation every range counts on its own thread: the name paths of the
/// raw trees, self times, the cuBLAS ranges included.
#[test]
fn raw_trees_fold_by_self_time() {
    let dir = tempdir();
    let csv = write(dir.path(), "trace.csv", COMPILE_CSV.as_bytes());
    let got = folded(&ok("njx-flamefold", &["--unit", "ms", &csv]));
    // Names are cleaned within compilation trees only; the workers' trees (not spliced)
    // and the other ranges keep theirs.
    let c = "XlaCompile:#module=jit_f,program_id=3#";
    let b = format!("{c};XlaCompileBackend");
    let p = format!("{c};XlaPassPipeline:#name=opt#");
    let a = format!("{b};XlaAutotunerCompilation");
    let g = "TSL:XlaCompileGpuAsm:#module=jit_f#";
    let want = expect(&[
        ("TSL:XlaDumpHloModule:#module=jit_f,program_id=3#", 50),
        (c, 100),
        (&p, 50),
        (&format!("{p};XlaPass:#name=algsimp#"), 50),
        (&b, 670),
        (&a, 20),
        (&format!("{a};XlaEmitLlvmIr"), 60),
        (&format!("{b};cuBLAS:cublasCreate_v2"), 50),
        (g, 350),
        (&format!("{g};cuBLAS:cublasCreate_v2"), 50),
        ("TSL:XlaOptimizeLlvmIr:#module=jit_f#", 200),
        ("TSL:XlaModule:#module=jit_f#", 100),
    ]);
    assert_eq!(got, want);
}

#[test]
fn names_with_separators_are_cleaned() {
    let record = |id: u64, parent: Option<u64>, name: &str, start: i64, end: i64, child: i64| {
        json!({"profile": "p", "pid": 1, "tid": 1, "id": id, "parent": parent,
               "depth": if parent.is_some() { 1 } else { 0 }, "start_ns": start,
               "end_ns": end, "dur_ns": end - start, "child_ns": child,
               "self_ns": end - start - child, "children": if parent.is_some() { 0 } else { 1 },
               "name": name})
        .to_string()
    };
    let input = [
        record(1, None, "outer;step", 0, 100, 40),
        record(2, Some(1), "inner\nline", 10, 50, 0),
    ]
    .join("\n");
    let out = run("njx-flamefold", &[], input.as_bytes());
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "outer:step 60\nouter:step;inner line 40\n"
    );
}

#[test]
fn a_child_before_its_parent_is_an_error() {
    let input = r#"{"profile":"p","pid":1,"tid":1,"id":2,"parent":1,"depth":1,"start_ns":5,"end_ns":6,"dur_ns":1,"child_ns":0,"self_ns":1,"children":0,"name":"b"}"#;
    let out = run("njx-flamefold", &[], input.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert!(err.contains("range 2") && err.contains("parent 1"), "{err}");
}

// ---------------------------------------------------------------- GPU modes

/// Program `jit_f` (key [`FP`], program id 3): `fusion.1` calls a computation of a
/// parameter, `mul` (the same op_name and stack as the fusion) and `add` (another
/// stack); `custom-call.2` has an op_name but no stack; `copy.3` has no metadata.
pub(crate) const FP: &str = "0123456789abcdef0123456789abcdef";

fn metadata(op_name: &str, frame: i32) -> Option<OpMetadata> {
    Some(OpMetadata {
        op_name: op_name.into(),
        stack_frame_id: frame,
        ..Default::default()
    })
}

fn inst(
    id: i64,
    name: &str,
    opcode: &str,
    meta: Option<OpMetadata>,
    calls: &[i64],
) -> HloInstructionProto {
    HloInstructionProto {
        id,
        name: name.into(),
        opcode: opcode.into(),
        metadata: meta,
        called_computation_ids: calls.to_vec(),
        ..Default::default()
    }
}

/// The after-optimizations dump of `jit_f`. Stack frames (1-based): 1 = main.py:10
/// `<module>`; 2 = model.py:5:3 `f` called from 1; 3 = model.py:7 `g` called from 1.
pub(crate) fn hlo_dump() -> Vec<u8> {
    use stack_frame_index_proto::{FileLocation, StackFrame};
    let fused = HloComputationProto {
        id: 1,
        name: "fused_computation".into(),
        instructions: vec![
            inst(1, "param_0", "parameter", None, &[]),
            inst(2, "mul.1", "multiply", metadata("jit(f)/mul", 2), &[]),
            inst(3, "add.1", "add", metadata("jit(f)/add", 3), &[]),
        ],
        root_id: 3,
        ..Default::default()
    };
    let entry = HloComputationProto {
        id: 2,
        name: "main.2".into(),
        instructions: vec![
            inst(10, "fusion.1", "fusion", metadata("jit(f)/mul", 2), &[1]),
            inst(
                11,
                "custom-call.2",
                "custom-call",
                metadata("jit(f)/dot", 0),
                &[],
            ),
            inst(12, "copy.3", "copy", None, &[]),
        ],
        root_id: 12,
        ..Default::default()
    };
    let location = |file, function, line, column| FileLocation {
        file_name_id: file,
        function_name_id: function,
        line,
        column,
    };
    let proto = HloProto {
        hlo_module: Some(HloModuleProto {
            id: 3,
            name: "jit_f".into(),
            entry_computation_id: 2,
            entry_computation_name: "main.2".into(),
            computations: vec![fused, entry],
            frontend_attributes: Some(FrontendAttributes {
                map: [("fingerprint_before_lhs".to_string(), FP.to_string())].into(),
            }),
            stack_frame_index: Some(StackFrameIndexProto {
                file_names: vec!["main.py".into(), "model.py".into()],
                function_names: vec!["<module>".into(), "f".into(), "g".into()],
                file_locations: vec![
                    location(1, 1, 10, 0),
                    location(2, 2, 5, 3),
                    location(2, 3, 7, 0),
                ],
                stack_frames: vec![
                    StackFrame {
                        file_location_id: 1,
                        parent_frame_id: 0,
                    },
                    StackFrame {
                        file_location_id: 2,
                        parent_frame_id: 1,
                    },
                    StackFrame {
                        file_location_id: 3,
                        parent_frame_id: 1,
                    },
                ],
            }),
            ..Default::default()
        }),
        buffer_assignment: None,
    };
    proto.encode_to_vec()
}

/// Thunk durations of one execution of jit_f.
const THUNKS: [(&str, i64); 3] = [
    ("fusion.1", 200_000),
    ("custom-call.2", 100_000),
    ("copy.3", 50_000),
];
const MODULE_DUR: i64 = 600_000;

/// Module and thunk records of two devices (profiles r0 and r1): jit_f executions 0
/// (warm-up), 1 and 2 at 1 ms × k (+10 ns on device 1); program `small` once at 1.7 ms
/// for 10 µs, under 1% of module time.
fn records() -> (String, String) {
    let mut modules = Vec::new();
    let mut thunks = Vec::new();
    for device in 0..2u32 {
        let profile = format!("r{device}");
        for k in 0..3u32 {
            let start = 1_000_000 * i64::from(k) + 10 * i64::from(device);
            modules.push(json!({"profile": profile, "program": FP, "program_id": 3,
                "name": "jit_f", "execution": k, "device": device, "start_ns": start,
                "dur_ns": MODULE_DUR, "thunks": 3, "warmup": k == 0}));
            let mut at = start;
            for (i, (name, dur)) in THUNKS.iter().enumerate() {
                thunks.push(json!({"profile": profile, "program": FP, "program_id": 3,
                    "module": "jit_f", "execution": k, "device": device, "name": name,
                    "thunk_execution": 0, "start_ns": at, "dur_ns": dur, "hidden_ns": 0,
                    "comm": false, "warmup": k == 0, "collective": null,
                    "group_size": null, "message_bytes": null}));
                at += dur + 10 * i as i64;
            }
        }
        modules.push(
            json!({"profile": profile, "program": "small", "program_id": 9,
            "name": "jit_small", "execution": 0, "device": device, "start_ns": 1_700_000,
            "dur_ns": 10_000, "thunks": 1, "warmup": false}),
        );
        thunks.push(
            json!({"profile": profile, "program": "small", "program_id": 9,
            "module": "jit_small", "execution": 0, "device": device, "name": "fusion.9",
            "thunk_execution": 0, "start_ns": 1_700_000, "dur_ns": 10_000, "hidden_ns": 0,
            "comm": false, "warmup": false, "collective": null, "group_size": null,
            "message_bytes": null}),
        );
    }
    let lines =
        |v: Vec<serde_json::Value>| v.iter().map(|r| r.to_string() + "\n").collect::<String>();
    (lines(modules), lines(thunks))
}

/// Module and thunk records and an XLA dump folder, in a fresh folder.
pub(crate) fn gpu_fixture() -> (tempfile::TempDir, String, String, String) {
    let (modules, thunks) = records();
    gpu_fixture_of(&modules, &thunks, &hlo_dump())
}

/// [`gpu_fixture`] of these records and program 3's dump (`jit_f`, after optimizations):
/// the folder, the records' paths and the dump folder's.
fn gpu_fixture_of(
    modules: &str,
    thunks: &str,
    dump_bytes: &[u8],
) -> (tempfile::TempDir, String, String, String) {
    let dir = tempdir();
    let m = write(dir.path(), "modules.jsonl", modules.as_bytes());
    let t = write(dir.path(), "thunks.jsonl", thunks.as_bytes());
    let dump = dir.path().join("xla_dump");
    write(
        &dump,
        "module_0003.jit_f.sm_8.0_gpu_after_optimizations.hlo.pb",
        dump_bytes,
    );
    // A dump of another stage, and another program's: never read.
    write(
        &dump,
        "module_0003.jit_f.before_optimizations.hlo.pb",
        b"not read",
    );
    let dump = dump.to_str().unwrap().to_string();
    (dir, m, t, dump)
}

const GA: &str = "[GPU active]";
const MAIN: &str = "main.py:10[<module>]";

/// Steady state: 2 devices × 2 executions. Thunks: fusion.1 800 µs, custom-call.2 400,
/// copy.3 200 (1400 in all); modules 2400; per device the wall from 1.0 ms to 2.6 ms less
/// 1.2 ms of modules, 400 µs, twice. `small` is left out (under 1%).
fn idle() -> [(&'static str, u64); 2] {
    [
        ("[GPU idle during module execution]", 1_000_000),
        ("[GPU idle between module executions]", 800_000),
    ]
}

fn fold(by: &str, extra: &[&str]) -> (BTreeMap<String, u64>, String) {
    let (_dir, m, t, dump) = gpu_fixture();
    let mut args = vec!["--by", by, &m, &t, "--hlo", &dump];
    args.extend_from_slice(extra);
    let out = run("njx-flamefold", &args, b"");
    assert!(out.status.success(), "{}", stderr_of(&out));
    (
        folded(&String::from_utf8_lossy(&out.stdout)),
        stderr_of(&out),
    )
}

#[test]
fn by_source_shares_each_thunk_among_its_distinct_stacks() {
    let (got, err) = fold("source", &[]);
    let f = format!("{GA};{MAIN};model.py:5:3[f];jit(f)/mul");
    let g = format!("{GA};{MAIN};model.py:7[g];jit(f)/add");
    let mut want = expect(&[
        // fusion.1 and mul.1 give the same stack, add.1 another: half each.
        (&f, 400_000),
        (&g, 400_000),
        (&format!("{GA};[Unknown];jit(f)/dot"), 400_000),
        (&format!("{GA};[Unknown]"), 200_000),
    ]);
    want.extend(expect(&idle()));
    assert_eq!(got, want);
    assert!(err.contains("1 of 2 programs"), "{err}");
}

#[test]
fn by_op_name_splits_op_names() {
    let (got, _) = fold("op-name", &[]);
    let mut want = expect(&[
        (&format!("{GA};jit(f);mul"), 400_000),
        (&format!("{GA};jit(f);add"), 400_000),
        (&format!("{GA};jit(f);dot"), 400_000),
        (&format!("{GA};[Unknown]"), 200_000),
    ]);
    want.extend(expect(&idle()));
    assert_eq!(got, want);
}

#[test]
fn by_opcode_module_and_device() {
    let (got, _) = fold("opcode", &["--unit", "us"]);
    assert_eq!(
        got,
        expect(&[
            (&format!("{GA};fusion"), 800),
            (&format!("{GA};custom-call"), 400),
            (&format!("{GA};copy"), 200),
            ("[GPU idle during module execution]", 1000),
            ("[GPU idle between module executions]", 800),
        ])
    );
    let m = format!("{GA};jit_f ({FP})");
    let (got, _) = fold("module", &["--unit", "us"]);
    assert_eq!(
        got,
        expect(&[
            (&format!("{m};fusion.1"), 800),
            (&format!("{m};custom-call.2"), 400),
            (&format!("{m};copy.3"), 200),
            ("[GPU idle during module execution]", 1000),
            ("[GPU idle between module executions]", 800),
        ])
    );
    let (got, _) = fold("device", &["--unit", "us"]);
    let mut want = BTreeMap::new();
    for d in ["device 0", "device 1"] {
        want.extend(expect(&[
            (&format!("{d};{GA};jit_f ({FP});fusion.1"), 400),
            (&format!("{d};{GA};jit_f ({FP});custom-call.2"), 200),
            (&format!("{d};{GA};jit_f ({FP});copy.3"), 100),
            (&format!("{d};[GPU idle during module execution]"), 500),
            (&format!("{d};[GPU idle between module executions]"), 400),
        ]));
    }
    assert_eq!(got, want);
}

/// `--include-warmup` adds execution 0 and `--top-modules 1` keeps `small`, whose
/// execution sits between two of jit_f's.
#[test]
fn warmup_and_top_modules_options() {
    let (got, _) = fold(
        "module",
        &["--unit", "us", "--include-warmup", "--top-modules", "1"],
    );
    let m = format!("{GA};jit_f ({FP})");
    assert_eq!(
        got,
        expect(&[
            (&format!("{m};fusion.1"), 1200),
            (&format!("{m};custom-call.2"), 600),
            (&format!("{m};copy.3"), 300),
            (&format!("{GA};jit_small (small);fusion.9"), 20),
            // 3 × 2 × 250 µs inside jit_f, none inside small.
            ("[GPU idle during module execution]", 1500),
            // Per device: 0 to 2.6 ms less 1.8 + 0.01 ms of modules.
            ("[GPU idle between module executions]", 1580),
        ])
    );
}

#[test]
fn thunk_records_alone_leave_the_idle_stacks_out() {
    let (_dir, _m, t, dump) = gpu_fixture();
    let out = run(
        "njx-flamefold",
        &["--by", "opcode", "--unit", "us", &t, "--hlo", &dump],
        b"",
    );
    assert!(out.status.success());
    assert_eq!(
        folded(&String::from_utf8_lossy(&out.stdout)),
        expect(&[
            (&format!("{GA};fusion"), 800),
            (&format!("{GA};custom-call"), 400),
            (&format!("{GA};copy"), 200),
            // Ranked by thunk time, `small` has 20 of 1420 µs, over 1%: kept, and
            // without its dump it is unknown.
            (&format!("{GA};[Unknown]"), 20),
        ])
    );
    assert!(stderr_of(&out).contains("no module records"));
}

#[test]
fn a_program_without_a_dump_goes_under_unknown() {
    let (dir, m, t, _dump) = gpu_fixture();
    let empty = dir.path().join("empty_dump");
    std::fs::create_dir(&empty).unwrap();
    let out = run(
        "njx-flamefold",
        &[
            "--by",
            "source",
            "--unit",
            "us",
            &m,
            &t,
            "--hlo",
            empty.to_str().unwrap(),
        ],
        b"",
    );
    assert!(out.status.success());
    let got = folded(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(got[&format!("{GA};[Unknown]")], 1400);
    assert!(
        stderr_of(&out).contains("no HLO dump of program"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn gpu_modes_need_the_dumps() {
    let (_dir, m, t, _dump) = gpu_fixture();
    let out = run("njx-flamefold", &["--by", "source", &m, &t], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("--hlo"));
    let out = run(
        "njx-flamefold",
        &["--by", "module", "--top-modules", "0", &m],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn gpu_modes_refuse_other_text() {
    let dir = tempdir();
    let csv = write(dir.path(), "trace.csv", COMPILE_CSV.as_bytes());
    let out = run("njx-flamefold", &["--by", "module", &csv], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert!(
        err.contains("trace.csv") && err.contains("not modules|thunks records"),
        "{err}"
    );
}

#[test]
fn a_corrupt_dump_is_an_error_naming_it() {
    let (dir, m, t, _) = gpu_fixture();
    let bad = dir.path().join("bad_dump");
    write(
        &bad,
        "module_0003.jit_f.sm_8.0_gpu_after_optimizations.hlo.pb",
        &hlo_dump()[..40],
    );
    let out = run(
        "njx-flamefold",
        &["--by", "source", &m, &t, "--hlo", bad.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("module_0003.jit_f.sm_8.0_gpu_after_optimizations.hlo.pb"),
        "{}",
        stderr_of(&out)
    );
}

// ---------------------------------------------------------------- SVG and diff

#[test]
fn svg_is_drawn_with_title_and_width() {
    let (_dir, m, t, dump) = gpu_fixture();
    let svg_dir = tempdir();
    let svg = svg_dir.path().join("f.svg");
    let svg_path = svg.to_str().unwrap();
    let out = run(
        "njx-flamefold",
        &[
            "--by", "source", &m, &t, "--hlo", &dump, "--svg", svg_path, "--title", "My run",
            "--width", "900",
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        out.stdout.is_empty(),
        "the SVG replaces stdout unless -o is named"
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<?xml") && text.contains("<svg"));
    assert!(text.contains("My run"));
    assert!(text.contains(r#"width="900""#));
    // Python frames labelled function first (--full-names: as they are).
    assert!(text.contains("f (model.py:5:3)") && !text.contains("model.py:5:3[f]"));
    assert!(
        text.contains("GPU idle left out: "),
        "idle left out, and said"
    );
    assert!(!text.contains("<title>[GPU idle"));
}

#[test]
fn diff_pairs_two_folded_files() {
    let dir = tempdir();
    let a = write(dir.path(), "a.folded", b"x;y 10\nx 5\nz 1\n");
    let b = write(dir.path(), "b.folded", b"x;y 30\nw 2\n\n");
    let out = ok("njx-flamefold", &["--diff", &a, &b]);
    assert_eq!(out, "w 0 2\nx 5 0\nx;y 10 30\nz 1 0\n");
    // Normalised: 16 before scaled to the 32 after.
    let out = ok("njx-flamefold", &["--diff", &a, &b, "--normalize"]);
    assert_eq!(out, "w 0 2\nx 10 0\nx;y 20 30\nz 2 0\n");
    // Counts with decimals (flamegraph.pl's input may have them): each side whole,
    // adding up to its total (issue 32: each rounded on its own, 1.5 became 3).
    let c = write(dir.path(), "c.folded", b"x 0.5\ny 0.5\nz 0.5\n");
    let d = write(dir.path(), "d.folded", b"x 1.4\ny 1.3\n");
    let out = ok("njx-flamefold", &["--diff", &c, &d]);
    assert_eq!(out, "x 1 2\ny 1 1\nz 0 0\n");
    // A differential SVG.
    let svg = dir.path().join("d.svg");
    ok(
        "njx-flamefold",
        &["--diff", &a, &b, "--svg", svg.to_str().unwrap()],
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<svg") && text.contains("red: more time after than before"));
}

#[test]
fn a_bad_folded_line_is_an_error_naming_the_line() {
    let dir = tempdir();
    let a = write(dir.path(), "a.folded", b"x;y 10\nno count here\n");
    let b = write(dir.path(), "b.folded", b"x 1\n");
    let out = run("njx-flamefold", &["--diff", &a, &b], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("a.folded:2"),
        "{}",
        stderr_of(&out)
    );
    let out = run("njx-flamefold", &["--diff", &a, &b, &a], b"");
    assert_eq!(out.status.code(), Some(2));
}

/// Folded stacks are input too: filtered output drawn (`grep -v idle | njx-flamefold
/// --svg`), whole counts kept as read (decimals rounded keeping the total), files of
/// stacks summed; mixed with
/// ranges, refused; other tools say what they were given.
#[test]
fn folded_stacks_are_read_back_and_drawn() {
    let (dir, m, t, dump) = gpu_fixture();
    let source = run(
        "njx-flamefold",
        &["--by", "source", &m, &t, "--hlo", &dump, "--unit", "us"],
        b"",
    );
    assert!(source.status.success(), "{}", stderr_of(&source));
    let text = String::from_utf8(source.stdout).unwrap();
    assert!(text.contains("[GPU idle"));
    // Read back unchanged: every stack, its count as written (us, with decimals).
    let again = run("njx-flamefold", &[], text.as_bytes());
    assert!(again.status.success(), "{}", stderr_of(&again));
    assert_eq!(String::from_utf8(again.stdout).unwrap(), text);
    // Filtered and drawn from stdin.
    let active: String = text
        .lines()
        .filter(|l| !l.contains("idle"))
        .map(|l| format!("{l}\n"))
        .collect();
    let svg = dir.path().join("active.svg");
    let drawn = run(
        "njx-flamefold",
        &["--svg", svg.to_str().unwrap(), "--unit", "us"],
        active.as_bytes(),
    );
    assert!(drawn.status.success(), "{}", stderr_of(&drawn));
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.contains("<title>[GPU active]") && svg_text.contains(" us"));
    // Two files of stacks add up, in any count format.
    let a = write(dir.path(), "a.folded", b"x;y 1.5\nx 2\n");
    let b = write(dir.path(), "b.folded", b"x;y 0.25\n");
    // Written whole (issue 32), adding up to the total: 3.75 → 4.
    assert_eq!(ok("njx-flamefold", &[&a, &b]), "x 2\nx;y 2\n");
    // With range records: refused, naming both.
    let csv = write(dir.path(), "trace.csv", COMPILE_CSV.as_bytes());
    let out = run("njx-flamefold", &[&a, &csv], b"");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert!(
        err.contains("a.folded holds folded stacks") && err.contains("trace.csv"),
        "{err}"
    );
    // A range tool and a GPU mode say what they were given.
    let out = run("njx-ranges", &[], text.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("this is folded stacks (njx-flamefold output)"),
        "{}",
        stderr_of(&out)
    );
    let out = run("njx-flamefold", &["--by", "module", &a], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("this is folded stacks"),
        "{}",
        stderr_of(&out)
    );
}

/// The SVG leaves GPU idle time out unless --idle, says so, and colours by meaning.
#[test]
fn svg_leaves_idle_out_and_colours_by_meaning() {
    let dir = tempdir();
    let input = b"[GPU active];all-reduce-start 30\n[GPU active];fusion.1 10\n\
[GPU active];main.py:3[f] 5\n[GPU idle between module executions] 55\n";
    let svg = dir.path().join("a.svg");
    let svg = svg.to_str().unwrap();
    ok_with("njx-flamefold", &["--svg", svg], input);
    let text = std::fs::read_to_string(svg).unwrap();
    assert!(
        text.contains("GPU idle left out: 55.0% of all time (--idle draws it)"),
        "{text}"
    );
    assert!(!text.contains("<title>[GPU idle"));
    let fill = |name: &str| fill_of(&text, name);
    let (r, g, b) = fill("all-reduce-start");
    assert!(b > r && b > g, "communication is blue: {r},{g},{b}");
    let (r, g, b) = fill("fusion.1");
    assert!(r > g && g >= b, "compute is warm: {r},{g},{b}");
    let (r, g, b) = fill("f (main.py:3)");
    assert!(g > r && g > b, "Python is green: {r},{g},{b}");
    // --idle draws it, in grey.
    ok_with("njx-flamefold", &["--svg", svg, "--idle"], input);
    let text = std::fs::read_to_string(svg).unwrap();
    assert!(text.contains("<title>[GPU idle between module executions]"));
    // Only idle time: nothing to draw without --idle.
    let out = run(
        "njx-flamefold",
        &["--svg", svg],
        b"[GPU idle between module executions] 5\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("--idle draws them"),
        "{}",
        stderr_of(&out)
    );
}

/// The fill of the frame whose title starts `title` in an SVG inferno drew.
fn fill_of(svg: &str, title: &str) -> (u8, u8, u8) {
    let at = svg
        .find(&format!("<title>{title}"))
        .unwrap_or_else(|| panic!("{title} drawn"));
    let rest = &svg[at..];
    let f = &rest[rest.find("fill=\"rgb(").unwrap() + 10..];
    let v: Vec<u8> = f[..f.find(')').unwrap()]
        .split(',')
        .map(|x| x.trim().parse().unwrap())
        .collect();
    (v[0], v[1], v[2])
}

/// Issue 32: `--by op-name --svg` coloured `jit(_psum)` as communication and its
/// all-reduce's leaf `reduce_sum[axes=(0,)]` as compute. A frame under communication is
/// communication however it is named; the same name reached from compute stays compute.
#[test]
fn frames_under_communication_are_coloured_as_communication() {
    let proto = hlo_of(
        3,
        "jit_f",
        Some(FP),
        vec![computation(
            2,
            "main.2",
            vec![
                inst(
                    10,
                    "all-reduce-start.1",
                    "all-reduce-start",
                    metadata("jit(_psum)/reduce_sum[axes=(0,)]", 0),
                    &[],
                ),
                inst(
                    11,
                    "fusion.2",
                    "fusion",
                    metadata("jit(f)/reduce_sum[axes=(0,)]", 0),
                    &[],
                ),
            ],
        )],
    );
    let (mut modules, mut thunks) = (String::new(), String::new());
    for k in 0..3u32 {
        let start = 1_000_000 * i64::from(k);
        modules += &(json!({"profile": "r0", "program": FP, "program_id": 3, "name": "jit_f",
            "execution": k, "device": 0, "start_ns": start, "dur_ns": 500_000, "thunks": 2,
            "warmup": k == 0})
        .to_string()
            + "\n");
        for (i, (name, dur, comm)) in [
            ("all-reduce-start.1", 300_000, true),
            ("fusion.2", 100_000, false),
        ]
        .into_iter()
        .enumerate()
        {
            thunks += &(json!({"profile": "r0", "program": FP, "program_id": 3,
                "module": "jit_f", "execution": k, "device": 0, "name": name,
                "thunk_execution": 0, "start_ns": start + 300_000 * i as i64, "dur_ns": dur,
                "hidden_ns": 0, "comm": comm, "warmup": k == 0,
                "collective": comm.then_some("all-reduce"), "group_size": null,
                "message_bytes": null})
            .to_string()
                + "\n");
        }
    }
    let (dir, m, t, dump) = gpu_fixture_of(&modules, &thunks, &proto.encode_to_vec());
    let svg = dir.path().join("op.svg");
    ok(
        "njx-flamefold",
        &[
            "--by",
            "op-name",
            &m,
            &t,
            "--hlo",
            &dump,
            "--svg",
            svg.to_str().unwrap(),
        ],
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    let blue = |(r, g, b): (u8, u8, u8)| b > r && b >= g;
    let warm = |(r, g, b): (u8, u8, u8)| r > g && g >= b;
    // Two executions of steady state: 600,000 ns of the all-reduce, 200,000 of the fusion.
    for title in ["jit(_psum) (", "reduce_sum[axes=(0,)] (600,000 ns"] {
        let fill = fill_of(&text, title);
        assert!(blue(fill), "{title}: {fill:?} is not communication's blue");
    }
    for title in ["jit(f) (", "reduce_sum[axes=(0,)] (200,000 ns"] {
        let fill = fill_of(&text, title);
        assert!(
            warm(fill),
            "{title}: {fill:?} is not compute's red to yellow"
        );
    }
    // The name is shown as it is, under communication too.
    assert!(!text.contains("_[k]"), "the palette's suffix is not shown");
}

/// A table for people, or an nsys stats report of another kind, given to a range tool:
/// said for what it is.
#[test]
fn other_tables_are_named_for_what_they_are() {
    let out = run(
        "njx-ranges",
        &[],
        b"Time (%),Total Time (ns),Instances,Avg (ns),Name\n50.0,100,2,50,kernel\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert!(
        err.contains("-:1: not range records or an NVTX table: this is a CSV of an nsys stats report other than nvtx_pushpop_trace")
            && err.contains("nsys stats --report nvtx_pushpop_trace --format csv"),
        "{err}"
    );
    let out = run(
        "njx-compile-summary",
        &[],
        b"compilation      wall ms\nXlaCompile  12.5\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("a table for people?"),
        "{}",
        stderr_of(&out)
    );
    // A report piped: nsys exports reports from files.
    let out = run(
        "njx-export",
        &[],
        b"NVIDIA Tegra Profiler Report\0\x01\x02 binary",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out)
            .contains("-: an .nsys-rep report: nsys exports it from a file, name the file"),
        "{}",
        stderr_of(&out)
    );
}

// ---------------------------------------------------------------- real profiles

/// The compile ranges of proc0 fold to its 17 compilations' wall time, 69,388.405 ms
/// (nsys-jax's compile total for it), to the nanosecond.
#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn pax_compile_stacks_total_the_compile_wall_time() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let proc0 = &pax_archives(&dir)[0];
    let ranges = ok("njx-export", &[proc0]);
    let prepared = run("njx-ranges", &["--xla-compile"], ranges.as_bytes());
    let out = run("njx-flamefold", &[], &prepared.stdout);
    assert!(out.status.success());
    let got = folded(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(got.values().sum::<u64>(), 69_388_404_880);
    assert!(got.keys().all(|s| s.starts_with("XlaCompile:#")));
    // The compilations keep their names but for the domain (17 compilations, 12 names:
    // jit_reshape and others compiled again carry no program id), their steps are named
    // as njx-compile-summary names them.
    let roots: std::collections::BTreeSet<&str> =
        got.keys().map(|s| s.split(';').next().unwrap()).collect();
    assert_eq!(roots.len(), 12, "{roots:?}");
    assert!(
        got.keys()
            .any(|s| s.ends_with(";XlaPass:#name=priority-fusion#")),
        "cleaned pass names"
    );
    for stack in got.keys() {
        assert!(
            stack.split(';').skip(1).all(|f| !f.starts_with("TSL:")
                && !f.contains("module=")
                && !f.contains("program_id=")),
            "{stack}"
        );
    }
}

fn total_under(stacks: &BTreeMap<String, u64>, root: &str) -> u64 {
    stacks
        .iter()
        .filter(|(s, _)| s.split(';').next() == Some(root))
        .map(|(_, c)| c)
        .sum()
}

/// Every GPU mode of the four archives divides the same time: the steady-state thunk
/// time of the programs covering 99% of module time, worked out here from the exported
/// records, and the same idle stacks.
#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn pax_gpu_modes_agree_with_the_exported_records() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let archives = pax_archives(&dir);
    let mut args: Vec<&str> = vec!["--table", "modules"];
    args.extend(archives.iter().map(String::as_str));
    let modules = json_lines(&ok("njx-export", &args));
    args[1] = "thunks";
    let thunks = json_lines(&ok("njx-export", &args));
    // Programs by steady module time, kept while under 99%.
    let mut per_program: BTreeMap<String, i64> = BTreeMap::new();
    for m in modules
        .iter()
        .filter(|m| m["warmup"] == false && m["program"] != "unknown")
    {
        *per_program
            .entry(m["program"].as_str().unwrap().into())
            .or_default() += m["dur_ns"].as_i64().unwrap();
    }
    let total: i64 = per_program.values().sum();
    let mut ranked: Vec<(String, i64)> = per_program.into_iter().collect();
    ranked.sort_by_key(|p| std::cmp::Reverse(p.1));
    let mut seen = 0.0;
    let mut top = Vec::new();
    for (p, ns) in ranked {
        if seen < 0.99 {
            top.push(p);
        }
        seen += ns as f64 / total as f64;
    }
    let active: i64 = thunks
        .iter()
        .filter(|t| t["warmup"] == false && top.iter().any(|p| t["program"] == p.as_str()))
        .map(|t| t["dur_ns"].as_i64().unwrap())
        .sum();
    assert_eq!(top.len(), 3);

    let scratch = tempdir();
    let t = write(
        scratch.path(),
        "thunks.jsonl",
        ok("njx-export", &args).as_bytes(),
    );
    args[1] = "modules";
    let m = write(
        scratch.path(),
        "modules.jsonl",
        ok("njx-export", &args).as_bytes(),
    );
    let mut idle = None;
    for by in ["source", "op-name", "opcode", "module", "device"] {
        // Records plus --hlo for half the modes, the archives directly for the others.
        let mut a: Vec<&str> = vec!["--by", by];
        if by == "source" || by == "module" {
            // One archive per --hlo.
            a.extend([m.as_str(), t.as_str()]);
            for archive in &archives {
                a.extend(["--hlo", archive.as_str()]);
            }
        } else {
            a.extend(archives.iter().map(String::as_str));
        }
        let got = folded(&ok("njx-flamefold", &a));
        let gpu_active: u64 = if by == "device" {
            got.iter()
                .filter(|(s, _)| s.split(';').nth(1) == Some(GA))
                .map(|(_, c)| c)
                .sum()
        } else {
            total_under(&got, GA)
        };
        // Each line is rounded to the nanosecond: a few ns per line at most.
        let lines = got.len() as i64;
        assert!(
            (gpu_active as i64 - active).abs() <= lines,
            "--by {by}: [GPU active] {gpu_active} ns, thunks {active} ns"
        );
        let idles: u64 = got
            .iter()
            .filter(|(s, _)| s.contains("[GPU idle"))
            .map(|(_, c)| c)
            .sum();
        match idle {
            None => idle = Some(idles),
            Some(i) => assert_eq!(i, idles, "--by {by}: idle time"),
        }
    }
}

/// The SVG of a real mode is drawn (inferno finds nothing to warn about in its input).
#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn pax_svg_is_drawn() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let proc0 = &pax_archives(&dir)[0];
    let out_dir = tempdir();
    let svg = out_dir.path().join("op_name.svg");
    let out = run(
        "njx-flamefold",
        &["--by", "op-name", proc0, "--svg", svg.to_str().unwrap()],
        b"",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = std::fs::read_to_string(Path::new(&svg)).unwrap();
    assert!(text.contains("GPU time by op_name") && text.contains("[GPU active]"));
}

/// `--by source`, `--by op-name` and `--by opcode` against what nsys-jax's Analysis
/// notebook computes for the same archives (`tests/data/pax-flamefold-reference.json`,
/// see its `source`): the same stacks, the same [GPU active] and idle totals, and the 20
/// largest stacks within 0.1% (found within 1e-6: each line is rounded to the ns).
#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn pax_flame_graphs_match_the_nsys_jax_notebook() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let reference: serde_json::Value =
        serde_json::from_str(include_str!("../data/pax-flamefold-reference.json")).unwrap();
    let archives = pax_archives(&dir);
    for (which, inputs) in [("combined", &archives[..]), ("proc0", &archives[..1])] {
        let r = &reference[which];
        let ms = |v: &serde_json::Value| v.as_f64().unwrap();
        for (by, key) in [("source", "src_runtime"), ("op-name", "op_name_runtime")] {
            let mut args = vec!["--by", by];
            args.extend(inputs.iter().map(String::as_str));
            let got = folded(&ok("njx-flamefold", &args));
            let got_ms = |stack: &str| got.get(stack).map(|&ns| ns as f64 / 1e6);
            assert_eq!(
                got.len() as u64,
                r[format!("{key}_stacks")].as_u64().unwrap()
            );
            let active = total_under(&got, GA) as f64 / 1e6;
            let want = ms(&r["all_thunks_active_ms"]);
            assert!(
                (active - want).abs() / want < 1e-6,
                "{which} {by}: {active} vs {want}"
            );
            let idle_inside = ms(&r["all_modules_active_ms"]) - want;
            let idle_between = ms(&r["all_modules_wall_ms"]) - ms(&r["all_modules_active_ms"]);
            for (stack, want) in [
                ("[GPU idle during module execution]", idle_inside),
                ("[GPU idle between module executions]", idle_between),
            ] {
                let got = got_ms(stack).unwrap();
                assert!(
                    (got - want).abs() < 1e-5,
                    "{which} {stack}: {got} vs {want}"
                );
            }
            for pair in r[format!("{key}_top20")].as_array().unwrap() {
                let (stack, want) = (pair[0].as_str().unwrap(), ms(&pair[1]));
                let got = got_ms(stack).unwrap_or_else(|| panic!("{which} {by}: no {stack}"));
                assert!(
                    (got - want).abs() / want < 1e-3,
                    "{which} {by}: {stack}: {got} vs {want}"
                );
            }
        }
        let mut args = vec!["--by", "opcode"];
        args.extend(inputs.iter().map(String::as_str));
        let got = folded(&ok("njx-flamefold", &args));
        for pair in r["op_runtime"].as_array().unwrap() {
            let opcode = pair[0].as_str().unwrap();
            if opcode.starts_with('_') || opcode.starts_with("GPU idle") {
                continue;
            }
            let got = got[&format!("{GA};{opcode}")] as f64 / 1e6;
            assert!((got - ms(&pair[1])).abs() < 1e-5, "{which} {opcode}");
        }
    }
}
