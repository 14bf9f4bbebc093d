//! `njx-collectives`: collective bandwidth, hidden versus exposed communication, and the
//! time devices spend waiting for each other, from thunk records.
//!
//! - Bandwidth (nccl-tests' doc/PERFORMANCE.md, as nsys-jax's `_collective_correction`):
//!   algorithm bandwidth = factor × message bytes / full time (exposed + hidden), with
//!   factor n for all-gather and reduce-scatter (they are measured on the total size) and
//!   1 otherwise; bus bandwidth = algorithm bandwidth × 2(n−1)/n for all-reduce, (n−1)/n
//!   for all-gather, reduce-scatter and all-to-all, 1 for collective-permute, broadcast
//!   and host transfers. GB are 10⁹ bytes (bytes per nanosecond).
//! - The bandwidth table takes, for each instance of a collective (program, execution,
//!   thunk, thunk execution), the fastest device's bus bandwidth — the other devices'
//!   times include waiting for the last one to arrive — and reports its mean and
//!   standard error over instances, per collective and message size (nsys-jax's
//!   `communication` analysis).
//! - Hidden share: hidden time over full time, per collective and overall.
//! - Wait: for each instance, the longest minus the shortest exposed time over devices
//!   is time a device spent waiting; summed per module execution, mean ± std over
//!   executions, and as a share of the module's GPU time (estimated from its thunks:
//!   first start to last end, mean over devices and executions).
//! - Stragglers: in each instance the device with the shortest exposed time arrived last
//!   (the others waited for it); per device, how often it was last and by how much on
//!   average (longest minus shortest exposed time).
//! - The notebook's wait distributions and lateness along the module timeline, on
//!   clocks aligned across profiles: [`timing`].

use crate::derived::executions::{self, Executions, Phase, Warmup};
use crate::derived::partial;
use crate::error::{Error, Result};
use crate::hlo::{Collective, CollectiveKind};
use crate::output::notes::Notes;
use crate::output::{Format, RecordWriter, write_table};
use crate::records::Thunk;
use crate::source::records::RecordStream;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

pub mod timing;

/// What `njx-collectives` writes.
#[derive(Debug, Clone)]
pub struct Options {
    /// One collective record per communication thunk execution instead of the report.
    pub records: bool,
    /// Count initialisation executions too.
    pub include_warmup: bool,
    /// Also draw bus bandwidth against message size into this SVG file.
    pub plot: Option<PathBuf>,
    /// Table, JSON Lines or CSV.
    pub format: Format,
    /// How programs are keyed across profiles.
    pub program_key: crate::derived::executions::KeyBy,
    /// One table of the report only.
    pub table: Option<Part>,
    /// Also draw the wait distributions into this SVG file.
    pub wait_plot: Option<PathBuf>,
    /// Also draw lateness along the module timeline into this SVG file.
    pub lateness_plot: Option<PathBuf>,
}

impl Options {
    /// Whether the job compares clocks of different devices ([`timing`]).
    pub fn needs_timing(&self) -> bool {
        self.table.is_some_and(Part::is_timing)
            || self.wait_plot.is_some()
            || self.lateness_plot.is_some()
    }
}

/// A communication thunk execution with its bandwidths: the thunk's fields then
/// `algbw_gbps` and `busbw_gbps`.
#[derive(Debug, Clone, Default)]
pub struct CollectiveRecord {
    /// The communication thunk.
    pub thunk: Thunk,
    /// Algorithm bandwidth, GB/s.
    pub algbw_gbps: f64,
    /// Bus bandwidth, GB/s.
    pub busbw_gbps: f64,
}

