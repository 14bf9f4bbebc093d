//! NVTX ranges of an nsys export (`NVTX_EVENTS`) as [`Range`] records, with the semantics
//! of nsys' `nvtx_pushpop_trace` report, so that reading a report's SQLite export and
//! reading the CSV that `nsys stats --report nvtx_pushpop_trace` makes of it give the same
//! records:
//!
//! - the ranges are the push/pop ranges (event types `NvtxPushPopRange` 59 and
//!   `NvtxtPushPopRange` 70); `id` is the event's `rowid` (the report's `RangeId`);
//! - a range's parent is the innermost range *on the same thread* that contains it
//!   (`start ≤ start'` and `end' ≤ end`); `depth` counts its ancestors, `children` its
//!   direct children, `child_ns` is the sum of their durations, `self_ns = dur - child`;
//! - the name is the registered string (`textId` → `StringIds.value`) or else the literal
//!   `text`, prefixed with `Domain:` where the range's domain was created (event type
//!   `NvtxDomainCreate` 75, its name likewise) in the same process;
//! - a range never ended (null `end`) ends at the last timestamp of the NVTX ranges, as
//!   in nsys' report; how many is said on stderr;
//! - a range with neither `text` nor `textId` (a push given no message: the report names
//!   it null) is named with the empty string (after its domain's prefix); how many is
//!   said on stderr;
//! - pid and tid come from the global thread id: `(globalTid >> 24) & 0xFFFFFF` and
//!   `globalTid & 0xFFFFFF`.
//!
//! Where njx differs from the report, deliberately:
//! - the default domain adds no prefix (recent nsys versions write `:name` there);
//! - two ranges with the same start and end on one thread nest in `rowid` order (the
//!   report's "tightest container" query makes each the other's parent and drops both);
//! - records come in start order, a parent before its children when they start together
//!   (the report sorts by start and then by *ascending* duration, which puts a child
//!   first), which is what the range tools need.
//!
//! With [`Options::start_end`], start/end ranges (event types 60 and 71,
//! which need not nest) are added as roots of their own: depth 0, no parent, no children,
//! on the thread that started them.
//!
//! Method: one scan of the table interns the distinct names and threads and hands each
//! range, as a 32-byte record (times, row, thread, name index), to an external sort by
//! (start, end descending, rowid) (`source/sorter.rs`: sorted runs of 16 MiB
//! in a temporary file under `TMPDIR`, merged); ranges never ended are sorted apart by
//! (start, rowid) and merged in once the last timestamp is known. Parent and depth are
//! known when a range is pushed on its thread's stack, its children and their time only
//! when it is popped, so the sweep writes each record (48 bytes) to a temporary file as
//! it is pushed and patches these two fields in place when it is popped; the records are
//! then read back in order. Memory is bounded (a few tens of MiB: the sort buffer, the
//! latest records, the open ranges, the distinct names and threads) whatever the number
//! of ranges; disk is 80 bytes per range while it runs.

use crate::error::Result;
use crate::output::notes::Notes;
use crate::records::Range;
use crate::source::Options;
use crate::source::sorter::{Fixed, Patched, Replay, Sorted, Sorter, i64_at, u32_at};
use crate::source::sqlite::{Db, pid_of, tid_of};
use rusqlite::types::ValueRef;
use rusqlite::{Row, Statement};
use std::collections::HashMap;
use std::sync::Arc;

/// No parent.
pub const NONE: u32 = u32::MAX;

const TABLE: &str = "NVTX_EVENTS";

/// One NVTX range as read, before the tree is built.
#[derive(Debug, Clone, Copy)]
pub struct Raw {
    /// Start, nanoseconds.
    pub start: i64,
    /// End, nanoseconds ([`i64::MAX`] while a range never ended waits for the last
    /// timestamp).
    pub end: i64,
    /// `rowid` in `NVTX_EVENTS`: the range id.
    pub row: u32,
    /// The thread that pushed (or started) the range: index in [`Nvtx::threads`].
    pub thread: u32,
    /// Index of the name in [`Nvtx::name`].
    pub name: u32,
    /// A start/end range (a root of its own), not a push/pop range.
    pub mark: bool,
}

