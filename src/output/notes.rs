//! The one channel for what a tool says besides its output: what was left out, corrected
//! or assumed, and progress. Library code never prints; it hands each note to a [`Notes`],
//! which the commands point at stderr (`tool: note`, as every Unix filter does) and tests,
//! benchmarks and other callers keep to read afterwards. The job's [`Progress`] travels
//! with the notes (readers get both where they get one), and notes said while it is drawn
//! are said with it erased.

use crate::output::progress::Progress;
use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Where notes go. Shared by reference, also across worker threads.
#[derive(Debug)]
pub struct Notes {
    sink: Sink,
    /// The notes given with [`Notes::once`] that were said already.
    said: Mutex<HashSet<String>>,
    /// Where the job says how far it is: nowhere unless asked ([`Notes::with_progress`]).
    progress: Progress,
    /// Whether the job writes a partial result, whose reader says the notes on the answer
    /// ([`Notes::on_answer`]).
    partial: AtomicBool,
}

/// How a note is said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Every time.
    Plain,
    /// Once per run ([`Notes::once`]).
    Once,
    /// Once per run, and not by a job writing a partial result ([`Notes::on_answer`]).
    Answer,
}

#[derive(Debug)]
enum Sink {
    /// `tool: note` lines on stderr.
    Stderr(String),
    /// Kept in order, for the caller to read, each with how it is said.
    Kept(Mutex<Vec<(String, Kind)>>),
    /// Not said (`-q`).
    Quiet,
}

impl Notes {
    /// Notes written to stderr as `tool: note`, one line each.
    pub fn stderr(tool: &str) -> Notes {
        Notes {
            sink: Sink::Stderr(tool.to_string()),
            said: Mutex::default(),
            progress: Progress::none(),
            partial: AtomicBool::new(false),
        }
    }

    /// Notes on stderr as [`Notes::stderr`], or none at all when `quiet` (`-q`).
    pub fn for_tool(tool: &str, quiet: bool) -> Notes {
        if quiet {
            Notes {
                sink: Sink::Quiet,
                said: Mutex::default(),
                progress: Progress::none(),
                partial: AtomicBool::new(false),
            }
        } else {
            Notes::stderr(tool)
        }
    }

    /// Notes kept in memory, in the order given; read them with [`Notes::take`].
    pub fn kept() -> Notes {
        Notes {
            sink: Sink::Kept(Mutex::new(Vec::new())),
            said: Mutex::default(),
            progress: Progress::none(),
            partial: AtomicBool::new(false),
        }
    }

    /// These notes with the job's progress drawn on stderr when it is a terminal
    /// ([`Progress::on_stderr`]); notes said on stderr are not (`-q`), nor kept ones.
    pub fn with_progress(mut self) -> Notes {
        if let Sink::Stderr(_) = self.sink {
            self.progress = Progress::on_stderr();
        }
        self
    }

    /// Notes kept apart ([`Notes::kept`]) for work done on another thread, to be passed on
    /// with [`Notes::forward`], reporting to the same progress as these.
    pub fn apart(&self) -> Notes {
        Notes {
            progress: self.progress.clone(),
            ..Notes::kept()
        }
    }

    /// Where the job says how far it is.
    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// Says `msg`.
    pub fn note(&self, msg: impl Into<String>) {
        self.say(msg.into(), Kind::Plain);
    }

    /// Says `msg` unless it was said already through these notes (or, for notes kept
    /// apart and forwarded, through the notes they were forwarded to): what holds for
    /// many inputs alike is said once per run.
    pub fn once(&self, msg: impl Into<String>) {
        self.say(msg.into(), Kind::Once);
    }

    /// Says `msg`, a note on the answer decided over every input (the warm-up rule, a
    /// module compiled differently across devices), once; unless the job writes a partial
    /// result ([`Notes::writes_partial`]): the partial carries what decides it, and the
    /// job that reads the partials says it, decided over all of them, so that a map/reduce
    /// says it once and never of a part alone.
    pub fn on_answer(&self, msg: impl Into<String>) {
        self.say(msg.into(), Kind::Answer);
    }

