//! nsys SQLite exports (`nsys export --type sqlite`), read natively: opening one and
//! reading its tables whatever the nsys version. The tables njx derives from them are
//! beside those of the other containers: the NVTX range tree
//! ([`ranges::nvtx`](super::ranges::nvtx)), its projection onto the GPU
//! ([`gpu_ranges::sqlite`](super::gpu_ranges::sqlite)), the device of each launching
//! thread ([`devices::sqlite`](super::devices::sqlite)); `.nsys-rep` reports are exported
//! with nsys first ([`report`](super::report)).
//!
//! The semantics come from the SQL of nsys' own reports (`nvtx_pushpop_trace.py`,
//! `nvtx_gpu_proj_trace.py`), re-implemented as sorts and sweeps so that time grows as
//! O(n log n) with the number of ranges and GPU operations and memory stays bounded (the
//! sorts go through temporary files, `source/sorter.rs`) — nsys' own queries join ranges
//! with ranges and ranges with API calls through an R-tree.
//!
//! The schema drifts between nsys versions (2023.1 → 2026.1 seen): tables exist only for
//! what was traced, columns are added, the export's metadata table was renamed
//! (`EXPORT_META_DATA` → `META_DATA_EXPORT`). So tables are looked up in `sqlite_master`,
//! columns are selected by name, event type numbers are taken from `ENUM_NSYS_EVENT_TYPE`
//! where the export has it, and a table that is absent means "nothing of that kind was
//! recorded", said on stderr. Which columns a table must have is one rule for every reader
//! of it ([`REQUIRED`], checked by [`Db::columns`]): a table lacking one is refused, naming
//! the file, the table and the column, whichever tool reads it; any other column a reader
//! asks for reads as null where the table lacks it.
//!
//! Databases are opened read-only and `immutable` (no locks, no journal): exports are
//! usually read-only files, sometimes on file systems without locking.

use crate::error::{Error, Result};
use crate::output::progress::Progress;
use rusqlite::{Connection, OpenFlags};
use std::collections::HashSet;
use std::path::Path;

/// The tables whose presence marks an nsys export.
const NSYS_MARKERS: &[&str] = &["META_DATA_EXPORT", "EXPORT_META_DATA", "NVTX_EVENTS"];

/// The columns of an activity table njx needs: when it ran (the times), where (the
/// device) and what launched it (the call of its correlation id in its process).
const GPU_WORK: &[&str] = &["start", "end", "deviceId", "correlationId", "globalPid"];

/// The columns of a table of CUDA API calls njx needs: when, on which thread, and the
/// correlation id that ties the GPU work to the call.
const API_CALLS: &[&str] = &["start", "end", "globalTid", "correlationId"];

/// The columns each table must have, one rule for every reader of the table (the NVTX
/// ranges, their GPU projection, the kernels and memory operations, the launcher
/// threads): every nsys export 2023.1 → 2026.2 has them, and without one a reader could
/// only guess (a kernel without `globalPid` belongs to no launch, so the projection and
/// the launchers cannot place it, and the kernel table would show every call missing).
/// A table that has them all may lack any other column a reader asks for: it reads as
/// null. Tables not listed are read for columns that are each optional.
pub const REQUIRED: &[(&str, &[&str])] = &[
    ("NVTX_EVENTS", &["start", "end", "eventType", "globalTid"]),
    ("CUPTI_ACTIVITY_KIND_KERNEL", GPU_WORK),
    ("CUPTI_ACTIVITY_KIND_MEMCPY", GPU_WORK),
    ("CUPTI_ACTIVITY_KIND_MEMSET", GPU_WORK),
    ("CUPTI_ACTIVITY_KIND_RUNTIME", API_CALLS),
    ("CUPTI_ACTIVITY_KIND_DRIVER", API_CALLS),
    ("StringIds", &["id", "value"]),
    ("ThreadNames", &["globalTid", "nameId"]),
    ("ENUM_NSYS_EVENT_TYPE", &["id", "name"]),
    ("ENUM_CUDA_MEMCPY_OPER", &["id", "name"]),
    ("ENUM_CUDA_MEM_KIND", &["id", "name"]),
];

/// Refuses an export whose write-ahead log (`FILE-wal` beside it) holds pages: they are
/// rows not yet in the file, and an export read `immutable` (as njx reads them) is read
/// without them. nsys writes no log once the export is done; one is left by a writer that
/// has not finished or was killed, or by a tool that changed the file in WAL mode.
fn check_wal(path: &Path, place: &str) -> Result<()> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    match std::fs::metadata(&wal) {
        Ok(m) if m.is_file() && m.len() > 0 => Err(Error::data(
            place,
            format!(
                "a write-ahead log beside it ({}-wal, {} bytes) holds changes not yet in the \
                 file, which njx would read without them: let the writer finish, or \
                 checkpoint it (`sqlite3 FILE 'PRAGMA wal_checkpoint'`)",
                place,
                m.len()
            ),
        )),
        _ => Ok(()),
    }
}

