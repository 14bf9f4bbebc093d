//! `njx`: the list of the tools, one line each (`njx`, `njx --help`), and the way to run
//! one by its short name (`njx report run/*.zip` runs `njx-report run/*.zip`), as `git`
//! runs `git-*` programs. The tools stay the programs users chain; this is where a new
//! user finds them.

use clap::{Arg, ArgAction, Command};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// The tools: (name, first line of its help), in the order of [`super::commands`].
pub fn tools() -> Vec<(String, String)> {
    super::commands()
        .iter()
        .map(|c| {
            let about = c.get_about().map(|a| a.to_string()).unwrap_or_default();
            (c.get_name().to_string(), about)
        })
        .collect()
}

/// The list of the tools as `--help` shows it after its usage: one line each, a long
/// one wrapped under its description to `width` columns.
fn listing(width: usize) -> String {
    let tools = tools();
    let name_width = tools.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let indent = 2 + name_width + 2;
    let mut s = String::from("Tools (njx-TOOL --help, or man njx-TOOL, for each one's options):\n");
    for (name, about) in &tools {
        s.push_str(&wrap(
            &format!("  {name:name_width$}  {about}"),
            width,
            indent,
        ));
    }
    s
}

/// `text` as lines of at most `width` columns (a word longer than that alone on its
/// line), the lines after the first indented by `indent` spaces; each line ends in `\n`.
fn wrap(text: &str, width: usize, indent: usize) -> String {
    let lead = text.len() - text.trim_start().len();
    let mut out = text[..lead].to_string();
    let mut len = lead;
    for (i, word) in text.split_whitespace().enumerate() {
        let w = word.chars().count();
        if i > 0 && len + 1 + w > width {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            len = indent;
        } else if i > 0 {
            out.push(' ');
            len += 1;
        }
        out.push_str(word);
        len += w;
    }
    out.push('\n');
    out
}

/// The list of the tools as the man page has it: a paragraph each, then [`AFTER`].
fn paragraphs() -> String {
    let mut s =
        String::from("The tools (njx-TOOL --help, or man njx-TOOL, for each one's options):\n\n");
    for (name, about) in tools() {
        s.push_str(&format!("{name}: {about}\n\n"));
    }
    s + AFTER
}

/// What follows the list.
const AFTER: &str = "Each tool is a program of its own (njx-report, njx-modules, …), so that they \
    chain in pipes: njx-export --table thunks run/*.zip | njx-collectives. `njx TOOL ARGS` runs \
    njx-TOOL with ARGS (TOOL with or without its njx- prefix). The quick start: the README and \
    docs/install.md.

Examples:
  njx report --html report.html run/*.zip
  njx-export --table thunks run/*.zip | njx-collectives --table hidden-by-program";

/// The command line of `njx`: for its help, its man page and its parsing.
pub fn command() -> Command {
    Command::new("njx")
        .version(env!("CARGO_PKG_VERSION"))
        .long_version(super::LONG_VERSION)
        .about("The njx tools: list them, or run one by its short name")
        .max_term_width(100)
        .after_help(paragraphs())
        .arg(
            Arg::new("tool")
                .value_name("TOOL")
                .help("The tool to run: report, modules, … (or njx-report, …)"),
        )
        .arg(
            Arg::new("args")
                .value_name("ARGS")
                .num_args(0..)
                .trailing_var_arg(true)
                .allow_hyphen_values(true)
                .value_parser(clap::value_parser!(OsString))
                .action(ArgAction::Append)
                .help("The tool's own arguments, as it takes them"),
        )
}

/// The program of `tool` (`report` or `njx-report`): `njx-report` beside this program
/// where it is there (a venv's `bin`, cargo's target folder), else by `PATH`. None when
/// no tool has that name.
pub fn program_of(tool: &str, beside: Option<&Path>) -> Option<PathBuf> {
    let short = tool.strip_prefix("njx-").unwrap_or(tool);
    let name = format!("njx-{short}");
    if !tools().iter().any(|(n, _)| *n == name) {
        return None;
    }
    Some(
        beside
            .map(|dir| dir.join(&name))
            .filter(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from(name)),
    )
}

/// `njx`'s main: the listing without a tool, else the tool run with the arguments (this
/// process replaced by it, so its exit status and signals are the tool's own).
pub fn run() -> i32 {
    let argv: Vec<OsString> = std::env::args_os().collect();
    // A tool's name first: everything after it is the tool's, `--help` included.
    let tool = argv
        .get(1)
        .and_then(|a| a.to_str())
        .filter(|a| !a.starts_with('-'));
    let Some(tool) = tool else {
        if argv.len() > 1 {
            // --version, or an option njx has not: clap's answer.
            let help = command().try_get_matches_from(&argv).err();
            if let Some(e) = help.filter(|e| e.kind() != clap::error::ErrorKind::DisplayHelp) {
                e.exit();
            }
        }
        return print_help();
    };
    let beside = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf));
    let Some(program) = program_of(tool, beside.as_deref()) else {
        let names: Vec<String> = tools()
            .into_iter()
            .map(|(n, _)| n.trim_start_matches("njx-").to_string())
            .collect();
        crate::output::notes::to_stderr(&format!(
            "njx: no tool is named {tool:?}; the tools are {} (njx --help lists them)",
            names.join(", ")
        ));
        return 2;
    };
    exec(&program, &argv[2..])
}

/// `njx --help` on stdout: the usage, then the tools, one line each, wrapped to the
/// terminal (100 columns at most, as the tools' own help).
fn print_help() -> i32 {
    use std::io::Write;
    let width = console::Term::stdout()
        .size_checked()
        .map_or(100, |(_, cols)| usize::from(cols))
        .clamp(40, 100);
    let mut cmd = command();
    let mut text = format!(
        "{}\n\n{}\n\n{}\n",
        cmd.get_about().map(|a| a.to_string()).unwrap_or_default(),
        cmd.render_usage(),
        listing(width)
    );
    // The prose wrapped; the examples' lines (indented) as they are.
    for line in AFTER.lines() {
        if line.starts_with(' ') || line.is_empty() {
            text.push_str(line);
            text.push('\n');
        } else {
            text.push_str(&wrap(line, width, 0));
        }
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(_) => 1,
    }
}

/// Runs `program` with `args` in place of this process; the exit status where it cannot
/// be started (127 when not found, 126 otherwise, as shells say).
fn exec(program: &Path, args: &[OsString]) -> i32 {
    let mut cmd = std::process::Command::new(program);
    cmd.args(args);
    #[cfg(unix)]
    let e = {
        use std::os::unix::process::CommandExt;
        cmd.exec()
    };
    #[cfg(not(unix))]
    let e = match cmd.status() {
        Ok(s) => return s.code().unwrap_or(1),
        Err(e) => e,
    };
    let shown = program.as_os_str();
    let not_found = e.kind() == std::io::ErrorKind::NotFound;
    crate::output::notes::to_stderr(&format!(
        "njx: cannot run {}: {e}{}",
        OsStr::to_string_lossy(shown),
        if not_found {
            " (the tools are installed together: reinstall njx, or put its bin folder on PATH)"
        } else {
            ""
        }
    ));
    if not_found { 127 } else { 126 }
}
