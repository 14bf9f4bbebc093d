//! The report's sections: each one tool's table, made by that tool's own writer from the
//! aggregate [`Whole`] holds for it, as text for people and as the tool's JSON records —
//! so every number in the report is the number the tool prints.

use super::whole::Whole;
use crate::analysis::compile::{self, Group};
use crate::analysis::{collectives, kernels, thunks};
use crate::derived::executions::KeyBy;
use crate::derived::programs::ProgramFilter;
use crate::error::{Error, Result};
use crate::output::Format;
use crate::output::notes::Notes;
use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;

/// One section of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Section {
    /// Its name in the JSON report (`modules`, `wait`, …).
    pub id: &'static str,
    /// Its heading.
    pub title: &'static str,
    /// The command that gives its full table (`INPUTS` standing for the inputs).
    pub command: &'static str,
    /// Why it does not apply to the input, in one line; `None` where it does.
    pub absent: Option<String>,
    /// The tool's table for people.
    #[serde(skip)]
    pub table: String,
    /// How many lines of `table` head it (titles, column names).
    #[serde(skip)]
    pub head: usize,
    /// The footnote under the tool's table (what a figure means), where it has one.
    #[serde(skip)]
    pub footnote: Option<&'static str>,
    /// The tool's records (its `--format json` lines).
    pub rows: Vec<Value>,
}

/// Every section, in the report's order: (id, title, the command of its full table).
pub const SECTIONS: &[(&str, &str, &str)] = &[
    (
        "compile",
        "Compilation time by category",
        "njx-compile-summary --total --by category INPUTS",
    ),
    (
        "compile-ranges",
        "Compilation time, top ranges (every XLA pass apart)",
        "njx-compile-summary --total --passes INPUTS",
    ),
    (
        "modules",
        "Module executions (steady state)",
        "njx-modules INPUTS",
    ),
    (
        "wait",
        "Wait time per module execution",
        "njx-collectives --table wait INPUTS",
    ),
    (
        "bandwidth",
        "Bus bandwidth per collective and message size",
        "njx-collectives --table bandwidth INPUTS",
    ),
    (
        "hidden",
        "Communication hidden behind compute",
        "njx-collectives --table hidden INPUTS",
    ),
    (
        "hidden-by-program",
        "Communication hidden behind compute, per program",
        "njx-collectives --table hidden-by-program INPUTS",
    ),
    (
        "stragglers",
        "Devices that arrive last at collectives",
        "njx-collectives --table stragglers INPUTS",
    ),
    (
        "stragglers-by-program",
        "Devices that arrive last at collectives, per program",
        "njx-collectives --table stragglers-by-program INPUTS",
    ),
    ("thunks", "Top thunks by GPU time", "njx-thunks INPUTS"),
    (
        "opcodes",
        "GPU time by HLO opcode",
        "njx-thunks --view opcode INPUTS",
    ),
    (
        "variability",
        "Variability of compute thunks",
        "njx-thunks --view variability INPUTS",
    ),
    (
        "heap",
        "Heap memory: the peak of each program that ran",
        "njx-heap --view peak INPUTS",
    ),
    ("kernels", "CUDA kernels", "njx-kernels INPUTS"),
    (
        "memops",
        "Memory copies and sets",
        "njx-kernels --table memops INPUTS",
    ),
];

/// The sections made of XLA executions.
const OF_EXECUTIONS: &[&str] = &[
    "modules",
    "wait",
    "bandwidth",
    "hidden",
    "hidden-by-program",
    "stragglers",
    "stragglers-by-program",
    "thunks",
    "opcodes",
    "variability",
];

/// The title and command of section `id`.
fn meta(id: &'static str) -> (&'static str, &'static str) {
    let (_, title, command) = SECTIONS
        .iter()
        .find(|s| s.0 == id)
        .expect("every section is listed");
    (title, command)
}

/// Why the sections of XLA executions do not apply, where they do not.
pub(super) fn no_xla(whole: &Whole) -> Option<String> {
    let r = &whole.read;
    (r.module_executions == 0 && r.thunk_executions == 0).then(|| {
        if r.profile_paths > 0 {
            "not an XLA profile: no XLA module ranges (XlaModule NVTX ranges with GPU work) in \
             the input"
                .to_string()
        } else {
            "no module or thunk executions in the input".to_string()
        }
    })
}

