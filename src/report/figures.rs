//! The pictures of the page (`--html`): the bus bandwidth chart (njx-collectives
//! `--plot`) from the bandwidth section's rows, and the flame graphs by Python source and
//! by op_name (njx-flamefold `--by source|op-name --svg`) folded from the GPU time the
//! thunk views share — each drawn by its tool's own code from the same aggregate.

use super::sections::Section;
use super::whole::Whole;
use crate::analysis::flamefold::gpu::{self, GpuMode, GpuOptions};
use crate::analysis::flamefold::{self, SvgOptions, Unit};
use crate::error::Result;
use crate::output::charts::{BandwidthPoint, bandwidth_svg_text};
use crate::output::notes::Notes;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One picture, after the section it belongs to.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Its anchor on the page.
    pub id: &'static str,
    /// Its heading.
    pub title: &'static str,
    /// The command that draws it alone.
    pub command: &'static str,
    /// The section it follows.
    pub after: &'static str,
    /// The SVG, or why there is none.
    pub svg: std::result::Result<String, String>,
    /// Whether the SVG is interactive (scripts of its own: shown in a frame of its own).
    pub interactive: bool,
    /// How to read it (its marks, its axes), under its heading.
    pub caption: Option<&'static str>,
}

/// The bandwidth chart of the bandwidth section's rows.
fn bandwidth(sections: &[Section]) -> Result<Figure> {
    let mut series: BTreeMap<String, Vec<BandwidthPoint>> = BTreeMap::new();
    if let Some(s) = sections.iter().find(|s| s.id == "bandwidth") {
        for r in &s.rows {
            let (Some(c), Some(bytes), Some(bw)) = (
                r["collective"].as_str(),
                r["message_bytes"].as_u64(),
                r["busbw_mean_gbps"].as_f64(),
            ) else {
                continue;
            };
            let err = r["busbw_stderr_gbps"].as_f64();
            series
                .entry(c.to_string())
                .or_default()
                .push((bytes, bw, err));
        }
    }
    let svg = if series.is_empty() {
        Err("no collective with a bandwidth in the input".to_string())
    } else {
        Ok(bandwidth_svg_text(&series)?)
    };
    Ok(Figure {
        id: "bandwidth-chart",
        title: "Bus bandwidth by message size",
        command: "njx-collectives --plot busbw.svg INPUTS",
        after: "bandwidth",
        svg,
        interactive: false,
        caption: Some(
            "Per collective, the mean bus bandwidth of the fastest device of each instance against the message size, with bars of ± one standard error (busbw: see the glossary).",
        ),
    })
}

/// A flame graph of the GPU time of `whole` folded by `mode`.
fn flame(
    whole: &Whole,
    mode: GpuMode,
    hlo: &[PathBuf],
    report: &super::Options,
    notes: &Notes,
) -> Result<std::result::Result<String, String>> {
    let time = whole.thunks.gpu();
    if !time.has_infos() && hlo.is_empty() {
        return Ok(Err(
            "needs the HLO dumps: give the archives as inputs, or --hlo".to_string(),
        ));
    }
    if let Some(problem) = time.thunks_beyond_modules() {
        return Ok(Err(format!("njx-flamefold refuses the input: {problem}")));
    }
    let options = GpuOptions {
        mode,
        top_modules: report.top_modules,
        programs: report.programs.clone(),
        include_warmup: false,
    };
    let folded = gpu::fold(time, &options, hlo, notes)?;
    let lines = folded.lines(Unit::Ns);
    if lines.is_empty() {
        return Ok(Err("no GPU time in the input".to_string()));
    }
    let by = match mode {
        GpuMode::Source => flamefold::By::Source,
        _ => flamefold::By::OpName,
    };
    let svg_options = SvgOptions {
        title: flamefold::default_title(by, false).to_string(),
        width: 1300,
        count_name: "ns".to_string(),
        idle: false,
        diff: false,
        full_names: false,
    };
    let mut svg = Vec::new();
    match flamefold::render_svg(&lines, &svg_options, &mut svg) {
        Ok(()) => Ok(Ok(String::from_utf8_lossy(&svg).into_owned())),
        // All idle, say: why there is no picture.
        Err(e) => Ok(Err(e.to_string())),
    }
}

/// The live heap over each trace's events of the programs that ran (njx-heap `--svg`).
fn heap_chart(whole: &Whole) -> Result<Figure> {
    let curves = crate::analysis::heap::curves(&super::whole::program_heaps(whole));
    let svg = if curves.is_empty() {
        Err("no heap simulator trace in the dumps of the programs that ran".to_string())
    } else {
        Ok(crate::output::charts::heap_svg_text(&curves)?)
    };
    Ok(Figure {
        id: "heap-chart",
        title: "Heap memory over each program's events",
        command: "njx-heap --svg heap.svg INPUTS",
        after: "heap",
        svg,
        interactive: false,
        caption: Some(
            "Each program's live heap bytes along its buffer-assignment events (XLA's heap simulator trace), the peak marked as in the heap table.",
        ),
    })
}

/// Why the wait and lateness pictures are not drawn, if they are not.
fn no_clocks(whole: &Whole) -> Option<String> {
    match &whole.clocks {
        None => Some("drawn from profiles only with --html".to_string()),
        Some(c) if !c.profiles_only => Some(
            "these pictures compare the clocks of different devices, aligned as the profiles \
             are read: they are drawn from profiles, not from records or partial results"
                .to_string(),
        ),
        Some(_) => None,
    }
}

