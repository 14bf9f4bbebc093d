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
//! - `read.rs`: the inputs read into their aggregate (or its partial result, with what
//!   the dumps say of its thunks), the options' numbers checked;
//! - `aggregate.rs`: the aggregate ([`ThunkTime`]), mergeable as a partial result;
//! - `table.rs`: the statistics of every (program, thunk, phase), their order by name and
//!   the runs of each (program, thunk);
//! - `stats.rs`: the statistics of one thunk's executions (count, sums, the slowest);
//! - here, the rows of one view ([`Rows`], [`rows`]): the executions that count, in the
//!   view's order; `infos.rs`: what the dumps say of each thunk shown;
//! - `top.rs`, `opcode.rs`, `variability.rs`: each view's rows and their order;
//! - `write.rs`: the rows as a table or as records;
//! - numbers are formatted by [`crate::output::numbers`].

mod aggregate;
mod infos;
mod opcode;
mod read;
mod stats;
mod table;
mod top;
mod variability;
mod write;

pub use aggregate::{PARTIAL, ThunkTime};
pub use opcode::OpcodeRow;
pub use read::{partial, read};
pub use stats::SLOWEST;
pub use top::TopRow;
pub use variability::VariabilityRow;
pub use variability::Varying;
pub use write::write;

use crate::derived::gpu_time::Selection;
use crate::error::Result;
use crate::hlo::thunk_info::Infos;
use crate::output::Format;
use crate::output::notes::Notes;
use clap::ValueEnum;
use opcode::opcode_rows;
use read::check;
use stats::Stats;
use std::io::Write;
use std::path::PathBuf;
use table::Run;
use top::top_order;
use variability::variability_order;

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
    /// The programs the tables are for (`--program`, `--exclude-program`).
    pub programs: crate::derived::programs::ProgramFilter,
}

/// The rows of `inputs` as `options` ask (or their partial result), written to `out`.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    if options.partial {
        notes.writes_partial();
        let time = partial(options, inputs, notes)?;
        return crate::derived::partial::write(out, &time);
    }
    let time = read(options, inputs, notes)?;
    let rows = rows(&time, options, inputs, notes)?;
    write(options.format, &rows, out)
}

/// The rows of one view of an aggregate, made one at a time as they are written.
pub struct Rows<'a> {
    time: &'a ThunkTime,
    selection: Selection<'a>,
    /// What the dumps say of the thunks, where there are dumps.
    infos: Option<Infos>,
    /// The entries that count, in key order; the views' runs point into it.
    order: Vec<u32>,
    view: Chosen,
}

/// The rows of each view, in their order.
enum Chosen {
    /// Largest total first, and the total of every thunk.
    Top(Vec<Run>, i128),
    Opcode(Vec<OpcodeRow>),
    /// Largest mean first.
    Variability(Vec<Run>),
}

impl Rows<'_> {
    /// How many rows.
    pub fn len(&self) -> usize {
        match &self.view {
            Chosen::Top(r, _) | Chosen::Variability(r) => r.len(),
            Chosen::Opcode(r) => r.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The (program, thunk) of a run and the statistics of its entries together.
    fn merged(&self, run: Run) -> ((&str, &str), Stats) {
        let mut merged = Stats::default();
        let mut key = ("", "");
        for &i in &self.order[run.at as usize..(run.at + run.len) as usize] {
            let ((program, name, _), s) = self.time.stats.get(i);
            key = (program, name);
            merged.merge(s);
        }
        (key, merged)
    }

    /// What the dumps say of a thunk: (op_name, opcode).
    fn info(&self, program: &str, name: &str) -> Option<(String, String)> {
        self.infos
            .as_ref()?
            .get(program)?
            .as_ref()?
            .get(name)?
            .as_ref()
            .map(|i| (i.op_name().to_string(), i.opcode().to_string()))
    }

    /// The names a row gives its thunk.
    fn named(&self, program: &str, name: &str) -> Named {
        let info = self.info(program, name);
        Named {
            program: program.to_string(),
            module: self.selection.module_name(program).to_string(),
            thunk: name.to_string(),
            op_name: info.as_ref().map(|i| i.0.clone()),
            opcode: info.map(|i| i.1),
        }
    }
}

/// What the top and variability rows name a thunk by: its program (key and module name),
/// its instruction, and what the dumps say of it.
struct Named {
    program: String,
    module: String,
    thunk: String,
    op_name: Option<String>,
    opcode: Option<String>,
}

/// The rows of `options.view` of an aggregate; `inputs` are where it came from (their
/// archives, with `--hlo`, are the dumps read for op_names and opcodes).
pub fn rows<'a>(
    time: &'a ThunkTime,
    options: &Options,
    inputs: &[PathBuf],
    notes: &Notes,
) -> Result<Rows<'a>> {
    check(options)?;
    let selection = time.gpu.select(
        options.include_warmup,
        options.top_modules,
        &options.programs,
        notes,
    )?;
    let variability = options.view == View::Variability;
    // Per (program, thunk): the executions that count.
    let order = time.stats.sorted(|(program, _, phase), s| {
        selection.thunk_counts(program, phase)
            && (variability || selection.is_chosen(program))
            && !(variability && s.comm)
    });
    let mut runs = time.stats.runs(&order);
    let mut rows = Rows {
        time,
        selection,
        infos: None,
        order,
        view: Chosen::Opcode(Vec::new()),
    };
    if variability {
        runs.retain(|&r| rows.merged(r).1.n >= 2);
    }
    rows.infos = infos::dump_infos(&rows, &runs, inputs, &options.hlo, notes)?;
    let mut view = match options.view {
        View::Top => top_order(&rows, &runs),
        View::Opcode => Chosen::Opcode(opcode_rows(&rows, &runs)),
        View::Variability => variability_order(&rows, runs, options.min_cv),
    };
    if let Some(n) = options.top {
        match &mut view {
            Chosen::Top(r, _) | Chosen::Variability(r) => r.truncate(n),
            Chosen::Opcode(r) => r.truncate(n),
        }
    }
    rows.view = view;
    Ok(rows)
}
