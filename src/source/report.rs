//! `.nsys-rep` reports: nsys' own binary format, which only nsys reads. When `nsys` is on
//! `PATH`, `nsys export --type sqlite` turns the report into an SQLite export in a
//! temporary folder, removed again once read; otherwise the error says how to export by
//! hand.

use super::sqlite::Db;
use super::{Archive, SQLITE_MEMBER};
use crate::error::{Error, Result};
use crate::output::progress::Progress;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// The first bytes of every `.nsys-rep` (and older `.qdrep`) file seen.
pub use crate::output::guard::REPORT_MAGIC as MAGIC;

/// Whether `path` is an nsys report: named `.nsys-rep` or `.qdrep`, or starting with
/// the reports' header.
pub fn is_report(path: &Path) -> bool {
    if path == Path::new("-") || !path.is_file() {
        return false;
    }
    if path
        .extension()
        .is_some_and(|e| e == "nsys-rep" || e == "qdrep")
    {
        return true;
    }
    let mut head = [0u8; MAGIC.len()];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == MAGIC)
}

/// An SQLite export of a report in a temporary folder, removed when dropped.
pub struct Exported {
    dir: PathBuf,
    sqlite: PathBuf,
}

impl Exported {
    /// The SQLite file.
    pub fn path(&self) -> &Path {
        &self.sqlite
    }
}

impl Drop for Exported {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A new empty folder under the system's temporary folder.
fn temp_dir() -> std::io::Result<PathBuf> {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    loop {
        let dir = std::env::temp_dir().join(format!(
            "njx-{}-{nanos}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::create_dir(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            other => return other.map(|()| dir),
        }
    }
}

/// Copies an export held elsewhere (an archive member) into a temporary folder, where
/// SQLite can open it.
pub fn extract(mut reader: impl Read, place: &str) -> Result<Exported> {
    let dir = temp_dir().map_err(|e| Error::io("temporary folder", e))?;
    let exported = Exported {
        sqlite: dir.join("report.sqlite"),
        dir,
    };
    let mut file = std::fs::File::create(&exported.sqlite)
        .map_err(|e| Error::io(exported.sqlite.display().to_string(), e))?;
    std::io::copy(&mut reader, &mut file).map_err(|e| Error::io(place, e))?;
    Ok(exported)
}

/// Exports the report at `path` (named `place` in messages) to SQLite with `nsys export`.
/// nsys' own output goes to stderr, so that stdout stays the records: as it comes, or,
/// while `progress` is shown there, once nsys has ended.
pub fn export(path: &Path, place: &str, progress: &Progress) -> Result<Exported> {
    let dir = temp_dir().map_err(|e| Error::io("temporary folder", e))?;
    let exported = Exported {
        sqlite: dir.join("report.sqlite"),
        dir,
    };
    let mut nsys = Command::new("nsys");
    nsys.args([
        "export",
        "--type",
        "sqlite",
        "--force-overwrite",
        "true",
        "--output",
    ])
    .arg(&exported.sqlite)
    .arg(path)
    .stdin(Stdio::null());
    let status = if progress.is_shown() {
        // Its messages would be torn by the progress line drawn on the same terminal:
        // kept until it ends, then said with the line erased.
        nsys.output().map(|out| {
            progress.suspend(|| {
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(&out.stdout);
                let _ = err.write_all(&out.stderr);
            });
            out.status
        })
    } else {
        nsys.stdout(std::io::stderr()).status()
    };
    let status = match status {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::data(
                place,
                "an nsys report, which only nsys can read, and `nsys` is not on PATH: export \
                 it by hand with `nsys export --type sqlite REPORT.nsys-rep` and pass the \
                 .sqlite file",
            ));
        }
        Err(e) => return Err(Error::io(format!("{place}: running nsys export"), e)),
    };
    if !status.success() {
        return Err(Error::data(
            place,
            format!("`nsys export --type sqlite` failed ({status}); its messages are above"),
        ));
    }
    if !exported.sqlite.is_file() {
        return Err(Error::data(
            place,
            "`nsys export --type sqlite` succeeded but wrote no SQLite file",
        ));
    }
    Ok(exported)
}

/// The SQLite export held by an archive njx-capture wrote ([`SQLITE_MEMBER`]), copied out
/// and opened (the copy lives as long as the returned guard), for an archive without the
/// nsys-jax form of `table` (stored as `members`): an error saying what was looked for
/// when it has neither.
pub fn open_in_archive(
    archive: &mut Archive,
    table: &str,
    members: &str,
) -> Result<(Db, Exported)> {
    if archive.find(SQLITE_MEMBER).is_empty() {
        return Err(Error::data(
            archive.place(),
            format!("archive has no {table} (looked for {members} and {SQLITE_MEMBER})"),
        ));
    }
    let place = archive.member_place(SQLITE_MEMBER);
    let progress = archive.progress().clone();
    let exported = extract(archive.open_member(SQLITE_MEMBER)?, &place)?;
    let db = Db::open(exported.path(), &place)?.reporting(&progress);
    Ok((db, exported))
}
