//! Range trees: rebuilding the NVTX tree from a stream of range records, reshaping it
//! (select, keep subtrees, collapse, fold, splice parallel-compilation workers) and
//! handing it back as a consistent tree — `parent`, `depth`, `children`, `child_ns` and
//! `self_ns` recomputed after every change — with the rules every tool that rebuilds
//! trees shares (nesting, covered time) and XLA's compilation-range names. njx-ranges
//! writes the trees ([`crate::analysis::ranges`]); njx-compile-summary and `njx-flamefold --by
//! stack` read them.
//!
//! Records must arrive parents first, in start order within each profile, each profile's
//! records together, as `njx-export` writes them (and as njx-ranges writes them back). A
//! top-level tree is complete once a record of its profile starts after its root ends,
//! and every tree of a profile is complete once a record of another profile comes; it is
//! then reshaped and handed on, so the state held is the trees still open at the
//! current time — for a trace that is one tree per thread, not the whole input, and for
//! many profiles those of one profile, not of every rank.

mod filter;

pub use filter::{Filters, Matcher};

use crate::error::{Error, Result};
use crate::records::Range;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// Prefix of XLA's compilation ranges; their worker threads are spliced under them.
pub const XLA_COMPILE_PREFIX: &str = "TSL:XlaCompile:#";

/// The name of a range within a compilation as njx-compile-summary counts it: without
/// its domain (`TSL:`) and without the attributes that repeat what the compilation says
/// (`module=`, `program_id=`) or split one step into one name per fusion (`hlo_op=`):
/// `TSL:XlaPass:#name=algsimp,module=jit_f,program_id=3#` is `XlaPass:#name=algsimp#`.
pub fn compile_name(name: &str) -> String {
    let name = name.strip_prefix("TSL:").unwrap_or(name);
    let Some((category, attrs)) = name.split_once(":#") else {
        return name.to_string();
    };
    let attrs = attrs.strip_suffix('#').unwrap_or(attrs);
    let kept: Vec<&str> = attrs
        .split(',')
        .filter(|a| {
            !a.is_empty()
                && !a.starts_with("module=")
                && !a.starts_with("program_id=")
                && !a.starts_with("hlo_op=")
        })
        .collect();
    if kept.is_empty() {
        category.to_string()
    } else {
        format!("{category}:#{}#", kept.join(","))
    }
}

struct Node {
    range: Range,
    kids: Vec<u32>,
}

/// A top-level tree still open: `nodes[0]` is its root.
struct Tree {
    nodes: Vec<Node>,
}

#[derive(Default)]
struct ProfileState {
    /// Open trees by arrival (= root start) order.
    trees: BTreeMap<u64, Tree>,
    /// Where each range of an open tree is: (tree, node).
    index: HashMap<u64, (u64, u32)>,
    /// XlaCompile ranges of open trees, for splicing.
    compiles: Vec<(u64, u32)>,
    next_tree: u64,
}

/// Rebuilds trees from range records and hands each completed, reshaped forest (in
/// pre-order: every parent before its children, children by start time) to a sink.
pub struct TreeBuilder {
    filters: Filters,
    /// The profile of the records being read, and its open trees.
    current: Option<(Arc<str>, ProfileState)>,
    /// The profiles whose records have ended in the input being read (two inputs may
    /// give one profile name: `run1/rank0.zip` and `run2/rank0.zip`).
    done: HashSet<Arc<str>>,
}

impl TreeBuilder {
    /// A builder applying `filters` to each completed tree.
    pub fn new(filters: Filters) -> Self {
        TreeBuilder {
            filters,
            current: None,
            done: HashSet::new(),
        }
    }

