//! njx-combine: the nsys-jax-combine layout on archives made here (identical members once,
//! differing ones per profile, reports by --keep-nsys-rep), every consistency error (exit 1,
//! the file and member named, nothing left behind), --analysis, and the real pax archives;
//! issue 28: member names that are not plain relative paths, symbolic links, inputs that are
//! not files, outputs that are inputs by another name, write errors, zip64.

use crate::common::{exe, noise, ok, pax_archives, run, shared_data, stderr_of, tempdir, write};
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::path::Path;
use zip::write::SimpleFileOptions;

/// A zip of `(member, bytes, stored)`; a name ending in `/` is a folder entry.
fn zip_of(members: &[(&str, &[u8], bool)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes, stored) in members {
        let method = if *stored {
            zip::CompressionMethod::Stored
        } else {
            zip::CompressionMethod::Deflated
        };
        let options = SimpleFileOptions::default().compression_method(method);
        if name.ends_with('/') {
            w.add_directory(*name, options).unwrap();
        } else {
            w.start_file(*name, options).unwrap();
            w.write_all(bytes).unwrap();
        }
    }
    w.finish().unwrap().into_inner()
}

/// Every member of a zip with its content, in the archive's order.
fn members(path: &Path) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).unwrap();
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes).unwrap();
            (f.name().unwrap().to_string(), bytes)
        })
        .collect()
}

fn names(path: &Path) -> Vec<String> {
    members(path).into_iter().map(|(n, _)| n).collect()
}

/// An nsys-jax-like archive of rank `r`: its own tables, shared dumps and sources, a
/// folder entry, its report, and whatever `extra` adds.
fn rank(dir: &Path, r: usize, extra: &[(&str, &[u8], bool)]) -> String {
    let table = format!("ranges of rank {r}");
    let report = format!("report of rank {r}");
    let report_name = format!("rank{r}.nsys-rep");
    let mut m: Vec<(&str, &[u8], bool)> = vec![
        ("report_nvtx_pushpop_trace.csv.xz", table.as_bytes(), true),
        ("dump/", b"", true),
        (
            "dump/module_0001.jit_f.before_optimizations.hlo.pb.xz",
            b"dump",
            true,
        ),
        ("sources/train.py", b"print('hi')\n", false),
        (&report_name, report.as_bytes(), true),
    ];
    m.extend_from_slice(extra);
    write(dir, &format!("rank{r}.zip"), &zip_of(&m))
}

/// Runs njx-combine in `dir`; returns (status, stderr).
fn combine(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(exe("njx-combine"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), stderr_of(&out))
}

/// What is in `dir`, sorted: after a failed run, only the inputs.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn identical_members_are_stored_once_and_differing_ones_per_profile() {
    let dir = tempdir();
    rank(dir.path(), 0, &[("only-in-0.txt", b"zero", false)]);
    rank(dir.path(), 1, &[]);
    let (status, err) = combine(dir.path(), &["-o", "out/all", "rank0.zip", "rank1.zip"]);
    assert_eq!(status, 0, "{err}");
    assert!(err.contains("out/all.zip: 2 archives combined"), "{err}");
    let got = members(&dir.path().join("out/all.zip"));
    let want: Vec<(&str, &[u8])> = vec![
        (
            "report_nvtx_pushpop_trace.csv.xz/rank0",
            b"ranges of rank 0",
        ),
        (
            "dump/module_0001.jit_f.before_optimizations.hlo.pb.xz",
            b"dump",
        ),
        ("sources/train.py", b"print('hi')\n"),
        ("rank0.nsys-rep", b"report of rank 0"),
        ("only-in-0.txt", b"zero"),
        (
            "report_nvtx_pushpop_trace.csv.xz/rank1",
            b"ranges of rank 1",
        ),
    ];
    let got: Vec<(&str, &[u8])> = got.iter().map(|(n, b)| (n.as_str(), &b[..])).collect();
    assert_eq!(got, want);
    // Stored as they were: the deflated source deflated, the rest stored.
    let mut z =
        zip::ZipArchive::new(std::fs::File::open(dir.path().join("out/all.zip")).unwrap()).unwrap();
    assert_eq!(
        z.by_name("sources/train.py").unwrap().compression(),
        zip::CompressionMethod::Deflated
    );
    assert_eq!(
        z.by_name("rank0.nsys-rep").unwrap().compression(),
        zip::CompressionMethod::Stored
    );
    assert_eq!(listing(dir.path()), ["out", "rank0.zip", "rank1.zip"]);
    assert_eq!(listing(&dir.path().join("out")), ["all.zip"]);
    // A folder is no archive name.
    let (status, err) = combine(dir.path(), &["-o", "out/", "rank0.zip", "rank1.zip"]);
    assert_eq!(status, 2, "{err}");
    assert!(
        err.contains("-o `out/` names a folder, not an archive"),
        "{err}"
    );
}

