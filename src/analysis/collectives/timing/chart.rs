//! The two pictures of [`Timing`], as data: the wait distributions and each instance's
//! wait ratio, and the lateness lines of the programs with the most collective instances;
//! drawn by [`crate::output::charts::wait`] and [`crate::output::charts::lateness`].

use super::Timing;
use crate::analysis::collectives::rows::Row;
use crate::error::Result;
use crate::output::charts::lateness::{self, DeviceLines};
use crate::output::charts::wait::{self, RatioPoints};
use std::collections::BTreeMap;
use std::path::Path;

/// The wait distributions as a picture ([`wait::svg`]).
pub fn wait_svg(path: &Path, timing: &Timing) -> Result<()> {
    wait::svg(path, &timing.waits(), &ratio_points(timing))
}

/// The SVG text of [`wait_svg`].
pub fn wait_svg_text(timing: &Timing) -> Result<String> {
    wait::svg_text(&timing.waits(), &ratio_points(timing))
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

/// Lateness along the module timeline as a picture ([`lateness::svg`]): one panel per
/// program, captioned with its module name.
pub(in crate::analysis::collectives) fn lateness_svg(
    path: &Path,
    timing: &Timing,
    rows: &[Row],
) -> Result<()> {
    lateness::svg(path, &panels(timing, rows))
}

/// Lateness along the module timeline as SVG text ([`lateness_svg`]), its rows made here
/// (what they leave out said to `notes`).
pub fn lateness_svg_text(timing: &Timing, notes: &crate::output::notes::Notes) -> Result<String> {
    lateness::svg_text(&panels(timing, &timing.lateness_rows(notes)))
}

/// The panels of the lateness picture: one per program, captioned with its module name.
fn panels(timing: &Timing, rows: &[Row]) -> Vec<(String, DeviceLines)> {
    lateness_lines(rows)
        .into_iter()
        .map(|(program, devices)| {
            let name = timing.names.get(program).cloned().unwrap_or_default();
            (format!("{name} ({program})"), devices)
        })
        .collect()
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
