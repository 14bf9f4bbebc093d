//! Lateness along the module timeline (njx-collectives `--lateness-plot`): one panel per
//! program, each device's mean lateness at each collective against the collective's mean
//! time within the module, the latest devices drawn and the band of all.

use super::{self as charts, text};
use crate::error::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// Devices drawn per program in the lateness picture: the latest on average.
const LATE_DEVICES: usize = 8;

/// Device → its (time in the module, lateness) points, ms, in time order.
pub type DeviceLines = BTreeMap<u32, Vec<(f64, f64)>>;

/// Lateness along the module timeline as a picture, one panel per program (those with
/// the most collective instances first, at most four): each device's mean lateness at
/// each collective against the collective's mean time within the module, for the
/// `LATE_DEVICES` (8) latest devices, and the band of all devices (least to greatest).
pub fn svg(path: &Path, programs: &[(String, DeviceLines)]) -> Result<()> {
    charts::write(path, &svg_text(programs)?)
}

/// The SVG text of [`svg`].
pub fn svg_text(programs: &[(String, DeviceLines)]) -> Result<String> {
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
        for ((caption, devices), area) in programs.iter().zip(body.split_evenly((panels, 1))) {
            draw_lateness_panel(&area, caption, devices)?;
        }
        Ok(())
    })?;
    Ok(svg)
}

/// One program's panel of the lateness picture: the band of all its devices, and the
/// lines of the [`LATE_DEVICES`] latest on average.
fn draw_lateness_panel(
    area: &DrawingArea<SVGBackend, Shift>,
    caption: &str,
    devices: &DeviceLines,
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
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 16))
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
