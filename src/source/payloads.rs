//! The payloads of NVTX events in an nsys SQLite export, decoded field by field
//! ([`PayloadField`] records, `njx-export --table payloads`).
//!
//! Two kinds of payload, both in `NVTX_EVENTS`:
//! - the classic one-value payload of `nvtxEventAttributes_t` (`uint64Value`,
//!   `int64Value`, `doubleValue`, `uint32Value`, `int32Value`, `floatValue`, `jsonText`
//!   or `jsonTextId`): one field named `value`, schema `value`;
//! - structured payloads (NVTX's payload extension, `nvToolsExtPayload.h`): the binary
//!   data an application attached, described by a schema it registered. nsys 2024.2 and
//!   later export the schemas as `NVTX_PAYLOAD_SCHEMAS` (domainId, schemaId, name, type,
//!   flags, numEntries, payloadSize, alignTo) and `NVTX_PAYLOAD_SCHEMA_ENTRIES`
//!   (domainId, schemaId, idx, flags, type, name, description, arrayOrUnionDetail,
//!   offset; the first entry's offset is null, meaning 0), and the data as the blob in
//!   `binaryData` (declared TEXT). XLA registers `XlaModule`, `XlaInstruction`,
//!   `XlaInstructionDetailed` and `XlaCollectiveDetailed` (openxla/xla PR #46486,
//!   `xla/backends/gpu/runtime/annotation.cc`; `--xla_gpu_trace_annotation_level`), NCCL
//!   its unnamed schemas of communicator, message size and peer rank
//!   (`src/include/nvtx_payload_schemas.h`).
//!
//! The blob is, per payload, a 32-byte little-endian header — domain id (u32), 4 bytes
//! reserved, schema id (u64; static schemas are below 2^32, where a u32 reads the same),
//! payload size (u64), total size (u64, the header and the payload) — then the payload,
//! each field at its entry's offset. nsys documents no more than "Binary payload"; this
//! layout is the one GindaChen/nsys-ai's `nccl_payload_breakdown.py` decodes from nsys
//! 2026 profiles (checked there against NCCL's schemas); an event with several payloads
//! (NVTX allows an array) is read as the headers one after the other, which no export at
//! hand shows. Types, sizes and the type numbers are those of `nvToolsExtPayload.h`
//! (x86-64 Linux sizes: `long` 8 bytes, `wchar_t` 4).
//!
//! Strings the application registered with NVTX (`NVTX_PAYLOAD_ENTRY_TYPE_NVTX_
//! REGISTERED_STRING_HANDLE`, all of XLA's text fields) reach the export as their handle:
//! no table of an export maps handles to text, so the handle is what is written (the same
//! handle is the same string within a process), and the notes say so.
//!
//! What is wrong is refused naming the file, the table and the row: a blob shorter than
//! its header or than its sizes say, a payload shorter than its static schema, a field
//! beyond its payload, a schema defined twice differently (the tables name no process),
//! a schema's entries with a missing or repeated index. What cannot be decoded is written
//! all the same and counted on stderr: a payload of a schema the export does not define
//! (its bytes in hex, type `raw`), a field of a type njx does not decode (value null).

use crate::error::Result;
use crate::output::notes::Notes;
use crate::records::{PayloadField, PayloadValue};
use crate::source::ranges::nvtx::{self, Names};
use crate::source::sqlite::{Db, pid_of, tid_of};
use rusqlite::types::ValueRef;
use std::collections::HashMap;
use std::sync::Arc;

const EVENTS: &str = "NVTX_EVENTS";
const SCHEMAS: &str = "NVTX_PAYLOAD_SCHEMAS";
const ENTRIES: &str = "NVTX_PAYLOAD_SCHEMA_ENTRIES";

/// Bytes of the header before each payload of a blob.
pub const HEADER: usize = 32;

/// The largest payload a schema may declare: 16 MiB (XLA's are under 200 bytes, NCCL's
/// under 32).
const MAX_PAYLOAD: u64 = 1 << 24;

/// The classic one-value payload columns of `NVTX_EVENTS` and the type each is.
const VALUE_COLUMNS: &[(&str, &str)] = &[
    ("uint64Value", "uint64"),
    ("int64Value", "int64"),
    ("doubleValue", "double"),
    ("uint32Value", "uint32"),
    ("int32Value", "int32"),
    ("floatValue", "float"),
    ("jsonText", "json"),
    ("jsonTextId", "json"),
];

