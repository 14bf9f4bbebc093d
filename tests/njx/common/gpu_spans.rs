//! Two ranks of an XLA program as the GPU projection sees them: the ranges of
//! `jit_step`'s executions, its thunks, an all-reduce under an NCCL range, a command
//! buffer, autotuning executions, with rank 1's clock 5 ms ahead. The fixture of
//! `modules_archive.rs` (which checks the records derived from it) and a seed of the fuzz
//! harness.

use super::{
    computation, f32s, instruction as inst, parquet_table, pq_double, pq_int, pq_int32, pq_text,
};
use njx::hlo::proto::{
    FrontendAttributes, HloInstructionProto, HloModuleProto, HloProto, OpMetadata, ReplicaGroup,
};

/// `fingerprint_before_lhs` of program 7 (`jit_step`): its key on every rank.
pub const FP: &str = "5d41402abc4b2a76b9719d911017c592";
/// Its after-optimizations dump in an nsys-jax archive.
pub const DUMP: &str = "dump/module_0007.jit_step.sm_8.0_gpu_after_optimizations.hlo.pb.xz";

pub const STEP: &str = "TSL:XlaModule:#hlo_module=jit_step,program_id=7#";
/// An autotuning execution: no program id, so program `unknown`.
pub const AUTOTUNE: &str = "TSL:XlaModule:#hlo_module=extracted#";

/// Rank 1's clock runs this far ahead of rank 0's: every time in its tables is later.
pub const OFFSET: i64 = 5_000_000;
/// Steady executions of jit_step per rank (a fifth one is cut short by the capture).
pub const EXECS: usize = 4;
/// Module durations per rank and execution.
pub const MODULE_DUR: [[i64; EXECS]; 2] = [
    [1_000_000, 1_100_000, 1_050_000, 1_200_000],
    [1_000_000, 1_150_000, 1_250_000, 1_100_000],
];
/// GPU operations of the five executions of jit_step: the last is far below
/// mean − std of the others (11 − 1), so it was cut short.
pub const MODULE_OPS: [i64; EXECS + 1] = [10, 12, 10, 12, 3];
/// Duration of `all-reduce-start.1` per rank and execution. It starts 300 µs into the
/// module on both ranks, so its end differs between devices by (rank 1 − rank 0):
/// −60, +40, 0, +80 µs, on top of the 5 ms clock offset.
pub const ALL_REDUCE_DUR: [[i64; EXECS]; 2] = [
    [260_000, 200_000, 220_000, 200_000],
    [200_000, 240_000, 220_000, 280_000],
];

/// The two autotuning executions per rank: (start, duration), on a compiler thread.
pub const AUTOTUNE_RUNS: [(i64, i64); 2] = [(3_000_000, 300_000), (3_500_000, 250_000)];

pub fn pid(rank: usize) -> i64 {
    4100 + 100 * rank as i64
}

/// Start of execution `k` of jit_step on rank 0's clock.
pub fn base(k: usize) -> i64 {
    10_000_000 + 2_000_000 * k as i64
}

/// One NVTX range projected onto the GPU.
pub struct Span {
    pub id: i64,
    pub parent: Option<i64>,
    pub tid: i64,
    pub name: String,
    pub start: i64,
    pub dur: i64,
    pub ops: i64,
}

