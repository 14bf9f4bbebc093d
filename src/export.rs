//! `njx-export`: any supported input → records. This table is `ranges`, the
//! CPU-side NVTX push/pop ranges; the reading is shared with the tools that take range
//! records, so they also accept reports and archives directly.

use crate::cli::{Format, IoArgs};
use crate::error::{Error, Result};
use crate::input::records::{self, TextKind};
use crate::input::{self, Opened, gpuproj, pushpop};
use crate::output::{RecordWriter, open_output};
use crate::record::{GpuRange, Range};
use clap::{Parser, ValueEnum};
use std::path::Path;
use std::sync::Arc;

/// Member names of the push/pop table in nsys-jax archives, newest form first.
pub const PUSHPOP_MEMBERS: &[&str] = &[
    "report_nvtx_pushpop_trace.parquet",
    "report_nvtx_pushpop_trace.csv.xz",
    "report_nvtx_pushpop_trace.csv.gz",
    "report_nvtx_pushpop_trace.csv",
];

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
}

/// Turn Nsight Systems reports and nsys-jax archives into JSON Lines (or CSV) records.
#[derive(Debug, Parser)]
#[command(
    name = "njx-export",
    version,
    after_help = "Inputs: `nsys stats --report nvtx_pushpop_trace` CSV (plain, .gz, .xz or on \
stdin); nsys-jax archives (.zip) and their extracted directories; nsys-jax-combine archives \
(one profile per `path/<profile>` member). Records from each input carry its profile name. \
--table gpu-ranges, modules and thunks read archives. Modules and thunks of several inputs \
are written once all are read, with device clocks aligned on the collectives that span every \
device (corrections on stderr; --no-align keeps raw clocks).

Examples:
  njx-export output_nvtx_pushpop_trace.csv | njx-compile-summary
  njx-export rank*.zip | njx-ranges --xla-compile | njx-compile-summary --total
  njx-export --table modules rank*.zip | njx-modules
  njx-export --format csv rank0.zip > ranges.csv"
)]
pub struct Args {
    #[command(flatten)]
    pub io: IoArgs,

    /// Which records to write.
    #[arg(long, value_enum, default_value = "ranges")]
    pub table: Table,

    /// Keep each profile's raw device clocks (modules and thunks).
    #[arg(long)]
    pub no_align: bool,
}

/// Runs `njx-export`.
pub fn run(args: &Args) -> Result<()> {
    let format = args.io.format.unwrap_or(Format::Json);
    let mut writer = RecordWriter::new(open_output(args.io.output())?, format)?;
    let paths = args.io.inputs_or_stdin();
    match args.table {
        Table::Ranges | Table::GpuRanges => {
            for path in &paths {
                match args.table {
                    Table::Ranges => for_each_range(path, &mut |r| writer.write(&r))?,
                    _ => for_each_gpu_range(path, &mut |r| writer.write(&r))?,
                };
            }
        }
        Table::Modules | Table::Thunks => {
            let all = crate::modules::load(&paths, !args.no_align, &mut |n| {
                eprintln!("njx-export: {n}")
            })?;
            if args.table == Table::Modules {
                all.modules.iter().try_for_each(|m| writer.write(m))?;
            } else {
                all.thunks.iter().try_for_each(|t| writer.write(t))?;
            }
        }
    }
    writer.finish()
}

