//! Records as Apache Parquet (`--format parquet -o FILE`): the same fields, in the same
//! order and with the same nulls as the JSON records, in typed columns that pandas,
//! polars, DuckDB and pyarrow read by name.
//!
//! Records arrive one at a time through serde, as they do for JSON and CSV: a flat struct
//! (or an internally tagged enum of flat structs, `njx-collectives`' tables) whose fields
//! are numbers, booleans, text or null. Each field's value is appended to its column as it
//! comes; a record without a field another record has (a table of several tables) gets a
//! null there, and a column first seen after some records starts with nulls for them, as
//! the CSV's union header does. Every [`ROW_GROUP_ROWS`] records the columns are written
//! as one row group and emptied, so memory does not grow with the number of records.
//!
//! A column's type is not taken from the values (a column null in every record, such as
//! `collective` in a single-GPU run, would have none) but from [`column_kind`]: the type of
//! each field name of the record contract (`docs/formats.md`, "Parquet"), checked against
//! every record kind the tools write by `tests/njx/parquet.rs`. Integers are `INT64`
//! (times in nanoseconds, sizes in bytes), fractions `DOUBLE`, flags `BOOLEAN`, text
//! `BYTE_ARRAY` annotated `STRING`; every column is `OPTIONAL`. A float that is not finite
//! is null, as serde_json writes it.
//!
//! Pages are dictionary-encoded where that pays (names, programs, devices repeat) and
//! compressed with Snappy; page statistics let readers skip row groups.

use crate::error::{Error, Result};
use bytes::Bytes;
use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use serde::Serialize;
use serde::ser::{self, Impossible};
use std::io::Write;
use std::sync::Arc;

/// Records per row group: with ~20 columns, about 25 MB held before a group is written.
pub const ROW_GROUP_ROWS: usize = 128 * 1024;

/// Bytes held before a row group is written whatever its records (long texts).
const GROUP_BYTES: usize = 64 << 20;

/// A column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `INT64`: counts, ids, times in nanoseconds, sizes in bytes.
    Int,
    /// `DOUBLE`: percentages, ratios, bandwidths.
    Float,
    /// `BOOLEAN`.
    Bool,
    /// UTF-8 text.
    Text,
    /// UTF-8 text holding a value of any type, numbers as their decimal text (a payload
    /// field's `value`, whose `type` says what it is: a `uint64` does not fit a double).
    AnyAsText,
}

impl Kind {
    /// The name `docs/formats.md` gives the type.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Int => "int64",
            Kind::Float => "double",
            Kind::Bool => "boolean",
            Kind::Text => "string",
            Kind::AnyAsText => "string (any value as text)",
        }
    }
}

