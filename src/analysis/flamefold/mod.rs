//! Folded stacks (`frame;frame;frame count`) for flame graphs (`njx-flamefold`).
//!
//! Stacks are collected into a [`Folded`] tree whose size is the number of distinct
//! stacks, whatever the size of the input: [`stack`] folds NVTX range trees by their
//! name paths, [`gpu`] folds the GPU time of XLA thunks by Python source, op_name,
//! opcode, module or device as the nsys-jax Analysis notebook does. The output is what
//! `flamegraph.pl`, `inferno-flamegraph` and speedscope read; [`render_svg`] draws it
//! with the inferno crate, and [`diff`] pairs two folded files for differential graphs.

pub mod gpu;
pub mod stack;
mod svg;
mod write;

pub use svg::{SvgOptions, render_svg};
pub use write::{Made, default_title, make};

use crate::derived::gpu_time::{self, GpuTime};
use crate::error::{Error, Result};
use crate::hlo::thunk_info;
use crate::output::notes::Notes;
use crate::source;
use crate::util::stats::round_keeping_total;
use clap::ValueEnum;
use gpu::{GpuMode, GpuOptions};
use hashbrown::HashMap;
use stack::StackFolder;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What the stacks are made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum By {
    /// NVTX range names, root to leaf, weighted by self time (range records or anything
    /// njx-export reads).
    Stack,
    /// Python source frames of each thunk's HLO instructions (GPU time).
    Source,
    /// JAX op_name of each thunk's HLO instructions, split on `/` (GPU time).
    OpName,
    /// HLO opcode of each thunk (GPU time).
    Opcode,
    /// Program, then thunk (GPU time).
    Module,
    /// Device, then program and thunk (GPU time, idle time per device).
    Device,
}

/// What to fold.
#[derive(Debug, Clone)]
pub struct Options {
    /// What the stacks are made of.
    pub by: By,
    /// Archives or XLA dump folders holding HLO dumps, besides the archives among the
    /// inputs.
    pub hlo: Vec<PathBuf>,
    /// Keep the largest programs until they cover this fraction of module time.
    pub top_modules: f64,
    /// Count initialisation executions too.
    pub include_warmup: bool,
    /// `--by stack`: keep range names whole, also in compilation trees (where they are
    /// otherwise cleaned as njx-compile-summary cleans them).
    pub full_names: bool,
    /// The unit of the counts written.
    pub unit: Unit,
    /// GPU modes: make the partial result instead of folded stacks.
    pub partial: bool,
    /// GPU modes: the programs folded (`--program`, `--exclude-program`).
    pub programs: crate::derived::programs::ProgramFilter,
    /// Pair these two folded files (before, after) instead of folding the inputs.
    pub diff: Option<[PathBuf; 2]>,
    /// With `diff`: scale before to the total of after.
    pub normalize: bool,
}

/// Folds `inputs` as `options` ask: range trees by name path, or GPU time.
pub fn fold(options: &Options, inputs: &[PathBuf], notes: &Notes) -> Result<Folded> {
    let paths = inputs;
    // Checked whatever the mode, so that a wrong value is never silently unused.
    crate::derived::gpu_time::check_top_modules(options.top_modules)?;
    let mode = match options.by {
        By::Stack if !options.programs.is_all() => {
            return Err(Error::Usage(
                "--program and --exclude-program are for the GPU modes (--by source, \
                 op-name, opcode, module, device): --by stack folds ranges, not programs"
                    .into(),
            ));
        }
        By::Stack => {
            let mut folded = Folded::default();
            let mut folder = StackFolder::new(!options.full_names);
            // Folded stacks are read as they are, and are drawn (--svg) or written again;
            // ranges and stacks cannot be told apart once folded, so they are not mixed.
            let (mut ranges_from, mut stacks_from) = (None, None);
            let mut read_stacks = Folded {
                as_read: true,
                ..Folded::default()
            };
            for path in paths {
                let mut stacks = 0u64;
                let read = source::read_ranges_or_folded(
                    path,
                    source::Options::default(),
                    notes,
                    &mut |r| folder.push(&mut folded, r),
                    Some(&mut |stack: &str, count: f64| {
                        stacks += 1;
                        let node = (stack.split(';'))
                            .fold(Folded::ROOT, |at, frame| read_stacks.child(at, frame));
                        read_stacks.add(node, count);
                        Ok(())
                    }),
                )?;
                if stacks > 0 {
                    stacks_from.get_or_insert(path);
                } else if read > 0 {
                    ranges_from.get_or_insert(path);
                }
                if let (Some(r), Some(s)) = (ranges_from, stacks_from) {
                    return Err(Error::Usage(format!(
                        "{} holds folded stacks and {} ranges: give njx-flamefold one or the \
                         other (fold the ranges first, then give it every folded file)",
                        source::place_of(s),
                        source::place_of(r)
                    )));
                }
            }
            folder
                .finish(&mut folded)
                .map_err(source::at_end_of(paths))?;
            return Ok(if stacks_from.is_some() {
                read_stacks
            } else {
                folded
            });
        }
        by => gpu_mode(by).expect("a GPU mode"),
    };
    let gpu_options = GpuOptions {
        mode,
        top_modules: options.top_modules,
        include_warmup: options.include_warmup,
        programs: options.programs.clone(),
    };
    let time = read_gpu_time(options, mode, inputs, notes)?;
    time.check_within_modules(inputs)?;
    gpu::fold(&time, &gpu_options, &hlo_sources(options, inputs), notes)
}

