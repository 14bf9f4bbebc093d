//! `njx-report`: the picture of a run that nsys-jax's `summary` and `communication`
//! analyses and its Analysis notebook give, from one reading of the inputs.
//!
//! Each input path is opened, decompressed and decoded once: its executions are derived
//! once and handed to every analysis' aggregate together ([`Whole`]), with the push/pop
//! ranges the executions' reading decodes anyway (for the compile time) and what the HLO
//! dumps say of each thunk as they are decoded. Each section is then written by its own
//! tool's writer from its own tool's aggregate, so every number is the one that tool
//! prints for the same input ([`sections`]). Only the kernels of SQLite exports are read
//! apart (from the exports, which the executions' reading does not decompress).
//!
//! This is a layer of its own, above the analyses: it composes them, and none of them
//! knows of it.
//!
//! The files, one job each:
//!
//! - `mod.rs`: the options and [`run`], the sequencing;
//! - `whole.rs`: [`Whole`], the aggregates of one reading, mergeable (`--partial`);
//! - `sections.rs`: the sections, made by the tools' writers;
//! - `figures.rs`: the page's pictures (bandwidth chart, flame graphs), drawn by their
//!   tools' code from the same aggregates;
//! - `text.rs`: the report for people; `json.rs`: the report as one JSON object;
//!   `html.rs`: the report as one self-contained page (`--html`).

mod figures;
pub mod findings;
mod html;
mod json;
mod sections;
mod text;
mod whole;

pub use sections::{SECTIONS, Section};
pub use whole::{PARTIAL, Read, Whole};

use crate::derived::executions;
use crate::derived::partial;
use crate::error::Result;
use crate::output::notes::Notes;
use std::io::Write;
use std::path::PathBuf;

/// How the report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Style {
    /// Text for people: each section a few lines.
    Text,
    /// One JSON object with every section's records.
    Json,
}

/// What `njx-report` writes.
#[derive(Debug, Clone)]
pub struct Options {
    /// Text or JSON.
    pub style: Style,
    /// Rows of each table shown in the text report.
    pub rows: usize,
    /// Archives or XLA dump folders holding HLO dumps, besides the archives among the
    /// inputs.
    pub hlo: Vec<PathBuf>,
    /// Write the aggregate as a partial result (kind [`PARTIAL`]) instead of the report.
    pub partial: bool,
    /// The thunk sections and flame graphs keep the largest programs until they cover
    /// this fraction of module time (njx-thunks' and njx-flamefold's `--top-modules`).
    pub top_modules: f64,
    /// The programs the module, collective and thunk sections and the flame graphs are
    /// for (`--program`, `--exclude-program`); compilation, heap and kernels are of every
    /// program.
    pub programs: crate::derived::programs::ProgramFilter,
    /// Whether the notes, which the report lists, are said to `notes` one by one too, as
    /// every tool says them (stderr); otherwise `notes` gets how many there are (a report
    /// read on the terminal, whose header lists them just above).
    pub each_note: bool,
    /// The thresholds of the findings' rules (`--threshold NAME=VALUE`).
    pub thresholds: findings::Thresholds,
    /// The program whose executions are the step (`--step-program`), by name or key;
    /// otherwise the one with the most compute time in steady state.
    pub step_program: Option<String>,
}

