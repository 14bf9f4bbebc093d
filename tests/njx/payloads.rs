//! `njx-export --table payloads`: the payloads of NVTX events decoded field by field,
//! through the built binary, on the fixture of `common::payloads` (XLA's four schemas at
//! trace annotation levels 0 and 1, NCCL's all-gather schema, a classic one-value
//! payload). Every expected value is one the fixture wrote.

use crate::common::nsys_sqlite::*;
use crate::common::payloads::*;
use crate::common::{json_lines, run, stderr_of, tempdir, zip as zip_of};
use serde_json::{Value, json};
use std::collections::HashMap;

fn payloads(path: &str, extra: &[&str]) -> (Vec<Value>, String) {
    let mut args = vec!["--table", "payloads"];
    args.extend_from_slice(extra);
    args.push(path);
    let out = run("njx-export", &args, b"");
    let err = stderr_of(&out);
    assert!(out.status.success(), "njx-export --table payloads: {err}");
    (json_lines(&String::from_utf8_lossy(&out.stdout)), err)
}

/// (range id, field) → the record.
fn by_field(records: &[Value]) -> HashMap<(u64, String), Value> {
    records
        .iter()
        .map(|r| {
            (
                (
                    r["id"].as_u64().unwrap(),
                    r["field"].as_str().unwrap().to_string(),
                ),
                r.clone(),
            )
        })
        .collect()
}

