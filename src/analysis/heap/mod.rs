//! Heap memory of XLA programs from the buffer assignment in their after-optimizations
//! dumps (`HloProto.buffer_assignment`): logical buffers, the allocations they are
//! assigned to, and the heap simulator traces XLA recorded while packing them.
//!
//! For each heap simulator trace the events are replayed as XLA's own
//! `ComputePeakMemoryLogicalBuffers` (`xla/service/buffer_assignment.cc`) does: `ALLOC`
//! adds the buffer's size, `FREE` subtracts what its `ALLOC` or `SHARE_WITH` added, and
//! `SHARE_WITH` adds the buffer's size only when no other instance of its canonical buffer
//! is live (the memory is already counted otherwise). A buffer's size is the size of its
//! assignment in the trace's allocation (the logical buffer's size where it has none).
//! The peak is the largest live total; its event is the first that reaches it, and the
//! live buffers at the peak are those live just after that event.
//!
//! A trace belongs to the allocation its `buffer_allocation_index` names when that holds
//! some of its buffers, else to the allocation holding most of its buffers (as the
//! TensorFlow memory viewer, which finds it from the buffer ids: older dumps keep the index
//! from before XLA combined its temp allocations); only events of buffers assigned to that
//! allocation count, as in XLA. That allocation is XLA's preallocated
//! temp buffer, sized by the heap simulator's packing: never smaller than the peak of the
//! live total (fragmentation makes the difference).
//!
//! A program's totals are XLA's `BufferAssignment::Stats`: the sizes of its allocations
//! by kind (entry parameters, constants, outputs `maybe_live_out`, the preallocated temp
//! buffers: none of these nor thread-local) and all together.

use crate::error::{Error, Result};
use crate::hlo::proto::{self, BufferAssignmentProto, heap_simulator_trace::event::Kind};
use crate::hlo::{Dumps, HloModule, Instruction};
use crate::output::notes::Notes;
use crate::output::{Format, RecordWriter, write_table};
use crate::source;
use clap::ValueEnum;
use serde::Serialize;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::PathBuf;

/// What the output lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum View {
    /// One row per heap simulator trace: its peak, when it is reached, the allocation it
    /// sized, and the program's allocation totals by kind.
    Peak,
    /// The buffers live at each trace's peak, largest first: size, shape, instruction,
    /// op_name and Python source line.
    Buffers,
    /// The peak broken down by the op_name of the instructions defining its buffers.
    ByOpName,
    /// The peak broken down by Python source line (innermost frame).
    BySource,
}

/// The options of a heap report.
#[derive(Debug, Clone)]
pub struct Options {
    /// What to list.
    pub view: View,
    /// How to write it.
    pub format: Format,
    /// Only programs with this module name, program id or fingerprint.
    pub program: Option<String>,
    /// Also draw the live total over each trace's events into this SVG file.
    pub svg: Option<PathBuf>,
}

/// One row of `--view peak`: one heap simulator trace of one program.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct PeakRecord {
    /// The module name (`pjit__wrapped_step_fn`).
    pub program: String,
    /// XLA's program id.
    pub program_id: i64,
    /// The dump it was read from (`rank0.zip!dump/module_0040….hlo.pb.xz`).
    pub dump: String,
    /// The trace's index among the module's heap simulator traces; -1 for the one row of
    /// a program without any (nothing simulated: its allocation totals only).
    pub trace: i64,
    /// Whether XLA simulated the whole module at once (one sequential schedule).
    pub whole_module: bool,
    /// The allocation the trace's buffers are assigned to (-1: none).
    pub allocation: i64,
    /// That allocation's size in bytes (the heap simulator's packing).
    pub allocation_bytes: i64,
    /// The largest total of live buffers, bytes.
    pub peak_bytes: i64,
    /// `allocation_bytes - peak_bytes`: what the packing adds to the peak.
    pub fragmentation_bytes: i64,
    /// Index of the first event at which the peak is reached (-1 when nothing is live).
    pub peak_event: i64,
    /// The events of the trace.
    pub events: usize,
    /// The instruction whose processing reached the peak (`computation/instruction`).
    pub peak_at: String,
    /// Buffers live at the peak.
    pub live_buffers: usize,
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
    /// Its shape (`f32[1024,512]`), the defining instruction's result at `shape_index`.
    pub shape: String,
    /// Index into the instruction's tuple result (`{}` for the whole result, `{1,0}`).
    pub shape_index: String,
    /// The defining instruction.
    pub instruction: String,
    /// Its opcode.
    pub opcode: String,
    /// Its JAX op_name, or "".
    pub op_name: String,
    /// The innermost Python frame that created it (`file.py:12[f]`), or "".
    pub source: String,
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
    /// The op_name or source line (`(none)` where the instructions have none).
    pub key: String,
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

/// The replay of one trace.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replay {
    /// The largest live total.
    pub peak: i64,
    /// The first event reaching it (`None` when nothing is ever live).
    pub peak_event: Option<usize>,
    /// (buffer id, bytes counted) live just after that event, by buffer id.
    pub live: Vec<(i64, i64)>,
    /// The live total after each event (events not counted keep the total).
    pub totals: Vec<i64>,
}

/// One event as the replay takes it: its kind as written, its buffer and the canonical
/// buffer it shares with, as indices into the ids of the buffers (dense: the replay's
/// state is arrays, not maps, and a buffer's id is looked up once per event, not once
/// per table of the state).
#[derive(Debug, Clone, Copy)]
struct Step {
    kind: i32,
    buffer: u32,
    canonical: u32,
}

/// No buffer (a buffer that shares with nothing).
const NONE: u32 = u32::MAX;

/// The state of a replay over buffers `0..n`: the bytes each live buffer counts (-1: not
/// live), how many instances of each canonical buffer are live, the canonical buffer of
/// each shared one, the live total. What a replay changed is listed in `touched` and set
/// back after it, so that one state serves every trace of a dump in time proportional to
/// each trace's events (not to the buffers of the dump once per trace).
struct Heap {
    live: Vec<i64>,
    outstanding: Vec<i64>,
    canonical: Vec<u32>,
    touched: Vec<u32>,
    total: i64,
}

impl Heap {
    fn new(n: usize) -> Heap {
        Heap {
            live: vec![-1; n],
            outstanding: vec![0; n],
            canonical: vec![NONE; n],
            touched: Vec::new(),
            total: 0,
        }
    }

