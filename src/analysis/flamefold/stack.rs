//! `--by stack`: NVTX range trees folded by name path, root first, weighted by self time.
//!
//! Records are read as `njx-export` and `njx-ranges` write them: a parent before its
//! children, and a range's subtree before the next range of its thread. Only the ranges
//! still open are held (one stack per thread), so memory follows the depth of the trees
//! and the number of distinct stacks, not the size of the input.
//!
//! Worker-thread ranges spliced under a compiling thread (`njx-ranges --splice-workers`,
//! `--xla-compile`) run in parallel. As in `njx-compile-summary` (and nsys-jax's
//! `generate_compilation_statistics`), the span they cover beyond the launching thread's
//! own children is shared among them in proportion to their self times, so every tree
//! adds up to exactly the wall time of its root.

use super::Folded;
use crate::derived::trees::{
    Parent, XLA_COMPILE_PREFIX, compile_name, nesting_problem, root_problem,
};
use crate::error::{Error, Result};
use crate::records::Range;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The deepest stack folded: 10,000 frames, a line of ~10,000 names, and ~50 million
/// names over the lines of one such stack.
pub const MAX_DEPTH: usize = 10_000;

/// A range still open: its subtree may still be read.
#[derive(Debug)]
struct Open {
    node: u32,
    /// Thread of the tree's root: ranges on another thread are spliced workers.
    root_thread: (Option<u64>, u64),
    /// The nearest ancestor on the root thread (itself when on it).
    launcher: u64,
    dur_ns: i64,
    child_ns: i64,
    /// What its children are checked against.
    in_compile: bool,
    nest: Parent,
    /// Durations of direct children on the root thread.
    main_child_ns: i64,
    /// Worker self time per stack, shared out when this launcher closes.
    workers: HashMap<u32, (i64, u32)>,
    /// What its record declared, and what came: direct children, the time of those on its
    /// own thread (which nest one after another), and the span of those on other threads.
    children: u32,
    kids: u32,
    own_kids_ns: i64,
    other_kids: Option<(i64, i64)>,
}

/// Folds range records, one at a time, into a [`Folded`] tree.
#[derive(Debug, Default)]
pub struct StackFolder {
    /// Names within compilation trees as njx-compile-summary counts them
    /// ([`compile_name`]), and the compilation's own without its domain.
    clean_compile_names: bool,
    /// Per profile: open ranges by id.
    open: BTreeMap<Arc<str>, HashMap<u64, Open>>,
    /// Per (profile, pid, tid): ids of the open ranges on that thread, outermost first.
    threads: HashMap<(Arc<str>, Option<u64>, u64), Vec<u64>>,
    /// Ranges read.
    pub ranges: u64,
}

impl StackFolder {
    /// A folder that cleans the names within compilation trees, or keeps every name whole.
    pub fn new(clean_compile_names: bool) -> Self {
        StackFolder {
            clean_compile_names,
            ..StackFolder::default()
        }
    }

    /// The frame of range `name` under a parent within a compilation or not.
    fn frame(clean: bool, name: &str, parent_in_compile: bool) -> Cow<'_, str> {
        if !clean {
            name.into()
        } else if parent_in_compile {
            compile_name(name).into()
        } else if name.starts_with(XLA_COMPILE_PREFIX) {
            name.strip_prefix("TSL:").unwrap_or(name).into()
        } else {
            name.into()
        }
    }

    /// Adds one range record.
    pub fn push(&mut self, folded: &mut Folded, r: Range) -> Result<()> {
        self.ranges += 1;
        let clean = self.clean_compile_names;
        let open = self.open.entry(r.profile.clone()).or_default();
        let stack = self
            .threads
            .entry((r.profile.clone(), r.pid, r.tid))
            .or_default();
        unwind(folded, open, stack, &r)?;
        if let Some(problem) = r.parent.is_none().then(|| root_problem(&r)).flatten() {
            return Err(Error::data(place(&r), problem));
        }
        let placed = Placed::of(folded, open, &r, clean)?;
        if let Some(parent) = r.parent.and_then(|p| open.get_mut(&p)) {
            parent.adopt(&r);
        }
        if open.contains_key(&r.id) {
            return Err(Error::data(
                place(&r),
                "its id is that of a range still open: one id for two ranges at once",
            ));
        }
        placed.add_self_time(folded, open, &r)?;
        open.insert(r.id, placed.open(&r));
        stack.push(r.id);
        Ok(())
    }

    /// Closes every range still open (the end of the input). Worker time was counted as
    /// it was read, so the order does not matter.
    pub fn finish(&mut self, folded: &mut Folded) -> Result<()> {
        self.threads.clear();
        for (profile, open) in &mut self.open {
            let mut ids: Vec<u64> = open.keys().copied().collect();
            ids.sort_unstable(); // a fixed order of float additions: the same output every run
            for id in ids {
                close(folded, open, id, profile)?;
            }
        }
        Ok(())
    }
}

