//! Two ranks of an XLA program as the GPU projection sees them: the ranges of
//! `jit_step`'s executions, its thunks, an all-reduce under an NCCL range, a command
//! buffer, autotuning executions, with rank 1's clock 5 ms ahead. The fixture of
//! `modules_archive.rs` (which checks the records derived from it) and a seed of the fuzz
//! harness.

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