/// The type of every field of the records, by field name (the contract uses one meaning
/// per name across its record kinds), sorted by name. Exceptions by record: [`BY_RECORD`].
pub const FIELDS: &[(&str, Kind)] = &[
    ("after_busbw_gbps", Kind::Float),
    ("after_count", Kind::Int),
    ("after_ns", Kind::Int),
    ("algbw_gbps", Kind::Float),
    ("allocation", Kind::Int),
    ("allocation_bytes", Kind::Int),
    ("api", Kind::Text),
    ("autotuning", Kind::Bool),
    ("before_busbw_gbps", Kind::Float),
    ("before_count", Kind::Int),
    ("before_key", Kind::Text),
    ("before_ns", Kind::Int),
    ("bin_hi_ns", Kind::Int),
    ("bin_lo_ns", Kind::Int),
    ("block_x", Kind::Int),
    ("block_y", Kind::Int),
    ("block_z", Kind::Int),
    ("buffer", Kind::Int),
    ("buffers", Kind::Int),
    ("busbw_gbps", Kind::Float),
    ("busbw_mean_gbps", Kind::Float),
    ("busbw_stderr_gbps", Kind::Float),
    ("bytes", Kind::Int),
    ("change_ns", Kind::Int),
    ("change_pct", Kind::Float),
    ("child_ns", Kind::Int),
    ("children", Kind::Int),
    ("ci_high_pct", Kind::Float),
    ("ci_low_pct", Kind::Float),
    ("collective", Kind::Text),
    ("comm", Kind::Bool),
    ("communication", Kind::Int),
    ("compilation", Kind::Text),
    ("compilation_id", Kind::Int),
    ("compilations", Kind::Int),
    ("constant_bytes", Kind::Int),
    ("correlation_id", Kind::Int),
    ("count", Kind::Int),
    ("cpu_dur_ns", Kind::Int),
    ("cpu_start_ns", Kind::Int),
    ("cumulative_percent", Kind::Float),
    ("cv", Kind::Float),
    ("depth", Kind::Int),
    ("device", Kind::Int),
    ("devices", Kind::Int),
    ("direction", Kind::Text),
    ("dst_device", Kind::Int),
    ("dst_kind", Kind::Text),
    ("dump", Kind::Text),
    ("dur_mean_ns", Kind::Int),
    ("dur_ns", Kind::Int),
    ("dur_std_ns", Kind::Int),
    ("dur_sum_ns", Kind::Int),
    ("dynamic_shared_bytes", Kind::Int),
    ("end_ns", Kind::Int),
    ("events", Kind::Int),
    ("execution", Kind::Int),
    ("executions", Kind::Int),
    ("fastest_ns", Kind::Int),
    ("field", Kind::Text),
    ("file", Kind::Text),
    ("fingerprint", Kind::Text),
    ("fragmentation_bytes", Kind::Int),
    ("gpu_ops", Kind::Int),
    ("graph_id", Kind::Int),
    ("graph_node_id", Kind::Int),
    ("grid_x", Kind::Int),
    ("grid_y", Kind::Int),
    ("grid_z", Kind::Int),
    ("group_size", Kind::Int),
    ("hidden_ns", Kind::Int),
    ("hidden_ratio", Kind::Float),
    ("id", Kind::Int),
    ("index", Kind::Int),
    ("instances", Kind::Int),
    ("instruction", Kind::Text),
    ("instructions", Kind::Int),
    ("key", Kind::Text),
    ("kind", Kind::Text),
    ("last", Kind::Int),
    ("last_device", Kind::Int),
    ("last_late_ns", Kind::Int),
    ("last_percent", Kind::Float),
    ("lateness_mean_ns", Kind::Int),
    ("lateness_ns", Kind::Int),
    ("live_buffers", Kind::Int),
    ("matched_by", Kind::Text),
    ("max_ns", Kind::Int),
    ("mean_ns", Kind::Int),
    ("median_ns", Kind::Int),
    ("message_bytes", Kind::Int),
    ("min_ns", Kind::Int),
    ("module", Kind::Text),
    ("module_mean_ns", Kind::Int),
    ("module_ms", Kind::Float),
    ("name", Kind::Text),
    ("offset_ns", Kind::Int),
    ("op_name", Kind::Text),
    ("opcode", Kind::Text),
    ("output_bytes", Kind::Int),
    ("p_value", Kind::Float),
    ("parameter_bytes", Kind::Int),
    ("parent", Kind::Int),
    ("payload", Kind::Int),
    ("peak_at", Kind::Text),
    ("peak_bytes", Kind::Int),
    ("peak_event", Kind::Int),
    ("percent", Kind::Float),
    ("pid", Kind::Int),
    ("profile", Kind::Text),
    ("program", Kind::Text),
    ("program_id", Kind::Int),
    ("q_value", Kind::Float),
    ("range", Kind::Text),
    ("range_id", Kind::Int),
    ("ratio_max", Kind::Float),
    ("ratio_median", Kind::Float),
    ("ratio_p90", Kind::Float),
    ("reconstructed", Kind::Text),
    ("registers_per_thread", Kind::Int),
    ("schema", Kind::Text),
    ("schema_id", Kind::Int),
    ("self_ns", Kind::Int),
    ("shape", Kind::Text),
    ("shape_index", Kind::Text),
    ("short_name", Kind::Text),
    ("significant", Kind::Bool),
    ("slowest1_device", Kind::Int),
    ("slowest1_execution", Kind::Int),
    ("slowest1_ns", Kind::Int),
    ("slowest1_thunk_execution", Kind::Int),
    ("slowest2_device", Kind::Int),
    ("slowest2_execution", Kind::Int),
    ("slowest2_ns", Kind::Int),
    ("slowest2_thunk_execution", Kind::Int),
    ("slowest3_device", Kind::Int),
    ("slowest3_execution", Kind::Int),
    ("slowest3_ns", Kind::Int),
    ("slowest3_thunk_execution", Kind::Int),
    ("source", Kind::Text),
    ("src_device", Kind::Int),
    ("src_kind", Kind::Text),
    ("start_ns", Kind::Int),
    ("static_shared_bytes", Kind::Int),
    ("status", Kind::Text),
    ("std_ns", Kind::Int),
    ("stream", Kind::Int),
    ("table", Kind::Text),
    ("temp_bytes", Kind::Int),
    ("thunk", Kind::Text),
    ("thunk_execution", Kind::Int),
    ("thunks", Kind::Int),
    ("thunks_mean", Kind::Float),
    ("thunks_std", Kind::Float),
    ("tid", Kind::Int),
    ("total_bytes", Kind::Int),
    ("total_ns", Kind::Int),
    ("trace", Kind::Int),
    ("type", Kind::Text),
    ("value", Kind::Int),
    ("wait_max_ns", Kind::Int),
    ("wait_mean_ns", Kind::Int),
    ("wait_median_ns", Kind::Int),
    ("wait_min_ns", Kind::Int),
    ("wait_ns", Kind::Int),
    ("wait_p25_ns", Kind::Int),
    ("wait_p75_ns", Kind::Int),
    ("wait_p90_ns", Kind::Int),
    ("wait_p99_ns", Kind::Int),
    ("wait_percent", Kind::Float),
    ("wait_ratio", Kind::Float),
    ("wait_std_ns", Kind::Int),
    ("wall_ns", Kind::Int),
    ("warmup", Kind::Bool),
    ("whole_module", Kind::Bool),
];