// Written as one flat record (serde's `flatten` goes through a map, which CSV cannot
// write): the thunk's own fields, found by serialising it, then the two bandwidths.
impl Serialize for CollectiveRecord {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeStruct};
        let serde_json::Value::Object(fields) =
            serde_json::to_value(&self.thunk).map_err(S::Error::custom)?
        else {
            return Err(S::Error::custom("a thunk serialises to an object"));
        };
        let mut st = serializer.serialize_struct("CollectiveRecord", fields.len() + 2)?;
        if fields.len() != THUNK_FIELDS.len() {
            return Err(S::Error::custom("THUNK_FIELDS is out of date"));
        }
        for key in THUNK_FIELDS {
            let value = fields
                .get(*key)
                .ok_or_else(|| S::Error::custom(format!("thunk has no field {key}")))?;
            st.serialize_field(key, value)?;
        }
        st.serialize_field("algbw_gbps", &self.algbw_gbps)?;
        st.serialize_field("busbw_gbps", &self.busbw_gbps)?;
        st.end()
    }
}

/// The fields of [`Thunk`], in declaration order (checked by a test).
const THUNK_FIELDS: &[&str] = &[
    "profile",
    "program",
    "program_id",
    "module",
    "execution",
    "device",
    "name",
    "thunk_execution",
    "start_ns",
    "dur_ns",
    "hidden_ns",
    "comm",
    "warmup",
    "collective",
    "group_size",
    "message_bytes",
    "reconstructed",
];

/// Bandwidths of one communication thunk, `None` for compute thunks or missing fields.
pub fn bandwidth(t: &Thunk) -> Option<(f64, f64)> {
    let kind = CollectiveKind::from_name(t.collective.as_deref()?)?;
    let c = Collective {
        kind,
        group_size: u64::from(t.group_size?),
        message_bytes: t.message_bytes?,
    };
    let (alg, bus) = c.bandwidth_factors();
    let full = (t.dur_ns + t.hidden_ns) as f64;
    if full <= 0.0 {
        return None;
    }
    let algbw = alg * c.message_bytes as f64 / full;
    Some((algbw, algbw * bus))
}

/// A communication thunk execution that took no time at all: it has no bandwidth.
fn of_no_time(t: &Thunk) -> bool {
    t.comm && t.dur_ns == 0 && t.hidden_ns == 0
}

/// Says how many communication thunk executions of `place` took no time (left out of
/// the bandwidths, counted everywhere else).
fn say_no_time(place: &str, n: u64, notes: &Notes) {
    if n > 0 {
        notes.note(format!(
            "{place}: {n} communication thunk execution{} no time at all (dur_ns + hidden_ns \
             = 0): left out of the bandwidths",
            if n == 1 { " takes" } else { "s take" }
        ));
    }
}

/// Mean, sample standard deviation (None for one value).
fn mean_std(v: &[f64]) -> (f64, Option<f64>) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let std = (v.len() > 1)
        .then(|| (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt());
    (mean, std)
}

#[derive(Debug, Serialize)]
#[serde(tag = "table", rename_all = "kebab-case")]
enum Row {
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
    Wait {
        program: String,
        name: String,
        executions: usize,
        wait_mean_ns: f64,
        wait_std_ns: Option<f64>,
        module_mean_ns: f64,
        wait_percent: f64,
    },
    Stragglers {
        device: u32,
        instances: usize,
        last: usize,
        last_percent: f64,
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
        wait_ns: f64,
        wait_ratio: Option<f64>,
        last_device: u32,
        last_late_ns: f64,
    },
    WaitQuantiles {
        collective: String,
        instances: usize,
        wait_min_ns: f64,
        wait_p25_ns: f64,
        wait_median_ns: f64,
        wait_p75_ns: f64,
        wait_p90_ns: f64,
        wait_p99_ns: f64,
        wait_max_ns: f64,
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
        offset_ns: f64,
        device: u32,
        executions: u64,
        lateness_ns: f64,
    },
}

/// The four tables of the report (`--table`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// Bus bandwidth per collective and message size.
    Bandwidth,
    /// Communication hidden behind compute, per collective.
    Hidden,
    /// Wait time per module execution, per program.
    Wait,
    /// The devices that arrive last.
    Stragglers,
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
    fn name(self) -> &'static str {
        match self {
            Part::Bandwidth => "bandwidth",
            Part::Hidden => "hidden",
            Part::Wait => "wait",
            Part::Stragglers => "stragglers",
            Part::Instances => "instances",
            Part::WaitQuantiles => "wait-quantiles",
            Part::WaitHistogram => "wait-histogram",
            Part::Lateness => "lateness",
        }
    }

    /// Whether the table compares clocks of different devices ([`timing`]): not part of
    /// the default report.
    pub fn is_timing(self) -> bool {
        matches!(
            self,
            Part::Instances | Part::WaitQuantiles | Part::WaitHistogram | Part::Lateness
        )
    }
}