/// How a field's bytes decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decode {
    Signed,
    Unsigned,
    Float,
    /// A fixed-size string of code units of this many bytes, up to its first NUL.
    Chars(u8),
    /// Bytes written in hex.
    Hex,
    /// Not decoded: written as null and counted.
    No,
}

/// A predefined entry type: its name in records, how it decodes, its size and
/// alignment in bytes (`None`: not known, so no later offset can be inferred).
struct TypeInfo {
    name: &'static str,
    decode: Decode,
    size: Option<u64>,
}

/// `nvToolsExtPayload.h`'s `NVTX_PAYLOAD_ENTRY_TYPE_*` numbers.
fn type_info(ty: i64) -> TypeInfo {
    use Decode::*;
    let t = |name, decode, size| TypeInfo {
        name,
        decode,
        size: Some(size),
    };
    match ty {
        1 => t("char", Signed, 1),
        2 => t("uchar", Unsigned, 1),
        3 => t("short", Signed, 2),
        4 => t("ushort", Unsigned, 2),
        5 => t("int", Signed, 4),
        6 => t("uint", Unsigned, 4),
        7 => t("long", Signed, 8),
        8 => t("ulong", Unsigned, 8),
        9 => t("longlong", Signed, 8),
        10 => t("ulonglong", Unsigned, 8),
        11 => t("int8", Signed, 1),
        12 => t("uint8", Unsigned, 1),
        13 => t("int16", Signed, 2),
        14 => t("uint16", Unsigned, 2),
        15 => t("int32", Signed, 4),
        16 => t("uint32", Unsigned, 4),
        17 => t("int64", Signed, 8),
        18 => t("uint64", Unsigned, 8),
        19 => t("float", Float, 4),
        20 => t("double", Float, 8),
        21 => t("longdouble", No, 16),
        22 => t("size", Unsigned, 8),
        23 => t("address", Unsigned, 8),
        24 => t("wchar", Unsigned, 4),
        25 => t("char8", Unsigned, 1),
        26 => t("char16", Unsigned, 2),
        27 => t("char32", Unsigned, 4),
        32 => t("byte", Unsigned, 1),
        33 => t("int128", No, 16),
        34 => t("uint128", No, 16),
        42 => t("float16", No, 2),
        43 => t("float32", Float, 4),
        44 => t("float64", Float, 8),
        45 => t("float128", No, 16),
        50 => t("bf16", No, 2),
        52 => t("tf32", No, 4),
        // Normalised numbers: the stored integer is written.
        61 => t("snorm8", Signed, 1),
        62 => t("unorm8", Unsigned, 1),
        63 => t("snorm16", Signed, 2),
        64 => t("unorm16", Unsigned, 2),
        65 => t("snorm32", Signed, 4),
        66 => t("unorm32", Unsigned, 4),
        67 => t("snorm64", Signed, 8),
        68 => t("unorm64", Unsigned, 8),
        // C strings by pointer: the pointer is all the payload holds. Embedded
        // (fixed-size) strings are sized by the entry (see `Entry::new`).
        75 => t("cstring", No, 8),
        76 => t("cstring-utf8", No, 8),
        77 => t("cstring-utf16", No, 8),
        78 => t("cstring-utf32", No, 8),
        80 => t("string-handle", Unsigned, 8),
        90 => t("category", Unsigned, 4),
        91 => t("color-type", Signed, 4),
        92 => t("color", Unsigned, 4),
        128 => t("timestamp", Unsigned, 8),
        129 | 130 => t("timestamp-tsc", Unsigned, 8),
        192..=195 => t("timestamp-gpu", Unsigned, 8),
        224 => t("timestamp-tool", Unsigned, 8),
        _ => TypeInfo {
            name: "unknown",
            decode: No,
            size: None,
        },
    }
}

/// The code unit of a C string type, in bytes.
fn char_unit(ty: i64) -> Option<u8> {
    match ty {
        75 | 76 => Some(1),
        77 => Some(2),
        78 => Some(4),
        _ => None,
    }
}

/// Entry flags that change where or how a value lies (pointer, offsets, arrays).
const LAYOUT_FLAGS: i64 = 0b11_1110;

/// One field of a schema.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    index: u32,
    name: String,
    kind: String,
    decode: Decode,
    /// Offset in the payload; `None` where it cannot be known (after a field of unknown
    /// size with no explicit offset).
    offset: Option<u64>,
    size: u64,
}