impl Fixed for Raw {
    const SIZE: usize = 32;
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.start.to_le_bytes());
        out.extend_from_slice(&self.end.to_le_bytes());
        out.extend_from_slice(&self.row.to_le_bytes());
        out.extend_from_slice(&self.thread.to_le_bytes());
        out.extend_from_slice(&self.name.to_le_bytes());
        out.extend_from_slice(&u32::from(self.mark).to_le_bytes());
    }
    fn get(b: &[u8]) -> Self {
        Raw {
            start: i64_at(b, 0),
            end: i64_at(b, 8),
            row: u32_at(b, 16),
            thread: u32_at(b, 20),
            name: u32_at(b, 24),
            mark: u32_at(b, 28) != 0,
        }
    }
}

impl Raw {
    /// Sort key: start, then the longer first, then the row — parents before children.
    pub fn key(&self) -> (i64, std::cmp::Reverse<i64>, u32) {
        (self.start, std::cmp::Reverse(self.end), self.row)
    }
}

/// One NVTX range of the tree: what a range record holds.
#[derive(Debug, Clone, Copy)]
struct Node {
    start: i64,
    end: i64,
    row: u32,
    thread: u32,
    name: u32,
    /// The parent's row; meaningless at depth 0 (no parent).
    parent: u32,
    depth: u32,
    children: u32,
    child_ns: i64,
}

/// Byte offset of `children` (then `child_ns`) in a [`Node`]'s encoding.
const CHILDREN_AT: usize = 36;

impl Fixed for Node {
    const SIZE: usize = 48;
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.start.to_le_bytes());
        out.extend_from_slice(&self.end.to_le_bytes());
        out.extend_from_slice(&self.row.to_le_bytes());
        out.extend_from_slice(&self.thread.to_le_bytes());
        out.extend_from_slice(&self.name.to_le_bytes());
        out.extend_from_slice(&self.parent.to_le_bytes());
        out.extend_from_slice(&self.depth.to_le_bytes());
        out.extend_from_slice(&self.children.to_le_bytes());
        out.extend_from_slice(&self.child_ns.to_le_bytes());
    }
    fn get(b: &[u8]) -> Self {
        Node {
            start: i64_at(b, 0),
            end: i64_at(b, 8),
            row: u32_at(b, 16),
            thread: u32_at(b, 20),
            name: u32_at(b, 24),
            parent: u32_at(b, 28),
            depth: u32_at(b, 32),
            children: u32_at(b, CHILDREN_AT),
            child_ns: i64_at(b, CHILDREN_AT + 4),
        }
    }
}

/// Which start/end ranges to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartEnd {
    /// None.
    Skip,
    /// All of them.
    All,
    /// Those ended on the thread that started them (the GPU projection's rule).
    SameThread,
}

/// The NVTX ranges of one export, read and sorted: [`Nvtx::next`] hands them out in
/// (start, end descending, rowid) order, a parent before its children.
pub struct Nvtx {
    /// Ranges without an end, given the last timestamp.
    pub unended: u64,
    /// Ranges with neither text nor textId, named with the empty string.
    pub unnamed: u64,
    /// Global thread ids of the threads with ranges.
    pub threads: Vec<i64>,
    /// Index in `threads` of each global thread id.
    pub thread_index: HashMap<i64, u32>,
    names: Vec<Box<str>>,
    /// The last timestamp of the ranges: the end of those never ended.
    last: i64,
    /// The ranges with an end, and the next one.
    ended: Sorted<Raw>,
    next_ended: Option<Raw>,
    /// The ranges never ended, by (start, rowid), and the next one (its end set).
    open: Sorted<Raw>,
    next_open: Option<Raw>,
}