impl Part {
    /// Its table for people: title, column headings, the right-aligned (numeric)
    /// columns, and a footnote.
    fn layout(
        self,
    ) -> (
        &'static str,
        &'static [&'static str],
        &'static [usize],
        Option<&'static str>,
    ) {
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
        }
    }
}

impl Row {
    /// The row's cells in its table for people ([`Part::layout`]): times in ms,
    /// bandwidths to 4 significant digits, `-` where there is no value.
    fn table_cells(&self) -> Vec<String> {
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
                crate::output::charts::significant(*busbw_mean_gbps, 4),
                busbw_stderr_gbps.map_or("-".to_string(), |v| {
                    crate::output::charts::significant(v, 4)
                }),
                count.to_string(),
            ],
            Row::Hidden {
                collective,
                hidden_ratio,
                hidden_ns,
                total_ns,
            } => vec![
                collective.clone(),
                format!("{:.2}", hidden_ratio * 100.0),
                format!("{:.3}", *hidden_ns as f64 / 1e6),
                format!("{:.3}", *total_ns as f64 / 1e6),
            ],
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
                format!("{:.3}", wait_mean_ns / 1e6),
                fmt_opt(*wait_std_ns, 1e6, 3),
                format!("{:.3}", module_mean_ns / 1e6),
                format!("{wait_percent:.2}"),
            ],
            Row::Stragglers {
                device,
                instances,
                last,
                last_percent,
                lateness_mean_ns,
            } => vec![
                device.to_string(),
                instances.to_string(),
                last.to_string(),
                format!("{last_percent:.1}"),
                fmt_opt(*lateness_mean_ns, 1e6, 3),
            ],
            Row::Instances {
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
            } => vec![
                collective.clone(),
                program.clone(),
                execution.to_string(),
                thunk.clone(),
                thunk_execution.to_string(),
                message_bytes.map_or("-".to_string(), |b| b.to_string()),
                devices.to_string(),
                format!("{:.3}", *fastest_ns as f64 / 1e6),
                format!("{:.3}", wait_ns / 1e6),
                wait_ratio.map_or("-".to_string(), |r| {
                    crate::output::charts::significant(r, 4)
                }),
                last_device.to_string(),
                format!("{:.3}", last_late_ns / 1e6),
            ],
            Row::WaitQuantiles {
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
            } => {
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
                    .map(|v| format!("{:.3}", v / 1e6)),
                );
                cells.extend([ratio_median, ratio_p90, ratio_max].map(|r| {
                    r.map_or("-".to_string(), |r| {
                        crate::output::charts::significant(r, 4)
                    })
                }));
                cells
            }
            Row::WaitHistogram {
                collective,
                bin_lo_ns,
                bin_hi_ns,
                count,
            } => vec![
                collective.clone(),
                crate::output::charts::round_label(*bin_lo_ns as f64 / 1e6),
                crate::output::charts::round_label(*bin_hi_ns as f64 / 1e6),
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
                format!("{:.3}", offset_ns / 1e6),
                thunk.clone(),
                thunk_execution.to_string(),
                collective.clone(),
                device.to_string(),
                executions.to_string(),
                format!("{:.3}", lateness_ns / 1e6),
            ],
        }
    }

    fn part(&self) -> Part {
        match self {
            Row::Bandwidth { .. } => Part::Bandwidth,
            Row::Hidden { .. } => Part::Hidden,
            Row::Wait { .. } => Part::Wait,
            Row::Stragglers { .. } => Part::Stragglers,
            Row::Instances { .. } => Part::Instances,
            Row::WaitQuantiles { .. } => Part::WaitQuantiles,
            Row::WaitHistogram { .. } => Part::WaitHistogram,
            Row::Lateness { .. } => Part::Lateness,
        }
    }

    /// The row's fields as CSV cells, in the order of the JSON records (and the README):
    /// numbers as JSON writes them, nulls empty.
    fn cells(&self) -> Vec<(&'static str, String)> {
        // As serde_json writes them (`5.0`; NaN as null, so empty), as the JSON records.
        let num = |v: f64| serde_json::Number::from_f64(v).map_or(String::new(), |n| n.to_string());
        let opt = |v: &Option<f64>| v.map_or(String::new(), num);
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
            } => vec![
                ("collective", collective.clone()),
                ("hidden_ratio", num(*hidden_ratio)),
                ("hidden_ns", hidden_ns.to_string()),
                ("total_ns", total_ns.to_string()),
            ],
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
                ("wait_mean_ns", num(*wait_mean_ns)),
                ("wait_std_ns", opt(wait_std_ns)),
                ("module_mean_ns", num(*module_mean_ns)),
                ("wait_percent", num(*wait_percent)),
            ],
            Row::Stragglers {
                device,
                instances,
                last,
                last_percent,
                lateness_mean_ns,
            } => vec![
                ("device", device.to_string()),
                ("instances", instances.to_string()),
                ("last", last.to_string()),
                ("last_percent", num(*last_percent)),
                ("lateness_mean_ns", opt(lateness_mean_ns)),
            ],
            Row::Instances {
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
            } => vec![
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
                ("wait_ns", num(*wait_ns)),
                ("wait_ratio", opt(wait_ratio)),
                ("last_device", last_device.to_string()),
                ("last_late_ns", num(*last_late_ns)),
            ],
            Row::WaitQuantiles {
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
            } => vec![
                ("collective", collective.clone()),
                ("instances", instances.to_string()),
                ("wait_min_ns", num(*wait_min_ns)),
                ("wait_p25_ns", num(*wait_p25_ns)),
                ("wait_median_ns", num(*wait_median_ns)),
                ("wait_p75_ns", num(*wait_p75_ns)),
                ("wait_p90_ns", num(*wait_p90_ns)),
                ("wait_p99_ns", num(*wait_p99_ns)),
                ("wait_max_ns", num(*wait_max_ns)),
                ("wait_mean_ns", num(*wait_mean_ns)),
                ("ratio_median", opt(ratio_median)),
                ("ratio_p90", opt(ratio_p90)),
                ("ratio_max", opt(ratio_max)),
            ],
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
                ("offset_ns", num(*offset_ns)),
                ("device", device.to_string()),
                ("executions", executions.to_string()),
                ("lateness_ns", num(*lateness_ns)),
            ],
        }
    }
}

