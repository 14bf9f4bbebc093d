//! The GPU projection of the NVTX ranges of an nsys export, as [`GpuRange`] records: each
//! range's times become those of the GPU work it launched. The semantics are those of
//! nsys' `nvtx_gpu_proj_trace` report (the table of the first form in nsys-jax archives):
//!
//! - GPU work is the kernels, memory copies and memory sets
//!   (`CUPTI_ACTIVITY_KIND_KERNEL`, `…_MEMCPY`, `…_MEMSET`, whichever the export has);
//! - each is launched by the CUDA API call with the same `correlationId` in the same
//!   process (`CUPTI_ACTIVITY_KIND_RUNTIME`, which holds runtime and driver calls, and
//!   `…_DRIVER` where an export has it), made on one thread (`globalTid`). CUPTI gives
//!   each call of a process its own correlation id (processes do repeat each other's), so
//!   two calls of one process with one id are refused, naming both: the work of that id
//!   would have no one call;
//! - a call belongs to every NVTX push/pop range *of its thread* that contains it
//!   (`start ≤ call start` and `call end ≤ end`);
//! - a range's projected start is the earliest start of its GPU work, its end the latest
//!   end; `gpu_ops` counts its distinct correlation ids (launches). A CUDA graph launched
//!   with `--cuda-graph-trace=node` shows as many kernels sharing the correlation id of
//!   the `cudaGraphLaunch` call: one launch, spanning all of them;
//! - ranges without GPU work are left out. Every range containing a call also contains
//!   the calls of its descendants, so the ranges kept are closed under taking the parent:
//!   `parent` and `depth` are the CPU tree's, and `children` counts the children kept;
//! - `id` is the range's `rowid`, the `id` of the same range in `--table ranges`;
//!   `cpu_start_ns` and `cpu_dur_ns` are its CPU-side times;
//! - with [`Options::start_end`], start/end ranges started and ended on
//!   the same thread (the report's rule) are projected too, as roots of their own.
//!
//! Records come in order of projected start, the longer first (the report's order), a
//! parent before its children. GPU work launched outside every range, or with no API call
//! in the export, is in no record; how much is said on stderr, as are the ranges never
//! ended or without a name (repaired as in the range table, [`nvtx`]).
//!
//! Method: streams and external sorts (`source/sorter.rs`: sorted runs
//! of 16 MiB in temporary files under `TMPDIR`, merged), so that memory is bounded
//! whatever the size of the export. The GPU operations are sorted by (process,
//! correlation id) and the API calls by (process, correlation id, table, row); one merge
//! of the two groups the work per launch and gives it to the call of its correlation id
//! (two calls of one id come side by side: found on the way). Those calls, sorted by
//! start, are swept together with the ranges in their order ([`nvtx::Nvtx::next`])
//! keeping a stack of open ranges per thread, so the innermost range containing a call is
//! found by a binary search of its thread's stack; the work is added there, and a range's
//! work goes to its parent (the range below it on the stack) when it is popped, which is
//! also when its record is complete: the records go through one more sort into the
//! report's order. Start/end ranges need not nest: each open one of a call's thread is
//! looked at. Time O((ranges + GPU operations + API calls) · log); memory: the sort
//! buffers, a read buffer per run, the open ranges; never ranges × kernels.

use crate::error::Result;
use crate::output::notes::Notes;
use crate::records::GpuRange;
use crate::source::Options;
use crate::source::ranges::nvtx::{self, NONE, Nvtx, Raw, StartEnd};
use crate::source::sorter::{Fixed, Sorted, Sorter, i64_at, u32_at};
use crate::source::sqlite::{Db, global_pid_of, pid_of, tid_of};
use std::collections::HashMap;
use std::sync::Arc;

/// The tables of GPU work.
const WORK_TABLES: &[&str] = &[
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
];

/// The tables of CUDA API calls.
const CALL_TABLES: &[&str] = &["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"];

