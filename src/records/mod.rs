//! The records that flow between the tools. Each is a flat serde struct, so the same
//! definition writes JSON Lines and CSV and reads both back. Field names and meanings
//! are fixed by SPEC.md; fields may be added, never renamed.

use crate::output::numbers::{serialize_ns, serialize_ns_opt};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
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

    /// Where the record stands among the executions of its device, for records of
    /// executions: see [`Sequence`].
    fn execution(&self) -> Option<Execution<'_>> {
        None
    }

    /// The table of records it is (`njx-export --table KIND`), for messages.
    fn kind() -> Option<&'static str> {
        None
    }

    /// For a module or thunk execution: its device and start, what its rank is known by
    /// (the first module start; for thunk records, read without their modules, the first
    /// thunk start).
    fn first_start(&self) -> Option<(u32, i64)> {
        None
    }
}

/// What records a JSON line or CSV header holds, from the fields only one table has:
/// `ranges`, `gpu-ranges`, `modules`, `thunks`, `kernels`, `memops` (as `njx-export --table` names them) or
/// `collective records` (`njx-collectives --records`).
pub fn kind_of(head: &[u8]) -> Option<&'static str> {
    let has = |field: &str| head.windows(field.len()).any(|w| w == field.as_bytes());
    if has("algbw_gbps") {
        Some("collective")
    } else if has("thunk_execution") {
        Some("thunks")
    } else if has("gpu_ops") {
        Some("gpu-ranges")
    } else if has("child_ns") {
        Some("ranges")
    } else if has("warmup") && has("thunks") {
        Some("modules")
    } else if has("grid_x") {
        Some("kernels")
    } else if has("direction") && has("bytes") {
        Some("memops")
    } else {
        summary_of(head)
    }
}

/// The tool whose summary (a report for people's scripts, not records another tool reads)
/// a JSON line or CSV header is, from the fields only it writes: what a wrong pipe is
/// told it got (`njx-compile-summary --format json | njx-flamefold`).
pub fn summary_of(head: &[u8]) -> Option<&'static str> {
    let has = |field: &str| head.windows(field.len()).any(|w| w == field.as_bytes());
    if has("njx_partial") {
        Some("a partial result")
    } else if has("compilation_id") && has("self_ns") {
        Some("njx-compile-summary output")
    } else if has("dur_mean_ns") && has("thunks_mean") {
        Some("njx-modules output")
    } else if has("median_ns") && has("total_ns") {
        Some("njx-kernels output")
    } else if has("change_pct") && has("q_value") {
        Some("njx-diff output")
    } else if has("busbw_mean_gbps") || (has("\"table\"") && has("collective")) {
        Some("njx-collectives output")
    } else if has("op_name") && has("opcode") && has("executions") {
        Some("njx-thunks output")
    } else {
        None
    }
}

/// A module execution, or a thunk execution within one, as [`Sequence`] checks it.
pub struct Execution<'a> {
    /// Which input it came from.
    pub profile: &'a Arc<str>,
    /// The GPU it ran on.
    pub device: u32,
    /// The program key.
    pub program: &'a str,
    /// The XLA module name.
    pub module: &'a str,
    /// The module execution number on the device.
    pub execution: u32,
    /// For a thunk: its instruction and its execution number within the module execution.
    pub thunk: Option<(&'a str, u32)>,
}

/// Executions listed twice, caught as records stream by without holding them: njx-export
/// writes each profile's records together and each device's module executions in time
/// order, so per (profile, device, program, module) the execution numbers rise, and the
/// thunks of one module execution come together, each (instruction, thunk execution)
/// once. A record that breaks this is an execution listed again (or records reordered,
/// which no njx tool does). Memory: for the profile being read, the programs of each
/// device and the thunks of the execution each device is in (a 64-bit hash each: two
/// thunks of one execution share one with odds of about n²/2^65, 10^-12 for 5,000).
#[derive(Default)]
pub struct Sequence {
    /// The profile being read; the states of those before are dropped (its records come
    /// together).
    profile: Option<Arc<str>>,
    devices: HashMap<u32, Device>,
}

#[derive(Default)]
struct Device {
    /// Per (program, module): the last execution number.
    last: HashMap<(String, String), u32>,
    /// The module execution whose thunks are coming, and those that came (hashed).
    current: Option<(String, String, u32)>,
    thunks: HashSet<u64>,
}

