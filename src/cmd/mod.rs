//! The commands: one file per tool with its clap `Args` (the help text is their doc
//! comments), `into_options()` and `run`, which opens the output, points notes at stderr
//! and calls the library. Here: the input/output arguments every tool flattens into its
//! own, what every tool's command line has beyond its `Args` (`--completions`, the help's
//! width) with the parsing that goes with it, and the list of every command for the man
//! pages.

pub mod capture;
pub mod collectives;
pub mod combine;
pub mod compile_summary;
pub mod diff;
pub mod export;
pub mod flamefold;
pub mod heap;
pub mod kernels;
pub mod launcher;
pub mod modules;
pub mod pgle;
pub mod ranges;
pub mod report;
pub mod thunks;
pub mod timeline;

use crate::error::{Error, Result};
use crate::output::notes::Notes;
use crate::output::{Format, Output};
use clap::{Args, Command, CommandFactory, FromArgMatches};
use clap_complete::Shell;
use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub use crate::output::LONG_VERSION;

/// Input files and output file: what every tool takes, also those whose output has one
/// fixed format (`njx-flamefold`).
#[derive(Debug, Clone, Args)]
pub struct Files {
    /// Input files; none or `-` reads stdin. Compressed inputs (gzip, xz) are recognised by
    /// their first bytes, whatever their name.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,

    /// Write to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Say nothing on stderr but errors: no notes of what was left out, repaired or
    /// assumed (clock alignment, warm-up, skipped rows…).
    #[arg(short, long)]
    pub quiet: bool,

    /// Overwrite output files that look like inputs.
    #[arg(short, long, help = FORCE_HELP)]
    pub force: bool,

    /// Tables on a terminal: keep every column whole (wide text columns, op_name and
    /// source, are otherwise cut to the terminal's width with `…`; files, pipes and
    /// --format json|csv always get everything).
    #[arg(long)]
    pub wide: bool,
}

/// The help of `-f`, `--force`, the same on every tool that writes files.
pub const FORCE_HELP: &str = "Write an output file even over a file that holds a profile or \
    another input of njx (a zip archive, SQLite, .nsys-rep, a partial result, gzip or xz \
    data, an HLO dump) or at a path named like one (.zip, .sqlite, .nsys-rep): refused \
    without it, so that a file name left out (`--html run/*.zip`) never costs a profile";

impl Files {
    /// Refuses, before anything is read, an output that would overwrite an input of njx
    /// (`output::guard`): `-o` and the tool's other `outputs` (`(option, path)`).
    /// Then fits the tables written to stdout to the terminal it is, unless `--wide`.
    pub fn check_outputs(&self, outputs: &[(&str, Option<&Path>)]) -> Result<()> {
        let mut all = vec![("-o", self.output.as_deref())];
        all.extend_from_slice(outputs);
        crate::output::guard::check_all(&all, self.force)?;
        self.fit_tables();
        Ok(())
    }

    /// Fits the tables to the terminal where the output is stdout and a terminal, and not
    /// `--wide` ([`crate::output::fit_tables_to`]).
    fn fit_tables(&self) {
        let to_stdout = self.output.as_deref().is_none_or(|p| p == Path::new("-"));
        if self.wide || !to_stdout || !std::io::stdout().is_terminal() {
            return;
        }
        let columns = console::Term::stdout()
            .size_checked()
            .map(|(_, cols)| usize::from(cols))
            .filter(|c| *c > 0);
        crate::output::fit_tables_to(columns);
    }

    /// The inputs to read, with stdin standing in when none were named (said on stderr
    /// when stdin is a terminal: a tool waiting silently looks hung).
    pub fn inputs_or_stdin(&self) -> Vec<PathBuf> {
        if !self.inputs.is_empty() {
            return self.inputs.clone();
        }
        if std::io::stdin().is_terminal() {
            let tool = crate::output::program_name();
            crate::output::notes::to_stderr(&format!(
                "{tool}: no input files: reading stdin (pipe records in or name files; \
                 Ctrl-D ends input, --help shows usage)"
            ));
        }
        vec![PathBuf::from("-")]
    }
}

