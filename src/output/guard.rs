//! The one rule every output of every tool follows before anything is read: an output
//! never overwrites a profile or another input of njx. `njx-report --html run/*.zip` (the
//! page's name left out) makes the shell's first archive the option's value; without this
//! rule the archive became a web page and the tool exited 0.
//!
//! - An existing regular file that holds an input by its first bytes (a zip archive, an
//!   SQLite database, an `.nsys-rep` report, a partial result, gzip, xz, zstd or bzip2
//!   data, Parquet, an HLO dump) is refused, naming the file and the option.
//! - A path named like an input kind (`.zip`, `.sqlite`, `.nsys-rep`, `.qdrep`) is refused
//!   even when it does not exist yet: no tool writes those through this rule (njx-combine
//!   and njx-capture write archives with their own refusal of any existing file).
//! - `-f` (`--force`) overrides both.
//!
//! The first bytes of each input kind live here, the lowest layer that needs them;
//! `source/` reads inputs by the same constants.

use crate::error::{Error, Result};
use std::io::Read;
use std::path::{Path, PathBuf};

/// gzip.
pub const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
/// xz.
pub const XZ_MAGIC: &[u8] = &[0xfd, b'7', b'z', b'X', b'Z', 0x00];
/// A zip archive with members.
pub const ZIP_MAGIC: &[u8] = b"PK\x03\x04";
/// A zip archive without members.
pub const EMPTY_ZIP_MAGIC: &[u8] = b"PK\x05\x06";
/// Parquet.
pub const PARQUET_MAGIC: &[u8] = b"PAR1";
/// SQLite 3 (nsys' exports).
pub const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";
/// The first bytes of every `.nsys-rep` (and older `.qdrep`) file seen.
pub const REPORT_MAGIC: &[u8] = b"NVIDIA Tegra Profiler Report";
/// How a partial result's line starts (`derived::partial`, `{"njx_partial": KIND, …}`).
pub const PARTIAL_START: &[u8] = b"{\"njx_partial\"";

/// The file name a partial result's gzip header carries (`derived::partial` writes it):
/// told without decompressing.
pub const PARTIAL_GZIP_NAME: &str = "njx_partial.json";

/// Whether `head` is a gzip member whose header names [`PARTIAL_GZIP_NAME`] (RFC 1952:
/// FLG bit 3, FNAME, and no FEXTRA before it, the name right after the 10 fixed bytes).
fn is_gzip_partial(head: &[u8]) -> bool {
    head.starts_with(GZIP_MAGIC)
        && head
            .get(3)
            .is_some_and(|&flg| flg & 0x08 != 0 && flg & 0x04 == 0)
        && head
            .get(10..)
            .is_some_and(|name| name.starts_with(PARTIAL_GZIP_NAME.as_bytes()))
}

/// The kinds of input told by their first bytes, with what to call each in a message.
const KINDS: &[(&[u8], &str)] = &[
    (ZIP_MAGIC, "a zip archive (a profile)"),
    (EMPTY_ZIP_MAGIC, "a zip archive"),
    (SQLITE_MAGIC, "an SQLite database (an nsys export)"),
    (REPORT_MAGIC, "an nsys report (.nsys-rep)"),
    (PARTIAL_START, "a partial result of njx"),
    (GZIP_MAGIC, "gzip data"),
    (XZ_MAGIC, "xz data"),
    (b"\x28\xb5\x2f\xfd", "zstd data"),
    (b"BZh", "bzip2 data"),
    (PARQUET_MAGIC, "a Parquet file"),
];

/// The names of input kinds: an output named so is refused even when it does not exist.
const INPUT_EXTENSIONS: &[&str] = &["zip", "sqlite", "nsys-rep", "qdrep"];

/// How many first bytes are read to tell what a file holds.
const HEAD: usize = 4096;

/// What an existing file holds when it is an input of njx, from its first bytes `head`
/// and its length `len`.
pub fn input_kind(head: &[u8], len: u64) -> Option<&'static str> {
    // Partial results are written gzip-compressed: said as what they are.
    if is_gzip_partial(head) {
        return Some("a partial result of njx");
    }
    if let Some(&(_, what)) = KINDS.iter().find(|(magic, _)| head.starts_with(magic)) {
        return Some(what);
    }
    hlo_dump(head, len).then_some("an HLO dump (a serialized HloProto)")
}

/// Whether `head` starts as a serialized `HloProto` (a `.pb` dump of XLA,
/// xla/service/hlo.proto): field 1 (`hlo_module`, length-delimited), whose length fits
/// in the file and takes more than one byte (every module is longer than 127 bytes: text
/// starting with line feeds does not pass), and inside it field 1 (`name`; field 2, the
/// entry computation's name, where that is empty) of 1 to 1024 printable ASCII bytes.
/// Protobuf writers emit fields in number order, XLA's and prost alike, so the module's
/// name comes first.
fn hlo_dump(head: &[u8], len: u64) -> bool {
    let Some(rest) = head.strip_prefix(&[0x0a]) else {
        return false;
    };
    if rest.first().is_none_or(|&b| b < 0x80) {
        return false;
    }
    let Some((module_len, used)) = varint(rest) else {
        return false;
    };
    if 1 + used as u64 + module_len > len {
        return false;
    }
    // `name` (1), or `entry_computation_name` (2) where the name is empty.
    let Some(rest) = rest[used..]
        .strip_prefix(&[0x0a])
        .or_else(|| rest[used..].strip_prefix(&[0x12]))
    else {
        return false;
    };
    let Some((name_len, used)) = varint(rest) else {
        return false;
    };
    if name_len == 0 || name_len > 1024 {
        return false;
    }
    let name = &rest[used..];
    let shown = name.len().min(name_len as usize);
    shown > 0 && name[..shown].iter().all(|b| b.is_ascii_graphic())
}

