//! Profiles as containers of the tables that execution records are derived from: per
//! profile its GPU-projected ranges, its launcher threads and the programs it compiled,
//! and the archive that holds its HLO dumps. One implementation per container: nsys-jax
//! archives (every profile of a combine archive) and nsys SQLite exports (plain, a
//! `.nsys-rep` exported with nsys, or inside an archive njx-capture wrote).

use super::report::{self, Exported};
use super::sqlite::Db;
use super::{
    Archive, GPU_PROJ_MEMBER, Opened, PUSHPOP_MEMBERS, THREADS_MEMBER, devices, gpu_ranges,
    open_db, open_input, place_of, profile_name, ranges,
};
use crate::error::{Error, Result};
use crate::output::notes::Notes;
use crate::output::progress::Progress;
use crate::records::{GpuRange, Range};
use std::path::Path;
use std::sync::Arc;

/// The tables of one profile that execution records are derived from.
#[derive(Debug)]
pub struct ProfileTables {
    /// Profile name.
    pub name: Arc<str>,
    /// Where the GPU projection came from, for messages.
    pub place: String,
    /// NVTX ranges projected onto the GPU, in any order.
    pub gpu_ranges: Vec<GpuRange>,
    /// Threads that launch work on a device.
    pub launchers: devices::Launchers,
    /// (program id, module name) of the compilations the profile recorded, sorted.
    pub compiled: Vec<(u64, String)>,
    /// The profile's NVTX push/pop ranges, in the order read, where asked for
    /// ([`Profiles::keep_ranges`]); empty otherwise.
    pub ranges: Vec<Range>,
    /// The GPUs the profile recorded (`TARGET_INFO_GPU`), where it did.
    pub gpus: Vec<devices::gpus::Gpu>,
}

/// The profiles of one input.
pub struct Profiles {
    kind: Kind,
    /// Whether [`ProfileTables::ranges`] are kept.
    keep_ranges: bool,
}

enum Kind {
    /// An nsys-jax archive: one profile per GPU projection table.
    Archive {
        archive: Archive,
        members: Vec<super::archive::Member>,
    },
    /// An nsys SQLite export: one profile, named after the input. `archive` is the
    /// njx-capture archive it came from (which holds the dumps).
    Sqlite {
        /// Boxed: the connection and its state are far larger than the other variant.
        db: Box<Db>,
        name: Arc<str>,
        archive: Option<Archive>,
        _copy: Option<Exported>,
    },
}

impl Profiles {
    /// Opens the profiles of `path`: an nsys-jax archive (zip or folder, every profile of
    /// a combine archive), an archive njx-capture wrote, an nsys SQLite export or an
    /// `.nsys-rep` report (exported with nsys). What is read of it is said in `progress`.
    pub fn open(path: &Path, progress: &Progress) -> Result<Profiles> {
        let name: Arc<str> = profile_name(path).into();
        match open_input(path, progress)? {
            kind @ (Opened::Sqlite | Opened::Report) => {
                let (db, copy) = open_db(path, matches!(kind, Opened::Report), progress)?;
                Ok(Profiles {
                    kind: Kind::Sqlite {
                        db: Box::new(db),
                        name,
                        archive: None,
                        _copy: copy,
                    },
                    keep_ranges: false,
                })
            }
            Opened::Archive(mut archive) => {
                let members = archive.find(GPU_PROJ_MEMBER);
                if !members.is_empty() {
                    return Ok(Profiles {
                        kind: Kind::Archive { archive, members },
                        keep_ranges: false,
                    });
                }
                // An archive njx-capture wrote: the SQLite export and the dumps beside it.
                let (db, copy) =
                    report::open_in_archive(&mut archive, "GPU projection table", GPU_PROJ_MEMBER)?;
                Ok(Profiles {
                    kind: Kind::Sqlite {
                        db: Box::new(db),
                        name,
                        archive: Some(archive),
                        _copy: Some(copy),
                    },
                    keep_ranges: false,
                })
            }
            _ => Err(Error::data(
                place_of(path),
                "module and thunk tables are built from nsys-jax archives (.zip or an \
                 extracted directory), nsys SQLite exports or .nsys-rep reports",
            )),
        }
    }

    /// Keeps (or not) each profile's push/pop ranges in its [`ProfileTables::ranges`]:
    /// read anyway from archives for the compilations they record, read again from SQLite.
    /// Their notes are said then, as where they are read for their ranges.
    pub fn keep_ranges(&mut self, keep: bool) {
        self.keep_ranges = keep;
    }

    /// How many profiles the input holds.
    pub fn len(&self) -> usize {
        match &self.kind {
            Kind::Archive { members, .. } => members.len(),
            Kind::Sqlite { .. } => 1,
        }
    }

    /// How many processes the input's profiles hold: one per profile of an archive, those
    /// that ran XLA programs in an SQLite export. Processes are numbered in input order
    /// where devices are numbered per process.
    pub fn processes(&self) -> Result<u32> {
        match &self.kind {
            Kind::Archive { members, .. } => Ok(members.len() as u32),
            Kind::Sqlite { db, .. } => devices::sqlite::xla_processes(db),
        }
    }

    /// [`Profiles::processes`] where it is known without reading: for archives.
    pub fn processes_known(&self) -> Option<u32> {
        match &self.kind {
            Kind::Archive { members, .. } => Some(members.len() as u32),
            Kind::Sqlite { .. } => None,
        }
    }

