//! `njx-export`'s job: the records of any input, written as JSON Lines or CSV. Range and
//! GPU-range records stream from the source layer one at a time; module and thunk records
//! are derived one input path per core at a time and written once warm-up and clock
//! alignment, decided over all of them, are known ([`crate::derived::executions::visit`]).

use crate::derived::executions;
use crate::error::Result;
use crate::output::notes::Notes;
use crate::output::{Format, RecordWriter};
use crate::records::{GpuRange, Kernel, Memop, Module, PayloadField, Range, Thunk};
use crate::source;
use clap::ValueEnum;
use std::io::Write;
use std::path::PathBuf;

/// Which records to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Table {
    /// CPU-side NVTX push/pop ranges (`nvtx_pushpop_trace` semantics).
    Ranges,
    /// NVTX ranges projected onto the GPU work they launched (`nvtx_gpu_proj_trace`).
    GpuRanges,
    /// XLA module executions per device (from archives: GPU projection, thread names,
    /// HLO dumps).
    Modules,
    /// Thunk executions per device, communication split into exposed and hidden time.
    Thunks,
    /// CUDA kernels with their launch (API call, thread, NVTX range), from SQLite exports.
    Kernels,
    /// CUDA memory copies and sets with their launch, from SQLite exports.
    Memops,
    /// The payloads of NVTX events, one record per field (XLA's and NCCL's structured
    /// payloads decoded by their schemas), from SQLite exports.
    Payloads,
}

/// What to export.
#[derive(Debug, Clone)]
pub struct Options {
    /// Which records.
    pub table: Table,
    /// JSON Lines or CSV.
    pub format: Format,
    /// Align device clocks across profiles (modules and thunks).
    pub align: bool,
    /// Archives or XLA dump folders holding HLO dumps, searched after an archive's own.
    pub hlo: Vec<PathBuf>,
    /// How programs are keyed across profiles.
    pub program_key: executions::KeyBy,
    /// What else to read from SQLite exports.
    pub source: source::Options,
}

/// Writes the records of `inputs` to `out`.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    run_with_modules(options, inputs, out, None, notes)
}

/// [`run`], and with [`Table::Thunks`] the module records to `modules` (in the same
/// format) from the same reading of the inputs.
pub fn run_with_modules(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    modules: Option<&mut dyn Write>,
    notes: &Notes,
) -> Result<()> {
    let mut writer = RecordWriter::new(out, options.format)?;
    let mut modules = match modules {
        Some(m) if options.table == Table::Thunks => Some(RecordWriter::new(m, options.format)?),
        _ => None,
    };
    match options.table {
        Table::Ranges => {
            for path in inputs {
                source::read_ranges(path, options.source, notes, &mut |r| writer.write(&r))?;
            }
        }
        Table::GpuRanges => {
            for path in inputs {
                source::read_gpu_ranges(path, options.source, notes, &mut |r| writer.write(&r))?;
            }
        }
        Table::Kernels | Table::Memops => {
            let which = if options.table == Table::Kernels {
                source::gpu_ops::Which::Kernels
            } else {
                source::gpu_ops::Which::Memops
            };
            for path in inputs {
                source::read_gpu_ops(path, which, notes, &mut |op| match op {
                    source::gpu_ops::GpuOp::Kernel(k) => writer.write(&k),
                    source::gpu_ops::GpuOp::Memop(m) => writer.write(&m),
                })?;
            }
        }
        Table::Payloads => {
            for path in inputs {
                source::read_payloads(path, notes, &mut |p| writer.write(&p))?;
            }
        }
        Table::Modules | Table::Thunks => {
            let want = if options.table == Table::Modules {
                executions::Want::Modules
            } else if modules.is_some() {
                executions::Want::Both
            } else {
                executions::Want::Thunks
            };
            executions::visit(
                inputs,
                executions::Hlo {
                    dumps: &options.hlo,
                    key: options.program_key,
                },
                options.align,
                want,
                notes,
                &mut |e| match (e, &mut modules) {
                    (executions::Execution::Module(m), Some(w)) => w.write(&m),
                    (executions::Execution::Module(m), None) => writer.write(&m),
                    (executions::Execution::Thunk(t), _) => writer.write(&t),
                },
            )?;
        }
    }
    if let Some(w) = modules {
        w.finish::<Module>()?;
    }
    match options.table {
        Table::Ranges => writer.finish::<Range>(),
        Table::GpuRanges => writer.finish::<GpuRange>(),
        Table::Modules => writer.finish::<Module>(),
        Table::Thunks => writer.finish::<Thunk>(),
        Table::Kernels => writer.finish::<Kernel>(),
        Table::Memops => writer.finish::<Memop>(),
        Table::Payloads => writer.finish::<PayloadField>(),
    }
}
