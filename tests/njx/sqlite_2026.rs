//! Module and thunk records from an nsys SQLite export in the layout of XLA since 2026,
//! through the built binaries. No public export of this layout exists; the fixture is
//! built from what XLA's own code emits:
//!
//! - range names from openxla/xla `xla/backends/gpu/runtime/annotation.cc`
//!   (`XlaModule:#hlo_module=NAME,program_id=N#`; `MakeInstructionTitle`:
//!   `Thunk:#[name=OP_NAME,]hlo_op=INST,unique_hlo_op_id=N#`, N the instruction's unique
//!   id, above 2^32 in real profiles, e.g. 4294967297), pushed in XLA's `TSL` domain;
//! - collectives as generic `async-start` wrappers (openxla/xla 9f86ee60df; `async_thunk.cc`:
//!   `AsyncStartThunk` runs the nested collective thunk on the same host thread, so its
//!   range is inside the wrapper's), or without the wrapper where thunk passes dropped it;
//! - NCCL's own `ncclGroupEnd` range (NVIDIA/nccl `src/group.cc`, `NVTX3_FUNC_RANGE_IN`,
//!   domain `NCCL`) around the collective kernel's launch, and communication seen only
//!   there (NVIDIA/JAX-Toolbox PR #2296);
//! - a command-buffer module: one `cudaGraphLaunch` whose correlation id the graph's
//!   kernels share (nsys `--cuda-graph-trace=node`), no thunk ranges inside.
//!
//! Every expected figure is worked out from the fixture's constants.

use crate::common::nsys_sqlite::*;
use crate::common::*;
use njx::hlo::proto::{
    HloComputationProto, HloInstructionProto, HloScheduleProto, ReplicaGroup,
    hlo_schedule_proto::InstructionSequence,
};
use prost::Message;
use serde_json::{Value, json};
use std::path::Path;

const PID: u64 = 200;
const TID: u64 = 201;
/// XLA's unique ids: the computation's id in the high 32 bits.
const FUSION_ID: i64 = (1 << 32) + 1;
const ASYNC_ID: i64 = (1 << 32) + 2;
const PARAM_ID: i64 = 2 << 32;
const ALL_REDUCE_ID: i64 = (2 << 32) + 1;
const DONE_ID: i64 = (1 << 32) + 3;
const FP5: &str = "aaaa0000bbbb1111cccc2222dddd3333";
const FP6: &str = "eeee4444ffff5555000066667777aaaa";

/// Start of execution `k` of jit_step.
fn base(k: i64) -> i64 {
    1_000_000 + k * 1_000_000
}

/// One process, one GPU: three executions of `jit_step` (program 5), each `fusion.1`
/// (+100–300 µs) then an all-reduce (+400–700 µs): in execution 0 inside an `async-start`
/// thunk, in 1 without it, in 2 only as `NCCL:ncclGroupEnd`; then one execution of the
/// command-buffer module `jit_cb` (program 6) at 5 ms, three graph kernels of one
/// `cudaGraphLaunch`, no thunk ranges.
fn export(path: &Path) {
    let db = NsysDb::create(path);
    let (pid, tid) = (gpid(PID), gtid(PID, TID));
    db.domain(1, tid, 1, "TSL");
    db.domain(2, tid, 2, "NCCL");
    db.thread_name(
        tid,
        1000,
        "XlaLauncher:#global=0,local=0,process=0,partition=0#",
    );
    let range = |start: i64, end: i64, domain: i64, name: &str| {
        db.nvtx(PUSH_POP, start, Some(end), tid, Some(name), None, domain);
    };
    let mut corr = 0;
    let mut launch = |at: i64, kernels: &[(i64, i64)]| {
        corr += 1;
        db.call(at, at + 1_000, tid, corr);
        for &(s, e) in kernels {
            db.kernel_on(0, s, e, pid, corr);
        }
    };
    let fusion = format!("Thunk:#name=jit(step)/mul,hlo_op=fusion.1,unique_hlo_op_id={FUSION_ID}#");
    let wrapper = format!("Thunk:#hlo_op=async-start.2,unique_hlo_op_id={ASYNC_ID}#");
    let all_reduce = format!("Thunk:#hlo_op=all-reduce.1,unique_hlo_op_id={ALL_REDUCE_ID}#");
    for k in 0..3 {
        let b = base(k);
        range(
            b,
            b + 900_000,
            1,
            "XlaModule:#hlo_module=jit_step,program_id=5#",
        );
        range(b + 10_000, b + 20_000, 1, &fusion);
        launch(b + 11_000, &[(b + 100_000, b + 300_000)]);
        let (at, end) = (b + 30_000, b + 40_000);
        match k {
            0 => {
                range(at, end, 1, &wrapper);
                range(at + 1_000, end - 1_000, 1, &all_reduce);
                range(at + 2_000, end - 2_000, 2, "ncclGroupEnd");
            }
            1 => {
                range(at + 1_000, end - 1_000, 1, &all_reduce);
                range(at + 2_000, end - 2_000, 2, "ncclGroupEnd");
            }
            _ => range(at + 2_000, end - 2_000, 2, "ncclGroupEnd"),
        }
        launch(at + 3_000, &[(b + 400_000, b + 700_000)]);
    }
    let b = 5_000_000;
    range(
        b,
        b + 100_000,
        1,
        "XlaModule:#hlo_module=jit_cb,program_id=6#",
    );
    launch(
        b + 1_000,
        &[
            (b + 10_000, b + 20_000),
            (b + 20_000, b + 30_000),
            (b + 30_000, b + 50_000),
        ],
    );
}

