//! Writing archives, for the tools that write them (njx-capture, njx-combine): the zip
//! writer, the staging folder beside the destination (the archive is written under its own
//! file name there, so that analyses see the right name), the `--analysis` pipelines run on
//! a copy of the finished archive with their outputs added, and the placing of the archive
//! (a rename; without `-f`, never over an existing file).

use crate::error::{Error, Result};
use crate::notes::Notes;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// The folder of the analyses' outputs.
pub const ANALYSIS_DIR: &str = "analysis/";

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
    _staged: crate::cleanup::Staged,
}

impl Stage {
    /// A stage for `dest`, in `dest`'s folder, as `.<tool>-XXXXXX/<file name>`.
    pub fn new(tool: &str, dest: &Path) -> Result<Stage> {
        let folder = folder_of(dest);
        let dir = tempfile::Builder::new()
            .prefix(&format!(".{tool}-"))
            .tempdir_in(folder)
            .map_err(|e| Error::io(folder.display().to_string(), e))?;
        let path = dir
            .path()
            .join(dest.file_name().unwrap_or(OsStr::new("report.zip")));
        let _staged = crate::cleanup::stage(dir.path());
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
/// adds their outputs to it (README, "njx-capture archives": `analysis/<n>-<name>.txt`
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
            let mut zip = ArchiveWriter::append(&with)?;
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
    place: String,
    zip: ZipWriter<File>,
}

impl ArchiveWriter {
    /// Starts a new archive at `path`.
    pub fn create(path: &Path) -> Result<ArchiveWriter> {
        let place = path.display().to_string();
        let file = File::create(path).map_err(|e| Error::io(&place, e))?;
        Ok(ArchiveWriter {
            place,
            zip: ZipWriter::new(file),
        })
    }

    /// Opens a finished archive at `path` to add members.
    pub fn append(path: &Path) -> Result<ArchiveWriter> {
        let place = path.display().to_string();
        let file = File::options()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| Error::io(&place, e))?;
        let zip =
            ZipWriter::new_append(file).map_err(|e| Error::io(&place, io::Error::other(e)))?;
        Ok(ArchiveWriter { place, zip })
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
            .map_err(|e| self.error(member, io::Error::other(e)))?;
        io::copy(&mut BufReader::new(file), &mut self.zip).map_err(|e| self.error(member, e))?;
        Ok(())
    }

    /// Copies `entry` (opened with `ZipArchive::by_index_raw`) as `member`: its compressed
    /// bytes as they are, with its own header fields (CRC-32, sizes, method, time,
    /// permissions, extra fields). The caller has read the entry through once already to
    /// check them: nothing here does.
    pub fn raw_copy<R: io::Read>(
        &mut self,
        entry: zip::read::ZipFile<'_, R>,
        member: &str,
    ) -> Result<()> {
        self.zip
            .raw_copy_file_rename(entry, member)
            .map_err(|e| self.error(member, io::Error::other(e)))
    }

    /// Writes the central directory.
    pub fn finish(self) -> Result<()> {
        let place = self.place;
        self.zip
            .finish()
            .and_then(|mut f| f.flush().map_err(Into::into))
            .map_err(|e| Error::io(&place, io::Error::other(e)))?;
        Ok(())
    }

    fn error(&self, member: &str, e: io::Error) -> Error {
        Error::io(format!("{}!{member}", self.place), e)
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
