//! Reading records back: the JSON Lines or CSV that the tools write, recognised by the
//! first byte (`{` starts JSON Lines), so every tool reads every other tool's output in
//! either format.

use crate::error::{Error, Result};
use crate::records::{Check, Sequence};
use serde::de::DeserializeOwned;
use std::io::BufRead;

/// The text formats a record stream can be in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextKind {
    /// JSON Lines records.
    JsonLines,
    /// CSV records written with `--format csv`.
    RecordCsv,
    /// An `nsys stats --report nvtx_pushpop_trace` CSV.
    PushPopCsv,
    /// Folded stacks (`frame;frame count` lines), as njx-flamefold writes them.
    Folded,
    /// Nothing at all.
    Empty,
    /// Text that is none of the above; holds its first line.
    Unknown(String),
    /// Not text at all (a known binary format, NUL bytes, or many bytes that are not
    /// UTF-8 or are control bytes); holds its first bytes.
    Binary(Vec<u8>),
}

/// Bytes of a binary input shown (in hex) in messages.
const BINARY_SHOWN: usize = 16;

/// Binary formats that reach a text reader (given in place of records, or compressed
/// again), by their first bytes: what each is, and what to do with it ("" where nothing
/// is to be said).
const MAGIC: &[(&[u8], &str, &str)] = &[
    (b"\x89PNG\r\n\x1a\n", "a PNG image", ""),
    (b"\xff\xd8\xff", "a JPEG image", ""),
    (b"%PDF-", "a PDF document", ""),
    (b"\x7fELF", "an ELF executable or library", ""),
    (
        b"PK\x03\x04",
        "a zip archive",
        "compressed again? give the archive itself, as a file: nsys-jax archives are read \
         as they are (njx-export makes their records)",
    ),
    (
        b"PK\x05\x06",
        "an empty zip archive",
        "compressed again? give the archive itself, as a file",
    ),
    (
        b"SQLite format 3\0",
        "an SQLite database",
        "compressed again? give the .sqlite file itself, as a file: nsys SQLite exports \
         are read as they are (njx-export makes their records)",
    ),
    (
        b"PAR1",
        "a Parquet file",
        "compressed again? give it as a file",
    ),
    (b"\x1f\x8b", "gzip data", "compressed twice?"),
    (b"\xfd7zXZ\0", "xz data", "compressed twice?"),
    (
        b"\x28\xb5\x2f\xfd",
        "zstd data",
        "njx does not decompress zstd: `zstd -d` it first (gzip and xz are read as they are)",
    ),
    (
        b"BZh",
        "bzip2 data",
        "njx does not decompress bzip2: `bunzip2` it first (gzip and xz are read as they \
         are)",
    ),
];

/// What a binary input is and what to do with it, by its first bytes, where the format
/// is known.
fn binary_format(head: &[u8]) -> Option<(&'static str, &'static str)> {
    MAGIC
        .iter()
        .find(|(magic, _, _)| {
            head.starts_with(magic)
                // bzip2: `BZh` then the block size, a digit 1–9
                && (*magic != b"BZh" || head.get(3).is_some_and(|b| (b'1'..=b'9').contains(b)))
        })
        .map(|&(_, what, advice)| (what, advice))
}

