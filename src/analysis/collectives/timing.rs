//! The Analysis notebook's communication cells, on device clocks aligned across
//! profiles (nsys-jax's `align_profiler_data_timestamps`, [`executions::visit`]):
//!
//! - **Wait per collective instance** (program, execution, thunk, thunk execution): the
//!   last device's end minus the first device's start minus the fastest device's full
//!   time (exposed + hidden): time lost to devices not arriving in lockstep, as the
//!   notebook's wait-time box plot defines it; also as a multiple of the fastest
//!   device's time, against message size.
//! - Its **distribution** per collective: quantiles (linear interpolation between order
//!   statistics, as numpy's and matplotlib's box plots) and a histogram on 1-2-5 bins.
//! - **Lateness along the module timeline**: at each collective of a program, each
//!   device's start minus the first device's start, averaged over executions, placed at
//!   the collective's mean time within the module execution (from the earliest thunk
//!   start of that execution over devices): which device is late, and when.
//!
//! Unlike the report's tables (durations only, mergeable per rank), these compare clocks
//! of different devices, so they are computed from thunk records (`njx-export` aligns
//! them) or profiles read with clocks aligned, not from partial results. Memory holds
//! the collective instances of one rank (every rank runs the same ones), the module
//! executions, and (collective, device) sums for lateness.

use super::Row;
use crate::error::Result;
use crate::output::charts::{self, text};
use crate::output::notes::Notes;
use crate::records::Thunk;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// One collective instance over the devices read so far.
#[derive(Debug, Clone)]
struct Instance {
    /// Collective kind (the least, should devices disagree).
    collective: Option<String>,
    /// Message size (the least).
    message_bytes: Option<u64>,
    /// Earliest start, latest start (and that device: the last to arrive), latest end.
    first_start: i64,
    last_start: (i64, u32),
    last_end: i64,
    /// The fastest device's full time.
    fastest: i64,
    /// Devices (thunk executions) in it.
    devices: u64,
}

impl Instance {
    fn of(t: &Thunk) -> Instance {
        let full = t.dur_ns.saturating_add(t.hidden_ns);
        Instance {
            collective: t.collective.clone(),
            message_bytes: t.message_bytes,
            first_start: t.start_ns,
            last_start: (t.start_ns, t.device),
            last_end: t.start_ns.saturating_add(full),
            fastest: full,
            devices: 1,
        }
    }

    fn add(&mut self, t: &Thunk) {
        let o = Instance::of(t);
        if (&o.collective, o.message_bytes) < (&self.collective, self.message_bytes) {
            self.collective = o.collective;
            self.message_bytes = o.message_bytes;
        }
        self.first_start = self.first_start.min(o.first_start);
        // The latest start; of equal starts, the lowest device.
        if (o.last_start.0, std::cmp::Reverse(o.last_start.1))
            > (self.last_start.0, std::cmp::Reverse(self.last_start.1))
        {
            self.last_start = o.last_start;
        }
        self.last_end = self.last_end.max(o.last_end);
        self.fastest = self.fastest.min(o.fastest);
        self.devices += 1;
    }

    /// Last end − first start − fastest full time, ns (in i128: records read back may
    /// carry any times).
    fn wait(&self) -> i128 {
        i128::from(self.last_end) - i128::from(self.first_start) - i128::from(self.fastest)
    }

    fn collective(&self) -> String {
        self.collective.clone().unwrap_or_default()
    }
}

/// (program, execution, thunk, thunk execution).
type InstanceKey = (String, u32, String, u32);

/// (program, thunk, thunk execution): a collective's place in its program.
type Position = (String, String, u32);

