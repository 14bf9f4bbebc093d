//! Command-line pieces shared by every tool: the input/output arguments that all of them
//! flatten into their own options, and the output format switch.

use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};

/// How a tool writes its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned text for people (reports only).
    Table,
    /// JSON Lines: one object per line.
    Json,
    /// CSV with a header line.
    Csv,
}

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