/// A GPU operation: its launch key and times.
#[derive(Debug, Clone, Copy)]
struct Op {
    gpid: i64,
    corr: i64,
    start: i64,
    end: i64,
}

impl Fixed for Op {
    const SIZE: usize = 32;
    fn put(&self, out: &mut Vec<u8>) {
        for v in [self.gpid, self.corr, self.start, self.end] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    fn get(b: &[u8]) -> Self {
        Op {
            gpid: i64_at(b, 0),
            corr: i64_at(b, 8),
            start: i64_at(b, 16),
            end: i64_at(b, 24),
        }
    }
}

/// A CUDA API call as read: its thread, correlation id, place (table and row) and times.
#[derive(Debug, Clone, Copy)]
struct ApiCall {
    gtid: i64,
    corr: i64,
    row: i64,
    start: i64,
    end: i64,
    /// Index of the thread in [`Nvtx::threads`], [`NONE`] for a thread without ranges.
    thread: u32,
    /// Index of the table in [`CALL_TABLES`].
    table: u32,
}

impl ApiCall {
    /// The launch key: (global process id, correlation id).
    fn key(&self) -> (i64, i64) {
        (global_pid_of(self.gtid), self.corr)
    }
}

impl Fixed for ApiCall {
    const SIZE: usize = 48;
    fn put(&self, out: &mut Vec<u8>) {
        for v in [self.gtid, self.corr, self.row, self.start, self.end] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.thread.to_le_bytes());
        out.extend_from_slice(&self.table.to_le_bytes());
    }
    fn get(b: &[u8]) -> Self {
        ApiCall {
            gtid: i64_at(b, 0),
            corr: i64_at(b, 8),
            row: i64_at(b, 16),
            start: i64_at(b, 24),
            end: i64_at(b, 32),
            thread: u32_at(b, 40),
            table: u32_at(b, 44),
        }
    }
}

/// A CUDA API call that launched GPU work, with the span of that work.
#[derive(Debug, Clone, Copy)]
struct Call {
    start: i64,
    end: i64,
    work_start: i64,
    work_end: i64,
    /// Index of the thread in [`Nvtx::threads`], [`NONE`] for a thread without ranges.
    thread: u32,
}

impl Fixed for Call {
    const SIZE: usize = 36;
    fn put(&self, out: &mut Vec<u8>) {
        for v in [self.start, self.end, self.work_start, self.work_end] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.thread.to_le_bytes());
    }
    fn get(b: &[u8]) -> Self {
        Call {
            start: i64_at(b, 0),
            end: i64_at(b, 8),
            work_start: i64_at(b, 16),
            work_end: i64_at(b, 24),
            thread: u32_at(b, 32),
        }
    }
}

/// A range with GPU work: what its record holds, in the order of the records.
#[derive(Debug, Clone, Copy)]
struct Projected {
    proj_start: i64,
    proj_end: i64,
    start: i64,
    end: i64,
    ops: u64,
    /// Push/pop ranges first, by their index in start order; then start/end ranges
    /// (`MARK` set), likewise: the tie-break of the order.
    seq: u64,
    row: u32,
    /// The parent's row; meaningless at depth 0.
    parent: u32,
    depth: u32,
    thread: u32,
    name: u32,
    children: u32,
}

/// Set in [`Projected::seq`] for start/end ranges.
const MARK: u64 = 1 << 63;