/// A protobuf varint at the start of `bytes`: its value and how many bytes it took.
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().take(10).enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Some((value, i + 1));
        }
    }
    None
}

/// The input kind `path` is named as (`zip`, `sqlite`, …), case aside.
fn input_extension(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    INPUT_EXTENSIONS
        .iter()
        .find(|ext| {
            name.strip_suffix(*ext)
                .is_some_and(|stem| stem.len() > 1 && stem.ends_with('.'))
        })
        .copied()
}

/// Refuses, as a usage error, to write the output `option` names at `path` over a file
/// that holds an input of njx, or at a path named like one, unless `force`. `-` (stdout)
/// and what is not a regular file (`/dev/null`, a FIFO) pass. Links are followed: the file
/// written through is the one judged.
pub fn check(option: &str, path: &Path, force: bool) -> Result<()> {
    if force || path == Path::new("-") {
        return Ok(());
    }
    let place = path.display();
    if let Some(what) = holds_input(path) {
        return Err(Error::Usage(format!(
            "{place}: {option} would overwrite it, and it holds {what}: give {option} a \
             file name of its own (left out, the next word on the command line becomes \
             it), or pass -f (--force) to overwrite it"
        )));
    }
    if let Some(ext) = input_extension(path) {
        return Err(Error::Usage(format!(
            "{place}: {option} names a .{ext} file, a kind of input, and this output is \
             not one: name it differently, or pass -f (--force)"
        )));
    }
    Ok(())
}

/// What the regular file at `path` (links followed) holds when it is an input of njx;
/// `None` for anything else, and for what does not exist or cannot be read (opening it
/// for writing says why).
fn holds_input(path: &Path) -> Option<&'static str> {
    let file = through_links(path);
    let meta = std::fs::metadata(&file).ok().filter(|m| m.is_file())?;
    let mut head = Vec::with_capacity(HEAD);
    std::fs::File::open(&file)
        .and_then(|f| f.take(HEAD as u64).read_to_end(&mut head))
        .ok()?;
    input_kind(&head, meta.len())
}

/// Checks every output a command line names (`(option, path)`, `None` where not given)
/// with [`check`], before anything is read.
pub fn check_all(outputs: &[(&str, Option<&Path>)], force: bool) -> Result<()> {
    outputs
        .iter()
        .filter_map(|(option, path)| path.map(|p| (option, p)))
        .try_for_each(|(option, path)| check(option, path, force))
}

/// The file `path` names once symbolic links are followed (at most 40 of them, as the
/// kernel does), whether or not it exists yet; `path` itself when it is no link.
pub fn through_links(path: &Path) -> PathBuf {
    let mut path = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::read_link(&path) {
            Ok(target) => {
                path = match path.parent() {
                    Some(folder) if target.is_relative() => folder.join(target),
                    _ => target,
                };
            }
            Err(_) => break,
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_told_by_their_first_bytes() {
        assert!(input_kind(b"PK\x03\x04rest", 100).unwrap().contains("zip"));
        assert!(
            input_kind(b"SQLite format 3\0", 100)
                .unwrap()
                .contains("SQLite")
        );
        assert!(input_kind(REPORT_MAGIC, 100).unwrap().contains("nsys-rep"));
        assert!(
            input_kind(b"{\"njx_partial\":\"modules\",\"version\":1}", 100)
                .unwrap()
                .contains("partial")
        );
        assert!(input_kind(b"\xfd7zXZ\0", 100).unwrap().contains("xz"));
        assert!(input_kind(b"\x1f\x8b\x08", 100).unwrap().contains("gzip"));
        // Records, tables, pages and pictures are outputs again.
        for text in [
            &b"{\"profile\":\"a\"}\n"[..],
            b"profile,name\n",
            b"<!DOCTYPE html>",
            b"<svg",
            b"\n\n\nthree blank lines",
            b"",
        ] {
            assert_eq!(input_kind(text, 1 << 20), None, "{text:?}");
        }
    }

    #[test]
    fn an_hlo_dump_is_told_by_its_module_name() {
        // field 1 (hlo_module), 300 bytes; inside it field 1 (name) "jit_step"
        let mut dump = vec![0x0a, 0xac, 0x02, 0x0a, 8];
        dump.extend_from_slice(b"jit_step");
        dump.resize(3 + 300, 0);
        assert!(input_kind(&dump, dump.len() as u64).is_some());
        // A module longer than the file is not a dump's.
        assert_eq!(input_kind(&dump, 100), None);
        // A one-byte length (a text's line feeds) is not a module's.
        assert_eq!(input_kind(b"\n\x08\njit_step", 1000), None);
    }

    #[test]
    fn input_names_are_refused_whole_extensions_only() {
        assert_eq!(input_extension(Path::new("run/rank0.zip")), Some("zip"));
        assert_eq!(input_extension(Path::new("a.SQLITE")), Some("sqlite"));
        assert_eq!(input_extension(Path::new("r.nsys-rep")), Some("nsys-rep"));
        assert_eq!(input_extension(Path::new("page.html")), None);
        assert_eq!(input_extension(Path::new("unzip")), None);
        assert_eq!(input_extension(Path::new(".zip")), None);
    }
}