/// A registered schema.
#[derive(Debug, Clone, PartialEq)]
struct Schema {
    name: String,
    /// Static size of the payload, where the schema declares one.
    size: Option<u64>,
    /// A union (schema types 3 and 4): written raw.
    union: bool,
    entries: Vec<Entry>,
}

/// An entry row as read, before offsets are inferred.
struct EntryRow {
    rowid: i64,
    index: i64,
    flags: i64,
    ty: Option<i64>,
    name: Option<String>,
    detail: Option<i64>,
    offset: Option<i64>,
}

/// The schemas of an export by (domain id, schema id).
pub struct Schemas {
    by_key: HashMap<(i64, u64), Arc<Schema>>,
}

impl Schemas {
    /// The schema of `schema_id` in `domain`, and the id it was found by. A static schema
    /// id is below 2^32, where the upper half of the field is zero; the reserved half is
    /// read as part of it only if that finds no schema.
    fn find(&self, domain: i64, schema_id: u64) -> Option<(&Schema, u64)> {
        self.get(domain, schema_id)
            .map(|s| (s.as_ref(), schema_id))
            .or_else(|| {
                let low = schema_id & 0xFFFF_FFFF;
                self.get(domain, low).map(|s| (s.as_ref(), low))
            })
    }

    /// Reads the schemas of `db` (none where it has no schema table).
    pub fn load(db: &Db) -> Result<Schemas> {
        if !db.has(SCHEMAS) {
            return Ok(Schemas {
                by_key: HashMap::new(),
            });
        }
        let heads = schema_heads(db)?;
        let mut rows = entry_rows(db)?;
        let mut by_key = HashMap::new();
        for (key, (_, mut schema)) in heads {
            let entries = distinct(rows.remove(&key).unwrap_or_default());
            schema.entries = build_entries(db, key, &schema, &entries)?;
            by_key.insert(key, Arc::new(schema));
        }
        Ok(Schemas { by_key })
    }

    /// Whether the export defines any schema.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// The schema `id` of `domain`, else the one schema `id` of any domain (the header's
    /// domain id and the table's need not be the same numbering).
    fn get(&self, domain: i64, id: u64) -> Option<&Arc<Schema>> {
        self.by_key.get(&(domain, id)).or_else(|| {
            let mut any = self.by_key.iter().filter(|((_, s), _)| *s == id);
            match (any.next(), any.next()) {
                (Some((_, schema)), None) => Some(schema),
                _ => None,
            }
        })
    }
}

/// The schemas of `NVTX_PAYLOAD_SCHEMAS` without their entries, by (domain id, schema
/// id), each with its row; one defined twice differently is refused.
fn schema_heads(db: &Db) -> Result<HashMap<(i64, u64), (i64, Schema)>> {
    let mut heads: HashMap<(i64, u64), (i64, Schema)> = HashMap::new();
    let sql = db.select(
        SCHEMAS,
        &["domainId", "schemaId", "name", "type", "payloadSize"],
        true,
        None,
    )?;
    db.each_row(SCHEMAS, &sql, |row| {
        let (rowid, domain, id, schema) = schema_head(db, row)?;
        let key = (domain, id as u64);
        match heads.get(&key) {
            Some((_, other)) if *other != schema => Err(db.row_error(
                SCHEMAS,
                rowid,
                format!(
                    "schema {id} of domain {domain} is defined again, differently \
                     (the table names no process, so its payloads could not be read)"
                ),
            )),
            Some(_) => Ok(()),
            None => {
                heads.insert(key, (rowid, schema));
                Ok(())
            }
        }
    })?;
    Ok(heads)
}

/// One row of `NVTX_PAYLOAD_SCHEMAS`: its rowid, domain id, schema id and the schema
/// without its entries.
fn schema_head(db: &Db, row: &rusqlite::Row) -> Result<(i64, i64, i64, Schema)> {
    let rowid = db.rowid(SCHEMAS, row)?;
    let int = |i, c| db.int(SCHEMAS, row, i, c, rowid);
    let domain = int(1, "domainId")?.unwrap_or(0);
    let Some(id) = int(2, "schemaId")? else {
        return Err(db.row_error(SCHEMAS, rowid, "column `schemaId` is null"));
    };
    let name = nvtx::text(row, 3)
        .map(|t| t.into_owned())
        .unwrap_or_else(|| (id as u64).to_string());
    let ty = int(4, "type")?;
    let size = match int(5, "payloadSize")? {
        Some(s) if s < 0 || s as u64 > MAX_PAYLOAD => {
            return Err(db.row_error(
                SCHEMAS,
                rowid,
                format!("payloadSize {s} is not a size of 0 to {MAX_PAYLOAD} bytes"),
            ));
        }
        s => s.map(|s| s as u64),
    };
    let schema = Schema {
        name,
        size,
        union: matches!(ty, Some(3 | 4)),
        entries: Vec::new(),
    };
    Ok((rowid, domain, id, schema))
}

