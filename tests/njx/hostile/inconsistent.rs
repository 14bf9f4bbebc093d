//! Silent acceptance of inconsistent input: push/pop trees that do not add up (a range
//! its own parent, dangling or cyclic parents, repeated ids, children out of order, out
//! of their parent's time, thread or process, wrong Lvl/NumChild/DurChild, repeated
//! columns), numbers out of range (ranges longer than i64 nanoseconds, negative
//! durations), the same in Parquet tables and range records, SQLite ids that point
//! nowhere, thunk and module records that cannot be (unknown collectives, zero or
//! overflowing sizes), folded counts that overflow, HLO references that point nowhere,
//! zip members named twice, and command-line numbers out of range.
//!
//! Where nsys may really write the inconsistency, a documented repair with a note naming
//! the file is allowed (`RefusedOrNoted`); impossible numbers must be refused, naming the
//! line.

use super::fixtures::*;
use super::formats::{ZipEntry, zip_raw};
use super::harness::{Case, Expect, Run};
use crate::args;
use crate::common::nsys_sqlite::*;
use crate::common::{pushpop_parquet, write, xz};
use njx::hlo::proto::HloProto;
use prost::Message;
use serde_json::{Value, json};
use std::path::Path;

type TableFix = fn(&mut Table);

/// Mutations of [`tree`]: label, mutation, expectation, and the line a refusal must
/// name (row `r` is line `r + 2`), where the answer is a refusal.
fn tree_mutations() -> Vec<(&'static str, TableFix, Expect, Option<u32>)> {
    use Expect::{Refused, RefusedOrNoted as Rn};
    vec![
        (
            "a range its own parent",
            |t| {
                t.set(2, "ParentId", 3);
            },
            Rn,
            None,
        ),
        (
            "a dangling ParentId",
            |t| {
                t.set(2, "ParentId", 999);
            },
            Rn,
            None,
        ),
        (
            "cyclic ParentIds",
            |t| {
                t.set(1, "ParentId", 3);
            },
            Rn,
            None,
        ),
        (
            "a repeated RangeId",
            |t| {
                t.set(5, "RangeId", 1);
            },
            Rn,
            None,
        ),
        (
            "a child listed before its parent",
            |t| t.rows.swap(1, 2),
            Rn,
            None,
        ),
        (
            "a child listed after a later root",
            |t| {
                let r = t.rows.remove(2);
                t.rows.push(r);
            },
            Rn,
            None,
        ),
        (
            "a child starting before its parent",
            |t| {
                t.set(2, "Start (ns)", 50).set(2, "Duration (ns)", 300).set(
                    2,
                    "DurNonChild (ns)",
                    300,
                );
                t.set(1, "DurChild (ns)", 300).set(1, "DurNonChild (ns)", 0);
            },
            Rn,
            None,
        ),
        (
            "a child ending after its parent",
            |t| {
                t.set(4, "End (ns)", 950).set(4, "Duration (ns)", 350).set(
                    4,
                    "DurNonChild (ns)",
                    350,
                );
                t.set(3, "DurChild (ns)", 350)
                    .set(3, "DurNonChild (ns)", 50);
            },
            Rn,
            None,
        ),
        (
            "a child on another thread",
            |t| {
                t.set(2, "TID", 2);
            },
            Rn,
            None,
        ),
        (
            "a child in another process",
            |t| {
                t.set(2, "PID", 8);
            },
            Rn,
            None,
        ),
        (
            "a wrong Lvl",
            |t| {
                t.set(2, "Lvl", 5);
            },
            Rn,
            None,
        ),
        (
            "Lvl 0 for a child",
            |t| {
                t.set(2, "Lvl", 0);
            },
            Rn,
            None,
        ),
        (
            "a wrong NumChild",
            |t| {
                t.set(0, "NumChild", 7);
            },
            Rn,
            None,
        ),
        (
            "NumChild 0 for a parent",
            |t| {
                t.set(1, "NumChild", 0);
            },
            Rn,
            None,
        ),
        (
            "a wrong DurChild",
            |t| {
                t.set(0, "DurChild (ns)", 50)
                    .set(0, "DurNonChild (ns)", 950);
            },
            Rn,
            None,
        ),
        (
            "DurChild beyond the duration",
            |t| {
                t.set(0, "DurChild (ns)", 2000)
                    .set(0, "DurNonChild (ns)", -1000);
            },
            Rn,
            None,
        ),
        (
            "overlapping siblings",
            |t| {
                t.set(3, "Start (ns)", 300)
                    .set(3, "Duration (ns)", 600)
                    .set(3, "DurNonChild (ns)", 500);
                t.set(0, "DurChild (ns)", 900)
                    .set(0, "DurNonChild (ns)", 100);
            },
            Rn,
            None,
        ),
        (
            "RangeStack disagreeing with ParentId",
            |t| {
                t.set(2, "RangeStack", ":1:4:3");
            },
            Rn,
            None,
        ),
        (
            "a repeated `Start (ns)` column",
            |t| {
                t.header.push("Start (ns)".into());
                for r in &mut t.rows {
                    let s: i64 = r[0].parse().unwrap();
                    r.push((s + 5).to_string());
                }
            },
            Rn,
            None,
        ),
        (
            "a repeated `RangeId` column",
            |t| {
                t.header.push("RangeId".into());
                for (i, r) in t.rows.iter_mut().enumerate() {
                    r.push((100 + i).to_string());
                }
            },
            Rn,
            None,
        ),
        (
            "a repeated `ParentId` column",
            |t| {
                t.header.push("ParentId".into());
                for r in &mut t.rows {
                    r.push(String::new());
                }
            },
            Rn,
            None,
        ),
        (
            "Lvl 2^32 + 2",
            |t| {
                t.set(2, "Lvl", 4_294_967_298u64);
            },
            Refused,
            Some(4),
        ),
        (
            "NumChild 2^32 + 2",
            |t| {
                t.set(0, "NumChild", 4_294_967_298u64);
            },
            Refused,
            Some(2),
        ),
        (
            "a range longer than i64 nanoseconds",
            |t| {
                t.set(5, "Start (ns)", -9_000_000_000_000_000_000i64)
                    .set(5, "End (ns)", 9_000_000_000_000_000_000i64)
                    .set(5, "Duration (ns)", "")
                    .set(5, "DurNonChild (ns)", "");
            },
            Refused,
            Some(7),
        ),
        (
            "End i64::MAX after Start -1",
            |t| {
                t.set(5, "Start (ns)", -1)
                    .set(5, "End (ns)", i64::MAX)
                    .set(5, "Duration (ns)", "")
                    .set(5, "DurNonChild (ns)", "");
            },
            Refused,
            Some(7),
        ),
        (
            "DurChild i64::MIN",
            |t| {
                t.set(5, "DurChild (ns)", i64::MIN)
                    .set(5, "DurNonChild (ns)", "");
            },
            Refused,
            Some(7),
        ),
        (
            "a negative duration",
            |t| {
                t.set(5, "Start (ns)", 2100)
                    .set(5, "End (ns)", 2000)
                    .set(5, "Duration (ns)", -100)
                    .set(5, "DurNonChild (ns)", -100);
            },
            Refused,
            Some(7),
        ),
        (
            "a negative DurChild",
            |t| {
                t.set(5, "DurChild (ns)", -5)
                    .set(5, "DurNonChild (ns)", 105);
            },
            Refused,
            Some(7),
        ),
        (
            "RangeId 2^63",
            |t| {
                t.set(5, "RangeId", 9_223_372_036_854_775_808u64);
            },
            Refused,
            Some(7),
        ),
        (
            "TID 2^64",
            |t| {
                t.set(5, "TID", "18446744073709551616");
            },
            Refused,
            Some(7),
        ),
        (
            "Start in exponent notation",
            |t| {
                t.set(5, "Start (ns)", "2e3");
            },
            Refused,
            Some(7),
        ),
    ]
}

