//! `njx-heap`: the command line of [`crate::analysis::heap`].

use super::IoArgs;
use crate::analysis::heap::{Options, View};
use crate::error::Result;
use crate::output::{Format, open_output};
use clap::Parser;

/// Peak heap memory of XLA programs, from the buffer assignment in their HLO dumps.
#[derive(Debug, Parser)]
#[command(
    name = "njx-heap",
    version,
    long_version = super::LONG_VERSION,
    after_help = "Input is nsys-jax archives or folders of XLA dumps (--xla_dump_to with \
--xla_dump_hlo_as_proto): every after-optimizations dump, which holds XLA's buffer \
assignment. Each heap simulator trace is replayed as XLA itself computes the peak \
(ComputePeakMemoryLogicalBuffers): ALLOC adds a buffer's size, FREE takes it away, SHARE_WITH \
adds nothing while its canonical buffer is live. The peak is the largest total of live \
buffers; its event is the first that reaches it. --view peak also gives the size XLA gave the \
allocation the trace packed (the preallocated temp buffer: the peak plus fragmentation) and \
the program's allocations by kind (entry parameters, outputs, temp, all), as XLA's buffer \
assignment statistics count them.

Examples:
  njx-heap rank0.zip
  njx-heap --view by-source --program pjit__wrapped_step_fn rank0.zip
  njx-heap --program pjit__wrapped_step_fn --svg heap.svg rank0.zip
  njx-heap --view buffers --format json rank0.zip | jq -r .op_name | head"
)]
pub struct Args {
    #[command(flatten)]
    /// Inputs, output and format (flattened: their own options).
    pub io: IoArgs,

    /// What to list.
    #[arg(long, value_enum, default_value = "peak")]
    pub view: View,

    /// Only this program: its module name, program id or fingerprint.
    #[arg(long, value_name = "NAME_OR_ID")]
    pub program: Option<String>,

    /// Also draw the live heap total over each trace's events (peak marked) into FILE.svg.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<std::path::PathBuf>,
}

impl Args {
    /// The report these options ask for.
    pub fn into_options(&self) -> Options {
        Options {
            view: self.view,
            format: self.io.format.unwrap_or(Format::Table),
            program: self.program.clone(),
            svg: self.svg.clone(),
        }
    }
}

/// Runs `njx-heap`.
pub fn run(args: &Args) -> Result<()> {
    let options = args.into_options();
    let inputs = args.io.inputs_or_stdin();
    args.io.check_outputs(&[("--svg", args.svg.as_deref())])?;
    let mut out = open_output(args.io.output(), &inputs)?;
    let notes = super::notes_and_progress("njx-heap", args.io.files.quiet, &inputs, Some(&mut out));
    crate::analysis::heap::run(&options, &inputs, &mut out, &notes)?;
    out.finish()
}
