//! Execution records: XLA module and thunk executions per device (`njx-export --table
//! modules|thunks`), the frames nsys-jax's `load_profiler_data` builds, derived from each
//! profile's tables (the source layer's [`Profiles`]) and HLO dumps ([`crate::hlo`]).
//!
//! Each profile's GPU projection, launcher threads and compiled programs are read, module
//! and thunk executions derived ([`derive`]), initialisation executions marked, and,
//! across several profiles, the device clocks aligned on the collectives that span every
//! device. Execution records written by `njx-export` are read back with [`read_records`].

pub mod derive;

use crate::error::Result;
use crate::hlo::{Dumps, ProgramKey};
use crate::notes::Notes;
use crate::parallel::parallel_map;
use crate::record::{Instance, Module, Thunk};
use crate::source::{self, Archive, ProfileTables, Profiles};
use derive::{Comm, Derived, ProgramInfo};
use serde::de::DeserializeOwned;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Module and thunk executions of every profile read.
#[derive(Debug, Default)]
pub struct Executions {
    /// Module executions.
    pub modules: Vec<Module>,
    /// Thunk executions.
    pub thunks: Vec<Thunk>,
    /// Programs whose compilation the profiles recorded (`unknown` for compilations
    /// without a dump: autotuning candidates).
    pub compiled: HashSet<String>,
}

/// Per-device clock corrections applied, nanoseconds to subtract from device times.
pub type Corrections = BTreeMap<u32, f64>;

/// Reads module and thunk executions from nsys-jax archives (every profile of each),
/// archives njx-capture wrote, nsys SQLite exports and `.nsys-rep` reports, aligning
/// device clocks across them when `align` is set. HLO dumps come from each archive
/// itself and from `hlo` (archives or XLA dump folders), the only source for SQLite
/// exports. What was left out or corrected goes to `notes`.
pub fn load(paths: &[PathBuf], hlo: &[PathBuf], align: bool, notes: &Notes) -> Result<Executions> {
    let mut all = Executions::default();
    // Archives are independent until the clocks are aligned: read them on every core
    // (decoding the xz-compressed tables and HLO dumps is most of the work), then merge
    // in input order so the output does not depend on scheduling.
    for (result, kept) in parallel_map(paths, |p| {
        let kept = Notes::kept();
        (load_path(p, hlo, &kept), kept)
    }) {
        let part = result?;
        notes.forward(kept);
        all.modules.extend(part.modules);
        all.thunks.extend(part.thunks);
        all.compiled.extend(part.compiled);
    }
    // nsys-jax decides warm-up over everything it analyses at once: a program compiled in
    // one profile, or communication in any, counts for all of them.
    let has_comm = all.thunks.iter().any(|t| t.comm);
    let mut warmup_notes = Vec::new();
    derive::mark_warmup(
        &mut all.modules,
        &mut all.thunks,
        &all.compiled,
        has_comm,
        &mut warmup_notes,
    );
    warmup_notes.into_iter().for_each(|n| notes.note(n));
    if let Some(corrections) = align.then(|| align_clocks(&mut all)).flatten() {
        for (device, ns) in &corrections {
            notes.note(format!(
                "clock alignment: device {device} corrected by {:+.6} ms",
                -ns / 1e6 + 0.0
            ));
        }
    }
    Ok(all)
}

/// Execution records (`table`: `modules` or `thunks`) from every input: record streams
/// (JSON Lines or CSV) as they are, profiles through [`load`] (clocks aligned when
/// `align`) and `pick`.
pub fn read_records<T: DeserializeOwned>(
    paths: &[PathBuf],
    table: &str,
    align: bool,
    notes: &Notes,
    pick: impl FnOnce(Executions) -> Vec<T>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    let profiles = source::split_inputs(paths, table, &mut |s| {
        s.read(&mut |r: T| {
            out.push(r);
            Ok(())
        })
        .map(drop)
    })?;
    if !profiles.is_empty() {
        out.extend(pick(load(&profiles, &[], align, notes)?));
    }
    Ok(out)
}

/// A source of HLO dumps: an archive and its index.
type DumpSource = (Archive, Dumps);

/// The HLO dumps of `--hlo` paths: archives or XLA dump folders.
fn hlo_sources(paths: &[PathBuf]) -> Result<Vec<DumpSource>> {
    paths
        .iter()
        .map(|p| {
            let a = source::open_dumps(p)?;
            let dumps = Dumps::new(&a);
            Ok((a, dumps))
        })
        .collect()
}

fn load_path(path: &Path, hlo: &[PathBuf], notes: &Notes) -> Result<Executions> {
    let mut part = Executions::default();
    let mut profiles = Profiles::open(path)?;
    let mut own = profiles.archive().map(|a| Dumps::new(a));
    let mut extra = hlo_sources(hlo)?;
    for i in 0..profiles.len() {
        let tables = profiles.tables(i, notes)?;
        let mut sources: Vec<(&mut Archive, &mut Dumps)> = Vec::new();
        if let (Some(a), Some(d)) = (profiles.archive(), own.as_mut()) {
            sources.push((a, d));
        }
        sources.extend(extra.iter_mut().map(|(a, d)| (a, d)));
        if sources.is_empty() && !tables.gpu_ranges.is_empty() {
            notes.note(format!(
                "{}: no HLO dumps (--hlo): programs are keyed by program id and communication \
                 is unknown",
                tables.place
            ));
        }
        derive_profile(tables, &mut sources, &mut part, notes)?;
    }
    Ok(part)
}

