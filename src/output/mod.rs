//! Where output goes and how records are written: JSON Lines or CSV from the same serde
//! structs, stdout block-buffered when it is not a terminal (as ripgrep does) so that
//! pipes are fast, line-buffered on a terminal so that people see progress.

pub mod charts;
pub mod guard;
pub mod json;
pub mod notes;
pub mod numbers;
pub mod parquet;
pub mod progress;

use crate::error::{Error, Result};
use crate::output::progress::Progress;
use clap::ValueEnum;
use serde::Serialize;
use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, LineWriter, Write};
use std::path::{Path, PathBuf};

/// How a tool writes its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned text for people (reports only).
    Table,
    /// JSON Lines: one object per line.
    Json,
    /// CSV with a header line.
    Csv,
    /// Apache Parquet: typed columns (records only; needs `-o FILE`).
    Parquet,
}

/// Where a tool's output goes: stdout, or a file written under a temporary name beside it
/// and renamed into place by [`Output::finish`], so that an error or an interruption never
/// leaves a partial file at the final path (nor truncates what was there). Devices, FIFOs
/// and other non-regular files (`-o /dev/null`) are written in place. Write errors name
/// the file.
pub struct Output {
    sink: Sink,
    /// The job's progress, drawn on the terminal this output is written to: erased at the
    /// first write ([`Output::ends_progress`]).
    progress: Option<Progress>,
}

enum Sink {
    Stdout(Box<dyn Write>),
    Staged {
        writer: BufWriter<tempfile::NamedTempFile>,
        dest: PathBuf,
        /// Removes the temporary file if a signal ends the tool first.
        _staged: crate::util::cleanup::Staged,
    },
    InPlace {
        writer: BufWriter<File>,
        dest: PathBuf,
    },
}

/// What `--version` prints: the version, then what the tools were built from (git
/// revision where known, compiler); `-V` (and the man pages) give the version alone.
pub const LONG_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("NJX_BUILD"), ")");

/// This program's name as it was run (`njx-report`), for messages and for what a file
/// says wrote it; `njx` where the command line has none.
pub fn program_name() -> String {
    std::env::args_os()
        .next()
        .map(PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "njx".into())
}

/// Opens the output: the named file, or stdout when `path` is `None` or `-`. Refuses, as a
/// usage error and before anything is read, a file that is also one of `inputs` (the
/// same file, by device and inode) and a folder that does not exist or cannot be written.
pub fn open_output(path: Option<&Path>, inputs: &[PathBuf]) -> Result<Output> {
    let Some(dest) = path.filter(|p| *p != Path::new("-")) else {
        let stdout = io::stdout();
        let w: Box<dyn Write> = if stdout.is_terminal() {
            Box::new(LineWriter::new(stdout.lock()))
        } else {
            Box::new(BufWriter::with_capacity(1 << 16, stdout.lock()))
        };
        return Ok(Output {
            sink: Sink::Stdout(w),
            progress: None,
        });
    };
    let place = dest.display().to_string();
    // A link is written through: the file it names gets the output, the link stays.
    let resolved = guard::through_links(dest);
    let dest = resolved.as_path();
    if let Some(input) = inputs.iter().find(|i| inside_folder(dest, i)) {
        return Err(Error::Usage(format!(
            "{place}: the output is inside the input folder {}: write elsewhere",
            input.display()
        )));
    }
    if let Ok(meta) = std::fs::metadata(dest) {
        if let Some(input) = inputs.iter().find(|i| same_file(i, &meta)) {
            return Err(Error::Usage(format!(
                "{place}: the output is also the input {}: write elsewhere",
                input.display()
            )));
        }
        if !meta.is_file() {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(dest)
                .map_err(|e| Error::io(&place, e))?;
            return Ok(Output {
                sink: Sink::InPlace {
                    writer: BufWriter::with_capacity(1 << 16, file),
                    dest: dest.to_path_buf(),
                },
                progress: None,
            });
        }
    }
    let folder = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match std::fs::metadata(folder) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(Error::data(
                &place,
                format!("{} is not a folder", folder.display()),
            ));
        }
        Err(e) => {
            return Err(Error::data(
                &place,
                format!("cannot write in its folder {}: {e}", folder.display()),
            ));
        }
    }
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".njx-partial");
    // The mode a new file gets (less the umask), not the temporary file's 0600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    crate::util::cleanup::arm();
    let temp = builder.tempfile_in(folder).map_err(|e| {
        // tempfile's message names its temporary path; name the folder instead.
        let cause = e.raw_os_error().map_or_else(
            || e.kind().to_string(),
            |c| io::Error::from_raw_os_error(c).to_string(),
        );
        Error::data(
            &place,
            format!("cannot write in its folder {}: {cause}", folder.display()),
        )
    })?;
    let staged = crate::util::cleanup::stage(temp.path());
    Ok(Output {
        sink: Sink::Staged {
            writer: BufWriter::with_capacity(1 << 16, temp),
            dest: dest.to_path_buf(),
            _staged: staged,
        },
        progress: None,
    })
}

