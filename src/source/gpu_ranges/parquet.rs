//! The `nvtx_gpu_proj_trace` table: NVTX ranges projected onto the GPU work they launched,
//! as nsys' `nvtx_gpu_proj_trace` recipe writes it and nsys-jax stores it
//! (`nvtx_gpu_proj_trace/trace.parquet`, or `…/trace.parquet/<profile>` in a combine
//! archive). The recipe's columns changed between nsys versions; the forms known, told
//! apart by their columns (in any order):
//!
//! - **first form**, in archives of older nsys-jax versions: `Name, Projected Start,
//!   Projected Duration, Orig Start, Orig Duration, Style, PID, TID, NumGPUOps, Lvl,
//!   NumChild, RangeId, ParentId, RangeStack, Rank`. pandas wrote it, so the columns with
//!   missing values (`Orig *`, `Lvl`, `RangeId`, `ParentId`) are doubles. One row with no
//!   `RangeId` (and no `Name`) holds the GPU work outside any range: it is no range, so it
//!   is not a record; [`Counts::outside`] counts it for the caller to report.
//! - **recipe form**: `Text, Start, End, PID, TID, Stack Level, Children Count, Range ID,
//!   Parent ID, Range Stack, Rank`, where `Range Stack` is a list of ids, `Parent ID` a
//!   nullable integer and the duration `End - Start`. `Text` has no domain prefix
//!   (`XlaModule:#…#`, not `TSL:XlaModule:#…#`), so neither has the name.
//! - **recipe form with `Domain`** (nsys 2026.1): the name is `Domain:Text`, as in the
//!   push/pop table (just `Text` where the domain is null or empty).
//!
//! Either recipe form may carry `Device ID` (`--per-gpu`) and `Stream ID` (`--per-stream`);
//! `Rank` and `Range Stack` are not needed, nor the pandas index (`__index_level_0__`).
//! A table with other columns is refused, naming the columns found, rather than guessed at.
//!
//! Reading is column-wise, a batch of rows at a time within each row group, so memory
//! depends on the batch size, not on the table.

use crate::error::{Error, Result};
use crate::records::GpuRange;
use parquet::basic::Type as Physical;
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, FloatType, Int32Type, Int64Type};
use parquet::file::reader::{ChunkReader, FileReader, SerializedFileReader};
use parquet::schema::types::SchemaDescriptor;
use std::sync::Arc;

/// Rows decoded at once per column.
const BATCH: usize = 4096;

/// What a table yielded.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Records handed on.
    pub exported: u64,
    /// Rows without a range id: GPU work outside any NVTX range (first form), not records.
    pub outside: u64,
}

/// What a column means for the record.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    Name,
    Domain,
    Start,
    End,
    Dur,
    CpuStart,
    CpuDur,
    Pid,
    Tid,
    GpuOps,
    Depth,
    Children,
    Id,
    Parent,
    Device,
    Stream,
}

const ROLES: usize = Role::Stream as usize + 1;

/// One known form of the table: its columns as `(header, role, required)`; a column
/// without a role is known but not needed.
struct Form {
    /// A column only this form has, which tells it.
    marker: &'static str,
    columns: &'static [(&'static str, Option<Role>, bool)],
}

const FIRST_FORM: Form = Form {
    marker: "Projected Start",
    columns: &[
        ("Name", Some(Role::Name), true),
        ("Projected Start", Some(Role::Start), true),
        ("Projected Duration", Some(Role::Dur), true),
        ("Orig Start", Some(Role::CpuStart), false),
        ("Orig Duration", Some(Role::CpuDur), false),
        ("Style", None, false),
        ("PID", Some(Role::Pid), false),
        ("TID", Some(Role::Tid), true),
        ("NumGPUOps", Some(Role::GpuOps), false),
        ("Lvl", Some(Role::Depth), true),
        ("NumChild", Some(Role::Children), true),
        ("RangeId", Some(Role::Id), true),
        ("ParentId", Some(Role::Parent), true),
        ("RangeStack", None, false),
        ("Rank", None, false),
    ],
};