/// A hash of a thunk within its execution: SipHash (std's), whose 64 bits are as good as
/// random (a multiply-rotate hash like FxHash collided on real names, `wrapped_slice.416`
/// and `wrapped_slice.499`).
fn thunk_hash(name: &str, n: u32) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    name.hash(&mut h);
    n.hash(&mut h);
    h.finish()
}

impl Sequence {
    /// Checks the next record of executions; says what is wrong.
    pub fn check(&mut self, e: &Execution) -> Option<String> {
        if !self
            .profile
            .as_ref()
            .is_some_and(|p| Arc::ptr_eq(p, e.profile) || **p == **e.profile)
        {
            self.profile = Some(e.profile.clone());
            self.devices.clear();
        }
        let device = self.devices.entry(e.device).or_default();
        let same =
            |c: &(String, String, u32)| c.2 == e.execution && c.0 == e.program && c.1 == e.module;
        let listed_again = |last: u32| {
            format!(
                "execution {} of program {} (module {}) on device {} comes after execution \
                 {last} of it: an execution listed again, or records reordered (each device's \
                 executions come in time order, as njx-export writes them)",
                e.execution, e.program, e.module, e.device
            )
        };
        if let Some((name, n)) = e.thunk
            && device.current.as_ref().is_some_and(same)
        {
            return (!device.thunks.insert(thunk_hash(name, n))).then(|| {
                format!(
                    "thunk {name} (thunk execution {n}) of execution {} of program {} on \
                     device {} is listed twice",
                    e.execution, e.program, e.device
                )
            });
        }
        let key = (e.program.to_string(), e.module.to_string());
        if let Some(&last) = device.last.get(&key)
            && last >= e.execution
        {
            return Some(listed_again(last));
        }
        device.last.insert(key, e.execution);
        if let Some((name, n)) = e.thunk {
            device.current = Some((e.program.to_string(), e.module.to_string(), e.execution));
            device.thunks.clear();
            device.thunks.insert(thunk_hash(name, n));
        }
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
    fn kind() -> Option<&'static str> {
        Some("ranges")
    }

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
    fn kind() -> Option<&'static str> {
        Some("gpu-ranges")
    }

    fn problem(&self) -> Option<String> {
        negative("dur_ns", self.dur_ns)
            .or_else(|| start(self.start_ns))
            .or_else(|| self.cpu_start_ns.and_then(start))
            .or_else(|| negative("cpu_dur_ns", self.cpu_dur_ns?))
    }
}

impl Check for Kernel {
    fn kind() -> Option<&'static str> {
        Some("kernels")
    }

    fn first_start(&self) -> Option<(u32, i64)> {
        Some((self.device, self.start_ns))
    }

    fn problem(&self) -> Option<String> {
        gpu_op_problem(self.start_ns, self.end_ns, self.dur_ns)
    }
}

impl Check for Memop {
    fn kind() -> Option<&'static str> {
        Some("memops")
    }

    fn first_start(&self) -> Option<(u32, i64)> {
        Some((self.device, self.start_ns))
    }

    fn problem(&self) -> Option<String> {
        if self.kind != "memcpy" && self.kind != "memset" {
            return Some(format!("kind `{}` is neither memcpy nor memset", self.kind));
        }
        gpu_op_problem(self.start_ns, self.end_ns, self.dur_ns)
    }
}

/// What is wrong with the times of a kernel or memory operation.
fn gpu_op_problem(start_ns: i64, end_ns: i64, dur_ns: i64) -> Option<String> {
    if end_ns.checked_sub(start_ns) != Some(dur_ns) {
        return Some(format!(
            "dur_ns {dur_ns} is not end_ns - start_ns ({end_ns} - {start_ns})"
        ));
    }
    negative("dur_ns", dur_ns).or_else(|| start(start_ns))
}

impl Check for Module {
    fn kind() -> Option<&'static str> {
        Some("modules")
    }

    fn first_start(&self) -> Option<(u32, i64)> {
        Some((self.device, self.start_ns))
    }

    fn problem(&self) -> Option<String> {
        negative("dur_ns", self.dur_ns).or_else(|| start(self.start_ns))
    }

    fn execution(&self) -> Option<Execution<'_>> {
        Some(Execution {
            profile: &self.profile,
            device: self.device,
            program: &self.program,
            module: &self.name,
            execution: self.execution,
            thunk: None,
        })
    }
}

