//! `njx-combine`: several nsys-jax (or njx-capture) archives of one distributed run into
//! one archive, in the layout of NVIDIA JAX-Toolbox's `nsys-jax-combine`
//! (`nsys_jax/scripts/nsys_jax_combine.py`, learnt from, not copied), which every njx tool
//! and nsys-jax's own loaders read (`crate::source::archive`):
//!
//! - a member whose content is the same in every input that has it is stored once, under
//!   its own name (a member only one input has is stored so too);
//! - a member whose content differs is stored once per input as `<name>/<profile>`, the
//!   profile being the input's file name without `.zip`;
//! - each input's `.nsys-rep` report is kept as `<profile>.nsys-rep` by
//!   `--keep-nsys-rep` (`first` by default, `all`, `none`); folders are not stored.
//!
//! Two passes. The first reads every member of every input through (inputs in parallel):
//! the zip reader checks the CRC-32, the bytes are counted against the declared size and
//! hashed with two keyed SipHash-1-3 (random keys per run: no file can be made to collide
//! with another on purpose), so "identical" is decided by content, not by what the
//! archives say of it. The second copies the members' stored bytes as they are (what the
//! first pass checked: each input is reopened and must be the same file, unchanged) into
//! a new archive in a staging folder beside the output, which is renamed into place at
//! the end; on any error nothing is left. No member is ever held in memory.
//!
//! What is copied is checked first, since the output is unzipped by nsys-jax and by
//! people: every member name must be a plain relative path
//! ([`writer::member_name_fault`]: no `..`, `.` or empty component, not absolute, no
//! drive letter, no backslash, no control character) and every member a file (no
//! symbolic link, FIFO, device or socket by its Unix mode, [`writer::special_entry`]);
//! an input holding any other member is refused naming it (`rank1.zip!../x`). Refused, not
//! left out: a member missing from one input would be read as that profile's from another
//! input (a member stored once stands for every profile). Folder entries are never stored,
//! whatever their name. The names njx makes (`<name>/<profile>`, `<profile>.nsys-rep`)
//! are plain too, as the profile name must be (an input named `a\b.zip` is refused), and
//! the writer checks every name again. Inputs are looked at before they are opened: a
//! FIFO, a device, a socket or a folder is refused by its path without being read. A
//! member is read through within its declared size and `NJX_MAX_RATIO` times its
//! compressed size (a bomb is refused as the readers refuse it). A write error (a full
//! disk) names the output: `out.zip: No space left on device (os error 28), writing …`.
//!
//! Where it differs from nsys-jax-combine: identical means equal content (nsys-jax
//! compares the CRC-32 the archives declare); consistency is checked with errors instead
//! of assertions (inputs that are not nsys-jax or njx-capture archives, combined archives,
//! two inputs with one profile name, an input named twice, the output among the inputs, a
//! report named for another profile, output names that would collide); `-o NAME` without
//! `.zip` gets `.zip` appended (nsys-jax replaces the last suffix: `run.v2` → `run.zip`);
//! an identical member is copied from the first input (in command-line order) that has it,
//! nsys-jax takes it from the first by sorted path, which only changes the order of members;
//! an njx-capture archive's `report.nsys-rep` is stored as `<profile>.nsys-rep`;
//! `--analysis` takes a shell pipeline run on the finished archive, as njx-capture's does
//! (nsys-jax runs a Python script on an extracted copy).

use crate::archives::writer::{self, ArchiveWriter, Stage, member_name_fault, note, shown_name};
use crate::error::{Error, Result};
use crate::output::notes::Notes;
use crate::output::progress::Progress;
use crate::source::limits::{self, Inflated};
use crate::source::{Archive, GPU_PROJ_MEMBER, PUSHPOP_MEMBERS, SQLITE_MEMBER, THREADS_MEMBER};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

/// Which inputs' `.nsys-rep` reports the combined archive keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum KeepNsysRep {
    /// Every input's report.
    All,
    /// The first input's report only.
    #[default]
    First,
    /// No report.
    None,
}

impl KeepNsysRep {
    /// Whether the report of the `input`-th input (from 0) is kept.
    fn keeps(self, input: usize) -> bool {
        match self {
            KeepNsysRep::All => true,
            KeepNsysRep::First => input == 0,
            KeepNsysRep::None => false,
        }
    }
}