const RECIPE_FORM: Form = Form {
    marker: "Text",
    columns: &[
        ("Text", Some(Role::Name), true),
        ("Domain", Some(Role::Domain), false),
        ("Start", Some(Role::Start), true),
        ("End", Some(Role::End), true),
        ("PID", Some(Role::Pid), false),
        ("TID", Some(Role::Tid), true),
        ("Stack Level", Some(Role::Depth), true),
        ("Children Count", Some(Role::Children), true),
        ("Range ID", Some(Role::Id), true),
        ("Parent ID", Some(Role::Parent), true),
        ("Range Stack", None, false),
        ("Rank", None, false),
        ("Device ID", Some(Role::Device), false),
        ("Stream ID", Some(Role::Stream), false),
    ],
};

const FORMS: &[&Form] = &[&FIRST_FORM, &RECIPE_FORM];

/// A column the records use: its header and leaf index in the file.
struct Used {
    header: &'static str,
    leaf: usize,
}

/// Which columns of this file make the records.
struct Layout {
    used: Vec<Used>,
    /// For each role, its position in `used`.
    by_role: [Option<usize>; ROLES],
}

impl Layout {
    fn new(place: &str, schema: &SchemaDescriptor) -> Result<Layout> {
        let roots: Vec<&str> = schema
            .root_schema()
            .get_fields()
            .iter()
            .map(|f| f.name())
            .collect();
        let unknown = |what: String| {
            Error::data(
                place,
                format!(
                    "unknown nvtx_gpu_proj_trace table layout ({what}); columns found: {}",
                    roots.join(", ")
                ),
            )
        };
        let Some(form) = FORMS.iter().find(|f| roots.contains(&f.marker)) else {
            return Err(unknown(
                "neither a `Projected Start` nor a `Text` column".to_string(),
            ));
        };
        let missing: Vec<&str> = form
            .columns
            .iter()
            .filter(|(header, _, required)| *required && !roots.contains(header))
            .map(|c| c.0)
            .collect();
        let unexpected: Vec<&str> = roots
            .iter()
            .copied()
            .filter(|r| !form.columns.iter().any(|c| c.0 == *r))
            .filter(|r| !r.starts_with("__index_level_"))
            .collect();
        if !missing.is_empty() || !unexpected.is_empty() {
            let mut what = Vec::new();
            if !missing.is_empty() {
                what.push(format!("missing {}", missing.join(", ")));
            }
            if form.marker == "Text" && missing.contains(&"TID") {
                // nsys 2024.5 and 2024.6 wrote the recipe's table without thread ids;
                // nsys-jax patched nsys to add them (JAX-Toolbox#985).
                what.push(
                    "written by an nsys 2024.5 or 2024.6 without nsys-jax's patch, which \
                     leaves out thread ids: export the report to SQLite (nsys export --type \
                     sqlite) and read that, or profile with a patched or newer nsys"
                        .to_string(),
                );
            }
            if !unexpected.is_empty() {
                what.push(format!("unexpected {}", unexpected.join(", ")));
            }
            return Err(unknown(what.join("; ")));
        }
        let mut used = Vec::new();
        let mut by_role = [None; ROLES];
        for &(header, role, _) in form.columns {
            let Some(role) = role else { continue };
            let Some(root) = roots.iter().position(|r| *r == header) else {
                continue;
            };
            // A flat column is its own single leaf; a LIST or struct column is not.
            let leaf = (0..schema.num_columns())
                .find(|&i| schema.get_column_root_idx(i) == root)
                .filter(|&i| {
                    let c = schema.column(i);
                    c.max_rep_level() == 0 && c.path().parts().len() == 1
                });
            let physical = leaf.map(|i| schema.column(i).physical_type());
            let fits = match (role, physical) {
                (Role::Name | Role::Domain, Some(p)) => p == Physical::BYTE_ARRAY,
                (_, Some(p)) => matches!(
                    p,
                    Physical::INT32 | Physical::INT64 | Physical::FLOAT | Physical::DOUBLE
                ),
                (_, None) => false,
            };
            let (Some(leaf), true) = (leaf, fits) else {
                let expected = match role {
                    Role::Name | Role::Domain => "text",
                    _ => "a number",
                };
                let found = match physical {
                    Some(p) => p.to_string(),
                    None => "a nested column".to_string(),
                };
                return Err(Error::data(
                    place,
                    format!("column `{header}` should be {expected}, found {found}"),
                ));
            };
            by_role[role as usize] = Some(used.len());
            used.push(Used { header, leaf });
        }
        Ok(Layout { used, by_role })
    }
}

