//! The records that flow between the tools. Each is a flat serde struct, so the same
//! definition writes JSON Lines and CSV and reads both back. Field names and meanings
//! are fixed by SPEC.md; fields may be added, never renamed.

use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The values of [`Thunk::collective`]: the collective opcodes without `-start`, and the
/// host transfers (`hlo::CollectiveKind` names each of them).
pub const COLLECTIVE_KINDS: &[&str] = &[
    "all-gather",
    "all-reduce",
    "all-to-all",
    "collective-broadcast",
    "collective-permute",
    "reduce-scatter",
    "device-to-host",
    "host-to-device",
];

/// What a record read back (JSON Lines or CSV) must hold besides the types of its fields:
/// a record that breaks it is refused naming its line, never used as if right.
pub trait Check {
    /// What is wrong with the record, if anything.
    fn problem(&self) -> Option<String> {
        None
    }
}

/// Times njx takes, in nanoseconds: within ±2^61 (73 years, past 2043 as nanoseconds
/// since 1970), so that no sum of up to four overflows.
pub fn time_in_range(ns: i64) -> bool {
    (-(1i64 << 61)..=(1i64 << 61)).contains(&ns)
}

/// A duration that is negative, or a time out of range.
fn negative(field: &str, v: i64) -> Option<String> {
    if !time_in_range(v) {
        return Some(format!("{field} {v} is beyond ±2^61 ns (73 years)"));
    }
    (v < 0).then(|| format!("{field} {v} is negative"))
}

/// A start time out of range.
fn start(v: i64) -> Option<String> {
    (!time_in_range(v)).then(|| format!("start_ns {v} is beyond ±2^61 ns (73 years)"))
}

impl Check for Range {
    fn problem(&self) -> Option<String> {
        if self.end_ns.checked_sub(self.start_ns) != Some(self.dur_ns) {
            return Some(format!(
                "range {}: dur_ns {} is not end_ns - start_ns ({} - {})",
                self.id, self.dur_ns, self.end_ns, self.start_ns
            ));
        }
        if self.dur_ns.checked_sub(self.child_ns) != Some(self.self_ns) {
            return Some(format!(
                "range {}: self_ns {} is not dur_ns - child_ns ({} - {})",
                self.id, self.self_ns, self.dur_ns, self.child_ns
            ));
        }
        negative("dur_ns", self.dur_ns)
            .or_else(|| negative("child_ns", self.child_ns))
            .or_else(|| start(self.start_ns))
    }
}

impl Check for GpuRange {
    fn problem(&self) -> Option<String> {
        negative("dur_ns", self.dur_ns)
            .or_else(|| start(self.start_ns))
            .or_else(|| self.cpu_start_ns.and_then(start))
            .or_else(|| negative("cpu_dur_ns", self.cpu_dur_ns?))
    }
}

impl Check for Module {
    fn problem(&self) -> Option<String> {
        negative("dur_ns", self.dur_ns).or_else(|| start(self.start_ns))
    }
}

impl Check for Thunk {
    fn problem(&self) -> Option<String> {
        negative("dur_ns", self.dur_ns)
            .or_else(|| negative("hidden_ns", self.hidden_ns))
            .or_else(|| start(self.start_ns))
            .or_else(|| {
                (self.comm && self.collective.is_none())
                    .then(|| "a communication thunk without a collective kind".to_string())
            })
            .or_else(|| {
                (self.group_size == Some(0)).then(|| "group_size 0: no devices".to_string())
            })
            .or_else(|| {
                let kind = self.collective.as_deref()?;
                (!COLLECTIVE_KINDS.contains(&kind))
                    .then(|| format!("unknown collective kind `{kind}`"))
            })
    }
}

/// A CPU-side NVTX push/pop range, with `nvtx_pushpop_trace` semantics.
///
/// `child_ns` is the wall time covered by the direct children and
/// `self_ns = dur_ns - child_ns`. For children on the range's own thread (the only kind
/// nsys reports) that is the sum of their durations. Children spliced in from worker
/// threads (`njx-ranges --splice-workers`) run in parallel, so they count as the span
/// from the first one's start to the last one's end (nsys-jax's parallel-region rule);
/// a parent's `self_ns` therefore never goes negative.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Range {
    /// Which input the range came from (archive stem, or profile name in a combined archive).
    pub profile: Arc<str>,
    /// Process id; null where the source does not record it (nsys-jax parquet tables).
    pub pid: Option<u64>,
    /// Thread id.
    pub tid: u64,
    /// Range id, unique within a profile.
    pub id: u64,
    /// Id of the parent range, null at a root.
    pub parent: Option<u64>,
    /// Nesting depth, 0 at a root.
    pub depth: u32,
    /// Start time, nanoseconds.
    pub start_ns: i64,
    /// End time, nanoseconds.
    pub end_ns: i64,
    /// `end_ns - start_ns`.
    pub dur_ns: i64,
    /// Wall time covered by the direct children.
    pub child_ns: i64,
    /// `dur_ns - child_ns`.
    pub self_ns: i64,
    /// Number of direct children.
    pub children: u32,
    /// Range name with its domain prefix (`TSL:XlaCompile:#module=…#`).
    pub name: String,
}