    /// Back to nothing live.
    fn reset(&mut self) {
        for &d in &self.touched {
            let d = d as usize;
            (self.live[d], self.outstanding[d], self.canonical[d]) = (-1, 0, NONE);
        }
        self.touched.clear();
        self.total = 0;
    }

    /// Applies event `i` (`s`) to a buffer counting `bytes`; `ids` name the buffers in
    /// messages. The rule is XLA's `ComputePeakMemoryLogicalBuffers` (module comment).
    fn step(&mut self, i: usize, s: Step, bytes: i64, ids: &[i64]) -> ReplayResult<()> {
        let kind =
            Kind::try_from(s.kind).map_err(|_| format!("event {i}: unknown kind {}", s.kind))?;
        let (b, id) = (s.buffer as usize, ids[s.buffer as usize]);
        if bytes < 0 {
            return Err(format!(
                "event {i}: buffer {id} has a negative size ({bytes})"
            ));
        }
        match kind {
            Kind::Alloc | Kind::ShareWith => {
                let counted = if kind == Kind::Alloc {
                    self.outstanding[b] = 1;
                    bytes
                } else {
                    let c = s.canonical as usize;
                    self.canonical[b] = s.canonical;
                    self.outstanding[c] += 1;
                    self.touched.push(s.canonical);
                    if self.outstanding[c] == 1 { bytes } else { 0 }
                };
                self.touched.push(s.buffer);
                if self.live[b] >= 0 {
                    return Err(format!("event {i}: buffer {id} allocated while live"));
                }
                self.live[b] = counted;
                // Sizes are never negative, so only a sum can overflow.
                self.total = self
                    .total
                    .checked_add(counted)
                    .ok_or_else(|| format!("event {i}: the live total passes 2^63 bytes"))?;
            }
            Kind::Free => {
                let counted = self.live[b];
                if counted < 0 {
                    return Err(format!("event {i}: FREE of buffer {id}, which is not live"));
                }
                self.live[b] = -1;
                let c = match self.canonical[b] {
                    NONE => b,
                    c => c as usize,
                };
                // Live, the buffer was counted in by its ALLOC (or SHARE_WITH) and its
                // canonical buffer's count is at least 1.
                self.outstanding[c] -= 1;
                self.total -= counted;
            }
        }
        Ok(())
    }
}

type ReplayResult<T> = std::result::Result<T, String>;

/// [`replay`] of events as [`Step`]s over buffers named by `ids`, with `heap` (all of
/// `ids`, nothing live) as its state, left as it was found; the replay and the dense
/// indices of its live buffers at the peak, in the order of `Replay::live`.
///
/// Linear in the events: a first pass finds the peak and its first event, a second
/// replays the events up to it and takes the live set there (a copy of the live set at
/// every new peak instead is quadratic where the total keeps rising, as it does while a
/// program allocates its buffers: 200,000 buffers took minutes).
fn replay_steps(
    steps: &[Step],
    bytes: impl Fn(u32) -> Option<i64>,
    ids: &[i64],
    heap: &mut Heap,
) -> ReplayResult<(Replay, Vec<u32>)> {
    let mut best = Replay::default();
    let mut totals = Vec::with_capacity(steps.len());
    let mut first = || -> ReplayResult<()> {
        for (i, s) in steps.iter().enumerate() {
            if let Some(n) = bytes(s.buffer) {
                heap.step(i, *s, n, ids)?;
            }
            totals.push(heap.total);
            if heap.total > best.peak {
                best.peak = heap.total;
                best.peak_event = Some(i);
            }
        }
        Ok(())
    };
    let first = first();
    heap.reset();
    first?;
    let mut live = Vec::new();
    if let Some(peak) = best.peak_event {
        let mut second = || -> ReplayResult<()> {
            for (i, s) in steps.iter().enumerate().take(peak + 1) {
                if let Some(n) = bytes(s.buffer) {
                    heap.step(i, *s, n, ids)?;
                }
            }
            live = heap
                .touched
                .iter()
                .filter(|&&d| heap.live[d as usize] > 0)
                .map(|&d| (ids[d as usize], heap.live[d as usize], d))
                .collect();
            Ok(())
        };
        let second = second();
        heap.reset();
        second?;
        // A buffer is listed in `touched` once per event that changed it.
        live.sort_unstable();
        live.dedup();
    }
    best.live = live.iter().map(|&(id, b, _)| (id, b)).collect();
    best.totals = totals;
    Ok((best, live.into_iter().map(|(_, _, d)| d).collect()))
}

/// Replays heap simulator `events` as XLA's `ComputePeakMemoryLogicalBuffers`; `size`
/// gives the bytes of a buffer, `None` for a buffer not counted (not in the allocation).
/// An event that frees a buffer that is not live, a buffer allocated while live, an
/// unknown kind, a negative size and a live total past 2^63 are errors (the message says
/// which). Linear in the events (see [`replay_steps`]).
pub fn replay(
    events: &[proto::heap_simulator_trace::Event],
    size: impl Fn(i64) -> Option<i64>,
) -> ReplayResult<Replay> {
    // Dense indices are u32, two per event at most.
    if events.len() >= (NONE / 2) as usize {
        return Err(format!("{} events: more than njx replays", events.len()));
    }
    let mut dense: HashMap<i64, u32> = HashMap::new();
    let mut ids = Vec::new();
    let mut index = |id: i64| {
        *dense.entry(id).or_insert_with(|| {
            ids.push(id);
            (ids.len() - 1) as u32
        })
    };
    let steps: Vec<Step> = events
        .iter()
        .map(|e| Step {
            kind: e.kind,
            buffer: index(e.buffer_id),
            canonical: if e.kind == Kind::ShareWith as i32 {
                index(e.share_with_canonical_id)
            } else {
                NONE
            },
        })
        .collect();
    let sizes: Vec<Option<i64>> = ids.iter().map(|&id| size(id)).collect();
    let mut heap = Heap::new(ids.len());
    replay_steps(&steps, |d| sizes[d as usize], &ids, &mut heap).map(|(r, _)| r)
}

