//! `njx-export`: any supported input → records. This table is `ranges`, the
//! CPU-side NVTX push/pop ranges; the reading is shared with the tools that take range
//! records, so they also accept reports and archives directly.

use crate::cli::{Format, IoArgs};
use crate::error::{Error, Result};
use crate::input::records::{self, TextKind};
use crate::input::{self, Opened, gpuproj, pushpop};
use crate::output::{RecordWriter, open_output};
use crate::record::{GpuRange, Range};
use crate::sqlite;
use clap::{Parser, ValueEnum};
use std::path::{Path, PathBuf};
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

    /// Archives or XLA dump folders holding the HLO dumps (modules and thunks): needed for
    /// SQLite exports and reports, searched after an archive's own dumps.
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub hlo: Vec<PathBuf>,

    /// Also export NVTX start/end ranges (nvtxRangeStart/End) of SQLite exports and
    /// .nsys-rep reports, each as a root of its own (the other inputs hold push/pop ranges
    /// only).
    #[arg(long)]
    pub start_end: bool,
}

/// Runs `njx-export`.
pub fn run(args: &Args) -> Result<()> {
    let format = args.io.format.unwrap_or(Format::Json);
    let mut writer = RecordWriter::new(open_output(args.io.output())?, format)?;
    let paths = args.io.inputs_or_stdin();
    let options = sqlite::Options {
        start_end: args.start_end,
    };
    match args.table {
        Table::Ranges | Table::GpuRanges => {
            for path in &paths {
                match args.table {
                    Table::Ranges => for_each_range_with(path, options, &mut |r| writer.write(&r))?,
                    _ => for_each_gpu_range_with(path, options, &mut |r| writer.write(&r))?,
                };
            }
        }
        Table::Modules | Table::Thunks => {
            let all = crate::modules::load(&paths, &args.hlo, !args.no_align, &mut |n| {
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
/// table, an nsys-jax archive (every profile in it), an nsys SQLite export or `.nsys-rep`
/// report, or range records as JSON Lines or CSV — handing each to `emit`. Returns how
/// many were read.
pub fn for_each_range(path: &Path, emit: &mut dyn FnMut(Range) -> Result<()>) -> Result<u64> {
    for_each_range_with(path, sqlite::Options::default(), emit)
}

/// Prints a note about the input on stderr as `tool: note`, `tool` being the running
/// program (the readers are shared by several tools).
fn note(msg: String) {
    let tool = std::env::args_os()
        .next()
        .and_then(|a| {
            Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "njx".to_string());
    eprintln!("{tool}: {msg}");
}

/// [`for_each_range`] with the options of SQLite inputs.
pub fn for_each_range_with(
    path: &Path,
    options: sqlite::Options,
    emit: &mut dyn FnMut(Range) -> Result<()>,
) -> Result<u64> {
    let profile_of_path: Arc<str> = input::profile_name(path).into();
    if let Some((db, _exported)) = sqlite::report::open_report(path)? {
        return sqlite::nvtx::read_ranges(&db, &profile_of_path, options, &mut note, emit);
    }
    match input::open(path)? {
        Opened::Stream(mut stream) => {
            let place = stream.place.clone();
            match records::sniff(&place, &mut stream.reader)? {
                TextKind::PushPopCsv => {
                    pushpop::read_csv(&place, &profile_of_path, stream.reader, emit)
                }
                TextKind::JsonLines => records::read_json_lines(&place, stream.reader, emit),
                TextKind::RecordCsv => records::read_record_csv(&place, stream.reader, emit),
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
        Opened::Sqlite { place } => {
            let db = sqlite::Db::open(path, &place)?;
            sqlite::nvtx::read_ranges(&db, &profile_of_path, options, &mut note, emit)
        }
        Opened::Archive(mut archive) => {
            let Some(members) = PUSHPOP_MEMBERS
                .iter()
                .map(|m| archive.find(m))
                .find(|found| !found.is_empty())
            else {
                if let Some((db, _copy)) = sqlite::report::open_in_archive(&mut archive)? {
                    return sqlite::nvtx::read_ranges(
                        &db,
                        &profile_of_path,
                        options,
                        &mut note,
                        emit,
                    );
                }
                return Err(Error::data(
                    archive.place(),
                    format!(
                        "archive has no NVTX push/pop table (looked for {} and {})",
                        PUSHPOP_MEMBERS.join(", "),
                        sqlite::ARCHIVE_MEMBER
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

/// Reads GPU-projected range records from an nsys-jax archive (every profile in it), a
/// standalone `trace.parquet`, or an nsys SQLite export or `.nsys-rep` report (projected
/// here, see [`sqlite::gpuproj`]), handing each to `emit`. GPU work outside any range is
/// in no record: how much is reported on stderr. Returns how many records were read.
pub fn for_each_gpu_range(
    path: &Path,
    emit: &mut dyn FnMut(GpuRange) -> Result<()>,
) -> Result<u64> {
    for_each_gpu_range_with(path, sqlite::Options::default(), emit)
}

/// [`for_each_gpu_range`] with the options of SQLite inputs.
pub fn for_each_gpu_range_with(
    path: &Path,
    options: sqlite::Options,
    emit: &mut dyn FnMut(GpuRange) -> Result<()>,
) -> Result<u64> {
    let profile_of_path: Arc<str> = input::profile_name(path).into();
    if let Some((db, _exported)) = sqlite::report::open_report(path)? {
        let counts =
            sqlite::gpuproj::read_gpu_ranges(&db, &profile_of_path, options, &mut note, emit)?;
        return Ok(counts.records);
    }
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
            let counts = gpuproj::read_parquet(&place, &profile_of_path, file, emit)?;
            Ok(report(&place, counts))
        }
        Opened::Archive(mut archive) => {
            let members = archive.find(GPU_PROJ_MEMBER);
            if members.is_empty() {
                if let Some((db, _copy)) = sqlite::report::open_in_archive(&mut archive)? {
                    let counts = sqlite::gpuproj::read_gpu_ranges(
                        &db,
                        &profile_of_path,
                        options,
                        &mut note,
                        emit,
                    )?;
                    return Ok(counts.records);
                }
                return Err(Error::data(
                    archive.place(),
                    format!(
                        "archive has no GPU projection table (looked for {GPU_PROJ_MEMBER} and \
                         {})",
                        sqlite::ARCHIVE_MEMBER
                    ),
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
                 nsys-jax archives, or such a Parquet file, or nsys SQLite exports; this is a \
                 text stream"
            ),
        )),
        Opened::Sqlite { place } => {
            let db = sqlite::Db::open(path, &place)?;
            let counts =
                sqlite::gpuproj::read_gpu_ranges(&db, &profile_of_path, options, &mut note, emit)?;
            Ok(counts.records)
        }
    }
}
