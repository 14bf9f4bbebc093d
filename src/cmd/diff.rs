//! `njx-diff`: the command line of [`crate::diff`].

use crate::diff::{By, Gate, Options, Outcome, Rules};
use crate::error::{Error, Result};
use crate::output::{Format, open_output};
use clap::Parser;
use std::path::PathBuf;

/// What got faster or slower between two runs, with a confidence interval on every change.
#[derive(Debug, Parser)]
#[command(
    name = "njx-diff",
    version,
    long_version = super::LONG_VERSION,
    after_help = "Each side is any input the other tools read, several files per side (ranks): \
nsys-jax archives (also combined ones), archives njx-capture wrote, nsys SQLite exports and \
.nsys-rep reports (HLO dumps with --hlo), module and thunk records (njx-export --table \
modules|thunks; ranges for compile-pass, kernels for kernel), and partial results of \
njx-diff --by … --partial.

One row per key on either side, largest change first: the value before and after (mean per \
execution for program and collective, time per module execution for instruction, total for \
kernel and compile-pass), the change, its interval (level 1 - --alpha), the q-value, the samples on each side \
and the status: slower, faster, same, new or gone. Records (--format json|csv) have the \
fields key, before_key, matched_by, before_ns, after_ns, before_count, after_count, change_ns, \
change_pct, ci_low_pct, ci_high_pct, p_value, q_value, significant, status, \
before_busbw_gbps, after_busbw_gbps.

Statistics: executions (and ranks) are the samples, warm-up executions left out as \
njx-modules decides them. Each change is Welch's t on the log of the ratio after/before (the \
variance of each side's log-mean by the delta method, Welch-Satterthwaite degrees of \
freedom), so the interval is of the relative change; a side with fewer than --min-samples \
samples gives no interval and is never significant. The p-values of all keys are adjusted \
for false discoveries (Benjamini-Hochberg): a change is significant when its q-value is at \
most --alpha and it is at least --min-change percent. A run compared with itself shows no \
change at all.

Matching across recompiles: programs by module name; instructions by name where the dumps \
agree it is one instruction (opcode and shape), otherwise by what the dumps say (opcode, \
op_name, source line and shape; then without the source line): a recompilation renumbers \
fusion.123 to fusion.131. The counts of each way are said on \
stderr.

Exit status: 0, or 3 when --fail-if-slower finds a significant slowdown beyond its \
percentage (after the output is written); 1 for bad input, 2 for bad usage.

--findings compares njx-report's findings instead: the step of each run, then the findings \
that appeared, changed (their saving per step), went or stayed, matched by rule, key and \
device; records have the fields change, rule, key, device, before_severity, after_severity, \
before_saving_ns, after_saving_ns, title.

Map/reduce over many ranks: `njx-diff --by program --partial before/rank*.zip > before.part` \
(and the same for after), then `njx-diff before.part --vs after.part`.

