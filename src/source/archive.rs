//! nsys-jax archives: the `.zip` that `nsys-jax` writes, the same tree extracted into a
//! directory, and `nsys-jax-combine` archives. A combine archive holds several profiles;
//! a file whose content differs between them is stored once per profile as
//! `path/<profile>` (for example `report_nvtx_pushpop_trace.csv.xz/rank3`), a file they
//! share is stored once as `path`.

use super::counting::{Counting, Reading};
use super::limits::{self, Inflated};
use super::{
    decompress, decompress_apart, is_compressed, looks_like_archive_dir, place_of, profile_name,
    walk_dir,
};
use crate::error::{Error, Result};
use crate::output::progress::Progress;
use parquet::file::reader::ChunkReader;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use zip::ZipArchive;

/// What a zip archive is read from.
pub(crate) trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

enum Backend {
    Zip {
        /// The file on disk, for random access to stored (uncompressed) members.
        path: Option<PathBuf>,
        zip: ZipArchive<Box<dyn ReadSeek>>,
    },
    Dir(PathBuf),
}

/// An open archive.
pub struct Archive {
    place: String,
    stem: String,
    backend: Backend,
    members: Vec<String>,
    /// Where the members read are said and their bytes counted.
    progress: Progress,
}

/// A table found in an archive: which profile it belongs to and where it is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Profile name: the archive's stem, or the per-profile suffix in a combine archive.
    pub profile: String,
    /// Path of the member inside the archive.
    pub path: String,
}

/// A Parquet member opened for random access.
pub enum ParquetMember {
    /// A file of an extracted archive.
    File(Counting<File>),
    /// A member stored without compression in a zip file: read in place.
    Slice(Counting<FileSlice>),
    /// A compressed zip member (or an archive read from stdin), held in memory.
    Bytes(bytes::Bytes),
}

impl Archive {
    /// Opens a zip archive from a file already checked to start with the zip signature;
    /// the members read are said, and the bytes of the archive read counted, in `progress`.
    pub fn open_zip(path: &Path, file: File, progress: &Progress) -> Result<Archive> {
        let reader: Box<dyn ReadSeek> = Box::new(BufReader::new(Reading::new(file, progress)));
        Self::from_zip(
            place_of(path),
            profile_name(path),
            Some(path.into()),
            reader,
            progress,
        )
    }

    /// Opens a zip archive spooled to an unnamed temporary file (read from stdin, where
    /// its bytes counted as read).
    pub fn from_spool(
        place: String,
        stem: &str,
        spool: File,
        progress: &Progress,
    ) -> Result<Archive> {
        let reader: Box<dyn ReadSeek> = Box::new(BufReader::new(spool));
        Self::from_zip(place, stem.to_string(), None, reader, progress)
    }

    fn from_zip(
        place: String,
        stem: String,
        path: Option<PathBuf>,
        mut reader: Box<dyn ReadSeek>,
        progress: &Progress,
    ) -> Result<Archive> {
        let declared = declared_entries(&mut reader).map_err(|e| Error::io(&place, e))?;
        let mut zip = ZipArchive::new(reader).map_err(|e| {
            let e = e.to_string();
            if e.contains("EOCD") {
                Error::data(
                    &place,
                    "truncated, or not a zip archive: it starts like one but its end (the \
                     central directory) is missing",
                )
            } else {
                Error::data(&place, format!("not a readable zip archive: {e}"))
            }
        })?;
        if let Some((total, counted)) = declared {
            // The zip reader keeps one entry per name: entries the directory lists beyond
            // those are names given twice, whose contents would be read for one another.
            if total as usize > zip.len() {
                return Err(Error::data(
                    &place,
                    format!(
                        "{} of its {total} members repeat a name given earlier: which one is \
                         meant cannot be told",
                        total as usize - zip.len()
                    ),
                ));
            }
            // And it reads as many entries as the end record declares: a directory holding
            // more would lose the rest silently.
            if counted != total {
                return Err(Error::data(
                    &place,
                    format!(
                        "its central directory holds {counted} members where its end record \
                         declares {total}: the archive is damaged"
                    ),
                ));
            }
        }
        check_entries(&place, &mut zip)?;
        let mut members = Vec::with_capacity(zip.len());
        for name in zip.file_names() {
            let name = name.map_err(|e| Error::data(&place, format!("bad member name: {e}")))?;
            if !name.ends_with('/') {
                members.push(name.into_owned());
            }
        }
        members.sort();
        check_names(&place, &members)?;
        Ok(Archive {
            place,
            stem,
            backend: Backend::Zip { path, zip },
            members,
            progress: progress.clone(),
        })
    }

