//! Module and thunk records from nsys SQLite exports (`njx-export --table modules|thunks
//! REPORT.sqlite --hlo DUMPS`) and from archives that hold the export (`report.sqlite`,
//! as njx-capture writes them), through the built binaries, on an XLA-like export made
//! here. Every expected figure is worked out below from the fixture's constants.

use crate::common::nsys_sqlite::*;
use crate::common::*;
use njx::hlo::proto::{
    FrontendAttributes, HloComputationProto, HloInstructionProto, HloModuleProto, HloProto,
};
use prost::Message;
use serde_json::{Value, json};
use std::path::Path;

/// `fingerprint_before_lhs` of program 3 (`jit_f`).
const FP: &str = "feedc0de00000000feedc0de00000000";
const PID: u64 = 100;
/// Launcher threads 101 (global device 0) and 102 (global device 1); 103 compiles.
const COMPILER: u64 = 103;
const EXECS: i64 = 3;

/// Start of execution `k` of jit_f on device `d`.
fn base(d: i64, k: i64) -> i64 {
    100_000 + k * 100_000 + d * 1_000
}

/// An export of one process driving two GPUs: the TSL domain; program 3's compilation on
/// the compiler thread; on each launcher thread three executions of `XlaModule jit_f`,
/// each with thunks `fusion.1` and `fusion.2`, each thunk one CUDA call launching one
/// kernel (fusion.1: +20–30 µs, fusion.2: +30–45 µs into the execution). With
/// `launcher_names` the launcher threads carry XLA's names; without, only kernels'
/// `deviceId` tells the devices.
fn export(path: &Path, launcher_names: bool) {
    let db = NsysDb::create(path);
    let pid = gpid(PID);
    db.domain(1, gtid(PID, 101), 1, "TSL");
    let text = |start: i64, end: i64, tid: u64, name: &str| {
        db.nvtx(
            PUSH_POP,
            start,
            Some(end),
            gtid(PID, tid),
            Some(name),
            None,
            1,
        );
    };
    text(
        1_000,
        50_000,
        COMPILER,
        "XlaCompileBackend:#module=jit_f,program_id=3#",
    );
    let mut corr = 0;
    for d in 0..2 {
        let tid = 101 + d as u64;
        if launcher_names {
            db.thread_name(
                gtid(PID, tid),
                1000 + d,
                &format!("XlaLauncher:#global={d},local={d},process=0,partition=0#"),
            );
        }
        for k in 0..EXECS {
            let b = base(d, k);
            text(
                b,
                b + 60_000,
                tid,
                "XlaModule:#hlo_module=jit_f,program_id=3#",
            );
            for (name, at, kernel) in [
                ("fusion.1", 1_000, (20_000, 30_000)),
                ("fusion.2", 11_000, (30_000, 45_000)),
            ] {
                text(
                    b + at,
                    b + at + 9_000,
                    tid,
                    &format!("Thunk:#hlo_op={name}#"),
                );
                corr += 1;
                db.call(b + at + 1_000, b + at + 2_000, gtid(PID, tid), corr);
                db.kernel_on(d, b + kernel.0, b + kernel.1, pid, corr);
            }
        }
    }
}

/// The after-optimizations dump of program 3: its entry runs `fusion.1` and `fusion.2`.
fn hlo_dump() -> Vec<u8> {
    let inst = |id: i64, name: &str, opcode: &str| HloInstructionProto {
        id,
        name: name.into(),
        opcode: opcode.into(),
        ..Default::default()
    };
    HloProto {
        hlo_module: Some(HloModuleProto {
            id: 3,
            name: "jit_f".into(),
            entry_computation_id: 1,
            entry_computation_name: "main.1".into(),
            computations: vec![HloComputationProto {
                id: 1,
                name: "main.1".into(),
                instructions: vec![
                    inst(1, "p0", "parameter"),
                    inst(2, "fusion.1", "fusion"),
                    inst(3, "fusion.2", "fusion"),
                ],
                root_id: 3,
                ..Default::default()
            }],
            frontend_attributes: Some(FrontendAttributes {
                map: [("fingerprint_before_lhs".to_string(), FP.to_string())].into(),
            }),
            ..Default::default()
        }),
        buffer_assignment: None,
    }
    .encode_to_vec()
}

const DUMP: &str = "module_0003.jit_f.sm_8.0_gpu_after_optimizations.hlo.pb";

/// `xla.sqlite` and an XLA dump folder `xla_dump/`, in a fresh folder.
pub(crate) fn fixture(launcher_names: bool) -> (tempfile::TempDir, String, String) {
    let dir = tempdir();
    let db = dir.path().join("xla.sqlite");
    export(&db, launcher_names);
    let dump = dir.path().join("xla_dump");
    write(&dump, DUMP, &hlo_dump());
    (
        dir,
        db.to_str().unwrap().to_string(),
        dump.to_str().unwrap().to_string(),
    )
}

