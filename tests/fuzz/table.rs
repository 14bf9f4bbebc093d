//! Parquet tables as data: columns of cells that the mutators change value by value
//! (nulls, extremes, NaN, ids pointing elsewhere), column by column (types, names,
//! repetition, order) and row by row, then write again as a valid Parquet file with
//! varying row groups, pages, compression and encodings.

use crate::rng::Rng;
use parquet::basic::{Compression, ConvertedType, LogicalType, Repetition, Type as Physical};
use parquet::data_type::{
    BoolType, ByteArray, ByteArrayType, DoubleType, FloatType, Int32Type, Int64Type,
};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::sync::Arc;

/// The cells of one column; `None` is a null.
#[derive(Debug, Clone)]
pub enum Cells {
    I64(Vec<Option<i64>>),
    I32(Vec<Option<i32>>),
    F64(Vec<Option<f64>>),
    F32(Vec<Option<f32>>),
    Bool(Vec<Option<bool>>),
    Text(Vec<Option<String>>),
    /// Bytes without a UTF-8 annotation.
    Binary(Vec<Option<Vec<u8>>>),
    /// A LIST of int64, as pyarrow writes `list<int64>`.
    I64List(Vec<Option<Vec<i64>>>),
}

/// One column.
#[derive(Debug, Clone)]
pub struct Col {
    pub name: String,
    pub required: bool,
    pub cells: Cells,
}

/// A whole table and how it is written.
#[derive(Debug, Clone)]
pub struct Table {
    pub cols: Vec<Col>,
    pub rows_per_group: usize,
    /// 0 plain, 1 snappy + dictionary (as pyarrow), 2 tiny pages, 3 no statistics.
    pub props: u8,
}

/// Shorthands for building tables.
pub fn int(name: &str, cells: Vec<Option<i64>>) -> Col {
    Col {
        name: name.into(),
        required: false,
        cells: Cells::I64(cells),
    }
}
pub fn int32(name: &str, cells: Vec<Option<i32>>) -> Col {
    Col {
        name: name.into(),
        required: false,
        cells: Cells::I32(cells),
    }
}
pub fn double(name: &str, cells: Vec<Option<f64>>) -> Col {
    Col {
        name: name.into(),
        required: false,
        cells: Cells::F64(cells),
    }
}
pub fn text(name: &str, cells: Vec<Option<String>>) -> Col {
    Col {
        name: name.into(),
        required: false,
        cells: Cells::Text(cells),
    }
}
pub fn int_list(name: &str, cells: Vec<Option<Vec<i64>>>) -> Col {
    Col {
        name: name.into(),
        required: false,
        cells: Cells::I64List(cells),
    }
}

impl Cells {
    pub fn len(&self) -> usize {
        match self {
            Cells::I64(v) => v.len(),
            Cells::I32(v) => v.len(),
            Cells::F64(v) => v.len(),
            Cells::F32(v) => v.len(),
            Cells::Bool(v) => v.len(),
            Cells::Text(v) => v.len(),
            Cells::Binary(v) => v.len(),
            Cells::I64List(v) => v.len(),
        }
    }

    /// The cell as an integer, where it is one (for type changes).
    fn int_at(&self, i: usize) -> Option<i64> {
        match self {
            Cells::I64(v) => v[i],
            Cells::I32(v) => v[i].map(i64::from),
            Cells::F64(v) => v[i].map(|x| x as i64),
            Cells::F32(v) => v[i].map(|x| x as i64),
            Cells::Bool(v) => v[i].map(i64::from),
            Cells::Text(v) => v[i].as_deref().and_then(|s| s.parse().ok()),
            Cells::Binary(v) => v[i].as_ref().map(|b| b.len() as i64),
            Cells::I64List(v) => v[i].as_ref().and_then(|l| l.last().copied()),
        }
    }

    fn text_at(&self, i: usize) -> Option<String> {
        match self {
            Cells::Text(v) => v[i].clone(),
            Cells::Binary(v) => v[i]
                .as_ref()
                .map(|b| String::from_utf8_lossy(b).into_owned()),
            Cells::F64(v) => v[i].map(|x| x.to_string()),
            Cells::I64List(v) => v[i]
                .as_ref()
                .map(|l| l.iter().map(|x| format!(":{x}")).collect()),
            _ => self.int_at(i).map(|x| x.to_string()),
        }
    }