/// Reads range records from any input a range tool accepts — a push/pop CSV or Parquet
/// table, an nsys-jax archive (every profile in it), or range records as JSON Lines or
/// CSV — handing each to `emit`. Returns how many were read.
pub fn for_each_range(path: &Path, emit: &mut dyn FnMut(Range) -> Result<()>) -> Result<u64> {
    let profile_of_path: Arc<str> = input::profile_name(path).into();
    match input::open(path)? {
        Opened::Stream(mut stream) => {
            let place = stream.place.clone();
            match records::sniff(&place, &mut stream.reader)? {
                TextKind::PushPopCsv => {
                    pushpop::read_csv(&place, &profile_of_path, stream.reader, emit)
                }
                TextKind::JsonLines => records::read_json_lines(&place, stream.reader, emit),
                TextKind::RecordCsv => records::read_record_csv(&place, stream.reader, emit),
                TextKind::Unknown(_) if path.extension().is_some_and(|e| e == "nsys-rep") => {
                    Err(Error::data(
                        place,
                        "reading .nsys-rep reports is not supported yet; run \
                         `nsys stats --report nvtx_pushpop_trace --format csv` on it and \
                         pass the CSV",
                    ))
                }
                TextKind::Unknown(first) => Err(Error::data(
                    format!("{place}:1"),
                    format!(
                        "neither an nvtx_pushpop_trace CSV (no `Start (ns)` column) nor njx \
                         records; first line: {first}"
                    ),
                )),
                TextKind::Empty => Err(Error::data(place, "empty input: no header line")),
            }
        }
        Opened::Parquet { place, file } => {
            pushpop::read_parquet(&place, &profile_of_path, file, emit)
        }
        Opened::Sqlite { place } => Err(Error::data(
            place,
            "nsys SQLite exports are not read yet; run `nsys stats --report nvtx_pushpop_trace \
             --format csv` on the report and pass the CSV",
        )),
        Opened::Archive(mut archive) => {
            let Some(members) = PUSHPOP_MEMBERS
                .iter()
                .map(|m| archive.find(m))
                .find(|found| !found.is_empty())
            else {
                return Err(Error::data(
                    archive.place(),
                    format!(
                        "archive has no NVTX push/pop table (looked for {})",
                        PUSHPOP_MEMBERS.join(", ")
                    ),
                ));
            };
            let mut total = 0;
            for member in members {
                let profile: Arc<str> = member.profile.as_str().into();
                total += pushpop::read_member(&mut archive, &member.path, &profile, emit)?;
            }
            Ok(total)
        }
    }
}

/// Member name of the GPU projection table in nsys-jax archives.
pub const GPU_PROJ_MEMBER: &str = "nvtx_gpu_proj_trace/trace.parquet";

/// Reads GPU-projected range records from an nsys-jax archive (every profile in it) or a
/// standalone `trace.parquet`, handing each to `emit`. Rows of GPU work outside any range
/// are no records: their number is reported on stderr. Returns how many records were read.
pub fn for_each_gpu_range(
    path: &Path,
    emit: &mut dyn FnMut(GpuRange) -> Result<()>,
) -> Result<u64> {
    let report = |place: &str, counts: gpuproj::Counts| {
        if counts.outside > 0 {
            eprintln!(
                "njx-export: {place}: {} rows of GPU work outside any NVTX range (no RangeId) \
                 not exported",
                counts.outside
            );
        }
        counts.exported
    };
    match input::open(path)? {
        Opened::Parquet { place, file } => {
            let profile: Arc<str> = input::profile_name(path).into();
            let counts = gpuproj::read_parquet(&place, &profile, file, emit)?;
            Ok(report(&place, counts))
        }
        Opened::Archive(mut archive) => {
            let members = archive.find(GPU_PROJ_MEMBER);
            if members.is_empty() {
                return Err(Error::data(
                    archive.place(),
                    format!("archive has no GPU projection table (looked for {GPU_PROJ_MEMBER})"),
                ));
            }
            let mut total = 0;
            for member in members {
                let place = archive.member_place(&member.path);
                let profile: Arc<str> = member.profile.as_str().into();
                let counts = gpuproj::read_parquet(
                    &place,
                    &profile,
                    archive.open_parquet(&member.path)?,
                    emit,
                )?;
                total += report(&place, counts);
            }
            Ok(total)
        }
        Opened::Stream(stream) => Err(Error::data(
            stream.place,
            format!(
                "--table gpu-ranges reads the GPU projection table ({GPU_PROJ_MEMBER}) of \
                 nsys-jax archives, or such a Parquet file; this is a text stream"
            ),
        )),
        Opened::Sqlite { place } => Err(Error::data(
            place,
            "nsys SQLite exports are not read yet; --table gpu-ranges reads the \
             nvtx_gpu_proj_trace/trace.parquet of nsys-jax archives",
        )),
    }
}
