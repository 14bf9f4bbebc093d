//! The aggregate of `njx-pgle`: per (program, instruction, phase) the fastest and slowest
//! execution of each thunk ([`Cost`]), per (program, phase) the module time that ranks
//! programs ([`Program`]), and what each program's HLO dumps say of the instructions that
//! ran ([`Dump`]); read from archives, record streams or partial results, merged exactly.

use crate::derived::executions::{self, Executions, Phase, Variants, Warmup};
use crate::derived::partial;
use crate::error::{Error, Result};
use crate::hlo::ProgramKey;
use crate::output::notes::Notes;
use crate::records::{Module, Thunk};
use crate::source::records::RecordStream;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The executions of one thunk of one program in one phase: their full GPU time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Cost {
    /// Executions, over devices.
    pub(super) n: u64,
    /// The fastest, ns.
    pub(super) min_ns: i64,
    /// The slowest, ns.
    pub(super) max_ns: i64,
    /// Whether it is a communication thunk.
    pub(super) comm: bool,
}

impl Cost {
    fn of(t: &Thunk) -> Cost {
        let full = t.dur_ns.saturating_add(t.hidden_ns);
        Cost {
            n: 1,
            min_ns: full,
            max_ns: full,
            comm: t.comm,
        }
    }

    pub(super) fn merge(&mut self, o: &Cost) {
        self.n = self.n.saturating_add(o.n);
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.comm |= o.comm;
    }

    /// The peer's statistic: the slowest execution of a communication thunk (what the
    /// scheduler has to hide), the fastest of a compute thunk.
    pub(super) fn cost_ns(&self) -> i64 {
        if self.comm { self.max_ns } else { self.min_ns }
    }
}

/// What ranks a program, in one phase.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Program {
    /// Module names it ran under (one, unless names differ between ranks).
    pub(super) names: BTreeSet<String>,
    /// XLA's program ids it ran as.
    pub(super) ids: BTreeSet<u64>,
    /// Module time over devices and executions, ns.
    pub(super) module_ns: i64,
}

impl Program {
    pub(super) fn merge(&mut self, o: &Program) {
        self.names.extend(o.names.iter().cloned());
        self.ids.extend(o.ids.iter().copied());
        self.module_ns = self.module_ns.saturating_add(o.module_ns);
    }
}

/// What a program's HLO dumps say of its instructions.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Dump {
    /// The dump's `fingerprint_before_lhs` (the file name XLA looks for), where it has one;
    /// checked to be one ([`plain_fingerprint`]) when read from a partial result.
    #[serde(deserialize_with = "checked_fingerprint")]
    pub(super) fingerprint: Option<String>,
    /// Instruction name → its scheduling name ("" where the dump has none), `None`
    /// where the dump has no such instruction; for the instructions that ran.
    pub(super) names: BTreeMap<String, Option<String>>,
}

/// Whether `fingerprint` may name a profile file: XLA's fingerprints are hexadecimal (a
/// 128-bit fingerprint, 32 digits), so one plain path component. Anything else from an
/// input (`../x`, `/abs/x`, an empty name) would write outside the output folder or a file
/// of another form, and is refused naming the input.
pub(super) fn plain_fingerprint(fingerprint: &str) -> bool {
    (1..=128).contains(&fingerprint.len()) && fingerprint.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Why `fingerprint` is refused.
fn bad_fingerprint(fingerprint: &str) -> String {
    format!(
        "fingerprint_before_lhs {fingerprint:?} is not a hexadecimal HLO fingerprint: it \
         cannot name a profile file (one plain file name in the output folder)"
    )
}

fn checked_fingerprint<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<String>, D::Error> {
    let f: Option<String> = Option::deserialize(d)?;
    match f {
        Some(f) if !plain_fingerprint(&f) => Err(serde::de::Error::custom(bad_fingerprint(&f))),
        f => Ok(f),
    }
}

/// Thunk costs of any number of inputs, and the partial result of `njx-pgle --partial`
/// (kind [`PARTIAL`]).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Costs {
    /// The ranks read into it: carried beside its data in partial results.
    #[serde(skip)]
    pub(crate) seen: crate::derived::ranks::Seen,

    pub(super) warmup: Warmup,
    #[serde(with = "crate::derived::partial::pairs")]
    pub(super) programs: BTreeMap<(String, Phase), Program>,
    #[serde(with = "crate::derived::partial::pairs")]
    pub(super) costs: BTreeMap<(String, String, Phase), Cost>,
    /// Program key → what its dumps say; absent for programs whose dumps were not read
    /// (record inputs).
    pub(super) dumps: BTreeMap<String, Dump>,
    /// Scheduling names that differed between the dumps of one program:
    /// (program, instruction).
    pub(super) conflicts: BTreeSet<(String, String)>,
}

/// The kind of [`Costs`]' partial results.
pub const PARTIAL: &str = "pgle";

impl Costs {
    fn module(&mut self, m: &Module, phase: Phase) {
        let p = self.programs.entry((m.program.clone(), phase)).or_default();
        if !p.names.contains(&m.name) {
            p.names.insert(m.name.clone());
        }
        p.ids.extend(m.program_id);
        p.module_ns = p.module_ns.saturating_add(m.dur_ns);
    }