/// Where a range's errors are said: `<profile>: range <id>`.
fn place(r: &Range) -> String {
    format!("{}: range {}", r.profile, r.id)
}

/// Closes the ranges of `r`'s thread (`stack`, outermost first) that cannot contain `r`:
/// everything above its parent, or the whole stack when the parent is elsewhere (or there
/// is none); then refuses `r` where it would nest deeper than [`MAX_DEPTH`].
fn unwind(
    folded: &mut Folded,
    open: &mut HashMap<u64, Open>,
    stack: &mut Vec<u64>,
    r: &Range,
) -> Result<()> {
    let keep = r
        .parent
        .and_then(|p| stack.iter().rposition(|&id| id == p))
        .map_or(0, |i| i + 1);
    for id in stack.drain(keep..).rev() {
        close(folded, open, id, &r.profile)?;
    }
    if stack.len() >= MAX_DEPTH {
        return Err(Error::data(
            place(r),
            format!(
                "nested more than {MAX_DEPTH} deep: folded stacks grow with the square \
                 of the depth (every line holds its whole stack), and no flame graph \
                 shows such a stack; reshape the tree first (njx-ranges --collapse, \
                 --fold)"
            ),
        ));
    }
    Ok(())
}

/// Where a range goes in the tree: what its [`Open`] takes from its parent.
#[derive(Debug, Clone, Copy)]
struct Placed {
    node: u32,
    root_thread: (Option<u64>, u64),
    launcher: u64,
    in_compile: bool,
}

impl Placed {
    /// Places `r` at the root, or under its parent (which must be open and nest it).
    fn of(
        folded: &mut Folded,
        open: &HashMap<u64, Open>,
        r: &Range,
        clean: bool,
    ) -> Result<Placed> {
        let Some(p) = r.parent else {
            return Ok(Placed {
                node: folded.child(Folded::ROOT, &StackFolder::frame(clean, &r.name, false)),
                root_thread: (r.pid, r.tid),
                launcher: r.id,
                in_compile: r.name.starts_with(XLA_COMPILE_PREFIX),
            });
        };
        let Some(parent) = open.get(&p) else {
            return Err(Error::data(
                place(r),
                format!(
                    "its parent {p} was not read before it, or its subtree already \
                     ended: --by stack reads ranges in the order njx-export and \
                     njx-ranges write them (a parent before its children)"
                ),
            ));
        };
        if let Some(problem) = nesting_problem(r, &parent.nest, || parent.in_compile) {
            return Err(Error::data(place(r), problem));
        }
        let node = folded.child(
            parent.node,
            &StackFolder::frame(clean, &r.name, parent.in_compile),
        );
        let on_root_thread = parent.root_thread == (r.pid, r.tid);
        Ok(Placed {
            node,
            root_thread: parent.root_thread,
            launcher: if on_root_thread {
                r.id
            } else {
                parent.launcher
            },
            in_compile: parent.in_compile || r.name.starts_with(XLA_COMPILE_PREFIX),
        })
    }