/// An open nsys export.
pub struct Db {
    conn: Connection,
    place: String,
    tables: HashSet<String>,
    /// Views among `tables`: nsys writes none, and a view can compute without end.
    views: HashSet<String>,
    /// Where the tables read and the phases of the work on them are said.
    progress: Progress,
}

impl Db {
    /// Opens the export at `path` read-only; `place` names it in messages. Fails, naming
    /// the file, when it is no SQLite database or not one that nsys wrote.
    pub fn open(path: &Path, place: &str) -> Result<Db> {
        check_size(path, place)?;
        check_wal(path, place)?;
        let absolute = std::path::absolute(path).map_err(|e| Error::io(place, e))?;
        let uri = format!("file://{}?immutable=1", uri_path(&absolute));
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&uri, flags)
            .map_err(|e| Error::data(place, format!("cannot open as SQLite: {e}")))?;
        let mut db = Db {
            conn,
            place: place.to_string(),
            tables: HashSet::new(),
            views: HashSet::new(),
            progress: Progress::none(),
        };
        // The first read tells a corrupt or non-database file.
        let found: Vec<(String, String)> = {
            let mut stmt = db
                .conn
                .prepare("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')")
                .map_err(|e| db.not_a_database(e))?;
            stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
                .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
                .map_err(|e| db.not_a_database(e))?
        };
        let tables: Vec<String> = found.iter().map(|(name, _)| name.clone()).collect();
        db.tables = tables.iter().cloned().collect();
        db.views = found
            .into_iter()
            .filter(|(_, kind)| kind == "view")
            .map(|(name, _)| name)
            .collect();
        if !NSYS_MARKERS.iter().any(|t| db.has(t)) {
            let mut found = tables;
            found.sort();
            let shown = if found.is_empty() {
                "none".to_string()
            } else if found.len() > 8 {
                format!("{}, … ({} in all)", found[..8].join(", "), found.len())
            } else {
                found.join(", ")
            };
            return Err(Error::data(
                place,
                format!(
                    "an SQLite database but not an nsys export (no {} table; tables: {shown})",
                    NSYS_MARKERS.join(", ")
                ),
            ));
        }
        Ok(db)
    }

    /// The export, saying the tables it reads and what is done with them in `progress`
    /// (exports tell no byte counts: a spinner with the phase and the elapsed time).
    pub fn reporting(mut self, progress: &Progress) -> Db {
        self.progress = progress.clone();
        self
    }

    /// Says in the progress what is being done with the export now (`sorting NVTX ranges`).
    pub fn phase(&self, what: &str) {
        self.progress.doing(&self.place, what);
    }

    fn not_a_database(&self, e: rusqlite::Error) -> Error {
        Error::data(&self.place, format!("not a readable SQLite database: {e}"))
    }

    /// The name of the file in messages.
    pub fn place(&self) -> &str {
        &self.place
    }

    /// Whether the export has `table`.
    pub fn has(&self, table: &str) -> bool {
        self.tables.contains(table)
    }

    /// An SQL expression for the text of an `NVTX_EVENTS` row aliased `e` (its `text`, or
    /// the registered string its `textId` names), `None` when the table has neither
    /// column.
    pub fn nvtx_text(&self) -> Result<Option<&'static str>> {
        let columns = self.columns("NVTX_EVENTS")?;
        if self.has("StringIds") {
            self.columns("StringIds")?;
        }
        let has = |c: &str| columns.iter().any(|n| n == c);
        Ok(
            match (has("text"), has("textId") && self.has("StringIds")) {
                (true, true) => Some(
                    "COALESCE(e.text, (SELECT s.value FROM StringIds s WHERE s.id = e.textId))",
                ),
                (true, false) => Some("e.text"),
                (false, true) => Some("(SELECT s.value FROM StringIds s WHERE s.id = e.textId)"),
                (false, false) => None,
            },
        )
    }

    /// The names of the NVTX payload schemas the export registers
    /// (`NVTX_PAYLOAD_SCHEMAS.name`, nsys 2026; empty where it has none): XLA's
    /// `XlaModule`, `XlaInstruction`, `XlaInstructionDetailed`, `XlaCollectiveDetailed`
    /// (openxla/xla PR #46486, `--xla_gpu_trace_annotation_level`), NCCL's are unnamed.
    pub fn payload_schemas(&self) -> Result<Vec<String>> {
        const TABLE: &str = "NVTX_PAYLOAD_SCHEMAS";
        if !self.has(TABLE) || !self.columns(TABLE)?.iter().any(|c| c == "name") {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT DISTINCT CAST(name AS TEXT) FROM {TABLE} WHERE name IS NOT NULL \
                 ORDER BY 1"
            ))
            .map_err(|e| self.sql_error(TABLE, e))?;
        stmt.query_map([], |row| row.get::<_, String>(0))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<String>>>())
            .map_err(|e| self.sql_error(TABLE, e))
    }

    /// Fails when `table` is a view: nsys exports hold tables only, and a view (a recursive
    /// one) can compute without end, so njx reads none.
    pub fn check_table(&self, table: &str) -> Result<()> {
        if self.views.contains(table) {
            return Err(Error::data(
                &self.place,
                format!(
                    "{table} is a view, not a table as nsys writes them: refused (a view can \
                     compute without end)"
                ),
            ));
        }
        Ok(())
    }

    /// The columns of `table`, in their order: every reader of a table asks here first, so
    /// that a table without a column the rule requires ([`REQUIRED`]) is refused the same
    /// way by all of them, naming the file, the table and the column. A view is refused
    /// ([`Db::check_table`]).
    pub fn columns(&self, table: &str) -> Result<Vec<String>> {
        self.check_table(table)?;
        let mut stmt = self
            .conn
            .prepare(&format!("PRAGMA table_info(\"{table}\")"))
            .map_err(|e| self.sql_error(table, e))?;
        let names = stmt
            .query_map([], |row| row.get::<_, String>(1))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<String>>>())
            .map_err(|e| self.sql_error(table, e))?;
        let required = REQUIRED.iter().find(|(t, _)| *t == table);
        for &column in required.map_or(&[][..], |(_, c)| c) {
            if !names.iter().any(|n| n == column) {
                return Err(Error::data(
                    &self.place,
                    format!(
                        "table {table} has no column `{column}`, which njx needs (columns: {})",
                        names.join(", ")
                    ),
                ));
            }
        }
        Ok(names)
    }

    /// A `SELECT` of `columns` from `table` (and `rowid` first when `with_rowid`), with
    /// `NULL` in place of the columns the table lacks, after [`Db::columns`] has refused a
    /// table without a column the rule requires. `filter` is appended as the `WHERE`
    /// clause.
    pub fn select(
        &self,
        table: &str,
        columns: &[&str],
        with_rowid: bool,
        filter: Option<&str>,
    ) -> Result<String> {
        let have = self.columns(table)?;
        let mut parts: Vec<String> = Vec::new();
        if with_rowid {
            parts.push("rowid".to_string());
        }
        for &name in columns {
            if have.iter().any(|h| h == name) {
                parts.push(format!("\"{name}\""));
            } else {
                parts.push("NULL".to_string());
            }
        }
        let mut sql = format!("SELECT {} FROM \"{table}\"", parts.join(", "));
        if let Some(f) = filter {
            sql.push_str(" WHERE ");
            sql.push_str(f);
        }
        Ok(sql)
    }

    /// Runs `sql` (a query of `table`, made by [`Db::select`]) and hands every row to `f`.
    pub fn each_row(
        &self,
        table: &str,
        sql: &str,
        mut f: impl FnMut(&rusqlite::Row) -> Result<()>,
    ) -> Result<()> {
        if self.progress.is_shown() {
            self.phase(&format!("reading {table}"));
        }
        let mut stmt = self
            .conn
            .prepare(sql)
            .map_err(|e| self.sql_error(table, e))?;
        let mut rows = stmt.query([]).map_err(|e| self.sql_error(table, e))?;
        while let Some(row) = rows.next().map_err(|e| self.sql_error(table, e))? {
            f(row)?;
        }
        Ok(())
    }

    /// The `rowid` a [`Db::select`] made `with_rowid` puts first.
    pub fn rowid(&self, table: &str, row: &rusqlite::Row) -> Result<i64> {
        row.get::<_, i64>(0).map_err(|e| self.sql_error(table, e))
    }

    /// The connection, for queries.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// An SQLite error while reading `table`.
    pub fn sql_error(&self, table: &str, e: rusqlite::Error) -> Error {
        Error::data(&self.place, format!("table {table}: {e}"))
    }

    /// Integer cell `i` (column `column`) of a row of `table`; null is `None`, text or a
    /// fraction is an error naming the row.
    pub fn int(
        &self,
        table: &str,
        row: &rusqlite::Row,
        i: usize,
        column: &str,
        rowid: i64,
    ) -> Result<Option<i64>> {
        use rusqlite::types::ValueRef;
        match row.get_ref(i).map_err(|e| self.sql_error(table, e))? {
            ValueRef::Null => Ok(None),
            ValueRef::Integer(v) => Ok(Some(v)),
            ValueRef::Real(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => Ok(Some(v as i64)),
            other => {
                let found = match other {
                    ValueRef::Text(t) => format!("the text {:?}", String::from_utf8_lossy(t)),
                    ValueRef::Blob(b) => format!("a blob of {} bytes", b.len()),
                    ValueRef::Real(v) => format!("the real number {v}"),
                    _ => format!("{other:?}"),
                };
                Err(self.row_error(
                    table,
                    rowid,
                    format!("column `{column}`: expected an integer, found {found}"),
                ))
            }
        }
    }

    /// A timestamp cell (nanoseconds): [`Db::int`], and beyond ±2^61 ns (73 years) an
    /// error naming the row, so that no sum of two times can overflow.
    pub fn time(
        &self,
        table: &str,
        row: &rusqlite::Row,
        i: usize,
        column: &str,
        rowid: i64,
    ) -> Result<Option<i64>> {
        let v = self.int(table, row, i, column, rowid)?;
        match v {
            Some(t) if !crate::records::time_in_range(t) => Err(self.row_error(
                table,
                rowid,
                format!("column `{column}`: {t} ns is beyond ±2^61 ns (73 years)"),
            )),
            _ => Ok(v),
        }
    }

    /// An error about one row of `table`.
    pub fn row_error(&self, table: &str, rowid: i64, msg: impl std::fmt::Display) -> Error {
        Error::data(&self.place, format!("table {table}, row {rowid}: {msg}"))
    }
}