    /// The same values as cells of kind `k`.
    fn convert(&self, k: usize) -> Cells {
        let n = self.len();
        match k % 8 {
            0 => Cells::I64((0..n).map(|i| self.int_at(i)).collect()),
            1 => Cells::I32((0..n).map(|i| self.int_at(i).map(|x| x as i32)).collect()),
            2 => Cells::F64((0..n).map(|i| self.int_at(i).map(|x| x as f64)).collect()),
            3 => Cells::F32((0..n).map(|i| self.int_at(i).map(|x| x as f32)).collect()),
            4 => Cells::Bool((0..n).map(|i| self.int_at(i).map(|x| x != 0)).collect()),
            5 => Cells::Text((0..n).map(|i| self.text_at(i)).collect()),
            6 => Cells::Binary(
                (0..n)
                    .map(|i| self.text_at(i).map(String::into_bytes))
                    .collect(),
            ),
            _ => Cells::I64List((0..n).map(|i| self.int_at(i).map(|x| vec![x])).collect()),
        }
    }

    fn remove(&mut self, i: usize) {
        match self {
            Cells::I64(v) => drop(v.remove(i)),
            Cells::I32(v) => drop(v.remove(i)),
            Cells::F64(v) => drop(v.remove(i)),
            Cells::F32(v) => drop(v.remove(i)),
            Cells::Bool(v) => drop(v.remove(i)),
            Cells::Text(v) => drop(v.remove(i)),
            Cells::Binary(v) => drop(v.remove(i)),
            Cells::I64List(v) => drop(v.remove(i)),
        }
    }

    /// Cell `i` copied `times` times at `at`.
    fn dup(&mut self, i: usize, at: usize, times: usize) {
        fn go<T: Clone>(v: &mut Vec<T>, i: usize, at: usize, times: usize) {
            let x = v[i].clone();
            v.splice(at..at, std::iter::repeat_n(x, times));
        }
        match self {
            Cells::I64(v) => go(v, i, at, times),
            Cells::I32(v) => go(v, i, at, times),
            Cells::F64(v) => go(v, i, at, times),
            Cells::F32(v) => go(v, i, at, times),
            Cells::Bool(v) => go(v, i, at, times),
            Cells::Text(v) => go(v, i, at, times),
            Cells::Binary(v) => go(v, i, at, times),
            Cells::I64List(v) => go(v, i, at, times),
        }
    }

    fn swap(&mut self, a: usize, b: usize) {
        match self {
            Cells::I64(v) => v.swap(a, b),
            Cells::I32(v) => v.swap(a, b),
            Cells::F64(v) => v.swap(a, b),
            Cells::F32(v) => v.swap(a, b),
            Cells::Bool(v) => v.swap(a, b),
            Cells::Text(v) => v.swap(a, b),
            Cells::Binary(v) => v.swap(a, b),
            Cells::I64List(v) => v.swap(a, b),
        }
    }

    fn set_null(&mut self, i: usize) {
        match self {
            Cells::I64(v) => v[i] = None,
            Cells::I32(v) => v[i] = None,
            Cells::F64(v) => v[i] = None,
            Cells::F32(v) => v[i] = None,
            Cells::Bool(v) => v[i] = None,
            Cells::Text(v) => v[i] = None,
            Cells::Binary(v) => v[i] = None,
            Cells::I64List(v) => v[i] = None,
        }
    }

