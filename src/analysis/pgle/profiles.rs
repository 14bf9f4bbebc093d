//! The profiles built from the aggregate ([`Costs`]): one per program with a fingerprint,
//! each instruction under its scheduling name, largest steady-state module time first; what
//! was left out or fell back to another name is said in the notes.

use super::Options;
use super::costs::{Cost, Costs, Dump, Program, plain_fingerprint};
use crate::output::notes::Notes;
use std::collections::BTreeMap;

/// One instruction's entry in a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The name written: the scheduling name, or the instruction name where there is none.
    pub name: String,
    /// The HLO instruction (thunk) it is the cost of.
    pub instruction: String,
    /// The cost, ns: the slowest execution of a communication thunk, the fastest of a
    /// compute thunk.
    pub cost_ns: i64,
    /// Whether it is a communication thunk.
    pub comm: bool,
    /// Executions it was taken over, over devices.
    pub executions: u64,
}

/// The profile of one program: one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Its fingerprint (`fingerprint_before_lhs`): the file is `<fingerprint>.pbtxt`.
    pub fingerprint: String,
    /// Module name(s) it ran under, `/`-joined.
    pub module: String,
    /// Steady-state module time, ns (what ranks the programs).
    pub module_ns: i64,
    /// One entry per instruction, by instruction name.
    pub entries: Vec<Entry>,
}

impl Profile {
    /// The file name: `<fingerprint>.pbtxt`.
    pub fn file_name(&self) -> String {
        format!("{}.pbtxt", self.fingerprint)
    }
}

/// Whether the program key of a record (no dump to ask) is a fingerprint, which names a
/// profile file: hexadecimal (XLA's 128-bit fingerprint, `25fa0b3e…`), not a program id
/// (decimal: XLA without `fingerprint_before_lhs`), `unknown` (autotuning) or a module
/// name (records written with `--program-key name`).
fn is_fingerprint(key: &str) -> bool {
    // One plain file name as a dump's fingerprint must be: a key of 129 or more hex
    // digits would name a file no file system takes (or none XLA looks for).
    plain_fingerprint(key) && (key.len() == 32 || !key.bytes().all(|b| b.is_ascii_digit()))
}

/// The profiles of an aggregate, largest steady-state module time first; what was left
/// out or fell back goes to `notes`.
pub fn profiles(costs: &Costs, options: &Options, notes: &Notes) -> Vec<Profile> {
    let counted = Counted::of(costs, options);
    let mut fallbacks = Fallbacks::default();
    let mut out = Vec::new();
    for (program, thunks) in &counted.thunks {
        out.extend(counted.profile(costs, program, thunks, &mut fallbacks, notes));
    }
    for (program, instruction) in &costs.conflicts {
        notes.note(format!(
            "program {program}: instruction {instruction} has different scheduling names in \
             different dumps of the program: the first read is written"
        ));
    }
    fallbacks.note(notes);
    drop_shared_fingerprints(&mut out, notes);
    note_compiled_differently(&out, notes);
    out.sort_by(|a, b| {
        b.module_ns
            .cmp(&a.module_ns)
            .then_with(|| a.fingerprint.cmp(&b.fingerprint))
    });
    out
}

/// The executions of an aggregate that count (the steady state's, or every one with
/// `include_warmup`), per program over its phases.
struct Counted<'a> {
    /// What ranks each program.
    programs: BTreeMap<&'a str, Program>,
    /// Each program's thunks, by instruction name.
    thunks: BTreeMap<&'a str, BTreeMap<&'a str, Cost>>,
}

impl<'a> Counted<'a> {
    /// The executions of `costs` that count as `options` say, merged over phases.
    fn of(costs: &'a Costs, options: &Options) -> Self {
        let rule = costs.warmup.rule();
        let counts = |warmup: bool| options.include_warmup || !warmup;
        let mut programs: BTreeMap<&str, Program> = BTreeMap::new();
        for ((program, phase), p) in &costs.programs {
            if counts(rule.module_is_warmup(program, *phase)) {
                programs.entry(program).or_default().merge(p);
            }
        }
        let mut thunks: BTreeMap<&str, BTreeMap<&str, Cost>> = BTreeMap::new();
        for ((program, name, phase), c) in &costs.costs {
            if counts(rule.thunk_is_warmup(program, *phase)) {
                thunks
                    .entry(program)
                    .or_default()
                    .entry(name)
                    .and_modify(|have| have.merge(c))
                    .or_insert(*c);
            }
        }
        Counted { programs, thunks }
    }

