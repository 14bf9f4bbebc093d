//! Small SVG charts written directly (no plotting dependency): enough for the pictures
//! users otherwise draw in the nsys-jax notebook.

use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

const COLOURS: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Bus bandwidth (GB/s, linear) against message size (bytes, log scale), one series per
/// collective, written to `path`.
pub fn bandwidth_svg(path: &Path, series: &BTreeMap<String, Vec<(u64, f64)>>) -> Result<()> {
    let svg = bandwidth_svg_text(series);
    // Written under a temporary name and moved into place, as every output.
    let mut out = crate::output::open_output(Some(path), &[])?;
    std::io::Write::write_all(&mut out, svg.as_bytes()).map_err(Error::Output)?;
    out.finish()
}

/// The SVG text of [`bandwidth_svg`].
pub fn bandwidth_svg_text(series: &BTreeMap<String, Vec<(u64, f64)>>) -> String {
    let (w, h) = (900.0, 560.0);
    let (left, right, top, bottom) = (80.0, 200.0, 50.0, 70.0);
    let points = series.values().flatten();
    let xs: Vec<f64> = points
        .clone()
        .map(|&(x, _)| (x.max(1) as f64).log10())
        .collect();
    let ymax = points.map(|&(_, y)| y).fold(0.0, f64::max).max(1e-9) * 1.1;
    let (xlo, xhi) = (
        xs.iter().copied().fold(f64::INFINITY, f64::min).floor(),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max).ceil(),
    );
    let (xlo, xhi) = if xlo.is_finite() && xhi > xlo {
        (xlo, xhi)
    } else {
        (0.0, 1.0)
    };
    let px = |x: u64| left + ((x.max(1) as f64).log10() - xlo) / (xhi - xlo) * (w - left - right);
    let py = |y: f64| h - bottom - y / ymax * (h - top - bottom);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="13">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="28" text-anchor="middle" font-size="16">Bus bandwidth by message size</text>"#,
        (w - right + left) / 2.0
    );
    // Axes, decade ticks and grid.
    let (x0, x1, y0, y1) = (left, w - right, h - bottom, top);
    let _ = writeln!(
        s,
        r#"<path d="M{x0},{y1} V{y0} H{x1}" stroke="black" fill="none"/>"#
    );
    for d in xlo as i64..=xhi as i64 {
        let x = left + (d as f64 - xlo) / (xhi - xlo) * (w - left - right);
        let label = match d {
            0..=2 => format!("{} B", 10u64.pow(d as u32)),
            3..=5 => format!("{} kB", 10u64.pow(d as u32 - 3)),
            6..=8 => format!("{} MB", 10u64.pow(d as u32 - 6)),
            _ => format!("1e{d} B"),
        };
        let _ = writeln!(
            s,
            r##"<line x1="{x}" y1="{y1}" x2="{x}" y2="{y0}" stroke="#ddd"/><text x="{x}" y="{}" text-anchor="middle">{label}</text>"##,
            y0 + 20.0
        );
    }
    for i in 0..=5 {
        let v = ymax * i as f64 / 5.0;
        let y = py(v);
        let _ = writeln!(
            s,
            r##"<line x1="{x0}" y1="{y}" x2="{x1}" y2="{y}" stroke="#eee"/><text x="{}" y="{}" text-anchor="end">{v:.1}</text>"##,
            x0 - 8.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">message size (log scale)</text>"#,
        (x0 + x1) / 2.0,
        h - 25.0
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(22,{}) rotate(-90)" text-anchor="middle">bus bandwidth [GB/s]</text>"#,
        (y0 + y1) / 2.0
    );
    for (i, (name, pts)) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let mut pts = pts.clone();
        pts.sort_by_key(|p| p.0);
        let d: Vec<String> = pts
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            d.join(" ")
        );
        for &(x, y) in &pts {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{colour}"><title>{}: {x} B, {y:.3} GB/s</title></circle>"#,
                px(x),
                py(y),
                escape(name)
            );
        }
        legend_entry(&mut s, x1, top, i, colour, name);
    }
    s.push_str("</svg>\n");
    s
}

/// The `i`th line of a legend right of the plot (which ends at `x1`): a stroke of the
/// series' colour and its name.
fn legend_entry(s: &mut String, x1: f64, top: f64, i: usize, colour: &str, name: &str) {
    let ly = top + 20.0 + 22.0 * i as f64;
    let _ = writeln!(
        s,
        r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
        x1 + 20.0,
        x1 + 45.0,
        x1 + 52.0,
        ly + 4.0,
        escape(name)
    );
}

