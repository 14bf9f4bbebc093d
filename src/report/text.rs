//! The report for people: a header saying what was read, then each section as a few
//! rows of its tool's table and the command that gives the whole of it.

use super::Options;
use super::findings::Findings;
use super::sections::Section;
use super::whole::Whole;
use crate::analysis::step::{Figures, Step};
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
    (step, found): (&std::result::Result<Step, String>, &Findings),
    sections: &[Section],
    notes: &[String],
    out: &mut dyn Write,
) -> Result<()> {
    let mut text = String::new();
    for line in header(inputs, whole, notes) {
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str("\n== The step ==\n");
    for line in step_lines(step) {
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str("\n== Findings (the greatest saving per step first) ==\n");
    for line in super::findings::lines(found) {
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

/// `ns` in milliseconds, 3 decimals.
fn ms(ns: i64) -> String {
    crate::output::numbers::ms(ns as f64)
}

/// `part` as a share of `whole`, in percent, 1 decimal.
fn share(part: i64, whole: i64) -> String {
    if whole > 0 {
        format!("{:.1} %", 100.0 * part as f64 / whole as f64)
    } else {
        "-".to_string()
    }
}

/// The step for people: its parts over devices in one line, the other programs in it,
/// and a table of each device's; or why there is none.
pub(super) fn step_lines(step: &std::result::Result<Step, String>) -> Vec<String> {
    let s = match step {
        Ok(s) => s,
        Err(why) => return vec![format!("No step: {why}")],
    };
    let mut lines = step_prose(s);
    lines.extend(step_table(s));
    lines
}

/// The step in words: the main program, the parts over devices, the other programs.
pub(super) fn step_prose(s: &Step) -> Vec<String> {
    let f = &s.figures;
    let devices = s.per_device.len();
    let mut lines = vec![
        format!(
            "Main program: {} ({}), {} step{} on {} device{} (a step: from one steady \
             execution's start to the next's)",
            s.module,
            s.program,
            f.steps,
            plural(f.steps),
            devices,
            plural(devices)
        ),
        format!(
            "Step {} ms (shortest {} ms on device {}, longest {} ms on device {}) = compute {} \
             ms ({}) + exposed communication {} ms ({}) + GPU idle in modules {} ms ({}) + GPU \
             idle between modules {} ms ({})",
            ms(f.step_ns),
            ms(f.step_min_ns),
            s.step_min_device,
            ms(f.step_max_ns),
            s.step_max_device,
            ms(f.compute_ns),
            share(f.compute_ns, f.step_ns),
            ms(f.exposed_communication_ns),
            share(f.exposed_communication_ns, f.step_ns),
            ms(f.idle_in_modules_ns),
            share(f.idle_in_modules_ns, f.step_ns),
            ms(f.idle_between_modules_ns),
            share(f.idle_between_modules_ns, f.step_ns),
        ),
    ];
    if !f.other_programs.is_empty() {
        let others: Vec<String> = f
            .other_programs
            .iter()
            .map(|o| format!("{} {} ms", o.name, ms(o.ns)))
            .collect();
        lines.push(format!(
            "Other programs in the step (their module time, within the parts above): {}",
            others.join(", ")
        ));
    }
    lines
}

/// Each device's step as a table.
fn step_table(s: &Step) -> Vec<String> {
    let mut rows = vec![
        [
            "device",
            "steps",
            "step ms",
            "compute ms",
            "exposed comm ms",
            "idle in modules ms",
            "idle between ms",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let row = |device: String, f: &Figures| {
        vec![
            device,
            f.steps.to_string(),
            ms(f.step_ns),
            ms(f.compute_ns),
            ms(f.exposed_communication_ns),
            ms(f.idle_in_modules_ns),
            ms(f.idle_between_modules_ns),
        ]
    };
    for d in &s.per_device {
        rows.push(row(d.device.to_string(), &d.figures));
    }
    let mut table = Vec::new();
    // Into memory: it cannot fail.
    let _ = crate::output::write_table(&mut table, &rows, &[0, 1, 2, 3, 4, 5, 6]);
    String::from_utf8_lossy(&table)
        .lines()
        .map(str::to_string)
        .collect()
}
