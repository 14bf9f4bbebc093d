//! `njx-compile-summary`: the command line of [`crate::analysis::compile`].

use super::IoArgs;
use crate::analysis::compile::{Group, Options};
use crate::error::Result;
use crate::output::{Format, open_output};
use clap::Parser;

/// XLA compilation time breakdown, parallel-compilation aware.
#[derive(Debug, Parser)]
#[command(
    name = "njx-compile-summary",
    version,
    long_version = super::LONG_VERSION,
    after_help = "Default: one block per XlaCompile range, as XLA's NVTX compilation-profiling \
guide prints it:
  Compilation: <XlaCompile range name>: <seconds>
   <category> <percent>% <seconds>
largest first; XlaPass and XlaPassPipeline ranges count as one category, XlaPasses, unless \
--passes is given. --total aggregates over every compilation in the input instead (self time \
per range name, as nsys-jax's generate_compilation_statistics).

Input is range records or anything njx-export reads; the --xla-compile preparation of \
njx-ranges is applied when the input has not had it.

Examples:
  njx-export output_nvtx_pushpop_trace.csv | njx-compile-summary
  njx-export rank*.zip | njx-ranges --xla-compile | njx-compile-summary --total
  njx-compile-summary --total --by category --passes --format json rank0.zip"
)]
pub struct Args {
    #[command(flatten)]
    /// Inputs, output and format (flattened: their own options).
    pub io: IoArgs,

    /// Statistics over all compilations instead of one block per compilation.
    #[arg(long)]
    pub total: bool,

    /// Keep every XlaPass and XlaPassPipeline name instead of one XlaPasses line.
    #[arg(long)]
    pub passes: bool,

    /// Group by category or by name [default: category per compilation, name with --total].
    #[arg(long, value_enum)]
    pub by: Option<Group>,

    /// Show at most N lines (per compilation without --total).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,

    /// Show the largest lines until together they cover PERCENT of the time, then stop
    /// (a cumulative cut, as XLA's guide prints: `--cover 90` leaves out the small tail;
    /// `--cover 5` shows one line when the largest alone is 5 % or more). `--threshold`
    /// is its older name.
    #[arg(long, visible_alias = "threshold", value_name = "PERCENT")]
    pub cover: Option<f64>,
}

impl Args {
    /// The report these options ask for.
    pub fn into_options(&self) -> Options {
        Options {
            total: self.total,
            passes: self.passes,
            by: self.by,
            top: self.top,
            threshold: self.cover,
            format: self.io.format.unwrap_or(Format::Table),
        }
    }
}

/// Runs `njx-compile-summary`.
pub fn run(args: &Args) -> Result<()> {
    let options = args.into_options();
    // Refused before the output is opened.
    options.check()?;
    let inputs = args.io.inputs_or_stdin();
    args.io.check_outputs(&[])?;
    let mut out = open_output(args.io.output(), &inputs)?;
    let notes = super::notes_and_progress(
        "njx-compile-summary",
        args.io.files.quiet,
        &inputs,
        Some(&mut out),
    );
    crate::analysis::compile::run(&options, &inputs, &mut out, &notes)?;
    out.finish()
}