/// Fields whose type differs in one record kind (serde's name of the record's struct):
/// a payload field's `value` is a number or text as its `type` says (a memory set's
/// `value`, the byte written, is an integer).
pub const BY_RECORD: &[(&str, &str, Kind)] = &[("PayloadField", "value", Kind::AnyAsText)];

/// The type of `field` in records of serde's struct `record`; `None` for a field the
/// contract does not type (a bug the tests catch: a record kind without its types).
pub fn column_kind(record: &str, field: &str) -> Option<Kind> {
    if let Some(&(_, _, kind)) = BY_RECORD
        .iter()
        .find(|(r, f, _)| *r == record && *f == field)
    {
        return Some(kind);
    }
    FIELDS
        .binary_search_by(|(name, _)| (*name).cmp(field))
        .ok()
        .map(|i| FIELDS[i].1)
}

/// One column's values since the last row group: definition levels (1 a value, 0 null)
/// and the values of its type.
struct Column {
    name: String,
    kind: Kind,
    defs: Vec<i16>,
    ints: Vec<i64>,
    floats: Vec<f64>,
    bools: Vec<bool>,
    /// Texts one after the other, and where each ends.
    text: Vec<u8>,
    ends: Vec<usize>,
    /// The record (count of records since the file began) that last gave a value.
    last_row: u64,
}

impl Column {
    fn new(name: &str, kind: Kind) -> Column {
        Column {
            name: name.to_string(),
            kind,
            defs: Vec::new(),
            ints: Vec::new(),
            floats: Vec::new(),
            bools: Vec::new(),
            text: Vec::new(),
            ends: Vec::new(),
            last_row: u64::MAX,
        }
    }

    fn null(&mut self) {
        self.defs.push(0);
    }

    fn push_text(&mut self, s: &[u8]) {
        self.defs.push(1);
        self.text.extend_from_slice(s);
        self.ends.push(self.text.len());
    }

