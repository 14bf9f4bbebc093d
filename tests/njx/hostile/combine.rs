//! njx-combine (issue 28): members whose names or kinds must never reach the combined
//! archive (names leading out of the folder it is unzipped in or read under another name,
//! control characters, symbolic links and other special entries, also over a table's
//! name), inputs that are not files (FIFOs, devices, sockets, folders), outputs that are
//! inputs by another name or lie inside one, and zip oddities: zip64, lying sizes, 60 k and
//! 70 k members, bombs. Every input is two archives in the case's folder, `rank0.zip`
//! (valid) and `rank1.zip` (broken), combined into `all.zip`; an accepted output must hold
//! plain names and files only (the same rule as njx's, [`njx::archives::writer`]).

use super::fixtures::*;
use super::formats::{ZipEntry, deflated_bomb_entry, zip_raw};
use super::harness::{Case, Expect, Outcome, Run, at};
use crate::args;
use crate::common::write;
use njx::archives::writer::{member_name_fault, shown_name, special_entry};
use std::io::Write;
use std::path::Path;

/// A valid archive's entries, with `extra` added.
fn entries(extra: Vec<ZipEntry>) -> Vec<ZipEntry> {
    let mut v = archive_entries(&[]);
    v.extend(extra);
    v
}

/// Writes `rank0.zip` (valid) and `rank1.zip` (`rank1`'s entries) in `d`; returns the
/// run combining them into `all.zip`, a refusal of which must name rank1.zip.
fn pair(d: &Path, rank1: &[ZipEntry]) -> Run {
    let r0 = write(d, "rank0.zip", &archive());
    let r1 = write(d, "rank1.zip", &zip_raw(rank1, None));
    let out = at(d, "all.zip");
    Run::new(args!["-o", out.clone(), r0, r1])
        .output(out)
        .name("rank1.zip")
}

/// What a refusal of member `name` of rank1.zip names.
fn member(name: &str) -> String {
    format!("rank1.zip!{}", shown_name(name))
}

/// The output, when written, holds only plain names and files; stderr holds no raw
/// control character (but line ends).
fn clean(d: &Path, o: &Outcome) -> Result<(), String> {
    if let Some(c) = o.stderr.chars().find(|&c| c.is_control() && c != '\n') {
        return Err(format!("stderr holds a raw control character {c:?}"));
    }
    let out = d.join("all.zip");
    if o.code != Some(0) || !out.exists() {
        return Ok(());
    }
    let file = std::fs::File::open(&out).map_err(|e| e.to_string())?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| format!("all.zip: {e}"))?;
    for i in 0..zip.len() {
        let entry = zip.by_index_raw(i).map_err(|e| e.to_string())?;
        let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        if let Some(fault) = member_name_fault(&name) {
            return Err(format!("all.zip holds {name:?}: {fault}"));
        }
        if let Some(kind) = special_entry(entry.unix_mode()) {
            return Err(format!("all.zip holds {name:?}, {kind}"));
        }
    }
    Ok(())
}

/// Names that are not plain relative paths.
const NAMES: &[&str] = &[
    "../evil",
    "..",
    "dump/../../x",
    "sources/a/../../../x",
    "/abs/x",
    "//abs/x",
    "C:/x",
    "C:x",
    "c:\\x",
    "a\\..\\x",
    "..\\x",
    "a//b",
    "./a",
    "a/./b",
    "a/.",
    "",
    "a\u{1b}[31mb",
    "\u{1b}]0;owned\u{7}",
    "a\nb",
    "a\rb",
    "a\u{0}b",
    "a\u{7f}b",
    "a\u{9b}31mb",
];