/// An NVTX range projected onto the GPU work it launched (`nvtx_gpu_proj_trace`): the
/// range's times are those of its GPU operations, from the first one's start to the last
/// one's end.
///
/// `parent`, `depth` and `children` describe the projected tree as nsys computed it. The
/// CPU-side times and the number of GPU operations are only in the first form of the
/// table and in projections computed from nsys SQLite exports (null otherwise); `device`
/// and `stream` only in tables made per GPU or per stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuRange {
    /// Which input the range came from (archive stem, or profile name in a combined archive).
    pub profile: Arc<str>,
    /// Process id; null where the table has no `PID` column.
    pub pid: Option<u64>,
    /// Id of the thread that pushed the range.
    pub tid: u64,
    /// Range id, unique within a profile (in the first form the CPU range's `RangeId`).
    pub id: u64,
    /// Id of the parent range, null at a root.
    pub parent: Option<u64>,
    /// Nesting depth, 0 at a root.
    pub depth: u32,
    /// Number of direct children.
    pub children: u32,
    /// Range name, with its domain prefix where the table records it.
    pub name: String,
    /// GPU-side start: the start of the first GPU operation, nanoseconds.
    pub start_ns: i64,
    /// GPU-side duration: to the end of the last GPU operation, nanoseconds.
    pub dur_ns: i64,
    /// CPU-side start of the range, where known.
    pub cpu_start_ns: Option<i64>,
    /// CPU-side duration of the range, where known.
    pub cpu_dur_ns: Option<i64>,
    /// Number of GPU operations the range launched, where known.
    pub gpu_ops: Option<u64>,
    /// GPU (device id), in tables projected per GPU or per stream.
    pub device: Option<u64>,
    /// CUDA stream id, in tables projected per stream.
    pub stream: Option<u64>,
}

/// One execution of one XLA module on one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Module {
    /// Which input the execution came from.
    pub profile: Arc<str>,
    /// Program key, the same on every rank: the HLO fingerprint, `unknown` for
    /// autotuning executions, the program id where the archive has no dump of it.
    pub program: String,
    /// XLA's program number, null for autotuning executions.
    pub program_id: Option<u64>,
    /// Module name (`jit_train_step`).
    pub name: String,
    /// Execution number per (device, program), from 0.
    pub execution: u32,
    /// Global device id.
    pub device: u32,
    /// GPU-side start, nanoseconds.
    pub start_ns: i64,
    /// GPU-side duration, nanoseconds.
    pub dur_ns: i64,
    /// Number of thunk executions.
    pub thunks: u32,
    /// Initialisation rather than steady state (nsys-jax's warm-up rule).
    pub warmup: bool,
}

/// One execution of one thunk (HLO instruction) within a module execution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thunk {
    /// Which input the execution came from.
    pub profile: Arc<str>,
    /// Program key, as in [`Module`].
    pub program: String,
    /// XLA's program number.
    pub program_id: Option<u64>,
    /// Module name.
    pub module: String,
    /// Execution number of the module execution.
    pub execution: u32,
    /// Global device id.
    pub device: u32,
    /// HLO instruction (`fusion.12`).
    pub name: String,
    /// Execution number of this thunk within the module execution, from 0.
    pub thunk_execution: u32,
    /// GPU-side start, nanoseconds.
    pub start_ns: i64,
    /// Exposed GPU time, nanoseconds: for communication, the part not hidden.
    pub dur_ns: i64,
    /// Time of a communication thunk overlapped by compute thunks of the same program on
    /// the same device, nanoseconds.
    pub hidden_ns: i64,
    /// Whether the thunk communicates (collective or host offload).
    pub comm: bool,
    /// Initialisation rather than steady state.
    pub warmup: bool,
    /// Collective kind of a communication thunk (`all-gather`, `device-to-host`, …).
    pub collective: Option<String>,
    /// Devices in the collective's groups.
    pub group_size: Option<u32>,
    /// Message size, NCCL's conventions.
    pub message_bytes: Option<u64>,
}
