//! Parquet fixtures: tables of int, double, text and list columns, as pandas/pyarrow
//! write them. `examples/gen_ranks.rs` includes this file by `#[path]`, so it uses only
//! the `parquet` crate.
#![allow(dead_code)]

/// The cells of one column of a Parquet fixture; `None` is a null.
pub enum Cells {
    Int64(Vec<Option<i64>>),
    Int32(Vec<Option<i32>>),
    Double(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
    /// A LIST of int64 (pyarrow's `list<int64>`), as the nsys recipes store `Range Stack`.
    Int64List(Vec<Option<Vec<i64>>>),
}

/// One column of a Parquet fixture. pandas writes every column `optional`; `required`
/// columns (no nulls allowed) have no definition levels at all.
pub struct PqCol {
    pub name: &'static str,
    pub required: bool,
    pub cells: Cells,
}

impl PqCol {
    fn len(&self) -> usize {
        match &self.cells {
            Cells::Int64(v) => v.len(),
            Cells::Int32(v) => v.len(),
            Cells::Double(v) => v.len(),
            Cells::Text(v) => v.len(),
            Cells::Int64List(v) => v.len(),
        }
    }

    /// The same column stored as `required`.
    pub fn required(mut self) -> PqCol {
        self.required = true;
        self
    }
}

/// An optional int64 column.
pub fn pq_int(name: &'static str, cells: &[Option<i64>]) -> PqCol {
    PqCol {
        name,
        required: false,
        cells: Cells::Int64(cells.to_vec()),
    }
}

/// An optional int32 column.
pub fn pq_int32(name: &'static str, cells: &[Option<i32>]) -> PqCol {
    PqCol {
        name,
        required: false,
        cells: Cells::Int32(cells.to_vec()),
    }
}

/// An optional double column (`Some(f64::NAN)` is a stored NaN, not a null).
pub fn pq_double(name: &'static str, cells: &[Option<f64>]) -> PqCol {
    PqCol {
        name,
        required: false,
        cells: Cells::Double(cells.to_vec()),
    }
}

/// An optional UTF-8 column.
pub fn pq_text(name: &'static str, cells: &[Option<&str>]) -> PqCol {
    PqCol {
        name,
        required: false,
        cells: Cells::Text(cells.iter().map(|c| c.map(str::to_string)).collect()),
    }
}

/// An optional LIST<int64> column.
pub fn pq_int_list(name: &'static str, cells: &[Option<&[i64]>]) -> PqCol {
    PqCol {
        name,
        required: false,
        cells: Cells::Int64List(cells.iter().map(|c| c.map(<[i64]>::to_vec)).collect()),
    }
}

/// A Parquet file with `columns`, in row groups of at most `rows_per_group` rows.
pub fn parquet_table(columns: &[PqCol], rows_per_group: usize) -> Vec<u8> {
    parquet_table_with(columns, rows_per_group, Default::default())
}

/// [`parquet_table`] written with `properties` (compression, encodings: pandas' pyarrow
/// writes snappy-compressed, dictionary-encoded columns).
pub fn parquet_table_with(
    columns: &[PqCol],
    rows_per_group: usize,
    properties: parquet::file::properties::WriterProperties,
) -> Vec<u8> {
    use parquet::basic::{ConvertedType, LogicalType, Repetition, Type as Physical};
    use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::types::Type;
    use std::sync::Arc;

    let rows = columns.first().map_or(0, PqCol::len);
    assert!(columns.iter().all(|c| c.len() == rows), "ragged columns");
    let fields = columns
        .iter()
        .map(|c| {
            let repetition = if c.required {
                Repetition::REQUIRED
            } else {
                Repetition::OPTIONAL
            };
            let prim = |t: Physical| Type::primitive_type_builder(c.name, t);
            let t = match &c.cells {
                Cells::Int64(_) => prim(Physical::INT64).with_repetition(repetition).build(),
                Cells::Int32(_) => prim(Physical::INT32).with_repetition(repetition).build(),
                Cells::Double(_) => prim(Physical::DOUBLE).with_repetition(repetition).build(),
                Cells::Text(_) => prim(Physical::BYTE_ARRAY)
                    .with_converted_type(ConvertedType::UTF8)
                    .with_repetition(repetition)
                    .build(),
                Cells::Int64List(_) => {
                    let element = Type::primitive_type_builder("element", Physical::INT64)
                        .with_repetition(Repetition::OPTIONAL)
                        .build()
                        .unwrap();
                    let list = Type::group_type_builder("list")
                        .with_repetition(Repetition::REPEATED)
                        .with_fields(vec![Arc::new(element)])
                        .build()
                        .unwrap();
                    Type::group_type_builder(c.name)
                        .with_repetition(repetition)
                        .with_converted_type(ConvertedType::LIST)
                        .with_logical_type(Some(LogicalType::List))
                        .with_fields(vec![Arc::new(list)])
                        .build()
                }
            };
            Arc::new(t.unwrap())
        })
        .collect();
    let schema = Arc::new(
        Type::group_type_builder("schema")
            .with_fields(fields)
            .build()
            .unwrap(),
    );
    /// The non-null values of `cells` and their definition levels (none when required).
    fn flat<T: Clone>(cells: &[Option<T>], required: bool) -> (Vec<T>, Option<Vec<i16>>) {
        let values = cells.iter().flatten().cloned().collect::<Vec<_>>();
        if required {
            assert_eq!(values.len(), cells.len(), "null in a required column");
            return (values, None);
        }
        let defs = cells.iter().map(|c| i16::from(c.is_some())).collect();
        (values, Some(defs))
    }
    let mut buf = Vec::new();
    {
        let mut writer = SerializedFileWriter::new(&mut buf, schema, Arc::new(properties)).unwrap();
        let mut start = 0;
        while start < rows || (rows == 0 && start == 0) {
            let end = (start + rows_per_group.max(1)).min(rows);
            let mut rg = writer.next_row_group().unwrap();
            for c in columns {
                let mut w = rg.next_column().unwrap().unwrap();
                match &c.cells {
                    Cells::Int64(v) => {
                        let (vals, defs) = flat(&v[start..end], c.required);
                        w.typed::<Int64Type>()
                            .write_batch(&vals, defs.as_deref(), None)
                            .unwrap();
                    }
                    Cells::Int32(v) => {
                        let (vals, defs) = flat(&v[start..end], c.required);
                        w.typed::<Int32Type>()
                            .write_batch(&vals, defs.as_deref(), None)
                            .unwrap();
                    }
                    Cells::Double(v) => {
                        let (vals, defs) = flat(&v[start..end], c.required);
                        w.typed::<DoubleType>()
                            .write_batch(&vals, defs.as_deref(), None)
                            .unwrap();
                    }
                    Cells::Text(v) => {
                        let bytes: Vec<Option<ByteArray>> = v[start..end]
                            .iter()
                            .map(|c| c.as_deref().map(ByteArray::from))
                            .collect();
                        let (vals, defs) = flat(&bytes, c.required);
                        w.typed::<ByteArrayType>()
                            .write_batch(&vals, defs.as_deref(), None)
                            .unwrap();
                    }
                    Cells::Int64List(v) => {
                        // Levels: 0 null list, 1 empty list, 3 an element (2 would be a
                        // null element); repetition 1 continues the current list.
                        let top = i16::from(!c.required);
                        let (mut vals, mut defs, mut reps) = (Vec::new(), Vec::new(), Vec::new());
                        for cell in &v[start..end] {
                            match cell {
                                None => {
                                    assert!(!c.required, "null in a required column");
                                    defs.push(0);
                                    reps.push(0);
                                }
                                Some(list) if list.is_empty() => {
                                    defs.push(top);
                                    reps.push(0);
                                }
                                Some(list) => {
                                    for (i, x) in list.iter().enumerate() {
                                        vals.push(*x);
                                        defs.push(top + 2);
                                        reps.push(i16::from(i > 0));
                                    }
                                }
                            }
                        }
                        w.typed::<Int64Type>()
                            .write_batch(&vals, Some(&defs), Some(&reps))
                            .unwrap();
                    }
                }
                w.close().unwrap();
            }
            rg.close().unwrap();
            if rows == 0 {
                break;
            }
            start = end;
        }
        writer.close().unwrap();
    }
    buf
}

/// A flat Parquet table read back whole (`examples/gen_ranks.rs` and the 2026 re-layer
/// rewrite real tables with it): its columns with every cell, and what writing it again
/// the same way takes (rows per group, compression, key-value metadata such as pandas'
/// schema). Flat columns of int64, int32, double and text only.
pub struct FlatTable {
    pub columns: Vec<PqCol>,
    /// Rows of its largest row group.
    pub rows_per_group: usize,
    pub compression: parquet::basic::Compression,
    pub key_value: Option<Vec<parquet::file::metadata::KeyValue>>,
}

impl FlatTable {
    /// Reads `bytes`, the table `what` (named in errors).
    pub fn read(bytes: Vec<u8>, what: &str) -> Result<FlatTable, String> {
        use parquet::basic::{ConvertedType, LogicalType, Repetition, Type as Physical};
        use parquet::file::reader::{FileReader, SerializedFileReader};
        use parquet::record::Field;

        let reader = SerializedFileReader::new(bytes::Bytes::from(bytes))
            .map_err(|e| format!("{what}: {e}"))?;
        let meta = reader.metadata();
        let schema = meta.file_metadata().schema_descr();
        let mut columns = Vec::new();
        for c in schema.columns() {
            let t = c.self_type();
            let info = t.get_basic_info();
            // Flat columns only: a leaf whose path is its own name.
            if c.path().parts().len() != 1 {
                return Err(format!("{what}: nested column {} unsupported", c.path()));
            }
            let name: &'static str = Box::leak(c.name().to_string().into_boxed_str());
            let text = matches!(info.logical_type_ref(), Some(LogicalType::String))
                || info.converted_type() == ConvertedType::UTF8;
            let plain = info.logical_type_ref().is_none()
                && matches!(
                    info.converted_type(),
                    ConvertedType::NONE | ConvertedType::INT_64 | ConvertedType::INT_32
                );
            let cells = match c.physical_type() {
                Physical::BYTE_ARRAY if text => Cells::Text(Vec::new()),
                Physical::INT64 if plain => Cells::Int64(Vec::new()),
                Physical::INT32 if plain => Cells::Int32(Vec::new()),
                Physical::DOUBLE if plain => Cells::Double(Vec::new()),
                other => {
                    return Err(format!(
                        "{what}: column {name} of type {other} ({:?}) unsupported",
                        info.logical_type_ref()
                    ));
                }
            };
            columns.push(PqCol {
                name,
                required: info.repetition() == Repetition::REQUIRED,
                cells,
            });
        }
        let rows = reader
            .get_row_iter(None)
            .map_err(|e| format!("{what}: {e}"))?;
        for (row_no, row) in rows.enumerate() {
            let row = row.map_err(|e| format!("{what}: {e}"))?;
            for (column, (_, field)) in columns.iter_mut().zip(row.get_column_iter()) {
                match (&mut column.cells, field) {
                    (Cells::Int64(v), Field::Long(x)) => v.push(Some(*x)),
                    (Cells::Int64(v), Field::Null) => v.push(None),
                    (Cells::Int32(v), Field::Int(x)) => v.push(Some(*x)),
                    (Cells::Int32(v), Field::Null) => v.push(None),
                    (Cells::Double(v), Field::Double(x)) => v.push(Some(*x)),
                    (Cells::Double(v), Field::Null) => v.push(None),
                    (Cells::Text(v), Field::Str(x)) => v.push(Some(x.clone())),
                    (Cells::Text(v), Field::Null) => v.push(None),
                    _ => {
                        return Err(format!(
                            "{what}: row {}: unexpected {field:?} in column {}",
                            row_no + 1,
                            column.name
                        ));
                    }
                }
            }
        }
        let rows_per_group = meta
            .row_groups()
            .iter()
            .map(|g| g.num_rows())
            .max()
            .unwrap_or(0)
            .try_into()
            .map_err(|e| format!("{what}: {e}"))?;
        let compression = meta
            .row_groups()
            .first()
            .and_then(|g| g.columns().first())
            .map_or(parquet::basic::Compression::SNAPPY, |c| c.compression());
        let key_value = meta.file_metadata().key_value_metadata().cloned();
        Ok(FlatTable {
            columns,
            rows_per_group,
            compression,
            key_value,
        })
    }

    /// `columns` written as this table was: same row groups, compression and metadata.
    pub fn write_like(&self, columns: &[PqCol]) -> Vec<u8> {
        let properties = parquet::file::properties::WriterProperties::builder()
            .set_compression(self.compression)
            .set_key_value_metadata(self.key_value.clone())
            .build();
        parquet_table_with(columns, self.rows_per_group, properties)
    }

    /// The index of the column named `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

impl Cells {
    /// A copy of the cells.
    pub fn copy(&self) -> Cells {
        match self {
            Cells::Text(v) => Cells::Text(v.clone()),
            Cells::Int64(v) => Cells::Int64(v.clone()),
            Cells::Int32(v) => Cells::Int32(v.clone()),
            Cells::Double(v) => Cells::Double(v.clone()),
            Cells::Int64List(v) => Cells::Int64List(v.clone()),
        }
    }
}
