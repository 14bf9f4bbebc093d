//! `njx-compile-summary`: where XLA compilation time goes, per compilation or in total.
//!
//! The input goes through the `--xla-compile` preparation of [`crate::derived::trees`] (a no-op
//! on input that already had it), then each XlaCompile tree's wall time is divided among
//! range names by self time. Parallel compilation is handled as nsys-jax's
//! `generate_compilation_statistics` does: a compiling-thread range that launched worker
//! threads keeps its own self time, and the span its workers covered (from the first
//! worker range's start to the last one's end, less what the compiling thread itself did
//! then) is shared among the worker ranges in proportion to their self times. Each
//! compilation therefore adds up to exactly its wall time, never more.
//!
//! Per compilation, every compilation's breakdown is held (they are sorted by profile and
//! start before writing). With `--total`, each is added to the totals as its tree
//! completes and dropped: memory follows the distinct names, not the compilations or
//! ranks, and the sums are exact ([`ExactSum`]), so they do not depend on the order in
//! which the trees complete.

use crate::derived::trees::{Filters, TreeBuilder, XLA_COMPILE_PREFIX, union_ns};
use crate::error::{Error, Result};
use crate::output::notes::Notes;
use crate::output::{Format, RecordWriter, write_table};
use crate::records::Range;
use crate::source;
use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// How range names are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Group {
    /// The range name up to `:#` (`XlaEmitLlvmIr`, `XlaPass`, …).
    Category,
    /// The range name without its domain and without the module, program_id and
    /// autotuned-op attributes (`XlaPass:#name=algsimp#`).
    Name,
}

/// What `njx-compile-summary` reports.
#[derive(Debug, Clone)]
pub struct Options {
    /// Statistics over all compilations instead of one block per compilation.
    pub total: bool,
    /// Keep every XlaPass and XlaPassPipeline name instead of one XlaPasses line.
    pub passes: bool,
    /// Group by category or by name [default: category per compilation, name with total].
    pub by: Option<Group>,
    /// Show at most N lines (per compilation without total).
    pub top: Option<usize>,
    /// Stop once the lines shown cover this percentage of the time.
    pub threshold: Option<f64>,
    /// Table, JSON Lines or CSV.
    pub format: Format,
}

/// The time of one compilation, divided among names.
#[derive(Debug, Clone)]
pub struct Compilation {
    /// Profile the compilation was recorded in.
    pub profile: Arc<str>,
    /// Range id of the XlaCompile range.
    pub id: u64,
    /// Full name of the XlaCompile range.
    pub name: String,
    /// Start time, nanoseconds.
    pub start_ns: i64,
    /// Wall time, nanoseconds.
    pub wall_ns: i64,
    /// Nanoseconds per key, largest first.
    pub parts: Vec<(String, f64)>,
}

/// Turns a range name into the key it is counted under.
pub fn key(name: &str, by: Group, passes: bool) -> String {
    let name = name.strip_prefix("TSL:").unwrap_or(name);
    let category = name.split_once(":#").map_or(name, |(c, _)| c);
    if !passes && (category == "XlaPass" || category == "XlaPassPipeline") {
        return "XlaPasses".to_string();
    }
    match by {
        Group::Category => category.to_string(),
        Group::Name => crate::derived::trees::compile_name(name),
    }
}

/// Divides the wall time of each XlaCompile tree in `forest` (pre-order, as
/// [`TreeBuilder`] hands it out) among the keys of its ranges.
pub fn attribute(forest: &[Range], key_of: &dyn Fn(&str) -> String) -> Vec<Compilation> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < forest.len() {
        let end = forest[at + 1..]
            .iter()
            .position(|r| r.parent.is_none())
            .map_or(forest.len(), |p| at + 1 + p);
        let tree = &forest[at..end];
        if tree[0].name.starts_with(XLA_COMPILE_PREFIX) {
            out.push(attribute_tree(tree, key_of));
        }
        at = end;
    }
    out
}