/// Two different byte strings of one length with the same CRC-32 (a birthday search over
/// numbered strings: about 80,000 tries).
fn crc_collision() -> (Vec<u8>, Vec<u8>) {
    let mut seen: HashMap<u32, u64> = HashMap::new();
    for i in 0u64.. {
        let text = format!("{i:012}");
        let mut crc = flate2::Crc::new();
        crc.update(text.as_bytes());
        if let Some(j) = seen.insert(crc.sum(), i) {
            return (format!("{j:012}").into_bytes(), text.into_bytes());
        }
    }
    unreachable!()
}

#[test]
fn contents_are_compared_not_the_crc_the_archive_declares() {
    // nsys-jax-combine compares CRC-32s: it would store one of these for both profiles.
    let (a, b) = crc_collision();
    assert_ne!(a, b);
    let dir = tempdir();
    rank(dir.path(), 0, &[("dump/autotune.pbtxt", &a, true)]);
    rank(dir.path(), 1, &[("dump/autotune.pbtxt", &b, true)]);
    let (status, err) = combine(dir.path(), &["-o", "all.zip", "rank0.zip", "rank1.zip"]);
    assert_eq!(status, 0, "{err}");
    let got: BTreeMap<String, Vec<u8>> = members(&dir.path().join("all.zip")).into_iter().collect();
    assert_eq!(got["dump/autotune.pbtxt/rank0"], a);
    assert_eq!(got["dump/autotune.pbtxt/rank1"], b);
    assert!(!got.contains_key("dump/autotune.pbtxt"));
}

#[test]
fn reports_are_kept_as_keep_nsys_rep_says() {
    let dir = tempdir();
    rank(dir.path(), 0, &[]);
    rank(dir.path(), 1, &[]);
    let reports = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["-f", "-o", "all"];
        all.extend_from_slice(args);
        all.extend(["rank0.zip", "rank1.zip"]);
        let (status, err) = combine(dir.path(), &all);
        assert_eq!(status, 0, "{err}");
        names(&dir.path().join("all.zip"))
            .into_iter()
            .filter(|n| n.ends_with(".nsys-rep"))
            .collect()
    };
    assert_eq!(reports(&[]), ["rank0.nsys-rep"]);
    assert_eq!(reports(&["--keep-nsys-rep", "first"]), ["rank0.nsys-rep"]);
    assert_eq!(
        reports(&["--keep-nsys-rep", "all"]),
        ["rank0.nsys-rep", "rank1.nsys-rep"]
    );
    assert!(reports(&["--keep-nsys-rep", "none"]).is_empty());
    let (status, err) = combine(
        dir.path(),
        &["--keep-nsys-rep", "some", "-o", "x", "rank0.zip"],
    );
    assert_eq!(status, 2, "{err}");
}

#[test]
fn njx_capture_archives_reports_are_stored_under_their_profile() {
    let dir = tempdir();
    for r in 0..2 {
        let sqlite = format!("export of rank {r}");
        let m = [
            ("report.nsys-rep", b"report".as_slice(), true),
            ("report.sqlite", sqlite.as_bytes(), false),
        ];
        write(dir.path(), &format!("cap{r}.zip"), &zip_of(&m));
    }
    let (status, err) = combine(
        dir.path(),
        &[
            "--keep-nsys-rep",
            "all",
            "-o",
            "all",
            "cap0.zip",
            "cap1.zip",
        ],
    );
    assert_eq!(status, 0, "{err}");
    assert_eq!(
        names(&dir.path().join("all.zip")),
        [
            "cap0.nsys-rep",
            "report.sqlite/cap0",
            "cap1.nsys-rep",
            "report.sqlite/cap1"
        ]
    );
}