#[test]
fn xla_and_nccl_payloads_are_decoded_field_by_field() {
    let dir = tempdir();
    let path = dir.path().join("payloads.sqlite");
    let (db, rows) = payload_export(&path);
    drop(db);
    let (records, stderr) = payloads(path.to_str().unwrap(), &[]);
    // XlaModule 3, XlaInstruction 3, XlaInstructionDetailed 10, XlaCollectiveDetailed 17,
    // NCCL 2, the classic value 1.
    assert_eq!(records.len(), 36, "{records:#?}");
    let f = by_field(&records);
    let get = |id: i64, field: &str| f[&(id as u64, field.to_string())].clone();
    let pick = |r: Value| json!([r["schema"], r["schema_id"], r["type"], r["value"]]);

    assert_eq!(
        pick(get(rows.module, "Unique ID")),
        json!(["XlaModule", XLA_MODULE, "int32", 5])
    );
    assert_eq!(
        pick(get(rows.module, "Name")),
        json!(["XlaModule", XLA_MODULE, "string-handle", HANDLES + 1])
    );
    assert_eq!(
        get(rows.module, "Name")["name"],
        "TSL:XlaModule:#hlo_module=jit_step,program_id=5#"
    );
    // Level 0: text only, as handles; the schema's order (source locations first).
    let fusion1: Vec<Value> = records
        .iter()
        .filter(|r| r["id"] == rows.fusion1)
        .map(|r| json!([r["index"], r["field"], r["value"]]))
        .collect();
    assert_eq!(
        fusion1,
        vec![
            json!([0, "Source locations", HANDLES + 11]),
            json!([1, "HLO", HANDLES + 10]),
            json!([2, "Called HLO", HANDLES + 12]),
        ]
    );
    // Level 1: the instruction's unique id is the one its range name carries.
    assert_eq!(
        pick(get(rows.fusion2, "HLO unique ID")),
        json!(["XlaInstructionDetailed", XLA_DETAILED, "int64", FUSION2_ID])
    );
    assert!(
        get(rows.fusion2, "HLO unique ID")["name"]
            .as_str()
            .unwrap()
            .ends_with(&format!("unique_hlo_op_id={FUSION2_ID}#"))
    );
    assert_eq!(get(rows.fusion2, "Source line")["value"], 42);
    assert_eq!(get(rows.fusion2, "Output shape")["value"], HANDLES + 27);
    assert_eq!(
        pick(get(rows.all_gather, "HLO unique ID")),
        json!([
            "XlaCollectiveDetailed",
            XLA_COLLECTIVE,
            "int64",
            ALL_GATHER_ID
        ])
    );
    assert_eq!(get(rows.all_gather, "Source line")["value"], 7);
    assert_eq!(
        pick(get(rows.all_gather, "Is pipelined")),
        json!(["XlaCollectiveDetailed", XLA_COLLECTIVE, "uint8", 1])
    );
    assert_eq!(get(rows.all_gather, "Is SPMD generated")["value"], 0);
    assert_eq!(
        get(rows.all_gather, "Stream annotation")["value"],
        HANDLES + 34
    );
    // NCCL: unnamed schema, named by its id; a communicator above 2^63 stays unsigned.
    assert_eq!(
        pick(get(rows.nccl, "Message size [bytes]")),
        json!(["16777220", NCCL_ALL_GATHER, "size", 1 << 20])
    );
    assert_eq!(
        pick(get(rows.nccl, "NCCL communicator ID")),
        json!(["16777220", NCCL_ALL_GATHER, "uint64", COMMUNICATOR])
    );
    assert_eq!(
        get(rows.nccl, "NCCL communicator ID")["name"],
        "NCCL:ncclAllGather"
    );
    // The classic one-value payload.
    assert_eq!(
        pick(get(rows.step, "value")),
        json!(["value", 0, "uint64", 3])
    );
    for r in &records {
        assert_eq!(r["pid"], PID);
        assert_eq!(r["tid"], TID);
        assert_eq!(r["profile"], "payloads");
    }
    // Every handle is counted in one note (2 + 3 + 8 + 13); nothing else is said.
    assert!(
        stderr.contains(
            "payloads.sqlite: 26 payload fields are strings the application registered with NVTX"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("not decode"), "{stderr}");
    assert!(!stderr.contains("raw"), "{stderr}");
}

/// The records' ids are those of the range records, with the same names.
#[test]
fn payload_ids_join_the_range_records() {
    let dir = tempdir();
    let path = dir.path().join("payloads.sqlite");
    drop(payload_export(&path).0);
    let (records, _) = payloads(path.to_str().unwrap(), &[]);
    let out = run("njx-export", &[path.to_str().unwrap()], b"");
    assert!(out.status.success(), "{}", stderr_of(&out));
    let ranges: HashMap<u64, Value> = json_lines(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .map(|r| (r["id"].as_u64().unwrap(), r))
        .collect();
    for p in &records {
        let r = &ranges[&p["id"].as_u64().unwrap()];
        assert_eq!(r["name"], p["name"]);
        assert_eq!(r["start_ns"], p["start_ns"]);
    }
}

#[test]
fn payloads_as_csv_have_one_column_per_field_of_the_record() {
    let dir = tempdir();
    let path = dir.path().join("payloads.sqlite");
    drop(payload_export(&path).0);
    let out = run(
        "njx-export",
        &[
            "--table",
            "payloads",
            "--format",
            "csv",
            path.to_str().unwrap(),
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "profile,pid,tid,id,start_ns,name,schema,schema_id,payload,index,field,type,value"
    );
    assert_eq!(lines.count(), 36);
    assert!(text.contains(",16777220,16777220,0,1,Message size [bytes],size,1048576\n"));
}

/// A payload whose schema the export does not define is written raw (its bytes in hex)
/// and counted; a field of a type njx does not decode is written null and counted.
#[test]
fn undefined_schemas_and_undecoded_types_are_written_and_said() {
    let dir = tempdir();
    let path = dir.path().join("payloads.sqlite");
    let (db, rows) = payload_export(&path);
    set_blob(&db, rows.nccl, &blob(2, 16_777_299, &[1, 2, 255]));
    // The module's `Unique ID` becomes a 128-bit integer (type 33).
    db.sql(
        "UPDATE NVTX_PAYLOAD_SCHEMA_ENTRIES SET type = 33 WHERE name = 'Unique ID'",
        [],
    );
    drop(db);
    let (records, stderr) = payloads(path.to_str().unwrap(), &[]);
    let f = by_field(&records);
    let raw = &f[&(rows.nccl as u64, String::new())];
    assert_eq!(
        json!([raw["schema"], raw["type"], raw["value"]]),
        json!(["16777299", "raw", "0102ff"])
    );
    let id = &f[&(rows.module as u64, "Unique ID".to_string())];
    assert_eq!(json!([id["type"], id["value"]]), json!(["int128", null]));
    assert!(
        stderr.contains("1 payloads of schemas the export does not define (schema 16777299 of domain 2) written raw"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 payload fields of types njx does not decode"),
        "{stderr}"
    );
}

/// Several payloads on one event: each header after the last payload's end.
#[test]
fn an_event_with_two_payloads_gives_both() {
    let dir = tempdir();
    let path = dir.path().join("payloads.sqlite");
    let (db, rows) = payload_export(&path);
    let one = Payload::new(16).u64(0, 1).u64(8, 100);
    let two = Payload::new(16).u64(0, 2).u64(8, 200);
    let mut both = blob(2, NCCL_ALL_GATHER as u64, &one.0);
    both.extend(blob(2, NCCL_ALL_GATHER as u64, &two.0));
    set_blob(&db, rows.nccl, &both);
    drop(db);
    let (records, _) = payloads(path.to_str().unwrap(), &[]);
    let got: Vec<Value> = records
        .iter()
        .filter(|r| r["id"] == rows.nccl)
        .map(|r| json!([r["payload"], r["field"], r["value"]]))
        .collect();
    assert_eq!(
        got,
        vec![
            json!([0, "NCCL communicator ID", 1]),
            json!([0, "Message size [bytes]", 100]),
            json!([1, "NCCL communicator ID", 2]),
            json!([1, "Message size [bytes]", 200]),
        ]
    );
}

/// Offsets left null after the first entry are laid out as C lays out a struct.
#[test]
fn implicit_offsets_follow_c_alignment() {
    let dir = tempdir();
    let path = dir.path().join("payloads.sqlite");
    let (db, rows) = payload_export(&path);
    // NCCL's send schema, offsets left implicit: comm u64 at 0, size at 8, peer int at 16.
    add_schema(
        &db,
        &Schema {
            domain: 2,
            id: 16_777_225,
            name: None,
            size: 24,
            entries: vec![
                (UINT64, "NCCL communicator ID", 0),
                (SIZE, "Message size [bytes]", 0),
                (INT, "Peer rank", 0),
            ],
        },
    );
    let p = Payload::new(24).u64(0, 9).u64(8, 4096).i32(16, -1);
    set_blob(&db, rows.nccl, &blob(2, 16_777_225, &p.0));
    drop(db);
    let (records, _) = payloads(path.to_str().unwrap(), &[]);
    let got: Vec<Value> = records
        .iter()
        .filter(|r| r["id"] == rows.nccl)
        .map(|r| json!([r["field"], r["type"], r["value"]]))
        .collect();
    assert_eq!(
        got,
        vec![
            json!(["NCCL communicator ID", "uint64", 9]),
            json!(["Message size [bytes]", "size", 4096]),
            json!(["Peer rank", "int", -1]),
        ]
    );
}

/// Inputs without payloads: nothing, and where the export cannot hold any, a note.
#[test]
fn exports_without_payloads_give_no_records() {
    let dir = tempdir();
    let path = dir.path().join("plain.sqlite");
    let db = NsysDb::create(&path);
    db.range(1_000, 2_000, gtid(1, 1), "step");
    drop(db);
    let (records, stderr) = payloads(path.to_str().unwrap(), &[]);
    assert!(records.is_empty());
    assert!(stderr.is_empty(), "{stderr}");
    // An nsys-jax archive keeps no NVTX payloads: refused, saying what is needed.
    let zip = dir.path().join("rank0.zip");
    std::fs::write(
        &zip,
        zip_of(
            &[("report_nvtx_pushpop_trace.csv", b"Start (ns),End (ns)\n")],
            true,
        ),
    )
    .unwrap();
    let out = run(
        "njx-export",
        &["--table", "payloads", zip.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert!(err.contains("rank0.zip"), "{err}");
    assert!(
        err.contains("--table payloads needs the NVTX_EVENTS table"),
        "{err}"
    );
}