/// Writes `shape` as XLA prints it: `f32[128,64]`, tuples as `(f32[2], s32[])`.
pub fn shape_text(shape: &proto::ShapeProto) -> String {
    if !shape.tuple_shapes.is_empty() {
        let parts: Vec<String> = shape.tuple_shapes.iter().map(shape_text).collect();
        return format!("({})", parts.join(", "));
    }
    let ty = proto::PrimitiveType::try_from(shape.element_type).map_or_else(
        |_| format!("type{}", shape.element_type),
        |t| t.as_str_name().to_ascii_lowercase(),
    );
    let dims: Vec<String> = shape.dimensions.iter().map(i64::to_string).collect();
    format!("{ty}[{}]", dims.join(","))
}

/// The sub-shape at `index` of a (tuple) shape, `None` when the index leads nowhere.
fn subshape<'s>(shape: &'s proto::ShapeProto, index: &[i64]) -> Option<&'s proto::ShapeProto> {
    index
        .iter()
        .try_fold(shape, |s, &i| s.tuple_shapes.get(usize::try_from(i).ok()?))
}

/// The innermost Python frame of an instruction (`file.py:12[f]`), else the metadata's
/// `source_file:source_line`, else "".
fn source_of(inst: &Instruction<'_>, proto: &proto::HloInstructionProto) -> Result<String> {
    if let Some(frame) = inst.stack_frames()?.last() {
        return Ok(frame.to_string());
    }
    Ok(match &proto.metadata {
        Some(m) if !m.source_file.is_empty() => format!("{}:{}", m.source_file, m.source_line),
        _ => String::new(),
    })
}

/// Whether `hlo` is the program `wanted` names: its module name, program id or fingerprint.
fn is_wanted(hlo: &HloModule, wanted: Option<&str>) -> bool {
    wanted.is_none_or(|w| {
        hlo.name() == w || hlo.id().to_string() == w || hlo.fingerprint() == Some(w)
    })
}

/// The heap of one module from its buffer assignment. A module without one, and a buffer
/// assignment that does not add up ([`check_assignment`], [`check_trace`]) are errors
/// naming the dump; so is a logical buffer live at a peak that is defined by an
/// instruction the module lacks (or names ambiguously). A trace whose
/// `buffer_allocation_index` is past the allocations is taken as stale, with a note.
pub fn program_heap(hlo: &HloModule, notes: &Notes) -> Result<ProgramHeap> {
    let place = hlo.place();
    let Some(ba) = hlo.buffer_assignment()? else {
        return Err(Error::data(
            place,
            "the dump has no buffer assignment (HloProto.buffer_assignment): njx-heap \
             needs XLA's after-optimizations dumps as nsys-jax stores them",
        ));
    };
    analyse(hlo, &ba, notes)
}

/// The tables of a buffer assignment, checked by [`check_assignment`]. Logical buffers
/// are numbered densely by their place in the assignment (as [`Step`]s name them).
struct Assignment<'b> {
    /// Logical buffer id → its dense index.
    index: HashMap<i64, u32>,
    /// By dense index: the buffers, their ids, and the (allocation index, assigned size)
    /// of those assigned.
    buffers: Vec<&'b proto::LogicalBufferProto>,
    ids: Vec<i64>,
    assigned: Vec<Option<(i64, i64)>>,
    /// Allocation index → the allocation.
    allocations: HashMap<i64, &'b proto::BufferAllocationProto>,
}

/// Checks that a buffer assignment adds up as XLA writes it, and indexes it. Refused (the
/// message names the buffer or allocation): a logical buffer id given twice or of a
/// negative size; an allocation of a negative size, or whose index repeats or is not one
/// of 0..n (XLA numbers its n allocations by their position); a buffer assigned at a
/// negative offset or of a negative size, reaching past its allocation (XLA's
/// `BufferAllocation::AddAssignment` checks both), assigned twice (XLA gives each buffer
/// one allocation) or not a logical buffer of the assignment. Events are checked per
/// trace ([`check_trace`]).
fn check_assignment(ba: &BufferAssignmentProto) -> ReplayResult<Assignment<'_>> {
    let n = ba.logical_buffers.len();
    if u32::try_from(n).map_or(true, |n| n == NONE) {
        return Err(format!("{n} logical buffers: more than njx counts"));
    }
    let mut index = HashMap::with_capacity(n);
    for (d, b) in ba.logical_buffers.iter().enumerate() {
        if b.size < 0 {
            return Err(format!("logical buffer {}: negative size {}", b.id, b.size));
        }
        if index.insert(b.id, d as u32).is_some() {
            return Err(format!("logical buffer id {} appears twice", b.id));
        }
    }
    let mut assigned: Vec<Option<(i64, i64)>> = vec![None; n];
    let count = ba.buffer_allocations.len();
    let mut allocations = HashMap::with_capacity(count);
    for a in &ba.buffer_allocations {
        if usize::try_from(a.index).map_or(true, |i| i >= count) {
            return Err(format!(
                "buffer allocation {}: index out of range (the assignment has {count} \
                 allocations, numbered from 0)",
                a.index
            ));
        }
        if allocations.insert(a.index, a).is_some() {
            return Err(format!("buffer allocation index {} appears twice", a.index));
        }
        if a.size < 0 {
            return Err(format!(
                "buffer allocation {}: negative size {}",
                a.index, a.size
            ));
        }
        for x in &a.assigned {
            let (id, at) = (
                x.logical_buffer_id,
                format!("buffer allocation {}", a.index),
            );
            let Some(&d) = index.get(&id) else {
                return Err(format!(
                    "{at}: assigned buffer {id} is not a logical buffer of the assignment"
                ));
            };
            if x.offset < 0 || x.size < 0 {
                return Err(format!(
                    "{at}: buffer {id} assigned at offset {} with size {}: negative",
                    x.offset, x.size
                ));
            }
            if x.offset.checked_add(x.size).is_none_or(|end| end > a.size) {
                return Err(format!(
                    "{at}: buffer {id} at offset {} of {} bytes reaches past the \
                     allocation's {} bytes",
                    x.offset, x.size, a.size
                ));
            }
            if let Some((other, _)) = assigned[d as usize].replace((a.index, x.size)) {
                return Err(format!(
                    "logical buffer {id} is assigned twice (allocations {other} and {})",
                    a.index
                ));
            }
        }
    }
    Ok(Assignment {
        index,
        buffers: ba.logical_buffers.iter().collect(),
        ids: ba.logical_buffers.iter().map(|b| b.id).collect(),
        assigned,
        allocations,
    })
}