/// A column reader and its values for the current batch.
enum Values {
    I32(ColumnReaderImpl<Int32Type>, Vec<i32>),
    I64(ColumnReaderImpl<Int64Type>, Vec<i64>),
    F32(ColumnReaderImpl<FloatType>, Vec<f32>),
    F64(ColumnReaderImpl<DoubleType>, Vec<f64>),
    Text(ColumnReaderImpl<ByteArrayType>, Vec<ByteArray>),
}

/// Marks a null row in [`Column::slots`].
const NULL: u32 = u32::MAX;

/// One column of one row group, read a batch at a time.
struct Column {
    values: Values,
    max_def: i16,
    defs: Vec<i16>,
    /// For each row of the batch, the index of its value in `values`, or [`NULL`].
    slots: Vec<u32>,
}

/// A cell of a numeric column.
enum Num {
    Null,
    Int(i64),
    Float(f64),
}

impl Column {
    fn new(reader: ColumnReader, max_def: i16) -> Option<Column> {
        let values = match reader {
            ColumnReader::Int32ColumnReader(r) => Values::I32(r, Vec::new()),
            ColumnReader::Int64ColumnReader(r) => Values::I64(r, Vec::new()),
            ColumnReader::FloatColumnReader(r) => Values::F32(r, Vec::new()),
            ColumnReader::DoubleColumnReader(r) => Values::F64(r, Vec::new()),
            ColumnReader::ByteArrayColumnReader(r) => Values::Text(r, Vec::new()),
            // The layout admits no other physical type.
            _ => return None,
        };
        Some(Column {
            values,
            max_def,
            defs: Vec::with_capacity(BATCH),
            slots: Vec::with_capacity(BATCH),
        })
    }

    /// Reads the next `n` rows; returns how many there were.
    fn read(&mut self, n: usize) -> parquet::errors::Result<usize> {
        self.defs.clear();
        let defs = (self.max_def > 0).then_some(&mut self.defs);
        let (rows, _, _) = match &mut self.values {
            Values::I32(r, v) => {
                v.clear();
                r.read_records(n, defs, None, v)?
            }
            Values::I64(r, v) => {
                v.clear();
                r.read_records(n, defs, None, v)?
            }
            Values::F32(r, v) => {
                v.clear();
                r.read_records(n, defs, None, v)?
            }
            Values::F64(r, v) => {
                v.clear();
                r.read_records(n, defs, None, v)?
            }
            Values::Text(r, v) => {
                v.clear();
                r.read_records(n, defs, None, v)?
            }
        };
        self.slots.clear();
        if self.max_def > 0 {
            let mut next = 0;
            for &d in &self.defs {
                if d == self.max_def {
                    self.slots.push(next);
                    next += 1;
                } else {
                    self.slots.push(NULL);
                }
            }
        } else {
            self.slots.extend(0..rows as u32);
        }
        Ok(rows)
    }

    fn num(&self, row: usize) -> Num {
        let slot = self.slots[row];
        if slot == NULL {
            return Num::Null;
        }
        let i = slot as usize;
        match &self.values {
            Values::I32(_, v) => Num::Int(i64::from(v[i])),
            Values::I64(_, v) => Num::Int(v[i]),
            Values::F32(_, v) => Num::Float(f64::from(v[i])),
            Values::F64(_, v) => Num::Float(v[i]),
            Values::Text(..) => Num::Null,
        }
    }

