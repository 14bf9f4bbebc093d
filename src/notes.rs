//! The one channel for what a tool says besides its output: what was left out, corrected
//! or assumed, and progress. Library code never prints; it hands each note to a [`Notes`],
//! which the commands point at stderr (`tool: note`, as every Unix filter does) and tests,
//! benchmarks and other callers keep to read afterwards.

use std::sync::Mutex;

/// Where notes go. Shared by reference, also across worker threads.
#[derive(Debug)]
pub struct Notes {
    sink: Sink,
}

#[derive(Debug)]
enum Sink {
    /// `tool: note` lines on stderr.
    Stderr(String),
    /// Kept in order, for the caller to read.
    Kept(Mutex<Vec<String>>),
}

impl Notes {
    /// Notes written to stderr as `tool: note`, one line each.
    pub fn stderr(tool: &str) -> Notes {
        Notes {
            sink: Sink::Stderr(tool.to_string()),
        }
    }

    /// Notes kept in memory, in the order given; read them with [`Notes::take`].
    pub fn kept() -> Notes {
        Notes {
            sink: Sink::Kept(Mutex::new(Vec::new())),
        }
    }

    /// Says `msg`.
    pub fn note(&self, msg: impl Into<String>) {
        match &self.sink {
            Sink::Stderr(tool) => eprintln!("{tool}: {}", msg.into()),
            Sink::Kept(kept) => kept
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(msg.into()),
        }
    }

    /// The notes kept so far (none for stderr notes), emptying the list.
    pub fn take(&self) -> Vec<String> {
        match &self.sink {
            Sink::Stderr(_) => Vec::new(),
            Sink::Kept(kept) => {
                std::mem::take(&mut *kept.lock().unwrap_or_else(|e| e.into_inner()))
            }
        }
    }

    /// Passes on every note kept in `other`, in order (work done apart, said in input order).
    pub fn forward(&self, other: Notes) {
        for n in other.take() {
            self.note(n);
        }
    }
}
