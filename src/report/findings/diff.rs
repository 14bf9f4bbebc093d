//! `njx-diff --findings`: the findings of two runs side by side, matched by rule, key and
//! device: those that appeared, went, or whose saving changed, and the step of each.

use super::{Finding, Findings, ms};
use crate::analysis::step::Step;
use crate::error::{Error, Result};
use crate::output::Format;
use serde::Serialize;
use std::io::Write;

/// One finding compared (a record of `njx-diff --findings --format json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Change {
    /// `appeared` (after only), `went` (before only), `changed` (saving per step not the
    /// same) or `same`.
    pub change: &'static str,
    /// The rule.
    pub rule: &'static str,
    /// What in the program (a collective kind, a module name), as the finding says.
    pub key: Option<String>,
    /// The device, where one.
    pub device: Option<u32>,
    /// Its severity before (null where it was not found).
    pub before_severity: Option<&'static str>,
    /// Its severity after.
    pub after_severity: Option<&'static str>,
    /// Its saving per step before, ns (null where not found).
    pub before_saving_ns: Option<i64>,
    /// Its saving per step after, ns.
    pub after_saving_ns: Option<i64>,
    /// Its title after (before where it went).
    pub title: String,
}

/// A finding's identity across runs: program keys (fingerprints) change with every
/// recompilation, so the rule, its key and device.
fn identity(f: &Finding) -> (&'static str, Option<&str>, Option<u32>) {
    (f.rule, f.key.as_deref(), f.device)
}

/// The findings of `before` and `after` compared: after's order (greatest saving first),
/// then those that went.
pub fn compare(before: &Findings, after: &Findings) -> Vec<Change> {
    let mut out = Vec::new();
    let find = |list: &'_ [Finding], f: &Finding| {
        list.iter().find(|g| identity(g) == identity(f)).cloned()
    };
    for a in &after.findings {
        let b = find(&before.findings, a);
        let change = match &b {
            None => "appeared",
            Some(b) if b.saving_ns != a.saving_ns => "changed",
            Some(_) => "same",
        };
        out.push(Change {
            change,
            rule: a.rule,
            key: a.key.clone(),
            device: a.device,
            before_severity: b.as_ref().map(|b| b.severity),
            after_severity: Some(a.severity),
            before_saving_ns: b.as_ref().map(|b| b.saving_ns),
            after_saving_ns: Some(a.saving_ns),
            title: a.title.clone(),
        });
    }
    for b in &before.findings {
        if find(&after.findings, b).is_none() {
            out.push(Change {
                change: "went",
                rule: b.rule,
                key: b.key.clone(),
                device: b.device,
                before_severity: Some(b.severity),
                after_severity: None,
                before_saving_ns: Some(b.saving_ns),
                after_saving_ns: None,
                title: b.title.clone(),
            });
        }
    }
    out
}

/// Writes the comparison: for people, the steps then the findings by change; as records,
/// one per finding.
pub fn write(
    format: Format,
    steps: (
        &std::result::Result<Step, String>,
        &std::result::Result<Step, String>,
    ),
    changes: &[Change],
    out: &mut dyn Write,
) -> Result<()> {
    if format != Format::Table {
        return crate::output::write_records(out, format, changes);
    }
    let mut text = String::new();
    let step = |s: &std::result::Result<Step, String>| match s {
        Ok(s) => format!("{} per step of {}", ms(s.figures.step_ns), s.module),
        Err(why) => format!("no step ({why})"),
    };
    text += &format!(
        "Step before: {}\nStep after:  {}\n",
        step(steps.0),
        step(steps.1)
    );
    if let (Ok(b), Ok(a)) = steps {
        let (b, a) = (b.figures.step_ns, a.figures.step_ns);
        if b > 0 {
            text += &format!(
                "Change: {:+.1} % ({})\n",
                100.0 * (a - b) as f64 / b as f64,
                ms(a - b)
            );
        }
    }
    for (change, heading) in [
        ("appeared", "Findings that appeared"),
        ("changed", "Findings whose saving changed"),
        ("went", "Findings that went"),
        ("same", "Findings unchanged"),
    ] {
        let these: Vec<&Change> = changes.iter().filter(|c| c.change == change).collect();
        text += &format!("\n== {heading} ({}) ==\n", these.len());
        for c in these {
            let saving = |s: Option<i64>| s.map_or("-".to_string(), ms);
            text += &format!(
                "[{}] {}: {} — {} → {} per step\n",
                c.after_severity.or(c.before_severity).unwrap_or(""),
                c.rule,
                c.title,
                saving(c.before_saving_ns),
                saving(c.after_saving_ns)
            );
        }
    }
    out.write_all(text.as_bytes()).map_err(Error::Output)?;
    out.flush().map_err(Error::Output)
}
