//! The report's tables for people: each table's layout (title, headings, numeric
//! columns, footnote), each row's cells, and the tables written one after the other.

use super::format::{fmt_opt, significant_or_dash};
use super::rows::{Part, Row};
use crate::error::{Error, Result};
use crate::output::charts::{round_label, significant};
use crate::output::numbers::ms;
use crate::output::{or_dash, write_table};
use std::io::Write;

/// A table for people: title, column headings, the right-aligned (numeric) columns, and
/// a footnote.
type Layout = (
    &'static str,
    &'static [&'static str],
    &'static [usize],
    Option<&'static str>,
);

impl Part {
    /// Its table for people: title, column headings, the right-aligned (numeric)
    /// columns, and a footnote.
    fn layout(self) -> Layout {
        if self.is_timing() {
            self.timing_layout()
        } else {
            self.report_layout()
        }
    }

    /// The footnote of its table for people (what a figure means), where it has one.
    pub fn footnote(self) -> Option<&'static str> {
        self.layout().3
    }

    /// [`Part::layout`] of the default report's tables.
    fn report_layout(self) -> Layout {
        match self {
            Part::Bandwidth => (
                "Bus bandwidth [GB/s], fastest device per collective instance (mean ± standard \
                 error, 4 significant digits)",
                &["collective", "size [B]", "busbw", "± stderr", "instances"],
                &[1, 2, 3, 4],
                None,
            ),
            Part::Hidden => (
                "Communication hidden behind compute",
                &["collective", "hidden %", "hidden ms", "total ms"],
                &[1, 2, 3],
                None,
            ),
            Part::HiddenByProgram => (
                "Communication hidden behind compute, per program (most communication first)",
                &[
                    "program",
                    "name",
                    "collective",
                    "hidden %",
                    "hidden ms",
                    "total ms",
                ],
                &[3, 4, 5],
                None,
            ),
            Part::Wait => (
                "Wait time per module execution (longest − shortest exposed time over devices, \
                 summed)",
                &[
                    "program",
                    "name",
                    "executions",
                    "wait ms",
                    "± std",
                    "module ms",
                    "wait %",
                ],
                &[2, 3, 4, 5, 6],
                Some(
                    "wait % = wait ms / module ms, as nsys-jax defines it: the wait is summed \
                     over a module's collectives, so it can pass 100 %",
                ),
            ),
            Part::Stragglers => (
                "Stragglers: the device that arrives last at a collective (the others wait for it)",
                &["device", "instances", "last", "last %", "mean lateness ms"],
                &[0, 1, 2, 3, 4],
                None,
            ),
            Part::StragglersByProgram => (
                "Stragglers per program (most communication first)",
                &[
                    "program",
                    "name",
                    "device",
                    "instances",
                    "last",
                    "last %",
                    "mean lateness ms",
                ],
                &[2, 3, 4, 5, 6],
                None,
            ),
            _ => unreachable!("a timing table has a timing layout"),
        }
    }

    /// [`Part::layout`] of the tables that compare clocks ([`Part::is_timing`]).
    fn timing_layout(self) -> Layout {
        match self {
            Part::Instances => (
                "Collective instances: wait = last end − first start − fastest device's time \
                 (clocks aligned)",
                &[
                    "collective",
                    "program",
                    "execution",
                    "thunk",
                    "#",
                    "size [B]",
                    "devices",
                    "fastest ms",
                    "wait ms",
                    "wait ÷ fastest",
                    "last device",
                    "late ms",
                ],
                &[2, 4, 5, 6, 7, 8, 9, 10, 11],
                None,
            ),
            Part::WaitQuantiles => (
                "Wait per collective instance [ms]: last end − first start − fastest device's \
                 time (clocks aligned)",
                &[
                    "collective",
                    "instances",
                    "min",
                    "25 %",
                    "median",
                    "75 %",
                    "90 %",
                    "99 %",
                    "max",
                    "mean",
                    "÷ fastest median",
                    "90 %",
                    "max",
                ],
                &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
                Some(
                    "quantiles interpolate linearly between instances (as numpy); ÷ fastest: \
                     the wait as a multiple of the fastest device's time",
                ),
            ),
            Part::WaitHistogram => (
                "Wait per collective instance: histogram (clocks aligned)",
                &["collective", "from ms", "to ms", "instances"],
                &[1, 2, 3],
                Some("bins are [from, to); a bin from 0 to 0 counts waits of exactly zero"),
            ),
            Part::Lateness => (
                "Lateness: each device's start minus the first device's at each collective, \
                 mean over executions (clocks aligned)",
                &[
                    "program",
                    "name",
                    "at ms",
                    "thunk",
                    "#",
                    "collective",
                    "device",
                    "executions",
                    "late ms",
                ],
                &[2, 4, 6, 7, 8],
                Some("at ms: the collective's mean first start within its module execution"),
            ),
            _ => unreachable!("the default report's tables have a report layout"),
        }
    }
}

impl Row {
    /// The row's cells in its table for people ([`Part::layout`]): times in ms,
    /// bandwidths to 4 significant digits, `-` where there is no value.
    fn table_cells(&self) -> Vec<String> {
        if self.part().is_timing() {
            self.timing_table_cells()
        } else {
            self.report_table_cells()
        }
    }

