//! `njx-diff`: what got faster or slower between two runs, with a confidence interval on
//! every change and an exit code a CI job gates on.
//!
//! Each side is read once into its own aggregate of the samples of every key
//! ([`side::Side`], a partial result itself, so a side can be reduced from the partials
//! of many ranks); the two are settled (warm-up left out as njx-modules decides it),
//! matched and compared ([`compare`]), and written ([`write`]).
//!
//! The statistics (the rule docs/diff.md states): executions (and ranks) are the samples;
//! each key's change is Welch's t on the log of the ratio of the two values (the variance
//! of each log-mean by the delta method, the degrees of freedom by Welch–Satterthwaite),
//! so the interval is of the relative change and is not symmetric; a side with fewer than
//! `--min-samples` samples gives no interval and is never significant; the p-values of
//! every key compared are adjusted by Benjamini–Hochberg, and a change is significant when
//! its q-value is at most `--alpha` and it is at least `--min-change` percent. Comparing a
//! run with itself gives no change at all (p = 1 for every key).
//!
//! The files, one job each:
//! - `side.rs`: one side's samples per key, from records, partial results or profiles;
//! - `kernels.rs`: the kernel side (CUDA kernels of SQLite exports, not executions);
//! - `compare.rs`: matching, the intervals, false discoveries, the whole step;
//! - `write.rs`: the table, records, the differential folded stacks and the gate.

mod compare;
mod kernels;
mod side;
mod write;

pub use compare::{Matched, Rules, Total};
pub use side::{PARTIAL, Side};
pub use write::Gate;

use crate::derived::executions::{Hlo, KeyBy};
use crate::error::{Error, Result};
use crate::output::Format;
use crate::output::notes::Notes;
use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::PathBuf;

/// What is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum By {
    /// Each XLA module's steady-state execution time (GPU time from first to last thunk,
    /// as njx-modules), keyed by module name.
    Program,
    /// Each HLO instruction's thunk time per module execution, keyed MODULE/INSTRUCTION.
    Instruction,
    /// Each collective kind and message size (`KIND SIZE`): time per execution and bus
    /// bandwidth.
    Collective,
    /// CUDA kernels of SQLite exports and reports, by short name: total time.
    Kernel,
    /// Compile time per pass and range name, as njx-compile-summary --by name --passes
    /// attributes it: total time.
    CompilePass,
}

impl By {
    /// Its command-line name.
    pub fn name(self) -> &'static str {
        match self {
            By::Program => "program",
            By::Instruction => "instruction",
            By::Collective => "collective",
            By::Kernel => "kernel",
            By::CompilePass => "compile-pass",
        }
    }
}

/// What `njx-diff` compares and how it says it.
#[derive(Debug, Clone)]
pub struct Options {
    /// What is compared.
    pub by: By,
    /// Table, JSON Lines or CSV.
    pub format: Format,
    /// What decides significance.
    pub rules: Rules,
    /// Exit 3 when a significant slowdown exceeds one of these.
    pub gates: Vec<Gate>,
    /// At most this many rows in the table (records: all).
    pub top: Option<usize>,
    /// Draw the differential flame graph ([`run`]'s `svg`) with this title.
    pub title: String,
    /// Archives or XLA dump folders holding HLO dumps, besides the archives among the
    /// inputs.
    pub hlo: Vec<PathBuf>,
    /// Write the partial result of the (one side's) inputs instead of a comparison.
    pub partial: bool,
    /// The programs compared (`--program`, `--exclude-program`; module names, as njx-diff
    /// keys programs by name): `--by program`, `instruction` and `collective` only.
    pub programs: crate::derived::programs::ProgramFilter,
}

/// What the comparison came to: whether the gate failed (exit 3), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing the gate stops.
    Passed,
    /// A significant slowdown beyond the gate: the message says which.
    Failed(String),
}

/// Reads one side.
pub fn read_side(options: &Options, inputs: &[PathBuf], notes: &Notes) -> Result<Side> {
    if options.by == By::Kernel {
        return kernels::read(inputs, notes);
    }
    let hlo = Hlo {
        dumps: &options.hlo,
        key: KeyBy::Name,
    };
    side::read(options.by, inputs, hlo, notes)
}

/// Writes the partial result of one side's `inputs`.
pub fn partial(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    notes.writes_partial();
    let side = read_side(options, inputs, notes)?;
    crate::derived::partial::write(out, &side)
}