    /// The module name(s) `program` ran under, `/`-joined.
    fn module_of(&self, program: &str) -> String {
        self.programs
            .get(program)
            .map(|p| p.names.iter().cloned().collect::<Vec<_>>().join("/"))
            .unwrap_or_default()
    }

    /// The profile of `program` (of its `thunks`), or none where no file can be named for
    /// it (said in `notes`); instructions written under another name than their scheduling
    /// name are counted in `fallbacks`.
    fn profile(
        &self,
        costs: &Costs,
        program: &str,
        thunks: &BTreeMap<&str, Cost>,
        fallbacks: &mut Fallbacks,
        notes: &Notes,
    ) -> Option<Profile> {
        let module = self.module_of(program);
        if program == "unknown" {
            notes.note(format!(
                "program unknown ({} instructions): autotuning executions without an HLO \
                 dump, no profile written",
                thunks.len()
            ));
            return None;
        }
        let dump = costs.dumps.get(program);
        let fingerprint = fingerprint_of(program, &module, dump, notes)?;
        // Programs compiled from one HLO share a fingerprint (and XLA's file): their
        // executions count together, whatever their program ids.
        if let Some(p) = self.programs.get(program)
            && p.names.len() > 1
        {
            notes.note(format!(
                "fingerprint {program} ran under {} module names ({module}): one profile \
                 over all of them",
                p.names.len()
            ));
        }
        let entries = fallbacks.entries(thunks, dump);
        note_repeated_names(program, &module, &entries, notes);
        Some(Profile {
            fingerprint,
            module,
            module_ns: self.programs.get(program).map_or(0, |p| p.module_ns),
            entries,
        })
    }
}

/// The fingerprint that names `program`'s file: its dump's, or without a dump the program
/// key itself where it is one; none (said in `notes`, with why) where XLA would look for
/// no file of it.
fn fingerprint_of(
    program: &str,
    module: &str,
    dump: Option<&Dump>,
    notes: &Notes,
) -> Option<String> {
    let fingerprint = match dump {
        Some(d) => d.fingerprint.clone(),
        None => is_fingerprint(program).then(|| program.to_string()),
    };
    if fingerprint.is_none() {
        let id = program.bytes().all(|b| b.is_ascii_digit());
        notes.note(if dump.is_none() && !id {
            format!(
                "program {program} ({module}): records keyed by something else than the \
                 HLO fingerprint (njx-export --program-key name?), which XLA looks \
                 profiles up by: no profile written"
            )
        } else if dump.is_none() {
            format!(
                "program {program} ({module}): keyed by its program id, without \
                 fingerprint_before_lhs (no HLO dump of it, or XLA older than the \
                 attribute), so XLA would look for no file of it: no profile written"
            )
        } else {
            format!(
                "program {program} ({module}): no fingerprint_before_lhs in its HLO dump \
                 (XLA older than the attribute), so XLA would look for no file of it: \
                 no profile written"
            )
        });
    }
    fingerprint
}

/// Instructions written under another name than their scheduling name, by why; said once,
/// over all programs.
#[derive(Debug, Default)]
struct Fallbacks {
    /// Their dump has an empty scheduling name (XLA before the field).
    fell_back: usize,
    /// Thunks that are no instruction of their program's dump.
    not_in_dump: usize,
    /// From records, without a dump.
    records_only: usize,
}

