//! One program's heap from the buffer assignment of its dump: its allocation totals and,
//! trace by trace, the checked events, their replay, the row of `--view peak` and the
//! rows of the buffers live at the peak.

use super::assignment::{Assignment, Seen, check_assignment, check_trace, trace_allocation};
use super::buffers::LiveBuffers;
use super::records::{PeakRecord, ProgramHeap};
use super::replay::{Heap, Replay, replay_steps};
use crate::error::{Error, Result};
use crate::hlo::HloModule;
use crate::hlo::proto::{self, BufferAssignmentProto};
use crate::output::notes::Notes;

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

/// [`program_heap`] of `hlo`'s buffer assignment `ba`: the assignment checked, then
/// trace by trace its events checked and replayed, its row of `--view peak` and the rows
/// of its live buffers.
fn analyse(hlo: &HloModule, ba: &BufferAssignmentProto, notes: &Notes) -> Result<ProgramHeap> {
    let place = hlo.place();
    let assignment = check_assignment(ba).map_err(|e| Error::data(place, e))?;
    let n = assignment.ids.len();
    let (mut seen, mut heap) = (Seen::new(n), Heap::new(n));
    let stats = Stats::of(ba, place)?;
    let mut live_buffers = LiveBuffers::new(hlo);
    let mut peaks = Vec::new();
    let mut buffers = Vec::new();
    let mut totals = Vec::new();
    for (t, trace) in ba.heap_simulator_traces.iter().enumerate() {
        let steps =
            check_trace(t, trace, &assignment, &mut seen).map_err(|e| Error::data(place, e))?;
        let allocation = trace_allocation(trace, &steps, &assignment.assigned);
        note_stale_index(
            place,
            t,
            trace,
            ba.buffer_allocations.len(),
            allocation,
            notes,
        );
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
        peaks.push(peak_record(
            hlo,
            t,
            trace,
            allocation,
            &assignment,
            &r,
            &stats,
        ));
        let mut live = live_buffers.rows(t, &r, &live_dense, &assignment)?;
        totals.push(r.totals);
        live.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.buffer.cmp(&b.buffer)));
        buffers.extend(live);
    }
    if peaks.is_empty() {
        peaks.push(untraced(hlo, &stats));
    }
    Ok(ProgramHeap {
        peaks,
        buffers,
        totals,
    })
}

/// A program's allocation totals, XLA's `BufferAssignment::Stats` (module comment of
/// [`super`]), bytes.
struct Stats {
    parameter: i64,
    constant: i64,
    output: i64,
    temp: i64,
    total: i64,
}

impl Stats {
    /// The totals of `ba`'s allocations; sizes adding up past 2^63 bytes are an error
    /// naming the dump (`place`).
    fn of(ba: &BufferAssignmentProto, place: &str) -> Result<Stats> {
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
        Ok(Stats {
            parameter,
            constant,
            output,
            temp,
            total,
        })
    }
}

/// Notes trace `t` when its `buffer_allocation_index` is past the `count` allocations of
/// the dump (`place`): taken as stale, with the `allocation` its buffers are in.
fn note_stale_index(
    place: &str,
    t: usize,
    trace: &proto::HeapSimulatorTrace,
    count: usize,
    allocation: Option<i64>,
    notes: &Notes,
) {
    if usize::try_from(trace.buffer_allocation_index).is_ok_and(|i| i >= count) {
        // Older XLA kept the index from before it combined its temp allocations (see
        // `trace_allocation`); past the allocations it cannot be anything else.
        notes.note(format!(
            "{place}: heap simulator trace {t}: buffer_allocation_index {} names no \
             allocation (the assignment has {}), taken as stale: {}",
            trace.buffer_allocation_index,
            count,
            allocation.map_or_else(
                || "none of its buffers is assigned, counted at their logical sizes".to_string(),
                |a| format!("its buffers are in allocation {a}")
            )
        ));
    }
}

/// The row of `--view peak` of trace `t` (`trace`) of `hlo`, replayed as `r`; `allocation`
/// is the one it sized ([`trace_allocation`]).
fn peak_record(
    hlo: &HloModule,
    t: usize,
    trace: &proto::HeapSimulatorTrace,
    allocation: Option<i64>,
    assignment: &Assignment<'_>,
    r: &Replay,
    stats: &Stats,
) -> PeakRecord {
    let allocation_bytes = allocation
        .and_then(|a| assignment.allocations.get(&a))
        .map(|a| a.size);
    let peak_at = r
        .peak_event
        .and_then(|i| trace.events.get(i))
        .map(|e| format!("{}/{}", e.computation_name, e.instruction_name));
    PeakRecord {
        program: hlo.name().to_string(),
        program_id: hlo.id(),
        dump: hlo.place().to_string(),
        trace: Some(t as i64),
        whole_module: Some(trace.whole_module_simulation),
        allocation,
        allocation_bytes,
        peak_bytes: Some(r.peak),
        fragmentation_bytes: allocation_bytes.map(|a| a - r.peak),
        peak_event: r.peak_event.map(|i| i as i64),
        events: Some(trace.events.len()),
        peak_at,
        live_buffers: Some(r.live.len()),
        parameter_bytes: stats.parameter,
        constant_bytes: stats.constant,
        output_bytes: stats.output,
        temp_bytes: stats.temp,
        total_bytes: stats.total,
    }
}

/// The one row of `--view peak` of a program without heap simulator traces: its
/// allocation totals only.
fn untraced(hlo: &HloModule, stats: &Stats) -> PeakRecord {
    PeakRecord {
        program: hlo.name().to_string(),
        program_id: hlo.id(),
        dump: hlo.place().to_string(),
        parameter_bytes: stats.parameter,
        constant_bytes: stats.constant,
        output_bytes: stats.output,
        temp_bytes: stats.temp,
        total_bytes: stats.total,
        ..PeakRecord::default()
    }
}