fn inst(id: i64, name: &str, opcode: &str, calls: &[i64]) -> HloInstructionProto {
    HloInstructionProto {
        id,
        name: name.into(),
        opcode: opcode.into(),
        shape: Some(f32s(&[1024])),
        called_computation_ids: calls.to_vec(),
        ..Default::default()
    }
}

/// The after-optimizations dump of `id`: its entry (computation 1) and schedule.
fn dump(id: i64, name: &str, fp: &str, computations: Vec<HloComputationProto>) -> Vec<u8> {
    let entry = computations.last().expect("an entry");
    let sequences = [(
        entry.id,
        InstructionSequence {
            instruction_ids: entry.instructions.iter().map(|i| i.id).collect(),
        },
    )]
    .into();
    let mut proto = hlo_of(id, name, Some(fp), computations);
    proto.hlo_module.as_mut().expect("a module").schedule = Some(HloScheduleProto { sequences });
    proto.encode_to_vec()
}

/// Program 5: `fusion.1`, then `async-start.2` wrapping `all-reduce.1` over devices {0, 1}
/// (f32[1024]: 4096 bytes), then `async-done.3`. Program 6: one fusion.
fn dumps(dir: &Path) -> String {
    let mut ar = inst(ALL_REDUCE_ID, "all-reduce.1", "all-reduce", &[]);
    ar.replica_groups = vec![ReplicaGroup {
        replica_ids: vec![0, 1],
    }];
    ar.operand_ids = vec![PARAM_ID];
    let step = dump(
        5,
        "jit_step",
        FP5,
        vec![
            computation(
                2,
                "async_computation",
                vec![inst(PARAM_ID, "param.1", "parameter", &[]), ar],
            ),
            computation(
                1,
                "main.1",
                vec![
                    inst(FUSION_ID, "fusion.1", "fusion", &[]),
                    inst(ASYNC_ID, "async-start.2", "async-start", &[2]),
                    inst(DONE_ID, "async-done.3", "async-done", &[]),
                ],
            ),
        ],
    );
    let cb = dump(
        6,
        "jit_cb",
        FP6,
        vec![computation(
            1,
            "main.1",
            vec![inst(1, "fusion.9", "fusion", &[])],
        )],
    );
    let out = dir.join("xla_dump");
    write(
        &out,
        "module_0005.jit_step.sm_9.0_gpu_after_optimizations.hlo.pb",
        &step,
    );
    write(
        &out,
        "module_0006.jit_cb.sm_9.0_gpu_after_optimizations.hlo.pb",
        &cb,
    );
    out.to_str().expect("utf-8").to_string()
}

fn export_table(table: &str, db: &str, hlo: &str) -> (Vec<Value>, String) {
    let out = run("njx-export", &["--table", table, db, "--hlo", hlo], b"");
    let err = stderr_of(&out);
    assert!(out.status.success(), "njx-export --table {table}: {err}");
    (json_lines(&String::from_utf8_lossy(&out.stdout)), err)
}

