//! Unbounded memory: a 1.5 GB line inside a few megabytes of gzip or xz (CSV, JSON Lines,
//! record CSV, folded stacks, partial results; on stdin too), 2 GB members of zeros inside
//! archives (deflated and xz members, HLO dumps, Parquet tables), 2 GB sparse files,
//! endless devices (`/dev/zero`, directly, through a link, on stdin, as an archive's
//! table), folded stacks of trees 40,000 deep, and a zip whose members overlap. Every
//! tool runs under a 1 GiB address-space limit: a careless reader aborts.

use super::fixtures::*;
use super::formats::*;
use super::harness::{Case, Expect, Run, shared, shared_bytes};
use crate::args;
use crate::common::write;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

const MIB: usize = 1 << 20;

/// 1.5 GB of `x` after `prefix`, gzip-compressed (one member).
fn gz_line(name: &str, prefix: &'static str) -> String {
    shared_bytes(name, || {
        gzip_bomb(prefix.as_bytes(), &vec![b'x'; MIB], 1536)
    })
}

/// 1.5 GB of `x` after `prefix`, xz-compressed (concatenated streams).
fn xz_line(name: &str, prefix: &'static str) -> String {
    shared_bytes(name, || {
        xz_bomb(prefix.as_bytes(), &vec![b'x'; 64 * MIB], 24)
    })
}

const CSV_PREFIX: &str = "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree\n0,1,1,0,1,";
const JSON_PREFIX: &str = "{\"profile\":\"";
const RECORD_CSV_PREFIX: &str =
    "profile,pid,tid,id,parent,depth,start_ns,end_ns,dur_ns,child_ns,self_ns,children,name\n";
const FOLDED_PREFIX: &str = "a;b 10\n";
const PARTIAL_PREFIX: &str = "{\"njx_partial\":\"modules\",\"version\":3,\"data\":\"";

fn csv_gz() -> String {
    gz_line("line1.5g.csv.gz", CSV_PREFIX)
}
fn csv_xz() -> String {
    xz_line("line1.5g.csv.xz", CSV_PREFIX)
}
fn jsonl_gz() -> String {
    gz_line("line1.5g.jsonl.gz", JSON_PREFIX)
}
fn jsonl_xz() -> String {
    xz_line("line1.5g.jsonl.xz", JSON_PREFIX)
}
fn records_csv_gz() -> String {
    gz_line("line1.5g.records.csv.gz", RECORD_CSV_PREFIX)
}
fn folded_gz() -> String {
    gz_line("line1.5g.folded.gz", FOLDED_PREFIX)
}
fn partial_gz() -> String {
    gz_line("line1.5g.partial.gz", PARTIAL_PREFIX)
}
fn header_gz() -> String {
    gz_line("header1.5g.csv.gz", "")
}

/// 2 GiB of zeros after `prefix`, deflated as a zip member named `member`.
fn zeros_member(member: &str, prefix: &[u8]) -> ZipEntry {
    deflated_bomb_entry(member, prefix, &vec![0u8; MIB], 2048)
}

/// 2 GiB of zeros after `prefix`, as xz (concatenated streams), stored as `member`.
fn zeros_xz_member(member: &str, prefix: &[u8]) -> ZipEntry {
    ZipEntry::stored(member, &zeros_xz(prefix))
}

/// 2 GiB of zeros after `prefix`, as xz (generated once per prefix).
fn zeros_xz(prefix: &[u8]) -> Vec<u8> {
    let name = format!("zeros2g-{}.xz", prefix.len());
    let prefix = prefix.to_vec();
    let p = shared_bytes(&name, move || xz_bomb(&prefix, &vec![0u8; 64 * MIB], 32));
    std::fs::read(p).unwrap()
}

/// A valid archive whose `member` is replaced by `entry`.
fn archive_with(entry: ZipEntry) -> Vec<u8> {
    let mut entries = archive_entries(&[]);
    match entries.iter_mut().find(|e| e.name == entry.name) {
        Some(e) => *e = entry,
        None => entries.push(entry),
    }
    zip_raw(&entries, None)
}

/// A sparse file of `len` bytes: `head` at the start, `tail` at the end, zeros between
/// (no disk blocks).
fn sparse(path: &Path, head: &[u8], len: u64, tail: &[u8]) {
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(head).unwrap();
    f.set_len(len - tail.len() as u64).unwrap();
    f.seek(SeekFrom::End(0)).unwrap();
    f.write_all(tail).unwrap();
}