/// What to combine, and how.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The archive to write (see [`output_path`]).
    pub output: PathBuf,
    /// Overwrite an existing output.
    pub force_overwrite: bool,
    /// Which reports to keep.
    pub keep_nsys_rep: KeepNsysRep,
    /// Pipelines to run on the finished archive.
    pub analysis: Vec<String>,
}

/// The archive that `-o NAME` names: NAME itself when it ends in `.zip`, else NAME.zip; a
/// usage error when NAME names a folder (`out/`, `..`).
pub fn output_path(name: &Path) -> Result<PathBuf> {
    let folder = name.as_os_str().to_string_lossy().ends_with('/')
        || !matches!(name.components().next_back(), Some(Component::Normal(_)));
    if folder {
        return Err(Error::Usage(format!(
            "-o `{}` names a folder, not an archive",
            name.display()
        )));
    }
    if name.extension().is_some_and(|e| e == "zip") {
        Ok(name.to_path_buf())
    } else {
        let mut with = name.as_os_str().to_owned();
        with.push(".zip");
        Ok(PathBuf::from(with))
    }
}

/// A member's content as the first pass read it: two keyed hashes, its length and CRC-32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Digest {
    hashes: (u64, u64),
    len: u64,
    crc: u32,
}

/// One member of an input, as found by the first pass.
#[derive(Debug)]
struct Entry {
    /// Its index in the input's central directory.
    index: usize,
    name: String,
    /// `None` for a report (`.nsys-rep`), whose content is never compared.
    digest: Option<Digest>,
}

/// One input, as found by the first pass.
#[derive(Debug)]
struct Scan {
    path: PathBuf,
    place: String,
    /// The profile name: the file name without `.zip`.
    profile: String,
    /// What identifies the file read, so that the second pass copies from the same one.
    id: FileId,
    entries: Vec<Entry>,
}

/// A file's identity and state: device, inode, length, modification time.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileId {
    dev_ino: (u64, u64),
    len: u64,
    modified: Option<SystemTime>,
}

