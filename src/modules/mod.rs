//! XLA module and thunk executions from nsys-jax archives (`njx-export --table
//! modules|thunks`), and their steady-state summary (`njx-modules`).
//!
//! Each profile's GPU projection table, thread names and HLO dumps are read, module and
//! thunk executions derived ([`derive`]), initialisation executions marked, and, across
//! several profiles, the device clocks aligned on the collectives that span every device.

pub mod derive;
pub mod tool;

use crate::error::{Error, Result};
use crate::export::GPU_PROJ_MEMBER;
use crate::hlo::{Dumps, ProgramKey};
use crate::input::archive::Archive;
use crate::input::records::{self, RecordStream, TextKind};
use crate::input::{self, Opened, gpuproj, pushpop, threads};
use crate::record::{GpuRange, Instance, Module, Thunk};
use crate::sqlite;
use derive::{Comm, Derived, ProgramInfo};
use serde::de::DeserializeOwned;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

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
/// exports. Messages about what was left out or corrected go to `note`.
pub fn load(
    paths: &[PathBuf],
    hlo: &[PathBuf],
    align: bool,
    note: &mut dyn FnMut(String),
) -> Result<Executions> {
    let mut all = Executions::default();
    // Archives are independent until the clocks are aligned: read them on every core
    // (decoding the xz-compressed tables and HLO dumps is most of the work), then merge
    // in input order so the output does not depend on scheduling.
    for result in parallel_map(paths, |p| load_path(p, hlo)) {
        let (part, notes) = result?;
        notes.into_iter().for_each(&mut *note);
        all.modules.extend(part.modules);
        all.thunks.extend(part.thunks);
        all.compiled.extend(part.compiled);
    }
    // nsys-jax decides warm-up over everything it analyses at once: a program compiled in
    // one profile, or communication in any, counts for all of them.
    let has_comm = all.thunks.iter().any(|t| t.comm);
    let mut notes = Vec::new();
    derive::mark_warmup(
        &mut all.modules,
        &mut all.thunks,
        &all.compiled,
        has_comm,
        &mut notes,
    );
    notes.into_iter().for_each(&mut *note);
    if let Some(corrections) = align.then(|| align_clocks(&mut all)).flatten() {
        for (device, ns) in &corrections {
            note(format!(
                "clock alignment: device {device} corrected by {:+.6} ms",
                -ns / 1e6 + 0.0
            ));
        }
    }
    Ok(all)
}

/// Sorts the inputs of a tool that reads executions: record streams (JSON Lines or CSV
/// written by `njx-export --table modules|thunks`, named `what` in messages) go to
/// `stream` as they are met, empty ones skipped; the profiles (archives, SQLite exports,
/// `.nsys-rep` reports) are returned, to be read together with [`load`].
pub fn split_inputs(
    paths: &[PathBuf],
    what: &str,
    stream: &mut dyn FnMut(RecordStream) -> Result<()>,
) -> Result<Vec<PathBuf>> {
    let mut profiles = Vec::new();
    for path in paths {
        if sqlite::report::is_report(path) {
            profiles.push(path.clone());
            continue;
        }
        match input::open(path)? {
            Opened::Archive(_) | Opened::Sqlite { .. } => profiles.push(path.clone()),
            Opened::Stream(mut s) => match records::sniff(&s.place, &mut s.reader)? {
                kind @ (TextKind::JsonLines | TextKind::RecordCsv) => stream(RecordStream {
                    place: s.place,
                    kind,
                    reader: s.reader,
                })?,
                TextKind::Empty => {}
                _ => {
                    return Err(Error::data(
                        s.place,
                        format!("not {what} records: expected njx-export --table {what} output"),
                    ));
                }
            },
            Opened::Parquet { place, .. } => {
                return Err(Error::data(
                    place,
                    format!("not {what} records, an nsys-jax archive or an nsys SQLite export"),
                ));
            }
        }
    }
    Ok(profiles)
}

/// Execution records (`table`: `modules` or `thunks`) from every input: record streams
/// (JSON Lines or CSV) as they are, profiles through [`load`] (clocks aligned when
/// `align`) and `pick`. Messages go to stderr prefixed by `tool`.
pub fn read_records<T: DeserializeOwned>(
    paths: &[PathBuf],
    table: &str,
    tool: &str,
    align: bool,
    pick: impl FnOnce(Executions) -> Vec<T>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    let profiles = split_inputs(paths, table, &mut |s| {
        s.read(&mut |r: T| {
            out.push(r);
            Ok(())
        })
        .map(drop)
    })?;
    if !profiles.is_empty() {
        out.extend(pick(load(&profiles, &[], align, &mut |n| {
            eprintln!("{tool}: {n}")
        })?));
    }
    Ok(out)
}