const TWO_GIB: u64 = 2 << 30;

/// The GPU projection table grown to 2 GiB: its pages, 2 GiB of zeros, and its footer
/// with the first column chunk claiming everything up to the footer.
fn big_parquet_parts() -> (Vec<u8>, u64, Vec<u8>) {
    let mut p = Parquet::parse(&gpu_proj_trace());
    let data_len = p.data.len() as u64;
    let size = TWO_GIB - data_len;
    p.column_meta(0).set(7, T::I64(TWO_GIB as i64));
    p.column_meta(0).set(6, T::I64(TWO_GIB as i64));
    let footer = p.footer.encode();
    let mut tail = footer.clone();
    tail.extend_from_slice(&(footer.len() as u32).to_le_bytes());
    tail.extend_from_slice(b"PAR1");
    (p.data, size, tail)
}

/// A one-member stored zip of `head` + `zeros` zero bytes + `tail`, written sparse.
fn sparse_stored_zip(path: &Path, name: &str, head: &[u8], zeros: u64, tail: &[u8]) {
    let size = head.len() as u64 + zeros + tail.len() as u64;
    let mut crc = flate2::Crc::new();
    crc.update(head);
    let mut zero = flate2::Crc::new();
    zero.update(&vec![0u8; MIB]);
    for _ in 0..zeros / MIB as u64 {
        crc.combine(&zero);
    }
    let mut rest = flate2::Crc::new();
    rest.update(&vec![0u8; (zeros % MIB as u64) as usize]);
    crc.combine(&rest);
    crc.update(tail);
    // The real zip around a placeholder payload, then the payload spread out sparse.
    let mut e = ZipEntry::raw(name, 0, Vec::new(), crc.sum(), size);
    e.local_csize = Some(size);
    e.central_csize = Some(size);
    let z = zip_raw(&[e], None);
    let local = 30 + name.len();
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(&z[..local]).unwrap();
    f.write_all(head).unwrap();
    f.seek(SeekFrom::Current(zeros as i64)).unwrap();
    f.write_all(tail).unwrap();
    // The central directory and end record, their member offset unchanged (0), the
    // directory's own offset moved by the payload.
    let mut cd = z[local..].to_vec();
    let n = cd.len();
    let cd_start = (local as u64 + size) as u32;
    cd[n - 6..n - 2].copy_from_slice(&cd_start.to_le_bytes());
    f.write_all(&cd).unwrap();
}

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    let refused = Expect::Refused;
    type Src = fn() -> String;
    // A 1.5 GB line in a small compressed stream, as a file.
    let lines: &[(&str, Src, &str, &[&str])] = &[
        (
            "csv gz",
            csv_gz,
            "line1.5g.csv.gz",
            &["njx-export", "njx-flamefold"],
        ),
        (
            "csv xz",
            csv_xz,
            "line1.5g.csv.xz",
            &["njx-compile-summary"],
        ),
        (
            "jsonl gz",
            jsonl_gz,
            "line1.5g.jsonl.gz",
            &[
                "njx-ranges",
                "njx-compile-summary",
                "njx-flamefold",
                "njx-modules",
                "njx-collectives",
            ],
        ),
        ("jsonl xz", jsonl_xz, "line1.5g.jsonl.xz", &["njx-ranges"]),
        (
            "record csv gz",
            records_csv_gz,
            "line1.5g.records.csv.gz",
            &["njx-collectives"],
        ),
        (
            "partial result gz",
            partial_gz,
            "line1.5g.partial.gz",
            &["njx-modules"],
        ),
        (
            "header line gz",
            header_gz,
            "header1.5g.csv.gz",
            &["njx-export"],
        ),
    ];
    for &(label, make, file, tools) in lines {
        for &tool in tools {
            v.push(Case::new(
                format!("1.5 GB line, {label}"),
                tool,
                refused,
                move |_: &Path| {
                    let p = make();
                    Run::new(args![p]).watch(p).name(file)
                },
            ));
        }
    }
    v.push(Case::new(
        "1.5 GB line, folded gz as --diff BEFORE",
        "njx-flamefold",
        refused,
        |d: &Path| {
            let p = folded_gz();
            let b = write(d, "b.folded", FOLDED_B.as_bytes());
            Run::new(args!["--diff", p, b])
                .watch(p)
                .name("line1.5g.folded.gz")
        },
    ));
    // The same on stdin.
    for (label, make, tool) in [
        ("csv gz", csv_gz as Src, "njx-ranges"),
        ("jsonl gz", jsonl_gz, "njx-compile-summary"),
        ("jsonl xz", jsonl_xz, "njx-collectives"),
    ] {
        v.push(Case::new(
            format!("1.5 GB line on stdin, {label}"),
            tool,
            refused,
            move |_: &Path| {
                let p = make();
                Run::new(Vec::new()).stdin_file(&p).watch(p)
            },
        ));
    }
    // 2 GiB members of zeros in archives.
    type Member = fn() -> ZipEntry;
    let members: &[(&str, Member, &str, &[&str])] = &[
        (
            "push/pop csv.xz deflated, 2 GiB of zeros",
            || zeros_member(PUSHPOP, b""),
            PUSHPOP,
            &["ranges"],
        ),
        (
            "push/pop csv.xz, xz of a header and a 2 GiB line of zeros",
            || zeros_xz_member(PUSHPOP, format!("{HEADER}\n").as_bytes()),
            PUSHPOP,
            &["modules"],
        ),
        (
            "push/pop parquet deflated, 2 GiB of zeros",
            || zeros_member(PUSHPOP_PQ, b"PAR1"),
            PUSHPOP_PQ,
            &["ranges"],
        ),
        (
            "HLO dump, xz of 2 GiB of zeros",
            || zeros_xz_member(DUMP, b""),
            DUMP,
            &["thunks", "modules"],
        ),
        (
            "HLO dump deflated, 2 GiB of zeros",
            || zeros_member(DUMP, b""),
            DUMP,
            &["thunks"],
        ),
        (
            "GPU projection deflated, 2 GiB of zeros",
            || zeros_member(GPU_PROJ, b"PAR1"),
            GPU_PROJ,
            &["gpu-ranges", "thunks"],
        ),
        (
            "thread metadata deflated, 2 GiB of zeros",
            || zeros_member(THREADS, b"PAR1"),
            THREADS,
            &["modules"],
        ),
    ];
    for &(label, make, member, tables) in members {
        for &table in tables {
            v.push(Case::new(
                format!("archive member {label}, --table {table}"),
                "njx-export",
                refused,
                move |d: &Path| {
                    let p = write(d, "rank0.zip", &archive_with(make()));
                    Run::new(args!["--table", table, p]).name(format!("rank0.zip!{member}"))
                },
            ));
        }
    }
    v.push(Case::new(
        "archive HLO dump, xz of 2 GiB of zeros, --by source",
        "njx-flamefold",
        refused,
        |d: &Path| {
            let p = write(d, "rank0.zip", &archive_with(zeros_xz_member(DUMP, b"")));
            Run::new(args!["--by", "source", p]).name(format!("rank0.zip!{DUMP}"))
        },
    ));
    v.push(Case::new(
        "archive HLO dump, xz of 2 GiB of zeros, as --hlo",
        "njx-flamefold",
        refused,
        |d: &Path| {
            let h = write(d, "dumps.zip", &archive_with(zeros_xz_member(DUMP, b"")));
            let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
            let t = write(d, "t.jsonl", jsonl(&thunk_records()).as_bytes());
            Run::new(args!["--by", "op-name", m, t, "--hlo", h]).name("dumps.zip")
        },
    ));
    // 2 GiB dumps in XLA dump folders.
    v.push(Case::new(
        "--hlo folder with a 2 GiB sparse dump",
        "njx-flamefold",
        refused,
        |d: &Path| {
            let h = d.join("xla_dump");
            std::fs::create_dir(&h).unwrap();
            sparse(&h.join(DUMP_FILE), b"", TWO_GIB, b"");
            let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
            let t = write(d, "t.jsonl", jsonl(&thunk_records()).as_bytes());
            Run::new(args!["--by", "source", m, t, "--hlo", h.to_str().unwrap()]).name(DUMP_FILE)
        },
    ));
    v.push(Case::new(
        "--hlo folder with a 2 GiB sparse dump, SQLite thunks",
        "njx-export",
        refused,
        |d: &Path| {
            let h = d.join("xla_dump");
            std::fs::create_dir(&h).unwrap();
            sparse(&h.join(DUMP_FILE), b"", TWO_GIB, b"");
            let e = write_sqlite(d, "e.sqlite");
            Run::new(args!["--table", "thunks", e, "--hlo", h.to_str().unwrap()]).name(DUMP_FILE)
        },
    ));
    v.push(Case::new(
        "--hlo folder with an xz dump of 2 GiB of zeros",
        "njx-flamefold",
        refused,
        |d: &Path| {
            let h = d.join("xla_dump");
            let name = format!("{DUMP_FILE}.xz");
            write(&h, &name, &zeros_xz(b""));
            let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
            let t = write(d, "t.jsonl", jsonl(&thunk_records()).as_bytes());
            Run::new(args!["--by", "opcode", m, t, "--hlo", h.to_str().unwrap()]).name(name)
        },
    ));
    // 2 GiB sparse files given directly.
    v.push(Case::new(
        "2 GiB sparse csv of zeros",
        "njx-export",
        refused,
        |d: &Path| {
            let p = d.join("big.csv");
            sparse(&p, format!("{HEADER}\n").as_bytes(), TWO_GIB, b"");
            Run::new(args![p.to_str().unwrap()]).name("big.csv")
        },
    ));
    v.push(Case::new(
        "2 GiB sparse JSON line",
        "njx-ranges",
        refused,
        |d: &Path| {
            let p = d.join("big.jsonl");
            sparse(&p, b"{\"profile\":\"", TWO_GIB, b"\"}\n");
            Run::new(args![p.to_str().unwrap()]).name("big.jsonl")
        },
    ));
    v.push(Case::new(
        "2 GiB sparse Parquet whose column chunk claims it all",
        "njx-export",
        Expect::Survives,
        |d: &Path| {
            let (head, zeros, tail) = big_parquet_parts();
            let p = d.join("trace.parquet");
            sparse(
                &p,
                &head,
                head.len() as u64 + zeros + tail.len() as u64,
                &tail,
            );
            Run::new(args!["--table", "gpu-ranges", p.to_str().unwrap()]).name("trace.parquet")
        },
    ));
    v.push(Case::new(
        "2 GiB Parquet member stored in a zip, column chunk claiming it all",
        "njx-export",
        Expect::Survives,
        |d: &Path| {
            let (head, zeros, tail) = big_parquet_parts();
            let p = d.join("rank0.zip");
            sparse_stored_zip(&p, GPU_PROJ, &head, zeros, &tail);
            Run::new(args!["--table", "gpu-ranges", p.to_str().unwrap()])
                .name(format!("rank0.zip!{GPU_PROJ}"))
        },
    ));
    v.push(Case::new(
        "a 2 GiB zip on stdin",
        "njx-export",
        refused,
        |d: &Path| {
            let (head, zeros, tail) = big_parquet_parts();
            let p = d.join("rank0.zip");
            sparse_stored_zip(&p, GPU_PROJ, &head, zeros, &tail);
            Run::new(args!["--table", "gpu-ranges"]).stdin_file(p)
        },
    ));
    // Endless devices.
    let devices: &[(&str, &'static str, &[&str], &str)] = &[
        (
            "/dev/zero as input",
            "njx-export",
            &["/dev/zero"],
            "/dev/zero",
        ),
        (
            "/dev/zero as input",
            "njx-ranges",
            &["/dev/zero"],
            "/dev/zero",
        ),
        (
            "/dev/zero as input",
            "njx-collectives",
            &["/dev/zero"],
            "/dev/zero",
        ),
        (
            "/dev/urandom as input",
            "njx-export",
            &["/dev/urandom"],
            "/dev/urandom",
        ),
        (
            "/dev/zero as --diff BEFORE",
            "njx-flamefold",
            &["--diff", "/dev/zero", "/dev/zero"],
            "/dev/zero",
        ),
        (
            "/dev/urandom as --diff",
            "njx-flamefold",
            &["--diff", "/dev/urandom", "/dev/urandom"],
            "/dev/urandom",
        ),
    ];
    for &(label, tool, a, name) in devices {
        v.push(Case::new(label, tool, refused, move |_: &Path| {
            Run::new(a.iter().map(|s| s.to_string()).collect()).name(name)
        }));
    }
    v.push(Case::new(
        "/dev/zero as --hlo",
        "njx-flamefold",
        refused,
        |d: &Path| {
            let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
            let t = write(d, "t.jsonl", jsonl(&thunk_records()).as_bytes());
            Run::new(args!["--by", "source", m, t, "--hlo", "/dev/zero"]).name("/dev/zero")
        },
    ));
    for tool in ["njx-export", "njx-modules", "njx-compile-summary"] {
        v.push(Case::new(
            "/dev/zero on stdin",
            tool,
            refused,
            |_: &Path| Run::new(Vec::new()).stdin_file("/dev/zero"),
        ));
    }
    v.push(Case::new(
        "a link to /dev/zero as input",
        "njx-export",
        refused,
        |d: &Path| {
            std::os::unix::fs::symlink("/dev/zero", d.join("trace.csv")).unwrap();
            Run::new(args![d.join("trace.csv").to_str().unwrap()]).name("trace.csv")
        },
    ));
    // An extracted archive whose table is a link to /dev/zero.
    let linked: &[(&str, &str, Expect)] = &[
        (PUSHPOP, "ranges", Expect::Refused),
        (GPU_PROJ, "gpu-ranges", Expect::Refused),
        (THREADS, "modules", Expect::Survives),
        (DUMP, "thunks", Expect::Survives),
    ];
    for &(member, table, expect) in linked {
        v.push(Case::new(
            format!("extracted archive, {member} -> /dev/zero"),
            "njx-export",
            expect,
            move |d: &Path| {
                let root = write_extracted(d, "rank0");
                let m = Path::new(&root).join(member);
                std::fs::remove_file(&m).unwrap();
                std::os::unix::fs::symlink("/dev/zero", &m).unwrap();
                Run::new(args!["--table", table, root]).name("rank0")
            },
        ));
    }
    // Folded stacks of trees 40,000 deep: the output grows with the square of the depth.
    type Deep = fn() -> String;
    for (label, make, file) in [
        (
            "jsonl",
            (|| shared_bytes("deep40k.jsonl", || deep_jsonl(40_000).into_bytes())) as Deep,
            "deep40k.jsonl",
        ),
        (
            "sqlite",
            || shared("deep40k.sqlite", |p| deep_sqlite(p, 40_000)),
            "deep40k.sqlite",
        ),
    ] {
        v.push(Case::new(
            format!("--by stack on 40,000-deep nesting, {label}"),
            "njx-flamefold",
            Expect::Survives,
            move |_: &Path| {
                let p = make();
                Run::new(args!["--by", "stack", p])
                    .watch(p)
                    .name(file)
                    .timeout(30)
            },
        ));
    }
    // A zip whose 2,000 profile members all point at one stored table (members that
    // overlap: a zip bomb's shape, 2,000 times the work of the bytes present).
    v.push(Case::new(
        "combine archive of 2,000 overlapping members",
        "njx-compile-summary",
        refused,
        |_: &Path| {
            let p = shared_bytes("combined.zip", || {
                let names: Vec<String> = (0..2000).map(|i| format!("{PUSHPOP}/p{i:04}")).collect();
                overlap(&names, &overlapping_table())
            });
            Run::new(args!["--total", p])
                .watch(p)
                .name("combined.zip")
                .timeout(15)
        },
    ));
    v
}

