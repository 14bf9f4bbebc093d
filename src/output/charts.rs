//! Charts as SVG, drawn with plotters' SVG backend (pure Rust; text is left to the
//! viewer's fonts, so nothing is loaded): round tick values, log axes, error bars and
//! legends come from plotters. Each chart is rendered into a string and written under a
//! temporary name, then moved into place, as every output.

use crate::error::{Error, Result};
use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// The series colours (matplotlib's first eight, as the notebook's plots).
pub const COLOURS: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// The `i`th series colour.
pub fn colour(i: usize) -> RGBColor {
    COLOURS[i % COLOURS.len()]
}

/// The size of a chart, pixels.
pub const SIZE: (u32, u32) = (960, 600);

/// The size of two charts side by side, pixels.
pub const SIZE_WIDE: (u32, u32) = (1500, 600);

/// A drawing failed: only writing into a string can, so this is an output error.
fn failed(e: impl std::fmt::Display) -> Error {
    Error::Output(std::io::Error::other(format!("drawing the chart: {e}")))
}

/// Draws a picture of `size` with `draw` and returns its SVG text.
pub fn render(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), String>,
) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(failed)?;
        draw(&root).map_err(failed)?;
        root.present().map_err(failed)?;
    }
    Ok(svg)
}

/// Writes `svg` to `path` (under a temporary name, then moved into place).
pub fn write(path: &Path, svg: &str) -> Result<()> {
    let mut out = crate::output::open_output(Some(path), &[])?;
    std::io::Write::write_all(&mut out, svg.as_bytes()).map_err(Error::Output)?;
    out.finish()
}

/// A plotters error as text, for `?` inside the drawing closures.
pub fn text<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

/// Bytes with a decimal unit for axis ticks: `1 B`, `10 kB`, `2.5 MB`.
pub fn bytes(v: f64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut v = v;
    let mut u = 0;
    while v.abs() >= 1000.0 && u + 1 < units.len() {
        v /= 1000.0;
        u += 1;
    }
    format!("{} {}", round_label(v), units[u])
}

/// A tick value without float noise: `0.1`, `2.5`, `300`, `1e-5`.
pub fn round_label(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if v.abs() < 1e-4 || v.abs() >= 1e7 {
        let s = format!("{v:.3e}");
        // 1.000e-5 → 1e-5, 2.500e-5 → 2.5e-5
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = m.trim_end_matches('0').trim_end_matches('.');
        return format!("{m}e{e}");
    }
    let s = format!("{v:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `v` to `digits` significant digits, without float noise: `15.26`, `0.003534`.
pub fn significant(v: f64, digits: i32) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).clamp(0, 15) as usize;
    format!("{v:.decimals$}")
}

/// `v` rounded to `digits` significant digits, as a number (`0.000300123` → `0.0003`).
pub fn round_significant(v: f64, digits: i32) -> f64 {
    significant(v, digits).parse().unwrap_or(v)
}

/// The range of `values` widened to whole decades, for a log axis (`(1, 10)` when there
/// is nothing positive).
pub fn decades(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return (1.0, 10.0);
    }
    let lo = 10f64.powf(lo.log10().floor());
    let hi = 10f64.powf(hi.log10().ceil());
    (lo, if hi > lo { hi } else { lo * 10.0 })
}

/// One bandwidth point: message size (bytes), mean bus bandwidth and its standard error
/// (GB/s).
pub type BandwidthPoint = (u64, f64, Option<f64>);

/// Bus bandwidth (GB/s) against message size (bytes, log scale), one series per
/// collective with error bars of ± one standard error, written to `path`.
pub fn bandwidth_svg(path: &Path, series: &BTreeMap<String, Vec<BandwidthPoint>>) -> Result<()> {
    write(path, &bandwidth_svg_text(series)?)
}

/// The SVG text of [`bandwidth_svg`]. Both axes are logarithmic: bandwidths of small
/// and large messages differ by orders of magnitude.
pub fn bandwidth_svg_text(series: &BTreeMap<String, Vec<BandwidthPoint>>) -> Result<String> {
    let points = || series.values().flatten();
    let (xlo, xhi) = decades(points().map(|p| p.0 as f64));
    let (ylo, yhi) = decades(points().flat_map(|p| [p.1, p.1 + p.2.unwrap_or(0.0)]));
    render(SIZE, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(
                "Bus bandwidth by message size (fastest device; mean, ± standard error)",
                ("sans-serif", 20),
            )
            .margin(16)
            .margin_right(40)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d((xlo..xhi).log_scale(), (ylo..yhi).log_scale())
            .map_err(text)?;
        mesh(&mut chart.configure_mesh())
            .x_desc("message size")
            .y_desc("bus bandwidth [GB/s]")
            .x_label_formatter(&|v| bytes(*v))
            .y_label_formatter(&|v| round_label(*v))
            .draw()
            .map_err(text)?;
        for (i, (name, pts)) in series.iter().enumerate() {
            let c = colour(i);
            chart
                .draw_series(
                    pts.iter()
                        .map(|p| Circle::new((p.0 as f64, p.1), 4, c.filled())),
                )
                .map_err(text)?
                .label(name.as_str())
                .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
            chart
                .draw_series(pts.iter().filter_map(|p| {
                    let e = p.2.filter(|e| e.is_finite() && *e > 0.0)?;
                    Some(ErrorBar::new_vertical(
                        p.0 as f64,
                        // The log axis has no zero: a bar reaching it stops at the axis.
                        (p.1 - e).max(ylo),
                        p.1,
                        p.1 + e,
                        c.stroke_width(1),
                        8,
                    ))
                }))
                .map_err(text)?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)
    })
}