    /// Opens an extracted archive; the members read are said, and their bytes counted, in
    /// `progress`.
    pub fn open_dir(path: &Path, progress: &Progress) -> Result<Archive> {
        if !looks_like_archive_dir(path)? {
            return Err(Error::data(
                place_of(path),
                "a folder, but neither an extracted nsys-jax archive nor an XLA dump folder \
                 (nothing at its top named report_nvtx_pushpop_trace.*, report.sqlite, \
                 nvtx_gpu_proj_trace, thread-metadata.parquet, dump or module_*); for \
                 several archives, name them: dir/*.zip",
            ));
        }
        let stem = path
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| profile_name(path));
        Ok(Archive {
            place: place_of(path),
            stem,
            members: walk_dir(path)?,
            backend: Backend::Dir(path.to_path_buf()),
            progress: progress.clone(),
        })
    }

    /// The archive's name for messages.
    pub fn place(&self) -> &str {
        &self.place
    }

    /// Where the members read are said.
    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// Name for messages about one member: `archive.zip!member`.
    pub fn member_place(&self, member: &str) -> String {
        format!("{}!{}", self.place, member)
    }

    /// The zip reader of an archive opened from a zip file, `None` for a folder: for
    /// njx-combine, which checks each member's content and then copies it as it is stored.
    pub(crate) fn zip(&mut self) -> Option<&mut ZipArchive<Box<dyn ReadSeek>>> {
        match &mut self.backend {
            Backend::Zip { zip, .. } => Some(zip),
            Backend::Dir(_) => None,
        }
    }

    /// All regular files in the archive, sorted.
    pub fn members(&self) -> &[String] {
        &self.members
    }

    /// Where the file `path` is for each profile: `path` itself for a single-profile
    /// archive, or every `path/<profile>` of a combine archive, in profile order.
    pub fn find(&self, path: &str) -> Vec<Member> {
        if self.members.iter().any(|m| m == path) {
            return vec![Member {
                profile: self.stem.clone(),
                path: path.to_string(),
            }];
        }
        let prefix = format!("{path}/");
        self.members
            .iter()
            .filter_map(|m| {
                let profile = m.strip_prefix(&prefix)?;
                (!profile.contains('/')).then(|| Member {
                    profile: profile.to_string(),
                    path: m.clone(),
                })
            })
            .collect()
    }

    /// The member holding `path` for `profile`: `path` itself when all profiles share it
    /// (or the archive has one profile), else the profile's copy `path/<profile>`.
    pub fn member_for(&self, path: &str, profile: &str) -> Option<String> {
        let found = self.find(path);
        found
            .iter()
            .find(|m| m.path == path)
            .or_else(|| found.iter().find(|m| m.profile == profile))
            .map(|m| m.path.clone())
    }

    /// Opens a member as a stream, decompressing gzip or xz content.
    pub fn open_member(&mut self, member: &str) -> Result<Box<dyn BufRead + '_>> {
        let place = self.member_place(member);
        self.progress.reading(&place, None);
        match &mut self.backend {
            Backend::Dir(dir) => {
                let file = File::open(dir.join(member)).map_err(|e| Error::io(&place, e))?;
                let file = Reading::new(file, &self.progress);
                decompress_apart(&place, BufReader::with_capacity(1 << 16, file))
            }
            Backend::Zip { zip, path } => {
                // A compressed member stored as is (nsys-jax's `.xz` members) is read
                // straight from the file, so its decoder can run on a thread of its own;
                // its own checksum (xz's, gzip's) stands for the zip's.
                if let Some(FileSlice {
                    mut file,
                    start,
                    len,
                }) = stored_slice(zip, path.as_ref(), member, &place)?
                {
                    file.seek(SeekFrom::Start(start))
                        .map_err(|e| Error::io(&place, e))?;
                    let stored = Reading::new(file.take(len), &self.progress);
                    let mut raw = BufReader::with_capacity(1 << 16, stored);
                    let head = raw.fill_buf().map_err(|e| Error::io(&place, e))?;
                    if is_compressed(head) {
                        return decompress_apart(&place, raw);
                    }
                }
                // A deflated member is bounded by its compressed size like any stream.
                let entry = zip
                    .by_name(member)
                    .map_err(|e| Error::data(&place, format!("cannot read member: {e}")))?;
                let (compressed, declared) = (entry.compressed_size(), entry.size());
                let ratio = limits::get()?.ratio;
                let bounded = Inflated::sized(entry, ratio, compressed, declared);
                let reader = BufReader::with_capacity(1 << 16, bounded);
                decompress(&place, reader)
            }
        }
    }

    /// A member read whole and decompressed (an HLO dump, which protobuf decodes whole).
    /// An xz member (nsys-jax stores its dumps so) is decoded in one call into a buffer of
    /// the size its index declares ([`super::whole`]); any other, and an xz member that
    /// does not decode so cleanly, is read as [`Archive::open_member`] streams it, with
    /// the same limits and messages.
    pub fn read_member(&mut self, member: &str) -> Result<Vec<u8>> {
        let place = self.member_place(member);
        self.progress.reading(&place, None);
        if let Some(raw) = self.stored_xz(member, &place)?
            && let Some(out) = super::whole::xz(&raw, limits::get()?.ratio)
        {
            self.progress.read(raw.len() as u64);
            return Ok(out);
        }
        let mut out = Vec::new();
        self.open_member(member)?
            .read_to_end(&mut out)
            .map_err(|e| Error::io(&place, e))?;
        Ok(out)
    }

    /// The bytes of `member` as stored when it is an xz stream stored as is (a file of a
    /// folder, or a zip member without compression of its own), else `None`.
    fn stored_xz(&mut self, member: &str, place: &str) -> Result<Option<Vec<u8>>> {
        const XZ: &[u8] = crate::output::guard::XZ_MAGIC;
        let FileSlice {
            mut file,
            start,
            len,
        } = match &mut self.backend {
            Backend::Dir(dir) => {
                let file = File::open(dir.join(member)).map_err(|e| Error::io(place, e))?;
                let len = file.metadata().map_err(|e| Error::io(place, e))?.len();
                FileSlice {
                    file,
                    start: 0,
                    len,
                }
            }
            Backend::Zip { zip, path } => match stored_slice(zip, path.as_ref(), member, place)? {
                Some(slice) => slice,
                None => return Ok(None),
            },
        };
        let mut head = [0u8; 6];
        let read = file
            .seek(SeekFrom::Start(start))
            .and_then(|_| file.read_exact(&mut head));
        if len < XZ.len() as u64 || read.is_err() || !head.starts_with(XZ) {
            return Ok(None);
        }
        let mut raw = Vec::new();
        if raw.try_reserve_exact(len as usize).is_err() {
            return Ok(None);
        }
        raw.extend_from_slice(&head);
        let read = file.take(len - head.len() as u64).read_to_end(&mut raw);
        Ok((read.is_ok() && raw.len() as u64 == len).then_some(raw))
    }

    /// Opens a Parquet member for random access.
    pub fn open_parquet(&mut self, member: &str) -> Result<ParquetMember> {
        let place = self.member_place(member);
        self.progress.reading(&place, None);
        match &mut self.backend {
            Backend::Dir(dir) => {
                let file = File::open(dir.join(member)).map_err(|e| Error::io(&place, e))?;
                Ok(ParquetMember::File(Counting::new(file, &self.progress)))
            }
            Backend::Zip { zip, path } => {
                if let Some(slice) = stored_slice(zip, path.as_ref(), member, &place)? {
                    return Ok(ParquetMember::Slice(Counting::new(slice, &self.progress)));
                }
                let mut entry = zip
                    .by_name(member)
                    .map_err(|e| Error::data(&place, format!("cannot read member: {e}")))?;
                // Held in memory: grown as data arrives, never by the size the archive
                // declares, and bounded by the compressed size.
                let (compressed, declared) = (entry.compressed_size(), entry.size());
                let mut bytes = Vec::new();
                Inflated::sized(&mut entry, limits::get()?.ratio, compressed, declared)
                    .read_to_end(&mut bytes)
                    .map_err(|e| Error::io(&place, e))?;
                Ok(ParquetMember::Bytes(bytes.into()))
            }
        }
    }
}

