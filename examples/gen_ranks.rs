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

use parquet::basic::{ConvertedType, LogicalType, Repetition, Type as Physical};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use pq::{Cells, PqCol, parquet_table_with};
use regex::Regex;
use std::error::Error;
use std::fs::File;
use std::io::{BufWriter, Cursor, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// The member renamed threads are in.
const THREADS_MEMBER: &str = "thread-metadata.parquet";

/// One column of the thread table: its name, whether it is `required`, its cells.
struct Column {
    name: &'static str,
    required: bool,
    cells: Cells,
}

/// What a rank copies from one source archive.
struct Source {
    path: PathBuf,
    archive: zip::ZipArchive<Cursor<Vec<u8>>>,
    /// The thread table's columns, and which of them is `Name`.
    columns: Vec<Column>,
    name_col: usize,
    /// Rows of its largest row group (the new table is written in groups of this size).
    rows_per_group: usize,
    compression: parquet::basic::Compression,
    key_value: Option<Vec<KeyValue>>,
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
        let reader = SerializedFileReader::new(bytes::Bytes::from(table))
            .map_err(|e| format!("{THREADS_MEMBER}: {e}"))?;
        let meta = reader.metadata();
        let schema = meta.file_metadata().schema_descr();
        let mut columns = Vec::new();
        for c in schema.columns() {
            let t = c.self_type();
            let info = t.get_basic_info();
            // Flat columns only: a leaf whose path is its own name.
            if c.path().parts().len() != 1 {
                return Err(
                    format!("{THREADS_MEMBER}: nested column {} unsupported", c.path()).into(),
                );
            }
            let name: &'static str = Box::leak(c.name().to_string().into_boxed_str());
            let text = matches!(info.logical_type_ref(), Some(LogicalType::String))
                || info.converted_type() == ConvertedType::UTF8;
            let plain = info.logical_type_ref().is_none()
                && matches!(
                    info.converted_type(),
                    ConvertedType::NONE | ConvertedType::INT_64 | ConvertedType::INT_32
                );
            let cells = match c.physical_type() {
                Physical::BYTE_ARRAY if text => Cells::Text(Vec::new()),
                Physical::INT64 if plain => Cells::Int64(Vec::new()),
                Physical::INT32 if plain => Cells::Int32(Vec::new()),
                Physical::DOUBLE if plain => Cells::Double(Vec::new()),
                other => {
                    return Err(format!(
                        "{THREADS_MEMBER}: column {name} of type {other} ({:?}) unsupported",
                        info.logical_type_ref()
                    )
                    .into());
                }
            };
            columns.push(Column {
                name,
                required: info.repetition() == Repetition::REQUIRED,
                cells,
            });
        }
        let name_col = columns
            .iter()
            .position(|c| c.name == "Name" && matches!(c.cells, Cells::Text(_)))
            .ok_or_else(|| format!("{THREADS_MEMBER}: no text column Name"))?;
        for (row_no, row) in reader.get_row_iter(None)?.enumerate() {
            let row = row?;
            for (column, (_, field)) in columns.iter_mut().zip(row.get_column_iter()) {
                let bad = || {
                    format!(
                        "{THREADS_MEMBER}: row {}: unexpected {field:?} in column {}",
                        row_no + 1,
                        column.name
                    )
                };
                match (&mut column.cells, field) {
                    (Cells::Int64(v), Field::Long(x)) => v.push(Some(*x)),
                    (Cells::Int64(v), Field::Null) => v.push(None),
                    (Cells::Int32(v), Field::Int(x)) => v.push(Some(*x)),
                    (Cells::Int32(v), Field::Null) => v.push(None),
                    (Cells::Double(v), Field::Double(x)) => v.push(Some(*x)),
                    (Cells::Double(v), Field::Null) => v.push(None),
                    (Cells::Text(v), Field::Str(x)) => v.push(Some(x.clone())),
                    (Cells::Text(v), Field::Null) => v.push(None),
                    _ => return Err(bad().into()),
                }
            }
        }
        let rows_per_group = meta
            .row_groups()
            .iter()
            .map(|g| g.num_rows())
            .max()
            .unwrap_or(0)
            .try_into()?;
        let compression = meta
            .row_groups()
            .first()
            .and_then(|g| g.columns().first())
            .map_or(parquet::basic::Compression::SNAPPY, |c| c.compression());
        let key_value = meta.file_metadata().key_value_metadata().cloned();
        Ok(Source {
            path: path.to_path_buf(),
            archive,
            columns,
            name_col,
            rows_per_group,
            compression,
            key_value,
        })
    }

    /// The thread table with the launcher threads named for `rank`.
    fn threads_for(&self, rank: usize, launcher: &Regex) -> Result<Vec<u8>> {
        let mut renamed = 0;
        let columns: Vec<PqCol> = self
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
                    Cells::Text(v) => Cells::Text(v.clone()),
                    Cells::Int64(v) => Cells::Int64(v.clone()),
                    Cells::Int32(v) => Cells::Int32(v.clone()),
                    Cells::Double(v) => Cells::Double(v.clone()),
                    Cells::Int64List(v) => Cells::Int64List(v.clone()),
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
        let properties = WriterProperties::builder()
            .set_compression(self.compression)
            .set_key_value_metadata(self.key_value.clone())
            .build();
        Ok(parquet_table_with(
            &columns,
            self.rows_per_group,
            properties,
        ))
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