impl FileId {
    fn of(meta: &std::fs::Metadata) -> FileId {
        #[cfg(unix)]
        let dev_ino = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let dev_ino = (0, 0);
        FileId {
            dev_ino,
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

/// Where one member of the output comes from.
#[derive(Debug)]
struct Copy {
    input: usize,
    index: usize,
    /// Its name in the output.
    name: String,
    stored: Stored,
}

/// How a member is stored in the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    /// Once, under its own name.
    Once,
    /// As `<name>/<profile>`: its content differs between inputs.
    PerProfile,
    /// An input's report, as `<profile>.nsys-rep`.
    Report,
}

/// Combines `inputs` into one archive as `options` say. Returns false when an
/// `--analysis` failed (the archive is written all the same, with what it printed).
pub fn run(options: &Options, inputs: &[PathBuf], notes: &Notes) -> Result<bool> {
    if inputs.is_empty() {
        return Err(Error::Usage("no input archives".into()));
    }
    let dest = check_output(options)?;
    let profiles = check_inputs(inputs, &dest)?;

    let scans = first_pass(options, inputs, &profiles, notes.progress())?;
    different_programs(&scans, &dest, notes);

    let copies = plan(&scans, options.keep_nsys_rep);
    check_names(&copies, &scans, &dest)?;

    let stage = second_pass(&scans, &copies, &dest, notes.progress())?;

    let work = tempfile::Builder::new()
        .prefix("njx-combine-")
        .tempdir()
        .map_err(|e| Error::io("creating a temporary folder", e))?;
    let all_ok = writer::analyse(
        "njx-combine",
        notes,
        &dest,
        &stage,
        work.path(),
        &options.analysis,
    )?;
    stage.place(&dest, options.force_overwrite, false)?;
    say_combined(notes, &dest, scans.len(), &copies);
    Ok(all_ok)
}

/// The archive to write ([`output_path`]), refused where it is a folder, or exists and
/// is not to be overwritten.
fn check_output(options: &Options) -> Result<PathBuf> {
    let dest = output_path(&options.output)?;
    if dest.is_dir() {
        return Err(Error::data(
            dest.display().to_string(),
            "is a folder: the combined archive cannot take its place; choose another -o",
        ));
    }
    if !options.force_overwrite && dest.symlink_metadata().is_ok() {
        return Err(writer::exists(&dest));
    }
    Ok(dest)
}

/// First pass: every member of every input read through, inputs in parallel.
fn first_pass(
    options: &Options,
    inputs: &[PathBuf],
    profiles: &[String],
    progress: &Progress,
) -> Result<Vec<Scan>> {
    let keys = (RandomState::new(), RandomState::new());
    let jobs: Vec<(usize, &PathBuf, &String)> = inputs
        .iter()
        .zip(profiles)
        .enumerate()
        .map(|(i, (p, n))| (i, p, n))
        .collect();
    let scans = crate::util::parallel::parallel_map(&jobs, |&(i, path, profile)| {
        let keep = options.keep_nsys_rep;
        let scan = scan(path, profile, keep, keep.keeps(i), &keys, progress);
        progress.input_done(path);
        scan
    });
    scans.into_iter().collect::<Result<Vec<Scan>>>()
}

/// Second pass: the stored bytes of `copies` copied into the staged archive, in the
/// output's folder (created if missing, as njx-capture does, once the inputs are known to
/// be good). Returns the stage, its archive finished.
fn second_pass(scans: &[Scan], copies: &[Copy], dest: &Path, progress: &Progress) -> Result<Stage> {
    let folder = writer::folder_of(dest);
    std::fs::create_dir_all(folder).map_err(|e| Error::io(folder.display().to_string(), e))?;
    let stage = Stage::new("njx-combine", dest)?;
    let mut zip = ArchiveWriter::create(stage.path(), dest)?;
    let mut at = 0;
    progress.phase(&format!("writing {}", stage.path().display()));
    for (i, scan) in scans.iter().enumerate() {
        copy_members(&mut zip, i, scan, copies, &mut at)?;
    }
    zip.finish()?;
    Ok(stage)
}

/// Copies the members of input `i` (`scan`) that `copies` names from `at` on into `zip`,
/// advancing `at`; refused where the input is no longer the file the first pass read, or
/// changed while it was copied from.
fn copy_members(
    zip: &mut ArchiveWriter,
    i: usize,
    scan: &Scan,
    copies: &[Copy],
    at: &mut usize,
) -> Result<()> {
    let same = |m: &std::fs::Metadata| FileId::of(m) == scan.id;
    let Some(mut archive) = crate::source::archive::reopen_zip(&scan.path, &scan.place, same)?
    else {
        return Err(changed(scan));
    };
    while let Some(copy) = copies.get(*at).filter(|c| c.input == i) {
        let entry = archive
            .by_index_raw(copy.index)
            .map_err(|e| Error::data(&scan.place, format!("member {}: {e}", copy.index)))?;
        zip.raw_copy(entry, &copy.name, &scan.place)?;
        *at += 1;
    }
    // And unchanged while it was copied from.
    let still = std::fs::metadata(&scan.path)
        .map(|m| FileId::of(&m) == scan.id)
        .unwrap_or(false);
    if !still {
        return Err(changed(scan));
    }
    Ok(())
}

/// Says what the archive `dest`, combined from `inputs` archives, holds.
fn say_combined(notes: &Notes, dest: &Path, inputs: usize, copies: &[Copy]) {
    let count = |kind| copies.iter().filter(|c| c.stored == kind).count();
    let (once, per_profile, reports) = (
        count(Stored::Once),
        count(Stored::PerProfile),
        count(Stored::Report),
    );
    let size = std::fs::metadata(dest).map_or(0, |m| m.len());
    note(
        notes,
        dest,
        format!(
            "{inputs} archive{} combined: {once} member{} stored once, {per_profile} per \
             profile, {reports} report{} ({:.1} MB)",
            if inputs == 1 { "" } else { "s" },
            if once == 1 { "" } else { "s" },
            if reports == 1 { "" } else { "s" },
            size as f64 / 1e6
        ),
    );
}

/// The error for an input that is no longer the file the first pass read.
fn changed(scan: &Scan) -> Error {
    Error::data(
        &scan.place,
        "changed while it was being combined: nothing was written; run njx-combine again",
    )
}

/// Checks the inputs before anything is read: each a file (looked at, not opened: a FIFO
/// would block the open), named once, not the output (by path or, a hard link, by inode),
/// profile names (file names without `.zip`) distinct and plain. Returns the profile names.
fn check_inputs(inputs: &[PathBuf], dest: &Path) -> Result<Vec<String>> {
    let dest_real = dest.canonicalize().ok();
    let dest_id = std::fs::metadata(dest)
        .ok()
        .map(|m| FileId::of(&m).dev_ino)
        .filter(|&id| id != (0, 0));
    let mut real: HashMap<PathBuf, &Path> = HashMap::new();
    let mut profiles: HashMap<String, &Path> = HashMap::new();
    let mut names = Vec::with_capacity(inputs.len());
    for input in inputs {
        let place = crate::source::place_of(input);
        let meta = std::fs::metadata(input).map_err(|e| Error::io(&place, e))?;
        not_a_file(&place, &meta)?;
        let canonical = input.canonicalize().map_err(|e| Error::io(&place, e))?;
        if dest_real.as_ref() == Some(&canonical) || dest_id == Some(FileId::of(&meta).dev_ino) {
            return Err(Error::data(
                &place,
                format!("is the output ({}) too: choose another -o", dest.display()),
            ));
        }
        if let Some(first) = real.insert(canonical, input) {
            return Err(Error::data(
                &place,
                format!(
                    "is named twice (also as {}): each archive can be combined once",
                    first.display()
                ),
            ));
        }
        let profile = profile_of(input);
        if let Some(fault) = member_name_fault(&profile) {
            return Err(Error::data(
                &place,
                format!(
                    "its profile name {} (its file name without .zip) would name its members \
                     in the combined archive (<member>/<profile>, <profile>.nsys-rep), but is \
                     not a plain file name: {fault}; rename the file",
                    shown_name(&profile)
                ),
            ));
        }
        if let Some(first) = profiles.insert(profile.clone(), input) {
            return Err(Error::data(
                &place,
                format!(
                    "has the profile name `{profile}` of {} too: their per-profile members \
                     (`<member>/{profile}`) would collide; rename one of them",
                    first.display()
                ),
            ));
        }
        names.push(profile);
    }
    Ok(names)
}

/// Refuses an input that is not a regular file (after links): a folder, a FIFO, a device,
/// a socket, none of which is an archive, and the last three of which would block or
/// stream for ever when read.
fn not_a_file(place: &str, meta: &std::fs::Metadata) -> Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    let kind = meta.file_type();
    #[cfg(unix)]
    let kind = {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            "a FIFO (named pipe)"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_block_device() || kind.is_char_device() {
            "a device"
        } else if kind.is_dir() {
            "a folder"
        } else {
            "not a regular file"
        }
    };
    #[cfg(not(unix))]
    let kind = if kind.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    };
    Err(Error::data(
        place,
        format!(
            "{kind}, not a file: njx-combine combines the .zip archives nsys-jax and \
             njx-capture write"
        ),
    ))
}

