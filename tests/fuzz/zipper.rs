//! Zip containers: archives written from members (each an [`Item`] that mutates in its
//! own way, stored or deflated), member lists changed (renamed, removed, duplicated,
//! profile copies), and raw patches of the headers of a written archive (sizes, offsets,
//! methods, flags, counts, zip64 markers, an entry listed twice).

use crate::item::Item;
use crate::rng::Rng;
use std::io::Write;
use std::path::Path;

/// One member of an archive being built.
#[derive(Clone)]
pub struct Member {
    pub name: String,
    pub item: Item,
    pub stored: bool,
}

/// Writes `members` as a zip archive; `None` when the writer refuses (a name twice).
pub fn build(members: &[Member]) -> Option<Vec<u8>> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for m in members {
        let method = if m.stored {
            zip::CompressionMethod::Stored
        } else {
            zip::CompressionMethod::Deflated
        };
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(method)
            .large_file(m.item.bytes.len() >= u32::MAX as usize);
        if m.name.ends_with('/') {
            w.add_directory(m.name.trim_end_matches('/'), options)
                .ok()?;
            continue;
        }
        w.start_file(m.name.as_str(), options).ok()?;
        w.write_all(&m.item.bytes).ok()?;
    }
    Some(w.finish().ok()?.into_inner())
}

/// Names members take on.
fn other_name(rng: &mut Rng, old: &str) -> String {
    let base = old.split('/').next_back().unwrap_or(old);
    match rng.below(20) {
        0 => format!("{old}/rank1"),
        1 => format!("{old}/rank0"),
        2 => format!("/{old}"),
        3 => format!("../{old}"),
        4 => format!("dump/{base}"),
        5 => format!("{old}/"),
        6 => old.to_uppercase(),
        7 => format!("x/{old}"),
        8 => (*rng.pick(&[
            "report_nvtx_pushpop_trace.csv.xz",
            "report_nvtx_pushpop_trace.parquet",
            "report_nvtx_pushpop_trace.csv",
            "nvtx_gpu_proj_trace/trace.parquet",
            "thread-metadata.parquet",
            "report.sqlite",
            "dump/module_0007.jit_step.sm_8.0_gpu_after_optimizations.hlo.pb.xz",
            "dump/module_0007.jit_step.sm_8.0_gpu_after_optimizations.hlo.pb",
            "dump/module_0007.jit_step.gpu_after_optimizations.hlo.pb.xz/rank0",
            "dump/module_7.jit_step.gpu_after_optimizations.hlo.pb.xz",
            "dump/module_18446744073709551616.x.gpu_after_optimizations.hlo.pb",
            "dump/module_0003.jit_f.sm_8.0_gpu_after_optimizations.hlo.pb",
            "dump/module_0007.jit_step.sm_8.0_gpu_before_optimizations.hlo.pb.xz",
            "sources/a.py",
        ]))
        .to_string(),
        9 => String::new(),
        10 => format!("{old}\u{0}x"),
        // Names no extractor may take as they are (njx-combine must refuse them).
        12 => format!("dump/../../{base}"),
        13 => format!("C:/{old}"),
        14 => old.replace('/', "\\"),
        15 => old.replacen('/', "//", 1),
        16 => format!("./{old}"),
        17 => format!("{old}\u{1b}[31m"),
        18 => format!("{old}\n"),
        _ => format!("{old}.bak"),
    }
}

/// Changes the member list: one member's content (in its own way), its name or method,
/// or a member removed, duplicated under another name or added.
pub fn mutate_members(rng: &mut Rng, members: &mut Vec<Member>, others: &[&[u8]]) {
    if members.is_empty() {
        members.push(Member {
            name: other_name(rng, "x"),
            item: Item::raw(Vec::new()),
            stored: true,
        });
        return;
    }
    let i = rng.below(members.len());
    match rng.below(12) {
        0..=5 => {
            let item = crate::item::mutate(rng, &members[i].item, others, 3);
            members[i].item = item;
        }
        6 => members[i].stored = !members[i].stored,
        7 => members[i].name = other_name(rng, &members[i].name),
        8 => {
            members.remove(i);
        }
        9 => {
            let mut copy = members[i].clone();
            copy.name = other_name(rng, &copy.name);
            members.push(copy);
        }
        10 => {
            // the member's content replaced by another member's
            let j = rng.below(members.len());
            let item = members[j].item.clone();
            members[i].item = item;
        }
        _ => {
            let j = rng.below(members.len());
            members.swap(i, j);
        }
    }
}

fn get16(b: &[u8], at: usize) -> Option<usize> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?) as usize)
}
fn get32(b: &[u8], at: usize) -> Option<usize> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?) as usize)
}
fn put(b: &mut [u8], at: usize, width: usize, v: u64) {
    let bytes = v.to_le_bytes();
    for (k, &byte) in bytes.iter().enumerate().take(width) {
        if let Some(x) = b.get_mut(at + k) {
            *x = byte;
        }
    }
}

/// Where the end of central directory record is.
fn eocd(b: &[u8]) -> Option<usize> {
    (0..b.len().saturating_sub(21))
        .rev()
        .find(|&i| b[i..].starts_with(b"PK\x05\x06"))
}