impl Nvtx {
    /// Says on `notes` how the ranges of `db` were repaired: those never ended, those
    /// without a name. Every table made of the ranges says it.
    pub fn note_repairs(&self, db: &Db, notes: &Notes) {
        if self.unended > 0 {
            notes.note(format!(
                "{}: {} NVTX ranges never ended; they end at the last NVTX timestamp, as in \
                 nsys' reports",
                db.place(),
                self.unended
            ));
        }
        if self.unnamed > 0 {
            notes.note(format!(
                "{}: {} NVTX ranges have no name (neither text nor textId); named with the \
                 empty string",
                db.place(),
                self.unnamed
            ));
        }
    }

    /// The full name (`Domain:Text`) of name index `name`.
    pub fn name(&self, name: u32) -> &str {
        &self.names[name as usize]
    }

    /// Every distinct name read.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|n| &**n)
    }

    /// The global thread id of thread index `thread`.
    pub fn gtid(&self, thread: u32) -> i64 {
        self.threads[thread as usize]
    }

    /// The next range in order (push/pop and start/end ranges together), or `None` at the
    /// end.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Raw>> {
        let take_open = match (&self.next_ended, &self.next_open) {
            (None, None) => return Ok(None),
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (Some(e), Some(o)) => o.key() < e.key(),
        };
        let taken = if take_open {
            let mut next = self.open.next()?;
            if let Some(r) = &mut next {
                r.end = self.last;
            }
            std::mem::replace(&mut self.next_open, next)
        } else {
            std::mem::replace(&mut self.next_ended, self.ended.next()?)
        };
        Ok(taken)
    }
}

/// Event type numbers: from `ENUM_NSYS_EVENT_TYPE` when the export has it (by name),
/// the values of every nsys release so far otherwise.
pub(crate) struct EventTypes {
    push_pop: [i64; 2],
    start_end: [i64; 2],
    pub(crate) domain_create: i64,
}

pub(crate) fn event_types(db: &Db) -> Result<EventTypes> {
    let mut known: HashMap<String, i64> = HashMap::new();
    let table = "ENUM_NSYS_EVENT_TYPE";
    if db.has(table) {
        let sql = db.select(table, &["id", "name"], false, None)?;
        db.each_row(table, &sql, |row| {
            if let (Ok(id), Ok(Some(name))) =
                (row.get::<_, i64>(0), row.get::<_, Option<String>>(1))
            {
                known.insert(name, id);
            }
            Ok(())
        })?;
    }
    let id = |name: &str, default: i64| known.get(name).copied().unwrap_or(default);
    Ok(EventTypes {
        push_pop: [id("NvtxPushPopRange", 59), id("NvtxtPushPopRange", 70)],
        start_end: [id("NvtxStartEndRange", 60), id("NvtxtStartEndRange", 71)],
        domain_create: id("NvtxDomainCreate", 75),
    })
}

/// An integer cell of the NVTX table; see [`Db::int`].
pub(crate) fn int(db: &Db, row: &Row, i: usize, column: &str, rowid: i64) -> Result<Option<i64>> {
    db.int(TABLE, row, i, column, rowid)
}

/// A text cell as UTF-8 (invalid bytes replaced), or `None`.
pub(crate) fn text<'r>(row: &'r Row, i: usize) -> Option<std::borrow::Cow<'r, str>> {
    match row.get_ref(i) {
        Ok(ValueRef::Text(t)) => Some(String::from_utf8_lossy(t)),
        _ => None,
    }
}

/// Distinct range names, interned as they are read.
pub(crate) struct Names<'c> {
    /// `SELECT value FROM StringIds WHERE id = ?`, where the export has the table.
    strings: Option<Statement<'c>>,
    /// Domain names by (global process id, domain id), as indices into `domain_names`.
    domains: HashMap<(i64, i64), u32>,
    /// Index 0 is the default domain, without prefix.
    domain_names: Vec<Box<str>>,
    /// Per domain: name index by text.
    by_text: Vec<HashMap<Box<str>, u32>>,
    /// Per (domain, textId): name index.
    by_id: HashMap<(u32, i64), u32>,
    names: Vec<Box<str>>,
}

