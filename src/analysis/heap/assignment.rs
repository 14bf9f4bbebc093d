//! The buffer assignment of a dump and the events of each heap simulator trace, checked
//! as XLA writes them and indexed densely for the replay; the allocation a trace sized.

use super::replay::{NONE, ReplayResult, Step};
use crate::hlo::proto::{self, BufferAssignmentProto, heap_simulator_trace::event::Kind};
use std::collections::{BTreeMap, HashMap};

/// The tables of a buffer assignment, checked by [`check_assignment`]. Logical buffers
/// are numbered densely by their place in the assignment (as [`Step`]s name them).
pub(super) struct Assignment<'b> {
    /// Logical buffer id → its dense index.
    pub(super) index: HashMap<i64, u32>,
    /// By dense index: the buffers, their ids, and the (allocation index, assigned size)
    /// of those assigned.
    pub(super) buffers: Vec<&'b proto::LogicalBufferProto>,
    pub(super) ids: Vec<i64>,
    pub(super) assigned: Vec<Option<(i64, i64)>>,
    /// Allocation index → the allocation.
    pub(super) allocations: HashMap<i64, &'b proto::BufferAllocationProto>,
}

/// Checks that a buffer assignment adds up as XLA writes it, and indexes it. Refused (the
/// message names the buffer or allocation): a logical buffer id given twice or of a
/// negative size; an allocation of a negative size, or whose index repeats or is not one
/// of 0..n (XLA numbers its n allocations by their position); a buffer assigned at a
/// negative offset or of a negative size, reaching past its allocation (XLA's
/// `BufferAllocation::AddAssignment` checks both), assigned twice (XLA gives each buffer
/// one allocation) or not a logical buffer of the assignment. Events are checked per
/// trace ([`check_trace`]).
pub(super) fn check_assignment(ba: &BufferAssignmentProto) -> ReplayResult<Assignment<'_>> {
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
        assign(a, &index, &mut assigned)?;
    }
    Ok(Assignment {
        index,
        buffers: ba.logical_buffers.iter().collect(),
        ids: ba.logical_buffers.iter().map(|b| b.id).collect(),
        assigned,
        allocations,
    })
}

/// Records the buffers assigned to allocation `a` in `assigned` (by dense index, from
/// `index`), refusing those [`check_assignment`] says.
fn assign(
    a: &proto::BufferAllocationProto,
    index: &HashMap<i64, u32>,
    assigned: &mut [Option<(i64, i64)>],
) -> ReplayResult<()> {
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
    Ok(())
}

/// What [`check_trace`] remembers of each buffer, by dense index, set back after each
/// trace as [`Heap`](super::replay::Heap) is: the event it entered the trace at
/// (`usize::MAX`: not yet), whether it left, the canonical buffer it shares with
/// ([`NONE`]).
pub(super) struct Seen {
    entered: Vec<usize>,
    freed: Vec<bool>,
    shares: Vec<u32>,
    touched: Vec<u32>,
}

impl Seen {
    pub(super) fn new(n: usize) -> Seen {
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
pub(super) fn check_trace(
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

/// The events of `trace` as [`Step`]s, checked as [`check_trace`] says; what they
/// touched is left in `seen`.
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
                    canonical = canonical_of(i, e, d, assignment, seen)?;
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

/// The canonical buffer of event `i` (`e`), a `SHARE_WITH` of buffer `d`, checked as
/// [`check_trace`] says (another logical buffer of the assignment, not itself a shared
/// one) and remembered in `seen`.
fn canonical_of(
    i: usize,
    e: &proto::heap_simulator_trace::Event,
    d: u32,
    assignment: &Assignment<'_>,
    seen: &mut Seen,
) -> ReplayResult<u32> {
    let (b, c) = (e.buffer_id, e.share_with_canonical_id);
    if c == b {
        return Err(format!("event {i}: buffer {b} SHARE_WITH itself"));
    }
    let canonical = assignment.index.get(&c).copied().ok_or_else(|| {
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
    seen.shares[d as usize] = canonical;
    Ok(canonical)
}

/// The allocation a trace sized: the one its `buffer_allocation_index` names where that
/// holds some of the trace's buffers (with a size constraint XLA packs one simulation into
/// several allocations, each with the trace), else the one holding most of them (older
/// dumps keep the index from before XLA combined its temp allocations), the lowest index
/// on a tie; `None` when none of its buffers is assigned.
pub(super) fn trace_allocation(
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
