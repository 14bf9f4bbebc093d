//! Finding a program's HLO dump in an archive, and the program key nsys-jax derives
//! from it (`_match_module`, `_remap_program_id` and `_load` in `nsys_jax/protobuf.py`).

use super::HloModule;
use crate::error::{Error, Result};
use crate::source::Archive;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::source::DUMP_DIR;

/// The stage whose dumps name thunks: XLA's after-optimizations module
/// (`…sm_8.0_gpu_after_optimizations.hlo.pb.xz`).
const AFTER_OPTIMIZATIONS: &str = "after_optimizations";

/// Splits a dump file name `module_0040.pjit__wrapped_step_fn.sm_8.0_gpu_after_optimizations.hlo.pb.xz`
/// into the program id (40) and the rest between the id and `.hlo.pb[.xz]`
/// (`pjit__wrapped_step_fn.sm_8.0_gpu_after_optimizations`): the module name, a dot and
/// the stage. `None` for other files.
pub fn parse_dump_name(file_name: &str) -> Option<(u64, &str)> {
    let rest = file_name.strip_prefix("module_")?;
    let (digits, rest) = rest.split_once('.')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let id = digits.parse().ok()?;
    let rest = rest
        .strip_suffix(".hlo.pb.xz")
        .or_else(|| rest.strip_suffix(".hlo.pb"))?;
    Some((id, rest))
}

/// Whether the `rest` of a dump name is the after-optimizations dump of module `name`.
///
/// nsys-jax matches `module_(\d+)\.(.+?)\.(.+)\.hlo\.pb\.xz` among the files named
/// `*after_optimizations.hlo.pb.xz`, so the module name ends at the first dot; matching
/// the name as a prefix agrees with it and also finds module names that contain dots.
pub fn is_after_optimizations_of(rest: &str, name: &str) -> bool {
    rest.strip_prefix(name)
        .and_then(|stage| stage.strip_prefix('.'))
        .is_some_and(|stage| stage.ends_with(AFTER_OPTIMIZATIONS))
}

/// The key of a program that is stable across ranks, as nsys-jax computes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProgramKey {
    /// The module's frontend attribute `fingerprint_before_lhs`
    /// (`25fa0b3e673a92036f22550cd7bcb068`).
    Fingerprint(String),
    /// The dump has no fingerprint (XLA older than the attribute): the program id, as
    /// nsys-jax keyed programs before it (nsys-jax itself stops with an error).
    Id(u64),
    /// No program id: XLA runs autotuning candidates as modules without one.
    Unknown,
    /// The archive has no after-optimizations dump of this program. nsys-jax calls such a
    /// compilation `unknown` and stops with an error for a module execution; callers
    /// that want the error check for this variant.
    Missing(u64),
}

impl ProgramKey {
    /// The key of a program whose dump was read: its fingerprint, or its id where XLA
    /// wrote none.
    pub fn of(hlo: &HloModule, program_id: u64) -> ProgramKey {
        match hlo.fingerprint() {
            Some(f) => ProgramKey::Fingerprint(f.to_string()),
            None => ProgramKey::Id(program_id),
        }
    }

    /// The `program` field of execution records: the fingerprint, the id (also for a
    /// program without a dump, which is then keyed by its id), or `unknown`.
    pub fn record(&self) -> String {
        match self {
            ProgramKey::Fingerprint(f) => f.clone(),
            ProgramKey::Id(id) | ProgramKey::Missing(id) => id.to_string(),
            ProgramKey::Unknown => "unknown".to_string(),
        }
    }
}

impl fmt::Display for ProgramKey {
    /// The key as records carry it: the fingerprint, the id, or `unknown`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProgramKey::Fingerprint(s) => f.write_str(s),
            ProgramKey::Id(id) => write!(f, "{id}"),
            ProgramKey::Unknown | ProgramKey::Missing(_) => f.write_str("unknown"),
        }
    }
}

