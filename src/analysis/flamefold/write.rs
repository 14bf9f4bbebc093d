//! What njx-flamefold makes of its inputs ([`make`]: folded stacks, a differential
//! pairing of two folded files, or a partial result) and how each is written: as lines,
//! and drawn as an SVG flame graph.

use super::{Folded, Options, SvgOptions, Unit, diff, partial, render_svg};
use crate::derived::gpu_time::GpuTime;
use crate::error::{Error, Result};
use crate::output::notes::Notes;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What njx-flamefold made, to be written.
#[derive(Debug)]
pub enum Made {
    /// Folded stacks.
    Folded(Folded),
    /// The lines of a differential flame graph, `stack before after`.
    Diff(Vec<String>),
    /// The partial result of the inputs (`--partial`).
    Partial(Box<GpuTime>),
}

/// The title of the SVG when none is given.
pub fn default_title(by: super::By, diff: bool) -> &'static str {
    use super::By;
    if diff {
        return "Differential flame graph";
    }
    match by {
        By::Stack => "NVTX ranges by self time",
        By::Source => "GPU time by Python source",
        By::OpName => "GPU time by op_name",
        By::Opcode => "GPU time by HLO opcode",
        By::Module => "GPU time by module and thunk",
        By::Device => "GPU time by device",
    }
}

/// What `options` ask of `inputs`: the partial result, the two folded files of
/// `options.diff` paired, or the folded stacks (a note when they are empty).
pub fn make(options: &Options, inputs: &[PathBuf], notes: &Notes) -> Result<Made> {
    if options.partial {
        notes.writes_partial();
        return Ok(Made::Partial(Box::new(partial(options, inputs, notes)?)));
    }
    if let Some([before, after]) = &options.diff {
        let lines = diff(before, after, options.normalize)?
            .into_iter()
            .map(|(s, a, b)| format!("{s} {a} {b}"))
            .collect();
        return Ok(Made::Diff(lines));
    }
    let folded = super::fold(options, inputs, notes)?;
    if folded.is_empty() {
        notes.note("nothing to fold: the input has no time");
    }
    Ok(Made::Folded(folded))
}

impl Made {
    /// Draws the flame graph to `out`; an error naming `place` (the SVG file) when there
    /// are no stacks to draw. A partial result draws nothing.
    pub fn write_svg(
        &self,
        unit: Unit,
        options: &SvgOptions,
        place: &Path,
        out: &mut dyn Write,
    ) -> Result<()> {
        let folded;
        let lines: &[String] = match self {
            Made::Folded(f) => {
                folded = f.lines(unit);
                &folded
            }
            Made::Diff(lines) => lines,
            Made::Partial(_) => return Ok(()),
        };
        if lines.is_empty() {
            return Err(Error::data(
                place.display().to_string(),
                "no stacks to draw: the input has no time",
            ));
        }
        render_svg(lines, options, out)
    }

    /// Writes the folded lines (in `unit`), the differential lines, or the partial result.
    pub fn write(&self, unit: Unit, out: &mut dyn Write) -> Result<()> {
        match self {
            Made::Partial(time) => crate::derived::partial::write(out, &**time),
            Made::Folded(folded) => {
                // Written as they are made: the lines of deep stacks are long, and many.
                let mut write = |line: &str| writeln!(out, "{line}").map_err(Error::Output);
                folded.write_lines(unit, &mut write)
            }
            Made::Diff(lines) => lines
                .iter()
                .try_for_each(|l| writeln!(out, "{l}").map_err(Error::Output)),
        }
    }
}
