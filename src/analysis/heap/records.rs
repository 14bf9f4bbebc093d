//! The rows of njx-heap's views (`--view peak`, `buffers`, `by-op-name`, `by-source`)
//! and the heap of one program they are made from.

use serde::{Deserialize, Serialize};

/// One row of `--view peak`: one heap simulator trace of one program.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PeakRecord {
    /// The module name (`pjit__wrapped_step_fn`).
    pub program: String,
    /// XLA's program id.
    pub program_id: i64,
    /// The dump it was read from (`rank0.zip!dump/module_0040….hlo.pb.xz`).
    pub dump: String,
    /// The trace's index among the module's heap simulator traces; null for the one row
    /// of a program without any (nothing simulated: its allocation totals only, every
    /// field of a trace null).
    pub trace: Option<i64>,
    /// Whether XLA simulated the whole module at once (one sequential schedule).
    pub whole_module: Option<bool>,
    /// The allocation the trace's buffers are assigned to (null: none).
    pub allocation: Option<i64>,
    /// That allocation's size in bytes (the heap simulator's packing); null without one.
    pub allocation_bytes: Option<i64>,
    /// The largest total of live buffers, bytes.
    pub peak_bytes: Option<i64>,
    /// `allocation_bytes - peak_bytes`: what the packing adds to the peak (null without
    /// an allocation).
    pub fragmentation_bytes: Option<i64>,
    /// Index of the first event at which the peak is reached (null when nothing is
    /// live).
    pub peak_event: Option<i64>,
    /// The events of the trace.
    pub events: Option<usize>,
    /// The instruction whose processing reached the peak (`computation/instruction`;
    /// null when nothing is live).
    pub peak_at: Option<String>,
    /// Buffers live at the peak.
    pub live_buffers: Option<usize>,
    /// The program's entry-parameter allocations, bytes.
    pub parameter_bytes: i64,
    /// Its constant allocations, bytes.
    pub constant_bytes: i64,
    /// Its allocations that may be live out (outputs), bytes.
    pub output_bytes: i64,
    /// Its preallocated temp allocations (none of the above, not thread-local), bytes.
    pub temp_bytes: i64,
    /// All its allocations, bytes.
    pub total_bytes: i64,
}

/// One row of `--view buffers`: a buffer live at a trace's peak.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct BufferRecord {
    /// The module name.
    pub program: String,
    /// XLA's program id.
    pub program_id: i64,
    /// The trace's index.
    pub trace: i64,
    /// The logical buffer's id.
    pub buffer: i64,
    /// Bytes it counts at the peak.
    pub bytes: i64,
    /// Its share of the peak, percent.
    pub percent: f64,
    /// Its shape (`f32[1024,512]`), the defining instruction's result at `shape_index`
    /// (null where the index leads nowhere in it).
    pub shape: Option<String>,
    /// Index into the instruction's tuple result (`{}` for the whole result, `{1,0}`).
    pub shape_index: String,
    /// The defining instruction.
    pub instruction: String,
    /// Its opcode.
    pub opcode: String,
    /// Its JAX op_name, or null.
    pub op_name: Option<String>,
    /// The innermost Python frame that created it (`file.py:12[f]`), or null.
    pub source: Option<String>,
}

/// One row of `--view by-op-name` or `--view by-source`.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct GroupRecord {
    /// The module name.
    pub program: String,
    /// XLA's program id.
    pub program_id: i64,
    /// The trace's index.
    pub trace: i64,
    /// The op_name or source line; null for the buffers whose instructions have none
    /// (`(none)` in the table for people).
    pub key: Option<String>,
    /// Bytes of its buffers live at the peak.
    pub bytes: i64,
    /// Their share of the peak, percent.
    pub percent: f64,
    /// How many buffers.
    pub buffers: usize,
}

/// The heap of one program: its traces and totals.
#[derive(Debug, Clone)]
pub struct ProgramHeap {
    /// The rows of `--view peak`.
    pub peaks: Vec<PeakRecord>,
    /// The live buffers at each trace's peak, by trace, largest first.
    pub buffers: Vec<BufferRecord>,
    /// The live total after each event of each trace, by trace.
    pub totals: Vec<Vec<i64>>,
}
