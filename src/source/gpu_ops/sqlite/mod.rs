//! Kernels and memory operations of an nsys SQLite export, one record each, with what
//! launched them:
//!
//! - the operations are the rows of `CUPTI_ACTIVITY_KIND_KERNEL` (kernels) or of
//!   `…_MEMCPY` and `…_MEMSET` (memops), whichever the export has; a missing table means
//!   nothing of that kind was recorded (said on stderr);
//! - each is launched by the CUDA API call with the same `correlationId` in the same
//!   process (`CUPTI_ACTIVITY_KIND_RUNTIME`, and `…_DRIVER` where the export has it), as in
//!   the GPU projection ([`gpu_ranges::sqlite`](super::super::gpu_ranges::sqlite)): its
//!   thread gives `tid`, its name `api`; two calls of one process with one correlation id
//!   are refused, naming the id;
//! - `range` is the innermost NVTX push/pop range of the launching thread that contains
//!   the call (`start ≤ call start`, `call end ≤ end`), the same rule by which the GPU
//!   projection gives a call's work to a range; null where none does, or where the
//!   export has no `NVTX_EVENTS` table;
//! - `module` and `program_id` are those of the innermost XLA module range
//!   (`[TSL:]XlaModule:#…hlo_module=NAME[,program_id=N]#`, [`xla_names`]) of that
//!   thread containing the call, and `thunk` the `hlo_op` of the innermost thunk range
//!   (`[TSL:]Thunk:#…hlo_op=NAME…#`) containing it inside that module range; null
//!   where there is none (a thunk range outside every module range gives no thunk);
//! - CUDA graphs (XLA's command buffers): with `nsys profile --cuda-graph-trace=node`
//!   each kernel, copy and set of a launched graph is a row of its own, carrying the
//!   correlation id of the `cudaGraphLaunch` call (CUPTI gives every node of one launch
//!   the launch's), so the rule above attributes them all to that one call: `api` is
//!   the graph launch, and `range`, `module` and `thunk` those holding the launch on its
//!   thread. Inside a command buffer XLA pushes no range per thunk, so a graph's kernels
//!   get the module and, where XLA wrote one around the launch, the command-buffer
//!   thunk; never the thunks the graph was built from. `graph_id` and `graph_node_id`
//!   are the row's `graphId` and `graphNodeId`, null where the export lacks the column
//!   (kernels have `graphId` from nsys 2026.1, export schema 3.24, on; copies and sets
//!   only `graphNodeId`, in every export at hand, 2024.6 to 2026.2) or the cell is null;
//!   a negative one, which CUPTI never gives, is read as null and counted in a note.
//!   With `--cuda-graph-trace=graph` (nsys' default) a launch is one row of
//!   `CUPTI_ACTIVITY_KIND_GRAPH_TRACE` and its nodes are in no table: how many such
//!   launches there were is said on stderr, as what these records cannot hold;
//! - copy directions and memory kinds are the names of the export's own
//!   `ENUM_CUDA_MEMCPY_OPER` and `ENUM_CUDA_MEM_KIND` tables (`CUDA_MEMCPY_KIND_HTOD` →
//!   `HtoD`, `CUDA_MEMOPR_MEMORY_KIND_PINNED` → `pinned`), or, for an export without
//!   them, of the values nsys has always used (the same tables in exports 2023.1 →
//!   2026.1).
//!
//! Records come in order of (device, start, correlation id), then table and row.
//!
//! Method: one SQL query joins each operation with its API call (SQLite builds an
//! automatic index on `correlationId`) and returns them in order of the call's start;
//! they are swept together with the NVTX ranges in their order ([`nvtx::Nvtx::next`]),
//! keeping a stack of open ranges per thread, so that the innermost range containing a
//! call is a binary search of its thread's stack, and its module and thunk a walk out
//! from there (the stack is a few ranges deep; what a range name is to XLA is decided
//! once per distinct name). The operations, now with their range,
//! go through an external sort (`source/sorter.rs`) into the records' order. Memory: the
//! sort buffers, the open ranges, the distinct strings; never all operations at once.
//!
//! One file per job:
//!
//! - `sql.rs`: the tables of each kind of operation and the columns read from them
//!   (`tables`), the SQL joining the operations with their calls (`union_sql`), the
//!   count of graph launches traced whole (`whole_graphs`);
//! - `names.rs`: the names of copy directions and memory kinds (`Enums`) and of
//!   registered strings (`Strings`);
//! - `op.rs`: an operation as integer cells (`Op`: the cells' indices, its bytes and key
//!   in the external sort) and what attribution counted (`Counts`);
//! - `attribution.rs`: a row of the query as an operation (`op_of_row`), and the NVTX
//!   range, XLA module and thunk it was launched in (`Attribution`);
//! - `records.rs`: the records made of attributed operations (`Records`);
//! - `calls.rs`: every CUDA API call, launching or not (`read`), and which CUDA activity
//!   tables the export has (`tables`);
//! - here: [`read`] and the notes.
//!
//! [`xla_names`]: crate::source::xla_names