impl<'c> Names<'c> {
    pub(crate) fn new(db: &'c Db) -> Result<Names<'c>> {
        let strings = if db.has("StringIds") {
            let sql = db.select("StringIds", &["value"], false, Some("id = ?1"))?;
            Some(
                db.conn()
                    .prepare(&sql)
                    .map_err(|e| db.sql_error("StringIds", e))?,
            )
        } else {
            None
        };
        Ok(Names {
            strings,
            domains: HashMap::new(),
            domain_names: vec!["".into()],
            by_text: vec![HashMap::new()],
            by_id: HashMap::new(),
            names: Vec::new(),
        })
    }

    /// The registered string `id`, if the export has it.
    pub(crate) fn string(&mut self, db: &Db, id: i64) -> Result<Option<String>> {
        let Some(stmt) = &mut self.strings else {
            return Ok(None);
        };
        let mut rows = stmt.query([id]).map_err(|e| db.sql_error("StringIds", e))?;
        match rows.next().map_err(|e| db.sql_error("StringIds", e))? {
            Some(row) => Ok(text(row, 0).map(|t| t.into_owned())),
            None => Ok(None),
        }
    }

    /// Registers the domains created in the export (earliest creation per process and
    /// domain id).
    pub(crate) fn read_domains(&mut self, db: &Db, create: i64) -> Result<()> {
        let sql = db.select(
            TABLE,
            &["start", "globalTid", "domainId", "textId", "text"],
            true,
            Some(&format!("eventType = {create}")),
        )?;
        // (process, domain) → (start, name)
        let mut found: HashMap<(i64, i64), (i64, String)> = HashMap::new();
        db.each_row(TABLE, &sql, |row| {
            let rowid = db.rowid(TABLE, row)?;
            let start = int(db, row, 1, "start", rowid)?.unwrap_or(i64::MAX);
            let (Some(gtid), Some(domain)) = (
                int(db, row, 2, "globalTid", rowid)?,
                int(db, row, 3, "domainId", rowid)?,
            ) else {
                return Ok(());
            };
            let name = match int(db, row, 4, "textId", rowid)? {
                Some(id) => self.string(db, id)?,
                None => None,
            };
            let Some(name) = name.or_else(|| text(row, 5).map(|t| t.into_owned())) else {
                return Ok(());
            };
            let key = (crate::source::sqlite::global_pid_of(gtid), domain);
            match found.get(&key) {
                Some((s, _)) if *s <= start => {}
                _ => {
                    found.insert(key, (start, name));
                }
            }
            Ok(())
        })?;
        for (key, (_, name)) in found {
            self.domains.insert(key, self.domain_names.len() as u32);
            self.domain_names.push(name.into());
            self.by_text.push(HashMap::new());
        }
        Ok(())
    }

    pub(crate) fn domain(&self, gtid: i64, domain_id: Option<i64>) -> u32 {
        match domain_id {
            None | Some(0) => 0,
            Some(d) => self
                .domains
                .get(&(crate::source::sqlite::global_pid_of(gtid), d))
                .copied()
                .unwrap_or(0),
        }
    }

    fn intern(&mut self, domain: u32, text: &str) -> u32 {
        if let Some(&i) = self.by_text[domain as usize].get(text) {
            return i;
        }
        let full: Box<str> = if domain == 0 {
            text.into()
        } else {
            format!("{}:{text}", self.domain_names[domain as usize]).into()
        };
        let i = self.names.len() as u32;
        self.names.push(full);
        self.by_text[domain as usize].insert(text.into(), i);
        i
    }

    /// The name of a range: its registered string, else its text, else empty. A `textId`
    /// naming no registered string, on a row without text, is an error naming the row
    /// (`rowid`) of `NVTX_EVENTS`.
    pub(crate) fn name_of(
        &mut self,
        db: &Db,
        domain: u32,
        text_id: Option<i64>,
        text: Option<&str>,
        rowid: i64,
    ) -> Result<u32> {
        if let Some(id) = text_id {
            if let Some(&i) = self.by_id.get(&(domain, id)) {
                return Ok(i);
            }
            if let Some(value) = self.string(db, id)? {
                let i = self.intern(domain, &value);
                self.by_id.insert((domain, id), i);
                return Ok(i);
            }
            if text.is_none() {
                return Err(db.row_error(
                    TABLE,
                    rowid,
                    format!("textId {id} names no string of StringIds, and the row has no text"),
                ));
            }
        }
        Ok(self.intern(domain, text.unwrap_or("")))
    }

    /// The name interned as `i` by [`Names::name_of`].
    pub(crate) fn get(&self, i: u32) -> &str {
        &self.names[i as usize]
    }
}

/// Reads the NVTX ranges of `db`: `None` when it has no `NVTX_EVENTS` table.
pub fn load(db: &Db, start_end: StartEnd) -> Result<Option<Nvtx>> {
    if !db.has(TABLE) {
        return Ok(None);
    }
    let types = event_types(db)?;
    let mut names = Names::new(db)?;
    names.read_domains(db, types.domain_create)?;
    let sql = ranges_query(db, &types, start_end)?;
    let mut scan = Scan::new(db, &types, start_end);
    db.each_row(TABLE, &sql, |row| scan.row(&mut names, row))?;
    db.phase("sorting NVTX ranges");
    scan.finish(names)
}

/// The query of the ranges `start_end` asks for, with the columns [`Scan::row`] reads.
fn ranges_query(db: &Db, types: &EventTypes, start_end: StartEnd) -> Result<String> {
    let mut wanted: Vec<i64> = types.push_pop.to_vec();
    if start_end != StartEnd::Skip {
        wanted.extend(types.start_end);
    }
    let filter = format!(
        "eventType IN ({})",
        wanted
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    db.select(
        TABLE,
        &[
            "start",
            "end",
            "eventType",
            "globalTid",
            "endGlobalTid",
            "textId",
            "text",
            "domainId",
        ],
        true,
        Some(&filter),
    )
}

/// The one scan of the ranges: each row read, named and handed to a sort, the threads
/// interned, the repairs counted.
struct Scan<'a> {
    db: &'a Db,
    types: &'a EventTypes,
    start_end: StartEnd,
    /// The ranges with an end, by (start, end descending, rowid).
    ended: Sorter<Raw>,
    /// The ranges never ended, by (start, rowid).
    open: Sorter<Raw>,
    unended: u64,
    unnamed: u64,
    threads: Vec<i64>,
    thread_index: HashMap<i64, u32>,
    /// The last timestamp so far.
    last: i64,
}

impl<'a> Scan<'a> {
    /// A scan of `db`'s ranges of `types`, keeping the start/end ranges `start_end` asks
    /// for.
    fn new(db: &'a Db, types: &'a EventTypes, start_end: StartEnd) -> Scan<'a> {
        Scan {
            db,
            types,
            start_end,
            ended: Sorter::new(|a: &Raw, b: &Raw| a.key().cmp(&b.key())),
            open: Sorter::new(|a: &Raw, b: &Raw| (a.start, a.row).cmp(&(b.start, b.row))),
            unended: 0,
            unnamed: 0,
            threads: Vec::new(),
            thread_index: HashMap::new(),
            last: i64::MIN,
        }
    }

