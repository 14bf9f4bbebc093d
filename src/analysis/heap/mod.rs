//! Heap memory of XLA programs from the buffer assignment in their after-optimizations
//! dumps (`HloProto.buffer_assignment`): logical buffers, the allocations they are
//! assigned to, and the heap simulator traces XLA recorded while packing them.
//!
//! For each heap simulator trace the events are replayed as XLA's own
//! `ComputePeakMemoryLogicalBuffers` (`xla/service/buffer_assignment.cc`) does: `ALLOC`
//! adds the buffer's size, `FREE` subtracts what its `ALLOC` or `SHARE_WITH` added, and
//! `SHARE_WITH` adds the buffer's size only when no other instance of its canonical buffer
//! is live (the memory is already counted otherwise). A buffer's size is the size of its
//! assignment in the trace's allocation (the logical buffer's size where it has none).
//! The peak is the largest live total; its event is the first that reaches it, and the
//! live buffers at the peak are those live just after that event.
//!
//! A trace belongs to the allocation its `buffer_allocation_index` names when that holds
//! some of its buffers, else to the allocation holding most of its buffers (as the
//! TensorFlow memory viewer, which finds it from the buffer ids: older dumps keep the index
//! from before XLA combined its temp allocations); only events of buffers assigned to that
//! allocation count, as in XLA. That allocation is XLA's preallocated
//! temp buffer, sized by the heap simulator's packing: never smaller than the peak of the
//! live total (fragmentation makes the difference).
//!
//! A program's totals are XLA's `BufferAssignment::Stats`: the sizes of its allocations
//! by kind (entry parameters, constants, outputs `maybe_live_out`, the preallocated temp
//! buffers: none of these nor thread-local) and all together.
//!
//! The files, each one job (this one holds the options and [`run`], the sequencing):
//!
//! - `read.rs`: the after-optimizations dumps of the inputs, those of the program asked
//!   for;
//! - `program.rs`: one program's heap from its buffer assignment: its allocation totals
//!   and, trace by trace, the steps below and the row of `--view peak`;
//! - `assignment.rs`: the buffer assignment and each trace's events checked as XLA
//!   writes them, and the allocation a trace sized;
//! - `replay.rs`: the replay of a trace's events: its live totals, its peak and the
//!   buffers live there;
//! - `buffers.rs`: the rows of the buffers live at a peak, from their defining
//!   instructions;
//! - `shape.rs`: shapes as XLA prints them;
//! - `groups.rs`: a peak broken down by op_name or by source line;
//! - `records.rs`: the rows of the views, and a program's heap;
//! - `write.rs`: the views as tables or records;
//! - `chart.rs`: the curves of `--svg`;
//! - numbers (bytes, percentages) are formatted by [`crate::output::numbers`].

mod assignment;
mod buffers;
mod chart;
mod groups;
mod program;
mod read;
mod records;
mod replay;
mod shape;
mod write;

pub use chart::curves;
pub use program::program_heap;
pub use read::read;
pub use records::{BufferRecord, GroupRecord, PeakRecord, ProgramHeap};
pub use replay::{Replay, replay};
pub use shape::shape_text;
pub use write::write;

use crate::error::Result;
use crate::output::Format;
use crate::output::notes::Notes;
use clap::ValueEnum;
use std::io::Write;
use std::path::PathBuf;

/// What the output lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum View {
    /// One row per heap simulator trace: its peak, when it is reached, the allocation it
    /// sized, and the program's allocation totals by kind.
    Peak,
    /// The buffers live at each trace's peak, largest first: size, shape, instruction,
    /// op_name and Python source line.
    Buffers,
    /// The peak broken down by the op_name of the instructions defining its buffers.
    ByOpName,
    /// The peak broken down by Python source line (innermost frame).
    BySource,
}

/// The options of a heap report.
#[derive(Debug, Clone)]
pub struct Options {
    /// What to list.
    pub view: View,
    /// How to write it.
    pub format: Format,
    /// Only programs with this module name, program id or fingerprint.
    pub program: Option<String>,
    /// Also draw the live total over each trace's events into this SVG file.
    pub svg: Option<PathBuf>,
}

/// Reads `inputs` and writes their heaps: njx-heap's job.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    let heaps = read(inputs, options, notes)?;
    write(options, &heaps, out)?;
    if let Some(svg) = &options.svg {
        crate::output::charts::heap_svg(svg, &curves(&heaps))?;
    }
    Ok(())
}