/// Offsets of the central directory entries.
fn central(b: &[u8]) -> Vec<usize> {
    let Some(e) = eocd(b) else {
        return Vec::new();
    };
    let (Some(n), Some(mut at)) = (get16(b, e + 10), get32(b, e + 16)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for _ in 0..n {
        if !b.get(at..).is_some_and(|r| r.starts_with(b"PK\x01\x02")) {
            break;
        }
        out.push(at);
        let (Some(nl), Some(el), Some(cl)) =
            (get16(b, at + 28), get16(b, at + 30), get16(b, at + 32))
        else {
            break;
        };
        at += 46 + nl + el + cl;
    }
    out
}

const VALUES: &[u64] = &[
    0,
    1,
    0xffff,
    0xffff_ffff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_fffe,
    12,
    14,
    93,
    99,
    8,
];

/// Patches the headers of a written archive.
pub fn patch(rng: &mut Rng, b: &mut Vec<u8>) {
    let entries = central(b);
    let Some(e) = eocd(b) else {
        crate::bytes::one(rng, b, &[]);
        return;
    };
    let value = |rng: &mut Rng, old: u64| -> u64 {
        match rng.below(4) {
            0 => old.wrapping_add(rng.range(1, 100) as u64),
            1 => old.wrapping_sub(rng.range(1, 100) as u64),
            _ => *rng.pick(VALUES),
        }
    };
    match rng.below(7) {
        0 => {
            // end of central directory: counts, size, offset, comment length
            let (at, w) =
                *rng.pick(&[(8usize, 2usize), (10, 2), (12, 4), (16, 4), (20, 2), (4, 2)]);
            let old = get32(b, e + at).unwrap_or(0) as u64 & if w == 2 { 0xffff } else { u64::MAX };
            put(b, e + at, w, value(rng, old));
        }
        1 | 2 if !entries.is_empty() => {
            // a central directory entry's field
            let c = *rng.pick(&entries);
            let (at, w) = *rng.pick(&[
                (8usize, 2usize),
                (10, 2),
                (16, 4),
                (20, 4),
                (24, 4),
                (28, 2),
                (30, 2),
                (32, 2),
                (34, 2),
                (42, 4),
            ]);
            let old = get32(b, c + at).unwrap_or(0) as u64;
            put(b, c + at, w, value(rng, old));
        }
        3 if !entries.is_empty() => {
            // the local header of an entry
            let c = *rng.pick(&entries);
            if let Some(l) = get32(b, c + 42) {
                let (at, w) = *rng.pick(&[
                    (6usize, 2usize),
                    (8, 2),
                    (14, 4),
                    (18, 4),
                    (22, 4),
                    (26, 2),
                    (28, 2),
                ]);
                let old = get32(b, l + at).unwrap_or(0) as u64;
                put(b, l + at, w, value(rng, old));
            }
        }
        4 if !entries.is_empty() => {
            // an entry listed twice, or another entry's name
            let c = *rng.pick(&entries);
            let len = 46
                + get16(b, c + 28).unwrap_or(0)
                + get16(b, c + 30).unwrap_or(0)
                + get16(b, c + 32).unwrap_or(0);
            if rng.chance(0.5) {
                let Some(copy) = b.get(c..c + len).map(<[u8]>::to_vec) else {
                    return;
                };
                b.splice(e..e, copy);
                let e2 = e + len;
                let n = get16(b, e2 + 10).unwrap_or(0) as u64 + 1;
                put(b, e2 + 8, 2, n);
                put(b, e2 + 10, 2, n);
                let size = get32(b, e2 + 12).unwrap_or(0) as u64 + len as u64;
                put(b, e2 + 12, 4, size);
            } else {
                let d = *rng.pick(&entries);
                let (n1, n2) = (get16(b, c + 28).unwrap_or(0), get16(b, d + 28).unwrap_or(0));
                if n1 == n2 && c != d {
                    let name = b[d + 46..d + 46 + n2].to_vec();
                    b[c + 46..c + 46 + n1].copy_from_slice(&name);
                }
            }
        }
        5 if !entries.is_empty() => {
            // an entry made by Unix, of another file type: a link, a FIFO, a device…
            let c = *rng.pick(&entries);
            let mode: u64 =
                *rng.pick(&[0o120777, 0o010644, 0o020644, 0o140644, 0o040755, 0o100644]);
            put(b, c + 4, 2, 0x031e);
            put(b, c + 38, 4, mode << 16);
        }
        _ => {
            // a zip64 end of central directory locator pointing somewhere
            let mut loc = b"PK\x06\x07".to_vec();
            loc.extend_from_slice(&0u32.to_le_bytes());
            loc.extend_from_slice(&(*rng.pick(&[0u64, 1, u64::MAX, e as u64])).to_le_bytes());
            loc.extend_from_slice(&1u32.to_le_bytes());
            b.splice(e..e, loc);
        }
    }
}

/// Whether a member name can be written under a folder without leaving it.
fn safe(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('/')
        && !name.contains('\0')
        && !name.contains('\\')
        && name
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != "..")
}

/// Writes the members of a zip archive (one this harness wrote) as files under `dir`:
/// the extracted form of an archive. Names that would leave the folder are left out.
pub fn extract(zip_bytes: &[u8], dir: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    let Ok(mut zip) = zip::ZipArchive::new(std::io::Cursor::new(zip_bytes)) else {
        return Ok(());
    };
    for i in 0..zip.len() {
        let Ok(mut f) = zip.by_index(i) else {
            continue;
        };
        let Ok(name) = f.name().map(|n| n.to_string()) else {
            continue;
        };
        if !safe(name.trim_end_matches('/')) {
            continue;
        }
        let path = dir.join(&name);
        if name.ends_with('/') {
            let _ = std::fs::create_dir_all(&path);
            continue;
        }
        let mut bytes = Vec::new();
        if std::io::Read::read_to_end(&mut f, &mut bytes).is_err() {
            continue;
        }
        if let Some(parent) = path.parent()
            && std::fs::create_dir_all(parent).is_err()
        {
            continue;
        }
        // A name that is a folder of another member already: left out.
        let _ = std::fs::write(&path, &bytes);
    }
    Ok(())
}
