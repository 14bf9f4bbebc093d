//! The records that flow between the tools. Each is a flat serde struct, so the same
//! definition writes JSON Lines and CSV and reads both back. Field names and meanings
//! are fixed by SPEC.md; fields may be added, never renamed.

use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A CPU-side NVTX push/pop range, with `nvtx_pushpop_trace` semantics.
///
/// `child_ns` is the wall time covered by the direct children and
/// `self_ns = dur_ns - child_ns`. For children on the range's own thread (the only kind
/// nsys reports) that is the sum of their durations. Children spliced in from worker
/// threads (`njx-ranges --splice-workers`) run in parallel, so they count as the span
/// from the first one's start to the last one's end (nsys-jax's parallel-region rule);
/// a parent's `self_ns` therefore never goes negative.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Range {
    /// Which input the range came from (archive stem, or profile name in a combined archive).
    pub profile: Arc<str>,
    /// Process id; null where the source does not record it (nsys-jax parquet tables).
    pub pid: Option<u64>,
    /// Thread id.
    pub tid: u64,
    /// Range id, unique within a profile.
    pub id: u64,
    /// Id of the parent range, null at a root.
    pub parent: Option<u64>,
    /// Nesting depth, 0 at a root.
    pub depth: u32,
    /// Start time, nanoseconds.
    pub start_ns: i64,
    /// End time, nanoseconds.
    pub end_ns: i64,
    /// `end_ns - start_ns`.
    pub dur_ns: i64,
    /// Wall time covered by the direct children.
    pub child_ns: i64,
    /// `dur_ns - child_ns`.
    pub self_ns: i64,
    /// Number of direct children.
    pub children: u32,
    /// Range name with its domain prefix (`TSL:XlaCompile:#module=…#`).
    pub name: String,
}