/// An input's profile name: its file name without `.zip` (nsys-jax-combine's
/// `input.stem`, for the archives nsys-jax writes).
fn profile_of(path: &Path) -> String {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    match name.strip_suffix(".zip") {
        Some(stem) if !stem.is_empty() => stem.to_string(),
        _ => name,
    }
}

/// The first pass over one input: opens it (a zip archive of nsys-jax's or njx-capture's,
/// not a combined one), reads every member through (but a report that is not kept,
/// `keep_report` false) and returns what it found.
fn scan(
    path: &Path,
    profile: &str,
    keep: KeepNsysRep,
    keep_report: bool,
    keys: &(RandomState, RandomState),
    progress: &Progress,
) -> Result<Scan> {
    let place = crate::source::place_of(path);
    let (file, id) = open_input(path, &place)?;
    let mut archive = Archive::open_zip(path, file, progress)?;
    check_members(&mut archive, &place)?;
    check_kind(&archive)?;
    let njx_capture = archive.members().iter().any(|m| m == SQLITE_MEMBER);
    let own_report = format!("{profile}.nsys-rep");
    let zip = archive
        .zip()
        .ok_or_else(|| Error::data(&place, "not a zip archive"))?;
    let mut entries = Vec::with_capacity(zip.len());
    let buf = vec![0u8; 1 << 16];
    let mut members = Members {
        place: &place,
        profile,
        own_report,
        njx_capture,
        keep,
        keep_report,
        keys,
        ratio: limits::get()?.ratio,
        buf,
    };
    for index in 0..zip.len() {
        entries.extend(members.entry(zip, index)?);
    }
    Ok(Scan {
        path: path.to_path_buf(),
        place,
        profile: profile.to_string(),
        id,
        entries,
    })
}

