//! One side of a comparison ([`Side`]): the samples of every key of one `--by`, of any
//! number of inputs, warm-up decided once every input is read; an [`Aggregate`], so a side
//! can be given as partial results (`njx-diff --by … --partial`, kind [`PARTIAL`]).
//!
//! Samples per key, exact integer sums merged in any order ([`Sums`]):
//! - `program`: the GPU time of each module execution (first to last thunk, as
//!   njx-modules), keyed by module name (fingerprints change when a program is
//!   recompiled);
//! - `instruction`: the GPU time of each execution of each thunk, keyed by (module name,
//!   instruction), with the module executions of its program (the value compared is the
//!   time per module execution) and what the dumps say of it ([`Signature`]);
//! - `collective`: the time of each communication thunk execution (exposed plus hidden: the
//!   time it ran, the time its bandwidth is of), keyed `KIND SIZE`, with its bus bandwidth;
//! - `compile-pass`: the time each compilation spends in each pass or range name, as
//!   njx-compile-summary attributes it (`--by name --passes`);
//! - `kernel`: the duration of each CUDA kernel, keyed by its short name.
//!
//! Memory follows the keys (and for `instruction` the distinct thunks), not the ranks.

use super::By;
use crate::analysis::collectives::bandwidth as bandwidth_of;
use crate::analysis::compile;
use crate::derived::executions::{Executions, Phase, Warmup, WithoutXla};
use crate::derived::partial::{self, Aggregate};
use crate::derived::programs::ProgramFilter;
use crate::error::Result;
use crate::hlo::{HloModule, proto};
use crate::output::notes::Notes;
use crate::records::{Kernel, Module, Range, Thunk};
use crate::source::records::RecordStream;
use crate::util::inference;
use crate::util::stats::Sums;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The kind of [`Side`]'s partial results.
pub const PARTIAL: &str = "diff";

/// The samples of one key of one program in one phase.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Acc {
    /// Samples.
    pub n: u64,
    /// Their sums.
    pub dur: Sums,
    /// Sum of the bus bandwidths of those that have one (collectives), GB/s.
    pub busbw: f64,
    /// How many have one.
    pub busbw_n: u64,
}

impl Acc {
    fn add(&mut self, ns: i64) {
        self.n += 1;
        self.dur.add(ns);
    }

    fn merge(&mut self, o: &Acc) {
        self.n = self.n.saturating_add(o.n);
        self.dur.merge(o.dur);
        self.busbw += o.busbw;
        self.busbw_n = self.busbw_n.saturating_add(o.busbw_n);
    }
}

/// What the dumps say of an instruction: how it is matched when its name is not stable
/// across a recompilation.
#[derive(Debug, Default, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Signature {
    /// HLO opcode.
    pub opcode: String,
    /// JAX op_name.
    pub op_name: String,
    /// The innermost Python frame (`file:line[function]`), or "".
    pub source: String,
    /// The result shape (`f32[8,128]`, tuples in parentheses).
    pub shape: String,
}

/// One side's samples per key (see the module docs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Side {
    /// The ranks read into it: carried beside its data in partial results.
    #[serde(skip)]
    pub(crate) seen: crate::derived::ranks::Seen,

    /// What the keys are.
    pub by: By,
    /// What the warm-up rule needs to know of the profiles read.
    warmup: Warmup,
    /// (key, program, phase) → samples.
    #[serde(with = "crate::derived::partial::pairs")]
    acc: BTreeMap<(String, String, Phase), Acc>,
    /// `instruction`: (program, phase) → module executions.
    #[serde(with = "crate::derived::partial::pairs")]
    executions: BTreeMap<(String, Phase), u64>,
    /// Program → module name (the least).
    names: BTreeMap<String, String>,
    /// `instruction`: (program, instruction) → what the dumps say of it.
    #[serde(with = "crate::derived::partial::pairs")]
    signatures: BTreeMap<(String, String), Signature>,
    /// The key of the last sample looked up, reused.
    #[serde(skip, default = "no_key")]
    scratch: (String, String, Phase),
}

fn no_key() -> (String, String, Phase) {
    (String::new(), String::new(), Phase::Steady)
}

/// The samples of one key that count, over its programs.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    /// Module name (`program`, `instruction`), else "".
    pub module: String,
    /// Instruction (`instruction`), else "".
    pub instruction: String,
    /// Samples.
    pub acc: Acc,
    /// Module executions of its programs (`instruction`).
    pub executions: u64,
    /// What the dumps say of it (`instruction`, where a dump was read).
    pub signature: Option<Signature>,
}