/// The rows of `NVTX_PAYLOAD_SCHEMA_ENTRIES` by (domain id, schema id), in the table's
/// order (none where the export has no such table).
fn entry_rows(db: &Db) -> Result<HashMap<(i64, u64), Vec<EntryRow>>> {
    let mut rows: HashMap<(i64, u64), Vec<EntryRow>> = HashMap::new();
    if !db.has(ENTRIES) {
        return Ok(rows);
    }
    let sql = db.select(
        ENTRIES,
        &[
            "domainId",
            "schemaId",
            "idx",
            "flags",
            "type",
            "name",
            "arrayOrUnionDetail",
            "offset",
        ],
        true,
        None,
    )?;
    db.each_row(ENTRIES, &sql, |row| {
        let rowid = db.rowid(ENTRIES, row)?;
        let int = |i, c| db.int(ENTRIES, row, i, c, rowid);
        let need = |v: Option<i64>, c: &str| {
            v.ok_or_else(|| db.row_error(ENTRIES, rowid, format!("column `{c}` is null")))
        };
        let domain = int(1, "domainId")?.unwrap_or(0);
        let id = need(int(2, "schemaId")?, "schemaId")? as u64;
        let entry = EntryRow {
            rowid,
            index: need(int(3, "idx")?, "idx")?,
            flags: int(4, "flags")?.unwrap_or(0),
            ty: int(5, "type")?,
            name: nvtx::text(row, 6).map(|t| t.into_owned()),
            detail: int(7, "arrayOrUnionDetail")?,
            offset: int(8, "offset")?,
        };
        rows.entry((domain, id)).or_default().push(entry);
        Ok(())
    })?;
    Ok(rows)
}

/// A schema's entry rows in order of index, rows repeated for each process that
/// registered the schema made one entry.
fn distinct(mut entries: Vec<EntryRow>) -> Vec<EntryRow> {
    entries.sort_by_key(|e| (e.index, e.rowid));
    entries.dedup_by(|b, a| {
        a.index == b.index
            && a.flags == b.flags
            && a.ty == b.ty
            && a.name == b.name
            && a.detail == b.detail
            && a.offset == b.offset
    });
    entries
}