    /// [`Row::table_cells`] of a row of the default report.
    fn report_table_cells(&self) -> Vec<String> {
        match self {
            Row::Bandwidth {
                collective,
                message_bytes,
                busbw_mean_gbps,
                busbw_stderr_gbps,
                count,
            } => vec![
                collective.clone(),
                message_bytes.to_string(),
                significant(*busbw_mean_gbps, 4),
                significant_or_dash(*busbw_stderr_gbps),
                count.to_string(),
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
            } => [program.clone(), name.clone()]
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
                program.clone(),
                name.clone(),
                executions.to_string(),
                ms(*wait_mean_ns),
                fmt_opt(*wait_std_ns, 1e6, 3),
                ms(*module_mean_ns),
                format!("{wait_percent:.2}"),
            ],
            Row::Stragglers {
                device,
                instances,
                last,
                last_percent,
                lateness_mean_ns,
            } => straggler_cells(*device, *instances, *last, *last_percent, *lateness_mean_ns),
            Row::StragglersByProgram {
                program,
                name,
                device,
                instances,
                last,
                last_percent,
                lateness_mean_ns,
            } => [program.clone(), name.clone()]
                .into_iter()
                .chain(straggler_cells(
                    *device,
                    *instances,
                    *last,
                    *last_percent,
                    *lateness_mean_ns,
                ))
                .collect(),
            _ => unreachable!("a timing row has timing cells"),
        }
    }

    /// [`Row::table_cells`] of a row of a table that compares clocks.
    fn timing_table_cells(&self) -> Vec<String> {
        match self {
            Row::Instances { .. } => self.instance_table_cells(),
            Row::WaitQuantiles { .. } => self.wait_quantile_table_cells(),
            Row::WaitHistogram {
                collective,
                bin_lo_ns,
                bin_hi_ns,
                count,
            } => vec![
                collective.clone(),
                round_label(*bin_lo_ns as f64 / 1e6),
                round_label(*bin_hi_ns as f64 / 1e6),
                count.to_string(),
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
                program.clone(),
                name.clone(),
                ms(*offset_ns),
                thunk.clone(),
                thunk_execution.to_string(),
                collective.clone(),
                device.to_string(),
                executions.to_string(),
                ms(*lateness_ns),
            ],
            _ => unreachable!("a row of the default report has report cells"),
        }
    }

    /// [`Row::timing_table_cells`] of a row of the instances table.
    fn instance_table_cells(&self) -> Vec<String> {
        let Row::Instances {
            collective,
            program,
            execution,
            thunk,
            thunk_execution,
            message_bytes,
            devices,
            fastest_ns,
            wait_ns,
            wait_ratio,
            last_device,
            last_late_ns,
            ..
        } = self
        else {
            unreachable!("only an instances row has instance cells")
        };
        vec![
            collective.clone(),
            program.clone(),
            execution.to_string(),
            thunk.clone(),
            thunk_execution.to_string(),
            or_dash(*message_bytes),
            devices.to_string(),
            ms(*fastest_ns as f64),
            ms(*wait_ns),
            significant_or_dash(*wait_ratio),
            last_device.to_string(),
            ms(*last_late_ns),
        ]
    }

    /// [`Row::timing_table_cells`] of a row of the wait quantiles table.
    fn wait_quantile_table_cells(&self) -> Vec<String> {
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
        let mut cells = vec![collective.clone(), instances.to_string()];
        cells.extend(
            [
                wait_min_ns,
                wait_p25_ns,
                wait_median_ns,
                wait_p75_ns,
                wait_p90_ns,
                wait_p99_ns,
                wait_max_ns,
                wait_mean_ns,
            ]
            .map(|v| ms(*v)),
        );
        cells.extend([ratio_median, ratio_p90, ratio_max].map(|r| significant_or_dash(*r)));
        cells
    }
}

/// The cells of a row of the hidden tables, from the collective on.
fn hidden_cells(collective: &str, hidden_ratio: f64, hidden_ns: i64, total_ns: i64) -> Vec<String> {
    vec![
        collective.to_string(),
        format!("{:.2}", hidden_ratio * 100.0),
        ms(hidden_ns as f64),
        ms(total_ns as f64),
    ]
}

/// The cells of a row of the stragglers tables, from the device on.
fn straggler_cells(
    device: u32,
    instances: usize,
    last: usize,
    last_percent: f64,
    lateness_mean_ns: Option<f64>,
) -> Vec<String> {
    vec![
        device.to_string(),
        instances.to_string(),
        last.to_string(),
        format!("{last_percent:.1}"),
        fmt_opt(lateness_mean_ns, 1e6, 3),
    ]
}

/// Writes the tables of `rows` for people: every table of the default report, or the one
/// table `only`.
pub(super) fn write_report(out: &mut dyn Write, rows: &[Row], only: Option<Part>) -> Result<()> {
    let w = |out: &mut dyn Write, s: &str| writeln!(out, "{s}").map_err(Error::Output);
    let mut first = true;
    for &part in <Part as clap::ValueEnum>::value_variants() {
        if only.is_some_and(|o| o != part) || (only.is_none() && part.is_timing()) {
            continue;
        }
        if !std::mem::take(&mut first) {
            w(out, "")?;
        }
        let (title, header, right, footnote) = part.layout();
        w(out, title)?;
        let mut t = vec![header.iter().map(|h| h.to_string()).collect()];
        t.extend(
            rows.iter()
                .filter(|r| r.part() == part)
                .map(Row::table_cells),
        );
        write_table(out, &t, right)?;
        if let Some(footnote) = footnote {
            w(out, footnote)?;
        }
    }
    Ok(())
}
