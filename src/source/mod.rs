//! The source layer: the only code that knows what kinds of input there are. A path (or
//! `-`) is sniffed once — gzip and xz by their magic bytes whatever the file is called,
//! zip archives and Parquet and SQLite files by their headers, extracted archives as
//! folders, `.nsys-rep` reports by name or header, text by its first line — and the tables
//! every tool reads come out of it whatever the container:
//!
//! | table | nsys-jax archive (zip, folder, combine) | nsys SQLite export / report / njx-capture archive |
//! |---|---|---|
//! | ranges ([`read_ranges`]) | `report_nvtx_pushpop_trace.{parquet,csv.xz,…}` ([`ranges::pushpop`]) | `NVTX_EVENTS` ([`ranges::nvtx`]) |
//! | GPU ranges ([`read_gpu_ranges`]) | `nvtx_gpu_proj_trace/trace.parquet` ([`gpu_ranges::parquet`]) | projected from the CUDA activity tables ([`gpu_ranges::sqlite`]) |
//! | launcher threads ([`devices`]) | `thread-metadata.parquet` | `ThreadNames`, else the kernels' `deviceId` |
//! | compiled programs ([`Profiles`]) | `XlaCompileBackend` ranges of the push/pop table | the same, from `NVTX_EVENTS` |
//! | HLO dumps ([`open_dumps`]) | `dump/module_*.hlo.pb.xz` | the njx-capture archive's `dump/`, or `--hlo` |
//!
//! Record streams (JSON Lines or CSV that the tools write) are recognised here too
//! ([`records`]), and [`split_inputs`] sorts inputs into records and profiles. Every
//! message names its place: `file`, `file:line`, `archive.zip!member:line`.

pub mod archive;
pub mod counting;
pub mod devices;
pub mod gpu_ops;
pub mod gpu_ranges;
pub mod layout;
pub mod limits;
mod parquet_footer;
pub mod payloads;
mod piped;
mod profile;
pub mod ranges;
pub mod records;
pub mod report;
mod sorter;
pub mod sqlite;
mod whole;
pub mod xla_names;

use crate::error::{Error, Result};
use crate::output::notes::Notes;
use crate::output::progress::Progress;
use crate::records::{GpuRange, Range};
pub use archive::Archive;
use counting::{Counting, Reading};
use limits::{Counted, Inflated, LineCap};
pub use profile::{ProfileTables, Profiles};
use ranges::check::IdReuse;
use records::{RecordStream, TextKind};
use sqlite::Db;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use layout::{
    ANALYSIS_DIR, DUMP_DIR, GPU_PROJ_MEMBER, PUSHPOP_MEMBERS, REPORT_MEMBER, SOURCES_DIR,
    SQLITE_MEMBER, THREADS_MEMBER,
};

// The first bytes of each kind of input: one table for reading them and for refusing to
// write over them (`output::guard`).
pub(crate) use crate::output::guard::ZIP_MAGIC;
use crate::output::guard::{EMPTY_ZIP_MAGIC, GZIP_MAGIC, PARQUET_MAGIC, SQLITE_MAGIC, XZ_MAGIC};

/// What to read from SQLite exports besides the push/pop ranges.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Also read NVTX start/end ranges (`nvtxRangeStart`/`End`), each as a root of its own.
    pub start_end: bool,
}

/// A byte stream with the name to use in messages about it.
pub struct Stream {
    /// Name for messages: the path, `-` for stdin, `archive.zip!member` inside an archive.
    pub place: String,
    /// Decompressed contents.
    pub reader: Box<dyn BufRead>,
}

/// What an input turned out to be.
enum Opened {
    /// A (decompressed) text stream: CSV or JSON Lines.
    Stream(Stream),
    /// An nsys-jax or nsys-jax-combine archive, zipped or extracted.
    Archive(Archive),
    /// A Parquet file on disk.
    Parquet { place: String, file: File },
    /// An nsys SQLite export.
    Sqlite,
    /// An nsys report (`.nsys-rep`), read through `nsys export`.
    Report,
}

/// Display name of a path for messages.
pub fn place_of(path: &Path) -> String {
    if path == Path::new("-") {
        "-".to_string()
    } else {
        path.display().to_string()
    }
}