/// One instance of a collective (program, execution, thunk, thunk execution, and the
/// phase of its execution) over the devices read so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Inst {
    /// Collective kind and message size (the least, should devices disagree).
    kind: (Option<String>, Option<u64>),
    /// The fastest device's bus bandwidth, GB/s.
    best_busbw: Option<f64>,
    /// Shortest and longest exposed time.
    lo: i64,
    hi: i64,
    /// The device that arrived last: shortest exposed time, then lowest device.
    last: (i64, u32),
    /// Thunk executions (one per device).
    count: u64,
}

impl Inst {
    fn of(t: &Thunk) -> Inst {
        Inst {
            kind: (t.collective.clone(), t.message_bytes),
            best_busbw: bandwidth(t).map(|b| b.1),
            lo: t.dur_ns,
            hi: t.dur_ns,
            last: (t.dur_ns, t.device),
            count: 1,
        }
    }

    fn merge(&mut self, o: &Inst) {
        if o.kind < self.kind {
            self.kind.clone_from(&o.kind);
        }
        self.best_busbw = match (self.best_busbw, o.best_busbw) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.lo = self.lo.min(o.lo);
        self.hi = self.hi.max(o.hi);
        self.last = self.last.min(o.last);
        self.count = self.count.saturating_add(o.count);
    }
}