/// `f` applied to every item on a pool of threads (one per core), results in item order.
pub(crate) fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    if workers <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    results.lock().expect("no worker panicked")[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|r| r.expect("every item processed"))
        .collect()
}

fn load_path(path: &Path, hlo: &[PathBuf]) -> Result<(Executions, Vec<String>)> {
    let mut part = Executions::default();
    let mut notes = Vec::new();
    let mut note = |n: String| notes.push(n);
    let profile: Arc<str> = input::profile_name(path).into();
    if let Some((db, _exported)) = sqlite::report::open_report(path)? {
        load_sqlite(&db, &profile, hlo_sources(hlo)?, &mut part, &mut note)?;
        return Ok((part, notes));
    }
    match input::open(path)? {
        Opened::Archive(mut archive) if archive.find(GPU_PROJ_MEMBER).is_empty() => {
            // An archive njx-capture wrote: the SQLite export and the dumps beside it.
            let Some((db, _copy)) = sqlite::report::open_in_archive(&mut archive)? else {
                return Err(Error::data(
                    archive.place(),
                    format!(
                        "archive has no GPU projection table (looked for {GPU_PROJ_MEMBER} \
                         and {})",
                        sqlite::ARCHIVE_MEMBER
                    ),
                ));
            };
            let dumps = Dumps::new(&archive);
            let mut sources = vec![(archive, dumps)];
            sources.extend(hlo_sources(hlo)?);
            load_sqlite(&db, &profile, sources, &mut part, &mut note)?;
        }
        Opened::Archive(archive) => load_archive(archive, hlo, &mut part, &mut note)?,
        Opened::Sqlite { place } => {
            let db = sqlite::Db::open(path, &place)?;
            load_sqlite(&db, &profile, hlo_sources(hlo)?, &mut part, &mut note)?;
        }
        _ => {
            return Err(Error::data(
                input::place_of(path),
                "module and thunk tables are built from nsys-jax archives (.zip or an \
                 extracted directory), nsys SQLite exports or .nsys-rep reports",
            ));
        }
    }
    Ok((part, notes))
}

/// The HLO dumps of `--hlo` paths: archives or XLA dump folders.
fn hlo_sources(paths: &[PathBuf]) -> Result<Vec<(Archive, Dumps)>> {
    paths
        .iter()
        .map(|p| match input::open(p)? {
            Opened::Archive(a) => {
                let dumps = Dumps::new(&a);
                Ok((a, dumps))
            }
            _ => Err(Error::data(
                input::place_of(p),
                "--hlo takes nsys-jax archives or folders of XLA dumps",
            )),
        })
        .collect()
}

fn load_archive(
    archive: Archive,
    hlo: &[PathBuf],
    all: &mut Executions,
    note: &mut dyn FnMut(String),
) -> Result<()> {
    let members = archive.find(GPU_PROJ_MEMBER);
    let dumps = Dumps::new(&archive);
    let mut sources = vec![(archive, dumps)];
    sources.extend(hlo_sources(hlo)?);
    for member in members {
        let profile: Arc<str> = member.profile.as_str().into();
        let archive = &mut sources[0].0;
        let place = archive.member_place(&member.path);
        let mut ranges: Vec<GpuRange> = Vec::new();
        let mut push = |r: GpuRange| -> Result<()> {
            ranges.push(r);
            Ok(())
        };
        gpuproj::read_parquet(
            &place,
            &profile,
            archive.open_parquet(&member.path)?,
            &mut push,
        )?;
        let launchers = read_launchers(archive, &member.profile)?;
        let compiled = compiled_programs(archive, &member.profile)?;
        let profile_data = Profile {
            name: &profile,
            place: &place,
            ranges: &ranges,
            launchers: &launchers,
            compiled: &compiled,
        };
        derive_profile(profile_data, &mut sources, all, note)?;
    }
    Ok(())
}

/// Module and thunk executions of an nsys SQLite export, the HLO dumps from `sources`.
fn load_sqlite(
    db: &sqlite::Db,
    profile: &Arc<str>,
    mut sources: Vec<(Archive, Dumps)>,
    all: &mut Executions,
    note: &mut dyn FnMut(String),
) -> Result<()> {
    let mut ranges: Vec<GpuRange> = Vec::new();
    sqlite::gpuproj::read_gpu_ranges(db, profile, sqlite::Options::default(), note, &mut |r| {
        ranges.push(r);
        Ok(())
    })?;
    let launchers = sqlite::devices::launchers(db, note)?;
    let mut compiled = Vec::new();
    sqlite::nvtx::read_ranges(
        db,
        profile,
        sqlite::Options::default(),
        &mut |_| {},
        &mut |r| {
            compiled.extend(compiled_program(&r.name));
            Ok(())
        },
    )?;
    compiled.sort();
    compiled.dedup();
    if sources.is_empty() && !ranges.is_empty() {
        note(format!(
            "{}: no HLO dumps (--hlo): programs are keyed by program id and communication \
             is unknown",
            db.place()
        ));
    }
    let profile_data = Profile {
        name: profile,
        place: db.place(),
        ranges: &ranges,
        launchers: &launchers,
        compiled: &compiled,
    };
    derive_profile(profile_data, &mut sources, all, note)
}

