//! What an interrupted tool leaves: nothing. Every output a tool writes is staged beside
//! its destination (a `.NAME.XXXXXX.njx-partial` file, njx-combine's `.njx-combine-XXXXXX`
//! folder) and moved into place when done; an error drops it. A signal (Ctrl-C's SIGINT,
//! SIGTERM, SIGHUP) ends the process without running those drops, so the staged paths are
//! registered here while they exist ([`stage`]), and [`on_signals`] starts a thread that,
//! on the first such signal, removes what is registered and exits with 128 + the signal
//! (130 for Ctrl-C, 143 for SIGTERM), as a shell reports a process the signal killed.
//!
//! njx-capture does not take part: nsys, its child, receives the terminal's Ctrl-C too
//! and ends the capture itself, and the capture's own exit status says how.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The staged paths, each with the id of its [`Staged`] guard.
static STAGED: Mutex<Vec<(u64, PathBuf)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(0);

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

/// Starts the thread that cleans up on SIGINT, SIGTERM or SIGHUP and exits with 128 + the
/// signal. Without it (the library used by other programs), signals keep their default.
pub fn on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
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
