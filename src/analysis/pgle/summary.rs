//! The summary of `njx-pgle` on stdout: one row per profile written, as a table for
//! people or as records.

use super::profiles::Profile;
use crate::error::{Error, Result};
use crate::output::{Format, write_records, write_table};
use serde::Serialize;
use std::io::Write;

/// One row of the summary on stdout.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Row {
    /// Module name.
    pub module: String,
    /// Fingerprint.
    pub fingerprint: String,
    /// Instructions written.
    pub instructions: u64,
    /// Of them communication.
    pub communication: u64,
    /// Steady-state module time, ms.
    pub module_ms: f64,
    /// The file written.
    pub file: String,
}

/// The summary rows of the profiles written into `dir`.
pub fn rows(profiles: &[Profile], dir: &std::path::Path) -> Vec<Row> {
    profiles
        .iter()
        .map(|p| Row {
            module: p.module.clone(),
            fingerprint: p.fingerprint.clone(),
            instructions: p.entries.len() as u64,
            communication: p.entries.iter().filter(|e| e.comm).count() as u64,
            module_ms: p.module_ns as f64 / 1e6,
            file: dir.join(p.file_name()).display().to_string(),
        })
        .collect()
}

/// Writes the summary: a table for people, or records.
pub fn write_summary(format: Format, rows: &[Row], out: &mut dyn Write) -> Result<()> {
    if format != Format::Table {
        return write_records(out, format, rows);
    }
    if rows.is_empty() {
        writeln!(out, "No profile written.").map_err(Error::Output)?;
        return out.flush().map_err(Error::Output);
    }
    let mut t = vec![
        [
            "module ms",
            "instructions",
            "communication",
            "program",
            "fingerprint",
            "file",
        ]
        .map(String::from)
        .to_vec(),
    ];
    t.extend(rows.iter().map(|r| {
        vec![
            format!("{:.3}", r.module_ms),
            r.instructions.to_string(),
            r.communication.to_string(),
            r.module.clone(),
            r.fingerprint.clone(),
            r.file.clone(),
        ]
    }));
    write_table(out, &t, &[0, 1, 2])?;
    out.flush().map_err(Error::Output)
}
