//! The report's default tables from a [`Partial`]: bus bandwidth, hidden share, wait per
//! module execution and stragglers, initialisation left out unless asked for.

use super::aggregate::{Inst, InstKey, Partial};
use super::rows::Row;
use crate::derived::executions::Phase;
use crate::derived::programs::ProgramFilter;
use crate::util::stats::mean_std;
use std::collections::BTreeMap;

/// The collective instances that count, in key order.
type Instances<'a> = [(&'a InstKey, &'a Inst)];

impl Partial {
    /// The report's tables, initialisation left out unless `include_warmup`, of the
    /// programs `programs` keeps.
    pub(super) fn report(&self, include_warmup: bool, programs: &ProgramFilter) -> Vec<Row> {
        let rule = self.warmup.rule();
        let counts = |program: &str, phase: Phase| {
            (include_warmup || !rule.thunk_is_warmup(program, phase))
                && self.keeps(programs, program)
        };
        let instances: Vec<(&InstKey, &Inst)> = self
            .instances
            .iter()
            .filter(|(k, _)| counts(&k.0, k.4))
            .collect();
        let by_comm = self.programs_by_communication(&counts);
        let mut rows = bandwidth_rows(&instances);
        rows.extend(self.hidden_rows(&counts));
        rows.extend(self.hidden_by_program_rows(&counts, &by_comm));
        rows.extend(self.wait_rows(&instances, &counts));
        rows.extend(self.straggler_rows(&instances, &counts));
        rows.extend(self.straggler_by_program_rows(&instances, &counts, &by_comm));
        rows
    }

    /// The programs with communication that counts, the most communication time (hidden
    /// or not) first, then by key.
    fn programs_by_communication(&self, counts: &impl Fn(&str, Phase) -> bool) -> Vec<&str> {
        let mut total: BTreeMap<&str, i64> = BTreeMap::new();
        for ((_, program, phase), (_, f)) in &self.hidden {
            if counts(program, *phase) {
                let t = total.entry(program).or_default();
                *t = t.saturating_add(*f);
            }
        }
        let mut programs: Vec<(&str, i64)> = total.into_iter().collect();
        programs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        programs.into_iter().map(|(p, _)| p).collect()
    }

    /// The module name of `program`.
    fn name_of(&self, program: &str) -> String {
        self.names.get(program).cloned().unwrap_or_default()
    }

    /// The `hidden` table: hidden time over full time, per collective and overall.
    fn hidden_rows(&self, counts: &impl Fn(&str, Phase) -> bool) -> Vec<Row> {
        let mut rows = Vec::new();
        // Hidden share.
        let mut hidden: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
        for ((collective, program, phase), (h, f)) in &self.hidden {
            if counts(program, *phase) {
                let e = hidden.entry(collective).or_default();
                e.0 = e.0.saturating_add(*h);
                e.1 = e.1.saturating_add(*f);
            }
        }
        let overall = hidden.values().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        for (collective, (h, total)) in hidden
            .into_iter()
            .chain(std::iter::once(("overall", overall)))
        {
            rows.push(Row::Hidden {
                collective: collective.to_string(),
                hidden_ratio: ratio(h, total),
                hidden_ns: h,
                total_ns: total,
            });
        }
        rows
    }

