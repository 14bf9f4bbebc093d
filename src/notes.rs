//! The one channel for what a tool says besides its output: what was left out, corrected
//! or assumed, and progress. Library code never prints; it hands each note to a [`Notes`],
//! which the commands point at stderr (`tool: note`, as every Unix filter does) and tests,
//! benchmarks and other callers keep to read afterwards. The job's [`Progress`] travels
//! with the notes (readers get both where they get one), and notes said while it is drawn
//! are said with it erased.

use crate::progress::Progress;
use std::collections::HashSet;
use std::sync::Mutex;

/// Where notes go. Shared by reference, also across worker threads.
#[derive(Debug)]
pub struct Notes {
    sink: Sink,
    /// The notes given with [`Notes::once`] that were said already.
    said: Mutex<HashSet<String>>,
    /// Where the job says how far it is: nowhere unless asked ([`Notes::with_progress`]).
    progress: Progress,
}

#[derive(Debug)]
enum Sink {
    /// `tool: note` lines on stderr.
    Stderr(String),
    /// Kept in order, for the caller to read, each with whether it is said once only.
    Kept(Mutex<Vec<(String, bool)>>),
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
        }
    }

    /// Notes on stderr as [`Notes::stderr`], or none at all when `quiet` (`-q`).
    pub fn for_tool(tool: &str, quiet: bool) -> Notes {
        if quiet {
            Notes {
                sink: Sink::Quiet,
                said: Mutex::default(),
                progress: Progress::none(),
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
        self.say(msg.into(), false);
    }

    /// Says `msg` unless it was said already through these notes (or, for notes kept
    /// apart and forwarded, through the notes they were forwarded to): what holds for
    /// many inputs alike is said once per run.
    pub fn once(&self, msg: impl Into<String>) {
        self.say(msg.into(), true);
    }

    fn say(&self, msg: String, once: bool) {
        if once
            && !self
                .said
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(msg.clone())
        {
            return;
        }
        match &self.sink {
            Sink::Stderr(tool) => self.progress.suspend(|| eprintln!("{tool}: {msg}")),
            Sink::Quiet => {}
            Sink::Kept(kept) => kept
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((msg, once)),
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
        for (msg, once) in kept {
            self.say(msg, once);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Notes;

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
}