    /// Reads one row of the query ([`ranges_query`]) and hands its range to a sort.
    fn row(&mut self, names: &mut Names, row: &Row) -> Result<()> {
        let db = self.db;
        let rowid = db.rowid(TABLE, row)?;
        // Ids are held in 32 bits (4 billion NVTX events would be a file of 100s of GB).
        let Ok(row32) = u32::try_from(rowid) else {
            return Err(db.row_error(TABLE, rowid, "row id beyond 2^32 - 1"));
        };
        let need = |v: Option<i64>, column: &str| {
            v.ok_or_else(|| db.row_error(TABLE, rowid, format!("column `{column}` is null")))
        };
        let start = need(db.time(TABLE, row, 1, "start", rowid)?, "start")?;
        let end = db.time(TABLE, row, 2, "end", rowid)?;
        let event_type = need(int(db, row, 3, "eventType", rowid)?, "eventType")?;
        let gtid = need(int(db, row, 4, "globalTid", rowid)?, "globalTid")?;
        self.see_times(start, end, rowid)?;
        let is_mark = self.types.start_end.contains(&event_type);
        if is_mark && self.start_end == StartEnd::SameThread {
            let end_gtid = int(db, row, 5, "endGlobalTid", rowid)?;
            if end_gtid.is_some_and(|g| g != gtid) {
                return Ok(());
            }
        }
        let name = self.name(names, row, gtid, rowid)?;
        let raw = Raw {
            start,
            // Set when read back, for ranges never ended.
            end: end.unwrap_or(i64::MAX),
            row: row32,
            thread: self.thread(gtid),
            name,
            mark: is_mark,
        };
        if end.is_some() {
            self.ended.push(raw)
        } else {
            self.unended += 1;
            self.open.push(raw)
        }
    }

