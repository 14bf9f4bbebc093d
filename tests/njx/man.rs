//! The man pages in `man/` are generated from the clap definitions; this test fails when
//! they drift. Regenerate with `scripts/update-man.sh`
//! (`NJX_UPDATE_MAN=1 cargo test --test njx man::`).
//!
//! clap_mangen renders the sections, but two: the SYNOPSIS, which clap_mangen gives without
//! value names (`[--format]`, `[INPUT]`), and the examples, which stay in the after-help in
//! `--help` but get an EXAMPLES section of their own here, set unfilled (`.nf`): in the
//! after-help section roff would fill them into a paragraph.

use clap::{Arg, ArgAction, Command};
use roff::{Inline, Roff, bold, italic, roman};
use std::io::Write;
use std::path::Path;

#[test]
fn man_pages_match_the_command_line_definitions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let update = std::env::var_os("NJX_UPDATE_MAN").is_some();
    let mut stale = Vec::new();
    // Every tool's page, and `njx`'s (the list of the tools).
    // The version alone, as the tools' pages: the pages stay the same per commit.
    let launcher = njx::cmd::launcher::command().long_version(None::<&str>);
    for cmd in njx::commands().into_iter().chain([launcher]) {
        let name = cmd.get_name().to_string();
        let page = page(cmd);
        let path = dir.join(format!("{name}.1"));
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &page).unwrap();
        } else if std::fs::read(&path).ok().as_deref() != Some(page.as_bytes()) {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "man pages out of date: {stale:?}; run scripts/update-man.sh"
    );
}

/// A tool's man page: clap_mangen's title, NAME, DESCRIPTION, OPTIONS, EXTRA (the
/// after-help's prose) and VERSION, with our SYNOPSIS and EXAMPLES.
fn page(mut cmd: Command) -> String {
    cmd.build();
    let after = cmd
        .get_after_help()
        .map(|h| h.to_string())
        .unwrap_or_default();
    let (prose, examples) = split_examples(&after);
    let cmd = cmd.after_help(prose.to_string());
    let man = clap_mangen::Man::new(cmd.clone());
    // Each piece comes with roff's preamble (the apostrophe string): the page keeps one.
    let preamble = Roff::new().render();
    let mut page = preamble.clone();
    let mut add = |render: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let mut piece = Vec::new();
        render(&mut piece).unwrap();
        let piece = String::from_utf8(piece).unwrap();
        page.push_str(piece.strip_prefix(&preamble).unwrap());
    };
    add(&|w| man.render_title(w));
    add(&|w| man.render_name_section(w));
    let synopsis = synopsis(&cmd);
    add(&|w| w.write_all(synopsis.as_bytes()));
    add(&|w| man.render_description_section(w));
    add(&|w| man.render_options_section(w));
    if !prose.is_empty() {
        add(&|w| man.render_extra_section(w));
    }
    if !examples.is_empty() {
        let mut roff = Roff::new();
        roff.control("SH", ["EXAMPLES"]).control("nf", []);
        for line in &examples {
            roff.text([roman(*line)]);
        }
        roff.control("fi", []);
        add(&|w| roff.to_writer(w));
    }
    add(&|w| man.render_version_section(w));
    page
}

/// A tool's after-help taken apart: the prose, and the lines of its closing `Examples:`
/// block without their common indentation (continuation lines keep their own).
pub fn split_examples(after_help: &str) -> (&str, Vec<&str>) {
    let Some((prose, examples)) = after_help
        .split_once("\n\nExamples:\n")
        .or_else(|| Some(("", after_help.strip_prefix("Examples:\n")?)))
    else {
        return (after_help, Vec::new());
    };
    let lines: Vec<&str> = examples.lines().filter(|l| !l.trim().is_empty()).collect();
    let indent = lines
        .iter()
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    (prose, lines.iter().map(|l| &l[indent..]).collect())
}

