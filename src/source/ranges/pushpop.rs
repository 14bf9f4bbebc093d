//! The `nvtx_pushpop_trace` table, the report `nsys stats --report nvtx_pushpop_trace`
//! writes, as CSV (plain or compressed, standalone or `report_nvtx_pushpop_trace.csv.xz`
//! in an nsys-jax archive) or as the Parquet file newer nsys-jax versions store instead
//! (`report_nvtx_pushpop_trace.parquet`: the CSV without `PID`, `Lvl` and `NameTree`,
//! written by pandas with `RangeId` as its index).
//!
//! Rows are turned into [`Range`] records one at a time, so memory does not depend on the
//! number of rows.

use super::check::TreeCheck;
use crate::error::{Error, Result};
use crate::output::notes::Notes;
use crate::records::Range;
use parquet::file::reader::{ChunkReader, FileReader, SerializedFileReader};
use parquet::record::Field;
use std::io::BufRead;
use std::sync::Arc;

/// The columns used, by their header names in the report.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Col {
    Start,
    End,
    Dur,
    DurChild,
    DurNonChild,
    Name,
    Pid,
    Tid,
    Lvl,
    NumChild,
    RangeId,
    ParentId,
    RangeStack,
}

const COLUMNS: &[(Col, &str, bool)] = &[
    // (column, header, required)
    (Col::Start, "Start (ns)", true),
    (Col::End, "End (ns)", true),
    (Col::Dur, "Duration (ns)", false),
    (Col::DurChild, "DurChild (ns)", true),
    (Col::DurNonChild, "DurNonChild (ns)", false),
    (Col::Name, "Name", true),
    (Col::Pid, "PID", false),
    (Col::Tid, "TID", true),
    (Col::Lvl, "Lvl", false),
    (Col::NumChild, "NumChild", true),
    (Col::RangeId, "RangeId", true),
    (Col::ParentId, "ParentId", true),
    (Col::RangeStack, "RangeStack", false),
];

/// Positions of the columns in one table.
struct Layout {
    pos: [Option<usize>; COLUMNS.len()],
}

impl Layout {
    fn new<'a>(place: &str, headers: impl Iterator<Item = &'a str>) -> Result<Layout> {
        let headers: Vec<&str> = headers
            .map(|h| h.trim_start_matches('\u{feff}').trim())
            .collect();
        let mut pos = [None; COLUMNS.len()];
        for (i, (_, name, _)) in COLUMNS.iter().enumerate() {
            pos[i] = headers.iter().position(|h| h == name);
            if headers.iter().filter(|h| *h == name).count() > 1 {
                return Err(Error::data(
                    place,
                    format!("column `{name}` appears twice: which one holds the data is unclear"),
                ));
            }
        }
        let missing: Vec<&str> = COLUMNS
            .iter()
            .zip(pos.iter())
            .filter(|((_, _, required), p)| *required && p.is_none())
            .map(|((_, name, _), _)| *name)
            .collect();
        let layout = Layout { pos };
        if !missing.is_empty() {
            return Err(Error::data(
                place,
                format!(
                    "not an nvtx_pushpop_trace table: missing column{} {} (found: {})",
                    if missing.len() > 1 { "s" } else { "" },
                    missing.join(", "),
                    headers.join(", ")
                ),
            ));
        }
        if layout.get(Col::Lvl).is_none() && layout.get(Col::RangeStack).is_none() {
            return Err(Error::data(
                place,
                "not an nvtx_pushpop_trace table: needs a Lvl or a RangeStack column for the depth",
            ));
        }
        Ok(layout)
    }

    fn get(&self, col: Col) -> Option<usize> {
        // COLUMNS lists the columns in the order of `Col`.
        self.pos[col as usize]
    }
}

fn header_of(col: Col) -> &'static str {
    COLUMNS
        .iter()
        .find(|(c, _, _)| *c == col)
        .map_or("?", |c| c.1)
}