    /// Adds one record; trees that it proves complete are handed to `sink`.
    pub fn push(
        &mut self,
        range: Range,
        sink: &mut dyn FnMut(Vec<Range>) -> Result<()>,
    ) -> Result<()> {
        self.switch_profile(&range, sink)?;
        let (_, state) = self
            .current
            .get_or_insert_with(|| (range.profile.clone(), ProfileState::default()));
        // Every tree whose root ended before this record started is complete.
        while let Some((&seq, tree)) = state.trees.first_key_value() {
            if tree.nodes[0].range.end_ns >= range.start_ns {
                break;
            }
            let tree = state.trees.remove(&seq).expect("first key exists");
            state.forget(seq, &tree);
            check_tree(&tree, None)?;
            sink(self.filters.apply(tree))?;
        }
        let place = |what: &str| {
            Error::data(
                format!("profile {}, range {}", range.profile, range.id),
                what.to_string(),
            )
        };
        if state.index.contains_key(&range.id) {
            return Err(place("duplicate range id"));
        }
        let target = state
            .target(&range, self.filters.splice)
            .map_err(|m| place(&m))?;
        if let Some(problem) = state.nesting(&range, target) {
            return Err(place(&problem));
        }
        let is_compile = self.filters.splice && range.name.starts_with(XLA_COMPILE_PREFIX);
        state.insert(range, target, is_compile);
        Ok(())
    }

    /// When `range` is of another profile than the records before it: every tree of the
    /// one before is complete, and that profile has ended (its records coming again later
    /// is an error).
    fn switch_profile(
        &mut self,
        range: &Range,
        sink: &mut dyn FnMut(Vec<Range>) -> Result<()>,
    ) -> Result<()> {
        let Some((before, _)) = self
            .current
            .as_ref()
            .filter(|(profile, _)| *profile != range.profile)
        else {
            return Ok(());
        };
        let before = before.clone();
        if self.done.contains(&range.profile) {
            return Err(Error::data(
                format!("profile {}, range {}", range.profile, range.id),
                format!(
                    "records of this profile resume after those of profile {before}: each \
                     profile's records must come together, as njx-export writes them (records \
                     of several profiles interleaved, by time perhaps?)"
                ),
            ));
        }
        self.finish_profile(sink, Some(&range.profile))?;
        self.done.insert(before);
        Ok(())
    }

    /// Another input begins: a profile name seen in the one before may come again.
    pub fn next_input(&mut self) {
        self.done.clear();
    }

    /// Ends the input: every open tree is complete.
    pub fn finish(&mut self, sink: &mut dyn FnMut(Vec<Range>) -> Result<()>) -> Result<()> {
        self.finish_profile(sink, None)
    }

    /// Ends the profile being read, at the end of the input or where the records of
    /// profile `next` begin: every open tree is complete.
    fn finish_profile(
        &mut self,
        sink: &mut dyn FnMut(Vec<Range>) -> Result<()>,
        next: Option<&str>,
    ) -> Result<()> {
        if let Some((_, state)) = self.current.take() {
            for (_, tree) in state.trees {
                check_tree(&tree, next)?;
                sink(self.filters.apply(tree))?;
            }
        }
        Ok(())
    }
}

impl ProfileState {
    /// Where `range` goes: under its parent (which must be open and listed before it),
    /// spliced under the range that encloses it (`splice`, for a root), or a tree of its
    /// own (`None`).
    fn target(
        &self,
        range: &Range,
        splice: bool,
    ) -> std::result::Result<Option<(u64, u32)>, String> {
        Ok(match range.parent {
            Some(parent) => match self.index.get(&parent) {
                Some(&loc) => Some(loc),
                None => {
                    return Err(format!(
                        "parent {parent} is not an open range listed before it (records must come \
                         parents first, in start order, each profile's together, as njx-export \
                         writes them)"
                    ));
                }
            },
            None if splice => self.splice_target(range),
            None => None,
        })
    }

    /// What is wrong with where `range` goes: a record that names its parent must be
    /// nested in it; a root must be a range on its own.
    fn nesting(&self, range: &Range, target: Option<(u64, u32)>) -> Option<String> {
        match (range.parent, target) {
            (Some(_), Some((seq, parent_idx))) => {
                let parent = &self.trees[&seq].nodes[parent_idx as usize].range;
                nesting_problem(range, &Parent::of(parent), || {
                    self.under_compile((seq, parent_idx))
                })
            }
            (None, _) => root_problem(range),
            (Some(_), None) => None,
        }
    }