    /// Checks that a range (row `rowid`) does not end before it starts, and moves the
    /// last timestamp past its times.
    #[inline]
    fn see_times(&mut self, start: i64, end: Option<i64>, rowid: i64) -> Result<()> {
        if let Some(e) = end {
            if e < start {
                return Err(self.db.row_error(
                    TABLE,
                    rowid,
                    format!("range ends ({e}) before it starts ({start})"),
                ));
            }
            self.last = self.last.max(e);
        }
        self.last = self.last.max(start);
        Ok(())
    }

    /// The name index of the range in `row` (thread `gtid`), counting those unnamed.
    #[inline]
    fn name(&mut self, names: &mut Names, row: &Row, gtid: i64, rowid: i64) -> Result<u32> {
        let db = self.db;
        let domain = names.domain(gtid, int(db, row, 8, "domainId", rowid)?);
        let text_id = int(db, row, 6, "textId", rowid)?;
        let literal = text(row, 7);
        if text_id.is_none() && literal.is_none() {
            self.unnamed += 1;
        }
        names.name_of(db, domain, text_id, literal.as_deref(), rowid)
    }

    /// The index of thread `gtid` in [`Nvtx::threads`], added there when new.
    #[inline]
    fn thread(&mut self, gtid: i64) -> u32 {
        let threads = &mut self.threads;
        *self.thread_index.entry(gtid).or_insert_with(|| {
            threads.push(gtid);
            threads.len() as u32 - 1
        })
    }

    /// Sorts the ranges read and hands them out as an [`Nvtx`], with the `names`.
    fn finish(self, names: Names) -> Result<Option<Nvtx>> {
        let mut ended = self.ended.finish()?;
        let mut open = self.open.finish()?;
        let next_ended = ended.next()?;
        let mut next_open = open.next()?;
        if let Some(r) = &mut next_open {
            r.end = self.last;
        }
        Ok(Some(Nvtx {
            unended: self.unended,
            unnamed: self.unnamed,
            threads: self.threads,
            thread_index: self.thread_index,
            names: names.names,
            last: self.last,
            ended,
            next_ended,
            open,
            next_open,
        }))
    }
}

/// A range open on its thread's stack while the tree is built.
struct OpenRange {
    seq: u64,
    row: u32,
    end: i64,
    children: u32,
    child_ns: i64,
}