/// Compares `after` with `before`: the comparison to `out`, the differential folded
/// stacks to `folded` (where given), the summary on `notes`; and whether the gate passed.
pub fn run(
    options: &Options,
    before: &[PathBuf],
    after: &[PathBuf],
    out: &mut dyn Write,
    folded: Option<&mut dyn Write>,
    svg: Option<&mut dyn Write>,
    notes: &Notes,
) -> Result<Outcome> {
    if before.is_empty() || after.is_empty() {
        return Err(Error::Usage(
            "njx-diff needs inputs on both sides: BEFORE... --vs AFTER...".into(),
        ));
    }
    if !options.programs.is_all() && matches!(options.by, By::Kernel | By::CompilePass) {
        return Err(Error::Usage(format!(
            "--program and --exclude-program choose XLA programs: for --by program, \
             instruction or collective, not --by {}",
            options.by.name()
        )));
    }
    let sides = [("before", before), ("after", after)].map(|(name, inputs)| {
        notes.progress().phase(&format!("reading the {name} side"));
        read_side(options, inputs, notes)
    });
    let [b, a] = sides;
    let (b, a) = (b?, a?);
    // A name is refused only when neither side has it.
    let read = b.programs().chain(a.programs());
    if let Some(note) = options.programs.check(read)? {
        notes.note(note);
    }
    let (b, a) = (b.settle(&options.programs), a.settle(&options.programs));
    // One side with nothing to compare and the other with something: a broken run (no
    // module records for programs, all warm-up, no communication) is not a pass.
    for (name, s, other, inputs) in [("before", &b, &a, before), ("after", &a, &b, after)] {
        if s.keys.is_empty() && !other.keys.is_empty() {
            return Err(Error::data(
                inputs[0].display().to_string(),
                format!(
                    "the {name} side ({} input{}) has no {} to compare{}, the other has {}",
                    inputs.len(),
                    if inputs.len() == 1 { "" } else { "s" },
                    options.by.name(),
                    if s.warmup > 0 || s.autotuning > 0 {
                        format!(
                            " ({} samples of warm-up and {} of autotuning left out)",
                            s.warmup, s.autotuning
                        )
                    } else {
                        String::new()
                    },
                    other.keys.len()
                ),
            ));
        }
    }
    for (name, s) in [("before", &b), ("after", &a)] {
        let samples: u64 = s.keys.values().map(|k| k.acc.n).sum();
        notes.note(format!(
            "{name}: {} keys, {samples} samples{}{}",
            s.keys.len(),
            if s.warmup > 0 {
                format!(", {} left out as warm-up", s.warmup)
            } else {
                String::new()
            },
            if s.autotuning > 0 {
                format!(", {} of autotuning left out", s.autotuning)
            } else {
                String::new()
            }
        ));
    }
    if options.by == By::Instruction {
        for (name, s) in [("before", &b), ("after", &a)] {
            let blind = s.keys.values().filter(|k| k.signature.is_none()).count();
            if blind > 0 {
                notes.note(format!(
                    "{name}: {blind} of {} instructions without what the dumps say of them \
                     (no dump in their archive, or records): matched by name only",
                    s.keys.len()
                ));
            }
        }
    }
    if matches!(options.by, By::Kernel | By::CompilePass) {
        let count = |s: &side::Settled| s.keys.values().map(|k| k.acc.n).sum::<u64>();
        let (nb, na) = (count(&b), count(&a));
        if nb > 0 && na > 0 && (na as f64 / nb as f64 - 1.0).abs() > 0.05 {
            notes.note(format!(
                "totals follow what each profile holds: {na} {} after against {nb} before; a \
                 longer or shorter capture moves every total",
                if options.by == By::Kernel {
                    "kernels"
                } else {
                    "compilation parts"
                }
            ));
        }
    }
    let compared = compare::compare(options.by, &b, &a, &options.rules);
    let m = compared.matched;
    notes.note(format!(
        "keys: {} matched by name, {} by what the dumps say, {} new, {} gone",
        m.by_name, m.by_dumps, m.new, m.gone
    ));
    write::write(options, &compared, out)?;
    if folded.is_some() || svg.is_some() {
        if let Some(f) = folded {
            write::lines(&write::folded(options.by, &compared, &b, &a), f)?;
        }
        if let Some(svg) = svg {
            let lines = write::svg_lines(options.by, &compared, &b, &a);
            let svg_options = crate::analysis::flamefold::SvgOptions {
                title: options.title.clone(),
                width: 1200,
                count_name: "ns".into(),
                idle: true,
                diff: true,
                full_names: false,
            };
            crate::analysis::flamefold::render_svg(&lines, &svg_options, svg)?;
        }
    }
    let failed: Vec<String> = options
        .gates
        .iter()
        .filter_map(|g| match g.check(&compared) {
            Outcome::Failed(why) => Some(why),
            Outcome::Passed => None,
        })
        .collect();
    Ok(if failed.is_empty() {
        Outcome::Passed
    } else {
        Outcome::Failed(failed.join("; "))
    })
}