impl Check for Thunk {
    fn kind() -> Option<&'static str> {
        Some("thunks")
    }

    fn first_start(&self) -> Option<(u32, i64)> {
        Some((self.device, self.start_ns))
    }

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
                // Bandwidths are computed in f64, exact for integers up to 2^53.
                let bytes = self.message_bytes?;
                (bytes > 1 << 53).then(|| {
                    format!("message_bytes {bytes} is beyond 2^53 (8 PiB): no real message")
                })
            })
            .or_else(|| {
                let kind = self.collective.as_deref()?;
                (!COLLECTIVE_KINDS.contains(&kind))
                    .then(|| format!("unknown collective kind `{kind}`"))
            })
    }

    fn execution(&self) -> Option<Execution<'_>> {
        Some(Execution {
            profile: &self.profile,
            device: self.device,
            program: &self.program,
            module: &self.module,
            execution: self.execution,
            thunk: Some((&self.name, self.thunk_execution)),
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// An execution of XLA's autotuner (program `unknown`, no program id: a candidate
    /// the autotuner compiled and ran while compiling a program), not of a program: left
    /// out of every tool's steady state, whatever `warmup` says (njx-modules
    /// `--include-autotuning`). False in records written before the field was added.
    #[serde(default)]
    pub autotuning: bool,
}

/// One execution of one thunk (HLO instruction) within a module execution.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// How the profile showed this thunk where it was not as a thunk range inside its
    /// module's range (the layout of XLA since 2026): `module`, a thunk range with no
    /// XlaModule range around it, given to the module execution of its thread whose span
    /// holds it; `nccl`, no thunk range at all but an NCCL range, matched to the
    /// module's collectives in the order of the HLO schedule (name, kind and size from
    /// the dump). Null where the thunk was read as it is.
    #[serde(default)]
    pub reconstructed: Option<Reconstructed>,
    /// A thunk of an autotuning execution, as in [`Module::autotuning`].
    #[serde(default)]
    pub autotuning: bool,
}

/// The `program` of autotuning executions: the autotuner runs its candidates as modules
/// without a program id, so without a dump to key them by.
pub const AUTOTUNING_PROGRAM: &str = "unknown";

/// Whether executions of `program` (a record's `program`) are the autotuner's.
pub fn is_autotuning(program: &str) -> bool {
    program == AUTOTUNING_PROGRAM
}

/// How a thunk execution was reconstructed (see [`Thunk::reconstructed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reconstructed {
    /// A thunk range outside any module range, attributed by its thread and time.
    Module,
    /// An NCCL range matched to a collective of the HLO schedule.
    Nccl,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at<'a>(
        profile: &'a Arc<str>,
        device: u32,
        execution: u32,
        thunk: Option<(&'a str, u32)>,
    ) -> Execution<'a> {
        Execution {
            profile,
            device,
            program: "p",
            module: "m",
            execution,
            thunk,
        }
    }

    #[test]
    fn executions_listed_again_are_caught_as_they_stream() {
        let a: Arc<str> = "a".into();
        let b: Arc<str> = "b".into();
        let mut seq = Sequence::default();
        // Devices and profiles interleave; each one's executions rise.
        for e in [
            at(&a, 0, 0, Some(("f", 0))),
            at(&a, 1, 0, Some(("f", 0))),
            at(&a, 0, 0, Some(("f", 1))),
            at(&a, 0, 0, Some(("g", 0))),
            at(&b, 0, 0, Some(("f", 0))),
            at(&a, 0, 1, Some(("f", 0))),
        ] {
            assert_eq!(seq.check(&e), None);
        }
        let twice = seq.check(&at(&a, 0, 1, Some(("f", 0)))).unwrap();
        assert!(twice.contains("listed twice"), "{twice}");
        let again = seq.check(&at(&a, 1, 0, Some(("h", 0)))).is_none();
        assert!(again, "a new thunk of the execution device 1 is in");
        let back = seq.check(&at(&a, 0, 0, Some(("f", 0)))).unwrap();
        assert!(back.contains("comes after execution 1"), "{back}");
        // Names that a multiply-rotate hash confused are told apart.
        let c: Arc<str> = "c".into();
        assert_eq!(
            seq.check(&at(&c, 0, 0, Some(("wrapped_slice.499", 0)))),
            None
        );
        assert_eq!(
            seq.check(&at(&c, 0, 0, Some(("wrapped_slice.416", 0)))),
            None
        );
        // Module records: one per execution.
        let mut seq = Sequence::default();
        assert_eq!(seq.check(&at(&a, 0, 0, None)), None);
        assert_eq!(seq.check(&at(&a, 0, 1, None)), None);
        assert!(seq.check(&at(&a, 0, 1, None)).is_some());
    }
}