/// Opens an input for the first pass: looked at again before it is opened (it may have
/// been replaced since the inputs were checked), the file opened the file looked at, and
/// starting as a zip archive does. Returns it rewound, with what identifies it.
fn open_input(path: &Path, place: &str) -> Result<(File, FileId)> {
    let looked = std::fs::metadata(path).map_err(|e| Error::io(place, e))?;
    not_a_file(place, &looked)?;
    let mut file = File::open(path).map_err(|e| Error::io(place, e))?;
    let meta = file.metadata().map_err(|e| Error::io(place, e))?;
    not_a_file(place, &meta)?;
    let id = FileId::of(&meta);
    if id.dev_ino != FileId::of(&looked).dev_ino {
        return Err(Error::data(
            place,
            "changed while it was being opened: run njx-combine again",
        ));
    }
    let mut head = [0u8; 4];
    let n = crate::source::read_up_to(&mut file, &mut head).map_err(|e| Error::io(place, e))?;
    if &head[..n] != crate::source::ZIP_MAGIC {
        return Err(Error::data(
            place,
            "not a zip archive: njx-combine combines the .zip archives nsys-jax and \
             njx-capture write",
        ));
    }
    // The handle `id` was taken from, so the file hashed is the file checked.
    file.seek(SeekFrom::Start(0))
        .map_err(|e| Error::io(place, e))?;
    Ok((file, id))
}

/// The first pass's reading of one input's members, one at a time.
struct Members<'a> {
    /// The input, for messages.
    place: &'a str,
    /// Its profile name.
    profile: &'a str,
    /// The report it may hold: `<profile>.nsys-rep`.
    own_report: String,
    /// Whether it is an njx-capture archive (whose report is `report.nsys-rep`).
    njx_capture: bool,
    keep: KeepNsysRep,
    /// Whether its report is kept (and so read through).
    keep_report: bool,
    keys: &'a (RandomState, RandomState),
    /// `NJX_MAX_RATIO`.
    ratio: u64,
    /// The buffer every member is read through.
    buf: Vec<u8>,
}

impl Members<'_> {
    /// Member `index` of `zip`: none for a folder entry; read through and hashed, but a
    /// report (read through where it is kept, never hashed).
    fn entry<R: Read + Seek>(
        &mut self,
        zip: &mut zip::ZipArchive<R>,
        index: usize,
    ) -> Result<Option<Entry>> {
        let place = self.place;
        let mut entry = zip
            .by_index(index)
            .map_err(|e| Error::data(place, format!("cannot read member {index}: {e}")))?;
        if entry.is_dir() {
            return Ok(None);
        }
        let name = entry
            .name()
            .map_err(|e| Error::data(place, format!("member {index}: bad name: {e}")))?
            .into_owned();
        let member = format!("{place}!{}", shown_name(&name));
        let report = name.ends_with(".nsys-rep");
        if report {
            self.check_report(&name, &member)?;
        }
        let digest = if report && !self.keep_report {
            None
        } else {
            self.read_through(&mut entry, &member, !report)?
        };
        Ok(Some(Entry {
            index,
            name,
            digest,
        }))
    }

    /// Refuses a report (`name`, at `member`) named for another profile than the input's,
    /// unless reports are left out.
    fn check_report(&self, name: &str, member: &str) -> Result<()> {
        if self.keep != KeepNsysRep::None
            && name != self.own_report
            && !(self.njx_capture && name == crate::source::REPORT_MEMBER)
        {
            let (profile, own_report) = (self.profile, &self.own_report);
            return Err(Error::data(
                member,
                format!(
                    "a report named for another profile than the archive's (`{profile}`, \
                     which would hold {own_report}): was the archive renamed? Name it as its \
                     report, or leave the reports out with --keep-nsys-rep none"
                ),
            ));
        }
        Ok(())
    }

    /// Reads `entry` (at `member`) through: its CRC-32 checked (by the zip reader), its
    /// length counted against its declared size; its digest where `hash`.
    fn read_through<R: Read>(
        &mut self,
        entry: &mut zip::read::ZipFile<'_, R>,
        member: &str,
        hash: bool,
    ) -> Result<Option<Digest>> {
        let (declared, crc) = (entry.size(), entry.crc32());
        let mut hashers = (self.keys.0.build_hasher(), self.keys.1.build_hasher());
        let mut len = 0u64;
        // Held to its declared size, and to NJX_MAX_RATIO times its compressed size: a
        // member that lies, or a bomb, is refused before it is read through.
        let compressed = entry.compressed_size();
        let mut bounded = Inflated::sized(entry, self.ratio, compressed, declared);
        loop {
            let n = match bounded.read(&mut self.buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.to_string().contains("checksum") => {
                    return Err(Error::data(
                        member,
                        "its content does not match its CRC-32: the archive is damaged",
                    ));
                }
                Err(e) => return Err(Error::data(member, format!("cannot be read: {e}"))),
            };
            if hash {
                hashers.0.write(&self.buf[..n]);
                hashers.1.write(&self.buf[..n]);
            }
            len += n as u64;
        }
        if len != declared {
            return Err(Error::data(
                member,
                format!(
                    "holds {len} bytes where the archive declares {declared}: the archive is \
                     damaged"
                ),
            ));
        }
        Ok(hash.then(|| Digest {
            hashes: (hashers.0.finish(), hashers.1.finish()),
            len,
            crc,
        }))
    }
}

