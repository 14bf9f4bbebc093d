//! `njx-pgle`: the command line of [`crate::analysis::pgle`].

use super::Files;
use crate::analysis::pgle::Options;
use crate::error::Error;
use crate::error::Result;
use crate::output::{Format, open_output};
use clap::Parser;
use std::path::PathBuf;

/// Profiles for XLA's profile-guided latency estimator from nsys-jax archives: one
/// <fingerprint>.pbtxt per program, as nsys-jax's pgle_costs analysis writes them.
#[derive(Debug, Parser)]
#[command(
    name = "njx-pgle",
    version,
    long_version = super::LONG_VERSION,
    after_help = "Input is nsys-jax archives (or their extracted folders, nsys-jax-combine \
archives), whose HLO dumps give the scheduling names, or thunk and module records \
(njx-export --table thunks|modules; from an nsys SQLite export, whose programs are keyed by \
fingerprint only with --hlo: njx-export --table thunks --hlo DUMPS report.sqlite), or partial \
results of njx-pgle --partial.

For every program with a fingerprint (the HLO frontend attribute fingerprint_before_lhs, \
which XLA looks profiles up by) it writes DIR/<fingerprint>.pbtxt in the text format of \
XLA's ProfiledInstructionsProto: one line `costs { name: \"…\" cost_us: … }` per instruction \
that ran. The cost is that of nsys-jax's pgle_costs analysis, over the steady-state \
executions (--include-warmup adds initialisation) on every device read: the full GPU time \
(exposed plus hidden), the slowest execution of a communication thunk and the fastest of a \
compute thunk. Times are integer nanoseconds, so cost_us is exact, with three decimals.

The name is the instruction's scheduling_name from the program's HLO dump, the name the \
latency-hiding scheduler looks up; where the dump has none (XLA before the field, whose \
estimator looked up instruction names), and for record inputs, which carry no dump, the \
instruction name (said on stderr). Programs without a fingerprint (XLA older than the \
attribute) and autotuning executions get no file (said on stderr). Each file is written \
under a temporary name and renamed into place. A table of the files written goes to stdout \
(--format json|csv for records).

Give the profile to XLA with \
XLA_FLAGS=--xla_gpu_pgle_profile_file_or_directory_path=DIR (a folder: XLA picks the file of \
the program it compiles by its fingerprint).

Examples:
  njx-pgle -o pgle rank*.zip
  njx-export --table thunks rank*.zip | njx-pgle -o pgle
  njx-pgle --partial rank0.zip > rank0.pgle; cat rank*.pgle | njx-pgle -o pgle
  XLA_FLAGS=--xla_gpu_pgle_profile_file_or_directory_path=pgle python train.py"
)]
pub struct Args {
    /// Input files; none or `-` reads stdin. Compressed inputs (gzip, xz) are recognised by
    /// their first bytes, whatever their name.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,

    /// Write the profiles into folder DIR (made if missing; files of other programs in it
    /// are left alone).
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,

    /// Say nothing on stderr but errors: no notes of what was left out, repaired or
    /// assumed (names that fell back, programs without a fingerprint, warm-up…).
    #[arg(short, long)]
    pub quiet: bool,

    /// Overwrite output files that look like inputs.
    #[arg(short, long, help = super::FORCE_HELP)]
    pub force: bool,

    /// Format of the table of files written on stdout [default: table]; not parquet,
    /// which needs a file.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// Count initialisation executions (warm-up) too.
    #[arg(long)]
    pub include_warmup: bool,

    /// Write the partial result of these inputs on stdout instead of profiles: the map
    /// step of a map/reduce over ranks (give the partials of every rank to njx-pgle, or
    /// `cat` them into it, for the profiles of all; they carry the scheduling names).
    #[arg(long, conflicts_with = "output")]
    pub partial: bool,
}

impl Args {
    /// What these options ask for.
    pub fn into_options(&self) -> Options {
        Options {
            include_warmup: self.include_warmup,
            dir: self.output.clone(),
            partial: self.partial,
            format: self.format.unwrap_or(Format::Table),
        }
    }
}

/// Runs `njx-pgle`.
pub fn run(args: &Args) -> Result<()> {
    let options = args.into_options();
    let files = Files {
        inputs: args.inputs.clone(),
        // The folder the profiles go to, checked as every output is; the table of files
        // written goes to stdout.
        output: args.output.clone(),
        quiet: args.quiet,
        force: args.force,
        wide: false,
    };
    if args.format == Some(Format::Parquet) {
        return Err(Error::Usage(
            "njx-pgle writes its table of the files written to stdout: --format parquet \
             needs a file (use --format json or csv)"
                .into(),
        ));
    }
    files.check_outputs(&[])?;
    let inputs = files.inputs_or_stdin();
    let mut out = open_output(None, &inputs)?;
    let notes = super::notes_and_progress("njx-pgle", args.quiet, &inputs, Some(&mut out));
    crate::analysis::pgle::run(&options, &inputs, &mut out, &notes)?;
    out.finish()
}