/// Whether `dest` would be written inside `input`, a folder read as an input (an
/// extracted archive, a folder of dumps).
fn inside_folder(dest: &Path, input: &Path) -> bool {
    let folder = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    input.is_dir()
        && match (folder.canonicalize(), input.canonicalize()) {
            (Ok(folder), Ok(input)) => folder.starts_with(input),
            _ => false,
        }
}

/// Whether `path` is the file `meta` describes.
fn same_file(path: &Path, meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = (path, meta);
        false
    }
}

impl Output {
    /// Flushes the output and, for a file, moves it into place. Without it, a file output
    /// is discarded.
    pub fn finish(self) -> Result<()> {
        match self.sink {
            Sink::Stdout(mut w) => w.flush().map_err(Error::Output),
            Sink::InPlace { mut writer, dest } => {
                writer.flush().map_err(|e| Error::Output(in_file(&dest, e)))
            }
            Sink::Staged { writer, dest, .. } => {
                let temp = writer
                    .into_inner()
                    .map_err(|e| Error::Output(in_file(&dest, e.into_error())))?;
                temp.as_file()
                    .sync_all()
                    .map_err(|e| Error::Output(in_file(&dest, e)))?;
                temp.persist(&dest)
                    .map_err(|e| Error::Output(in_file(&dest, e.error)))?;
                Ok(())
            }
        }
    }
}

impl Output {
    /// When this output is stdout on a terminal (where the progress is drawn too), erases
    /// `progress` for good before the first byte is written: output and the progress line
    /// never mix, and a tool whose output streams shows that instead.
    pub fn ends_progress(&mut self, progress: &Progress) {
        if matches!(self.sink, Sink::Stdout(_)) && progress.is_shown() && io::stdout().is_terminal()
        {
            self.progress = Some(progress.clone());
        }
    }