/// The sources of HLO dumps: the archives among the inputs, then `--hlo`.
fn hlo_sources(options: &Options, inputs: &[PathBuf]) -> Vec<PathBuf> {
    thunk_info::dump_sources(inputs, &options.hlo)
}

/// The GPU time of `inputs` for folding by `mode`; an error where the mode needs HLO
/// dumps and neither the inputs (archives, partial results) nor `--hlo` have them.
fn read_gpu_time(
    options: &Options,
    mode: GpuMode,
    inputs: &[PathBuf],
    notes: &Notes,
) -> Result<GpuTime> {
    let time = gpu_time::read_gpu_time(
        inputs,
        &options.hlo,
        mode == GpuMode::Device,
        mode.needs_hlo(),
        notes,
    )?;
    // A partial of module records alone is a part of a map/reduce, not an answer.
    if !options.partial {
        time.check_has_thunks(inputs)?;
    }
    if mode.needs_hlo() && hlo_sources(options, inputs).is_empty() && !time.has_infos() {
        return Err(Error::Usage(format!(
            "--by {} needs the HLO dumps: pass the nsys-jax archives as inputs or with --hlo",
            options
                .by
                .to_possible_value()
                .expect("no skipped values")
                .get_name()
        )));
    }
    Ok(time)
}

/// The partial result of `inputs` for a GPU mode (`njx-flamefold --partial`): their
/// aggregated GPU time and, for the modes that need them, what the HLO dumps say of each
/// thunk, so the reduce step needs neither the archives nor the dumps.
pub fn partial(options: &Options, inputs: &[PathBuf], notes: &Notes) -> Result<GpuTime> {
    let mode = gpu_mode(options.by).ok_or_else(|| {
        Error::Usage(
            "--partial is for the GPU modes (--by source, op-name, opcode, module, device): \
             folded stacks of --by stack add up as they are"
                .to_string(),
        )
    })?;
    let mut time = read_gpu_time(options, mode, inputs, notes)?;
    if mode.needs_hlo() {
        time.attach_infos(&hlo_sources(options, inputs), notes)?;
    }
    Ok(time)
}

fn gpu_mode(by: By) -> Option<GpuMode> {
    Some(match by {
        By::Stack => return None,
        By::Source => GpuMode::Source,
        By::OpName => GpuMode::OpName,
        By::Opcode => GpuMode::Opcode,
        By::Module => GpuMode::Module,
        By::Device => GpuMode::Device,
    })
}

/// The unit of the counts written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Unit {
    /// Nanoseconds.
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
}

impl Unit {
    /// Nanoseconds per unit.
    pub fn ns(self) -> f64 {
        match self {
            Unit::Ns => 1.0,
            Unit::Us => 1e3,
            Unit::Ms => 1e6,
        }
    }

    /// The unit's short name for people (`ns`, `µs`, `ms`; `--unit us` on the command line).
    pub fn name(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::Us => "µs",
            Unit::Ms => "ms",
        }
    }
}