/// Refuses an archive holding a member that must not be copied (see [`check_member`]),
/// before anything else is said of it (a link or a hostile name may take a table's name).
/// Folder entries are never copied, whatever their name.
fn check_members(archive: &mut Archive, place: &str) -> Result<()> {
    let Some(zip) = archive.zip() else {
        return Ok(());
    };
    for index in 0..zip.len() {
        let entry = zip
            .by_index_raw(index)
            .map_err(|e| Error::data(place, format!("cannot read member {index}: {e}")))?;
        if entry.is_dir() {
            continue;
        }
        let name = entry
            .name()
            .map_err(|e| Error::data(place, format!("member {index}: bad name: {e}")))?;
        let member = format!("{place}!{}", shown_name(&name));
        check_member(&member, &name, entry.unix_mode())?;
    }
    Ok(())
}

/// Refuses a member that must not be copied ([`writer::member_name_fault`],
/// [`writer::special_entry`]): refused rather than left out, since a member missing
/// from one input would be read as that profile's from another input (a member stored
/// once stands for every profile), and nsys-jax and njx-capture write no such member.
fn check_member(member: &str, name: &str, unix_mode: Option<u32>) -> Result<()> {
    const WHO: &str = "nsys-jax and njx-capture write none: was the archive made or changed by \
                       another tool?";
    if let Some(fault) = member_name_fault(name) {
        return Err(Error::data(
            member,
            format!(
                "not a plain relative member name: {fault}; njx-combine copies no such \
                 member ({WHO})"
            ),
        ));
    }
    if let Some(kind) = writer::special_entry(unix_mode) {
        return Err(Error::data(
            member,
            format!(
                "{kind} (Unix mode {:o}), not a file: njx-combine copies files only, as \
                 unzipping would make it what it says ({WHO})",
                unix_mode.unwrap_or(0)
            ),
        ));
    }
    Ok(())
}

/// The tables by which an archive is told to be nsys-jax's or njx-capture's.
fn tables() -> impl Iterator<Item = &'static str> {
    PUSHPOP_MEMBERS
        .iter()
        .copied()
        .chain([GPU_PROJ_MEMBER, THREADS_MEMBER, SQLITE_MEMBER])
}