/// Mutations of range records (JSON): label, mutation, expectation, line to name.
type RecFix = fn(&mut Vec<Value>);

fn record_mutations() -> Vec<(&'static str, RecFix, Expect, Option<u32>)> {
    use Expect::{Refused, RefusedOrNoted as Rn};
    vec![
        (
            "a range its own parent",
            |r| r[2]["parent"] = json!(3),
            Rn,
            None,
        ),
        (
            "a dangling parent",
            |r| r[2]["parent"] = json!(999),
            Rn,
            None,
        ),
        ("a repeated id", |r| r[5]["id"] = json!(1), Rn, None),
        ("cyclic parents", |r| r[1]["parent"] = json!(3), Rn, None),
        ("a wrong depth", |r| r[2]["depth"] = json!(7), Rn, None),
        (
            "a wrong children count",
            |r| r[0]["children"] = json!(9),
            Rn,
            None,
        ),
        (
            "a wrong child_ns",
            |r| {
                r[0]["child_ns"] = json!(5);
                r[0]["self_ns"] = json!(995);
            },
            Rn,
            None,
        ),
        (
            "self_ns not dur_ns - child_ns",
            |r| r[0]["self_ns"] = json!(1),
            Rn,
            None,
        ),
        (
            "dur_ns not end_ns - start_ns",
            |r| r[5]["dur_ns"] = json!(7),
            Rn,
            None,
        ),
        (
            "end before start",
            |r| {
                r[5]["start_ns"] = json!(2100);
                r[5]["end_ns"] = json!(2000);
                r[5]["dur_ns"] = json!(-100);
                r[5]["self_ns"] = json!(-100);
            },
            Rn,
            None,
        ),
        (
            "a child outside its parent's time",
            |r| {
                r[2]["start_ns"] = json!(50);
                r[2]["dur_ns"] = json!(300);
                r[2]["self_ns"] = json!(300);
            },
            Rn,
            None,
        ),
        (
            "a child in another profile",
            |r| r[2]["profile"] = json!("other"),
            Rn,
            None,
        ),
        // Records may hold parallel-compilation workers spliced under a compilation
        // (njx-ranges --splice-workers): a child on another thread, under an XlaCompile
        // range as here, is what that writes, and is read as such.
        (
            "a child on another thread",
            |r| r[2]["tid"] = json!(2),
            Expect::Accepted,
            None,
        ),
        (
            "a child on another thread outside any compilation",
            |r| {
                r[0]["name"] = json!("TSL:Step");
                r[2]["tid"] = json!(2);
            },
            Rn,
            None,
        ),
        (
            "a child in another process",
            |r| r[2]["pid"] = json!(8),
            Rn,
            None,
        ),
        (
            "a negative child_ns",
            |r| {
                r[5]["child_ns"] = json!(-5);
                r[5]["self_ns"] = json!(105);
            },
            Rn,
            None,
        ),
        (
            "a range longer than i64 nanoseconds",
            |r| {
                r[5]["start_ns"] = json!(-9_000_000_000_000_000_000i64);
                r[5]["end_ns"] = json!(9_000_000_000_000_000_000i64);
                r[5]["dur_ns"] = json!(0);
                r[5]["self_ns"] = json!(0);
            },
            Refused,
            Some(6),
        ),
        (
            "start_ns a float",
            |r| r[5]["start_ns"] = json!(2000.5),
            Refused,
            Some(6),
        ),
        ("id a string", |r| r[5]["id"] = json!("6"), Refused, Some(6)),
        (
            "depth 2^32",
            |r| r[5]["depth"] = json!(4_294_967_296u64),
            Refused,
            Some(6),
        ),
    ]
}

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    // Push/pop CSV, every tool.
    for (label, fix, expect, line) in tree_mutations() {
        for tool in [
            "njx-export",
            "njx-ranges",
            "njx-compile-summary",
            "njx-flamefold",
        ] {
            v.push(Case::new(
                format!("push/pop csv: {label}"),
                tool,
                expect,
                move |d: &Path| {
                    let mut t = tree();
                    fix(&mut t);
                    let p = write(d, "t.csv", t.csv().as_bytes());
                    let name = line.map_or("t.csv".to_string(), |l| format!("t.csv:{l}"));
                    Run::new(args![p]).name(name)
                },
            ));
        }
    }
    // The same in the Parquet form (as integers survive it).
    let parquet_ok = [
        "a range its own parent",
        "a dangling ParentId",
        "cyclic ParentIds",
        "a repeated RangeId",
        "a child listed before its parent",
        "a child starting before its parent",
        "a child ending after its parent",
        "a child on another thread",
        "a wrong NumChild",
        "a wrong DurChild",
        "overlapping siblings",
    ];
    for (label, fix, expect, _) in tree_mutations() {
        if !parquet_ok.contains(&label) {
            continue;
        }
        for tool in ["njx-export", "njx-ranges"] {
            v.push(Case::new(
                format!("push/pop parquet: {label}"),
                tool,
                expect,
                move |d: &Path| {
                    let mut t = tree();
                    fix(&mut t);
                    let p = write(d, "t.parquet", &pushpop_parquet(&t.csv()));
                    Run::new(args![p]).name("t.parquet")
                },
            ));
        }
    }
    // Range records.
    for (label, fix, expect, line) in record_mutations() {
        for tool in ["njx-ranges", "njx-compile-summary", "njx-flamefold"] {
            v.push(Case::new(
                format!("range records: {label}"),
                tool,
                expect,
                move |d: &Path| {
                    let mut r = tree().records("t");
                    fix(&mut r);
                    let p = write(d, "r.jsonl", jsonl(&r).as_bytes());
                    let name = line.map_or("r.jsonl".to_string(), |l| format!("r.jsonl:{l}"));
                    Run::new(args![p]).name(name)
                },
            ));
        }
    }
    for (label, fix, expect, _) in record_mutations().into_iter().take(4) {
        v.push(Case::new(
            format!("range records csv: {label}"),
            "njx-ranges",
            expect,
            move |d: &Path| {
                let mut r = tree().records("t");
                fix(&mut r);
                let p = write(d, "r.csv", records_csv(&r).as_bytes());
                Run::new(args![p]).name("r.csv")
            },
        ));
    }
    v.extend(sqlite());
    v.extend(payloads());
    v.extend(gpu_records());
    v.extend(folded());
    v.extend(command_lines());
    v.extend(zip_names());
    v.extend(hlo());
    v
}