/// One cell, whatever the table's storage.
enum Cell<'a> {
    Null,
    Int(i64),
    Float(f64),
    Text(&'a [u8]),
}

/// Builds a range from the cells of one row; `cell(col)` fetches a cell.
fn build_range<'a>(
    profile: &Arc<str>,
    layout: &Layout,
    place: &dyn Fn() -> String,
    cell: impl Fn(usize) -> Cell<'a>,
) -> Result<Range> {
    let row = Row {
        layout,
        place,
        cell,
    };
    let (start_ns, end_ns, dur_ns) = row.times()?;
    let (child_ns, self_ns) = row.child_time(dur_ns)?;
    let depth = row.depth()?;
    let name = row.name();
    let pid = row.optional_unsigned(Col::Pid)?;
    let parent = row.optional_unsigned(Col::ParentId)?;
    let id = row.need_unsigned(Col::RangeId)?;
    row.check_stack(id, parent)?;
    Ok(Range {
        profile: profile.clone(),
        pid,
        tid: row.need_unsigned(Col::Tid)?,
        id,
        parent,
        depth: row.small(Col::Lvl, depth)?,
        start_ns,
        end_ns,
        dur_ns,
        child_ns,
        self_ns,
        children: row.small(Col::NumChild, row.need_unsigned(Col::NumChild)?)?,
        name,
    })
}

/// One row being read: its cells by column, and where it is, for messages.
struct Row<'l, 'p, C> {
    layout: &'l Layout,
    place: &'p dyn Fn() -> String,
    cell: C,
}

impl<'a, C: Fn(usize) -> Cell<'a>> Row<'_, '_, C> {
    /// An error about this row.
    fn error(&self, msg: impl Into<String>) -> Error {
        Error::data((self.place)(), msg)
    }

