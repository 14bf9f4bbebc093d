//! `njx-collectives`: the command line of [`crate::analysis::collectives`].

use super::IoArgs;
use crate::analysis::collectives::Options;
use crate::error::Result;
use crate::output::{Format, open_output};
use clap::Parser;
use std::path::PathBuf;

/// Collective bandwidth, hidden communication, wait time and stragglers.
#[derive(Debug, Parser)]
#[command(
    name = "njx-collectives",
    version,
    long_version = super::LONG_VERSION,
    after_help = "Input is thunk records (njx-export --table thunks) as JSON Lines or CSV, or \
nsys-jax archives directly (read with clocks aligned). Compute thunks pass by unused.

Tables (steady state unless --include-warmup):
  bandwidth   bus bandwidth per collective and message size: mean and standard error over \
collective instances of the fastest device's bandwidth (the other devices' times include \
waiting), as nsys-jax reports it
  hidden      share of communication time hidden behind compute, per collective and overall
  wait        per program: in each collective instance, longest minus shortest exposed time \
over devices, summed per module execution; mean ± std over executions and as a share of the \
module's GPU time (first thunk start to last thunk end)
  stragglers  per device: how often it was the last to arrive at a collective (shortest \
exposed time: the others waited for it) and its mean lateness when it was

Tables on clocks aligned across devices (--table only; from thunk records or profiles, not \
partial results), the Analysis notebook's communication cells:
  instances       each collective instance over two or more devices: wait = last end − \
first start − the fastest device's full time, that wait ÷ the fastest time, message size, \
the last device to arrive and by how much
  wait-quantiles  per collective: min, 25/50/75/90/99 % (linear interpolation) and max of \
the wait, its mean, and quantiles of wait ÷ fastest
  wait-histogram  per collective: instances per 1-2-5 bin of wait (ns), empty bins between \
included
  lateness        per program, collective and device: the device's start minus the first \
device's, mean over executions, at the collective's mean time within the module (which \
device is late, and when)

Examples:
  njx-export --table thunks rank*.zip | njx-collectives
  njx-export --table thunks rank*.zip | njx-collectives --records \\
    | jq .busbw_gbps
  njx-collectives --plot busbw.svg rank*.zip
  njx-collectives --table wait-quantiles --wait-plot wait.svg \\
    --lateness-plot late.svg rank*.zip
  njx-export --table thunks rank*.zip \\
    | njx-collectives --table lateness --format csv > late.csv"
)]
pub struct Args {
    #[command(flatten)]
    /// Inputs, output and format (flattened: their own options).
    pub io: IoArgs,

    /// Write one collective record per communication thunk execution (thunk fields plus
    /// algbw_gbps and busbw_gbps) instead of the report.
    #[arg(long)]
    pub records: bool,

    /// Count initialisation executions too.
    #[arg(long)]
    pub include_warmup: bool,

    /// Also draw bus bandwidth against message size (log-log, ± standard error) into
    /// FILE.svg.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// Also draw the wait distributions into FILE.svg: a box plot of the wait per
    /// collective, and each instance's wait ÷ the fastest device's time against message
    /// size (clocks aligned).
    #[arg(long, value_name = "FILE", conflicts_with = "records")]
    pub wait_plot: Option<PathBuf>,

    /// Also draw lateness along the module timeline into FILE.svg: per program (the four
    /// with most collectives), the eight latest devices' lateness at each collective and
    /// the band of all devices (clocks aligned).
    #[arg(long, value_name = "FILE", conflicts_with = "records")]
    pub lateness_plot: Option<PathBuf>,

    /// Write the partial result of these inputs instead of the report: the map step of a
    /// map/reduce over ranks (one gzip-compressed JSON line; give the partials of every rank to
    /// njx-collectives, or `cat` them into it, for the report of all).
    #[arg(long, conflicts_with_all = ["records", "plot", "wait_plot", "lateness_plot"])]
    pub partial: bool,

    /// How programs are keyed across profiles: `fingerprint` (the HLO fingerprint, as
    /// nsys-jax keys them) or `name` (the module name: programs that ranks compiled
    /// differently are analysed together; their collective sequences are compared and
    /// said on stderr).
    #[arg(long, value_enum, value_name = "KEY", default_value = "fingerprint")]
    pub program_key: crate::derived::executions::KeyBy,

    /// Write one table only: of the report, `bandwidth`, `hidden`, `hidden-by-program`,
    /// `wait`, `stragglers` or `stragglers-by-program` (with --format csv, a CSV of that
    /// table's columns, in the order of its JSON records; without --table the six share
    /// one CSV with a `table` column); on aligned clocks, `instances`, `wait-quantiles`,
    /// `wait-histogram` or `lateness`.
    #[arg(long, value_enum, value_name = "TABLE", conflicts_with_all = ["records", "partial"])]
    pub table: Option<crate::analysis::collectives::Part>,

    /// The programs the tables are for.
    #[command(flatten)]
    pub programs: super::ProgramArgs,
}

impl Args {
    /// The report these options ask for.
    pub fn into_options(&self) -> Options {
        Options {
            records: self.records,
            include_warmup: self.include_warmup,
            plot: self.plot.clone(),
            format: self.io.format.unwrap_or(if self.records {
                Format::Json
            } else {
                Format::Table
            }),
            program_key: self.program_key,
            table: self.table,
            wait_plot: self.wait_plot.clone(),
            lateness_plot: self.lateness_plot.clone(),
            partial: self.partial,
            programs: self.programs.filter(),
        }
    }
}

/// Runs `njx-collectives`.
pub fn run(args: &Args) -> Result<()> {
    let options = args.into_options();
    let inputs = args.io.inputs_or_stdin();
    args.io.check_outputs(&[
        ("--plot", args.plot.as_deref()),
        ("--wait-plot", args.wait_plot.as_deref()),
        ("--lateness-plot", args.lateness_plot.as_deref()),
    ])?;
    let mut out = open_output(args.io.output(), &inputs)?;
    let notes = super::notes_and_progress(
        "njx-collectives",
        args.io.files.quiet,
        &inputs,
        Some(&mut out),
    );
    for plot in [&options.plot, &options.wait_plot, &options.lateness_plot]
        .into_iter()
        .flatten()
    {
        // Checked now, like the output (an input, a missing folder); written at the end.
        drop(open_output(Some(plot), &inputs)?);
    }
    crate::analysis::collectives::run(&options, &inputs, &mut out, &notes)?;
    out.finish()
}