/// Where the zip member `member` lies in the archive's file `path`, for reading it in
/// place, when it is stored without compression of its own; `None` for a compressed
/// member or an archive read from stdin (no file to reopen).
fn stored_slice(
    zip: &mut ZipArchive<Box<dyn ReadSeek>>,
    path: Option<&PathBuf>,
    member: &str,
    place: &str,
) -> Result<Option<FileSlice>> {
    let entry = zip
        .by_name(member)
        .map_err(|e| Error::data(place, format!("cannot read member: {e}")))?;
    let (zip::CompressionMethod::Stored, Some(start), Some(path)) =
        (entry.compression(), entry.data_start(), path)
    else {
        return Ok(None);
    };
    let file = File::open(path).map_err(|e| Error::io(place, e))?;
    Ok(Some(FileSlice {
        file,
        start,
        len: entry.size(),
    }))
}

// A member is read by the Parquet reader whatever its storage.
impl parquet::file::reader::Length for ParquetMember {
    fn len(&self) -> u64 {
        match self {
            ParquetMember::File(f) => parquet::file::reader::Length::len(f),
            ParquetMember::Slice(s) => parquet::file::reader::Length::len(s),
            ParquetMember::Bytes(b) => b.len() as u64,
        }
    }
}

impl ChunkReader for ParquetMember {
    type T = Box<dyn Read + Send>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        Ok(match self {
            ParquetMember::File(f) => Box::new(f.get_read(start)?),
            ParquetMember::Slice(s) => Box::new(s.get_read(start)?),
            ParquetMember::Bytes(b) => Box::new(b.get_read(start)?),
        })
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        match self {
            ParquetMember::File(f) => f.get_bytes(start, length),
            ParquetMember::Slice(s) => s.get_bytes(start, length),
            ParquetMember::Bytes(b) => b.get_bytes(start, length),
        }
    }
}

