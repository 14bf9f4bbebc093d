//! The report's tables as CSV: each row's fields as named cells (as the JSON records
//! have them), and one table, or all in one with a `table` column, written with them.

use super::format::{
    json_number as num, json_number_opt as opt, ns_cell as ns, ns_cell_opt as ns_opt,
};
use super::rows::Row;
use crate::error::{Error, Result};
use std::io::Write;

impl Row {
    /// The row's fields as CSV cells, in the order of the JSON records (and docs/formats.md):
    /// numbers as JSON writes them, nulls empty.
    fn cells(&self) -> Vec<(&'static str, String)> {
        if self.part().is_timing() {
            self.timing_cells()
        } else {
            self.report_cells()
        }
    }

    /// [`Row::cells`] of a row of the default report.
    fn report_cells(&self) -> Vec<(&'static str, String)> {
        match self {
            Row::Bandwidth {
                collective,
                message_bytes,
                busbw_mean_gbps,
                busbw_stderr_gbps,
                count,
            } => vec![
                ("collective", collective.clone()),
                ("message_bytes", message_bytes.to_string()),
                ("busbw_mean_gbps", num(*busbw_mean_gbps)),
                ("busbw_stderr_gbps", opt(busbw_stderr_gbps)),
                ("count", count.to_string()),
            ],
            Row::Hidden {
                collective,
                hidden_ratio,
                hidden_ns,
                total_ns,
            } => hidden_cells(collective, *hidden_ratio, *hidden_ns, *total_ns),
            Row::HiddenByProgram {
                program,
                name,
                collective,
                hidden_ratio,
                hidden_ns,
                total_ns,
            } => [("program", program.clone()), ("name", name.clone())]
                .into_iter()
                .chain(hidden_cells(
                    collective,
                    *hidden_ratio,
                    *hidden_ns,
                    *total_ns,
                ))
                .collect(),
            Row::Wait {
                program,
                name,
                executions,
                wait_mean_ns,
                wait_std_ns,
                module_mean_ns,
                wait_percent,
            } => vec![
                ("program", program.clone()),
                ("name", name.clone()),
                ("executions", executions.to_string()),
                ("wait_mean_ns", ns(*wait_mean_ns)),
                ("wait_std_ns", ns_opt(wait_std_ns)),
                ("module_mean_ns", ns(*module_mean_ns)),
                ("wait_percent", num(*wait_percent)),
            ],
            Row::Stragglers {
                device,
                instances,
                last,
                last_percent,
                lateness_mean_ns,
            } => straggler_cells(*device, *instances, *last, *last_percent, lateness_mean_ns),
            Row::StragglersByProgram {
                program,
                name,
                device,
                instances,
                last,
                last_percent,
                lateness_mean_ns,
            } => [("program", program.clone()), ("name", name.clone())]
                .into_iter()
                .chain(straggler_cells(
                    *device,
                    *instances,
                    *last,
                    *last_percent,
                    lateness_mean_ns,
                ))
                .collect(),
            _ => unreachable!("a timing row has timing cells"),
        }
    }

    /// [`Row::cells`] of a row of a table that compares clocks.
    fn timing_cells(&self) -> Vec<(&'static str, String)> {
        match self {
            Row::Instances { .. } => self.instance_cells(),
            Row::WaitQuantiles { .. } => self.wait_quantile_cells(),
            Row::WaitHistogram {
                collective,
                bin_lo_ns,
                bin_hi_ns,
                count,
            } => vec![
                ("collective", collective.clone()),
                ("bin_lo_ns", bin_lo_ns.to_string()),
                ("bin_hi_ns", bin_hi_ns.to_string()),
                ("count", count.to_string()),
            ],
            Row::Lateness {
                program,
                name,
                thunk,
                thunk_execution,
                collective,
                offset_ns,
                device,
                executions,
                lateness_ns,
            } => vec![
                ("program", program.clone()),
                ("name", name.clone()),
                ("thunk", thunk.clone()),
                ("thunk_execution", thunk_execution.to_string()),
                ("collective", collective.clone()),
                ("offset_ns", ns(*offset_ns)),
                ("device", device.to_string()),
                ("executions", executions.to_string()),
                ("lateness_ns", ns(*lateness_ns)),
            ],
            _ => unreachable!("a row of the default report has report cells"),
        }
    }

