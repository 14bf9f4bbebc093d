//! The consistency of a push/pop range table, checked as its rows stream by: NVTX
//! push/pop ranges nest per thread, so each thread's open ranges form a stack, and a row
//! must name as parent the open range it is nested in. Memory is the deepest stack of
//! each thread, whatever the number of rows.
//!
//! Refused, naming the row and the ids involved: a range that is its own parent; a parent
//! that is not open on the row's thread when the row comes (dangling, on another thread,
//! listed after its child, already ended, or a cycle — in a table in start order each of
//! these shows as a parent that is not on the stack); two open ranges of a thread with one
//! id; a child starting before its parent or ending after it; a sibling still running when
//! the next starts; rows of a thread out of start order; a `Lvl` (or `RangeStack` depth)
//! that is not the depth on the stack; a `NumChild` or `DurChild` that does not count or
//! sum the children that came. An id reused after its first range ended, or on another
//! thread, is kept (nsys repeats ids, for ranges of CUDA graphs), since no reference to it
//! can be ambiguous (a parent must be open on its child's thread), and counted
//! ([`IdReuse`], also used for range records).

use crate::error::{Error, Result};
use crate::records::Range;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// An open range: what its children are checked against and what they add up to.
struct Open {
    id: u64,
    start_ns: i64,
    end_ns: i64,
    children: u32,
    child_ns: i64,
    /// Row of the range, for messages.
    at: u64,
    /// What the row declared.
    declared_children: u32,
    declared_child_ns: i64,
}

/// A thread: process and thread id.
type Thread = (Option<u64>, u64);

/// A thread's open ranges, outermost first; their ids; the last start seen.
#[derive(Default)]
struct Stack {
    open: Vec<Open>,
    ids: HashSet<u64, BuildHasherDefault<IdHasher>>,
    last_start: i64,
}

/// A hasher for range ids, a multiply and a rotate (as rustc's FxHash): the check runs
/// once per row, where SipHash's cost showed in the export's throughput.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// The open ranges of one table, per thread.
#[derive(Default)]
pub struct TreeCheck {
    /// Per thread: its open ranges.
    threads: Vec<Stack>,
    /// Where each thread is in `threads`.
    index: HashMap<Thread, usize>,
    /// The thread of the row before (rows of one thread tend to come together).
    last: Option<(Thread, usize)>,
    /// Ids given again.
    reuse: IdReuse,
}

/// Ids given to more than one range of a profile, counted (the ranges are kept: nsys
/// repeats ids, for ranges of CUDA graphs, and no reference to such an id is ambiguous
/// where parents must be open when their children come). Holds every id seen, one hash
/// entry (~10 bytes) per range.
#[derive(Default)]
pub struct IdReuse {
    seen: HashSet<u64, BuildHasherDefault<IdHasher>>,
    repeated: u64,
    /// The first id given again, and where.
    first: Option<(u64, String)>,
}

impl IdReuse {
    /// Counts `id` if it was seen before; `place` names where, for the note.
    pub fn saw(&mut self, id: u64, place: impl FnOnce() -> String) {
        if !self.seen.insert(id) {
            self.repeated += 1;
            if self.first.is_none() {
                self.first = Some((id, place()));
            }
        }
    }

    /// A new profile: ids of the one before are forgotten (counts are kept).
    pub fn next_profile(&mut self) {
        self.seen.clear();
    }

    /// What is to be said of the ids given again so far, if any were: `FIRST-PLACE: …`.
    pub fn take_note(&mut self) -> Option<String> {
        let (id, place) = self.first.take()?;
        let n = std::mem::take(&mut self.repeated);
        Some(format!(
            "{place}: {n} range{} an id given to a range before {} (the first: id {id}); \
             kept as ranges of their own (nsys repeats ids for ranges of CUDA graphs)",
            if n == 1 { " has" } else { "s have" },
            if n == 1 { "it" } else { "them" },
        ))
    }
}

impl TreeCheck {
    /// A check for one table.
    pub fn new() -> Self {
        TreeCheck::default()
    }