/// A section made by `write`, called once for the table and once for the records.
fn section(
    id: &'static str,
    head: usize,
    write: &mut dyn FnMut(Format, &mut Vec<u8>) -> Result<()>,
) -> Result<Section> {
    let mut table = Vec::new();
    write(Format::Table, &mut table)?;
    let mut json = Vec::new();
    write(Format::Json, &mut json)?;
    let rows = json
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).map_err(|e| Error::Output(e.into())))
        .collect::<Result<Vec<Value>>>()?;
    let table = String::from_utf8_lossy(&table).into_owned();
    let (title, command) = meta(id);
    // A tool with nothing to show says so in one line: that line is why.
    let absent = rows.is_empty().then(|| table.trim().to_string());
    Ok(Section {
        id,
        title,
        command,
        absent,
        table,
        head,
        footnote: None,
        rows,
    })
}

/// A section that does not apply, and why.
fn absent(id: &'static str, why: String) -> Section {
    let (title, command) = meta(id);
    Section {
        id,
        title,
        command,
        absent: Some(why),
        table: String::new(),
        head: 0,
        footnote: None,
        rows: Vec::new(),
    }
}

/// The sections of compile time: by category, and the top ranges with every pass.
fn compile_sections(whole: &Whole, out: &mut Vec<Section>) -> Result<()> {
    let groupings = [
        ("compile", Group::Category, false),
        ("compile-ranges", Group::Name, true),
    ];
    for (id, by, passes) in groupings {
        if whole.compile.compilations() == 0 {
            let why = if whole.read.profile_paths == 0 {
                "compile time is read from profiles (archives, exports), not from execution \
                 records or partial results of them"
            } else {
                "no XlaCompile ranges in the input"
            };
            out.push(absent(id, why.to_string()));
            continue;
        }
        let total = whole.compile.regrouped(by, passes);
        let report = compile::Report::Total(total);
        out.push(section(id, 2, &mut |format, buf| {
            let options = compile::Options {
                total: true,
                passes,
                by: Some(by),
                top: None,
                threshold: None,
                format,
            };
            compile::write(&options, &report, buf)
        })?);
    }
    Ok(())
}

/// The module summary and the four tables of the collectives report, of the programs
/// `programs` keeps.
fn module_sections(whole: &Whole, programs: &ProgramFilter, out: &mut Vec<Section>) -> Result<()> {
    // A name no program has is refused here; what the filter leaves out is said once,
    // by the thunk sections' selection.
    whole.collectives.check_programs(programs, &Notes::kept())?;
    let summary = whole.modules.summary_of(false, false, programs);
    out.push(section("modules", 1, &mut |format, buf| {
        crate::analysis::modules::write(format, &summary, buf)
    })?);
    let parts = [
        ("wait", collectives::Part::Wait),
        ("bandwidth", collectives::Part::Bandwidth),
        ("hidden", collectives::Part::Hidden),
        ("hidden-by-program", collectives::Part::HiddenByProgram),
        ("stragglers", collectives::Part::Stragglers),
        (
            "stragglers-by-program",
            collectives::Part::StragglersByProgram,
        ),
    ];
    for (id, part) in parts {
        let mut s = section(id, 2, &mut |format, buf| {
            let options = collectives::Options {
                records: false,
                include_warmup: false,
                plot: None,
                format,
                program_key: KeyBy::Fingerprint,
                table: Some(part),
                wait_plot: None,
                lateness_plot: None,
                partial: false,
                programs: programs.clone(),
            };
            collectives::write(&options, &whole.collectives, buf)
        })?;
        s.footnote = part.footnote();
        out.push(s);
    }
    Ok(())
}

/// The three thunk views.
fn thunk_sections(
    whole: &Whole,
    inputs: &[PathBuf],
    report: &super::Options,
    notes: &Notes,
    out: &mut Vec<Section>,
) -> Result<()> {
    let views = [
        ("thunks", thunks::View::Top),
        ("opcodes", thunks::View::Opcode),
        ("variability", thunks::View::Variability),
    ];
    let hlo = &report.hlo[..];
    // What njx-thunks refuses, each view says, and the rest of the report stands.
    if let Some(problem) = whole.thunks.thunks_beyond_modules() {
        let why = format!("njx-thunks refuses the input: {problem}");
        notes.note(why.clone());
        out.extend(views.iter().map(|(id, _)| absent(id, why.clone())));
        return Ok(());
    }
    for (id, view) in views {
        if view == thunks::View::Opcode && !whole.thunks.has_infos() && hlo.is_empty() {
            let why = "needs the HLO dumps: give the archives as inputs, or --hlo";
            out.push(absent(id, why.to_string()));
            continue;
        }
        let options = thunks::Options {
            view,
            format: Format::Table,
            top: None,
            top_modules: report.top_modules,
            include_warmup: false,
            min_cv: 0.1,
            hlo: hlo.to_vec(),
            partial: false,
            programs: report.programs.clone(),
        };
        // Notes of the selection are said once, by the first view.
        let quiet = Notes::kept();
        let said = if view == thunks::View::Top {
            notes
        } else {
            &quiet
        };
        let rows = thunks::rows(&whole.thunks, &options, inputs, said)?;
        let mut made = section(id, 1, &mut |format, buf| thunks::write(format, &rows, buf))?;
        // njx-thunks says "no thunk executions" for a view left empty by its filter.
        if view == thunks::View::Variability && made.absent.is_some() {
            made.absent = Some(format!(
                "no compute thunk executed twice or more varies by more than {} % of its mean \
                 (njx-thunks --min-cv {})",
                options.min_cv * 100.0,
                options.min_cv
            ));
        }
        out.push(made);
    }
    Ok(())
}