// ---------------------------------------------------------------- SQLite

type DbFix = fn(&NsysDb);

/// The strings that kernel and memop records of [`sqlite_export`] name: the API call
/// (string 1) and the graph kernels' name (string 8).
fn graph_names(db: &NsysDb) {
    db.string(1, "cudaGraphLaunch_v10000");
    db.string(8, "k");
}

/// The module ranges renamed as a PyTorch profile names its ranges: the export holds
/// kernels, calls and thunk-like ranges, but no XLA module range.
fn not_xla(db: &NsysDb) {
    db.sql(
        "UPDATE NVTX_EVENTS SET text = 'aten::linear' WHERE text LIKE 'XlaModule:%'",
        [],
    );
}

/// `table` copied without `column` (SQLite cannot drop a primary key or an indexed
/// column): schema drift that leaves out a column every reader of the table requires.
fn without_column(db: &NsysDb, table: &str, column: &str) {
    let kept: Vec<String> = db
        .conn
        .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
        .unwrap()
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .filter(|c| c != column)
        .map(|c| format!("\"{c}\""))
        .collect();
    db.conn
        .execute_batch(&format!(
            "CREATE TABLE njx_tmp AS SELECT {} FROM \"{table}\"; DROP TABLE \"{table}\"; \
             ALTER TABLE njx_tmp RENAME TO \"{table}\";",
            kept.join(", ")
        ))
        .unwrap();
}

/// A valid payload for the payload cases: NCCL's all-gather schema (communicator at 0,
/// message size at 8, 16 bytes) in domain 1, and a range carrying one payload of it.
/// Returns the range's row.
fn payload_base(db: &NsysDb) -> i64 {
    use crate::common::payloads::*;
    create_tables(db);
    add_schema(db, &nccl_all_gather(1));
    let row = db.nvtx(
        PUSH_POP,
        300_000,
        Some(310_000),
        gtid(7, 1),
        Some("ncclAllGather"),
        None,
        0,
    );
    let p = Payload::new(16).u64(0, 77).u64(8, 4096);
    set_blob(db, row, &blob(1, NCCL_ALL_GATHER as u64, &p.0));
    row
}

/// The blob of [`payload_base`] with `edit` applied.
fn edit_blob(db: &NsysDb, edit: fn(&mut Vec<u8>)) {
    use crate::common::payloads::*;
    let row = payload_base(db);
    let mut b = blob(1, NCCL_ALL_GATHER as u64, &Payload::new(16).u64(8, 4096).0);
    edit(&mut b);
    set_blob(db, row, &b);
}

