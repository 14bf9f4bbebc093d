//! The report for people: a header saying what was read, then each section as a few
//! rows of its tool's table and the command that gives the whole of it.

use super::Options;
use super::sections::Section;
use super::whole::Whole;
use crate::derived::executions::device_list;
use crate::error::{Error, Result};
use std::io::Write;
use std::path::PathBuf;

/// The header: inputs, profiles, devices, programs, executions, the warm-up rule, clocks,
/// and every note said while reading.
pub(super) fn header(inputs: &[PathBuf], whole: &Whole, notes: &[String]) -> Vec<String> {
    let r = &whole.read;
    let programs = whole.programs();
    let mut lines = vec![format!(
        "Read: {} input{}, {} profile{} with XLA programs, {}, {} program{} that ran (distinct \
         by HLO fingerprint); {} module and {} thunk executions",
        inputs.len(),
        plural(inputs.len()),
        r.profiles.len(),
        plural(r.profiles.len()),
        if r.devices.is_empty() {
            "no devices".to_string()
        } else {
            device_list(&r.devices)
        },
        programs,
        plural(programs),
        r.module_executions,
        r.thunk_executions
    )];
    let shown: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
    lines.push(format!("INPUTS: {}", shown.join(" ")));
    let w = partial_warmup(whole);
    if r.module_executions > 0 {
        lines.push(format!(
            "Warm-up: nsys-jax's rule: the first execution of a program whose compilation was \
         profiled ({} program{} compiled within the profiles, run or not){} is \
         initialisation, left out of every section",
            w.0,
            plural(w.0),
            if w.1 {
                ", and one more as the profiles communicate"
            } else {
                ""
            }
        ));
    }
    lines.push(
        "Clocks: not aligned: no figure here compares the clocks of different devices".into(),
    );
    for n in notes {
        lines.push(format!("Note: {n}"));
    }
    lines
}

/// (programs whose compilation was profiled, whether the profiles communicate).
fn partial_warmup(whole: &Whole) -> (usize, bool) {
    let w = crate::derived::partial::Aggregate::warmup(&whole.modules);
    (w.compiled.len(), w.has_comm)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Writes the report for people.
pub(super) fn write(
    options: &Options,
    inputs: &[PathBuf],
    whole: &Whole,
    sections: &[Section],
    notes: &[String],
    out: &mut dyn Write,
) -> Result<()> {
    let mut text = String::new();
    for line in header(inputs, whole, notes) {
        text.push_str(&line);
        text.push('\n');
    }
    let mut at = 0;
    while at < sections.len() {
        let s = &sections[at];
        at += 1;
        if let Some(why) = &s.absent {
            // Sections that do not apply for the same reason, said once.
            let mut titles = vec![s.title];
            while let Some(next) = sections.get(at).filter(|n| n.absent.as_ref() == Some(why)) {
                titles.push(next.title);
                at += 1;
            }
            text.push_str(&format!(
                "\n== {} ==\nDoes not apply: {why}\n",
                titles.join("; ")
            ));
            continue;
        }
        text.push_str(&format!("\n== {} ==\n", s.title));
        let lines: Vec<&str> = s.table.lines().collect();
        let shown = lines.len().min(s.head + options.rows);
        for line in &lines[..shown] {
            text.push_str(line);
            text.push('\n');
        }
        let more = lines.len() - shown;
        text.push_str(&if more > 0 {
            format!("… {more} more line{}: {}\n", plural(more), s.command)
        } else {
            format!("(all of it: {})\n", s.command)
        });
    }
    out.write_all(text.as_bytes()).map_err(Error::Output)?;
    out.flush().map_err(Error::Output)
}
