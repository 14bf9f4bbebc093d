//! The CUDA API calls of an export (`CUPTI_ACTIVITY_KIND_RUNTIME`, and `…_DRIVER` where
//! the export has it), every one, not only those that launched GPU work: their names
//! through `StringIds` (decided once per distinct name, [`Strings`]), their times and
//! threads. And which CUDA activity tables the export has at all, for the rules that
//! must say a table is missing rather than that nothing happened.

use super::names::Strings;
use super::sql::CALL_TABLES;
use crate::error::Result;
use crate::records::ApiCall;
use crate::source::sqlite::{Db, pid_of, tid_of};
use std::collections::HashMap;
use std::sync::Arc;

/// Which CUDA activity tables an export has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CudaTables {
    /// `CUPTI_ACTIVITY_KIND_KERNEL`.
    pub kernels: bool,
    /// `CUPTI_ACTIVITY_KIND_MEMCPY`.
    pub memcpy: bool,
    /// `CUPTI_ACTIVITY_KIND_MEMSET`.
    pub memset: bool,
    /// `CUPTI_ACTIVITY_KIND_RUNTIME` or `…_DRIVER`, with a `nameId` column (calls
    /// without names say nothing of what was called).
    pub calls: bool,
    /// The memcpy table has both `srcKind` and `dstKind` (pageable or pinned).
    pub memcpy_kinds: bool,
}

/// The CUDA activity tables of `db`.
pub fn tables(db: &Db) -> Result<CudaTables> {
    let memcpy = db.has("CUPTI_ACTIVITY_KIND_MEMCPY");
    let memcpy_kinds = memcpy && {
        let have = db.columns("CUPTI_ACTIVITY_KIND_MEMCPY")?;
        ["srcKind", "dstKind"]
            .iter()
            .all(|c| have.iter().any(|h| h == c))
    };
    let mut calls = false;
    for table in CALL_TABLES.iter().filter(|t| db.has(t)) {
        calls |= db.columns(table)?.iter().any(|c| c == "nameId");
    }
    Ok(CudaTables {
        kernels: db.has("CUPTI_ACTIVITY_KIND_KERNEL"),
        memcpy,
        memset: db.has("CUPTI_ACTIVITY_KIND_MEMSET"),
        calls: calls && db.has("StringIds"),
        memcpy_kinds,
    })
}

/// Hands each call of `db` whose name `keep` accepts to `emit` (the calls' tables in
/// order, each in row order); rows without times or a name are skipped. A name id that
/// `StringIds` lacks is an error naming it. Returns how many were handed.
pub fn read(
    db: &Db,
    profile: &Arc<str>,
    keep: &dyn Fn(&str) -> bool,
    emit: &mut dyn FnMut(ApiCall) -> Result<()>,
) -> Result<u64> {
    let mut strings = Strings::new(db);
    // Each distinct name decided once: kept (its name) or not.
    let mut kept: HashMap<i64, Option<Arc<str>>> = HashMap::new();
    let mut n = 0;
    for &table in CALL_TABLES.iter().filter(|t| db.has(t)) {
        if !db.columns(table)?.iter().any(|c| c == "nameId") || !db.has("StringIds") {
            continue;
        }
        let sql = db.select(
            table,
            &["start", "end", "globalTid", "correlationId", "nameId"],
            true,
            None,
        )?;
        db.each_row(table, &sql, |row| {
            let rowid = db.rowid(table, row)?;
            let start = db.time(table, row, 1, "start", rowid)?;
            let end = db.time(table, row, 2, "end", rowid)?;
            let gtid = db.int(table, row, 3, "globalTid", rowid)?;
            let corr = db.int(table, row, 4, "correlationId", rowid)?;
            let name = db.int(table, row, 5, "nameId", rowid)?;
            let (Some(start), Some(end), Some(gtid), Some(name)) = (start, end, gtid, name) else {
                return Ok(());
            };
            let name = match kept.get(&name) {
                Some(k) => k.clone(),
                None => {
                    let s = strings.get(name)?;
                    let k = keep(&s).then_some(s);
                    kept.insert(name, k.clone());
                    k
                }
            };
            let Some(name) = name else {
                return Ok(());
            };
            n += 1;
            emit(ApiCall {
                profile: profile.clone(),
                pid: pid_of(gtid),
                tid: tid_of(gtid),
                correlation_id: corr.and_then(|c| u64::try_from(c).ok()),
                start_ns: start,
                end_ns: end,
                dur_ns: end - start,
                name,
            })
        })?;
    }
    Ok(n)
}
