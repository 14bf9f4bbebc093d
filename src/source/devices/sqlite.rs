//! Which GPU each thread launches work on, for module and thunk records: XLA's
//! `XlaLauncher:#global=G,…#` thread names in the `ThreadNames` table (where nsys keeps
//! the names threads were given, as nsys-jax's `thread-metadata.parquet` does), or, in a
//! profile without them, the `deviceId` of the kernels each thread launched.

use super::{Launcher, launcher_device};
use crate::error::Result;
use crate::notes::Notes;
use crate::source::sqlite::{Db, pid_of, tid_of};
use std::collections::BTreeMap;

/// The launcher threads of the export, with their global device.
pub fn launchers(db: &Db, notes: &Notes) -> Result<Vec<Launcher>> {
    let mut out = Vec::new();
    if db.has("ThreadNames") && db.has("StringIds") {
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
        return Ok(out);
    }
    // No launcher names: each thread's device is the one most of its kernels ran on.
    let calls: Vec<&str> = ["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"]
        .into_iter()
        .filter(|t| db.has(t))
        .collect();
    if !db.has("CUPTI_ACTIVITY_KIND_KERNEL") || calls.is_empty() {
        return Ok(out);
    }
    let mut per_thread: BTreeMap<i64, BTreeMap<u32, u64>> = BTreeMap::new();
    for table in calls {
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
    if !out.is_empty() {
        notes.note(format!(
            "{}: no XlaLauncher thread names: devices are the kernels' deviceId, which \
             counts from 0 in every process (pass --no-align and read one process at a \
             time if several processes share device numbers)",
            db.place()
        ));
    }
    Ok(out)
}

fn query<T>(
    db: &Db,
    table: &str,
    sql: &str,
    map: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>> {
    let mut stmt = db.conn().prepare(sql).map_err(|e| db.sql_error(table, e))?;
    stmt.query_map([], map)
        .and_then(|rows| rows.collect())
        .map_err(|e| db.sql_error(table, e))
}
