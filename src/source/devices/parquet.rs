//! `thread-metadata.parquet` of nsys-jax archives: the names nsys recorded for each
//! thread, of which the launcher threads map executions to devices.

use super::{LAUNCHER, Launcher};
use crate::error::{Error, Result};
use parquet::file::reader::{ChunkReader, FileReader, SerializedFileReader};
use parquet::record::Field;

/// The launcher threads named in a thread-metadata table, in table order.
pub fn read_launchers<R: ChunkReader + 'static>(place: &str, source: R) -> Result<Vec<Launcher>> {
    let perr =
        |e: parquet::errors::ParquetError| Error::data(place, format!("bad Parquet file: {e}"));
    crate::source::parquet_footer::check(place, &source)?;
    let reader = SerializedFileReader::new(source).map_err(perr)?;
    let names: Vec<String> = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let col = |n: &str| {
        names.iter().position(|c| c == n).ok_or_else(|| {
            Error::data(
                place,
                format!(
                    "thread metadata lacks column {n} (found: {})",
                    names.join(", ")
                ),
            )
        })
    };
    let (name_i, pid_i, tid_i) = (col("Name")?, col("PID")?, col("TID")?);
    let mut out = Vec::new();
    let mut rows = reader.get_row_iter(None).map_err(perr)?.enumerate();
    while let Some((row_no, row)) =
        crate::source::parquet_footer::guarded(place, || Ok(rows.next()))?
    {
        let row = row.map_err(perr)?;
        let fields: Vec<&Field> = row.get_column_iter().map(|(_, f)| f).collect();
        let Field::Str(name) = fields[name_i] else {
            continue;
        };
        let Some(caps) = LAUNCHER.captures(name) else {
            continue;
        };
        let int = |f: &Field| match f {
            Field::Long(v) => u64::try_from(*v).ok(),
            Field::Int(v) => u64::try_from(*v).ok(),
            Field::ULong(v) => Some(*v),
            _ => None,
        };
        let (Some(pid), Some(tid)) = (int(fields[pid_i]), int(fields[tid_i])) else {
            return Err(Error::data(
                place,
                format!(
                    "row {}: launcher thread {name:?} has no integer PID/TID",
                    row_no + 1
                ),
            ));
        };
        let device = caps[1].parse().map_err(|_| {
            Error::data(place, format!("row {}: bad device in {name:?}", row_no + 1))
        })?;
        out.push(Launcher { pid, tid, device });
    }
    Ok(out)
}
