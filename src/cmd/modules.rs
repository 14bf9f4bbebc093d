//! `njx-modules`: the command line of [`crate::analysis::modules`].

use super::IoArgs;
use crate::analysis::modules::Options;
use crate::error::Result;
use crate::output::{Format, open_output};
use clap::Parser;

/// Steady-state XLA module execution summary: executions, thunks and GPU time per program.
#[derive(Debug, Parser)]
#[command(
    name = "njx-modules",
    version,
    long_version = super::LONG_VERSION,
    after_help = "Input is module records (njx-export --table modules) as JSON Lines or CSV, or \
nsys-jax archives directly. One line per program (the HLO fingerprint, the same on every rank), \
largest total GPU time first: executions, thunks per execution and GPU time per execution as \
mean ± sample standard deviation, and the program's share of the total. Initialisation \
executions (nsys-jax's warm-up rule: the first execution of a program whose compilation was \
profiled, one more when the profile has communication) are left out unless --include-warmup, \
and autotuning executions (program `unknown`) unless --include-autotuning.

Map/reduce over many ranks: `njx-modules --partial rankN.zip > rankN.part` per rank (cluster \
job array, make -j), then `njx-modules *.part` (or `cat *.part | njx-modules`) gives exactly \
the summary of `njx-modules rank*.zip`; warm-up is decided over all the partials.

Examples:
  njx-export --table modules rank*.zip | njx-modules
  njx-modules --format json rank0.zip | jq .dur_mean_ns"
)]
pub struct Args {
    #[command(flatten)]
    /// Inputs, output and format (flattened: their own options).
    pub io: IoArgs,

    /// Count initialisation executions too.
    #[arg(long)]
    pub include_warmup: bool,

    /// Count autotuning executions too (program `unknown`: modules XLA's autotuner
    /// extracts and runs while compiling, as nsys-jax's `remove_autotuning_detail` drops).
    #[arg(long)]
    pub include_autotuning: bool,

    /// Write the partial result of these inputs instead of the summary: the map step of a
    /// map/reduce over ranks (one gzip-compressed JSON line; give the partials of every rank to
    /// njx-modules, or `cat` them into it, for the summary of all).
    #[arg(long)]
    pub partial: bool,

    /// How programs are keyed across profiles: `fingerprint` (the HLO fingerprint, as
    /// nsys-jax keys them) or `name` (the module name: programs that ranks compiled
    /// differently are analysed together; their collective sequences are compared and
    /// said on stderr).
    #[arg(long, value_enum, value_name = "KEY", default_value = "fingerprint")]
    pub program_key: crate::derived::executions::KeyBy,
}

impl Args {
    /// The summary these options ask for.
    pub fn into_options(&self) -> Options {
        Options {
            include_warmup: self.include_warmup,
            include_autotuning: self.include_autotuning,
            format: self.io.format.unwrap_or(Format::Table),
            program_key: self.program_key,
            partial: self.partial,
        }
    }
}

/// Runs `njx-modules`.
pub fn run(args: &Args) -> Result<()> {
    let options = args.into_options();
    let inputs = args.io.inputs_or_stdin();
    args.io.check_outputs(&[])?;
    let mut out = open_output(args.io.output(), &inputs)?;
    let notes =
        super::notes_and_progress("njx-modules", args.io.files.quiet, &inputs, Some(&mut out));
    crate::analysis::modules::run(&options, &inputs, &mut out, &notes)?;
    out.finish()
}