/// Structured NVTX payloads (`njx-export --table payloads`): blobs and schemas that do not
/// add up are refused naming the file, table and row; what is only undecodable is written
/// and said; mutated blobs never crash.
fn payloads() -> Vec<Case> {
    use Expect::{Refused, RefusedOrNoted as Rn, Survives};
    let fixes: &[(&str, DbFix, Expect, &str)] = &[
        (
            "a blob shorter than its header",
            |db| edit_blob(db, |b| b.truncate(12)),
            Refused,
            "row",
        ),
        (
            "a blob whose payload size runs past its end",
            |db| edit_blob(db, |b| b[16..24].copy_from_slice(&1000u64.to_le_bytes())),
            Refused,
            "row",
        ),
        (
            "a blob whose payload size is 2^64 - 1",
            |db| edit_blob(db, |b| b[16..24].copy_from_slice(&u64::MAX.to_le_bytes())),
            Refused,
            "row",
        ),
        (
            "a blob whose total size disagrees with its payload",
            |db| edit_blob(db, |b| b[24..32].copy_from_slice(&40u64.to_le_bytes())),
            Refused,
            "row",
        ),
        (
            "a blob with stray bytes after its last payload",
            |db| edit_blob(db, |b| b.extend_from_slice(&[0; 10])),
            Refused,
            "row",
        ),
        (
            "a payload shorter than its static schema",
            |db| {
                use crate::common::payloads::*;
                let row = payload_base(db);
                set_blob(db, row, &blob(1, NCCL_ALL_GATHER as u64, &[0; 8]));
            },
            Refused,
            "row",
        ),
        (
            "binaryData holding a number",
            |db| {
                let row = payload_base(db);
                db.sql(
                    "UPDATE NVTX_EVENTS SET binaryData = 12345 WHERE rowid = ?1",
                    [row],
                );
            },
            Refused,
            "row",
        ),
        (
            "a schema defined twice, differently",
            |db| {
                payload_base(db);
                db.sql(
                    "INSERT INTO NVTX_PAYLOAD_SCHEMAS (domainId, schemaId, type, payloadSize) \
                     VALUES (1, 16777220, 1, 24)",
                    [],
                );
            },
            Refused,
            "NVTX_PAYLOAD_SCHEMAS",
        ),
        (
            "a schema with a null schemaId",
            |db| {
                payload_base(db);
                db.sql(
                    "INSERT INTO NVTX_PAYLOAD_SCHEMAS (domainId, type) VALUES (1, 1)",
                    [],
                );
            },
            Refused,
            "NVTX_PAYLOAD_SCHEMAS",
        ),
        (
            "a schema of negative size",
            |db| {
                payload_base(db);
                db.sql("UPDATE NVTX_PAYLOAD_SCHEMAS SET payloadSize = -16", []);
            },
            Refused,
            "NVTX_PAYLOAD_SCHEMAS",
        ),
        (
            "a schema of 2^62 bytes",
            |db| {
                payload_base(db);
                db.sql(
                    "UPDATE NVTX_PAYLOAD_SCHEMAS SET payloadSize = 4611686018427387904",
                    [],
                );
            },
            Refused,
            "NVTX_PAYLOAD_SCHEMAS",
        ),
        (
            "a schema whose entry 1 is missing",
            |db| {
                payload_base(db);
                db.sql(
                    "UPDATE NVTX_PAYLOAD_SCHEMA_ENTRIES SET idx = 2 WHERE idx = 1",
                    [],
                );
            },
            Refused,
            "NVTX_PAYLOAD_SCHEMA_ENTRIES",
        ),
        (
            "a schema whose entry 0 is defined twice, differently",
            |db| {
                payload_base(db);
                db.sql(
                    "INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId, schemaId, idx, type, \
                     name) VALUES (1, 16777220, 0, 5, 'other')",
                    [],
                );
            },
            Refused,
            "NVTX_PAYLOAD_SCHEMA_ENTRIES",
        ),
        (
            "a field beyond its schema's payload",
            |db| {
                payload_base(db);
                db.sql(
                    "UPDATE NVTX_PAYLOAD_SCHEMA_ENTRIES SET offset = 12 WHERE idx = 1",
                    [],
                );
            },
            Refused,
            "NVTX_PAYLOAD_SCHEMA_ENTRIES",
        ),
        (
            "a field at an offset of 2^63 - 1",
            |db| {
                payload_base(db);
                db.sql(
                    "UPDATE NVTX_PAYLOAD_SCHEMA_ENTRIES SET offset = 9223372036854775807 \
                     WHERE idx = 1",
                    [],
                );
            },
            Refused,
            "NVTX_PAYLOAD_SCHEMA_ENTRIES",
        ),
        (
            "a field at a negative offset",
            |db| {
                payload_base(db);
                db.sql(
                    "UPDATE NVTX_PAYLOAD_SCHEMA_ENTRIES SET offset = -8 WHERE idx = 1",
                    [],
                );
            },
            Refused,
            "NVTX_PAYLOAD_SCHEMA_ENTRIES",
        ),
        (
            "a field beyond a schema with no static size",
            |db| {
                payload_base(db);
                db.sql("UPDATE NVTX_PAYLOAD_SCHEMAS SET payloadSize = NULL", []);
                db.sql(
                    "UPDATE NVTX_PAYLOAD_SCHEMA_ENTRIES SET offset = 64 WHERE idx = 1",
                    [],
                );
            },
            Refused,
            "row",
        ),
        (
            "a jsonTextId that is in no StringIds row",
            |db| {
                let row = payload_base(db);
                db.sql(
                    "UPDATE NVTX_EVENTS SET jsonTextId = 999999 WHERE rowid = ?1",
                    [row],
                );
            },
            Refused,
            "row",
        ),
        (
            "a payload of a schema the export does not define",
            |db| edit_blob(db, |b| b[8..16].copy_from_slice(&99u64.to_le_bytes())),
            Rn,
            "written raw",
        ),
        (
            "a field of a type no NVTX header defines",
            |db| {
                payload_base(db);
                db.sql(
                    "UPDATE NVTX_PAYLOAD_SCHEMA_ENTRIES SET type = 999 WHERE idx = 1",
                    [],
                );
            },
            Rn,
            "does not decode",
        ),
        (
            "a field that is a fixed array of 2^62 bytes",
            |db| {
                payload_base(db);
                db.sql(
                    "UPDATE NVTX_PAYLOAD_SCHEMA_ENTRIES SET type = 32, flags = 16, \
                     arrayOrUnionDetail = 4611686018427387904 WHERE idx = 1",
                    [],
                );
            },
            Refused,
            "NVTX_PAYLOAD_SCHEMA_ENTRIES",
        ),
        (
            "a schema that is a union",
            |db| {
                payload_base(db);
                db.sql("UPDATE NVTX_PAYLOAD_SCHEMAS SET type = 3", []);
            },
            Expect::Accepted,
            "",
        ),
    ];
    let mut v = Vec::new();
    for &(label, fix, expect, says) in fixes {
        v.push(Case::new(
            format!("SQLite payloads: {label}"),
            "njx-export",
            expect,
            move |d: &Path| {
                let path = d.join("e.sqlite");
                let db = sqlite_export(&path);
                fix(&db);
                drop(db);
                let run =
                    Run::new(args!["--table", "payloads", path.to_str().unwrap()]).name("e.sqlite");
                if says.is_empty() { run } else { run.name(says) }
            },
        ));
    }
    // Mutated blobs: any outcome but a crash; a refusal names the file.
    for seed in 0..24u64 {
        v.push(Case::new(
            format!("SQLite payloads: a blob mutated (seed {seed})"),
            "njx-export",
            Survives,
            move |d: &Path| {
                use crate::common::payloads::*;
                let path = d.join("e.sqlite");
                let db = sqlite_export(&path);
                let row = payload_base(&db);
                let mut b = blob(1, NCCL_ALL_GATHER as u64, &Payload::new(16).u64(8, 4096).0);
                let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                for _ in 0..1 + seed % 4 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    match x % 3 {
                        0 => {
                            let at = (x >> 8) as usize % b.len();
                            b[at] ^= (x >> 16) as u8 | 1;
                        }
                        1 => b.truncate((x >> 8) as usize % (b.len() + 1)),
                        _ => b.extend_from_slice(&x.to_le_bytes()),
                    }
                }
                set_blob(&db, row, &b);
                drop(db);
                Run::new(args!["--table", "payloads", path.to_str().unwrap()]).name("e.sqlite")
            },
        ));
    }
    v
}

