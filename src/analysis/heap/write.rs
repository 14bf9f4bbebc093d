//! The views as njx-heap writes them: a table for people, or records (JSON Lines, CSV).

use super::groups::groups;
use super::records::{GroupRecord, ProgramHeap};
use super::{Options, View};
use crate::error::Result;
use crate::output::numbers::mib;
use crate::output::{Format, RecordWriter, or_dash, write_table};
use serde::Serialize;
use std::io::Write;

/// Writes the heaps as `options.view` asks.
pub fn write(options: &Options, heaps: &[ProgramHeap], out: &mut dyn Write) -> Result<()> {
    let by_source = options.view == View::BySource;
    match (options.view, options.format) {
        (view, Format::Table) => {
            // No heap still has the header: that of an empty one.
            let none = [ProgramHeap::default()];
            let heaps = if heaps.is_empty() { &none[..] } else { heaps };
            let tables = heaps
                .iter()
                .map(|h| match view {
                    View::Peak => peak_rows(h),
                    View::Buffers => buffers_rows(h),
                    _ => groups_table(all_groups(std::slice::from_ref(h), by_source), by_source),
                })
                .collect();
            with_profiles(heaps, tables, out)
        }
        (View::Peak, f) => records(out, f, heaps.iter().flat_map(|h| &h.peaks)),
        (View::Buffers, f) => records(out, f, heaps.iter().flat_map(|h| &h.buffers)),
        (View::ByOpName | View::BySource, f) => {
            records(out, f, all_groups(heaps, by_source).iter())
        }
    }
}

/// The rows of `--view by-source` (`by_source`) or `--view by-op-name`, program by
/// program.
fn all_groups(heaps: &[ProgramHeap], by_source: bool) -> Vec<GroupRecord> {
    heaps
        .iter()
        .flat_map(|h| {
            if by_source {
                groups(h, |b| b.source.as_deref())
            } else {
                groups(h, |b| b.op_name.as_deref())
            }
        })
        .collect()
}

/// A table's rows (header first) for each program's heap, as one table; where the heaps
/// come from more than one profile (two processes run the same programs, under the same
/// names and ids), a `profile` column first tells them apart.
fn with_profiles(heaps: &[ProgramHeap], tables: Vec<Rows>, out: &mut dyn Write) -> Result<()> {
    let Some((right, _)) = tables.first() else {
        return Ok(());
    };
    let mut right = right.clone();
    let profiles: Vec<String> = heaps.iter().map(profile_of).collect();
    let several = profiles.iter().any(|p| *p != profiles[0]);
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (i, (_, table)) in tables.into_iter().enumerate() {
        for (n, mut row) in table.into_iter().enumerate() {
            if n == 0 && !rows.is_empty() {
                continue;
            }
            if several {
                let cell = if n == 0 {
                    "profile".to_string()
                } else {
                    profiles[i].clone()
                };
                row.insert(0, cell);
            }
            rows.push(row);
        }
    }
    if several {
        right.iter_mut().for_each(|c| *c += 1);
    }
    write_table(out, &rows, &right)
}

/// A table: which columns align right, and its rows, the header first.
type Rows = (Vec<usize>, Vec<Vec<String>>);

/// The profile a program's heap was read from: the archive's name, or the dump folder's.
fn profile_of(heap: &ProgramHeap) -> String {
    let Some(dump) = heap.peaks.first().map(|p| p.dump.as_str()) else {
        return String::new();
    };
    let path = match dump.split_once('!') {
        Some((archive, _)) => std::path::Path::new(archive).to_path_buf(),
        None => std::path::Path::new(dump)
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_default(),
    };
    crate::source::profile_name(&path)
}

/// The rows of `--view peak` of one program's heap.
fn peak_rows(heap: &ProgramHeap) -> Rows {
    let mut rows = vec![
        [
            "program",
            "id",
            "trace",
            "alloc",
            "peak",
            "alloc size",
            "event",
            "peak at",
            "live",
            "params",
            "outputs",
            "temp",
            "total",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for p in &heap.peaks {
        rows.push(vec![
            p.program.clone(),
            p.program_id.to_string(),
            or_dash(p.trace),
            or_dash(p.allocation),
            or_dash(p.peak_bytes.map(mib)),
            or_dash(p.allocation_bytes.map(mib)),
            or_dash(p.peak_event),
            or_dash(p.peak_at.as_deref()),
            or_dash(p.live_buffers),
            mib(p.parameter_bytes),
            mib(p.output_bytes),
            mib(p.temp_bytes),
            mib(p.total_bytes),
        ]);
    }
    (vec![1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12], rows)
}

/// The rows of `--view buffers` of one program's heap.
fn buffers_rows(heap: &ProgramHeap) -> Rows {
    let mut rows = vec![
        [
            "program",
            "trace",
            "buffer",
            "size",
            "%",
            "shape",
            "instruction",
            "op_name",
            "source",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for b in &heap.buffers {
        rows.push(vec![
            b.program.clone(),
            b.trace.to_string(),
            b.buffer.to_string(),
            mib(b.bytes),
            format!("{:.2}", b.percent),
            or_dash(b.shape.as_deref()),
            b.instruction.clone(),
            or_dash(b.op_name.as_deref()),
            or_dash(b.source.as_deref()),
        ]);
    }
    (vec![1, 2, 3, 4], rows)
}

/// `--view by-source` (`by_source`) or `--view by-op-name` as a table.
fn groups_table(group_rows: Vec<GroupRecord>, by_source: bool) -> Rows {
    let head = if by_source { "source" } else { "op_name" };
    let mut rows = vec![
        ["program", "trace", "size", "%", "buffers", head]
            .map(String::from)
            .to_vec(),
    ];
    for g in group_rows {
        rows.push(vec![
            g.program,
            g.trace.to_string(),
            mib(g.bytes),
            format!("{:.2}", g.percent),
            g.buffers.to_string(),
            g.key.unwrap_or_else(|| "(none)".to_string()),
        ]);
    }
    (vec![1, 2, 3, 4], rows)
}

/// Writes `rows` as records in `format`.
fn records<'a, T: Serialize + Default + 'a>(
    out: &mut dyn Write,
    format: Format,
    rows: impl Iterator<Item = &'a T>,
) -> Result<()> {
    let mut w = RecordWriter::new(out, format)?;
    for r in rows {
        w.write(r)?;
    }
    w.finish::<T>()
}