/// The projected ranges of one rank, in time order (range ids in that order):
///
/// - a thunk that starts before the first module (an edge effect, to be ignored);
/// - two autotuning executions of `extracted`, each with one thunk, on thread pid+1;
/// - four executions of jit_step on the main thread (tid = pid), each with `fusion.1`,
///   an `NCCL:ncclAllReduce` range whose child is the thunk `all-reduce-start.1` (to be
///   re-parented to the module), and a command buffer thunk around `fusion.2` (only the
///   inner one is kept);
/// - a fifth execution of jit_step with few GPU operations (cut short, to be dropped).
pub fn spans(rank: usize) -> Vec<Span> {
    let (p, o) = (pid(rank), rank as i64 * OFFSET);
    let mut v: Vec<Span> = Vec::new();
    let mut add = |parent: Option<i64>, tid: i64, name: &str, start: i64, dur: i64, ops: i64| {
        let id = v.len() as i64 + 1;
        v.push(Span {
            id,
            parent,
            tid,
            name: name.to_string(),
            start,
            dur,
            ops,
        });
        id
    };
    add(
        None,
        p,
        "TSL:Thunk:#hlo_op=fusion.0#",
        o + 1_000_000,
        200_000,
        1,
    );
    for (s, d) in AUTOTUNE_RUNS {
        let m = add(None, p + 1, AUTOTUNE, o + s, d, 1);
        add(
            Some(m),
            p + 1,
            "TSL:Thunk:#hlo_op=fusion#",
            o + s + 50_000,
            d - 100_000,
            1,
        );
    }
    for k in 0..=EXECS {
        let b = o + base(k);
        if k == EXECS {
            let m = add(None, p, STEP, b, 200_000, MODULE_OPS[k]);
            add(
                Some(m),
                p,
                "TSL:Thunk:#hlo_op=fusion.1#",
                b + 100_000,
                50_000,
                1,
            );
            continue;
        }
        let m = add(None, p, STEP, b, MODULE_DUR[rank][k], MODULE_OPS[k]);
        add(
            Some(m),
            p,
            "TSL:Thunk:#hlo_op=fusion.1#",
            b + 100_000,
            300_000,
            4,
        );
        let ar = ALL_REDUCE_DUR[rank][k];
        let nccl = add(Some(m), p, "NCCL:ncclAllReduce", b + 300_000, ar, 1);
        add(
            Some(nccl),
            p,
            "TSL:Thunk:#hlo_op=all-reduce-start.1#",
            b + 300_000,
            ar,
            1,
        );
        let cmd = add(
            Some(m),
            p,
            "TSL:Thunk:#name=cmd,hlo_op=command_buffer#",
            b + 450_000,
            450_000,
            5,
        );
        add(
            Some(cmd),
            p,
            "TSL:Thunk:#hlo_op=fusion.2#",
            b + 700_000,
            150_000,
            5,
        );
    }
    v
}

/// The first form of the table as pandas wrote it: the row of GPU work outside any range
/// first (no Name, RangeId, Lvl, ParentId or Orig times), doubles where values can be
/// missing (`Orig *`, `Lvl`, `RangeId`, `ParentId`).
pub fn gpu_proj_trace(rank: usize) -> Vec<u8> {
    let spans = spans(rank);
    let by_id = |id: i64| spans.iter().find(|s| s.id == id).expect("parent exists");
    let stack = |s: &Span| -> Vec<i64> {
        let mut ids = vec![s.id];
        let mut parent = s.parent;
        while let Some(p) = parent {
            ids.insert(0, p);
            parent = by_id(p).parent;
        }
        ids
    };
    let stacks: Vec<String> = spans
        .iter()
        .map(|s| stack(s).iter().map(|i| format!(":{i}")).collect())
        .collect();
    let outside_start = rank as i64 * OFFSET;
    let ints = |outside: i64, f: &dyn Fn(&Span) -> i64| -> Vec<Option<i64>> {
        std::iter::once(Some(outside))
            .chain(spans.iter().map(|s| Some(f(s))))
            .collect()
    };
    let doubles = |f: &dyn Fn(&Span) -> Option<f64>| -> Vec<Option<f64>> {
        std::iter::once(None).chain(spans.iter().map(f)).collect()
    };
    let texts = |f: &dyn Fn(usize, &Span) -> String| -> Vec<Option<String>> {
        std::iter::once(None)
            .chain(spans.iter().enumerate().map(|(i, s)| Some(f(i, s))))
            .collect()
    };
    let names = texts(&|_, s| s.name.clone());
    let styles = texts(&|_, _| "PushPop".to_string());
    let range_stacks = texts(&|i, _| stacks[i].clone());
    let n = spans.len() + 1;
    parquet_table(
        &[
            pq_text("Name", &borrow(&names)),
            pq_int("Projected Start", &ints(outside_start, &|s| s.start)),
            pq_int("Projected Duration", &ints(30_000_000, &|s| s.dur)),
            pq_double(
                "Orig Start",
                &doubles(&|s| Some((s.start - 400_000) as f64)),
            ),
            pq_double("Orig Duration", &doubles(&|s| Some((s.dur / 10) as f64))),
            pq_text("Style", &borrow(&styles)),
            pq_int("PID", &vec![Some(pid(rank)); n]),
            pq_int("TID", &ints(pid(rank), &|s| s.tid)),
            pq_int("NumGPUOps", &ints(400, &|s| s.ops)),
            pq_double("Lvl", &doubles(&|s| Some((stack(s).len() - 1) as f64))),
            pq_int(
                "NumChild",
                &ints(0, &|s| {
                    spans.iter().filter(|c| c.parent == Some(s.id)).count() as i64
                }),
            ),
            pq_double("RangeId", &doubles(&|s| Some(s.id as f64))),
            pq_double("ParentId", &doubles(&|s| s.parent.map(|p| p as f64))),
            pq_text("RangeStack", &borrow(&range_stacks)),
            pq_int("Rank", &vec![Some(rank as i64); n]),
        ],
        1 << 20,
    )
}