fn attribute_tree(tree: &[Range], key_of: &dyn Fn(&str) -> String) -> Compilation {
    let root = &tree[0];
    let is_main = |r: &Range| r.pid == root.pid && r.tid == root.tid;
    let pos: HashMap<u64, usize> = tree.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    let parent = |i: usize| tree[i].parent.and_then(|p| pos.get(&p).copied());
    // Nearest compiling-thread ancestor (or self) of every range: the launcher of a
    // worker range.
    let mut launcher = vec![0usize; tree.len()];
    let mut main_kids: Vec<Vec<(i64, i64)>> = vec![Vec::new(); tree.len()];
    let mut worker_self = vec![0i64; tree.len()];
    let mut worker_count = vec![0usize; tree.len()];
    for (i, r) in tree.iter().enumerate() {
        let p = parent(i);
        launcher[i] = if is_main(r) {
            i
        } else {
            p.map_or(0, |p| launcher[p])
        };
        if let (Some(p), true) = (p, is_main(r)) {
            main_kids[p].push((r.start_ns, r.end_ns));
        }
        if !is_main(r) {
            worker_self[launcher[i]] = worker_self[launcher[i]].saturating_add(r.self_ns);
            worker_count[launcher[i]] += 1;
        }
    }
    // The parallel span of each launcher: what its children cover beyond the compiling
    // thread's own children.
    let parallel: Vec<i64> = (0..tree.len())
        .map(|l| {
            if worker_count[l] == 0 {
                return 0;
            }
            let lr = &tree[l];
            lr.child_ns - union_ns(&mut main_kids[l], lr.start_ns, lr.end_ns)
        })
        .collect();
    let mut acc: HashMap<String, f64> = HashMap::new();
    for (i, r) in tree.iter().enumerate() {
        let share = if is_main(r) {
            r.self_ns as f64
        } else {
            let l = launcher[i];
            if worker_self[l] > 0 {
                parallel[l] as f64 * r.self_ns as f64 / worker_self[l] as f64
            } else {
                parallel[l] as f64 / worker_count[l] as f64
            }
        };
        *acc.entry(key_of(&r.name)).or_default() += share;
    }
    Compilation {
        profile: root.profile.clone(),
        id: root.id,
        name: root.name.clone(),
        start_ns: root.start_ns,
        wall_ns: root.dur_ns,
        parts: sorted(acc),
    }
}

fn sorted(acc: HashMap<String, f64>) -> Vec<(String, f64)> {
    let mut parts: Vec<(String, f64)> = acc.into_iter().collect();
    parts.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    parts
}

/// A sum of `f64`s that is exact until it is read, then rounded once: the result is the
/// correctly rounded sum whatever the order of the terms (Shewchuk's non-overlapping
/// partials, "Adaptive Precision Floating-Point Arithmetic", 1997, as Python's
/// `math.fsum` uses them). The terms must be finite.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExactSum {
    /// Non-overlapping, increasing in magnitude; their exact sum is the sum so far.
    partials: Vec<f64>,
}

impl ExactSum {
    /// Adds another sum exactly (its partials, each exactly).
    pub fn merge(&mut self, other: &ExactSum) {
        other.partials.iter().for_each(|&x| self.add(x));
    }

    /// Adds `x` exactly.
    pub fn add(&mut self, mut x: f64) {
        let mut kept = 0;
        for j in 0..self.partials.len() {
            let mut y = self.partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            // hi + lo == x + y exactly (|x| >= |y|).
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                self.partials[kept] = lo;
                kept += 1;
            }
            x = hi;
        }
        self.partials.truncate(kept);
        self.partials.push(x);
    }

    /// The sum, correctly rounded (ties to even).
    pub fn value(&self) -> f64 {
        let p = &self.partials;
        let Some(&last) = p.last() else {
            return 0.0;
        };
        let (mut hi, mut lo) = (last, 0.0);
        let mut n = p.len() - 1;
        // From the largest partial down, until the rounding error is not zero.
        while n > 0 {
            n -= 1;
            let (x, y) = (hi, p[n]);
            hi = x + y;
            lo = y - (hi - x);
            if lo != 0.0 {
                break;
            }
        }
        // Half-way cases: the partials below decide the direction of the rounding.
        if n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0)) {
            let y = lo * 2.0;
            let x = hi + y;
            if y == x - hi {
                hi = x;
            }
        }
        hi
    }
}

/// The totals over every compilation (`--total`): exact, so merged in any order they give
/// the totals of one reading of every input.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Total {
    /// Time per name.
    parts: BTreeMap<String, ExactSum>,
    /// Wall time of all compilations.
    wall_ns: i64,
    compilations: usize,
    profiles: BTreeSet<Arc<str>>,
}