/// Asserts that njx-combine fails with exit 1, saying `needles`, and leaves nothing.
fn fails(dir: &Path, args: &[&str], needles: &[&str]) {
    let before = listing(dir);
    let (status, err) = combine(dir, args);
    assert_eq!(status, 1, "{args:?}: {err}");
    for needle in needles {
        assert!(err.contains(needle), "{args:?}: `{needle}` not in: {err}");
    }
    assert_eq!(listing(dir), before, "{args:?} left something behind");
}

#[test]
fn inputs_that_are_not_nsys_jax_archives_are_refused() {
    let dir = tempdir();
    rank(dir.path(), 0, &[]);
    write(dir.path(), "notes.zip", b"just text\n");
    write(
        dir.path(),
        "other.zip",
        &zip_of(&[("hello.txt", b"hi", false)]),
    );
    fails(
        dir.path(),
        &["-o", "all", "rank0.zip", "notes.zip"],
        &["njx-combine: notes.zip: not a zip archive"],
    );
    fails(
        dir.path(),
        &["-o", "all", "rank0.zip", "other.zip"],
        &["other.zip: a zip archive, but not one of nsys-jax or njx-capture"],
    );
    fails(
        dir.path(),
        &["-o", "all", "rank0.zip", "missing.zip"],
        &["missing.zip"],
    );
    // A combined archive as an input.
    rank(dir.path(), 1, &[]);
    let (status, err) = combine(dir.path(), &["-o", "both", "rank0.zip", "rank1.zip"]);
    assert_eq!(status, 0, "{err}");
    std::fs::create_dir(dir.path().join("x")).unwrap();
    std::fs::copy(dir.path().join("rank0.zip"), dir.path().join("x/rank2.zip")).unwrap();
    fails(
        dir.path(),
        &["-o", "again", "both.zip", "x/rank2.zip"],
        &[
            "both.zip: a combined archive already",
            "report_nvtx_pushpop_trace.csv.xz/rank0",
        ],
    );
}

#[test]
fn inputs_that_would_collide_are_refused() {
    let dir = tempdir();
    rank(dir.path(), 0, &[]);
    rank(dir.path(), 1, &[]);
    std::fs::create_dir(dir.path().join("b")).unwrap();
    std::fs::copy(dir.path().join("rank1.zip"), dir.path().join("b/rank1.zip")).unwrap();
    fails(
        dir.path(),
        &["-o", "all", "rank0.zip", "rank1.zip", "b/rank1.zip"],
        &["b/rank1.zip: has the profile name `rank1` of rank1.zip too"],
    );
    fails(
        dir.path(),
        &["-o", "all", "rank0.zip", "rank1.zip", "./rank0.zip"],
        &["./rank0.zip: is named twice (also as rank0.zip)"],
    );
    fails(
        dir.path(),
        &["-f", "-o", "rank0", "rank0.zip", "rank1.zip"],
        &["rank0.zip: is the output (rank0.zip) too"],
    );
    // A member named as another input's per-profile copy would be: rank9 holds
    // `notes.txt/rank0`, which rank0's `notes.txt` (differing from rank1's) becomes.
    std::fs::create_dir(dir.path().join("c")).unwrap();
    for (name, table, notes) in [("rank0", "a", "y"), ("rank1", "b", "z")] {
        let m = zip_of(&[
            ("report_nvtx_pushpop_trace.csv.xz", table.as_bytes(), true),
            ("notes.txt", notes.as_bytes(), true),
        ]);
        write(dir.path(), &format!("c/{name}.zip"), &m);
    }
    let odd = zip_of(&[
        ("report_nvtx_pushpop_trace.csv.xz", b"c", true),
        ("notes.txt/rank0", b"x", true),
    ]);
    write(dir.path(), "c/rank9.zip", &odd);
    fails(
        dir.path(),
        &["-o", "all", "c/rank0.zip", "c/rank1.zip", "c/rank9.zip"],
        &[
            "all.zip: c/rank0.zip!notes.txt and c/rank9.zip!notes.txt/rank0 would both be \
             stored as notes.txt/rank0",
        ],
    );
    // A file in one input, a folder of that name in another.
    std::fs::create_dir(dir.path().join("d")).unwrap();
    for (name, table, member) in [("rank0", "a", "a"), ("rank1", "b", "a/b")] {
        let m = zip_of(&[
            ("report_nvtx_pushpop_trace.csv.xz", table.as_bytes(), true),
            (member, b"1", true),
        ]);
        write(dir.path(), &format!("d/{name}.zip"), &m);
    }
    fails(
        dir.path(),
        &["-o", "all", "d/rank0.zip", "d/rank1.zip"],
        &["d/rank0.zip!a would be stored as the file a and d/rank1.zip!a/b inside it as a/b"],
    );
}