    /// Adds `range` under `target` (or as the root of a new tree) and indexes it.
    fn insert(&mut self, range: Range, target: Option<(u64, u32)>, is_compile: bool) {
        let id = range.id;
        let node = Node {
            range,
            kids: Vec::new(),
        };
        let loc = match target {
            Some((seq, parent_idx)) => {
                let tree = self.trees.get_mut(&seq).expect("indexed tree is open");
                let idx = tree.nodes.len() as u32;
                tree.nodes.push(node);
                tree.nodes[parent_idx as usize].kids.push(idx);
                (seq, idx)
            }
            None => {
                let seq = self.next_tree;
                self.next_tree += 1;
                self.trees.insert(seq, Tree { nodes: vec![node] });
                (seq, 0)
            }
        };
        self.index.insert(id, loc);
        if is_compile {
            self.compiles.push(loc);
        }
    }

    fn forget(&mut self, seq: u64, tree: &Tree) {
        for node in &tree.nodes {
            self.index.remove(&node.range.id);
        }
        self.compiles.retain(|&(s, _)| s != seq);
    }

    /// Whether the range at `loc` or one of its ancestors is an XlaCompile range (where
    /// spliced workers hang, on other threads than their parents).
    fn under_compile(&self, mut loc: (u64, u32)) -> bool {
        loop {
            let r = &self.trees[&loc.0].nodes[loc.1 as usize].range;
            if r.name.starts_with(XLA_COMPILE_PREFIX) {
                return true;
            }
            match r.parent.and_then(|p| self.index.get(&p)) {
                Some(&up) => loc = up,
                None => return false,
            }
        }
    }

    /// Where a top-level range from a parallel-compilation worker thread belongs: under
    /// the deepest range of the compiling thread that strictly encloses it in time, inside
    /// the innermost XlaCompile range of another thread of the same process that contains
    /// it (nsys-jax `_splice_parallel_ranges`).
    fn splice_target(&self, r: &Range) -> Option<(u64, u32)> {
        let &(seq, cidx) = self.compiles.iter().rev().find(|&&(seq, idx)| {
            let c = &self.trees[&seq].nodes[idx as usize].range;
            c.pid == r.pid && c.tid != r.tid && c.start_ns <= r.start_ns && r.end_ns <= c.end_ns
        })?;
        let tree = &self.trees[&seq];
        let main_tid = tree.nodes[cidx as usize].range.tid;
        let mut at = cidx;
        'descend: loop {
            for &k in tree.nodes[at as usize].kids.iter().rev() {
                let kr = &tree.nodes[k as usize].range;
                if kr.tid != main_tid {
                    continue;
                }
                if kr.start_ns < r.start_ns && kr.end_ns > r.end_ns {
                    at = k;
                    continue 'descend;
                }
                if kr.start_ns < r.start_ns {
                    // Main-thread children are disjoint and in start order: the last one
                    // that started before `r` is the only candidate.
                    break;
                }
            }
            return Some((seq, at));
        }
    }
}

impl Filters {
    /// Reshapes one completed tree and recomputes the tree fields of what remains.
    fn apply(&self, mut tree: Tree) -> Vec<Range> {
        // Children in start order (spliced workers arrive after the main thread's later
        // children when the input is a reshaped tree).
        let starts: Vec<i64> = tree.nodes.iter().map(|n| n.range.start_ns).collect();
        for node in &mut tree.nodes {
            node.kids.sort_by_key(|&k| starts[k as usize]);
        }
        let mut out: Vec<(usize, Option<usize>)> = Vec::with_capacity(tree.nodes.len());
        self.walk(&tree, 0, None, false, &mut out);
        finish_tree(&tree, &out)
    }

