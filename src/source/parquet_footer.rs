//! A Parquet file's footer checked before the Parquet reader sees it. The reader takes the
//! footer's numbers on trust: a schema group declaring 2^31 children is allocated as such
//! (the process aborts), a schema nested 100,000 groups deep is converted recursively (the
//! stack overflows), a negative column offset panics. So the footer — Thrift's compact
//! protocol, `FileMetaData` of `parquet.thrift` — is walked here first, without recursion
//! and without allocating by any count it states, and refused, naming the file, when:
//!
//! - it is not inside the file, or its Thrift is truncated, malformed or nested deeper
//!   than [`MAX_NESTING`];
//! - a schema element has a negative child count, the counts do not add up to the
//!   elements listed, or the schema nests deeper than [`MAX_SCHEMA_DEPTH`] (njx reads
//!   flat tables and lists);
//! - a column chunk's sizes or offsets (`num_values`, `total_uncompressed_size`,
//!   `total_compressed_size`, `data_page_offset`, `index_page_offset`,
//!   `dictionary_page_offset`) are negative, or its pages reach past the file's end;
//! - a row group's `num_rows` is negative, or, in a flat schema (no repeated field: the
//!   tables of nsys and nsys-jax), a column chunk's `num_values` is not its row group's
//!   `num_rows` (the reader would read what the pages hold, whatever the count claims).
//!
//! Field numbers are those of `parquet.thrift` (apache/parquet-format).
//!
//! The page headers, also Thrift, are walked the same way before the reader parses them
//! ([`check_pages`]): a header it cannot end, or a page reaching past its column chunk,
//! is refused.
//!
//! Past the footer, the reader still panics on some malformed pages (a dictionary-encoded
//! page without its dictionary, truncated bit-packed levels): [`guarded`] runs its calls
//! so that such a panic becomes an error naming the file.

use crate::error::{Error, Result};
use parquet::file::reader::ChunkReader;
use std::cell::Cell;
use std::sync::Once;

thread_local! {
    /// Set while [`guarded`] runs: a panic then is the Parquet reader's, reported as an
    /// error rather than printed.
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, calls into the Parquet reader on the file named `place`: a panic inside it
/// is returned as a data error naming the file (and not printed).
pub fn guarded<T>(place: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(Cell::get) {
                previous(info);
            }
        }));
    });
    GUARDED.with(|g| g.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(false));
    result.unwrap_or_else(|payload| {
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(Error::data(
            place,
            format!("bad Parquet file: the Parquet reader failed on its pages ({msg})"),
        ))
    })
}

/// Thrift structs nest this deep at most (the footer's own structure is ~6 deep).
const MAX_NESTING: usize = 64;

/// Schema groups nest this deep at most.
const MAX_SCHEMA_DEPTH: usize = 32;

/// `FileMetaData.schema` (2) → `SchemaElement.repetition_type` (3), `.num_children` (5).
const SCHEMA: &[i16] = &[2];
const REPETITION: &[i16] = &[2, 3];
const NUM_CHILDREN: &[i16] = &[2, 5];
/// `FieldRepetitionType.REPEATED`.
const REPEATED: i64 = 2;
/// `FileMetaData.row_groups` (4) → `RowGroup.num_rows` (3), `RowGroup.columns` (1) →
/// `ColumnChunk.meta_data` (3) → `ColumnMetaData.path_in_schema` (3), `.num_values` (5).
const ROW_GROUP: &[i16] = &[4];
const ROW_GROUP_ROWS: &[i16] = &[4, 3];
const COLUMN: &[i16] = &[4, 1];
const COLUMN_META: &[i16] = &[4, 1, 3];
const COLUMN_PATH: &[i16] = &[4, 1, 3, 3];

/// What the footer says of one row group.
#[derive(Default)]
struct RowGroup {
    num_rows: Option<i64>,
    columns: Vec<Column>,
}

/// What the footer says of one column chunk.
#[derive(Default)]
struct Column {
    /// `path_in_schema`, joined with dots.
    path: String,
    num_values: Option<i64>,
    /// Where its pages are: the first page (dictionary or data) and their total size.
    data_page_offset: Option<i64>,
    dictionary_page_offset: Option<i64>,
    total_compressed_size: Option<i64>,
}