/// For an error found once every input has been read (a range tree left open, say): the
/// error placed at the end of the last input (stdin where none is named).
pub fn at_end_of(inputs: &[PathBuf]) -> impl Fn(Error) -> Error + '_ {
    move |e| {
        let last = inputs
            .last()
            .map_or_else(|| "-".to_string(), |p| place_of(p));
        e.within(&format!("{last} (at its end)"))
    }
}

/// The profile name an input gives its records: the file name without directories and
/// without the `.zip`, `.gz`, `.xz`, `.csv`, `.parquet`, `.sqlite` or `.nsys-rep` suffixes.
pub fn profile_name(path: &Path) -> String {
    if path == Path::new("-") {
        return "stdin".to_string();
    }
    let mut name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    for suffix in [
        ".gz",
        ".xz",
        ".zip",
        ".csv",
        ".parquet",
        ".sqlite",
        ".jsonl",
        ".nsys-rep",
        ".qdrep",
    ] {
        if let Some(stripped) = name.strip_suffix(suffix) {
            name = stripped.to_string();
        }
    }
    name
}

/// Opens `path` (or stdin for `-`) and tells what it is, an nsys report included.
fn open_input(path: &Path, progress: &Progress) -> Result<Opened> {
    if report::is_report(path) {
        return Ok(Opened::Report);
    }
    open(path, progress)
}

/// Opens `path` (or stdin for `-`) and tells what it is, from its contents; what is read
/// of it counts in `progress`.
fn open(path: &Path, progress: &Progress) -> Result<Opened> {
    let place = place_of(path);
    if path == Path::new("-") {
        progress.reading(&place, None);
        let mut reader = BufReader::with_capacity(1 << 16, Reading::new(io::stdin(), progress));
        let head = peek(&mut reader, &place)?;
        if head.starts_with(ZIP_MAGIC) || head.starts_with(EMPTY_ZIP_MAGIC) {
            // A zip needs its central directory at the end: spooled to an unnamed
            // temporary file (memory stays flat however long stdin is).
            let mut spool = tempfile::tempfile().map_err(|e| Error::io(&place, e))?;
            io::copy(&mut reader, &mut spool).map_err(|e| Error::io(&place, e))?;
            spool
                .seek(SeekFrom::Start(0))
                .map_err(|e| Error::io(&place, e))?;
            return Ok(Opened::Archive(Archive::from_spool(
                place, "stdin", spool, progress,
            )?));
        }
        if head.starts_with(PARQUET_MAGIC) || head.starts_with(SQLITE_MAGIC) {
            return Err(Error::data(
                place,
                "Parquet and SQLite inputs need random access: name the file instead of piping it",
            ));
        }
        if head.len() >= 16 && report::MAGIC.starts_with(&head) {
            return Err(Error::data(
                place,
                "an .nsys-rep report: nsys exports it from a file, name the file instead of \
                 piping it",
            ));
        }
        let reader = text_lines(decompress(&place, reader)?)?;
        return Ok(Opened::Stream(Stream { place, reader }));
    }
    if path.is_dir() {
        return Ok(Opened::Archive(Archive::open_dir(path, progress)?));
    }
    let mut file = File::open(path).map_err(|e| Error::io(&place, e))?;
    let mut head = [0u8; 16];
    let n = read_up_to(&mut file, &mut head).map_err(|e| Error::io(&place, e))?;
    let head = &head[..n];
    file.seek(SeekFrom::Start(0))
        .map_err(|e| Error::io(&place, e))?;
    if head.starts_with(ZIP_MAGIC) || head.starts_with(EMPTY_ZIP_MAGIC) {
        Ok(Opened::Archive(Archive::open_zip(path, file, progress)?))
    } else if head.starts_with(PARQUET_MAGIC) {
        Ok(Opened::Parquet { place, file })
    } else if head.starts_with(SQLITE_MAGIC) {
        Ok(Opened::Sqlite)
    } else {
        progress.reading(&place, file.metadata().ok().map(|m| m.len()));
        let raw = BufReader::with_capacity(1 << 16, Reading::new(file, progress));
        let reader = text_lines(decompress_apart(&place, raw)?)?;
        Ok(Opened::Stream(Stream { place, reader }))
    }
}