impl Fixed for Projected {
    const SIZE: usize = 72;
    fn put(&self, out: &mut Vec<u8>) {
        for v in [self.proj_start, self.proj_end, self.start, self.end] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.ops.to_le_bytes());
        out.extend_from_slice(&self.seq.to_le_bytes());
        for v in [
            self.row,
            self.parent,
            self.depth,
            self.thread,
            self.name,
            self.children,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    fn get(b: &[u8]) -> Self {
        Projected {
            proj_start: i64_at(b, 0),
            proj_end: i64_at(b, 8),
            start: i64_at(b, 16),
            end: i64_at(b, 24),
            ops: i64_at(b, 32) as u64,
            seq: i64_at(b, 40) as u64,
            row: u32_at(b, 48),
            parent: u32_at(b, 52),
            depth: u32_at(b, 56),
            thread: u32_at(b, 60),
            name: u32_at(b, 64),
            children: u32_at(b, 68),
        }
    }
}

impl Projected {
    fn key(&self) -> (i64, std::cmp::Reverse<i64>, u64) {
        (self.proj_start, std::cmp::Reverse(self.proj_end), self.seq)
    }
}

/// The GPU work projected onto one range.
#[derive(Debug, Clone, Copy)]
struct Proj {
    start: i64,
    end: i64,
    ops: u64,
    children: u32,
}

impl Proj {
    const EMPTY: Proj = Proj {
        start: i64::MAX,
        end: i64::MIN,
        ops: 0,
        children: 0,
    };

    fn add(&mut self, start: i64, end: i64, ops: u64) {
        self.start = self.start.min(start);
        self.end = self.end.max(end);
        self.ops += ops;
    }
}

/// How the GPU work of an export was attributed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Records handed on.
    pub records: u64,
    /// GPU operations (kernel, memcpy and memset rows).
    pub operations: u64,
    /// Operations without a correlation id or process: not attributable.
    pub uncorrelated: u64,
    /// Launches: distinct (process, correlation id) among the operations.
    pub launches: u64,
    /// Launches with no API call of that correlation id in the export.
    pub without_call: u64,
    /// Launches whose API call is in no NVTX range of its thread.
    pub outside: u64,
}

/// Streams `start, end, <a>, <b>` of every row of `table` to `f(rowid, start, end, a, b)`;
/// `start` and `end` must be present and ordered (the columns are among those the table
/// must have, [`crate::source::sqlite::REQUIRED`]).
fn scan(
    db: &Db,
    table: &str,
    a: &str,
    b: &str,
    f: &mut dyn FnMut(i64, i64, i64, Option<i64>, Option<i64>),
) -> Result<()> {
    let sql = db.select(table, &["start", "end", a, b], true, None)?;
    db.each_row(table, &sql, |row| {
        let rowid = db.rowid(table, row)?;
        let need = |v: Option<i64>, column: &str| {
            v.ok_or_else(|| db.row_error(table, rowid, format!("column `{column}` is null")))
        };
        let start = need(db.time(table, row, 1, "start", rowid)?, "start")?;
        let end = need(db.time(table, row, 2, "end", rowid)?, "end")?;
        if end < start {
            return Err(db.row_error(
                table,
                rowid,
                format!("ends ({end}) before it starts ({start})"),
            ));
        }
        let va = db.int(table, row, 3, a, rowid)?;
        let vb = db.int(table, row, 4, b, rowid)?;
        f(rowid, start, end, va, vb);
        Ok(())
    })
}

/// The GPU operations of the export sorted by (process, correlation id); `None` when the
/// export has no table of GPU work.
fn load_ops(db: &Db, counts: &mut Counts) -> Result<Option<Sorted<Op>>> {
    let tables: Vec<&str> = WORK_TABLES.iter().copied().filter(|t| db.has(t)).collect();
    if tables.is_empty() {
        return Ok(None);
    }
    let mut ops = Sorter::new(|a: &Op, b: &Op| (a.gpid, a.corr).cmp(&(b.gpid, b.corr)));
    let mut failed = None;
    for table in tables {
        scan(
            db,
            table,
            "correlationId",
            "globalPid",
            &mut |_, start, end, corr, gpid| {
                counts.operations += 1;
                match (corr, gpid) {
                    (Some(corr), Some(gpid)) => {
                        if let Err(e) = ops.push(Op {
                            gpid,
                            corr,
                            start,
                            end,
                        }) {
                            failed.get_or_insert(e);
                        }
                    }
                    _ => counts.uncorrelated += 1,
                }
            },
        )?;
        if let Some(e) = failed {
            return Err(e);
        }
    }
    Ok(Some(ops.finish()?))
}