/// What [`check_trace`] remembers of each buffer, by dense index, set back after each
/// trace as [`Heap`] is: the event it entered the trace at (`usize::MAX`: not yet),
/// whether it left, the canonical buffer it shares with ([`NONE`]).
struct Seen {
    entered: Vec<usize>,
    freed: Vec<bool>,
    shares: Vec<u32>,
    touched: Vec<u32>,
}

impl Seen {
    fn new(n: usize) -> Seen {
        Seen {
            entered: vec![usize::MAX; n],
            freed: vec![false; n],
            shares: vec![NONE; n],
            touched: Vec::new(),
        }
    }

    fn reset(&mut self) {
        for &d in &self.touched {
            let d = d as usize;
            (self.entered[d], self.freed[d], self.shares[d]) = (usize::MAX, false, NONE);
        }
        self.touched.clear();
    }
}

/// Checks the events of heap simulator trace `t` as XLA's heap simulator writes them, and
/// gives them as [`Step`]s: every event of a known kind, on a logical buffer of the
/// assignment; each buffer enters the trace once (`ALLOC` or `SHARE_WITH`) and leaves it
/// at most once (`FREE`), after it entered (XLA's `HeapSimulator` checks the same as it
/// writes them); a `SHARE_WITH` names another logical buffer as its canonical one, which
/// is never itself a shared one (XLA writes the canonical buffer of a group of shared
/// ones, so a chain or cycle of shares has none); the trace's allocation index is not
/// negative. The message names the trace, the event and the buffers. A canonical buffer
/// the trace has not allocated (yet) is accepted: XLA's own replay counts the first share
/// of it, as njx's does.
fn check_trace(
    t: usize,
    trace: &proto::HeapSimulatorTrace,
    assignment: &Assignment<'_>,
    seen: &mut Seen,
) -> ReplayResult<Vec<Step>> {
    if trace.buffer_allocation_index < 0 {
        return Err(format!(
            "heap simulator trace {t}: negative buffer_allocation_index {}",
            trace.buffer_allocation_index
        ));
    }
    let steps = steps_of(trace, assignment, seen);
    seen.reset();
    steps.map_err(|e| format!("heap simulator trace {t}: {e}"))
}

fn steps_of(
    trace: &proto::HeapSimulatorTrace,
    assignment: &Assignment<'_>,
    seen: &mut Seen,
) -> ReplayResult<Vec<Step>> {
    let dense = |id: i64| assignment.index.get(&id).copied();
    let mut steps = Vec::with_capacity(trace.events.len());
    for (i, e) in trace.events.iter().enumerate() {
        let b = e.buffer_id;
        let kind = Kind::try_from(e.kind)
            .map_err(|_| format!("event {i}: unknown kind {} (buffer {b})", e.kind))?;
        let d = dense(b).ok_or_else(|| {
            format!("event {i}: buffer {b} is not a logical buffer of the assignment")
        })?;
        let mut canonical = NONE;
        seen.touched.push(d);
        let du = d as usize;
        match kind {
            Kind::Alloc | Kind::ShareWith => {
                if seen.entered[du] != usize::MAX {
                    return Err(format!(
                        "event {i}: buffer {b} allocated again (it was at event {})",
                        seen.entered[du]
                    ));
                }
                seen.entered[du] = i;
                if kind == Kind::ShareWith {
                    let c = e.share_with_canonical_id;
                    if c == b {
                        return Err(format!("event {i}: buffer {b} SHARE_WITH itself"));
                    }
                    canonical = dense(c).ok_or_else(|| {
                        format!(
                            "event {i}: buffer {b} SHARE_WITH buffer {c}, which is not a \
                             logical buffer of the assignment"
                        )
                    })?;
                    match seen.shares[canonical as usize] {
                        NONE => {}
                        cc if cc == d => {
                            return Err(format!(
                                "event {i}: SHARE_WITH in a cycle: buffer {b} shares with \
                                 buffer {c}, which shares with buffer {b}"
                            ));
                        }
                        cc => {
                            return Err(format!(
                                "event {i}: buffer {b} SHARE_WITH buffer {c}, which itself \
                                 shares with buffer {} (a chain: the canonical buffer of a \
                                 share is never a shared one)",
                                assignment.ids[cc as usize]
                            ));
                        }
                    }
                    seen.shares[du] = canonical;
                }
            }
            Kind::Free => {
                if seen.entered[du] == usize::MAX || seen.freed[du] {
                    return Err(format!("event {i}: FREE of buffer {b}, which is not live"));
                }
                seen.freed[du] = true;
            }
        }
        steps.push(Step {
            kind: e.kind,
            buffer: d,
            canonical,
        });
    }
    Ok(steps)
}

/// What a live buffer's row takes from its defining instruction's whole proto: its source
/// and its result shape ([`ResultShape`]).
type Defined = (String, ResultShape);

/// An instruction's result shape as the rows need it: an array's text (the one buffer it
/// can define is the whole result), a tuple's shape (its buffers are elements of it).
enum ResultShape {
    None,
    Array(String),
    Tuple(Box<proto::ShapeProto>),
}

