//! Profiles for XLA's profile-guided latency estimator (`njx-pgle`): the
//! `ProfiledInstructionsProto` text files that the latency-hiding scheduler reads from
//! `--xla_gpu_pgle_profile_file_or_directory_path`, one `<fingerprint>.pbtxt` per program,
//! as nsys-jax's `nsys_jax/analyses/pgle_costs.py` writes them.
//!
//! The statistic is the peer's: over the steady-state executions of each thunk on every
//! device, its full GPU time (exposed plus hidden: `dur_ns + hidden_ns`), the slowest for
//! communication thunks and the fastest for compute thunks. Each instruction is written
//! under the name the scheduler knows it by, `OpMetadata.scheduling_name` from the
//! program's HLO dump; where the dump has none (XLA before the field, whose estimator
//! looked instructions up by their name, `instr->name()` in
//! `xla/service/profile_guided_latency_estimator.cc`) under its instruction name.
//!
//! Only aggregates are held ([`Costs`]): per (program, instruction, phase) the fastest
//! and slowest execution, per (program, phase) the module time that ranks programs, and
//! the scheduling names of the instructions that ran, taken from each archive's dumps as
//! they are decoded for the executions. Merges are exact (minima, maxima, sums, sets), so
//! the partial results of ranks reduce to the files of one process reading every rank.

use crate::derived::executions::{self, Executions, Phase, Variants, Warmup};
use crate::derived::partial;
use crate::error::{Error, Result};
use crate::hlo::ProgramKey;
use crate::output::notes::Notes;
use crate::output::numbers::us_exact;
use crate::output::{Format, write_records, write_table};
use crate::records::{Module, Thunk};
use crate::source::records::RecordStream;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

/// What `njx-pgle` reads.
#[derive(Debug, Clone)]
pub struct Options {
    /// Count initialisation executions too.
    pub include_warmup: bool,
    /// The folder the profiles are written into (one `<fingerprint>.pbtxt` per program);
    /// needed unless `partial`.
    pub dir: Option<PathBuf>,
    /// Write the aggregate as a partial result (kind [`PARTIAL`]) instead of the profiles.
    pub partial: bool,
    /// The summary's format (one row per profile written).
    pub format: Format,
}

impl Options {
    /// Refuses, before anything is read, options without a folder to write into (unless
    /// `partial`) and a folder that exists and is no folder.
    pub fn check(&self) -> Result<()> {
        match &self.dir {
            Some(dir) => match std::fs::metadata(dir) {
                Ok(m) if !m.is_dir() => Err(Error::Usage(format!(
                    "-o {}: not a folder (njx-pgle writes one file per program into it)",
                    dir.display()
                ))),
                _ => Ok(()),
            },
            None if !self.partial => Err(Error::Usage(
                "-o DIR is required: the folder to write the profiles into (or --partial)".into(),
            )),
            None => Ok(()),
        }
    }
}

/// Runs njx-pgle: reads `inputs`, then writes either the partial result to `out` or one
/// profile per program into `options.dir` and their summary to `out`.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    options.check()?;
    let costs = read(inputs, notes)?;
    if options.partial {
        return partial::write(out, PARTIAL, &costs);
    }
    let dir = options
        .dir
        .as_deref()
        .expect("checked: a folder without --partial");
    let profiles = profiles(&costs, options, notes);
    write_files(dir, &profiles, inputs)?;
    write_summary(options.format, &rows(&profiles, dir), out)
}

/// The executions of one thunk of one program in one phase: their full GPU time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Cost {
    /// Executions, over devices.
    n: u64,
    /// The fastest, ns.
    min_ns: i64,
    /// The slowest, ns.
    max_ns: i64,
    /// Whether it is a communication thunk.
    comm: bool,
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

    fn merge(&mut self, o: &Cost) {
        self.n = self.n.saturating_add(o.n);
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.comm |= o.comm;
    }

    /// The peer's statistic: the slowest execution of a communication thunk (what the
    /// scheduler has to hide), the fastest of a compute thunk.
    fn cost_ns(&self) -> i64 {
        if self.comm { self.max_ns } else { self.min_ns }
    }
}

/// What ranks a program, in one phase.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
struct Program {
    /// Module names it ran under (one, unless names differ between ranks).
    names: BTreeSet<String>,
    /// XLA's program ids it ran as.
    ids: BTreeSet<u64>,
    /// Module time over devices and executions, ns.
    module_ns: i64,
}

impl Program {
    fn merge(&mut self, o: &Program) {
        self.names.extend(o.names.iter().cloned());
        self.ids.extend(o.ids.iter().copied());
        self.module_ns = self.module_ns.saturating_add(o.module_ns);
    }
}