fn sqlite() -> Vec<Case> {
    use Expect::{Refused, RefusedOrNoted as Rn, Survives};
    let fixes: &[(&str, DbFix, Expect, &[&str])] = &[
        (
            "a textId that is in no StringIds row",
            |db| {
                db.nvtx(
                    PUSH_POP,
                    300_000,
                    Some(310_000),
                    gtid(7, 1),
                    None,
                    Some(999),
                    0,
                );
            },
            Rn,
            &["ranges", "gpu-ranges"],
        ),
        (
            "a range without text or textId",
            |db| {
                db.nvtx(PUSH_POP, 300_000, Some(310_000), gtid(7, 1), None, None, 0);
            },
            Rn,
            &["ranges"],
        ),
        (
            "a push/pop range without an end",
            |db| {
                db.nvtx(PUSH_POP, 300_000, None, gtid(7, 1), Some("open"), None, 0);
            },
            Rn,
            &["ranges", "gpu-ranges"],
        ),
        (
            "a range ending before it starts",
            |db| {
                db.range(310_000, 300_000, gtid(7, 1), "backwards");
            },
            Rn,
            &["ranges"],
        ),
        (
            "a range from i64::MIN to i64::MAX",
            |db| {
                db.range(i64::MIN, i64::MAX, gtid(7, 1), "forever");
            },
            Refused,
            &["ranges", "gpu-ranges"],
        ),
        (
            "a range without a globalTid",
            |db| {
                db.sql(
                "INSERT INTO NVTX_EVENTS (start, end, eventType, text) VALUES (300000, 310000, 59, 'nobody')",
                [],
            );
            },
            Rn,
            &["ranges"],
        ),
        (
            "a thread name whose nameId is in no StringIds row",
            |db| {
                db.sql("UPDATE ThreadNames SET nameId = 4242", []);
            },
            Rn,
            &["modules"],
        ),
        (
            "a kernel whose correlationId matches no call",
            |db| {
                db.kernel(150_000, 160_000, gpid(7), 777);
            },
            Rn,
            &["gpu-ranges"],
        ),
        (
            "a kernel ending before it starts",
            |db| {
                db.sql(
                    "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 5 WHERE correlationId = 1",
                    [],
                );
            },
            Rn,
            &["gpu-ranges", "thunks"],
        ),
        (
            "a kernel at i64::MIN",
            |db| {
                db.sql(
                "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -9223372036854775808 WHERE correlationId = 2",
                [],
            );
            },
            Rn,
            &["gpu-ranges"],
        ),
        (
            "a CUDA call without a globalTid",
            |db| {
                db.sql("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = NULL WHERE correlationId = 3", []);
            },
            Rn,
            &["gpu-ranges"],
        ),
        (
            "two calls with one correlationId",
            |db| {
                db.call(120_000, 121_000, gtid(7, 2), 1);
            },
            Rn,
            &["gpu-ranges"],
        ),
        (
            "an unknown NVTX event type",
            |db| {
                db.nvtx(
                    99_999,
                    300_000,
                    Some(310_000),
                    gtid(7, 1),
                    Some("odd"),
                    None,
                    0,
                );
            },
            Survives,
            &["ranges"],
        ),
        (
            "NVTX_EVENTS without its text column",
            |db| {
                db.conn
                .execute_batch(
                    "CREATE TABLE n2 AS SELECT start, end, eventType, rangeId, globalTid, textId, domainId FROM NVTX_EVENTS; \
                     DROP TABLE NVTX_EVENTS; ALTER TABLE n2 RENAME TO NVTX_EVENTS;",
                )
                .unwrap();
            },
            Survives,
            &["ranges"],
        ),
        (
            "CUPTI_ACTIVITY_KIND_KERNEL without its globalPid column",
            |db| without_column(db, "CUPTI_ACTIVITY_KIND_KERNEL", "globalPid"),
            Refused,
            &["kernels", "gpu-ranges", "modules"],
        ),
        (
            "CUPTI_ACTIVITY_KIND_KERNEL without its deviceId column",
            |db| without_column(db, "CUPTI_ACTIVITY_KIND_KERNEL", "deviceId"),
            Refused,
            &["kernels", "gpu-ranges", "thunks"],
        ),
        (
            "CUPTI_ACTIVITY_KIND_RUNTIME without its correlationId column",
            |db| without_column(db, "CUPTI_ACTIVITY_KIND_RUNTIME", "correlationId"),
            Refused,
            &["kernels", "memops", "gpu-ranges", "modules"],
        ),
        (
            "NVTX_EVENTS without its eventType column",
            |db| without_column(db, "NVTX_EVENTS", "eventType"),
            Refused,
            &["ranges", "kernels", "modules"],
        ),
        (
            "ThreadNames without its nameId column",
            |db| without_column(db, "ThreadNames", "nameId"),
            Refused,
            &["modules"],
        ),
        (
            "StringIds without its value column",
            |db| without_column(db, "StringIds", "value"),
            Refused,
            &["ranges", "kernels", "modules"],
        ),
        (
            "an export whose module ranges are not XLA's (a PyTorch profile)",
            not_xla,
            Refused,
            &["modules", "thunks"],
        ),
        (
            "a thread named twice",
            |db| {
                db.thread_name(
                    gtid(7, 2),
                    1001,
                    "XlaLauncher:#global=5,local=0,process=0,partition=0#",
                );
            },
            Rn,
            &["modules"],
        ),
        // CUDA graphs: the kernel table of nsys 2026 (with `graphId`), graph kernels sharing
        // their launch's correlation id; the names the records need, so that only the graph
        // cells are wrong.
        (
            "a graph kernel whose graphId is text",
            |db| {
                graph_names(db);
                db.kernels_2026();
                db.graph_kernel(0, 150_000, 160_000, gpid(7), 1, Some(3), Some(1));
                db.sql(
                    "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET graphId = 'graph 3' \
                     WHERE graphNodeId = 1",
                    [],
                );
            },
            Refused,
            &["kernels"],
        ),
        (
            "a graph kernel with a negative graphId and graphNodeId",
            |db| {
                graph_names(db);
                db.kernels_2026();
                db.graph_kernel(0, 150_000, 160_000, gpid(7), 1, Some(-3), Some(-1));
            },
            Rn,
            &["kernels"],
        ),
        (
            "a graph copy with a negative graphNodeId",
            |db| {
                graph_names(db);
                db.call(120_000, 121_000, gtid(7, 2), 900);
                db.graph_memcpy(150_000, 150_100, gpid(7), 900, -9_223_372_036_854_775_807);
            },
            Rn,
            &["memops"],
        ),
    ];
    let mut v = Vec::new();
    for &(label, fix, expect, tables) in fixes {
        for &table in tables {
            v.push(Case::new(
                format!("SQLite: {label}, --table {table}"),
                "njx-export",
                expect,
                move |d: &Path| {
                    let path = d.join("e.sqlite");
                    let db = sqlite_export(&path);
                    fix(&db);
                    drop(db);
                    Run::new(args!["--table", table, path.to_str().unwrap()]).name("e.sqlite")
                },
            ));
        }
    }
    // Every tool that reads executions refuses a profile without XLA module ranges, naming
    // it, in one line.
    for (tool, flags) in [
        ("njx-modules", &[][..]),
        ("njx-collectives", &[]),
        ("njx-thunks", &[]),
        ("njx-flamefold", &["--by", "module"]),
    ] {
        v.push(Case::new(
            "SQLite: an export whose module ranges are not XLA's (a PyTorch profile)",
            tool,
            Refused,
            move |d: &Path| {
                let path = d.join("e.sqlite");
                let db = sqlite_export(&path);
                not_xla(&db);
                drop(db);
                let mut args: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
                args.push(path.to_str().unwrap().to_string());
                Run::new(args)
                    .name("e.sqlite")
                    .name("holds no XLA module ranges")
            },
        ));
    }
    for (label, fix) in [
        ("a textId that is in no StringIds row", fixes[0].1),
        ("a range ending before it starts", fixes[3].1),
    ] {
        for tool in ["njx-ranges", "njx-compile-summary"] {
            v.push(Case::new(
                format!("SQLite: {label}"),
                tool,
                Rn,
                move |d: &Path| {
                    let path = d.join("e.sqlite");
                    let db = sqlite_export(&path);
                    fix(&db);
                    drop(db);
                    Run::new(args![path.to_str().unwrap()]).name("e.sqlite")
                },
            ));
        }
    }
    v
}

// ---------------------------------------------------------------- GPU records

