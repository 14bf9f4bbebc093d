//! The report's rows, one variant per table (their JSON records), and the tables
//! ([`Part`], `--table`) they belong to.

use crate::output::numbers::{serialize_ns, serialize_ns_opt};
use serde::Serialize;

/// One row of a table of the report: its JSON record, tagged with its table (the CSV has
/// the same fields: a `table` column first). Times (`…_ns`) are held as computed (means,
/// quantiles) and written in whole nanoseconds.
#[derive(Debug, Serialize)]
#[serde(tag = "table", rename_all = "kebab-case")]
pub(super) enum Row {
    Bandwidth {
        collective: String,
        message_bytes: u64,
        busbw_mean_gbps: f64,
        busbw_stderr_gbps: Option<f64>,
        count: usize,
    },
    Hidden {
        collective: String,
        hidden_ratio: f64,
        hidden_ns: i64,
        total_ns: i64,
    },
    HiddenByProgram {
        program: String,
        name: String,
        collective: String,
        hidden_ratio: f64,
        hidden_ns: i64,
        total_ns: i64,
    },
    Wait {
        program: String,
        name: String,
        executions: usize,
        #[serde(serialize_with = "serialize_ns")]
        wait_mean_ns: f64,
        #[serde(serialize_with = "serialize_ns_opt")]
        wait_std_ns: Option<f64>,
        #[serde(serialize_with = "serialize_ns")]
        module_mean_ns: f64,
        wait_percent: f64,
    },
    Stragglers {
        device: u32,
        instances: usize,
        last: usize,
        last_percent: f64,
        #[serde(serialize_with = "serialize_ns_opt")]
        lateness_mean_ns: Option<f64>,
    },
    StragglersByProgram {
        program: String,
        name: String,
        device: u32,
        instances: usize,
        last: usize,
        last_percent: f64,
        #[serde(serialize_with = "serialize_ns_opt")]
        lateness_mean_ns: Option<f64>,
    },
    Instances {
        collective: String,
        program: String,
        name: String,
        execution: u32,
        thunk: String,
        thunk_execution: u32,
        message_bytes: Option<u64>,
        devices: u64,
        start_ns: i64,
        fastest_ns: i64,
        #[serde(serialize_with = "serialize_ns")]
        wait_ns: f64,
        wait_ratio: Option<f64>,
        last_device: u32,
        #[serde(serialize_with = "serialize_ns")]
        last_late_ns: f64,
    },
    WaitQuantiles {
        collective: String,
        instances: usize,
        #[serde(serialize_with = "serialize_ns")]
        wait_min_ns: f64,
        #[serde(serialize_with = "serialize_ns")]
        wait_p25_ns: f64,
        #[serde(serialize_with = "serialize_ns")]
        wait_median_ns: f64,
        #[serde(serialize_with = "serialize_ns")]
        wait_p75_ns: f64,
        #[serde(serialize_with = "serialize_ns")]
        wait_p90_ns: f64,
        #[serde(serialize_with = "serialize_ns")]
        wait_p99_ns: f64,
        #[serde(serialize_with = "serialize_ns")]
        wait_max_ns: f64,
        #[serde(serialize_with = "serialize_ns")]
        wait_mean_ns: f64,
        ratio_median: Option<f64>,
        ratio_p90: Option<f64>,
        ratio_max: Option<f64>,
    },
    WaitHistogram {
        collective: String,
        bin_lo_ns: u64,
        bin_hi_ns: u64,
        count: usize,
    },
    Lateness {
        program: String,
        name: String,
        thunk: String,
        thunk_execution: u32,
        collective: String,
        #[serde(serialize_with = "serialize_ns")]
        offset_ns: f64,
        device: u32,
        executions: u64,
        #[serde(serialize_with = "serialize_ns")]
        lateness_ns: f64,
    },
}

/// The tables of the report (`--table`): the default report's six, then those on
/// aligned clocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// Bus bandwidth per collective and message size.
    Bandwidth,
    /// Communication hidden behind compute, per collective.
    Hidden,
    /// Communication hidden behind compute, per program and collective.
    HiddenByProgram,
    /// Wait time per module execution, per program.
    Wait,
    /// The devices that arrive last.
    Stragglers,
    /// The devices that arrive last, per program.
    StragglersByProgram,
    /// Each collective instance: its wait (last end − first start − fastest device's
    /// time), as a multiple of the fastest time, and the last device (aligned clocks).
    Instances,
    /// Wait quantiles per collective (aligned clocks).
    WaitQuantiles,
    /// Wait histogram per collective, 1-2-5 bins (aligned clocks).
    WaitHistogram,
    /// Each device's lateness at each collective along the module (aligned clocks).
    Lateness,
}

