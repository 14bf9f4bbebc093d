//! `--view variability`: per compute thunk executed at least twice, the mean, standard
//! deviation and coefficient of variation of its execution time, with its slowest
//! executions (the notebook's `compute_duration_stats`).

use super::stats::{Slow, Stats};
use super::table::Run;
use super::{Chosen, Named, Rows};
use crate::output::numbers::serialize_ns;
use serde::Serialize;

/// A row of the variability view.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct VariabilityRow {
    /// Program key.
    pub program: String,
    /// Module name.
    pub module: String,
    /// The thunk: its HLO instruction.
    pub thunk: String,
    /// JAX op_name from the HLO dump (null without one).
    pub op_name: Option<String>,
    /// HLO opcode from the HLO dump (null without one).
    pub opcode: Option<String>,
    /// Executions, over devices.
    pub executions: u64,
    /// Mean execution time, ns (written to the nearest nanosecond).
    #[serde(serialize_with = "serialize_ns")]
    pub mean_ns: f64,
    /// Sample standard deviation (divisor n − 1, as pandas), ns (written to the nearest
    /// nanosecond).
    #[serde(serialize_with = "serialize_ns")]
    pub std_ns: f64,
    /// Coefficient of variation, std / mean (null for a mean of 0).
    pub cv: Option<f64>,
    /// The slowest execution, ns.
    pub max_ns: i64,
    /// The slowest execution: its time, device, module execution and thunk execution.
    pub slowest1_ns: Option<i64>,
    /// The device it ran on.
    pub slowest1_device: Option<u32>,
    /// Its module execution number.
    pub slowest1_execution: Option<u32>,
    /// Its execution number within the module execution.
    pub slowest1_thunk_execution: Option<u32>,
    /// The second slowest.
    pub slowest2_ns: Option<i64>,
    /// The device it ran on.
    pub slowest2_device: Option<u32>,
    /// Its module execution number.
    pub slowest2_execution: Option<u32>,
    /// Its execution number within the module execution.
    pub slowest2_thunk_execution: Option<u32>,
    /// The third slowest.
    pub slowest3_ns: Option<i64>,
    /// The device it ran on.
    pub slowest3_device: Option<u32>,
    /// Its module execution number.
    pub slowest3_execution: Option<u32>,
    /// Its execution number within the module execution.
    pub slowest3_thunk_execution: Option<u32>,
}

impl VariabilityRow {
    fn set_slowest(&mut self, slowest: &[Slow]) {
        let get = |i: usize| slowest.get(i).copied();
        let s = get(0);
        self.slowest1_ns = s.map(|s| s.dur_ns);
        self.slowest1_device = s.map(|s| s.device);
        self.slowest1_execution = s.map(|s| s.execution);
        self.slowest1_thunk_execution = s.map(|s| s.thunk_execution);
        let s = get(1);
        self.slowest2_ns = s.map(|s| s.dur_ns);
        self.slowest2_device = s.map(|s| s.device);
        self.slowest2_execution = s.map(|s| s.execution);
        self.slowest2_thunk_execution = s.map(|s| s.thunk_execution);
        let s = get(2);
        self.slowest3_ns = s.map(|s| s.dur_ns);
        self.slowest3_device = s.map(|s| s.device);
        self.slowest3_execution = s.map(|s| s.execution);
        self.slowest3_thunk_execution = s.map(|s| s.thunk_execution);
    }

    pub(super) fn slowest(&self) -> Vec<(i64, u32, u32, u32)> {
        [
            (
                self.slowest1_ns,
                self.slowest1_device,
                self.slowest1_execution,
                self.slowest1_thunk_execution,
            ),
            (
                self.slowest2_ns,
                self.slowest2_device,
                self.slowest2_execution,
                self.slowest2_thunk_execution,
            ),
            (
                self.slowest3_ns,
                self.slowest3_device,
                self.slowest3_execution,
                self.slowest3_thunk_execution,
            ),
        ]
        .into_iter()
        .filter_map(|(n, d, e, t)| Some((n?, d?, e?, t?)))
        .collect()
    }
}

/// The runs of the variability view: those whose coefficient of variation exceeds
/// `min_cv` (0 keeps every one), largest mean first (ties in (program, thunk) order).
pub(super) fn variability_order(rows: &Rows<'_>, runs: Vec<Run>, min_cv: f64) -> Chosen {
    let mut means: Vec<(f64, Run)> = Vec::new();
    for run in runs {
        let (mean, _, cv) = spread(&rows.merged(run).1);
        // The notebook's `var_threshold`: σ/μ above it (0 keeps every thunk).
        if min_cv > 0.0 && cv.is_none_or(|cv| cv <= min_cv) {
            continue;
        }
        means.push((mean, run));
    }
    // As the notebook's detailed view: the slowest (largest mean) of the variable
    // ones; stable, ties in (program, thunk) order.
    means.sort_by(|a, b| b.0.total_cmp(&a.0));
    Chosen::Variability(means.into_iter().map(|(_, run)| run).collect())
}

impl Rows<'_> {
    /// The row of `run`.
    pub(super) fn variability_row(&self, run: Run) -> VariabilityRow {
        let ((program, name), s) = self.merged(run);
        let (mean, std, cv) = spread(&s);
        let Named {
            program,
            module,
            thunk,
            op_name,
            opcode,
        } = self.named(program, name);
        let mut row = VariabilityRow {
            program,
            module,
            thunk,
            op_name,
            opcode,
            executions: s.n,
            mean_ns: mean,
            std_ns: std,
            cv,
            max_ns: s.slowest.first().map_or(0, |x| x.dur_ns),
            ..VariabilityRow::default()
        };
        row.set_slowest(s.slowest.as_slice());
        row
    }
}

/// A row of the variability view with what the findings need besides: the fastest
/// execution and the total time.
#[derive(Debug, Clone)]
pub struct Varying {
    /// The row njx-thunks writes.
    pub row: VariabilityRow,
    /// The fastest execution, ns (none from partial results that did not carry it).
    pub fastest_ns: Option<i64>,
    /// The executions' total time, ns.
    pub total_ns: i128,
}

impl Rows<'_> {
    /// The top view's rows, in its order (empty for another view).
    pub fn top_rows(&self) -> Vec<super::top::TopRow> {
        let Chosen::Top(runs, total) = &self.view else {
            return Vec::new();
        };
        runs.iter().map(|&run| self.top_row(run, *total)).collect()
    }

    /// The variability view's rows, in its order, each with its fastest execution and
    /// total time (empty for another view).
    pub fn varying(&self) -> Vec<Varying> {
        let Chosen::Variability(runs) = &self.view else {
            return Vec::new();
        };
        runs.iter()
            .map(|&run| {
                let s = self.merged(run).1;
                Varying {
                    row: self.variability_row(run),
                    fastest_ns: s.fastest,
                    total_ns: s.dur.sum(),
                }
            })
            .collect()
    }
}

/// Mean, sample standard deviation and coefficient of variation (none for a mean of 0).
fn spread(s: &Stats) -> (f64, f64, Option<f64>) {
    let mean = s.dur.mean(s.n);
    let std = s.dur.std(s.n).unwrap_or(0.0);
    (mean, std, (mean != 0.0).then(|| std / mean.abs()))
}
