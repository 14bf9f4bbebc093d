//! The report as one JSON object: what was read, the notes, and every section's records
//! (each its tool's `--format json` lines) or why it does not apply.

use super::findings::{Finding, Findings, Quiet};
use super::sections::Section;
use super::whole::{Read, Whole};
use crate::analysis::step::Step;
use crate::error::{Error, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

#[derive(Serialize)]
struct Report<'a> {
    /// The layout's version.
    njx_report: u32,
    inputs: Vec<String>,
    read: &'a Read,
    programs: usize,
    notes: &'a [String],
    /// The step of the main module (null where there is none: `step_absent` says why).
    step: Option<&'a Step>,
    step_absent: Option<&'a str>,
    /// The findings, the greatest saving first.
    findings: &'a [Finding],
    /// The rules that ran and did not fire.
    rules_quiet: &'a [Quiet],
    /// Section id → the section.
    sections: BTreeMap<&'a str, &'a Section>,
    /// The sections' order.
    order: Vec<&'a str>,
}

/// Writes the report as one JSON object and a newline.
pub(super) fn write(
    inputs: &[PathBuf],
    whole: &Whole,
    (step, found): (&std::result::Result<Step, String>, &Findings),
    sections: &[Section],
    notes: &[String],
    out: &mut dyn Write,
) -> Result<()> {
    let report = Report {
        step: step.as_ref().ok(),
        step_absent: step.as_ref().err().map(String::as_str),
        findings: &found.findings,
        rules_quiet: &found.quiet,
        njx_report: 1,
        inputs: inputs.iter().map(|p| p.display().to_string()).collect(),
        read: &whole.read,
        programs: whole.programs(),
        notes,
        sections: sections.iter().map(|s| (s.id, s)).collect(),
        order: sections.iter().map(|s| s.id).collect(),
    };
    serde_json::to_writer(&mut *out, &report).map_err(|e| Error::Output(e.into()))?;
    out.write_all(b"\n").map_err(Error::Output)?;
    out.flush().map_err(Error::Output)
}