    /// Adds `r`'s self time: to its node where it runs on its tree's root thread (and its
    /// duration to its parent's main children), else to its launcher's workers, shared out
    /// when the launcher closes.
    fn add_self_time(
        &self,
        folded: &mut Folded,
        open: &mut HashMap<u64, Open>,
        r: &Range,
    ) -> Result<()> {
        if self.root_thread == (r.pid, r.tid) {
            folded.add(self.node, r.self_ns as f64);
            if let Some(parent) = r.parent.and_then(|p| open.get_mut(&p)) {
                parent.main_child_ns += r.dur_ns;
            }
            return Ok(());
        }
        let launcher = self.launcher;
        let Some(l) = open.get_mut(&launcher) else {
            return Err(Error::data(
                place(r),
                format!(
                    "the range {launcher} that launched this worker range already ended: \
                     --by stack reads a range's whole subtree before the next range of \
                     its thread"
                ),
            ));
        };
        let w = l.workers.entry(self.node).or_default();
        w.0 += r.self_ns;
        w.1 += 1;
        Ok(())
    }

    /// The open range `r`, placed here, before any of its children came.
    fn open(self, r: &Range) -> Open {
        Open {
            node: self.node,
            root_thread: self.root_thread,
            launcher: self.launcher,
            dur_ns: r.dur_ns,
            child_ns: r.child_ns,
            in_compile: self.in_compile,
            nest: Parent::of(r),
            main_child_ns: 0,
            workers: HashMap::new(),
            children: r.children,
            kids: 0,
            own_kids_ns: 0,
            other_kids: None,
        }
    }
}

impl Open {
    /// Counts direct child `r` come: the time of those on its own thread, the span of
    /// those on other threads.
    fn adopt(&mut self, r: &Range) {
        self.kids += 1;
        if self.nest.tid == r.tid {
            self.own_kids_ns = self.own_kids_ns.saturating_add(r.dur_ns);
        } else {
            let (s, e) = self.other_kids.unwrap_or((r.start_ns, r.end_ns));
            self.other_kids = Some((s.min(r.start_ns), e.max(r.end_ns)));
        }
    }
}

