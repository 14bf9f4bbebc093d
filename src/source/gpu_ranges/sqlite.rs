//! The GPU projection of the NVTX ranges of an nsys export, as [`GpuRange`] records: each
//! range's times become those of the GPU work it launched. The semantics are those of
//! nsys' `nvtx_gpu_proj_trace` report (the table of the first form in nsys-jax archives):
//!
//! - GPU work is the kernels, memory copies and memory sets
//!   (`CUPTI_ACTIVITY_KIND_KERNEL`, `…_MEMCPY`, `…_MEMSET`, whichever the export has);
//! - each is launched by the CUDA API call with the same `correlationId` in the same
//!   process (`CUPTI_ACTIVITY_KIND_RUNTIME`, which holds runtime and driver calls, and
//!   `…_DRIVER` where an export has it), made on one thread (`globalTid`);
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
//! in the export, is in no record; how much is said on stderr.
//!
//! Method: the GPU work is grouped per (process, correlation id) after one sort; the API
//! calls that launched work are sorted by start and swept together with the ranges (in
//! the same order) keeping a stack of open ranges per thread, so the innermost range
//! containing a call is found by a binary search of its thread's stack; the work is added
//! there and then summed up the tree. Time O((ranges + GPU operations) · log), memory
//! O(ranges + launches); never ranges × kernels. Start/end ranges need not nest: each
//! looks at the calls of its thread between its start and end (a binary search, then
//! those calls).

use crate::error::Result;
use crate::notes::Notes;
use crate::record::GpuRange;
use crate::source::Options;
use crate::source::ranges::nvtx::{self, NONE, Nvtx, StartEnd};
use crate::source::sqlite::Db;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The tables of GPU work.
const WORK_TABLES: &[&str] = &[
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
];

/// The tables of CUDA API calls.
const CALL_TABLES: &[&str] = &["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"];

/// A range of the tree, in memory.
struct Node {
    start: i64,
    end: i64,
    row: u32,
    thread: u32,
    name: u32,
    parent: u32,
    depth: u32,
}

/// The push/pop ranges and the start/end ranges of `ranges`, in order, parent and depth
/// filled in.
fn collect(ranges: &mut Nvtx) -> Result<(Vec<Node>, Vec<Node>)> {
    let (mut nodes, mut marks): (Vec<Node>, Vec<Node>) = (Vec::new(), Vec::new());
    let mut stacks: Vec<Vec<u32>> = vec![Vec::new(); ranges.threads.len()];
    while let Some(r) = ranges.next()? {
        let mut node = Node {
            start: r.start,
            end: r.end,
            row: r.row,
            thread: r.thread,
            name: r.name,
            parent: NONE,
            depth: 0,
        };
        if r.mark {
            marks.push(node);
            continue;
        }
        let stack = &mut stacks[r.thread as usize];
        while stack
            .last()
            .is_some_and(|&t| nodes[t as usize].end < node.end)
        {
            stack.pop();
        }
        node.parent = stack.last().copied().unwrap_or(NONE);
        node.depth = stack.len() as u32;
        stack.push(nodes.len() as u32);
        nodes.push(node);
    }
    Ok((nodes, marks))
}

/// The GPU work of one launch: every operation with one (process, correlation id).
struct Launch {
    gpid: i64,
    corr: i64,
    start: i64,
    end: i64,
}