mod attribution;
pub mod calls;
mod names;
mod op;
mod records;
mod sql;

use super::{GpuOp, Which};
use crate::error::Result;
use crate::output::notes::Notes;
use crate::source::ranges::nvtx::{self, StartEnd};
use crate::source::sorter::Sorter;
use crate::source::sqlite::{Db, pid_of};
use attribution::{Attribution, op_of_row};
use op::{CALLS, CORR, Counts, GPID, Op, ROW, TABLE};
use records::Records;
use sql::{GRAPH_TRACE, table_of, tables, union_sql, whole_graphs};
use std::sync::Arc;

/// Reads the kernels or memory operations of `db`, handing each record to `emit`; notes
/// (tables missing, operations without a call) go to `notes`. Returns how many records.
///
/// Two passes: the operations in launch order, each attributed to its CUDA API call and
/// the NVTX ranges open around it (`Attribution`), sorted back into the export's order
/// through temporary files; then each made a record (`Records`).
pub fn read(
    db: &Db,
    which: Which,
    profile: &Arc<str>,
    notes: &Notes,
    emit: &mut dyn FnMut(GpuOp) -> Result<()>,
) -> Result<u64> {
    let place = db.place();
    note_whole_graphs(db, notes)?;
    let Some(sql) = union_sql(db, which, notes)? else {
        return Ok(0);
    };
    let tables = tables(which);
    let mut nvtx = nvtx::load(db, StartEnd::Skip)?;
    match &nvtx {
        Some(n) => n.note_repairs(db, notes),
        None => notes.note(format!("{}; `range` is null throughout", nvtx::no_nvtx(db))),
    }
    let mut counts = Counts::default();
    let mut sorted = Sorter::new(|a: &Op, b: &Op| a.key().cmp(&b.key()));
    let mut failed = None;
    let mut attribution = Attribution::new(&mut nvtx)?;
    let label = tables[0].0;
    db.each_row(label, &sql, |row| {
        let op = op_of_row(db, tables, row)?;
        let op = attribution.attribute(op, &mut counts)?;
        if let Err(e) = sorted.push(op) {
            failed.get_or_insert(e);
        }
        Ok(())
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    drop(attribution);
    let mut records = Records::new(db, which, profile, nvtx.as_ref())?;
    let mut sorted = sorted.finish()?;
    let mut last: Option<(i64, i64)> = None;
    while let Some(op) = sorted.next()? {
        let table = table_of(tables, op.c[TABLE]);
        let row = op.c[ROW];
        if op.c[CALLS] > 1 || last == Some((op.c[TABLE], row)) {
            return Err(db.row_error(
                table,
                row,
                format!(
                    "two CUDA API calls of process {} with correlationId {}; CUPTI gives \
                     each call of a process its own, so which one launched this is ambiguous",
                    pid_of(op.c[GPID]),
                    op.c[CORR]
                ),
            ));
        }
        last = Some((op.c[TABLE], row));
        let record = records.of(&op, &mut counts)?;
        emit(record).map_err(|e| e.within(&format!("{place}: table {table}, row {row}")))?;
        counts.records += 1;
    }
    note_counts(&counts, which, nvtx.is_some(), place, notes);
    Ok(counts.records)
}

/// A note when CUDA graphs were traced whole: their operations are in no table.
fn note_whole_graphs(db: &Db, notes: &Notes) -> Result<()> {
    let whole = whole_graphs(db)?;
    if whole > 0 {
        notes.note(format!(
            "{}: {whole} CUDA graph launches were traced as whole graphs (table \
             {GRAPH_TRACE}, nsys' --cuda-graph-trace=graph): the kernels, copies and sets \
             inside them are in no table and so in no record; profile with \
             --cuda-graph-trace=node to have them",
            db.place()
        ));
    }
    Ok(())
}

/// The notes on operations without a call, with negative graph ids, or outside every
/// range.
fn note_counts(counts: &Counts, which: Which, has_nvtx: bool, place: &str, notes: &Notes) {
    if counts.without_call > 0 {
        notes.note(format!(
            "{place}: {} of {} {} have no CUDA API call with their correlation id in their \
             process: their tid, api and range are null",
            counts.without_call,
            counts.records,
            which.table()
        ));
    }
    if let Some((table, row, column, value)) = counts.first_bad_graph {
        notes.note(format!(
            "{place}: {} of {} {} have a negative graphId or graphNodeId, which CUPTI never \
             gives (first: table {table}, row {row}, {column} {value}): read as null",
            counts.bad_graph,
            counts.records,
            which.table()
        ));
    }
    if counts.outside > 0 && has_nvtx {
        notes.note(format!(
            "{place}: {} of {} {} were launched outside every NVTX push/pop range of their \
             thread: their range is null",
            counts.outside,
            counts.records,
            which.table()
        ));
    }
}