/// The look of every chart's axes: larger tick labels, the fine grid faint.
pub fn mesh<'m, 'a, 'b, X, Y, DB>(
    m: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged,
    Y: Ranged,
    DB: DrawingBackend,
{
    m.label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .light_line_style(BLACK.mix(0.04))
        .bold_line_style(BLACK.mix(0.15))
}

/// The legend of `chart`'s labelled series, at `at`.
pub fn legend<'a, 'b, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>,
    at: SeriesLabelPosition,
) -> Result<(), String>
where
    'b: 'a,
    X: Ranged,
    Y: Ranged,
{
    chart
        .configure_series_labels()
        .position(at)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(text)
}

/// The unit a byte count up to `max` reads best in: GiB, MiB, KiB or B, and its size.
pub fn binary_unit(max: f64) -> (&'static str, f64) {
    [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        .into_iter()
        .find(|&(_, d)| max >= d as f64)
        .map_or(("B", 1.0), |(u, d)| (u, d as f64))
}

/// Per pixel column of `columns`: the first, lowest, highest and last points of
/// `totals` in event order, so a line of any length draws alike.
fn decimate(totals: &[i64], columns: usize) -> Vec<(usize, i64)> {
    let n = totals.len().max(1);
    let mut out = Vec::new();
    let mut start = 0;
    while start < totals.len() {
        let column = start * columns / n;
        let mut end = start + 1;
        while end < totals.len() && end * columns / n == column {
            end += 1;
        }
        let slice = &totals[start..end];
        let at = |k: usize| (start + k, slice[k]);
        let lo = (0..slice.len()).min_by_key(|&k| slice[k]).map(at);
        let hi = (0..slice.len()).max_by_key(|&k| slice[k]).map(at);
        let mut keep: Vec<(usize, i64)> = [Some(at(0)), lo, hi, Some(at(slice.len() - 1))]
            .into_iter()
            .flatten()
            .collect();
        keep.sort_unstable();
        keep.dedup();
        out.extend(keep);
        start = end;
    }
    out
}

/// One heap curve: its name, the live total after each event, and the peak's event.
pub type HeapCurve = (String, Vec<i64>, Option<usize>);

/// The live heap total over the events of heap simulator traces, one step line per
/// trace with its peak marked, written to `path`.
pub fn heap_svg(path: &Path, series: &[HeapCurve]) -> Result<()> {
    write(path, &heap_svg_text(series)?)
}

/// The SVG text of [`heap_svg`].
pub fn heap_svg_text(series: &[HeapCurve]) -> Result<String> {
    let max = series
        .iter()
        .flat_map(|(_, t, _)| t.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let (unit, div) = binary_unit(max);
    let events = series.iter().map(|s| s.1.len()).max().unwrap_or(0).max(1);
    render(SIZE, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(
                "Live heap over the heap simulator's events (peak marked)",
                ("sans-serif", 20),
            )
            .margin(16)
            .margin_right(40)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..events as f64, 0.0..max * 1.08 / div)
            .map_err(text)?;
        mesh(&mut chart.configure_mesh())
            .x_desc("heap simulator event")
            .y_desc(format!("live buffers [{unit}]"))
            .x_label_formatter(&|v| round_label(*v))
            .y_label_formatter(&|v| round_label(*v))
            .draw()
            .map_err(text)?;
        for (i, (name, totals, peak)) in series.iter().enumerate() {
            let c = colour(i);
            // A step: the total holds until the next event.
            let steps = decimate(totals, 1200)
                .into_iter()
                .flat_map(|(k, v)| {
                    let y = v as f64 / div;
                    [(k as f64, y), ((k + 1) as f64, y)]
                })
                .collect::<Vec<_>>();
            chart
                .draw_series(LineSeries::new(steps, c.stroke_width(2)))
                .map_err(text)?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], c.stroke_width(3)));
            if let Some(k) = *peak
                && let Some(&v) = totals.get(k)
            {
                let at = (k as f64, v as f64 / div);
                let (u, d) = binary_unit(v as f64);
                let size = if d > 1.0 {
                    significant(v as f64 / d, 4)
                } else {
                    v.to_string()
                };
                let label = format!("peak {size} {u} at event {k}");
                chart
                    .draw_series([EmptyElement::at(at)
                        + Circle::new((0, 0), 5, c.filled())
                        + Text::new(label, (8, -16), ("sans-serif", 14))])
                    .map_err(text)?;
            }
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_round() {
        assert_eq!(round_label(0.30000000000000004), "0.3");
        assert_eq!(round_label(150.0), "150");
        assert_eq!(round_label(0.00001), "1e-5");
        assert_eq!(round_label(2.5e-5), "2.5e-5");
        assert_eq!(bytes(1000.0), "1 kB");
        assert_eq!(bytes(10_000_000.0), "10 MB");
        assert_eq!(bytes(4.0), "4 B");
        assert_eq!(significant(15.258861, 4), "15.26");
        assert_eq!(significant(0.00035264, 4), "0.0003526");
    }

    #[test]
    fn decades_cover_the_values() {
        assert_eq!(decades([4.0, 19_316_736.0]), (1.0, 1e8));
        assert_eq!(decades([100.0]), (100.0, 1000.0));
        assert_eq!(decades([0.0, f64::NAN]), (1.0, 10.0));
    }

    #[test]
    fn decimation_keeps_extremes_in_order() {
        let totals: Vec<i64> = (0..10_000).map(|k| (k % 97) as i64).collect();
        let kept = decimate(&totals, 100);
        assert!(kept.len() <= 400);
        assert!(kept.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(kept.iter().map(|p| p.1).max(), Some(96));
        assert_eq!(kept.first(), Some(&(0, 0)));
        assert_eq!(kept.last(), Some(&(9_999, (9_999 % 97) as i64)));
    }
}