    /// Checks the next row, `r`, found at row `at`; `place(at)` names a row in messages.
    pub fn push(&mut self, r: &Range, at: u64, place: &dyn Fn(u64) -> String) -> Result<()> {
        let err = |msg: String| Error::data(place(at), msg);
        if r.parent == Some(r.id) {
            return Err(err(format!("range {} is its own parent", r.id)));
        }
        let key = (r.pid, r.tid);
        let at_thread = match self.last {
            Some((k, i)) if k == key => i,
            _ => {
                let next = self.threads.len();
                let i = *self.index.entry(key).or_insert(next);
                if i == next {
                    self.threads.push(Stack {
                        last_start: i64::MIN,
                        ..Stack::default()
                    });
                }
                self.last = Some((key, i));
                i
            }
        };
        let Stack {
            open: stack,
            ids,
            last_start,
        } = &mut self.threads[at_thread];
        if r.start_ns < *last_start {
            return Err(err(format!(
                "range {} starts ({}) before the range listed before it on thread {} ({}): \
                 rows must be in start order",
                r.id, r.start_ns, r.tid, *last_start
            )));
        }
        *last_start = r.start_ns;
        if let Some(p) = r.parent.filter(|p| !ids.contains(p)) {
            return Err(err(format!(
                "range {}: parent {p} is not a range open on its thread ({}) when it starts \
                 (no such range, one on another thread or ended, listed after its child, or \
                 a cycle)",
                r.id, r.tid
            )));
        }
        // Ranges that are not the parent have ended: close them.
        while let Some(top) = stack.last() {
            if Some(top.id) == r.parent {
                break;
            }
            let top = pop_closed(stack, place)?;
            ids.remove(&top.id);
            if top.end_ns > r.start_ns {
                return Err(err(format!(
                    "range {} starts ({}) while range {} ({}) is still running on thread {} \
                     (until {}), yet is not its child: push/pop ranges nest",
                    r.id,
                    r.start_ns,
                    top.id,
                    place(top.at),
                    r.tid,
                    top.end_ns
                )));
            }
        }
        if let Some(parent) = stack.last().filter(|_| r.parent.is_some())
            && (r.start_ns < parent.start_ns || r.end_ns > parent.end_ns)
        {
            return Err(err(format!(
                "range {} ({}..{}) lies outside its parent {} ({}..{})",
                r.id, r.start_ns, r.end_ns, parent.id, parent.start_ns, parent.end_ns
            )));
        }
        if r.depth as usize != stack.len() {
            return Err(err(format!(
                "range {}: level {} but it is nested {} deep",
                r.id,
                r.depth,
                stack.len()
            )));
        }
        if !ids.insert(r.id) {
            return Err(err(format!(
                "range id {} is given to two ranges open at once on thread {}",
                r.id, r.tid
            )));
        }
        self.reuse.saw(r.id, || place(at));
        stack.push(Open {
            id: r.id,
            start_ns: r.start_ns,
            end_ns: r.end_ns,
            children: 0,
            child_ns: 0,
            at,
            declared_children: r.children,
            declared_child_ns: r.child_ns,
        });
        Ok(())
    }

    /// Ends the table: every range still open is closed and checked. Returns what is to
    /// be said of ids given to several ranges, if any were.
    pub fn finish(&mut self, place: &dyn Fn(u64) -> String) -> Result<Option<String>> {
        for Stack { open: stack, .. } in &mut self.threads {
            while !stack.is_empty() {
                pop_closed(stack, place)?;
            }
        }
        Ok(self.reuse.take_note())
    }
}

/// Closes the innermost open range of a thread (`stack` is not empty): checks it and
/// counts it among its parent's children.
fn pop_closed(stack: &mut Vec<Open>, place: &dyn Fn(u64) -> String) -> Result<Open> {
    let top = stack.pop().expect("a range is open");
    close(&top, place)?;
    if let Some(parent) = stack.last_mut() {
        parent.children += 1;
        parent.child_ns = parent.child_ns.saturating_add(top.end_ns - top.start_ns);
    }
    Ok(top)
}

/// A range whose children have all come: they must be what its row declared.
fn close(o: &Open, place: &dyn Fn(u64) -> String) -> Result<()> {
    if o.children != o.declared_children {
        return Err(Error::data(
            place(o.at),
            format!(
                "range {}: NumChild {} but {} children follow it",
                o.id, o.declared_children, o.children
            ),
        ));
    }
    if o.child_ns != o.declared_child_ns {
        return Err(Error::data(
            place(o.at),
            format!(
                "range {}: DurChild {} but its children last {} ns",
                o.id, o.declared_child_ns, o.child_ns
            ),
        ));
    }
    Ok(())
}