fn name_cases(v: &mut Vec<Case>) {
    let refused = Expect::Refused;
    for &name in NAMES {
        // Beside the tables.
        v.push(Case::new(
            format!("member {name:?}"),
            "njx-combine",
            refused,
            move |d| {
                pair(d, &entries(vec![ZipEntry::stored(name, b"x")]))
                    .name(member(name))
                    .check(clean)
            },
        ));
        // In every input, the same: it would have been stored once, as it is.
        v.push(Case::new(
            format!("member {name:?} in both inputs"),
            "njx-combine",
            refused,
            move |d| {
                let extra = || vec![ZipEntry::stored(name, b"same")];
                let r0 = write(d, "rank0.zip", &zip_raw(&entries(extra()), None));
                let r1 = write(d, "rank1.zip", &zip_raw(&entries(extra()), None));
                let out = at(d, "all.zip");
                Run::new(args!["-o", out.clone(), r0, r1])
                    .output(out)
                    .name(format!("rank0.zip!{}", shown_name(name)))
                    .check(clean)
            },
        ));
    }
    // Differing between inputs: it would have been stored per profile (`/rank0` for "").
    for name in ["", "../x", "/x"] {
        v.push(Case::new(
            format!("member {name:?} differing between inputs"),
            "njx-combine",
            refused,
            move |d| {
                let r0 = write(
                    d,
                    "rank0.zip",
                    &zip_raw(&entries(vec![ZipEntry::stored(name, b"0")]), None),
                );
                let r1 = write(
                    d,
                    "rank1.zip",
                    &zip_raw(&entries(vec![ZipEntry::stored(name, b"1")]), None),
                );
                let out = at(d, "all.zip");
                Run::new(args!["-o", out.clone(), r0, r1])
                    .output(out)
                    .name(format!("rank0.zip!{}", shown_name(name)))
                    .check(clean)
            },
        ));
    }
    // A table renamed so: a hostile copy of the push/pop table, the dump, the metadata.
    for (table, renamed) in [
        (PUSHPOP, format!("../{PUSHPOP}")),
        (PUSHPOP, format!("/{PUSHPOP}")),
        (DUMP, DUMP.replacen("dump/", "dump//", 1)),
        (DUMP, DUMP.replacen("dump/", "dump\\", 1)),
        (THREADS, format!("./{THREADS}")),
    ] {
        v.push(Case::new(
            format!("table {table} stored as {renamed:?}"),
            "njx-combine",
            refused,
            move |d| {
                let mut e = entries(Vec::new());
                e.iter_mut()
                    .filter(|e| e.name == table)
                    .for_each(|e| e.name = renamed.clone());
                pair(d, &e).name(member(&renamed)).check(clean)
            },
        ));
    }
    // Folder entries are never stored, whatever their name: accepted, left out.
    for (name, mode) in [
        ("../up/", 0o040755),
        ("/abs/", 0o040755),
        ("a//b/", 0o040755),
        ("link/", 0o120777),
    ] {
        v.push(Case::new(
            format!("folder entry {name:?} (mode {mode:o})"),
            "njx-combine",
            Expect::Accepted,
            move |d| {
                let mut dir = ZipEntry::stored(name, b"");
                dir.mode = mode;
                pair(d, &entries(vec![dir])).check(clean)
            },
        ));
    }
    // A long name is a plain one.
    v.push(Case::new(
        "member name of 60,000 bytes",
        "njx-combine",
        Expect::Accepted,
        |d| {
            let name = format!("sources/{}", "a/".repeat(20_000) + &"b".repeat(19_990));
            pair(d, &entries(vec![ZipEntry::stored(&name, b"x")])).check(clean)
        },
    ));
}

fn special_cases(v: &mut Vec<Case>) {
    for (what, mode) in [
        ("symbolic link", 0o120777),
        ("FIFO", 0o010644),
        ("character device", 0o020644),
        ("block device", 0o060644),
        ("socket", 0o140644),
        ("unknown file type", 0o170644),
    ] {
        for name in ["sources/link", PUSHPOP, DUMP, THREADS, "evil"] {
            v.push(Case::new(
                format!("{what} as {name}"),
                "njx-combine",
                Expect::Refused,
                move |d| {
                    let mut e = entries(Vec::new());
                    e.retain(|e| e.name != name);
                    let mut link = ZipEntry::stored(name, b"/etc/passwd");
                    link.mode = mode;
                    e.push(link);
                    pair(d, &e).name(member(name)).check(clean)
                },
            ));
        }
    }
    // The only table a symbolic link: the archive looks like nsys-jax's by that name.
    v.push(Case::new(
        "symbolic link as the only table",
        "njx-combine",
        Expect::Refused,
        |d| {
            let mut link = ZipEntry::stored(PUSHPOP, b"../../rank0.zip");
            link.mode = 0o120777;
            pair(d, &[link]).name(member(PUSHPOP)).check(clean)
        },
    ));
}

fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(ok.success());
}

fn input_cases(v: &mut Vec<Case>) {
    let refused = Expect::Refused;
    let with = |d: &Path, input: String, named: &str| {
        let r0 = write(d, "rank0.zip", &archive());
        let out = at(d, "all.zip");
        Run::new(args!["-o", out.clone(), r0, input])
            .output(out)
            .name(named)
            .timeout(10)
    };
    v.push(Case::new(
        "a FIFO as input",
        "njx-combine",
        refused,
        move |d| {
            mkfifo(&d.join("rank1.zip"));
            with(d, at(d, "rank1.zip"), "rank1.zip: a FIFO")
        },
    ));
    v.push(Case::new(
        "a FIFO as first input",
        "njx-combine",
        refused,
        move |d| {
            mkfifo(&d.join("rank1.zip"));
            let r0 = write(d, "rank0.zip", &archive());
            let out = at(d, "all.zip");
            Run::new(args!["-o", out.clone(), at(d, "rank1.zip"), r0])
                .output(out)
                .name("rank1.zip: a FIFO")
                .timeout(10)
        },
    ));
    v.push(Case::new(
        "a link to a FIFO as input",
        "njx-combine",
        refused,
        move |d| {
            mkfifo(&d.join("fifo"));
            std::os::unix::fs::symlink("fifo", d.join("rank1.zip")).unwrap();
            with(d, at(d, "rank1.zip"), "rank1.zip: a FIFO")
        },
    ));
    v.push(Case::new(
        "a socket as input",
        "njx-combine",
        refused,
        move |d| {
            drop(std::os::unix::net::UnixListener::bind(d.join("rank1.zip")).unwrap());
            with(d, at(d, "rank1.zip"), "rank1.zip: a socket")
        },
    ));
    for dev in ["/dev/zero", "/dev/urandom", "/dev/null", "/dev/stdin"] {
        v.push(Case::new(
            format!("{dev} as input"),
            "njx-combine",
            refused,
            move |d| with(d, dev.to_string(), dev),
        ));
    }
    v.push(Case::new(
        "an extracted archive as input",
        "njx-combine",
        refused,
        move |d| {
            let x = write_extracted(d, "rank1");
            with(d, x, "rank1: a folder")
        },
    ));
    v.push(Case::new(
        "a missing input",
        "njx-combine",
        refused,
        move |d| with(d, at(d, "rank1.zip"), "rank1.zip"),
    ));
}

fn output_cases(v: &mut Vec<Case>) {
    let refused = Expect::Refused;
    let inputs = |d: &Path| {
        (
            write(d, "rank0.zip", &archive()),
            write(d, "rank1.zip", &archive()),
        )
    };
    v.push(Case::new(
        "-f -o an input",
        "njx-combine",
        refused,
        move |d| {
            let (r0, r1) = inputs(d);
            Run::new(args!["-f", "-o", r0.clone(), r0, r1]).name("rank0.zip: is the output")
        },
    ));
    v.push(Case::new(
        "-f -o a hard link to an input",
        "njx-combine",
        refused,
        move |d| {
            let (r0, r1) = inputs(d);
            std::fs::hard_link(&r0, d.join("all.zip")).unwrap();
            Run::new(args!["-f", "-o", at(d, "all.zip"), r0, r1]).name("rank0.zip: is the output")
        },
    ));
    v.push(Case::new(
        "-f -o a symbolic link to an input",
        "njx-combine",
        refused,
        move |d| {
            let (r0, r1) = inputs(d);
            std::os::unix::fs::symlink("rank1.zip", d.join("all.zip")).unwrap();
            Run::new(args!["-f", "-o", at(d, "all.zip"), r0, r1]).name("rank1.zip: is the output")
        },
    ));
    v.push(Case::new(
        "-o inside an extracted archive given as input",
        "njx-combine",
        refused,
        move |d| {
            let (r0, _) = inputs(d);
            let x = write_extracted(d, "rank2");
            Run::new(args!["-o", format!("{x}/all"), r0, x]).name("rank2: a folder")
        },
    ));
    v.push(Case::new(
        "-o inside an input archive",
        "njx-combine",
        refused,
        move |d| {
            let (r0, r1) = inputs(d);
            Run::new(args!["-o", format!("{r0}/all"), r0, r1]).name("rank0.zip")
        },
    ));
    v.push(Case::new(
        "-o an existing file without -f",
        "njx-combine",
        refused,
        move |d| {
            let (r0, r1) = inputs(d);
            write(d, "all.zip", b"precious");
            Run::new(args!["-o", at(d, "all"), r0, r1])
                .output(at(d, "all.zip"))
                .name("all.zip: exists")
        },
    ));
    v.push(Case::new(
        "-f -o a FIFO",
        "njx-combine",
        Expect::Survives,
        move |d| {
            let (r0, r1) = inputs(d);
            mkfifo(&d.join("all.zip"));
            Run::new(args!["-f", "-o", at(d, "all.zip"), r0, r1])
                .output(at(d, "all.zip"))
                .name("all.zip")
                .timeout(10)
        },
    ));
}

