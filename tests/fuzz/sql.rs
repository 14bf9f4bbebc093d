//! SQLite exports changed through SQL on a copy: rows deleted or duplicated, values set to
//! NULL, extremes, text, blobs, or ids that point nowhere, timestamps moved so ranges
//! cross, columns swapped, dropped or renamed, tables dropped or replaced by views that
//! return other types.

use crate::rng::Rng;
use rusqlite::Connection;
use std::path::Path;

/// Tables the readers use, tried more often than others.
const TABLES: &[&str] = &[
    "NVTX_EVENTS",
    "NVTX_EVENTS",
    "NVTX_EVENTS",
    "StringIds",
    "ThreadNames",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "ENUM_NSYS_EVENT_TYPE",
    "META_DATA_EXPORT",
    "NVTX_PAYLOAD_SCHEMAS",
    "NVTX_PAYLOAD_SCHEMA_ENTRIES",
];

const VALUES: &[&str] = &[
    "NULL",
    "0",
    "-1",
    "1",
    "2",
    "-9223372036854775808",
    "9223372036854775807",
    "-9223372036854775807",
    "4611686018427387904",
    "-4611686018427387904",
    "9007199254740993",
    "4294967296",
    "2147483648",
    "72057594037927936",
    "'text'",
    "''",
    "'12'",
    "X'00FF'",
    "1.5",
    "-0.0",
    "1e300",
    "59",
    "60",
    "70",
    "71",
    "75",
    "34",
    "'TSL:XlaModule:#hlo_module=jit_f,program_id=3#'",
    "'XlaLauncher:#global=7,local=0,process=0,partition=0#'",
    "'XlaCompileBackend:#module=jit_f,program_id=18446744073709551616#'",
    "'Thunk:#hlo_op=fusion.1#'",
];

/// Changes the export `bytes` by 1 to `rounds` SQL statements, on a copy in `scratch`;
/// `None` where SQLite cannot open it.
pub fn mutate(rng: &mut Rng, bytes: &[u8], scratch: &Path, rounds: usize) -> Option<Vec<u8>> {
    let path = scratch.join("mutating.sqlite");
    let _ = std::fs::remove_file(scratch.join("mutating.sqlite-journal"));
    std::fs::write(&path, bytes).ok()?;
    {
        let conn = Connection::open(&path).ok()?;
        conn.execute_batch("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;")
            .ok()?;
        let mut tables: Vec<String> = {
            let mut st = conn
                .prepare(
                    "SELECT name FROM sqlite_master WHERE type IN ('table','view') \
                     AND name NOT LIKE 'sqlite_%' ORDER BY name",
                )
                .ok()?;
            st.query_map([], |r| r.get::<_, String>(0))
                .ok()?
                .filter_map(std::result::Result::ok)
                .collect()
        };
        if tables.is_empty() {
            tables.push("NVTX_EVENTS".into());
        }
        for _ in 0..rng.small(rounds) {
            let table = if rng.chance(0.7) {
                rng.pick(TABLES).to_string()
            } else {
                rng.pick(&tables).clone()
            };
            let _ = one(rng, &conn, &table);
        }
    }
    std::fs::read(&path).ok()
}

fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut st = conn.prepare(&format!("PRAGMA table_info(\"{table}\")"))?;
    let cols = st
        .query_map([], |r| r.get::<_, String>(1))?
        .filter_map(std::result::Result::ok)
        .collect();
    Ok(cols)
}