    /// The `hidden-by-program` table: the `hidden` table of each program of `programs`
    /// (in that order), its collectives then its overall.
    fn hidden_by_program_rows(
        &self,
        counts: &impl Fn(&str, Phase) -> bool,
        programs: &[&str],
    ) -> Vec<Row> {
        // (program, collective) → (hidden, full time); collective None: the program's
        // overall (first in key order).
        let mut hidden: BTreeMap<(&str, Option<&str>), (i64, i64)> = BTreeMap::new();
        for ((collective, program, phase), (h, f)) in &self.hidden {
            if counts(program, *phase) {
                for key in [
                    (program.as_str(), Some(collective.as_str())),
                    (program, None),
                ] {
                    let e = hidden.entry(key).or_default();
                    e.0 = e.0.saturating_add(*h);
                    e.1 = e.1.saturating_add(*f);
                }
            }
        }
        let mut rows = Vec::new();
        for &program in programs {
            let name = self.name_of(program);
            let of_program = hidden
                .range((program, None)..)
                .take_while(|(k, _)| k.0 == program);
            let (overall, collectives): (Vec<_>, Vec<_>) =
                of_program.partition(|(k, _)| k.1.is_none());
            for ((_, collective), (h, total)) in collectives.into_iter().chain(overall) {
                rows.push(Row::HiddenByProgram {
                    program: program.to_string(),
                    name: name.clone(),
                    collective: collective.unwrap_or("overall").to_string(),
                    hidden_ratio: ratio(*h, *total),
                    hidden_ns: *h,
                    total_ns: *total,
                });
            }
        }
        rows
    }

    /// The `wait` table: per program, the wait summed per module execution, mean ± std
    /// over executions, and its share of the module's GPU time; greatest mean first.
    fn wait_rows(&self, instances: &Instances, counts: &impl Fn(&str, Phase) -> bool) -> Vec<Row> {
        // Wait per module execution.
        let mut wait: BTreeMap<(&str, u32), f64> = BTreeMap::new();
        for (k, i) in instances {
            // In f64: partial results read back carry whatever times they were given.
            *wait.entry((k.0.as_str(), k.1)).or_default() += i.hi as f64 - i.lo as f64;
        }
        let module_times = self.module_times(counts);
        let mut per_program: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for ((program, _), w) in wait {
            per_program.entry(program).or_default().push(w);
        }
        let mut wait_rows: Vec<Row> = per_program
            .into_iter()
            .map(|(program, w)| {
                let module_mean = module_times.get(program).copied().unwrap_or(0.0);
                let (mean, std) = mean_std(&w);
                Row::Wait {
                    name: self.name_of(program),
                    program: program.to_string(),
                    executions: w.len(),
                    wait_mean_ns: mean,
                    wait_std_ns: std,
                    module_mean_ns: module_mean,
                    wait_percent: if module_mean > 0.0 {
                        100.0 * mean / module_mean
                    } else {
                        0.0
                    },
                }
            })
            .collect();
        wait_rows.sort_by(|a, b| match (a, b) {
            (
                Row::Wait {
                    wait_mean_ns: x, ..
                },
                Row::Wait {
                    wait_mean_ns: y, ..
                },
            ) => y.total_cmp(x),
            _ => std::cmp::Ordering::Equal,
        });
        wait_rows
    }

    /// Mean module GPU time per program, over its executions × devices in the phases
    /// counted (each from its first thunk's start to its last thunk's end on its device).
    fn module_times(&self, counts: &impl Fn(&str, Phase) -> bool) -> BTreeMap<&str, f64> {
        let mut sums: BTreeMap<&str, (u64, i64)> = BTreeMap::new();
        for ((program, phase), &(n, ns)) in &self.module_time {
            if counts(program, *phase) {
                let t = sums.entry(program).or_default();
                t.0 = t.0.saturating_add(n);
                t.1 = t.1.saturating_add(ns);
            }
        }
        sums.into_iter()
            .map(|(program, (n, ns))| (program, ns as f64 / n as f64))
            .collect()
    }

    /// The `stragglers` table.
    fn straggler_rows(
        &self,
        instances: &Instances,
        counts: &impl Fn(&str, Phase) -> bool,
    ) -> Vec<Row> {
        let mut rows = Vec::new();
        for (device, (instances, last, lateness)) in last_arrivals(self, instances, counts, None) {
            rows.push(Row::Stragglers {
                device,
                instances,
                last,
                last_percent: 100.0 * last as f64 / instances as f64,
                lateness_mean_ns: (last > 0).then(|| lateness / last as f64),
            });
        }
        rows
    }

