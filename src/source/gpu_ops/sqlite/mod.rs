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

use super::{GpuOp, Which};
use crate::error::{Error, Result};
use crate::output::notes::Notes;
use crate::records::{Kernel, Memop};
use crate::source::ranges::nvtx::{self, Raw, StartEnd};
use crate::source::sorter::{Fixed, Sorter, i64_at};
use crate::source::sqlite::{Db, pid_of, tid_of};
use crate::source::xla_names;
use std::collections::HashMap;
use std::sync::Arc;

/// The tables of CUDA API calls.
const CALL_TABLES: &[&str] = &["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"];

/// A null cell in an [`Op`].
const NULL: i64 = i64::MIN;

/// The operation-specific columns read into [`Op::vals`], per table.
const KERNEL_COLUMNS: &[&str] = &[
    "demangledName",
    "shortName",
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
    "registersPerThread",
    "staticSharedMemory",
    "dynamicSharedMemory",
    "graphId",
    "graphNodeId",
];
const MEMCPY_COLUMNS: &[&str] = &[
    "bytes",
    "copyKind",
    "srcKind",
    "dstKind",
    "srcDeviceId",
    "dstDeviceId",
    "",
    "graphId",
    "graphNodeId",
];
const MEMSET_COLUMNS: &[&str] = &[
    "bytes",
    "",
    "",
    "memKind",
    "",
    "",
    "value",
    "graphId",
    "graphNodeId",
];

/// The tables of one kind of operation, with their columns.
fn tables(which: Which) -> &'static [(&'static str, &'static [&'static str])] {
    match which {
        Which::Kernels => &[("CUPTI_ACTIVITY_KIND_KERNEL", KERNEL_COLUMNS)],
        Which::Memops => &[
            ("CUPTI_ACTIVITY_KIND_MEMCPY", MEMCPY_COLUMNS),
            ("CUPTI_ACTIVITY_KIND_MEMSET", MEMSET_COLUMNS),
        ],
    }
}

/// Cells of an [`Op`] before [`Op::vals`].
const FIXED: usize = 15;
/// Cells of an [`Op`]: the fixed ones and the longest list of columns.
const CELLS: usize = FIXED + KERNEL_COLUMNS.len();

/// One operation as read and attributed, all cells integers ([`NULL`] for null).
#[derive(Debug, Clone, Copy)]
struct Op {
    c: [i64; CELLS],
}