/// Refuses an archive that is not nsys-jax's or njx-capture's (none of their tables and
/// no HLO dumps), or that is combined already (a table stored per profile).
fn check_kind(archive: &Archive) -> Result<()> {
    for table in tables() {
        if let Some(copy) = archive.find(table).iter().find(|m| m.path != table) {
            return Err(Error::data(
                archive.place(),
                format!(
                    "a combined archive already ({} is stored per profile, as {}): combine \
                     the archives it was made from",
                    table, copy.path
                ),
            ));
        }
    }
    let known = archive
        .members()
        .iter()
        .any(|m| tables().any(|t| t == m) || m.starts_with(crate::source::DUMP_DIR));
    if !known {
        return Err(Error::data(
            archive.place(),
            format!(
                "a zip archive, but not one of nsys-jax or njx-capture: none of {} and no \
                 dump/ folder",
                tables().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    Ok(())
}

/// Warns when the inputs' HLO dumps name different sets of XLA programs: the processes of
/// one run of one program compile the same programs, so such inputs are probably from
/// different runs or programs.
fn different_programs(scans: &[Scan], dest: &Path, notes: &Notes) {
    let programs = |scan: &Scan| -> BTreeSet<String> {
        scan.entries
            .iter()
            .filter_map(|e| e.name.strip_prefix(crate::source::DUMP_DIR))
            .filter(|n| crate::hlo::parse_dump_name(n).is_some())
            .map(str::to_string)
            .collect()
    };
    let Some(first) = scans.first() else {
        return;
    };
    let reference = programs(first);
    for scan in &scans[1..] {
        let these = programs(scan);
        if these != reference {
            let differ: Vec<&String> = these.symmetric_difference(&reference).collect();
            note(
                notes,
                dest,
                format!(
                    "warning: {} and {} dumped different XLA programs ({} dumps differ by \
                     name, e.g. {}): are they from the same run of the same program?",
                    first.place,
                    scan.place,
                    differ.len(),
                    differ
                        .iter()
                        .take(2)
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
            return;
        }
    }
}

/// Where every member of the output comes from, in the order written: inputs in order,
/// each input's members in the order of its central directory.
fn plan(scans: &[Scan], keep: KeepNsysRep) -> Vec<Copy> {
    // For each member name: the distinct contents, and the first input having it.
    let mut seen: HashMap<&str, (HashSet<Digest>, usize)> = HashMap::new();
    for (i, scan) in scans.iter().enumerate() {
        for entry in &scan.entries {
            if let Some(digest) = entry.digest {
                seen.entry(&entry.name)
                    .or_insert_with(|| (HashSet::new(), i))
                    .0
                    .insert(digest);
            }
        }
    }
    let mut copies = Vec::new();
    for (i, scan) in scans.iter().enumerate() {
        for entry in &scan.entries {
            let (name, stored) = match entry.digest {
                None => {
                    if !keep.keeps(i) {
                        continue;
                    }
                    (format!("{}.nsys-rep", scan.profile), Stored::Report)
                }
                Some(_) => {
                    let (contents, first) = &seen[entry.name.as_str()];
                    if contents.len() == 1 {
                        if *first != i {
                            continue;
                        }
                        (entry.name.clone(), Stored::Once)
                    } else {
                        (
                            format!("{}/{}", entry.name, scan.profile),
                            Stored::PerProfile,
                        )
                    }
                }
            };
            copies.push(Copy {
                input: i,
                index: entry.index,
                name,
                stored,
            });
        }
    }
    copies
}

/// Refuses output names that would collide: one name from two members (an input holding
/// `a/rank0` as well as an `a` that differs between inputs), or a file and a folder of
/// the same name (`a` stored once and `a/b` in another input), of which readers would see
/// only one.
fn check_names(copies: &[Copy], scans: &[Scan], dest: &Path) -> Result<()> {
    let mut names: BTreeMap<&str, &Copy> = BTreeMap::new();
    let from = |c: &Copy| -> String {
        let scan = &scans[c.input];
        let member = scan
            .entries
            .iter()
            .find(|e| e.index == c.index)
            .map_or("?", |e| e.name.as_str());
        format!("{}!{member}", scan.place)
    };
    for copy in copies {
        if let Some(other) = names.insert(&copy.name, copy) {
            return Err(Error::data(
                dest.display().to_string(),
                format!(
                    "{} and {} would both be stored as {}: the inputs' members collide",
                    from(other),
                    from(copy),
                    copy.name
                ),
            ));
        }
    }
    for (name, copy) in &names {
        for (at, _) in name.match_indices('/') {
            if let Some(file) = names.get(&name[..at]) {
                return Err(Error::data(
                    dest.display().to_string(),
                    format!(
                        "{} would be stored as the file {} and {} inside it as {name}: the \
                         inputs' members collide",
                        from(file),
                        &name[..at],
                        from(copy)
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_names_get_zip_appended() {
        let out = |name: &str| output_path(Path::new(name)).map_err(|e| e.to_string());
        assert_eq!(out("all"), Ok(PathBuf::from("all.zip")));
        assert_eq!(out("d/all.zip"), Ok(PathBuf::from("d/all.zip")));
        assert_eq!(out("run.v2"), Ok(PathBuf::from("run.v2.zip")));
        for folder in ["out/", "..", ".", "/", "a/.."] {
            assert!(
                out(folder).unwrap_err().contains("names a folder"),
                "{folder}"
            );
        }
        assert_eq!(profile_of(Path::new("a/rank0.zip")), "rank0");
        assert_eq!(profile_of(Path::new("rank0")), "rank0");
    }
}
