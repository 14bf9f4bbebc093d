//! The comparison written: a table for people (largest change first, the whole step
//! below), records (`Change`, JSON Lines or CSV), the differential folded stacks
//! (flamegraph.pl's `difffolded` lines, `stack before after`: the table's values in whole
//! nanoseconds, each side adding up to its total), and the CI gate (`--fail-if-slower`).

use super::compare::Compared;
use super::side::Settled;
use super::{By, Options, Outcome};
use crate::error::{Error, Result};
use crate::output::numbers::duration;
use crate::output::{Format, write_records, write_table};
use crate::util::stats::round_keeping_total;
use std::io::Write;
use std::str::FromStr;

/// `--fail-if-slower`: a significant slowdown beyond a percentage, of any key or of the
/// whole step (`total:PCT`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gate {
    /// Any key.
    Key(f64),
    /// The sum of every key's value.
    Total(f64),
}

impl FromStr for Gate {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Gate, String> {
        let (total, pct) = match s.strip_prefix("total:") {
            Some(p) => (true, p),
            None => (false, s),
        };
        let pct = pct.trim_end_matches('%');
        let v: f64 = pct
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("`{s}`: a percentage (5, 2.5) or total:PERCENT"))?;
        Ok(if total { Gate::Total(v) } else { Gate::Key(v) })
    }
}

impl Gate {
    /// Whether the comparison passes.
    pub fn check(&self, c: &Compared) -> Outcome {
        match *self {
            Gate::Key(limit) => {
                let beyond: Vec<String> = c
                    .changes
                    .iter()
                    .filter(|x| x.status == "slower" && x.change_pct.is_some_and(|p| p > limit))
                    .map(|x| format!("{} {:+.1}%", x.key, x.change_pct.unwrap_or(0.0)))
                    .collect();
                if beyond.is_empty() {
                    return Outcome::Passed;
                }
                let shown: Vec<&str> = beyond.iter().take(5).map(String::as_str).collect();
                Outcome::Failed(format!(
                    "{} significant slowdown{} beyond --fail-if-slower {limit}%: {}{}",
                    beyond.len(),
                    if beyond.len() == 1 { "" } else { "s" },
                    shown.join(", "),
                    if beyond.len() > shown.len() {
                        ", …"
                    } else {
                        ""
                    }
                ))
            }
            Gate::Total(limit) => {
                let t = &c.total;
                match t.comparison {
                    Some(cmp) if t.significant && 100.0 * cmp.change > limit => {
                        Outcome::Failed(format!(
                            "the whole step is significantly slower: {:+.1}% (interval \
                             {:+.1}% to {:+.1}%), beyond --fail-if-slower total:{limit}%",
                            100.0 * cmp.change,
                            100.0 * cmp.low,
                            100.0 * cmp.high
                        ))
                    }
                    _ => Outcome::Passed,
                }
            }
        }
    }
}

/// Writes the comparison as `options.format` says.
pub fn write(options: &Options, c: &Compared, out: &mut dyn Write) -> Result<()> {
    if options.format != Format::Table {
        return write_records(out, options.format, &c.changes);
    }
    let what = match options.by {
        By::Program => "mean per execution",
        By::Instruction => "per module execution",
        By::Collective => "mean per execution",
        By::Kernel | By::CompilePass => "total",
    };
    if c.changes.is_empty() {
        writeln!(
            out,
            "Nothing to compare: no {} on either side.",
            options.by.name()
        )
        .map_err(Error::Output)?;
        return out.flush().map_err(Error::Output);
    }
    let shown = options
        .top
        .map_or(c.changes.len(), |n| n.min(c.changes.len()));
    let mut rows = vec![vec![
        options.by.name().to_string(),
        format!("before ({what})"),
        "after".into(),
        "change".into(),
        "%".into(),
        format!("{}% interval", level(options)),
        "q".into(),
        "samples".into(),
        "status".into(),
    ]];
    let opt = |v: Option<f64>| v.map_or("-".to_string(), duration);
    for x in &c.changes[..shown] {
        let key = match &x.before_key {
            Some(b) => format!("{} (was {})", x.key, b.rsplit('/').next().unwrap_or(b)),
            None => x.key.clone(),
        };
        rows.push(vec![
            key,
            opt(x.before_ns),
            opt(x.after_ns),
            format!(
                "{}{}",
                if x.change_ns > 0.0 { "+" } else { "" },
                duration(x.change_ns)
            ),
            x.change_pct.map_or("-".into(), |p| format!("{p:+.1}")),
            match (x.ci_low_pct, x.ci_high_pct) {
                (Some(l), Some(h)) => format!("{l:+.1} .. {h:+.1}"),
                _ => "-".into(),
            },
            x.q_value.map_or("-".into(), significant_digits),
            format!("{} / {}", x.before_count, x.after_count),
            format!("{}{}", x.status, if x.significant { " *" } else { "" }),
        ]);
    }
    write_table(out, &rows, &[1, 2, 3, 4, 5, 6, 7])?;
    if shown < c.changes.len() {
        writeln!(
            out,
            "… {} more (--top 0 for all, --format json for records)",
            c.changes.len() - shown
        )
        .map_err(Error::Output)?;
    }
    let count = |s: &str| c.changes.iter().filter(|x| x.status == s).count();
    let t = &c.total;
    writeln!(
        out,
        "\n{} slower, {} faster, {} same, {} new, {} gone (* significant: q ≤ {} and at least \
         {}%)",
        count("slower"),
        count("faster"),
        count("same"),
        count("new"),
        count("gone"),
        options.rules.alpha,
        options.rules.min_change
    )
    .map_err(Error::Output)?;
    write!(
        out,
        "total ({what}, summed): {} → {}",
        duration(t.before_ns),
        duration(t.after_ns)
    )
    .map_err(Error::Output)?;
    match t.comparison {
        Some(cmp) => writeln!(
            out,
            ", {:+.1}% ({}% interval {:+.1} .. {:+.1}){}",
            100.0 * cmp.change,
            level(options),
            100.0 * cmp.low,
            100.0 * cmp.high,
            if t.significant { ", significant" } else { "" }
        ),
        None => writeln!(out),
    }
    .map_err(Error::Output)?;
    out.flush().map_err(Error::Output)
}

