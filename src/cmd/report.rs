//! `njx-report`: the command line of [`crate::report`].

use super::Files;
use crate::error::Result;
use crate::output::open_output;
use crate::report::{Options, Style};
use clap::Parser;
use std::path::PathBuf;

/// The picture of a run on one page: compile time, modules, communication, thunks, kernels.
#[derive(Debug, Parser)]
#[command(
    name = "njx-report",
    version,
    long_version = super::LONG_VERSION,
    after_help = "Input is what the other tools read: nsys-jax archives (also combined ones), \
archives njx-capture wrote, nsys SQLite exports and .nsys-rep reports (HLO dumps with --hlo), \
module and thunk records (njx-export --table modules|thunks), and partial results of \
njx-report --partial. Each input is opened, decompressed and decoded once, and every \
analysis that applies to it is made from that one reading.

The report: a header saying what was read (inputs, profiles, devices, programs, executions, \
the warm-up rule, every note the tools would have said), then one section per table, each \
its tool's own table (so every number is the one that tool prints) cut to --rows lines, with \
the command that gives the whole of it (INPUTS standing for the inputs): compile time by \
category and its top ranges (njx-compile-summary), the steady-state module table \
(njx-modules), wait time, bus bandwidth, hidden communication and stragglers, the last two \
also per program (njx-collectives), top thunks, GPU time by opcode and variability (njx-thunks), and CUDA \
kernels of SQLite exports (njx-kernels). A section that does not apply to the input says why \
in one line. --format json writes one JSON object: `read`, `notes`, and `sections`, each with \
its tool's records (`rows`, its --format json lines) or `absent` (why not).

Map/reduce over many ranks: `njx-report --partial rankN.zip > rankN.part` per rank, then \
`njx-report *.part` reports them all, exactly as one reading of every rank would (kernels \
excepted: they are not carried by partial results).

Examples:
  njx-report rank*.zip
  njx-report --html run.html rank*.zip
  njx-report --format json rank*.zip | jq '.sections.modules.rows[0]'
  njx-report --rows 20 report.sqlite --hlo dump/"
)]
pub struct Args {
    #[command(flatten)]
    /// Inputs, output, quiet (flattened: their own options).
    pub files: Files,

    /// Text for people, or one JSON object.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "text")]
    pub format: Style,

    /// Also write the report as one self-contained HTML page to FILE: every section as a
    /// sortable table, the bandwidth chart and the flame graphs by Python source and by
    /// op_name (zoom and search, as njx-flamefold --svg draws them), a table of contents.
    /// Nothing in it is loaded from elsewhere: it opens offline and can be attached to a
    /// bug report.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Rows of each table shown in the text report.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub rows: usize,

    /// An archive or XLA dump folder (--xla_dump_to) with HLO dumps, besides the archives
    /// among the inputs; one per --hlo, repeatable (--hlo a.zip --hlo b.zip).
    #[arg(long, value_name = "PATH")]
    pub hlo: Vec<PathBuf>,

    /// Write the partial result of these inputs instead of the report: the map step of a
    /// map/reduce over ranks (one gzip-compressed JSON line; give the partials of every rank to
    /// njx-report, or `cat` them into it, for the report of all).
    #[arg(long)]
    pub partial: bool,

    /// The thunk sections and flame graphs keep the largest programs until they cover
    /// this fraction of module time (as njx-thunks and njx-flamefold do).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.99)]
    pub top_modules: f64,

    /// The program whose executions make the step (its HLO module name, or its key: a
    /// fingerprint), instead of the one with the most compute time in steady state.
    #[arg(long, value_name = "PROGRAM")]
    pub step_program: Option<String>,

    /// Change a threshold of the findings' rules, NAME=VALUE (repeatable), e.g.
    /// gpu-idle.gap-ms=500 for nsys's gpu_gaps default; docs/findings.md lists the names
    /// and defaults, and a wrong name lists them too.
    #[arg(long, value_name = "NAME=VALUE")]
    pub threshold: Vec<String>,

    /// The programs the module, collective and thunk sections and flame graphs are for.
    #[command(flatten)]
    pub programs: super::ProgramArgs,
}

impl Args {
    /// The report these options ask for.
    pub fn into_options(&self) -> Result<Options> {
        use std::io::IsTerminal;
        // Read on the terminal, the report's header lists the notes just above.
        let on_terminal = self.files.output.is_none() && std::io::stdout().is_terminal();
        Ok(Options {
            style: self.format,
            rows: self.rows,
            hlo: self.hlo.clone(),
            partial: self.partial,
            top_modules: self.top_modules,
            programs: self.programs.filter(),
            each_note: !on_terminal,
            thresholds: crate::report::findings::Thresholds::parse(&self.threshold)?,
            step_program: self.step_program.clone(),
        })
    }
}

/// Runs `njx-report`.
pub fn run(args: &Args) -> Result<()> {
    let options = args.into_options()?;
    let inputs = args.files.inputs_or_stdin();
    if let Some(page) = &args.html
        && (page.as_os_str() == "-" || Some(page) == args.files.output.as_ref())
    {
        return Err(crate::error::Error::Usage(format!(
            "--html {}: the page needs a file of its own (not stdout, not -o's)",
            page.display()
        )));
    }
    args.files
        .check_outputs(&[("--html", args.html.as_deref())])?;
    let mut out = open_output(args.files.output.as_deref(), &inputs)?;
    let mut page = args
        .html
        .as_deref()
        .map(|p| open_output(Some(p), &inputs))
        .transpose()?;
    let notes = super::notes_and_progress("njx-report", args.files.quiet, &inputs, Some(&mut out));
    let html = page.as_mut().map(|p| p as &mut dyn std::io::Write);
    crate::report::run(&options, &inputs, &mut out, html, &notes)?;
    if let Some(page) = page {
        page.finish()?;
    }
    out.finish()
}