    /// The `stragglers-by-program` table: the `stragglers` table of each program of
    /// `programs`, in that order.
    fn straggler_by_program_rows(
        &self,
        instances: &Instances,
        counts: &impl Fn(&str, Phase) -> bool,
        programs: &[&str],
    ) -> Vec<Row> {
        let mut rows = Vec::new();
        for &program in programs {
            let name = self.name_of(program);
            for (device, (n, last, lateness)) in
                last_arrivals(self, instances, counts, Some(program))
            {
                rows.push(Row::StragglersByProgram {
                    program: program.to_string(),
                    name: name.clone(),
                    device,
                    instances: n,
                    last,
                    last_percent: 100.0 * last as f64 / n as f64,
                    lateness_mean_ns: (last > 0).then(|| lateness / last as f64),
                });
            }
        }
        rows
    }
}

/// Per device, of the programs that count (of `only` alone, where given): the
/// collective instances it took part in (those of more than one device), how often it
/// was last, and its lateness summed over those; devices of no such instance left out.
fn last_arrivals(
    acc: &Partial,
    instances: &Instances,
    counts: &impl Fn(&str, Phase) -> bool,
    only: Option<&str>,
) -> BTreeMap<u32, (usize, usize, f64)> {
    let of = |program: &str| only.is_none_or(|o| o == program);
    let mut seen: BTreeMap<u32, (usize, usize, f64)> = BTreeMap::new();
    for ((device, program, phase), n) in &acc.taking_part {
        if of(program) && counts(program, *phase) {
            let e = seen.entry(*device).or_default();
            e.0 =
                e.0.saturating_add(usize::try_from(*n).unwrap_or(usize::MAX));
        }
    }
    for (k, i) in instances {
        if !of(&k.0) {
            continue;
        }
        if i.count > 1 {
            let e = seen.entry(i.last.1).or_default();
            e.1 += 1;
            e.2 += i.hi as f64 - i.last.0 as f64;
        } else if let Some(e) = seen.get_mut(&i.last.1) {
            // Alone in its instance: not a straggler's instance.
            e.0 = e.0.saturating_sub(1);
        }
    }
    seen.retain(|_, e| e.0 > 0);
    seen
}

/// `hidden` over `total`, 0 where nothing was communicated.
fn ratio(hidden: i64, total: i64) -> f64 {
    if total > 0 {
        hidden as f64 / total as f64
    } else {
        0.0
    }
}

/// The `bandwidth` table: per collective and message size, the mean and standard error
/// over instances of the fastest device's bus bandwidth.
fn bandwidth_rows(instances: &Instances) -> Vec<Row> {
    let mut rows = Vec::new();
    // Bandwidth: fastest device per instance.
    let mut by_size: BTreeMap<(String, u64), Vec<f64>> = BTreeMap::new();
    for (_, i) in instances {
        let (Some(kind), Some(size)) = i.kind.clone() else {
            continue;
        };
        if let Some(best) = i.best_busbw.filter(|b| b.is_finite()) {
            by_size.entry((kind, size)).or_default().push(best);
        }
    }
    for ((collective, message_bytes), v) in by_size {
        let (mean, std) = mean_std(&v);
        rows.push(Row::Bandwidth {
            collective,
            message_bytes,
            busbw_mean_gbps: mean,
            busbw_stderr_gbps: std.map(|s| s / (v.len() as f64).sqrt()),
            count: v.len(),
        });
    }
    rows
}

/// What the report's findings need of one program's communication in steady state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProgramComm {
    /// Its module name.
    pub name: String,
    /// Collective kind → (exposed, hidden) time summed over devices and executions.
    pub by_kind: BTreeMap<String, (i64, i64)>,
    /// The largest message of any of its collective instances, where sizes are known.
    pub largest_message: Option<u64>,
    /// Module time summed over devices and executions (first thunk start to last end).
    pub module_ns: i64,
    /// Collective instances over more than one device.
    pub instances: usize,
    /// Per device: the instances it took part in (of more than one device), how often it
    /// was last, and its lateness summed over those (the stragglers table's figures).
    pub arrivals: BTreeMap<u32, (usize, usize, f64)>,
}