impl Key {
    /// The statistics of its samples, as compared: a mean (`program`, `collective`), the
    /// time per module execution (`instruction`), or a total (`kernel`, `compile-pass`).
    pub fn side(&self, by: By) -> inference::Side {
        let n = self.acc.n;
        let scale = match by {
            By::Program | By::Collective => 1.0,
            By::Instruction => n as f64 / self.executions.max(1) as f64,
            By::Kernel | By::CompilePass => n as f64,
        };
        inference::Side {
            n,
            mean: self.acc.dur.mean(n),
            sd: self.acc.dur.std(n),
            scale,
        }
    }

    /// The value compared, as exactly as it is known: a mean of the sums, the sum per
    /// module execution, or the sum itself (whole nanoseconds, exact in `f64` below 2⁵³).
    pub fn value(&self, by: By) -> f64 {
        let sum = self.acc.dur.sum() as f64;
        match by {
            By::Program | By::Collective => sum / self.acc.n.max(1) as f64,
            By::Instruction => sum / self.executions.max(1) as f64,
            By::Kernel | By::CompilePass => sum,
        }
    }

    /// Mean bus bandwidth, GB/s (`collective`).
    pub fn busbw(&self) -> Option<f64> {
        (self.acc.busbw_n > 0).then(|| self.acc.busbw / self.acc.busbw_n as f64)
    }
}

/// The keys of a side that count, and what was left out.
#[derive(Debug, Default)]
pub struct Settled {
    /// Key → its samples.
    pub keys: BTreeMap<String, Key>,
    /// Samples left out as warm-up.
    pub warmup: u64,
    /// Samples left out as autotuning (program `unknown`).
    pub autotuning: u64,
}

impl Side {
    /// An empty side of `by`.
    pub fn new(by: By) -> Side {
        Side {
            by,
            warmup: Warmup::default(),
            acc: BTreeMap::new(),
            executions: BTreeMap::new(),
            names: BTreeMap::new(),
            signatures: BTreeMap::new(),
            scratch: (String::new(), String::new(), Phase::Steady),
            seen: Default::default(),
        }
    }

    fn sample(&mut self, key: &str, program: &str, phase: Phase) -> &mut Acc {
        // Looked up with a reused key before inserting: no allocation per sample.
        let k = &mut self.scratch;
        k.0.clear();
        k.0.push_str(key);
        k.1.clear();
        k.1.push_str(program);
        k.2 = phase;
        if !self.acc.contains_key(k) {
            self.acc.insert(k.clone(), Acc::default());
        }
        self.acc.get_mut(k).expect("just inserted")
    }

    fn name(&mut self, program: &str, module: &str) {
        match self.names.get_mut(program) {
            Some(n) if module < n.as_str() => *n = module.to_string(),
            Some(_) => {}
            None => {
                self.names.insert(program.to_string(), module.to_string());
            }
        }
    }

    fn module(&mut self, m: &Module, phase: Phase) {
        match self.by {
            By::Program => {
                self.name(&m.program, &m.name);
                self.sample(&m.name, &m.program, phase).add(m.dur_ns);
            }
            By::Instruction => {
                self.name(&m.program, &m.name);
                *self
                    .executions
                    .entry((m.program.clone(), phase))
                    .or_default() += 1;
            }
            _ => {}
        }
    }

    fn thunk(&mut self, t: &Thunk, phase: Phase) {
        match self.by {
            By::Instruction => {
                self.name(&t.program, &t.module);
                self.sample(&t.name, &t.program, phase).add(t.dur_ns);
            }
            By::Collective if t.comm => {
                let key = collective_key(t);
                let busbw = bandwidth_of(t).map(|b| b.1);
                let acc = self.sample(&key, &t.program, phase);
                acc.add(t.dur_ns.saturating_add(t.hidden_ns));
                if let Some(bw) = busbw {
                    acc.busbw += bw;
                    acc.busbw_n += 1;
                }
            }
            _ => {}
        }
    }

    /// Adds one kernel (`kernel`).
    pub fn add_kernel(&mut self, k: &Kernel) {
        self.sample(&k.short_name, "", Phase::Steady).add(k.dur_ns);
    }

    /// Adds the compilations of push/pop ranges (`compile-pass`), in the order read.
    fn add_ranges(&mut self, ranges: Vec<Range>) -> Result<()> {
        for c in compile::compilations_of_ranges(ranges)? {
            for (key, ns) in &c.parts {
                self.sample(key, "", Phase::Steady).add(ns.round() as i64);
            }
        }
        Ok(())
    }