/// A gzip or xz decoder over a compressed stream, counting what it consumes.
enum Decoder<R: BufRead> {
    Gzip(flate2::bufread::MultiGzDecoder<Counted<R>>),
    Xz(xz2::bufread::XzDecoder<Counted<R>>),
}

impl<R: BufRead> Decoder<R> {
    /// Compressed bytes consumed so far.
    fn compressed(&self) -> u64 {
        match self {
            Decoder::Gzip(d) => d.get_ref().count,
            Decoder::Xz(d) => d.get_ref().count,
        }
    }
}

impl<R: BufRead> Read for Decoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Decoder::Gzip(d) => d.read(buf),
            Decoder::Xz(d) => d.read(buf),
        }
    }
}

/// A bounded decoder, or the reader itself when it was not compressed.
type Decoded<R> = std::result::Result<Inflated<Decoder<R>>, R>;

/// The decoder of `reader` when its first bytes say it is compressed, else `reader`; a
/// decoder is bounded by the decompression ratio of [`limits`].
fn decoder<R: BufRead>(place: &str, mut reader: R) -> Result<Decoded<R>> {
    let head = peek(&mut reader, place)?;
    let decoder = if head.starts_with(GZIP_MAGIC) {
        Decoder::Gzip(flate2::bufread::MultiGzDecoder::new(Counted::new(reader)))
    } else if head.starts_with(XZ_MAGIC) {
        Decoder::Xz(xz2::bufread::XzDecoder::new_multi_decoder(Counted::new(
            reader,
        )))
    } else {
        return Ok(Err(reader));
    };
    let ratio = limits::get()?.ratio;
    Ok(Ok(Inflated::new(decoder, ratio, Decoder::compressed)))
}

/// Wraps `reader` in a gzip or xz decoder when its first bytes say it is compressed.
pub fn decompress<'a, R: BufRead + 'a>(place: &str, reader: R) -> Result<Box<dyn BufRead + 'a>> {
    Ok(match decoder(place, reader)? {
        Ok(d) => Box::new(BufReader::with_capacity(1 << 16, d)),
        Err(plain) => Box::new(plain),
    })
}

/// [`decompress`], the decoder on a thread of its own ([`piped`]) so that decoding and
/// parsing overlap — unless this thread is one of several reading at once
/// ([`crate::util::parallel::cores_taken`]).
pub fn decompress_apart<R: BufRead + Send + 'static>(
    place: &str,
    reader: R,
) -> Result<Box<dyn BufRead>> {
    if crate::util::parallel::cores_taken() {
        return decompress(place, reader);
    }
    Ok(match decoder(place, reader)? {
        Ok(d) => Box::new(piped::spawn(d)),
        Err(plain) => Box::new(plain),
    })
}

/// A text stream with its lines capped at the length [`limits`] allows.
pub fn text_lines<'a>(reader: Box<dyn BufRead + 'a>) -> Result<Box<dyn BufRead + 'a>> {
    Ok(Box::new(LineCap::new(reader, limits::get()?.line)))
}

/// Whether a stream starting with `head` is gzip- or xz-compressed.
/// The paths listed in the file `list` (`@LIST` on a command line), one per line, blank
/// lines skipped, a trailing carriage return dropped.
pub fn input_list(list: &str) -> Result<Vec<std::ffi::OsString>> {
    let text = std::fs::read(list)
        .map_err(|e| Error::Usage(format!("@{list}: cannot read the list of inputs: {e}")))?;
    let mut out = Vec::new();
    for (n, line) in text.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.trim_ascii().is_empty() {
            continue;
        }
        let path = std::str::from_utf8(line).map_err(|_| {
            Error::data(
                format!("{list}:{}", n + 1),
                "a path that is not UTF-8 in a list of inputs",
            )
        })?;
        out.push(std::ffi::OsString::from(path));
    }
    Ok(out)
}

fn is_compressed(head: &[u8]) -> bool {
    head.starts_with(GZIP_MAGIC) || head.starts_with(XZ_MAGIC)
}

/// The first bytes of a buffered stream, without consuming them.
fn peek<R: BufRead + ?Sized>(reader: &mut R, place: &str) -> Result<Vec<u8>> {
    let buf = loop {
        match reader.fill_buf() {
            Ok(buf) => break buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(place, e)),
        }
    };
    Ok(buf[..buf.len().min(16)].to_vec())
}