    /// The cell of `col`; `None` where the table has no such column.
    #[inline]
    fn cell(&self, col: Col) -> Option<Cell<'a>> {
        self.layout.get(col).map(&self.cell)
    }

    /// The integer in `col`; `None` where the column is absent or the cell null.
    fn int(&self, col: Col) -> Result<Option<i64>> {
        let Some(cell) = self.cell(col) else {
            return Ok(None);
        };
        match cell {
            Cell::Null => Ok(None),
            Cell::Int(v) => Ok(Some(v)),
            Cell::Float(v) if v.is_nan() => Ok(None),
            Cell::Float(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => Ok(Some(v as i64)),
            Cell::Float(v) => Err(self.error(format!(
                "column `{}`: {v} is not an integer",
                header_of(col)
            ))),
            // CSV cells are text; an empty one is a null.
            Cell::Text(t) => parse_int(t).map_err(|()| self.not_an_integer(col, t)),
        }
    }

    /// The error for text `t` of `col` that [`parse_int`] refused.
    fn not_an_integer(&self, col: Col, t: &[u8]) -> Error {
        let text = t.trim_ascii();
        let digits = text.strip_prefix(b"-").unwrap_or(text);
        let what = if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) {
            "is out of range (past 64-bit integers)"
        } else {
            "is not an integer"
        };
        self.error(format!(
            "column `{}`: `{}` {what}",
            header_of(col),
            String::from_utf8_lossy(t)
        ))
    }

    /// The integer in `col`, which must be there.
    fn need(&self, col: Col) -> Result<i64> {
        self.int(col)?
            .ok_or_else(|| self.error(format!("column `{}` is empty", header_of(col))))
    }

    /// `v`, read from `col`, as an unsigned integer.
    fn unsigned(&self, col: Col, v: i64) -> Result<u64> {
        u64::try_from(v)
            .map_err(|_| self.error(format!("column `{}`: {v} is negative", header_of(col))))
    }

    /// The unsigned integer in `col`, which must be there.
    fn need_unsigned(&self, col: Col) -> Result<u64> {
        self.unsigned(col, self.need(col)?)
    }

    /// The unsigned integer in `col`, if there is one.
    fn optional_unsigned(&self, col: Col) -> Result<Option<u64>> {
        self.int(col)?.map(|v| self.unsigned(col, v)).transpose()
    }

    /// `v`, read from `col`, as a 32-bit count.
    fn small(&self, col: Col, v: u64) -> Result<u32> {
        u32::try_from(v)
            .map_err(|_| self.error(format!("column `{}`: {v} is out of range", header_of(col))))
    }

    /// Start, end and duration, checked against each other and against `Duration`.
    fn times(&self) -> Result<(i64, i64, i64)> {
        let start_ns = self.need(Col::Start)?;
        let end_ns = self.need(Col::End)?;
        for (col, t) in [(Col::Start, start_ns), (Col::End, end_ns)] {
            if !crate::records::time_in_range(t) {
                return Err(self.error(format!(
                    "column `{}`: {t} ns is beyond ±2^61 ns (73 years)",
                    header_of(col)
                )));
            }
        }
        // Both within ±2^61 ns: the difference fits.
        let dur_ns = end_ns - start_ns;
        if dur_ns < 0 {
            return Err(self.error(format!(
                "range ends ({end_ns}) before it starts ({start_ns})"
            )));
        }
        if let Some(d) = self.int(Col::Dur)?.filter(|&d| d != dur_ns) {
            return Err(self.error(format!("Duration {d} is not End - Start = {dur_ns}")));
        }
        Ok((start_ns, end_ns, dur_ns))
    }

    /// The children's time and the range's own out of its `dur_ns`, checked against
    /// `DurNonChild`.
    fn child_time(&self, dur_ns: i64) -> Result<(i64, i64)> {
        let child_ns = self.need(Col::DurChild)?;
        let self_ns = dur_ns.checked_sub(child_ns).ok_or_else(|| {
            self.error(format!(
                "DurChild {child_ns} does not fit the range's {dur_ns} ns"
            ))
        })?;
        if let Some(s) = self.int(Col::DurNonChild)?.filter(|&s| s != self_ns) {
            return Err(self.error(format!(
                "DurNonChild {s} is not Duration - DurChild = {self_ns}"
            )));
        }
        Ok((child_ns, self_ns))
    }

    /// The depth: `Lvl`, or else the number of ids in `RangeStack` less one.
    fn depth(&self) -> Result<u64> {
        if let Some(l) = self.int(Col::Lvl)? {
            return self.unsigned(Col::Lvl, l);
        }
        match self.cell(Col::RangeStack) {
            Some(Cell::Text(t)) if t.first() == Some(&b':') => {
                Ok((t.iter().filter(|&&b| b == b':').count() - 1) as u64)
            }
            _ => Err(self.error("no Lvl, and RangeStack is not `:id:…:id`")),
        }
    }

    /// The name, whatever the type of its cell (empty where null).
    fn name(&self) -> String {
        match self.cell(Col::Name) {
            Some(Cell::Text(t)) => String::from_utf8_lossy(t).into_owned(),
            Some(Cell::Null) | None => String::new(),
            Some(Cell::Int(v)) => v.to_string(),
            Some(Cell::Float(v)) => v.to_string(),
        }
    }

    /// Checks that `RangeStack`, the path of ids from the root, ends at this range (`id`)
    /// under its `parent`.
    fn check_stack(&self, id: u64, parent: Option<u64>) -> Result<()> {
        let Some(Cell::Text(stack)) = self.cell(Col::RangeStack) else {
            return Ok(());
        };
        let stack = stack.trim_ascii();
        // Read from the end, without allocating: this runs for every row.
        let mut ids = stack.rsplit(|&b| b == b':');
        let number =
            |t: Option<&[u8]>| t.and_then(|t| std::str::from_utf8(t).ok()?.parse::<u64>().ok());
        let (last, before) = (ids.next(), ids.next());
        let fits = number(last) == Some(id)
            && match parent {
                Some(p) => number(before) == Some(p),
                None => before == Some(&b""[..]) && ids.next().is_none(),
            };
        if stack.is_empty() || fits {
            return Ok(());
        }
        let tail = match parent {
            Some(p) => format!(":{p}:{id}"),
            None => format!(":{id}"),
        };
        Err(self.error(format!(
            "RangeStack `{}` does not end with `{tail}` (the range and its parent)",
            String::from_utf8_lossy(stack)
        )))
    }
}

