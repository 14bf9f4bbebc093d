//! Bus bandwidth against message size (njx-collectives `--plot`).

use super::*;
use std::collections::BTreeMap;

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