/// What a program's HLO dumps say of its instructions.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
struct Dump {
    /// The dump's `fingerprint_before_lhs` (the file name XLA looks for), where it has one;
    /// checked to be one ([`plain_fingerprint`]) when read from a partial result.
    #[serde(deserialize_with = "checked_fingerprint")]
    fingerprint: Option<String>,
    /// Instruction name → its scheduling name ("" where the dump has none), `None`
    /// where the dump has no such instruction; for the instructions that ran.
    names: BTreeMap<String, Option<String>>,
}

/// Whether `fingerprint` may name a profile file: XLA's fingerprints are hexadecimal (a
/// 128-bit fingerprint, 32 digits), so one plain path component. Anything else from an
/// input (`../x`, `/abs/x`, an empty name) would write outside the output folder or a file
/// of another form, and is refused naming the input.
fn plain_fingerprint(fingerprint: &str) -> bool {
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
    warmup: Warmup,
    #[serde(with = "crate::derived::partial::pairs")]
    programs: BTreeMap<(String, Phase), Program>,
    #[serde(with = "crate::derived::partial::pairs")]
    costs: BTreeMap<(String, String, Phase), Cost>,
    /// Program key → what its dumps say; absent for programs whose dumps were not read
    /// (record inputs).
    dumps: BTreeMap<String, Dump>,
    /// Scheduling names that differed between the dumps of one program:
    /// (program, instruction).
    conflicts: BTreeSet<(String, String)>,
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
    const KIND: &'static str = PARTIAL;
    const TABLE: &'static str = "modules|thunks";

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

/// One row of the summary on stdout.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Row {
    /// Module name.
    pub module: String,
    /// Fingerprint.
    pub fingerprint: String,
    /// Instructions written.
    pub instructions: u64,
    /// Of them communication.
    pub communication: u64,
    /// Steady-state module time, ms.
    pub module_ms: f64,
    /// The file written.
    pub file: String,
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
    let rule = costs.warmup.rule();
    let counts = |warmup: bool| options.include_warmup || !warmup;
    let mut programs: BTreeMap<&str, Program> = BTreeMap::new();
    for ((program, phase), p) in &costs.programs {
        if counts(rule.module_is_warmup(program, *phase)) {
            programs.entry(program).or_default().merge(p);
        }
    }
    let mut per_program: BTreeMap<&str, BTreeMap<&str, Cost>> = BTreeMap::new();
    for ((program, name, phase), c) in &costs.costs {
        if counts(rule.thunk_is_warmup(program, *phase)) {
            per_program
                .entry(program)
                .or_default()
                .entry(name)
                .and_modify(|have| have.merge(c))
                .or_insert(*c);
        }
    }
    let module_of = |program: &str| {
        programs
            .get(program)
            .map(|p| p.names.iter().cloned().collect::<Vec<_>>().join("/"))
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    let (mut fell_back, mut not_in_dump, mut records_only) = (0usize, 0usize, 0usize);
    for (program, thunks) in &per_program {
        let module = module_of(program);
        if *program == "unknown" {
            notes.note(format!(
                "program unknown ({} instructions): autotuning executions without an HLO \
                 dump, no profile written",
                thunks.len()
            ));
            continue;
        }
        let dump = costs.dumps.get(*program);
        let fingerprint = match dump {
            Some(d) => d.fingerprint.clone(),
            None => is_fingerprint(program).then(|| program.to_string()),
        };
        let Some(fingerprint) = fingerprint else {
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
            continue;
        };
        if dump.is_none() {
            records_only += thunks.len();
        }
        // Programs compiled from one HLO share a fingerprint (and XLA's file): their
        // executions count together, whatever their program ids.
        if let Some(p) = programs.get(program)
            && p.names.len() > 1
        {
            notes.note(format!(
                "fingerprint {program} ran under {} module names ({module}): one profile \
                 over all of them",
                p.names.len()
            ));
        }
        let mut entries = Vec::with_capacity(thunks.len());
        for (&instruction, c) in thunks {
            let scheduling = dump.and_then(|d| d.names.get(instruction));
            let name = match scheduling {
                Some(Some(s)) if !s.is_empty() => s.clone(),
                Some(Some(_)) => {
                    fell_back += 1;
                    instruction.to_string()
                }
                Some(None) => {
                    not_in_dump += 1;
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
        let mut seen: BTreeMap<&str, u32> = BTreeMap::new();
        for e in &entries {
            *seen.entry(&e.name).or_default() += 1;
        }
        let twice = seen.values().filter(|&&n| n > 1).count();
        if twice > 0 {
            notes.note(format!(
                "program {program} ({module}): {twice} scheduling names given to more than \
                 one instruction: each is written once per instruction (XLA keeps the last)"
            ));
        }
        out.push(Profile {
            fingerprint,
            module,
            module_ns: programs.get(program).map_or(0, |p| p.module_ns),
            entries,
        });
    }
    for (program, instruction) in &costs.conflicts {
        notes.note(format!(
            "program {program}: instruction {instruction} has different scheduling names in \
             different dumps of the program: the first read is written"
        ));
    }
    if fell_back > 0 {
        notes.note(format!(
            "{fell_back} instructions have no scheduling_name in their HLO dump (XLA before \
             OpMetadata.scheduling_name): written under their instruction name, which is what \
             that XLA's latency estimator looks up"
        ));
    }
    if not_in_dump > 0 {
        notes.note(format!(
            "{not_in_dump} thunks are no instruction of their program's HLO dump: written \
             under their thunk name"
        ));
    }
    if records_only > 0 {
        notes.note(format!(
            "{records_only} instructions from records, without their HLO dump: written \
             under their instruction name, not their scheduling name (give the archives \
             for scheduling names)"
        ));
    }
    // Two program keys with one fingerprint would write one file twice.
    let mut files: BTreeMap<String, usize> = BTreeMap::new();
    for p in &out {
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
    let mut by_module: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for p in &out {
        by_module.entry(&p.module).or_default().push(&p.fingerprint);
    }
    for (module, fingerprints) in by_module {
        if fingerprints.len() > 1 {
            notes.note(format!(
                "module {module} was compiled differently across devices: {} programs \
                 ({}), a profile each",
                fingerprints.len(),
                fingerprints.join(", ")
            ));
        }
    }
    out.sort_by(|a, b| {
        b.module_ns
            .cmp(&a.module_ns)
            .then_with(|| a.fingerprint.cmp(&b.fingerprint))
    });
    out
}

/// A name as a text-format string literal: quotes, backslashes and bytes outside
/// printable ASCII escaped (octal, as protobuf's own text printer does).
fn quoted(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push('"');
    for b in name.bytes() {
        match b {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            0x20..=0x7e => s.push(b as char),
            _ => {
                let _ = write!(s, "\\{b:03o}");
            }
        }
    }
    s.push('"');
    s
}

/// Writes a profile as XLA's `ProfiledInstructionsProto` text format: one
/// `costs { name: "…" cost_us: … }` line per instruction.
pub fn write_profile(profile: &Profile, out: &mut dyn Write) -> Result<()> {
    for e in &profile.entries {
        writeln!(
            out,
            "costs {{ name: {} cost_us: {} }}",
            quoted(&e.name),
            us_exact(e.cost_ns)
        )
        .map_err(Error::Output)?;
    }
    out.flush().map_err(Error::Output)
}

/// Writes each profile into `dir` as `<fingerprint>.pbtxt` (created if missing; each
/// file under a temporary name, then moved into place); nothing to write is an error
/// naming `inputs`.
pub fn write_files(dir: &std::path::Path, profiles: &[Profile], inputs: &[PathBuf]) -> Result<()> {
    if profiles.is_empty() {
        let place = inputs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        return Err(Error::data(
            place,
            "no thunk executions of a program with a fingerprint: no profile to write",
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display().to_string(), e))?;
    for p in profiles {
        let mut file = crate::output::open_output(Some(&dir.join(p.file_name())), inputs)?;
        write_profile(p, &mut file)?;
        file.finish()?;
    }
    Ok(())
}

/// The summary rows of the profiles written into `dir`.
pub fn rows(profiles: &[Profile], dir: &std::path::Path) -> Vec<Row> {
    profiles
        .iter()
        .map(|p| Row {
            module: p.module.clone(),
            fingerprint: p.fingerprint.clone(),
            instructions: p.entries.len() as u64,
            communication: p.entries.iter().filter(|e| e.comm).count() as u64,
            module_ms: p.module_ns as f64 / 1e6,
            file: dir.join(p.file_name()).display().to_string(),
        })
        .collect()
}

/// Writes the summary: a table for people, or records.
pub fn write_summary(format: Format, rows: &[Row], out: &mut dyn Write) -> Result<()> {
    if format != Format::Table {
        return write_records(out, format, rows);
    }
    if rows.is_empty() {
        writeln!(out, "No profile written.").map_err(Error::Output)?;
        return out.flush().map_err(Error::Output);
    }
    let mut t = vec![
        [
            "module ms",
            "instructions",
            "communication",
            "program",
            "fingerprint",
            "file",
        ]
        .map(String::from)
        .to_vec(),
    ];
    t.extend(rows.iter().map(|r| {
        vec![
            format!("{:.3}", r.module_ms),
            r.instructions.to_string(),
            r.communication.to_string(),
            r.module.clone(),
            r.fingerprint.clone(),
            r.file.clone(),
        ]
    }));
    write_table(out, &t, &[0, 1, 2])?;
    out.flush().map_err(Error::Output)
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
    fn names_are_quoted_as_text_format() {
        assert_eq!(quoted("fusion.12"), "\"fusion.12\"");
        assert_eq!(quoted("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(quoted("é"), "\"\\303\\251\"");
    }

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
