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
        (view, Format::Table) => table(view, heaps, out),
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

/// `view` as a table; where the heaps come from more than one profile (two processes run
/// the same programs, under the same names and ids), a `profile` column first tells them
/// apart.
fn table(view: View, heaps: &[ProgramHeap], out: &mut dyn Write) -> Result<()> {
    let (head, right): (&[&str], &[usize]) = match view {
        View::Peak => (
            &[
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
            ],
            &[1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12],
        ),
        View::Buffers => (
            &[
                "program",
                "trace",
                "buffer",
                "size",
                "%",
                "shape",
                "instruction",
                "op_name",
                "source",
            ],
            &[1, 2, 3, 4],
        ),
        View::ByOpName => (
            &["program", "trace", "size", "%", "buffers", "op_name"],
            &[1, 2, 3, 4],
        ),
        View::BySource => (
            &["program", "trace", "size", "%", "buffers", "source"],
            &[1, 2, 3, 4],
        ),
    };
    let profiles: Vec<String> = heaps.iter().map(profile_of).collect();
    let several = profiles.iter().any(|p| *p != profiles[0]);
    let first = usize::from(several);
    let mut rows: Vec<Vec<String>> = vec![
        several
            .then_some("profile")
            .into_iter()
            .chain(head.iter().copied())
            .map(String::from)
            .collect(),
    ];
    for (heap, profile) in heaps.iter().zip(&profiles) {
        for row in heap_rows(view, heap) {
            rows.push(
                several
                    .then(|| profile.clone())
                    .into_iter()
                    .chain(row)
                    .collect(),
            );
        }
    }
    let right: Vec<usize> = right.iter().map(|c| c + first).collect();
    write_table(out, &rows, &right)
}

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

/// The table rows of `view` of one program's heap.
fn heap_rows(view: View, heap: &ProgramHeap) -> Vec<Vec<String>> {
    match view {
        View::Peak => heap
            .peaks
            .iter()
            .map(|p| {
                vec![
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
                ]
            })
            .collect(),
        View::Buffers => heap
            .buffers
            .iter()
            .map(|b| {
                vec![
                    b.program.clone(),
                    b.trace.to_string(),
                    b.buffer.to_string(),
                    mib(b.bytes),
                    format!("{:.2}", b.percent),
                    or_dash(b.shape.as_deref()),
                    b.instruction.clone(),
                    or_dash(b.op_name.as_deref()),
                    or_dash(b.source.as_deref()),
                ]
            })
            .collect(),
        View::ByOpName | View::BySource => {
            all_groups(std::slice::from_ref(heap), view == View::BySource)
                .into_iter()
                .map(|g| {
                    vec![
                        g.program,
                        g.trace.to_string(),
                        mib(g.bytes),
                        format!("{:.2}", g.percent),
                        g.buffers.to_string(),
                        g.key.unwrap_or_else(|| "(none)".to_string()),
                    ]
                })
                .collect()
        }
    }
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