/// Reads as much of `buf` as `reader` holds.
pub(crate) fn read_up_to<R: Read>(reader: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match reader.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Every regular file under `dir`, as `/`-separated paths relative to it, sorted.
/// Symbolic links count as the regular files they point to when those lie inside `dir`;
/// links to folders are not followed (so a link loop such as `a -> .` cannot make the walk
/// endless), links out of `dir` are left out (nothing outside is reached through one), and
/// so are FIFOs, sockets and devices (opening a FIFO would block; `/dev/zero` never ends).
pub fn walk_dir(dir: &Path) -> Result<Vec<String>> {
    let root = dir
        .canonicalize()
        .map_err(|e| Error::io(place_of(dir), e))?;
    let mut out = Vec::new();
    let mut todo: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| Error::io(place_of(&d), e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(place_of(&d), e))?;
            let path = entry.path();
            let kind = entry
                .file_type()
                .map_err(|e| Error::io(place_of(&path), e))?;
            let file = if kind.is_dir() {
                todo.push(path);
                continue;
            } else if kind.is_symlink() {
                path.canonicalize().is_ok_and(|target| {
                    target.starts_with(&root) && target.metadata().is_ok_and(|m| m.is_file())
                })
            } else {
                kind.is_file()
            };
            if !file {
                continue;
            }
            if let Ok(rel) = path.strip_prefix(dir) {
                let parts: Vec<_> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(parts.join("/"));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Whether the top of folder `dir` looks like an extracted nsys-jax (or combine) archive
/// or an XLA dump folder: it holds a `report*` table or export, `nvtx_gpu_proj_trace/`,
/// `thread-metadata.parquet`, `dump/` or `module_*` dump files — or nothing (a dump folder
/// nothing was written to). Read before walking, so that a wrong folder (`njx-export
/// /usr`) is refused at once.
pub fn looks_like_archive_dir(dir: &Path) -> Result<bool> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(place_of(dir), e))?;
    let mut empty = true;
    for entry in entries {
        empty = false;
        let entry = entry.map_err(|e| Error::io(place_of(dir), e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("report")
            || name.starts_with("module_")
            || name == "dump"
            || name == "nvtx_gpu_proj_trace"
            || name == "thread-metadata.parquet"
        {
            return Ok(true);
        }
    }
    Ok(empty)
}

/// Opens an SQLite export input: `path` itself, or the export of the report at `path`
/// (`report`) in a temporary file that lives as long as the returned guard. What is read
/// of it is said in `progress`.
fn open_db(
    path: &Path,
    report: bool,
    progress: &Progress,
) -> Result<(Db, Option<report::Exported>)> {
    let place = place_of(path);
    if report {
        progress.doing(&place, "exporting with nsys");
        let exported = report::export(path, &place, progress)?;
        let db = Db::open(exported.path(), &place)?.reporting(progress);
        Ok((db, Some(exported)))
    } else {
        Ok((Db::open(path, &place)?.reporting(progress), None))
    }
}

/// Reads range records from any input a range tool accepts — a push/pop CSV or Parquet
/// table, an nsys-jax archive (every profile in it), an nsys SQLite export or `.nsys-rep`
/// report, or range records as JSON Lines or CSV — handing each to `emit`; what was
/// assumed or left out goes to `notes` (and the input, once read, counts as done in its
/// progress). Returns how many were read.
pub fn read_ranges(
    path: &Path,
    options: Options,
    notes: &Notes,
    emit: &mut dyn FnMut(Range) -> Result<()>,
) -> Result<u64> {
    read_ranges_or_folded(path, options, notes, emit, None)
}

/// Where folded stacks go: each stack and its count.
pub type FoldedSink<'a> = dyn FnMut(&str, f64) -> Result<()> + 'a;

/// [`read_ranges`], where folded stacks (`stack count` lines) are read too, each stack
/// and count handed to `folded` (njx-flamefold draws them); returns how many ranges or
/// stacks were read.
pub fn read_ranges_or_folded(
    path: &Path,
    options: Options,
    notes: &Notes,
    emit: &mut dyn FnMut(Range) -> Result<()>,
    folded: Option<&mut FoldedSink>,
) -> Result<u64> {
    let n = ranges_of(path, options, notes, emit, folded)?;
    notes.progress().input_done(path);
    Ok(n)
}

fn ranges_of(
    path: &Path,
    options: Options,
    notes: &Notes,
    emit: &mut dyn FnMut(Range) -> Result<()>,
    folded: Option<&mut FoldedSink>,
) -> Result<u64> {
    let profile_of_path: Arc<str> = profile_name(path).into();
    let progress = notes.progress();
    match open_input(path, progress)? {
        kind @ (Opened::Sqlite | Opened::Report) => {
            let (db, _exported) = open_db(path, matches!(kind, Opened::Report), progress)?;
            ranges::nvtx::read_ranges(&db, &profile_of_path, options, notes, emit)
        }
        Opened::Stream(mut stream) => {
            let place = stream.place.clone();
            match records::sniff(&place, &mut stream.reader)? {
                TextKind::PushPopCsv => {
                    ranges::pushpop::read_csv(&place, &profile_of_path, stream.reader, notes, emit)
                }
                kind @ (TextKind::JsonLines | TextKind::RecordCsv) => {
                    // Ids given again within a profile are counted, as in push/pop tables.
                    let mut reuse = IdReuse::default();
                    let mut profile: Option<Arc<str>> = None;
                    let mut emit = |r: Range| {
                        if profile.as_ref() != Some(&r.profile) {
                            reuse.next_profile();
                            profile = Some(r.profile.clone());
                        }
                        reuse.saw(r.id, || {
                            format!("{place} (profile {}, id {})", r.profile, r.id)
                        });
                        emit(r)
                    };
                    let n = RecordStream {
                        firsts: None,
                        place: place.clone(),
                        kind,
                        reader: stream.reader,
                    }
                    .read(&mut emit)?;
                    if let Some(note) = reuse.take_note() {
                        notes.note(note);
                    }
                    Ok(n)
                }
                TextKind::Folded if folded.is_some() => {
                    let folded = folded.expect("checked");
                    records::read_folded(&place, &mut stream.reader, folded)
                }
                kind @ (TextKind::Unknown(_) | TextKind::Binary(_) | TextKind::Folded) => {
                    Err(Error::data(
                        format!("{place}:1"),
                        format!(
                            "{}; ranges come from an nvtx_pushpop_trace CSV (`nsys stats --report \
                         nvtx_pushpop_trace --format csv`), an nsys-jax archive, an nsys \
                         SQLite export or report, or njx-export's range records",
                            records::what_text_is(&kind, "range records or an NVTX table")
                        ),
                    ))
                }
                TextKind::Empty => Err(Error::data(place, "empty input: no header line")),
            }
        }
        Opened::Parquet { place, file } => {
            // Read in ranges, some twice (the footer): no bar of its size.
            progress.reading(&place, None);
            let file = Counting::new(file, progress);
            ranges::pushpop::read_parquet(&place, &profile_of_path, file, notes, emit)
        }
        Opened::Archive(mut archive) => {
            let Some(members) = PUSHPOP_MEMBERS
                .iter()
                .map(|m| archive.find(m))
                .find(|found| !found.is_empty())
            else {
                let (db, _copy) = report::open_in_archive(
                    &mut archive,
                    "NVTX push/pop table",
                    &PUSHPOP_MEMBERS.join(", "),
                )?;
                return ranges::nvtx::read_ranges(&db, &profile_of_path, options, notes, emit);
            };
            let mut total = 0;
            for member in members {
                let profile: Arc<str> = member.profile.as_str().into();
                total += ranges::pushpop::read_member(
                    &mut archive,
                    &member.path,
                    &profile,
                    notes,
                    emit,
                )?;
            }
            Ok(total)
        }
    }
}

/// Reads GPU-projected range records from an nsys-jax archive (every profile in it), a
/// standalone `trace.parquet`, or an nsys SQLite export or `.nsys-rep` report (projected
/// here, see [`gpu_ranges::sqlite`]), handing each to `emit`. GPU work outside any range
/// is in no record: how much goes to `notes` (and the input, once read, counts as done in
/// its progress). Returns how many records were read.
pub fn read_gpu_ranges(
    path: &Path,
    options: Options,
    notes: &Notes,
    emit: &mut dyn FnMut(GpuRange) -> Result<()>,
) -> Result<u64> {
    let n = gpu_ranges_of(path, options, notes, emit)?;
    notes.progress().input_done(path);
    Ok(n)
}

fn gpu_ranges_of(
    path: &Path,
    options: Options,
    notes: &Notes,
    emit: &mut dyn FnMut(GpuRange) -> Result<()>,
) -> Result<u64> {
    let profile_of_path: Arc<str> = profile_name(path).into();
    let progress = notes.progress();
    let opened = open_input(path, progress)?;
    let report = |place: &str, counts: gpu_ranges::parquet::Counts| {
        if counts.outside > 0 {
            notes.note(format!(
                "{place}: {} rows of GPU work outside any NVTX range (no RangeId) not exported",
                counts.outside
            ));
        }
        counts.exported
    };
    match opened {
        kind @ (Opened::Sqlite | Opened::Report) => {
            let (db, _exported) = open_db(path, matches!(kind, Opened::Report), progress)?;
            let counts =
                gpu_ranges::sqlite::read_gpu_ranges(&db, &profile_of_path, options, notes, emit)?;
            Ok(counts.records)
        }
        Opened::Parquet { place, file } => {
            // Read in ranges, some twice (the footer): no bar of its size.
            progress.reading(&place, None);
            let file = Counting::new(file, progress);
            let counts = gpu_ranges::parquet::read_parquet(&place, &profile_of_path, file, emit)?;
            Ok(report(&place, counts))
        }
        Opened::Archive(mut archive) => {
            let members = archive.find(GPU_PROJ_MEMBER);
            if members.is_empty() {
                let (db, _copy) =
                    report::open_in_archive(&mut archive, "GPU projection table", GPU_PROJ_MEMBER)?;
                let counts = gpu_ranges::sqlite::read_gpu_ranges(
                    &db,
                    &profile_of_path,
                    options,
                    notes,
                    emit,
                )?;
                return Ok(counts.records);
            }
            let mut total = 0;
            for member in members {
                let place = archive.member_place(&member.path);
                let profile: Arc<str> = member.profile.as_str().into();
                let counts = gpu_ranges::parquet::read_parquet(
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
    }
}

/// Reads the kernels or memory operations ([`gpu_ops`]) of an nsys SQLite export, an
/// `.nsys-rep` report, or an archive holding an export ([`SQLITE_MEMBER`], as njx-capture
/// writes them), handing each record to `emit`. nsys-jax archives hold no such table: an
/// error naming the file says what is needed. Returns how many records were read.
pub fn read_gpu_ops(
    path: &Path,
    which: gpu_ops::Which,
    notes: &Notes,
    emit: &mut dyn FnMut(gpu_ops::GpuOp) -> Result<()>,
) -> Result<u64> {
    let profile: Arc<str> = profile_name(path).into();
    let needs = format!(
        "--table {} needs the CUDA activity tables of an nsys SQLite export (`nsys export \
         --type sqlite REPORT.nsys-rep`), a .nsys-rep report, or an archive holding one as \
         {SQLITE_MEMBER} (njx-capture writes them)",
        which.table()
    );
    with_export(
        path,
        which.table(),
        &needs,
        "kernel or memory-operation table",
        notes,
        |db| gpu_ops::sqlite::read(db, which, &profile, notes, emit),
    )
}

/// Reads, in one opening of an nsys SQLite export, an `.nsys-rep` report (exported once)
/// or an archive holding an export (njx-capture's), its kernels and memory operations
/// ([`gpu_ops`], handed to `ops`) and the CUDA API calls ([`gpu_ops::sqlite::calls`])
/// whose names `keep` accepts (handed to `calls`); returns which CUDA activity tables the
/// export has (a rule without its table says so). Other inputs are refused as by
/// [`read_gpu_ops`].
pub fn read_cuda_activity(
    path: &Path,
    keep: &dyn Fn(&str) -> bool,
    notes: &Notes,
    ops: &mut dyn FnMut(gpu_ops::GpuOp) -> Result<()>,
    calls: &mut dyn FnMut(crate::records::ApiCall) -> Result<()>,
) -> Result<gpu_ops::sqlite::calls::CudaTables> {
    let profile: Arc<str> = profile_name(path).into();
    let needs = format!(
        "the CUDA activity tables are in nsys SQLite exports (`nsys export --type sqlite \
         REPORT.nsys-rep`), .nsys-rep reports, or archives holding one as {SQLITE_MEMBER} \
         (njx-capture writes them)"
    );
    let mut tables = None;
    with_export(
        path,
        "cuda-activity",
        &needs,
        "CUDA activity table",
        notes,
        |db| {
            tables = Some(gpu_ops::sqlite::calls::tables(db)?);
            let mut n = gpu_ops::sqlite::calls::read(db, &profile, keep, calls)?;
            for which in [gpu_ops::Which::Kernels, gpu_ops::Which::Memops] {
                n += gpu_ops::sqlite::read(db, which, &profile, notes, ops)?;
            }
            Ok(n)
        },
    )?;
    Ok(tables.unwrap_or_default())
}

/// Reads the payloads of the NVTX events of an nsys SQLite export, a `.nsys-rep` report or
/// an njx-capture archive ([`payloads`]), handing each field to `emit`. Returns how many.
pub fn read_payloads(
    path: &Path,
    notes: &Notes,
    emit: &mut dyn FnMut(crate::records::PayloadField) -> Result<()>,
) -> Result<u64> {
    let profile: Arc<str> = profile_name(path).into();
    let needs = format!(
        "--table payloads needs the NVTX_EVENTS table of an nsys SQLite export (`nsys export \
         --type sqlite REPORT.nsys-rep`), a .nsys-rep report, or an archive holding one as \
         {SQLITE_MEMBER} (njx-capture writes them)"
    );
    with_export(path, "payloads", &needs, "NVTX payload", notes, |db| {
        payloads::read(db, &profile, notes, emit)
    })
}

/// Runs `read` on the nsys export `path` is, or holds (a `.nsys-rep` report exported with
/// nsys, an archive's `report.sqlite`); any other input is refused, saying what `table`
/// `needs` (an nsys-jax archive keeps no `what`).
fn with_export(
    path: &Path,
    table: &str,
    needs: &str,
    what: &str,
    notes: &Notes,
    read: impl FnOnce(&Db) -> Result<u64>,
) -> Result<u64> {
    let progress = notes.progress();
    let n = match open_input(path, progress)? {
        kind @ (Opened::Sqlite | Opened::Report) => {
            let (db, _exported) = open_db(path, matches!(kind, Opened::Report), progress)?;
            read(&db)
        }
        Opened::Archive(mut archive) => {
            if archive.find(SQLITE_MEMBER).is_empty() {
                return Err(Error::data(
                    archive.place(),
                    format!(
                        "archive has no {SQLITE_MEMBER}: nsys-jax archives keep no {what}; {needs}"
                    ),
                ));
            }
            let (db, _copy) = report::open_in_archive(&mut archive, table, SQLITE_MEMBER)?;
            read(&db)
        }
        Opened::Parquet { place, .. } => {
            Err(Error::data(place, format!("a Parquet file; {needs}")))
        }
        Opened::Stream(stream) => Err(Error::data(stream.place, format!("a text stream; {needs}"))),
    }?;
    progress.input_done(path);
    Ok(n)
}

/// Sorts the inputs of a tool that reads executions: record streams (JSON Lines or CSV
/// written by `njx-export --table modules|thunks`, named `what` in messages) go to
/// `stream` as they are met, empty ones skipped; the profiles (archives, SQLite exports,
/// `.nsys-rep` reports) are returned, to be opened with [`Profiles::open`]. What is read
/// counts in `progress`, each record stream as an input done.
pub fn split_inputs(
    paths: &[PathBuf],
    what: &str,
    progress: &Progress,
    stream: &mut dyn FnMut(RecordStream) -> Result<()>,
) -> Result<Vec<PathBuf>> {
    let mut profiles = Vec::new();
    let mut empty = Vec::new();
    let mut empty_files = Vec::new();
    for path in paths {
        match open_input(path, progress)? {
            Opened::Archive(_) | Opened::Sqlite | Opened::Report => profiles.push(path.clone()),
            Opened::Stream(mut s) => match records::sniff(&s.place, &mut s.reader)? {
                kind @ (TextKind::JsonLines | TextKind::RecordCsv) => {
                    stream(RecordStream {
                        firsts: None,
                        place: s.place,
                        kind,
                        reader: s.reader,
                    })?;
                    progress.input_done(path);
                }
                TextKind::Empty => {
                    if path != Path::new("-") {
                        empty_files.push(s.place.clone());
                    }
                    empty.push(s.place);
                    progress.input_done(path);
                }
                kind => {
                    return Err(Error::data(
                        s.place,
                        format!(
                            "{}; give njx-export --table {what} output (or the profiles)",
                            records::what_text_is(&kind, &format!("{what} records"))
                        ),
                    ));
                }
            },
            Opened::Parquet { place, .. } => {
                return Err(Error::data(
                    place,
                    format!("not {what} records, an nsys-jax archive or an nsys SQLite export"),
                ));
            }
        }
    }
    // A named file that is empty among others is a map step that wrote nothing (a killed
    // task, a full disk): its rank would be missing without a word. Stdin that is empty
    // among files is a pipe with nothing in it, skipped.
    if !empty_files.is_empty() && empty.len() < paths.len() {
        return Err(Error::data(
            empty_files.join(", "),
            "empty: nothing to read (a map step that wrote nothing?); give only inputs that \
             hold records, partial results or profiles",
        ));
    }
    // Nothing read is no answer: `njx-modules < /dev/null` (an empty glob, a failed
    // export upstream) must not pass for a run without modules.
    if !paths.is_empty() && empty.len() == paths.len() {
        let every = if empty.len() == 1 {
            String::new()
        } else {
            format!(" (all {} inputs)", empty.len())
        };
        return Err(Error::data(
            empty.join(", "),
            format!(
                "empty{every}: nothing to read; expected records (njx-export --table {}) or \
                 profiles (archives, SQLite exports, .nsys-rep reports)",
                one_of(what)
            ),
        ));
    }
    Ok(profiles)
}

/// `a|b|c` as `a, b or c`.
fn one_of(tables: &str) -> String {
    match tables.rsplit_once('|') {
        Some((most, last)) => format!("{} or {last}", most.replace('|', ", ")),
        None => tables.to_string(),
    }
}

/// Opens a source of HLO dumps (`--hlo`, or an archive among the inputs): an nsys-jax
/// archive or a folder of XLA dumps, the dumps read from it counted in `progress`.
pub fn open_dumps(path: &Path, progress: &Progress) -> Result<Archive> {
    match open(path, progress)? {
        Opened::Archive(a) => Ok(a),
        _ => Err(Error::data(
            place_of(path),
            "holds no HLO dumps: they are read from nsys-jax archives, njx-capture archives \
             and folders of XLA dumps",
        )),
    }
}

/// Whether `path` is an archive or folder, a source of HLO dumps.
pub fn is_archive(path: &Path) -> bool {
    path != Path::new("-")
        && (path.is_dir() || matches!(open(path, &Progress::none()), Ok(Opened::Archive(_))))
}

/// Whether `path` holds CUDA activity tables (kernels, memory operations): an nsys SQLite
/// export, a `.nsys-rep` report, or an archive holding an export (njx-capture's); not an
/// nsys-jax archive, which keeps none, nor records. A path that does not open holds none
/// here (its error is said where it is read).
pub fn holds_gpu_ops(path: &Path) -> bool {
    if path == Path::new("-") {
        return false;
    }
    match open_input(path, &Progress::none()) {
        Ok(Opened::Sqlite | Opened::Report) => true,
        Ok(Opened::Archive(a)) => !a.find(layout::SQLITE_MEMBER).is_empty(),
        _ => false,
    }
}

/// Opens a text input (plain or compressed, or stdin); any other kind of input is an
/// error saying that it is not `what`. What is read of it counts in `progress`.
pub fn open_text(path: &Path, what: &str, progress: &Progress) -> Result<Stream> {
    match open(path, progress)? {
        Opened::Stream(s) => Ok(s),
        _ => Err(Error::data(place_of(path), format!("not {what}"))),
    }
}