/// The SYNOPSIS: the usage clap's `override_usage` gives, else every option with its value
/// names and the positionals as clap writes them (`[--format <FORMAT>]`, `[INPUT]...`);
/// then a form of its own for each option that must come alone (`--completions <SHELL>`).
/// An option and its value are kept on one line (roff's unbreakable space).
fn synopsis(cmd: &Command) -> String {
    let name = cmd.get_name();
    let mut roff = Roff::new();
    // Left-aligned and unhyphenated, as groff's `.SY` sets synopses (an extension).
    roff.control("SH", ["SYNOPSIS"])
        .control("nh", [])
        .control("ad", ["l"]);
    let mut forms: Vec<Vec<Inline>> = Vec::new();
    if let Some(usage) = cmd.get_overridden_usage() {
        for form in usage.to_string().lines().map(str::trim) {
            match form.strip_prefix(name) {
                Some(rest) => forms.push(vec![bold(name), roman(rest)]),
                None => forms.push(vec![roman(form)]),
            }
        }
    } else {
        let mut line = vec![bold(name)];
        let options = cmd
            .get_arguments()
            .filter(|a| !a.is_positional() && !a.is_hide_set() && !a.is_exclusive_set());
        for arg in options.chain(cmd.get_positionals().filter(|a| !a.is_hide_set())) {
            line.push(roman(" "));
            line.extend(synopsis_arg(arg, true));
        }
        forms.push(line);
    }
    for arg in cmd.get_arguments().filter(|a| a.is_exclusive_set()) {
        let mut line = vec![bold(name), roman(" ")];
        line.extend(synopsis_arg(arg, false));
        forms.push(line);
    }
    for (i, form) in forms.into_iter().enumerate() {
        if i > 0 {
            roff.control("br", []);
        }
        roff.text(form);
    }
    roff.control("ad", []).control("hy", []);
    roff.render().replace(NBSP, r"\ ")
}

/// Stands for roff's unbreakable space (`\ `) until the synopsis is rendered: the roff
/// crate escapes backslashes.
const NBSP: char = '\u{a0}';

/// One argument in the synopsis, its values as clap writes them in usages (`Arg`'s
/// `Display`): `[-o|--output <FILE>]`, `[--diff <BEFORE> <AFTER>]`, `[--hlo <PATH>...]`,
/// `[--select <REGEX>]...` (repeatable), `[INPUT]...`; `bracket` false for an option
/// that is a form of its own.
fn synopsis_arg(arg: &Arg, bracket: bool) -> Vec<Inline> {
    let usage = arg.to_string().replace(' ', &NBSP.to_string());
    if arg.is_positional() {
        return placeholders(&usage);
    }
    let (open, close) = if bracket && !arg.is_required_set() {
        ("[", "]")
    } else {
        ("", "")
    };
    let mut out = vec![roman(open)];
    let suffix = match (arg.get_short(), arg.get_long()) {
        (Some(short), Some(long)) => {
            out.extend([
                bold(format!("-{short}")),
                roman("|"),
                bold(format!("--{long}")),
            ]);
            usage.strip_prefix(&format!("--{long}"))
        }
        (None, Some(long)) => {
            out.push(bold(format!("--{long}")));
            usage.strip_prefix(&format!("--{long}"))
        }
        (Some(short), None) => {
            out.push(bold(format!("-{short}")));
            usage.strip_prefix(&format!("-{short}"))
        }
        (None, None) => None,
    };
    out.extend(placeholders(suffix.unwrap_or_default()));
    out.push(roman(close));
    // Given again for more values (`--select A --select B`); not an option of several
    // values each time (`--diff BEFORE AFTER`, `--hlo PATH...`).
    let repeatable = matches!(arg.get_action(), ArgAction::Append);
    if repeatable && arg.get_num_args().expect("built").max_values() == 1 {
        out.push(roman("..."));
    }
    out
}

/// A usage's values in the fonts of clap_mangen's OPTIONS section: `<NAME>` in italics,
/// a bare positional's NAME too, brackets, dots and spaces in roman.
fn placeholders(text: &str) -> Vec<Inline> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let plain = rest
            .find(|c: char| !"[]. =\u{a0}".contains(c))
            .unwrap_or(rest.len());
        if plain > 0 {
            out.push(roman(&rest[..plain]));
            rest = &rest[plain..];
            continue;
        }
        let end = if rest.starts_with('<') {
            rest.find('>').map_or(rest.len(), |i| i + 1)
        } else {
            rest.find([']', '.', ' ', '=', NBSP]).unwrap_or(rest.len())
        };
        out.push(italic(&rest[..end]));
        rest = &rest[end..];
    }
    out
}