/// The kernels and memory operations of the inputs that hold CUDA activity tables (nsys
/// exports and reports).
fn kernel_sections(
    whole: &Whole,
    inputs: &[PathBuf],
    notes: &Notes,
    out: &mut Vec<Section>,
) -> Result<()> {
    let with: Vec<PathBuf> = (inputs.iter())
        .filter(|p| crate::source::holds_gpu_ops(p))
        .cloned()
        .collect();
    for (id, table) in [
        ("kernels", kernels::Table::Kernels),
        ("memops", kernels::Table::Memops),
    ] {
        if with.is_empty() {
            // No profile read here: the report is of records or partial results.
            let why = if inputs.is_empty() && whole.read.thunk_executions > 0 {
                "kernels are read from the profiles (nsys SQLite exports, reports, njx-capture \
                 archives), not from records or partial results, which do not carry them"
            } else {
                "no CUDA activity tables in the input: nsys-jax archives keep none; they are in \
                 nsys SQLite exports, reports and njx-capture archives"
            };
            out.push(absent(id, why.to_string()));
            continue;
        }
        let options = kernels::Options {
            by: kernels::By::Name,
            format: Format::Table,
            table,
            per_device: false,
        };
        // The notes of reading the tables are said once, by the kernels.
        let quiet = Notes::kept();
        let said = if id == "kernels" { notes } else { &quiet };
        let rows = kernels::summarise(&options, &with, said)?;
        out.push(section(id, 1, &mut |format, buf| {
            kernels::write(format, kernels::By::Name, &rows, buf)
        })?);
    }
    Ok(())
}

/// The heap peak of each program that ran (njx-heap's `--view peak` rows of the dumps
/// the reading decoded), in program order.
fn heap_section(whole: &Whole, out: &mut Vec<Section>) -> Result<()> {
    let id = "heap";
    let heaps = super::whole::program_heaps(whole);
    if heaps.is_empty() {
        let why = match whole.heap_problems.first() {
            Some(problem) => format!("njx-heap refuses the dumps: {problem}"),
            None => "no after-optimizations HLO dump with a buffer assignment of a program \
                     that ran (they are in nsys-jax archives and njx-capture archives)"
                .to_string(),
        };
        out.push(absent(id, why));
        return Ok(());
    }
    out.push(section(id, 1, &mut |format, buf| {
        let options = crate::analysis::heap::Options {
            view: crate::analysis::heap::View::Peak,
            format,
            program: None,
            svg: None,
        };
        crate::analysis::heap::write(&options, &heaps, buf)
    })?);
    Ok(())
}

/// Every section of the report of `whole`; `inputs` are the profile paths it was read
/// from (their dumps, their CUDA activity tables); `options` give the dumps of `--hlo`,
/// the programs the sections are for and the fraction of the time the thunk views keep
/// (njx-thunks' `--top-modules`).
pub fn sections(
    whole: &Whole,
    inputs: &[PathBuf],
    options: &super::Options,
    notes: &Notes,
) -> Result<Vec<Section>> {
    let mut out = Vec::new();
    compile_sections(whole, &mut out)?;
    match no_xla(whole) {
        None => {
            module_sections(whole, &options.programs, &mut out)?;
            thunk_sections(whole, inputs, options, notes, &mut out)?;
        }
        Some(why) => out.extend(OF_EXECUTIONS.iter().map(|id| absent(id, why.clone()))),
    }
    heap_section(whole, &mut out)?;
    for problem in &whole.heap_problems {
        notes.note(format!("heap: {problem}"));
    }
    kernel_sections(whole, inputs, notes, &mut out)?;
    debug_assert!(out.iter().map(|s| s.id).eq(SECTIONS.iter().map(|s| s.0)));
    Ok(out)
}