/// The API calls of the export (with a thread and a correlation id) sorted by (process,
/// correlation id, table, row); `None` when the export has no table of API calls.
fn load_api_calls(db: &Db, threads: &HashMap<i64, u32>) -> Result<Option<Sorted<ApiCall>>> {
    if !CALL_TABLES.iter().any(|t| db.has(t)) {
        return Ok(None);
    }
    let mut calls = Sorter::new(|a: &ApiCall, b: &ApiCall| {
        (a.key(), a.table, a.row).cmp(&(b.key(), b.table, b.row))
    });
    let mut failed = None;
    for (index, &table) in CALL_TABLES.iter().enumerate() {
        if !db.has(table) {
            continue;
        }
        scan(
            db,
            table,
            "globalTid",
            "correlationId",
            &mut |row, start, end, gtid, corr| {
                let (Some(gtid), Some(corr)) = (gtid, corr) else {
                    return;
                };
                let call = ApiCall {
                    gtid,
                    corr,
                    row,
                    start,
                    end,
                    thread: threads.get(&gtid).copied().unwrap_or(NONE),
                    table: index as u32,
                };
                if let Err(e) = calls.push(call) {
                    failed.get_or_insert(e);
                }
            },
        )?;
        if let Some(e) = failed {
            return Err(e);
        }
    }
    Ok(Some(calls.finish()?))
}

/// The API calls in (process, correlation id) order, refusing two of one process with one
/// correlation id: they come side by side.
struct Calls<'a> {
    db: &'a Db,
    sorted: &'a mut Sorted<ApiCall>,
    last: Option<ApiCall>,
}

impl Calls<'_> {
    fn next(&mut self) -> Result<Option<ApiCall>> {
        let next = self.sorted.next()?;
        if let (Some(a), Some(b)) = (&self.last, &next)
            && a.key() == b.key()
        {
            return Err(self.shared(a, b));
        }
        self.last = next;
        Ok(next)
    }

    /// The error for calls `a` and `b`, which share a correlation id in one process.
    fn shared(&self, a: &ApiCall, b: &ApiCall) -> crate::error::Error {
        let call = |c: &ApiCall| format!("thread {} at {} ns", tid_of(c.gtid), c.start);
        let rows = if a.table == b.table {
            format!(
                "table {}, rows {} and {}",
                CALL_TABLES[a.table as usize], a.row, b.row
            )
        } else {
            format!(
                "table {}, row {} and table {}, row {}",
                CALL_TABLES[a.table as usize], a.row, CALL_TABLES[b.table as usize], b.row
            )
        };
        crate::error::Error::data(
            self.db.place(),
            format!(
                "{rows}: two CUDA API calls of process {} with correlationId {} ({}; {}); \
                 CUPTI gives each call of a process its own, so which one launched the GPU \
                 work of that id is ambiguous",
                pid_of(a.gtid),
                a.corr,
                call(a),
                call(b)
            ),
        )
    }
}

