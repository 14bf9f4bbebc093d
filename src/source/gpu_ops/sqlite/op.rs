//! One operation as integer cells, as it goes through the external sort, and the counts
//! the notes are made of.

use super::sql::KERNEL_COLUMNS;
use crate::source::sorter::{Fixed, i64_at};

/// A null cell in an [`Op`].
pub(super) const NULL: i64 = i64::MIN;

/// Cells of an [`Op`] before [`Op::vals`].
pub(super) const FIXED: usize = 15;
/// Cells of an [`Op`]: the fixed ones and the longest list of columns.
pub(super) const CELLS: usize = FIXED + KERNEL_COLUMNS.len();

/// One operation as read and attributed, all cells integers ([`NULL`] for null).
#[derive(Debug, Clone, Copy)]
pub(super) struct Op {
    pub(super) c: [i64; CELLS],
}

// Cell indices.
pub(super) const DEVICE: usize = 0;
pub(super) const START: usize = 1;
pub(super) const END: usize = 2;
pub(super) const CORR: usize = 3;
pub(super) const TABLE: usize = 4;
pub(super) const ROW: usize = 5;
pub(super) const GPID: usize = 6;
pub(super) const STREAM: usize = 7;
pub(super) const GTID: usize = 8;
pub(super) const API: usize = 9;
pub(super) const RANGE_ROW: usize = 10;
pub(super) const RANGE_NAME: usize = 11;
pub(super) const CALLS: usize = 12;
pub(super) const MODULE_NAME: usize = 13;
pub(super) const THUNK_NAME: usize = 14;

impl Fixed for Op {
    const SIZE: usize = CELLS * 8;
    fn put(&self, out: &mut Vec<u8>) {
        for v in self.c {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    fn get(b: &[u8]) -> Self {
        let mut c = [0; CELLS];
        for (i, v) in c.iter_mut().enumerate() {
            *v = i64_at(b, i * 8);
        }
        Op { c }
    }
}

impl Op {
    pub(super) fn get(&self, i: usize) -> Option<i64> {
        (self.c[i] != NULL).then_some(self.c[i])
    }

    pub(super) fn val(&self, i: usize) -> Option<i64> {
        self.get(FIXED + i)
    }

    pub(super) fn key(&self) -> [i64; 5] {
        [
            self.c[DEVICE],
            self.c[START],
            self.c[CORR],
            self.c[TABLE],
            self.c[ROW],
        ]
    }
}

/// How the operations of an export were attributed.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Counts {
    pub(super) records: u64,
    pub(super) without_call: u64,
    pub(super) outside: u64,
    /// Operations with a negative `graphId` or `graphNodeId`, and the first: table, row,
    /// column, value.
    pub(super) bad_graph: u64,
    pub(super) first_bad_graph: Option<(&'static str, i64, &'static str, i64)>,
}

impl Counts {
    /// `op`'s CUDA graph and graph node ids (`graphId`, `graphNodeId` among the
    /// `columns` of `table`): CUPTI's are unsigned, so a negative one is read as null and
    /// the operation counted, for a note.
    pub(super) fn graph_ids(
        &mut self,
        op: &Op,
        columns: &[&'static str],
        table: &'static str,
    ) -> (Option<u64>, Option<u64>) {
        let mut bad = false;
        let mut id = |column: &'static str| {
            let i = columns
                .iter()
                .position(|c| *c == column)
                .expect("graph columns listed");
            let v = op.val(i)?;
            let id = u64::try_from(v).ok();
            if id.is_none() {
                bad = true;
                self.first_bad_graph
                    .get_or_insert((table, op.c[ROW], column, v));
            }
            id
        };
        let ids = (id("graphId"), id("graphNodeId"));
        if bad {
            self.bad_graph += 1;
        }
        ids
    }
}
