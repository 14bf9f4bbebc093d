//! Byte-level builders for hostile files: a zip writer whose every size field can lie,
//! deflate/gzip/xz streams that expand to gigabytes from a few megabytes (built from
//! repeated pieces, never holding the expansion in memory), and a Thrift compact codec
//! to rewrite Parquet footers.

use flate2::Compression;
use flate2::write::DeflateEncoder;
use std::io::Write;

// ---------------------------------------------------------------- zip

/// A member of a hand-written zip: its payload as stored (already compressed) and the
/// fields each header declares, which tests may set to anything.
#[derive(Clone)]
pub struct ZipEntry {
    pub name: String,
    /// 0 stored, 8 deflated.
    pub method: u16,
    pub payload: Vec<u8>,
    pub crc: u32,
    /// The true uncompressed size.
    pub size: u64,
    /// What the local header declares (defaults: the truth).
    pub local_size: Option<u64>,
    pub local_csize: Option<u64>,
    /// What the central directory declares.
    pub central_size: Option<u64>,
    pub central_csize: Option<u64>,
    /// The local header offset the central directory declares, when not the true one.
    pub central_offset: Option<u64>,
    /// The Unix mode in the central directory's external attributes (made by Unix):
    /// `0o100644` (a file) unless a test makes it a link, a FIFO, a device…
    pub mode: u32,
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut c = flate2::Crc::new();
    c.update(bytes);
    c.sum()
}