/// An xz push/pop table of 200,000 rows (about 20 MB of CSV).
fn overlapping_table() -> Vec<u8> {
    let mut csv = format!("{HEADER}\n");
    for i in 0..200_000i64 {
        let s = i * 10;
        csv += &format!(
            "{s},{},5,0,5,\"TSL:XlaCompile:#module=m,program_id=1#\",7,1,0,0,{},,:{},r\n",
            s + 5,
            i + 1,
            i + 1
        );
    }
    crate::common::xz(csv.as_bytes())
}

/// A zip of one stored member whose data every name of `names` points at: the central
/// directory lists them all at the first local header.
fn overlap(names: &[String], payload: &[u8]) -> Vec<u8> {
    let first = ZipEntry::stored(&names[0], payload);
    let z = zip_raw(std::slice::from_ref(&first), None);
    let local = 30 + names[0].len() + payload.len();
    let mut out = z[..local].to_vec();
    let cd_start = out.len();
    for name in names {
        // The central record alone: a member without payload that declares the sizes.
        let mut r = ZipEntry::raw(name, 0, Vec::new(), first.crc, first.size);
        r.central_csize = Some(payload.len() as u64);
        r.central_offset = Some(0);
        let z = zip_raw(&[r], None);
        out.extend_from_slice(&z[30 + name.len()..z.len() - 22]);
    }
    let cd_len = out.len() - cd_start;
    let n = names.len().min(u16::MAX as usize) as u16;
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&(cd_len as u32).to_le_bytes());
    out.extend_from_slice(&(cd_start as u32).to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}
