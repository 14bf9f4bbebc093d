//! Where output goes and how records are written: JSON Lines or CSV from the same serde
//! structs, stdout block-buffered when it is not a terminal (as ripgrep does) so that
//! pipes are fast, line-buffered on a terminal so that people see progress.

use crate::error::{Error, Result};
use clap::ValueEnum;
use serde::Serialize;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, LineWriter, Write};
use std::path::Path;

/// How a tool writes its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned text for people (reports only).
    Table,
    /// JSON Lines: one object per line.
    Json,
    /// CSV with a header line.
    Csv,
}

/// Opens the output: the named file, or stdout when `path` is `None` or `-`.
pub fn open_output(path: Option<&Path>) -> Result<Box<dyn Write>> {
    match path {
        Some(p) if p != Path::new("-") => {
            let file = File::create(p).map_err(|e| Error::io(p.display().to_string(), e))?;
            Ok(Box::new(BufWriter::with_capacity(1 << 16, file)))
        }
        _ => {
            let stdout = io::stdout();
            if stdout.is_terminal() {
                Ok(Box::new(LineWriter::new(stdout.lock())))
            } else {
                Ok(Box::new(BufWriter::with_capacity(1 << 16, stdout.lock())))
            }
        }
    }
}

/// Writes a stream of records in the chosen format.
pub struct RecordWriter<W: Write> {
    inner: Inner<W>,
}

enum Inner<W: Write> {
    /// The sink and a reused line buffer: one write per record, not one per token.
    Json(W, Vec<u8>),
    Csv(Box<csv::Writer<W>>),
}

impl<W: Write> RecordWriter<W> {
    /// A writer for `format`; `table` is not a record format and is refused as bad usage.
    pub fn new(out: W, format: Format) -> Result<Self> {
        let inner = match format {
            Format::Json => Inner::Json(out, Vec::with_capacity(1024)),
            Format::Csv => Inner::Csv(Box::new(csv::WriterBuilder::new().from_writer(out))),
            Format::Table => {
                return Err(Error::Usage(
                    "--format table is for reports; records are written as json or csv".into(),
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
                serde_json::to_writer(&mut *line, record).map_err(|e| Error::Output(e.into()))?;
                line.push(b'\n');
                w.write_all(line).map_err(Error::Output)
            }
            Inner::Csv(w) => Ok(w.serialize(record)?),
        }
    }

    /// Flushes everything written so far.
    pub fn finish(self) -> Result<()> {
        match self.inner {
            Inner::Json(mut w, _) => w.flush().map_err(Error::Output),
            Inner::Csv(mut w) => w.flush().map_err(Error::Output),
        }
    }
}

/// Writes rows of text cells as a table aligned on a terminal: the first row is the header,
/// columns listed in `right` are right-aligned (numbers).
pub fn write_table(out: &mut dyn Write, rows: &[Vec<String>], right: &[usize]) -> Result<()> {
    let ncols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; ncols];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
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
