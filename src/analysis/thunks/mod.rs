//! The nsys-jax Analysis notebook's thunk views as tables (`njx-thunks`): the top thunks
//! by GPU time (its `thunk_summary`), GPU time by HLO opcode with the idle time during
//! module executions (its `op_runtime`), and the variability of each compute thunk's
//! execution time (its `compute_duration_stats`, with the slowest executions).
//!
//! The executions that count are those of the flame graphs
//! ([`Selection`](crate::derived::gpu_time::Selection)): steady state, autotuning left
//! out, and for the top and opcode views the programs that cover 99% of module time, so
//! that `njx-thunks --view opcode` divides exactly the time of `njx-flamefold --by
//! opcode`. As in the notebook, variability is over every program's steady-state compute
//! (not communication) thunks.
//!
//! Only aggregates are held ([`ThunkTime`]): per (program, thunk, phase) a count, exact
//! sums of durations and their squares, and the few slowest executions, beside the
//! flame graphs' [`GpuTime`](crate::derived::gpu_time::GpuTime) (selection, idle time,
//! what the dumps say). Names are held once and keys are numbers
//! ([`crate::util::compact`]), and the rows are made one at a time as they are written:
//! about 200 bytes per distinct thunk in all.
//!
//! The files, each one job (this one holds the options and [`run`], the sequencing):
//!
//! - `read.rs`: the inputs read into their aggregate, the options' numbers checked;
//! - `aggregate.rs`: the aggregate ([`ThunkTime`]) and the partial result of `--partial`;
//! - `table.rs`: the statistics of every (program, thunk, phase), their order by name and
//!   the runs of each (program, thunk);
//! - `stats.rs`: the statistics of one thunk's executions (count, sums, the slowest);
//! - `rows.rs`: the rows of one view ([`Rows`]): the executions that count, in the view's
//!   order, with what the dumps say of each thunk;
//! - `top.rs`, `opcode.rs`, `variability.rs`: each view's rows and their order;
//! - `write.rs`: the rows as a table or as records;
//! - `format.rs`: shares, nanoseconds held in i64, milliseconds and microseconds.

mod aggregate;
mod opcode;
mod read;
mod rows;
mod stats;
mod table;
mod top;
mod variability;
mod write;

pub use aggregate::{PARTIAL, ThunkTime, partial};
pub use opcode::OpcodeRow;
pub use read::read;
pub use rows::{Rows, rows};
pub use stats::SLOWEST;
pub use top::TopRow;
pub use variability::VariabilityRow;
pub use write::write;

use crate::error::Result;
use crate::output::Format;
use crate::output::notes::Notes;
use clap::ValueEnum;
use std::io::Write;
use std::path::PathBuf;

/// Which table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum View {
    /// One row per thunk, largest total GPU time first, with its share of all thunk time.
    Top,
    /// One row per HLO opcode, with the idle time during module executions, shares of
    /// module time.
    Opcode,
    /// One row per compute thunk executed at least twice: mean, standard deviation,
    /// coefficient of variation and the slowest executions, largest mean first.
    Variability,
}

/// What `njx-thunks` reports.
#[derive(Debug, Clone)]
pub struct Options {
    /// Which table.
    pub view: View,
    /// Table, JSON Lines or CSV.
    pub format: Format,
    /// At most this many rows.
    pub top: Option<usize>,
    /// Keep the largest programs until they cover this fraction of module time.
    pub top_modules: f64,
    /// Count initialisation executions too.
    pub include_warmup: bool,
    /// Variability: keep thunks whose coefficient of variation exceeds this (0 keeps all).
    pub min_cv: f64,
    /// Archives or XLA dump folders holding HLO dumps, besides the archives among the
    /// inputs.
    pub hlo: Vec<PathBuf>,
    /// Write the partial result of the inputs (kind [`PARTIAL`]) instead of the table.
    pub partial: bool,
}

/// The rows of `inputs` as `options` ask (or their partial result), written to `out`.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    if options.partial {
        let time = partial(options, inputs, notes)?;
        return crate::derived::partial::write(out, PARTIAL, &time);
    }
    let time = read(options, inputs, notes)?;
    let rows = rows(&time, options, inputs, notes)?;
    write(options.format, &rows, out)
}
