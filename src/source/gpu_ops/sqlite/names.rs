//! The names of what the operations hold as numbers: copy directions and memory kinds
//! (the export's enum tables, else nsys' values) and registered strings (`StringIds`).

use crate::error::{Error, Result};
use crate::source::sqlite::Db;
use std::collections::HashMap;
use std::sync::Arc;

/// The copy directions and memory kinds by value: the export's enum tables where it has
/// them, else nsys' values.
pub(super) struct Enums {
    copy: HashMap<i64, String>,
    mem: HashMap<i64, String>,
}

/// `CUDA_MEMCPY_KIND_HTOD` → `HtoD`, `CUDA_MEMCPY_KIND_UVM_DTOH` → `UVM_DtoH`,
/// `CUDA_MEMCPY_KIND_UNKNOWN` → `Unknown`.
fn direction_name(name: &str) -> String {
    let rest = name.strip_prefix("CUDA_MEMCPY_KIND_").unwrap_or(name);
    let (prefix, kind) = match rest.rsplit_once('_') {
        Some((p, k)) => (format!("{p}_"), k),
        None => (String::new(), rest),
    };
    match kind.split_once("TO") {
        Some((a, b)) if a.len() == 1 && b.len() == 1 => format!("{prefix}{a}to{b}"),
        _ => {
            let mut s = kind.to_ascii_lowercase();
            if let Some(f) = s.get_mut(0..1) {
                f.make_ascii_uppercase();
            }
            format!("{prefix}{s}")
        }
    }
}

/// `CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC` → `device_static`.
fn mem_kind_name(name: &str) -> String {
    name.strip_prefix("CUDA_MEMOPR_MEMORY_KIND_")
        .unwrap_or(name)
        .to_ascii_lowercase()
}

/// nsys' `ENUM_CUDA_MEMCPY_OPER` (the same in exports 2023.1 → 2026.1).
const COPY_KINDS: &[&str] = &[
    "UNKNOWN", "HTOD", "DTOH", "HTOA", "ATOH", "ATOA", "ATOD", "DTOA", "DTOD", "HTOH", "PTOP",
    "UVM_HTOD", "UVM_DTOH", "UVM_DTOD",
];

/// nsys' `ENUM_CUDA_MEM_KIND`.
const MEM_KINDS: &[&str] = &[
    "PAGEABLE",
    "PINNED",
    "DEVICE",
    "ARRAY",
    "MANAGED",
    "DEVICE_STATIC",
    "MANAGED_STATIC",
    "UNKNOWN",
];

impl Enums {
    pub(super) fn read(db: &Db) -> Result<Enums> {
        let table = |name: &str, fallback: &[&str], f: fn(&str) -> String| -> Result<_> {
            let mut map: HashMap<i64, String> = HashMap::new();
            if db.has(name) {
                let sql = db.select(name, &["id", "name"], false, None)?;
                db.each_row(name, &sql, |row| {
                    let id: Option<i64> = row.get(0).ok();
                    let value: Option<String> = row.get(1).ok();
                    if let (Some(id), Some(value)) = (id, value) {
                        map.insert(id, f(&value));
                    }
                    Ok(())
                })?;
            } else {
                for (i, n) in fallback.iter().enumerate() {
                    map.insert(i as i64, f(n));
                }
            }
            Ok(map)
        };
        Ok(Enums {
            copy: table("ENUM_CUDA_MEMCPY_OPER", COPY_KINDS, |n| {
                direction_name(&format!(
                    "CUDA_MEMCPY_KIND_{}",
                    n.trim_start_matches("CUDA_MEMCPY_KIND_")
                ))
            })?,
            mem: table("ENUM_CUDA_MEM_KIND", MEM_KINDS, mem_kind_name)?,
        })
    }

    pub(super) fn copy(&self, v: i64) -> String {
        self.copy
            .get(&v)
            .cloned()
            .unwrap_or_else(|| format!("copyKind {v}"))
    }

    pub(super) fn mem(&self, v: i64) -> String {
        self.mem
            .get(&v)
            .cloned()
            .unwrap_or_else(|| format!("memKind {v}"))
    }
}

/// Registered strings by id, looked up as needed and kept.
pub(super) struct Strings<'a> {
    db: &'a Db,
    cache: HashMap<i64, Arc<str>>,
}

impl<'a> Strings<'a> {
    /// No string looked up yet.
    pub(super) fn new(db: &'a Db) -> Strings<'a> {
        Strings {
            db,
            cache: HashMap::new(),
        }
    }

    pub(super) fn get(&mut self, id: i64) -> Result<Arc<str>> {
        if let Some(s) = self.cache.get(&id) {
            return Ok(s.clone());
        }
        if !self.db.has("StringIds") {
            return Err(Error::data(
                self.db.place(),
                format!("no StringIds table for string id {id}"),
            ));
        }
        let value: Option<String> = {
            let mut stmt = self
                .db
                .conn()
                .prepare("SELECT value FROM StringIds WHERE id = ?1")
                .map_err(|e| self.db.sql_error("StringIds", e))?;
            let mut rows = stmt
                .query([id])
                .map_err(|e| self.db.sql_error("StringIds", e))?;
            match rows.next().map_err(|e| self.db.sql_error("StringIds", e))? {
                Some(row) => row.get(0).ok(),
                None => None,
            }
        };
        let value: Arc<str> = value
            .ok_or_else(|| {
                Error::data(
                    self.db.place(),
                    format!("string id {id} names no string of StringIds"),
                )
            })?
            .into();
        self.cache.insert(id, value.clone());
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_and_memory_kinds_read_as_people_write_them() {
        assert_eq!(direction_name("CUDA_MEMCPY_KIND_HTOD"), "HtoD");
        assert_eq!(direction_name("CUDA_MEMCPY_KIND_PTOP"), "PtoP");
        assert_eq!(direction_name("CUDA_MEMCPY_KIND_UVM_DTOH"), "UVM_DtoH");
        assert_eq!(direction_name("CUDA_MEMCPY_KIND_UNKNOWN"), "Unknown");
        assert_eq!(
            mem_kind_name("CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC"),
            "device_static"
        );
    }
}
