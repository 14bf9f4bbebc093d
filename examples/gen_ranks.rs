//! Synthetic N-rank runs from a few real nsys-jax archives, for scaling measurements
//! (`scripts/bench-scale.sh`).
//!
//! ```text
//! cargo run --release --example gen_ranks -- OUT_DIR N [SOURCE_ARCHIVES...]
//! ```
//!
//! Writes `OUT_DIR/rank{r}.zip` for r = 0..N-1, zero-padded to at least four digits so
//! that they sort (`rank0000.zip`). Rank r is a copy of source archive r mod (number of
//! sources), by default the four pax archives in `../shared/data/pax_fsdp4_4proc/`
//! (relative to the repository root). The copy is identical but for
//! `thread-metadata.parquet`: every launcher thread, named
//! `XlaLauncher:#global=G,local=L,process=P,partition=S#`, is renamed to `global=r` and
//! `process=r`, so that each rank is its own global device. The table keeps all its
//! columns, rows, compression and key-value metadata (pandas' and Arrow's schema); every
//! other member is copied raw (its compressed bytes, without decompressing).
//!
//! Each archive is written under a temporary name and renamed into place. Other
//! `rank*.zip` files already in OUT_DIR are left alone: give each N its own folder.

#[path = "../tests/njx/common/pq.rs"]
mod pq;

use pq::{Cells, FlatTable, PqCol};
use regex::Regex;
use std::error::Error;
use std::fs::File;
use std::io::{BufWriter, Cursor, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// The member renamed threads are in.
const THREADS_MEMBER: &str = "thread-metadata.parquet";

/// What a rank copies from one source archive.
struct Source {
    path: PathBuf,
    archive: zip::ZipArchive<Cursor<Vec<u8>>>,
    /// The thread table, and which of its columns is `Name`.
    table: FlatTable,
    name_col: usize,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 || args.iter().any(|a| a == "-h" || a == "--help") {
        eprintln!(
            "usage: gen_ranks OUT_DIR N [SOURCE_ARCHIVES...]\n\
             Writes OUT_DIR/rank0000.zip … (N archives), rank r a copy of source r mod \
             (number of sources)\nwith its XlaLauncher threads renamed to global=r, \
             process=r. Default sources: the four\npax archives in \
             ../shared/data/pax_fsdp4_4proc/ (relative to the repository root)."
        );
        return ExitCode::from(2);
    }
    let Ok(n) = args[1].parse::<usize>() else {
        eprintln!("gen_ranks: N must be a whole number, not {:?}", args[1]);
        return ExitCode::from(2);
    };
    let sources: Vec<PathBuf> = if args.len() > 2 {
        args[2..].iter().map(PathBuf::from).collect()
    } else {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/pax_fsdp4_4proc");
        (0..4)
            .map(|i| dir.join(format!("pax_fsdp4_4proc_proc{i}.zip")))
            .collect()
    };
    match generate(Path::new(&args[0]), n, &sources) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen_ranks: {e}");
            ExitCode::FAILURE
        }
    }
}

fn generate(out_dir: &Path, n: usize, sources: &[PathBuf]) -> Result<()> {
    let mut sources = sources
        .iter()
        .map(|p| Source::open(p).map_err(|e| format!("{}: {e}", p.display()).into()))
        .collect::<Result<Vec<_>>>()?;
    std::fs::create_dir_all(out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let width = n.saturating_sub(1).to_string().len().max(4);
    let launcher =
        Regex::new(r"^XlaLauncher:#global=\d+,local=(\d+),process=\d+,(partition|slice)=(\d+)#$")?;
    for rank in 0..n {
        let count = sources.len();
        let source = &mut sources[rank % count];
        let path = out_dir.join(format!("rank{rank:0width$}.zip"));
        let partial = out_dir.join(format!(".rank{rank:0width$}.zip.partial"));
        source
            .write_rank(rank, &launcher, &partial)
            .map_err(|e| format!("{}: {e}", partial.display()))?;
        std::fs::rename(&partial, &path)
            .map_err(|e| format!("cannot rename to {}: {e}", path.display()))?;
    }
    eprintln!(
        "gen_ranks: wrote {n} archives to {} from {} source(s)",
        out_dir.display(),
        sources.len()
    );
    Ok(())
}

impl Source {
    fn open(path: &Path) -> Result<Source> {
        let bytes = std::fs::read(path)?;
        let mut archive = zip::ZipArchive::new(Cursor::new(bytes))?;
        let mut table = Vec::new();
        archive
            .by_name(THREADS_MEMBER)
            .map_err(|e| format!("{THREADS_MEMBER}: {e}"))?
            .read_to_end(&mut table)?;
        let table = FlatTable::read(table, THREADS_MEMBER)?;
        let name_col = table
            .columns
            .iter()
            .position(|c| c.name == "Name" && matches!(c.cells, Cells::Text(_)))
            .ok_or_else(|| format!("{THREADS_MEMBER}: no text column Name"))?;
        Ok(Source {
            path: path.to_path_buf(),
            archive,
            table,
            name_col,
        })
    }

    /// The thread table with the launcher threads named for `rank`.
    fn threads_for(&self, rank: usize, launcher: &Regex) -> Result<Vec<u8>> {
        let mut renamed = 0;
        let columns: Vec<PqCol> = self
            .table
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let cells = match &c.cells {
                    Cells::Text(v) if i == self.name_col => Cells::Text(
                        v.iter()
                            .map(|name| {
                                let name = name.as_deref()?;
                                Some(match launcher.captures(name) {
                                    Some(caps) => {
                                        renamed += 1;
                                        format!(
                                            "XlaLauncher:#global={rank},local={},process={rank},{}={}#",
                                            &caps[1], &caps[2], &caps[3]
                                        )
                                    }
                                    None => name.to_string(),
                                })
                            })
                            .collect(),
                    ),
                    other => other.copy(),
                };
                PqCol {
                    name: c.name,
                    required: c.required,
                    cells,
                }
            })
            .collect();
        if renamed == 0 {
            return Err(format!(
                "{}: {THREADS_MEMBER} names no XlaLauncher thread",
                self.path.display()
            )
            .into());
        }
        Ok(self.table.write_like(&columns))
    }

    /// Writes rank `rank`'s archive to `path`: every member in the source's order, the
    /// thread table rewritten, the rest copied raw.
    fn write_rank(&mut self, rank: usize, launcher: &Regex, path: &Path) -> Result<()> {
        let threads = self.threads_for(rank, launcher)?;
        let mut w = zip::ZipWriter::new(BufWriter::new(File::create(path)?));
        for i in 0..self.archive.len() {
            let member = self.archive.by_index_raw(i)?;
            if member.name()? == THREADS_MEMBER {
                let options = member.options();
                let name = member.name()?.into_owned();
                drop(member);
                w.start_file(name, options)?;
                w.write_all(&threads)?;
            } else {
                w.raw_copy_file(member)?;
            }
        }
        w.finish()?.flush()?;
        Ok(())
    }
}
