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
        (View::Peak, Format::Table) => peak_table(heaps, out),
        (View::Buffers, Format::Table) => buffers_table(heaps, out),
        (View::ByOpName | View::BySource, Format::Table) => {
            groups_table(all_groups(heaps, by_source), by_source, out)
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

/// `--view peak` as a table.
fn peak_table(heaps: &[ProgramHeap], out: &mut dyn Write) -> Result<()> {
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
    for p in heaps.iter().flat_map(|h| &h.peaks) {
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
    write_table(out, &rows, &[1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12])
}

/// `--view buffers` as a table.
fn buffers_table(heaps: &[ProgramHeap], out: &mut dyn Write) -> Result<()> {
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
    for b in heaps.iter().flat_map(|h| &h.buffers) {
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
    write_table(out, &rows, &[1, 2, 3, 4])
}

/// `--view by-source` (`by_source`) or `--view by-op-name` as a table.
fn groups_table(group_rows: Vec<GroupRecord>, by_source: bool, out: &mut dyn Write) -> Result<()> {
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
    write_table(out, &rows, &[1, 2, 3, 4])
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