    /// Marks the job as writing a partial result: notes on the answer
    /// ([`Notes::on_answer`]) are left to the job that reads it.
    pub fn writes_partial(&self) {
        self.partial.store(true, Ordering::Relaxed);
    }

    fn say(&self, msg: String, kind: Kind) {
        if kind == Kind::Answer && self.partial.load(Ordering::Relaxed) {
            return;
        }
        if kind != Kind::Plain
            && !self
                .said
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(msg.clone())
        {
            return;
        }
        match &self.sink {
            Sink::Stderr(tool) => self
                .progress
                .suspend(|| to_stderr(&format!("{tool}: {msg}"))),
            Sink::Quiet => {}
            Sink::Kept(kept) => kept
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((msg, kind)),
        }
    }

    /// The notes kept so far (none for stderr notes), emptying the list. Whether a note was
    /// to be said once is not kept: pass notes on with [`Notes::forward`] to keep it.
    pub fn take(&self) -> Vec<String> {
        match &self.sink {
            Sink::Stderr(_) | Sink::Quiet => Vec::new(),
            Sink::Kept(kept) => {
                std::mem::take(&mut *kept.lock().unwrap_or_else(|e| e.into_inner()))
                    .into_iter()
                    .map(|(msg, _)| msg)
                    .collect()
            }
        }
    }

    /// Passes on every note kept in `other`, in order (work done apart, said in input order).
    pub fn forward(&self, other: Notes) {
        let kept = match other.sink {
            Sink::Kept(kept) => kept.into_inner().unwrap_or_else(|e| e.into_inner()),
            Sink::Stderr(_) | Sink::Quiet => Vec::new(),
        };
        for (msg, kind) in kept {
            self.say(msg, kind);
        }
    }
}

/// Writes `line` and a newline to stderr, as every message of the tools reaches the user:
/// control characters (which text read from an input may hold: a terminal's escape
/// sequences would change its colours or title) written as escapes (`\x1b`), and a
/// failed write ignored — a closed or full stderr must not turn a run into a crash (the
/// exit status still says how the run went).
pub fn to_stderr(line: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = err
        .write_all(escape_controls(line).as_bytes())
        .and_then(|()| err.write_all(b"\n"));
}

/// `text` with its control characters but newline and tab (C0, DEL, C1) written as
/// `\xNN` (`\u{NN}` for C1), so that no byte read from an input reaches a terminal as a
/// command.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(bad) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !bad(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::{Notes, escape_controls};

    #[test]
    fn once_notes_are_said_once_also_when_forwarded_from_kept_notes() {
        let all = Notes::kept();
        for _ in 0..3 {
            let worker = Notes::kept();
            worker.once("devices inferred");
            worker.once("devices inferred");
            worker.note("plain");
            let middle = Notes::kept();
            middle.forward(worker);
            all.forward(middle);
        }
        all.note("plain");
        assert_eq!(
            all.take(),
            ["devices inferred", "plain", "plain", "plain", "plain"]
        );
    }

    #[test]
    fn notes_on_the_answer_are_said_once_and_left_to_the_reader_of_a_partial() {
        let notes = Notes::kept();
        notes.on_answer("compiled differently");
        notes.on_answer("compiled differently");
        assert_eq!(notes.take(), ["compiled differently"]);
        let partial = Notes::kept();
        partial.writes_partial();
        partial.on_answer("compiled differently");
        // Also when said apart and forwarded.
        let worker = partial.apart();
        worker.on_answer("warm-up");
        worker.note("plain");
        partial.forward(worker);
        assert_eq!(partial.take(), ["plain"]);
    }

    #[test]
    fn control_characters_are_escaped_and_text_kept() {
        assert_eq!(
            escape_controls("plain, ünïcode\tand\nlines"),
            "plain, ünïcode\tand\nlines"
        );
        assert_eq!(
            escape_controls("a\x1b[31mb\x07c\x7fd\u{9b}e"),
            "a\\x1b[31mb\\x07c\\x7fd\\u{9b}e"
        );
    }
}