    /// Whether the input holds no profile.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The archive the input is or came from, where its own HLO dumps are; `None` for a
    /// plain SQLite export or report.
    pub fn archive(&mut self) -> Option<&mut Archive> {
        match &mut self.kind {
            Kind::Archive { archive, .. } => Some(archive),
            Kind::Sqlite { archive, .. } => archive.as_mut(),
        }
    }

    /// Reads the tables of the `i`-th profile; notes about what the tables lack go to
    /// `notes`.
    pub fn tables(&mut self, i: usize, notes: &Notes) -> Result<ProfileTables> {
        let keep = self.keep_ranges;
        match &mut self.kind {
            Kind::Archive { archive, members } => {
                let member = &members[i];
                let name: Arc<str> = member.profile.as_str().into();
                let place = archive.member_place(&member.path);
                let mut gpu = Vec::new();
                gpu_ranges::parquet::read_parquet(
                    &place,
                    &name,
                    archive.open_parquet(&member.path)?,
                    &mut |r| {
                        gpu.push(r);
                        Ok(())
                    },
                )?;
                let launchers = match archive.member_for(THREADS_MEMBER, &member.profile) {
                    Some(path) => {
                        let place = archive.member_place(&path);
                        devices::Launchers::named(devices::parquet::read_launchers(
                            &place,
                            archive.open_parquet(&path)?,
                        )?)
                    }
                    None => devices::Launchers::None,
                };
                let gpus = match archive.member_for(devices::gpus::DEVICES_MEMBER, &member.profile)
                {
                    Some(path) => {
                        let place = archive.member_place(&path);
                        devices::gpus::from_parquet(&place, archive.open_parquet(&path)?)?
                    }
                    None => Vec::new(),
                };
                let mut ranges = Vec::new();
                let compiled = archive_compiled(
                    archive,
                    &member.profile,
                    keep.then_some((&mut ranges, notes)),
                )?;
                Ok(ProfileTables {
                    name,
                    place,
                    gpu_ranges: gpu,
                    launchers,
                    compiled,
                    ranges,
                    gpus,
                })
            }
            Kind::Sqlite { db, name, .. } => {
                // The NVTX ranges are loaded once, for the projection and the compilations.
                let mut nvtx = ranges::nvtx::load(db, ranges::nvtx::StartEnd::Skip)?;
                // Only push/pop ranges are read, so their names are all the names read.
                let mut compiled: Vec<(u64, String)> = nvtx
                    .iter()
                    .flat_map(|n| n.names().filter_map(compiled_program))
                    .collect();
                let mut gpu = Vec::new();
                match &mut nvtx {
                    Some(nvtx) => {
                        gpu_ranges::sqlite::project(db, nvtx, name, notes, &mut |r| {
                            gpu.push(r);
                            Ok(())
                        })?;
                    }
                    None => notes.note(ranges::nvtx::no_nvtx(db)),
                }
                let launchers = devices::sqlite::launchers(db)?;
                let xla_payloads: Vec<String> = db
                    .payload_schemas()?
                    .into_iter()
                    .filter(|s| s.starts_with("Xla"))
                    .collect();
                if !xla_payloads.is_empty() {
                    // Nothing silently left aside: say what is there and where it is read.
                    notes.note(format!(
                        "{}: holds XLA's structured NVTX payloads (schemas {}): `njx-export \
                         --table payloads` decodes them; here the thunks' instructions come \
                         from their range names, collectives' kinds and sizes from the HLO \
                         dumps (--hlo), as the payloads give their text only as NVTX string \
                         handles",
                        db.place(),
                        xla_payloads.join(", ")
                    ));
                }
                compiled.sort();
                compiled.dedup();
                let mut ranges = Vec::new();
                if keep {
                    let options = super::Options::default();
                    ranges::nvtx::read_ranges(db, name, options, notes, &mut |r| {
                        ranges.push(r);
                        Ok(())
                    })?;
                }
                Ok(ProfileTables {
                    name: name.clone(),
                    place: db.place().to_string(),
                    gpu_ranges: gpu,
                    launchers,
                    compiled,
                    ranges,
                    gpus: devices::gpus::from_sqlite(db)?,
                })
            }
        }
    }
}

/// (program id, module name) of an `XlaCompileBackend` range: a compilation.
fn compiled_program(name: &str) -> Option<(u64, String)> {
    let (module, id) = name
        .strip_prefix("TSL:XlaCompileBackend:#module=")?
        .strip_suffix('#')?
        .rsplit_once(",program_id=")?;
    Some((id.parse().ok()?, module.to_string()))
}

/// Programs whose compilation `profile` of an nsys-jax archive recorded: (program id,
/// module name) of the `XlaCompileBackend` ranges of its push/pop table; with `keep`, its
/// ranges too, the table's notes said to its notes.
fn archive_compiled(
    archive: &mut Archive,
    profile: &str,
    mut keep: Option<(&mut Vec<Range>, &Notes)>,
) -> Result<Vec<(u64, String)>> {
    let mut found = Vec::new();
    for base in PUSHPOP_MEMBERS {
        let Some(path) = archive.member_for(base, profile) else {
            continue;
        };
        let profile: Arc<str> = profile.into();
        // The table's notes are said where it is read for its ranges.
        let dropped = crate::output::notes::Notes::kept();
        let notes = keep.as_ref().map_or(&dropped, |k| k.1);
        let mut emit = |r: Range| -> Result<()> {
            found.extend(compiled_program(&r.name));
            if let Some((kept, _)) = keep.as_mut() {
                kept.push(r);
            }
            Ok(())
        };
        ranges::pushpop::read_member(archive, &path, &profile, notes, &mut emit)?;
        found.sort();
        found.dedup();
        return Ok(found);
    }
    Ok(found)
}
