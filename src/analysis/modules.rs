//! The steady-state summary of module executions per program (`njx-modules`).

use crate::derived::executions::{Executions, Phase, Warmup};
use crate::derived::partial;
use crate::derived::programs::ProgramFilter;
use crate::error::{Error, Result};
use crate::output::notes::Notes;
use crate::output::numbers::{ms_exact, serialize_ns, serialize_ns_opt};
use crate::output::{Format, write_records, write_table};
use crate::records::{Module, is_autotuning};
use crate::source::records::RecordStream;
use crate::util::stats::Sums;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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
    /// How programs are keyed across profiles.
    pub program_key: crate::derived::executions::KeyBy,
    /// Write the aggregate as a partial result (kind [`PARTIAL`]) instead of the summary.
    pub partial: bool,
}

/// Summary of one program.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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
    /// GPU time per execution, mean, nanoseconds (written to the nearest nanosecond).
    #[serde(serialize_with = "serialize_ns")]
    pub dur_mean_ns: f64,
    /// GPU time per execution, sample standard deviation (null for one execution;
    /// written to the nearest nanosecond).
    #[serde(serialize_with = "serialize_ns_opt")]
    pub dur_std_ns: Option<f64>,
    /// Total GPU time, nanoseconds.
    pub dur_sum_ns: i64,
    /// Share of the total GPU time of all programs, percent.
    pub percent: f64,
}

/// Executions of one program in one phase.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
struct Acc {
    /// Module name (the least, should a program have several).
    name: String,
    n: u64,
    thunks: Sums,
    dur: Sums,
}

impl Acc {
    fn merge(&mut self, o: &Acc) {
        if self.n == 0 || (o.n > 0 && o.name < self.name) {
            self.name.clone_from(&o.name);
        }
        self.n = self.n.saturating_add(o.n);
        self.thunks.merge(o.thunks);
        self.dur.merge(o.dur);
    }
}

/// Module executions aggregated per program and [`Phase`]: what the summary needs of
/// any number of inputs, and the partial result of `njx-modules --partial` (kind
/// [`PARTIAL`]). Its size follows the number of programs, not of ranks or executions.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Partial {
    /// The ranks read into it: carried beside its data in partial results.
    #[serde(skip)]
    pub(crate) seen: crate::derived::ranks::Seen,

    /// What the warm-up rule needs to know of the profiles read.
    warmup: Warmup,
    #[serde(with = "crate::derived::partial::pairs")]
    programs: BTreeMap<(String, Phase), Acc>,
}

/// The kind of [`Partial`]'s partial results.
pub const PARTIAL: &str = "modules";

impl Partial {
    fn add(&mut self, m: &Module, phase: Phase) {
        let a = self.programs.entry((m.program.clone(), phase)).or_default();
        if a.n == 0 || m.name < a.name {
            a.name.clone_from(&m.name);
        }
        a.n += 1;
        a.thunks.add(i64::from(m.thunks));
        a.dur.add(m.dur_ns);
    }

    /// Adds a module record (its warm-up already decided).
    pub fn add_record(&mut self, m: &Module) {
        self.warmup.variants.add(&m.name, &m.program, m.device);
        self.add(m, Phase::of_record(m.warmup));
    }

    /// The summary per program, largest total first.
    pub fn summary(&self, include_warmup: bool, include_autotuning: bool) -> Vec<ProgramSummary> {
        self.summary_of(
            include_warmup,
            include_autotuning,
            &ProgramFilter::default(),
        )
    }

