//! The mergeable aggregate of the report: [`Partial`], what the report needs of any
//! number of thunk executions (one rank's, `--partial`), merged exactly across ranks; and
//! the readings that fill it (with the [`timing::Timing`] where the job needs one).

use super::bandwidth::{bandwidth, of_no_time, say_no_time};
use super::{Options, keep_least_name, timing};
use crate::derived::executions::{self, Executions, Phase, Warmup};
use crate::derived::partial;
use crate::derived::programs::ProgramFilter;
use crate::error::Result;
use crate::output::notes::Notes;
use crate::records::Thunk;
use crate::source::records::RecordStream;
use crate::util::compact::Shared;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// One instance of a collective (program, execution, thunk, thunk execution, and the
/// phase of its execution) over the devices read so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Inst {
    /// Collective kind and message size (the least, should devices disagree).
    pub(super) kind: (Option<String>, Option<u64>),
    /// The fastest device's bus bandwidth, GB/s.
    pub(super) best_busbw: Option<f64>,
    /// Shortest and longest exposed time.
    pub(super) lo: i64,
    pub(super) hi: i64,
    /// The device that arrived last: shortest exposed time, then lowest device.
    pub(super) last: (i64, u32),
    /// Thunk executions (one per device).
    pub(super) count: u64,
}

impl Inst {
    fn of(t: &Thunk) -> Inst {
        Inst {
            kind: (t.collective.clone(), t.message_bytes),
            best_busbw: bandwidth(t).map(|b| b.1),
            lo: t.dur_ns,
            hi: t.dur_ns,
            last: (t.dur_ns, t.device),
            count: 1,
        }
    }

    fn merge(&mut self, o: &Inst) {
        if o.kind < self.kind {
            self.kind.clone_from(&o.kind);
        }
        self.best_busbw = match (self.best_busbw, o.best_busbw) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.lo = self.lo.min(o.lo);
        self.hi = self.hi.max(o.hi);
        self.last = self.last.min(o.last);
        self.count = self.count.saturating_add(o.count);
    }
}

/// (program, execution, thunk, thunk execution, phase).
pub(super) type InstKey = (String, u32, String, u32, Phase);

/// Thunk executions aggregated for the report: per collective instance over devices, per
/// module execution and device, per collective and device. What the report needs of any
/// number of inputs, and the partial result of `njx-collectives --partial` (kind
/// [`PARTIAL`]). Its size follows the instances of one rank (every rank runs the same
/// ones) and the module executions × devices, not the thunk executions.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Partial {
    /// The ranks read into it: carried beside its data in partial results.
    #[serde(skip)]
    pub(crate) seen: crate::derived::ranks::Seen,

    /// What the warm-up rule needs to know of the profiles read.
    pub(super) warmup: Warmup,
    #[serde(with = "crate::derived::partial::pairs")]
    pub(super) instances: BTreeMap<InstKey, Inst>,
    /// (collective, program, phase) → (hidden, full time).
    #[serde(with = "crate::derived::partial::pairs")]
    pub(super) hidden: BTreeMap<(String, String, Phase), (i64, i64)>,
    /// (program, phase) → module executions × devices, and Σ their GPU time (each from
    /// its first thunk's start to its last thunk's end on its device): [`Partial::fold`]
    /// of the spans of each input once it is read, so that the aggregate does not grow
    /// with the executions × devices.
    #[serde(with = "crate::derived::partial::pairs")]
    pub(super) module_time: BTreeMap<(String, Phase), (u64, i64)>,
    /// (program, execution, phase, device) → first start, last end of its thunks, for
    /// the input being read (the program key shared, [`Shared`]).
    #[serde(skip)]
    pub(super) spans: BTreeMap<SpanKey, (i64, i64)>,
    #[serde(skip)]
    keys: Shared,
    /// Program → module name (the least).
    pub(super) names: BTreeMap<String, String>,
    /// (device, program, phase) → communication thunk executions.
    #[serde(with = "crate::derived::partial::pairs")]
    pub(super) taking_part: BTreeMap<(u32, String, Phase), u64>,
}

/// A key of [`Partial::spans`]: (program, execution, phase, device).
pub(super) type SpanKey = (Arc<str>, u32, Phase, u32);

/// The kind of [`Partial`]'s partial results.
pub const PARTIAL: &str = "collectives";

impl Partial {
    fn add(&mut self, t: &Thunk, phase: Phase) {
        let program = self.keys.get(&t.program);
        let span = self
            .spans
            .entry((program, t.execution, phase, t.device))
            .or_insert((i64::MAX, i64::MIN));
        span.0 = span.0.min(t.start_ns);
        span.1 = span.1.max(t.start_ns + t.dur_ns + t.hidden_ns);
        keep_least_name(&mut self.names, &t.program, &t.module);
        if !t.comm {
            return;
        }
        let key = (
            t.program.clone(),
            t.execution,
            t.name.clone(),
            t.thunk_execution,
            phase,
        );
        match self.instances.get_mut(&key) {
            Some(i) => i.merge(&Inst::of(t)),
            None => {
                self.instances.insert(key, Inst::of(t));
            }
        }
        let h = self
            .hidden
            .entry((
                t.collective.clone().unwrap_or_default(),
                t.program.clone(),
                phase,
            ))
            .or_default();
        // Saturating: records read back may carry any times.
        h.0 = h.0.saturating_add(t.hidden_ns);
        h.1 = h.1.saturating_add(t.dur_ns + t.hidden_ns);
        *self
            .taking_part
            .entry((t.device, t.program.clone(), phase))
            .or_default() += 1;
    }

