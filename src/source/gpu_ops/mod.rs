//! The GPU operations of a profile, one record each: kernels ([`Kernel`]) and memory
//! copies and sets ([`Memop`]), with the CUDA API call that launched them and the NVTX
//! range around that call. Only nsys SQLite exports (and reports and archives holding
//! one) record them: [`sqlite`].
//!
//! [`Kernel`]: crate::records::Kernel
//! [`Memop`]: crate::records::Memop

pub mod sqlite;

use crate::records::{Kernel, Memop};

/// Which GPU operations to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// `CUPTI_ACTIVITY_KIND_KERNEL`.
    Kernels,
    /// `CUPTI_ACTIVITY_KIND_MEMCPY` and `…_MEMSET`.
    Memops,
}

impl Which {
    /// The name of the table (`njx-export --table …`).
    pub fn table(self) -> &'static str {
        match self {
            Which::Kernels => "kernels",
            Which::Memops => "memops",
        }
    }
}

/// One GPU operation record.
#[derive(Debug, Clone)]
pub enum GpuOp {
    /// A kernel execution.
    Kernel(Kernel),
    /// A memory copy or set.
    Memop(Memop),
}