#[test]
fn an_existing_output_is_kept_without_force() {
    let dir = tempdir();
    rank(dir.path(), 0, &[]);
    rank(dir.path(), 1, &[]);
    write(dir.path(), "all.zip", b"precious");
    fails(
        dir.path(),
        &["-o", "all", "rank0.zip", "rank1.zip"],
        &["all.zip: exists; pass -f (--force-overwrite) to overwrite it"],
    );
    assert_eq!(
        std::fs::read(dir.path().join("all.zip")).unwrap(),
        b"precious"
    );
    let (status, err) = combine(
        dir.path(),
        &["-f", "-o", "all.zip", "rank0.zip", "rank1.zip"],
    );
    assert_eq!(status, 0, "{err}");
    assert_eq!(names(&dir.path().join("all.zip")).len(), 5);
}

#[test]
fn a_report_named_for_another_profile_is_refused() {
    let dir = tempdir();
    rank(dir.path(), 0, &[]);
    rank(dir.path(), 1, &[]);
    std::fs::rename(dir.path().join("rank1.zip"), dir.path().join("renamed.zip")).unwrap();
    fails(
        dir.path(),
        &["-o", "all", "rank0.zip", "renamed.zip"],
        &[
            "renamed.zip!rank1.nsys-rep: a report named for another profile",
            "--keep-nsys-rep none",
        ],
    );
    let (status, err) = combine(
        dir.path(),
        &[
            "--keep-nsys-rep",
            "none",
            "-o",
            "all",
            "rank0.zip",
            "renamed.zip",
        ],
    );
    assert_eq!(status, 0, "{err}");
}

#[test]
fn a_damaged_member_fails_and_leaves_nothing() {
    let dir = tempdir();
    rank(dir.path(), 0, &[]);
    // rank1's table stored with one byte changed after its CRC was written.
    let mut bytes = zip_of(&[
        (
            "report_nvtx_pushpop_trace.csv.xz",
            b"ranges of rank 1",
            true,
        ),
        ("sources/train.py", b"print('hi')\n", false),
    ]);
    let at = bytes
        .windows(16)
        .position(|w| w == b"ranges of rank 1")
        .unwrap();
    bytes[at] = b'R';
    write(dir.path(), "rank1.zip", &bytes);
    fails(
        dir.path(),
        &["-o", "all", "rank0.zip", "rank1.zip"],
        &["rank1.zip!report_nvtx_pushpop_trace.csv.xz: its content does not match its CRC-32"],
    );
    // Nor over an existing output with -f: the old one stays whole.
    write(dir.path(), "all.zip", b"old");
    fails(
        dir.path(),
        &["-f", "-o", "all", "rank0.zip", "rank1.zip"],
        &["does not match its CRC-32"],
    );
    assert_eq!(std::fs::read(dir.path().join("all.zip")).unwrap(), b"old");
}

#[test]
fn inputs_of_different_programs_are_warned_about() {
    let dir = tempdir();
    rank(dir.path(), 0, &[]);
    rank(
        dir.path(),
        1,
        &[(
            "dump/module_0002.jit_g.before_optimizations.hlo.pb.xz",
            b"g",
            true,
        )],
    );
    let (status, err) = combine(dir.path(), &["-o", "all", "rank0.zip", "rank1.zip"]);
    assert_eq!(status, 0, "{err}");
    assert!(
        err.contains("warning: rank0.zip and rank1.zip dumped different XLA programs"),
        "{err}"
    );
    assert!(err.contains("module_0002.jit_g"), "{err}");
}

#[test]
fn analyses_run_on_the_combined_archive_and_are_stored_in_it() {
    let dir = tempdir();
    rank(dir.path(), 0, &[]);
    rank(dir.path(), 1, &[]);
    let (status, err) = combine(
        dir.path(),
        &[
            "--analysis",
            "basename \"$1\"; echo made > made.txt",
            "--analysis",
            "exit 3",
            "-o",
            "all",
            "rank0.zip",
            "rank1.zip",
        ],
    );
    // The failed analysis makes the exit status 1; the archive is written all the same.
    assert_eq!(status, 1, "{err}");
    assert!(err.contains("analysis 2 (`exit 3`) failed"), "{err}");
    let got: BTreeMap<String, Vec<u8>> = members(&dir.path().join("all.zip")).into_iter().collect();
    assert_eq!(
        got["analysis/1-basename-1-echo-made-made.txt.txt"],
        b"all.zip\n"
    );
    assert_eq!(
        got["analysis/1-basename-1-echo-made-made.txt/made.txt"],
        b"made\n"
    );
    assert!(got.contains_key("analysis/2-exit-3.txt"));
    assert!(got.contains_key("report_nvtx_pushpop_trace.csv.xz/rank1"));
    assert_eq!(listing(dir.path()), ["all.zip", "rank0.zip", "rank1.zip"]);
}