/// The entries of schema `key`, their offsets known or inferred (the next offset aligned
/// to the type's size, as C lays out a struct), each checked to lie inside a static
/// payload.
fn build_entries(
    db: &Db,
    key: (i64, u64),
    schema: &Schema,
    rows: &[EntryRow],
) -> Result<Vec<Entry>> {
    let (domain, id) = key;
    let mut out = Vec::with_capacity(rows.len());
    let mut next: Option<u64> = Some(0);
    for (i, row) in rows.iter().enumerate() {
        if row.index != i as i64 {
            let msg = if i > 0 && row.index == rows[i - 1].index {
                format!(
                    "index {} of schema {id} of domain {domain} is defined twice",
                    row.index
                )
            } else {
                format!("schema {id} of domain {domain} has no entry of index {i}")
            };
            return Err(db.row_error(ENTRIES, row.rowid, msg));
        }
        let ty = row.ty.unwrap_or(0);
        let info = type_info(ty);
        let (mut decode, mut size, mut kind) = (info.decode, info.size, info.name.to_string());
        // Alignment: a scalar's own size (up to 16), a string's code unit, a byte's 1.
        let mut align = size.unwrap_or(1).clamp(1, 16);
        if let (Some(unit), Some(n)) = (char_unit(ty), row.detail.filter(|&n| n > 0)) {
            // An embedded string of n code units.
            decode = Decode::Chars(unit);
            size = (n as u64).checked_mul(u64::from(unit));
            align = u64::from(unit);
        } else if ty == 32 && row.flags & LAYOUT_FLAGS == 1 << 4 {
            // A fixed-size array of bytes.
            decode = Decode::Hex;
            kind = "bytes".into();
            size = row.detail.filter(|&n| n > 0).map(|n| n as u64);
            align = 1;
        } else if row.flags & LAYOUT_FLAGS != 0 {
            decode = Decode::No;
            kind = format!("{kind}[flags {}]", row.flags);
            size = None;
        }
        if ty >= 1 << 24 {
            kind = format!("schema {ty}");
        } else if info.name == "unknown" {
            kind = format!("type {ty}");
        }
        let offset = match row.offset {
            Some(o) if o < 0 => {
                return Err(db.row_error(ENTRIES, row.rowid, format!("offset {o} is negative")));
            }
            Some(o) => Some(o as u64),
            // The first entry's offset is written null: 0.
            None if i == 0 => Some(0),
            None => next.and_then(|n| n.checked_next_multiple_of(align)),
        };
        if let (Some(o), Some(s), Some(total)) = (offset, size, schema.size)
            && decode != Decode::No
            && o.checked_add(s).is_none_or(|end| end > total)
        {
            return Err(db.row_error(
                ENTRIES,
                row.rowid,
                format!(
                    "field {i} of schema {id} of domain {domain} ({s} bytes at offset {o}) \
                     lies beyond the schema's {total}-byte payload"
                ),
            ));
        }
        next = match (offset, size) {
            (Some(o), Some(s)) => o.checked_add(s),
            _ => None,
        };
        let size = size.unwrap_or(0);
        out.push(Entry {
            index: i as u32,
            name: row.name.clone().unwrap_or_else(|| format!("#{i}")),
            kind,
            decode,
            offset,
            size,
        });
    }
    Ok(out)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// A field's value from its bytes.
fn value_of(decode: Decode, bytes: &[u8]) -> Option<PayloadValue> {
    let mut le = [0u8; 8];
    let n = bytes.len().min(8);
    le[..n].copy_from_slice(&bytes[..n]);
    let unsigned = u64::from_le_bytes(le);
    match decode {
        Decode::Unsigned => Some(PayloadValue::Unsigned(unsigned)),
        Decode::Signed => {
            let shift = 64 - 8 * n as u32;
            Some(PayloadValue::Signed(((unsigned << shift) as i64) >> shift))
        }
        Decode::Float => Some(PayloadValue::Float(if n == 4 {
            f64::from(f32::from_bits(unsigned as u32))
        } else {
            f64::from_bits(unsigned)
        })),
        Decode::Chars(1) => {
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            Some(PayloadValue::Text(
                String::from_utf8_lossy(&bytes[..end]).into_owned(),
            ))
        }
        Decode::Chars(2) => {
            let units: Vec<u16> = bytes
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .take_while(|&u| u != 0)
                .collect();
            Some(PayloadValue::Text(String::from_utf16_lossy(&units)))
        }
        Decode::Chars(_) => Some(PayloadValue::Text(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .take_while(|&u| u != 0)
                .map(|u| char::from_u32(u).unwrap_or(char::REPLACEMENT_CHARACTER))
                .collect(),
        )),
        Decode::Hex => Some(PayloadValue::Text(hex(bytes))),
        Decode::No => None,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One field as decoded from a blob, before it becomes a record.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The schema's registered name, else its id in decimal.
    pub schema: String,
    /// The schema's id.
    pub schema_id: u64,
    /// Which of the event's payloads (0 for the first).
    pub payload: u32,
    /// The field's position in the schema.
    pub index: u32,
    /// The field's name, else `#INDEX`.
    pub field: String,
    /// The field's type.
    pub kind: String,
    /// The value; null where it is not decoded.
    pub value: Option<PayloadValue>,
}

/// What decoding left aside, for the notes.
#[derive(Debug, Default)]
pub struct Tally {
    /// Fields decoded.
    pub fields: u64,
    /// Fields that are NVTX string handles (the text is not in the export).
    pub handles: u64,
    /// Fields of a type left undecoded.
    pub undecoded: u64,
    /// Payloads whose schema the export does not define.
    pub unknown_schema: u64,
    /// Some of those: (event id, schema id).
    pub unknown_examples: Vec<(i64, u64)>,
}

/// Decodes the blob `blob` (row `rowid` of `NVTX_EVENTS`, for errors) into its fields.
pub fn decode(
    db: &Db,
    schemas: &Schemas,
    blob: &[u8],
    rowid: i64,
    tally: &mut Tally,
    out: &mut Vec<Decoded>,
) -> Result<()> {
    let bad = |msg: String| db.row_error(EVENTS, rowid, format!("binaryData: {msg}"));
    let mut at = 0usize;
    let mut payload = 0u32;
    while at < blob.len() {
        let rest = &blob[at..];
        let (domain, schema_id, size) = header(rest, at, payload).map_err(bad)?;
        let data = &rest[HEADER..HEADER + size as usize];
        match schemas.find(domain, schema_id) {
            None => {
                tally.unknown(domain, schema_id);
                out.push(raw(schema_id.to_string(), schema_id, payload, data));
            }
            Some((schema, id)) if schema.union => {
                out.push(raw(schema.name.clone(), id, payload, data));
            }
            Some((schema, id)) => {
                fields(schema, id, payload, data, tally, out).map_err(bad)?;
            }
        }
        at += HEADER + size as usize;
        payload += 1;
    }
    Ok(())
}

/// The header of the payload at the start of `rest` (byte `at` of the blob): its domain,
/// schema id and size, checked against the bytes that follow.
fn header(rest: &[u8], at: usize, payload: u32) -> std::result::Result<(i64, u64, u64), String> {
    if rest.len() < HEADER {
        return Err(format!(
            "{} bytes at byte {at}, shorter than the {HEADER}-byte header of a payload",
            rest.len()
        ));
    }
    let domain = i64::from(u32_at(rest, 0));
    let schema_id = u64_at(rest, 8);
    let size = u64_at(rest, 16);
    let total = u64_at(rest, 24);
    if size > (rest.len() - HEADER) as u64 {
        return Err(format!(
            "payload {payload} says {size} bytes, but {} follow its header",
            rest.len() - HEADER
        ));
    }
    if total != HEADER as u64 + size {
        return Err(format!(
            "payload {payload} says a total of {total} bytes for a {size}-byte payload \
             and its {HEADER}-byte header"
        ));
    }
    Ok((domain, schema_id, size))
}

/// A payload written as it is: its bytes in hex, type `raw`.
fn raw(schema: String, schema_id: u64, payload: u32, data: &[u8]) -> Decoded {
    Decoded {
        schema,
        schema_id,
        payload,
        index: 0,
        field: String::new(),
        kind: "raw".into(),
        value: Some(PayloadValue::Text(hex(data))),
    }
}

/// The fields of `data`, payload `payload` of `schema` (id `id`), one [`Decoded`] each.
fn fields(
    schema: &Schema,
    id: u64,
    payload: u32,
    data: &[u8],
    tally: &mut Tally,
    out: &mut Vec<Decoded>,
) -> std::result::Result<(), String> {
    let size = data.len() as u64;
    if let Some(s) = schema.size.filter(|&s| s > size) {
        return Err(format!(
            "payload {payload} of schema {} has {size} bytes; the schema's fields take {s}",
            schema.name
        ));
    }
    for e in &schema.entries {
        let value = match (e.decode, e.offset) {
            (Decode::No, _) | (_, None) => None,
            (decode, Some(o)) => {
                let end = o.checked_add(e.size).filter(|&end| end <= size);
                let Some(end) = end else {
                    return Err(format!(
                        "field `{}` of schema {} ({} bytes at offset {o}) lies beyond the \
                         {size}-byte payload {payload}",
                        e.name, schema.name, e.size
                    ));
                };
                value_of(decode, &data[o as usize..end as usize])
            }
        };
        tally.fields += 1;
        if value.is_none() {
            tally.undecoded += 1;
        } else if e.kind == "string-handle" {
            tally.handles += 1;
        }
        out.push(Decoded {
            schema: schema.name.clone(),
            schema_id: id,
            payload,
            index: e.index,
            field: e.name.clone(),
            kind: e.kind.clone(),
            value,
        });
    }
    Ok(())
}

impl Tally {
    /// Counts a payload whose schema the export does not define, keeping a few examples.
    fn unknown(&mut self, domain: i64, schema_id: u64) {
        self.unknown_schema += 1;
        if self.unknown_examples.len() < 3 && !self.unknown_examples.contains(&(domain, schema_id))
        {
            self.unknown_examples.push((domain, schema_id));
        }
    }
}

/// The one-value payload of a row, from the columns after `first` (in the order of
/// [`VALUE_COLUMNS`]).
fn classic_value(
    db: &Db,
    names: &mut Names,
    row: &rusqlite::Row,
    first: usize,
    rowid: i64,
) -> Result<Option<(&'static str, PayloadValue)>> {
    for (k, &(column, kind)) in VALUE_COLUMNS.iter().enumerate() {
        let i = first + k;
        let cell = row.get_ref(i).map_err(|e| db.sql_error(EVENTS, e))?;
        let value = match (column, cell) {
            (_, ValueRef::Null) => continue,
            ("jsonTextId", _) => {
                let id = nvtx::int(db, row, i, column, rowid)?.unwrap_or(0);
                match names.string(db, id)? {
                    Some(text) => PayloadValue::Text(text),
                    None => {
                        return Err(db.row_error(
                            EVENTS,
                            rowid,
                            format!("jsonTextId {id} names no string of StringIds"),
                        ));
                    }
                }
            }
            ("jsonText", ValueRef::Text(t)) => {
                PayloadValue::Text(String::from_utf8_lossy(t).into_owned())
            }
            ("doubleValue" | "floatValue", ValueRef::Real(v)) => PayloadValue::Float(v),
            ("doubleValue" | "floatValue", ValueRef::Integer(v)) => PayloadValue::Float(v as f64),
            ("uint64Value", ValueRef::Integer(v)) => PayloadValue::Unsigned(v as u64),
            (_, ValueRef::Integer(v)) if column != "jsonText" => PayloadValue::Signed(v),
            _ => {
                return Err(db.row_error(
                    EVENTS,
                    rowid,
                    format!("column `{column}`: not a value of its type"),
                ));
            }
        };
        return Ok(Some((kind, value)));
    }
    Ok(None)
}

/// Reads every payload of `db`'s NVTX events, handing each field to `emit` in the
/// export's row order; what was left aside goes to `notes`. Returns how many fields.
pub fn read(
    db: &Db,
    profile: &Arc<str>,
    notes: &Notes,
    emit: &mut dyn FnMut(PayloadField) -> Result<()>,
) -> Result<u64> {
    let Some(present) = payload_columns(db, notes)? else {
        return Ok(0);
    };
    let schemas = Schemas::load(db)?;
    let types = nvtx::event_types(db)?;
    let mut names = Names::new(db)?;
    names.read_domains(db, types.domain_create)?;
    let sql = events_sql(db, &present, types.domain_create)?;
    let mut tally = Tally::default();
    let mut decoded = Vec::new();
    let mut n = 0u64;
    db.each_row(EVENTS, &sql, |row| {
        let event = Event::read(db, &mut names, row)?;
        decoded.clear();
        let rowid = event.rowid;
        payloads(
            db,
            &schemas,
            &mut names,
            row,
            rowid,
            &mut tally,
            &mut decoded,
        )?;
        for d in decoded.drain(..) {
            n += 1;
            emit(event.field(profile, d))?;
        }
        Ok(())
    })?;
    say(db, &tally, notes);
    Ok(n)
}

/// The payload columns of `NVTX_EVENTS` that the export has; `None`, and a note, where
/// it has no such table or none of them.
fn payload_columns(db: &Db, notes: &Notes) -> Result<Option<Vec<&'static str>>> {
    if !db.has(EVENTS) {
        notes.note(format!("{}: no NVTX_EVENTS table: no payloads", db.place()));
        return Ok(None);
    }
    let have = db.columns(EVENTS)?;
    let present: Vec<&str> = std::iter::once("binaryData")
        .chain(VALUE_COLUMNS.iter().map(|&(c, _)| c))
        .filter(|c| have.iter().any(|h| h == c))
        .collect();
    if present.is_empty() {
        notes.note(format!(
            "{}: NVTX_EVENTS has no payload columns (an export older than nsys 2021): no \
             payloads",
            db.place()
        ));
        return Ok(None);
    }
    Ok(Some(present))
}

/// The query of the events with a payload in one of the `present` columns, domain
/// creations aside (event type `domain_create`).
fn events_sql(db: &Db, present: &[&str], domain_create: i64) -> Result<String> {
    let filter = format!(
        "eventType <> {} AND ({})",
        domain_create,
        present
            .iter()
            .map(|c| format!("\"{c}\" IS NOT NULL"))
            .collect::<Vec<_>>()
            .join(" OR ")
    );
    let mut columns = vec![
        "start",
        "globalTid",
        "domainId",
        "textId",
        "text",
        "binaryData",
    ];
    columns.extend(VALUE_COLUMNS.iter().map(|&(c, _)| c));
    db.select(EVENTS, &columns, true, Some(&filter))
}

/// What the fields of one event's payloads have alike: the event's row, start, thread
/// and name.
struct Event {
    rowid: i64,
    start: i64,
    gtid: i64,
    name: String,
}

impl Event {
    /// The event of a row of [`events_sql`]'s query.
    fn read(db: &Db, names: &mut Names, row: &rusqlite::Row) -> Result<Event> {
        let rowid = db.rowid(EVENTS, row)?;
        let need = |v: Option<i64>, column: &str| {
            v.ok_or_else(|| db.row_error(EVENTS, rowid, format!("column `{column}` is null")))
        };
        let start = need(db.time(EVENTS, row, 1, "start", rowid)?, "start")?;
        let gtid = need(nvtx::int(db, row, 2, "globalTid", rowid)?, "globalTid")?;
        let domain = names.domain(gtid, nvtx::int(db, row, 3, "domainId", rowid)?);
        let text_id = nvtx::int(db, row, 4, "textId", rowid)?;
        let literal = nvtx::text(row, 5);
        let name = names.name_of(db, domain, text_id, literal.as_deref(), rowid)?;
        let name = names.get(name).to_string();
        Ok(Event {
            rowid,
            start,
            gtid,
            name,
        })
    }

    /// The record of `d`, a field of one of this event's payloads.
    fn field(&self, profile: &Arc<str>, d: Decoded) -> PayloadField {
        PayloadField {
            profile: profile.clone(),
            pid: pid_of(self.gtid),
            tid: tid_of(self.gtid),
            id: self.rowid as u64,
            start_ns: self.start,
            name: self.name.clone(),
            schema: d.schema,
            schema_id: d.schema_id,
            payload: d.payload,
            index: d.index,
            field: d.field,
            kind: d.kind,
            value: d.value,
        }
    }
}

/// The fields of the payloads of a row of [`events_sql`]'s query (row `rowid` of
/// `NVTX_EVENTS`) into `out`: its binary payloads' (`binaryData`), then its one-value
/// payload's.
fn payloads(
    db: &Db,
    schemas: &Schemas,
    names: &mut Names,
    row: &rusqlite::Row,
    rowid: i64,
    tally: &mut Tally,
    out: &mut Vec<Decoded>,
) -> Result<()> {
    match row.get_ref(6).map_err(|e| db.sql_error(EVENTS, e))? {
        ValueRef::Blob(b) | ValueRef::Text(b) => decode(db, schemas, b, rowid, tally, out)?,
        ValueRef::Null => {}
        _ => {
            return Err(db.row_error(
                EVENTS,
                rowid,
                "binaryData: a number, not the bytes of a payload",
            ));
        }
    }
    if let Some((kind, value)) = classic_value(db, names, row, 7, rowid)? {
        out.push(Decoded {
            schema: "value".into(),
            schema_id: 0,
            payload: out.last().map_or(0, |d| d.payload + 1),
            index: 0,
            field: "value".into(),
            kind: kind.into(),
            value: Some(value),
        });
    }
    Ok(())
}

/// The notes of what decoding could not give.
fn say(db: &Db, tally: &Tally, notes: &Notes) {
    if tally.handles > 0 {
        notes.note(format!(
            "{}: {} payload fields are strings the application registered with NVTX \
             (XLA's HLO text, op names, source files, shapes, replica groups): the export \
             keeps their handles, not their text, so the handle is written (type \
             string-handle; one handle is one string within a process)",
            db.place(),
            tally.handles
        ));
    }
    if tally.undecoded > 0 {
        notes.note(format!(
            "{}: {} payload fields of types njx does not decode (pointers, arrays, \
             128-bit and half-precision numbers, nested schemas) written with null values",
            db.place(),
            tally.undecoded
        ));
    }
    if tally.unknown_schema > 0 {
        let examples: Vec<String> = tally
            .unknown_examples
            .iter()
            .map(|(d, s)| format!("schema {s} of domain {d}"))
            .collect();
        notes.note(format!(
            "{}: {} payloads of schemas the export does not define ({}) written raw, in hex",
            db.place(),
            tally.unknown_schema,
            examples.join(", ")
        ));
    }
}