/// The GPU work grouped by launch (process, correlation id), joined with the API calls:
/// each launch goes with the call of its correlation id; two calls of one process with one
/// correlation id are refused, naming both. Returns the calls that launched work, in
/// (start, end descending) order.
fn join(
    db: &Db,
    ops: &mut Sorted<Op>,
    calls: &mut Sorted<ApiCall>,
    counts: &mut Counts,
) -> Result<Sorted<Call>> {
    let mut out = Sorter::new(|a: &Call, b: &Call| {
        (a.start, std::cmp::Reverse(a.end)).cmp(&(b.start, std::cmp::Reverse(b.end)))
    });
    let mut calls = Calls {
        db,
        sorted: calls,
        last: None,
    };
    let mut next_op = ops.next()?;
    let mut next_call = calls.next()?;
    while let Some(first) = next_op {
        // One launch: every operation with this key.
        let key = (first.gpid, first.corr);
        let (mut start, mut end) = (first.start, first.end);
        next_op = ops.next()?;
        while let Some(op) = next_op.filter(|op| (op.gpid, op.corr) == key) {
            start = start.min(op.start);
            end = end.max(op.end);
            next_op = ops.next()?;
        }
        counts.launches += 1;
        // Calls of keys without work are passed over; the call of this key claims it.
        while next_call.is_some_and(|c| c.key() < key) {
            next_call = calls.next()?;
        }
        match next_call {
            Some(c) if c.key() == key => out.push(Call {
                start: c.start,
                end: c.end,
                work_start: start,
                work_end: end,
                thread: c.thread,
            })?,
            _ => counts.without_call += 1,
        }
    }
    // The calls after the last launch are read too, for their correlation ids.
    while next_call.is_some() {
        next_call = calls.next()?;
    }
    out.finish()
}

/// A push/pop range open on its thread's stack during the sweep, with the GPU work found
/// in it so far.
struct Open {
    raw: Raw,
    seq: u64,
    /// The parent's row and the depth.
    parent: u32,
    depth: u32,
    proj: Proj,
}

/// A start/end range being swept, with the GPU work found in it so far.
struct OpenMark {
    raw: Raw,
    seq: u64,
    proj: Proj,
}

/// The records of the ranges with GPU work, sorted in the order they are written.
struct Records {
    out: Sorter<Projected>,
}

impl Records {
    /// Adds the record of range `raw`, with the GPU work `proj` found in it.
    fn record(&mut self, raw: &Raw, seq: u64, parent: u32, depth: u32, proj: &Proj) -> Result<()> {
        self.out.push(Projected {
            proj_start: proj.start,
            proj_end: proj.end,
            start: raw.start,
            end: raw.end,
            ops: proj.ops,
            seq,
            row: raw.row,
            parent,
            depth,
            thread: raw.thread,
            name: raw.name,
            children: proj.children,
        })
    }

    /// A push/pop range is closed: its record if it has work, which goes to its parent.
    fn close(&mut self, r: Open, stack: &mut [Open]) -> Result<()> {
        if r.proj.ops == 0 {
            return Ok(());
        }
        if let Some(parent) = stack.last_mut() {
            parent.proj.add(r.proj.start, r.proj.end, r.proj.ops);
            parent.proj.children += 1;
        }
        self.record(&r.raw, r.seq, r.parent, r.depth, &r.proj)
    }

    /// A start/end range is closed: its record if it has work.
    fn close_mark(&mut self, m: OpenMark) -> Result<()> {
        if m.proj.ops == 0 {
            return Ok(());
        }
        self.record(&m.raw, m.seq, NONE, 0, &m.proj)
    }
}

/// One sweep of the ranges and the calls in start order, a range before a call starting
/// at the same time: each call's work goes to the innermost push/pop range of its thread
/// containing it, and to the start/end ranges of its thread containing it; a range's work
/// goes to its parent when the range is closed.
struct Sweep {
    /// Per thread, the push/pop ranges open, innermost last.
    stacks: Vec<Vec<Open>>,
    /// Per thread, the start/end ranges open.
    marks: Vec<Vec<OpenMark>>,
    nodes_seen: u64,
    marks_seen: u64,
    records: Records,
}

impl Sweep {
    /// A sweep over `threads` threads, with no range open yet.
    fn new(threads: usize) -> Sweep {
        Sweep {
            stacks: (0..threads).map(|_| Vec::new()).collect(),
            marks: (0..threads).map(|_| Vec::new()).collect(),
            nodes_seen: 0,
            marks_seen: 0,
            records: Records {
                out: Sorter::new(|a: &Projected, b: &Projected| a.key().cmp(&b.key())),
            },
        }
    }

