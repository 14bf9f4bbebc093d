//! What is written: the report, or the one table `--table` asks for, in the format asked
//! for, and the pictures (bus bandwidth, wait distributions, lateness).

use super::Options;
use super::aggregate::Partial;
use super::csv_rows::write_csv;
use super::rows::{Part, Row};
use super::table::write_report;
use super::timing;
use crate::error::{Error, Result};
use crate::output::notes::Notes;
use crate::output::{Format, RecordWriter};
use std::collections::BTreeMap;
use std::io::Write;

/// Writes the report (or the one table `--table` asks for) and every picture, the
/// wait and lateness pictures from `timing`.
pub fn write_with_timing(
    options: &Options,
    acc: &Partial,
    timing: &timing::Timing,
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    timing.say_alone(notes);
    if let Some(path) = &options.wait_plot {
        timing::wait_svg(path, timing)?;
    }
    // Lateness is computed once, for the picture and the table alike.
    let table = options.table.filter(|p| p.is_timing());
    let lateness = (options.lateness_plot.is_some() || table == Some(Part::Lateness))
        .then(|| timing.lateness_rows(notes));
    if let (Some(path), Some(rows)) = (&options.lateness_plot, &lateness) {
        timing::lateness_svg(path, timing, rows)?;
    }
    match table {
        Some(part) => {
            if let Some(path) = &options.plot {
                crate::output::charts::bandwidth_svg(
                    path,
                    &bandwidth_series(&acc.report(options.include_warmup, &options.programs)),
                )?;
            }
            let rows = match lateness {
                Some(rows) if part == Part::Lateness => rows,
                _ => timing.rows(part),
            };
            write_rows(options, &rows, out)
        }
        None => write(options, acc, out),
    }
}

/// Writes the report of `acc` (from [`aggregate`](fn@super::aggregate)) and the plot.
pub fn write(options: &Options, acc: &Partial, out: &mut dyn Write) -> Result<()> {
    let format = options.format;
    if !acc.has_comm(options.include_warmup, &options.programs) {
        if format == Format::Parquet {
            // A Parquet file of no rows (an empty file is not one).
            return write_rows(options, &[], out);
        }
        if format == Format::Table {
            writeln!(
                out,
                "No communication in the input{}.",
                if options.include_warmup {
                    ""
                } else {
                    " (steady state)"
                }
            )
            .map_err(Error::Output)?;
        }
        return out.flush().map_err(Error::Output);
    }
    let mut rows = acc.report(options.include_warmup, &options.programs);
    if let Some(path) = &options.plot {
        crate::output::charts::bandwidth_svg(path, &bandwidth_series(&rows))?;
    }
    if let Some(part) = options.table {
        rows.retain(|r| r.part() == part);
    }
    write_rows(options, &rows, out)
}

/// Writes `rows` (of the report, or of one table) in the format asked for.
fn write_rows(options: &Options, rows: &[Row], out: &mut dyn Write) -> Result<()> {
    let format = options.format;
    if format != Format::Table {
        if format == Format::Csv {
            return write_csv(out, rows);
        }
        let mut w = RecordWriter::new(out, format)?;
        rows.iter().try_for_each(|r| w.write(r))?;
        if rows.is_empty() {
            // Parquet's columns where there is no row: those of the tables asked for.
            let one;
            let parts = match options.table {
                Some(part) => {
                    one = [part];
                    &one[..]
                }
                None => &Part::REPORT[..],
            };
            for &part in parts {
                w.probe_columns(&Row::prototype(part))?;
            }
        }
        // JSON Lines or Parquet (CSV is written above).
        return w.finish::<()>();
    }
    write_report(out, rows, options.table)?;
    out.flush().map_err(Error::Output)
}

/// (collective → [(message bytes, mean bus bandwidth, its standard error)]) for the
/// plot.
fn bandwidth_series(rows: &[Row]) -> BTreeMap<String, Vec<crate::output::charts::BandwidthPoint>> {
    let mut series: BTreeMap<String, Vec<crate::output::charts::BandwidthPoint>> = BTreeMap::new();
    for r in rows {
        if let Row::Bandwidth {
            collective,
            message_bytes,
            busbw_mean_gbps,
            busbw_stderr_gbps,
            ..
        } = r
        {
            series.entry(collective.clone()).or_default().push((
                *message_bytes,
                *busbw_mean_gbps,
                *busbw_stderr_gbps,
            ));
        }
    }
    series
}