/// Checks the footer of the Parquet file `file` (named `place` in messages).
pub fn check<R: ChunkReader>(place: &str, file: &R) -> Result<()> {
    let bad = |msg: String| bad_footer(place, msg);
    let len = file.len();
    let footer = read_footer(place, file, len)?;
    let mut seen = Footer::default();
    walk(&footer, &mut |event| seen.visit(event, len))
        .map(drop)
        .map_err(bad)?;
    if let Some(p) = seen.problem {
        return Err(bad(p));
    }
    check_schema(&seen.schema).map_err(bad)?;
    if !seen.repeated {
        check_values(&seen.row_groups).map_err(bad)?;
    }
    check_pages(file, len, &seen.row_groups)
        .map_err(|msg| Error::data(place, format!("bad Parquet page: {msg}")))
}

/// The error for a bad footer of the file named `place`.
fn bad_footer(place: &str, msg: String) -> Error {
    Error::data(place, format!("bad Parquet footer: {msg}"))
}

/// The footer's bytes, found by the length and `PAR1` magic at the end of the `len`-byte
/// file, refused where they are not inside it.
fn read_footer<R: ChunkReader>(place: &str, file: &R, len: u64) -> Result<bytes::Bytes> {
    let bad = |msg: String| bad_footer(place, msg);
    if len < 12 {
        return Err(bad(format!(
            "the file has {len} bytes, too few for Parquet"
        )));
    }
    let tail = file
        .get_bytes(len - 8, 8)
        .map_err(|e| Error::data(place, format!("cannot read the Parquet footer: {e}")))?;
    if &tail[4..] != b"PAR1" {
        return Err(bad("the file does not end with PAR1".into()));
    }
    let footer_len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if footer_len > len - 12 {
        return Err(bad(format!(
            "its stated length {footer_len} exceeds the {len}-byte file"
        )));
    }
    file.get_bytes(len - 8 - footer_len, footer_len as usize)
        .map_err(|e| Error::data(place, format!("cannot read the Parquet footer: {e}")))
}

/// What the walk of the footer gathers: the schema's child counts, whether a field is
/// repeated, the row groups, and the first problem met (after which nothing is gathered).
#[derive(Default)]
struct Footer {
    /// Each schema element's `num_children` (0 where it states none).
    schema: Vec<i64>,
    repeated: bool,
    row_groups: Vec<RowGroup>,
    problem: Option<String>,
}

impl Footer {
    /// Takes one event of the walk of the footer of a `len`-byte file.
    fn visit(&mut self, event: Event, len: u64) {
        if self.problem.is_some() {
            return;
        }
        match event {
            Event::Struct(path) if path == SCHEMA => self.schema.push(0),
            Event::Int(path, v) if path == NUM_CHILDREN => {
                if let Some(n) = self.schema.last_mut() {
                    *n = v;
                }
            }
            Event::Int(path, v) if path == REPETITION => self.repeated |= v == REPEATED,
            Event::Struct(path) if path == ROW_GROUP => self.row_groups.push(RowGroup::default()),
            Event::Int(path, v) if path == ROW_GROUP_ROWS => {
                if v < 0 {
                    self.problem = Some(format!("a row group's num_rows is {v}"));
                } else if let Some(g) = self.row_groups.last_mut() {
                    g.num_rows = Some(v);
                }
            }
            Event::Struct(path) if path == COLUMN => {
                if let Some(g) = self.row_groups.last_mut() {
                    g.columns.push(Column::default());
                }
            }
            Event::Binary(path, name) if path == COLUMN_PATH => {
                if let Some(c) = self.column() {
                    if !c.path.is_empty() {
                        c.path.push('.');
                    }
                    c.path.push_str(&String::from_utf8_lossy(name));
                }
            }
            Event::Int(path, v) if path.len() == 4 && path[..3] == *COLUMN_META => {
                self.column_meta(path[3], v, len);
            }
            _ => {}
        }
    }

    /// The column chunk being read, if any.
    fn column(&mut self) -> Option<&mut Column> {
        self.row_groups
            .last_mut()
            .and_then(|g| g.columns.last_mut())
    }

