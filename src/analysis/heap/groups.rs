//! `--view by-op-name` and `--view by-source`: the buffers live at each trace's peak
//! summed by the op_name or the source line of their defining instructions.

use super::records::{BufferRecord, GroupRecord, ProgramHeap};
use crate::output::numbers::percent_rounded;
use std::collections::{BTreeMap, HashMap};

/// The breakdown of the live buffers at each trace's peak by `key`, largest first.
pub(super) fn groups(
    heap: &ProgramHeap,
    key: impl Fn(&BufferRecord) -> Option<&str>,
) -> Vec<GroupRecord> {
    // Each trace's buffers, in one pass (not one pass per trace: a dump can hold many).
    let mut of_trace: HashMap<i64, Vec<&BufferRecord>> = HashMap::new();
    for b in &heap.buffers {
        of_trace.entry(b.trace).or_default().push(b);
    }
    let mut out = Vec::new();
    for p in &heap.peaks {
        let Some(trace) = p.trace else { continue };
        let mut sums: BTreeMap<Option<&str>, (i64, usize)> = BTreeMap::new();
        for b in of_trace.get(&trace).into_iter().flatten() {
            let e = sums.entry(key(b)).or_default();
            e.0 += b.bytes;
            e.1 += 1;
        }
        let mut rows: Vec<GroupRecord> = sums
            .into_iter()
            .map(|(k, (bytes, n))| GroupRecord {
                program: p.program.clone(),
                program_id: p.program_id,
                trace,
                key: k.map(str::to_string),
                bytes,
                percent: percent_rounded(bytes, p.peak_bytes.unwrap_or(0)),
                buffers: n,
            })
            .collect();
        rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.key.cmp(&b.key)));
        out.extend(rows);
    }
    out
}
