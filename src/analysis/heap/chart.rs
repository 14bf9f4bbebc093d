//! The curves of `--svg`: the live total over each trace's events, with its peak.

use super::records::{PeakRecord, ProgramHeap};

/// The curves of `--svg`: one per trace, named `program (id) trace N` (the trace only
/// where a program has several), with the index of its peak event.
pub fn curves(heaps: &[ProgramHeap]) -> Vec<crate::output::charts::HeapCurve> {
    let mut out = Vec::new();
    for h in heaps {
        let traced: Vec<&PeakRecord> = h.peaks.iter().filter(|p| p.trace.is_some()).collect();
        for (p, totals) in traced.iter().zip(&h.totals) {
            let name = if traced.len() > 1 {
                format!(
                    "{} ({}) trace {}",
                    p.program,
                    p.program_id,
                    p.trace.unwrap_or(0)
                )
            } else {
                format!("{} ({})", p.program, p.program_id)
            };
            let peak = p.peak_event.and_then(|e| usize::try_from(e).ok());
            out.push((name, totals.clone(), peak));
        }
    }
    out
}