/// One CUDA kernel execution (`njx-export --table kernels`), from the export's
/// `CUPTI_ACTIVITY_KIND_KERNEL`, with the CUDA API call that launched it (same
/// `correlationId` in the same process) and the innermost NVTX push/pop range of the
/// launching thread containing that call. Fields a table lacks are null.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kernel {
    /// Which input the kernel came from.
    pub profile: Arc<str>,
    /// GPU (`deviceId`).
    pub device: u32,
    /// CUDA stream (`streamId`).
    pub stream: Option<u64>,
    /// CUPTI correlation id, shared with the launching API call.
    pub correlation_id: Option<u64>,
    /// GPU start, nanoseconds.
    pub start_ns: i64,
    /// GPU end, nanoseconds.
    pub end_ns: i64,
    /// `end_ns - start_ns`.
    pub dur_ns: i64,
    /// The demangled name where the export has it, else the short name.
    pub name: String,
    /// The base function name (`shortName`).
    pub short_name: String,
    /// Grid size in x (blocks).
    pub grid_x: Option<u32>,
    /// Grid size in y (blocks).
    pub grid_y: Option<u32>,
    /// Grid size in z (blocks).
    pub grid_z: Option<u32>,
    /// Block size in x (threads).
    pub block_x: Option<u32>,
    /// Block size in y (threads).
    pub block_y: Option<u32>,
    /// Block size in z (threads).
    pub block_z: Option<u32>,
    /// Registers per thread.
    pub registers_per_thread: Option<u32>,
    /// Static shared memory of the kernel, bytes.
    pub static_shared_bytes: Option<u64>,
    /// Dynamic shared memory reserved for the kernel, bytes.
    pub dynamic_shared_bytes: Option<u64>,
    /// Process that launched it.
    pub pid: Option<u64>,
    /// Thread of the launching API call; null without one.
    pub tid: Option<u64>,
    /// The launching API call (`cudaLaunchKernel`, `cuLaunchKernel`…); null without one.
    pub api: Option<String>,
    /// Name (with domain prefix) of the innermost NVTX push/pop range of the launching
    /// thread that contains the API call; null where none does.
    pub range: Option<String>,
    /// That range's id (its `id` in `--table ranges`).
    pub range_id: Option<u64>,
    /// The HLO module of the innermost `[TSL:]XlaModule:#…hlo_module=NAME[,program_id=N]#`
    /// range of the launching thread that contains the API call (the whole range name
    /// where it is of another form, as `njx-modules` names it); null outside every module.
    #[serde(default)]
    pub module: Option<String>,
    /// That module range's `program_id`; null where it has none.
    #[serde(default)]
    pub program_id: Option<u64>,
    /// The instruction (`hlo_op`) of the innermost `[TSL:]Thunk:#…hlo_op=NAME…#` range
    /// containing the call, when it lies inside that module range (the whole range name
    /// where it is of another form, as `njx-thunks` names it); null otherwise.
    #[serde(default)]
    pub thunk: Option<String>,
    /// The CUDA graph the kernel ran in (`graphId`, nsys 2026 exports and later); null
    /// for a kernel launched on its own, or where the export has no such column. The
    /// kernels of one graph launch share the `cudaGraphLaunch` call's correlation id, so
    /// `api`, `range`, `module` and `thunk` are those of the graph launch.
    #[serde(default)]
    pub graph_id: Option<u64>,
    /// The graph node it ran as (`graphNodeId`); null outside graphs.
    #[serde(default)]
    pub graph_node_id: Option<u64>,
}