    /// Opens range `r`: a start/end range among its thread's; a push/pop range on its
    /// thread's stack, once the ranges there that end before it are closed.
    fn open(&mut self, r: Raw) -> Result<()> {
        if r.mark {
            self.marks[r.thread as usize].push(OpenMark {
                raw: r,
                seq: MARK | self.marks_seen,
                proj: Proj::EMPTY,
            });
            self.marks_seen += 1;
            return Ok(());
        }
        let stack = &mut self.stacks[r.thread as usize];
        while stack.last().is_some_and(|t| t.raw.end < r.end) {
            let top = stack.pop().expect("not empty");
            self.records.close(top, stack)?;
        }
        let (parent, depth) = match stack.last() {
            Some(p) => (p.raw.row, stack.len() as u32),
            None => (NONE, 0),
        };
        stack.push(Open {
            raw: r,
            seq: self.nodes_seen,
            parent,
            depth,
            proj: Proj::EMPTY,
        });
        self.nodes_seen += 1;
        Ok(())
    }

    /// Adds the work of `call` to the ranges of its thread containing it, closing those
    /// ended before it; `false` when no range contains it.
    fn attribute(&mut self, call: &Call) -> Result<bool> {
        let Some(stack) = self.stacks.get_mut(call.thread as usize) else {
            return Ok(false);
        };
        // Ranges ended before this call cannot contain it or any later call.
        while stack.last().is_some_and(|t| t.raw.end < call.start) {
            let top = stack.pop().expect("not empty");
            self.records.close(top, stack)?;
        }
        // Along the stack the ranges nest, so their ends only decrease: the ranges that
        // contain the call are a prefix of it.
        let n = stack.partition_point(|t| t.raw.end >= call.end);
        let mut attributed = false;
        if n > 0 {
            stack[n - 1].proj.add(call.work_start, call.work_end, 1);
            attributed = true;
        }
        // Start/end ranges need not nest: each open one of the thread is looked at.
        let open = &mut self.marks[call.thread as usize];
        let mut i = 0;
        while i < open.len() {
            if open[i].raw.end < call.start {
                self.records.close_mark(open.swap_remove(i))?;
                continue;
            }
            if call.end <= open[i].raw.end {
                open[i].proj.add(call.work_start, call.work_end, 1);
                attributed = true;
            }
            i += 1;
        }
        Ok(attributed)
    }

    /// Closes the ranges still open (after the last call they have no GPU work to come)
    /// and hands back their records with the others.
    fn close_all(self) -> Result<Records> {
        let Sweep {
            stacks,
            marks,
            mut records,
            ..
        } = self;
        for mut stack in stacks {
            while let Some(top) = stack.pop() {
                records.close(top, &mut stack)?;
            }
        }
        for open in marks {
            for m in open {
                records.close_mark(m)?;
            }
        }
        Ok(records)
    }
}

/// Sweeps `ranges` and `calls` together ([`Sweep`]), counting the calls outside every
/// range; returns the records of the ranges with work, in the order they are written.
fn sweep(
    ranges: &mut Nvtx,
    mut calls: Sorted<Call>,
    counts: &mut Counts,
) -> Result<Sorted<Projected>> {
    let mut sweep = Sweep::new(ranges.threads.len());
    let mut next_range = ranges.next()?;
    while let Some(call) = calls.next()? {
        while let Some(r) = next_range.filter(|r| r.start <= call.start) {
            next_range = ranges.next()?;
            sweep.open(r)?;
        }
        if !sweep.attribute(&call)? {
            counts.outside += 1;
        }
    }
    let records = sweep.close_all()?;
    drop(calls);
    records.out.finish()
}