impl Total {
    /// The totals of `compilations` (as [`compilations_of_ranges`] divides them, every
    /// range name kept: `--by name --passes`): the other groupings are
    /// [`Total::regrouped`] from it.
    pub fn of(compilations: &[Compilation]) -> Total {
        let mut total = Total::default();
        compilations.iter().for_each(|c| total.add(c));
        total
    }

    /// Adds other totals, exactly.
    pub fn merge(&mut self, other: &Total) {
        for (k, sum) in &other.parts {
            self.parts.entry(k.clone()).or_default().merge(sum);
        }
        self.wall_ns = self.wall_ns.saturating_add(other.wall_ns);
        self.compilations += other.compilations;
        self.profiles.extend(other.profiles.iter().cloned());
    }

    /// These totals (kept by name, with every pass: [`Total::of`]) grouped as
    /// `by` and `passes` say, exactly as [`collect`] would have grouped them.
    pub fn regrouped(&self, by: Group, passes: bool) -> Total {
        let mut out = Total {
            parts: BTreeMap::new(),
            ..self.clone()
        };
        for (k, sum) in &self.parts {
            out.parts.entry(key(k, by, passes)).or_default().merge(sum);
        }
        out
    }

    /// How many compilations.
    pub fn compilations(&self) -> usize {
        self.compilations
    }

    /// Adds one compilation.
    pub fn add(&mut self, c: &Compilation) {
        for (k, v) in &c.parts {
            self.parts.entry(k.clone()).or_default().add(*v);
        }
        self.wall_ns = self.wall_ns.saturating_add(c.wall_ns);
        self.compilations += 1;
        if !self.profiles.contains(&c.profile) {
            self.profiles.insert(Arc::clone(&c.profile));
        }
    }
}

/// The compilations of the push/pop ranges of one input path (in the order read, as
/// [`collect`] reads them), each divided among its range names with every pass kept
/// (`--by name --passes`).
pub fn compilations_of_ranges(ranges: Vec<Range>) -> Result<Vec<Compilation>> {
    let mut filters = Filters::default();
    filters.add_xla_compile();
    let mut builder = TreeBuilder::new(filters);
    let mut out = Vec::new();
    let key_of = |name: &str| key(name, Group::Name, true);
    let mut sink = |forest: Vec<Range>| -> Result<()> {
        out.extend(attribute(&forest, &key_of));
        Ok(())
    };
    for r in ranges {
        builder.push(r, &mut sink)?;
    }
    builder.finish(&mut sink)?;
    Ok(out)
}

/// What is reported: every compilation, or the totals.
#[derive(Debug, Clone)]
pub enum Report {
    /// Every compilation, in profile and start order.
    Compilations(Vec<Compilation>),
    /// The totals (`--total`).
    Total(Total),
}

/// Reads every input: its compilations, in profile and start order, or with `--total`
/// their totals.
pub fn collect(options: &Options, inputs: &[PathBuf], notes: &Notes) -> Result<Report> {
    let by = options.by.unwrap_or(if options.total {
        Group::Name
    } else {
        Group::Category
    });
    let passes = options.passes;
    let key_of = move |name: &str| key(name, by, passes);
    let mut filters = Filters::default();
    filters.add_xla_compile();
    let mut builder = TreeBuilder::new(filters);
    let mut compilations = Vec::new();
    let mut total = Total::default();
    let mut sink = |forest: Vec<Range>| -> Result<()> {
        for c in attribute(&forest, &key_of) {
            if options.total {
                total.add(&c);
            } else {
                compilations.push(c);
            }
        }
        Ok(())
    };
    for path in inputs {
        source::read_ranges(path, source::Options::default(), notes, &mut |r| {
            builder.push(r, &mut sink)
        })?;
        builder.next_input();
    }
    builder
        .finish(&mut sink)
        .map_err(source::at_end_of(inputs))?;
    if options.total {
        return Ok(Report::Total(total));
    }
    compilations
        .sort_by(|a, b| (&a.profile, a.start_ns, a.id).cmp(&(&b.profile, b.start_ns, b.id)));
    Ok(Report::Compilations(compilations))
}

