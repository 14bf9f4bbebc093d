//! Post-processing a capture into its archive, with njx's own code once nsys has exported
//! the report: the HLO dumps xz-compressed, the Python sources their stack frames name,
//! and what is left to `crate::archives::writer`, shared with njx-combine: the zip written
//! under a temporary name beside its destination, the `--analysis` pipelines run on it and
//! their outputs added, and the rename into place.
//!
//! The layout (docs/formats.md, "njx-capture archives"):
//!
//! ```text
//! report.nsys-rep                      the nsys report, for the nsys GUI
//! report.sqlite                        `nsys export --type sqlite` of it: what njx-export reads
//! dump/module_NNNN.<name>.<stage>.hlo.pb.xz   XLA's HLO protobuf dumps, as nsys-jax stores them
//! sources/<absolute path without the leading />   Python files named in the dumps' stack frames
//! analysis/<n>-<name>.txt              standard output of the n-th --analysis pipeline
//! analysis/<n>-<name>/<file>           files that pipeline wrote in its working folder
//! ```

pub use crate::archives::writer::note;
use crate::error::{Error, Result};
use crate::hlo::proto::HloProto;
use crate::output::notes::Notes;
pub use crate::source::layout::{DUMP_DIR, SOURCES_DIR};
use crate::source::sqlite::Db;
use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// xz preset of the dumps: HLO protobufs shrink about tenfold already at low presets, and
/// the higher ones cost far more time than they save space.
const XZ_PRESET: u32 = 3;

/// At most this many dumps are compressed at once: each worker holds a whole dump (they
/// reach hundreds of MB for large models) and, while reading its sources, its decoded form.
const MAX_WORKERS: usize = 8;

/// The HLO dumps of a capture, compressed, and the source files they name.
#[derive(Debug, Default)]
pub struct Dumps {
    /// `(member name, compressed file)`, by name.
    pub files: Vec<(String, PathBuf)>,
    /// Every file name in the dumps' stack frame indices.
    pub sources: BTreeSet<String>,
}

/// Whether `name` is an HLO protobuf dump of XLA's (`module_0040.jit_f.<stage>.hlo.pb`).
fn is_hlo_dump(name: &str) -> bool {
    name.starts_with("module_") && name.ends_with(".hlo.pb")
}

/// The XLA programs that ran (an `XlaModule` NVTX range with a `program_id`) in the SQLite
/// export `sqlite` but have no after-optimizations dump among `dumps` (member names
/// `dump/module_NNNN.<name>.<stage>after_optimizations.hlo.pb.xz`): executables loaded from
/// JAX's compilation cache by an XLA from before openxla/xla#28928, which dumped only what
/// it compiled. Sorted ids.
pub fn undumped_programs(sqlite: &Path, dumps: &[(String, PathBuf)]) -> Result<Vec<u64>> {
    let db = Db::open(sqlite, &sqlite.display().to_string())?;
    if !db.has("NVTX_EVENTS") {
        return Ok(Vec::new());
    }
    let Some(text) = db.nvtx_text()? else {
        return Ok(Vec::new());
    };
    let sql = format!(
        "SELECT DISTINCT {text} FROM NVTX_EVENTS e WHERE {text} LIKE 'XlaModule:%program_id=%'"
    );
    let mut stmt = db
        .conn()
        .prepare(&sql)
        .map_err(|e| db.sql_error("NVTX_EVENTS", e))?;
    let names: Vec<Option<String>> = stmt
        .query_map([], |row| row.get(0))
        .and_then(|rows| rows.collect())
        .map_err(|e| db.sql_error("NVTX_EVENTS", e))?;
    let ran: BTreeSet<u64> = names
        .iter()
        .flatten()
        .filter_map(|n| {
            let id = n.rsplit_once(",program_id=")?.1.strip_suffix('#')?;
            id.parse().ok()
        })
        .collect();
    let dumped: BTreeSet<u64> = dumps
        .iter()
        .filter(|(member, _)| member.contains("after_optimizations"))
        .filter_map(|(member, _)| {
            let file = member.rsplit('/').next()?;
            file.strip_prefix("module_")?
                .split('.')
                .next()?
                .parse()
                .ok()
        })
        .collect();
    Ok(ran.difference(&dumped).copied().collect())
}