fn gpu_records() -> Vec<Case> {
    use Expect::{Refused, RefusedOrNoted as Rn};
    let thunk_fixes: &[(&str, RecFix, Expect, Option<u32>)] = &[
        (
            "an unknown collective kind",
            |r| {
                for t in r.iter_mut().filter(|t| t["comm"] == true) {
                    t["collective"] = json!("all-to-everything");
                }
            },
            Rn,
            None,
        ),
        (
            "a communication thunk without a collective",
            |r| {
                for t in r.iter_mut().filter(|t| t["comm"] == true) {
                    t["collective"] = Value::Null;
                }
            },
            Rn,
            None,
        ),
        (
            "group_size 0",
            |r| {
                for t in r.iter_mut().filter(|t| t["comm"] == true) {
                    t["group_size"] = json!(0);
                }
            },
            Rn,
            None,
        ),
        (
            "an all-gather of 2^64 - 1 bytes over 8",
            |r| {
                for t in r.iter_mut().filter(|t| t["comm"] == true) {
                    t["collective"] = json!("all-gather");
                    t["group_size"] = json!(8);
                    t["message_bytes"] = json!(u64::MAX);
                }
            },
            Rn,
            None,
        ),
        (
            "a collective of no time at all",
            |r| {
                for t in r.iter_mut().filter(|t| t["comm"] == true) {
                    t["dur_ns"] = json!(0);
                    t["hidden_ns"] = json!(0);
                }
            },
            Rn,
            None,
        ),
        (
            "a negative dur_ns",
            |r| r[1]["dur_ns"] = json!(-1000),
            Rn,
            None,
        ),
        (
            "a negative hidden_ns",
            |r| r[1]["hidden_ns"] = json!(-5000),
            Rn,
            None,
        ),
        (
            "a thunk at i64::MAX",
            |r| r[1]["start_ns"] = json!(i64::MAX),
            Rn,
            None,
        ),
        (
            "a thunk execution listed twice",
            |r| {
                let t = r[4].clone();
                r.insert(5, t);
            },
            Rn,
            None,
        ),
        (
            "device 2^32",
            |r| r[0]["device"] = json!(4_294_967_296u64),
            Refused,
            Some(1),
        ),
    ];
    let mut v = Vec::new();
    for &(label, fix, expect, line) in thunk_fixes {
        v.push(Case::new(
            format!("thunk records: {label}"),
            "njx-collectives",
            expect,
            move |d: &Path| {
                let mut r = thunk_records();
                fix(&mut r);
                let p = write(d, "th.jsonl", jsonl(&r).as_bytes());
                let name = line.map_or("th.jsonl".to_string(), |l| format!("th.jsonl:{l}"));
                Run::new(args![p]).name(name)
            },
        ));
    }
    let module_fixes: &[(&str, RecFix, Expect, Option<u32>)] = &[
        (
            "a negative dur_ns",
            |r| r[2]["dur_ns"] = json!(-4000),
            Rn,
            None,
        ),
        (
            "a module at i64::MAX",
            |r| r[2]["start_ns"] = json!(i64::MAX),
            Rn,
            None,
        ),
        (
            "an execution listed twice",
            |r| {
                let m = r[3].clone();
                r.insert(4, m);
            },
            Rn,
            None,
        ),
        (
            "warmup a string",
            |r| r[2]["warmup"] = json!("yes"),
            Refused,
            Some(3),
        ),
    ];
    for &(label, fix, expect, line) in module_fixes {
        v.push(Case::new(
            format!("module records: {label}"),
            "njx-modules",
            expect,
            move |d: &Path| {
                let mut r = module_records();
                fix(&mut r);
                let p = write(d, "m.jsonl", jsonl(&r).as_bytes());
                let name = line.map_or("m.jsonl".to_string(), |l| format!("m.jsonl:{l}"));
                Run::new(args![p]).name(name)
            },
        ));
    }
    // The GPU flame graphs.
    let fold: &[(&str, RecFix, RecFix)] = &[
        (
            "a thunk of negative duration",
            |_| {},
            |t| t[3]["dur_ns"] = json!(-50_000),
        ),
        (
            "a module shorter than its thunks",
            |m| {
                for x in m.iter_mut() {
                    x["dur_ns"] = json!(10);
                }
            },
            |_| {},
        ),
    ];
    for &(label, fix_m, fix_t) in fold {
        v.push(Case::new(
            format!("--by source: {label}"),
            "njx-flamefold",
            Rn,
            move |d: &Path| {
                let (mut m, mut t) = (module_records(), thunk_records());
                fix_m(&mut m);
                fix_t(&mut t);
                let mp = write(d, "m.jsonl", jsonl(&m).as_bytes());
                let tp = write(d, "t.jsonl", jsonl(&t).as_bytes());
                let h = write_dump_dir(d, "xla_dump");
                let name = if label.contains("module") {
                    "m.jsonl"
                } else {
                    "t.jsonl"
                };
                Run::new(args!["--by", "source", mp, tp, "--hlo", h]).name(name)
            },
        ));
    }
    v
}

// ---------------------------------------------------------------- folded

fn folded() -> Vec<Case> {
    use Expect::{Accepted, RefusedOrNoted as Rn, Survives};
    let files: &[(&str, &str, &[&str], Expect)] = &[
        (
            "counts whose sum overflows",
            "a;b 1e308\na;b 1e308\n",
            &[],
            Rn,
        ),
        (
            "integer counts whose sum overflows u64",
            "a;b 18446744073709551615\na;b 18446744073709551615\n",
            &[],
            Rn,
        ),
        ("a NaN count", "a;b NaN\n", &[], Rn),
        ("an infinite count", "a;b inf\n", &[], Rn),
        ("a negative count", "a;b -5\n", &[], Rn),
        ("an empty stack", " 5\n", &[], Rn),
        (
            "a count of 2^64",
            "a;b 18446744073709551616\n",
            &[],
            Survives,
        ),
        (
            "--normalize with a total of 0",
            "a;b 0\nc 0\n",
            &["--normalize"],
            Rn,
        ),
        (
            "--normalize with counts whose sum overflows",
            "a;b 1e308\nc 1e308\n",
            &["--normalize"],
            Rn,
        ),
        ("a stack repeated", "a;b 5\na;b 7\n", &[], Accepted),
    ];
    let mut v = Vec::new();
    for &(label, before, extra, expect) in files {
        v.push(Case::new(
            format!("--diff: {label}"),
            "njx-flamefold",
            expect,
            move |d: &Path| {
                let a = write(d, "before.folded", before.as_bytes());
                let b = write(d, "after.folded", FOLDED_B.as_bytes());
                let mut args = args!["--diff", a, b];
                args.extend(extra.iter().map(|s| s.to_string()));
                Run::new(args).name("before.folded")
            },
        ));
    }
    v
}

// ---------------------------------------------------------------- command lines