#[test]
fn the_pax_archives_combined_read_as_the_archives_themselves() {
    let Some(data) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let pax = pax_archives(&data);
    let dir = tempdir();
    let all = dir.path().join("all.zip");
    let all = all.to_str().unwrap();
    let mut args = vec!["-q", "-o", all];
    args.extend(pax.iter().map(String::as_str));
    let out = run("njx-combine", &args, b"");
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(names(Path::new(all)).len(), 275);
    for table in ["modules", "thunks"] {
        let sorted = |text: String| {
            let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
            lines.sort();
            lines
        };
        let mut from_inputs = vec!["-q", "--table", table];
        from_inputs.extend(pax.iter().map(String::as_str));
        assert_eq!(
            sorted(ok("njx-export", &["-q", "--table", table, all])),
            sorted(ok("njx-export", &from_inputs)),
            "{table}"
        );
    }
    let mut from_inputs = vec!["-q", "--format", "csv"];
    from_inputs.extend(pax.iter().map(String::as_str));
    assert_eq!(
        ok("njx-modules", &["-q", "--format", "csv", all]),
        ok("njx-modules", &from_inputs)
    );
}

#[test]
fn reports_left_out_are_not_read() {
    // rank1's report is damaged: that matters only when it is kept.
    let dir = tempdir();
    rank(dir.path(), 0, &[]);
    let mut bytes = zip_of(&[
        (
            "report_nvtx_pushpop_trace.csv.xz",
            b"ranges of rank 1",
            true,
        ),
        ("rank1.nsys-rep", b"report of rank 1", true),
    ]);
    let at = bytes
        .windows(16)
        .position(|w| w == b"report of rank 1")
        .unwrap();
    bytes[at] = b'R';
    write(dir.path(), "rank1.zip", &bytes);
    let (status, err) = combine(dir.path(), &["-o", "first", "rank0.zip", "rank1.zip"]);
    assert_eq!(status, 0, "{err}");
    fails(
        dir.path(),
        &[
            "--keep-nsys-rep",
            "all",
            "-o",
            "all",
            "rank0.zip",
            "rank1.zip",
        ],
        &["rank1.zip!rank1.nsys-rep: its content does not match its CRC-32"],
    );
}

/// Issue 28: member names njx-combine would copy into its output, where nsys-jax and
/// `unzip` would write them outside the folder (`../evil`, `/abs/x`, `C:/x`, `a\..\x`),
/// under another name (`a//b`, `./a`, the empty name, which became `/rank0` when it
/// differed between inputs) or print them as terminal commands: refused naming the input
/// and the member, nothing written.
#[test]
fn member_names_that_are_not_plain_relative_paths_are_refused() {
    let dir = tempdir();
    rank(dir.path(), 0, &[]);
    let hostile = [
        ("../evil", "../evil", "`..` component"),
        ("dump/../../x", "dump/../../x", "`..` component"),
        ("/abs/x", "/abs/x", "absolute"),
        ("C:/x", "C:/x", "drive letter"),
        ("a\\..\\x", "a\\..\\x", "backslash"),
        ("a//b", "a//b", "empty or `.` component"),
        ("./a", "./a", "empty or `.` component"),
        ("sources/./x.py", "sources/./x.py", "empty or `.` component"),
        ("", "", "it is empty"),
        (
            "a\u{1b}]0;owned\u{7}b",
            "\"a\\u{1b}]0;owned\\u{7}b\"",
            "control character",
        ),
        ("a\nb", "\"a\\nb\"", "control character"),
    ];
    for (k, (name, shown, why)) in hostile.iter().enumerate() {
        let sub = format!("n{k}");
        rank(&dir.path().join(&sub), 1, &[(name, b"x", true)]);
        let input = format!("{sub}/rank1.zip");
        fails(
            dir.path(),
            &["-o", "all", "rank0.zip", &input],
            &[
                &format!("njx-combine: {input}!{shown}: not a plain relative member name"),
                why,
            ],
        );
        let (_, err) = combine(dir.path(), &["-o", "all", "rank0.zip", &input]);
        assert!(
            !err.contains('\u{1b}') && err.lines().count() == 1,
            "{err:?}"
        );
    }
    // The empty name in both inputs, differing: it was stored as `/rank0` and `/rank1`.
    let both: Vec<String> = (0..2)
        .map(|r| {
            let body = format!("{r}");
            rank(&dir.path().join("e"), r, &[("", body.as_bytes(), true)])
        })
        .collect();
    fails(
        dir.path(),
        &["-o", "all", &both[0], &both[1]],
        &["e/rank0.zip!: not a plain relative member name: it is empty"],
    );
    // A folder entry is never stored, whatever its name: nothing to refuse.
    rank(&dir.path().join("f"), 1, &[("../up/", b"", true)]);
    let (status, err) = combine(dir.path(), &["-o", "all", "rank0.zip", "f/rank1.zip"]);
    assert_eq!(status, 0, "{err}");
    assert!(
        !names(&dir.path().join("all.zip"))
            .iter()
            .any(|n| n.contains(".."))
    );
}