impl Part {
    /// Its name in the records' `table` field.
    pub(super) fn name(self) -> &'static str {
        match self {
            Part::Bandwidth => "bandwidth",
            Part::Hidden => "hidden",
            Part::HiddenByProgram => "hidden-by-program",
            Part::Wait => "wait",
            Part::Stragglers => "stragglers",
            Part::StragglersByProgram => "stragglers-by-program",
            Part::Instances => "instances",
            Part::WaitQuantiles => "wait-quantiles",
            Part::WaitHistogram => "wait-histogram",
            Part::Lateness => "lateness",
        }
    }

    /// Whether the table compares clocks of different devices
    /// ([`timing`](super::timing)): not part of the default report.
    pub fn is_timing(self) -> bool {
        matches!(
            self,
            Part::Instances | Part::WaitQuantiles | Part::WaitHistogram | Part::Lateness
        )
    }
}

impl Part {
    /// The default report's tables, in its order.
    pub(super) const REPORT: [Part; 6] = [
        Part::Bandwidth,
        Part::Hidden,
        Part::HiddenByProgram,
        Part::Wait,
        Part::Stragglers,
        Part::StragglersByProgram,
    ];
}

impl Row {
    /// A row of `part` with every field empty: its fields, for the columns of a Parquet
    /// file of no rows (not a record anyone reads).
    pub(super) fn prototype(part: Part) -> Row {
        let s = String::new;
        match part {
            Part::Bandwidth => Row::Bandwidth {
                collective: s(),
                message_bytes: 0,
                busbw_mean_gbps: 0.0,
                busbw_stderr_gbps: None,
                count: 0,
            },
            Part::Hidden => Row::Hidden {
                collective: s(),
                hidden_ratio: 0.0,
                hidden_ns: 0,
                total_ns: 0,
            },
            Part::HiddenByProgram => Row::HiddenByProgram {
                program: s(),
                name: s(),
                collective: s(),
                hidden_ratio: 0.0,
                hidden_ns: 0,
                total_ns: 0,
            },
            Part::Wait => Row::Wait {
                program: s(),
                name: s(),
                executions: 0,
                wait_mean_ns: 0.0,
                wait_std_ns: None,
                module_mean_ns: 0.0,
                wait_percent: 0.0,
            },
            Part::Stragglers => Row::Stragglers {
                device: 0,
                instances: 0,
                last: 0,
                last_percent: 0.0,
                lateness_mean_ns: None,
            },
            Part::StragglersByProgram => Row::StragglersByProgram {
                program: s(),
                name: s(),
                device: 0,
                instances: 0,
                last: 0,
                last_percent: 0.0,
                lateness_mean_ns: None,
            },
            Part::Instances => Row::Instances {
                collective: s(),
                program: s(),
                name: s(),
                execution: 0,
                thunk: s(),
                thunk_execution: 0,
                message_bytes: None,
                devices: 0,
                start_ns: 0,
                fastest_ns: 0,
                wait_ns: 0.0,
                wait_ratio: None,
                last_device: 0,
                last_late_ns: 0.0,
            },
            Part::WaitQuantiles => Row::WaitQuantiles {
                collective: s(),
                instances: 0,
                wait_min_ns: 0.0,
                wait_p25_ns: 0.0,
                wait_median_ns: 0.0,
                wait_p75_ns: 0.0,
                wait_p90_ns: 0.0,
                wait_p99_ns: 0.0,
                wait_max_ns: 0.0,
                wait_mean_ns: 0.0,
                ratio_median: None,
                ratio_p90: None,
                ratio_max: None,
            },
            Part::WaitHistogram => Row::WaitHistogram {
                collective: s(),
                bin_lo_ns: 0,
                bin_hi_ns: 0,
                count: 0,
            },
            Part::Lateness => Row::Lateness {
                program: s(),
                name: s(),
                thunk: s(),
                thunk_execution: 0,
                collective: s(),
                offset_ns: 0.0,
                device: 0,
                executions: 0,
                lateness_ns: 0.0,
            },
        }
    }

    /// The table the row belongs to.
    pub(super) fn part(&self) -> Part {
        match self {
            Row::Bandwidth { .. } => Part::Bandwidth,
            Row::Hidden { .. } => Part::Hidden,
            Row::HiddenByProgram { .. } => Part::HiddenByProgram,
            Row::Wait { .. } => Part::Wait,
            Row::Stragglers { .. } => Part::Stragglers,
            Row::StragglersByProgram { .. } => Part::StragglersByProgram,
            Row::Instances { .. } => Part::Instances,
            Row::WaitQuantiles { .. } => Part::WaitQuantiles,
            Row::WaitHistogram { .. } => Part::WaitHistogram,
            Row::Lateness { .. } => Part::Lateness,
        }
    }
}