    /// Pre-order walk deciding each node's fate: `out` gets (node, output parent). With a
    /// stack of its own, not recursion: trees may nest as deep as the input says.
    fn walk(
        &self,
        tree: &Tree,
        root: u32,
        parent: Option<usize>,
        in_kept_subtree: bool,
        out: &mut Vec<(usize, Option<usize>)>,
    ) {
        // (node, output parent, inside a kept subtree), children pushed last-first so
        // that they are visited in order.
        let mut todo: Vec<(u32, Option<usize>, bool)> = vec![(root, parent, in_kept_subtree)];
        while let Some((idx, parent, in_kept_subtree)) = todo.pop() {
            let node = &tree.nodes[idx as usize];
            let name = node.range.name.as_str();
            let kept =
                in_kept_subtree || self.subtree.is_empty() || matches_any(&self.subtree, name);
            let (kids_parent, kids_kept) = if !kept {
                // Outside every kept subtree: dropped with its time; its descendants may
                // still root kept subtrees of their own.
                (None, false)
            } else if (!self.select.is_empty() && !matches_any(&self.select, name))
                || matches_any(&self.fold, name)
            {
                (parent, true)
            } else {
                let me = out.len();
                out.push((idx as usize, parent));
                if matches_any(&self.collapse, name) {
                    continue;
                }
                (Some(me), true)
            };
            todo.extend(node.kids.iter().rev().map(|&k| (k, kids_parent, kids_kept)));
        }
    }
}

fn matches_any(matchers: &[Matcher], name: &str) -> bool {
    matchers.iter().any(|m| m.is_match(name))
}

/// Turns the walk's decisions into records with recomputed tree fields.
fn finish_tree(tree: &Tree, out: &[(usize, Option<usize>)]) -> Vec<Range> {
    let mut kids: Vec<Vec<usize>> = vec![Vec::new(); out.len()];
    for (i, &(_, parent)) in out.iter().enumerate() {
        if let Some(p) = parent {
            kids[p].push(i);
        }
    }
    let mut records: Vec<Range> = Vec::with_capacity(out.len());
    for (i, &(node, parent)) in out.iter().enumerate() {
        let mut r = tree.nodes[node].range.clone();
        let kid_ranges: Vec<&Range> = kids[i]
            .iter()
            .map(|&k| &tree.nodes[out[k].0].range)
            .collect();
        r.parent = parent.map(|p| records[p].id);
        r.depth = parent.map_or(0, |p| records[p].depth + 1);
        r.children = kid_ranges.len() as u32;
        r.child_ns = covered_ns(&r, &kid_ranges);
        r.self_ns = r.dur_ns - r.child_ns;
        records.push(r);
    }
    records
}

/// What a child record is checked against: its parent.
#[derive(Debug, Clone)]
pub struct Parent {
    /// The parent's range id.
    pub id: u64,
    /// The parent's process id.
    pub pid: Option<u64>,
    /// The parent's thread id.
    pub tid: u64,
    /// The parent's depth (0 for a root).
    pub depth: u32,
    /// The parent's start, nanoseconds.
    pub start_ns: i64,
    /// The parent's end, nanoseconds.
    pub end_ns: i64,
}

impl Parent {
    /// The parent that range `r` is.
    pub fn of(r: &Range) -> Parent {
        Parent {
            id: r.id,
            pid: r.pid,
            tid: r.tid,
            depth: r.depth,
            start_ns: r.start_ns,
            end_ns: r.end_ns,
        }
    }
}

