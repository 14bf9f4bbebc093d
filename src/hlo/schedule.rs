//! The order in which one execution of a program runs its collectives, from the dump's
//! schedule (`HloModuleProto.schedule`, field 7: per computation the ids of its
//! instructions in the order they run).
//!
//! XLA since 2026 may leave a collective without a thunk range of its own: the NVTX
//! range that then holds its GPU work is NCCL's `ncclGroupEnd` (NVIDIA/JAX-Toolbox PR
//! #2296 lists "communication represented only, or partially, by projected
//! `NCCL:ncclGroupEnd` ranges"). The thunks of a module run on one host thread in the
//! schedule's order (openxla/xla `thunk_executor.cc` runs the sequence of thunks emitted
//! from the scheduled entry computation), so the n-th NCCL range of an execution, in
//! host order, is the n-th collective of this order. `call`s are followed into, a
//! `while` loop is unrolled by its `known_trip_count` (its backend config), and the order
//! is unknown where collectives sit in a loop without a known trip count or in a
//! `conditional` (which branch ran is not in the profile).

use super::{COMM_OPCODES, COMM_START_OPCODES, CollectiveKind, HloModule, Instruction, Loc};
use crate::error::Result;
use std::collections::{HashMap, HashSet};

/// The most collectives one execution is unrolled to: a bound against trip counts that a
/// damaged dump makes huge.
const MAX_COLLECTIVES: usize = 1 << 20;

/// Calls nested deeper than this are not followed.
const MAX_DEPTH: usize = 64;

/// The collectives of one execution of a program, or why their order is not known.
#[derive(Debug)]
pub enum CollectiveOrder<'m> {
    /// The instructions that carry out each NCCL collective (the collective itself, or the
    /// one inside an `async-start`: [`Instruction::communication`]), in the order they run.
    Known(Vec<Instruction<'m>>),
    /// Why the order cannot be told from the dump.
    Unknown(String),
}

impl HloModule {
    /// The NCCL collectives one execution runs, in order (host offloads, which no NCCL
    /// range shows, are left out); see the module docs.
    pub fn collective_order(&self) -> Result<CollectiveOrder<'_>> {
        if self.schedule.is_empty() {
            return Ok(CollectiveOrder::Unknown("its dump has no schedule".into()));
        }
        let mut walk = Walk {
            module: self,
            out: Vec::new(),
            path: Vec::new(),
            runs: HashMap::new(),
        };
        Ok(match walk.computation(self.entry_computation_id)? {
            Some(why) => CollectiveOrder::Unknown(why),
            None => CollectiveOrder::Known(walk.out),
        })
    }

    /// Whether computation `id`, or one it calls, holds a collective.
    fn runs_collectives(&self, id: i64) -> bool {
        let mut seen = HashSet::new();
        let mut todo = vec![id];
        while let Some(id) = todo.pop() {
            if !seen.insert(id) {
                continue;
            }
            let Some(insts) = self.computation_instructions(id) else {
                continue;
            };
            for inst in insts {
                let op = inst.opcode();
                if COMM_OPCODES.contains(&op) || COMM_START_OPCODES.contains(&op) {
                    return true;
                }
                todo.extend(inst.called_ids());
            }
        }
        false
    }
}

struct Walk<'m> {
    module: &'m HloModule,
    out: Vec<Instruction<'m>>,
    /// The computations being walked, outermost first.
    path: Vec<i64>,
    /// [`HloModule::runs_collectives`] of each computation asked about: a loop body is
    /// walked once per trip, its nested loops asked about each time.
    runs: HashMap<i64, bool>,
}

impl<'m> Walk<'m> {
    fn runs_collectives(&mut self, id: i64) -> bool {
        let m = self.module;
        *self
            .runs
            .entry(id)
            .or_insert_with(|| m.runs_collectives(id))
    }

    /// Why the walk stops, once it has found more collectives than it may unroll.
    fn too_many(&self) -> Option<String> {
        (self.out.len() > MAX_COLLECTIVES)
            .then(|| format!("one execution would run more than {MAX_COLLECTIVES} collectives"))
    }

    /// Appends the collectives of computation `id` in schedule order; `Some(why)` where
    /// their order cannot be known.
    fn computation(&mut self, id: i64) -> Result<Option<String>> {
        let m = self.module;
        let (c, sequence) = match self.scheduled(id) {
            Ok(Some(found)) => found,
            Ok(None) => return Ok(None),
            Err(why) => return Ok(Some(why)),
        };
        let comp = &m.computations[c];
        self.path.push(id);
        for &inst_id in sequence {
            let Some(&i) = comp.ids.get(&inst_id) else {
                return Ok(Some(format!(
                    "the schedule of computation `{}` names instruction id {inst_id}, which it \
                     does not have",
                    comp.name
                )));
            };
            let inst = Instruction {
                module: m,
                loc: Loc {
                    comp: c as u32,
                    inst: i,
                },
            };
            if let Some(why) = self.instruction(&inst)? {
                return Ok(Some(why));
            }
        }
        self.path.pop();
        Ok(None)
    }