fn one(rng: &mut Rng, conn: &Connection, t: &str) -> rusqlite::Result<()> {
    let cols = columns(conn, t)?;
    if cols.is_empty() {
        return Ok(());
    }
    let max: i64 = conn
        .query_row(
            &format!("SELECT coalesce(max(rowid), 0) FROM \"{t}\""),
            [],
            |r| r.get(0),
        )
        .unwrap_or(0);
    let row = |rng: &mut Rng| rng.below(max.max(1) as usize) as i64 + 1;
    let col = |rng: &mut Rng| rng.pick(&cols).clone();
    let value = |rng: &mut Rng, c: &str| -> String {
        match rng.below(6) {
            0 => {
                // the same column of another row
                format!("(SELECT \"{c}\" FROM \"{t}\" WHERE rowid = {})", row(rng))
            }
            1 => format!("\"{}\"", rng.pick(&cols)),
            2 => format!(
                "\"{c}\" + {}",
                rng.pick(&["1", "-1", "1000", "-1000000", "1000000000"])
            ),
            _ => rng.pick(VALUES).to_string(),
        }
    };
    let which = |rng: &mut Rng| -> String {
        if rng.chance(0.7) {
            format!("rowid = {}", row(rng))
        } else {
            let m = rng.range(2, 6);
            format!("rowid % {m} = {}", rng.below(m))
        }
    };
    if cols.iter().any(|c| c == "binaryData") && rng.chance(0.2) {
        // A payload blob with its bytes mutated (NVTX payload headers and fields).
        let r = row(rng);
        let blob: Option<Vec<u8>> = conn
            .query_row(
                &format!("SELECT CAST(binaryData AS BLOB) FROM \"{t}\" WHERE rowid = {r}"),
                [],
                |x| x.get(0),
            )
            .unwrap_or(None);
        if let Some(mut b) = blob {
            crate::bytes::havoc(rng, &mut b, &[], 4);
            conn.execute(
                &format!("UPDATE \"{t}\" SET binaryData = ?1 WHERE rowid = {r}"),
                [b],
            )?;
            return Ok(());
        }
    }
    let sql = match rng.below(16) {
        0..=5 => {
            let c = col(rng);
            let v = value(rng, &c);
            format!("UPDATE \"{t}\" SET \"{c}\" = {v} WHERE {}", which(rng))
        }
        6 => {
            // start and end swapped, or two columns
            let (a, b) = if cols.iter().any(|c| c == "start") && cols.iter().any(|c| c == "end") {
                ("start".to_string(), "end".to_string())
            } else {
                (col(rng), col(rng))
            };
            format!(
                "UPDATE \"{t}\" SET \"{a}\" = \"{b}\", \"{b}\" = \"{a}\" WHERE {}",
                which(rng)
            )
        }
        7 | 8 => format!("DELETE FROM \"{t}\" WHERE {}", which(rng)),
        9 => {
            let times = if rng.chance(0.05) { 10 } else { 1 };
            let mut s = String::new();
            for _ in 0..times {
                s += &format!(
                    "INSERT OR IGNORE INTO \"{t}\" SELECT * FROM \"{t}\" WHERE {};",
                    which(rng)
                );
            }
            s
        }
        10 => format!("DROP TABLE \"{t}\""),
        11 | 12 => {
            // a view with one column replaced
            let c = col(rng);
            let replaced = (*rng.pick(&[
                "NULL",
                "'x'",
                "X'00'",
                "1.5",
                "-1",
                "9223372036854775807",
                "CAST(\"{c}\" AS TEXT)",
                "CAST(\"{c}\" AS REAL) + 0.5",
                "\"{c}\" * 1000000000000",
            ]))
            .replace("{c}", &c);
            let list: Vec<String> = cols
                .iter()
                .map(|x| {
                    if *x == c {
                        format!("{replaced} AS \"{x}\"")
                    } else {
                        format!("\"{x}\"")
                    }
                })
                .collect();
            format!(
                "ALTER TABLE \"{t}\" RENAME TO \"{t}__old\"; \
                 CREATE VIEW \"{t}\" AS SELECT {} FROM \"{t}__old\"",
                list.join(", ")
            )
        }
        13 => format!("ALTER TABLE \"{t}\" DROP COLUMN \"{}\"", col(rng)),
        14 => format!(
            "ALTER TABLE \"{t}\" RENAME COLUMN \"{}\" TO \"{}\"",
            col(rng),
            rng.pick(crate::text::HEADERS)
        ),
        _ => {
            // a new row: a copy of one with every column changed a little
            let c = col(rng);
            let v = value(rng, &c);
            format!(
                "INSERT OR IGNORE INTO \"{t}\" SELECT * FROM \"{t}\" WHERE rowid = {r}; \
                 UPDATE \"{t}\" SET \"{c}\" = {v} WHERE rowid = (SELECT max(rowid) FROM \"{t}\")",
                r = row(rng)
            )
        }
    };
    conn.execute_batch(&sql)
}