/// The differential folded stacks of the comparison: one line per key, `frames before
/// after`, the table's values in whole nanoseconds (0 for an absent side), rounded so that
/// each side adds up to its total rounded ([`round_keeping_total`]). The frames: the
/// key's parts (module and the instruction's op_name path, `KIND;SIZE`, a name).
pub fn folded(by: By, c: &Compared, before: &Settled, after: &Settled) -> Vec<String> {
    let mut lines: Vec<String> = stacks(by, c, before, after)
        .into_iter()
        .map(|(stack, b, a, _)| format!("{stack} {b} {a}"))
        .collect();
    lines.sort();
    lines
}

/// The frame that marks a change within the noise in the differential flame graph.
pub const NOISE: &str = "[noise]";

/// The lines the differential flame graph draws: [`folded`]'s, but a change that is not
/// significant (within the noise, by the false-discovery rule) is drawn without colour —
/// its before count set to its after count — under a last frame [`NOISE`], so that red
/// and blue mean what the table calls slower and faster. Widths are the after side's, as
/// in [`folded`].
pub fn svg_lines(by: By, c: &Compared, before: &Settled, after: &Settled) -> Vec<String> {
    let mut lines: Vec<String> = stacks(by, c, before, after)
        .into_iter()
        .map(|(stack, b, a, significant)| match significant {
            true => format!("{stack} {b} {a}"),
            false => format!("{stack};{NOISE} {a} {a}"),
        })
        .collect();
    lines.sort();
    lines
}

/// Each change's stack, before and after in whole nanoseconds (each side adding up to
/// its total rounded), and whether it is significant.
fn stacks(
    by: By,
    c: &Compared,
    before: &Settled,
    after: &Settled,
) -> Vec<(String, u64, u64, bool)> {
    let stacks: Vec<(String, f64, f64)> = c
        .changes
        .iter()
        .map(|x| {
            let stack = match by {
                By::Instruction => {
                    // A row's own side: before for a `gone` row (its key may end in
                    // " (before)" when another instruction has its name after).
                    let k = if x.status == "gone" {
                        let name = x.key.strip_suffix(super::compare::BEFORE_SUFFIX);
                        before.keys.get(name.unwrap_or(&x.key))
                    } else {
                        after.keys.get(&x.key)
                    };
                    let (module, inst, op) = k.map_or(("", x.key.as_str(), ""), |k| {
                        (
                            k.module.as_str(),
                            k.instruction.as_str(),
                            k.signature.as_ref().map_or("", |s| s.op_name.as_str()),
                        )
                    });
                    let mut frames = vec![frame(module)];
                    frames.extend(op.split('/').filter(|p| !p.is_empty()).map(frame));
                    frames.push(frame(inst));
                    frames.join(";")
                }
                By::Collective => frame(&x.key).replacen(' ', ";", 1),
                _ => frame(&x.key),
            };
            (stack, x.before_ns.unwrap_or(0.0), x.after_ns.unwrap_or(0.0))
        })
        .collect();
    // Whole nanoseconds adding up to each side's total (each rounded on its own, the
    // widths drawn would not).
    let side = |f: fn(&(String, f64, f64)) -> f64| {
        round_keeping_total(&stacks.iter().map(f).collect::<Vec<_>>(), 1.0)
    };
    let (b, a) = (side(|s| s.1), side(|s| s.2));
    stacks
        .into_iter()
        .zip(b.into_iter().zip(a))
        .zip(&c.changes)
        .map(|(((stack, _, _), (b, a)), x)| (stack, b, a, x.significant))
        .collect()
}

/// Writes folded lines.
pub fn lines(lines: &[String], out: &mut dyn Write) -> Result<()> {
    for l in lines {
        writeln!(out, "{l}").map_err(Error::Output)?;
    }
    out.flush().map_err(Error::Output)
}

/// The intervals' level, percent: 1 − --alpha.
fn level(options: &Options) -> String {
    let l = 100.0 * (1.0 - options.rules.alpha);
    format!("{}", (l * 1000.0).round() / 1000.0)
}

/// A frame: no `;` (the frame separator) and no line breaks.
fn frame(s: &str) -> String {
    let s = if s.is_empty() { "(none)" } else { s };
    s.replace(';', ":").replace(['\n', '\r'], " ")
}

/// A q-value for people: two significant digits (`0.031`, `4.2e-7`), 1 as `1`.
fn significant_digits(q: f64) -> String {
    if q >= 1.0 {
        "1".into()
    } else if q >= 1e-3 {
        format!("{:.*}", (1 - q.log10().floor() as i32).max(0) as usize, q)
    } else {
        format!("{q:.1e}")
    }
}