/// (program, execution, thunk, thunk execution, phase).
type InstKey = (String, u32, String, u32, Phase);

/// Thunk executions aggregated for the report: per collective instance over devices, per
/// module execution and device, per collective and device. What the report needs of any
/// number of inputs, and the partial result of `njx-collectives --partial` (kind
/// [`PARTIAL`]). Its size follows the instances of one rank (every rank runs the same
/// ones) and the module executions × devices, not the thunk executions.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Partial {
    /// What the warm-up rule needs to know of the profiles read.
    warmup: Warmup,
    #[serde(with = "crate::derived::partial::pairs")]
    instances: BTreeMap<InstKey, Inst>,
    /// (collective, program, phase) → (hidden, full time).
    #[serde(with = "crate::derived::partial::pairs")]
    hidden: BTreeMap<(String, String, Phase), (i64, i64)>,
    /// (program, execution, phase, device) → first start, last end of its thunks.
    #[serde(with = "crate::derived::partial::pairs")]
    spans: BTreeMap<(String, u32, Phase, u32), (i64, i64)>,
    /// Program → module name (the least).
    names: BTreeMap<String, String>,
    /// (device, program, phase) → communication thunk executions.
    #[serde(with = "crate::derived::partial::pairs")]
    taking_part: BTreeMap<(u32, String, Phase), u64>,
}

/// Keeps, for `program`, the least module name seen (a program has one name; records
/// read back may disagree, and the least is the one that does not depend on order).
fn keep_least_name(names: &mut BTreeMap<String, String>, program: &str, module: &str) {
    match names.get_mut(program) {
        Some(n) if n.as_str() <= module => {}
        Some(n) => module.clone_into(n),
        None => {
            names.insert(program.to_string(), module.to_string());
        }
    }
}

/// The kind of [`Partial`]'s partial results.
pub const PARTIAL: &str = "collectives";

impl Partial {
    fn add(&mut self, t: &Thunk, phase: Phase) {
        let span = self
            .spans
            .entry((t.program.clone(), t.execution, phase, t.device))
            .or_insert((i64::MAX, i64::MIN));
        span.0 = span.0.min(t.start_ns);
        span.1 = span.1.max(t.start_ns + t.dur_ns + t.hidden_ns);
        keep_least_name(&mut self.names, &t.program, &t.module);
        if !t.comm {
            return;
        }
        let key = (
            t.program.clone(),
            t.execution,
            t.name.clone(),
            t.thunk_execution,
            phase,
        );
        match self.instances.get_mut(&key) {
            Some(i) => i.merge(&Inst::of(t)),
            None => {
                self.instances.insert(key, Inst::of(t));
            }
        }
        let h = self
            .hidden
            .entry((
                t.collective.clone().unwrap_or_default(),
                t.program.clone(),
                phase,
            ))
            .or_default();
        // Saturating: records read back may carry any times.
        h.0 = h.0.saturating_add(t.hidden_ns);
        h.1 = h.1.saturating_add(t.dur_ns + t.hidden_ns);
        *self
            .taking_part
            .entry((t.device, t.program.clone(), phase))
            .or_default() += 1;
    }

    /// Adds a thunk record (its warm-up already decided).
    pub fn add_record(&mut self, t: &Thunk) {
        self.warmup.variants.add(&t.module, &t.program, t.device);
        self.add(t, Phase::of_record(t.warmup));
    }

    /// Whether any communication counts (initialisation left out unless
    /// `include_warmup`).
    fn has_comm(&self, include_warmup: bool) -> bool {
        let rule = self.warmup.rule();
        self.instances
            .keys()
            .any(|k| include_warmup || !rule.thunk_is_warmup(&k.0, k.4))
    }