impl ProgramComm {
    /// The device most often last at its collectives (the lowest of a tie), how often,
    /// and its mean lateness.
    pub fn last(&self) -> Option<(u32, usize, f64)> {
        self.arrivals
            .iter()
            .filter(|(_, e)| e.1 > 0)
            .max_by(|a, b| a.1.1.cmp(&b.1.1).then(b.0.cmp(a.0)))
            .map(|(d, (_, last, lateness))| (*d, *last, lateness / *last as f64))
    }
}

impl Partial {
    /// Per program key, its communication in steady state ([`ProgramComm`]).
    pub fn program_comm(&self) -> BTreeMap<String, ProgramComm> {
        let rule = self.warmup.rule();
        let counts = |program: &str, phase: Phase| !rule.thunk_is_warmup(program, phase);
        let mut out: BTreeMap<String, ProgramComm> = BTreeMap::new();
        for ((collective, program, phase), (h, f)) in &self.hidden {
            if counts(program, *phase) {
                let p = out.entry(program.clone()).or_insert_with(|| ProgramComm {
                    name: self.name_of(program),
                    ..ProgramComm::default()
                });
                let e = p.by_kind.entry(collective.clone()).or_default();
                e.0 = e.0.saturating_add(f - h);
                e.1 = e.1.saturating_add(*h);
            }
        }
        // Instances and module spans by program, in one pass each.
        let mut instances: BTreeMap<&str, Vec<(&InstKey, &Inst)>> = BTreeMap::new();
        for (k, i) in &self.instances {
            if counts(&k.0, k.4) {
                instances.entry(&k.0).or_default().push((k, i));
            }
        }
        let mut module_ns: BTreeMap<&str, i64> = BTreeMap::new();
        for ((program, phase), &(_, ns)) in &self.module_time {
            if counts(program, *phase) {
                let m = module_ns.entry(program).or_default();
                *m = m.saturating_add(ns);
            }
        }
        for (program, p) in &mut out {
            let of = instances
                .get(program.as_str())
                .map_or(&[][..], Vec::as_slice);
            p.largest_message = of.iter().filter_map(|(_, i)| i.kind.1).max();
            p.instances = of.iter().filter(|(_, i)| i.count > 1).count();
            p.module_ns = module_ns.get(program.as_str()).copied().unwrap_or(0);
            p.arrivals = last_arrivals(self, of, &counts, Some(program));
        }
        out
    }
}

/// One collective instance in steady state, over the devices that took part: what the
/// findings judge message sizes and bandwidths by.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// Its program key.
    pub program: String,
    /// Its module name.
    pub module: String,
    /// Its module execution.
    pub execution: u32,
    /// Its thunk (HLO instruction).
    pub thunk: String,
    /// Collective kind, where known.
    pub kind: Option<String>,
    /// Message size, bytes, where known.
    pub message_bytes: Option<u64>,
    /// The fastest device's bus bandwidth, GB/s (the bandwidth table's figure).
    pub best_busbw_gbps: Option<f64>,
    /// The shortest exposed time of any device (the last to arrive: the collective's
    /// own time, without waiting for others), ns.
    pub exposed_min_ns: i64,
    /// The devices that took part.
    pub devices: u64,
}

impl Partial {
    /// Every collective instance in steady state ([`Instance`]), in key order.
    pub fn steady_instances(&self) -> Vec<Instance> {
        let rule = self.warmup.rule();
        (self.instances.iter())
            .filter(|(k, _)| !rule.thunk_is_warmup(&k.0, k.4))
            .map(|(k, i)| Instance {
                program: k.0.clone(),
                module: self.name_of(&k.0),
                execution: k.1,
                thunk: k.2.clone(),
                kind: i.kind.0.clone(),
                message_bytes: i.kind.1,
                best_busbw_gbps: i.best_busbw,
                exposed_min_ns: i.lo,
                devices: i.count,
            })
            .collect()
    }
}
