//! Which GPU each thread launches work on, for module and thunk records: XLA's
//! `XlaLauncher:#global=G,…#` thread names in the `ThreadNames` table (where nsys keeps
//! the names threads were given, as nsys-jax's `thread-metadata.parquet` does), or, in a
//! profile without them, the `deviceId` of the kernels each thread launched.

use super::{Launcher, Launchers, launcher_device};
use crate::error::Result;
use crate::source::sqlite::{Db, pid_of, tid_of};
use std::collections::BTreeMap;

/// The launcher threads of the export: named, or else by the kernels they launched.
pub fn launchers(db: &Db) -> Result<Launchers> {
    let mut out = Vec::new();
    if db.has("ThreadNames") && db.has("StringIds") {
        // The columns the rule requires, refused naming their table before the join.
        db.columns("ThreadNames")?;
        db.columns("StringIds")?;
        let sql = "SELECT t.globalTid, s.value FROM ThreadNames t \
                   JOIN StringIds s ON s.id = t.nameId ORDER BY t.rowid";
        let rows = query(db, "ThreadNames", sql, |row| {
            Ok((row.get::<_, Option<i64>>(0)?, row.get::<_, String>(1)?))
        })?;
        for (gtid, name) in rows {
            if let (Some(g), Some(device)) = (gtid, launcher_device(&name)) {
                let l = Launcher {
                    pid: pid_of(g),
                    tid: tid_of(g),
                    device,
                };
                if !out.contains(&l) {
                    out.push(l);
                }
            }
        }
    }
    if !out.is_empty() {
        return Ok(Launchers::Named(out));
    }
    // No launcher names: each thread's device is the one most of its kernels ran on.
    let calls: Vec<&str> = ["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"]
        .into_iter()
        .filter(|t| db.has(t))
        .collect();
    if !db.has("CUPTI_ACTIVITY_KIND_KERNEL") || calls.is_empty() {
        return Ok(Launchers::None);
    }
    db.columns("CUPTI_ACTIVITY_KIND_KERNEL")?;
    let mut per_thread: BTreeMap<i64, BTreeMap<u32, u64>> = BTreeMap::new();
    for table in calls {
        db.columns(table)?;
        // A kernel belongs to the call with its correlation id in its process.
        let sql = format!(
            "SELECT r.globalTid, k.deviceId, COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN {table} r ON r.correlationId = k.correlationId \
             AND r.globalTid / 16777216 = k.globalPid / 16777216 GROUP BY 1, 2"
        );
        let rows = query(db, table, &sql, |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, i64>(2)?,
            ))
        })?;
        for (gtid, device, n) in rows {
            *per_thread
                .entry(gtid)
                .or_default()
                .entry(device as u32)
                .or_default() += n as u64;
        }
    }
    for (gtid, devices) in per_thread {
        let Some((&device, _)) = devices
            .iter()
            .max_by_key(|&(d, n)| (*n, std::cmp::Reverse(*d)))
        else {
            continue;
        };
        out.push(Launcher {
            pid: pid_of(gtid),
            tid: tid_of(gtid),
            device,
        });
    }
    Ok(if out.is_empty() {
        Launchers::None
    } else {
        Launchers::Local(out)
    })
}

fn query<T>(
    db: &Db,
    table: &str,
    sql: &str,
    map: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>> {
    db.check_table(table)?;
    let mut stmt = db.conn().prepare(sql).map_err(|e| db.sql_error(table, e))?;
    stmt.query_map([], map)
        .and_then(|rows| rows.collect())
        .map_err(|e| db.sql_error(table, e))
}

/// How many processes of the export ran XLA programs (pushed `XlaModule` ranges): the
/// processes it numbers when devices are numbered per process. Process ids as
/// [`pid_of`] reads them from `globalTid`.
pub fn xla_processes(db: &Db) -> Result<u32> {
    if !db.has("NVTX_EVENTS") {
        return Ok(0);
    }
    let Some(text) = db.nvtx_text()? else {
        return Ok(0);
    };
    let sql = format!(
        "SELECT COUNT(DISTINCT (e.globalTid / 16777216) % 16777216) FROM NVTX_EVENTS e \
         WHERE {text} LIKE 'XlaModule:%'"
    );
    let n = query(db, "NVTX_EVENTS", &sql, |row| row.get::<_, i64>(0))?;
    Ok(n.first().copied().unwrap_or(0) as u32)
}