    /// Runs `f` on the writer; errors of a file output name it.
    fn on<T>(&mut self, f: impl FnOnce(&mut dyn Write) -> io::Result<T>) -> io::Result<T> {
        if let Some(progress) = self.progress.take() {
            progress.finish();
        }
        let (writer, dest): (&mut dyn Write, Option<&Path>) = match &mut self.sink {
            Sink::Stdout(w) => (w.as_mut(), None),
            Sink::Staged { writer, dest, .. } => (writer, Some(dest)),
            Sink::InPlace { writer, dest } => (writer, Some(dest)),
        };
        f(writer).map_err(|e| match dest {
            Some(dest) => in_file(dest, e),
            None => e,
        })
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.on(|w| w.write(buf))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.on(|w| w.write_all(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.on(|w| w.flush())
    }
}

/// A write error naming the file written.
fn in_file(dest: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", dest.display()))
}

/// Writes a stream of records in the chosen format.
pub struct RecordWriter<W: Write> {
    inner: Inner<W>,
}

enum Inner<W: Write> {
    /// The sink and a reused line buffer: one write per record, not one per token.
    Json(W, Vec<u8>),
    /// The CSV writer, and whether a record (and so the header) was written.
    Csv(Box<csv::Writer<W>>, bool),
    /// Columns, written a row group at a time.
    Parquet(Box<parquet::ParquetWriter<W>>),
}

impl<W: Write> RecordWriter<W> {
    /// A writer for `format`; `table` is not a record format and is refused as bad usage.
    pub fn new(out: W, format: Format) -> Result<Self> {
        let inner = match format {
            Format::Json => Inner::Json(out, Vec::with_capacity(1024)),
            Format::Csv => Inner::Csv(Box::new(csv::WriterBuilder::new().from_writer(out)), false),
            Format::Parquet => Inner::Parquet(Box::new(parquet::ParquetWriter::new(out))),
            Format::Table => {
                return Err(Error::Usage(
                    "--format table is for reports; records are written as json, csv or parquet"
                        .into(),
                ));
            }
        };
        Ok(RecordWriter { inner })
    }

    /// Writes one record.
    pub fn write<T: Serialize>(&mut self, record: &T) -> Result<()> {
        match &mut self.inner {
            Inner::Json(w, line) => {
                line.clear();
                json::write_line(line, record).map_err(|e| Error::Output(e.into()))?;
                line.push(b'\n');
                w.write_all(line).map_err(Error::Output)
            }
            Inner::Csv(w, written) => {
                *written = true;
                Ok(w.serialize(record)?)
            }
            Inner::Parquet(w) => w.write(record),
        }
    }

    /// Before any record: makes `probe`'s fields columns of a Parquet file that may get no
    /// record (a table of several tables: call it with one of each); nothing in JSON or
    /// CSV.
    pub fn probe_columns<T: Serialize>(&mut self, probe: &T) -> Result<()> {
        match &mut self.inner {
            Inner::Parquet(w) => w.columns_of(probe),
            _ => Ok(()),
        }
    }

    /// Flushes everything written so far. A CSV of no records still gets its header, and a
    /// Parquet file its columns: the fields of `T`, the type of the records (a file a
    /// spreadsheet or script can open).
    pub fn finish<T: Serialize + Default>(self) -> Result<()> {
        match self.inner {
            Inner::Parquet(mut w) => {
                w.columns_of(&T::default())?;
                w.finish()
            }
            Inner::Json(mut w, _) => w.flush().map_err(Error::Output),
            Inner::Csv(mut w, written) => {
                if !written {
                    // The header serde writes before a record: that of a default record.
                    let mut probe = csv::Writer::from_writer(Vec::new());
                    probe.serialize(T::default())?;
                    let bytes = probe
                        .into_inner()
                        .map_err(|e| Error::Output(e.into_error()))?;
                    let mut header = csv::Reader::from_reader(bytes.as_slice());
                    w.write_record(header.byte_headers()?)?;
                }
                w.flush().map_err(Error::Output)
            }
        }
    }
}

/// Writes `rows` as records in `format` (json or csv), a CSV of none with its header.
pub fn write_records<T: Serialize + Default>(
    out: &mut dyn Write,
    format: Format,
    rows: &[T],
) -> Result<()> {
    let mut w = RecordWriter::new(out, format)?;
    rows.iter().try_for_each(|r| w.write(r))?;
    w.finish::<T>()
}

/// A table cell for people: `v`, or `-` where there is no value.
pub fn or_dash(v: Option<impl ToString>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// Writes rows of text cells as a table aligned on a terminal: the first row is the header,
/// columns listed in `right` are right-aligned (numbers).
pub fn write_table(out: &mut dyn Write, rows: &[Vec<String>], right: &[usize]) -> Result<()> {
    write_table_with(out, rows.len(), &|i| Cow::Borrowed(&rows[i]), right)
}

/// The width text tables are cut to, 0 for whole: set by a command whose table goes to a
/// terminal ([`fit_tables_to`]).
static TABLE_WIDTH: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The narrowest a cut column becomes.
const LEAST_CUT: usize = 12;

/// Cuts the text columns of every table written from now on so that a row fits `columns`
/// characters (`None`: whole), as `ls` and `git` fit a terminal: the widest text columns
/// (op_name, source, names) lose their ends, marked `…`; numbers are never cut. Records
/// (`--format json|csv`) are never cut.
pub fn fit_tables_to(columns: Option<usize>) {
    TABLE_WIDTH.store(columns.unwrap_or(0), std::sync::atomic::Ordering::Relaxed);
}

/// The widths a table's columns are written at: `widths` where the row fits `limit`, else
/// the widest text columns (not in `right`) narrowed, none below [`LEAST_CUT`].
fn fitted(widths: &[usize], right: &[usize], limit: usize) -> Vec<usize> {
    let mut out = widths.to_vec();
    let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * w.len().saturating_sub(1);
    while total(&out) > limit {
        let widest = (0..out.len())
            .filter(|i| !right.contains(i) && out[*i] > LEAST_CUT)
            .max_by_key(|i| (out[*i], std::cmp::Reverse(*i)));
        let Some(i) = widest else { break };
        let over = total(&out) - limit;
        // Down to the next widest text column, or by what is over, whichever is less.
        let next = (0..out.len())
            .filter(|j| *j != i && !right.contains(j))
            .map(|j| out[j])
            .filter(|w| *w < out[i])
            .max()
            .unwrap_or(0)
            .max(LEAST_CUT);
        out[i] = out[i].saturating_sub(over).max(next);
    }
    out
}

/// `cell` in at most `width` characters: its start and `…` where it is longer.
fn cut(cell: &str, width: usize) -> Cow<'_, str> {
    if cell.chars().count() <= width {
        return Cow::Borrowed(cell);
    }
    let mut s: String = cell.chars().take(width.saturating_sub(1)).collect();
    s.push('…');
    Cow::Owned(s)
}

/// [`write_table`] of `n` rows made by `row` (the header is row 0), each made twice, once
/// for the widths and once to write it: a long table is never held whole.
pub fn write_table_with<'r>(
    out: &mut dyn Write,
    n: usize,
    row: &dyn Fn(usize) -> Cow<'r, [String]>,
    right: &[usize],
) -> Result<()> {
    let mut widths: Vec<usize> = Vec::new();
    for i in 0..n {
        let row = row(i);
        if widths.len() < row.len() {
            widths.resize(row.len(), 0);
        }
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let limit = TABLE_WIDTH.load(std::sync::atomic::Ordering::Relaxed);
    if limit > 0 {
        widths = fitted(&widths, right, limit);
    }
    for r in 0..n {
        let row = row(r);
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let cell = cut(cell, widths[i]);
            let cell = cell.as_ref();
            let pad = widths[i] - cell.chars().count();
            let last = i + 1 == row.len();
            if right.contains(&i) {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                if !last {
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
        }
        writeln!(out, "{line}").map_err(Error::Output)?;
    }
    Ok(())
}