/// One CUDA memory copy or memory set (`njx-export --table memops`), from
/// `CUPTI_ACTIVITY_KIND_MEMCPY` and `…_MEMSET`, with the launching call and range as for
/// [`Kernel`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memop {
    /// Which input it came from.
    pub profile: Arc<str>,
    /// GPU (`deviceId`).
    pub device: u32,
    /// CUDA stream (`streamId`).
    pub stream: Option<u64>,
    /// CUPTI correlation id, shared with the launching API call.
    pub correlation_id: Option<u64>,
    /// Start, nanoseconds.
    pub start_ns: i64,
    /// End, nanoseconds.
    pub end_ns: i64,
    /// `end_ns - start_ns`.
    pub dur_ns: i64,
    /// `memcpy` or `memset`.
    pub kind: String,
    /// Bytes copied or set.
    pub bytes: u64,
    /// Copy direction of a memcpy (`HtoD`, `DtoH`, `DtoD`, `HtoH`, `PtoP`, …, from
    /// `copyKind`); null for a memset.
    pub direction: Option<String>,
    /// Memory kind of the source (`pageable`, `pinned`, `device`, …), memcpy only.
    pub src_kind: Option<String>,
    /// Memory kind of the destination; for a memset, of the memory set.
    pub dst_kind: Option<String>,
    /// Source and destination devices of a memcpy, where recorded.
    pub src_device: Option<u32>,
    /// Destination device of a memcpy, where recorded.
    pub dst_device: Option<u32>,
    /// The value a memset wrote.
    pub value: Option<i64>,
    /// Process id (of the launching thread, for GPU operations).
    pub pid: Option<u64>,
    /// Thread id (of the launching thread, for GPU operations).
    pub tid: Option<u64>,
    /// The CUDA API call that launched it.
    pub api: Option<String>,
    /// The innermost NVTX push/pop range of the launching thread containing the call.
    pub range: Option<String>,
    /// That range's id (as in `--table ranges`).
    pub range_id: Option<u64>,
    /// XLA module, program id and thunk instruction of the launching call, as for
    /// [`Kernel`].
    #[serde(default)]
    pub module: Option<String>,
    #[serde(default)]
    /// XLA program id of the launching call's module.
    pub program_id: Option<u64>,
    #[serde(default)]
    /// XLA thunk (HLO instruction) of the launching call.
    pub thunk: Option<String>,
    /// The CUDA graph and graph node the operation ran as, as for [`Kernel`]. Exports up
    /// to 2026.2 give copies and sets a `graphNodeId` but no `graphId`: there a graph's
    /// copy has a node id and a null graph id.
    #[serde(default)]
    pub graph_id: Option<u64>,
    #[serde(default)]
    /// The graph node it ran as (`graphNodeId`); null outside graphs.
    pub graph_node_id: Option<u64>,
}

/// One CUDA runtime or driver API call of an nsys export (`CUPTI_ACTIVITY_KIND_RUNTIME`,
/// `…_DRIVER`), its name read through `StringIds`: what the host spent in the CUDA API,
/// for the findings that judge synchronisation and copies (njx-report).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiCall {
    /// Which input the call came from.
    pub profile: Arc<str>,
    /// Process id (from `globalTid`).
    pub pid: u64,
    /// Thread id (from `globalTid`).
    pub tid: u64,
    /// CUPTI correlation id, shared with the GPU work the call launched.
    pub correlation_id: Option<u64>,
    /// Start, nanoseconds.
    pub start_ns: i64,
    /// End, nanoseconds.
    pub end_ns: i64,
    /// `end_ns - start_ns`.
    pub dur_ns: i64,
    /// The function's name as CUPTI registers it (`cudaStreamSynchronize_v3020`).
    pub name: Arc<str>,
}

