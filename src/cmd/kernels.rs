//! `njx-kernels`: the command line of [`crate::analysis::kernels`].

use super::IoArgs;
use crate::analysis::kernels::{By, Options, Table};
use crate::error::Result;
use crate::output::{Format, open_output};
use clap::Parser;

/// GPU time per kernel (or memory-operation kind), as `nsys stats --report cuda_gpu_kern_sum`.
#[derive(Debug, Parser)]
#[command(
    name = "njx-kernels",
    version,
    long_version = super::LONG_VERSION,
    after_help = "Input is kernel or memop records (njx-export --table kernels|memops) as JSON \
Lines or CSV, or the profiles directly: nsys SQLite exports, .nsys-rep reports, archives holding \
report.sqlite (read as --table). One line per kernel name (or --by short-name, range, or the \
XLA module or thunk instruction that launched it: module, thunk; or the CUDA graph it ran in: \
graph; `(none)` for operations outside one; or the GPU: device, one row per GPU, `device N`, \
`device N (profile)` when the inputs hold several profiles), largest total GPU time first: share of the total, total, instances, mean, median, minimum, maximum and \
sample standard deviation of the durations in nanoseconds, as nsys' cuda_gpu_kern_sum; memory \
operations group by kind and direction (`memcpy HtoD`, `memset`) with their bytes, as \
cuda_gpu_mem_time_sum.

Rows add up every GPU's operations, as nsys' reports do; each record says the GPU (device, \
profile) where the row's operations all ran on one, null where on several, and the table has \
a Device column when the input holds several GPUs (`several` for a row over several). \
--per-device splits every row per GPU. A GPU is a device of a profile: two processes' \
profiles may both have a device 0. Records of many ranks (njx-export --table kernels, one per \
rank, then `cat`) summarise as their profiles would, per GPU too.

Examples:
  njx-export --table kernels report.sqlite | njx-kernels
  njx-export --table memops report.sqlite | njx-kernels
  njx-kernels --by range --format csv report.sqlite > per-range.csv
  njx-kernels --by module report.sqlite
  njx-kernels --by thunk --table memops report.sqlite
  njx-kernels --by graph report.sqlite
  njx-kernels --by device report.sqlite
  njx-kernels --per-device --format csv report.sqlite > per-gpu.csv"
)]
pub struct Args {
    #[command(flatten)]
    /// Inputs, output and format (flattened: their own options).
    pub io: IoArgs,

    /// What one row groups.
    #[arg(long, value_enum, default_value = "name")]
    pub by: By,

    /// What to read from profiles (record streams say what they hold).
    #[arg(long, value_enum, default_value = "kernels")]
    pub table: Table,

    /// One row per group and GPU (each with its device), not one per group over every GPU.
    #[arg(long)]
    pub per_device: bool,
}

impl Args {
    /// The summary these options ask for.
    pub fn into_options(&self) -> Options {
        Options {
            by: self.by,
            format: self.io.format.unwrap_or(Format::Table),
            table: self.table,
            per_device: self.per_device,
        }
    }
}

/// Runs `njx-kernels`.
pub fn run(args: &Args) -> Result<()> {
    let options = args.into_options();
    let inputs = args.io.inputs_or_stdin();
    args.io.check_outputs(&[])?;
    let mut out = open_output(args.io.output(), &inputs)?;
    let notes =
        super::notes_and_progress("njx-kernels", args.io.files.quiet, &inputs, Some(&mut out));
    crate::analysis::kernels::run(&options, &inputs, &mut out, &notes)?;
    out.finish()
}
