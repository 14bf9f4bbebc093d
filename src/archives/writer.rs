//! Writing archives, for the tools that write them (njx-capture, njx-combine): the zip
//! writer, the staging folder beside the destination (the archive is written under its own
//! file name there, so that analyses see the right name), the `--analysis` pipelines run on
//! a copy of the finished archive with their outputs added, and the placing of the archive
//! (a rename; without `-f`, never over an existing file).
//!
//! Also the rule for member names taken from inputs ([`member_name_fault`]): a member an
//! archive of njx's holds is a plain relative path (`dump/module_0001.….pb.xz`), so that
//! nsys-jax and anyone who unzips the archive get every member inside the folder they
//! extract it in, under the name njx's readers look up. A write error says which archive
//! failed and why (`out.zip: No space left on device`), once: the zip writer's own
//! clean-up after a failure writes nothing more.

use crate::error::{Error, Result};
use crate::output::notes::Notes;
use std::borrow::Cow;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use zip::result::ZipError;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

pub use crate::source::layout::ANALYSIS_DIR;

/// Why `name` cannot be the name of a member njx writes, or `None` when it is a plain
/// relative path: components separated by `/`, none empty, `.` or `..`, no backslash, no
/// drive (`C:`), no control character. The one rule for names taken from inputs
/// (njx-combine copies its inputs' members under their own names): anything else would be
/// extracted outside the folder the archive is unzipped in (`../x`, `/abs/x`, `C:/x`,
/// `a\..\x` to Windows tools), or under another name than it is stored as (`a//b`, `./a`,
/// `a/`, the empty name, which readers do not look up as written), or print as a terminal
/// command (control characters).
pub fn member_name_fault(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    if name.chars().any(char::is_control) {
        return Some("it holds a control character");
    }
    if name.starts_with('/') {
        return Some("it is absolute");
    }
    if name.contains('\\') {
        return Some("it holds a backslash, a folder separator to Windows tools");
    }
    let b = name.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return Some("it starts with a drive letter");
    }
    for part in name.split('/') {
        match part {
            ".." => return Some("it has a `..` component, which leads out of the folder it is in"),
            "" | "." => return Some("it has an empty or `.` component"),
            _ => {}
        }
    }
    None
}

/// What a Unix mode (from a zip entry's external attributes) says an entry is, when it is
/// neither a regular file nor a folder: a symbolic link, a FIFO, a device, a socket. Such
/// entries are extracted as what they say (a link pointing anywhere, which later members
/// are then written through), so njx never writes them.
pub fn special_entry(unix_mode: Option<u32>) -> Option<&'static str> {
    match unix_mode? & 0o170000 {
        0 | 0o100000 | 0o040000 => None,
        0o120000 => Some("a symbolic link"),
        0o010000 => Some("a FIFO"),
        0o020000 | 0o060000 => Some("a device"),
        0o140000 => Some("a socket"),
        _ => Some("an entry of an unknown file type"),
    }
}

/// A member name as messages show it: as it is, or quoted with escapes where it holds a
/// control character (a newline, an escape sequence).
pub fn shown_name(name: &str) -> Cow<'_, str> {
    if name.chars().any(char::is_control) {
        Cow::Owned(format!("{name:?}"))
    } else {
        Cow::Borrowed(name)
    }
}

/// A line of progress about `archive`.
pub fn note(notes: &Notes, archive: &Path, msg: impl std::fmt::Display) {
    notes.note(format!("{}: {msg}", archive.display()));
}

/// An archive being written beside its destination: a temporary folder in the
/// destination's folder, holding the archive under the destination's own file name (so
/// that analyses see the profile name the archive will have). Dropped before [`Stage::place`]
/// (an error on the way), the folder and everything in it are removed.
pub struct Stage {
    dir: tempfile::TempDir,
    path: PathBuf,
    /// Removes the folder if a signal ends the tool first (where the tool asks for it).
    _staged: crate::util::cleanup::Staged,
}