/// One field of a structured NVTX payload (`njx-export --table payloads`): the binary
/// payload an NVTX range or mark carries (`NVTX_EVENTS.binaryData`, nsys 2024.2 and
/// later), decoded by the schema the application registered (`NVTX_PAYLOAD_SCHEMAS`,
/// `NVTX_PAYLOAD_SCHEMA_ENTRIES`): XLA's `XlaModule`, `XlaInstruction`,
/// `XlaInstructionDetailed` and `XlaCollectiveDetailed` (openxla/xla PR #46486), NCCL's
/// communicator, message size and peer rank. One record per field, in the schema's
/// order; `id` joins the range records of `--table ranges`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PayloadField {
    /// Which input the payload came from.
    pub profile: Arc<str>,
    /// Process id (of the launching thread, for GPU operations).
    pub pid: u64,
    /// Thread id (of the launching thread, for GPU operations).
    pub tid: u64,
    /// The range's (or mark's) id: its `rowid` in `NVTX_EVENTS`, its `id` in `--table
    /// ranges`.
    pub id: u64,
    /// When the range started (or the mark was set), nanoseconds.
    pub start_ns: i64,
    /// The range's name, with its domain prefix, as in `--table ranges`.
    pub name: String,
    /// The schema's registered name (`XlaInstructionDetailed`), else its id in decimal
    /// (NCCL registers its schemas unnamed).
    pub schema: String,
    /// The schema's id.
    pub schema_id: u64,
    /// Which of the event's payloads (0 for the first: an event may carry several).
    pub payload: u32,
    /// The field's position in the schema (`idx`).
    pub index: u32,
    /// The field's name (`Message size [bytes]`), else `#INDEX`.
    pub field: String,
    /// The field's type: `int8` … `uint64`, `float`, `double`, `size`, `address`,
    /// `cstring`, `bytes`, `string-handle` (a string the application registered with
    /// NVTX; the export keeps the handle, not the text), …; `raw` for a payload whose
    /// schema the export does not define (the value is then its bytes in hex).
    #[serde(rename = "type")]
    pub kind: String,
    /// The value: a number, or text for strings and raw bytes; null where njx cannot
    /// decode the type (said on stderr).
    pub value: Option<PayloadValue>,
}

/// The value of a [`PayloadField`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PayloadValue {
    /// An unsigned integer.
    Unsigned(u64),
    /// A signed integer.
    Signed(i64),
    /// A floating-point number.
    Float(f64),
    /// Text (strings, and raw bytes in hex).
    Text(String),
}

/// One key of a comparison of two runs (`njx-diff`): its value before and after, the
/// change, its interval and whether it is significant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// What is compared: a module name, `MODULE/INSTRUCTION`, `KIND SIZE`, a kernel's short
    /// name or a compile pass; an instruction renamed by a recompilation under its new
    /// name.
    pub key: String,
    /// The key before, where it differs (an instruction matched by what the dumps say); a
    /// `gone` row whose name another instruction holds after is keyed `NAME (before)`.
    pub before_key: Option<String>,
    /// How the two sides' keys were matched: `name`, `dumps` (opcode, op_name, source
    /// line and shape), or null for a key on one side only.
    pub matched_by: Option<String>,
    /// Before: mean per execution (`program`, `collective`), time per module execution
    /// (`instruction`), or total (`kernel`, `compile-pass`), nanoseconds; null if absent.
    /// Held as computed, written to the nearest nanosecond.
    #[serde(serialize_with = "serialize_ns_opt")]
    pub before_ns: Option<f64>,
    /// After, as `before_ns`.
    #[serde(serialize_with = "serialize_ns_opt")]
    pub after_ns: Option<f64>,
    /// Samples before: executions, thunk executions, instances, compilations.
    pub before_count: u64,
    /// Samples after.
    pub after_count: u64,
    /// after − before, nanoseconds (an absent side counts 0), of the values computed,
    /// written to the nearest nanosecond.
    #[serde(serialize_with = "serialize_ns")]
    pub change_ns: f64,
    /// after / before − 1, percent, of the values computed (not those written); null for
    /// a key on one side only.
    pub change_pct: Option<f64>,
    /// The interval of `change_pct` (Welch on the log ratio; level 1 − --alpha, 95 % by
    /// default); null where a side has too few samples.
    pub ci_low_pct: Option<f64>,
    /// Its upper end.
    pub ci_high_pct: Option<f64>,
    /// The two-sided p-value of no change.
    pub p_value: Option<f64>,
    /// The p-value adjusted for every key compared (Benjamini–Hochberg).
    pub q_value: Option<f64>,
    /// Whether the change is significant: q-value at most --alpha and at least
    /// --min-change percent.
    pub significant: bool,
    /// `slower`, `faster`, `same`, `new` or `gone`.
    pub status: String,
    /// Mean bus bandwidth before, GB/s (`collective`).
    pub before_busbw_gbps: Option<f64>,
    /// Mean bus bandwidth after, GB/s (`collective`).
    pub after_busbw_gbps: Option<f64>,
}

impl Check for Change {}
