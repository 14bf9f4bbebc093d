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
use crate::source::records::TextKind;
use crate::source::{read_gpu_ops, split_inputs};
use std::path::PathBuf;

/// The kernels of `inputs`, by short name.
pub fn read(inputs: &[PathBuf], notes: &Notes) -> Result<Side> {
    let mut side = Side::new(By::Kernel);
    let mut parts = Side::new(By::Kernel);
    let mut seen = crate::derived::ranks::Seen::default();
    let profiles = split_inputs(inputs, "kernels", notes.progress(), &mut |mut s| {
        if s.kind == TextKind::JsonLines && s.first_line_has(&format!("\"{FIELD}\""))? {
            read_partials(s, PARTIAL, &mut seen, &mut |p: Side| parts.merge(p, notes))
        } else {
            side.add_records(s, notes)
        }
    })?;
    for path in profiles {
        read_gpu_ops(&path, Which::Kernels, notes, &mut |op| {
            if let GpuOp::Kernel(k) = op {
                side.add_kernel(&k);
            }
            Ok(())
        })?;
    }
    side.merge(parts, notes)?;
    side.seen = seen;
    Ok(side)
}
