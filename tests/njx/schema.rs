//! Schema drift in nsys SQLite exports: one rule for the columns each table must have.
//! Every reader of a table requires the same columns (`source/sqlite.rs`, `REQUIRED`); an
//! export whose table lacks one is refused by every tool that reads the table (exit 1,
//! naming the file, the table and the column), and any other column a reader asks for
//! reads as null where the table lacks it. Through the built binaries, on an export made
//! here with every table the readers use.

use crate::common::nsys_sqlite::*;
use crate::common::*;
use std::path::Path;

const PID: u64 = 7;
const NAME: i64 = 1;
const PYTHON: i64 = 1000;

/// The columns the tests expect each table to require: the rule, written out again so
/// that a column dropped from it (or added to it) shows here.
const REQUIRED: &[(&str, &[&str])] = &[
    ("NVTX_EVENTS", &["start", "end", "eventType", "globalTid"]),
    (
        "CUPTI_ACTIVITY_KIND_KERNEL",
        &["start", "end", "deviceId", "correlationId", "globalPid"],
    ),
    (
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        &["start", "end", "deviceId", "correlationId", "globalPid"],
    ),
    (
        "CUPTI_ACTIVITY_KIND_MEMSET",
        &["start", "end", "deviceId", "correlationId", "globalPid"],
    ),
    (
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        &["start", "end", "globalTid", "correlationId"],
    ),
    (
        "CUPTI_ACTIVITY_KIND_DRIVER",
        &["start", "end", "globalTid", "correlationId"],
    ),
    ("StringIds", &["id", "value"]),
    ("ThreadNames", &["globalTid", "nameId"]),
    ("ENUM_NSYS_EVENT_TYPE", &["id", "name"]),
    ("ENUM_CUDA_MEMCPY_OPER", &["id", "name"]),
    ("ENUM_CUDA_MEM_KIND", &["id", "name"]),
];

/// Every command that reads the export, with the tables it reads.
const COMMANDS: &[(&str, &[&str], &[&str])] = &[
    ("njx-export", &[], RANGES),
    ("njx-ranges", &[], RANGES),
    ("njx-export", &["--table", "gpu-ranges"], PROJECTION),
    ("njx-export", &["--table", "kernels"], KERNELS),
    ("njx-kernels", &[], KERNELS),
    ("njx-export", &["--table", "memops"], MEMOPS),
    ("njx-kernels", &["--table", "memops"], MEMOPS),
    ("njx-export", &["--table", "modules"], MODULES),
    ("njx-export", &["--table", "thunks"], MODULES),
    ("njx-modules", &[], MODULES),
];

const RANGES: &[&str] = &["NVTX_EVENTS", "StringIds", "ENUM_NSYS_EVENT_TYPE"];
const PROJECTION: &[&str] = &[
    "NVTX_EVENTS",
    "StringIds",
    "ENUM_NSYS_EVENT_TYPE",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_DRIVER",
];
const KERNELS: &[&str] = &[
    "NVTX_EVENTS",
    "StringIds",
    "ENUM_NSYS_EVENT_TYPE",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_DRIVER",
];
const MEMOPS: &[&str] = &[
    "NVTX_EVENTS",
    "StringIds",
    "ENUM_NSYS_EVENT_TYPE",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_DRIVER",
    "ENUM_CUDA_MEMCPY_OPER",
    "ENUM_CUDA_MEM_KIND",
];
const MODULES: &[&str] = &[
    "NVTX_EVENTS",
    "StringIds",
    "ENUM_NSYS_EVENT_TYPE",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_DRIVER",
    "ThreadNames",
];