/// A dump file (for combine archives: the logical path, without `/<profile>`).
#[derive(Debug)]
struct DumpFile {
    path: String,
    /// The members holding it: `path`, or each profile's copy `path/<profile>`.
    copies: Vec<String>,
    id: u64,
    /// Module name, dot, stage.
    rest: String,
}

/// The HLO dumps of one archive: an index of `dump/`, the dumps read so far and the
/// program keys found so far. Dumps are read when first asked for and kept; in a
/// combine archive a dump shared by several profiles is read once.
///
/// Every method takes the archive the index was made from.
#[derive(Debug, Default)]
pub struct Dumps {
    files: Vec<DumpFile>,
    /// (profile, program id, module name) → archive member, or `None` when there is no dump.
    members: HashMap<(String, u64, String), Option<String>>,
    /// Archive member → decoded module.
    loaded: HashMap<String, Arc<HloModule>>,
}

impl Dumps {
    /// Indexes the HLO dumps (`dump/module_*.hlo.pb.xz` and `.hlo.pb`, also stored per
    /// profile as `…/<profile>` by nsys-jax-combine) of an archive, or the
    /// `module_*.hlo.pb` files of an XLA dump folder. Reads nothing yet.
    pub fn new(archive: &Archive) -> Dumps {
        let mut files: Vec<DumpFile> = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        for member in archive.members() {
            // `dump/<file>`, in a combine archive `dump/<file>/<profile>`, or `<file>` at
            // the top of an XLA dump folder (`--xla_dump_to`).
            let (dir, rel) = match member.strip_prefix(DUMP_DIR) {
                Some(rel) => (DUMP_DIR, rel),
                None if !member.contains('/') => ("", member.as_str()),
                None => continue,
            };
            let file = match rel.split_once('/') {
                None => rel,
                Some((file, profile)) if !profile.contains('/') && !dir.is_empty() => file,
                Some(_) => continue,
            };
            let Some((id, rest)) = parse_dump_name(file) else {
                continue;
            };
            let path = format!("{dir}{file}");
            if let Some(&i) = seen.get(&path) {
                // another profile's copy of the same file
                let f: &mut DumpFile = &mut files[i];
                f.copies.push(member.clone());
                continue;
            }
            seen.insert(path.clone(), files.len());
            files.push(DumpFile {
                path,
                copies: vec![member.clone()],
                id,
                rest: rest.to_string(),
            });
        }
        Dumps {
            files,
            ..Dumps::default()
        }
    }

    /// Whether the archive has no HLO dumps at all.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Every member holding an after-optimizations dump of program `program_id` (module
    /// `module`): the one file, or every profile's copy in a combine archive.
    pub fn copies(&self, program_id: u64, module: &str) -> impl Iterator<Item = &str> {
        self.files
            .iter()
            .filter(move |f| f.id == program_id && is_after_optimizations_of(&f.rest, module))
            .flat_map(|f| f.copies.iter().map(String::as_str))
    }

    /// Every member holding an after-optimizations dump of any program, in member order
    /// (in a combine archive, every profile's copy).
    pub fn after_optimizations(&self) -> Vec<&str> {
        let mut members: Vec<&str> = self
            .files
            .iter()
            .filter(|f| {
                f.rest
                    .split_once('.')
                    .is_some_and(|(_, stage)| stage.ends_with(AFTER_OPTIMIZATIONS))
            })
            .flat_map(|f| f.copies.iter().map(String::as_str))
            .collect();
        members.sort_unstable();
        members
    }