    /// Cell `i` set to an unusual value of its type; `from` is a value of another cell
    /// (an id, to make references point elsewhere).
    fn set_odd(&mut self, rng: &mut Rng, i: usize, from: Option<i64>) {
        const INTS: &[i64] = &[
            0,
            -1,
            1,
            i64::MIN,
            i64::MAX,
            i64::MIN + 1,
            i64::MAX - 1,
            1 << 62,
            -(1 << 62),
            i32::MAX as i64,
            i32::MIN as i64,
            1 << 32,
            1 << 53,
            u32::MAX as i64,
            -1_000_000_000,
            999_999,
        ];
        let int = match from {
            Some(x) if rng.chance(0.4) => x.wrapping_add(*rng.pick(&[0i64, 1, -1])),
            _ => *rng.pick(INTS),
        };
        match self {
            Cells::I64(v) => v[i] = Some(int),
            Cells::I32(v) => v[i] = Some(int as i32),
            Cells::F64(v) => {
                v[i] = Some(*rng.pick(&[
                    f64::NAN,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    -0.0,
                    0.5,
                    -1.0,
                    1e300,
                    -1e300,
                    9.223_372_036_854_776e18,
                    1.8446744073709552e19,
                    int as f64,
                ]))
            }
            Cells::F32(v) => v[i] = Some(*rng.pick(&[f32::NAN, f32::MAX, -1.0, 0.5, int as f32])),
            Cells::Bool(v) => v[i] = Some(rng.chance(0.5)),
            Cells::Text(v) => {
                let s = match rng.below(4) {
                    0 => String::new(),
                    1 => rng.pick(crate::text::TOKENS).to_string(),
                    2 => int.to_string(),
                    _ => {
                        // an edit of the old text
                        let mut s = v[i].clone().unwrap_or_default();
                        let at = (0..=s.len())
                            .filter(|&k| s.is_char_boundary(k))
                            .nth(rng.below(s.len() + 1))
                            .unwrap_or(0);
                        let token: &str = rng.pick::<&str>(crate::text::TOKENS);
                        s.insert_str(at, token);
                        s
                    }
                };
                v[i] = Some(s);
            }
            Cells::Binary(v) => v[i] = Some((0..rng.below(40)).map(|_| rng.next() as u8).collect()),
            Cells::I64List(v) => {
                let mut l = v[i].clone().unwrap_or_default();
                match rng.below(3) {
                    0 => l.clear(),
                    1 => l.push(int),
                    _ => l = (0..rng.range(1, 300)).map(|k| k as i64).collect(),
                }
                v[i] = Some(l);
            }
        }
    }

    fn push_default(&mut self) {
        match self {
            Cells::I64(v) => v.push(Some(0)),
            Cells::I32(v) => v.push(Some(0)),
            Cells::F64(v) => v.push(Some(0.0)),
            Cells::F32(v) => v.push(Some(0.0)),
            Cells::Bool(v) => v.push(Some(false)),
            Cells::Text(v) => v.push(Some(String::new())),
            Cells::Binary(v) => v.push(Some(Vec::new())),
            Cells::I64List(v) => v.push(Some(Vec::new())),
        }
    }
}

impl Table {
    pub fn new(cols: Vec<Col>) -> Table {
        Table {
            cols,
            rows_per_group: 1 << 20,
            props: 0,
        }
    }

    fn rows(&self) -> usize {
        self.cols.iter().map(|c| c.cells.len()).min().unwrap_or(0)
    }

    /// Writes the table as a Parquet file; `None` where the writer refuses it.
    pub fn encode(&self) -> Option<Vec<u8>> {
        encode(self).ok()
    }

    /// Changes the table in 1 to `rounds` ways.
    pub fn mutate(&mut self, rng: &mut Rng, rounds: usize) {
        for _ in 0..rng.small(rounds) {
            self.one(rng);
        }
    }