/// One node of a [`Folded`] tree: a frame under its parent stack.
#[derive(Debug, Clone)]
struct Node {
    frame: u32,
    /// Nanoseconds spent in exactly this stack (not in deeper ones).
    weight: f64,
}

/// A tree of stacks with the time spent in each, frames interned: memory grows with the
/// number of distinct stacks, not with the input.
#[derive(Debug, Clone)]
pub struct Folded {
    frames: Vec<String>,
    frame_ids: HashMap<String, u32>,
    nodes: Vec<Node>,
    children: HashMap<(u32, u32), u32>,
    /// The weights are counts read from folded stacks, in whatever unit made them, not
    /// nanoseconds: written as they are, whatever the unit asked for.
    pub as_read: bool,
}

impl Default for Folded {
    fn default() -> Self {
        Folded {
            frames: Vec::new(),
            frame_ids: HashMap::new(),
            nodes: vec![Node {
                frame: u32::MAX,
                weight: 0.0,
            }],
            children: HashMap::new(),
            as_read: false,
        }
    }
}

/// A frame name renderers read back unchanged: `;` separates frames and a line ends a
/// stack, so they become `:` and spaces; an empty name becomes `[empty]`.
pub fn clean_frame(name: &str) -> std::borrow::Cow<'_, str> {
    if name.is_empty() {
        return "[empty]".into();
    }
    if !name.contains([';', '\n', '\r']) {
        return name.into();
    }
    name.chars()
        .map(|c| match c {
            ';' => ':',
            '\n' | '\r' => ' ',
            c => c,
        })
        .collect::<String>()
        .into()
}

impl Folded {
    /// The empty stack, parent of every root frame.
    pub const ROOT: u32 = 0;

    /// The stack `node;frame`, created on first use.
    pub fn child(&mut self, node: u32, frame: &str) -> u32 {
        let frame = clean_frame(frame);
        let frame_id = match self.frame_ids.get(frame.as_ref()) {
            Some(&id) => id,
            None => {
                let id = self.frames.len() as u32;
                self.frames.push(frame.to_string());
                self.frame_ids.insert(frame.into_owned(), id);
                id
            }
        };
        let next = self.nodes.len() as u32;
        *self.children.entry((node, frame_id)).or_insert_with(|| {
            self.nodes.push(Node {
                frame: frame_id,
                weight: 0.0,
            });
            next
        })
    }

    /// The stack of `frames` under `node`.
    pub fn path<S: AsRef<str>>(&mut self, node: u32, frames: &[S]) -> u32 {
        frames
            .iter()
            .fold(node, |at, frame| self.child(at, frame.as_ref()))
    }

    /// Adds `ns` nanoseconds to the stack `node`.
    pub fn add(&mut self, node: u32, ns: f64) {
        self.nodes[node as usize].weight += ns;
    }

    /// Adds `ns` nanoseconds to the stack of `frames`.
    pub fn add_path<S: AsRef<str>>(&mut self, frames: &[S], ns: f64) {
        let node = self.path(Self::ROOT, frames);
        self.add(node, ns);
    }

    /// Total nanoseconds over every stack.
    pub fn total_ns(&self) -> f64 {
        self.nodes.iter().map(|n| n.weight).sum()
    }

    /// Number of distinct stacks that hold time.
    pub fn len(&self) -> usize {
        self.nodes.iter().filter(|n| n.weight > 0.0).count()
    }

    /// Whether no stack holds time.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The folded lines, `stack count`: every stack holding time with its time in `unit`
    /// as a whole number ([`Folded::counts`]), sorted by stack; a stack whose count is 0
    /// is left out.
    pub fn lines(&self, unit: Unit) -> Vec<String> {
        let mut out = Vec::new();
        self.write_lines(unit, &mut |line| {
            out.push(line.to_string());
            Ok(())
        })
        .expect("collecting cannot fail");
        out
    }

    /// The count of each stack (by node) as written: whole `unit`s (whole counts for
    /// stacks read as folded, in whatever unit they were written) rounded so that they add
    /// up to the total rounded to the unit ([`round_keeping_total`]). Every reader of
    /// folded stacks takes whole counts (speedscope reads no line with decimals, inferno
    /// truncates them), and the width they draw is the sum: each count rounded on its own
    /// would draw time that is not there, or leave some out.
    pub fn counts(&self, unit: Unit) -> Vec<u64> {
        let weights: Vec<f64> = self.nodes.iter().map(|n| n.weight).collect();
        round_keeping_total(&weights, if self.as_read { 1.0 } else { unit.ns() })
    }