impl Stage {
    /// A stage for `dest`, in `dest`'s folder, as `.<tool>-XXXXXX/<file name>`.
    pub fn new(tool: &str, dest: &Path) -> Result<Stage> {
        let folder = folder_of(dest);
        crate::util::cleanup::arm();
        let dir = tempfile::Builder::new()
            .prefix(&format!(".{tool}-"))
            .tempdir_in(folder)
            .map_err(|e| Error::io(folder.display().to_string(), e))?;
        let path = dir
            .path()
            .join(dest.file_name().unwrap_or(OsStr::new("report.zip")));
        let _staged = crate::util::cleanup::stage(dir.path());
        Ok(Stage { dir, path, _staged })
    }

    /// The archive being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Moves the finished archive to `dest` (see [`place`]). When that fails, the staging
    /// folder is kept with the archive in it if `keep_on_failure`, else removed.
    pub fn place(self, dest: &Path, overwrite: bool, keep_on_failure: bool) -> Result<()> {
        match place(&self.path, dest, overwrite) {
            Ok(()) => Ok(()),
            Err(e) if keep_on_failure => {
                let staged = self.path.display().to_string();
                let _ = self.dir.keep();
                Err(Error::data(
                    staged,
                    format!("the archive is kept here: {e}"),
                ))
            }
            Err(e) => Err(e),
        }
    }
}

