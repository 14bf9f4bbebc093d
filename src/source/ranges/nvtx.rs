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
//! Method: one scan of the table keeps, per range, its times, ids and an index into a
//! table of distinct names (names are not held per range); one sort by (start, end
//! descending, rowid) and one sweep with a stack per thread build the tree. Memory is
//! 48 bytes per range plus the distinct names and threads.

use crate::error::Result;
use crate::notes::Notes;
use crate::record::Range;
use crate::source::Options;
use crate::source::sqlite::{Db, pid_of, tid_of};
use rusqlite::types::ValueRef;
use rusqlite::{Row, Statement};
use std::collections::HashMap;
use std::sync::Arc;

/// No parent.
pub const NONE: u32 = u32::MAX;

const TABLE: &str = "NVTX_EVENTS";

/// One NVTX range.
#[derive(Debug, Clone)]
pub struct Node {
    /// Start, nanoseconds.
    pub start: i64,
    /// End, nanoseconds.
    pub end: i64,
    /// Sum of the durations of the direct children.
    pub child_ns: i64,
    /// `rowid` in `NVTX_EVENTS`: the range id.
    pub row: u32,
    /// The thread that pushed (or started) the range: index in [`Nvtx::threads`].
    pub thread: u32,
    /// Index of the name in [`Nvtx::name`].
    pub name: u32,
    /// Index of the parent in [`Nvtx::nodes`], or [`NONE`].
    pub parent: u32,
    /// Number of ancestors.
    pub depth: u32,
    /// Number of direct children.
    pub children: u32,
}