/// How a range record must sit in its parent, one rule for every tool that rebuilds
/// trees from records (njx-ranges, njx-compile-summary, njx-flamefold --by stack): one
/// level deeper, in its process, on its thread unless `under_compile` (the parent or an
/// ancestor is an XlaCompile range, where `--splice-workers` puts the top ranges of
/// parallel-compilation workers), and within its time. What is wrong, if anything.
pub fn nesting_problem(
    r: &Range,
    parent: &Parent,
    under_compile: impl FnOnce() -> bool,
) -> Option<String> {
    let opt = |pid: Option<u64>| pid.map_or("?".to_string(), |p| p.to_string());
    if Some(r.depth) != parent.depth.checked_add(1) {
        return Some(format!(
            "depth {} under parent {} of depth {}",
            r.depth, parent.id, parent.depth
        ));
    }
    if r.pid != parent.pid {
        return Some(format!(
            "in another process ({}) than its parent {} ({}): a range's children are in its \
             process",
            opt(r.pid),
            parent.id,
            opt(parent.pid)
        ));
    }
    if r.tid != parent.tid && !under_compile() {
        return Some(format!(
            "on thread {} under parent {} of thread {}, outside any XlaCompile range: a \
             range's children are on its thread, except parallel-compilation workers spliced \
             under a compilation (njx-ranges --splice-workers)",
            r.tid, parent.id, parent.tid
        ));
    }
    if r.start_ns < parent.start_ns || r.end_ns > parent.end_ns {
        return Some(format!(
            "{}..{} lies outside its parent {} ({}..{})",
            r.start_ns, r.end_ns, parent.id, parent.start_ns, parent.end_ns
        ));
    }
    None
}

/// A range record without a parent must be at depth 0.
pub fn root_problem(r: &Range) -> Option<String> {
    (r.depth != 0).then(|| format!("a root of depth {}", r.depth))
}

/// A complete tree as read: every range has the children and child time it declares
/// (records say what they hold; njx writes them so). `next`: the profile whose records
/// ended the tree's, if that is what did.
fn check_tree(tree: &Tree, next: Option<&str>) -> Result<()> {
    for node in &tree.nodes {
        let r = &node.range;
        // Its own children: those spliced under it here (`--splice-workers`) came as roots.
        let kids: Vec<&Range> = node
            .kids
            .iter()
            .map(|&k| &tree.nodes[k as usize].range)
            .filter(|k| k.parent == Some(r.id))
            .collect();
        let covered = covered_ns(r, &kids);
        if kids.len() != r.children as usize || covered != r.child_ns {
            return Err(Error::data(
                format!("profile {}, range {}", r.profile, r.id),
                format!(
                    "declares {} children covering {} ns, but {} children covering {} ns \
                     follow it{}",
                    r.children,
                    r.child_ns,
                    kids.len(),
                    covered,
                    next.map_or(String::new(), |next| format!(
                        " before the records of profile {next} begin (each profile's records \
                         must come together, as njx-export writes them: records of several \
                         profiles interleaved?)"
                    ))
                ),
            ));
        }
    }
    Ok(())
}

/// Wall time of `parent` covered by its children: children on the parent's own thread
/// count with their own intervals; children from other threads (spliced workers) run in
/// parallel and count as one span from the first start to the last end.
pub fn covered_ns(parent: &Range, kids: &[&Range]) -> i64 {
    let mut spans: Vec<(i64, i64)> = Vec::with_capacity(kids.len() + 1);
    let mut hull: Option<(i64, i64)> = None;
    for k in kids {
        if k.pid == parent.pid && k.tid == parent.tid {
            spans.push((k.start_ns, k.end_ns));
        } else {
            hull = Some(match hull {
                None => (k.start_ns, k.end_ns),
                Some((s, e)) => (s.min(k.start_ns), e.max(k.end_ns)),
            });
        }
    }
    spans.extend(hull);
    union_ns(&mut spans, parent.start_ns, parent.end_ns)
}

/// Length of the union of `spans`, clipped to `[lo, hi]`.
pub fn union_ns(spans: &mut [(i64, i64)], lo: i64, hi: i64) -> i64 {
    spans.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(i64, i64)> = None;
    for &(s, e) in spans.iter() {
        let (s, e) = (s.max(lo), e.min(hi));
        if e <= s {
            continue;
        }
        cur = match cur {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    if let Some((cs, ce)) = cur {
        total += ce - cs;
    }
    total
}