    /// [`Row::timing_cells`] of a row of the instances table.
    fn instance_cells(&self) -> Vec<(&'static str, String)> {
        let Row::Instances {
            collective,
            program,
            name,
            execution,
            thunk,
            thunk_execution,
            message_bytes,
            devices,
            start_ns,
            fastest_ns,
            wait_ns,
            wait_ratio,
            last_device,
            last_late_ns,
        } = self
        else {
            unreachable!("only an instances row has instance cells")
        };
        vec![
            ("collective", collective.clone()),
            ("program", program.clone()),
            ("name", name.clone()),
            ("execution", execution.to_string()),
            ("thunk", thunk.clone()),
            ("thunk_execution", thunk_execution.to_string()),
            (
                "message_bytes",
                message_bytes.map_or(String::new(), |b| b.to_string()),
            ),
            ("devices", devices.to_string()),
            ("start_ns", start_ns.to_string()),
            ("fastest_ns", fastest_ns.to_string()),
            ("wait_ns", ns(*wait_ns)),
            ("wait_ratio", opt(wait_ratio)),
            ("last_device", last_device.to_string()),
            ("last_late_ns", ns(*last_late_ns)),
        ]
    }

    /// [`Row::timing_cells`] of a row of the wait quantiles table.
    fn wait_quantile_cells(&self) -> Vec<(&'static str, String)> {
        let Row::WaitQuantiles {
            collective,
            instances,
            wait_min_ns,
            wait_p25_ns,
            wait_median_ns,
            wait_p75_ns,
            wait_p90_ns,
            wait_p99_ns,
            wait_max_ns,
            wait_mean_ns,
            ratio_median,
            ratio_p90,
            ratio_max,
        } = self
        else {
            unreachable!("only a wait quantiles row has wait quantile cells")
        };
        vec![
            ("collective", collective.clone()),
            ("instances", instances.to_string()),
            ("wait_min_ns", ns(*wait_min_ns)),
            ("wait_p25_ns", ns(*wait_p25_ns)),
            ("wait_median_ns", ns(*wait_median_ns)),
            ("wait_p75_ns", ns(*wait_p75_ns)),
            ("wait_p90_ns", ns(*wait_p90_ns)),
            ("wait_p99_ns", ns(*wait_p99_ns)),
            ("wait_max_ns", ns(*wait_max_ns)),
            ("wait_mean_ns", ns(*wait_mean_ns)),
            ("ratio_median", opt(ratio_median)),
            ("ratio_p90", opt(ratio_p90)),
            ("ratio_max", opt(ratio_max)),
        ]
    }
}

/// The cells of a row of the hidden tables, from the collective on.
fn hidden_cells(
    collective: &str,
    hidden_ratio: f64,
    hidden_ns: i64,
    total_ns: i64,
) -> Vec<(&'static str, String)> {
    vec![
        ("collective", collective.to_string()),
        ("hidden_ratio", num(hidden_ratio)),
        ("hidden_ns", hidden_ns.to_string()),
        ("total_ns", total_ns.to_string()),
    ]
}

/// The cells of a row of the stragglers tables, from the device on.
fn straggler_cells(
    device: u32,
    instances: usize,
    last: usize,
    last_percent: f64,
    lateness_mean_ns: &Option<f64>,
) -> Vec<(&'static str, String)> {
    vec![
        ("device", device.to_string()),
        ("instances", instances.to_string()),
        ("last", last.to_string()),
        ("last_percent", num(last_percent)),
        ("lateness_mean_ns", ns_opt(lateness_mean_ns)),
    ]
}

/// The tables as CSV, with the fields of their JSON records: a `table` column first (as
/// the records' `table` field), then one table's columns as its JSON records have them
/// (`--table`), or those of all six tables of the report in order of first appearance,
/// empty where a table has no such column.
pub(super) fn write_csv(out: &mut dyn Write, rows: &[Row]) -> Result<()> {
    let cells: Vec<Vec<(&str, String)>> = rows.iter().map(Row::cells).collect();
    let mut columns: Vec<&str> = vec!["table"];
    for row in &cells {
        for (k, _) in row {
            if !columns.contains(k) {
                columns.push(k);
            }
        }
    }
    let mut w = csv::Writer::from_writer(out);
    w.write_record(&columns)?;
    for (row, r) in cells.iter().zip(rows) {
        w.write_record(columns.iter().map(|&c| {
            if c == "table" {
                return r.part().name().to_string();
            }
            row.iter()
                .find(|(k, _)| *k == c)
                .map_or(String::new(), |(_, v)| v.clone())
        }))?;
    }
    w.flush().map_err(Error::Output)
}