/// What the wait distributions and lateness need of the thunk executions that count.
#[derive(Debug, Default)]
pub struct Timing {
    include_warmup: bool,
    instances: BTreeMap<InstanceKey, Instance>,
    /// (position, device) → (sum of starts over executions, executions).
    arrivals: BTreeMap<(Position, u32), (i128, u64)>,
    /// (program, execution) → earliest thunk start over devices.
    module_starts: BTreeMap<(String, u32), i64>,
    /// Program → module name (the least).
    names: BTreeMap<String, String>,
}

impl Timing {
    /// An empty timing; initialisation executions count when `include_warmup`.
    pub fn new(include_warmup: bool) -> Timing {
        Timing {
            include_warmup,
            ..Timing::default()
        }
    }

    /// Takes in one thunk execution (its warm-up decided, its clock aligned).
    pub fn add(&mut self, t: &Thunk) {
        if t.warmup && !self.include_warmup {
            return;
        }
        let start = self
            .module_starts
            .entry((t.program.clone(), t.execution))
            .or_insert(t.start_ns);
        *start = (*start).min(t.start_ns);
        super::keep_least_name(&mut self.names, &t.program, &t.module);
        if !t.comm {
            return;
        }
        let key = (
            t.program.clone(),
            t.execution,
            t.name.clone(),
            t.thunk_execution,
        );
        match self.instances.get_mut(&key) {
            Some(i) => i.add(t),
            None => {
                self.instances.insert(key, Instance::of(t));
            }
        }
        let a = self
            .arrivals
            .entry((
                (t.program.clone(), t.name.clone(), t.thunk_execution),
                t.device,
            ))
            .or_default();
        a.0 += i128::from(t.start_ns);
        a.1 += 1;
    }

    /// The instances over two or more devices (a device alone waits for nobody).
    fn shared(&self) -> impl Iterator<Item = (&InstanceKey, &Instance)> {
        self.instances.iter().filter(|(_, i)| i.devices > 1)
    }

    /// Notes what was left out: instances of one device.
    pub fn say_alone(&self, notes: &Notes) {
        let alone = self.instances.values().filter(|i| i.devices < 2).count();
        if alone > 0 {
            notes.note(format!(
                "{alone} of {} collective instances ran on one device only (another device \
                 ran a different program, or one profile was read): left out of the wait \
                 distributions and lateness",
                self.instances.len()
            ));
        }
    }

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