    /// [`Folded::lines`], handed one at a time to `emit` in the same order, holding only
    /// the stack being written: memory follows the number of stacks, not the length of
    /// the lines (a stack 40,000 frames deep has 40,000 lines of up to 40,000 frames).
    ///
    /// Sorted by stack means sorted as strings, which is not plain depth-first order
    /// (`a`, `a-x`, `a;b`: `-` sorts before `;`). Among the children of a stack `P`, a
    /// child `c` contributes its own line `P;c` and the block of its descendants, all
    /// starting `P;c;` (frames hold no `;`, so no other line starts so): ordering these
    /// by the keys `c` and `c;` orders every line below `P`.
    pub fn write_lines(&self, unit: Unit, emit: &mut dyn FnMut(&str) -> Result<()>) -> Result<()> {
        let mut kids: Vec<Vec<u32>> = vec![Vec::new(); self.nodes.len()];
        for (&(parent, _), &child) in &self.children {
            kids[parent as usize].push(child);
        }
        let frame = |n: u32| self.frames[self.nodes[n as usize].frame as usize].as_bytes();
        let semi: &[u8] = b";";
        // (child, its descendants' block rather than its own line), in line order.
        let events = |node: u32| -> Vec<(u32, bool)> {
            let mut ev: Vec<(u32, bool)> = Vec::new();
            for &c in &kids[node as usize] {
                ev.push((c, false));
                if !kids[c as usize].is_empty() {
                    ev.push((c, true));
                }
            }
            ev.sort_unstable_by(|&(a, da), &(b, db)| {
                let ka = frame(a).iter().chain(if da { semi } else { &[] });
                let kb = frame(b).iter().chain(if db { semi } else { &[] });
                ka.cmp(kb)
            });
            ev
        };
        let counts = self.counts(unit);
        let mut path = String::new();
        let mut line = String::new();
        // Per level: its events, the next one, the length of its stack's name.
        type Level = (Vec<(u32, bool)>, usize, usize);
        let mut levels: Vec<Level> = vec![(events(Self::ROOT), 0, 0)];
        while let Some((ev, next, base)) = levels.last_mut() {
            let Some(&(child, descend)) = ev.get(*next) else {
                levels.pop();
                continue;
            };
            *next += 1;
            path.truncate(*base);
            if *base > 0 {
                path.push(';');
            }
            path.push_str(&self.frames[self.nodes[child as usize].frame as usize]);
            if descend {
                let len = path.len();
                levels.push((events(child), 0, len));
                continue;
            }
            let count = counts[child as usize];
            if count > 0 {
                line.clear();
                line.push_str(&path);
                line.push(' ');
                line.push_str(&count.to_string());
                emit(&line)?;
            }
        }
        Ok(())
    }
}

/// Reads a folded file (`stack count` lines; counts may have decimals) into stack →
/// count, summing repeated stacks. Blank lines are skipped; anything else without a
/// count is an error naming the line.
pub fn read_folded(path: &Path) -> Result<BTreeMap<String, f64>> {
    let mut stream = source::open_text(
        path,
        "a folded-stacks text file (`stack count` lines)",
        &crate::output::progress::Progress::none(),
    )?;
    let mut out = BTreeMap::new();
    source::records::read_folded(&stream.place, &mut stream.reader, &mut |stack, count| {
        let sum = out.entry(stack.to_string()).or_insert(0.0);
        *sum += count;
        if !sum.is_finite() {
            return Err(Error::data(
                format!("stack {stack}"),
                "its counts add up past the largest number",
            ));
        }
        Ok(())
    })?;
    Ok(out)
}