/// An XLA export of process 7 with every table the readers use. Thread 1 runs module
/// `jit_step` (program 7) over [100 µs, 160 µs] with thunk `fusion.1` in it; in the thunk
/// a runtime call launches a kernel (corr 1), a copy (corr 2) and a set (corr 3), and a
/// driver call a second kernel (corr 4), all on device 0. The thread is named `python`:
/// no launcher name, so its device is the one its kernels ran on (the launchers are read
/// from `ThreadNames`, then from the kernels joined with their calls).
fn export(path: &Path) {
    let db = NsysDb::create(path);
    let t = gtid(PID, 1);
    let p = gpid(PID);
    db.conn
        .execute_batch(
            "CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER (start INTEGER NOT NULL, \
             end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER, \
             correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, \
             callchainId INTEGER);
             CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, \
             label TEXT);
             INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (1, 'CUDA_MEMCPY_KIND_HTOD', 'HtoD');
             CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT, \
             label TEXT);
             INSERT INTO ENUM_CUDA_MEM_KIND VALUES (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', \
             'Pinned');",
        )
        .unwrap();
    db.string(NAME, "fusion_kernel");
    db.thread_name(t, PYTHON, "python");
    db.range(
        100_000,
        160_000,
        t,
        "XlaModule:#hlo_module=jit_step,program_id=7#",
    );
    db.range(101_000, 150_000, t, "Thunk:#hlo_op=fusion.1#");
    db.call(102_000, 103_000, t, 1);
    db.kernel(120_000, 130_000, p, 1);
    db.call(104_000, 105_000, t, 2);
    db.memcpy(131_000, 132_000, p, 2);
    db.call(106_000, 107_000, t, 3);
    db.memset(133_000, 134_000, p, 3);
    db.sql(
        "INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER \
         (start, end, eventClass, globalTid, correlationId, nameId, returnValue) \
         VALUES (108000, 109000, 0, ?1, 4, 1, 0)",
        [t],
    );
    db.kernel(135_000, 140_000, p, 4);
}

/// `table` of the export at `path` without `columns` (copied without them: SQLite cannot
/// drop a primary key).
fn drop_columns(path: &Path, table: &str, columns: &[&str]) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let kept: Vec<String> = {
        let mut stmt = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .unwrap();
        stmt.query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(Result::unwrap)
            .filter(|c| !columns.contains(&c.as_str()))
            .collect()
    };
    let kept: Vec<String> = kept.iter().map(|c| format!("\"{c}\"")).collect();
    conn.execute_batch(&format!(
        "CREATE TABLE njx_tmp AS SELECT {} FROM \"{table}\"; DROP TABLE \"{table}\"; \
         ALTER TABLE njx_tmp RENAME TO \"{table}\";",
        kept.join(", ")
    ))
    .unwrap();
}