fn command_lines() -> Vec<Case> {
    use Expect::{Survives, Usage};
    let lines: &[(&'static str, &[&str], &str, Expect)] = &[
        ("njx-flamefold", &["--width", "0"], "--width", Usage),
        (
            "njx-flamefold",
            &["--width", "18446744073709551616"],
            "--width",
            Usage,
        ),
        ("njx-flamefold", &["--width=-1"], "--width", Usage),
        (
            "njx-flamefold",
            &["--width", "4294967296"],
            "--width",
            Survives,
        ),
        (
            "njx-flamefold",
            &["--top-modules", "1.5"],
            "--top-modules",
            Usage,
        ),
        (
            "njx-flamefold",
            &["--top-modules=-0.1"],
            "--top-modules",
            Usage,
        ),
        (
            "njx-flamefold",
            &["--top-modules", "NaN"],
            "--top-modules",
            Usage,
        ),
        (
            "njx-flamefold",
            &["--top-modules", "inf"],
            "--top-modules",
            Usage,
        ),
        ("njx-flamefold", &["--unit", "furlongs"], "--unit", Usage),
        (
            "njx-compile-summary",
            &["--top", "18446744073709551616"],
            "--top",
            Usage,
        ),
        ("njx-compile-summary", &["--top=-1"], "--top", Usage),
        (
            "njx-compile-summary",
            &["--threshold", "NaN"],
            "--threshold",
            Usage,
        ),
        (
            "njx-compile-summary",
            &["--threshold=-1"],
            "--threshold",
            Usage,
        ),
        (
            "njx-compile-summary",
            &["--threshold", "1e400"],
            "--threshold",
            Usage,
        ),
        (
            "njx-compile-summary",
            &["--threshold", "101"],
            "--threshold",
            Usage,
        ),
        ("njx-export", &["--table", "everything"], "--table", Usage),
        (
            "njx-collectives",
            &["--program-key", "colour"],
            "--program-key",
            Usage,
        ),
        (
            "njx-ranges",
            &["--select", "a{99999999}"],
            "--select",
            Usage,
        ),
    ];
    let mut v = Vec::new();
    for &(tool, extra, option, expect) in lines {
        v.push(Case::new(
            format!("command line {}", extra.join(" ")),
            tool,
            expect,
            move |d: &Path| {
                let input = match tool {
                    "njx-collectives" => write(d, "th.jsonl", jsonl(&thunk_records()).as_bytes()),
                    "njx-export" => write(d, "t.csv", tree().csv().as_bytes()),
                    _ => write(d, "r.jsonl", jsonl(&tree().records("t")).as_bytes()),
                };
                let mut a: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
                if option == "--width" {
                    a.push("--svg".into());
                    a.push(d.join("f.svg").to_str().unwrap().to_string());
                }
                a.push(input);
                let mut run = Run::new(a).output(d.join("f.svg"));
                if expect == Usage {
                    run = run.name(option);
                }
                run
            },
        ));
    }
    v
}

// ---------------------------------------------------------------- zip names

fn zip_names() -> Vec<Case> {
    use Expect::{Refused, RefusedOrNoted as Rn};
    type Names = fn(&mut Vec<ZipEntry>);
    let fixes: &[(&str, Names, &str, Expect)] = &[
        (
            "the push/pop table named twice",
            |e| {
                let mut t = tree();
                t.set(0, "Name", "other");
                e.push(ZipEntry::stored(PUSHPOP, &xz(t.csv().as_bytes())));
            },
            "ranges",
            Refused,
        ),
        (
            "the HLO dump named twice",
            |e| {
                let d = e.iter().find(|x| x.name == DUMP).unwrap().clone();
                e.push(d);
            },
            "thunks",
            Refused,
        ),
        (
            "the GPU projection named twice",
            |e| {
                let d = e.iter().find(|x| x.name == GPU_PROJ).unwrap().clone();
                e.insert(0, d);
            },
            "gpu-ranges",
            Refused,
        ),
        (
            "./report… beside report…",
            |e| {
                let mut d = e.iter().find(|x| x.name == PUSHPOP).unwrap().clone();
                d.name = format!("./{PUSHPOP}");
                e.push(d);
            },
            "ranges",
            Refused,
        ),
        (
            "dump//module… beside dump/module…",
            |e| {
                let mut d = e.iter().find(|x| x.name == DUMP).unwrap().clone();
                d.name = DUMP.replace("dump/", "dump//");
                e.push(d);
            },
            "thunks",
            Refused,
        ),
        (
            "the push/pop table shared and per profile",
            |e| {
                let mut d = e.iter().find(|x| x.name == PUSHPOP).unwrap().clone();
                d.name = format!("{PUSHPOP}/rank0");
                e.push(d);
            },
            "ranges",
            Rn,
        ),
    ];
    let mut v = Vec::new();
    for &(label, fix, table, expect) in fixes {
        v.push(Case::new(
            format!("zip: {label}"),
            "njx-export",
            expect,
            move |d: &Path| {
                let mut e = archive_entries(&[]);
                fix(&mut e);
                let p = write(d, "rank0.zip", &zip_raw(&e, None));
                Run::new(args!["--table", table, p]).name("rank0.zip")
            },
        ));
    }
    v
}

// ---------------------------------------------------------------- HLO

type HloFix = fn(&mut HloProto);

/// Gives the entry computation (10) of `p` the schedule `entry`.
fn schedule(p: &mut HloProto, entry: Vec<i64>) {
    use njx::hlo::proto::{HloScheduleProto, hlo_schedule_proto::InstructionSequence};
    p.hlo_module.as_mut().unwrap().schedule = Some(HloScheduleProto {
        sequences: [(
            10,
            InstructionSequence {
                instruction_ids: entry,
            },
        )]
        .into(),
    });
}

fn hlo() -> Vec<Case> {
    use Expect::{Refused, RefusedOrNoted as Rn, Survives};
    // Through njx-flamefold --by source on records with an XLA dump folder.
    let by_source: &[(&str, HloFix, Expect)] = &[
        (
            "a stack frame whose file location is out of range",
            |p| {
                let i = p
                    .hlo_module
                    .as_mut()
                    .unwrap()
                    .stack_frame_index
                    .as_mut()
                    .unwrap();
                i.stack_frames[1].file_location_id = 99;
            },
            Rn,
        ),
        (
            "a file location whose function name is out of range",
            |p| {
                let i = p
                    .hlo_module
                    .as_mut()
                    .unwrap()
                    .stack_frame_index
                    .as_mut()
                    .unwrap();
                i.file_locations[1].function_name_id = 99;
            },
            Rn,
        ),
        (
            "a file location whose file name is out of range",
            |p| {
                let i = p
                    .hlo_module
                    .as_mut()
                    .unwrap()
                    .stack_frame_index
                    .as_mut()
                    .unwrap();
                i.file_locations[1].file_name_id = 99;
            },
            Rn,
        ),
        (
            "an instruction whose stack frame is out of range",
            |p| {
                let m = p.hlo_module.as_mut().unwrap();
                let f1 = &mut m.computations.last_mut().unwrap().instructions[1];
                f1.metadata.as_mut().unwrap().stack_frame_id = 999;
            },
            Rn,
        ),
        (
            "a fusion calling a computation that does not exist",
            |p| {
                let m = p.hlo_module.as_mut().unwrap();
                m.computations.last_mut().unwrap().instructions[1].called_computation_ids =
                    vec![999];
            },
            Rn,
        ),
        (
            "an entry computation that does not exist",
            |p| {
                p.hlo_module.as_mut().unwrap().entry_computation_id = 999;
            },
            Rn,
        ),
        (
            "two computations with one id",
            |p| {
                let m = p.hlo_module.as_mut().unwrap();
                m.computations[1].id = 1;
            },
            Refused,
        ),
        (
            "two instructions with one name",
            |p| {
                let m = p.hlo_module.as_mut().unwrap();
                m.computations[1].instructions[1].name = "fusion.1".into();
            },
            Refused,
        ),
        (
            "an empty fingerprint",
            |p| {
                let m = p.hlo_module.as_mut().unwrap();
                m.frontend_attributes
                    .as_mut()
                    .unwrap()
                    .map
                    .insert("fingerprint_before_lhs".into(), String::new());
            },
            Survives,
        ),
    ];
    let mut v = Vec::new();
    for &(label, fix, expect) in by_source {
        v.push(Case::new(
            format!("HLO dump: {label}"),
            "njx-flamefold",
            expect,
            move |d: &Path| {
                let mut p = hlo_proto();
                fix(&mut p);
                let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
                let t = write(d, "t.jsonl", jsonl(&thunk_records()).as_bytes());
                write(&d.join("xla_dump"), DUMP_FILE, &p.encode_to_vec());
                let h = d.join("xla_dump").to_str().unwrap().to_string();
                Run::new(args!["--by", "source", m, t, "--hlo", h]).name(DUMP_FILE)
            },
        ));
    }
    // Through njx-export --table thunks on an archive (message sizes, group sizes).
    let in_archive: &[(&str, HloFix, Expect)] = &[
        (
            "an all-reduce of f32[2^40, 2^40]",
            |p| {
                let m = p.hlo_module.as_mut().unwrap();
                let ar = &mut m.computations.last_mut().unwrap().instructions[2];
                ar.shape = Some(crate::common::f32s(&[1 << 40, 1 << 40]));
            },
            Rn,
        ),
        (
            "an all-reduce of f32[-1]",
            |p| {
                let m = p.hlo_module.as_mut().unwrap();
                let ar = &mut m.computations.last_mut().unwrap().instructions[2];
                ar.shape = Some(crate::common::f32s(&[-1]));
            },
            Rn,
        ),
        (
            "replica groups of different sizes",
            |p| {
                use njx::hlo::proto::ReplicaGroup;
                let m = p.hlo_module.as_mut().unwrap();
                let ar = &mut m.computations.last_mut().unwrap().instructions[2];
                ar.replica_groups = vec![
                    ReplicaGroup {
                        replica_ids: vec![0, 1],
                    },
                    ReplicaGroup {
                        replica_ids: vec![2],
                    },
                ];
            },
            Rn,
        ),
        (
            "an empty replica group",
            |p| {
                use njx::hlo::proto::ReplicaGroup;
                let m = p.hlo_module.as_mut().unwrap();
                let ar = &mut m.computations.last_mut().unwrap().instructions[2];
                ar.replica_groups = vec![ReplicaGroup {
                    replica_ids: vec![],
                }];
            },
            Rn,
        ),
    ];
    // The 2026 layout (an all-reduce only as an NCCL range, a top-level thunk no module
    // holds) with schedules that do not add up: the NCCL ranges and the stray thunk are
    // left out and said, naming the archive; nothing crashes or loops.
    let layout_2026: &[(&str, HloFix)] = &[
        ("no schedule", |_| {}),
        ("a schedule naming an instruction the entry lacks", |p| {
            schedule(p, vec![100, 101, 999, 102]);
        }),
        ("a schedule of another computation only", |p| {
            let mut q = p.clone();
            schedule(&mut q, vec![1]);
            let mut s = q.hlo_module.unwrap().schedule.unwrap();
            let seq = s.sequences.remove(&10).unwrap();
            s.sequences.insert(77, seq);
            p.hlo_module.as_mut().unwrap().schedule = Some(s);
        }),
        (
            "a while loop whose body is the entry, with a huge trip count",
            |p| {
                let m = p.hlo_module.as_mut().unwrap();
                let entry = m.computations.last_mut().unwrap();
                let mut w = entry.instructions[0].clone();
                (w.id, w.name, w.opcode) = (105, "while.1".into(), "while".into());
                w.called_computation_ids = vec![10, 10];
                w.backend_config = br#"{"known_trip_count":{"n":"18446744073709551615"}}"#.to_vec();
                entry.instructions.push(w);
                schedule(p, vec![100, 105, 101, 102, 103, 104]);
            },
        ),
        ("a while loop with a trip count that is no number", |p| {
            let m = p.hlo_module.as_mut().unwrap();
            let entry = m.computations.last_mut().unwrap();
            let mut w = entry.instructions[0].clone();
            (w.id, w.name, w.opcode) = (105, "while.1".into(), "while".into());
            w.called_computation_ids = vec![10, 1];
            w.backend_config = b"{\"known_trip_count\":{\"n\":\"-5\"}".to_vec();
            entry.instructions.push(w);
            schedule(p, vec![100, 105, 101, 102, 103, 104]);
        }),
        ("a schedule that matches", |p| {
            schedule(p, vec![100, 101, 102, 103, 104]);
        }),
    ];
    for &(label, fix) in layout_2026 {
        for tool in ["njx-export", "njx-collectives"] {
            v.push(Case::new(
                format!("2026 layout, HLO dump: {label}"),
                tool,
                Rn,
                move |d: &Path| {
                    let mut p = hlo_proto();
                    fix(&mut p);
                    let bytes = zip_raw(
                        &archive_entries(&[
                            (DUMP, xz(&p.encode_to_vec())),
                            (GPU_PROJ, gpu_proj_trace_2026()),
                        ]),
                        None,
                    );
                    let a = write(d, "rank0.zip", &bytes);
                    let mut args = args![a];
                    if tool == "njx-export" {
                        args.insert(0, "thunks".into());
                        args.insert(0, "--table".into());
                    }
                    Run::new(args).name("rank0.zip")
                },
            ));
        }
    }
    for &(label, fix, expect) in in_archive {
        for tool in ["njx-export", "njx-collectives"] {
            v.push(Case::new(
                format!("archive HLO dump: {label}"),
                tool,
                expect,
                move |d: &Path| {
                    let mut p = hlo_proto();
                    fix(&mut p);
                    let bytes = zip_raw(&archive_entries(&[(DUMP, xz(&p.encode_to_vec()))]), None);
                    let a = write(d, "rank0.zip", &bytes);
                    let mut args = args![a];
                    if tool == "njx-export" {
                        args.insert(0, "thunks".into());
                        args.insert(0, "--table".into());
                    }
                    Run::new(args).name("rank0.zip")
                },
            ));
        }
    }
    v
}