    /// Bytes held, to bound a row group's memory.
    fn held(&self) -> usize {
        self.defs.len() * 2
            + self.ints.len() * 8
            + self.floats.len() * 8
            + self.bools.len()
            + self.text.len()
            + self.ends.len() * 8
    }

    fn clear(&mut self) {
        self.defs.clear();
        self.ints.clear();
        self.floats.clear();
        self.bools.clear();
        self.text.clear();
        self.ends.clear();
    }

    fn schema(&self) -> Result<Arc<Type>> {
        let (physical, logical) = match self.kind {
            Kind::Int => (Physical::INT64, None),
            Kind::Float => (Physical::DOUBLE, None),
            Kind::Bool => (Physical::BOOLEAN, None),
            Kind::Text | Kind::AnyAsText => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
        };
        Type::primitive_type_builder(&self.name, physical)
            .with_repetition(Repetition::OPTIONAL)
            .with_logical_type(logical)
            .build()
            .map(Arc::new)
            .map_err(parquet_error)
    }
}

fn parquet_error(e: parquet::errors::ParquetError) -> Error {
    Error::Output(std::io::Error::other(format!("writing Parquet: {e}")))
}

/// A record that cannot be written as a row: a bug of the tool writing it (every record
/// kind is written as Parquet by the tests), named so it can be reported.
fn unfit(record: &str, field: &str, what: &str) -> Error {
    Error::Output(std::io::Error::other(format!(
        "writing Parquet: field `{field}` of record {record}: {what} (a bug of njx: please \
         report it)"
    )))
}

/// Writes records as a Parquet file to `out` (a file: Parquet's footer comes last and
/// readers seek to it).
pub struct ParquetWriter<W: Write> {
    out: W,
    columns: Vec<Column>,
    /// Records since the file began, and in the row group being filled.
    rows: u64,
    group_rows: usize,
    /// The file, once the first row group fixed its columns; it writes into a buffer
    /// drained into `out` after each row group (`out` need not be `Send`).
    file: Option<SerializedFileWriter<Vec<u8>>>,
    /// Serde's name of the records' struct (of the first record).
    record: &'static str,
}

impl<W: Write> ParquetWriter<W> {
    /// A writer of records into `out`.
    pub fn new(out: W) -> ParquetWriter<W> {
        ParquetWriter {
            out,
            columns: Vec::new(),
            rows: 0,
            group_rows: 0,
            file: None,
            record: "",
        }
    }

    /// Appends one record.
    pub fn write<T: Serialize + ?Sized>(&mut self, record: &T) -> Result<()> {
        record.serialize(RowSerializer {
            writer: self,
            cursor: 0,
        })?;
        // A field no value was given in this record: null.
        let row = self.rows;
        for c in &mut self.columns {
            if c.last_row != row {
                c.null();
            }
        }
        self.rows += 1;
        self.group_rows += 1;
        // The bytes held, summed over the columns every 1,024 records, not each.
        if self.group_rows >= ROW_GROUP_ROWS
            || (self.group_rows.is_multiple_of(1024)
                && self.columns.iter().map(Column::held).sum::<usize>() >= GROUP_BYTES)
        {
            self.write_group()?;
        }
        Ok(())
    }

    /// The columns of a table of no records: those of `probe` (a default record), whose
    /// values are not kept; several probes, the union of their columns in order. Nothing
    /// once a record was written.
    pub fn columns_of<T: Serialize>(&mut self, probe: &T) -> Result<()> {
        if self.rows > 0 {
            return Ok(());
        }
        self.write(probe)?;
        self.rows = 0;
        self.group_rows = 0;
        for c in &mut self.columns {
            c.clear();
            c.last_row = u64::MAX;
        }
        Ok(())
    }