/// Derives the executions of one profile and adds them to `all`, the programs keyed by
/// the dumps of `sources` (the first that has a program's dump).
fn derive_profile<'s>(
    p: ProfileTables,
    sources: &mut [(&'s mut Archive, &'s mut Dumps)],
    all: &mut Executions,
    notes: &Notes,
) -> Result<()> {
    let mut programs = ArchivePrograms {
        sources,
        profile: &p.name,
        missing: HashSet::new(),
        unnamed: 0,
    };
    let mut derived = derive::derive(&p.name, &p.gpu_ranges, &p.launchers, &mut programs)?;
    for (id, name) in &p.compiled {
        // As nsys-jax's `_remap_program_id(…, allow_missing_protobuf=True)`: a
        // compilation without a dump (an autotuning candidate) is `unknown`. Its id too,
        // since executions without a dump are keyed by id (where nsys-jax stops).
        let key = programs.key(Some(*id), name)?;
        all.compiled.insert(key.record());
        if matches!(key, ProgramKey::Missing(_)) {
            all.compiled.insert(ProgramKey::Unknown.record());
        }
    }
    let (missing, unnamed) = (programs.missing, programs.unnamed);
    if !missing.is_empty() {
        let mut ids: Vec<_> = missing.into_iter().collect();
        ids.sort();
        derived.notes.push(format!(
            "no HLO dump of program{} {}: keyed by program id, communication unknown",
            if ids.len() == 1 { "" } else { "s" },
            ids.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if unnamed > 0 {
        derived.notes.push(format!(
            "{unnamed} thunk names are not instructions of their module's HLO: counted as compute"
        ));
    }
    let Derived {
        modules,
        thunks,
        notes: derived_notes,
    } = derived;
    for n in derived_notes {
        notes.note(format!("{}: {n}", p.place));
    }
    all.modules.extend(modules);
    all.thunks.extend(thunks);
    Ok(())
}

/// [`ProgramInfo`] from HLO dumps: each program's dump is looked for in every source in
/// turn (the profile's own archive first).
struct ArchivePrograms<'a, 's> {
    sources: &'a mut [(&'s mut Archive, &'s mut Dumps)],
    profile: &'a str,
    missing: HashSet<u64>,
    unnamed: usize,
}

impl ArchivePrograms<'_, '_> {
    fn key(&mut self, program_id: Option<u64>, name: &str) -> Result<ProgramKey> {
        for (archive, dumps) in self.sources.iter_mut() {
            match dumps.program_key(archive, self.profile, program_id, name)? {
                ProgramKey::Missing(_) => continue,
                key => return Ok(key),
            }
        }
        Ok(program_id.map_or(ProgramKey::Unknown, ProgramKey::Missing))
    }
}

impl ProgramInfo for ArchivePrograms<'_, '_> {
    fn program_key(&mut self, program_id: Option<u64>, name: &str) -> Result<String> {
        let key = self.key(program_id, name)?;
        if let ProgramKey::Missing(id) = key {
            self.missing.insert(id);
        }
        Ok(key.record())
    }

    fn communication(
        &mut self,
        program_id: u64,
        module: &str,
        instruction: &str,
    ) -> Result<Option<Comm>> {
        let mut hlo = None;
        for (archive, dumps) in self.sources.iter_mut() {
            hlo = dumps.load(archive, self.profile, program_id, module)?;
            if hlo.is_some() {
                break;
            }
        }
        let Some(hlo) = hlo else {
            return Ok(None);
        };
        let Some(inst) = hlo.instruction(instruction) else {
            self.unnamed += 1;
            return Ok(None);
        };
        Ok(inst.collective()?.map(|c| Comm {
            collective: c.kind.as_str().to_string(),
            group_size: c.group_size as u32,
            message_bytes: c.message_bytes,
        }))
    }
}

/// Aligns device clocks across profiles as nsys-jax's `align_profiler_data_timestamps`:
/// on the collectives whose groups span every profiled device, each device's clock is
/// corrected by the median over those collectives of how far its end time is from the
/// mean end time of all devices. Returns the corrections, or `None` where alignment does
/// not apply (one device, or no collective over all devices).
pub fn align_clocks(all: &mut Executions) -> Option<Corrections> {
    let comm: Vec<&Thunk> = all.thunks.iter().filter(|t| t.comm).collect();
    let devices: HashSet<u32> = comm.iter().map(|t| t.device).collect();
    let max_group = comm.iter().filter_map(|t| t.group_size).max()?;
    if max_group < 2 || devices.len() != max_group as usize {
        return None;
    }
    // End times (exposed + hidden) per collective instance.
    // Collective instance → (device, end) of each device.
    let mut instances: HashMap<Instance, Vec<(u32, i64)>> = HashMap::new();
    for t in comm.iter().filter(|t| t.group_size == Some(max_group)) {
        instances
            .entry(t.instance())
            .or_default()
            .push((t.device, t.start_ns + t.dur_ns + t.hidden_ns));
    }
    let mut skews: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for ends in instances.values() {
        let mean = ends.iter().map(|&(_, e)| e as f64).sum::<f64>() / ends.len() as f64;
        for &(d, e) in ends {
            skews.entry(d).or_default().push(e as f64 - mean);
        }
    }
    let corrections: Corrections = skews
        .into_iter()
        .map(|(d, mut s)| {
            s.sort_by(f64::total_cmp);
            let n = s.len();
            let median = if n % 2 == 1 {
                s[n / 2]
            } else {
                (s[n / 2 - 1] + s[n / 2]) / 2.0
            };
            (d, median)
        })
        .collect();
    let shift = |device: u32| corrections.get(&device).map_or(0, |c| c.round() as i64);
    for m in &mut all.modules {
        m.start_ns -= shift(m.device);
    }
    for t in &mut all.thunks {
        t.start_ns -= shift(t.device);
    }
    Some(corrections)
}