/// Reads the GPU projection of the export's NVTX ranges, handing each record to `emit`;
/// notes (missing tables, GPU work outside every range) go to `notes`.
pub fn read_gpu_ranges(
    db: &Db,
    profile: &Arc<str>,
    options: Options,
    notes: &Notes,
    emit: &mut dyn FnMut(GpuRange) -> Result<()>,
) -> Result<Counts> {
    let start_end = if options.start_end {
        StartEnd::SameThread
    } else {
        StartEnd::Skip
    };
    let Some(mut ranges) = nvtx::load(db, start_end)? else {
        notes.note(nvtx::no_nvtx(db));
        return Ok(Counts::default());
    };
    project(db, &mut ranges, profile, notes, emit)
}

/// The GPU projection of `ranges`, the NVTX ranges of the export loaded by the caller
/// ([`nvtx::load`]), handed to `emit` as in [`read_gpu_ranges`].
pub fn project(
    db: &Db,
    ranges: &mut Nvtx,
    profile: &Arc<str>,
    notes: &Notes,
    emit: &mut dyn FnMut(GpuRange) -> Result<()>,
) -> Result<Counts> {
    let place = db.place();
    ranges.note_repairs(db, notes);
    let mut counts = Counts::default();
    let Some(mut ops) = load_ops(db, &mut counts)? else {
        notes.note(format!(
            "{place}: no {} table: the profile recorded no GPU work",
            WORK_TABLES.join(", ")
        ));
        return Ok(counts);
    };
    let Some(mut api_calls) = load_api_calls(db, &ranges.thread_index)? else {
        notes.note(format!(
            "{place}: no {} table: the profile recorded no CUDA API calls, so no GPU work can \
             be attributed to NVTX ranges",
            CALL_TABLES[0]
        ));
        return Ok(counts);
    };
    db.phase("joining GPU work to CUDA API calls");
    let calls = join(db, &mut ops, &mut api_calls, &mut counts)?;
    drop((ops, api_calls));
    db.phase("projecting GPU work onto NVTX ranges");
    let mut projected = sweep(ranges, calls, &mut counts)?;
    emit_records(ranges, &mut projected, profile, emit, &mut counts)?;
    note_losses(place, &counts, notes);
    Ok(counts)
}

/// Hands each record of `projected` to `emit` as a [`GpuRange`], counting them.
fn emit_records(
    ranges: &Nvtx,
    projected: &mut Sorted<Projected>,
    profile: &Arc<str>,
    emit: &mut dyn FnMut(GpuRange) -> Result<()>,
    counts: &mut Counts,
) -> Result<()> {
    while let Some(p) = projected.next()? {
        let gtid = ranges.gtid(p.thread);
        emit(GpuRange {
            profile: profile.clone(),
            pid: Some(pid_of(gtid)),
            tid: tid_of(gtid),
            id: u64::from(p.row),
            parent: (p.depth > 0).then_some(u64::from(p.parent)),
            depth: p.depth,
            children: p.children,
            name: ranges.name(p.name).to_string(),
            start_ns: p.proj_start,
            dur_ns: p.proj_end - p.proj_start,
            cpu_start_ns: Some(p.start),
            cpu_dur_ns: Some(p.end - p.start),
            gpu_ops: Some(p.ops),
            device: None,
            stream: None,
        })?;
        counts.records += 1;
    }
    Ok(())
}

/// Says on `notes` how much GPU work is in no record, and why (`counts`).
fn note_losses(place: &str, counts: &Counts, notes: &Notes) {
    if counts.outside > 0 {
        notes.note(format!(
            "{place}: {} of {} CUDA launches with GPU work were made outside every NVTX range \
             of their thread: their GPU work is in no record",
            counts.outside, counts.launches
        ));
    }
    if counts.without_call > 0 {
        notes.note(format!(
            "{place}: {} of {} GPU launches have no CUDA API call with their correlation id \
             in the export: their GPU work is in no record",
            counts.without_call, counts.launches
        ));
    }
    if counts.uncorrelated > 0 {
        notes.note(format!(
            "{place}: {} GPU operations have no correlation id or process: in no record",
            counts.uncorrelated
        ));
    }
}
