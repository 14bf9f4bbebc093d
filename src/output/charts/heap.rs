//! The live heap over a heap simulator trace's events (njx-heap `--svg`).

use super::*;

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