    /// [`Partial::summary`] of the programs `programs` keeps, their shares of the time of
    /// those kept.
    pub fn summary_of(
        &self,
        include_warmup: bool,
        include_autotuning: bool,
        programs: &ProgramFilter,
    ) -> Vec<ProgramSummary> {
        let rule = self.warmup.rule();
        let mut acc: BTreeMap<&str, Acc> = BTreeMap::new();
        for ((program, phase), a) in &self.programs {
            if (!include_warmup && rule.module_is_warmup(program, *phase))
                || (is_autotuning(program) && !include_autotuning)
                || !programs.keeps(program, &a.name)
            {
                continue;
            }
            acc.entry(program).or_default().merge(a);
        }
        // In i128, as the sums are: records read back may carry any times.
        let total: i128 = acc
            .values()
            .map(|a| a.dur.sum())
            .fold(0, i128::saturating_add);
        let mut out: Vec<ProgramSummary> = acc
            .into_iter()
            .map(|(program, a)| ProgramSummary {
                program: program.to_string(),
                name: a.name,
                executions: a.n,
                thunks_mean: a.thunks.mean(a.n),
                thunks_std: a.thunks.std(a.n),
                dur_mean_ns: a.dur.mean(a.n),
                dur_std_ns: a.dur.std(a.n),
                // Past 292 years of GPU time only in made-up records: held at the end.
                dur_sum_ns: a.dur.sum().clamp(i64::MIN.into(), i64::MAX.into()) as i64,
                percent: if total > 0 {
                    100.0 * a.dur.sum() as f64 / total as f64
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
}

/// Summarises module records per program, largest total first.
pub fn summarise(
    modules: impl IntoIterator<Item = Module>,
    include_warmup: bool,
    include_autotuning: bool,
) -> Vec<ProgramSummary> {
    let mut acc = Partial::default();
    modules.into_iter().for_each(|m| acc.add_record(&m));
    acc.summary(include_warmup, include_autotuning)
}

/// The aggregate of the module executions of `inputs`: module records, partial results,
/// or profiles ([`partial::aggregate`]; durations do not depend on clocks, so no
/// alignment is needed).
pub fn read(
    inputs: &[PathBuf],
    key: crate::derived::executions::KeyBy,
    notes: &Notes,
) -> Result<Partial> {
    let hlo = crate::derived::executions::Hlo { dumps: &[], key };
    partial::aggregate(inputs, hlo, notes, Partial::default)
}

impl partial::Aggregate for Partial {
    fn seen(&self) -> &crate::derived::ranks::Seen {
        &self.seen
    }

    fn seen_mut(&mut self) -> &mut crate::derived::ranks::Seen {
        &mut self.seen
    }

    const KIND: &'static str = PARTIAL;
    const TABLE: &'static str = "modules";

    fn add_records(&mut self, s: RecordStream, _: &Notes) -> Result<()> {
        s.read(&mut |m: Module| {
            self.add_record(&m);
            Ok(())
        })
        .map(drop)
    }

    fn add_profile(&mut self, part: &Executions, _: &Notes) -> Result<()> {
        self.warmup.add(part);
        for m in &part.modules {
            self.add(m, Phase::of_profile(m.execution));
        }
        Ok(())
    }

    fn merge(&mut self, other: Self, _: &Notes) -> Result<()> {
        self.warmup.merge(other.warmup);
        for (k, a) in other.programs {
            self.programs.entry(k).or_default().merge(&a);
        }
        Ok(())
    }

    fn warmup(&self) -> &Warmup {
        &self.warmup
    }
}

/// The summary of the module executions of `inputs` (see [`read`]).
pub fn summary(
    options: &Options,
    inputs: &[PathBuf],
    notes: &Notes,
) -> Result<Vec<ProgramSummary>> {
    Ok(read(inputs, options.program_key, notes)?
        .summary(options.include_warmup, options.include_autotuning))
}

/// The summary of `inputs`, written to `out`.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    if options.partial {
        notes.writes_partial();
    }
    let acc = read(inputs, options.program_key, notes)?;
    if options.partial {
        return crate::derived::partial::write(out, &acc);
    }
    let summary = acc.summary(options.include_warmup, options.include_autotuning);
    write(options.format, &summary, out)
}

/// Writes a summary as a table for people, or as records.
pub fn write(format: Format, summary: &[ProgramSummary], out: &mut dyn Write) -> Result<()> {
    if format != Format::Table {
        return write_records(out, format, summary);
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
            ms_exact(s.dur_mean_ns),
            opt(s.dur_std_ns, &ms_exact),
            format!("{:.3}", s.percent),
        ]);
    }
    write_table(out, &rows, &[2, 3, 4, 5, 6])?;
    out.flush().map_err(Error::Output)
}