/// The folder a file is in (`.` for a bare name).
pub fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Runs the `--analysis` pipelines of `tool` on the finished archive of `stage` (whose
/// destination is `dest`, for messages), each in a fresh working folder under `work`, and
/// adds their outputs to it (docs/formats.md, "njx-capture archives": `analysis/<n>-<name>.txt`
/// and `analysis/<n>-<name>/`). Analyses read a copy of their own, under the same file
/// name: whatever one does to it (truncate, remove, move, replace by a folder), the archive
/// itself is intact; the outputs are added to another copy, which replaces the archive only
/// when complete. False when an analysis failed or its outputs could not be stored (said
/// in `notes`); the archive is complete either way.
pub fn analyse(
    tool: &str,
    notes: &Notes,
    dest: &Path,
    stage: &Stage,
    work: &Path,
    pipelines: &[String],
) -> Result<bool> {
    if pipelines.is_empty() {
        return Ok(true);
    }
    let staged = stage.path();
    let name = staged.file_name().unwrap_or(OsStr::new("report.zip"));
    let copy_dir = stage.dir.path().join("analysed");
    let copy = copy_dir.join(name);
    std::fs::create_dir(&copy_dir)
        .and_then(|()| std::fs::copy(staged, &copy))
        .map_err(|e| Error::io(copy.display().to_string(), e))?;
    let absolute = copy
        .canonicalize()
        .map_err(|e| Error::io(copy.display().to_string(), e))?;
    let mut all_ok = true;
    let mut outputs = Vec::new();
    for (i, pipeline) in pipelines.iter().enumerate() {
        note(notes, dest, format!("analysis {}: {pipeline}…", i + 1));
        // Whatever an analysis does (removing its folder, leaving unreadable files), the
        // archive is kept: its failure is said and the archive placed.
        match run_analysis(tool, notes, i + 1, pipeline, &absolute, work) {
            Ok((members, ok)) => {
                outputs.extend(members);
                all_ok &= ok;
            }
            Err(e) => {
                note(
                    notes,
                    dest,
                    format!(
                        "warning: analysis {} failed: {e}; its output is not stored",
                        i + 1
                    ),
                );
                all_ok = false;
            }
        }
    }
    let with = staged.with_extension("with-analysis");
    let added = std::fs::copy(staged, &with)
        .map_err(|e| Error::io(with.display().to_string(), e))
        .and_then(|_| {
            let mut zip = ArchiveWriter::append(&with, dest)?;
            for (member, file) in &outputs {
                zip.add(member, file, true)?;
            }
            zip.finish()
        })
        .and_then(|()| {
            std::fs::rename(&with, staged).map_err(|e| Error::io(staged.display().to_string(), e))
        });
    if let Err(e) = added {
        let _ = std::fs::remove_file(&with);
        note(
            notes,
            dest,
            format!("warning: the analyses' outputs could not be stored: {e}"),
        );
        all_ok = false;
    }
    Ok(all_ok)
}

/// A zip archive being written.
pub struct ArchiveWriter {
    /// What messages call it: the destination the archive is staged for.
    place: String,
    zip: ZipWriter<Sink>,
    /// Whether writing the archive failed (its [`Sink`] says so): an I/O error the zip
    /// writer returns is the archive's then, else the source's it was reading.
    failed: Arc<AtomicBool>,
}

impl ArchiveWriter {
    /// Starts a new archive at `path`, to become `dest` (what errors name).
    pub fn create(path: &Path, dest: &Path) -> Result<ArchiveWriter> {
        let place = dest.display().to_string();
        let file = File::create(path).map_err(|e| Error::io(&place, e))?;
        let (sink, failed) = Sink::new(file);
        Ok(ArchiveWriter {
            place,
            zip: ZipWriter::new(sink),
            failed,
        })
    }

    /// Opens a finished archive at `path` (a copy of `dest`'s, what errors name) to add
    /// members.
    pub fn append(path: &Path, dest: &Path) -> Result<ArchiveWriter> {
        let place = dest.display().to_string();
        let file = File::options()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| Error::io(&place, e))?;
        let (sink, failed) = Sink::new(file);
        let zip = ZipWriter::new_append(sink).map_err(|e| zip_error(&place, e))?;
        Ok(ArchiveWriter { place, zip, failed })
    }

    /// Adds the file at `path` as `member`, deflated or (for files compressed already)
    /// stored.
    pub fn add(&mut self, member: &str, path: &Path, deflate: bool) -> Result<()> {
        let source = path.display().to_string();
        let file = File::open(path).map_err(|e| Error::io(&source, e))?;
        let len = file.metadata().map_err(|e| Error::io(&source, e))?.len();
        let method = if deflate {
            CompressionMethod::Deflated
        } else {
            CompressionMethod::Stored
        };
        let options = SimpleFileOptions::default()
            .compression_method(method)
            .unix_permissions(0o644)
            .large_file(len >= u64::from(u32::MAX));
        self.zip
            .start_file(member, options)
            .map_err(|e| self.error(member, e, None))?;
        // A read error is the source file's; a write error the archive's.
        let mut reader = BufReader::new(file);
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = match io::Read::read(&mut reader, &mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(&source, e)),
            };
            self.zip
                .write_all(&buf[..n])
                .map_err(|e| self.error(member, ZipError::Io(e), None))?;
        }
        Ok(())
    }

    /// Copies `entry` (opened with `ZipArchive::by_index_raw` from the archive `source`
    /// names, for read errors) as `member`: its compressed bytes as they are, with its own
    /// header fields (CRC-32, sizes, method, time, permissions, extra fields). The caller
    /// has read the entry through once already to check them: nothing here does, but that
    /// `member` is a plain name ([`member_name_fault`]) and the entry a file
    /// ([`special_entry`]) — never written otherwise, whatever the caller checked.
    pub fn raw_copy<R: io::Read>(
        &mut self,
        entry: zip::read::ZipFile<'_, R>,
        member: &str,
        source: &str,
    ) -> Result<()> {
        let fault = member_name_fault(member).or_else(|| special_entry(entry.unix_mode()));
        if let Some(fault) = fault {
            return Err(Error::data(
                format!("{}!{}", self.place, shown_name(member)),
                format!("not written, not a plain relative member name: {fault}"),
            ));
        }
        let from = entry.name().map_or_else(
            |_| source.to_string(),
            |n| format!("{source}!{}", shown_name(&n)),
        );
        self.zip
            .raw_copy_file_rename(entry, member)
            .map_err(|e| self.error(member, e, Some(&from)))
    }

    /// Writes the central directory.
    pub fn finish(self) -> Result<()> {
        let place = self.place;
        self.zip
            .finish()
            .and_then(|mut f| f.flush().map_err(Into::into))
            .map_err(|e| zip_error(&place, e))?;
        Ok(())
    }

    /// A failure to write `member` (read from `source`, where it is read here).
    fn error(&self, member: &str, e: ZipError, source: Option<&str>) -> Error {
        match (e, source) {
            (ZipError::Io(e), Some(source)) if !self.failed.load(Ordering::Relaxed) => {
                Error::io(source, e)
            }
            (ZipError::Io(e), _) => Error::io(
                &self.place,
                io::Error::new(e.kind(), format!("{e}, writing {}", shown_name(member))),
            ),
            (e, _) => Error::data(
                &self.place,
                format!("cannot store {}: {e}", shown_name(member)),
            ),
        }
    }
}