    /// Folds the spans of the executions read into [`Partial::module_time`]: called once
    /// an input is read whole, when every execution's span on its device is complete (by
    /// every reading that adds executions: profiles, record streams, and the readings of
    /// njx-collectives and njx-report that add thunk records one by one).
    pub(crate) fn fold(&mut self) {
        for ((program, _, phase, _), (s, e)) in std::mem::take(&mut self.spans) {
            let t = self
                .module_time
                .entry((program.to_string(), phase))
                .or_default();
            t.0 = t.0.saturating_add(1);
            t.1 = t.1.saturating_add(e.saturating_sub(s));
        }
    }

    /// Adds a thunk record (its warm-up already decided).
    pub fn add_record(&mut self, t: &Thunk) {
        self.warmup.variants.add(&t.module, &t.program, t.device);
        self.add(t, Phase::of_record(t.warmup));
    }

    /// Whether any communication counts (initialisation left out unless
    /// `include_warmup`, and the programs `programs` keeps only).
    pub(super) fn has_comm(&self, include_warmup: bool, programs: &ProgramFilter) -> bool {
        let rule = self.warmup.rule();
        self.instances.keys().any(|k| {
            (include_warmup || !rule.thunk_is_warmup(&k.0, k.4)) && self.keeps(programs, &k.0)
        })
    }

    /// Whether `programs` keeps `program` (by its key or its module name).
    pub(super) fn keeps(&self, programs: &ProgramFilter, program: &str) -> bool {
        programs.keeps(program, self.names.get(program).map_or("", String::as_str))
    }

    /// Refuses a `--program` or `--exclude-program` that names no program read, and says
    /// what the filter leaves out.
    pub fn check_programs(&self, programs: &ProgramFilter, notes: &Notes) -> Result<()> {
        let read = self.names.iter().map(|(k, n)| (k.as_str(), n.as_str()));
        if let Some(note) = programs.check(read)? {
            notes.note(note);
        }
        Ok(())
    }
}

/// The aggregate of the thunk executions of `inputs`: thunk records, partial results, or
/// profiles read one input path at a time through [`executions::each`] (no time in the
/// report depends on clock alignment: only durations and each device's own spans).
pub fn aggregate(inputs: &[PathBuf], key: executions::KeyBy, notes: &Notes) -> Result<Partial> {
    let hlo = executions::Hlo { dumps: &[], key };
    partial::aggregate(inputs, hlo, notes, Partial::default)
}

impl partial::Aggregate for Partial {
    fn seen(&self) -> &crate::derived::ranks::Seen {
        &self.seen
    }

    fn seen_mut(&mut self) -> &mut crate::derived::ranks::Seen {
        &mut self.seen
    }

    const KIND: &'static str = PARTIAL;
    const TABLE: &'static str = "thunks";

    fn add_records(&mut self, s: RecordStream, notes: &Notes) -> Result<()> {
        let place = s.place.clone();
        let mut no_time = 0;
        s.read(&mut |t: Thunk| {
            no_time += u64::from(of_no_time(&t));
            self.add_record(&t);
            Ok(())
        })?;
        self.fold();
        say_no_time(&place, no_time, notes);
        Ok(())
    }

    fn add_profile(&mut self, part: &Executions, notes: &Notes) -> Result<()> {
        self.warmup.add(part);
        let mut no_time = 0;
        for t in &part.thunks {
            no_time += u64::from(of_no_time(t));
            self.add(t, Phase::of_profile(t.execution));
        }
        self.fold();
        if let Some(t) = part.thunks.first() {
            say_no_time(&format!("profile {}", t.profile), no_time, notes);
        }
        Ok(())
    }

    fn merge(&mut self, mut other: Self, _: &Notes) -> Result<()> {
        other.fold();
        self.warmup.merge(other.warmup);
        for (k, i) in other.instances {
            match self.instances.get_mut(&k) {
                Some(mine) => mine.merge(&i),
                None => {
                    self.instances.insert(k, i);
                }
            }
        }
        for (k, (h, f)) in other.hidden {
            let e = self.hidden.entry(k).or_default();
            e.0 = e.0.saturating_add(h);
            e.1 = e.1.saturating_add(f);
        }
        for (k, (n, ns)) in other.module_time {
            let t = self.module_time.entry(k).or_default();
            t.0 = t.0.saturating_add(n);
            t.1 = t.1.saturating_add(ns);
        }
        for (program, name) in other.names {
            keep_least_name(&mut self.names, &program, &name);
        }
        for (k, n) in other.taking_part {
            let t = self.taking_part.entry(k).or_default();
            *t = t.saturating_add(n);
        }
        Ok(())
    }

    fn warmup(&self) -> &Warmup {
        &self.warmup
    }
}

/// The aggregate and the [`timing::Timing`] of `inputs` in one reading: thunk records,
/// or profiles with clocks aligned (two passes, [`executions::visit`]); partial results
/// cannot be compared across devices, so they are refused.
pub fn aggregate_with_timing(
    options: &Options,
    inputs: &[PathBuf],
    notes: &Notes,
) -> Result<(Partial, timing::Timing)> {
    let mut acc = Partial::default();
    let mut timing = timing::Timing::new(options.include_warmup);
    let mut no_time = 0;
    executions::each_thunk(inputs, options.program_key, true, notes, &mut |t| {
        no_time += u64::from(of_no_time(&t));
        acc.add_record(&t);
        // Every program informs the warm-up rule; the filtered ones are timed.
        if options.programs.keeps(&t.program, &t.module) {
            timing.add(&t);
        }
        Ok(())
    })?;
    acc.fold();
    say_no_time("the input", no_time, notes);
    Ok((acc, timing))
}