    fn one(&mut self, rng: &mut Rng) {
        let rows = self.rows();
        let ncols = self.cols.len();
        if ncols == 0 {
            self.cols.push(int("RangeId", vec![Some(1)]));
            return;
        }
        let c = rng.below(ncols);
        match rng.below(20) {
            0..=5 => {
                // cells set to unusual values, sometimes to another column's value
                if rows > 0 {
                    for _ in 0..rng.small(4) {
                        let i = rng.below(rows);
                        let from = {
                            let other = &self.cols[rng.below(ncols)].cells;
                            other.int_at(rng.below(rows))
                        };
                        self.cols[c].cells.set_odd(rng, i, from);
                    }
                }
            }
            6 | 7 => {
                if rows > 0 {
                    let i = rng.below(rows);
                    self.cols[c].cells.set_null(i);
                }
            }
            8 => {
                // another type
                let k = rng.below(8);
                self.cols[c].cells = self.cols[c].cells.convert(k);
            }
            9 => {
                self.cols.remove(c);
            }
            10 => {
                // a column twice, under the same name or another
                let mut copy = self.cols[c].clone();
                if rng.chance(0.5) {
                    copy.name = rng.pick(crate::text::HEADERS).to_string();
                }
                let at = rng.below(ncols + 1);
                self.cols.insert(at, copy);
            }
            11 => {
                self.cols[c].name = match rng.below(4) {
                    0 => String::new(),
                    1 => format!("{} ", self.cols[c].name),
                    _ => rng.pick(crate::text::HEADERS).to_string(),
                };
            }
            12 => {
                let d = rng.below(ncols);
                let name = std::mem::take(&mut self.cols[c].name);
                self.cols[c].name = std::mem::replace(&mut self.cols[d].name, name);
            }
            13 => {
                self.cols[c].required = !self.cols[c].required;
            }
            14 => {
                // rows dropped
                if rows > 0 {
                    let i = rng.below(rows);
                    let k = rng.small(rows.min(8));
                    for _ in 0..k.min(rows - i) {
                        for col in &mut self.cols {
                            col.cells.remove(i);
                        }
                    }
                }
            }
            15 => {
                // a row duplicated, sometimes many times
                if rows > 0 {
                    let i = rng.below(rows);
                    let times = if rng.chance(0.02) {
                        rng.range(1_000, 20_000)
                    } else {
                        1
                    };
                    let at = rng.below(rows + 1);
                    for col in &mut self.cols {
                        col.cells.dup(i, at.min(col.cells.len()), times);
                    }
                }
            }
            16 => {
                // rows swapped
                if rows > 1 {
                    let (a, b) = (rng.below(rows), rng.below(rows));
                    for col in &mut self.cols {
                        col.cells.swap(a, b);
                    }
                }
            }
            17 => {
                // a column shorter or longer than the others (evened out on writing)
                if rng.chance(0.5) && rows > 0 {
                    self.cols[c].cells.remove(rng.below(rows));
                } else {
                    self.cols[c].cells.push_default();
                }
            }
            18 => {
                self.rows_per_group = *rng.pick(&[1usize, 2, 3, 7, 1 << 20]);
            }
            _ => {
                self.props = rng.below(4) as u8;
            }
        }
    }
}

