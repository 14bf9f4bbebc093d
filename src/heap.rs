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
use crate::notes::Notes;
use crate::output::{Format, RecordWriter, write_table};
use crate::source;
use clap::ValueEnum;
use serde::Serialize;
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

/// Replays heap simulator `events` as XLA's `ComputePeakMemoryLogicalBuffers`; `size`
/// gives the bytes of a buffer, `None` for a buffer not counted (not in the allocation).
/// An event that frees a buffer that is not live is an error (the message says which).
pub fn replay(
    events: &[proto::heap_simulator_trace::Event],
    size: impl Fn(i64) -> Option<i64>,
) -> std::result::Result<Replay, String> {
    // Counted bytes of each live buffer; live instances of each canonical buffer;
    // the canonical buffer of each shared one.
    let mut live: HashMap<i64, i64> = HashMap::new();
    let mut outstanding: HashMap<i64, i64> = HashMap::new();
    let mut canonical: HashMap<i64, i64> = HashMap::new();
    let mut total: i64 = 0;
    let mut best = Replay::default();
    let mut totals = Vec::with_capacity(events.len());
    for (i, e) in events.iter().enumerate() {
        let Some(bytes) = size(e.buffer_id) else {
            totals.push(total);
            continue;
        };
        let kind =
            Kind::try_from(e.kind).map_err(|_| format!("event {i}: unknown kind {}", e.kind))?;
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

/// The heap of one module from its buffer assignment. A module without one, a trace
/// naming a buffer the assignment does not define, and a logical buffer defined by an
/// instruction the module lacks are errors naming the dump.
pub fn program_heap(hlo: &HloModule) -> Result<ProgramHeap> {
    let place = hlo.place();
    let Some(ba) = hlo.buffer_assignment()? else {
        return Err(Error::data(
            place,
            "the dump has no buffer assignment (HloProto.buffer_assignment): njx-heap \
             needs XLA's after-optimizations dumps as nsys-jax stores them",
        ));
    };
    analyse(hlo, &ba)
}

fn analyse(hlo: &HloModule, ba: &BufferAssignmentProto) -> Result<ProgramHeap> {
    let place = hlo.place();
    let logical: HashMap<i64, &proto::LogicalBufferProto> =
        ba.logical_buffers.iter().map(|b| (b.id, b)).collect();
    // Buffer id → (allocation index, assigned size).
    let mut assigned: HashMap<i64, (i64, i64)> = HashMap::new();
    for a in &ba.buffer_allocations {
        for x in &a.assigned {
            if !logical.contains_key(&x.logical_buffer_id) {
                return Err(Error::data(
                    place,
                    format!(
                        "buffer allocation {}: assigned buffer {} is not a logical buffer \
                         of the assignment",
                        a.index, x.logical_buffer_id
                    ),
                ));
            }
            assigned.insert(x.logical_buffer_id, (a.index, x.size));
        }
    }
    let alloc_by_index: HashMap<i64, &proto::BufferAllocationProto> =
        ba.buffer_allocations.iter().map(|a| (a.index, a)).collect();
    let (mut parameter, mut constant, mut output, mut temp, mut total) = (0, 0, 0, 0, 0);
    for a in &ba.buffer_allocations {
        if a.is_entry_computation_parameter {
            parameter += a.size;
        }
        if a.is_constant {
            constant += a.size;
        }
        if a.maybe_live_out {
            output += a.size;
        }
        if !a.is_entry_computation_parameter
            && !a.maybe_live_out
            && !a.is_thread_local
            && !a.is_constant
        {
            temp += a.size;
        }
        total += a.size;
    }
    let by_id: HashMap<i64, Instruction<'_>> = hlo.instructions().map(|i| (i.id(), i)).collect();
    let mut peaks = Vec::new();
    let mut buffers = Vec::new();
    let mut totals = Vec::new();
    for (t, trace) in ba.heap_simulator_traces.iter().enumerate() {
        if let Some(e) = trace
            .events
            .iter()
            .find(|e| !logical.contains_key(&e.buffer_id))
        {
            return Err(Error::data(
                place,
                format!(
                    "heap simulator trace {t}: buffer {} is not a logical buffer of the \
                     assignment",
                    e.buffer_id
                ),
            ));
        }
        let allocation = trace_allocation(trace, &assigned);
        let size = |id: i64| -> Option<i64> {
            match allocation {
                Some(a) => match assigned.get(&id) {
                    Some((ai, s)) if *ai == a => Some(*s),
                    _ => None,
                },
                None => logical.get(&id).map(|b| b.size),
            }
        };
        let r = replay(&trace.events, size)
            .map_err(|e| Error::data(place, format!("heap simulator trace {t}: {e}")))?;
        let allocation_bytes = allocation
            .and_then(|a| alloc_by_index.get(&a))
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
        totals.push(r.totals.clone());
        let mut live = Vec::with_capacity(r.live.len());
        for &(id, bytes) in &r.live {
            let b = logical[&id];
            let loc = b.defined_at.clone().unwrap_or_default();
            let inst = by_id.get(&loc.instruction_id).ok_or_else(|| {
                Error::data(
                    place,
                    format!(
                        "logical buffer {id}: defined by instruction {}, which the module \
                         does not have",
                        loc.instruction_id
                    ),
                )
            })?;
            let p = inst.proto()?;
            let shape = p
                .shape
                .as_ref()
                .and_then(|s| subshape(s, &loc.shape_index))
                .map(shape_text)
                .unwrap_or_default();
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
                source: source_of(inst, &p)?,
            });
        }
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

/// The allocation a trace sized: the one its `buffer_allocation_index` names where that
/// holds some of the trace's buffers (with a size constraint XLA packs one simulation into
/// several allocations, each with the trace), else the one holding most of them (older
/// dumps keep the index from before XLA combined its temp allocations), the lowest index
/// on a tie; `None` when none of its buffers is assigned.
fn trace_allocation(
    trace: &proto::HeapSimulatorTrace,
    assigned: &HashMap<i64, (i64, i64)>,
) -> Option<i64> {
    let mut counts: BTreeMap<i64, usize> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    for e in &trace.events {
        if seen.insert(e.buffer_id)
            && let Some((a, _)) = assigned.get(&e.buffer_id)
        {
            *counts.entry(*a).or_default() += 1;
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
    let mut out = Vec::new();
    for p in heap.peaks.iter().filter(|p| p.trace >= 0) {
        let mut sums: BTreeMap<&str, (i64, usize)> = BTreeMap::new();
        for b in heap.buffers.iter().filter(|b| b.trace == p.trace) {
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
                out.push(program_heap(&hlo)?);
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
pub fn curves(heaps: &[ProgramHeap]) -> Vec<crate::plot::HeapCurve> {
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
        crate::plot::heap_svg(svg, &curves(&heaps))?;
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