/// Module records as expected: program 3's compilation was profiled and there is no
/// communication, so each device's execution 0 is warm-up; each execution spans its two
/// kernels, 20–45 µs into it.
fn expected_modules(profile: &str, program: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for d in 0..2 {
        for k in 0..EXECS {
            out.push(
                json!({"profile": profile, "program": program, "program_id": 3,
                "name": "jit_f", "execution": k, "device": d,
                "start_ns": base(d, k) + 20_000, "dur_ns": 25_000, "thunks": 2,
                "warmup": k == 0, "autotuning": false}),
            );
        }
    }
    out
}

fn expected_thunks(profile: &str, program: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for d in 0..2 {
        for k in 0..EXECS {
            for (name, start, dur) in [("fusion.1", 20_000, 10_000), ("fusion.2", 30_000, 15_000)] {
                out.push(
                    json!({"profile": profile, "program": program, "program_id": 3,
                    "module": "jit_f", "execution": k, "device": d, "name": name,
                    "thunk_execution": 0, "start_ns": base(d, k) + start, "dur_ns": dur,
                    "hidden_ns": 0, "comm": false, "warmup": k == 0, "collective": null,
                    "group_size": null, "message_bytes": null, "reconstructed": null,
                    "autotuning": false}),
                );
            }
        }
    }
    out
}

/// Records sorted by device, execution and name, for comparison.
fn sorted(mut v: Vec<Value>) -> Vec<Value> {
    v.sort_by_key(|r| {
        (
            r["device"].as_u64(),
            r["execution"].as_u64(),
            r["name"].as_str().map(str::to_string),
        )
    });
    v
}

fn export_table(args: &[&str]) -> (Vec<Value>, String) {
    let out = run("njx-export", args, b"");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "njx-export {args:?}: {err}");
    (json_lines(&String::from_utf8_lossy(&out.stdout)), err)
}

#[test]
fn modules_and_thunks_from_an_export_with_its_dumps() {
    let (_dir, db, dump) = fixture(true);
    let (modules, _) = export_table(&["--table", "modules", &db, "--hlo", &dump]);
    assert_eq!(sorted(modules), expected_modules("xla", FP));
    let (thunks, _) = export_table(&["--table", "thunks", &db, "--hlo", &dump]);
    assert_eq!(sorted(thunks), expected_thunks("xla", FP));
}

/// Without dumps a program is keyed by its id, and stderr says so.
#[test]
fn without_dumps_programs_are_keyed_by_id() {
    let (_dir, db, _dump) = fixture(true);
    let (modules, err) = export_table(&["--table", "modules", &db]);
    assert_eq!(sorted(modules), expected_modules("xla", "3"));
    assert!(err.contains("no HLO dump"), "{err}");
}

/// Without XlaLauncher thread names the kernels' deviceId gives the devices.
#[test]
fn without_launcher_names_devices_come_from_the_kernels() {
    let (_dir, db, dump) = fixture(false);
    let (modules, err) = export_table(&["--table", "modules", &db, "--hlo", &dump]);
    assert_eq!(sorted(modules), expected_modules("xla", FP));
    assert!(err.contains("no XlaLauncher thread names"), "{err}");
}

/// An archive holding `report.sqlite` and `dump/…hlo.pb.xz` (njx-capture's layout) gives
/// the same records under the archive's name, and its ranges and GPU ranges; the tools
/// downstream read it directly.
#[test]
fn an_archive_with_the_export_and_dumps() {
    let (dir, db, _dump) = fixture(true);
    let sqlite = std::fs::read(&db).unwrap();
    let dump = xz(&hlo_dump());
    let member = format!("dump/{DUMP}.xz");
    let archive = write(
        dir.path(),
        "run1.zip",
        &zip(
            &[("report.sqlite", &sqlite[..]), (&member, &dump[..])],
            false,
        ),
    );
    let (modules, _) = export_table(&["--table", "modules", &archive]);
    assert_eq!(sorted(modules), expected_modules("run1", FP));
    let (thunks, _) = export_table(&["--table", "thunks", &archive]);
    assert_eq!(sorted(thunks), expected_thunks("run1", FP));
    // 1 compile range + 2 devices × 3 executions × (module + 2 thunks).
    let (ranges, _) = export_table(&[&archive]);
    assert_eq!(ranges.len(), 1 + 2 * 3 * 3);
    assert!(ranges.iter().all(|r| r["profile"] == "run1"));
    let (gpu, _) = export_table(&["--table", "gpu-ranges", &archive]);
    assert_eq!(
        gpu.len(),
        2 * 3 * 3,
        "every module and thunk range launched work"
    );
    // njx-modules reads the archive itself: two steady executions per device.
    let summary = json_lines(&ok("njx-modules", &["--format", "json", &archive]));
    assert_eq!(summary.len(), 1);
    assert_eq!(summary[0]["program"], FP);
    assert_eq!(summary[0]["executions"], 4);
}

#[test]
fn an_archive_without_any_table_is_an_error_naming_both() {
    let dir = tempdir();
    let archive = write(dir.path(), "empty.zip", &zip(&[("notes.txt", b"x")], true));
    let out = run("njx-export", &["--table", "modules", &archive], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("report.sqlite") && err.contains("trace.parquet"),
        "{err}"
    );
}