fn analyse(hlo: &HloModule, ba: &BufferAssignmentProto, notes: &Notes) -> Result<ProgramHeap> {
    let place = hlo.place();
    let assignment = check_assignment(ba).map_err(|e| Error::data(place, e))?;
    let n = assignment.ids.len();
    let (mut seen, mut heap) = (Seen::new(n), Heap::new(n));
    let sum = |f: fn(&proto::BufferAllocationProto) -> bool| -> Result<i64> {
        ba.buffer_allocations
            .iter()
            .filter(|a| f(a))
            .try_fold(0i64, |s, a| s.checked_add(a.size))
            .ok_or_else(|| Error::data(place, "the allocations' sizes add up past 2^63 bytes"))
    };
    let parameter = sum(|a| a.is_entry_computation_parameter)?;
    let constant = sum(|a| a.is_constant)?;
    let output = sum(|a| a.maybe_live_out)?;
    let temp = sum(|a| {
        !a.is_entry_computation_parameter
            && !a.maybe_live_out
            && !a.is_thread_local
            && !a.is_constant
    })?;
    let total = sum(|_| true)?;
    // Instruction id → the instruction; `None` where several computations use the id.
    let mut by_id: HashMap<i64, Option<Instruction<'_>>> = HashMap::new();
    for i in hlo.instructions() {
        by_id
            .entry(i.id())
            .and_modify(|e| *e = None)
            .or_insert(Some(i));
    }
    // What each defining instruction gives the rows, decoded once per instruction (a
    // tuple can define thousands of buffers), and the text of large shapes once; by
    // instruction name, unique in a module (an id need not be, where [`defining`] found the
    // instruction by its name).
    let mut defined: HashMap<&str, Defined> = HashMap::new();
    let mut shapes: HashMap<(&str, Vec<i64>), String> = HashMap::new();
    let mut peaks = Vec::new();
    let mut buffers = Vec::new();
    let mut totals = Vec::new();
    for (t, trace) in ba.heap_simulator_traces.iter().enumerate() {
        let steps =
            check_trace(t, trace, &assignment, &mut seen).map_err(|e| Error::data(place, e))?;
        let allocation = trace_allocation(trace, &steps, &assignment.assigned);
        if usize::try_from(trace.buffer_allocation_index)
            .is_ok_and(|i| i >= ba.buffer_allocations.len())
        {
            // Older XLA kept the index from before it combined its temp allocations (see
            // `trace_allocation`); past the allocations it cannot be anything else.
            notes.note(format!(
                "{place}: heap simulator trace {t}: buffer_allocation_index {} names no \
                 allocation (the assignment has {}), taken as stale: {}",
                trace.buffer_allocation_index,
                ba.buffer_allocations.len(),
                allocation.map_or_else(
                    || "none of its buffers is assigned, counted at their logical sizes"
                        .to_string(),
                    |a| format!("its buffers are in allocation {a}")
                )
            ));
        }
        // The bytes a buffer counts: its assigned size in the trace's allocation (buffers
        // of other allocations do not count), its logical size where none is assigned.
        let size = |d: u32| -> Option<i64> {
            match allocation {
                Some(a) => match assignment.assigned[d as usize] {
                    Some((ai, s)) if ai == a => Some(s),
                    _ => None,
                },
                None => Some(assignment.buffers[d as usize].size),
            }
        };
        let (r, live_dense) = replay_steps(&steps, size, &assignment.ids, &mut heap)
            .map_err(|e| Error::data(place, format!("heap simulator trace {t}: {e}")))?;
        drop(steps);
        let allocation_bytes = allocation
            .and_then(|a| assignment.allocations.get(&a))
            .map_or(0, |a| a.size);
        let peak_at = r
            .peak_event
            .and_then(|i| trace.events.get(i))
            .map(|e| format!("{}/{}", e.computation_name, e.instruction_name))
            .unwrap_or_default();
        peaks.push(PeakRecord {
            program: hlo.name().to_string(),
            program_id: hlo.id(),
            dump: place.to_string(),
            trace: t as i64,
            whole_module: trace.whole_module_simulation,
            allocation: allocation.unwrap_or(-1),
            allocation_bytes,
            peak_bytes: r.peak,
            fragmentation_bytes: allocation_bytes - r.peak,
            peak_event: r.peak_event.map_or(-1, |i| i as i64),
            events: trace.events.len(),
            peak_at,
            live_buffers: r.live.len(),
            parameter_bytes: parameter,
            constant_bytes: constant,
            output_bytes: output,
            temp_bytes: temp,
            total_bytes: total,
        });
        let mut live = Vec::with_capacity(r.live.len());
        let nowhere = proto::logical_buffer_proto::Location::default();
        for (&(id, bytes), &d) in r.live.iter().zip(&live_dense) {
            let loc = assignment.buffers[d as usize]
                .defined_at
                .as_ref()
                .unwrap_or(&nowhere);
            let inst = defining(hlo, &by_id, id, loc)?;
            let (source, result) = match defined.entry(inst.name()) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(v) => {
                    let mut p = inst.proto()?;
                    let source = source_of(&inst, &p)?;
                    let result = match p.shape.take() {
                        None => ResultShape::None,
                        Some(s) if s.tuple_shapes.is_empty() => ResultShape::Array(shape_text(&s)),
                        Some(s) => ResultShape::Tuple(Box::new(s)),
                    };
                    v.insert((source, result))
                }
            };
            let shape = match result {
                ResultShape::None => String::new(),
                // An index into an array leads nowhere.
                ResultShape::Array(text) if loc.shape_index.is_empty() => text.clone(),
                ResultShape::Array(_) => String::new(),
                ResultShape::Tuple(t) => match subshape(t, &loc.shape_index) {
                    None => String::new(),
                    Some(s) if s.tuple_shapes.is_empty() && s.dimensions.len() <= 16 => {
                        shape_text(s)
                    }
                    // A tuple, or an array of many dimensions, is written once however many
                    // buffers it is the shape of (its text grows with its elements).
                    Some(s) => shapes
                        .entry((inst.name(), loc.shape_index.clone()))
                        .or_insert_with(|| shape_text(s))
                        .clone(),
                },
            };
            let index: Vec<String> = loc.shape_index.iter().map(i64::to_string).collect();
            live.push(BufferRecord {
                program: hlo.name().to_string(),
                program_id: hlo.id(),
                trace: t as i64,
                buffer: id,
                bytes,
                percent: percent(bytes, r.peak),
                shape,
                shape_index: format!("{{{}}}", index.join(",")),
                instruction: inst.name().to_string(),
                opcode: inst.opcode().to_string(),
                op_name: inst.op_name().to_string(),
                source: source.clone(),
            });
        }
        totals.push(r.totals);
        live.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.buffer.cmp(&b.buffer)));
        buffers.extend(live);
    }
    if peaks.is_empty() {
        peaks.push(PeakRecord {
            program: hlo.name().to_string(),
            program_id: hlo.id(),
            dump: place.to_string(),
            trace: -1,
            allocation: -1,
            peak_event: -1,
            parameter_bytes: parameter,
            constant_bytes: constant,
            output_bytes: output,
            temp_bytes: temp,
            total_bytes: total,
            ..PeakRecord::default()
        });
    }
    Ok(ProgramHeap {
        peaks,
        buffers,
        totals,
    })
}