/// Parses a decimal integer; `12.0` (pandas' rendering of an integer column with
/// missing values) is accepted, `12.5` is not. Empty means null.
fn parse_int(t: &[u8]) -> std::result::Result<Option<i64>, ()> {
    let t = t.trim_ascii();
    if t.is_empty() {
        return Ok(None);
    }
    let (neg, digits) = match t.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, t),
    };
    let (int_part, frac) = match digits.iter().position(|&b| b == b'.') {
        Some(p) => (&digits[..p], &digits[p + 1..]),
        None => (digits, &b""[..]),
    };
    if int_part.is_empty() || !frac.iter().all(|&b| b == b'0') {
        return Err(());
    }
    let mut v: i64 = 0;
    for &b in int_part {
        if !b.is_ascii_digit() {
            return Err(());
        }
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(i64::from(b - b'0')))
            .ok_or(())?;
    }
    Ok(Some(if neg { -v } else { v }))
}

/// Reads an `nvtx_pushpop_trace` CSV, handing each row to `emit` as a range record.
/// `place` names the stream in messages; each message also names the line.
pub fn read_csv<R: BufRead>(
    place: &str,
    profile: &Arc<str>,
    reader: R,
    notes: &Notes,
    emit: &mut dyn FnMut(Range) -> Result<()>,
) -> Result<u64> {
    let mut csv = csv::ReaderBuilder::new()
        .has_headers(true)
        .buffer_capacity(1 << 16)
        .from_reader(reader);
    let csv_err = |e: csv::Error| -> Error {
        let line = e.position().map(|p| p.line());
        let at = match line {
            Some(l) => format!("{place}:{l}"),
            None => place.to_string(),
        };
        match e.into_kind() {
            csv::ErrorKind::Io(io) => Error::io(at, io),
            csv::ErrorKind::UnequalLengths {
                expected_len, len, ..
            } => Error::data(
                at,
                format!("row has {len} fields, the header has {expected_len}"),
            ),
            csv::ErrorKind::Utf8 { err, .. } => Error::data(at, format!("invalid UTF-8: {err}")),
            other => Error::data(at, format!("{other:?}")),
        }
    };
    let headers = csv.byte_headers().map_err(csv_err)?.clone();
    if headers.is_empty() || (headers.len() == 1 && headers[0].is_empty()) {
        return Err(Error::data(
            place,
            "empty input: no nvtx_pushpop_trace header line",
        ));
    }
    let header_strs: Vec<String> = headers
        .iter()
        .map(|h| String::from_utf8_lossy(h).into_owned())
        .collect();
    let layout = Layout::new(
        &format!("{place}:1"),
        header_strs.iter().map(String::as_str),
    )?;
    let mut record = csv::ByteRecord::new();
    let mut rows = 0u64;
    let mut check = TreeCheck::new();
    let line_place = |line: u64| format!("{place}:{line}");
    while csv.read_byte_record(&mut record).map_err(csv_err)? {
        let line = record.position().map_or(0, |p| p.line());
        let place_fn = || line_place(line);
        let range = build_range(profile, &layout, &place_fn, |i| Cell::Text(&record[i]))?;
        check.push(&range, line, &line_place)?;
        emit(range).map_err(|e| e.within(&line_place(line)))?;
        rows += 1;
    }
    if let Some(note) = check.finish(&line_place)? {
        notes.note(note);
    }
    Ok(rows)
}