    /// Takes integer field `id` of a `ColumnMetaData`, value `v`: a size or offset,
    /// refused where negative or, a place or length within the file, past its `len` bytes.
    fn column_meta(&mut self, id: i16, v: i64, len: u64) {
        // (field, whether it is a place or length within the file)
        let (field, in_file) = match id {
            5 => ("num_values", false),
            6 => ("total_uncompressed_size", false),
            7 => ("total_compressed_size", true),
            9 => ("data_page_offset", true),
            10 => ("index_page_offset", true),
            11 => ("dictionary_page_offset", true),
            _ => return,
        };
        if v < 0 {
            self.problem = Some(format!("a column chunk's {field} is {v}"));
        } else if in_file && v as u64 > len {
            self.problem = Some(format!(
                "a column chunk's {field} {v} reaches past the {len}-byte file"
            ));
        } else if let Some(c) = self.column() {
            match id {
                5 => c.num_values = Some(v),
                7 => c.total_compressed_size = Some(v),
                9 => c.data_page_offset = Some(v),
                11 => c.dictionary_page_offset = Some(v),
                _ => {}
            }
        }
    }
}

/// The longest page header read (headers hold a page's statistics: bytes, not megabytes).
const MAX_PAGE_HEADER: u64 = 1 << 20;

/// Walks the page headers of every column chunk as the footer places them, each with the
/// same walker: the reader parses page headers recursively and skips unknown fields
/// element by element, so a header of lists nested 64 deep, each claiming billions of
/// elements, kept it busy for good. A header must be well-formed Thrift, state its
/// compressed size, and its page must end within its column chunk. One small read per
/// page; the pages themselves are not read.
fn check_pages<R: ChunkReader>(
    file: &R,
    len: u64,
    row_groups: &[RowGroup],
) -> std::result::Result<(), String> {
    for (g, group) in row_groups.iter().enumerate() {
        for c in &group.columns {
            let (Some(data), Some(size)) = (c.data_page_offset, c.total_compressed_size) else {
                continue;
            };
            let start = match c.dictionary_page_offset {
                Some(d) if d > 0 && d < data => d,
                _ => data,
            } as u64;
            let end = start
                .checked_add(size as u64)
                .filter(|&e| e <= len)
                .ok_or_else(|| {
                    format!(
                        "row group {g}, column `{}`: its pages ({size} bytes from byte {start}) \
                         reach past the {len}-byte file",
                        c.path
                    )
                })?;
            let mut at = start;
            while at < end {
                let here = |msg: String| {
                    format!(
                        "row group {g}, column `{}`, page header at byte {at}: {msg}",
                        c.path
                    )
                };
                let window = (end - at).min(MAX_PAGE_HEADER);
                let bytes = file
                    .get_bytes(at, window as usize)
                    .map_err(|e| here(format!("cannot read it: {e}")))?;
                let mut page_size = None;
                let used = walk(&bytes, &mut |event| {
                    if let Event::Int(path, v) = event
                        && path == [3]
                    {
                        page_size = Some(v);
                    }
                })
                .map_err(here)?;
                let page_size = page_size
                    .filter(|&v| v >= 0)
                    .ok_or_else(|| here("no compressed page size (or a negative one)".into()))?;
                at = at
                    .checked_add(used as u64)
                    .and_then(|a| a.checked_add(page_size as u64))
                    .filter(|&a| a <= end)
                    .ok_or_else(|| {
                        here(format!(
                            "its page of {page_size} bytes reaches past its column chunk"
                        ))
                    })?;
            }
        }
    }
    Ok(())
}