/// The notes of `tool` on stderr (none with `-q`) and, when stderr is a terminal, the
/// progress of its job reading `inputs` (a bar of inputs done when there are several),
/// erased before `out` is written when that is the terminal too. A tool that reads a pipe
/// on stdin shows none: in a pipeline (`njx-export rank*.zip | njx-ranges … |
/// njx-compile-summary`) the one line of progress is that of the tool reading the named
/// inputs, not one per stage taking turns on the same line.
pub fn notes_and_progress(
    tool: &str,
    quiet: bool,
    inputs: &[PathBuf],
    out: Option<&mut Output>,
) -> Notes {
    let notes = Notes::for_tool(tool, quiet);
    // Nor one that reads what is typed at the terminal: the line would run over it.
    let stdin_read = inputs.iter().any(|p| p == Path::new("-"));
    let notes = if stdin_read && (stdin_is_pipe() || std::io::stdin().is_terminal()) {
        notes
    } else {
        notes.with_progress()
    };
    notes.progress().inputs(inputs.len());
    if let Some(out) = out {
        out.ends_progress(notes.progress());
    }
    notes
}

/// Whether stdin is a pipe (or a socket): the output of another program.
fn stdin_is_pipe() -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::FileTypeExt;
        std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .map(std::fs::File::from)
            .and_then(|f| f.metadata())
            .is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_socket())
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// Inputs, output file and format: the same three options on every record or report tool.
#[derive(Debug, Clone, Args)]
pub struct IoArgs {
    /// Inputs and output.
    #[command(flatten)]
    pub files: Files,

    /// Output format [default: json for records, table for reports]; parquet (typed
    /// columns, docs/formats.md) needs -o FILE.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
}

impl IoArgs {
    /// The inputs to read, with stdin standing in when none were named.
    pub fn inputs_or_stdin(&self) -> Vec<PathBuf> {
        self.files.inputs_or_stdin()
    }

    /// The output file, `None` for stdout.
    pub fn output(&self) -> Option<&Path> {
        self.files.output.as_deref()
    }

    /// [`Files::check_outputs`], and `--format parquet` only with `-o FILE`.
    pub fn check_outputs(&self, outputs: &[(&str, Option<&Path>)]) -> Result<()> {
        parquet_to_a_file(self.format, self.output())?;
        self.files.check_outputs(outputs)
    }
}

/// `--format parquet` writes a file named with `-o`: a Parquet file's index is at its end,
/// which readers seek to, so it cannot be piped.
pub fn parquet_to_a_file(format: Option<Format>, output: Option<&Path>) -> Result<()> {
    if format == Some(Format::Parquet) && output.is_none_or(|p| p == Path::new("-")) {
        return Err(Error::Usage(
            "--format parquet writes a file: name it with -o FILE (a Parquet file is read \
             from its end, so it cannot go to stdout or a pipe)"
                .into(),
        ));
    }
    Ok(())
}

/// `--program` and `--exclude-program`: the programs a tool's answer is for
/// (`derived::programs`), on every tool that answers per program.
#[derive(Debug, Clone, Args)]
pub struct ProgramArgs {
    /// Answer for this program only (a module name, `pjit__wrapped_step_fn`, or its key, an
    /// HLO fingerprint); repeatable. A name that no program read has is an error. Not
    /// with --partial: a partial result holds every program, its reader filters.
    #[arg(long = "program", value_name = "NAME", conflicts_with = "partial")]
    pub program: Vec<String>,

    /// Leave this program out (a module name, `jit__psum`, or its key); repeatable. The
    /// warm-up rule still sees it, so no other program's figures change.
    #[arg(long, value_name = "NAME", conflicts_with = "partial")]
    pub exclude_program: Vec<String>,
}

impl ProgramArgs {
    /// The filter these options ask for.
    pub fn filter(&self) -> crate::derived::programs::ProgramFilter {
        crate::derived::programs::ProgramFilter::new(&self.program, &self.exclude_program)
    }
}

/// The id of `--completions` among a command's arguments.
const COMPLETIONS: &str = "completions";

/// A tool's command line as the tool parses it: its clap `Args` plus what every tool has
/// beyond its own options: `--completions SHELL`, and help wrapped at the terminal's width
/// but never wider than 100 columns (long lines read badly on a wide terminal).
pub fn command<A: CommandFactory>() -> Command {
    A::command().max_term_width(100).arg(
        clap::Arg::new(COMPLETIONS)
            .long("completions")
            .value_name("SHELL")
            .value_parser(clap::value_parser!(Shell))
            // Alone: without the inputs or program the tool otherwise requires.
            .exclusive(true)
            .help(
                "Print this tool's completion script for SHELL and exit (installing it: \
                 docs/install.md)",
            ),
    )
}

