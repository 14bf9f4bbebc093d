//! The report as one self-contained page (`--html FILE`): every section as a sortable
//! table of its tool's records, the pictures after the sections they belong to, a table of
//! contents, and a header saying what was read. Nothing is loaded from elsewhere: the
//! styles and the one script (sorting) are in the page, the charts are inline SVG, and
//! each flame graph (an SVG with inferno's script for zoom and search) is the document of
//! a frame of its own (`srcdoc`), so that their scripts do not meet, drawn when scrolled
//! to (`loading="lazy"`): the page opens without waiting for them.

use super::figures::Figure;
use super::sections::Section;
use super::text::header;
use super::whole::Whole;
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
iframe { width: 100%; border: 1px solid #d6dae0; }
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

/// A column's heading: `_ns` columns are shown in milliseconds.
fn heading(key: &str) -> String {
    match key.strip_suffix("_ns") {
        Some(stem) => format!("{stem} ms"),
        None => key.to_string(),
    }
}

/// One cell: (class, sort value, text shown).
fn cell(key: &str, v: &Value) -> (&'static str, Option<String>, String) {
    match v {
        Value::Null => ("num", Some("-Infinity".into()), "–".into()),
        Value::Bool(b) => ("text", None, b.to_string()),
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            let shown = if key.ends_with("_ns") {
                format!("{:.3}", x / 1e6)
            } else if n.is_f64() {
                let digits = if x.abs() >= 100.0 { 2 } else { 4 };
                format!("{x:.digits$}")
            } else {
                n.to_string()
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
    html.push_str("<div class=\"wrap\"><table class=\"sortable\"><thead><tr>");
    for k in &keys {
        let numeric = first.get(*k).is_some_and(|v| v.is_number() || v.is_null());
        let _ = write!(
            html,
            "<th{}>{}</th>",
            if numeric { " class=\"num\"" } else { "" },
            escape(&heading(k))
        );
    }
    html.push_str("</tr></thead><tbody>");
    for row in s.rows.iter().take(ROWS) {
        html.push_str("<tr>");
        for k in &keys {
            let (class, sort, shown) = cell(k, row.get(k.as_str()).unwrap_or(&Value::Null));
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

/// The height an SVG asks for (its `height` attribute), for the frame that shows it.
fn svg_height(svg: &str) -> usize {
    let head = &svg[..svg.len().min(2000)];
    head.split("height=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .and_then(|h| h.trim_end_matches("px").parse::<f64>().ok())
        .map_or(600, |h| h.ceil() as usize + 20)
}

fn figure(f: &Figure, html: &mut String) {
    let _ = write!(
        html,
        "<section id=\"{}\"><h2>{}</h2><p class=\"cmd\"><code>{}</code></p>",
        f.id,
        escape(f.title),
        escape(f.command)
    );
    match &f.svg {
        Err(why) => {
            let _ = write!(html, "<p class=\"absent\">Not drawn: {}</p>", escape(why));
        }
        Ok(svg) if f.interactive => {
            let _ = write!(
                html,
                "<iframe title=\"{}\" height=\"{}\" loading=\"lazy\" sandbox=\"allow-scripts\" srcdoc=\"{}\"></iframe>",
                escape(f.title),
                svg_height(svg),
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

/// Writes the page.
pub(super) fn write(
    inputs: &[PathBuf],
    whole: &Whole,
    sections: &[Section],
    figures: &[Figure],
    aligned: &[String],
    notes: &[String],
    out: &mut dyn Write,
) -> Result<()> {
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
    html.push_str("</section>\n<nav><h2>Contents</h2><ol>");
    for s in sections {
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
    html.push_str("</ol></nav>\n");
    for s in sections {
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
            None => table(s, &mut html),
        }
        html.push_str("</section>\n");
        for f in figures.iter().filter(|f| f.after == s.id) {
            figure(f, &mut html);
        }
    }
    let _ = write!(html, "<script>{SCRIPT}</script>\n</body></html>\n");
    out.write_all(html.as_bytes()).map_err(Error::Output)?;
    out.flush().map_err(Error::Output)
}