/// The wait distributions and lateness pictures (njx-collectives `--wait-plot`,
/// `--lateness-plot`), from the communication thunks kept as read, their clocks aligned
/// as njx-collectives aligns them and their warm-up decided as every section's; and what
/// the alignment corrected, as njx-collectives says it.
fn timing(whole: &Whole) -> Result<(Vec<Figure>, Vec<String>)> {
    use crate::analysis::collectives::timing::{self, Timing};
    use crate::derived::executions::{Alignment, Phase};
    let mut wait = Figure {
        id: "wait-chart",
        title: "Wait distributions per collective",
        command: "njx-collectives --wait-plot wait.svg INPUTS",
        after: "wait",
        svg: Err(String::new()),
        interactive: false,
        caption: Some(
            "Left: per collective, the box spans the middle half of its instances' waits (25 % \
             to 75 %), the thick line is the median, the whiskers reach the least and greatest \
             wait, and ▲ marks the mean (log scale; waits of zero are counted on the axis, not \
             drawn). Right: each instance's wait as a multiple of the fastest device's time, \
             against its message size. Clocks aligned.",
        ),
    };
    let mut late = Figure {
        id: "lateness-chart",
        title: "Lateness along the module timeline",
        command: "njx-collectives --lateness-plot lateness.svg INPUTS",
        after: "stragglers",
        caption: Some(
            "Per program (the four with most collectives), each device's start minus the first \
             device's at each collective, mean over executions, along the module execution: \
             which device is late, and where. Clocks aligned.",
        ),
        ..wait.clone()
    };
    let (Some(clocks), None) = (&whole.clocks, no_clocks(whole)) else {
        let why = no_clocks(whole).unwrap_or_default();
        wait.svg = Err(why.clone());
        late.svg = Err(why);
        return Ok((vec![wait, late], Vec::new()));
    };
    let mut alignment = Alignment::default();
    for t in clocks.thunks() {
        alignment.add(std::slice::from_ref(&t));
    }
    let corrections = alignment.corrections();
    let said: Vec<String> = corrections
        .iter()
        .flatten()
        .map(|(device, ns)| {
            format!(
                "clock alignment: device {device} corrected by {:+.6} ms",
                -ns / 1e6 + 0.0
            )
        })
        .collect();
    let shift = |device: u32| {
        corrections
            .as_ref()
            .and_then(|c| c.get(&device))
            .map_or(0, |c| c.round() as i64)
    };
    let rule = crate::derived::partial::Aggregate::warmup(&whole.collectives).rule();
    let mut t = Timing::new(false);
    for mut thunk in clocks.thunks() {
        thunk.warmup = rule.thunk_is_warmup(&thunk.program, Phase::of_profile(thunk.execution));
        thunk.start_ns -= shift(thunk.device);
        t.add(&thunk);
    }
    let quiet = Notes::kept();
    let drawn = |r: Result<String>| r.map_err(|e| e.to_string());
    wait.svg = drawn(timing::wait_svg_text(&t));
    late.svg = drawn(timing::lateness_svg_text(&t, &quiet));
    Ok((vec![wait, late], said))
}

/// Every figure of the page, given the sections; `hlo` are the dump sources (archives
/// among the inputs, `--hlo`); the flame graphs keep the programs the report is for and
/// that cover `--top-modules` of the time, as the thunk sections do.
pub fn figures(
    whole: &Whole,
    sections: &[Section],
    hlo: &[PathBuf],
    report: &super::Options,
) -> Result<(Vec<Figure>, Vec<String>)> {
    let mut out = vec![bandwidth(sections)?, heap_chart(whole)?];
    let mut clocks = Vec::new();
    if super::sections::no_xla(whole).is_none() {
        let (pictures, said) = timing(whole)?;
        out.extend(pictures);
        clocks = said;
    }
    if super::sections::no_xla(whole).is_none() {
        // The two flame graphs fold and draw at once, one per core (they were a tenth of
        // `njx-report --html`, run one after the other once every input was read). The
        // selection's notes were said by the thunk views.
        let mut flames =
            crate::util::parallel::parallel_map(&[GpuMode::Source, GpuMode::OpName], |&mode| {
                flame(whole, mode, hlo, report, &Notes::kept())
            })
            .into_iter();
        let (Some(source), Some(op_name)) = (flames.next(), flames.next()) else {
            unreachable!("two flame graphs asked, two folded");
        };
        out.push(Figure {
            id: "flame-source",
            title: "Flame graph: GPU time by Python source",
            command: "njx-flamefold --by source --svg source.svg INPUTS",
            after: "variability",
            svg: source?,
            interactive: true,
            caption: Some(
                "Width is GPU time (steady state), stacked by the Python source lines of each HLO instruction; click a frame to zoom, Ctrl-F to search.",
            ),
        });
        out.push(Figure {
            id: "flame-op-name",
            title: "Flame graph: GPU time by op_name",
            command: "njx-flamefold --by op-name --svg op-name.svg INPUTS",
            after: "variability",
            svg: op_name?,
            interactive: true,
            caption: Some(
                "Width is GPU time (steady state), stacked by the parts of each HLO instruction's op_name; click a frame to zoom, Ctrl-F to search.",
            ),
        });
    }
    Ok((out, clocks))
}