/// Thread names of one rank: the main thread (which runs jit_step, as a process driving
/// one GPU does), a compiler thread (the autotuning executions), the idle launcher thread
/// that names the device, and an unrelated thread.
pub fn thread_metadata(rank: usize) -> Vec<u8> {
    let p = pid(rank);
    let launcher = format!("XlaLauncher:#global={rank},local=0,process={rank},slice=0#");
    let names = [
        "python3",
        "tf_XLAEigen",
        launcher.as_str(),
        "cuda-EvtHandlr",
    ];
    parquet_table(
        &[
            pq_text("Name", &names.map(Some)),
            pq_int("PID", &[Some(p); 4]),
            pq_int("TID", &[Some(p), Some(p + 1), Some(p + 2), Some(p + 3)]),
            pq_int32("Priority", &[Some(0), Some(0), Some(0), Some(-2)]),
        ],
        1 << 20,
    )
}

/// The cells of an owned text column, borrowed for [`pq_text`].
fn borrow(v: &[Option<String>]) -> Vec<Option<&str>> {
    v.iter().map(Option::as_deref).collect()
}

/// The after-optimizations HloProto of program 7 (`jit_step`), fingerprint [`FP`]: the
/// entry computation runs `fusion.1`, the all-reduce of its f32[1024] result over the
/// group {0,1} (`all-reduce-start.1` / `all-reduce-done.1`) and `fusion.2`; with
/// `scheduling`, as XLA with `OpMetadata.scheduling_name` writes it:
/// `fusion.1` scheduled under its own name, `fusion.2` under `fusion.7` (renamed after
/// scheduling), `all-reduce-start.1` without one.
/// Without `fingerprint`, as XLA before `fingerprint_before_lhs`.
pub fn step_hlo(scheduling: bool, fingerprint: Option<&str>) -> HloProto {
    let add = computation(
        1,
        "add",
        vec![
            inst(1, "x", "parameter", f32s(&[]), &[], &[]),
            inst(2, "y", "parameter", f32s(&[]), &[], &[]),
            inst(3, "add.0", "add", f32s(&[]), &[1, 2], &[]),
        ],
    );
    let fused1 = computation(
        2,
        "fused_computation.1",
        vec![
            inst(10, "param_0.1", "parameter", f32s(&[1024]), &[], &[]),
            inst(11, "negate.1", "negate", f32s(&[1024]), &[10], &[]),
        ],
    );
    let fused2 = computation(
        3,
        "fused_computation.2",
        vec![
            inst(20, "param_0.2", "parameter", f32s(&[1024]), &[], &[]),
            inst(
                21,
                "exponential.2",
                "exponential",
                f32s(&[1024]),
                &[20],
                &[],
            ),
        ],
    );
    let mut all_reduce = inst(
        102,
        "all-reduce-start.1",
        "all-reduce-start",
        f32s(&[1024]),
        &[101],
        &[1],
    );
    all_reduce.replica_groups = vec![ReplicaGroup {
        replica_ids: vec![0, 1],
    }];
    let scheduled = |mut i: HloInstructionProto, name: &str| {
        if scheduling {
            i.metadata = Some(OpMetadata {
                scheduling_name: name.into(),
                ..Default::default()
            });
        }
        i
    };
    let entry = computation(
        10,
        "main.10",
        vec![
            inst(100, "p0", "parameter", f32s(&[1024]), &[], &[]),
            scheduled(
                inst(101, "fusion.1", "fusion", f32s(&[1024]), &[100], &[2]),
                "fusion.1",
            ),
            all_reduce,
            inst(
                103,
                "all-reduce-done.1",
                "all-reduce-done",
                f32s(&[1024]),
                &[102],
                &[],
            ),
            scheduled(
                inst(104, "fusion.2", "fusion", f32s(&[1024]), &[103], &[3]),
                "fusion.7",
            ),
        ],
    );
    HloProto {
        hlo_module: Some(HloModuleProto {
            id: 7,
            name: "jit_step".into(),
            entry_computation_id: 10,
            entry_computation_name: "main.10".into(),
            frontend_attributes: fingerprint.map(|fp| FrontendAttributes {
                map: [("fingerprint_before_lhs".to_string(), fp.to_string())].into(),
            }),
            computations: vec![add, fused1, fused2, entry],
            ..Default::default()
        }),
        buffer_assignment: None,
    }
}