/// The rows to show of a sorted breakdown: `--top` and `--cover` applied.
fn shown<'a>(parts: &'a [(String, f64)], total: f64, options: &Options) -> &'a [(String, f64)] {
    let mut n = parts.len().min(options.top.unwrap_or(usize::MAX));
    if let Some(limit) = options.threshold {
        let mut cumulative = 0.0;
        for (i, (_, v)) in parts.iter().enumerate().take(n) {
            cumulative += 100.0 * v / total;
            if cumulative >= limit {
                n = i + 1;
                break;
            }
        }
    }
    &parts[..n]
}

#[derive(Serialize, Default)]
struct BlockRow<'a> {
    profile: &'a str,
    compilation: &'a str,
    compilation_id: u64,
    start_ns: i64,
    wall_ns: i64,
    name: &'a str,
    self_ns: i64,
    percent: f64,
}

#[derive(Serialize, Default)]
struct TotalRow<'a> {
    name: &'a str,
    self_ns: i64,
    percent: f64,
    cumulative_percent: f64,
    compilations: usize,
    wall_ns: i64,
}

/// How many profiles the compilations come from (they are sorted by profile).
fn profile_count(compilations: &[Compilation]) -> usize {
    let mut p: Vec<&str> = compilations.iter().map(|c| &*c.profile).collect();
    p.dedup();
    p.len()
}

fn secs(ns: f64) -> String {
    format!("{:.6}", ns / 1e9)
}

impl Options {
    /// Refuses options that make no sense (a usage error).
    pub fn check(&self) -> Result<()> {
        if self.threshold.is_some_and(|t| !(0.0..=100.0).contains(&t)) {
            return Err(Error::Usage(
                "--cover (--threshold) is a percentage between 0 and 100".into(),
            ));
        }
        Ok(())
    }
}

/// The compilation report of `inputs`, written to `out`.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    options.check()?;
    let report = collect(options, inputs, notes)?;
    write(options, &report, out)
}

/// Writes a report (from [`collect`]).
pub fn write(options: &Options, report: &Report, out: &mut dyn Write) -> Result<()> {
    let format = options.format;
    let empty = match report {
        Report::Compilations(c) => c.is_empty(),
        Report::Total(t) => t.compilations == 0,
    };
    if empty {
        match (format, report) {
            (Format::Table, _) => {
                writeln!(out, "No XlaCompile ranges in the input.").map_err(Error::Output)?;
            }
            // A Parquet file of no rows, with the records' columns (an empty file is
            // not one).
            (Format::Parquet, Report::Total(_)) => {
                return RecordWriter::new(out, format)?.finish::<TotalRow>();
            }
            (Format::Parquet, Report::Compilations(_)) => {
                return RecordWriter::new(out, format)?.finish::<BlockRow>();
            }
            _ => {}
        }
        return out.flush().map_err(Error::Output);
    }
    match report {
        Report::Total(total) => write_total(options, total, format, out),
        Report::Compilations(compilations) => write_blocks(options, compilations, format, out),
    }
}

fn write_blocks(
    options: &Options,
    compilations: &[Compilation],
    format: Format,
    out: &mut dyn Write,
) -> Result<()> {
    let profiles = profile_count(compilations);
    if format == Format::Table {
        let mut last_profile: Option<&str> = None;
        for c in compilations {
            if profiles > 1 && last_profile != Some(&c.profile) {
                writeln!(out, "Profile: {}", c.profile).map_err(Error::Output)?;
                last_profile = Some(&c.profile);
            }
            let wall = c.wall_ns as f64;
            writeln!(out, "Compilation: {}: {}", c.name, secs(wall)).map_err(Error::Output)?;
            let rows: Vec<Vec<String>> = shown(&c.parts, wall, options)
                .iter()
                .map(|(k, v)| {
                    vec![
                        String::new(),
                        k.clone(),
                        format!("{:.1}%", 100.0 * v / wall),
                        secs(*v),
                    ]
                })
                .collect();
            // A leading empty cell indents every line by one space, as the guide does.
            write_table_rows(out, &rows)?;
        }
        return out.flush().map_err(Error::Output);
    }
    let mut w = RecordWriter::new(out, format)?;
    for c in compilations {
        let wall = c.wall_ns as f64;
        for (k, v) in shown(&c.parts, wall, options) {
            w.write(&BlockRow {
                profile: &c.profile,
                compilation: &c.name,
                compilation_id: c.id,
                start_ns: c.start_ns,
                wall_ns: c.wall_ns,
                name: k,
                self_ns: v.round() as i64,
                percent: 100.0 * v / wall,
            })?;
        }
    }
    w.finish::<BlockRow>()
}

