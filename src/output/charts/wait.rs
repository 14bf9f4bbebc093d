//! The wait distributions of collectives (njx-collectives `--wait-plot`): per collective
//! a box plot of its waits, and each instance's wait as a multiple of the fastest
//! device's time against message size.

use super::{self as charts, text};
use crate::error::Result;
use crate::util::stats::quantile;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// Waits (ns) and wait ratios per collective (as njx-collectives' timing aggregate gives them).
pub type Waits = BTreeMap<String, (Vec<f64>, Vec<f64>)>;

/// Per collective, each instance's (message size, wait ÷ fastest device's time).
pub type RatioPoints = BTreeMap<String, Vec<(f64, f64)>>;

/// The box plot's chart: one box per collective along x, wait (ms) on a log axis.
type BoxChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, LogCoord<f64>>>;

/// The wait distributions as a picture: per collective a box (quartiles), its median,
/// whiskers to the least and greatest wait and the mean marked, on a log axis; beside
/// it, each instance's wait as a multiple of the fastest device's time against message
/// size (log-log).
pub fn svg(path: &Path, waits: &Waits, points: &RatioPoints) -> Result<()> {
    charts::write(path, &svg_text(waits, points)?)
}

/// The SVG text of [`svg`].
pub fn svg_text(waits: &Waits, points: &RatioPoints) -> Result<String> {
    let zeros: usize = waits
        .values()
        .map(|(w, _)| w.iter().filter(|&&x| x <= 0.0).count())
        .sum();
    let svg = charts::render(charts::SIZE_WIDE, |root| {
        let (left, right) = root.split_horizontally(charts::SIZE_WIDE.0 * 2 / 5);
        draw_wait_boxes(&left, waits, zeros)?;
        draw_wait_ratios(&right, waits, points)
    })?;
    Ok(svg)
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
        // Room for the collectives' names and, under them, the legend of the marks.
        .x_label_area_size(60)
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
        .x_desc("box: 25–75 %, line: median, whiskers: least–greatest, ▲: mean")
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