    fn text(&self, row: usize) -> Option<&[u8]> {
        let slot = self.slots[row];
        match &self.values {
            Values::Text(_, v) if slot != NULL => Some(v[slot as usize].data()),
            _ => None,
        }
    }
}

/// One row of the current batch.
struct Row<'a> {
    layout: &'a Layout,
    columns: &'a [Column],
    row: usize,
}

impl Row<'_> {
    fn column(&self, role: Role) -> Option<(&Column, &'static str)> {
        let i = self.layout.by_role[role as usize]?;
        Some((&self.columns[i], self.layout.used[i].header))
    }

    /// An integer cell; pandas' doubles are accepted when whole, NaN is null.
    fn int(&self, role: Role) -> std::result::Result<Option<i64>, String> {
        let Some((column, header)) = self.column(role) else {
            return Ok(None);
        };
        match column.num(self.row) {
            Num::Null => Ok(None),
            Num::Int(v) => Ok(Some(v)),
            Num::Float(v) if v.is_nan() => Ok(None),
            Num::Float(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => Ok(Some(v as i64)),
            Num::Float(v) => Err(format!("column `{header}`: {v} is not an integer")),
        }
    }

    fn need(&self, role: Role) -> std::result::Result<i64, String> {
        self.int(role)?.ok_or_else(|| {
            let header = self.column(role).map_or("?", |c| c.1);
            format!("column `{header}` is empty")
        })
    }

    fn unsigned(&self, role: Role) -> std::result::Result<Option<u64>, String> {
        match self.int(role)? {
            None => Ok(None),
            Some(v) => u64::try_from(v).map(Some).map_err(|_| {
                let header = self.column(role).map_or("?", |c| c.1);
                format!("column `{header}`: {v} is negative")
            }),
        }
    }

    fn need_unsigned(&self, role: Role) -> std::result::Result<u64, String> {
        let v = self.need(role)?;
        u64::try_from(v).map_err(|_| {
            let header = self.column(role).map_or("?", |c| c.1);
            format!("column `{header}`: {v} is negative")
        })
    }

    fn need_u32(&self, role: Role) -> std::result::Result<u32, String> {
        let v = self.need_unsigned(role)?;
        u32::try_from(v).map_err(|_| {
            let header = self.column(role).map_or("?", |c| c.1);
            format!("column `{header}`: {v} is too large")
        })
    }

    fn text(&self, role: Role) -> Option<&[u8]> {
        self.column(role).and_then(|(c, _)| c.text(self.row))
    }

    /// The record of this row; `None` for a row without a range id.
    fn build(&self, profile: &Arc<str>) -> std::result::Result<Option<GpuRange>, String> {
        let Some(id) = self.unsigned(Role::Id)? else {
            return Ok(None);
        };
        let start_ns = self.need(Role::Start)?;
        let dur_ns = if self.column(Role::Dur).is_some() {
            self.need(Role::Dur)?
        } else {
            let end = self.need(Role::End)?;
            end.checked_sub(start_ns)
                .ok_or_else(|| format!("End {end} - Start {start_ns} overflows"))?
        };
        if dur_ns < 0 {
            return Err(format!(
                "range ends ({}) before it starts ({start_ns})",
                start_ns.saturating_add(dur_ns)
            ));
        }
        let text = String::from_utf8_lossy(self.text(Role::Name).unwrap_or_default());
        let name = match self.text(Role::Domain) {
            Some(domain) if !domain.is_empty() => {
                format!("{}:{text}", String::from_utf8_lossy(domain))
            }
            _ => text.into_owned(),
        };
        let range = GpuRange {
            profile: profile.clone(),
            pid: self.unsigned(Role::Pid)?,
            tid: self.need_unsigned(Role::Tid)?,
            id,
            parent: self.unsigned(Role::Parent)?,
            depth: self.need_u32(Role::Depth)?,
            children: self.need_u32(Role::Children)?,
            name,
            start_ns,
            dur_ns,
            cpu_start_ns: self.int(Role::CpuStart)?,
            cpu_dur_ns: self.int(Role::CpuDur)?,
            gpu_ops: self.unsigned(Role::GpuOps)?,
            device: self.unsigned(Role::Device)?,
            stream: self.unsigned(Role::Stream)?,
        };
        // Times in range (no sum of two overflows), as for records read back.
        match crate::records::Check::problem(&range) {
            Some(problem) => Err(problem),
            None => Ok(Some(range)),
        }
    }
}