fn write_table_rows(out: &mut dyn Write, rows: &[Vec<String>]) -> Result<()> {
    let mut buf = Vec::new();
    write_table(&mut buf, rows, &[2, 3])?;
    // write_table separates columns by two spaces; the guide's lines use one.
    for line in String::from_utf8_lossy(&buf).lines() {
        writeln!(out, "{}", &line[1..]).map_err(Error::Output)?;
    }
    Ok(())
}

fn write_total(
    options: &Options,
    total: &Total,
    format: Format,
    out: &mut dyn Write,
) -> Result<()> {
    let acc: HashMap<String, f64> = total
        .parts
        .iter()
        .map(|(k, sum)| (k.clone(), sum.value()))
        .collect();
    let wall = total.wall_ns;
    let compilations = total.compilations;
    let parts = sorted(acc);
    let rows = shown(&parts, wall as f64, options);
    let mut cumulative = 0.0;
    if format == Format::Table {
        let profiles = total.profiles.len();
        writeln!(
            out,
            "Compilation time: {} s in {} compilation{} ({} profile{})",
            secs(wall as f64),
            compilations,
            if compilations == 1 { "" } else { "s" },
            profiles,
            // Each profile's compiling, added up: not how long the run took.
            if profiles == 1 {
                ""
            } else {
                "s, summed: not wall time"
            }
        )
        .map_err(Error::Output)?;
        let mut table = vec![vec![
            "name".to_string(),
            "seconds".into(),
            "percent".into(),
            "cumulative".into(),
        ]];
        for (k, v) in rows {
            let pct = 100.0 * v / wall as f64;
            cumulative += pct;
            table.push(vec![
                k.clone(),
                secs(*v),
                format!("{pct:.2}%"),
                format!("{cumulative:.2}%"),
            ]);
        }
        write_table(out, &table, &[1, 2, 3])?;
        return out.flush().map_err(Error::Output);
    }
    let mut w = RecordWriter::new(out, format)?;
    for (k, v) in rows {
        let pct = 100.0 * v / wall as f64;
        cumulative += pct;
        w.write(&TotalRow {
            name: k,
            self_ns: v.round() as i64,
            percent: pct,
            cumulative_percent: cumulative,
            compilations,
            wall_ns: wall,
        })?;
    }
    w.finish::<TotalRow>()
}

// ---------------------------------------------------------------- for the findings

// When each module was compiled and first ran, and how long each profile is: what
// njx-report's `compile-time` and `recompilation` rules judge by. Mergeable (partial
// results carry it); its size follows the compilations, not the executions.

/// One compilation (an `XlaCompile` range).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compiled {
    /// The profile that recorded it.
    pub profile: String,
    /// The module compiled (`module=` of the range name; the name itself without one).
    pub module: String,
    /// Its start, ns.
    pub start_ns: i64,
    /// Its wall time, ns.
    pub wall_ns: i64,
    /// The part of its time in the autotuner's ranges (`XlaAutotuner…`), ns.
    pub autotune_ns: i64,
}

impl Compiled {
    fn of(c: &Compilation) -> Compiled {
        let name = c.name.strip_prefix("TSL:").unwrap_or(&c.name);
        let module = name
            .split_once("module=")
            .map(|(_, rest)| rest.split([',', '#']).next().unwrap_or(rest))
            .unwrap_or(name);
        let autotune: f64 = (c.parts.iter())
            .filter(|(k, _)| key(k, Group::Category, false).starts_with("XlaAutotun"))
            .map(|(_, v)| v)
            .sum();
        Compiled {
            profile: c.profile.to_string(),
            module: module.to_string(),
            start_ns: c.start_ns,
            wall_ns: c.wall_ns,
            autotune_ns: autotune.round() as i64,
        }
    }
}

