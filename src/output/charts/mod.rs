//! Charts as SVG, drawn with plotters' SVG backend (pure Rust; text is left to the
//! viewer's fonts, so nothing is loaded): round tick values, log axes, error bars and
//! legends come from plotters. Each chart is rendered into a string and written under a
//! temporary name, then moved into place, as every output.

mod bandwidth;
mod heap;
pub mod lateness;
pub mod wait;

pub use bandwidth::{BandwidthPoint, bandwidth_svg, bandwidth_svg_text};
pub use heap::{HeapCurve, heap_svg, heap_svg_text};

use crate::error::{Error, Result};
use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::prelude::*;
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
}