/// An archive of rank 1 whose `link` is a symbolic link to `/etc/passwd` (mode 0120777),
/// beside its table (unless the link takes the table's name).
fn with_symlink(link: &str) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let table = "report_nvtx_pushpop_trace.csv.xz";
    if link != table {
        w.start_file(table, options).unwrap();
        w.write_all(b"ranges of rank 1").unwrap();
    }
    w.add_symlink(link, "/etc/passwd", options).unwrap();
    w.finish().unwrap().into_inner()
}

#[test]
fn symbolic_links_are_refused_also_over_a_table() {
    let dir = tempdir();
    rank(dir.path(), 0, &[]);
    for (k, link) in [
        "sources/train.py",
        "report_nvtx_pushpop_trace.csv.xz",
        "dump/module_0001.jit_f.before_optimizations.hlo.pb.xz",
        "evil",
    ]
    .iter()
    .enumerate()
    {
        let input = write(dir.path(), &format!("l{k}/rank1.zip"), &with_symlink(link));
        fails(
            dir.path(),
            &["-o", "all", "rank0.zip", &input],
            &[&format!(
                "l{k}/rank1.zip!{link}: a symbolic link (Unix mode 120777), not a file"
            )],
        );
    }
}

/// Runs njx-combine in `dir`, killed after `secs` seconds; returns (status, stderr), status
/// -1 when it had to be killed.
fn combine_within(dir: &Path, args: &[&str], secs: u64) -> (i32, String) {
    let mut child = std::process::Command::new(exe("njx-combine"))
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code().unwrap_or(-1);
        }
        if started.elapsed().as_secs() >= secs {
            child.kill().unwrap();
            child.wait().unwrap();
            break -1;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status, err)
}

/// A FIFO blocked njx-combine for good (opened before it was checked to be a file).
#[test]
fn inputs_that_are_not_files_are_refused_without_being_opened() {
    let dir = tempdir();
    rank(dir.path(), 0, &[]);
    let fifo = dir.path().join("rank1.zip");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    std::os::unix::fs::symlink("rank1.zip", dir.path().join("link.zip")).unwrap();
    let socket = std::os::unix::net::UnixListener::bind(dir.path().join("sock.zip")).unwrap();
    std::fs::create_dir(dir.path().join("folder.zip")).unwrap();
    for (input, kind) in [
        ("rank1.zip", "a FIFO (named pipe), not a file"),
        ("link.zip", "a FIFO (named pipe), not a file"),
        ("sock.zip", "a socket, not a file"),
        ("/dev/zero", "a device, not a file"),
        ("folder.zip", "a folder, not a file"),
    ] {
        let before = listing(dir.path());
        let (status, err) = combine_within(dir.path(), &["-o", "all", "rank0.zip", input], 10);
        assert_eq!(status, 1, "{input}: {err}");
        assert!(err.contains(&format!("{input}: {kind}")), "{input}: {err}");
        assert_eq!(listing(dir.path()), before);
    }
    drop(socket);
}