/// The live heap total (GiB, MiB or KiB as fits) over the events of heap simulator
/// traces, one step line per trace with its peak marked, written to `path`.
pub fn heap_svg(path: &Path, series: &[(String, Vec<i64>, Option<usize>)]) -> Result<()> {
    let svg = heap_svg_text(series);
    let mut out = crate::output::open_output(Some(path), &[])?;
    std::io::Write::write_all(&mut out, svg.as_bytes()).map_err(Error::Output)?;
    out.finish()
}

/// The SVG text of [`heap_svg`]. Each trace spans the width (its events in order); a
/// line has at most a couple of points per pixel column kept (the extremes), so traces of
/// any length draw alike.
pub fn heap_svg_text(series: &[(String, Vec<i64>, Option<usize>)]) -> String {
    let (w, h) = (900.0, 560.0);
    let (left, right, top, bottom) = (80.0, 260.0, 50.0, 70.0);
    let max = series
        .iter()
        .flat_map(|(_, t, _)| t.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let (unit, div) = [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        .into_iter()
        .find(|&(_, d)| max >= d as f64)
        .map_or(("B", 1.0), |(u, d)| (u, d as f64));
    let ymax = max * 1.1;
    let py = |y: f64| h - bottom - y / ymax * (h - top - bottom);
    let (x0, x1, y0, y1) = (left, w - right, h - bottom, top);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="13">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="28" text-anchor="middle" font-size="16">Live heap over the heap simulator's events</text>"#,
        (x0 + x1) / 2.0
    );
    let _ = writeln!(
        s,
        r#"<path d="M{x0},{y1} V{y0} H{x1}" stroke="black" fill="none"/>"#
    );
    for i in 0..=5 {
        let v = ymax * i as f64 / 5.0;
        let y = py(v);
        let _ = writeln!(
            s,
            r##"<line x1="{x0}" y1="{y}" x2="{x1}" y2="{y}" stroke="#eee"/><text x="{}" y="{}" text-anchor="end">{:.1}</text>"##,
            x0 - 8.0,
            y + 4.0,
            v / div
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">event (share of the trace)</text>"#,
        (x0 + x1) / 2.0,
        h - 25.0
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(22,{}) rotate(-90)" text-anchor="middle">live buffers [{unit}]</text>"#,
        (y0 + y1) / 2.0
    );
    for (i, (name, totals, peak)) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let n = totals.len().max(1) as f64;
        let px = |k: usize| x0 + k as f64 / n * (x1 - x0);
        // Per pixel column: the first, lowest, highest and last totals, in event order.
        let mut d: Vec<String> = Vec::new();
        let mut column: Option<(i64, Vec<(usize, i64)>)> = None;
        let flush = |col: &mut Option<(i64, Vec<(usize, i64)>)>, d: &mut Vec<String>| {
            if let Some((_, pts)) = col.take() {
                let lo = pts.iter().min_by_key(|p| p.1).copied();
                let hi = pts.iter().max_by_key(|p| p.1).copied();
                let mut keep: Vec<(usize, i64)> =
                    [pts.first().copied(), lo, hi, pts.last().copied()]
                        .into_iter()
                        .flatten()
                        .collect();
                keep.sort_unstable();
                keep.dedup();
                for (k, v) in keep {
                    // A step: the total holds until the next event.
                    d.push(format!("{:.1},{:.1}", px(k), py(v as f64)));
                    d.push(format!("{:.1},{:.1}", px(k + 1), py(v as f64)));
                }
            }
        };
        for (k, &v) in totals.iter().enumerate() {
            let c = px(k) as i64;
            if column.as_ref().is_some_and(|(cc, _)| *cc != c) {
                flush(&mut column, &mut d);
            }
            column.get_or_insert_with(|| (c, Vec::new())).1.push((k, v));
        }
        flush(&mut column, &mut d);
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="1.5"/>"#,
            d.join(" ")
        );
        if let Some(k) = *peak
            && let Some(&v) = totals.get(k)
        {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{colour}"><title>{}: peak {v} B at event {k}</title></circle>"#,
                px(k),
                py(v as f64),
                escape(name)
            );
        }
        legend_entry(&mut s, x1, top, i, colour, name);
    }
    s.push_str("</svg>\n");
    s
}