/// Raw deflate of `bytes`.
pub fn deflate(bytes: &[u8]) -> Vec<u8> {
    let mut enc = DeflateEncoder::new(Vec::new(), Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

impl ZipEntry {
    pub fn stored(name: &str, bytes: &[u8]) -> ZipEntry {
        ZipEntry::raw(name, 0, bytes.to_vec(), crc32(bytes), bytes.len() as u64)
    }

    pub fn deflated(name: &str, bytes: &[u8]) -> ZipEntry {
        ZipEntry::raw(name, 8, deflate(bytes), crc32(bytes), bytes.len() as u64)
    }

    /// A member from an already compressed payload.
    pub fn raw(name: &str, method: u16, payload: Vec<u8>, crc: u32, size: u64) -> ZipEntry {
        ZipEntry {
            name: name.to_string(),
            method,
            payload,
            crc,
            size,
            local_size: None,
            local_csize: None,
            central_size: None,
            central_csize: None,
            central_offset: None,
            mode: 0o100644,
        }
    }
}

fn u16le(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn u32le(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}

/// Writes a zip of `entries`; `declared_entries` overrides the count in the end record.
pub fn zip_raw(entries: &[ZipEntry], declared_entries: Option<u16>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offsets = Vec::new();
    for e in entries {
        offsets.push(out.len() as u64);
        let size = e.local_size.unwrap_or(e.size);
        let csize = e.local_csize.unwrap_or(e.payload.len() as u64);
        let zip64 = size >= 0xFFFF_FFFF || csize >= 0xFFFF_FFFF;
        u32le(&mut out, 0x0403_4b50);
        u16le(&mut out, if zip64 { 45 } else { 20 });
        u16le(&mut out, 0x0800); // UTF-8 names
        u16le(&mut out, e.method);
        u16le(&mut out, 0);
        u16le(&mut out, 0x21);
        u32le(&mut out, e.crc);
        if zip64 {
            u32le(&mut out, 0xFFFF_FFFF);
            u32le(&mut out, 0xFFFF_FFFF);
        } else {
            u32le(&mut out, csize as u32);
            u32le(&mut out, size as u32);
        }
        u16le(&mut out, e.name.len() as u16);
        u16le(&mut out, if zip64 { 20 } else { 0 });
        out.extend_from_slice(e.name.as_bytes());
        if zip64 {
            u16le(&mut out, 1);
            u16le(&mut out, 16);
            out.extend_from_slice(&size.to_le_bytes());
            out.extend_from_slice(&csize.to_le_bytes());
        }
        out.extend_from_slice(&e.payload);
    }
    let cd_start = out.len() as u64;
    for (e, &offset) in entries.iter().zip(&offsets) {
        let size = e.central_size.unwrap_or(e.size);
        let csize = e.central_csize.unwrap_or(e.payload.len() as u64);
        let offset = e.central_offset.unwrap_or(offset);
        let mut extra = Vec::new();
        for v in [size, csize, offset] {
            if v >= 0xFFFF_FFFF {
                extra.extend_from_slice(&v.to_le_bytes());
            }
        }
        let zip64 = !extra.is_empty();
        u32le(&mut out, 0x0201_4b50);
        u16le(&mut out, 0x031e);
        u16le(&mut out, if zip64 { 45 } else { 20 });
        u16le(&mut out, 0x0800);
        u16le(&mut out, e.method);
        u16le(&mut out, 0);
        u16le(&mut out, 0x21);
        u32le(&mut out, e.crc);
        let field = |v: u64| {
            if v >= 0xFFFF_FFFF {
                0xFFFF_FFFF
            } else {
                v as u32
            }
        };
        u32le(&mut out, field(csize));
        u32le(&mut out, field(size));
        u16le(&mut out, e.name.len() as u16);
        u16le(&mut out, if zip64 { extra.len() as u16 + 4 } else { 0 });
        u16le(&mut out, 0);
        u16le(&mut out, 0);
        u16le(&mut out, 0);
        u32le(&mut out, e.mode << 16);
        u32le(&mut out, field(offset));
        out.extend_from_slice(e.name.as_bytes());
        if zip64 {
            u16le(&mut out, 1);
            u16le(&mut out, extra.len() as u16);
            out.extend_from_slice(&extra);
        }
    }
    let cd_len = out.len() as u64 - cd_start;
    let n = declared_entries.unwrap_or(entries.len() as u16);
    u32le(&mut out, 0x0605_4b50);
    u16le(&mut out, 0);
    u16le(&mut out, 0);
    u16le(&mut out, n);
    u16le(&mut out, n);
    u32le(&mut out, cd_len as u32);
    u32le(&mut out, cd_start as u32);
    u16le(&mut out, 0);
    out
}

// ---------------------------------------------------------------- bombs

/// A raw deflate stream of `prefix` followed by `units` copies of `unit` (a run of one
/// repeated byte, at least 32 KiB long), built from one compressed copy of the unit
/// repeated: every copy refers only to the bytes just before it, which are the same
/// byte whatever copy it is. Returns the stream, the CRC-32 and the length of the
/// expansion.
pub fn deflate_repeat(prefix: &[u8], unit: &[u8], units: u64) -> (Vec<u8>, u32, u64) {
    assert!(units >= 2 && unit.len() >= 32 << 10);
    assert!(unit.iter().all(|&b| b == unit[0]));
    let mut enc = DeflateEncoder::new(Vec::new(), Compression::best());
    enc.write_all(prefix).unwrap();
    enc.write_all(unit).unwrap();
    enc.flush().unwrap();
    let a = enc.get_ref().len();
    enc.write_all(unit).unwrap();
    enc.flush().unwrap();
    let b = enc.get_ref().len();
    let all = enc.finish().unwrap();
    let (first, piece, end) = (&all[..a], &all[a..b], &all[b..]);
    let mut out = Vec::with_capacity(a + piece.len() * units as usize + end.len());
    out.extend_from_slice(first);
    for _ in 1..units {
        out.extend_from_slice(piece);
    }
    out.extend_from_slice(end);
    let mut crc = flate2::Crc::new();
    crc.update(prefix);
    crc.update(unit);
    let mut one = flate2::Crc::new();
    one.update(unit);
    for _ in 1..units {
        crc.combine(&one);
    }
    let total = prefix.len() as u64 + unit.len() as u64 * units;
    (out, crc.sum(), total)
}

/// A gzip member around a raw deflate stream.
pub fn gzip_wrap(raw: &[u8], crc: u32, total: u64) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend_from_slice(raw);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out
}

/// gzip of `prefix` + `units` × `unit`.
pub fn gzip_bomb(prefix: &[u8], unit: &[u8], units: u64) -> Vec<u8> {
    let (raw, crc, total) = deflate_repeat(prefix, unit, units);
    gzip_wrap(&raw, crc, total)
}

/// xz of `prefix` + `units` × `unit`, as concatenated xz streams (what `xz -dc` and
/// multi-stream decoders read as one): the unit's stream is compressed once and repeated.
pub fn xz_bomb(prefix: &[u8], unit: &[u8], units: u64) -> Vec<u8> {
    let mut first = prefix.to_vec();
    first.extend_from_slice(unit);
    let head = crate::common::xz_preset(&first, 0);
    let piece = crate::common::xz_preset(unit, 0);
    let mut out = head;
    for _ in 1..units {
        out.extend_from_slice(&piece);
    }
    out
}

/// A zip member (deflated) that expands to `prefix` + `units` × `unit`.
pub fn deflated_bomb_entry(name: &str, prefix: &[u8], unit: &[u8], units: u64) -> ZipEntry {
    let (raw, crc, total) = deflate_repeat(prefix, unit, units);
    ZipEntry::raw(name, 8, raw, crc, total)
}

// ---------------------------------------------------------------- mutations

/// `bytes` cut to `n` bytes.
pub fn truncated(bytes: &[u8], n: usize) -> Vec<u8> {
    bytes[..n.min(bytes.len())].to_vec()
}

/// Offsets at which to cut a file of `len` bytes: the first bytes, fractions, the end.
pub fn cut_points(len: usize) -> Vec<usize> {
    let mut v = vec![
        1,
        4,
        9,
        len / 5,
        len / 3,
        len / 2,
        2 * len / 3,
        len.saturating_sub(40),
        len.saturating_sub(9),
        len.saturating_sub(1),
    ];
    v.retain(|&n| n > 0 && n < len);
    v.dedup();
    v
}

/// `bytes` with the bits of `mask` flipped at `at`.
pub fn flipped(bytes: &[u8], at: usize, mask: u8) -> Vec<u8> {
    let mut v = bytes.to_vec();
    let i = at % v.len();
    v[i] ^= mask;
    v
}

/// A deterministic generator, so a failing case reproduces from its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

// ---------------------------------------------------------------- Thrift compact

/// A Thrift value in the compact protocol.
#[derive(Clone, Debug)]
pub enum T {
    Bool(bool),
    I8(u8),
    I16(i64),
    I32(i64),
    I64(i64),
    Double([u8; 8]),
    Bin(Vec<u8>),
    /// A list (or set): element type, items, and the size to declare when not theirs.
    List {
        set: bool,
        elem: u8,
        items: Vec<T>,
        declared: Option<u64>,
    },
    Map {
        kt: u8,
        vt: u8,
        items: Vec<(T, T)>,
    },
    Struct(Vec<(i16, T)>),
}

pub const STRUCT: u8 = 12;

fn varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = *buf.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

fn unzig(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn zig(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        if v < 0x80 {
            out.push(v as u8);
            return;
        }
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
}

fn read_value(buf: &[u8], pos: &mut usize, ty: u8, in_list: bool) -> Option<T> {
    Some(match ty {
        1 | 2 if in_list => {
            let b = *buf.get(*pos)?;
            *pos += 1;
            T::Bool(b == 1)
        }
        1 => T::Bool(true),
        2 => T::Bool(false),
        3 => {
            let b = *buf.get(*pos)?;
            *pos += 1;
            T::I8(b)
        }
        4 => T::I16(unzig(varint(buf, pos)?)),
        5 => T::I32(unzig(varint(buf, pos)?)),
        6 => T::I64(unzig(varint(buf, pos)?)),
        7 => {
            let b: [u8; 8] = buf.get(*pos..*pos + 8)?.try_into().ok()?;
            *pos += 8;
            T::Double(b)
        }
        8 => {
            let n = varint(buf, pos)? as usize;
            let b = buf.get(*pos..*pos + n)?.to_vec();
            *pos += n;
            T::Bin(b)
        }
        9 | 10 => {
            let h = *buf.get(*pos)?;
            *pos += 1;
            let mut n = u64::from(h >> 4);
            if n == 15 {
                n = varint(buf, pos)?;
            }
            let elem = h & 0x0f;
            let mut items = Vec::new();
            for _ in 0..n {
                items.push(read_value(buf, pos, elem, true)?);
            }
            T::List {
                set: ty == 10,
                elem,
                items,
                declared: None,
            }
        }
        11 => {
            let n = varint(buf, pos)?;
            let (mut kt, mut vt) = (0, 0);
            if n > 0 {
                let h = *buf.get(*pos)?;
                *pos += 1;
                kt = h >> 4;
                vt = h & 0x0f;
            }
            let mut items = Vec::new();
            for _ in 0..n {
                let k = read_value(buf, pos, kt, true)?;
                let v = read_value(buf, pos, vt, true)?;
                items.push((k, v));
            }
            T::Map { kt, vt, items }
        }
        12 => {
            let mut fields = Vec::new();
            let mut last: i16 = 0;
            loop {
                let h = *buf.get(*pos)?;
                *pos += 1;
                if h == 0 {
                    break;
                }
                let fty = h & 0x0f;
                let delta = h >> 4;
                let id = if delta == 0 {
                    unzig(varint(buf, pos)?) as i16
                } else {
                    last + i16::from(delta)
                };
                last = id;
                fields.push((id, read_value(buf, pos, fty, false)?));
            }
            T::Struct(fields)
        }
        _ => return None,
    })
}

/// Decodes one struct at the start of `buf`; returns it and its length.
pub fn decode_struct(buf: &[u8]) -> Option<(T, usize)> {
    let mut pos = 0;
    let v = read_value(buf, &mut pos, STRUCT, false)?;
    Some((v, pos))
}

impl T {
    /// The compact type code of the value (as a field).
    fn code(&self) -> u8 {
        match self {
            T::Bool(true) => 1,
            T::Bool(false) => 2,
            T::I8(_) => 3,
            T::I16(_) => 4,
            T::I32(_) => 5,
            T::I64(_) => 6,
            T::Double(_) => 7,
            T::Bin(_) => 8,
            T::List { set: false, .. } => 9,
            T::List { set: true, .. } => 10,
            T::Map { .. } => 11,
            T::Struct(_) => 12,
        }
    }

    fn write(&self, out: &mut Vec<u8>, in_list: bool) {
        match self {
            T::Bool(b) => {
                if in_list {
                    out.push(if *b { 1 } else { 2 });
                }
            }
            T::I8(b) => out.push(*b),
            T::I16(v) | T::I32(v) | T::I64(v) => put_varint(out, zig(*v)),
            T::Double(b) => out.extend_from_slice(b),
            T::Bin(b) => {
                put_varint(out, b.len() as u64);
                out.extend_from_slice(b);
            }
            T::List {
                elem,
                items,
                declared,
                ..
            } => {
                let n = declared.unwrap_or(items.len() as u64);
                if n < 15 {
                    out.push(((n as u8) << 4) | elem);
                } else {
                    out.push(0xf0 | elem);
                    put_varint(out, n);
                }
                for i in items {
                    i.write(out, true);
                }
            }
            T::Map { kt, vt, items } => {
                put_varint(out, items.len() as u64);
                if !items.is_empty() {
                    out.push((kt << 4) | vt);
                }
                for (k, v) in items {
                    k.write(out, true);
                    v.write(out, true);
                }
            }
            T::Struct(fields) => {
                let mut last: i16 = 0;
                for (id, v) in fields {
                    let delta = id - last;
                    if (1..=15).contains(&delta) {
                        out.push(((delta as u8) << 4) | v.code());
                    } else {
                        out.push(v.code());
                        put_varint(out, zig(i64::from(*id)));
                    }
                    last = *id;
                    v.write(out, false);
                }
                out.push(0);
            }
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(&mut out, false);
        out
    }

    /// The field `id` of a struct.
    pub fn field(&mut self, id: i16) -> Option<&mut T> {
        match self {
            T::Struct(fields) => fields.iter_mut().find(|(i, _)| *i == id).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets (or adds, in id order) the field `id` of a struct.
    pub fn set(&mut self, id: i16, v: T) {
        if let T::Struct(fields) = self {
            if let Some(f) = fields.iter_mut().find(|(i, _)| *i == id) {
                f.1 = v;
            } else {
                let at = fields
                    .iter()
                    .position(|(i, _)| *i > id)
                    .unwrap_or(fields.len());
                fields.insert(at, (id, v));
            }
        }
    }

    /// The items of a list.
    pub fn items(&mut self) -> &mut Vec<T> {
        match self {
            T::List { items, .. } => items,
            _ => panic!("not a list"),
        }
    }

    /// Declares a list's size to be `n`, whatever its items.
    pub fn declare(&mut self, n: u64) {
        if let T::List { declared, .. } = self {
            *declared = Some(n);
        }
    }
}

/// A Parquet file split into its data and its footer (FileMetaData).
pub struct Parquet {
    pub data: Vec<u8>,
    pub footer: T,
}

impl Parquet {
    pub fn parse(file: &[u8]) -> Parquet {
        let n = file.len();
        assert_eq!(&file[n - 4..], b"PAR1");
        let flen = u32::from_le_bytes(file[n - 8..n - 4].try_into().unwrap()) as usize;
        let start = n - 8 - flen;
        let (footer, used) = decode_struct(&file[start..n - 8]).expect("footer decodes");
        assert_eq!(used, flen, "footer length");
        Parquet {
            data: file[..start].to_vec(),
            footer,
        }
    }

    /// The file with this footer.
    pub fn bytes(&self) -> Vec<u8> {
        self.with_footer_bytes(&self.footer.encode(), None)
    }

    /// The file with `footer` bytes and a declared footer length (the true one unless
    /// given).
    pub fn with_footer_bytes(&self, footer: &[u8], declared_len: Option<u32>) -> Vec<u8> {
        let mut out = self.data.clone();
        out.extend_from_slice(footer);
        let len = declared_len.unwrap_or(footer.len() as u32);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(b"PAR1");
        out
    }

    /// The schema elements (FileMetaData field 2).
    pub fn schema(&mut self) -> &mut T {
        self.footer.field(2).expect("schema")
    }

    /// The first row group (FileMetaData field 4).
    pub fn row_group(&mut self) -> &mut T {
        &mut self.footer.field(4).expect("row groups").items()[0]
    }

    /// The ColumnMetaData of column `i` of the first row group.
    pub fn column_meta(&mut self, i: usize) -> &mut T {
        let rg = self.row_group();
        let col = &mut rg.field(1).expect("columns").items()[i];
        col.field(3).expect("column metadata")
    }
}