/// The columns of `table` in the export at `path`.
fn columns(path: &Path, table: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
        .unwrap();
    stmt.query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn run_on(tool: &str, args: &[&str], file: &Path) -> std::process::Output {
    let mut all: Vec<&str> = args.to_vec();
    all.push(file.to_str().unwrap());
    run(tool, &all, b"")
}

#[test]
fn every_command_reads_the_whole_export() {
    let dir = tempdir();
    let file = dir.path().join("whole.sqlite");
    export(&file);
    for &(tool, args, _) in COMMANDS {
        let out = run_on(tool, args, &file);
        assert!(
            out.status.success() && !out.stdout.is_empty(),
            "{tool} {args:?}: {}",
            stderr_of(&out)
        );
    }
    // Both kernels, the copy and the set are the module's, on device 0.
    let modules = json_lines(&ok(
        "njx-export",
        &["--table", "modules", file.to_str().unwrap()],
    ));
    assert_eq!(modules.len(), 1);
    assert_eq!(modules[0]["device"], 0);
    assert_eq!(modules[0]["start_ns"], 120_000);
    assert_eq!(modules[0]["dur_ns"], 20_000);
}

/// The case issue 27 names: `CUPTI_ACTIVITY_KIND_KERNEL` without `globalPid` was blamed on
/// `CUPTI_ACTIVITY_KIND_RUNTIME` (the kernels joined with their calls to find each
/// thread's device), and `--table kernels` read it with every kernel's call missing.
#[test]
fn kernels_without_global_pid_are_refused_naming_the_kernel_table() {
    let dir = tempdir();
    let file = dir.path().join("no-gpid.sqlite");
    export(&file);
    drop_columns(&file, "CUPTI_ACTIVITY_KIND_KERNEL", &["globalPid"]);
    for (tool, args) in [
        ("njx-export", &["--table", "kernels"][..]),
        ("njx-export", &["--table", "modules"]),
        ("njx-export", &["--table", "gpu-ranges"]),
        ("njx-kernels", &[]),
        ("njx-modules", &[]),
    ] {
        let out = run_on(tool, args, &file);
        assert_eq!(
            stderr_of(&out),
            format!(
                "{tool}: {}: table CUPTI_ACTIVITY_KIND_KERNEL has no column `globalPid`, which \
                 njx needs (columns: {})\n",
                file.display(),
                columns(&file, "CUPTI_ACTIVITY_KIND_KERNEL").join(", ")
            ),
            "{tool} {args:?}"
        );
        assert_eq!(out.status.code(), Some(1), "{tool} {args:?}");
        assert!(out.stdout.is_empty(), "{tool} {args:?}");
    }
}

/// For each table and each column it requires: the export without it is refused by every
/// command that reads the table, naming the file, the table and the column; the commands
/// that do not read the table read the export as before.
#[test]
fn a_missing_required_column_is_refused_by_every_reader_of_its_table() {
    let dir = tempdir();
    let whole = dir.path().join("whole.sqlite");
    export(&whole);
    let mut failures = Vec::new();
    for &(table, required) in REQUIRED {
        for &column in required {
            let file = dir.path().join(format!("{table}-{column}.sqlite"));
            std::fs::copy(&whole, &file).unwrap();
            drop_columns(&file, table, &[column]);
            let wanted = format!(
                "{}: table {table} has no column `{column}`, which njx needs",
                file.display()
            );
            for &(tool, args, reads) in COMMANDS {
                let out = run_on(tool, args, &file);
                let err = stderr_of(&out);
                let ok = if reads.contains(&table) {
                    out.status.code() == Some(1)
                        && err.lines().count() == 1
                        && err.starts_with(&format!("{tool}: {wanted} (columns: "))
                        && out.stdout.is_empty()
                } else {
                    out.status.success()
                };
                if !ok {
                    failures.push(format!(
                        "{table}.{column}: {tool} {args:?} (reads it: {}) exit {:?}: {err}",
                        reads.contains(&table),
                        out.status.code()
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every column the rule does not require can be missing (each table without all of
/// them at once): every command reads the export, the missing cells as null. But for
/// `NVTX_EVENTS.text`, which holds the range names here: without it no range is an XLA
/// module, and the XLA tools refuse the export for that (`not_xla.rs`).
#[test]
fn columns_not_required_read_as_null() {
    let dir = tempdir();
    let whole = dir.path().join("whole.sqlite");
    export(&whole);
    let mut failures = Vec::new();
    for &(table, required) in REQUIRED {
        let file = dir.path().join(format!("{table}-optional.sqlite"));
        std::fs::copy(&whole, &file).unwrap();
        let kept = |c: &str| required.contains(&c) || (table, c) == ("NVTX_EVENTS", "text");
        let optional: Vec<String> = columns(&file, table)
            .into_iter()
            .filter(|c| !kept(c))
            .collect();
        let optional: Vec<&str> = optional.iter().map(String::as_str).collect();
        drop_columns(&file, table, &optional);
        for &(tool, args, _) in COMMANDS {
            let out = run_on(tool, args, &file);
            if !out.status.success() {
                failures.push(format!(
                    "{table} without {optional:?}: {tool} {args:?}: {}",
                    stderr_of(&out)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // What reads as null: the kernels' stream and names, the calls' names.
    let file = dir.path().join("nulls.sqlite");
    std::fs::copy(&whole, &file).unwrap();
    drop_columns(
        &file,
        "CUPTI_ACTIVITY_KIND_KERNEL",
        &["streamId", "demangledName", "shortName"],
    );
    drop_columns(&file, "CUPTI_ACTIVITY_KIND_RUNTIME", &["nameId"]);
    drop_columns(&file, "CUPTI_ACTIVITY_KIND_DRIVER", &["nameId"]);
    let kernels = json_lines(&ok(
        "njx-export",
        &["--table", "kernels", file.to_str().unwrap()],
    ));
    assert_eq!(kernels.len(), 2);
    for k in &kernels {
        assert!(k["stream"].is_null() && k["api"].is_null(), "{k}");
        assert_eq!((&k["name"], &k["thunk"]), (&"".into(), &"fusion.1".into()));
    }
}