    fn thunk(&mut self, t: &Thunk, phase: Phase) {
        // Thunk records name their module too: module records are not needed.
        let p = self.programs.entry((t.program.clone(), phase)).or_default();
        if !p.names.contains(&t.module) {
            p.names.insert(t.module.clone());
        }
        let c = Cost::of(t);
        self.costs
            .entry((t.program.clone(), t.name.clone(), phase))
            .and_modify(|have| have.merge(&c))
            .or_insert(c);
    }

    fn merge_dump(&mut self, program: String, dump: Dump) {
        let mine = self.dumps.entry(program.clone()).or_default();
        if mine.fingerprint.is_none() {
            mine.fingerprint = dump.fingerprint;
        }
        for (name, theirs) in dump.names {
            let slot = mine.names.entry(name.clone()).or_insert(None);
            match (slot.as_deref(), theirs) {
                (_, None) => {}
                (None, t) => *slot = t,
                (Some(a), Some(b)) if a == b || b.is_empty() => {}
                (Some(""), Some(b)) => *slot = Some(b),
                (Some(_), Some(_)) => {
                    self.conflicts.insert((program.clone(), name));
                }
            }
        }
    }
}

impl partial::Aggregate for Costs {
    fn seen(&self) -> &crate::derived::ranks::Seen {
        &self.seen
    }

    fn seen_mut(&mut self) -> &mut crate::derived::ranks::Seen {
        &mut self.seen
    }

    const KIND: &'static str = PARTIAL;
    const TABLE: &'static str = "modules|thunks";

    // GPU time per program: no figure compares a program's devices.
    fn compares_devices(&self) -> bool {
        false
    }

    fn add_records(&mut self, mut s: RecordStream, _: &Notes) -> Result<()> {
        if s.first_line_has("thunk_execution")? {
            s.read(&mut |t: Thunk| {
                self.thunk(&t, Phase::of_record(t.warmup));
                Ok(())
            })
        } else {
            s.read(&mut |m: Module| {
                self.module(&m, Phase::of_record(m.warmup));
                Ok(())
            })
        }
        .map(drop)
    }

    fn add_profile(&mut self, part: &Executions, _: &Notes) -> Result<()> {
        self.warmup.add(part);
        // A module compiled differently across ranks is a program (file) per fingerprint
        // here, said by `profiles`; the other tools' note on comparing them does not apply.
        self.warmup.variants = Variants::default();
        for m in &part.modules {
            self.module(m, Phase::of_profile(m.execution));
        }
        let mut ran: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for t in &part.thunks {
            self.thunk(t, Phase::of_profile(t.execution));
            ran.entry(&t.program).or_default().insert(&t.name);
        }
        // The dumps this input's executions were keyed with, in member order.
        for hlo in &part.dumps {
            let key = ProgramKey::of(hlo, hlo.id() as u64).record();
            let Some(names) = ran.get(key.as_str()) else {
                continue;
            };
            let fingerprint = hlo.fingerprint().map(str::to_string);
            if let Some(f) = fingerprint.as_deref().filter(|f| !plain_fingerprint(f)) {
                return Err(Error::data(hlo.place(), bad_fingerprint(f)));
            }
            let dump = Dump {
                fingerprint,
                names: names
                    .iter()
                    .map(|&n| {
                        let s = hlo.instruction(n).map(|i| i.scheduling_name().to_string());
                        (n.to_string(), s)
                    })
                    .collect(),
            };
            self.merge_dump(key, dump);
        }
        Ok(())
    }

    fn wants_dumps(&self) -> bool {
        true
    }

    fn merge(&mut self, other: Self, _: &Notes) -> Result<()> {
        self.warmup.merge(other.warmup);
        for (k, p) in other.programs {
            self.programs.entry(k).or_default().merge(&p);
        }
        for (k, c) in other.costs {
            self.costs
                .entry(k)
                .and_modify(|have| have.merge(&c))
                .or_insert(c);
        }
        for (program, dump) in other.dumps {
            self.merge_dump(program, dump);
        }
        self.conflicts.extend(other.conflicts);
        Ok(())
    }

    fn warmup(&self) -> &Warmup {
        &self.warmup
    }
}

/// Reads the thunk (and module) executions of every input: nsys-jax archives (one input
/// path at a time, with their HLO dumps), record streams of `njx-export --table
/// thunks|modules`, or partial results of `njx-pgle --partial`.
pub fn read(inputs: &[PathBuf], notes: &Notes) -> Result<Costs> {
    let keyed = executions::Hlo {
        dumps: &[],
        key: executions::KeyBy::Fingerprint,
    };
    partial::aggregate(inputs, keyed, notes, Costs::default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_of_partial_results_saturate_when_merged() {
        // A partial result may say anything: a count near 2^64 given twice must not
        // overflow (the fuzzer's pgle-partials found it).
        let big = Cost {
            n: u64::MAX - 1,
            min_ns: 1,
            max_ns: 2,
            comm: false,
        };
        let mut sum = big;
        sum.merge(&big);
        assert_eq!(sum.n, u64::MAX);
    }

    #[test]
    fn communication_takes_the_slowest_compute_the_fastest() {
        let mut c = Cost {
            n: 1,
            min_ns: 5,
            max_ns: 5,
            comm: false,
        };
        c.merge(&Cost {
            n: 1,
            min_ns: 3,
            max_ns: 9,
            comm: false,
        });
        assert_eq!((c.n, c.cost_ns()), (2, 3));
        c.comm = true;
        assert_eq!(c.cost_ns(), 9);
    }
}