/// Reads an `nvtx_gpu_proj_trace` Parquet table, handing each range to `emit`. `place`
/// names the table in messages (`rank0.zip!nvtx_gpu_proj_trace/trace.parquet`); each
/// message about a row also gives its number, counting from 1.
pub fn read_parquet<R: ChunkReader + 'static>(
    place: &str,
    profile: &Arc<str>,
    source: R,
    emit: &mut dyn FnMut(GpuRange) -> Result<()>,
) -> Result<Counts> {
    let perr =
        |e: parquet::errors::ParquetError| Error::data(place, format!("bad Parquet file: {e}"));
    crate::source::parquet_footer::check(place, &source)?;
    let reader = SerializedFileReader::new(source).map_err(perr)?;
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let layout = Layout::new(place, &schema)?;
    let mut counts = Counts::default();
    let mut row_number = 0u64;
    for g in 0..reader.num_row_groups() {
        let group = reader.get_row_group(g).map_err(perr)?;
        let mut columns = Vec::with_capacity(layout.used.len());
        for used in &layout.used {
            let max_def = schema.column(used.leaf).max_def_level();
            let reader = group.get_column_reader(used.leaf).map_err(perr)?;
            let column = Column::new(reader, max_def).ok_or_else(|| {
                Error::data(place, format!("column `{}`: unexpected type", used.header))
            })?;
            columns.push(column);
        }
        let mut left = usize::try_from(group.metadata().num_rows()).unwrap_or(0);
        while left > 0 {
            let n = left.min(BATCH);
            for (column, used) in columns.iter_mut().zip(&layout.used) {
                let got =
                    crate::source::parquet_footer::guarded(place, || column.read(n).map_err(perr))?;
                if got != n {
                    return Err(Error::data(
                        place,
                        format!(
                            "bad Parquet file: column `{}` of row group {g} has fewer rows \
                             than the row group",
                            used.header
                        ),
                    ));
                }
            }
            for row in 0..n {
                row_number += 1;
                let cells = Row {
                    layout: &layout,
                    columns: &columns,
                    row,
                };
                match cells.build(profile) {
                    Ok(Some(range)) => {
                        emit(range)?;
                        counts.exported += 1;
                    }
                    Ok(None) => counts.outside += 1,
                    Err(msg) => return Err(Error::data(format!("{place}: row {row_number}"), msg)),
                }
            }
            left -= n;
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::{FORMS, ROLES, Role};

    #[test]
    fn every_role_fits_the_table() {
        assert_eq!(Role::Stream as usize + 1, ROLES);
    }

    #[test]
    fn each_form_has_its_marker_and_the_columns_every_record_needs() {
        for form in FORMS {
            let has = |role: Role| form.columns.iter().any(|c| c.1 == Some(role) && c.2);
            assert!(form.columns.iter().any(|c| c.0 == form.marker && c.2));
            for role in [
                Role::Name,
                Role::Start,
                Role::Tid,
                Role::Depth,
                Role::Children,
                Role::Id,
                Role::Parent,
            ] {
                assert!(has(role), "{role:?}");
            }
            assert!(has(Role::Dur) || has(Role::End));
        }
    }
}