/// Compresses every HLO dump in `dump_dir` into `out_dir` (as `<name>.xz`), several at
/// once, and reads the file names of their stack frames. A dump that does not decode is
/// still stored; the warning says that its sources are missing.
pub fn compress_dumps(
    notes: &Notes,
    archive: &Path,
    dump_dir: &Path,
    out_dir: &Path,
) -> Result<Dumps> {
    let mut names = Vec::new();
    match std::fs::read_dir(dump_dir) {
        Ok(entries) => {
            for entry in entries {
                let entry = entry.map_err(|e| Error::io(dump_dir.display().to_string(), e))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if is_hlo_dump(&name) && entry.path().is_file() {
                    names.push(name);
                }
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(dump_dir.display().to_string(), e)),
    }
    names.sort();
    if names.is_empty() {
        note(
            notes,
            archive,
            "warning: XLA wrote no HLO dumps (did the program compile anything with XLA?)",
        );
        return Ok(Dumps::default());
    }
    note(
        notes,
        archive,
        format!("compressing {} HLO dumps…", names.len()),
    );
    std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir.display().to_string(), e))?;
    let next = Mutex::new(names.iter());
    let sources = Mutex::new(BTreeSet::new());
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(MAX_WORKERS)
        .min(names.len());
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| -> Result<()> {
                    loop {
                        let Some(name) = next.lock().map_or(None, |mut it| it.next()) else {
                            return Ok(());
                        };
                        let found =
                            compress_dump(notes, archive, &dump_dir.join(name), out_dir, name)?;
                        if let Ok(mut all) = sources.lock() {
                            all.extend(found);
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })?;
    let files = names
        .iter()
        .map(|n| (format!("{DUMP_DIR}{n}.xz"), out_dir.join(format!("{n}.xz"))))
        .collect();
    Ok(Dumps {
        files,
        sources: sources.into_inner().unwrap_or_default(),
    })
}

/// Compresses one dump to `out_dir/<name>.xz`; returns the file names its stack frames
/// name. The dump is decoded (and the decoded form dropped) before it is compressed, so
/// that a worker holds at most the dump and one of the two.
fn compress_dump(
    notes: &Notes,
    archive: &Path,
    path: &Path,
    out_dir: &Path,
    name: &str,
) -> Result<Vec<String>> {
    let place = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| Error::io(&place, e))?;
    let sources = match <HloProto as prost::Message>::decode(&bytes[..]) {
        Ok(proto) => proto
            .hlo_module
            .and_then(|m| m.stack_frame_index)
            .map(|index| index.file_names)
            .unwrap_or_default(),
        Err(e) => {
            note(
                notes,
                archive,
                format!(
                    "warning: {place}: not a valid XLA HloProto ({e}); stored, but its \
                     sources are not gathered"
                ),
            );
            Vec::new()
        }
    };
    let target = out_dir.join(format!("{name}.xz"));
    File::create(&target)
        .and_then(|out| {
            let mut xz = xz2::write::XzEncoder::new(BufWriter::new(out), XZ_PRESET);
            xz.write_all(&bytes)?;
            xz.finish()?.flush()
        })
        .map_err(|e| Error::io(target.display().to_string(), e))?;
    Ok(sources)
}

/// The source files to store: `(member name, file)` for each absolute path that exists.
/// Pseudo-files (`<string>`, `<frozen runpy>`) are skipped as nsys-jax does; relative and
/// missing files are counted in a warning.
pub fn sources(notes: &Notes, archive: &Path, names: &BTreeSet<String>) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for name in names {
        if name.starts_with('<') {
            continue;
        }
        let path = Path::new(name);
        match name.strip_prefix('/') {
            Some(rel) if path.is_file() => found.push((format!("{SOURCES_DIR}{rel}"), path.into())),
            _ => missing.push(name.as_str()),
        }
    }
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(3).copied().collect();
        note(
            notes,
            archive,
            format!(
                "warning: {} source files named in the HLO dumps are not here (or not absolute), \
                 so not stored: {}{}",
                missing.len(),
                shown.join(", "),
                if missing.len() > shown.len() {
                    ", …"
                } else {
                    ""
                }
            ),
        );
    }
    found
}