    /// Waits (ns) and wait ratios per collective.
    fn waits(&self) -> BTreeMap<String, (Vec<f64>, Vec<f64>)> {
        let mut by: BTreeMap<String, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
        for (_, i) in self.shared() {
            let e = by.entry(i.collective()).or_default();
            let wait = i.wait() as f64;
            e.0.push(wait);
            if i.fastest > 0 {
                e.1.push(wait / i.fastest as f64);
            }
        }
        for (w, r) in by.values_mut() {
            w.sort_by(f64::total_cmp);
            r.sort_by(f64::total_cmp);
        }
        by
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
    pub(super) fn lateness_rows(&self, notes: &Notes) -> Vec<Row> {
        // Per position: executions, sum of first starts, sum of offsets in the module.
        let mut positions: BTreeMap<Position, (u64, i128, i128, Option<String>)> = BTreeMap::new();
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
        // By program, then time in the module, then device.
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
        rows
    }

    /// The rows of `part` (one of the timing parts).
    /// The rows of a timing part other than lateness ([`Timing::lateness_rows`]).
    pub(super) fn rows(&self, part: super::Part) -> Vec<Row> {
        match part {
            super::Part::Instances => self.instance_rows(),
            super::Part::WaitQuantiles => self.quantile_rows(),
            super::Part::WaitHistogram => self.histogram_rows(),
            _ => Vec::new(),
        }
    }
}

/// The `p` quantile of sorted `v` (not empty), interpolated linearly between order
/// statistics (numpy's default).
fn quantile(v: &[f64], p: f64) -> f64 {
    let at = p * (v.len() - 1) as f64;
    let lo = at.floor() as usize;
    let hi = at.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
}

/// The 1-2-5 bin edge at or below `x` (> 0).
fn bin_floor(x: u64) -> u64 {
    let mut decade = 1u64;
    while decade <= x / 10 {
        decade *= 10;
    }
    [5, 2, 1]
        .into_iter()
        .map(|m| m * decade)
        .find(|&e| e <= x)
        .unwrap_or(decade)
}

/// The 1-2-5 edge after `edge`.
fn bin_next(edge: u64) -> u64 {
    let mut decade = 1u64;
    while decade <= edge / 10 {
        decade *= 10;
    }
    match edge / decade {
        1 => 2 * decade,
        2 => 5 * decade,
        _ => decade.saturating_mul(10),
    }
}

/// The wait distributions as a picture: per collective a box (quartiles), its median,
/// whiskers to the least and greatest wait and the mean marked, on a log axis; beside
/// it, each instance's wait as a multiple of the fastest device's time against message
/// size (log-log).
pub fn wait_svg(path: &Path, timing: &Timing) -> Result<()> {
    let waits = timing.waits();
    let points: BTreeMap<String, Vec<(f64, f64)>> = {
        let mut m: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        for (_, i) in timing.shared() {
            let wait = i.wait() as f64;
            if let (Some(size), true) = (i.message_bytes, i.fastest > 0 && wait > 0.0) {
                m.entry(i.collective())
                    .or_default()
                    .push((size.max(1) as f64, wait / i.fastest as f64));
            }
        }
        m
    };
    let zeros: usize = waits
        .values()
        .map(|(w, _)| w.iter().filter(|&&x| x <= 0.0).count())
        .sum();
    let svg = charts::render(charts::SIZE_WIDE, |root| {
        let (left, right) = root.split_horizontally(charts::SIZE_WIDE.0 * 2 / 5);
        let ms: Vec<f64> = waits
            .values()
            .flat_map(|(w, _)| w.iter().map(|x| x / 1e6))
            .collect();
        let (lo, hi) = charts::decades(ms.iter().copied());
        let n = waits.len().max(1);
        let mut chart = ChartBuilder::on(&left)
            .caption("Wait per collective instance [ms]", ("sans-serif", 18))
            .margin(14)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..n as f64 - 0.5, (lo..hi).log_scale())
            .map_err(text)?;
        let names: Vec<String> = waits.keys().cloned().collect();
        let label = move |x: &f64| {
            let k = x.round();
            if (x - k).abs() < 1e-9 && k >= 0.0 {
                names.get(k as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        charts::mesh(&mut chart.configure_mesh())
            .x_labels(n + 1)
            .x_label_formatter(&label)
            .y_label_formatter(&|v| charts::round_label(*v))
            .y_desc(if zeros > 0 {
                format!("wait [ms] ({zeros} waits of zero not drawn)")
            } else {
                "wait [ms]".to_string()
            })
            .disable_x_mesh()
            .draw()
            .map_err(text)?;
        for (k, (_, (w, _))) in waits.iter().enumerate() {
            let c = charts::colour(k);
            let v: Vec<f64> = w.iter().filter(|&&x| x > 0.0).map(|x| x / 1e6).collect();
            if v.is_empty() {
                continue;
            }
            let x = k as f64;
            let q = |p| quantile(&v, p);
            let (q1, med, q3) = (q(0.25), q(0.5), q(0.75));
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            chart
                .draw_series([
                    Rectangle::new([(x - 0.25, q1), (x + 0.25, q3)], c.mix(0.25).filled()),
                    Rectangle::new([(x - 0.25, q1), (x + 0.25, q3)], c.stroke_width(2)),
                ])
                .map_err(text)?;
            chart
                .draw_series([
                    PathElement::new([(x - 0.25, med), (x + 0.25, med)], c.stroke_width(3)),
                    PathElement::new([(x, v[0]), (x, q1)], c.stroke_width(1)),
                    PathElement::new([(x, q3), (x, v[v.len() - 1])], c.stroke_width(1)),
                    PathElement::new([(x - 0.1, v[0]), (x + 0.1, v[0])], c.stroke_width(1)),
                    PathElement::new(
                        [(x - 0.1, v[v.len() - 1]), (x + 0.1, v[v.len() - 1])],
                        c.stroke_width(1),
                    ),
                ])
                .map_err(text)?;
            chart
                .draw_series([TriangleMarker::new((x, mean), 6, BLACK.filled())])
                .map_err(text)?;
        }
        let all = || points.values().flatten();
        let (xlo, xhi) = charts::decades(all().map(|p| p.0));
        let (ylo, yhi) = charts::decades(all().map(|p| p.1));
        let mut chart = ChartBuilder::on(&right)
            .caption(
                "Wait as a multiple of the fastest device's time",
                ("sans-serif", 18),
            )
            .margin(14)
            .margin_right(40)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((xlo..xhi).log_scale(), (ylo..yhi).log_scale())
            .map_err(text)?;
        charts::mesh(&mut chart.configure_mesh())
            .x_desc("message size")
            .y_desc("wait ÷ fastest device's time")
            .x_label_formatter(&|v| charts::bytes(*v))
            .y_label_formatter(&|v| charts::round_label(*v))
            .draw()
            .map_err(text)?;
        for (k, name) in waits.keys().enumerate() {
            let c = charts::colour(k);
            let pts = points.get(name).map_or(&[][..], Vec::as_slice);
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.mix(0.7).filled())))
                .map_err(text)?
                .label(name.as_str())
                .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
        }
        charts::legend(&mut chart, SeriesLabelPosition::UpperRight)
    })?;
    charts::write(path, &svg)
}