/// Refuses a database file cut short: SQLite reads pages as queries need them, so a file
/// missing its last pages reads as if whole until one of them is wanted. Its header
/// (sqlite.org/fileformat.html) gives the page size (offset 16) and, where valid
/// (version-valid-for at 92 equals the change counter at 24), the page count (28).
fn check_size(path: &Path, place: &str) -> Result<()> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(place, e))?;
    let len = file.metadata().map_err(|e| Error::io(place, e))?.len();
    let mut header = [0u8; 100];
    if len < 100 || file.read_exact(&mut header).is_err() {
        return Err(Error::data(
            place,
            "truncated SQLite database: no whole header",
        ));
    }
    let be32 = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let page = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        p => u64::from(p),
    };
    if page < 512 || !page.is_power_of_two() {
        return Err(Error::data(
            place,
            format!("not a readable SQLite database: page size {page}"),
        ));
    }
    let pages = u64::from(be32(28));
    let counted = be32(92) == be32(24) && pages > 0;
    if len % page != 0 || (counted && len < pages * page) {
        return Err(Error::data(
            place,
            format!(
                "truncated SQLite database: {len} bytes, where its header says {} pages of {page}",
                if counted {
                    pages.to_string()
                } else {
                    "whole".to_string()
                }
            ),
        ));
    }
    Ok(())
}

