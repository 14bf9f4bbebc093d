//! What an interrupted tool leaves: nothing. Every output a tool writes is staged beside
//! its destination (a `.NAME.XXXXXX.njx-partial` file, njx-combine's `.njx-combine-XXXXXX`
//! folder) and moved into place when done; an error drops it. A signal (Ctrl-C's SIGINT,
//! SIGTERM, SIGHUP) ends the process without running those drops, so the staged paths are
//! registered here while they exist ([`stage`]). Once a tool has called [`on_signals`],
//! the first path staged starts a thread that, on the first such signal, removes what is
//! registered and exits with 128 + the signal (130 for Ctrl-C, 143 for SIGTERM), as a shell
//! reports a process the signal killed. Until something is staged the signals keep their
//! default: a tool writing only to stdout dies of them as any filter does.
//!
//! A background job that reads the terminal is stopped (SIGTTIN); `kill` and `timeout`
//! send it SIGTERM and then SIGCONT, and its read, restarted, would stop it again before
//! the thread could exit — for good. So the handler, in the interrupted thread itself,
//! first sets SIGTTIN and SIGTTOU to be ignored: the read fails instead, and the error it
//! leads to is not printed ([`await_signal_exit`]) while the thread exits.
//!
//! njx-capture does not take part: nsys, its child, receives the terminal's Ctrl-C too
//! and ends the capture itself, and the capture's own exit status says how.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, Once};

/// The staged paths, each with the id of its [`Staged`] guard.
static STAGED: Mutex<Vec<(u64, PathBuf)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(0);
/// Whether the program asked for cleanup on signals ([`on_signals`]).
static WANTED: AtomicBool = AtomicBool::new(false);
/// The handlers, installed with the first staged path.
static INSTALLED: Once = Once::new();
/// Set by the handler: a signal is ending the process.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

/// A staged path, registered until dropped.
#[derive(Debug)]
pub struct Staged(u64);

impl Drop for Staged {
    fn drop(&mut self) {
        let mut staged = STAGED.lock().unwrap_or_else(|e| e.into_inner());
        staged.retain(|(id, _)| *id != self.0);
    }
}

/// Registers `path` (a file or a folder) to be removed if a signal ends the process
/// before the guard is dropped.
pub fn stage(path: &Path) -> Staged {
    if WANTED.load(Ordering::Relaxed) {
        INSTALLED.call_once(install);
    }
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut staged = STAGED.lock().unwrap_or_else(|e| e.into_inner());
    staged.push((id, path.to_path_buf()));
    Staged(id)
}

/// Removes every registered path (files, and folders with what they hold).
fn remove_staged() {
    let staged = STAGED.lock().unwrap_or_else(|e| e.into_inner());
    for (_, path) in staged.iter() {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => {
                let _ = std::fs::remove_dir_all(path);
            }
            Ok(_) => {
                let _ = std::fs::remove_file(path);
            }
            Err(_) => {}
        }
    }
}

/// Asks for the staged paths to be removed on SIGINT, SIGTERM or SIGHUP, the process then
/// exiting with 128 + the signal; the handlers are installed when a path is first staged.
/// Without it (the library used by other programs), signals keep their default.
pub fn on_signals() {
    WANTED.store(true, Ordering::Relaxed);
}

/// Where a signal is ending the process, waits for the cleaning thread to exit with it
/// (never returning); otherwise returns at once.
pub fn await_signal_exit() {
    if SIGNALLED.load(Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

/// Installs the handlers and starts the thread that cleans up and exits.
fn install() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        // SAFETY: the action stores an atomic and calls signal(2): both async-signal-safe.
        let _ = unsafe {
            signal_hook::low_level::register(signal, || {
                SIGNALLED.store(true, Ordering::SeqCst);
                libc::signal(libc::SIGTTIN, libc::SIG_IGN);
                libc::signal(libc::SIGTTOU, libc::SIG_IGN);
            })
        };
    }
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("njx-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                remove_staged();
                std::process::exit(128 + signal);
            }
        });
    drop(spawned);
}