/// What [`derive_profile`] needs of one profile.
struct Profile<'a> {
    name: &'a Arc<str>,
    place: &'a str,
    ranges: &'a [GpuRange],
    launchers: &'a [threads::Launcher],
    /// (program id, module name) of the compilations the profile recorded.
    compiled: &'a [(u64, String)],
}

/// Derives the executions of one profile and adds them to `all`, the programs keyed by
/// the dumps of `sources` (the first that has a program's dump).
fn derive_profile(
    p: Profile<'_>,
    sources: &mut [(Archive, Dumps)],
    all: &mut Executions,
    note: &mut dyn FnMut(String),
) -> Result<()> {
    let mut programs = ArchivePrograms {
        sources,
        profile: p.name,
        missing: HashSet::new(),
        unnamed: 0,
    };
    let mut derived = derive::derive(p.name, p.ranges, p.launchers, &mut programs)?;
    for (id, name) in p.compiled {
        // As nsys-jax's `_remap_program_id(…, allow_missing_protobuf=True)`: a
        // compilation without a dump (an autotuning candidate) is `unknown`. Its id too,
        // since executions without a dump are keyed by id (where nsys-jax stops).
        let key = match programs.key(Some(*id), name)? {
            ProgramKey::Fingerprint(f) => f,
            ProgramKey::Id(id) => id.to_string(),
            ProgramKey::Unknown => "unknown".to_string(),
            ProgramKey::Missing(id) => {
                all.compiled.insert(id.to_string());
                "unknown".to_string()
            }
        };
        all.compiled.insert(key);
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
        notes,
    } = derived;
    for n in notes {
        note(format!("{}: {n}", p.place));
    }
    all.modules.extend(modules);
    all.thunks.extend(thunks);
    Ok(())
}

/// The launcher threads of `profile`, from `thread-metadata.parquet`.
fn read_launchers(archive: &mut Archive, profile: &str) -> Result<Vec<threads::Launcher>> {
    let Some(path) = archive.member_for("thread-metadata.parquet", profile) else {
        return Ok(Vec::new());
    };
    let place = archive.member_place(&path);
    threads::read_launchers(&place, archive.open_parquet(&path)?)
}

/// (program id, module name) of an `XlaCompileBackend` range: a compilation.
fn compiled_program(name: &str) -> Option<(u64, String)> {
    let (module, id) = name
        .strip_prefix("TSL:XlaCompileBackend:#module=")?
        .strip_suffix('#')?
        .rsplit_once(",program_id=")?;
    Some((id.parse().ok()?, module.to_string()))
}

/// Programs whose compilation the profile recorded: (program id, module name) of its
/// `XlaCompileBackend` ranges.
fn compiled_programs(archive: &mut Archive, profile: &str) -> Result<Vec<(u64, String)>> {
    let mut found = Vec::new();
    for base in crate::export::PUSHPOP_MEMBERS {
        let Some(path) = archive.member_for(base, profile) else {
            continue;
        };
        let profile: Arc<str> = profile.into();
        let mut emit = |r: crate::record::Range| -> Result<()> {
            found.extend(compiled_program(&r.name));
            Ok(())
        };
        pushpop::read_member(archive, &path, &profile, &mut emit)?;
        found.sort();
        found.dedup();
        return Ok(found);
    }
    Ok(found)
}

/// [`ProgramInfo`] from HLO dumps: each program's dump is looked for in every source in
/// turn (the profile's own archive first).
struct ArchivePrograms<'a> {
    sources: &'a mut [(Archive, Dumps)],
    profile: &'a str,
    missing: HashSet<u64>,
    unnamed: usize,
}

impl ArchivePrograms<'_> {
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

impl ProgramInfo for ArchivePrograms<'_> {
    fn program_key(&mut self, program_id: Option<u64>, name: &str) -> Result<String> {
        Ok(match self.key(program_id, name)? {
            ProgramKey::Fingerprint(f) => f,
            ProgramKey::Id(id) => id.to_string(),
            ProgramKey::Unknown => "unknown".to_string(),
            ProgramKey::Missing(id) => {
                self.missing.insert(id);
                id.to_string()
            }
        })
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
