//! `njx::output::parquet`'s writer on records of every shape, read back with the parquet
//! crate's reader: types and nulls in two row groups, a table of several tables (the union
//! of their columns, as the CSV has), a table of no records. (Every record kind the tools
//! write is read back and compared with its JSON records by
//! `readme::every_record_kind_reads_back_from_parquet_as_its_json_records`.)

use bytes::Bytes;
use njx::output::parquet::{ParquetWriter, ROW_GROUP_ROWS};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde::Serialize;

#[derive(Serialize, Default)]
struct Rec {
    profile: String,
    device: Option<u32>,
    dur_ns: i64,
    percent: f64,
    warmup: bool,
}

#[derive(Serialize)]
#[serde(tag = "table", rename_all = "kebab-case")]
enum Union {
    A { name: String, count: u64 },
    B { count: u64, percent: f64 },
}

/// The column names and the rows of a Parquet file.
fn rows(bytes: Vec<u8>) -> (Vec<String>, Vec<Vec<Field>>) {
    let reader = SerializedFileReader::new(Bytes::from(bytes)).unwrap();
    let names = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let rows = reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| {
            r.unwrap()
                .get_column_iter()
                .map(|(_, f)| f.clone())
                .collect()
        })
        .collect();
    (names, rows)
}

#[test]
fn records_read_back_with_their_types_and_nulls() {
    let mut out = Vec::new();
    let mut w = ParquetWriter::new(&mut out);
    let n = ROW_GROUP_ROWS + 3; // two row groups
    for i in 0..n {
        w.write(&Rec {
            profile: format!("p{}", i % 3),
            device: (i % 2 == 0).then_some(i as u32),
            dur_ns: -(i as i64),
            percent: if i == 5 { f64::NAN } else { i as f64 / 2.0 },
            warmup: i % 3 == 0,
        })
        .unwrap();
    }
    w.finish().unwrap();
    let (names, rows) = rows(out);
    assert_eq!(names, ["profile", "device", "dur_ns", "percent", "warmup"]);
    assert_eq!(rows.len(), n);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[0], Field::Str(format!("p{}", i % 3)));
        assert_eq!(
            r[1],
            if i % 2 == 0 {
                Field::Long(i as i64)
            } else {
                Field::Null
            }
        );
        assert_eq!(r[2], Field::Long(-(i as i64)));
        assert_eq!(
            r[3],
            if i == 5 {
                Field::Null
            } else {
                Field::Double(i as f64 / 2.0)
            }
        );
        assert_eq!(r[4], Field::Bool(i % 3 == 0));
    }
}

#[test]
fn a_table_of_several_tables_has_the_union_of_their_columns() {
    let mut out = Vec::new();
    let mut w = ParquetWriter::new(&mut out);
    w.write(&Union::A {
        name: "x".into(),
        count: 1,
    })
    .unwrap();
    w.write(&Union::B {
        count: 2,
        percent: 0.5,
    })
    .unwrap();
    w.finish().unwrap();
    let (names, rows) = rows(out);
    assert_eq!(names, ["table", "name", "count", "percent"]);
    assert_eq!(
        rows,
        [
            vec![
                Field::Str("a".into()),
                Field::Str("x".into()),
                Field::Long(1),
                Field::Null
            ],
            vec![
                Field::Str("b".into()),
                Field::Null,
                Field::Long(2),
                Field::Double(0.5)
            ],
        ]
    );
}

#[test]
fn no_records_still_have_their_columns() {
    let mut out = Vec::new();
    let mut w = ParquetWriter::new(&mut out);
    w.columns_of(&Rec::default()).unwrap();
    w.finish().unwrap();
    let (names, rows) = rows(out);
    assert_eq!(names, ["profile", "device", "dur_ns", "percent", "warmup"]);
    assert!(rows.is_empty());
}

/// njx-collectives as Parquet where a table has no row (thunk records without
/// communication): the columns of the tables asked for, as their CSV has them where there
/// are rows; the report's six tables' union without `--table`.
#[test]
fn collectives_without_communication_still_have_their_columns() {
    use crate::common::{ok, tempdir, write};
    let dir = tempdir();
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/run");
    let ranks = ["rank0.zip", "rank1.zip"].map(|r| example.join(r).to_str().unwrap().to_string());
    let thunks = ok(
        "njx-export",
        &["-q", "--table", "thunks", &ranks[0], &ranks[1]],
    );
    let compute: String = thunks
        .lines()
        .filter(|l| l.contains("\"comm\":false"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(!compute.is_empty() && compute.len() < thunks.len());
    let compute = write(dir.path(), "compute.jsonl", compute.as_bytes());
    for table in [
        None,
        Some("instances"),
        Some("stragglers"),
        Some("lateness"),
    ] {
        let mut args = vec!["-q", "--format", "csv", &ranks[0], &ranks[1]];
        args.extend(table.iter().flat_map(|t| ["--table", *t]));
        let csv = ok("njx-collectives", &args);
        let header: Vec<String> = csv
            .lines()
            .next()
            .unwrap()
            .split(',')
            .map(String::from)
            .collect();
        let pq = dir.path().join("c.parquet");
        let mut args = vec![
            "-q",
            "-f",
            "--format",
            "parquet",
            "-o",
            pq.to_str().unwrap(),
            &compute,
        ];
        args.extend(table.iter().flat_map(|t| ["--table", *t]));
        ok("njx-collectives", &args);
        let (names, rows) = rows(std::fs::read(&pq).unwrap());
        assert_eq!(names, header, "--table {table:?}");
        assert!(rows.is_empty(), "--table {table:?}");
    }
}
