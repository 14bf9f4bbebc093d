//! The commands: one file per tool with its clap `Args` (the help text is their doc
//! comments), `into_options()` and `run`, which opens the output, points notes at stderr
//! and calls the library. Here: the input/output arguments every tool flattens into its
//! own, and the list of every command for the man pages.

pub mod capture;
pub mod collectives;
pub mod compile_summary;
pub mod export;
pub mod flamefold;
pub mod modules;
pub mod ranges;

use crate::error::Result;
use crate::output::Format;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
}

impl Files {
    /// The inputs to read, with stdin standing in when none were named.
    pub fn inputs_or_stdin(&self) -> Vec<PathBuf> {
        if self.inputs.is_empty() {
            vec![PathBuf::from("-")]
        } else {
            self.inputs.clone()
        }
    }
}

/// Inputs, output file and format: the same three options on every record or report tool.
#[derive(Debug, Clone, Args)]
pub struct IoArgs {
    /// Inputs and output.
    #[command(flatten)]
    pub files: Files,

    /// Output format [default: json for records, table for reports].
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
}

/// The command-line definitions of every tool, for generated documentation (man pages).
pub fn commands() -> Vec<clap::Command> {
    use clap::CommandFactory;
    vec![
        capture::Args::command(),
        export::Args::command(),
        ranges::Args::command(),
        compile_summary::Args::command(),
        modules::Args::command(),
        collectives::Args::command(),
        flamefold::Args::command(),
    ]
}

/// Turn a tool's result into the process exit code, printing the error on stderr
/// as `tool: message`. Used by every `main`.
pub fn finish(tool: &str, result: Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{tool}: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