/// The instruction defining logical buffer `id` at `loc`: by its name where the location
/// gives one (then its id must agree), else by its id, which must name one instruction of
/// the module (ids repeated across computations leave it ambiguous: refused).
fn defining<'m>(
    hlo: &'m HloModule,
    by_id: &HashMap<i64, Option<Instruction<'m>>>,
    id: i64,
    loc: &proto::logical_buffer_proto::Location,
) -> Result<Instruction<'m>> {
    let place = hlo.place();
    let iid = loc.instruction_id;
    if !loc.instruction_name.is_empty() {
        return match hlo.instruction(&loc.instruction_name) {
            Some(inst) if inst.id() == iid => Ok(inst),
            Some(inst) => Err(Error::data(
                place,
                format!(
                    "logical buffer {id}: defined by instruction {iid} `{}`, but `{}` is \
                     instruction {}",
                    loc.instruction_name,
                    loc.instruction_name,
                    inst.id()
                ),
            )),
            None => Err(Error::data(
                place,
                format!(
                    "logical buffer {id}: defined by instruction {iid} `{}`, which the \
                     module does not have",
                    loc.instruction_name
                ),
            )),
        };
    }
    match by_id.get(&iid) {
        Some(Some(inst)) => Ok(*inst),
        Some(None) => Err(Error::data(
            place,
            format!(
                "logical buffer {id}: defined by instruction {iid}, an id several \
                 computations of the module give"
            ),
        )),
        None => Err(Error::data(
            place,
            format!(
                "logical buffer {id}: defined by instruction {iid}, which the module does \
                 not have"
            ),
        )),
    }
}

/// The allocation a trace sized: the one its `buffer_allocation_index` names where that
/// holds some of the trace's buffers (with a size constraint XLA packs one simulation into
/// several allocations, each with the trace), else the one holding most of them (older
/// dumps keep the index from before XLA combined its temp allocations), the lowest index
/// on a tie; `None` when none of its buffers is assigned.
fn trace_allocation(
    trace: &proto::HeapSimulatorTrace,
    steps: &[Step],
    assigned: &[Option<(i64, i64)>],
) -> Option<i64> {
    // Each buffer of a checked trace enters it once, before it may leave: counting the
    // buffers that enter counts each buffer of the trace once.
    let mut counts: BTreeMap<i64, usize> = BTreeMap::new();
    for s in steps {
        if s.kind != Kind::Free as i32
            && let Some((a, _)) = assigned[s.buffer as usize]
        {
            *counts.entry(a).or_default() += 1;
        }
    }
    if counts.contains_key(&trace.buffer_allocation_index) {
        return Some(trace.buffer_allocation_index);
    }
    let most = counts.values().copied().max()?;
    counts.into_iter().find(|(_, n)| *n == most).map(|(a, _)| a)
}

fn percent(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 * 10000.0 / whole as f64).round() / 100.0
    }
}

/// The breakdown of the live buffers at each trace's peak by `key`, largest first.
fn groups(heap: &ProgramHeap, key: impl Fn(&BufferRecord) -> &str) -> Vec<GroupRecord> {
    // Each trace's buffers, in one pass (not one pass per trace: a dump can hold many).
    let mut of_trace: HashMap<i64, Vec<&BufferRecord>> = HashMap::new();
    for b in &heap.buffers {
        of_trace.entry(b.trace).or_default().push(b);
    }
    let mut out = Vec::new();
    for p in heap.peaks.iter().filter(|p| p.trace >= 0) {
        let mut sums: BTreeMap<&str, (i64, usize)> = BTreeMap::new();
        for b in of_trace.get(&p.trace).into_iter().flatten() {
            let k = key(b);
            let e = sums
                .entry(if k.is_empty() { "(none)" } else { k })
                .or_default();
            e.0 += b.bytes;
            e.1 += 1;
        }
        let mut rows: Vec<GroupRecord> = sums
            .into_iter()
            .map(|(k, (bytes, n))| GroupRecord {
                program: p.program.clone(),
                program_id: p.program_id,
                trace: p.trace,
                key: k.to_string(),
                bytes,
                percent: percent(bytes, p.peak_bytes),
                buffers: n,
            })
            .collect();
        rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.key.cmp(&b.key)));
        out.extend(rows);
    }
    out
}

/// The heaps of every after-optimizations dump in `inputs` (nsys-jax archives or XLA dump
/// folders), in input then member order, those of `options.program` only.
pub fn read(inputs: &[PathBuf], options: &Options, notes: &Notes) -> Result<Vec<ProgramHeap>> {
    let mut out = Vec::new();
    for path in inputs {
        if path.as_os_str() == "-" {
            return Err(Error::Usage(
                "njx-heap reads nsys-jax archives or folders of XLA dumps, not stdin: name them"
                    .into(),
            ));
        }
        let mut archive = source::open_dumps(path, notes.progress())?;
        let members: Vec<String> = Dumps::new(&archive)
            .after_optimizations()
            .into_iter()
            .map(str::to_string)
            .collect();
        if members.is_empty() {
            notes.note(format!(
                "{}: no after-optimizations HLO dumps",
                path.display()
            ));
        }
        // Each dump is used once: decoded, replayed and dropped (not cached in `Dumps`).
        for member in members {
            let hlo =
                HloModule::read(archive.member_place(&member), archive.open_member(&member)?)?;
            if is_wanted(&hlo, options.program.as_deref()) {
                out.push(program_heap(&hlo, notes)?);
            }
        }
    }
    if out.is_empty()
        && let Some(p) = &options.program
    {
        return Err(Error::Usage(format!(
            "--program {p}: no after-optimizations dump of that program"
        )));
    }
    Ok(out)
}

/// Bytes for people: `512 B`, `1.50 KiB`, `15.26 GiB`.
fn mib(bytes: i64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes.unsigned_abs() < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v.abs() >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.2} {}", UNITS[unit])
}

