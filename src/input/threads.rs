//! `thread-metadata.parquet`: the names nsys recorded for each thread. XLA names the
//! threads that launch work on each GPU `XlaLauncher:#global=G,local=L,process=P,
//! partition=S#` (`slice=` before xla#29725); that is how executions map to devices.

use crate::error::{Error, Result};
use parquet::file::reader::{ChunkReader, FileReader, SerializedFileReader};
use parquet::record::Field;
use regex::Regex;
use std::sync::LazyLock;

/// A thread that launches work on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launcher {
    /// Process id.
    pub pid: u64,
    /// Thread id.
    pub tid: u64,
    /// Global device id.
    pub device: u32,
}

static LAUNCHER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^XlaLauncher:#global=(\d+),local=\d+,process=\d+,(?:partition|slice)=\d+#$")
        .expect("valid regex")
});

/// The global device of a launcher thread's name, `None` for other threads.
pub fn launcher_device(name: &str) -> Option<u32> {
    LAUNCHER.captures(name)?[1].parse().ok()
}

/// The launcher threads named in a thread-metadata table, in table order.
pub fn read_launchers<R: ChunkReader + 'static>(place: &str, source: R) -> Result<Vec<Launcher>> {
    let perr =
        |e: parquet::errors::ParquetError| Error::data(place, format!("bad Parquet file: {e}"));
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
    for (row_no, row) in reader.get_row_iter(None).map_err(perr)?.enumerate() {
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