/// A byte range of a file, read in place: how Parquet tables stored uncompressed in a
/// zip archive are read without copying them into memory.
pub struct FileSlice {
    file: File,
    start: u64,
    len: u64,
}

impl parquet::file::reader::Length for FileSlice {
    fn len(&self) -> u64 {
        self.len
    }
}

impl ChunkReader for FileSlice {
    type T = std::io::Take<BufReader<File>>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        let mut file = self.file.try_clone()?;
        file.seek(SeekFrom::Start(self.start.saturating_add(start)))?;
        Ok(BufReader::new(file).take(self.len.saturating_sub(start)))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        if start.saturating_add(length as u64) > self.len {
            return Err(parquet::errors::ParquetError::EOF(format!(
                "{length} bytes at {start} of a {}-byte member",
                self.len
            )));
        }
        let mut buf = vec![0; length];
        let mut file = self.file.try_clone()?;
        file.seek(SeekFrom::Start(self.start + start))?;
        file.read_exact(&mut buf)?;
        Ok(buf.into())
    }
}

/// Refuses member names that make a member ambiguous: two names for one path
/// (`./report.csv.xz` and `report.csv.xz`, `dump//m` and `dump/m`), or a file stored both
/// as one shared member and as per-profile copies (`report.csv.xz` and
/// `report.csv.xz/rank0`), of which only one would be read. `members` is sorted.
fn check_names(place: &str, members: &[String]) -> Result<()> {
    let mut normal: Vec<(String, &str)> = members
        .iter()
        .map(|m| {
            let parts: Vec<&str> = m
                .split('/')
                .filter(|p| !p.is_empty() && *p != ".")
                .collect();
            (parts.join("/"), m.as_str())
        })
        .collect();
    normal.sort_unstable();
    for pair in normal.windows(2) {
        if pair[0].0 == pair[1].0 {
            return Err(Error::data(
                place,
                format!(
                    "members {} and {} name the same file: which one is meant cannot be told",
                    pair[0].1, pair[1].1
                ),
            ));
        }
    }
    let files: std::collections::HashMap<&str, &str> =
        normal.iter().map(|(n, m)| (n.as_str(), *m)).collect();
    for (name, member) in &normal {
        for (i, _) in name.match_indices('/') {
            if let Some(file) = files.get(&name[..i]) {
                return Err(Error::data(
                    place,
                    format!(
                        "{file} is stored both as a file and as a folder of per-profile copies \
                         ({member}): which one is meant cannot be told"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Refuses a central directory whose sizes cannot be true: a member whose data reaches
/// past the start of the central directory, a stored member whose compressed and
/// uncompressed sizes differ, members whose data overlap (one stretch of bytes read as
/// several members: a few kB could stand for any number of large tables).
fn check_entries(place: &str, zip: &mut ZipArchive<Box<dyn ReadSeek>>) -> Result<()> {
    let end = zip.central_directory_start();
    let mut spans: Vec<(u64, u64, String)> = Vec::with_capacity(zip.len());
    for i in 0..zip.len() {
        let entry = zip
            .by_index_raw(i)
            .map_err(|e| Error::data(place, format!("cannot read member {i}: {e}")))?;
        let name = entry
            .name()
            .map_or_else(|_| format!("member {i}"), |n| n.into_owned());
        let bad = |msg: String| Error::data(format!("{place}!{name}"), msg);
        let start = entry.header_start();
        let data = entry.data_start().unwrap_or(start);
        let stop = data
            .checked_add(entry.compressed_size())
            .filter(|&s| s <= end);
        let Some(stop) = stop else {
            return Err(bad(format!(
                "its {} bytes of data would reach past the archive's central directory \
                 (at byte {end}): the archive is truncated or its sizes are wrong",
                entry.compressed_size()
            )));
        };
        if entry.compression() == zip::CompressionMethod::Stored
            && entry.compressed_size() != entry.size()
        {
            return Err(bad(format!(
                "stored uncompressed, yet its sizes differ ({} stored, {} declared)",
                entry.compressed_size(),
                entry.size()
            )));
        }
        spans.push((start, stop, name));
    }
    spans.sort_unstable();
    for pair in spans.windows(2) {
        if pair[1].0 < pair[0].1 {
            return Err(Error::data(
                place,
                format!(
                    "members {} and {} overlap: the archive's directory is wrong",
                    pair[0].2, pair[1].2
                ),
            ));
        }
    }
    Ok(())
}

/// How many entries the zip's end-of-central-directory record declares, and how many
/// headers its central directory holds; `None` where it cannot say (no record found in the
/// last 64 KiB, or a Zip64 archive, whose counts live elsewhere). Leaves the reader at the
/// start.
fn declared_entries(reader: &mut dyn ReadSeek) -> std::io::Result<Option<(u64, u64)>> {
    const EOCD: [u8; 4] = [0x50, 0x4b, 0x05, 0x06];
    const CENTRAL: [u8; 4] = [0x50, 0x4b, 0x01, 0x02];
    let len = reader.seek(SeekFrom::End(0))?;
    let tail_len = len.min(22 + 65_535);
    reader.seek(SeekFrom::Start(len - tail_len))?;
    let mut tail = vec![0u8; tail_len as usize];
    reader.read_exact(&mut tail)?;
    reader.seek(SeekFrom::Start(0))?;
    // The record is 22 bytes plus a comment; the last signature that fits is it.
    let Some(at) = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| tail[i..i + 4] == EOCD)
    else {
        return Ok(None);
    };
    let le16 = |b: &[u8], i: usize| u64::from(u16::from_le_bytes([b[i], b[i + 1]]));
    let le32 =
        |b: &[u8], i: usize| u64::from(u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]));
    let total = le16(&tail, at + 10);
    let (size, offset) = (le32(&tail, at + 12), le32(&tail, at + 16));
    let eocd = len - tail_len + at as u64;
    if total == 0xFFFF
        || size == 0xFFFF_FFFF
        || offset == 0xFFFF_FFFF
        || offset.saturating_add(size) > eocd
    {
        return Ok(None);
    }
    // Count the central headers as they are laid out: 46 bytes and three lengths each.
    reader.seek(SeekFrom::Start(offset))?;
    let mut dir = vec![0u8; size as usize];
    reader.read_exact(&mut dir)?;
    reader.seek(SeekFrom::Start(0))?;
    let mut counted = 0;
    let mut i = 0usize;
    while i + 46 <= dir.len() && dir[i..i + 4] == CENTRAL {
        counted += 1;
        i += 46 + (le16(&dir, i + 28) + le16(&dir, i + 30) + le16(&dir, i + 32)) as usize;
    }
    Ok(Some((total, counted)))
}

/// Opens the zip archive at `path` once more, to copy its members' stored bytes as they
/// are (njx-combine's second pass, after [`Archive::open_zip`] read and checked it):
/// `None` when the file opened is not the one read before (`same` says no to its
/// metadata) or no longer reads as a zip archive.
pub fn reopen_zip(
    path: &Path,
    place: &str,
    same: impl Fn(&std::fs::Metadata) -> bool,
) -> Result<Option<ZipArchive<BufReader<File>>>> {
    // Looked at before it is opened (a FIFO put in its place would block the open), and
    // the file opened checked to be the one looked at.
    if !std::fs::metadata(path).is_ok_and(|m| same(&m)) {
        return Ok(None);
    }
    let file = File::open(path).map_err(|e| Error::io(place, e))?;
    if !file.metadata().is_ok_and(|m| same(&m)) {
        return Ok(None);
    }
    Ok(ZipArchive::new(BufReader::with_capacity(1 << 16, file)).ok())
}