/// Pairs two folded files for a differential flame graph: every stack of either with its
/// count before and after (0 where absent), sorted by stack, each side's counts whole and
/// adding up to its total rounded ([`round_keeping_total`]). `normalize` scales the
/// counts before so both files have the same total, as `inferno-diff-folded -n`.
pub fn diff(before: &Path, after: &Path, normalize: bool) -> Result<Vec<(String, u64, u64)>> {
    let a = read_folded(before)?;
    let b = read_folded(after)?;
    let scale = if normalize {
        let (ta, tb): (f64, f64) = (a.values().sum(), b.values().sum());
        for (total, path) in [(ta, before), (tb, after)] {
            if !total.is_finite() || total == 0.0 {
                return Err(Error::data(
                    crate::source::place_of(path),
                    format!("--normalize: its counts add up to {total}: nothing to scale by"),
                ));
            }
        }
        if ta > 0.0 { tb / ta } else { 1.0 }
    } else {
        1.0
    };
    let mut stacks: Vec<&String> = a.keys().chain(b.keys()).collect();
    stacks.sort_unstable();
    stacks.dedup();
    // Each side's counts whole, adding up to its total rounded (`round_keeping_total`):
    // readers take whole counts and draw their sums.
    let side = |counts: &BTreeMap<String, f64>, scale: f64, path: &Path| -> Result<Vec<u64>> {
        let values: Vec<f64> = stacks
            .iter()
            .map(|s| counts.get(*s).copied().unwrap_or(0.0) * scale)
            .collect();
        // Counts are written as integers: one past u64 cannot be written.
        if let Some((s, v)) = stacks
            .iter()
            .zip(&values)
            .find(|(_, v)| v.round() >= u64::MAX as f64)
        {
            return Err(Error::data(
                crate::source::place_of(path),
                format!(
                    "stack {s}: its count {} is past the largest integer count",
                    v.round()
                ),
            ));
        }
        Ok(round_keeping_total(&values, 1.0))
    };
    let x = side(&a, scale, before)?;
    let y = side(&b, 1.0, after)?;
    Ok(stacks
        .into_iter()
        .zip(x.into_iter().zip(y))
        .map(|(s, (x, y))| (s.clone(), x, y))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_never_hold_separators() {
        assert_eq!(clean_frame("a;b\nc"), "a:b c");
        assert_eq!(clean_frame(""), "[empty]");
        assert_eq!(clean_frame("fusion.1"), "fusion.1");
    }

    #[test]
    fn stacks_are_shared_and_sorted() {
        let mut f = Folded::default();
        f.add_path(&["b", "c"], 2e6);
        f.add_path(&["a"], 1e6);
        f.add_path(&["b", "c"], 1.4e6);
        f.add_path(&["b"], 0.0);
        assert_eq!(f.lines(Unit::Ms), vec!["a 1", "b;c 3"]);
        assert_eq!(f.len(), 2);
        assert_eq!(f.total_ns(), 4.4e6);
    }

    // Issue 32: `--unit ms` wrote `1.5`, which speedscope reads no line of and inferno
    // truncates (69,121 ms drawn of 69,388).
    #[test]
    fn counts_are_whole_and_add_up_to_the_total() {
        let mut f = Folded::default();
        for (i, ns) in [400_000.0, 400_000.0, 400_000.0, 1_700_000.0, 42.0]
            .into_iter()
            .enumerate()
        {
            f.add_path(&[format!("s{i}")], ns);
        }
        // 2.900042 ms: 3 ms drawn, the largest fractions rounded up (ties: the first).
        assert_eq!(f.lines(Unit::Ms), vec!["s0 1", "s3 2"]);
        assert_eq!(
            f.lines(Unit::Us),
            vec!["s0 400", "s1 400", "s2 400", "s3 1700"]
        );
        let ns = f.lines(Unit::Ns);
        assert_eq!(ns.len(), 5);
        assert!(ns.contains(&"s4 42".to_string()));
        // A thunk shared among three stacks: its 1000 ns, not 999.
        let mut f = Folded::default();
        for s in ["a", "b", "c"] {
            f.add_path(&[s], 1000.0 / 3.0);
        }
        assert_eq!(f.lines(Unit::Ns), vec!["a 334", "b 333", "c 333"]);
        // Read counts with decimals: whole, their total kept.
        let mut f = Folded {
            as_read: true,
            ..Folded::default()
        };
        f.add_path(&["x"], 2.0);
        f.add_path(&["x", "y"], 1.75);
        assert_eq!(f.lines(Unit::Ms), vec!["x 2", "x;y 2"]);
    }
}
