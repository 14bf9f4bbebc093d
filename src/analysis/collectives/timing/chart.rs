//! The two pictures of [`Timing`]: the wait distributions (box plots, and wait as a
//! multiple of the fastest device's time against message size) and lateness along the
//! module timeline.

use super::Timing;
use super::stats::quantile;
use crate::analysis::collectives::rows::Row;
use crate::error::Result;
use crate::output::charts::{self, text};
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// Waits (ns) and wait ratios per collective ([`Timing::waits`]).
type Waits = BTreeMap<String, (Vec<f64>, Vec<f64>)>;

/// Per collective, each instance's (message size, wait ÷ fastest device's time).
type RatioPoints = BTreeMap<String, Vec<(f64, f64)>>;

/// The box plot's chart: one box per collective along x, wait (ms) on a log axis.
type BoxChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, LogCoord<f64>>>;

/// The wait distributions as a picture: per collective a box (quartiles), its median,
/// whiskers to the least and greatest wait and the mean marked, on a log axis; beside
/// it, each instance's wait as a multiple of the fastest device's time against message
/// size (log-log).
pub fn wait_svg(path: &Path, timing: &Timing) -> Result<()> {
    let waits = timing.waits();
    let points = ratio_points(timing);
    let zeros: usize = waits
        .values()
        .map(|(w, _)| w.iter().filter(|&&x| x <= 0.0).count())
        .sum();
    let svg = charts::render(charts::SIZE_WIDE, |root| {
        let (left, right) = root.split_horizontally(charts::SIZE_WIDE.0 * 2 / 5);
        draw_wait_boxes(&left, &waits, zeros)?;
        draw_wait_ratios(&right, &waits, &points)
    })?;
    charts::write(path, &svg)
}

/// Per collective, each instance's wait as a multiple of the fastest device's time
/// against its message size, for the instances with a size and a wait (the right panel).
fn ratio_points(timing: &Timing) -> RatioPoints {
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
}

/// The left panel: per collective a box (quartiles), its median, whiskers to the least
/// and greatest wait and the mean marked, on a log axis; waits of zero are counted in
/// the axis title, not drawn.
fn draw_wait_boxes(
    area: &DrawingArea<SVGBackend, Shift>,
    waits: &Waits,
    zeros: usize,
) -> Result<(), String> {
    let ms: Vec<f64> = waits
        .values()
        .flat_map(|(w, _)| w.iter().map(|x| x / 1e6))
        .collect();
    let (lo, hi) = charts::decades(ms.iter().copied());
    let n = waits.len().max(1);
    let mut chart = ChartBuilder::on(area)
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
        draw_box(&mut chart, k as f64, &v, c)?;
    }
    Ok(())
}

/// One collective's box at `x`: `v` its positive waits (ms, sorted), drawn in `c`.
fn draw_box(chart: &mut BoxChart, x: f64, v: &[f64], c: RGBColor) -> Result<(), String> {
    let q = |p| quantile(v, p);
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
    Ok(())
}

/// The right panel: each instance's wait as a multiple of the fastest device's time
/// against message size (log-log), one colour per collective as in the left panel.
fn draw_wait_ratios(
    area: &DrawingArea<SVGBackend, Shift>,
    waits: &Waits,
    points: &RatioPoints,
) -> Result<(), String> {
    let all = || points.values().flatten();
    let (xlo, xhi) = charts::decades(all().map(|p| p.0));
    let (ylo, yhi) = charts::decades(all().map(|p| p.1));
    let mut chart = ChartBuilder::on(area)
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
}

/// Device → its (time in the module, lateness) points, ms, in time order.
type DeviceLines = BTreeMap<u32, Vec<(f64, f64)>>;

/// Devices drawn per program in the lateness picture: the latest on average.
const LATE_DEVICES: usize = 8;

/// Lateness along the module timeline as a picture, one panel per program (those with
/// the most collective instances first, at most four): each device's mean lateness at
/// each collective against the collective's mean time within the module, for the
/// [`LATE_DEVICES`] latest devices, and the band of all devices (least to greatest).
pub(in crate::analysis::collectives) fn lateness_svg(
    path: &Path,
    timing: &Timing,
    rows: &[Row],
) -> Result<()> {
    let programs = lateness_lines(rows);
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
            draw_lateness_panel(&area, program, devices, timing)?;
        }
        Ok(())
    })?;
    charts::write(path, &svg)
}

/// Per program, its devices' lateness lines from the `lateness` rows: the programs with
/// the most collective instances first, at most four.
fn lateness_lines(rows: &[Row]) -> Vec<(&str, DeviceLines)> {
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
    programs
}

/// One program's panel of the lateness picture: the band of all its devices, and the
/// lines of the [`LATE_DEVICES`] latest on average.
fn draw_lateness_panel(
    area: &DrawingArea<SVGBackend, Shift>,
    program: &str,
    devices: &DeviceLines,
    timing: &Timing,
) -> Result<(), String> {
    let mut sorted: Vec<(u32, &Vec<(f64, f64)>)> = devices.iter().map(|(d, v)| (*d, v)).collect();
    sorted.sort_by(|a, b| {
        mean_lateness(b.1)
            .total_cmp(&mean_lateness(a.1))
            .then(a.0.cmp(&b.0))
    });
    let all = || devices.values().flatten();
    let xmax = all().map(|p| p.0).fold(0.0, f64::max).max(1e-6);
    let ymax = all().map(|p| p.1).fold(0.0, f64::max).max(1e-6);
    let name = timing.names.get(program).cloned().unwrap_or_default();
    let mut chart = ChartBuilder::on(area)
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
    chart
        .draw_series([Polygon::new(band(devices), BLACK.mix(0.08).filled())])
        .map_err(text)?
        .label(format!("all {} devices (least to greatest)", devices.len()))
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], BLACK.mix(0.15).filled()));
    for (k, (device, points)) in sorted.iter().take(LATE_DEVICES).enumerate() {
        let c = charts::colour(k);
        chart
            .draw_series(LineSeries::new(points.iter().copied(), c.stroke_width(2)))
            .map_err(text)?
            .label(format!(
                "device {device} (mean {} ms)",
                charts::round_label(charts::round_significant(mean_lateness(points), 3))
            ))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], c.stroke_width(3)));
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, c.filled())))
            .map_err(text)?;
    }
    charts::legend(&mut chart, SeriesLabelPosition::UpperRight)
}

/// A device's mean lateness over its points.
fn mean_lateness(v: &[(f64, f64)]) -> f64 {
    v.iter().map(|p| p.1).sum::<f64>() / v.len() as f64
}

/// The band of all devices, as a polygon: per position, least and greatest lateness
/// (the greatest left to right, then the least right to left).
fn band(devices: &DeviceLines) -> Vec<(f64, f64)> {
    let mut band: BTreeMap<i64, (f64, f64, f64)> = BTreeMap::new();
    for (x, y) in devices.values().flatten() {
        let e = band
            .entry((x * 1e6) as i64)
            .or_insert((*x, f64::INFINITY, f64::NEG_INFINITY));
        e.1 = e.1.min(*y);
        e.2 = e.2.max(*y);
    }
    let upper: Vec<(f64, f64)> = band.values().map(|b| (b.0, b.2)).collect();
    let lower: Vec<(f64, f64)> = band.values().rev().map(|b| (b.0, b.1)).collect();
    upper.into_iter().chain(lower).collect()
}