    /// The report's tables, initialisation left out unless `include_warmup`.
    fn report(&self, include_warmup: bool) -> Vec<Row> {
        let rule = self.warmup.rule();
        let counts =
            |program: &str, phase: Phase| include_warmup || !rule.thunk_is_warmup(program, phase);
        let instances: Vec<(&InstKey, &Inst)> = self
            .instances
            .iter()
            .filter(|(k, _)| counts(&k.0, k.4))
            .collect();
        let mut rows = Vec::new();
        // Bandwidth: fastest device per instance.
        let mut by_size: BTreeMap<(String, u64), Vec<f64>> = BTreeMap::new();
        for (_, i) in &instances {
            let (Some(kind), Some(size)) = i.kind.clone() else {
                continue;
            };
            if let Some(best) = i.best_busbw.filter(|b| b.is_finite()) {
                by_size.entry((kind, size)).or_default().push(best);
            }
        }
        for ((collective, message_bytes), v) in by_size {
            let (mean, std) = mean_std(&v);
            rows.push(Row::Bandwidth {
                collective,
                message_bytes,
                busbw_mean_gbps: mean,
                busbw_stderr_gbps: std.map(|s| s / (v.len() as f64).sqrt()),
                count: v.len(),
            });
        }
        // Hidden share.
        let mut hidden: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
        for ((collective, program, phase), (h, f)) in &self.hidden {
            if counts(program, *phase) {
                let e = hidden.entry(collective).or_default();
                e.0 = e.0.saturating_add(*h);
                e.1 = e.1.saturating_add(*f);
            }
        }
        let overall = hidden.values().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        for (collective, (h, total)) in hidden
            .into_iter()
            .chain(std::iter::once(("overall", overall)))
        {
            rows.push(Row::Hidden {
                collective: collective.to_string(),
                hidden_ratio: if total > 0 {
                    h as f64 / total as f64
                } else {
                    0.0
                },
                hidden_ns: h,
                total_ns: total,
            });
        }
        // Wait per module execution.
        let mut wait: BTreeMap<(&str, u32), f64> = BTreeMap::new();
        for (k, i) in &instances {
            // In f64: partial results read back carry whatever times they were given.
            *wait.entry((k.0.as_str(), k.1)).or_default() += i.hi as f64 - i.lo as f64;
        }
        // Module GPU time per (program, execution, device), from its thunks.
        let mut module_times: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for ((program, _, phase, _), (s, e)) in &self.spans {
            if counts(program, *phase) {
                module_times
                    .entry(program)
                    .or_default()
                    .push(*e as f64 - *s as f64); // a span of up to 2^63 ns: in f64
            }
        }
        let mut per_program: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for ((program, _), w) in wait {
            per_program.entry(program).or_default().push(w);
        }
        let mut wait_rows: Vec<Row> = per_program
            .into_iter()
            .map(|(program, w)| {
                let module_mean = module_times.get(program).map_or(0.0, |v| mean_std(v).0);
                let (mean, std) = mean_std(&w);
                Row::Wait {
                    name: self.names.get(program).cloned().unwrap_or_default(),
                    program: program.to_string(),
                    executions: w.len(),
                    wait_mean_ns: mean,
                    wait_std_ns: std,
                    module_mean_ns: module_mean,
                    wait_percent: if module_mean > 0.0 {
                        100.0 * mean / module_mean
                    } else {
                        0.0
                    },
                }
            })
            .collect();
        wait_rows.sort_by(|a, b| match (a, b) {
            (
                Row::Wait {
                    wait_mean_ns: x, ..
                },
                Row::Wait {
                    wait_mean_ns: y, ..
                },
            ) => y.total_cmp(x),
            _ => std::cmp::Ordering::Equal,
        });
        rows.extend(wait_rows);
        // Stragglers: per device, the instances it took part in (those of more than one
        // device), how often it was last and by how much.
        let mut seen: BTreeMap<u32, (usize, usize, f64)> = BTreeMap::new();
        for ((device, program, phase), n) in &self.taking_part {
            if counts(program, *phase) {
                let e = seen.entry(*device).or_default();
                e.0 =
                    e.0.saturating_add(usize::try_from(*n).unwrap_or(usize::MAX));
            }
        }
        for (_, i) in &instances {
            if i.count > 1 {
                let e = seen.entry(i.last.1).or_default();
                e.1 += 1;
                e.2 += i.hi as f64 - i.last.0 as f64;
            } else if let Some(e) = seen.get_mut(&i.last.1) {
                // Alone in its instance: not a straggler's instance.
                e.0 = e.0.saturating_sub(1);
            }
        }
        for (device, (instances, last, lateness)) in seen {
            if instances == 0 {
                continue;
            }
            rows.push(Row::Stragglers {
                device,
                instances,
                last,
                last_percent: 100.0 * last as f64 / instances as f64,
                lateness_mean_ns: (last > 0).then(|| lateness / last as f64),
            });
        }
        rows
    }
}

