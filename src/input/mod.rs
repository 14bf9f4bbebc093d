//! Opening inputs, in one place for every tool: a path or `-` (stdin); gzip and xz
//! recognised by their magic bytes whatever the file is called; nsys-jax archives (`.zip`)
//! by their signature and extracted archives as directories; Parquet and SQLite files
//! by their headers.

pub mod archive;
pub mod gpuproj;
pub mod progress;
pub mod pushpop;
pub mod records;
pub mod threads;

use crate::error::{Error, Result};
pub use archive::Archive;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
const XZ_MAGIC: &[u8] = &[0xfd, b'7', b'z', b'X', b'Z', 0x00];
const ZIP_MAGIC: &[u8] = b"PK\x03\x04";
const EMPTY_ZIP_MAGIC: &[u8] = b"PK\x05\x06";
const PARQUET_MAGIC: &[u8] = b"PAR1";
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// A byte stream with the name to use in messages about it.
pub struct Stream {
    /// Name for messages: the path, `-` for stdin, `archive.zip!member` inside an archive.
    pub place: String,
    /// Decompressed contents.
    pub reader: Box<dyn BufRead>,
}

/// What an input turned out to be.
pub enum Opened {
    /// A (decompressed) text stream: CSV or JSON Lines.
    Stream(Stream),
    /// An nsys-jax or nsys-jax-combine archive, zipped or extracted.
    Archive(Archive),
    /// A Parquet file on disk.
    Parquet { place: String, file: File },
    /// An nsys SQLite export.
    Sqlite { place: String },
}

/// Display name of a path for messages.
pub fn place_of(path: &Path) -> String {
    if path == Path::new("-") {
        "-".to_string()
    } else {
        path.display().to_string()
    }
}

/// The profile name an input gives its records: the file name without directories and
/// without the `.zip`, `.gz`, `.xz`, `.csv`, `.parquet`, `.sqlite` or `.nsys-rep` suffixes.
pub fn profile_name(path: &Path) -> String {
    if path == Path::new("-") {
        return "stdin".to_string();
    }
    let mut name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    for suffix in [
        ".gz",
        ".xz",
        ".zip",
        ".csv",
        ".parquet",
        ".sqlite",
        ".jsonl",
        ".nsys-rep",
        ".qdrep",
    ] {
        if let Some(stripped) = name.strip_suffix(suffix) {
            name = stripped.to_string();
        }
    }
    name
}

/// Opens `path` (or stdin for `-`) and tells what it is.
pub fn open(path: &Path) -> Result<Opened> {
    let place = place_of(path);
    if path == Path::new("-") {
        let mut reader = BufReader::with_capacity(1 << 16, io::stdin());
        let head = peek(&mut reader, &place)?;
        if head.starts_with(ZIP_MAGIC) || head.starts_with(EMPTY_ZIP_MAGIC) {
            // A zip needs its central directory at the end: hold it in memory.
            let mut bytes = Vec::new();
            reader
                .read_to_end(&mut bytes)
                .map_err(|e| Error::io(&place, e))?;
            return Ok(Opened::Archive(Archive::from_bytes(place, "stdin", bytes)?));
        }
        if head.starts_with(PARQUET_MAGIC) || head.starts_with(SQLITE_MAGIC) {
            return Err(Error::data(
                place,
                "Parquet and SQLite inputs need random access: name the file instead of piping it",
            ));
        }
        let reader = decompress(&place, reader)?;
        return Ok(Opened::Stream(Stream { place, reader }));
    }
    if path.is_dir() {
        return Ok(Opened::Archive(Archive::open_dir(path)?));
    }
    let mut file = File::open(path).map_err(|e| Error::io(&place, e))?;
    let mut head = [0u8; 16];
    let n = read_up_to(&mut file, &mut head).map_err(|e| Error::io(&place, e))?;
    let head = &head[..n];
    file.seek(SeekFrom::Start(0))
        .map_err(|e| Error::io(&place, e))?;
    if head.starts_with(ZIP_MAGIC) || head.starts_with(EMPTY_ZIP_MAGIC) {
        Ok(Opened::Archive(Archive::open_zip(path, file)?))
    } else if head.starts_with(PARQUET_MAGIC) {
        Ok(Opened::Parquet { place, file })
    } else if head.starts_with(SQLITE_MAGIC) {
        Ok(Opened::Sqlite { place })
    } else {
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        let reader = match progress::Progress::wrap(file, &place, size) {
            Ok(p) => decompress(&place, BufReader::with_capacity(1 << 16, p))?,
            Err(file) => decompress(&place, BufReader::with_capacity(1 << 16, file))?,
        };
        Ok(Opened::Stream(Stream { place, reader }))
    }
}

/// Wraps `reader` in a gzip or xz decoder when its first bytes say it is compressed.
pub fn decompress<'a, R: BufRead + 'a>(
    place: &str,
    mut reader: R,
) -> Result<Box<dyn BufRead + 'a>> {
    let head = peek(&mut reader, place)?;
    if head.starts_with(GZIP_MAGIC) {
        let decoder = flate2::bufread::MultiGzDecoder::new(reader);
        Ok(Box::new(BufReader::with_capacity(1 << 16, decoder)))
    } else if head.starts_with(XZ_MAGIC) {
        let decoder = lzma_rust2::XzReader::new(reader, true);
        Ok(Box::new(BufReader::with_capacity(1 << 16, decoder)))
    } else {
        Ok(Box::new(reader))
    }
}

/// The first bytes of a buffered stream, without consuming them.
fn peek<R: BufRead + ?Sized>(reader: &mut R, place: &str) -> Result<Vec<u8>> {
    let buf = loop {
        match reader.fill_buf() {
            Ok(buf) => break buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(place, e)),
        }
    };
    Ok(buf[..buf.len().min(16)].to_vec())
}

fn read_up_to<R: Read>(reader: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match reader.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Every regular file under `dir`, as `/`-separated paths relative to it, sorted.
pub(crate) fn walk_dir(dir: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut todo: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| Error::io(place_of(&d), e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(place_of(&d), e))?;
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if let Ok(rel) = path.strip_prefix(dir) {
                let parts: Vec<_> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(parts.join("/"));
            }
        }
    }
    out.sort();
    Ok(out)
}