/// A zip written by the zip crate, `large_file` (zip64 extra fields) where asked; `n`
/// extra sources members (beyond 65,535: a zip64 end record).
fn crate_zip(large: bool, n: usize) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(large);
    for (name, bytes) in archive_members() {
        w.start_file(name, options).unwrap();
        w.write_all(&bytes).unwrap();
    }
    for i in 0..n {
        w.start_file(format!("sources/f{i}.py"), options).unwrap();
        w.write_all(format!("{i}\n").as_bytes()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// The output holds `n` members.
fn holds(n: usize) -> impl FnOnce(&Path, &Outcome) -> Result<(), String> {
    move |d, o| {
        clean(d, o)?;
        let file = std::fs::File::open(d.join("all.zip")).map_err(|e| e.to_string())?;
        let zip = zip::ZipArchive::new(file).map_err(|e| e.to_string())?;
        if zip.len() == n {
            Ok(())
        } else {
            Err(format!("all.zip holds {} members, not {n}", zip.len()))
        }
    }
}

fn zip_cases(v: &mut Vec<Case>) {
    let refused = Expect::Refused;
    let base = archive_members().len();
    v.push(Case::new(
        "zip64 members",
        "njx-combine",
        Expect::Accepted,
        move |d| {
            let r1 = write(d, "rank1.zip", &crate_zip(true, 3));
            let r0 = write(d, "rank0.zip", &archive());
            let out = at(d, "all.zip");
            Run::new(args!["-o", out.clone(), r0, r1])
                .output(out)
                .check(holds(base + 3))
        },
    ));
    v.push(Case::new(
        "60,000 members",
        "njx-combine",
        Expect::Accepted,
        move |d| {
            let mut e = entries(Vec::new());
            for i in 0..60_000 {
                e.push(ZipEntry::stored(&format!("sources/f{i}.py"), b"x\n"));
            }
            pair(d, &e).timeout(60).check(holds(base + 60_000))
        },
    ));
    v.push(Case::new(
        "70,000 members (a zip64 end record)",
        "njx-combine",
        Expect::Accepted,
        move |d| {
            let r1 = write(d, "rank1.zip", &crate_zip(false, 70_000));
            let r0 = write(d, "rank0.zip", &archive());
            let out = at(d, "all.zip");
            Run::new(args!["-o", out.clone(), r0, r1])
                .output(out)
                .timeout(60)
                .check(holds(base + 70_000))
        },
    ));
    // Sizes that lie, in the central directory (what njx-combine reads by) or locally.
    type Lie = fn(&mut ZipEntry);
    let lies: &[(&str, Lie, Expect)] = &[
        (
            "a deflated member declaring 3 bytes",
            |e| e.central_size = Some(3),
            refused,
        ),
        (
            "a deflated member declaring 10x its size",
            |e| e.central_size = Some(e.size * 10),
            refused,
        ),
        (
            "a deflated member declaring 5 GiB (zip64)",
            |e| e.central_size = Some(5 << 30),
            refused,
        ),
        (
            "a member whose data would reach 5 GiB past its start (zip64)",
            |e| e.central_csize = Some(5 << 30),
            refused,
        ),
        (
            "a member whose data would reach past the central directory",
            |e| e.central_csize = Some(e.payload.len() as u64 + 100),
            refused,
        ),
        (
            "a member whose local header lies about its sizes",
            |e| {
                e.local_size = Some(1);
                e.local_csize = Some(1);
            },
            Expect::Survives,
        ),
        ("a member with a wrong CRC-32", |e| e.crc ^= 1, refused),
        (
            "a member at an offset past the end",
            |e| e.central_offset = Some(1 << 40),
            refused,
        ),
    ];
    for &(what, lie, expect) in lies {
        v.push(Case::new(what, "njx-combine", expect, move |d| {
            let mut e = entries(vec![ZipEntry::deflated(
                "sources/a.py",
                &b"print('hi')\n".repeat(50),
            )]);
            lie(e.last_mut().unwrap());
            pair(d, &e).check(clean)
        }));
    }
    v.push(Case::new(
        "a stored member whose sizes differ",
        "njx-combine",
        refused,
        |d| {
            let mut m = ZipEntry::stored("sources/a.py", b"print('hi')\n");
            m.central_size = Some(5);
            pair(d, &entries(vec![m])).name("rank1.zip!sources/a.py")
        },
    ));
    v.push(Case::new(
        "more members than the end record declares",
        "njx-combine",
        refused,
        |d| {
            let r0 = write(d, "rank0.zip", &archive());
            let e = entries(vec![ZipEntry::stored("sources/a.py", b"x")]);
            let r1 = write(d, "rank1.zip", &zip_raw(&e, Some(2)));
            let out = at(d, "all.zip");
            Run::new(args!["-o", out.clone(), r0, r1])
                .output(out)
                .name("rank1.zip")
        },
    ));
    // Bombs: 4 GiB of zeros from about 4 MB of deflate, read only up to NJX_MAX_RATIO.
    let bomb = || deflated_bomb_entry("sources/bomb.bin", b"", &[0u8; 64 << 10], 1 << 16);
    v.push(Case::new(
        "a deflate bomb of 4 GiB",
        "njx-combine",
        refused,
        move |d| {
            pair(d, &entries(vec![bomb()]))
                .name("rank1.zip!sources/bomb.bin")
                .name("decompression bomb")
                .timeout(30)
        },
    ));
    v.push(Case::new(
        "a deflate bomb of 4 GiB as a report left out",
        "njx-combine",
        Expect::Accepted,
        move |d| {
            let mut b = bomb();
            b.name = "rank1.nsys-rep".into();
            pair(d, &entries(vec![b])).timeout(30).check(holds(base))
        },
    ));
    v.push(Case::new(
        "a deflate bomb of 4 GiB as the report kept",
        "njx-combine",
        refused,
        move |d| {
            let mut b = bomb();
            b.name = "rank1.nsys-rep".into();
            let mut run = pair(d, &entries(vec![b]))
                .name("rank1.zip!rank1.nsys-rep")
                .timeout(30);
            run.args.insert(0, "all".into());
            run.args.insert(0, "--keep-nsys-rep".into());
            run
        },
    ));
    v.push(Case::new(
        "1,000 members on one stored table",
        "njx-combine",
        refused,
        |d| {
            // Members that overlap: each central record points at the first local header.
            let table = ZipEntry::stored(PUSHPOP, b"ranges");
            let mut e = vec![table.clone()];
            for i in 0..1000 {
                let mut m = table.clone();
                m.name = format!("sources/{i}");
                m.central_offset = Some(0);
                e.push(m);
            }
            pair(d, &e).timeout(20)
        },
    ));
}

/// Every case of the class.
pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    name_cases(&mut v);
    special_cases(&mut v);
    input_cases(&mut v);
    output_cases(&mut v);
    zip_cases(&mut v);
    v
}
