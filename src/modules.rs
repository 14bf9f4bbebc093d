//! The steady-state summary of module executions per program (`njx-modules`).

use crate::error::{Error, Result};
use crate::executions;
use crate::notes::Notes;
use crate::output::{Format, RecordWriter, write_table};
use crate::record::Module;
use serde::Serialize;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

/// What `njx-modules` reports.
#[derive(Debug, Clone)]
pub struct Options {
    /// Count initialisation executions too.
    pub include_warmup: bool,
    /// Count autotuning executions (program `unknown`) too.
    pub include_autotuning: bool,
    /// Table, JSON Lines or CSV.
    pub format: Format,
}

/// Summary of one program.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProgramSummary {
    /// Program key.
    pub program: String,
    /// Module name.
    pub name: String,
    /// Executions counted (over all devices).
    pub executions: u64,
    /// Thunks per execution, mean.
    pub thunks_mean: f64,
    /// Thunks per execution, sample standard deviation (null for one execution).
    pub thunks_std: Option<f64>,
    /// GPU time per execution, mean, nanoseconds.
    pub dur_mean_ns: f64,
    /// GPU time per execution, sample standard deviation (null for one execution).
    pub dur_std_ns: Option<f64>,
    /// Total GPU time, nanoseconds.
    pub dur_sum_ns: i64,
    /// Share of the total GPU time of all programs, percent.
    pub percent: f64,
}

#[derive(Default)]
struct Acc {
    name: String,
    n: u64,
    thunks: Stats,
    dur: Stats,
    sum: i64,
}

/// Running mean and variance (Welford), so only aggregates are held.
#[derive(Default)]
struct Stats {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Stats {
    fn add(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }
    fn std(&self) -> Option<f64> {
        (self.n > 1).then(|| (self.m2 / (self.n - 1) as f64).sqrt())
    }
}

/// Summarises module records per program, largest total first.
pub fn summarise(
    modules: impl IntoIterator<Item = Module>,
    include_warmup: bool,
    include_autotuning: bool,
) -> Vec<ProgramSummary> {
    let mut acc: HashMap<String, Acc> = HashMap::new();
    for m in modules {
        if (m.warmup && !include_warmup) || (m.program == "unknown" && !include_autotuning) {
            continue;
        }
        let a = acc.entry(m.program.clone()).or_default();
        if a.n == 0 {
            a.name = m.name.clone();
        }
        a.n += 1;
        a.thunks.add(f64::from(m.thunks));
        a.dur.add(m.dur_ns as f64);
        a.sum += m.dur_ns;
    }
    let total: i64 = acc.values().map(|a| a.sum).sum();
    let mut out: Vec<ProgramSummary> = acc
        .into_iter()
        .map(|(program, a)| ProgramSummary {
            program,
            name: a.name,
            executions: a.n,
            thunks_mean: a.thunks.mean,
            thunks_std: a.thunks.std(),
            dur_mean_ns: a.dur.mean,
            dur_std_ns: a.dur.std(),
            dur_sum_ns: a.sum,
            percent: if total > 0 {
                100.0 * a.sum as f64 / total as f64
            } else {
                0.0
            },
        })
        .collect();
    out.sort_by(|a, b| {
        b.dur_sum_ns
            .cmp(&a.dur_sum_ns)
            .then_with(|| a.program.cmp(&b.program))
    });
    out
}

fn ms(ns: f64) -> String {
    format!("{:.6}", ns / 1e6)
}

/// The summary of the module executions of `inputs`: module records, or profiles read
/// through [`executions::load`].
pub fn summary(
    options: &Options,
    inputs: &[PathBuf],
    notes: &Notes,
) -> Result<Vec<ProgramSummary>> {
    // Durations do not depend on clocks: no alignment needed.
    let modules = executions::read_records(inputs, "modules", false, notes, |e| e.modules)?;
    Ok(summarise(
        modules,
        options.include_warmup,
        options.include_autotuning,
    ))
}

/// The summary of `inputs`, written to `out`.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    let summary = summary(options, inputs, notes)?;
    write(options.format, &summary, out)
}

/// Writes a summary as a table for people, or as records.
pub fn write(format: Format, summary: &[ProgramSummary], out: &mut dyn Write) -> Result<()> {
    if format != Format::Table {
        let mut w = RecordWriter::new(out, format)?;
        summary.iter().try_for_each(|s| w.write(s))?;
        return w.finish();
    }
    if summary.is_empty() {
        writeln!(out, "No module executions in the input.").map_err(Error::Output)?;
        return out.flush().map_err(Error::Output);
    }
    let mut rows = vec![vec![
        "program".to_string(),
        "name".into(),
        "executions".into(),
        "thunks".into(),
        "ms mean".into(),
        "ms std".into(),
        "percent".into(),
    ]];
    let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".to_string(), f);
    for s in summary {
        rows.push(vec![
            s.program.clone(),
            s.name.clone(),
            s.executions.to_string(),
            match s.thunks_std {
                Some(sd) if sd > 0.0 => format!("{:.1} ± {:.1}", s.thunks_mean, sd),
                _ => format!("{:.0}", s.thunks_mean),
            },
            ms(s.dur_mean_ns),
            opt(s.dur_std_ns, &ms),
            format!("{:.3}", s.percent),
        ]);
    }
    write_table(out, &rows, &[2, 3, 4, 5, 6])?;
    out.flush().map_err(Error::Output)
}
