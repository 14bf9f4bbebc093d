//! The executions of one input path: each of its profiles derived ([`super::derive`]),
//! programs keyed by the HLO dumps of its archive and of `--hlo`, an input without XLA
//! module ranges refused or passed over.

use super::derive::{self, Derived};
use super::processes::Processes;
use super::program_info::ArchivePrograms;
use super::variants::key_by_name;
use super::{Executions, Hlo, Kept, KeyBy, NO_XLA, WithoutXla};
use crate::error::{Error, Result};
use crate::hlo::{Dumps, ProgramKey};
use crate::output::notes::Notes;
use crate::output::progress::Progress;
use crate::source::{self, Archive, ProfileTables, Profiles, xla_names};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// A source of HLO dumps: an archive and its index.
type DumpSource = (Archive, Dumps);

/// The HLO dumps of `--hlo` paths: archives or XLA dump folders.
fn hlo_sources(paths: &[PathBuf], progress: &Progress) -> Result<Vec<DumpSource>> {
    paths
        .iter()
        .map(|p| {
            let a = source::open_dumps(p, progress)?;
            let dumps = Dumps::new(&a);
            Ok((a, dumps))
        })
        .collect()
}

/// The executions of every profile of `path` (the `k`-th input); an input none of whose
/// profiles holds an XLA module range is refused, or passed over, as `without` says, and
/// either way the notes of reading it are not said.
pub(super) fn load_path(
    path: &Path,
    k: usize,
    processes: &Processes,
    hlo: Hlo<'_>,
    keep: Kept,
    without: WithoutXla,
    notes: &Notes,
) -> Result<Executions> {
    let mut part = Executions {
        input: k,
        ..Executions::default()
    };
    let mut profiles = Profiles::open(path, notes.progress())?;
    profiles.keep_ranges(keep.ranges);
    if let Some(n) = profiles.processes_known() {
        processes.record(k, n);
    }
    // Said once the input is known to hold XLA module ranges.
    let held = notes.apart();
    let mut xla = false;
    let mut own = profiles.archive().map(|a| Dumps::new(a));
    let mut extra = hlo_sources(hlo.dumps, notes.progress())?;
    for i in 0..profiles.len() {
        let mut tables = profiles.tables(i, &held)?;
        part.ranges.append(&mut tables.ranges);
        part.gpus.append(&mut tables.gpus);
        let modules = (tables.gpu_ranges.iter()).any(|r| xla_names::is_module(&r.name));
        xla |= modules;
        let mut sources: Vec<(&mut Archive, &mut Dumps)> = Vec::new();
        if let (Some(a), Some(d)) = (profiles.archive(), own.as_mut()) {
            sources.push((a, d));
        }
        sources.extend(extra.iter_mut().map(|(a, d)| (a, d)));
        if sources.is_empty() && modules {
            held.note(format!(
                "{}: no HLO dumps (--hlo): programs are keyed by program id and communication \
                 is unknown",
                tables.place
            ));
        }
        // Process index of the profile's first process, where devices are numbered per
        // process: one process per profile of an archive.
        let first_process = || Ok(processes.first(k)? + i as u32);
        let place = tables.place.clone();
        let per_process = derive_profile(
            tables,
            first_process,
            hlo.key,
            &mut sources,
            &mut part,
            &held,
        )?;
        if let Some(n) = per_process {
            processes.check_per_process(n, &place, &held);
        }
    }
    match (xla, without) {
        (true, _) => notes.forward(held),
        (false, WithoutXla::Refuse) => {
            return Err(Error::data(source::place_of(path), NO_XLA));
        }
        (false, WithoutXla::Skip) => {}
    }
    if let (true, Some(own)) = (keep.dumps, own.as_mut()) {
        part.dumps = own.take_loaded();
    }
    Ok(part)
}

/// Derives the executions of one profile and adds them to `all`, the programs keyed by
/// the dumps of `sources` (the first that has a program's dump).
fn derive_profile<'s>(
    p: ProfileTables,
    first_process: impl FnOnce() -> Result<u32>,
    key_by: KeyBy,
    sources: &mut [(&'s mut Archive, &'s mut Dumps)],
    all: &mut Executions,
    notes: &Notes,
) -> Result<Option<u32>> {
    let mut programs = ArchivePrograms {
        sources,
        profile: &p.name,
        missing: HashSet::new(),
        unnamed: 0,
    };
    let mut first_process = Some(first_process);
    let mut derived = derive::derive(
        &p.name,
        &p.place,
        &p.gpu_ranges,
        &p.launchers,
        &mut || first_process.take().map_or(Ok(0), |f| f()),
        &mut programs,
    )?;
    for (id, name) in &p.compiled {
        // As nsys-jax's `_remap_program_id(…, allow_missing_protobuf=True)`: a
        // compilation without a dump (an autotuning candidate) is `unknown`. Its id too,
        // since executions without a dump are keyed by id (where nsys-jax stops).
        let key = programs.key(Some(*id), name)?;
        all.compiled.insert(match key_by {
            KeyBy::Name if !matches!(key, ProgramKey::Unknown) => name.clone(),
            _ => key.record(),
        });
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
        mut modules,
        mut thunks,
        notes: derived_notes,
        once,
        per_process,
    } = derived;
    all.variants.add_profile(&modules, &thunks);
    if key_by == KeyBy::Name {
        all.variants.keyed_by_name = true;
        key_by_name(&mut modules, &mut thunks);
    }
    for n in derived_notes {
        notes.note(format!("{}: {n}", p.place));
    }
    for n in once {
        notes.once(n);
    }
    all.modules.extend(modules);
    all.thunks.extend(thunks);
    Ok(per_process)
}