    /// The archive member holding the after-optimizations dump of program `program_id`
    /// (module `module`) for `profile`, or `None` when the archive has none. Several
    /// candidate files for one program are an error, as in nsys-jax.
    pub fn find(
        &mut self,
        archive: &Archive,
        profile: &str,
        program_id: u64,
        module: &str,
    ) -> Result<Option<String>> {
        let key = (profile.to_string(), program_id, module.to_string());
        if let Some(found) = self.members.get(&key) {
            return Ok(found.clone());
        }
        let candidates: Vec<&DumpFile> = self
            .files
            .iter()
            .filter(|f| f.id == program_id && is_after_optimizations_of(&f.rest, module))
            .collect();
        let found = match candidates.as_slice() {
            [] => None,
            [file] => Some(member_for(archive, &file.path, profile)?),
            several => {
                let paths: Vec<&str> = several.iter().map(|f| f.path.as_str()).collect();
                return Err(Error::data(
                    archive.member_place(DUMP_DIR),
                    format!(
                        "several HLO dumps for XlaModule {program_id} ({module}): {}",
                        paths.join(", ")
                    ),
                ));
            }
        };
        self.members.insert(key, found.clone());
        Ok(found)
    }

    /// The after-optimizations module of program `program_id` (module `module`) for
    /// `profile`, read on first use; `None` when the archive has no dump of it. The
    /// dump's module id must be `program_id`.
    pub fn load(
        &mut self,
        archive: &mut Archive,
        profile: &str,
        program_id: u64,
        module: &str,
    ) -> Result<Option<Arc<HloModule>>> {
        let Some(member) = self.find(archive, profile, program_id, module)? else {
            return Ok(None);
        };
        if let Some(loaded) = self.loaded.get(&member) {
            return Ok(Some(Arc::clone(loaded)));
        }
        let hlo = self.read(archive, &member)?;
        if u64::try_from(hlo.id()).ok() != Some(program_id) {
            return Err(Error::data(
                archive.member_place(&member),
                format!(
                    "the dump is of program {}, its name says {program_id}",
                    hlo.id()
                ),
            ));
        }
        Ok(Some(hlo))
    }

    /// The module stored as `member` (one of [`Dumps::copies`]), read on first use.
    pub fn read(&mut self, archive: &mut Archive, member: &str) -> Result<Arc<HloModule>> {
        if let Some(loaded) = self.loaded.get(member) {
            return Ok(Arc::clone(loaded));
        }
        let hlo = Arc::new(HloModule::from_member(archive, member)?);
        self.loaded.insert(member.to_string(), Arc::clone(&hlo));
        Ok(hlo)
    }

    /// Every module read so far, in member order, leaving the index without them.
    pub fn take_loaded(&mut self) -> Vec<Arc<HloModule>> {
        let mut loaded: Vec<(String, Arc<HloModule>)> = self.loaded.drain().collect();
        loaded.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        loaded.into_iter().map(|(_, hlo)| hlo).collect()
    }

    /// The key of a program that is the same on every rank, from the numeric program id
    /// and module name of an NVTX range (`XlaModule:#hlo_module=jit_f,program_id=40#`)
    /// of `profile`: the dump's fingerprint, as nsys-jax's `_remap_program_id`. See
    /// [`ProgramKey`] for the cases without one.
    pub fn program_key(
        &mut self,
        archive: &mut Archive,
        profile: &str,
        program_id: Option<u64>,
        module: &str,
    ) -> Result<ProgramKey> {
        let Some(id) = program_id else {
            return Ok(ProgramKey::Unknown);
        };
        Ok(match self.load(archive, profile, id, module)? {
            None => ProgramKey::Missing(id),
            Some(hlo) => ProgramKey::of(&hlo, id),
        })
    }
}

/// The member that holds `path` for `profile`: `path` itself when it is one file (a
/// single-profile archive, or a file all profiles of a combine archive share), else
/// the profile's copy `path/<profile>`.
fn member_for(archive: &Archive, path: &str, profile: &str) -> Result<String> {
    match archive.member_for(path, profile) {
        Some(member) => Ok(member),
        None => {
            let found = archive.find(path);
            let profiles: Vec<&str> = found.iter().map(|m| m.profile.as_str()).collect();
            Err(Error::data(
                archive.member_place(path),
                format!(
                    "no copy for profile `{profile}` (the archive has one for {})",
                    profiles.join(", ")
                ),
            ))
        }
    }
}
