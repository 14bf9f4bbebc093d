//! The GPUs a profile ran on, as nsys recorded them in `TARGET_INFO_GPU`: their model
//! name and memory. nsys-jax archives keep that table in `device-metadata.parquet`, its
//! columns named by pandas as `('TARGET_INFO_GPU', 'name')` (seen in the pax archives of
//! `../shared/data`, written by nsys-jax in 2024); SQLite exports have the table itself
//! (columns `id`, `name`, `totalMemory`, nsys's export schema 3.x).

use crate::error::{Error, Result};
use crate::source::sqlite::Db;
use parquet::file::reader::{ChunkReader, FileReader, SerializedFileReader};
use parquet::record::Field;
use serde::{Deserialize, Serialize};

/// One GPU of a profile.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Gpu {
    /// Its model, as the driver names it (`NVIDIA A100-SXM4-40GB`).
    pub name: String,
    /// Its memory, bytes, where recorded.
    pub total_memory: Option<u64>,
}

/// The member of an nsys-jax archive that holds `TARGET_INFO_GPU`.
pub const DEVICES_MEMBER: &str = "device-metadata.parquet";

/// The GPUs of a `device-metadata.parquet`; none where it lacks the name column.
pub fn from_parquet<R: ChunkReader + 'static>(place: &str, source: R) -> Result<Vec<Gpu>> {
    let perr =
        |e: parquet::errors::ParquetError| Error::data(place, format!("bad Parquet file: {e}"));
    crate::source::parquet_footer::check(place, &source)?;
    let reader = SerializedFileReader::new(source).map_err(perr)?;
    let names: Vec<String> = (reader.metadata().file_metadata().schema_descr().columns())
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let col = |n: &str| {
        names
            .iter()
            .position(|c| c == &format!("('TARGET_INFO_GPU', '{n}')") || c == n)
    };
    let Some(name_i) = col("name") else {
        return Ok(Vec::new());
    };
    let memory_i = col("totalMemory");
    let mut out = Vec::new();
    let mut rows = reader.get_row_iter(None).map_err(perr)?;
    while let Some(row) = crate::source::parquet_footer::guarded(place, || Ok(rows.next()))? {
        let row = row.map_err(perr)?;
        let fields: Vec<&Field> = row.get_column_iter().map(|(_, f)| f).collect();
        let Some(Field::Str(name)) = fields.get(name_i) else {
            continue;
        };
        let total_memory = memory_i.and_then(|i| match fields.get(i) {
            Some(Field::Long(v)) => u64::try_from(*v).ok(),
            Some(Field::Int(v)) => u64::try_from(*v).ok(),
            Some(Field::ULong(v)) => Some(*v),
            Some(Field::Double(v)) if *v >= 0.0 => Some(*v as u64),
            _ => None,
        });
        out.push(Gpu {
            name: name.clone(),
            total_memory,
        });
    }
    Ok(out)
}

/// The GPUs of an SQLite export's `TARGET_INFO_GPU`; none without the table.
pub fn from_sqlite(db: &Db) -> Result<Vec<Gpu>> {
    const TABLE: &str = "TARGET_INFO_GPU";
    if !db.has(TABLE) {
        return Ok(Vec::new());
    }
    let sql = db.select(TABLE, &["name", "totalMemory"], false, None)?;
    let mut out = Vec::new();
    db.each_row(TABLE, &sql, |row| {
        let name: Option<String> = row.get(0).unwrap_or(None);
        let memory: Option<i64> = row.get(1).unwrap_or(None);
        if let Some(name) = name {
            out.push(Gpu {
                name,
                total_memory: memory.and_then(|m| u64::try_from(m).ok()),
            });
        }
        Ok(())
    })?;
    Ok(out)
}