/// On a full disk the first line on stderr was the zip crate's debug print (`ZipWriter::
/// drop: failed to finalize archive: Io(Os { …`); now one line naming the output. A file
/// size limit (`ulimit -f`, SIGXFSZ ignored) fails the writes as a full disk does, without
/// mounting anything.
#[test]
fn write_errors_name_the_output_once() {
    let dir = tempdir();
    let big = noise(400_000);
    rank(dir.path(), 0, &[("sources/big.bin", &big, true)]);
    rank(dir.path(), 1, &[]);
    let before = listing(dir.path());
    let out = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 128; exec \"$0\" \"$@\"")
        .arg(exe("njx-combine"))
        .args(["-o", "out/all", "rank0.zip", "rank1.zip"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("njx-combine: out/all.zip: File too large (os error 27), writing "),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    for debug in ["ZipWriter", "Io(", "Os {", "Custom {", ".njx-combine-"] {
        assert!(!err.contains(debug), "{err}");
    }
    // The folder made for the output stays (created once the inputs were checked), empty.
    assert_eq!(listing(dir.path()).len(), before.len() + 1);
    assert!(listing(&dir.path().join("out")).is_empty());
}

#[test]
fn an_output_that_is_an_input_by_another_name_is_refused() {
    let dir = tempdir();
    rank(dir.path(), 0, &[]);
    rank(dir.path(), 1, &[]);
    std::fs::hard_link(dir.path().join("rank0.zip"), dir.path().join("hard.zip")).unwrap();
    std::os::unix::fs::symlink("rank1.zip", dir.path().join("soft.zip")).unwrap();
    let original = std::fs::read(dir.path().join("rank0.zip")).unwrap();
    fails(
        dir.path(),
        &["-f", "-o", "hard", "rank0.zip", "rank1.zip"],
        &["rank0.zip: is the output (hard.zip) too"],
    );
    fails(
        dir.path(),
        &["-f", "-o", "soft.zip", "rank0.zip", "rank1.zip"],
        &["rank1.zip: is the output (soft.zip) too"],
    );
    // `-o` inside a folder given as an input: the folder is no archive.
    std::fs::create_dir(dir.path().join("rank2")).unwrap();
    fails(
        dir.path(),
        &["-o", "rank2/all", "rank0.zip", "rank2"],
        &["rank2: a folder, not a file"],
    );
    assert!(listing(&dir.path().join("rank2")).is_empty());
    assert_eq!(
        std::fs::read(dir.path().join("rank0.zip")).unwrap(),
        original
    );
}

#[test]
fn profile_names_that_are_not_plain_file_names_are_refused() {
    let dir = tempdir();
    rank(dir.path(), 0, &[]);
    let bytes = std::fs::read(dir.path().join("rank0.zip")).unwrap();
    for (file, why) in [
        ("a\\b.zip", "backslash"),
        ("...zip", "`..` component"),
        ("r\u{1b}[2J.zip", "control character"),
    ] {
        write(dir.path(), file, &bytes);
        fails(
            dir.path(),
            &["-o", "all", "rank0.zip", file],
            &["would name its members in the combined archive", why],
        );
        std::fs::remove_file(dir.path().join(file)).unwrap();
    }
}

/// Zip64 members (extra fields with 64-bit sizes, as Python's zipfile writes for large
/// files) are read and copied as they are.
#[test]
fn zip64_inputs_are_combined() {
    let dir = tempdir();
    rank(dir.path(), 0, &[]);
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().large_file(true);
    for (name, bytes) in [
        ("report_nvtx_pushpop_trace.csv.xz", &b"ranges of rank 1"[..]),
        ("sources/train.py", b"print('hi')\n"),
        ("only-in-1.txt", b"one"),
    ] {
        w.start_file(name, options).unwrap();
        w.write_all(bytes).unwrap();
    }
    write(dir.path(), "rank1.zip", &w.finish().unwrap().into_inner());
    let (status, err) = combine(dir.path(), &["-o", "all", "rank0.zip", "rank1.zip"]);
    assert_eq!(status, 0, "{err}");
    let got: BTreeMap<String, Vec<u8>> = members(&dir.path().join("all.zip")).into_iter().collect();
    assert_eq!(got["only-in-1.txt"], b"one");
    assert_eq!(
        got["report_nvtx_pushpop_trace.csv.xz/rank1"],
        b"ranges of rank 1"
    );
    assert_eq!(got["sources/train.py"], b"print('hi')\n");
}