/// Writes the heaps as `options.view` asks.
pub fn write(options: &Options, heaps: &[ProgramHeap], out: &mut dyn Write) -> Result<()> {
    let groups_of = |by_source: bool| -> Vec<GroupRecord> {
        heaps
            .iter()
            .flat_map(|h| {
                if by_source {
                    groups(h, |b| &b.source)
                } else {
                    groups(h, |b| &b.op_name)
                }
            })
            .collect()
    };
    match (options.view, options.format) {
        (View::Peak, Format::Table) => {
            let mut rows = vec![
                [
                    "program",
                    "id",
                    "trace",
                    "alloc",
                    "peak",
                    "alloc size",
                    "event",
                    "peak at",
                    "live",
                    "params",
                    "outputs",
                    "temp",
                    "total",
                ]
                .map(String::from)
                .to_vec(),
            ];
            for p in heaps.iter().flat_map(|h| &h.peaks) {
                rows.push(vec![
                    p.program.clone(),
                    p.program_id.to_string(),
                    p.trace.to_string(),
                    p.allocation.to_string(),
                    mib(p.peak_bytes),
                    mib(p.allocation_bytes),
                    p.peak_event.to_string(),
                    p.peak_at.clone(),
                    p.live_buffers.to_string(),
                    mib(p.parameter_bytes),
                    mib(p.output_bytes),
                    mib(p.temp_bytes),
                    mib(p.total_bytes),
                ]);
            }
            write_table(out, &rows, &[1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12])
        }
        (View::Buffers, Format::Table) => {
            let mut rows = vec![
                [
                    "program",
                    "trace",
                    "buffer",
                    "size",
                    "%",
                    "shape",
                    "instruction",
                    "op_name",
                    "source",
                ]
                .map(String::from)
                .to_vec(),
            ];
            for b in heaps.iter().flat_map(|h| &h.buffers) {
                rows.push(vec![
                    b.program.clone(),
                    b.trace.to_string(),
                    b.buffer.to_string(),
                    mib(b.bytes),
                    format!("{:.2}", b.percent),
                    b.shape.clone(),
                    b.instruction.clone(),
                    b.op_name.clone(),
                    b.source.clone(),
                ]);
            }
            write_table(out, &rows, &[1, 2, 3, 4])
        }
        (View::ByOpName | View::BySource, Format::Table) => {
            let head = if options.view == View::BySource {
                "source"
            } else {
                "op_name"
            };
            let mut rows = vec![
                ["program", "trace", "size", "%", "buffers", head]
                    .map(String::from)
                    .to_vec(),
            ];
            for g in groups_of(options.view == View::BySource) {
                rows.push(vec![
                    g.program,
                    g.trace.to_string(),
                    mib(g.bytes),
                    format!("{:.2}", g.percent),
                    g.buffers.to_string(),
                    g.key,
                ]);
            }
            write_table(out, &rows, &[1, 2, 3, 4])
        }
        (View::Peak, f) => records(out, f, heaps.iter().flat_map(|h| &h.peaks)),
        (View::Buffers, f) => records(out, f, heaps.iter().flat_map(|h| &h.buffers)),
        (View::ByOpName | View::BySource, f) => {
            records(out, f, groups_of(options.view == View::BySource).iter())
        }
    }
}

fn records<'a, T: Serialize + Default + 'a>(
    out: &mut dyn Write,
    format: Format,
    rows: impl Iterator<Item = &'a T>,
) -> Result<()> {
    let mut w = RecordWriter::new(out, format)?;
    for r in rows {
        w.write(r)?;
    }
    w.finish::<T>()
}

/// The curves of `--svg`: one per trace, named `program (id) trace N` (the trace only
/// where a program has several), with the index of its peak event.
pub fn curves(heaps: &[ProgramHeap]) -> Vec<crate::output::charts::HeapCurve> {
    let mut out = Vec::new();
    for h in heaps {
        let traced: Vec<&PeakRecord> = h.peaks.iter().filter(|p| p.trace >= 0).collect();
        for (p, totals) in traced.iter().zip(&h.totals) {
            let name = if traced.len() > 1 {
                format!("{} ({}) trace {}", p.program, p.program_id, p.trace)
            } else {
                format!("{} ({})", p.program, p.program_id)
            };
            let peak = usize::try_from(p.peak_event).ok();
            out.push((name, totals.clone(), peak));
        }
    }
    out
}