/// Builds the tree: the ranges come in start order (longer first), so on each thread the
/// open ranges form a stack and the innermost one still containing a range is its parent.
/// Returns the range records in that order, children and child time filled in.
fn build_tree(nvtx: &mut Nvtx) -> Result<Replay<Node>> {
    let mut stacks: Vec<Vec<OpenRange>> = (0..nvtx.threads.len()).map(|_| Vec::new()).collect();
    let mut out: Patched<Node> = Patched::new();
    let close = |out: &mut Patched<Node>, r: OpenRange| -> Result<()> {
        if r.children == 0 {
            return Ok(());
        }
        let mut bytes = [0u8; 12];
        bytes[..4].copy_from_slice(&r.children.to_le_bytes());
        bytes[4..].copy_from_slice(&r.child_ns.to_le_bytes());
        out.patch(
            r.seq,
            |n| {
                n.children = r.children;
                n.child_ns = r.child_ns;
            },
            CHILDREN_AT,
            &bytes,
        )
    };
    while let Some(r) = nvtx.next()? {
        let mut node = Node {
            start: r.start,
            end: r.end,
            row: r.row,
            thread: r.thread,
            name: r.name,
            parent: NONE,
            depth: 0,
            children: 0,
            child_ns: 0,
        };
        if r.mark {
            out.push(node)?;
            continue;
        }
        let stack = &mut stacks[r.thread as usize];
        while stack.last().is_some_and(|top| top.end < r.end) {
            close(&mut out, stack.pop().expect("not empty"))?;
        }
        if let Some(parent) = stack.last_mut() {
            parent.children += 1;
            parent.child_ns += r.end - r.start;
            node.parent = parent.row;
        }
        node.depth = stack.len() as u32;
        stack.push(OpenRange {
            seq: out.len(),
            row: r.row,
            end: r.end,
            children: 0,
            child_ns: 0,
        });
        out.push(node)?;
    }
    for stack in stacks {
        for r in stack {
            close(&mut out, r)?;
        }
    }
    out.finish()
}

/// What is said of an export without NVTX ranges.
pub fn no_nvtx(db: &Db) -> String {
    format!(
        "{}: no NVTX_EVENTS table: the profile recorded no NVTX ranges",
        db.place()
    )
}

/// Reads the ranges of an export as records, in start order (a parent before its
/// children), handing each to `emit`; notes (no NVTX table, ranges never ended or
/// without a name) go to `notes`. Returns how many were read.
pub fn read_ranges(
    db: &Db,
    profile: &Arc<str>,
    options: Options,
    notes: &Notes,
    emit: &mut dyn FnMut(Range) -> Result<()>,
) -> Result<u64> {
    let start_end = if options.start_end {
        StartEnd::All
    } else {
        StartEnd::Skip
    };
    let Some(mut nvtx) = load(db, start_end)? else {
        notes.note(no_nvtx(db));
        return Ok(0);
    };
    nvtx.note_repairs(db, notes);
    db.phase("building the NVTX range tree");
    let mut nodes = build_tree(&mut nvtx)?;
    let mut count = 0;
    while let Some(node) = nodes.next()? {
        let dur_ns = node.end - node.start;
        let gtid = nvtx.gtid(node.thread);
        emit(Range {
            profile: profile.clone(),
            pid: Some(pid_of(gtid)),
            tid: tid_of(gtid),
            id: u64::from(node.row),
            parent: (node.depth > 0).then_some(u64::from(node.parent)),
            depth: node.depth,
            start_ns: node.start,
            end_ns: node.end,
            dur_ns,
            child_ns: node.child_ns,
            self_ns: dur_ns - node.child_ns,
            children: node.children,
            name: nvtx.name(node.name).to_string(),
        })
        .map_err(|e| e.within(&format!("{}: table {TABLE}, row {}", db.place(), node.row)))?;
        count += 1;
    }
    Ok(count)
}