/// Parses a command line (the program's name first) with [`command`]: the tool's `Args`,
/// or clap's error for help, version and usage, to be printed with `exit()`.
/// `--completions` prints its script and exits here, with 0, as `--help` does in clap's
/// `Parser::parse`.
pub fn try_parse_from<A, I, T>(argv: I) -> std::result::Result<A, clap::Error>
where
    A: CommandFactory + FromArgMatches,
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut cmd = command::<A>();
    let mut matches = cmd.try_get_matches_from_mut(argv)?;
    if let Some(&shell) = matches.get_one::<Shell>(COMPLETIONS) {
        std::process::exit(print_completions(shell, &mut cmd));
    }
    A::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut cmd))
}

/// Parses the process's command line with [`command`]; help, version, usage errors and
/// `--completions` end the process as clap's `Parser::parse` does. Used by every `main`
/// but njx-capture's, which takes its command line apart first.
pub fn parse<A: CommandFactory + FromArgMatches>() -> A {
    let tool = A::command().get_name().to_string();
    let argv = expand_lists(std::env::args_os()).unwrap_or_else(|e| {
        crate::output::notes::to_stderr(&format!("{tool}: {e}"));
        std::process::exit(i32::from(e.exit_code()));
    });
    let args = try_parse_from(argv).unwrap_or_else(|e| exit_with(&tool, e));
    // Ctrl-C and kill remove what is staged (njx-capture asks for it once its command
    // line is taken apart, in `capture::run`).
    if A::command().get_name() != "njx-capture" {
        crate::util::cleanup::on_signals();
    }
    args
}

/// The command line with every argument `@LIST` replaced by the lines of the file LIST,
/// one path each (blank lines skipped): more inputs than a command line holds, for a
/// reduce over thousands of partial results (`ls out/*.partial > parts; njx-report
/// @parts`). `@-` is not read (stdin carries the inputs); a file named with a leading `@`
/// is given as `./@name`.
pub fn expand_lists(argv: impl IntoIterator<Item = OsString>) -> Result<Vec<OsString>> {
    let mut out = Vec::new();
    for (i, a) in argv.into_iter().enumerate() {
        let list = a
            .to_str()
            .and_then(|s| s.strip_prefix('@'))
            .filter(|l| i > 0 && !l.is_empty() && *l != "-");
        let Some(list) = list else {
            out.push(a);
            continue;
        };
        out.extend(crate::source::input_list(list)?);
    }
    Ok(out)
}

/// Ends the process with clap's error `e`: help and version as clap prints them, a usage
/// error on stderr starting with the tool's name as every other message of the tool does
/// (`njx-modules: unexpected argument …`, not clap's `error: …`), exit 2.
pub fn exit_with(tool: &str, e: clap::Error) -> ! {
    if !e.use_stderr() {
        e.exit();
    }
    let text = e.render().to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text).trim_end();
    let named = format!("{tool}: ");
    // Messages of njx's own (njx-capture's splitting of its command line) name it already.
    let line = if text.starts_with(&named) {
        text.to_string()
    } else {
        format!("{named}{text}")
    };
    crate::output::notes::to_stderr(&line);
    std::process::exit(e.exit_code());
}

/// Writes the completion script for `shell` on stdout; the exit status. The script is
/// made whole first: clap_complete panics on a write error, and a closed pipe is no error
/// for njx.
fn print_completions(shell: Shell, cmd: &mut Command) -> i32 {
    let name = cmd.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(shell, cmd, &name, &mut script);
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&script).and_then(|()| stdout.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            crate::output::notes::to_stderr(&format!("{name}: writing the completion script: {e}"));
            1
        }
    }
}

/// The command-line definitions of every tool, for generated documentation (man pages):
/// as the tools parse them ([`command`]), with the version alone, not the build it came
/// from (pages stay the same per commit).
pub fn commands() -> Vec<Command> {
    [
        command::<capture::Args>(),
        command::<combine::Args>(),
        command::<export::Args>(),
        command::<ranges::Args>(),
        command::<compile_summary::Args>(),
        command::<modules::Args>(),
        command::<report::Args>(),
        command::<diff::Args>(),
        command::<collectives::Args>(),
        command::<flamefold::Args>(),
        command::<kernels::Args>(),
        command::<thunks::Args>(),
        command::<timeline::Args>(),
        command::<heap::Args>(),
        command::<pgle::Args>(),
    ]
    .into_iter()
    .map(|c| c.long_version(None::<&str>))
    .collect()
}

/// Turn a tool's result into the process exit code, printing the error on stderr
/// as `tool: message`. Used by every `main`.
pub fn finish(tool: &str, result: Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            // An error caused by the signal that is ending the process (a read that the
            // handler made fail) is left unsaid: the signal's exit is on its way.
            crate::util::cleanup::await_signal_exit();
            crate::output::notes::to_stderr(&format!("{tool}: {e}"));
            ExitCode::from(e.exit_code())
        }
    }
}