/// Closes range `id`, whose children have all come: they must be what its record
/// declared (their number, and the time they cover: exactly for children on its own
/// thread, within bounds where spliced workers overlap them). A launcher shares the span
/// its workers covered among them.
fn close(folded: &mut Folded, open: &mut HashMap<u64, Open>, id: u64, profile: &str) -> Result<()> {
    let Some(range) = open.remove(&id) else {
        return Ok(());
    };
    let covered = match range.other_kids {
        None => (range.own_kids_ns, range.own_kids_ns),
        Some((s, e)) => {
            let span = e - s;
            (
                range.own_kids_ns.max(span),
                range.own_kids_ns.saturating_add(span).min(range.dur_ns),
            )
        }
    };
    if range.kids != range.children || range.child_ns < covered.0 || range.child_ns > covered.1 {
        let time = if covered.0 == covered.1 {
            format!("{} ns", covered.0)
        } else {
            format!("{}..{} ns", covered.0, covered.1)
        };
        return Err(Error::data(
            format!("{profile}: range {id}"),
            format!(
                "declares {} children covering {} ns, but {} children covering {time} follow it",
                range.children, range.child_ns, range.kids
            ),
        ));
    }
    if range.workers.is_empty() {
        return Ok(());
    }
    // `child_ns` of a spliced parent is the wall time its children cover; less what its
    // own thread did, that is the parallel span.
    let parallel = (range.child_ns - range.main_child_ns).clamp(0, range.dur_ns) as f64;
    let self_total: i64 = range.workers.values().map(|w| w.0).sum();
    let count: u32 = range.workers.values().map(|w| w.1).sum();
    let mut workers: Vec<(u32, (i64, u32))> = range.workers.into_iter().collect();
    workers.sort_unstable();
    for (node, (self_ns, n)) in workers {
        let share = if self_total > 0 {
            parallel * self_ns as f64 / self_total as f64
        } else {
            parallel * f64::from(n) / f64::from(count)
        };
        folded.add(node, share);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::flamefold::Unit;

    fn range(id: u64, parent: Option<u64>, tid: u64, start: i64, end: i64, name: &str) -> Range {
        Range {
            profile: "p".into(),
            pid: Some(1),
            tid,
            id,
            parent,
            depth: u32::from(parent.is_some()),
            start_ns: start,
            end_ns: end,
            dur_ns: end - start,
            child_ns: 0,
            self_ns: end - start,
            children: 0,
            name: name.into(),
        }
    }

    #[test]
    fn spliced_workers_share_the_parallel_span() {
        // Launcher L [0,100) on thread 1 with a main child M [0,10) and two workers on
        // threads 2 and 3 covering [20,80) with 60 + 30 ns of their own.
        let mut l = range(1, None, 1, 0, 100, "TSL:XlaCompile:#L#");
        l.child_ns = 10 + 60;
        l.self_ns = 30;
        l.children = 3;
        let m = range(2, Some(1), 1, 0, 10, "M");
        let w1 = range(3, Some(1), 2, 20, 80, "W");
        let w2 = range(4, Some(1), 3, 30, 60, "W2");
        let mut folded = Folded::default();
        let mut f = StackFolder::default();
        for r in [l, m, w1, w2] {
            f.push(&mut folded, r).unwrap();
        }
        f.finish(&mut folded).unwrap();
        assert_eq!(folded.total_ns(), 100.0);
        assert_eq!(
            folded.lines(Unit::Ns),
            vec![
                "TSL:XlaCompile:#L# 30",
                "TSL:XlaCompile:#L#;M 10",
                "TSL:XlaCompile:#L#;W 40",
                "TSL:XlaCompile:#L#;W2 20"
            ]
        );
    }

    #[test]
    fn a_child_whose_parent_closed_is_an_error() {
        let mut folded = Folded::default();
        let mut f = StackFolder::default();
        f.push(&mut folded, range(1, None, 1, 0, 10, "a")).unwrap();
        f.push(&mut folded, range(2, None, 1, 20, 30, "b")).unwrap();
        let err = f
            .push(&mut folded, range(3, Some(1), 1, 5, 6, "c"))
            .unwrap_err();
        assert!(err.to_string().contains("range 3"), "{err}");
    }

    #[test]
    fn declared_children_and_child_time_are_checked() {
        let fold = |children: u32, child_ns: i64| {
            let mut a = range(1, None, 1, 0, 10, "a");
            a.children = children;
            a.child_ns = child_ns;
            a.self_ns = 10 - child_ns;
            let mut folded = Folded::default();
            let mut f = StackFolder::default();
            f.push(&mut folded, a)?;
            f.push(&mut folded, range(2, Some(1), 1, 2, 6, "b"))?;
            f.finish(&mut folded)
        };
        fold(1, 4).unwrap();
        let err = fold(2, 4).unwrap_err().to_string();
        assert!(
            err.contains("range 1") && err.contains("declares 2 children"),
            "{err}"
        );
        let err = fold(1, 5).unwrap_err().to_string();
        assert!(
            err.contains("covering 5 ns, but 1 children covering 4 ns"),
            "{err}"
        );
    }

    #[test]
    fn a_child_in_another_process_or_an_id_open_twice_is_an_error() {
        let mut a = range(1, None, 1, 0, 10, "a");
        a.children = 1;
        a.child_ns = 4;
        let mut b = range(2, Some(1), 1, 2, 6, "b");
        b.pid = Some(9);
        let mut folded = Folded::default();
        let mut f = StackFolder::default();
        f.push(&mut folded, a.clone()).unwrap();
        let err = f.push(&mut folded, b).unwrap_err().to_string();
        assert!(err.contains("another process"), "{err}");
        let mut f = StackFolder::default();
        f.push(&mut folded, a).unwrap();
        let err = f
            .push(&mut folded, range(1, Some(1), 1, 2, 6, "b"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("still open"), "{err}");
    }
}