/// `path` as the path part of a `file:` URI: bytes other than unreserved characters and
/// `/` percent-encoded (so `?`, `#` and `%` in file names survive).
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for &b in path.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Process id encoded in an nsys global thread or process id
/// (`0xHHVVPPPPPPTTTTTT`: hardware, VM, process, thread).
pub fn pid_of(global_tid: i64) -> u64 {
    ((global_tid as u64) >> 24) & 0xFF_FFFF
}

/// Thread id encoded in an nsys global thread id.
pub fn tid_of(global_tid: i64) -> u64 {
    (global_tid as u64) & 0xFF_FFFF
}

/// The global process id of a global thread id: the thread bits cleared, as in the
/// `globalPid` columns of the GPU activity tables.
pub fn global_pid_of(global_tid: i64) -> i64 {
    ((global_tid as u64) & !0xFF_FFFF) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_ids_decode_as_nsys_documents() {
        let g: i64 = 282323165693308;
        assert_eq!(pid_of(g), (g as u64 >> 24) & 0xFFFFFF);
        assert_eq!(tid_of(g), g as u64 & 0xFFFFFF);
        assert_eq!(global_pid_of(g), 282323165642752);
    }

    #[test]
    fn uri_paths_escape_what_uris_reserve() {
        assert_eq!(
            uri_path(Path::new("/a b/r?1#%.sqlite")),
            "/a%20b/r%3F1%23%25.sqlite"
        );
    }
}