/// The compilations, first executions and spans of the profiles read.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compilations {
    /// Every compilation, in the order read.
    pub compiled: Vec<Compiled>,
    /// (profile, module name) → the start of its first steady execution (of any program
    /// of that name: the first but one of a program, the first being its warm-up), ns.
    #[serde(with = "crate::derived::partial::pairs")]
    pub first_runs: BTreeMap<(String, String), i64>,
    /// Profile → the first and last time anything in it was recorded (push/pop ranges,
    /// module executions), ns.
    pub spans: BTreeMap<String, (i64, i64)>,
}

impl Compilations {
    /// Adds a profile's compilations and executions.
    pub fn add(
        &mut self,
        compilations: &[Compilation],
        part: &crate::derived::executions::Executions,
    ) {
        self.compiled.extend(compilations.iter().map(Compiled::of));
        for r in &part.ranges {
            self.widen(&r.profile, r.start_ns, r.end_ns);
        }
        for m in &part.modules {
            let end = m.start_ns.saturating_add(m.dur_ns);
            self.widen(&m.profile, m.start_ns, end);
            if m.execution == 0 {
                continue;
            }
            let first = (self.first_runs)
                .entry((m.profile.to_string(), m.name.clone()))
                .or_insert(m.start_ns);
            *first = (*first).min(m.start_ns);
        }
    }

    fn widen(&mut self, profile: &str, start: i64, end: i64) {
        match self.spans.get_mut(profile) {
            Some(s) => *s = (s.0.min(start), s.1.max(end)),
            None => {
                self.spans.insert(profile.to_string(), (start, end));
            }
        }
    }

    /// Merges another's.
    pub fn merge(&mut self, o: Compilations) {
        self.compiled.extend(o.compiled);
        for (k, v) in o.first_runs {
            let first = self.first_runs.entry(k).or_insert(v);
            *first = (*first).min(v);
        }
        for (p, (s, e)) in o.spans {
            self.widen(&p, s, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ExactSum, Group, key};

    #[test]
    fn exact_sums_do_not_depend_on_the_order() {
        let terms = [1e16, 1.0, -1e16, 0.1, 0.2, 3.0e-9, 7.5e12, 0.3];
        let sum = |order: &[usize]| {
            let mut s = ExactSum::default();
            order.iter().for_each(|&i| s.add(terms[i]));
            s.value()
        };
        let forward: Vec<usize> = (0..terms.len()).collect();
        let backward: Vec<usize> = forward.iter().rev().copied().collect();
        let shuffled = [3, 7, 0, 5, 2, 6, 1, 4];
        // Naive summation in these orders gives different results; the exact one does not.
        let naive = |order: &[usize]| order.iter().map(|&i| terms[i]).sum::<f64>();
        assert_ne!(naive(&forward), naive(&shuffled));
        assert_eq!(sum(&forward), sum(&backward));
        assert_eq!(sum(&forward), sum(&shuffled));
        // Python's math.fsum of the same terms.
        assert_eq!(sum(&forward), 7500000000001.6);
        // 1 + 2^-53 is half-way between 1 and the next double: ties to even give 1, and
        // any positive remainder below rounds up.
        let half_ulp = 2f64.powi(-53);
        let mut tie = ExactSum::default();
        [1.0, half_ulp].iter().for_each(|&x| tie.add(x));
        assert_eq!(tie.value(), 1.0);
        tie.add(1e-30);
        assert_eq!(tie.value(), 1.0000000000000002);
        assert_eq!(ExactSum::default().value(), 0.0);
    }

    #[test]
    fn keys_drop_domain_module_and_program() {
        let n = "TSL:XlaPass:#name=algsimp,module=jit_f,program_id=3#";
        assert_eq!(key(n, Group::Name, true), "XlaPass:#name=algsimp#");
        assert_eq!(key(n, Group::Category, true), "XlaPass");
        assert_eq!(key(n, Group::Name, false), "XlaPasses");
        let c = "TSL:XlaCompile:#module=jit_f,program_id=3#";
        assert_eq!(key(c, Group::Name, false), "XlaCompile");
        let m = "TSL:XlaAutotunerMeasurement:#hlo_op=gemm_fusion_dot.1#";
        assert_eq!(key(m, Group::Name, false), "XlaAutotunerMeasurement");
        assert_eq!(
            key("TSL:XlaAutotunerCompilation", Group::Category, false),
            "XlaAutotunerCompilation"
        );
    }
}