fn encode(t: &Table) -> parquet::errors::Result<Vec<u8>> {
    let rows = t.rows();
    let fields = t
        .cols
        .iter()
        .map(|c| {
            let repetition = if c.required {
                Repetition::REQUIRED
            } else {
                Repetition::OPTIONAL
            };
            let prim = |p: Physical| Type::primitive_type_builder(&c.name, p);
            let ty = match &c.cells {
                Cells::I64(_) => prim(Physical::INT64).with_repetition(repetition).build(),
                Cells::I32(_) => prim(Physical::INT32).with_repetition(repetition).build(),
                Cells::F64(_) => prim(Physical::DOUBLE).with_repetition(repetition).build(),
                Cells::F32(_) => prim(Physical::FLOAT).with_repetition(repetition).build(),
                Cells::Bool(_) => prim(Physical::BOOLEAN).with_repetition(repetition).build(),
                Cells::Text(_) => prim(Physical::BYTE_ARRAY)
                    .with_converted_type(ConvertedType::UTF8)
                    .with_repetition(repetition)
                    .build(),
                Cells::Binary(_) => prim(Physical::BYTE_ARRAY)
                    .with_repetition(repetition)
                    .build(),
                Cells::I64List(_) => {
                    let element = Type::primitive_type_builder("element", Physical::INT64)
                        .with_repetition(Repetition::OPTIONAL)
                        .build()?;
                    let list = Type::group_type_builder("list")
                        .with_repetition(Repetition::REPEATED)
                        .with_fields(vec![Arc::new(element)])
                        .build()?;
                    Type::group_type_builder(&c.name)
                        .with_repetition(repetition)
                        .with_converted_type(ConvertedType::LIST)
                        .with_logical_type(Some(LogicalType::List))
                        .with_fields(vec![Arc::new(list)])
                        .build()
                }
            };
            ty.map(Arc::new)
        })
        .collect::<parquet::errors::Result<Vec<_>>>()?;
    let schema = Arc::new(
        Type::group_type_builder("schema")
            .with_fields(fields)
            .build()?,
    );
    let props = match t.props {
        1 => WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_dictionary_enabled(true)
            .build(),
        2 => WriterProperties::builder()
            .set_data_page_row_count_limit(2)
            .set_write_batch_size(2)
            .set_dictionary_enabled(false)
            .build(),
        3 => WriterProperties::builder()
            .set_statistics_enabled(EnabledStatistics::None)
            .set_dictionary_enabled(false)
            .build(),
        _ => WriterProperties::builder()
            .set_dictionary_enabled(false)
            .build(),
    };
    /// The values of `cells` and their definition levels (none when required: nulls
    /// become `fill`).
    fn flat<T: Clone>(cells: &[Option<T>], required: bool, fill: T) -> (Vec<T>, Option<Vec<i16>>) {
        if required {
            let v = cells
                .iter()
                .map(|c| c.clone().unwrap_or(fill.clone()))
                .collect();
            return (v, None);
        }
        let values = cells.iter().flatten().cloned().collect();
        let defs = cells.iter().map(|c| i16::from(c.is_some())).collect();
        (values, Some(defs))
    }
    let mut buf = Vec::new();
    {
        let mut writer = SerializedFileWriter::new(&mut buf, schema, Arc::new(props))?;
        let mut start = 0;
        loop {
            let end = (start + t.rows_per_group.max(1)).min(rows);
            let mut rg = writer.next_row_group()?;
            for c in &t.cols {
                let Some(mut w) = rg.next_column()? else {
                    break;
                };
                let req = c.required;
                match &c.cells {
                    Cells::I64(v) => {
                        let (vals, defs) = flat(&v[start..end], req, 0);
                        w.typed::<Int64Type>()
                            .write_batch(&vals, defs.as_deref(), None)?;
                    }
                    Cells::I32(v) => {
                        let (vals, defs) = flat(&v[start..end], req, 0);
                        w.typed::<Int32Type>()
                            .write_batch(&vals, defs.as_deref(), None)?;
                    }
                    Cells::F64(v) => {
                        let (vals, defs) = flat(&v[start..end], req, 0.0);
                        w.typed::<DoubleType>()
                            .write_batch(&vals, defs.as_deref(), None)?;
                    }
                    Cells::F32(v) => {
                        let (vals, defs) = flat(&v[start..end], req, 0.0);
                        w.typed::<FloatType>()
                            .write_batch(&vals, defs.as_deref(), None)?;
                    }
                    Cells::Bool(v) => {
                        let (vals, defs) = flat(&v[start..end], req, false);
                        w.typed::<BoolType>()
                            .write_batch(&vals, defs.as_deref(), None)?;
                    }
                    Cells::Text(v) => {
                        let bytes: Vec<Option<ByteArray>> = v[start..end]
                            .iter()
                            .map(|c| c.as_deref().map(ByteArray::from))
                            .collect();
                        let (vals, defs) = flat(&bytes, req, ByteArray::from(""));
                        w.typed::<ByteArrayType>()
                            .write_batch(&vals, defs.as_deref(), None)?;
                    }
                    Cells::Binary(v) => {
                        let bytes: Vec<Option<ByteArray>> = v[start..end]
                            .iter()
                            .map(|c| c.clone().map(ByteArray::from))
                            .collect();
                        let (vals, defs) = flat(&bytes, req, ByteArray::from(""));
                        w.typed::<ByteArrayType>()
                            .write_batch(&vals, defs.as_deref(), None)?;
                    }
                    Cells::I64List(v) => {
                        let top = i16::from(!req);
                        let (mut vals, mut defs, mut reps) = (Vec::new(), Vec::new(), Vec::new());
                        for cell in &v[start..end] {
                            match cell {
                                None if !req => {
                                    defs.push(0);
                                    reps.push(0);
                                }
                                None => {
                                    defs.push(top);
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
                            .write_batch(&vals, Some(&defs), Some(&reps))?;
                    }
                }
                w.close()?;
            }
            rg.close()?;
            if end >= rows {
                break;
            }
            start = end;
        }
        writer.close()?;
    }
    Ok(buf)
}
