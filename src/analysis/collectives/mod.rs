//! `njx-collectives`: collective bandwidth, hidden versus exposed communication, and the
//! time devices spend waiting for each other, from thunk records.
//!
//! - Bandwidth (nccl-tests' doc/PERFORMANCE.md, as nsys-jax's `_collective_correction`):
//!   algorithm bandwidth = factor × message bytes / full time (exposed + hidden), with
//!   factor n for all-gather and reduce-scatter (they are measured on the total size) and
//!   1 otherwise; bus bandwidth = algorithm bandwidth × 2(n−1)/n for all-reduce, (n−1)/n
//!   for all-gather, reduce-scatter and all-to-all, 1 for collective-permute, broadcast
//!   and host transfers. GB are 10⁹ bytes (bytes per nanosecond).
//! - The bandwidth table takes, for each instance of a collective (program, execution,
//!   thunk, thunk execution), the fastest device's bus bandwidth — the other devices'
//!   times include waiting for the last one to arrive — and reports its mean and
//!   standard error over instances, per collective and message size (nsys-jax's
//!   `communication` analysis).
//! - Hidden share: hidden time over full time, per collective and overall.
//! - Wait: for each instance, the longest minus the shortest exposed time over devices
//!   is time a device spent waiting; summed per module execution, mean ± std over
//!   executions, and as a share of the module's GPU time (estimated from its thunks:
//!   first start to last end, mean over devices and executions).
//! - Stragglers: in each instance the device with the shortest exposed time arrived last
//!   (the others waited for it); per device, how often it was last and by how much on
//!   average (longest minus shortest exposed time).
//! - The notebook's wait distributions and lateness along the module timeline, on
//!   clocks aligned across profiles: [`timing`].
//!
//! The files, one job each:
//!
//! - `mod.rs`: the options and [`run`], which sequences the steps below;
//! - `bandwidth.rs`: one communication thunk execution's bandwidths, and those that take
//!   no time (left out of the bandwidths);
//! - `records.rs`: `--records`, one [`CollectiveRecord`] per communication thunk
//!   execution;
//! - `aggregate.rs`: [`Partial`], the mergeable aggregate (per rank, `--partial`), and
//!   the readings that fill it;
//! - `report.rs`: the report's rows from a [`Partial`];
//! - `rows.rs`: the rows and the tables ([`Part`]) they belong to;
//! - `table.rs` and `csv_rows.rs`: the rows for people and as CSV;
//! - `write.rs`: what is written (the report, one table, the pictures) in which format;
//! - `format.rs`: the cells of optional numbers in the tables;
//! - `timing/`: the wait distributions and lateness ([`timing`]).

use crate::error::Result;
use crate::output::Format;
use crate::output::notes::Notes;
use std::io::Write;
use std::path::PathBuf;

mod aggregate;
mod bandwidth;
mod csv_rows;
mod format;
mod records;
mod report;
pub use report::{Instance, ProgramComm};
mod rows;
mod table;
pub mod timing;
mod write;

pub use aggregate::{PARTIAL, Partial, aggregate, aggregate_with_timing};
pub use bandwidth::{bandwidth, of_no_time, say_no_time};
pub use records::{CollectiveRecord, read, write_records};
pub use rows::Part;
pub use write::{write, write_with_timing};

/// What `njx-collectives` writes.
#[derive(Debug, Clone)]
pub struct Options {
    /// One collective record per communication thunk execution instead of the report.
    pub records: bool,
    /// Count initialisation executions too.
    pub include_warmup: bool,
    /// Also draw bus bandwidth against message size into this SVG file.
    pub plot: Option<PathBuf>,
    /// Table, JSON Lines or CSV.
    pub format: Format,
    /// How programs are keyed across profiles.
    pub program_key: crate::derived::executions::KeyBy,
    /// One table of the report only.
    pub table: Option<Part>,
    /// Also draw the wait distributions into this SVG file.
    pub wait_plot: Option<PathBuf>,
    /// Also draw lateness along the module timeline into this SVG file.
    pub lateness_plot: Option<PathBuf>,
    /// Write the aggregate as a partial result (kind [`PARTIAL`]) instead of the report.
    pub partial: bool,
    /// The programs the tables answer for (`--program`, `--exclude-program`); a partial
    /// result holds every program.
    pub programs: crate::derived::programs::ProgramFilter,
}

impl Options {
    /// Whether the job compares clocks of different devices ([`timing`]).
    pub fn needs_timing(&self) -> bool {
        self.table.is_some_and(Part::is_timing)
            || self.wait_plot.is_some()
            || self.lateness_plot.is_some()
    }
}

/// The report (or the collective records) of `inputs`, written to `out`.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    if options.records {
        let thunks = read(options, inputs, notes)?;
        return write_records(options.format, thunks, out);
    }
    if options.needs_timing() {
        let (acc, timing) = aggregate_with_timing(options, inputs, notes)?;
        acc.check_programs(&options.programs, notes)?;
        return write_with_timing(options, &acc, &timing, out, notes);
    }
    if options.partial {
        notes.writes_partial();
    }
    let acc = aggregate(inputs, options.program_key, notes)?;
    if options.partial {
        return crate::derived::partial::write(out, &acc);
    }
    acc.check_programs(&options.programs, notes)?;
    write(options, &acc, out)
}

/// Keeps, for `program`, the least module name seen (a program has one name; records
/// read back may disagree, and the least is the one that does not depend on order).
fn keep_least_name(
    names: &mut std::collections::BTreeMap<String, String>,
    program: &str,
    module: &str,
) {
    match names.get_mut(program) {
        Some(n) if n.as_str() <= module => {}
        Some(n) => module.clone_into(n),
        None => {
            names.insert(program.to_string(), module.to_string());
        }
    }
}
