//! The four tables of [`Timing`]: collective instances, wait quantiles, the wait
//! histogram, and lateness along the module timeline.

use super::bins::{bin_floor, bin_next};
use super::{Position, Timing};
use crate::analysis::collectives::rows::{Part, Row};
use crate::output::notes::Notes;
use crate::util::stats::quantile;
use std::collections::BTreeMap;

/// Per position: executions, sum of first starts, sum of offsets in the module, and the
/// collective.
type PositionSums = (u64, i128, i128, Option<String>);

impl Timing {
    /// Per instance: the `instances` table.
    fn instance_rows(&self) -> Vec<Row> {
        self.shared()
            .map(|((program, execution, thunk, thunk_execution), i)| {
                let wait = i.wait();
                Row::Instances {
                    collective: i.collective(),
                    program: program.clone(),
                    name: self.names.get(program).cloned().unwrap_or_default(),
                    execution: *execution,
                    thunk: thunk.clone(),
                    thunk_execution: *thunk_execution,
                    message_bytes: i.message_bytes,
                    devices: i.devices,
                    start_ns: i.first_start,
                    fastest_ns: i.fastest,
                    wait_ns: wait as f64,
                    wait_ratio: (i.fastest > 0).then(|| wait as f64 / i.fastest as f64),
                    last_device: i.last_start.1,
                    last_late_ns: (i128::from(i.last_start.0) - i128::from(i.first_start)) as f64,
                }
            })
            .collect()
    }

    /// The `wait-quantiles` table.
    fn quantile_rows(&self) -> Vec<Row> {
        self.waits()
            .into_iter()
            .map(|(collective, (w, r))| {
                let q = |v: &[f64], p: f64| quantile(v, p);
                Row::WaitQuantiles {
                    collective,
                    instances: w.len(),
                    wait_min_ns: q(&w, 0.0),
                    wait_p25_ns: q(&w, 0.25),
                    wait_median_ns: q(&w, 0.5),
                    wait_p75_ns: q(&w, 0.75),
                    wait_p90_ns: q(&w, 0.9),
                    wait_p99_ns: q(&w, 0.99),
                    wait_max_ns: q(&w, 1.0),
                    wait_mean_ns: w.iter().sum::<f64>() / w.len() as f64,
                    ratio_median: (!r.is_empty()).then(|| q(&r, 0.5)),
                    ratio_p90: (!r.is_empty()).then(|| q(&r, 0.9)),
                    ratio_max: (!r.is_empty()).then(|| q(&r, 1.0)),
                }
            })
            .collect()
    }

    /// The `wait-histogram` table: per collective, every 1-2-5 bin from the first to the
    /// last one holding a wait (empty ones between included, so the rows draw as they
    /// are), and a `[0, 0]` bin for waits of exactly zero.
    fn histogram_rows(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        for (collective, (w, _)) in self.waits() {
            let zeros = w.iter().filter(|&&x| x <= 0.0).count();
            if zeros > 0 {
                rows.push(Row::WaitHistogram {
                    collective: collective.clone(),
                    bin_lo_ns: 0,
                    bin_hi_ns: 0,
                    count: zeros,
                });
            }
            let positive: Vec<u64> = w.iter().filter(|&&x| x > 0.0).map(|&x| x as u64).collect();
            let (Some(&lo), Some(&hi)) = (positive.first(), positive.last()) else {
                continue;
            };
            let mut edge = bin_floor(lo);
            while edge <= hi {
                let next = bin_next(edge);
                // `positive` is sorted: the bin is the run between two partition points.
                let count = positive.partition_point(|&x| x < next)
                    - positive.partition_point(|&x| x < edge);
                rows.push(Row::WaitHistogram {
                    collective: collective.clone(),
                    bin_lo_ns: edge,
                    bin_hi_ns: next,
                    count,
                });
                edge = next;
            }
        }
        rows
    }

    /// The `lateness` table: per program, collective position (in order of mean time
    /// within the module) and device.
    pub(in crate::analysis::collectives) fn lateness_rows(&self, notes: &Notes) -> Vec<Row> {
        let positions = self.positions();
        let mut missed = 0;
        let mut rows = Vec::new();
        for (((program, thunk, thunk_execution), device), (sum, n)) in &self.arrivals {
            let key = (program.clone(), thunk.clone(), *thunk_execution);
            let Some((executions, first_sum, offset_sum, collective)) = positions.get(&key) else {
                continue;
            };
            if n != executions {
                missed += 1;
            }
            let mean = |s: i128, n: u64| s as f64 / n as f64;
            rows.push(Row::Lateness {
                program: program.clone(),
                name: self.names.get(program).cloned().unwrap_or_default(),
                thunk: thunk.clone(),
                thunk_execution: *thunk_execution,
                collective: collective.clone().unwrap_or_default(),
                offset_ns: mean(*offset_sum, *executions),
                device: *device,
                executions: *n,
                lateness_ns: mean(*sum, *n) - mean(*first_sum, *executions),
            });
        }
        if missed > 0 {
            notes.note(format!(
                "lateness: {missed} (collective, device) pairs ran in a different number of \
                 executions than their collective; they are compared with the mean first \
                 arrival of all its executions"
            ));
        }
        sort_lateness(&mut rows);
        rows
    }

    /// Per position (of the instances over two or more devices): executions, sum of first
    /// starts, sum of offsets in the module (from the module execution's earliest start).
    fn positions(&self) -> BTreeMap<Position, PositionSums> {
        let mut positions: BTreeMap<Position, PositionSums> = BTreeMap::new();
        for ((program, execution, thunk, thunk_execution), i) in self.shared() {
            let module_start = self
                .module_starts
                .get(&(program.clone(), *execution))
                .copied()
                .unwrap_or(i.first_start);
            let p = positions
                .entry((program.clone(), thunk.clone(), *thunk_execution))
                .or_insert((0, 0, 0, i.collective.clone()));
            p.0 += 1;
            p.1 += i128::from(i.first_start);
            p.2 += i128::from(i.first_start) - i128::from(module_start);
        }
        positions
    }

    /// The rows of `part` (one of the timing parts).
    /// The rows of a timing part other than lateness ([`Timing::lateness_rows`]).
    pub(in crate::analysis::collectives) fn rows(&self, part: Part) -> Vec<Row> {
        match part {
            Part::Instances => self.instance_rows(),
            Part::WaitQuantiles => self.quantile_rows(),
            Part::WaitHistogram => self.histogram_rows(),
            _ => Vec::new(),
        }
    }
}

/// Sorts lateness rows by program, then time in the module, then device.
fn sort_lateness(rows: &mut [Row]) {
    let order = |r: &Row| match r {
        Row::Lateness {
            program,
            offset_ns,
            thunk,
            thunk_execution,
            device,
            ..
        } => (
            program.clone(),
            *offset_ns,
            thunk.clone(),
            *thunk_execution,
            *device,
        ),
        _ => Default::default(),
    };
    rows.sort_by(|a, b| {
        let (a, b) = (order(a), order(b));
        a.0.cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then((&a.2, a.3, a.4).cmp(&(&b.2, b.3, b.4)))
    });
}
