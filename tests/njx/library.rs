//! The library called in-process, as tests, benchmarks and other programs call it: each
//! analysis with its options, inputs, a writer and kept notes, giving what its command
//! writes; the source layer's readers and its errors naming their place.

use crate::common::nsys_sqlite::*;
use crate::common::*;
use njx::analysis::{compile, export, flamefold, ranges};
use njx::output::Format;
use njx::output::notes::Notes;
use njx::output::progress::Progress;
use njx::{Error, source};
use std::path::{Path, PathBuf};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/compile_trace.csv.xz")
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("utf-8 output")
}

#[test]
fn compile_summary_in_process_writes_what_the_command_writes() {
    let path = example();
    for total in [false, true] {
        let options = compile::Options {
            total,
            passes: false,
            by: None,
            top: None,
            threshold: None,
            format: Format::Table,
        };
        let notes = Notes::kept();
        let mut out = Vec::new();
        compile::run(&options, std::slice::from_ref(&path), &mut out, &notes).unwrap();
        let mut args = vec![path.to_str().unwrap()];
        if total {
            args.push("--total");
        }
        let expected = ok("njx-compile-summary", &args);
        assert!(expected.contains("Compilation"), "{expected}");
        assert_eq!(text(out), expected);
        assert!(notes.take().is_empty());
    }
}

#[test]
fn export_and_ranges_in_process_write_what_the_commands_write() {
    let path = example();
    let options = export::Options {
        table: export::Table::Ranges,
        format: Format::Json,
        align: true,
        hlo: Vec::new(),
        program_key: Default::default(),
        source: source::Options::default(),
    };
    let mut out = Vec::new();
    export::run(
        &options,
        std::slice::from_ref(&path),
        &mut out,
        &Notes::kept(),
    )
    .unwrap();
    let exported = text(out);
    assert_eq!(exported, ok("njx-export", &[path.to_str().unwrap()]));
    assert!(exported.lines().count() > 100);

    let mut filters = ranges::Filters::default();
    filters.add_xla_compile();
    let options = ranges::Options {
        filters,
        format: Format::Csv,
    };
    let mut out = Vec::new();
    ranges::run(
        &options,
        std::slice::from_ref(&path),
        &mut out,
        &Notes::kept(),
    )
    .unwrap();
    assert_eq!(
        text(out),
        ok(
            "njx-ranges",
            &["--xla-compile", "--format", "csv", path.to_str().unwrap()]
        )
    );
}

#[test]
fn flamefold_in_process_folds_what_the_command_folds() {
    let path = example();
    let options = flamefold::Options {
        by: flamefold::By::Stack,
        hlo: Vec::new(),
        top_modules: 0.99,
        include_warmup: false,
        full_names: false,
        unit: flamefold::Unit::Ns,
        partial: false,
        programs: Default::default(),
        diff: None,
        normalize: false,
    };
    let folded = flamefold::fold(&options, std::slice::from_ref(&path), &Notes::kept()).unwrap();
    let lines = folded.lines(flamefold::Unit::Ns);
    let mut expected = ok("njx-flamefold", &[path.to_str().unwrap()]);
    expected.truncate(expected.trim_end().len());
    assert_eq!(lines.join("\n"), expected);
    // Every tree adds up to its roots' wall time: the folded total is the sum of the
    // roots' durations.
    let mut roots = 0i64;
    source::read_ranges(
        &path,
        source::Options::default(),
        &Notes::kept(),
        &mut |r| {
            if r.parent.is_none() {
                roots += r.dur_ns;
            }
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(folded.total_ns(), roots as f64);
}

#[test]
fn notes_reach_the_caller_not_stderr() {
    let dir = tempdir();
    let path = dir.path().join("no-nvtx.sqlite");
    // An export of a profile that traced CUDA only: no NVTX_EVENTS table.
    let db = NsysDb::with_tables(&path, &["META_DATA_EXPORT", "CUPTI_ACTIVITY_KIND_KERNEL"]);
    drop(db);
    let notes = Notes::kept();
    let mut n = 0;
    let read = source::read_ranges(&path, source::Options::default(), &notes, &mut |_| {
        n += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!((read, n), (0, 0));
    let kept = notes.take();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(
        kept[0]
            .ends_with("no-nvtx.sqlite: no NVTX_EVENTS table: the profile recorded no NVTX ranges"),
        "{kept:?}"
    );
    assert!(notes.take().is_empty(), "take empties the list");
}

#[test]
fn source_errors_name_the_file_and_line() {
    let dir = tempdir();
    let bad = write(dir.path(), "notes.txt", b"hello\nworld\n");
    let err = source::read_ranges(
        Path::new(&bad),
        source::Options::default(),
        &Notes::kept(),
        &mut |_| Ok(()),
    )
    .unwrap_err();
    assert!(matches!(err, Error::Data { .. }));
    assert_eq!(err.exit_code(), 1);
    assert!(
        err.to_string().starts_with(&format!(
            "{bad}:1: not range records or an NVTX table: this is text"
        )),
        "{err}"
    );
    // A record line that is not a range names its line.
    let records = write(dir.path(), "r.jsonl", b"{\"profile\":\"p\"}\n");
    let err = source::read_ranges(
        Path::new(&records),
        source::Options::default(),
        &Notes::kept(),
        &mut |_| Ok(()),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("{records}:1: bad record")),
        "{err}"
    );
    // Execution records are built from profiles only.
    let err = source::Profiles::open(Path::new(&bad), &Progress::none())
        .err()
        .expect("not a profile");
    assert!(
        err.to_string()
            .contains("module and thunk tables are built from"),
        "{err}"
    );
}

#[test]
fn sqlite_profiles_offer_the_same_tables_as_archives() {
    let dir = tempdir();
    let path = dir.path().join("two-devices.sqlite");
    let db = NsysDb::create(&path);
    let (t0, t1) = (gtid(7, 70), gtid(7, 71));
    db.thread_name(
        t0,
        100,
        "XlaLauncher:#global=0,local=0,process=0,partition=0#",
    );
    db.thread_name(
        t1,
        101,
        "XlaLauncher:#global=1,local=1,process=0,partition=0#",
    );
    for (i, t) in [t0, t1].into_iter().enumerate() {
        let i = i as i64;
        db.range(1_000, 9_000, t, "XlaModule:#hlo_module=jit_f,program_id=3#");
        db.call(2_000, 2_100, t, 10 + i);
        db.kernel_on(i, 3_000, 4_000, gpid(7), 10 + i);
    }
    db.range(
        0,
        500,
        t0,
        "TSL:XlaCompileBackend:#module=jit_f,program_id=3#",
    );
    drop(db);
    let mut profiles = source::Profiles::open(&path, &Progress::none()).unwrap();
    assert_eq!(profiles.len(), 1);
    assert!(profiles.archive().is_none());
    let tables = profiles.tables(0, &Notes::kept()).unwrap();
    assert_eq!(&*tables.name, "two-devices");
    let source::devices::Launchers::Named(launchers) = &tables.launchers else {
        panic!("named launchers expected: {:?}", tables.launchers);
    };
    let mut devices: Vec<u32> = launchers.iter().map(|l| l.device).collect();
    devices.sort();
    assert_eq!(devices, [0, 1]);
    assert_eq!(tables.compiled, [(3, "jit_f".to_string())]);
    assert_eq!(
        tables
            .gpu_ranges
            .iter()
            .filter(|r| r.name.contains("XlaModule"))
            .count(),
        2
    );
}