/// A failure of the zip writer on the archive `place`: an I/O error as such (`out.zip: No
/// space left on device (os error 28)`), never the zip crate's rendering of it.
fn zip_error(place: &str, e: ZipError) -> Error {
    match e {
        ZipError::Io(e) => Error::io(place, e),
        e => Error::data(place, format!("cannot be written: {e}")),
    }
}

/// The file an archive is written to. After its first failure (a full disk) it writes
/// nothing and fails nothing more: the zip writer, dropped unfinished on the way out of the
/// error, tries to finish the archive (the zip crate does so on drop) and would print its
/// own failure, unescaped and as a debug dump, on stderr before njx's message. The archive
/// is abandoned with its staging folder anyway.
struct Sink {
    file: File,
    /// Set on the first failure; then writes are counted only.
    failed: bool,
    /// The same, for the [`ArchiveWriter`].
    told: Arc<AtomicBool>,
    /// Where the abandoned writer thinks it is, and how long it thinks the file is.
    at: u64,
    len: u64,
}

impl Sink {
    /// A sink writing to `file`, and the flag it sets when that fails.
    fn new(file: File) -> (Sink, Arc<AtomicBool>) {
        let told = Arc::new(AtomicBool::new(false));
        let sink = Sink {
            file,
            failed: false,
            told: told.clone(),
            at: 0,
            len: 0,
        };
        (sink, told)
    }

    /// `r`, marking the sink failed when it is an error (but an interruption, which the
    /// caller retries).
    fn watch<T>(&mut self, r: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &r
            && e.kind() != io::ErrorKind::Interrupted
        {
            self.failed = true;
            self.told.store(true, Ordering::Relaxed);
            // Where the writer goes on from: the real file's position and length, as far
            // as they can be told.
            self.at = self.file.stream_position().unwrap_or(0);
            self.len = self
                .file
                .metadata()
                .map_or(self.at, |m| m.len())
                .max(self.at);
        }
        r
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.failed {
            self.at += buf.len() as u64;
            self.len = self.len.max(self.at);
            return Ok(buf.len());
        }
        let r = self.file.write(buf);
        self.watch(r)
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.failed {
            return Ok(());
        }
        let r = self.file.flush();
        self.watch(r)
    }
}

impl Seek for Sink {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        if self.failed {
            let to = match pos {
                SeekFrom::Start(n) => Some(n),
                SeekFrom::Current(d) => self.at.checked_add_signed(d),
                SeekFrom::End(d) => self.len.checked_add_signed(d),
            };
            self.at = to.unwrap_or(self.at);
            return Ok(self.at);
        }
        let r = self.file.seek(pos);
        self.watch(r)
    }
}

impl io::Read for Sink {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.failed {
            return Ok(0);
        }
        let r = self.file.read(buf);
        self.watch(r)
    }
}

