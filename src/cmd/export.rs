//! `njx-export`: the command line of [`crate::analysis::export`].

use super::IoArgs;
use crate::analysis::export::{Options, Table};
use crate::error::{Error, Result};
use crate::output::{Format, open_output};
use crate::source;
use clap::Parser;
use std::path::PathBuf;

/// Turn Nsight Systems reports and nsys-jax archives into JSON Lines (or CSV) records.
#[derive(Debug, Parser)]
#[command(
    name = "njx-export",
    version,
    long_version = super::LONG_VERSION,
    after_help = "Inputs: `nsys stats --report nvtx_pushpop_trace` CSV (plain, .gz, .xz or on \
stdin); nsys-jax archives (.zip) and their extracted directories; nsys-jax-combine archives \
(one profile per `path/<profile>` member); nsys SQLite exports (`nsys export --type sqlite`: \
ranges and gpu-ranges computed from NVTX_EVENTS and the CUDA activity tables, --start-end \
adds the NVTX start/end ranges); .nsys-rep reports, exported to SQLite by running `nsys \
export` when nsys is on PATH; archives njx-capture wrote (report.sqlite and dump/). Records \
from each input carry its profile name. --table gpu-ranges, modules and thunks read archives \
and SQLite exports; modules and thunks of SQLite exports take the HLO dumps from --hlo (an XLA \
dump folder or archive), devices from the XlaLauncher thread names. Modules and thunks of several inputs are written once all are read, with device clocks aligned on the \
collectives that span every device (corrections on stderr; --no-align keeps raw clocks).

Examples:
  njx-export output_nvtx_pushpop_trace.csv | njx-compile-summary
  njx-export rank*.zip | njx-ranges --xla-compile | njx-compile-summary --total
  njx-export --table gpu-ranges report.sqlite
  njx-export --table modules rank*.zip | njx-modules
  njx-export --table thunks report.sqlite --hlo xla_dump/ | njx-collectives
  njx-export --format csv rank0.zip > ranges.csv
  njx-export --table thunks --modules-to modules.jsonl rank*.zip > thunks.jsonl
  njx-export --table thunks --format parquet -o thunks.parquet rank*.zip"
)]
pub struct Args {
    #[command(flatten)]
    /// Inputs, output and format (flattened: their own options).
    pub io: IoArgs,

    /// Which records to write.
    #[arg(long, value_enum, default_value = "ranges")]
    pub table: Table,

    /// Keep each profile's raw device clocks (modules and thunks).
    #[arg(long)]
    pub no_align: bool,

    /// With --table thunks: also write the module records, in the same format, to FILE: one
    /// reading of the inputs for both tables (`njx.load` of the Python package does this).
    #[arg(long, value_name = "FILE")]
    pub modules_to: Option<PathBuf>,

    /// An archive or XLA dump folder holding HLO dumps (modules and thunks): needed for
    /// SQLite exports and reports, searched after an archive's own dumps; one per --hlo,
    /// repeatable (--hlo a.zip --hlo b.zip).
    #[arg(long, value_name = "PATH")]
    pub hlo: Vec<PathBuf>,

    /// Also export NVTX start/end ranges (nvtxRangeStart/End) of SQLite exports and
    /// .nsys-rep reports, each as a root of its own (the other inputs hold push/pop ranges
    /// only).
    #[arg(long)]
    pub start_end: bool,

    /// How programs are keyed across profiles (modules and thunks): `fingerprint` (the HLO
    /// fingerprint, as nsys-jax keys them) or `name` (the module name: programs that ranks
    /// compiled differently are analysed together; their collective sequences are
    /// compared and said on stderr).
    #[arg(long, value_enum, value_name = "KEY", default_value = "fingerprint")]
    pub program_key: crate::derived::executions::KeyBy,
}

impl Args {
    /// The export these options ask for.
    pub fn into_options(&self) -> Options {
        Options {
            table: self.table,
            format: self.io.format.unwrap_or(Format::Json),
            align: !self.no_align,
            hlo: self.hlo.clone(),
            program_key: self.program_key,
            source: source::Options {
                start_end: self.start_end,
            },
        }
    }
}

/// Runs `njx-export`.
pub fn run(args: &Args) -> Result<()> {
    let options = args.into_options();
    let inputs = args.io.inputs_or_stdin();
    let mut all = inputs.clone();
    all.extend(args.hlo.iter().cloned());
    if args.modules_to.is_some() && args.table != Table::Thunks {
        return Err(Error::Usage(
            "--modules-to goes with --table thunks (the module records come with them)".into(),
        ));
    }
    args.io
        .check_outputs(&[("--modules-to", args.modules_to.as_deref())])?;
    let mut out = open_output(args.io.output(), &all)?;
    let mut modules = match &args.modules_to {
        Some(path) => Some(open_output(Some(path), &all)?),
        None => None,
    };
    let notes =
        super::notes_and_progress("njx-export", args.io.files.quiet, &inputs, Some(&mut out));
    crate::analysis::export::run_with_modules(
        &options,
        &inputs,
        &mut out,
        modules.as_mut().map(|m| m as &mut dyn std::io::Write),
        &notes,
    )?;
    if let Some(m) = modules {
        m.finish()?;
    }
    out.finish()
}
