//! Lateness along the module timeline (njx-collectives `--lateness-plot`): one panel per
//! program, each device's mean lateness at each collective against the collective's mean
//! time within the module, the latest devices drawn and the band of all. A device has
//! one colour in every panel ([`device_colours`]).

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
/// `LATE_DEVICES` (8) latest devices, each in its colour in every panel, and the band of
/// all devices (least to greatest).
pub fn svg(path: &Path, programs: &[(String, DeviceLines)]) -> Result<()> {
    charts::write(path, &svg_text(programs)?)
}

/// The SVG text of [`svg`].
pub fn svg_text(programs: &[(String, DeviceLines)]) -> Result<String> {
    let panels = programs.len().max(1);
    let drawn: Vec<Vec<u32>> = programs.iter().map(|(_, d)| latest(d)).collect();
    let colours = device_colours(&drawn);
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
        let areas = body.split_evenly((panels, 1));
        for (((caption, devices), latest), area) in programs.iter().zip(&drawn).zip(areas) {
            draw_lateness_panel(&area, caption, devices, latest, &colours)?;
        }
        Ok(())
    })?;
    Ok(svg)
}

/// The devices of a panel whose lines are drawn: the [`LATE_DEVICES`] latest on
/// average, latest first (then by device).
fn latest(devices: &DeviceLines) -> Vec<u32> {
    let mut sorted: Vec<(u32, f64)> = devices
        .iter()
        .map(|(d, v)| (*d, mean_lateness(v)))
        .collect();
    sorted.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    sorted.truncate(LATE_DEVICES);
    sorted.into_iter().map(|(d, _)| d).collect()
}

/// The colour (index into [`charts::COLOURS`]) of each device drawn in any panel
/// (`panels`: each panel's devices, latest first), the same in every panel: a device
/// takes the first colour that no device of its panels holds yet, preferring one no
/// device holds at all, so that the devices of a panel (at most [`LATE_DEVICES`], as
/// many as there are colours) do not share one.
pub fn device_colours(panels: &[Vec<u32>]) -> BTreeMap<u32, usize> {
    let n = charts::COLOURS.len();
    let mut colour: BTreeMap<u32, usize> = BTreeMap::new();
    // The colours each panel's devices hold.
    let mut held: Vec<Vec<bool>> = vec![vec![false; n]; panels.len()];
    let mut used = vec![false; n];
    for (p, devices) in panels.iter().enumerate() {
        for &d in devices {
            let c = match colour.get(&d) {
                Some(&c) => c,
                None => {
                    // The panels the device is drawn in that hold colour `c` already:
                    // none, where it can be had (more devices over the panels than
                    // colours can leave none free in all of them).
                    let clashes = |c: usize| {
                        panels
                            .iter()
                            .zip(&held)
                            .filter(|(devs, h)| devs.contains(&d) && h[c])
                            .count()
                    };
                    let c = (0..n)
                        .min_by_key(|&c| (clashes(c), used[c], c))
                        .expect("colours");
                    colour.insert(d, c);
                    used[c] = true;
                    for (devs, h) in panels.iter().zip(held.iter_mut()) {
                        if devs.contains(&d) {
                            h[c] = true;
                        }
                    }
                    c
                }
            };
            held[p][c] = true;
        }
    }
    colour
}

/// One program's panel of the lateness picture: the band of all its devices, and the
/// lines of the [`LATE_DEVICES`] latest on average (`latest`, [`latest`]), each device in
/// its colour of `colours` ([`device_colours`]).
fn draw_lateness_panel(
    area: &DrawingArea<SVGBackend, Shift>,
    caption: &str,
    devices: &DeviceLines,
    latest: &[u32],
    colours: &BTreeMap<u32, usize>,
) -> Result<(), String> {
    let sorted: Vec<(u32, &Vec<(f64, f64)>)> = latest.iter().map(|&d| (d, &devices[&d])).collect();
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
            0.0..ymax * (1.15 + 0.07 * (sorted.len() + 1) as f64),
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
    for (device, points) in &sorted {
        let c = charts::colour(colours.get(device).copied().unwrap_or(0));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_has_one_colour_in_every_panel_and_none_shares_a_panels_colour() {
        // Device 1 is latest in the first panel, device 0 in the second: the order of the
        // panels' lines is not their colours'.
        let panels = vec![vec![1, 0, 2], vec![0, 1], vec![3, 2]];
        let c = device_colours(&panels);
        assert_eq!(c.len(), 4);
        assert_eq!(c[&1], 0);
        assert_eq!(c[&0], 1);
        assert_eq!(c[&2], 2);
        assert_eq!(c[&3], 3);
        // More devices over the panels than colours: each panel's devices still differ.
        let panels: Vec<Vec<u32>> = (0..4).map(|p| (p * 8..p * 8 + 8).rev().collect()).collect();
        let mixed: Vec<Vec<u32>> = vec![panels[0].clone(), vec![0, 9, 18, 27, 1, 10, 19, 28]];
        for panels in [panels, mixed] {
            let c = device_colours(&panels);
            for devices in &panels {
                let mut seen: Vec<usize> = devices.iter().map(|d| c[d]).collect();
                seen.sort_unstable();
                seen.dedup();
                assert_eq!(seen.len(), devices.len(), "{panels:?}: {c:?}");
            }
        }
    }
}