/// Reads the table stored as `member` of `archive` (Parquet or CSV, by its name) for
/// `profile`.
pub fn read_member(
    archive: &mut crate::source::Archive,
    member: &str,
    profile: &Arc<str>,
    notes: &Notes,
    emit: &mut dyn FnMut(Range) -> Result<()>,
) -> Result<u64> {
    let place = archive.member_place(member);
    if member.contains(".parquet") {
        read_parquet(&place, profile, archive.open_parquet(member)?, notes, emit)
    } else {
        read_csv(
            &place,
            profile,
            super::super::text_lines(archive.open_member(member)?)?,
            notes,
            emit,
        )
    }
}

/// Reads the Parquet form of the table.
pub fn read_parquet<R: ChunkReader + 'static>(
    place: &str,
    profile: &Arc<str>,
    source: R,
    notes: &Notes,
    emit: &mut dyn FnMut(Range) -> Result<()>,
) -> Result<u64> {
    let perr =
        |e: parquet::errors::ParquetError| Error::data(place, format!("bad Parquet file: {e}"));
    crate::source::parquet_footer::check(place, &source)?;
    let reader = SerializedFileReader::new(source).map_err(perr)?;
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let names: Vec<String> = schema
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let layout = Layout::new(place, names.iter().map(String::as_str))?;
    let mut rows = 0u64;
    let mut check = TreeCheck::new();
    let row_place = |row: u64| format!("{place}: row {row}");
    let mut iter = reader.get_row_iter(None).map_err(perr)?;
    while let Some(row) = crate::source::parquet_footer::guarded(place, || Ok(iter.next()))? {
        let row = row.map_err(perr)?;
        rows += 1;
        let fields: Vec<&Field> = row.get_column_iter().map(|(_, f)| f).collect();
        if fields.len() != names.len() {
            return Err(Error::data(
                row_place(rows),
                format!(
                    "{} fields where the schema has {} columns (nested columns are not an \
                     nvtx_pushpop_trace table)",
                    fields.len(),
                    names.len()
                ),
            ));
        }
        let place_fn = || row_place(rows);
        let range = build_range(profile, &layout, &place_fn, |i| match fields[i] {
            Field::Null => Cell::Null,
            Field::Byte(v) => Cell::Int(i64::from(*v)),
            Field::Short(v) => Cell::Int(i64::from(*v)),
            Field::Int(v) => Cell::Int(i64::from(*v)),
            Field::Long(v) => Cell::Int(*v),
            Field::UByte(v) => Cell::Int(i64::from(*v)),
            Field::UShort(v) => Cell::Int(i64::from(*v)),
            Field::UInt(v) => Cell::Int(i64::from(*v)),
            Field::ULong(v) => Cell::Int(*v as i64),
            Field::Float(v) => Cell::Float(f64::from(*v)),
            Field::Double(v) => Cell::Float(*v),
            Field::Str(s) => Cell::Text(s.as_bytes()),
            Field::Bytes(b) => Cell::Text(b.data()),
            _ => Cell::Null,
        })?;
        check.push(&range, rows, &row_place)?;
        emit(range).map_err(|e| e.within(&row_place(rows)))?;
    }
    if let Some(note) = check.finish(&row_place)? {
        notes.note(note);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::{COLUMNS, parse_int};

    #[test]
    fn columns_are_listed_in_the_order_of_col() {
        for (i, (col, _, _)) in COLUMNS.iter().enumerate() {
            assert_eq!(*col as usize, i);
        }
    }

    #[test]
    fn integers_parse_strictly() {
        assert_eq!(parse_int(b"123"), Ok(Some(123)));
        assert_eq!(parse_int(b"-5"), Ok(Some(-5)));
        assert_eq!(parse_int(b"25205.0"), Ok(Some(25205)));
        assert_eq!(parse_int(b""), Ok(None));
        assert_eq!(parse_int(b"12.5"), Err(()));
        assert_eq!(parse_int(b"abc"), Err(()));
        assert_eq!(parse_int(b"99999999999999999999"), Err(()));
    }
}