    /// Writes the records held as a row group.
    fn write_group(&mut self) -> Result<()> {
        if self.file.is_none() {
            let fields = self
                .columns
                .iter()
                .map(Column::schema)
                .collect::<Result<Vec<_>>>()?;
            let schema = Type::group_type_builder("schema")
                .with_fields(fields)
                .build()
                .map_err(parquet_error)?;
            let props = WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .set_created_by(format!(
                    "{} {}",
                    crate::output::program_name(),
                    env!("CARGO_PKG_VERSION")
                ))
                .build();
            self.file = Some(
                SerializedFileWriter::new(Vec::new(), Arc::new(schema), Arc::new(props))
                    .map_err(parquet_error)?,
            );
        }
        let file = self.file.as_mut().expect("made above");
        if self.group_rows > 0 {
            let mut group = file.next_row_group().map_err(parquet_error)?;
            for c in &mut self.columns {
                let mut col = group
                    .next_column()
                    .map_err(parquet_error)?
                    .expect("a column writer per column of the schema");
                let defs = Some(&c.defs[..]);
                match c.kind {
                    Kind::Int => col.typed::<Int64Type>().write_batch(&c.ints, defs, None),
                    Kind::Float => col.typed::<DoubleType>().write_batch(&c.floats, defs, None),
                    Kind::Bool => col.typed::<BoolType>().write_batch(&c.bools, defs, None),
                    Kind::Text | Kind::AnyAsText => {
                        let all = Bytes::from(std::mem::take(&mut c.text));
                        let mut start = 0;
                        let values: Vec<ByteArray> = c
                            .ends
                            .iter()
                            .map(|&end| {
                                let v = ByteArray::from(all.slice(start..end));
                                start = end;
                                v
                            })
                            .collect();
                        col.typed::<ByteArrayType>()
                            .write_batch(&values, defs, None)
                    }
                }
                .map_err(parquet_error)?;
                col.close().map_err(parquet_error)?;
                c.clear();
            }
            group.close().map_err(parquet_error)?;
            file.flush().map_err(Error::Output)?;
        }
        self.group_rows = 0;
        let buf = file.inner_mut();
        self.out.write_all(buf).map_err(Error::Output)?;
        buf.clear();
        Ok(())
    }

    /// Writes what is held and the file's footer, and flushes `out`.
    pub fn finish(mut self) -> Result<()> {
        self.write_group()?;
        let file = self.file.take().expect("made by write_group");
        let rest = file.into_inner().map_err(parquet_error)?;
        self.out.write_all(&rest).map_err(Error::Output)?;
        self.out.flush().map_err(Error::Output)
    }

    /// The column of `field` for the record being written (its position in the previous
    /// record first), made where this is its first value.
    fn column(&mut self, cursor: &mut usize, field: &'static str) -> Result<&mut Column> {
        let at = if self.columns.get(*cursor).is_some_and(|c| c.name == field) {
            *cursor
        } else if let Some(i) = self.columns.iter().position(|c| c.name == field) {
            i
        } else {
            if self.file.is_some() {
                return Err(unfit(
                    self.record,
                    field,
                    "first given after the first row group was written",
                ));
            }
            let kind = column_kind(self.record, field)
                .ok_or_else(|| unfit(self.record, field, "no Parquet type for it"))?;
            let mut c = Column::new(field, kind);
            // Null in the records before this one.
            c.defs.resize(self.group_rows, 0);
            self.columns.push(c);
            self.columns.len() - 1
        };
        *cursor = at + 1;
        let row = self.rows;
        let c = &mut self.columns[at];
        if c.last_row == row {
            return Err(unfit(self.record, field, "given twice in one record"));
        }
        c.last_row = row;
        Ok(c)
    }
}

/// Serializes one record into the columns.
struct RowSerializer<'w, W: Write> {
    writer: &'w mut ParquetWriter<W>,
    cursor: usize,
}

/// A record that is not a struct: an error naming what it was.
fn not_a_record(what: &str) -> Error {
    unfit(
        "?",
        "?",
        &format!("a record must be a struct of fields, not {what}"),
    )
}

impl<W: Write> RowSerializer<'_, W> {
    fn refusal(&self, what: &str) -> Error {
        not_a_record(what)
    }
}

impl ser::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error::Output(std::io::Error::other(format!("writing Parquet: {msg}")))
    }
}