/// Whether the first bytes of a stream are not text: a NUL byte, or more than a quarter
/// of bytes that are not UTF-8 or are control bytes (other than tab, line feed, form feed
/// and carriage return). A few of either (a Latin-1 name, a terminal's escape sequence in
/// a line) leave text text, named as such, its control characters escaped.
fn looks_binary(head: &[u8]) -> bool {
    let head = &head[..head.len().min(512)];
    if head.contains(&0) {
        return true;
    }
    let mut odd = 0;
    for chunk in head.utf8_chunks() {
        odd += chunk.invalid().len();
        odd += chunk
            .valid()
            .bytes()
            .filter(|&b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r')) || b == 0x7f)
            .count();
    }
    odd * 4 > head.len()
}

/// Bytes in hex, space-separated: `89 50 4e 47`.
fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Tells what a text stream holds from its first buffered bytes.
pub fn sniff<R: BufRead + ?Sized>(place: &str, reader: &mut R) -> Result<TextKind> {
    let head = reader.fill_buf().map_err(|e| Error::io(place, e))?;
    let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let Some(&first) = text.iter().find(|b| !b.is_ascii_whitespace()) else {
        return Ok(TextKind::Empty);
    };
    if first == b'{' {
        return Ok(TextKind::JsonLines);
    }
    let binary = || TextKind::Binary(text[..text.len().min(BINARY_SHOWN)].to_vec());
    if binary_format(text).is_some() {
        return Ok(binary());
    }
    let line_end = text.iter().position(|&b| b == b'\n').unwrap_or(text.len());
    let header = &text[..line_end];
    if header.windows(10).any(|w| w == b"Start (ns)") {
        Ok(TextKind::PushPopCsv)
    } else if header.starts_with(b"profile,") {
        Ok(TextKind::RecordCsv)
    } else if looks_binary(text) {
        // After the tables' headers: a Latin-1 name in a push/pop CSV is still read.
        Ok(binary())
    } else if folded_line(&String::from_utf8_lossy(header)).is_some()
        // A first line longer than what is buffered (deep stacks): frames joined by `;`.
        || (line_end == text.len() && header.contains(&b';'))
    {
        Ok(TextKind::Folded)
    } else {
        let shown = &header[..header.len().min(120)];
        Ok(TextKind::Unknown(
            String::from_utf8_lossy(shown).trim_end().to_string(),
        ))
    }
}

/// What a text input that holds none of the records or tables wanted seems to be, and
/// what to give instead, for messages: `expected` names what was wanted.
pub fn what_text_is(kind: &TextKind, expected: &str) -> String {
    let seems = match kind {
        TextKind::Folded => "folded stacks (njx-flamefold output), which njx-flamefold \
                             draws with --svg"
            .to_string(),
        TextKind::Empty => "empty".to_string(),
        TextKind::Unknown(first) if first.contains(',') && first.contains("(ns)") => format!(
            "a CSV of an nsys stats report other than nvtx_pushpop_trace (no `Start (ns)` \
             column; first line: {first})"
        ),
        TextKind::Unknown(first) if first.contains(',') => format!(
            "a CSV that is not njx records (their header begins `profile,`; first line: \
             {first})"
        ),
        TextKind::Unknown(first) => format!(
            "text that is not records (a table for people? njx tools write records with \
             --format json or csv; first line: {first})"
        ),
        TextKind::Binary(head) => {
            let (what, advice) = binary_format(head).unwrap_or(("of no format njx knows", ""));
            let advice = if advice.is_empty() {
                String::new()
            } else {
                format!(" — {advice}")
            };
            format!(
                "a binary file, not text: {what} (first bytes {}){advice}",
                hex(head)
            )
        }
        TextKind::JsonLines | TextKind::RecordCsv => "njx records".to_string(),
        TextKind::PushPopCsv => "an nvtx_pushpop_trace CSV".to_string(),
    };
    format!("not {expected}: this is {seems}")
}

/// A folded-stack line `stack count` split into its stack and count (a finite number,
/// 0 or more, decimals allowed), or `None` where the line is not one.
pub fn folded_line(text: &str) -> Option<(&str, f64)> {
    let (stack, count) = text.trim_end().rsplit_once([' ', '\t'])?;
    let count: f64 = count.parse().ok()?;
    let stack = stack.trim_end();
    (count.is_finite() && count >= 0.0 && !stack.trim().is_empty() && !stack.starts_with('{'))
        .then_some((stack, count))
}

/// Reads folded stacks (`stack count` lines; blank lines skipped), handing each stack and
/// count to `emit`; a line that is not one is an error naming it.
pub fn read_folded<R: BufRead + ?Sized>(
    place: &str,
    reader: &mut R,
    emit: &mut dyn FnMut(&str, f64) -> Result<()>,
) -> Result<u64> {
    let mut line = String::new();
    let (mut n, mut count) = (0u64, 0u64);
    loop {
        line.clear();
        let read = reader
            .read_line(&mut line)
            .map_err(|e| Error::io(format!("{place}:{}", n + 1), e))?;
        if read == 0 {
            return Ok(count);
        }
        n += 1;
        let text = line.trim_end_matches(['\n', '\r']);
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.trim().is_empty() {
            continue;
        }
        let Some((stack, weight)) = folded_line(text) else {
            return Err(Error::data(
                format!("{place}:{n}"),
                format!("not a folded stack line (`frame;frame count`): {text}"),
            ));
        };
        emit(stack, weight).map_err(|e| e.within(&format!("{place}:{n}")))?;
        count += 1;
    }
}

/// Reads JSON Lines records, one per line (blank lines are ignored), handing each to `emit`.
pub fn read_json_lines<T: DeserializeOwned + Check, R: BufRead>(
    place: &str,
    mut reader: R,
    emit: &mut dyn FnMut(T) -> Result<()>,
) -> Result<u64> {
    let mut line = Vec::with_capacity(512);
    let mut lineno = 0u64;
    let mut count = 0u64;
    let mut sequence = Sequence::default();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io(format!("{place}:{}", lineno + 1), e))?;
        if n == 0 {
            return Ok(count);
        }
        lineno += 1;
        if line.trim_ascii().is_empty() {
            continue;
        }
        let record: T = serde_json::from_slice(&line).map_err(|e| {
            let at = format!("{place}:{lineno}");
            if count == 0 && e.is_eof() {
                // `{` alone, or an object that goes on: a pretty-printed document (a
                // reference file, a report's JSON saved with an indent), not records.
                return Error::data(
                    at,
                    "a JSON document spread over several lines, not records: njx reads \
                     JSON Lines, one record per line, as njx-export and --format json write \
                     them",
                );
            }
            other_kind::<T>(&at, &line, count)
                .unwrap_or_else(|| Error::data(at, format!("bad record: {e}")))
        })?;
        if let Some(problem) = problem_of(&record, &mut sequence) {
            return Err(Error::data(format!("{place}:{lineno}"), problem));
        }
        emit(record).map_err(|e| e.within(&format!("{place}:{lineno}")))?;
        count += 1;
    }
}

