//! The rows of a view as njx-thunks writes them: a table for people, or records (JSON
//! Lines, CSV) made one at a time.

use super::opcode::OpcodeRow;
use super::table::Run;
use super::variability::VariabilityRow;
use super::{Chosen, Rows};
use crate::error::{Error, Result};
use crate::output::numbers::{ms, us_tenths};
use crate::output::{Format, RecordWriter, or_dash, write_table_with};
use serde::Serialize;
use std::borrow::Cow;
use std::io::Write;

/// Writes rows as a table for people, or as records.
pub fn write(format: Format, rows: &Rows<'_>, out: &mut dyn Write) -> Result<()> {
    if format != Format::Table {
        return match &rows.view {
            Chosen::Top(runs, total) => {
                write_each(out, format, runs, |&run| rows.top_row(run, *total))
            }
            Chosen::Opcode(r) => write_each(out, format, r, OpcodeRow::clone),
            Chosen::Variability(runs) => {
                write_each(out, format, runs, |&run| rows.variability_row(run))
            }
        };
    }
    if rows.is_empty() {
        writeln!(out, "No thunk executions in the input.").map_err(Error::Output)?;
        return out.flush().map_err(Error::Output);
    }
    match &rows.view {
        Chosen::Top(runs, total) => top_table(rows, runs, *total, out)?,
        Chosen::Opcode(r) => opcode_table(r, out)?,
        Chosen::Variability(runs) => variability_table(rows, runs, out)?,
    }
    out.flush().map_err(Error::Output)
}

/// The header row of a table.
fn header(cells: &[&str]) -> Cow<'static, [String]> {
    Cow::Owned(cells.iter().map(|c| c.to_string()).collect())
}

/// The top view's `runs` as a table; `total`: the time of every thunk.
fn top_table(rows: &Rows<'_>, runs: &[Run], total: i128, out: &mut dyn Write) -> Result<()> {
    let row = |i: usize| -> Cow<'_, [String]> {
        if i == 0 {
            return header(&[
                "percent",
                "ms total",
                "executions",
                "µs mean",
                "thunk",
                "opcode",
                "module",
                "op_name",
            ]);
        }
        let x = rows.top_row(runs[i - 1], total);
        Cow::Owned(vec![
            format!("{:.2}", x.percent),
            ms(x.total_ns as f64),
            x.executions.to_string(),
            us_tenths(x.mean_ns),
            x.thunk,
            or_dash(x.opcode),
            format!("{} ({})", x.module, x.program),
            or_dash(x.op_name),
        ])
    };
    write_table_with(out, runs.len() + 1, &row, &[0, 1, 2, 3])
}

/// The opcode view's rows as a table.
fn opcode_table(r: &[OpcodeRow], out: &mut dyn Write) -> Result<()> {
    let row = |i: usize| -> Cow<'_, [String]> {
        if i == 0 {
            return header(&["percent", "ms total", "thunks", "opcode"]);
        }
        let x = &r[i - 1];
        Cow::Owned(vec![
            format!("{:.2}", x.percent),
            ms(x.total_ns as f64),
            x.thunks.to_string(),
            x.opcode.clone(),
        ])
    };
    write_table_with(out, r.len() + 1, &row, &[0, 1, 2])
}

/// The variability view's `runs` as a table.
fn variability_table(rows: &Rows<'_>, runs: &[Run], out: &mut dyn Write) -> Result<()> {
    let row = |i: usize| -> Cow<'_, [String]> {
        if i == 0 {
            return header(&[
                "µs mean",
                "µs std",
                "cv %",
                "executions",
                "thunk",
                "slowest µs (device/execution)",
                "module",
            ]);
        }
        let x = rows.variability_row(runs[i - 1]);
        let slowest = slowest_text(&x);
        Cow::Owned(vec![
            us_tenths(x.mean_ns),
            us_tenths(x.std_ns),
            x.cv.map_or("-".into(), |cv| format!("{:.1}", 100.0 * cv)),
            x.executions.to_string(),
            x.thunk,
            slowest,
            format!("{} ({})", x.module, x.program),
        ])
    };
    write_table_with(out, runs.len() + 1, &row, &[0, 1, 2, 3])
}

/// The slowest executions of a row, by commas: `µs (device/execution)`, the thunk
/// execution after a dot where it is not the first (`(0/3.1)`).
fn slowest_text(x: &VariabilityRow) -> String {
    x.slowest()
        .iter()
        .map(|&(ns, d, e, k)| {
            let k = if k > 0 {
                format!(".{k}")
            } else {
                String::new()
            };
            format!("{} ({d}/{e}{k})", us_tenths(ns as f64))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Writes one record per item of `items`, made by `row` as it is written.
fn write_each<I, T: Serialize + Default>(
    out: &mut dyn Write,
    format: Format,
    items: &[I],
    row: impl Fn(&I) -> T,
) -> Result<()> {
    let mut w = RecordWriter::new(out, format)?;
    items.iter().try_for_each(|i| w.write(&row(i)))?;
    w.finish::<T>()
}
