//! The kernel side of a comparison: CUDA kernels of SQLite exports, `.nsys-rep` reports
//! and archives that hold an export (not executions: a PyTorch profile has kernels too),
//! kernel records (`njx-export --table kernels`) and partial results of
//! `njx-diff --by kernel --partial`.

use super::By;
use super::side::{PARTIAL, Side};
use crate::derived::partial::{Aggregate, FIELD, read_partials};
use crate::error::Result;
use crate::output::notes::Notes;
use crate::source::gpu_ops::{GpuOp, Which};
use crate::source::records::{TextKind, firsts_by_device, keep_first};
use crate::source::{read_gpu_ops, split_inputs};
use std::path::PathBuf;

/// The kernels of `inputs`, by short name.
pub fn read(inputs: &[PathBuf], notes: &Notes) -> Result<Side> {
    let mut side = Side::new(By::Kernel);
    let mut parts = Side::new(By::Kernel);
    // A profile counts once: known by each device's first kernel (partial results carry
    // theirs).
    let mut seen = crate::derived::ranks::Seen::known_by("kernel");
    let profiles = split_inputs(inputs, "kernels", notes.progress(), &mut |mut s| {
        if s.kind == TextKind::JsonLines && s.first_line_has(&format!("\"{FIELD}\""))? {
            read_partials(s, PARTIAL, &mut seen, &mut |p: Side| parts.merge(p, notes))
        } else {
            let place = s.place.clone();
            let firsts = s.watch_ranks();
            side.add_records(s, notes)?;
            seen.add_firsts(firsts_by_device(&firsts), &place)
        }
    })?;
    for path in profiles {
        let mut firsts = std::collections::BTreeMap::new();
        read_gpu_ops(&path, Which::Kernels, notes, &mut |op| {
            if let GpuOp::Kernel(k) = op {
                keep_first(&mut firsts, k.device, k.start_ns);
                side.add_kernel(&k);
            }
            Ok(())
        })?;
        seen.add_firsts(firsts, &path.display().to_string())?;
    }
    side.merge(parts, notes)?;
    side.seen = seen;
    Ok(side)
}