/// The report of `inputs` (or their partial result), written to `out`. The notes said
/// while reading are listed in the report (and counted in `notes`), or said to `notes`
/// where there is no report (a partial result, an error).
/// With `page`, the report is also written there as one self-contained HTML page
/// (`--html FILE`).
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    page: Option<&mut dyn Write>,
    notes: &Notes,
) -> Result<()> {
    crate::derived::gpu_time::check_top_modules(options.top_modules)?;
    // Kept to be listed in the report, and said on stderr too.
    let kept = notes.apart();
    let result =
        report(options, inputs, page.is_some(), out, &kept).and_then(|(whole, profiles)| {
            whole
                .map(|w| {
                    let s = sections::sections(&w, &profiles, options, &kept)?;
                    let f = match page.is_some() {
                        true => {
                            let sources =
                                crate::hlo::thunk_info::dump_sources(&profiles, &options.hlo);
                            figures::figures(&w, &s, &sources, options)?
                        }
                        false => (Vec::new(), Vec::new()),
                    };
                    Ok((w, s, f))
                })
                .transpose()
        });
    let said = kept.take();
    // Where the report lists them on the terminal, stderr says how many; a partial result
    // carries none, so they are said (the map step's log), as when the report fails.
    match &result {
        Ok(Some(_)) if !said.is_empty() && !options.each_note => notes.note(format!(
            "{} note{} on the input, listed in the report's header",
            said.len(),
            if said.len() == 1 { "" } else { "s" }
        )),
        _ => said.iter().for_each(|n| notes.note(n.clone())),
    }
    let Some((whole, sections, (figures, aligned))) = result? else {
        return Ok(());
    };
    let (step, found) = step_and_findings(&whole, inputs, options, notes)?;
    if let Some(page) = page {
        let page_of = html::Page {
            whole: &whole,
            step: &step,
            findings: &found,
            sections: &sections,
            figures: &figures,
            aligned: &aligned,
            notes: &said,
        };
        html::write(inputs, &page_of, page)?;
    }
    match options.style {
        Style::Text => text::write(
            options,
            inputs,
            &whole,
            (&step, &found),
            &sections,
            &said,
            out,
        ),
        Style::Json => json::write(inputs, &whole, (&step, &found), &sections, &said, out),
    }
}

/// Reads the inputs into their [`Whole`]; the partial result is written here (`None`
/// returned). Also returns the inputs read as profiles (not records or partial results).
fn report(
    options: &Options,
    inputs: &[PathBuf],
    html: bool,
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<(Option<Whole>, Vec<PathBuf>)> {
    let hlo = executions::Hlo {
        dumps: &options.hlo,
        key: executions::KeyBy::Fingerprint,
    };
    let claims = Default::default();
    let clocks = html && !options.partial;
    if options.partial {
        notes.writes_partial();
    }
    let (mut whole, profiles) =
        partial::aggregate_and_profiles(inputs, hlo, notes, || Whole::sharing(&claims, clocks))?;
    if options.partial {
        let sources = crate::hlo::thunk_info::dump_sources(&profiles, &options.hlo);
        whole.thunks.attach_infos(&sources, notes)?;
        partial::write(out, &whole)?;
        return Ok((None, profiles));
    }
    Ok((Some(whole), profiles))
}

/// The step and findings of `inputs` (`njx-diff --findings`): the report's reading of them
/// (partial results of `njx-report --partial` too), without its sections.
pub fn findings_of(
    inputs: &[PathBuf],
    hlo: &[PathBuf],
    thresholds: &findings::Thresholds,
    notes: &Notes,
) -> Result<(
    std::result::Result<crate::analysis::step::Step, String>,
    findings::Findings,
)> {
    let options = Options {
        style: Style::Json,
        rows: 0,
        hlo: hlo.to_vec(),
        partial: false,
        top_modules: 0.99,
        programs: Default::default(),
        each_note: true,
        thresholds: thresholds.clone(),
        step_program: None,
    };
    let (whole, _) = report(&options, inputs, false, &mut std::io::sink(), notes)?;
    let whole = whole.expect("a report, not a partial result");
    step_and_findings(&whole, inputs, &options, notes)
}

/// The step of `whole` (of `options.step_program` where given) and every rule's findings,
/// ranked: those over the aggregate, then nsys's expert-system rules over the CUDA
/// activity tables of `inputs`.
fn step_and_findings(
    whole: &Whole,
    inputs: &[PathBuf],
    options: &Options,
    notes: &Notes,
) -> Result<(
    std::result::Result<crate::analysis::step::Step, String>,
    findings::Findings,
)> {
    // Without XLA executions, the sections say why once.
    let step = match sections::no_xla(whole) {
        Some(_) => Err("no XLA module executions to make steps of".to_string()),
        None => whole.step(options.step_program.as_deref())?,
    };
    let t = &options.thresholds;
    let mut found = findings::findings(whole, &step, t);
    findings::nsys::rules(inputs, step.as_ref().ok(), t, notes, &mut found)?;
    findings::rank(&mut found);
    Ok((step, found))
}