    /// Computation `id`'s index and its instruction ids in schedule order, once it is
    /// known to exist and to be callable here; `Ok(None)` where it is not in the schedule
    /// and runs no collective (nothing to walk), `Err(why)` where the walk stops.
    fn scheduled(&mut self, id: i64) -> std::result::Result<Option<(usize, &'m [i64])>, String> {
        let m = self.module;
        let Some(&c) = m.computation_ids.get(&id) else {
            return Err(format!(
                "its schedule names computation {id}, which does not exist"
            ));
        };
        let comp = &m.computations[c];
        if self.path.contains(&id) {
            return Err(format!("computation `{}` calls itself", comp.name));
        }
        if self.path.len() >= MAX_DEPTH {
            return Err(format!("calls are nested more than {MAX_DEPTH} deep"));
        }
        let Some(sequence) = m.schedule.get(&id) else {
            if self.runs_collectives(id) {
                return Err(format!(
                    "computation `{}` runs collectives but is not in the schedule",
                    comp.name
                ));
            }
            return Ok(None);
        };
        Ok(Some((c, sequence)))
    }

    /// Walks one instruction of a schedule: a collective is appended, a `call` followed, a
    /// `while` loop unrolled; `Some(why)` where the order cannot be known.
    fn instruction(&mut self, inst: &Instruction<'m>) -> Result<Option<String>> {
        if let Some(comm) = inst.communication()? {
            if CollectiveKind::from_opcode(comm.opcode()).is_some() {
                self.out.push(comm);
                return Ok(self.too_many());
            }
            return Ok(None);
        }
        let called = inst.called_ids();
        match inst.opcode() {
            "call" => {
                for &callee in called {
                    if let Some(why) = self.computation(callee)? {
                        return Ok(Some(why));
                    }
                }
                Ok(None)
            }
            "while" if called.iter().any(|&c| self.runs_collectives(c)) => {
                self.while_loop(inst, called)
            }
            "conditional" if called.iter().any(|&c| self.runs_collectives(c)) => Ok(Some(format!(
                "conditional `{}` runs collectives in a branch, and which branch ran is not in \
                 the profile",
                inst.name()
            ))),
            _ => Ok(None),
        }
    }

    /// Unrolls while loop `inst`, which runs collectives, calling computations `called`,
    /// by its known trip count; `Some(why)` where that cannot be done.
    fn while_loop(&mut self, inst: &Instruction<'m>, called: &[i64]) -> Result<Option<String>> {
        // XLA's `CreateFromProto`: a while's called computations are body, condition.
        let (Some(&body), 2) = (called.first(), called.len()) else {
            return Ok(Some(format!(
                "while loop `{}` does not call a body and a condition",
                inst.name()
            )));
        };
        if self.runs_collectives(called[1]) {
            return Ok(Some(format!(
                "the condition of while loop `{}` runs collectives",
                inst.name()
            )));
        }
        let Some(trips) = known_trip_count(inst)? else {
            return Ok(Some(format!(
                "while loop `{}` runs collectives and has no known trip count",
                inst.name()
            )));
        };
        for _ in 0..trips {
            let before = self.out.len();
            if let Some(why) = self.computation(body)? {
                return Ok(Some(why));
            }
            // Every trip walks the same body: one that adds nothing (its collectives in
            // loops of 0 trips) makes all of them add nothing.
            if self.out.len() == before {
                break;
            }
            if let Some(why) = self.too_many() {
                return Ok(Some(why));
            }
        }
        Ok(None)
    }
}

/// The `known_trip_count` of a while loop's backend config (XLA's `WhileLoopBackendConfig`
/// as JSON: `{"known_trip_count":{"n":"12"}}`), if it has one.
fn known_trip_count(inst: &Instruction<'_>) -> Result<Option<u64>> {
    let config = inst.proto()?.backend_config;
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(&config) else {
        return Ok(None);
    };
    let n = &json["known_trip_count"]["n"];
    Ok(match n {
        serde_json::Value::String(s) => s.parse().ok(),
        serde_json::Value::Number(v) => v.as_u64(),
        _ => None,
    })
}
