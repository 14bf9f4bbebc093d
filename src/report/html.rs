//! The report as one self-contained page (`--html FILE`) that explains itself: every
//! section as a sortable table of its tool's records, labelled and captioned as the text
//! report, the pictures after the sections they belong to with how to read them, a table
//! of contents (the sections that apply first), a header saying what was read and a
//! glossary. Nothing is loaded from elsewhere: the styles and the one script (sorting) are
//! in the page, the charts are inline SVG, and each flame graph (an SVG with inferno's
//! script for zoom and search) is the document of a frame of its own (`srcdoc`), so that
//! their scripts do not meet, scaled to the page and drawn when it opens, so it prints.

use super::figures::Figure;
use super::sections::Section;
use super::text::header;
use super::whole::Whole;
use crate::analysis::step::Step;
use crate::error::{Error, Result};
use serde_json::Value;
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

/// Rows of a table shown on the page; the section's command gives them all.
pub const ROWS: usize = 200;

const STYLE: &str = "
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 0 auto;
  max-width: 1360px; padding: 0 20px 40px; color: #1d2127; background: #fff; }
h1 { font-size: 24px; margin: 20px 0 6px; } h2 { font-size: 18px; margin: 28px 0 6px;
  border-bottom: 1px solid #d6dae0; padding-bottom: 3px; }
nav ol { columns: 3; margin: 6px 0; padding-left: 22px; } nav a { text-decoration: none; }
.read li, .notes li { margin: 2px 0; } .notes { color: #5a4a00; }
.cmd { color: #555; margin: 2px 0 8px; } code { font: 12.5px ui-monospace, Menlo, monospace;
  background: #f2f4f7; padding: 1px 4px; border-radius: 3px; }
.absent { color: #666; font-style: italic; }
.wrap { overflow: auto; max-width: 100%; max-height: 440px; border: 1px solid #e4e7eb; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border-bottom: 1px solid #e4e7eb; padding: 3px 8px; text-align: left;
  vertical-align: top; }
th { background: #f2f4f7; cursor: pointer; white-space: nowrap; position: sticky; top: 0; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.text { min-width: 16ch; max-width: 64ch; overflow-wrap: anywhere; }
th[aria-sort=ascending]::after { content: ' \\25B2'; }
th[aria-sort=descending]::after { content: ' \\25BC'; }
.more { color: #555; font-size: 13px; margin: 4px 0; }
figure { margin: 10px 0; } figure svg { max-width: 100%; height: auto; }
iframe { width: 100%; height: auto; border: 1px solid #d6dae0; }
.caption { margin: 2px 0 6px; } .footnote { color: #555; font-size: 13px; margin: 4px 0; }
nav li.na, nav li.na a { color: #888; } nav li.na span { font-size: 12px; }
table.steps { width: 100%; } table.steps td { border: 0; padding: 2px 8px; white-space: nowrap; } td.bar { width: 100%; }
td.bar div { display: flex; height: 16px; } td.bar span { display: block; height: 100%; }
.legend .key { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 10px;
  vertical-align: -1px; }
dl.glossary dt { font-weight: 600; margin-top: 8px; } dl.glossary dd { margin-left: 20px; }
@media print { .wrap { max-height: none; overflow: visible; } nav ol { columns: 2; }
  th { position: static; } section { break-inside: avoid-page; } }
";

/// Sorts a table by the column whose heading is clicked: numbers by value, text by text;
/// a second click reverses.
const SCRIPT: &str = "
document.querySelectorAll('table.sortable th').forEach(function (th, i) {
  th.addEventListener('click', function () {
    var table = th.closest('table'), body = table.tBodies[0];
    var up = th.getAttribute('aria-sort') !== 'ascending';
    table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', up ? 'ascending' : 'descending');
    var rows = Array.prototype.slice.call(body.rows);
    var key = function (r) { var c = r.cells[i]; return c.dataset.v !== undefined ?
      parseFloat(c.dataset.v) : c.textContent; };
    rows.sort(function (a, b) { var x = key(a), y = key(b);
      var d = (typeof x === 'number' && typeof y === 'number') ? x - y :
        String(x).localeCompare(String(y));
      return up ? d : -d; });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
";

/// `text` with `&`, `<`, `>`, `\"` and `'` escaped, for text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// How a column's values are shown.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    /// As the record has it.
    Plain,
    /// Nanoseconds shown in milliseconds.
    Ms,
    /// A fraction shown in percent.
    Fraction,
    /// A percentage.
    Percent,
    /// Bytes in binary units (KiB, MiB, GiB).
    Bytes,
    /// GB/s, to 4 significant digits.
    Gbps,
}

/// A column's heading and unit, as the text report labels it: `hidden %` for
/// `hidden_ratio`, `dur mean ms` for `dur_mean_ns`, sizes in MiB.
fn column(key: &str) -> (String, Unit) {
    let words = |stem: &str| stem.replace('_', " ");
    match key {
        "hidden_ratio" => ("hidden %".into(), Unit::Fraction),
        "cv" => ("cv %".into(), Unit::Fraction),
        "percent" => ("%".into(), Unit::Percent),
        "bytes" => ("size".into(), Unit::Bytes),
        "message_bytes" => ("message size".into(), Unit::Bytes),
        "allocation_bytes" => ("allocation size".into(), Unit::Bytes),
        _ => {
            let with = |suffix: &str| key.strip_suffix(suffix).map(words);
            if let Some(stem) = with("_percent") {
                (format!("{stem} %"), Unit::Percent)
            } else if let Some(stem) = with("_ns") {
                (format!("{stem} ms"), Unit::Ms)
            } else if let Some(stem) = with("_bytes") {
                (stem, Unit::Bytes)
            } else if let Some(stem) = with("_gbps") {
                (format!("{stem} GB/s"), Unit::Gbps)
            } else {
                (words(key), Unit::Plain)
            }
        }
    }
}

/// One cell: (class, sort value, text shown); the sort value is the record's own.
fn cell(unit: Unit, v: &Value) -> (&'static str, Option<String>, String) {
    match v {
        Value::Null => ("num", Some("-Infinity".into()), "–".into()),
        Value::Bool(b) => ("text", None, b.to_string()),
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            let shown = match unit {
                Unit::Ms => format!("{:.3}", x / 1e6),
                Unit::Fraction => format!("{:.2}", x * 100.0),
                Unit::Percent => format!("{x:.2}"),
                Unit::Bytes => crate::output::numbers::mib(x as i64),
                Unit::Gbps => crate::output::charts::significant(x, 4),
                Unit::Plain if n.is_f64() => {
                    let digits = if x.abs() >= 100.0 { 2 } else { 4 };
                    format!("{x:.digits$}")
                }
                Unit::Plain => n.to_string(),
            };
            ("num", Some(n.to_string()), shown)
        }
        Value::String(s) => ("text", None, s.clone()),
        other => ("text", None, other.to_string()),
    }
}

/// A section's rows as a sortable table (at most [`ROWS`]).
fn table(s: &Section, html: &mut String) {
    let Some(Value::Object(first)) = s.rows.first() else {
        return;
    };
    let keys: Vec<&String> = first.keys().filter(|k| *k != "table").collect();
    let units: Vec<Unit> = keys.iter().map(|k| column(k).1).collect();
    html.push_str("<div class=\"wrap\"><table class=\"sortable\"><thead><tr>");
    for k in &keys {
        let numeric = first.get(*k).is_some_and(|v| v.is_number() || v.is_null());
        // The record's field name on hover: the page's columns are the records'.
        let _ = write!(
            html,
            "<th{} title=\"{}\">{}</th>",
            if numeric { " class=\"num\"" } else { "" },
            escape(k),
            escape(&column(k).0)
        );
    }
    html.push_str("</tr></thead><tbody>");
    for row in s.rows.iter().take(ROWS) {
        html.push_str("<tr>");
        for (k, unit) in keys.iter().zip(&units) {
            let (class, sort, shown) = cell(*unit, row.get(k.as_str()).unwrap_or(&Value::Null));
            let _ = write!(html, "<td class=\"{class}\"");
            if let Some(v) = sort {
                let _ = write!(html, " data-v=\"{}\"", escape(&v));
            }
            let _ = write!(html, ">{}</td>", escape(&shown));
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table></div>");
    if s.rows.len() > ROWS {
        let _ = write!(
            html,
            "<p class=\"more\">The first {ROWS} of {} rows; all of them: <code>{}</code></p>",
            s.rows.len(),
            escape(s.command)
        );
    }
}

/// The width and height an SVG asks for (its root's attributes).
fn svg_size(svg: &str) -> Option<(f64, f64)> {
    let root = &svg[svg.find("<svg")?..];
    let root = &root[..root.find('>')?];
    let attr = |name: &str| {
        root.split(&format!(" {name}=\""))
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .and_then(|v| v.trim_end_matches("px").parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v > 0.0)
    };
    Some((attr("width")?, attr("height")?))
}

/// How an interactive SVG (a flame graph) fills its frame: the frame keeps the picture's
/// proportions at the page's width, and the picture is scaled to the frame, so that it
/// shows whole without scrolling, on screen and on paper.
const FRAME_STYLE: &str = "<style>html, body { margin: 0; } \
    svg { display: block; width: 100%; height: auto; }</style>";

fn figure(f: &Figure, html: &mut String) {
    let _ = write!(
        html,
        "<section id=\"{}\"><h2>{}</h2><p class=\"cmd\"><code>{}</code></p>",
        f.id,
        escape(f.title),
        escape(f.command)
    );
    if let Some(caption) = f.caption {
        let _ = write!(html, "<p class=\"caption\">{}</p>", escape(caption));
    }
    match &f.svg {
        Err(why) => {
            let _ = write!(html, "<p class=\"absent\">Not drawn: {}</p>", escape(why));
        }
        Ok(svg) if f.interactive => {
            let (w, h) = svg_size(svg).unwrap_or((1200.0, 600.0));
            // Drawn when the page opens (not when scrolled to), so that it prints too.
            let _ = write!(
                html,
                "<iframe title=\"{}\" style=\"aspect-ratio: {w} / {h}\" \
                 sandbox=\"allow-scripts\" srcdoc=\"{}{}\"></iframe>",
                escape(f.title),
                escape(FRAME_STYLE),
                escape(svg)
            );
        }
        Ok(svg) => {
            // Plotters' SVG starts with an XML declaration, not allowed inside HTML.
            let body = svg.find("<svg").map_or(svg.as_str(), |at| &svg[at..]);
            let _ = write!(html, "<figure>{body}</figure>");
        }
    }
    html.push_str("</section>\n");
}

/// The terms the page's tables and pictures use, as njx computes them.
const GLOSSARY: &[(&str, &str)] = &[
    (
        "exposed",
        "The part of a communication thunk's time during which no compute thunk runs on its \
         device: what the step waits for. A communication thunk record's dur_ns is its exposed \
         time.",
    ),
    (
        "hidden",
        "The part of a communication thunk's time overlapped by compute on the same device. \
         hidden % = hidden ÷ (hidden + exposed), per collective and overall; a barrier (a tiny \
         all-reduce that only synchronises) lowers it for the whole run: see the per-program \
         table.",
    ),
    (
        "wait",
        "Per collective instance, the longest minus the shortest exposed time over the devices \
         that took part: how long the others waited for the last to arrive. The wait table sums \
         it over a module execution's collectives, so wait % (of the module's time, as nsys-jax \
         defines it) can pass 100 %. On aligned clocks (the wait picture): last end − first \
         start − the fastest device's time.",
    ),
    (
        "busbw",
        "Bus bandwidth, as nccl-tests defines it: algbw = factor × message bytes ÷ (exposed + \
         hidden time), factor n (the devices) for all-gather and reduce-scatter, else 1; busbw \
         = algbw × 2(n−1)/n for all-reduce, × (n−1)/n for all-gather, reduce-scatter and \
         all-to-all, × 1 otherwise. The fastest device of each instance counts.",
    ),
    (
        "lateness",
        "In the stragglers tables, by how much the last device to arrive at a collective was \
         late (longest − shortest exposed time of that instance), averaged over the instances \
         where it was last. In the lateness picture, a device's start minus the first device's \
         start at each collective, on aligned clocks.",
    ),
    (
        "warm-up",
        "nsys-jax's rule: the first execution of each program whose compilation was profiled \
         is initialisation, and one more when the profiles communicate; left out of every \
         section (steady state).",
    ),
    (
        "autotuning",
        "Executions XLA's autotuner runs while compiling (program unknown, no program id): \
         never part of the steady state.",
    ),
    (
        "[inconsistent metadata]",
        "In a flame graph: dumps of one program (per process or per compilation) that \
         disagree on an instruction's stack; the frames they share stay outside it.",
    ),
    (
        "[GPU idle during module execution]",
        "Module time minus the time of its thunks: the GPU waiting inside a module.",
    ),
];

fn glossary(html: &mut String) {
    html.push_str("<section id=\"glossary\"><h2>Glossary</h2><dl class=\"glossary\">");
    for (term, meaning) in GLOSSARY {
        let _ = write!(
            html,
            "<dt>{}</dt><dd>{}</dd>",
            escape(term),
            escape(meaning)
        );
    }
    html.push_str("</dl></section>\n");
}

/// What a section's table says above and below it in the text report: its title lines
/// (those of the tool's table before the column names, where they are more than the
/// section's heading), and its footnote.
fn captions(s: &Section) -> (Vec<&str>, Option<&'static str>) {
    let above: Vec<&str> = s
        .table
        .lines()
        .take(s.head.saturating_sub(1))
        .filter(|l| l.trim() != s.title)
        .collect();
    (above, s.footnote)
}

/// What the page shows.
pub(super) struct Page<'a> {
    pub whole: &'a Whole,
    pub step: &'a std::result::Result<Step, String>,
    pub findings: &'a super::findings::Findings,
    pub sections: &'a [Section],
    pub figures: &'a [Figure],
    pub aligned: &'a [String],
    pub notes: &'a [String],
}

/// The step: its line over devices, and per device a bar of its parts with their times.
fn step_section(step: &std::result::Result<Step, String>, html: &mut String) {
    html.push_str("<section id=\"step\"><h2>The step</h2>");
    let s = match step {
        Ok(s) => s,
        Err(why) => {
            let _ = writeln!(
                html,
                "<p class=\"absent\">No step: {}</p></section>",
                escape(why)
            );
            return;
        }
    };
    for line in super::text::step_prose(s) {
        let _ = write!(html, "<p class=\"caption\">{}</p>", escape(&line));
    }
    let parts = [
        ("compute", "#4c9a4c"),
        ("exposed communication", "#d9534f"),
        ("GPU idle in modules", "#f0ad4e"),
        ("GPU idle between modules", "#9aa4b1"),
    ];
    html.push_str("<p class=\"legend\">");
    for (name, colour) in parts {
        let _ = write!(
            html,
            "<span class=\"key\" style=\"background:{colour}\"></span>{name} "
        );
    }
    html.push_str("</p><table class=\"steps\"><tbody>");
    let longest = s
        .per_device
        .iter()
        .map(|d| d.figures.step_ns)
        .max()
        .unwrap_or(1)
        .max(1);
    for d in &s.per_device {
        let f = &d.figures;
        let values = [
            f.compute_ns,
            f.exposed_communication_ns,
            f.idle_in_modules_ns,
            f.idle_between_modules_ns,
        ];
        let _ = write!(
            html,
            "<tr><td>device {}</td><td class=\"num\">{:.3} ms</td><td class=\"bar\"><div style=\"width:{:.2}%\">",
            d.device,
            f.step_ns as f64 / 1e6,
            100.0 * f.step_ns as f64 / longest as f64
        );
        for ((name, colour), v) in parts.iter().zip(values) {
            let pct = if f.step_ns > 0 {
                100.0 * v as f64 / f.step_ns as f64
            } else {
                0.0
            };
            let _ = write!(
                html,
                "<span style=\"width:{pct:.3}%;background:{colour}\" title=\"{name}: {:.3} ms ({pct:.1} %)\"></span>",
                v as f64 / 1e6
            );
        }
        html.push_str("</div></td></tr>");
    }
    html.push_str("</tbody></table></section>\n");
}

/// The findings, each with its advice and command, then the rules that did not fire.
fn findings_section(f: &super::findings::Findings, html: &mut String) {
    html.push_str("<section id=\"findings\"><h2>Findings</h2><ol class=\"findings\">");
    for x in &f.findings {
        let saving = match super::findings::saving_text(x) {
            t if t.is_empty() => t,
            t => format!(" — {}", escape(&t)),
        };
        let _ = write!(
            html,
            "<li><b>[{}] {}</b>: {}{saving}<br>{} <code>{}</code> \
             <a href=\"#{}\">(the section)</a></li>",
            x.severity,
            x.rule,
            escape(&x.title),
            escape(&x.advice),
            escape(&x.command),
            super::findings::section_of(x.rule)
        );
    }
    html.push_str("</ol><ul class=\"quiet\">");
    for q in &f.quiet {
        let _ = write!(html, "<li>{} {}: {}</li>", q.status, q.rule, escape(&q.why));
    }
    html.push_str("</ul></section>\n");
}

/// Writes the page.
pub(super) fn write(inputs: &[PathBuf], page: &Page, out: &mut dyn Write) -> Result<()> {
    let Page {
        whole,
        step,
        findings,
        sections,
        figures,
        aligned,
        notes,
    } = *page;
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>njx-report</title><style>{STYLE}</style></head><body>\n\
         <h1>njx-report</h1>\n"
    );
    // What was read, and the notes.
    let mut lines = header(inputs, whole, &[]);
    if !aligned.is_empty() {
        // The wait and lateness pictures compare clocks: say how they were aligned.
        for l in lines.iter_mut().filter(|l| l.starts_with("Clocks: ")) {
            *l = format!(
                "Clocks: aligned for the wait and lateness pictures only, on the collectives \
                 that span every device (nsys-jax's rule): {}",
                aligned.join("; ")
            );
        }
    }
    html.push_str("<section id=\"read\"><ul class=\"read\">");
    for l in &lines {
        let _ = write!(html, "<li>{}</li>", escape(l));
    }
    html.push_str("</ul>");
    if !notes.is_empty() {
        html.push_str("<h2>Notes</h2><ul class=\"notes\">");
        for n in notes {
            let _ = write!(html, "<li>{}</li>", escape(n));
        }
        html.push_str("</ul>");
    }
    // The sections that apply first (a profile that is not XLA's opens on its kernels),
    // each in the report's order; the contents mark those that do not apply.
    let (apply, rest): (Vec<&Section>, Vec<&Section>) =
        sections.iter().partition(|s| s.absent.is_none());
    let sections: Vec<&Section> = apply.into_iter().chain(rest).collect();
    html.push_str("</section>\n");
    step_section(step, &mut html);
    findings_section(findings, &mut html);
    html.push_str("<nav><h2>Contents</h2><ol>");
    for s in &sections {
        if s.absent.is_some() {
            let _ = write!(
                html,
                "<li class=\"na\"><a href=\"#{}\">{}</a> <span>(does not apply)</span></li>",
                s.id,
                escape(s.title)
            );
            continue;
        }
        let _ = write!(
            html,
            "<li><a href=\"#{}\">{}</a></li>",
            s.id,
            escape(s.title)
        );
        for f in figures.iter().filter(|f| f.after == s.id) {
            let _ = write!(
                html,
                "<li><a href=\"#{}\">{}</a></li>",
                f.id,
                escape(f.title)
            );
        }
    }
    html.push_str("<li><a href=\"#glossary\">Glossary</a></li></ol></nav>\n");
    for s in &sections {
        let _ = write!(
            html,
            "<section id=\"{}\"><h2>{}</h2><p class=\"cmd\"><code>{}</code></p>",
            s.id,
            escape(s.title),
            escape(s.command)
        );
        match &s.absent {
            Some(why) => {
                let _ = write!(
                    html,
                    "<p class=\"absent\">Does not apply: {}</p>",
                    escape(why)
                );
            }
            None => {
                let (above, footnote) = captions(s);
                for line in above {
                    let _ = write!(html, "<p class=\"caption\">{}</p>", escape(line));
                }
                table(s, &mut html);
                if let Some(footnote) = footnote {
                    let _ = write!(html, "<p class=\"footnote\">{}</p>", escape(footnote));
                }
            }
        }
        html.push_str("</section>\n");
        for f in figures.iter().filter(|f| f.after == s.id) {
            figure(f, &mut html);
        }
    }
    glossary(&mut html);
    let _ = write!(html, "<script>{SCRIPT}</script>\n</body></html>\n");
    out.write_all(html.as_bytes()).map_err(Error::Output)?;
    out.flush().map_err(Error::Output)
}
