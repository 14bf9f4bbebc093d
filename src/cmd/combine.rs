//! `njx-combine`: the command line of [`crate::archives::combine`].

use crate::archives::combine::{KeepNsysRep, Options};
use crate::error::Result;
use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

/// Combine the nsys-jax (or njx-capture) archives of one distributed run into one archive,
/// as nsys-jax-combine does: what every input holds alike is stored once, what differs once
/// per profile.
#[derive(Debug, Parser)]
#[command(
    name = "njx-combine",
    version,
    long_version = super::LONG_VERSION,
    after_help = "The layout is nsys-jax-combine's, which njx's tools and nsys-jax's loaders \
read: a member whose content is the same in every input that has it is stored once under its \
own name; a member whose content differs is stored as <member>/<profile> for each input, the \
profile being the input's file name without .zip (rank3.zip: \
report_nvtx_pushpop_trace.csv.xz/rank3); each input's report is stored as \
<profile>.nsys-rep as --keep-nsys-rep says; folders are not stored. Contents are compared by \
reading every member through (checking its CRC-32 and size, hashing it), never by what the \
archives declare; members are then copied as they are stored, never held in memory.

Errors (exit 1, nothing written): an input that is not a file (a FIFO, a device, a folder: \
refused unopened), not a zip archive, not an nsys-jax or njx-capture archive, or a combined \
one already; an input named twice, or the output among the inputs (also by a link); two \
inputs with the same profile name (a/rank0.zip and b/rank0.zip); a member whose name is not \
a plain relative path (../x, /x, C:/x, a\\b, a//b, ./a, the empty name, control \
characters) or that is a symbolic link, FIFO or device, which unzipping would write outside \
the folder or as a link; a report named for another profile than its archive's (a renamed \
archive; --keep-nsys-rep none leaves reports out); a damaged member, or one decompressing \
past NJX_MAX_RATIO; members that would be stored under one name; an existing output without \
-f. Inputs that dumped different XLA programs get a warning (not one run?).

The archive is written in a temporary folder beside the output and renamed into place at the \
end. Exit status: 0; 1 on an error, or when an --analysis failed (the archive is written, \
with what the analysis printed); 2 for a bad command line.

Examples:
  njx-combine -o all rank*.zip
  njx-export --table modules all.zip | njx-modules
  njx-combine -f -o all.zip --keep-nsys-rep none \\
    --analysis 'njx-export --table modules \"$1\" | njx-modules' rank*.zip"
)]
pub struct Args {
    /// The archives to combine, as nsys-jax or njx-capture wrote them.
    #[arg(value_name = "INPUT", required = true)]
    pub inputs: Vec<PathBuf>,

    /// Archive to write: NAME, with .zip appended unless NAME ends in .zip (nsys-jax-combine
    /// replaces any other suffix). Missing folders are created.
    #[arg(short, long, value_name = "NAME", required = true)]
    pub output: PathBuf,

    /// Overwrite the output if it exists.
    #[arg(short, long, visible_alias = "force")]
    pub force_overwrite: bool,

    /// Which inputs' .nsys-rep reports to keep, each as <profile>.nsys-rep (an njx-capture
    /// archive's report.nsys-rep too).
    #[arg(long, value_enum, value_name = "WHICH", default_value_t = KeepNsysRep::First)]
    pub keep_nsys_rep: KeepNsysRep,

    /// After writing the archive, run PIPELINE with `bash -o pipefail -c` and store its
    /// standard output in the archive as analysis/<n>-<name>.txt, and the files it writes
    /// in its working folder (a fresh one) under analysis/<n>-<name>/, as njx-capture does.
    /// The archive's path is `$1` and `$NJX_ARCHIVE`; njx-combine's own folder comes first
    /// on PATH. `--analysis report` is `njx-report "$1"`. Repeatable.
    #[arg(long, value_name = "PIPELINE")]
    pub analysis: Vec<String>,

    /// Say nothing on stderr but errors (no notes of what was done, no warnings).
    #[arg(short, long)]
    pub quiet: bool,
}

impl Args {
    /// The combination these options ask for.
    pub fn into_options(&self) -> Options {
        Options {
            output: self.output.clone(),
            force_overwrite: self.force_overwrite,
            keep_nsys_rep: self.keep_nsys_rep,
            analysis: self.analysis.clone(),
        }
    }
}

/// Runs `njx-combine`.
pub fn run(args: &Args) -> Result<bool> {
    let notes = super::notes_and_progress("njx-combine", args.quiet, &args.inputs, None);
    let result = crate::archives::combine::run(&args.into_options(), &args.inputs, &notes);
    notes.progress().finish();
    result
}

/// Runs `njx-combine` and maps the outcome to its exit status.
pub fn main() -> ExitCode {
    let args = super::parse::<Args>();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => super::finish("njx-combine", Err(e)),
    }
}