macro_rules! refuse {
    ($($method:ident($($arg:ty),*) $what:literal;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<Self::Ok> {
            Err(not_a_record($what))
        })*
    };
}

/// Numbers of the narrower types, written as the 64-bit ones they widen to.
macro_rules! widen {
    ($($method:ident($t:ty) $wide:ident;)*) => {
        $(fn $method(self, v: $t) -> Result<()> {
            self.$wide(v.into())
        })*
    };
}

/// The serializer methods of values a record's field cannot hold (lists, maps, tuples,
/// enums with data): each the error `self.$refusal(what the value was)`.
macro_rules! nested {
    ($refusal:ident) => {
        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq> {
            Err(self.$refusal("a list"))
        }
        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple> {
            Err(self.$refusal("a tuple"))
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleStruct> {
            Err(self.$refusal("a tuple"))
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant> {
            Err(self.$refusal("an enum with data"))
        }
        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap> {
            Err(self.$refusal("a map"))
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant> {
            Err(self.$refusal("an enum with data"))
        }
    };
}

impl<'w, W: Write> ser::Serializer for RowSerializer<'w, W> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Self> {
        if self.writer.record.is_empty() {
            self.writer.record = name;
        }
        Ok(self)
    }

    refuse! {
        serialize_bool(bool) "a boolean";
        serialize_i8(i8) "a number";
        serialize_i16(i16) "a number";
        serialize_i32(i32) "a number";
        serialize_i64(i64) "a number";
        serialize_u8(u8) "a number";
        serialize_u16(u16) "a number";
        serialize_u32(u32) "a number";
        serialize_u64(u64) "a number";
        serialize_f32(f32) "a number";
        serialize_f64(f64) "a number";
        serialize_char(char) "a character";
        serialize_str(&str) "text";
        serialize_bytes(&[u8]) "bytes";
        serialize_none() "null";
        serialize_unit_struct(&'static str) "null";
    }

    /// No record: the probe of a table with no record type (`finish::<()>`) has no columns.
    fn serialize_unit(self) -> Result<()> {
        Ok(())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<()> {
        v.serialize(self)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<()> {
        v.serialize(self)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<()> {
        Err(not_a_record("an enum"))
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<()> {
        Err(not_a_record("an enum"))
    }
    nested!(refusal);
}

impl<'w, W: Write> ser::SerializeStruct for RowSerializer<'w, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        let record = self.writer.record;
        let column = self.writer.column(&mut self.cursor, key)?;
        value.serialize(Cell {
            column,
            record,
            field: key,
        })
    }

    fn end(self) -> Result<()> {
        Ok(())
    }
}

/// Serializes one field's value into its column.
struct Cell<'c> {
    column: &'c mut Column,
    record: &'static str,
    field: &'static str,
}

/// A field's value as serde gives it.
enum Value<'v> {
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Text(&'v str),
}

impl Cell<'_> {
    /// Appends `v` to the column, as the column's type holds it: a number or flag as its
    /// text in a column of any value as text (a float as the JSON record writes it), a
    /// float that is not finite as null (as serde_json writes it); any other value that
    /// does not fit is an error naming the field.
    fn put(self, v: Value) -> Result<()> {
        let c = self.column;
        match (c.kind, v) {
            (_, Value::Float(f)) if !f.is_finite() => c.null(),
            (Kind::Bool, Value::Bool(b)) => {
                c.defs.push(1);
                c.bools.push(b);
            }
            (Kind::Int, Value::Int(i)) => {
                c.defs.push(1);
                c.ints.push(i);
            }
            (Kind::Int, Value::UInt(u)) => match i64::try_from(u) {
                Ok(i) => {
                    c.defs.push(1);
                    c.ints.push(i);
                }
                // A value of the input, not a bug: said as what it is.
                Err(_) => {
                    return Err(Error::Output(std::io::Error::other(format!(
                        "writing Parquet: field `{}` of record {} is {u}, beyond the int64 \
                         of its column (--format json or csv writes it)",
                        self.field, self.record
                    ))));
                }
            },
            (Kind::Float, Value::Float(f)) => {
                c.defs.push(1);
                c.floats.push(f);
            }
            (Kind::Text | Kind::AnyAsText, Value::Text(t)) => c.push_text(t.as_bytes()),
            (Kind::AnyAsText, Value::Bool(b)) => c.push_text(if b { b"true" } else { b"false" }),
            (Kind::AnyAsText, Value::Int(i)) => {
                c.push_text(itoa::Buffer::new().format(i).as_bytes())
            }
            (Kind::AnyAsText, Value::UInt(u)) => {
                c.push_text(itoa::Buffer::new().format(u).as_bytes())
            }
            (Kind::AnyAsText, Value::Float(f)) => {
                let text = serde_json::to_string(&f).map_err(|e| Error::Output(e.into()))?;
                c.push_text(text.as_bytes());
            }
            (kind, v) => {
                let what = match v {
                    Value::Bool(_) => "a boolean",
                    Value::Int(_) | Value::UInt(_) => "an integer",
                    Value::Float(_) => "a fraction",
                    Value::Text(_) => "text",
                };
                return Err(unfit(
                    self.record,
                    self.field,
                    &format!("{what} where its column is {}", kind.name()),
                ));
            }
        }
        Ok(())
    }

    fn wrong(&self, what: &str) -> Error {
        unfit(
            self.record,
            self.field,
            &format!("{what} where its column is {}", self.column.kind.name()),
        )
    }
}

impl ser::Serializer for Cell<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_bool(self, v: bool) -> Result<()> {
        self.put(Value::Bool(v))
    }
    fn serialize_i64(self, v: i64) -> Result<()> {
        self.put(Value::Int(v))
    }
    fn serialize_u64(self, v: u64) -> Result<()> {
        self.put(Value::UInt(v))
    }
    fn serialize_f64(self, v: f64) -> Result<()> {
        self.put(Value::Float(v))
    }
    fn serialize_str(self, v: &str) -> Result<()> {
        self.put(Value::Text(v))
    }
    fn serialize_none(self) -> Result<()> {
        self.column.null();
        Ok(())
    }
    fn serialize_unit(self) -> Result<()> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<()> {
        self.serialize_none()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<()> {
        v.serialize(self)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<()> {
        v.serialize(self)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<()> {
        // A field enum written as its name (as serde_json does).
        self.serialize_str(variant)
    }
    widen! {
        serialize_i8(i8) serialize_i64;
        serialize_i16(i16) serialize_i64;
        serialize_i32(i32) serialize_i64;
        serialize_u8(u8) serialize_u64;
        serialize_u16(u16) serialize_u64;
        serialize_u32(u32) serialize_u64;
        serialize_f32(f32) serialize_f64;
    }
    fn serialize_char(self, v: char) -> Result<()> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<()> {
        Err(self.wrong("bytes"))
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<()> {
        Err(self.wrong("a nested value"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct> {
        Err(self.wrong("a nested record"))
    }
    nested!(wrong);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_types_are_sorted_and_unique() {
        assert!(FIELDS.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn values_that_do_not_fit_their_column_are_errors_naming_the_field() {
        #[derive(Serialize)]
        struct Bad {
            percent: &'static str,
        }
        let mut w = ParquetWriter::new(Vec::new());
        let e = w.write(&Bad { percent: "x" }).unwrap_err().to_string();
        assert!(
            e.contains("field `percent` of record Bad: text where its column is double"),
            "{e}"
        );
        #[derive(Serialize)]
        struct Untyped {
            no_such_field: i64,
        }
        let e = ParquetWriter::new(Vec::new())
            .write(&Untyped { no_such_field: 1 })
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("field `no_such_field` of record Untyped: no Parquet type"),
            "{e}"
        );
        #[derive(Serialize)]
        struct Big {
            id: u64,
        }
        let e = ParquetWriter::new(Vec::new())
            .write(&Big { id: u64::MAX })
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is 18446744073709551615, beyond the int64"),
            "{e}"
        );
    }
}