    /// Takes what the dumps of one input say of the instructions its thunks ran.
    fn add_signatures(&mut self, part: &Executions) -> Result<()> {
        let mut wanted: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for t in &part.thunks {
            wanted.entry(&t.program).or_default().insert(&t.name);
        }
        for hlo in &part.dumps {
            // Programs are keyed by module name ([`read`]); records keyed by fingerprint
            // name the dump's key.
            let fingerprint = crate::hlo::ProgramKey::of(hlo, hlo.id() as u64).record();
            let Some((key, names)) = [hlo.name(), fingerprint.as_str()]
                .into_iter()
                .find_map(|k| wanted.get_key_value(k))
            else {
                continue;
            };
            let key = key.to_string();
            for name in names {
                let k = (key.clone(), name.to_string());
                if self.signatures.contains_key(&k) {
                    continue;
                }
                if let Some(s) = signature(hlo, name)? {
                    self.signatures.insert(k, s);
                }
            }
        }
        Ok(())
    }

    /// The programs read: (key, module name); keyed by name, the two are one.
    pub fn programs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.names.iter().map(|(k, n)| (k.as_str(), n.as_str()))
    }

    /// The keys that count (steady state, autotuning left out), over their programs, of
    /// the programs `programs` keeps.
    pub fn settle(&self, programs: &ProgramFilter) -> Settled {
        let rule = self.warmup.rule();
        let mut out = Settled::default();
        let by_program = matches!(self.by, By::Program | By::Instruction | By::Collective);
        let left_out = |program: &str, phase: Phase| -> Option<bool> {
            if !by_program {
                return None;
            }
            if program == "unknown" {
                return Some(false);
            }
            let warm = match self.by {
                By::Program => rule.module_is_warmup(program, phase),
                _ => rule.thunk_is_warmup(program, phase),
            };
            warm.then_some(true)
        };
        // Module executions by the module rule, as njx-modules counts them.
        let mut executions: BTreeMap<&str, u64> = BTreeMap::new();
        for ((program, phase), n) in &self.executions {
            if program != "unknown" && !rule.module_is_warmup(program, *phase) {
                *executions.entry(program).or_default() += n;
            }
        }
        let mut programs_of: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
        for ((key, program, phase), acc) in &self.acc {
            // Partial results may carry empty entries: nothing to compare.
            if acc.n == 0 {
                continue;
            }
            if by_program
                && !programs.keeps(program, self.names.get(program).map_or("", String::as_str))
            {
                continue;
            }
            match left_out(program, *phase) {
                Some(true) => {
                    out.warmup += acc.n;
                    continue;
                }
                Some(false) => {
                    out.autotuning += acc.n;
                    continue;
                }
                None => {}
            }
            let module = self.names.get(program).cloned().unwrap_or_default();
            let name = match self.by {
                By::Instruction => format!("{module}/{key}"),
                _ => key.clone(),
            };
            let k = out.keys.entry(name.clone()).or_insert_with(|| Key {
                module: if matches!(self.by, By::Program | By::Instruction) {
                    module.clone()
                } else {
                    String::new()
                },
                instruction: if self.by == By::Instruction {
                    key.clone()
                } else {
                    String::new()
                },
                acc: Acc::default(),
                executions: 0,
                signature: None,
            });
            k.acc.merge(acc);
            if self.by == By::Instruction {
                if k.signature.is_none() {
                    k.signature = self
                        .signatures
                        .get(&(program.clone(), key.clone()))
                        .cloned();
                }
                programs_of.entry(name).or_default().insert(program);
            }
        }
        // The module executions of every program an instruction ran in (several where
        // programs are keyed by fingerprint), each counted once.
        for (name, programs) in programs_of {
            if let Some(k) = out.keys.get_mut(&name) {
                k.executions = programs
                    .iter()
                    .map(|p| executions.get(p).copied().unwrap_or(0))
                    .sum();
            }
        }
        out
    }
}

/// The key of a communication thunk: `KIND SIZE` (bytes), `?` for what it lacks.
fn collective_key(t: &Thunk) -> String {
    format!(
        "{} {}",
        t.collective.as_deref().unwrap_or("?"),
        t.message_bytes.map_or("?".to_string(), |b| b.to_string())
    )
}

/// What `hlo` says of instruction `name`, `None` where it has no such instruction.
fn signature(hlo: &HloModule, name: &str) -> Result<Option<Signature>> {
    let Some(inst) = hlo.instruction(name) else {
        return Ok(None);
    };
    let frames = inst.stack_frames()?;
    Ok(Some(Signature {
        opcode: inst.opcode().to_string(),
        op_name: inst.op_name().to_string(),
        source: frames.last().map(|f| f.to_string()).unwrap_or_default(),
        shape: inst.shape()?.map(|s| shape_text(&s)).unwrap_or_default(),
    }))
}