/// In a flat schema (no repeated field) every column chunk holds one value per row, nulls
/// included: a chunk claiming another count lies about its pages, which the reader would
/// read as whatever they hold. (With repeated fields a row holds any number of values.)
fn check_values(row_groups: &[RowGroup]) -> std::result::Result<(), String> {
    for (g, group) in row_groups.iter().enumerate() {
        let Some(rows) = group.num_rows else {
            continue;
        };
        for c in &group.columns {
            match c.num_values {
                Some(values) if values != rows => {
                    return Err(format!(
                        "row group {g} has {rows} rows but its column `{}` claims {values} \
                         values",
                        c.path
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The schema's elements, depth first, each with its number of children, must form one
/// tree no deeper than [`MAX_SCHEMA_DEPTH`].
fn check_schema(children: &[i64]) -> std::result::Result<(), String> {
    // Children still to come for each open group, outermost first.
    let mut open: Vec<i64> = Vec::new();
    for (i, &n) in children.iter().enumerate() {
        if i > 0 {
            match open.last_mut() {
                Some(left) => *left -= 1,
                None => {
                    return Err(format!(
                        "the schema lists {} elements, its root's children end at {i}",
                        children.len()
                    ));
                }
            }
        }
        if n < 0 {
            return Err(format!("schema element {i} has {n} children"));
        }
        if n > 0 {
            open.push(n);
            if open.len() > MAX_SCHEMA_DEPTH {
                return Err(format!(
                    "the schema nests more than {MAX_SCHEMA_DEPTH} groups deep"
                ));
            }
        }
        while open.last() == Some(&0) {
            open.pop();
        }
    }
    if !open.is_empty() {
        return Err(format!(
            "the schema's groups declare more children than its {} elements",
            children.len()
        ));
    }
    Ok(())
}

/// What the walk meets: a struct starting at a path of field ids (list levels left out),
/// an integer or a binary (string) at one.
enum Event<'a> {
    Struct(&'a [i16]),
    Int(&'a [i16], i64),
    Binary(&'a [i16], &'a [u8]),
}

/// One open container of the walk.
enum Frame {
    /// A struct: the last field id read (ids are deltas from it).
    Struct { last: i16 },
    /// A list or set: elements left and their type.
    List { left: u64, kind: u8 },
    /// A map: keys and values left (alternating), their types.
    Map { left: u64, key: u8, value: u8 },
}

/// Thrift compact types.
const T_TRUE: u8 = 1;
const T_FALSE: u8 = 2;
const T_BYTE: u8 = 3;
const T_I16: u8 = 4;
const T_I32: u8 = 5;
const T_I64: u8 = 6;
const T_DOUBLE: u8 = 7;
const T_BINARY: u8 = 8;
const T_LIST: u8 = 9;
const T_SET: u8 = 10;
const T_MAP: u8 = 11;
const T_STRUCT: u8 = 12;
const T_UUID: u8 = 13;

/// Walks the compact-protocol struct in `bytes`, iteratively, calling `visit` for each
/// struct and integer.
fn walk(bytes: &[u8], visit: &mut dyn FnMut(Event)) -> std::result::Result<usize, String> {
    let mut w = Walk {
        r: Cursor { bytes, at: 0 },
        frames: vec![Frame::Struct { last: 0 }],
        structs: 1,
        path: Vec::new(),
    };
    visit(Event::Struct(&w.path));
    while !w.frames.is_empty() {
        if let Some(kind) = w.next_kind()? {
            w.value(kind, visit)?;
        }
    }
    Ok(w.r.at)
}

/// The state of [`walk`]: where it reads, the containers open, and the path of field ids
/// to the value being read.
struct Walk<'a> {
    r: Cursor<'a>,
    frames: Vec<Frame>,
    /// Open structs, and the field id each is reading (one per struct).
    structs: usize,
    path: Vec<i16>,
}

impl Walk<'_> {
    /// The type of the next value of the innermost container, or `None` where that
    /// container ends (it is closed).
    fn next_kind(&mut self) -> std::result::Result<Option<u8>, String> {
        let kind = match self.frames.last_mut() {
            None => return Ok(None),
            Some(Frame::Struct { last }) => {
                let header = self.r.byte()?;
                if header == 0 {
                    self.frames.pop();
                    self.structs -= 1;
                    self.path.truncate(self.structs);
                    return Ok(None);
                }
                let id = field_id(&mut self.r, header, *last)?;
                *last = id;
                // The field's id names what it holds.
                self.path.truncate(self.structs - 1);
                self.path.push(id);
                header & 0x0f
            }
            Some(Frame::List { left, kind }) => {
                if *left == 0 {
                    self.frames.pop();
                    return Ok(None);
                }
                *left -= 1;
                *kind
            }
            Some(Frame::Map { left, key, value }) => {
                if *left == 0 {
                    self.frames.pop();
                    return Ok(None);
                }
                *left -= 1;
                if *left % 2 == 1 { *key } else { *value }
            }
        };
        Ok(Some(kind))
    }

    /// Reads a value of type `kind` at the current path: a scalar is visited or skipped, a
    /// container opened.
    fn value(&mut self, kind: u8, visit: &mut dyn FnMut(Event)) -> std::result::Result<(), String> {
        let in_list = !matches!(self.frames.last(), Some(Frame::Struct { .. }));
        let r = &mut self.r;
        let here = &self.path[..];
        match kind {
            T_TRUE | T_FALSE => {
                if in_list {
                    r.byte()?; // a boolean in a list takes a byte of its own
                }
            }
            T_BYTE => {
                r.byte()?;
            }
            T_I16 | T_I32 | T_I64 => {
                let v = r.zigzag()?;
                visit(Event::Int(here, v));
            }
            T_DOUBLE => r.skip(8)?,
            T_UUID => r.skip(16)?,
            T_BINARY => {
                let n = r.varint()?;
                visit(Event::Binary(here, r.take(n)?));
            }
            T_LIST | T_SET => self.open_list()?,
            T_MAP => self.open_map()?,
            T_STRUCT => {
                if self.structs >= MAX_NESTING {
                    return Err(format!("structures nested more than {MAX_NESTING} deep"));
                }
                visit(Event::Struct(here));
                self.frames.push(Frame::Struct { last: 0 });
                self.structs += 1;
            }
            other => return Err(format!("unknown Thrift type {other}")),
        }
        Ok(())
    }

    /// Opens a list or set, refused where it claims more elements than bytes are left.
    fn open_list(&mut self) -> std::result::Result<(), String> {
        let header = self.r.byte()?;
        let short = u64::from(header >> 4);
        let left = if short == 15 { self.r.varint()? } else { short };
        // Every element takes a byte at least: a count beyond the bytes left lies.
        if left > self.r.left() {
            return Err(format!(
                "a list of {left} elements in {} bytes",
                self.r.left()
            ));
        }
        self.frames.push(Frame::List {
            left,
            kind: header & 0x0f,
        });
        Ok(())
    }

    /// Opens a map, refused where it claims more entries than bytes are left.
    fn open_map(&mut self) -> std::result::Result<(), String> {
        let n = self.r.varint()?;
        if n > self.r.left() {
            return Err(format!("a map of {n} entries in {} bytes", self.r.left()));
        }
        let types = if n > 0 { self.r.byte()? } else { 0 };
        self.frames.push(Frame::Map {
            left: n * 2,
            key: types >> 4,
            value: types & 0x0f,
        });
        Ok(())
    }
}

/// The id of a struct's field from its `header` byte: a delta from the `last` id read, or,
/// a delta of 0, a zigzag varint of its own.
fn field_id(r: &mut Cursor, header: u8, last: i16) -> std::result::Result<i16, String> {
    let delta = header >> 4;
    if delta == 0 {
        let v = r.zigzag()?;
        i16::try_from(v).map_err(|_| format!("field id {v} out of range"))
    } else {
        last.checked_add(i16::from(delta))
            .ok_or_else(|| "field id out of range".to_string())
    }
}

/// A position in the footer's bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn left(&self) -> u64 {
        (self.bytes.len() - self.at) as u64
    }

    fn byte(&mut self) -> std::result::Result<u8, String> {
        let b = *self.bytes.get(self.at).ok_or("truncated")?;
        self.at += 1;
        Ok(b)
    }

    fn skip(&mut self, n: u64) -> std::result::Result<(), String> {
        self.take(n).map(|_| ())
    }

    fn take(&mut self, n: u64) -> std::result::Result<&'a [u8], String> {
        if n > self.left() {
            return Err(format!("a value of {n} bytes in {} bytes", self.left()));
        }
        let bytes = &self.bytes[self.at..self.at + n as usize];
        self.at += n as usize;
        Ok(bytes)
    }

    fn varint(&mut self) -> std::result::Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a varint longer than 10 bytes".into())
    }

    fn zigzag(&mut self) -> std::result::Result<i64, String> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }
}

#[cfg(test)]
mod tests {
    use super::{Column, RowGroup, check, check_schema, check_values};
    use parquet::basic::{Repetition, Type as Physical};
    use parquet::data_type::Int64Type;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::types::Type;
    use std::sync::Arc;

    /// A Parquet file of one INT64 column `x` with `repetition`, its values written with
    /// these definition and repetition levels.
    fn one_column(repetition: Repetition, values: &[i64], def: &[i16], rep: &[i16]) -> Vec<u8> {
        let x = Type::primitive_type_builder("x", Physical::INT64)
            .with_repetition(repetition)
            .build()
            .unwrap();
        let schema = Type::group_type_builder("schema")
            .with_fields(vec![Arc::new(x)])
            .build()
            .unwrap();
        let mut buf = Vec::new();
        let mut writer =
            SerializedFileWriter::new(&mut buf, Arc::new(schema), Default::default()).unwrap();
        let mut rg = writer.next_row_group().unwrap();
        let mut c = rg.next_column().unwrap().unwrap();
        let levels = |l: &[i16]| if l.is_empty() { None } else { Some(l.to_vec()) };
        c.typed::<Int64Type>()
            .write_batch(values, levels(def).as_deref(), levels(rep).as_deref())
            .unwrap();
        c.close().unwrap();
        rg.close().unwrap();
        writer.close().unwrap();
        buf
    }

    #[test]
    fn written_files_pass() {
        // Nulls count as values of their row in a flat schema.
        let nullable = one_column(Repetition::OPTIONAL, &[1, 3], &[1, 0, 1], &[]);
        check("n.parquet", &bytes::Bytes::from(nullable)).unwrap();
        // Two rows of three and one values: a repeated column holds more values than rows.
        let repeated = one_column(
            Repetition::REPEATED,
            &[1, 2, 3, 4],
            &[1, 1, 1, 1],
            &[0, 1, 1, 0],
        );
        check("r.parquet", &bytes::Bytes::from(repeated)).unwrap();
    }

    #[test]
    fn page_headers_are_walked_before_the_reader() {
        let file = one_column(Repetition::OPTIONAL, &[1, 3], &[1, 0, 1], &[]);
        // The first page header follows the 4-byte magic; its first field is the page
        // type (i32, field 1: 0x15 then a zigzag varint), then the sizes (fields 2 and 3).
        assert_eq!(file[4], 0x15, "a page header at byte 4");
        // A header of nested lists claiming far more elements than bytes: refused.
        let mut lists = file.clone();
        lists[4] = 0x19; // field 1 as a list…
        lists[5] = 0xf9; // …of lists, with its count in a varint
        lists[6] = 0xff;
        lists[7] = 0x7f;
        let err = check("l.parquet", &bytes::Bytes::from(lists))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("bad Parquet page: row group 0, column `x`, page header at byte 4"),
            "{err}"
        );
        // A page claiming more bytes than its column chunk holds: refused. The header's
        // fields 1-3 are i32s (0x15, a zigzag varint): type, uncompressed, compressed size.
        let mut long = file.clone();
        let varint_end = |at: usize| at + long[at..].iter().position(|&b| b & 0x80 == 0).unwrap();
        let second = varint_end(5) + 1;
        assert_eq!(long[second], 0x15, "field 2 of the header");
        let third = varint_end(second + 1) + 1;
        assert_eq!(long[third], 0x15, "field 3 of the header");
        let last = varint_end(third + 1);
        long[last] = 0x7e; // its top 7 bits: 63 × 2^(7k) bytes more, past the chunk
        let err = check("s.parquet", &bytes::Bytes::from(long))
            .unwrap_err()
            .to_string();
        assert!(err.contains("reaches past its column chunk"), "{err}");
    }

    #[test]
    fn flat_columns_hold_one_value_per_row() {
        let group = |rows, values: &[i64]| RowGroup {
            num_rows: Some(rows),
            columns: values
                .iter()
                .enumerate()
                .map(|(i, &v)| Column {
                    path: format!("c{i}"),
                    num_values: Some(v),
                    ..Column::default()
                })
                .collect(),
        };
        assert!(check_values(&[group(3, &[3, 3]), group(0, &[0])]).is_ok());
        assert_eq!(
            check_values(&[group(3, &[3, 3]), group(3, &[3, i64::MAX])]).unwrap_err(),
            format!(
                "row group 1 has 3 rows but its column `c1` claims {} values",
                i64::MAX
            )
        );
        assert!(check_values(&[group(3, &[2])]).is_err());
    }

    #[test]
    fn schemas_must_form_one_shallow_tree() {
        assert!(check_schema(&[2, 0, 0]).is_ok());
        assert!(check_schema(&[1, 1, 0]).is_ok());
        assert!(check_schema(&[3, 0, 0]).is_err()); // children missing
        assert!(check_schema(&[1, 0, 0]).is_err()); // elements beyond the root
        assert!(check_schema(&[1, -1]).is_err());
        assert!(check_schema(&[i64::from(i32::MAX), 0]).is_err());
        let deep: Vec<i64> = (0..100).map(|i| if i < 99 { 1 } else { 0 }).collect();
        assert!(check_schema(&deep).is_err());
    }
}