fn fmt_opt(v: Option<f64>, scale: f64, digits: usize) -> String {
    v.map_or("-".to_string(), |x| format!("{:.*}", digits, x / scale))
}

/// The thunk executions of `inputs` that count: thunk records, or profiles read through
/// [`executions::load`] with clocks aligned; initialisation left out unless asked for.
/// For `--records`; the report aggregates instead ([`aggregate`]).
pub fn read(options: &Options, inputs: &[PathBuf], notes: &Notes) -> Result<Vec<Thunk>> {
    let mut thunks =
        executions::read_records(inputs, "thunks", options.program_key, true, notes, |e| {
            e.thunks
        })?;
    if !options.include_warmup {
        thunks.retain(|t| !t.warmup);
    }
    Ok(thunks)
}

/// The aggregate of the thunk executions of `inputs`: thunk records, partial results, or
/// profiles read one input path at a time through [`executions::each`] (no time in the
/// report depends on clock alignment: only durations and each device's own spans).
pub fn aggregate(inputs: &[PathBuf], key: executions::KeyBy, notes: &Notes) -> Result<Partial> {
    let hlo = executions::Hlo { dumps: &[], key };
    partial::aggregate(inputs, hlo, notes, Partial::default)
}

impl partial::Aggregate for Partial {
    const KIND: &'static str = PARTIAL;
    const TABLE: &'static str = "thunks";

    fn add_records(&mut self, s: RecordStream, notes: &Notes) -> Result<()> {
        let place = s.place.clone();
        let mut no_time = 0;
        s.read(&mut |t: Thunk| {
            no_time += u64::from(of_no_time(&t));
            self.add_record(&t);
            Ok(())
        })?;
        say_no_time(&place, no_time, notes);
        Ok(())
    }

    fn add_profile(&mut self, part: &Executions, notes: &Notes) -> Result<()> {
        self.warmup.add(part);
        let mut no_time = 0;
        for t in &part.thunks {
            no_time += u64::from(of_no_time(t));
            self.add(t, Phase::of_profile(t.execution));
        }
        if let Some(t) = part.thunks.first() {
            say_no_time(&format!("profile {}", t.profile), no_time, notes);
        }
        Ok(())
    }

    fn merge(&mut self, other: Self, _: &Notes) -> Result<()> {
        self.warmup.merge(other.warmup);
        for (k, i) in other.instances {
            match self.instances.get_mut(&k) {
                Some(mine) => mine.merge(&i),
                None => {
                    self.instances.insert(k, i);
                }
            }
        }
        for (k, (h, f)) in other.hidden {
            let e = self.hidden.entry(k).or_default();
            e.0 = e.0.saturating_add(h);
            e.1 = e.1.saturating_add(f);
        }
        for (k, (s, e)) in other.spans {
            let span = self.spans.entry(k).or_insert((i64::MAX, i64::MIN));
            span.0 = span.0.min(s);
            span.1 = span.1.max(e);
        }
        for (program, name) in other.names {
            keep_least_name(&mut self.names, &program, &name);
        }
        for (k, n) in other.taking_part {
            let t = self.taking_part.entry(k).or_default();
            *t = t.saturating_add(n);
        }
        Ok(())
    }

    fn warmup(&self) -> &Warmup {
        &self.warmup
    }
}