/// A shape as XLA prints it, without layouts: `f32[8,128]`, `(f32[8], s32[])`.
fn shape_text(s: &proto::ShapeProto) -> String {
    if !s.tuple_shapes.is_empty() {
        let parts: Vec<String> = s.tuple_shapes.iter().map(shape_text).collect();
        return format!("({})", parts.join(", "));
    }
    let ty = proto::PrimitiveType::try_from(s.element_type).map_or_else(
        |_| format!("type{}", s.element_type),
        |t| t.as_str_name().to_lowercase(),
    );
    let dims: Vec<String> = s.dimensions.iter().map(i64::to_string).collect();
    format!("{ty}[{}]", dims.join(","))
}

impl Aggregate for Side {
    fn seen(&self) -> &crate::derived::ranks::Seen {
        &self.seen
    }

    fn seen_mut(&mut self) -> &mut crate::derived::ranks::Seen {
        &mut self.seen
    }

    const KIND: &'static str = PARTIAL;
    const TABLE: &'static str = "modules|thunks|ranges";

    fn add_records(&mut self, mut s: RecordStream, _: &Notes) -> Result<()> {
        match self.by {
            By::CompilePass => {
                let mut ranges = Vec::new();
                s.read(&mut |r: Range| {
                    ranges.push(r);
                    Ok(())
                })?;
                self.add_ranges(ranges)
            }
            By::Kernel => s
                .read(&mut |k: Kernel| {
                    self.add_kernel(&k);
                    Ok(())
                })
                .map(drop),
            _ if s.first_line_has("thunk_execution")? => {
                // The module executions the thunks ran in, each counted once: what an
                // instruction's time per module execution divides by.
                let mut seen: std::collections::HashSet<(std::sync::Arc<str>, String, u32, u32)> =
                    std::collections::HashSet::new();
                s.read(&mut |t: Thunk| {
                    self.warmup.variants.add(&t.module, &t.program, t.device);
                    let phase = Phase::of_record(t.warmup);
                    if self.by == By::Instruction
                        && seen.insert((
                            t.profile.clone(),
                            t.program.clone(),
                            t.device,
                            t.execution,
                        ))
                    {
                        *self
                            .executions
                            .entry((t.program.clone(), phase))
                            .or_default() += 1;
                    }
                    self.thunk(&t, phase);
                    Ok(())
                })
                .map(drop)
            }
            // Module records: for instructions, the executions come with the thunk
            // records (both given would count them twice).
            _ => s
                .read(&mut |m: Module| {
                    self.warmup.variants.add(&m.name, &m.program, m.device);
                    if self.by == By::Program {
                        self.module(&m, Phase::of_record(m.warmup));
                    }
                    Ok(())
                })
                .map(drop),
        }
    }

    fn add_profile(&mut self, part: &Executions, _: &Notes) -> Result<()> {
        self.warmup.add(part);
        if self.by == By::CompilePass {
            return self.add_ranges(part.ranges.clone());
        }
        for m in &part.modules {
            self.module(m, Phase::of_profile(m.execution));
        }
        for t in &part.thunks {
            self.thunk(t, Phase::of_profile(t.execution));
        }
        if self.by == By::Instruction {
            self.add_signatures(part)?;
        }
        Ok(())
    }

    fn merge(&mut self, other: Self, _: &Notes) -> Result<()> {
        if other.by != self.by {
            return Err(crate::error::Error::Usage(format!(
                "a partial result of njx-diff --by {} is given where --by {} is compared: \
                 give the same --by as the partials were written with",
                other.by.name(),
                self.by.name()
            )));
        }
        self.warmup.merge(other.warmup);
        for (k, a) in other.acc {
            self.acc.entry(k).or_default().merge(&a);
        }
        for (k, n) in other.executions {
            *self.executions.entry(k).or_default() += n;
        }
        for (program, module) in other.names {
            self.name(&program, &module);
        }
        for (k, s) in other.signatures {
            self.signatures.entry(k).or_insert(s);
        }
        Ok(())
    }

    fn warmup(&self) -> &Warmup {
        &self.warmup
    }

    fn wants_dumps(&self) -> bool {
        self.by == By::Instruction
    }

    fn wants_ranges(&self) -> bool {
        self.by == By::CompilePass
    }

    fn without_xla(&self) -> WithoutXla {
        if self.by == By::CompilePass {
            WithoutXla::Skip
        } else {
            WithoutXla::Refuse
        }
    }
}

/// The side of `inputs` (records, partial results, profiles).
pub fn read(
    by: By,
    inputs: &[std::path::PathBuf],
    hlo: crate::derived::executions::Hlo<'_>,
    notes: &Notes,
) -> Result<Side> {
    partial::aggregate(inputs, hlo, notes, || Side::new(by))
}