/// Reads CSV records with a header line, handing each to `emit`.
pub fn read_record_csv<T: DeserializeOwned + Check, R: BufRead>(
    place: &str,
    reader: R,
    emit: &mut dyn FnMut(T) -> Result<()>,
) -> Result<u64> {
    let mut csv = csv::ReaderBuilder::new().from_reader(reader);
    let headers = csv
        .byte_headers()
        .map_err(|e| Error::data(place, format!("bad CSV header: {e}")))?
        .clone();
    let mut record = csv::ByteRecord::new();
    let mut count = 0u64;
    let mut sequence = Sequence::default();
    loop {
        let more = csv.read_byte_record(&mut record).map_err(|e| {
            let at = e
                .position()
                .map_or(place.to_string(), |p| format!("{place}:{}", p.line()));
            match e.into_kind() {
                csv::ErrorKind::Io(io) => Error::io(at, io),
                other => Error::data(at, format!("bad CSV: {other:?}")),
            }
        })?;
        if !more {
            return Ok(count);
        }
        let line = record.position().map_or(0, |p| p.line());
        let value: T = record.deserialize(Some(&headers)).map_err(|e| {
            let at = format!("{place}:{line}");
            other_kind::<T>(&at, headers.as_slice(), count)
                .unwrap_or_else(|| Error::data(at, format!("bad record: {e}")))
        })?;
        if let Some(problem) = problem_of(&value, &mut sequence) {
            return Err(Error::data(format!("{place}:{line}"), problem));
        }
        emit(value).map_err(|e| e.within(&format!("{place}:{line}")))?;
        count += 1;
    }
}

/// What is wrong with a record read back: its own fields, then its place among the
/// executions of its device.
fn problem_of<T: Check>(record: &T, sequence: &mut Sequence) -> Option<String> {
    record
        .problem()
        .or_else(|| sequence.check(&record.execution()?))
}

/// The error for a first record that does not read because it is of another table than
/// `T` (`head`: its JSON line, or the CSV header): what came, and what to run instead.
fn other_kind<T: Check>(at: &str, head: &[u8], count: u64) -> Option<Error> {
    let want = T::kind()?;
    let got = crate::records::kind_of(head).filter(|&got| got != want)?;
    if got.contains(' ') {
        // A tool's summary, or a partial result: not records of a table.
        return Some(Error::data(
            at,
            format!(
                "this is {got}, not {want} records: give it `njx-export --table {want}` \
                 output (or the profiles themselves)"
            ),
        ));
    }
    if count > 0 {
        // A mix: records of two tables in one stream (`cat modules.jsonl thunks.jsonl`).
        return Some(Error::data(
            at,
            format!(
                "a {got} record after {count} {want} records: a stream holds the records of \
                 one table; give the {want} and the {got} records as files of their own"
            ),
        ));
    }
    let made_by = if got == "collective" {
        "njx-collectives --records".to_string()
    } else {
        format!("njx-export --table {got}")
    };
    Some(Error::data(
        at,
        format!(
            "these are {got} records ({made_by} output), not {want} records: give it \
             `njx-export --table {want}` output (or the profiles themselves)"
        ),
    ))
}