/// Runs the `n`-th analysis pipeline on `archive` (an absolute path) in a fresh working
/// folder under `work` (`tool` is the pipeline's `$0`), and returns the members to add (its standard output, the files it
/// wrote) and whether it succeeded.
fn run_analysis(
    tool: &str,
    notes: &Notes,
    n: usize,
    pipeline: &str,
    archive: &Path,
    work: &Path,
) -> Result<(Vec<(String, PathBuf)>, bool)> {
    let name = format!("{n}-{}", slug(pipeline));
    let pipeline = named_analysis(pipeline).unwrap_or(pipeline);
    let cwd = work.join(&name);
    let stdout = work.join(format!("{name}.txt"));
    std::fs::create_dir_all(&cwd).map_err(|e| Error::io(cwd.display().to_string(), e))?;
    let out = File::create(&stdout).map_err(|e| Error::io(stdout.display().to_string(), e))?;
    let status = Command::new("bash")
        .args(["-o", "pipefail", "-c", pipeline, tool])
        .arg(archive)
        .env("NJX_ARCHIVE", archive)
        .env("PATH", path_with_own_folder())
        .current_dir(&cwd)
        .stdin(Stdio::null())
        .stdout(out)
        .status()
        .map_err(|e| Error::io(format!("--analysis {n}: running bash"), e))?;
    let mut members = vec![(format!("{ANALYSIS_DIR}{name}.txt"), stdout)];
    for file in crate::source::walk_dir(&cwd)? {
        members.push((format!("{ANALYSIS_DIR}{name}/{file}"), cwd.join(&file)));
    }
    let ok = status.success();
    if !ok {
        note(
            notes,
            archive,
            format!("warning: analysis {n} (`{pipeline}`) failed ({status}); its output is stored"),
        );
    }
    Ok((members, ok))
}

/// The analyses named by one word (`--analysis report`), as nsys-jax's `--nsys-jax-analysis
/// NAME` names its analyses, with the pipeline each stands for; its output is stored under
/// the word (`analysis/1-report.txt`).
pub const NAMED_ANALYSES: &[(&str, &str)] = &[("report", "njx-report \"$1\"")];

/// The pipeline `word` names, if it names one ([`NAMED_ANALYSES`]).
fn named_analysis(word: &str) -> Option<&'static str> {
    NAMED_ANALYSES
        .iter()
        .find(|(name, _)| *name == word.trim())
        .map(|(_, pipeline)| *pipeline)
}

/// `PATH` with the folder of the running tool's own executable first, so that analyses find
/// the njx tools installed beside it.
fn path_with_own_folder() -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let own = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    let dirs = own.into_iter().chain(std::env::split_paths(&path));
    std::env::join_paths(dirs).unwrap_or(path)
}

/// A file-name-safe rendering of a pipeline: letters, digits, `.`, `_`, `-`; runs of
/// anything else become one `-`; at most 48 characters.
fn slug(pipeline: &str) -> String {
    let mut out = String::new();
    for c in pipeline.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_') || (c == '-' && !out.ends_with('-'))
        {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= 48 {
            break;
        }
    }
    let out = out.trim_matches(['-', '.']).to_string();
    if out.is_empty() {
        "analysis".to_string()
    } else {
        out
    }
}

/// Moves the finished archive `staged` to `dest`: replacing it when `overwrite`, else only
/// if nothing is there (a hard link, which fails when the name exists, then the staged name
/// removed; where hard links are not supported, a check and a rename).
pub fn place(staged: &Path, dest: &Path, overwrite: bool) -> Result<()> {
    let place = dest.display().to_string();
    if overwrite {
        return std::fs::rename(staged, dest).map_err(|e| Error::io(&place, e));
    }
    match std::fs::hard_link(staged, dest) {
        Ok(()) => std::fs::remove_file(staged).map_err(|e| Error::io(&place, e)),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(exists(dest)),
        Err(_) if dest.exists() => Err(exists(dest)),
        Err(_) => std::fs::rename(staged, dest).map_err(|e| Error::io(&place, e)),
    }
}

