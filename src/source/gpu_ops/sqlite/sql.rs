//! The SQL of the operations' tables: which tables each kind of operation is read from
//! and the columns read from them, the query joining each operation with its CUDA API
//! call, and how many graph launches were traced whole.

use crate::error::Result;
use crate::output::notes::Notes;
use crate::source::gpu_ops::Which;
use crate::source::sqlite::Db;

/// The tables of CUDA API calls.
pub(super) const CALL_TABLES: &[&str] =
    &["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"];

/// The operation-specific columns read into [`Op::vals`], per table.
pub(super) const KERNEL_COLUMNS: &[&str] = &[
    "demangledName",
    "shortName",
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
    "registersPerThread",
    "staticSharedMemory",
    "dynamicSharedMemory",
    "graphId",
    "graphNodeId",
];
const MEMCPY_COLUMNS: &[&str] = &[
    "bytes",
    "copyKind",
    "srcKind",
    "dstKind",
    "srcDeviceId",
    "dstDeviceId",
    "",
    "graphId",
    "graphNodeId",
];
const MEMSET_COLUMNS: &[&str] = &[
    "bytes",
    "",
    "",
    "memKind",
    "",
    "",
    "value",
    "graphId",
    "graphNodeId",
];

/// The tables of one kind of operation, with their columns.
pub(super) fn tables(which: Which) -> &'static [(&'static str, &'static [&'static str])] {
    match which {
        Which::Kernels => &[("CUPTI_ACTIVITY_KIND_KERNEL", KERNEL_COLUMNS)],
        Which::Memops => &[
            ("CUPTI_ACTIVITY_KIND_MEMCPY", MEMCPY_COLUMNS),
            ("CUPTI_ACTIVITY_KIND_MEMSET", MEMSET_COLUMNS),
        ],
    }
}

/// The table in which nsys records each CUDA graph launch as one operation when graphs
/// are traced whole (`nsys profile --cuda-graph-trace=graph`, its default).
pub(super) const GRAPH_TRACE: &str = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";

/// How many graph launches `db` recorded whole, without their kernels and copies.
pub(super) fn whole_graphs(db: &Db) -> Result<u64> {
    if !db.has(GRAPH_TRACE) {
        return Ok(0);
    }
    let n: i64 = db
        .conn()
        .query_row(
            &format!("SELECT COUNT(*) FROM \"{GRAPH_TRACE}\""),
            [],
            |r| r.get(0),
        )
        .map_err(|e| db.sql_error(GRAPH_TRACE, e))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// The SQL of one table's operations joined with their API calls; `None` when the export
/// lacks the table. The columns the join and the records need (times, device, correlation
/// id, process; the calls' thread) are those every table of GPU work and of calls must
/// have ([`crate::source::sqlite::REQUIRED`]): a table without one is refused.
fn table_sql(db: &Db, index: usize, table: &str, vals: &[&str]) -> Result<Option<String>> {
    if !db.has(table) {
        return Ok(None);
    }
    let have = db.columns(table)?;
    let has = |c: &str| !c.is_empty() && have.iter().any(|h| h == c);
    let col = |c: &str| {
        if has(c) {
            format!("o.\"{c}\"")
        } else {
            "NULL".to_string()
        }
    };
    let mut joins = String::new();
    let mut calls: Vec<String> = Vec::new();
    for (i, &c) in CALL_TABLES.iter().enumerate() {
        if !db.has(c) {
            continue;
        }
        db.columns(c)?;
        joins.push_str(&format!(
            " LEFT JOIN \"{c}\" c{i} ON c{i}.correlationId = o.correlationId \
             AND c{i}.globalTid - (c{i}.globalTid & 16777215) = o.globalPid"
        ));
        calls.push(format!("c{i}"));
    }
    let pick = |field: &str| -> String {
        match calls.len() {
            0 => "NULL".to_string(),
            1 => format!("{}.{field}", calls[0]),
            _ => format!(
                "COALESCE({})",
                calls
                    .iter()
                    .map(|c| format!("{c}.{field}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    };
    let name_of = |c: &String| -> Result<String> {
        let i: usize = c[1..].parse().expect("c<index>");
        let has_name = db.columns(CALL_TABLES[i])?.iter().any(|h| h == "nameId");
        Ok(if has_name {
            format!("{c}.nameId")
        } else {
            "NULL".to_string()
        })
    };
    let names = calls.iter().map(name_of).collect::<Result<Vec<_>>>()?;
    let api = match names.len() {
        0 => "NULL".to_string(),
        1 => names[0].clone(),
        _ => format!("COALESCE({})", names.join(", ")),
    };
    let found = if calls.is_empty() {
        "0".to_string()
    } else {
        calls
            .iter()
            .map(|c| format!("({c}.rowid IS NOT NULL)"))
            .collect::<Vec<_>>()
            .join(" + ")
    };
    let vals: Vec<String> = vals.iter().map(|v| col(v)).collect();
    Ok(Some(format!(
        "SELECT {index}, o.rowid, o.deviceId, o.start, o.end, o.correlationId, o.globalPid, \
         {}, {}, {api}, {found}, {}, {}, {} FROM \"{table}\" o{joins}",
        col("streamId"),
        pick("globalTid"),
        pick("end"),
        vals.join(", "),
        pick("start"),
    )))
}

/// The name of the `i`-th table of `tables` (`?` for none).
pub(super) fn table_of(tables: &[(&'static str, &'static [&'static str])], i: i64) -> &'static str {
    tables.get(i as usize).map_or("?", |t| t.0)
}

/// The query of every table of `which` the export has, in launch order (`None`, and a
/// note, when it has none). Columns: table, row, device, start, end, corr, gpid, stream,
/// gtid, api, calls, call end, vals…, call start.
pub(super) fn union_sql(db: &Db, which: Which, notes: &Notes) -> Result<Option<String>> {
    let mut parts = Vec::new();
    let tables = tables(which);
    for (i, (table, vals)) in tables.iter().enumerate() {
        if let Some(sql) = table_sql(db, i, table, vals)? {
            parts.push(sql);
        }
    }
    if parts.is_empty() {
        let names: Vec<&str> = tables.iter().map(|t| t.0).collect();
        notes.note(format!(
            "{}: no {} table: the profile recorded no {}",
            db.place(),
            names.join(" or "),
            match which {
                Which::Kernels => "kernels",
                Which::Memops => "memory copies or sets",
            }
        ));
        return Ok(None);
    }
    let nvals = tables[0].1.len();
    Ok(Some(format!(
        "{} ORDER BY {}",
        parts.join(" UNION ALL "),
        13 + nvals
    )))
}
