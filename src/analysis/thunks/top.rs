//! `--view top`: one row per thunk, largest total GPU time first, with its share of all
//! thunk time (the notebook's `thunk_summary`).

use super::stats::clamp;
use super::table::Run;
use super::{Chosen, Named, Rows};
use crate::output::numbers::{percent_i128, serialize_ns};
use serde::Serialize;

/// A row of the top view.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TopRow {
    /// Program key.
    pub program: String,
    /// Module name.
    pub module: String,
    /// The thunk: its HLO instruction.
    pub thunk: String,
    /// The instruction's JAX op_name, from the HLO dump (null without one; empty where
    /// the instruction has none).
    pub op_name: Option<String>,
    /// The instruction's HLO opcode, from the HLO dump (null without one).
    pub opcode: Option<String>,
    /// Executions counted, over devices.
    pub executions: u64,
    /// GPU time over devices and executions (exposed time for communication), ns.
    pub total_ns: i64,
    /// GPU time per execution, mean, ns (written to the nearest nanosecond).
    #[serde(serialize_with = "serialize_ns")]
    pub mean_ns: f64,
    /// Share of the time of all thunks shown and not, percent.
    pub percent: f64,
}

/// The runs of the top view, largest total first (ties in (program, thunk) order), and
/// the total of every thunk.
pub(super) fn top_order(rows: &Rows<'_>, runs: &[Run]) -> Chosen {
    let mut total = 0i128;
    let mut totals: Vec<(i64, Run)> = runs
        .iter()
        .map(|&run| {
            let sum = rows.merged(run).1.dur.sum();
            total = total.saturating_add(sum);
            (clamp(sum), run)
        })
        .collect();
    // Stable: ties stay in (program, thunk) order.
    totals.sort_by_key(|&(t, _)| std::cmp::Reverse(t));
    Chosen::Top(totals.into_iter().map(|(_, run)| run).collect(), total)
}

impl Rows<'_> {
    /// The row of `run`; `total`: the time of every thunk.
    pub(super) fn top_row(&self, run: Run, total: i128) -> TopRow {
        let ((program, name), s) = self.merged(run);
        let Named {
            program,
            module,
            thunk,
            op_name,
            opcode,
        } = self.named(program, name);
        TopRow {
            program,
            module,
            thunk,
            op_name,
            opcode,
            executions: s.n,
            total_ns: clamp(s.dur.sum()),
            mean_ns: s.dur.mean(s.n),
            percent: percent_i128(s.dur.sum(), total),
        }
    }
}