/// The error for an archive that exists without `-f`.
pub fn exists(dest: &Path) -> Error {
    Error::data(
        dest.display().to_string(),
        "exists; pass -f (--force-overwrite) to overwrite it",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_file_name_safe() {
        assert_eq!(
            slug("njx-export \"$1\" | njx-compile-summary --total"),
            "njx-export-1-njx-compile-summary-total"
        );
        assert_eq!(slug("|||"), "analysis");
        assert_eq!(slug(&"a".repeat(100)).len(), 48);
    }

    #[test]
    fn member_names_must_be_plain_relative_paths() {
        for plain in [
            "report_nvtx_pushpop_trace.csv.xz",
            "dump/module_0001.jit_f.sm_8.0_gpu_after_optimizations.hlo.pb.xz",
            "sources/usr/lib/python3/site-packages/jax/_src/core.py",
            "a/b/c",
            "..a/b..",
            "a/.b",
            "ab:c",
            "ünïcode/名前",
        ] {
            assert_eq!(member_name_fault(plain), None, "{plain}");
        }
        for (name, why) in [
            ("", "empty"),
            ("../evil", "`..`"),
            ("dump/../../x", "`..`"),
            ("a/..", "`..`"),
            ("/abs/x", "absolute"),
            ("//x", "absolute"),
            ("C:/x", "drive"),
            ("c:x", "drive"),
            ("a\\..\\x", "backslash"),
            ("a\\b", "backslash"),
            ("a//b", "empty or `.`"),
            ("./a", "empty or `.`"),
            ("a/./b", "empty or `.`"),
            ("a/", "empty or `.`"),
            (".", "empty or `.`"),
            ("a\u{1b}[2Jb", "control"),
            ("a\nb", "control"),
            ("a\u{0}b", "control"),
            ("a\u{9b}b", "control"),
        ] {
            let fault = member_name_fault(name);
            assert!(
                fault.is_some_and(|f| f.contains(why)),
                "{name:?}: {fault:?}"
            );
        }
        assert_eq!(shown_name("a/b"), "a/b");
        assert_eq!(shown_name("a\u{1b}b\n"), "\"a\\u{1b}b\\n\"");
    }

    #[test]
    fn special_entries_are_told_by_their_unix_mode() {
        assert_eq!(special_entry(None), None);
        assert_eq!(special_entry(Some(0o644)), None);
        assert_eq!(special_entry(Some(0o100644)), None);
        assert_eq!(special_entry(Some(0o040755)), None);
        assert_eq!(special_entry(Some(0o120777)), Some("a symbolic link"));
        assert_eq!(special_entry(Some(0o010644)), Some("a FIFO"));
        assert_eq!(special_entry(Some(0o020644)), Some("a device"));
        assert_eq!(special_entry(Some(0o060644)), Some("a device"));
        assert_eq!(special_entry(Some(0o140644)), Some("a socket"));
    }

    /// A full disk (here /dev/full) is said once, as an I/O error naming the archive to be
    /// written and the member: the zip writer dropped after it writes (and says) nothing.
    #[cfg(target_os = "linux")]
    #[test]
    fn write_errors_name_the_archive() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("member");
        std::fs::write(&source, vec![7u8; 1 << 20]).unwrap();
        let mut zip = ArchiveWriter::create(Path::new("/dev/full"), Path::new("out.zip")).unwrap();
        let e = zip.add("dump/m", &source, false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "out.zip: No space left on device (os error 28), writing dump/m"
        );
        // Dropped unfinished: finishing into the failed sink succeeds without writing.
        let sink = zip.zip.get_ref().unwrap();
        assert!(sink.failed && zip.failed.load(Ordering::Relaxed));
        drop(zip);
        let zip = ArchiveWriter::create(Path::new("/dev/full"), Path::new("out.zip")).unwrap();
        let e = zip.finish().unwrap_err();
        assert_eq!(
            e.to_string(),
            "out.zip: No space left on device (os error 28)"
        );
        // A source that cannot be read is the source's error, not the archive's.
        let mut zip = ArchiveWriter::create(&dir.path().join("a.zip"), Path::new("a.zip")).unwrap();
        let e = zip.add("x", &dir.path().join("missing"), true).unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
    }

    #[test]
    fn placing_never_overwrites_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b.zip"));
        std::fs::write(&a, b"new").unwrap();
        std::fs::write(&b, b"old").unwrap();
        let e = place(&a, &b, false).unwrap_err();
        assert!(e.to_string().contains("pass -f"), "{e}");
        assert_eq!(std::fs::read(&b).unwrap(), b"old");
        place(&a, &b, true).unwrap();
        assert_eq!(std::fs::read(&b).unwrap(), b"new");
        assert!(!a.exists());
    }
}