Examples:
  njx-diff before/rank*.zip --vs after/rank*.zip
  njx-diff --by instruction --top 20 before.zip --vs after.zip
  njx-diff --by collective --format json a.zip --vs b.zip | jq .change_pct
  njx-diff --fail-if-slower 5 --fail-if-slower total:2 a/*.zip --vs b/*.zip
  njx-diff --by instruction --svg d.svg --folded d.folded a.zip --vs b.zip
  njx-diff --findings before/rank*.zip --vs after/rank*.zip"
)]
pub struct Args {
    /// The inputs of the run before (the baseline); none reads stdin.
    #[arg(value_name = "BEFORE")]
    pub before: Vec<PathBuf>,

    /// The inputs of the run after (the change).
    #[arg(long, value_name = "AFTER", num_args = 1.., required_unless_present = "partial")]
    pub vs: Vec<PathBuf>,

    /// What is compared.
    #[arg(long, value_enum, default_value = "program")]
    pub by: By,

    /// Output format [default: table]; parquet (typed columns, docs/formats.md) needs -o
    /// FILE.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// Write to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Say nothing on stderr but errors.
    #[arg(short, long)]
    pub quiet: bool,

    /// Overwrite output files that look like inputs.
    #[arg(short, long, help = super::FORCE_HELP)]
    pub force: bool,

    /// The table on a terminal: keep every column whole (wide keys are otherwise cut to
    /// the terminal's width with `…`).
    #[arg(long)]
    pub wide: bool,

    /// Exit 3 when a significant slowdown exceeds PCT percent: of any key (`5`), or of the
    /// whole step, the sum of every key's value (`total:2`). Repeatable.
    #[arg(long, value_name = "PCT")]
    pub fail_if_slower: Vec<Gate>,

    /// The false-discovery rate of the significant changes (and 1 − the intervals'
    /// level).
    #[arg(long, value_name = "RATE", default_value_t = 0.05,
          value_parser = fraction)]
    pub alpha: f64,

    /// The least change, percent, that is called slower or faster.
    #[arg(long, value_name = "PCT", default_value_t = 1.0)]
    pub min_change: f64,

    /// The fewest samples a side needs for an interval (at least 2).
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u64).range(2..))]
    pub min_samples: u64,

    /// Rows of the table (0: all); records are all written.
    #[arg(long, value_name = "N", default_value_t = 40)]
    pub top: usize,

    /// Also write the differential folded stacks (`stack before after`, flamegraph.pl's
    /// difffolded lines, the table's values in whole ns, each side adding up to its total)
    /// to FILE, for a differential flame graph.
    #[arg(long, value_name = "FILE")]
    pub folded: Option<PathBuf>,

    /// Also draw the differential flame graph of the comparison as an SVG to FILE (red for
    /// more time after, blue for less; zoom and search), from the --folded stacks.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,

    /// An archive or XLA dump folder with HLO dumps, besides the archives among the inputs;
    /// one per --hlo, repeatable.
    #[arg(long, value_name = "PATH")]
    pub hlo: Vec<PathBuf>,

    /// Write the partial result of the inputs (one side, no --vs) instead of a comparison:
    /// the map step of a map/reduce over ranks.
    #[arg(long, conflicts_with_all = ["vs", "fail_if_slower", "folded", "svg"])]
    pub partial: bool,

    /// Compare the two runs' findings (njx-report's) instead: the step of each, and the
    /// findings that appeared, went, or whose saving per step changed, matched by rule, key
    /// and device. Sides may be partial results of njx-report --partial.
    #[arg(long, conflicts_with_all = ["partial", "fail_if_slower", "folded", "svg", "by"])]
    pub findings: bool,

    /// With --findings: change a threshold of the findings' rules, NAME=VALUE (as
    /// njx-report's --threshold).
    #[arg(long, value_name = "NAME=VALUE", requires = "findings")]
    pub threshold: Vec<String>,

    /// The programs compared (module names: njx-diff keys programs by name).
    #[command(flatten)]
    pub programs: super::ProgramArgs,
}

/// A number in (0, 1).
fn fraction(s: &str) -> std::result::Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0 && *v < 1.0)
        .ok_or_else(|| format!("`{s}`: a number between 0 and 1 (0.05)"))
}

impl Args {
    /// The comparison these options ask for.
    pub fn into_options(&self) -> Result<Options> {
        if self
            .fail_if_slower
            .iter()
            .filter(|g| matches!(g, Gate::Key(_)))
            .count()
            > 1
            || self
                .fail_if_slower
                .iter()
                .filter(|g| matches!(g, Gate::Total(_)))
                .count()
                > 1
        {
            return Err(Error::Usage(
                "--fail-if-slower: at most one PCT and one total:PCT".into(),
            ));
        }
        if !self.min_change.is_finite() || self.min_change < 0.0 {
            return Err(Error::Usage(format!(
                "--min-change {}: a percentage, 0 or more",
                self.min_change
            )));
        }
        Ok(Options {
            by: self.by,
            format: self.format.unwrap_or(Format::Table),
            rules: Rules {
                alpha: self.alpha,
                min_change: self.min_change,
                min_samples: self.min_samples,
            },
            gates: self.fail_if_slower.clone(),
            top: (self.top > 0).then_some(self.top),
            title: format!("njx-diff --by {}: red is slower after", self.by.name()),
            hlo: self.hlo.clone(),
            partial: self.partial,
            programs: self.programs.filter(),
        })
    }
}

/// What `njx-diff` ended with: the exit status beyond 0/1/2.
pub enum Ended {
    /// Exit 0.
    Passed,
    /// Exit 3, with the reason said on stderr.
    GateFailed(String),
}

/// Runs `njx-diff`.
pub fn run(args: &Args) -> Result<Ended> {
    let options = args.into_options()?;
    let files = super::Files {
        inputs: args.before.clone(),
        output: args.output.clone(),
        quiet: args.quiet,
        force: args.force,
        wide: args.wide,
    };
    let before = files.inputs_or_stdin();
    super::parquet_to_a_file(args.format, files.output.as_deref())?;
    files.check_outputs(&[
        ("--folded", args.folded.as_deref()),
        ("--svg", args.svg.as_deref()),
    ])?;
    let mut read = before.clone();
    read.extend(args.vs.iter().cloned());
    read.extend(args.hlo.iter().cloned());
    let mut out = open_output(args.output.as_deref(), &read)?;
    for (what, f) in [("--folded", &args.folded), ("--svg", &args.svg)] {
        if let Some(f) = f
            && (f.as_os_str() == "-"
                || Some(f) == args.output.as_ref()
                || (args.folded.is_some() && args.folded == args.svg))
        {
            return Err(Error::Usage(format!(
                "{what} {}: needs a file of its own (not stdout, not another output's)",
                f.display()
            )));
        }
    }
    let mut folded = args
        .folded
        .as_deref()
        .map(|p| open_output(Some(p), &read))
        .transpose()?;
    let mut svg = args
        .svg
        .as_deref()
        .map(|p| open_output(Some(p), &read))
        .transpose()?;
    let notes = super::notes_and_progress("njx-diff", args.quiet, &read, Some(&mut out));
    if args.findings {
        let t = crate::report::findings::Thresholds::parse(&args.threshold)?;
        let b = crate::report::findings_of(&before, &args.hlo, &t, &notes)?;
        let a = crate::report::findings_of(&args.vs, &args.hlo, &t, &notes)?;
        let changes = crate::report::findings::diff::compare(&b.1, &a.1);
        crate::report::findings::diff::write(options.format, (&b.0, &a.0), &changes, &mut out)?;
        out.finish()?;
        return Ok(Ended::Passed);
    }
    if options.partial {
        crate::diff::partial(&options, &before, &mut out, &notes)?;
        out.finish()?;
        return Ok(Ended::Passed);
    }
    let f = folded.as_mut().map(|p| p as &mut dyn std::io::Write);
    let s = svg.as_mut().map(|p| p as &mut dyn std::io::Write);
    let outcome = crate::diff::run(&options, &before, &args.vs, &mut out, f, s, &notes)?;
    for o in [folded, svg].into_iter().flatten() {
        o.finish()?;
    }
    out.finish()?;
    Ok(match outcome {
        Outcome::Passed => Ended::Passed,
        Outcome::Failed(why) => Ended::GateFailed(why),
    })
}

/// The exit status of `njx-diff`: [`super::finish`]'s, and 3 when the gate failed.
pub fn finish(result: Result<Ended>) -> std::process::ExitCode {
    match result {
        Ok(Ended::GateFailed(why)) => {
            crate::output::notes::to_stderr(&format!("njx-diff: {why}"));
            std::process::ExitCode::from(3)
        }
        Ok(Ended::Passed) => super::finish("njx-diff", Ok(())),
        Err(e) => super::finish("njx-diff", Err(e)),
    }
}
