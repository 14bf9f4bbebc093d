//! `--view opcode`: GPU time by HLO opcode, with the idle time during module executions,
//! as shares of module time (the notebook's `op_runtime`).

use super::Rows;
use super::stats::clamp;
use super::table::Run;
use crate::derived::gpu_time::{IDLE_INSIDE, UNKNOWN};
use crate::output::numbers::percent_i128;
use serde::Serialize;
use std::collections::BTreeMap;

/// A row of the opcode view.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OpcodeRow {
    /// HLO opcode, `[Unknown]` for thunks without a dump, or
    /// `[GPU idle during module execution]`.
    pub opcode: String,
    /// Distinct thunks (program, instruction) of the opcode; 0 for the idle row.
    pub thunks: u64,
    /// GPU time, ns.
    pub total_ns: i64,
    /// Share of module time (of thunk time without module records), percent.
    pub percent: f64,
}

/// The rows of the opcode view of `runs`, largest total first, ties by opcode.
pub(super) fn opcode_rows(rows: &Rows<'_>, runs: &[Run]) -> Vec<OpcodeRow> {
    let mut by_opcode: BTreeMap<String, (u64, i128)> = BTreeMap::new();
    for &run in runs {
        let ((program, name), s) = rows.merged(run);
        let opcode = rows
            .info(program, name)
            .map_or_else(|| UNKNOWN.to_string(), |i| i.1);
        let o = by_opcode.entry(opcode).or_default();
        o.0 += 1;
        o.1 = o.1.saturating_add(s.dur.sum());
    }
    let thunk_total: i128 = by_opcode
        .values()
        .map(|o| o.1)
        .fold(0, i128::saturating_add);
    // The notebook's `_total`: module time (2), with the idle time during modules as a
    // row of its own; thunk time where there are no module records.
    let totals = rows.selection.totals();
    let whole = totals.map_or(thunk_total, |t| i128::from(t.module_ns));
    let mut rows: Vec<OpcodeRow> = by_opcode
        .into_iter()
        .map(|(opcode, (thunks, ns))| OpcodeRow {
            opcode,
            thunks,
            total_ns: clamp(ns),
            percent: percent_i128(ns, whole),
        })
        .collect();
    if let Some(t) = totals {
        rows.push(OpcodeRow {
            opcode: IDLE_INSIDE.to_string(),
            thunks: 0,
            total_ns: t.idle_inside(),
            percent: percent_i128(t.idle_inside().into(), whole),
        });
    }
    rows.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.opcode.cmp(&b.opcode))
    });
    rows
}
