//! Warm-up (nsys-jax's `apply_warmup_heuristics`): each execution's [`Phase`] as far as is
//! known when it is read, what [`Warmup`] gathers of every profile, and the [`Rule`] it
//! decides once all are in.

use super::{Executions, Variants};
use hashbrown::HashSet;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Whether an execution is initialisation, as far as is known when it is read. Records
/// carry the answer (`njx-export` decided it over all its inputs); for executions 0 and
/// 1 of a program read from profiles it depends on every profile (whether the program's
/// compilation was profiled, whether any profile communicates) and [`Warmup`] decides
/// it at the end; later executions are always steady state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Steady state.
    Steady,
    /// Initialisation.
    Warmup,
    /// Execution 0 of a program, read from a profile.
    First,
    /// Execution 1 of a program, read from a profile.
    Second,
}

impl Phase {
    /// The phase of a record, from its `warmup` field.
    pub fn of_record(warmup: bool) -> Phase {
        if warmup { Phase::Warmup } else { Phase::Steady }
    }

    /// The phase of execution `execution` of a program, read from a profile.
    pub fn of_profile(execution: u32) -> Phase {
        match execution {
            0 => Phase::First,
            1 => Phase::Second,
            _ => Phase::Steady,
        }
    }

    fn execution(self) -> Option<u32> {
        match self {
            Phase::First => Some(0),
            Phase::Second => Some(1),
            _ => None,
        }
    }
}

/// What nsys-jax's warm-up rule (`apply_warmup_heuristics`) needs to know of all the
/// profiles read: the programs whose compilation was profiled, whether any profile
/// communicates, and which early executions exist. Small (programs, not executions),
/// and merged exactly in any order, so it travels in partial results.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warmup {
    /// Programs whose compilation a profile recorded.
    pub compiled: BTreeSet<String>,
    /// Whether any profile has a communication thunk.
    pub has_comm: bool,
    /// Module executions read from profiles.
    pub modules: Early,
    /// Thunk executions read from profiles.
    pub thunks: Early,
    /// The programs run under each module name, and where (absent from partial results
    /// written before it was added).
    #[serde(default)]
    pub variants: Variants,
}

/// Which executions 0 and 1 of which programs were read, and whether a later one was.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Early {
    /// (program, execution 0 or 1).
    pub early: BTreeSet<(String, u32)>,
    /// Whether an execution 2 or later was read.
    pub later: bool,
}

impl Early {
    /// Takes in the (program, execution) of every execution read, each distinct early
    /// pair copied once.
    pub(super) fn add<'a>(&mut self, executions: impl Iterator<Item = (&'a str, u32)>) {
        let mut seen: HashSet<(&str, u32)> = HashSet::new();
        for (program, execution) in executions {
            if execution >= 2 {
                self.later = true;
            } else if seen.insert((program, execution)) {
                self.early.insert((program.to_string(), execution));
            }
        }
    }
}

impl Warmup {
    /// Takes in what one profile's executions tell.
    pub fn add(&mut self, part: &Executions) {
        self.variants.merge(&part.variants);
        self.compiled.extend(part.compiled.iter().cloned());
        self.has_comm |= part.thunks.iter().any(|t| t.comm);
        self.modules.add(
            part.modules
                .iter()
                .map(|m| (m.program.as_str(), m.execution)),
        );
        self.thunks.add(
            part.thunks
                .iter()
                .map(|t| (t.program.as_str(), t.execution)),
        );
    }

    /// Takes in another's (of other profiles).
    pub fn merge(&mut self, other: Warmup) {
        self.compiled.extend(other.compiled);
        self.has_comm |= other.has_comm;
        self.variants.merge(&other.variants);
        for (mine, theirs) in [
            (&mut self.modules, other.modules),
            (&mut self.thunks, other.thunks),
        ] {
            mine.early.extend(theirs.early);
            mine.later |= theirs.later;
        }
    }

    /// The decision, once every profile is in.
    pub fn rule(&self) -> Rule<'_> {
        let steady = |e: &Early| {
            e.later
                || e.early
                    .iter()
                    .any(|(p, x)| *x >= threshold(&self.compiled, self.has_comm, p))
        };
        Rule {
            warmup: self,
            steady_modules: steady(&self.modules),
            steady_thunks: steady(&self.thunks),
        }
    }
}

/// Executions below this number are initialisation: the first of a program whose
/// compilation was profiled, one more when there is communication.
fn threshold(compiled: &BTreeSet<String>, has_comm: bool, program: &str) -> u32 {
    u32::from(compiled.contains(program)) + u32::from(has_comm)
}

/// nsys-jax's warm-up rule applied: which executions are initialisation.
#[derive(Debug, Clone, Copy)]
pub struct Rule<'a> {
    warmup: &'a Warmup,
    steady_modules: bool,
    steady_thunks: bool,
}

impl Rule<'_> {
    fn is_warmup(&self, any_steady: bool, program: &str, phase: Phase) -> bool {
        match phase.execution() {
            None => phase == Phase::Warmup,
            // When nothing would be left in steady state, nothing is marked (as nsys-jax
            // does, with a warning: [`Rule::note`]).
            Some(x) => {
                any_steady && x < threshold(&self.warmup.compiled, self.warmup.has_comm, program)
            }
        }
    }

    /// Whether a module execution of `program` in `phase` is initialisation.
    pub fn module_is_warmup(&self, program: &str, phase: Phase) -> bool {
        self.is_warmup(self.steady_modules, program, phase)
    }

    /// Whether a thunk execution of `program` in `phase` is initialisation.
    pub fn thunk_is_warmup(&self, program: &str, phase: Phase) -> bool {
        self.is_warmup(self.steady_thunks, program, phase)
    }

    /// The warning when profiles have module executions but none in steady state.
    pub fn note(&self) -> Option<String> {
        let m = &self.warmup.modules;
        ((!m.early.is_empty() || m.later) && !self.steady_modules).then(|| {
            "no steady-state execution identified: every execution counts as steady state; \
             profile more iterations"
                .to_string()
        })
    }
}