/// Device → its (time in the module, lateness) points, ms, in time order.
type DeviceLines = BTreeMap<u32, Vec<(f64, f64)>>;

/// Devices drawn per program in the lateness picture: the latest on average.
const LATE_DEVICES: usize = 8;

/// Lateness along the module timeline as a picture, one panel per program (those with
/// the most collective instances first, at most four): each device's mean lateness at
/// each collective against the collective's mean time within the module, for the
/// [`LATE_DEVICES`] latest devices, and the band of all devices (least to greatest).
pub(super) fn lateness_svg(path: &Path, timing: &Timing, rows: &[Row]) -> Result<()> {
    // program → device → [(offset ms, lateness ms)], in offset order.
    let mut by: BTreeMap<&str, DeviceLines> = BTreeMap::new();
    for r in rows {
        if let Row::Lateness {
            program,
            device,
            offset_ns,
            lateness_ns,
            ..
        } = r
        {
            by.entry(program.as_str())
                .or_default()
                .entry(*device)
                .or_default()
                .push((offset_ns / 1e6, lateness_ns / 1e6));
        }
    }
    let mut programs: Vec<(&str, DeviceLines)> = by.into_iter().collect();
    programs.sort_by_key(|(p, d)| {
        (
            std::cmp::Reverse(d.values().map(Vec::len).sum::<usize>()),
            *p,
        )
    });
    programs.truncate(4);
    let panels = programs.len().max(1);
    let size = (charts::SIZE.0, 60 + 420 * panels as u32);
    let svg = charts::render(size, |root| {
        let (title, body) = root.split_vertically(40);
        title
            .titled(
                "Lateness along the module timeline: each device's start minus the first \
                 device's, mean over executions",
                ("sans-serif", 18),
            )
            .map_err(text)?;
        for ((program, devices), area) in programs.iter().zip(body.split_evenly((panels, 1))) {
            let mut sorted: Vec<(u32, &Vec<(f64, f64)>)> =
                devices.iter().map(|(d, v)| (*d, v)).collect();
            let mean_late =
                |v: &Vec<(f64, f64)>| v.iter().map(|p| p.1).sum::<f64>() / v.len() as f64;
            sorted.sort_by(|a, b| {
                mean_late(b.1)
                    .total_cmp(&mean_late(a.1))
                    .then(a.0.cmp(&b.0))
            });
            let all = || devices.values().flatten();
            let xmax = all().map(|p| p.0).fold(0.0, f64::max).max(1e-6);
            let ymax = all().map(|p| p.1).fold(0.0, f64::max).max(1e-6);
            let name = timing.names.get(*program).cloned().unwrap_or_default();
            let mut chart = ChartBuilder::on(&area)
                .caption(format!("{name} ({program})"), ("sans-serif", 16))
                .margin(14)
                .margin_right(40)
                .x_label_area_size(40)
                .y_label_area_size(70)
                // Head room above the lines for the legend (one row per line drawn and
                // the band), so that it covers no point.
                .build_cartesian_2d(
                    0.0..xmax * 1.02,
                    0.0..ymax * (1.15 + 0.07 * (sorted.len().min(LATE_DEVICES) + 1) as f64),
                )
                .map_err(text)?;
            charts::mesh(&mut chart.configure_mesh())
                .x_desc("mean time within the module execution [ms]")
                .y_desc("lateness [ms]")
                .x_label_formatter(&|v| charts::round_label(*v))
                .y_label_formatter(&|v| charts::round_label(*v))
                .draw()
                .map_err(text)?;
            // The band of all devices: per position, least and greatest lateness.
            let mut band: BTreeMap<i64, (f64, f64, f64)> = BTreeMap::new();
            for (x, y) in all() {
                let e =
                    band.entry((x * 1e6) as i64)
                        .or_insert((*x, f64::INFINITY, f64::NEG_INFINITY));
                e.1 = e.1.min(*y);
                e.2 = e.2.max(*y);
            }
            let upper: Vec<(f64, f64)> = band.values().map(|b| (b.0, b.2)).collect();
            let lower: Vec<(f64, f64)> = band.values().rev().map(|b| (b.0, b.1)).collect();
            chart
                .draw_series([Polygon::new(
                    upper.into_iter().chain(lower).collect::<Vec<_>>(),
                    BLACK.mix(0.08).filled(),
                )])
                .map_err(text)?
                .label(format!("all {} devices (least to greatest)", devices.len()))
                .legend(|(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 20, y + 5)], BLACK.mix(0.15).filled())
                });
            for (k, (device, points)) in sorted.iter().take(LATE_DEVICES).enumerate() {
                let c = charts::colour(k);
                chart
                    .draw_series(LineSeries::new(points.iter().copied(), c.stroke_width(2)))
                    .map_err(text)?
                    .label(format!(
                        "device {device} (mean {} ms)",
                        charts::round_label(charts::round_significant(mean_late(points), 3))
                    ))
                    .legend(move |(x, y)| {
                        PathElement::new([(x, y), (x + 20, y)], c.stroke_width(3))
                    });
                chart
                    .draw_series(points.iter().map(|&p| Circle::new(p, 3, c.filled())))
                    .map_err(text)?;
            }
            charts::legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        Ok(())
    })?;
    charts::write(path, &svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_as_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert_eq!(quantile(&v, 0.25), 1.75);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert_eq!(quantile(&[7.0], 0.9), 7.0);
    }

    #[test]
    fn bins_are_1_2_5() {
        assert_eq!(bin_floor(1), 1);
        assert_eq!(bin_floor(3), 2);
        assert_eq!(bin_floor(9), 5);
        assert_eq!(bin_floor(10), 10);
        assert_eq!(bin_floor(1_999_999), 1_000_000);
        assert_eq!(bin_floor(2_000_000), 2_000_000);
        assert_eq!(bin_next(1), 2);
        assert_eq!(bin_next(2), 5);
        assert_eq!(bin_next(5), 10);
        assert_eq!(bin_next(500_000), 1_000_000);
    }
}