impl Fallbacks {
    /// The entries of a program's `thunks`, each under its scheduling name in `dump`, or
    /// its instruction name where there is none (counted).
    fn entries(&mut self, thunks: &BTreeMap<&str, Cost>, dump: Option<&Dump>) -> Vec<Entry> {
        if dump.is_none() {
            self.records_only += thunks.len();
        }
        let mut entries = Vec::with_capacity(thunks.len());
        for (&instruction, c) in thunks {
            let scheduling = dump.and_then(|d| d.names.get(instruction));
            let name = match scheduling {
                Some(Some(s)) if !s.is_empty() => s.clone(),
                Some(Some(_)) => {
                    self.fell_back += 1;
                    instruction.to_string()
                }
                Some(None) => {
                    self.not_in_dump += 1;
                    instruction.to_string()
                }
                None => instruction.to_string(),
            };
            entries.push(Entry {
                name,
                instruction: instruction.to_string(),
                cost_ns: c.cost_ns(),
                comm: c.comm,
                executions: c.n,
            });
        }
        entries
    }

    /// Says how many instructions fell back to another name, and why.
    fn note(&self, notes: &Notes) {
        let Fallbacks {
            fell_back,
            not_in_dump,
            records_only,
        } = self;
        if *fell_back > 0 {
            notes.note(format!(
                "{fell_back} instructions have no scheduling_name in their HLO dump (XLA before \
                 OpMetadata.scheduling_name): written under their instruction name, which is what \
                 that XLA's latency estimator looks up"
            ));
        }
        if *not_in_dump > 0 {
            notes.note(format!(
                "{not_in_dump} thunks are no instruction of their program's HLO dump: written \
                 under their thunk name"
            ));
        }
        if *records_only > 0 {
            notes.note(format!(
                "{records_only} instructions from records, without their HLO dump: written \
                 under their instruction name, not their scheduling name (give the archives \
                 for scheduling names)"
            ));
        }
    }
}

/// Says how many scheduling names of `program` were given to more than one of its
/// instructions (each is written once per instruction).
fn note_repeated_names(program: &str, module: &str, entries: &[Entry], notes: &Notes) {
    let mut seen: BTreeMap<&str, u32> = BTreeMap::new();
    for e in entries {
        *seen.entry(&e.name).or_default() += 1;
    }
    let twice = seen.values().filter(|&&n| n > 1).count();
    if twice > 0 {
        notes.note(format!(
            "program {program} ({module}): {twice} scheduling names given to more than \
             one instruction: each is written once per instruction (XLA keeps the last)"
        ));
    }
}

/// Leaves out (said in `notes`) the profiles of a fingerprint that several programs have:
/// two program keys with one fingerprint would write one file twice.
fn drop_shared_fingerprints(out: &mut Vec<Profile>, notes: &Notes) {
    let mut files: BTreeMap<String, usize> = BTreeMap::new();
    for p in out.iter() {
        *files.entry(p.fingerprint.clone()).or_default() += 1;
    }
    out.retain(|p| {
        let n = files.get(&p.fingerprint).copied().unwrap_or(0);
        if n > 1 {
            notes.note(format!(
                "fingerprint {} belongs to {n} programs: no profile written for it",
                p.fingerprint
            ));
            files.insert(p.fingerprint.clone(), 0);
        }
        n == 1
    });
}

/// Says which modules ran as several programs (compiled differently across devices),
/// each with a profile of its own. Not in the words of the other tools' note that a
/// module was compiled differently: in `njx-export --table thunks | njx-pgle`, njx-export
/// said that already.
fn note_compiled_differently(out: &[Profile], notes: &Notes) {
    let mut by_module: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for p in out {
        by_module.entry(&p.module).or_default().push(&p.fingerprint);
    }
    for (module, fingerprints) in by_module {
        if fingerprints.len() > 1 {
            notes.note(format!(
                "module {module} ran as {} programs ({}): a profile each",
                fingerprints.len(),
                fingerprints.join(", ")
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_told_from_ids_and_names() {
        assert!(is_fingerprint("25fa0b3e673a92036f22550cd7bcb068"));
        assert!(is_fingerprint("12345678901234567890123456789012"));
        assert!(is_fingerprint("5fa0b3e"));
        assert!(!is_fingerprint("17"));
        assert!(!is_fingerprint("unknown"));
        assert!(!is_fingerprint("jit_f"));
        assert!(!is_fingerprint(""));
        assert!(is_fingerprint(&"a".repeat(128)));
        assert!(!is_fingerprint(&"a".repeat(129)));
        assert!(!is_fingerprint("../x"));
    }
}