/// The examples of every tool's `--help` are in its man page line for line, in an
/// unfilled block (`.nf` … `.fi`), and not in the filled after-help section. (The page as
/// generated: the test above holds `man/` to it.)
#[test]
fn man_page_examples_are_set_unfilled_line_for_line() {
    for cmd in njx::commands() {
        let name = cmd.get_name().to_string();
        let after = cmd
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        let (_, examples) = split_examples(&after);
        assert!(!examples.is_empty(), "{name}: no Examples: block");
        let text = page(cmd);
        let lines: Vec<&str> = text.lines().collect();
        let start = lines
            .iter()
            .position(|l| *l == ".SH EXAMPLES")
            .unwrap_or_else(|| panic!("{name}.1: no EXAMPLES section"));
        assert_eq!(
            lines[start + 1],
            ".nf",
            "{name}.1: examples not in a no-fill block"
        );
        let end = start
            + lines[start..]
                .iter()
                .position(|l| *l == ".fi")
                .unwrap_or_else(|| panic!("{name}.1: no .fi after the examples"));
        let block: Vec<String> = lines[start + 2..end].iter().map(|l| unroff(l)).collect();
        assert_eq!(block, examples, "{name}.1: examples not line for line");
        assert!(
            !lines[end..]
                .iter()
                .any(|l| l.starts_with(".SH") && *l != ".SH VERSION"),
            "{name}.1: a section after EXAMPLES but VERSION"
        );
        let extra = &lines[..start];
        assert!(
            !extra.iter().any(|l| l.contains("Examples:")),
            "{name}.1: examples left in the filled after-help"
        );
    }
}

/// A text line of a page as it reads: roff's escapes undone (those the roff crate writes).
fn unroff(line: &str) -> String {
    line.strip_prefix(r"\&")
        .unwrap_or(line)
        .replace(r"\*(Aq", "'")
        .replace(r"\ ", " ")
        .replace(r"\-", "-")
        .replace(r"\\", "\\")
}

#[test]
fn synopses_give_value_names_and_repeats() {
    for cmd in njx::commands() {
        let name = cmd.get_name().to_string();
        let mut cmd = cmd;
        cmd.build();
        let text = unroff(&synopsis(&cmd))
            .replace(r"\fB", "")
            .replace(r"\fI", "")
            .replace(r"\fR", "");
        assert!(
            text.contains(&format!("{name} --completions <SHELL>")),
            "{text}"
        );
        if name == "njx-capture" {
            assert!(text.contains("-- PROGRAM [ARGS]..."), "{text}");
            continue;
        }
        if name == "njx-combine" {
            // The output and the inputs are required: archives in, an archive out.
            assert!(text.contains(" -o|--output <NAME> "), "{text}");
            assert!(text.contains("[--analysis <PIPELINE>]..."), "{text}");
            assert!(text.contains(" <INPUT>...\n"), "{text}");
            continue;
        }
        if name == "njx-diff" {
            // Two sides: the inputs before, the inputs after --vs.
            assert!(text.contains("[--vs <AFTER>...] "), "{text}");
            assert!(text.contains("[--fail-if-slower <PCT>]... "), "{text}");
            assert!(text.contains(" [BEFORE]...\n"), "{text}");
            continue;
        }
        // njx-pgle writes a file per program into a folder.
        let output = if name == "njx-pgle" { "DIR" } else { "FILE" };
        assert!(
            text.contains(&format!("[-o|--output <{output}>]")),
            "{text}"
        );
        assert!(text.contains("[-q|--quiet]"), "{text}");
        assert!(text.contains(" [INPUT]...\n"), "{text}");
        assert!(!text.contains("[--completions"), "{text}");
        if name == "njx-flamefold" {
            assert!(text.contains("[--by <BY>]"), "{text}");
            // One path per --hlo, repeatable.
            assert!(text.contains("[--hlo <PATH>]... "), "{text}");
            assert!(text.contains("[--diff <BEFORE> <AFTER>] "), "{text}");
        } else if name != "njx-timeline" {
            // njx-flamefold and njx-timeline write one format each.
            assert!(text.contains("[--format <FORMAT>]"), "{text}");
        }
        if name == "njx-ranges" {
            assert!(text.contains("[--select <REGEX>]..."), "{text}");
        }
    }
}

#[test]
fn every_binary_has_a_man_page_and_a_pipeline_example() {
    let bins = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bin");
    let mut names: Vec<String> = std::fs::read_dir(bins)
        .unwrap()
        .map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    names.sort();
    let mut documented: Vec<String> = njx::commands()
        .iter()
        .map(|c| c.get_name().to_string())
        .chain(["njx".to_string()])
        .collect();
    documented.sort();
    assert_eq!(names, documented);
    for cmd in njx::commands() {
        let help = cmd
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        assert!(
            help.contains(" | "),
            "{} --help lacks a pipeline example",
            cmd.get_name()
        );
    }
}