/// A CUDA API call that launched GPU work.
struct Call {
    start: i64,
    end: i64,
    /// Index of the thread in [`nvtx::Nvtx::threads`], [`NONE`] for a thread without ranges.
    thread: u32,
    launch: u32,
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
/// `start` and `end` must be present and ordered.
fn scan(
    db: &Db,
    table: &str,
    a: &str,
    b: &str,
    f: &mut dyn FnMut(i64, i64, i64, Option<i64>, Option<i64>),
) -> Result<()> {
    let sql = db.select(
        table,
        &[("start", true), ("end", true), (a, true), (b, true)],
        true,
        None,
    )?;
    db.each_row(table, &sql, |row| {
        let rowid = db.rowid(table, row)?;
        let need = |v: Option<i64>, column: &str| {
            v.ok_or_else(|| db.row_error(table, rowid, format!("column `{column}` is null")))
        };
        let start = need(db.int(table, row, 1, "start", rowid)?, "start")?;
        let end = need(db.int(table, row, 2, "end", rowid)?, "end")?;
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

/// The GPU work of the export grouped by launch, sorted by (process, correlation id);
/// `None` when the export has no table of GPU work.
fn load_launches(db: &Db, counts: &mut Counts) -> Result<Option<Vec<Launch>>> {
    let tables: Vec<&str> = WORK_TABLES.iter().copied().filter(|t| db.has(t)).collect();
    if tables.is_empty() {
        return Ok(None);
    }
    let mut ops: Vec<Launch> = Vec::new();
    for table in tables {
        scan(
            db,
            table,
            "correlationId",
            "globalPid",
            &mut |_, start, end, corr, gpid| {
                counts.operations += 1;
                match (corr, gpid) {
                    (Some(corr), Some(gpid)) => ops.push(Launch {
                        gpid,
                        corr,
                        start,
                        end,
                    }),
                    _ => counts.uncorrelated += 1,
                }
            },
        )?;
    }
    ops.sort_unstable_by_key(|l| (l.gpid, l.corr));
    let mut launches: Vec<Launch> = Vec::new();
    for op in ops {
        match launches.last_mut() {
            Some(l) if (l.gpid, l.corr) == (op.gpid, op.corr) => {
                l.start = l.start.min(op.start);
                l.end = l.end.max(op.end);
            }
            _ => launches.push(op),
        }
    }
    counts.launches = launches.len() as u64;
    Ok(Some(launches))
}

/// The API calls that launched GPU work, in (start, end descending) order; `None` when
/// the export has no table of API calls. A launch with several calls of its correlation
/// id keeps the first one read.
fn load_calls(
    db: &Db,
    launches: &[Launch],
    threads: &HashMap<i64, u32>,
    counts: &mut Counts,
) -> Result<Option<Vec<Call>>> {
    let tables: Vec<&str> = CALL_TABLES.iter().copied().filter(|t| db.has(t)).collect();
    if tables.is_empty() {
        return Ok(None);
    }
    let mut claimed = vec![false; launches.len()];
    let mut calls = Vec::new();
    for table in tables {
        scan(
            db,
            table,
            "globalTid",
            "correlationId",
            &mut |_, start, end, gtid, corr| {
                let (Some(gtid), Some(corr)) = (gtid, corr) else {
                    return;
                };
                let key = (crate::source::sqlite::global_pid_of(gtid), corr);
                if let Ok(i) = launches.binary_search_by_key(&key, |l| (l.gpid, l.corr))
                    && !claimed[i]
                {
                    claimed[i] = true;
                    calls.push(Call {
                        start,
                        end,
                        thread: threads.get(&gtid).copied().unwrap_or(NONE),
                        launch: i as u32,
                    });
                }
            },
        )?;
    }
    counts.without_call = claimed.iter().filter(|c| !**c).count() as u64;
    calls.sort_unstable_by_key(|c| (c.start, std::cmp::Reverse(c.end)));
    Ok(Some(calls))
}

/// For each call, the innermost push/pop range of its thread containing it (`NONE` if
/// none): `nodes` and `calls` are both in start order and swept together, a range before
/// a call starting at the same time.
fn innermost(nodes: &[Node], threads: usize, calls: &[Call]) -> Vec<u32> {
    let mut stacks: Vec<Vec<u32>> = vec![Vec::new(); threads];
    let mut found = Vec::with_capacity(calls.len());
    let mut i = 0;
    for call in calls {
        while i < nodes.len() && nodes[i].start <= call.start {
            let node = &nodes[i];
            let stack = &mut stacks[node.thread as usize];
            while stack
                .last()
                .is_some_and(|&t| nodes[t as usize].end < node.end)
            {
                stack.pop();
            }
            stack.push(i as u32);
            i += 1;
        }
        let Some(stack) = stacks.get_mut(call.thread as usize) else {
            found.push(NONE);
            continue;
        };
        // Ranges ended before this call cannot contain it or any later call.
        while stack
            .last()
            .is_some_and(|&t| nodes[t as usize].end < call.start)
        {
            stack.pop();
        }
        // Along the stack the ranges nest, so their ends only decrease: the ranges that
        // contain the call are a prefix of it.
        let n = stack.partition_point(|&t| nodes[t as usize].end >= call.end);
        found.push(if n == 0 { NONE } else { stack[n - 1] });
    }
    found
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
    let mut counts = Counts::default();
    let Some(launches) = load_launches(db, &mut counts)? else {
        notes.note(format!(
            "{place}: no {} table: the profile recorded no GPU work",
            WORK_TABLES.join(", ")
        ));
        return Ok(counts);
    };
    let Some(calls) = load_calls(db, &launches, &ranges.thread_index, &mut counts)? else {
        notes.note(format!(
            "{place}: no {} table: the profile recorded no CUDA API calls, so no GPU work can \
             be attributed to NVTX ranges",
            CALL_TABLES[0]
        ));
        return Ok(counts);
    };
    let (nodes, marks) = collect(ranges)?;
    let (nodes, marks) = (&nodes, &marks);

    // Work of each call added to its innermost push/pop range…
    let mut attributed = vec![false; calls.len()];
    let mut work: BTreeMap<u32, Proj> = BTreeMap::new();
    for (c, &node) in innermost(nodes, ranges.threads.len(), &calls)
        .iter()
        .enumerate()
    {
        if node != NONE {
            let l = &launches[calls[c].launch as usize];
            work.entry(node)
                .or_insert(Proj::EMPTY)
                .add(l.start, l.end, 1);
            attributed[c] = true;
        }
    }
    // …then to its ancestors: a parent comes before its children in `nodes`, so taking
    // the ranges from the last one up sees every child before its parent.
    let mut projected: Vec<(u32, Proj)> = Vec::with_capacity(work.len());
    while let Some((node, proj)) = work.pop_last() {
        let parent = nodes[node as usize].parent;
        if parent != NONE {
            let p = work.entry(parent).or_insert(Proj::EMPTY);
            p.add(proj.start, proj.end, proj.ops);
            p.children += 1;
        }
        projected.push((node, proj));
    }
    // Start/end ranges: the calls of their thread within them.
    if !marks.is_empty() {
        let mut by_thread: Vec<Vec<u32>> = vec![Vec::new(); ranges.threads.len()];
        for (c, call) in calls.iter().enumerate() {
            if let Some(list) = by_thread.get_mut(call.thread as usize) {
                list.push(c as u32);
            }
        }
        for (m, mark) in marks.iter().enumerate() {
            let list = &by_thread[mark.thread as usize];
            let first = list.partition_point(|&c| calls[c as usize].start < mark.start);
            let mut proj = Proj::EMPTY;
            for &c in &list[first..] {
                let call = &calls[c as usize];
                if call.start > mark.end {
                    break;
                }
                if call.end <= mark.end {
                    let l = &launches[call.launch as usize];
                    proj.add(l.start, l.end, 1);
                    attributed[c as usize] = true;
                }
            }
            if proj.ops > 0 {
                projected.push(((nodes.len() + m) as u32, proj));
            }
        }
    }
    counts.outside = attributed.iter().filter(|a| !**a).count() as u64;

    projected.sort_unstable_by_key(|(seq, p)| (p.start, std::cmp::Reverse(p.end), *seq));
    for (seq, proj) in projected {
        let node: &Node = match nodes.get(seq as usize) {
            Some(n) => n,
            None => &marks[seq as usize - nodes.len()],
        };
        emit(GpuRange {
            profile: profile.clone(),
            pid: Some(crate::source::sqlite::pid_of(ranges.gtid(node.thread))),
            tid: crate::source::sqlite::tid_of(ranges.gtid(node.thread)),
            id: u64::from(node.row),
            parent: (node.parent != NONE).then(|| u64::from(nodes[node.parent as usize].row)),
            depth: node.depth,
            children: proj.children,
            name: ranges.name(node.name).to_string(),
            start_ns: proj.start,
            dur_ns: proj.end - proj.start,
            cpu_start_ns: Some(node.start),
            cpu_dur_ns: Some(node.end - node.start),
            gpu_ops: Some(proj.ops),
            device: None,
            stream: None,
        })?;
        counts.records += 1;
    }
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
    Ok(counts)
}