/// The report (or the collective records) of `inputs`, written to `out`.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    if options.records {
        let thunks = read(options, inputs, notes)?;
        return write_records(options.format, thunks, out);
    }
    if options.needs_timing() {
        let (acc, timing) = aggregate_with_timing(options, inputs, notes)?;
        return write_with_timing(options, &acc, &timing, out, notes);
    }
    let acc = aggregate(inputs, options.program_key, notes)?;
    write(options, &acc, out)
}

/// The aggregate and the [`timing::Timing`] of `inputs` in one reading: thunk records,
/// or profiles with clocks aligned (two passes, [`executions::visit`]); partial results
/// cannot be compared across devices, so they are refused.
pub fn aggregate_with_timing(
    options: &Options,
    inputs: &[PathBuf],
    notes: &Notes,
) -> Result<(Partial, timing::Timing)> {
    let mut acc = Partial::default();
    let mut timing = timing::Timing::new(options.include_warmup);
    let mut no_time = 0;
    executions::each_thunk(inputs, options.program_key, true, notes, &mut |t| {
        no_time += u64::from(of_no_time(&t));
        acc.add_record(&t);
        timing.add(&t);
        Ok(())
    })?;
    say_no_time("the input", no_time, notes);
    Ok((acc, timing))
}

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
                    &bandwidth_series(&acc.report(options.include_warmup)),
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

/// Writes the collective records of `thunks` (from [`read`]).
pub fn write_records(format: Format, thunks: Vec<Thunk>, out: &mut dyn Write) -> Result<()> {
    let mut w = RecordWriter::new(out, format)?;
    for t in thunks.into_iter().filter(|t| t.comm) {
        let (algbw_gbps, busbw_gbps) = bandwidth(&t).unwrap_or((f64::NAN, f64::NAN));
        w.write(&CollectiveRecord {
            thunk: t,
            algbw_gbps,
            busbw_gbps,
        })?;
    }
    w.finish::<CollectiveRecord>()
}

/// Writes the report of `acc` (from [`aggregate`]) and the plot.
pub fn write(options: &Options, acc: &Partial, out: &mut dyn Write) -> Result<()> {
    let format = options.format;
    if !acc.has_comm(options.include_warmup) {
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
    let mut rows = acc.report(options.include_warmup);
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
            return write_csv(out, rows, options.table.is_some());
        }
        let mut w = RecordWriter::new(out, format)?;
        rows.iter().try_for_each(|r| w.write(r))?;
        // JSON Lines only (CSV is written above).
        return w.finish::<()>();
    }
    write_report(out, rows, options.table)?;
    out.flush().map_err(Error::Output)
}

/// The tables as CSV: one table's columns as its JSON records have them (`--table`); or
/// all four in one, a `table` column first, then every table's columns in order of first
/// appearance, empty where a table has no such column.
fn write_csv(out: &mut dyn Write, rows: &[Row], one: bool) -> Result<()> {
    let cells: Vec<Vec<(&str, String)>> = rows.iter().map(Row::cells).collect();
    let mut columns: Vec<&str> = if one { Vec::new() } else { vec!["table"] };
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
            if c == "table" && !one {
                return r.part().name().to_string();
            }
            row.iter()
                .find(|(k, _)| *k == c)
                .map_or(String::new(), |(_, v)| v.clone())
        }))?;
    }
    w.flush().map_err(Error::Output)
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

fn write_report(out: &mut dyn Write, rows: &[Row], only: Option<Part>) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::THUNK_FIELDS;

    #[test]
    fn thunk_fields_are_listed_in_declaration_order() {
        let mut w = csv::Writer::from_writer(Vec::new());
        let t: crate::records::Thunk = serde_json::from_str(
            r#"{"profile":"p","program":"f","program_id":1,"module":"m","execution":0,"device":0,
            "name":"n","thunk_execution":0,"start_ns":0,"dur_ns":1,"hidden_ns":0,"comm":false,
            "warmup":false,"collective":null,"group_size":null,"message_bytes":null}"#,
        )
        .unwrap();
        w.serialize(&t).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(text.lines().next().unwrap(), THUNK_FIELDS.join(","));
    }
}