#[test]
fn an_export_of_the_2026_layout_is_read_whole() {
    let dir = tempdir();
    let db = dir.path().join("xla2026.sqlite");
    export(&db);
    let db = db.to_str().unwrap().to_string();
    let hlo = dumps(dir.path());

    let (modules, _) = export_table("modules", &db, &hlo);
    let got: Vec<Value> = modules
        .iter()
        .map(|m| {
            json!([
                m["name"],
                m["program"],
                m["execution"],
                m["start_ns"],
                m["dur_ns"],
                m["thunks"]
            ])
        })
        .collect();
    let mut want = Vec::new();
    for k in 0..3 {
        want.push(json!(["jit_step", FP5, k, base(k) + 100_000, 600_000, 2]));
    }
    // The command buffer: a module execution spanning its graph's kernels, no thunks.
    want.push(json!(["jit_cb", FP6, 0, 5_010_000, 40_000, 0]));
    assert_eq!(got, want);

    let (thunks, stderr) = export_table("thunks", &db, &hlo);
    let got: Vec<Value> = thunks
        .iter()
        .map(|t| {
            json!([
                t["execution"],
                t["name"],
                t["start_ns"],
                t["dur_ns"],
                t["comm"],
                t["collective"],
                t["group_size"],
                t["message_bytes"],
                t["reconstructed"]
            ])
        })
        .collect();
    let mut want = Vec::new();
    for k in 0..3 {
        let b = base(k);
        want.push(json!([
            k,
            "fusion.1",
            b + 100_000,
            200_000,
            false,
            null,
            null,
            null,
            null
        ]));
        // The wrapper is left for the collective inside it; in execution 2 only NCCL's
        // range shows it, named from the schedule.
        let how = if k == 2 { json!("nccl") } else { Value::Null };
        want.push(json!([
            k,
            "all-reduce.1",
            b + 400_000,
            300_000,
            true,
            "all-reduce",
            2,
            4096,
            how
        ]));
    }
    assert_eq!(got, want);
    assert!(
        stderr.contains("1 collectives had no thunk range, only an NCCL range"),
        "{stderr}"
    );
    assert!(!stderr.contains("left out"), "{stderr}");
}

#[test]
fn without_dumps_nccl_only_communication_is_left_out_and_said() {
    let dir = tempdir();
    let db = dir.path().join("xla2026.sqlite");
    export(&db);
    let out = run(
        "njx-export",
        &["--table", "thunks", db.to_str().unwrap()],
        b"",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let thunks = json_lines(&String::from_utf8_lossy(&out.stdout));
    // Without the schedule the NCCL range cannot be named: execution 2 has fusion.1 only.
    assert_eq!(thunks.iter().filter(|t| t["execution"] == 2).count(), 1);
    let stderr = stderr_of(&out);
    assert!(
        stderr.contains(
            "left out 1 NCCL ranges outside thunks in executions of jit_step: they cannot be \
             matched to its collectives, there is no HLO dump of the program"
        ),
        "{stderr}"
    );
}

/// XLA's structured payload schemas (openxla/xla PR #46486; the table as nsys 2026.2.1
/// exports it, `../shared/data/pytorch_nsys2026_sqlite/h100_2gpu_1s.sqlite`, where NCCL's
/// schemas are unnamed): the XLA tools do not use the payloads (their text is NVTX string
/// handles), and say where they are decoded rather than leave them aside silently.
#[test]
fn xla_payload_schemas_are_said_to_be_read_elsewhere() {
    let dir = tempdir();
    let path = dir.path().join("xla2026.sqlite");
    export(&path);
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute(
        "CREATE TABLE NVTX_PAYLOAD_SCHEMAS (domainId INTEGER, schemaId INTEGER, name TEXT, \
         type INTEGER, flags INTEGER, numEntries INTEGER, payloadSize INTEGER, \
         alignTo INTEGER)",
        [],
    )
    .unwrap();
    for (id, name) in [
        (4294967296_i64, Some("XlaModule")),
        (4294967297, Some("XlaInstruction")),
        (4294967298, Some("XlaCollectiveDetailed")),
        (16777220, None),
    ] {
        db.execute(
            "INSERT INTO NVTX_PAYLOAD_SCHEMAS (domainId, schemaId, name, type) VALUES (1, ?1, ?2, 1)",
            rusqlite::params![id, name],
        )
        .unwrap();
    }
    drop(db);
    let hlo = dumps(dir.path());
    let (thunks, stderr) = export_table("thunks", path.to_str().unwrap(), &hlo);
    assert_eq!(thunks.len(), 6);
    assert!(
        stderr.contains(
            "holds XLA's structured NVTX payloads (schemas XlaCollectiveDetailed, \
             XlaInstruction, XlaModule): `njx-export --table payloads` decodes them"
        ),
        "{stderr}"
    );
}
