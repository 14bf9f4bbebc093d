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
//! the thread could exit — for good. So the handler first sets SIGTTIN and SIGTTOU to be
//! ignored, and runs in the reading thread itself (the cleaning thread blocks the
//! signals): the read fails instead, and the error it leads to is not printed
//! ([`await_signal_exit`]) while the thread exits.
//!
//! njx-capture runs nsys as a child ([`Child`]): a signal that comes while the child runs
//! is held until it has ended (the terminal's Ctrl-C reaches nsys too, and SIGTERM and
//! SIGHUP are passed on to it, for they may have been sent to njx-capture alone), so that
//! nothing is removed from under nsys; then what is staged is removed and the process
//! exits as above.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, Once};

/// The staged paths, each with the id of its [`Staged`] guard and whether it is removed
/// only when empty.
static STAGED: Mutex<Vec<(u64, PathBuf, bool)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(0);
/// Whether the program asked for cleanup on signals ([`on_signals`]).
static WANTED: AtomicBool = AtomicBool::new(false);
/// The handlers, installed with the first staged path.
static INSTALLED: Once = Once::new();
/// Set by the handler: a signal is ending the process.
static SIGNALLED: AtomicBool = AtomicBool::new(false);
/// The process id of the child running ([`Child`]), 0 for none.
static CHILD: AtomicU32 = AtomicU32::new(0);
/// The signal that came while a child ran, 0 for none.
static PENDING: AtomicI32 = AtomicI32::new(0);

/// A staged path, registered until dropped.
#[derive(Debug)]
pub struct Staged(u64);

impl Drop for Staged {
    fn drop(&mut self) {
        let mut staged = STAGED.lock().unwrap_or_else(|e| e.into_inner());
        staged.retain(|(id, _, _)| *id != self.0);
    }
}

/// Registers `path` (a file or a folder) to be removed if a signal ends the process
/// before the guard is dropped.
pub fn stage(path: &Path) -> Staged {
    register(path, false)
}

/// [`stage`] for a file removed only if it is empty then (a placeholder that claims a
/// name until what it stands for is renamed over it).
pub fn stage_placeholder(path: &Path) -> Staged {
    register(path, true)
}

fn register(path: &Path, only_empty: bool) -> Staged {
    if WANTED.load(Ordering::Relaxed) {
        INSTALLED.call_once(install);
    }
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut staged = STAGED.lock().unwrap_or_else(|e| e.into_inner());
    staged.push((id, path.to_path_buf(), only_empty));
    Staged(id)
}

/// A child process running, registered until dropped: signals wait for it to end (see
/// the module's notes); then call [`exit_if_signalled`].
#[derive(Debug)]
pub struct Child(());

impl Child {
    /// Registers the running child `pid`.
    pub fn running(pid: u32) -> Child {
        CHILD.store(pid, Ordering::SeqCst);
        Child(())
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        CHILD.store(0, Ordering::SeqCst);
    }
}

/// Where a signal came while a child ran: removes what is staged and exits with 128 +
/// the signal. Otherwise returns.
pub fn exit_if_signalled() {
    let signal = PENDING.load(Ordering::SeqCst);
    if signal != 0 {
        remove_staged();
        std::process::exit(128 + signal);
    }
}

/// Removes every registered path (files, and folders with what they hold).
fn remove_staged() {
    let staged = STAGED.lock().unwrap_or_else(|e| e.into_inner());
    for (_, path, only_empty) in staged.iter() {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => {
                let _ = std::fs::remove_dir_all(path);
            }
            Ok(m) if *only_empty && m.len() > 0 => {}
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
    exit_if_signalled();
    if SIGNALLED.load(Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

/// Installs the handlers and starts the thread that cleans up and exits.
fn install() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    const SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];
    let Ok(mut signals) = signal_hook::iterator::Signals::new(SIGNALS) else {
        return;
    };
    // The thread is born with the signals blocked, so that they go to the other threads,
    // the main one above all: a stopped reader of the terminal must run the handler
    // itself before its read restarts, or the read stops it again (see the module's
    // notes).
    // SAFETY: signal sets built in place; the masks are this thread's and the new one's.
    let before = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in SIGNALS {
            libc::sigaddset(&mut set, signal);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut before);
        before
    };
    let spawned = std::thread::Builder::new()
        .name("njx-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                let child = CHILD.load(Ordering::SeqCst);
                if child == 0 {
                    remove_staged();
                    std::process::exit(128 + signal);
                }
                let _ = PENDING.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
                if signal != SIGINT {
                    // SAFETY: kill(2) has no memory effects. The id is the child's until
                    // it is waited for, and CHILD is cleared right after that wait.
                    unsafe { libc::kill(child as libc::pid_t, signal) };
                }
            }
        });
    // SAFETY: the mask saved above, restored on this thread.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut()) };
    for signal in SIGNALS {
        // SAFETY: the actions store an atomic and call signal(2) or _exit(2), all
        // async-signal-safe.
        let _ = unsafe {
            if spawned.is_ok() {
                signal_hook::low_level::register(signal, || {
                    SIGNALLED.store(true, Ordering::SeqCst);
                    libc::signal(libc::SIGTTIN, libc::SIG_IGN);
                    libc::signal(libc::SIGTTOU, libc::SIG_IGN);
                })
            } else {
                // No thread to clean up: the signals end the process at once, as they
                // would have without the iterator.
                signal_hook::low_level::register(signal, move || libc::_exit(128 + signal))
            }
        };
    }
}
