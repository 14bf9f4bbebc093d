//! What deriving executions builds and asks for: the records of one profile
//! ([`Derived`]), the thunk executions being built ([`ThunkRecords`]), and what the HLO
//! dumps tell of a program ([`ProgramInfo`]: communication, the order of collectives).
//! Shared by `derive.rs` (nsys-jax's rules) and `layout2026.rs` (XLA's 2026 layout).

use crate::error::Result;
use crate::records::{GpuRange, Module, Reconstructed, Thunk};
use hashbrown::HashMap;

/// A communication instruction, as the HLO describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comm {
    /// Collective kind (`all-gather`, `all-reduce`, …).
    pub collective: String,
    /// Devices taking part.
    pub group_size: u32,
    /// Message size in bytes, NCCL's conventions.
    pub message_bytes: u64,
}

/// What the HLO dumps tell about programs and instructions.
pub trait ProgramInfo {
    /// The stable key of XLA program `program_id` named `name` (its HLO fingerprint), or
    /// `unknown` when the range carries no program id (autotuning executions).
    fn program_key(&mut self, program_id: Option<u64>, name: &str) -> Result<String>;
    /// The communication `instruction` of program `program_id` (module `module`)
    /// performs, if any.
    fn communication(
        &mut self,
        program_id: u64,
        module: &str,
        instruction: &str,
    ) -> Result<Option<Comm>>;
    /// The unique id of `instruction` in the dump of program `program_id`: `None` where
    /// there is no dump, `Some(None)` where the dump has no such instruction.
    fn instruction_id(
        &mut self,
        program_id: u64,
        module: &str,
        instruction: &str,
    ) -> Result<Option<Option<i64>>>;
    /// The NCCL collectives one execution of program `program_id` runs, in order.
    fn collective_schedule(&mut self, program_id: u64, module: &str) -> Result<CollectiveSchedule>;
}

/// The collectives one execution of a program runs, in order, as the HLO schedule says.
#[derive(Debug, Clone)]
pub enum CollectiveSchedule {
    /// Each NCCL collective's instruction name (the thunk name it would have) and what it
    /// moves, in the order they run.
    Known(Vec<(String, Comm)>),
    /// Why the order is not known (no dump, no schedule, a loop without a trip count…).
    Unknown(String),
}

/// Module and thunk executions of one profile, with what was left out and why.
#[derive(Debug, Default)]
pub struct Derived {
    /// Module executions, in range order.
    pub modules: Vec<Module>,
    /// Thunk executions, by module execution then start.
    pub thunks: Vec<Thunk>,
    /// Messages for stderr: ranges left out and why.
    pub notes: Vec<String>,
    /// Messages for stderr said once per run: what was assumed alike for many profiles.
    pub once: Vec<String>,
    /// Devices per process, where devices were numbered per process.
    pub per_process: Option<u32>,
}

/// Each module range's program: (key, program id, short name).
pub(super) type Programs = HashMap<usize, (String, Option<u64>, String)>;

/// Thunk executions being built: (module execution, range id, thunk), and how many
/// executions of each thunk name each module execution has so far.
pub(super) struct ThunkRecords {
    /// (module execution, range id, thunk).
    pub(super) list: Vec<(usize, u64, Thunk)>,
    /// (module execution, thunk name) → executions so far.
    executions: HashMap<(usize, String), u32>,
}

impl ThunkRecords {
    /// Room for `n` thunk executions.
    pub(super) fn with_capacity(n: usize) -> ThunkRecords {
        ThunkRecords {
            list: Vec::with_capacity(n),
            executions: HashMap::new(),
        }
    }

    /// Adds the next execution of thunk `name` in module execution `mi` (`module`), over
    /// range `r`.
    pub(super) fn push(
        &mut self,
        mi: usize,
        module: &Module,
        name: String,
        r: &GpuRange,
        comm: Option<&Comm>,
        reconstructed: Option<Reconstructed>,
    ) {
        let n = self.executions.entry((mi, name.clone())).or_default();
        let thunk = thunk_of(module, name, *n, r, comm, reconstructed);
        self.list.push((mi, r.id, thunk));
        *n += 1;
    }
}

/// The execution of thunk `name` (its `n`-th in `module`'s execution) over range `r`.
pub(super) fn thunk_of(
    module: &Module,
    name: String,
    n: u32,
    r: &GpuRange,
    comm: Option<&Comm>,
    reconstructed: Option<Reconstructed>,
) -> Thunk {
    Thunk {
        profile: module.profile.clone(),
        program: module.program.clone(),
        program_id: module.program_id,
        module: module.name.clone(),
        execution: module.execution,
        device: module.device,
        name,
        thunk_execution: n,
        start_ns: r.start_ns,
        dur_ns: r.dur_ns,
        hidden_ns: 0,
        comm: comm.is_some(),
        warmup: false,
        collective: comm.map(|c| c.collective.clone()),
        group_size: comm.map(|c| c.group_size),
        message_bytes: comm.map(|c| c.message_bytes),
        reconstructed,
        autotuning: module.autotuning,
    }
}