/// A stream of records written by the tools, its format already sniffed.
pub struct RecordStream {
    /// Name for messages.
    pub place: String,
    /// JSON Lines or record CSV.
    pub kind: TextKind,
    /// The contents.
    pub reader: Box<dyn BufRead>,
    /// Where asked for ([`RecordStream::watch_ranks`]): per table and device, the first
    /// start of the module or thunk records read, what a rank is known by
    /// ([`crate::derived::ranks`]).
    pub firsts: Option<Firsts>,
}

/// Per (table, device), the first start of a module or thunk execution read.
pub type Firsts =
    std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<(&'static str, u32), i64>>>;

/// Keeps in `firsts` the earliest `start` of `key` (a device, or a table and device):
/// what a rank is known by ([`crate::derived::ranks`]).
pub fn keep_first<K: Ord>(firsts: &mut std::collections::BTreeMap<K, i64>, key: K, start: i64) {
    let f = firsts.entry(key).or_insert(start);
    *f = (*f).min(start);
}

/// What `firsts` holds once its stream is read, taken out of it.
pub fn take_firsts(firsts: &Firsts) -> std::collections::BTreeMap<(&'static str, u32), i64> {
    std::mem::take(&mut *firsts.lock().unwrap_or_else(|e| e.into_inner()))
}

/// What `firsts` holds once its stream is read, per device (the first of any table).
pub fn firsts_by_device(firsts: &Firsts) -> std::collections::BTreeMap<u32, i64> {
    let mut out = std::collections::BTreeMap::new();
    for ((_, device), start) in take_firsts(firsts) {
        keep_first(&mut out, device, start);
    }
    out
}

impl RecordStream {
    /// Keeps, as the records are read, the first start of each device's module or thunk
    /// records: read from the handle returned once the stream is read.
    pub fn watch_ranks(&mut self) -> Firsts {
        let f = Firsts::default();
        self.firsts = Some(std::sync::Arc::clone(&f));
        f
    }

    /// Reads every record, JSON Lines or CSV as sniffed, handing each to `emit`.
    pub fn read<T: DeserializeOwned + Check>(
        self,
        emit: &mut dyn FnMut(T) -> Result<()>,
    ) -> Result<u64> {
        if let Some(firsts) = &self.firsts {
            let mut firsts = firsts.lock().unwrap_or_else(|e| e.into_inner());
            let mut watched = |r: T| {
                if let (Some((device, start)), Some(kind)) = (r.first_start(), T::kind()) {
                    keep_first(&mut firsts, (kind, device), start);
                }
                emit(r)
            };
            let inner = RecordStream {
                firsts: None,
                ..self
            };
            return inner.read(&mut watched);
        }
        match self.kind {
            TextKind::JsonLines => read_json_lines(&self.place, self.reader, emit),
            TextKind::RecordCsv => read_record_csv(&self.place, self.reader, emit),
            _ => Err(Error::data(
                self.place,
                "not records written by an njx tool",
            )),
        }
    }

    /// The tool whose summary (or a partial result) the stream is, from its first line's
    /// fields ([`crate::records::summary_of`]): not records of a table.
    pub fn summary(&mut self) -> Result<Option<&'static str>> {
        let head = self
            .reader
            .fill_buf()
            .map_err(|e| Error::io(&self.place, e))?;
        let end = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
        Ok(crate::records::summary_of(&head[..end]))
    }

    /// Whether the header (CSV) or first record (JSON Lines) names `field`.
    pub fn first_line_has(&mut self, field: &str) -> Result<bool> {
        let head = self
            .reader
            .fill_buf()
            .map_err(|e| Error::io(&self.place, e))?;
        let end = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
        Ok(head[..end]
            .windows(field.len())
            .any(|w| w == field.as_bytes()))
    }
}