// Cell indices.
const DEVICE: usize = 0;
const START: usize = 1;
const END: usize = 2;
const CORR: usize = 3;
const TABLE: usize = 4;
const ROW: usize = 5;
const GPID: usize = 6;
const STREAM: usize = 7;
const GTID: usize = 8;
const API: usize = 9;
const RANGE_ROW: usize = 10;
const RANGE_NAME: usize = 11;
const CALLS: usize = 12;
const MODULE_NAME: usize = 13;
const THUNK_NAME: usize = 14;

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
    fn get(&self, i: usize) -> Option<i64> {
        (self.c[i] != NULL).then_some(self.c[i])
    }

    fn val(&self, i: usize) -> Option<i64> {
        self.get(FIXED + i)
    }

    fn key(&self) -> [i64; 5] {
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
struct Counts {
    records: u64,
    without_call: u64,
    outside: u64,
    /// Operations with a negative `graphId` or `graphNodeId`, and the first: table, row,
    /// column, value.
    bad_graph: u64,
    first_bad_graph: Option<(&'static str, i64, &'static str, i64)>,
}

impl Counts {
    /// `op`'s CUDA graph and graph node ids (`graphId`, `graphNodeId` among the
    /// `columns` of `table`): CUPTI's are unsigned, so a negative one is read as null and
    /// the operation counted, for a note.
    fn graph_ids(
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

/// The table in which nsys records each CUDA graph launch as one operation when graphs
/// are traced whole (`nsys profile --cuda-graph-trace=graph`, its default).
const GRAPH_TRACE: &str = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";

/// How many graph launches `db` recorded whole, without their kernels and copies.
fn whole_graphs(db: &Db) -> Result<u64> {
    if !db.has(GRAPH_TRACE) {
        return Ok(0);
    }
    let n: i64 = db
        .conn()
        .query_row(
            &format!("SELECT COUNT(*) FROM \"{GRAPH_TRACE}\""),
            [],
            |r| r.get(0),
        )
        .map_err(|e| db.sql_error(GRAPH_TRACE, e))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// The SQL of one table's operations joined with their API calls; `None` when the export
/// lacks the table. The columns the join and the records need (times, device, correlation
/// id, process; the calls' thread) are those every table of GPU work and of calls must
/// have ([`crate::source::sqlite::REQUIRED`]): a table without one is refused.
fn table_sql(db: &Db, index: usize, table: &str, vals: &[&str]) -> Result<Option<String>> {
    if !db.has(table) {
        return Ok(None);
    }
    let have = db.columns(table)?;
    let has = |c: &str| !c.is_empty() && have.iter().any(|h| h == c);
    let col = |c: &str| {
        if has(c) {
            format!("o.\"{c}\"")
        } else {
            "NULL".to_string()
        }
    };
    let mut joins = String::new();
    let mut calls: Vec<String> = Vec::new();
    for (i, &c) in CALL_TABLES.iter().enumerate() {
        if !db.has(c) {
            continue;
        }
        db.columns(c)?;
        joins.push_str(&format!(
            " LEFT JOIN \"{c}\" c{i} ON c{i}.correlationId = o.correlationId \
             AND c{i}.globalTid - (c{i}.globalTid & 16777215) = o.globalPid"
        ));
        calls.push(format!("c{i}"));
    }
    let pick = |field: &str| -> String {
        match calls.len() {
            0 => "NULL".to_string(),
            1 => format!("{}.{field}", calls[0]),
            _ => format!(
                "COALESCE({})",
                calls
                    .iter()
                    .map(|c| format!("{c}.{field}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    };
    let name_of = |c: &String| -> Result<String> {
        let i: usize = c[1..].parse().expect("c<index>");
        let has_name = db.columns(CALL_TABLES[i])?.iter().any(|h| h == "nameId");
        Ok(if has_name {
            format!("{c}.nameId")
        } else {
            "NULL".to_string()
        })
    };
    let names = calls.iter().map(name_of).collect::<Result<Vec<_>>>()?;
    let api = match names.len() {
        0 => "NULL".to_string(),
        1 => names[0].clone(),
        _ => format!("COALESCE({})", names.join(", ")),
    };
    let found = if calls.is_empty() {
        "0".to_string()
    } else {
        calls
            .iter()
            .map(|c| format!("({c}.rowid IS NOT NULL)"))
            .collect::<Vec<_>>()
            .join(" + ")
    };
    let vals: Vec<String> = vals.iter().map(|v| col(v)).collect();
    Ok(Some(format!(
        "SELECT {index}, o.rowid, o.deviceId, o.start, o.end, o.correlationId, o.globalPid, \
         {}, {}, {api}, {found}, {}, {}, {} FROM \"{table}\" o{joins}",
        col("streamId"),
        pick("globalTid"),
        pick("end"),
        vals.join(", "),
        pick("start"),
    )))
}

/// The copy directions and memory kinds by value: the export's enum tables where it has
/// them, else nsys' values.
struct Enums {
    copy: HashMap<i64, String>,
    mem: HashMap<i64, String>,
}

/// `CUDA_MEMCPY_KIND_HTOD` → `HtoD`, `CUDA_MEMCPY_KIND_UVM_DTOH` → `UVM_DtoH`,
/// `CUDA_MEMCPY_KIND_UNKNOWN` → `Unknown`.
fn direction_name(name: &str) -> String {
    let rest = name.strip_prefix("CUDA_MEMCPY_KIND_").unwrap_or(name);
    let (prefix, kind) = match rest.rsplit_once('_') {
        Some((p, k)) => (format!("{p}_"), k),
        None => (String::new(), rest),
    };
    match kind.split_once("TO") {
        Some((a, b)) if a.len() == 1 && b.len() == 1 => format!("{prefix}{a}to{b}"),
        _ => {
            let mut s = kind.to_ascii_lowercase();
            if let Some(f) = s.get_mut(0..1) {
                f.make_ascii_uppercase();
            }
            format!("{prefix}{s}")
        }
    }
}

/// `CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC` → `device_static`.
fn mem_kind_name(name: &str) -> String {
    name.strip_prefix("CUDA_MEMOPR_MEMORY_KIND_")
        .unwrap_or(name)
        .to_ascii_lowercase()
}

/// nsys' `ENUM_CUDA_MEMCPY_OPER` (the same in exports 2023.1 → 2026.1).
const COPY_KINDS: &[&str] = &[
    "UNKNOWN", "HTOD", "DTOH", "HTOA", "ATOH", "ATOA", "ATOD", "DTOA", "DTOD", "HTOH", "PTOP",
    "UVM_HTOD", "UVM_DTOH", "UVM_DTOD",
];

/// nsys' `ENUM_CUDA_MEM_KIND`.
const MEM_KINDS: &[&str] = &[
    "PAGEABLE",
    "PINNED",
    "DEVICE",
    "ARRAY",
    "MANAGED",
    "DEVICE_STATIC",
    "MANAGED_STATIC",
    "UNKNOWN",
];

impl Enums {
    fn read(db: &Db) -> Result<Enums> {
        let table = |name: &str, fallback: &[&str], f: fn(&str) -> String| -> Result<_> {
            let mut map: HashMap<i64, String> = HashMap::new();
            if db.has(name) {
                let sql = db.select(name, &["id", "name"], false, None)?;
                db.each_row(name, &sql, |row| {
                    let id: Option<i64> = row.get(0).ok();
                    let value: Option<String> = row.get(1).ok();
                    if let (Some(id), Some(value)) = (id, value) {
                        map.insert(id, f(&value));
                    }
                    Ok(())
                })?;
            } else {
                for (i, n) in fallback.iter().enumerate() {
                    map.insert(i as i64, f(n));
                }
            }
            Ok(map)
        };
        Ok(Enums {
            copy: table("ENUM_CUDA_MEMCPY_OPER", COPY_KINDS, |n| {
                direction_name(&format!(
                    "CUDA_MEMCPY_KIND_{}",
                    n.trim_start_matches("CUDA_MEMCPY_KIND_")
                ))
            })?,
            mem: table("ENUM_CUDA_MEM_KIND", MEM_KINDS, mem_kind_name)?,
        })
    }

    fn copy(&self, v: i64) -> String {
        self.copy
            .get(&v)
            .cloned()
            .unwrap_or_else(|| format!("copyKind {v}"))
    }

    fn mem(&self, v: i64) -> String {
        self.mem
            .get(&v)
            .cloned()
            .unwrap_or_else(|| format!("memKind {v}"))
    }
}

/// Registered strings by id, looked up as needed and kept.
struct Strings<'a> {
    db: &'a Db,
    cache: HashMap<i64, Arc<str>>,
}

impl Strings<'_> {
    fn get(&mut self, id: i64) -> Result<Arc<str>> {
        if let Some(s) = self.cache.get(&id) {
            return Ok(s.clone());
        }
        if !self.db.has("StringIds") {
            return Err(Error::data(
                self.db.place(),
                format!("no StringIds table for string id {id}"),
            ));
        }
        let value: Option<String> = {
            let mut stmt = self
                .db
                .conn()
                .prepare("SELECT value FROM StringIds WHERE id = ?1")
                .map_err(|e| self.db.sql_error("StringIds", e))?;
            let mut rows = stmt
                .query([id])
                .map_err(|e| self.db.sql_error("StringIds", e))?;
            match rows.next().map_err(|e| self.db.sql_error("StringIds", e))? {
                Some(row) => row.get(0).ok(),
                None => None,
            }
        };
        let value: Arc<str> = value
            .ok_or_else(|| {
                Error::data(
                    self.db.place(),
                    format!("string id {id} names no string of StringIds"),
                )
            })?
            .into();
        self.cache.insert(id, value.clone());
        Ok(value)
    }
}

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

/// The name of the `i`-th table of `tables` (`?` for none).
fn table_of(tables: &[(&'static str, &'static [&'static str])], i: i64) -> &'static str {
    tables.get(i as usize).map_or("?", |t| t.0)
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

/// The query of every table of `which` the export has, in launch order (`None`, and a
/// note, when it has none). Columns: table, row, device, start, end, corr, gpid, stream,
/// gtid, api, calls, call end, vals…, call start.
fn union_sql(db: &Db, which: Which, notes: &Notes) -> Result<Option<String>> {
    let mut parts = Vec::new();
    let tables = tables(which);
    for (i, (table, vals)) in tables.iter().enumerate() {
        if let Some(sql) = table_sql(db, i, table, vals)? {
            parts.push(sql);
        }
    }
    if parts.is_empty() {
        let names: Vec<&str> = tables.iter().map(|t| t.0).collect();
        notes.note(format!(
            "{}: no {} table: the profile recorded no {}",
            db.place(),
            names.join(" or "),
            match which {
                Which::Kernels => "kernels",
                Which::Memops => "memory copies or sets",
            }
        ));
        return Ok(None);
    }
    let nvals = tables[0].1.len();
    Ok(Some(format!(
        "{} ORDER BY {}",
        parts.join(" UNION ALL "),
        13 + nvals
    )))
}

/// One row of [`union_sql`]'s query as an operation, its call's start and end kept in
/// `RANGE_ROW` and `RANGE_NAME` until [`Attribution::attribute`] replaces them.
fn op_of_row(
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
struct Attribution<'a> {
    nvtx: Option<&'a mut nvtx::Nvtx>,
    /// Per thread, the ranges open at the current call, outermost first.
    stacks: Vec<Vec<Raw>>,
    next_range: Option<Raw>,
    /// What each distinct range name is to XLA, classified once.
    xla: HashMap<u32, Xla>,
}

impl<'a> Attribution<'a> {
    fn new(nvtx: &'a mut Option<nvtx::Nvtx>) -> Result<Attribution<'a>> {
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
    fn attribute(
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

/// Makes records of attributed operations: strings, names and enums looked up once.
struct Records<'a> {
    which: Which,
    profile: &'a Arc<str>,
    nvtx: Option<&'a nvtx::Nvtx>,
    db: &'a Db,
    strings: Strings<'a>,
    enums: Option<Enums>,
    /// The module (name, program id) and thunk of each distinct range name, parsed once.
    modules: HashMap<i64, (String, Option<u64>)>,
    thunks: HashMap<i64, String>,
}

/// What kernel and memory operation records have alike.
struct Common {
    device: u32,
    pid: Option<u64>,
    tid: Option<u64>,
    api: Option<String>,
    range: Option<String>,
    range_id: Option<u64>,
    module: Option<String>,
    program_id: Option<u64>,
    thunk: Option<String>,
    graph_id: Option<u64>,
    graph_node_id: Option<u64>,
}

fn unsigned(v: Option<i64>) -> Option<u64> {
    v.and_then(|v| u64::try_from(v).ok())
}

fn small(v: Option<i64>) -> Option<u32> {
    v.and_then(|v| u32::try_from(v).ok())
}

impl<'a> Records<'a> {
    fn new(
        db: &'a Db,
        which: Which,
        profile: &'a Arc<str>,
        nvtx: Option<&'a nvtx::Nvtx>,
    ) -> Result<Records<'a>> {
        let enums = match which {
            Which::Memops => Some(Enums::read(db)?),
            Which::Kernels => None,
        };
        if db.has("StringIds") {
            db.columns("StringIds")?;
        }
        Ok(Records {
            which,
            profile,
            nvtx,
            db,
            strings: Strings {
                db,
                cache: HashMap::new(),
            },
            enums,
            modules: HashMap::new(),
            thunks: HashMap::new(),
        })
    }

    /// The record of `op`; negative graph ids counted in `counts`.
    fn of(&mut self, op: &Op, counts: &mut Counts) -> Result<GpuOp> {
        let common = self.common(op, counts)?;
        Ok(match self.which {
            Which::Kernels => GpuOp::Kernel(self.kernel(op, common)?),
            Which::Memops => GpuOp::Memop(self.memop(op, common)),
        })
    }

    fn common(&mut self, op: &Op, counts: &mut Counts) -> Result<Common> {
        let tables = tables(self.which);
        let table = table_of(tables, op.c[TABLE]);
        let device = u32::try_from(op.c[DEVICE]).map_err(|_| {
            self.db.row_error(
                table,
                op.c[ROW],
                format!("deviceId {} is no device", op.c[DEVICE]),
            )
        })?;
        let api = match op.get(API) {
            Some(id) => Some(self.strings.get(id)?.to_string()),
            None => None,
        };
        let (range, range_id) = match (op.get(RANGE_ROW), op.get(RANGE_NAME), self.nvtx) {
            (Some(r), Some(name), Some(n)) => {
                (Some(n.name(name as u32).to_string()), Some(r as u64))
            }
            _ => (None, None),
        };
        let (module, program_id) = match (op.get(MODULE_NAME), self.nvtx) {
            (Some(id), Some(n)) => {
                let (module, program_id) = self.modules.entry(id).or_insert_with(|| {
                    let name = n.name(id as u32);
                    match xla_names::module(name) {
                        Some((module, program_id)) => (module.to_string(), program_id),
                        None => (name.to_string(), None),
                    }
                });
                (Some(module.clone()), *program_id)
            }
            _ => (None, None),
        };
        let thunk = match (op.get(THUNK_NAME), self.nvtx) {
            (Some(id), Some(n)) => Some(
                self.thunks
                    .entry(id)
                    .or_insert_with(|| {
                        let name = n.name(id as u32);
                        xla_names::thunk_op(name).unwrap_or(name).to_string()
                    })
                    .clone(),
            ),
            _ => None,
        };
        let (graph_id, graph_node_id) = counts.graph_ids(op, tables[op.c[TABLE] as usize].1, table);
        Ok(Common {
            device,
            pid: op.get(GPID).map(pid_of),
            tid: op.get(GTID).map(tid_of),
            api,
            range,
            range_id,
            module,
            program_id,
            thunk,
            graph_id,
            graph_node_id,
        })
    }

    fn kernel(&mut self, op: &Op, c: Common) -> Result<Kernel> {
        let short_name = match op.val(1) {
            Some(id) => self.strings.get(id)?.to_string(),
            None => String::new(),
        };
        let name = match op.val(0) {
            Some(id) => self.strings.get(id)?.to_string(),
            None => short_name.clone(),
        };
        Ok(Kernel {
            profile: self.profile.clone(),
            device: c.device,
            stream: unsigned(op.get(STREAM)),
            correlation_id: unsigned(op.get(CORR)),
            start_ns: op.c[START],
            end_ns: op.c[END],
            dur_ns: op.c[END] - op.c[START],
            name,
            short_name,
            grid_x: small(op.val(2)),
            grid_y: small(op.val(3)),
            grid_z: small(op.val(4)),
            block_x: small(op.val(5)),
            block_y: small(op.val(6)),
            block_z: small(op.val(7)),
            registers_per_thread: small(op.val(8)),
            static_shared_bytes: unsigned(op.val(9)),
            dynamic_shared_bytes: unsigned(op.val(10)),
            pid: c.pid,
            tid: c.tid,
            api: c.api,
            range: c.range,
            range_id: c.range_id,
            module: c.module,
            program_id: c.program_id,
            thunk: c.thunk,
            graph_id: c.graph_id,
            graph_node_id: c.graph_node_id,
        })
    }

    fn memop(&self, op: &Op, c: Common) -> Memop {
        let enums = self.enums.as_ref().expect("read for memops");
        let memset = op.c[TABLE] == 1;
        Memop {
            profile: self.profile.clone(),
            device: c.device,
            stream: unsigned(op.get(STREAM)),
            correlation_id: unsigned(op.get(CORR)),
            start_ns: op.c[START],
            end_ns: op.c[END],
            dur_ns: op.c[END] - op.c[START],
            kind: if memset { "memset" } else { "memcpy" }.to_string(),
            bytes: unsigned(op.val(0)).unwrap_or(0),
            direction: op.val(1).map(|v| enums.copy(v)),
            src_kind: op.val(2).map(|v| enums.mem(v)),
            dst_kind: op.val(3).map(|v| enums.mem(v)),
            src_device: small(op.val(4)),
            dst_device: small(op.val(5)),
            value: op.val(6),
            pid: c.pid,
            tid: c.tid,
            api: c.api,
            range: c.range,
            range_id: c.range_id,
            module: c.module,
            program_id: c.program_id,
            thunk: c.thunk,
            graph_id: c.graph_id,
            graph_node_id: c.graph_node_id,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_and_memory_kinds_read_as_people_write_them() {
        assert_eq!(direction_name("CUDA_MEMCPY_KIND_HTOD"), "HtoD");
        assert_eq!(direction_name("CUDA_MEMCPY_KIND_PTOP"), "PtoP");
        assert_eq!(direction_name("CUDA_MEMCPY_KIND_UVM_DTOH"), "UVM_DtoH");
        assert_eq!(direction_name("CUDA_MEMCPY_KIND_UNKNOWN"), "Unknown");
        assert_eq!(
            mem_kind_name("CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC"),
            "device_static"
        );
    }
}