impl Node {
    /// Sort key: start, then the longer first, then the row — parents before children.
    fn key(&self) -> (i64, std::cmp::Reverse<i64>, u32) {
        (self.start, std::cmp::Reverse(self.end), self.row)
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

/// The NVTX ranges of one export.
pub struct Nvtx {
    /// Push/pop ranges in (start, end descending, rowid) order, the tree filled in.
    pub nodes: Vec<Node>,
    /// Start/end ranges, when asked for, in the same order; roots without children.
    pub marks: Vec<Node>,
    /// Ranges without an end, given the last timestamp.
    pub unended: u64,
    /// Global thread ids of the threads with ranges.
    pub threads: Vec<i64>,
    /// Index in `threads` of each global thread id.
    pub thread_index: HashMap<i64, u32>,
    names: Vec<Box<str>>,
}

impl Nvtx {
    /// The full name (`Domain:Text`) of a range.
    pub fn name(&self, node: &Node) -> &str {
        &self.names[node.name as usize]
    }

    /// The global thread id of a range.
    pub fn gtid(&self, node: &Node) -> i64 {
        self.threads[node.thread as usize]
    }
}

/// Event type numbers: from `ENUM_NSYS_EVENT_TYPE` when the export has it (by name),
/// the values of every nsys release so far otherwise.
struct EventTypes {
    push_pop: [i64; 2],
    start_end: [i64; 2],
    domain_create: i64,
}

fn event_types(db: &Db) -> Result<EventTypes> {
    let mut known: HashMap<String, i64> = HashMap::new();
    let table = "ENUM_NSYS_EVENT_TYPE";
    if db.has(table) {
        let sql = db.select(table, &[("id", true), ("name", true)], false, None)?;
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
fn int(db: &Db, row: &Row, i: usize, column: &str, rowid: i64) -> Result<Option<i64>> {
    db.int(TABLE, row, i, column, rowid)
}

/// A text cell as UTF-8 (invalid bytes replaced), or `None`.
fn text<'r>(row: &'r Row, i: usize) -> Option<std::borrow::Cow<'r, str>> {
    match row.get_ref(i) {
        Ok(ValueRef::Text(t)) => Some(String::from_utf8_lossy(t)),
        _ => None,
    }
}

/// Distinct range names, interned as they are read.
struct Names<'c> {
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
    fn new(db: &'c Db) -> Result<Names<'c>> {
        let strings = if db.has("StringIds") {
            let sql = db.select("StringIds", &[("value", true)], false, Some("id = ?1"))?;
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
    fn string(&mut self, db: &Db, id: i64) -> Result<Option<String>> {
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
    fn read_domains(&mut self, db: &Db, create: i64) -> Result<()> {
        let sql = db.select(
            TABLE,
            &[
                ("start", true),
                ("globalTid", false),
                ("domainId", false),
                ("textId", false),
                ("text", false),
            ],
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

    fn domain(&self, gtid: i64, domain_id: Option<i64>) -> u32 {
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

    /// The name of a range: its registered string, else its text, else empty.
    fn name_of(
        &mut self,
        db: &Db,
        domain: u32,
        text_id: Option<i64>,
        text: Option<&str>,
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
        }
        Ok(self.intern(domain, text.unwrap_or("")))
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
    let sql = db.select(
        TABLE,
        &[
            ("start", true),
            ("end", true),
            ("eventType", true),
            ("globalTid", true),
            ("endGlobalTid", false),
            ("textId", false),
            ("text", false),
            ("domainId", false),
        ],
        true,
        Some(&filter),
    )?;
    let mut nodes = Vec::new();
    let mut marks = Vec::new();
    let mut threads: Vec<i64> = Vec::new();
    let mut thread_index: HashMap<i64, u32> = HashMap::new();
    let mut last = i64::MIN;
    db.each_row(TABLE, &sql, |row| {
        let rowid = db.rowid(TABLE, row)?;
        // Ids are held in 32 bits (4 billion NVTX events would be a file of 100s of GB).
        let Ok(row32) = u32::try_from(rowid) else {
            return Err(db.row_error(TABLE, rowid, "row id beyond 2^32 - 1"));
        };
        let need = |v: Option<i64>, column: &str| {
            v.ok_or_else(|| db.row_error(TABLE, rowid, format!("column `{column}` is null")))
        };
        let start = need(int(db, row, 1, "start", rowid)?, "start")?;
        let end = int(db, row, 2, "end", rowid)?;
        let event_type = need(int(db, row, 3, "eventType", rowid)?, "eventType")?;
        let gtid = need(int(db, row, 4, "globalTid", rowid)?, "globalTid")?;
        if let Some(e) = end {
            if e < start {
                return Err(db.row_error(
                    TABLE,
                    rowid,
                    format!("range ends ({e}) before it starts ({start})"),
                ));
            }
            last = last.max(e);
        }
        last = last.max(start);
        let is_mark = types.start_end.contains(&event_type);
        if is_mark && start_end == StartEnd::SameThread {
            let end_gtid = int(db, row, 5, "endGlobalTid", rowid)?;
            if end_gtid.is_some_and(|g| g != gtid) {
                return Ok(());
            }
        }
        let domain = names.domain(gtid, int(db, row, 8, "domainId", rowid)?);
        let text_id = int(db, row, 6, "textId", rowid)?;
        let name = names.name_of(db, domain, text_id, text(row, 7).as_deref())?;
        let thread = *thread_index.entry(gtid).or_insert_with(|| {
            threads.push(gtid);
            threads.len() as u32 - 1
        });
        let node = Node {
            start,
            // Filled in below for ranges never ended.
            end: end.unwrap_or(i64::MIN),
            row: row32,
            thread,
            child_ns: 0,
            name,
            parent: NONE,
            depth: 0,
            children: 0,
        };
        if is_mark {
            marks.push(node);
        } else {
            nodes.push(node);
        }
        Ok(())
    })?;
    let mut unended = 0;
    for node in nodes.iter_mut().chain(marks.iter_mut()) {
        if node.end == i64::MIN {
            node.end = last;
            unended += 1;
        }
    }
    nodes.sort_unstable_by_key(Node::key);
    marks.sort_unstable_by_key(Node::key);
    build_tree(&mut nodes, threads.len());
    Ok(Some(Nvtx {
        nodes,
        marks,
        unended,
        threads,
        thread_index,
        names: names.names,
    }))
}

/// Fills in parent, depth, children and child time: `nodes` are in start order (longer
/// first), so on each thread the open ranges form a stack and the innermost one still
/// containing a range is its parent.
fn build_tree(nodes: &mut [Node], threads: usize) {
    let mut stacks: Vec<Vec<u32>> = vec![Vec::new(); threads];
    for i in 0..nodes.len() {
        let (thread, end) = (nodes[i].thread, nodes[i].end);
        let stack = &mut stacks[thread as usize];
        while let Some(&top) = stack.last() {
            if nodes[top as usize].end < end {
                stack.pop();
            } else {
                break;
            }
        }
        if let Some(&parent) = stack.last() {
            let dur = nodes[i].end - nodes[i].start;
            let p = &mut nodes[parent as usize];
            p.children += 1;
            p.child_ns += dur;
            nodes[i].parent = parent;
        }
        nodes[i].depth = stack.len() as u32;
        stack.push(i as u32);
    }
}

/// What is said of an export without NVTX ranges.
pub fn no_nvtx(db: &Db) -> String {
    format!(
        "{}: no NVTX_EVENTS table: the profile recorded no NVTX ranges",
        db.place()
    )
}

/// Reads the ranges of an export as records, in start order (a parent before its
/// children), handing each to `emit`; notes (no NVTX table, ranges never ended) go to
/// `note`. Returns how many were read.
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
    let Some(nvtx) = load(db, start_end)? else {
        notes.note(no_nvtx(db));
        return Ok(0);
    };
    if nvtx.unended > 0 {
        notes.note(format!(
            "{}: {} NVTX ranges never ended; they end at the last NVTX timestamp, as in nsys' \
             reports",
            db.place(),
            nvtx.unended
        ));
    }
    let record = |node: &Node| {
        let dur_ns = node.end - node.start;
        Range {
            profile: profile.clone(),
            pid: Some(pid_of(nvtx.gtid(node))),
            tid: tid_of(nvtx.gtid(node)),
            id: u64::from(node.row),
            parent: (node.parent != NONE).then(|| u64::from(nvtx.nodes[node.parent as usize].row)),
            depth: node.depth,
            start_ns: node.start,
            end_ns: node.end,
            dur_ns,
            child_ns: node.child_ns,
            self_ns: dur_ns - node.child_ns,
            children: node.children,
            name: nvtx.name(node).to_string(),
        }
    };
    // Merge the push/pop ranges and the start/end ranges, both in start order.
    let (mut i, mut j) = (0, 0);
    let (nodes, marks) = (&nvtx.nodes, &nvtx.marks);
    while i < nodes.len() || j < marks.len() {
        let take_node = j == marks.len() || (i < nodes.len() && nodes[i].key() <= marks[j].key());
        if take_node {
            emit(record(&nodes[i]))?;
            i += 1;
        } else {
            emit(record(&marks[j]))?;
            j += 1;
        }
    }
    Ok((nodes.len() + marks.len()) as u64)
}
