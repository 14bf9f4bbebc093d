//! The attribution of operations to their calls and NVTX ranges: a row of the query as an
//! operation, and the range, XLA module and thunk open around its call on its thread.

use super::op::{
    API, CALLS, CELLS, CORR, Counts, DEVICE, END, FIXED, GPID, GTID, MODULE_NAME, NULL, Op,
    RANGE_NAME, RANGE_ROW, ROW, START, STREAM, TABLE, THUNK_NAME,
};
use super::sql::table_of;
use crate::error::Result;
use crate::source::ranges::nvtx::{self, Raw};
use crate::source::sqlite::Db;
use crate::source::xla_names;
use std::collections::HashMap;

/// What an NVTX range name is to XLA ([`xla_names`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Xla {
    Module,
    Thunk,
    Other,
}

impl Xla {
    fn of(name: &str) -> Xla {
        if xla_names::is_module(name) {
            Xla::Module
        } else if xla_names::is_thunk(name) {
            Xla::Thunk
        } else {
            Xla::Other
        }
    }
}

/// One row of [`union_sql`](super::sql::union_sql)'s query as an operation, its call's
/// start and end kept in `RANGE_ROW` and `RANGE_NAME` until [`Attribution::attribute`]
/// replaces them.
pub(super) fn op_of_row(
    db: &Db,
    tables: &[(&'static str, &'static [&'static str])],
    row: &rusqlite::Row<'_>,
) -> Result<(Op, i64, i64)> {
    let t: i64 = row.get(0).map_err(|e| db.sql_error(tables[0].0, e))?;
    let table = table_of(tables, t);
    let rowid: i64 = row.get(1).map_err(|e| db.sql_error(table, e))?;
    let cell = |i: usize, column: &str| -> Result<i64> {
        Ok(db.int(table, row, i, column, rowid)?.unwrap_or(NULL))
    };
    let time = |i: usize, column: &str| -> Result<i64> {
        let v = db.time(table, row, i, column, rowid)?;
        v.ok_or_else(|| db.row_error(table, rowid, format!("column `{column}` is null")))
    };
    let start = time(3, "start")?;
    let end = time(4, "end")?;
    if end < start {
        return Err(db.row_error(
            table,
            rowid,
            format!("ends ({end}) before it starts ({start})"),
        ));
    }
    let mut op = Op { c: [NULL; CELLS] };
    op.c[TABLE] = t;
    op.c[ROW] = rowid;
    op.c[DEVICE] = cell(2, "deviceId")?;
    op.c[START] = start;
    op.c[END] = end;
    op.c[CORR] = cell(5, "correlationId")?;
    op.c[GPID] = cell(6, "globalPid")?;
    op.c[STREAM] = cell(7, "streamId")?;
    op.c[GTID] = cell(8, "globalTid")?;
    op.c[API] = cell(9, "nameId")?;
    op.c[CALLS] = cell(10, "calls")?;
    let call_end = cell(11, "end")?;
    let nvals = tables[0].1.len();
    for i in 0..nvals {
        op.c[FIXED + i] = cell(12 + i, tables[t as usize].1[i])?;
    }
    let call_start = cell(12 + nvals, "start")?;
    Ok((op, call_start, call_end))
}

/// The NVTX ranges open on each thread as the operations' calls go by, in call order:
/// what range, XLA module and thunk each operation was launched in.
pub(super) struct Attribution<'a> {
    nvtx: Option<&'a mut nvtx::Nvtx>,
    /// Per thread, the ranges open at the current call, outermost first.
    stacks: Vec<Vec<Raw>>,
    next_range: Option<Raw>,
    /// What each distinct range name is to XLA, classified once.
    xla: HashMap<u32, Xla>,
}

impl<'a> Attribution<'a> {
    pub(super) fn new(nvtx: &'a mut Option<nvtx::Nvtx>) -> Result<Attribution<'a>> {
        let mut nvtx = nvtx.as_mut();
        let threads = nvtx.as_ref().map_or(0, |n| n.threads.len());
        let next_range = match &mut nvtx {
            Some(n) => n.next()?,
            None => None,
        };
        Ok(Attribution {
            nvtx,
            stacks: (0..threads).map(|_| Vec::new()).collect(),
            next_range,
            xla: HashMap::new(),
        })
    }

    /// `op` (with its call's start and end) with its range, module and thunk, counted
    /// in `counts` when it has no call or no range.
    pub(super) fn attribute(
        &mut self,
        (mut op, call_start, call_end): (Op, i64, i64),
        counts: &mut Counts,
    ) -> Result<Op> {
        if op.c[GTID] == NULL {
            counts.without_call += 1;
            return Ok(op);
        }
        let Some(n) = self.nvtx.as_deref_mut() else {
            return Ok(op);
        };
        while let Some(r) = self.next_range.filter(|r| r.start <= call_start) {
            self.next_range = n.next()?;
            if r.mark {
                continue;
            }
            let stack = &mut self.stacks[r.thread as usize];
            while stack.last().is_some_and(|top| top.end < r.end) {
                stack.pop();
            }
            stack.push(r);
        }
        let mut found = None;
        if let Some(&thread) = n.thread_index.get(&op.c[GTID]) {
            let stack = &mut self.stacks[thread as usize];
            while stack.last().is_some_and(|top| top.end < call_start) {
                stack.pop();
            }
            // Along a stack the ranges nest, so their ends only decrease.
            let k = stack.partition_point(|top| top.end >= call_end);
            if k > 0 {
                found = Some(stack[k - 1]);
            }
            // The XLA module and thunk: from the innermost containing range outwards,
            // the first module, and the first thunk met before it.
            let mut thunk = None;
            for r in stack[..k].iter().rev() {
                let kind = *self
                    .xla
                    .entry(r.name)
                    .or_insert_with(|| Xla::of(n.name(r.name)));
                match kind {
                    Xla::Thunk if thunk.is_none() => thunk = Some(r.name),
                    Xla::Module => {
                        op.c[MODULE_NAME] = i64::from(r.name);
                        if let Some(t) = thunk {
                            op.c[THUNK_NAME] = i64::from(t);
                        }
                        break;
                    }
                    _ => {}
                }
            }
        }
        match found {
            Some(r) => {
                op.c[RANGE_ROW] = i64::from(r.row);
                op.c[RANGE_NAME] = i64::from(r.name);
            }
            None => counts.outside += 1,
        }
        Ok(op)
    }
}
