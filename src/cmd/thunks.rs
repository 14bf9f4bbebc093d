//! `njx-thunks`: the command line of [`crate::analysis::thunks`].

use super::IoArgs;
use crate::analysis::thunks::{Options, View};
use crate::error::Result;
use crate::output::{Format, open_output};
use clap::Parser;
use std::path::PathBuf;

/// The Analysis notebook's thunk tables: top thunks, GPU time by opcode, variability.
#[derive(Debug, Parser)]
#[command(
    name = "njx-thunks",
    version,
    long_version = super::LONG_VERSION,
    after_help = "Input is module and thunk records (njx-export --table modules|thunks) as JSON \
Lines or CSV, or nsys-jax archives and nsys SQLite exports directly. The executions that count \
are those of njx-flamefold's GPU modes and the nsys-jax Analysis notebook: steady state \
(--include-warmup adds initialisation), autotuning left out, and for --view top and opcode the \
largest programs until they cover 99% of module time (--top-modules).

--view top: one line per thunk (program and HLO instruction), largest total GPU time first: \
its op_name and opcode (from the HLO dumps; null without them), executions over devices, \
total and mean GPU time (exposed time for communication), and its share of all thunk time.

--view opcode: GPU time per HLO opcode and the idle time during module executions (module \
time less thunk time), as shares of module time; the same time as njx-flamefold --by opcode.

--view variability: as the notebook's compute-time variability, each compute (not \
communication) thunk of every program executed at least twice: mean, sample standard \
deviation, coefficient of variation (std/mean) and its three slowest executions with their \
device, module execution and thunk execution, largest mean first among those whose \
variation exceeds --min-cv (the notebook's 10%; `--top 10` is its detailed view).

opcode needs the HLO dumps: archives among the inputs are used, --hlo adds archives or XLA \
dump folders; top and variability show op_names and opcodes where dumps are given.

Examples:
  njx-thunks --top 20 rank*.zip
  njx-export --table thunks rank*.zip | njx-thunks --view opcode --hlo rank0.zip
  njx-thunks --view variability --top 10 --format csv rank*.zip > variable.csv"
)]
pub struct Args {
    #[command(flatten)]
    /// Inputs, output and format (flattened: their own options).
    pub io: IoArgs,

    /// Which table.
    #[arg(long, value_enum, default_value = "top")]
    pub view: View,

    /// At most N rows.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,

    /// An archive or XLA dump folder (--xla_dump_to) with HLO dumps, besides the archives
    /// among the inputs; one per --hlo, repeatable (--hlo a.zip --hlo b.zip).
    #[arg(long, value_name = "PATH")]
    pub hlo: Vec<PathBuf>,

    /// Keep the largest programs until they cover this fraction of module time (top and
    /// opcode views).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.99)]
    pub top_modules: f64,

    /// Count initialisation executions (warm-up, autotuning) too.
    #[arg(long)]
    pub include_warmup: bool,

    /// Variability: keep the thunks whose coefficient of variation (std/mean) exceeds
    /// this; 0 keeps every thunk.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.1)]
    pub min_cv: f64,

    /// Write the partial result of these inputs instead of a table: the map step of a
    /// map/reduce over ranks (give the partials of every rank to njx-thunks, or `cat`
    /// them into it, for the tables of all; they carry what the dumps say).
    #[arg(long)]
    pub partial: bool,

    /// The programs the tables are for.
    #[command(flatten)]
    pub programs: super::ProgramArgs,
}

impl Args {
    /// The table these options ask for.
    pub fn into_options(&self) -> Options {
        Options {
            view: self.view,
            format: self.io.format.unwrap_or(Format::Table),
            top: self.top,
            top_modules: self.top_modules,
            include_warmup: self.include_warmup,
            min_cv: self.min_cv,
            hlo: self.hlo.clone(),
            partial: self.partial,
            programs: self.programs.filter(),
        }
    }
}

/// Runs `njx-thunks`.
pub fn run(args: &Args) -> Result<()> {
    let options = args.into_options();
    let inputs = args.io.inputs_or_stdin();
    let mut read: Vec<PathBuf> = inputs.clone();
    read.extend(args.hlo.iter().cloned());
    args.io.check_outputs(&[])?;
    let mut out = open_output(args.io.output(), &read)?;
    let notes =
        super::notes_and_progress("njx-thunks", args.io.files.quiet, &inputs, Some(&mut out));
    crate::analysis::thunks::run(&options, &inputs, &mut out, &notes)?;
    out.finish()
}
