//! Execution records: XLA module and thunk executions per device (`njx-export --table
//! modules|thunks`), the frames nsys-jax's `load_profiler_data` builds, derived from each
//! profile's tables (the source layer's [`Profiles`](crate::source::Profiles)) and HLO
//! dumps ([`crate::hlo`]).
//!
//! Each profile's GPU projection, launcher threads and compiled programs are read, module
//! and thunk executions derived ([`derive`](mod@derive)), initialisation executions
//! marked, and, across several profiles, the device clocks aligned on the collectives that
//! span every device. Execution records written by `njx-export` are read back with
//! [`read_records`].
//!
//! Analyses that only aggregate read profiles one at a time ([`each_mapped`]): each profile's
//! executions come with their [`Phase`] (what is known of warm-up when it is read), and
//! [`Warmup`] decides the undecided ones once every profile has been seen, so memory
//! holds one profile per core, not every rank.
//!
//! An input path none of whose profiles holds an XLA module range (`XlaModule` NVTX ranges
//! with GPU work: a PyTorch or CUDA profile) has no executions to give: it is refused in
//! one line that says so and names the tools that read such a profile ([`NO_XLA`]), with
//! none of the notes of reading it (which would be about the GPU projection and HLO dumps
//! of programs it does not have). A tool that draws the other things it holds too
//! ([`visit_with`], [`WithoutXla::Skip`]) passes over it instead.
//!
//! The files, one job each:
//!
//! - `walk.rs`: the walks over input paths ([`each`], [`each_mapped`], [`visit`],
//!   [`load`], [`read_records`], [`each_thunk`]);
//! - `input.rs`: the executions of one input path, its profiles derived and programs
//!   keyed by the HLO dumps; `processes.rs`: the process numbering across inputs;
//!   `program_info.rs`: what the HLO dumps tell of programs and instructions;
//! - [`derive`](mod@derive): one profile's tables to module and thunk executions, with
//!   `layout2026.rs` for what XLA's layout since 2026 needs beyond nsys-jax and
//!   `building.rs` for what both build (the records of a profile, the thunk executions
//!   being made, what is asked of the dumps);
//!   [`thread_devices`]: which device each thread ran on;
//! - `warmup.rs`: [`Phase`], [`Warmup`], [`Rule`]; `variants.rs`: [`KeyBy`],
//!   [`Variants`]; `alignment.rs`: clock alignment ([`Alignment`], [`align_clocks`]);
//! - `spill.rs`: executions parked on disk between the two passes of [`visit`].

mod alignment;
mod building;
pub mod derive;
mod input;
mod layout2026;
mod processes;
mod program_info;
mod spill;
pub mod thread_devices;
mod variants;
mod walk;
mod warmup;

pub use alignment::{Alignment, Corrections, align_clocks};
pub use variants::{KeyBy, Variant, Variants, device_list};
pub use walk::{
    Execution, Hlo, NO_XLA, Want, WithoutXla, each, each_mapped, each_thunk, load, read_records,
    visit, visit_with,
};
pub use warmup::{Early, Phase, Rule, Warmup};

use crate::hlo::HloModule;
use crate::records::{Module, Thunk};
use std::collections::HashSet;
use std::sync::Arc;

/// Module and thunk executions of every profile read.
#[derive(Debug, Default)]
pub struct Executions {
    /// Which input path (its index among the paths read) these are of.
    pub input: usize,
    /// Module executions.
    pub modules: Vec<Module>,
    /// Thunk executions.
    pub thunks: Vec<Thunk>,
    /// Programs whose compilation the profiles recorded (`unknown` for compilations
    /// without a dump: autotuning candidates).
    pub compiled: HashSet<String>,
    /// The HLO dumps of the input's own archive that were read (in member order), when
    /// asked for ([`Kept::dumps`]): what an analysis needs of them beyond the records
    /// is taken while they are decoded, not decoded again.
    pub dumps: Vec<Arc<HloModule>>,
    /// The NVTX push/pop ranges of the input's profiles (in the order read, profile by
    /// profile), when asked for ([`Kept::ranges`]): the table is decoded anyway for the
    /// compilations it records, and a tool that also reports compile time takes them from
    /// there instead of decoding it again.
    pub ranges: Vec<crate::records::Range>,
    /// The programs each module name ran as, where, with their collective sequences.
    pub variants: Variants,
    /// The GPUs the input's profiles recorded (`TARGET_INFO_GPU`), profile by profile.
    pub gpus: Vec<crate::source::devices::gpus::Gpu>,
}

/// What travels with an input path's [`Executions`] beyond the records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Kept {
    /// The HLO dumps of the input's own archive ([`Executions::dumps`]); otherwise
    /// dropped once the executions are derived.
    pub dumps: bool,
    /// The push/pop ranges of its profiles ([`Executions::ranges`]).
    pub ranges: bool,
}

impl Kept {
    /// Nothing beyond the records.
    pub const NOTHING: Kept = Kept {
        dumps: false,
        ranges: false,
    };
}