/// Reads `inputs` and writes their heaps: njx-heap's job.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    let heaps = read(inputs, options, notes)?;
    write(options, &heaps, out)?;
    if let Some(svg) = &options.svg {
        crate::output::charts::heap_svg(svg, &curves(&heaps))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::heap_simulator_trace::Event;

    fn ev(kind: Kind, id: i64, canonical: i64) -> Event {
        Event {
            kind: kind as i32,
            buffer_id: id,
            share_with_canonical_id: canonical,
            ..Default::default()
        }
    }

    #[test]
    fn shared_buffers_count_once_while_their_canonical_lives() {
        // 1: 100, 2 shares 1, 3: 50. Peak 150 after 3's ALLOC with 1 and 3 live.
        let events = [
            ev(Kind::Alloc, 1, 0),
            ev(Kind::ShareWith, 2, 1),
            ev(Kind::Alloc, 3, 0),
            ev(Kind::Free, 1, 0),
            ev(Kind::Free, 2, 0),
            ev(Kind::Free, 3, 0),
        ];
        let sizes = HashMap::from([(1, 100), (2, 100), (3, 50)]);
        let r = replay(&events, |id| sizes.get(&id).copied()).unwrap();
        assert_eq!(r.peak, 150);
        assert_eq!(r.peak_event, Some(2));
        assert_eq!(r.live, vec![(1, 100), (3, 50)]);
    }

    #[test]
    fn a_share_after_its_canonical_is_freed_counts() {
        let events = [
            ev(Kind::Alloc, 1, 0),
            ev(Kind::Free, 1, 0),
            ev(Kind::ShareWith, 2, 1),
            ev(Kind::Alloc, 3, 0),
        ];
        let r = replay(&events, |_| Some(10)).unwrap();
        assert_eq!((r.peak, r.peak_event), (20, Some(3)));
        assert_eq!(r.live, vec![(2, 10), (3, 10)]);
    }

    #[test]
    fn freeing_what_is_not_live_is_an_error() {
        let e = replay(&[ev(Kind::Free, 4, 0)], |_| Some(1)).unwrap_err();
        assert!(e.contains("buffer 4"), "{e}");
    }

    /// The replay as njx wrote it first, and as XLA's rule reads: the live set copied
    /// at every new peak (quadratic, plain). The reference the linear replay must equal.
    fn reference(events: &[Event], size: impl Fn(i64) -> Option<i64>) -> Result<Replay, String> {
        let mut live: HashMap<i64, i64> = HashMap::new();
        let mut outstanding: HashMap<i64, i64> = HashMap::new();
        let mut canonical: HashMap<i64, i64> = HashMap::new();
        let mut total: i64 = 0;
        let mut best = Replay::default();
        let mut totals = Vec::new();
        for (i, e) in events.iter().enumerate() {
            let Some(bytes) = size(e.buffer_id) else {
                totals.push(total);
                continue;
            };
            let kind = Kind::try_from(e.kind)
                .map_err(|_| format!("event {i}: unknown kind {}", e.kind))?;
            match kind {
                Kind::Alloc | Kind::ShareWith => {
                    let counted = if kind == Kind::Alloc {
                        outstanding.insert(e.buffer_id, 1);
                        bytes
                    } else {
                        canonical.insert(e.buffer_id, e.share_with_canonical_id);
                        let n = outstanding.entry(e.share_with_canonical_id).or_insert(0);
                        *n += 1;
                        if *n == 1 { bytes } else { 0 }
                    };
                    if live.insert(e.buffer_id, counted).is_some() {
                        return Err(format!(
                            "event {i}: buffer {} allocated while live",
                            e.buffer_id
                        ));
                    }
                    total += counted;
                }
                Kind::Free => {
                    let Some(counted) = live.remove(&e.buffer_id) else {
                        return Err(format!(
                            "event {i}: FREE of buffer {}, which is not live",
                            e.buffer_id
                        ));
                    };
                    let c = canonical.get(&e.buffer_id).copied().unwrap_or(e.buffer_id);
                    if let Some(n) = outstanding.get_mut(&c) {
                        *n -= 1;
                    }
                    total -= counted;
                }
            }
            totals.push(total);
            if total > best.peak {
                best.peak = total;
                best.peak_event = Some(i);
                let mut set: Vec<(i64, i64)> = live
                    .iter()
                    .filter(|(_, b)| **b > 0)
                    .map(|(&id, &b)| (id, b))
                    .collect();
                set.sort_unstable();
                best.live = set;
            }
        }
        best.totals = totals;
        Ok(best)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Random traces over a few buffers (any order of kinds, unknown kinds, shares
        /// of any buffer, buffers not counted, sizes of 0): the linear replay gives what
        /// the reference gives, errors included.
        #[test]
        fn the_linear_replay_equals_the_reference(
            raw in proptest::collection::vec((0i32..4, 0i64..6, 0i64..6), 0..40),
            sizes in proptest::collection::vec(proptest::option::weighted(0.8, 0i64..50), 6),
        ) {
            let events: Vec<Event> = raw
                .iter()
                .map(|&(k, id, c)| Event {
                    // 3: an unknown kind.
                    kind: k,
                    buffer_id: id,
                    share_with_canonical_id: c,
                    ..Default::default()
                })
                .collect();
            let size = |id: i64| sizes[id as usize];
            proptest::prop_assert_eq!(replay(&events, size), reference(&events, size));
        }

        /// The same on traces as XLA writes them (each buffer allocated or shared once,
        /// freed at most once after), which run to the end rather than to an error.
        #[test]
        fn the_linear_replay_equals_the_reference_on_valid_traces(
            order in proptest::collection::vec((0usize..1000, 0usize..1000, 0i64..20), 1..30),
            sizes in proptest::collection::vec(0i64..50, 30),
        ) {
            // Buffer k enters at step 2k (ALLOC, or SHARE_WITH an earlier one) and leaves
            // at a later random step, or never.
            let mut timed: Vec<(usize, usize, Event)> = Vec::new();
            for (k, &(share, life, _)) in order.iter().enumerate() {
                let kind = if k > 0 && share % 3 == 0 { Kind::ShareWith } else { Kind::Alloc };
                let canonical = if kind == Kind::ShareWith { (share % k) as i64 } else { 0 };
                timed.push((2 * k, 0, ev(kind, k as i64, canonical)));
                if life % 5 != 0 {
                    timed.push((2 * k + 1 + life % 40, 1, ev(Kind::Free, k as i64, 0)));
                }
            }
            timed.sort_by_key(|&(at, order, _)| (at, order));
            let events: Vec<Event> = timed.into_iter().map(|(_, _, e)| e).collect();
            // Shares of a shared buffer are chains XLA does not write; they replay all the
            // same, so they are kept.
            let size = |id: i64| (id % 7 != 3).then(|| sizes[id as usize]);
            let r = replay(&events, size);
            proptest::prop_assert!(r.is_ok(), "{:?}", r);
            proptest::prop_assert_eq!(r, reference(&events, size));
        }
    }

    /// 200,000 buffers allocated one after the other, each a new peak, then freed: the
    /// replay is linear (a copy of the live set at every new peak took minutes here).
    #[test]
    fn two_hundred_thousand_live_buffers_replay_at_once() {
        const N: i64 = 200_000;
        let events: Vec<Event> = (0..N)
            .map(|k| ev(Kind::Alloc, k, 0))
            .chain((0..N).map(|k| ev(Kind::Free, k, 0)))
            .collect();
        let start = std::time::Instant::now();
        let r = replay(&events, |id| Some(id % 100 + 1)).unwrap();
        let took = start.elapsed();
        assert_eq!(r.peak_event, Some(N as usize - 1));
        assert_eq!(r.live.len(), N as usize);
        assert_eq!(r.peak, (0..N).map(|k| k % 100 + 1).sum::<i64>());
        assert_eq!(r.totals.len(), 2 * N as usize);
        assert_eq!(*r.totals.last().unwrap(), 0);
        // Milliseconds in release, well under a second unoptimised; the bound leaves room
        // for a loaded machine.
        assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    }

    #[test]
    fn sizes_past_64_bits_and_negative_sizes_are_errors() {
        let events = [ev(Kind::Alloc, 1, 0), ev(Kind::Alloc, 2, 0)];
        let e = replay(&events, |_| Some(i64::MAX)).unwrap_err();
        assert!(e.contains("event 1") && e.contains("2^63"), "{e}");
        let e = replay(&events, |id| Some(if id == 2 { -1 } else { 1 })).unwrap_err();
        assert!(e.contains("buffer 2 has a negative size"), "{e}");
    }

    #[test]
    fn shapes_as_xla_prints_them() {
        let s = proto::ShapeProto {
            element_type: proto::PrimitiveType::Bf16 as i32,
            dimensions: vec![2, 3],
            ..Default::default()
        };
        assert_eq!(shape_text(&s), "bf16[2,3]");
    }
}
