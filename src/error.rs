//! One error type for every tool, carrying the context a user needs to fix the input
//! (`file:line: what`), and the mapping to exit codes: 0 success (and a closed stdout),
//! 1 bad data or I/O, 2 bad usage.

use std::fmt;
use std::io;

/// Everything that can stop a tool.
#[derive(Debug)]
pub enum Error {
    /// The command line asks for something impossible (exit 2).
    Usage(String),
    /// The input is wrong: `where` names the file and, where known, the line or record.
    Data {
        /// The file and, where known, the line or record.
        place: String,
        /// What is wrong there.
        msg: String,
    },
    /// Reading an input failed.
    Io {
        /// The file (or member) being read.
        place: String,
        /// The operating system's error.
        err: io::Error,
    },
    /// Writing the output failed; a broken pipe here means the reader went away.
    Output(io::Error),
}

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A data error at `place` (for example `trace.csv:12` or `rank0.zip!report.csv.xz:12`).
    pub fn data(place: impl Into<String>, msg: impl Into<String>) -> Self {
        Error::Data {
            place: place.into(),
            msg: msg.into(),
        }
    }

    /// An I/O error while reading `place`.
    pub fn io(place: impl Into<String>, err: io::Error) -> Self {
        // Decoders report corrupt streams as io::Error (InvalidData / UnexpectedEof);
        // those are data errors to the user, not failing disks.
        Error::Io {
            place: place.into(),
            err,
        }
    }

    /// The error of handling what was read at `outer` (a record's `file:line`): a data
    /// error about it (`profile X, range 5: …`) is said to be at that place too; other
    /// errors, and those that already name it, are left as they are.
    pub fn within(self, outer: &str) -> Error {
        match self {
            Error::Data { place, msg } if !place.starts_with(outer) => Error::Data {
                place: format!("{outer}: {place}"),
                msg,
            },
            other => other,
        }
    }

    /// True when the error only says that whoever reads our stdout has gone away
    /// (`njx-export … | head`): the tool should end quietly with success.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Output(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => 2,
            _ if self.is_broken_pipe() => 0,
            _ => 1,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(msg) => write!(f, "{msg}"),
            Error::Data { place, msg } => write!(f, "{place}: {msg}"),
            Error::Io { place, err } => match err.kind() {
                io::ErrorKind::UnexpectedEof => {
                    write!(f, "{place}: truncated input ({err})")
                }
                io::ErrorKind::InvalidData => write!(f, "{place}: corrupt input ({err})"),
                _ => write!(f, "{place}: {err}"),
            },
            Error::Output(err) => write!(f, "writing output: {err}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<csv::Error> for Error {
    fn from(err: csv::Error) -> Self {
        // csv errors while *writing* wrap the io::Error of the sink.
        match err.into_kind() {
            csv::ErrorKind::Io(e) => Error::Output(e),
            other => Error::Output(io::Error::other(format!("{other:?}"))),
        }
    }
}
