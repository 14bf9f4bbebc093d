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
//! njx-capture runs nsys as a child ([`run_child`]): a signal that comes while the child runs
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

/// Installs the handlers now, where the program asked for them ([`on_signals`]): called
/// before a path to be staged is created, so that no signal finds it unregistered with
/// the default action still in place.
pub fn arm() {
    if WANTED.load(Ordering::Relaxed) {
        INSTALLED.call_once(install);
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
    arm();
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut staged = STAGED.lock().unwrap_or_else(|e| e.into_inner());
    staged.push((id, path.to_path_buf(), only_empty));
    Staged(id)
}

/// A child in [`CHILD`] before its process id is known.
const STARTING: u32 = u32::MAX;
/// Held while [`CHILD`] changes and while the cleaning thread reads it and passes a signal
/// on, so that a signal is never passed to a process id already reaped (and reused).
static CHILD_LOCK: Mutex<()> = Mutex::new(());

/// Runs `command` to its end with the signals held (see the module's notes): one that
/// comes meanwhile is passed on to the child (SIGTERM, SIGHUP) and, once the child has
/// ended, removes what is staged and ends the process with 128 + the signal.
pub fn run_child(command: &mut std::process::Command) -> std::io::Result<std::process::ExitStatus> {
    set_child(STARTING);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            set_child(0);
            exit_if_signalled();
            return Err(e);
        }
    };
    set_child(child.id());
    // A signal that came while it started is passed on now.
    let pending = PENDING.load(Ordering::SeqCst);
    if pending != 0 && pending != libc::SIGINT {
        let _ = child.kill_with(pending);
    }
    // Waited for without reaping it, so that its id stays its own until CHILD is cleared.
    let waited = wait_no_reap(child.id());
    set_child(0);
    let status = waited.and_then(|()| child.wait());
    // A signal sent to the whole process group (the terminal's Ctrl-C) ends the child and
    // this process together: its handler has run by now, but the cleaning thread may not
    // have, and would find CHILD cleared and clean up while this thread went on to drop
    // the same paths. Left to that thread instead.
    await_signal_exit();
    status
}

/// Sends `signal` to a child (std's `kill` sends SIGKILL only).
trait KillWith {
    fn kill_with(&mut self, signal: i32) -> std::io::Result<()>;
}

impl KillWith for std::process::Child {
    fn kill_with(&mut self, signal: i32) -> std::io::Result<()> {
        let _held = CHILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: kill(2) on a child not yet reaped (CHILD_LOCK keeps it so).
        match unsafe { libc::kill(self.id() as libc::pid_t, signal) } {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }
}

fn set_child(pid: u32) {
    let _held = CHILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    CHILD.store(pid, Ordering::SeqCst);
}

/// Waits for child `pid` to end, leaving it to be reaped (waitid with WNOWAIT).
fn wait_no_reap(pid: u32) -> std::io::Result<()> {
    loop {
        // SAFETY: a zeroed siginfo_t for waitid(2) to fill.
        let r = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
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
        // The cleaning thread exits, or the signal came while a child ran and is
        // pending: checked again until one of them ends the process.
        loop {
            std::thread::park_timeout(std::time::Duration::from_millis(50));
            exit_if_signalled();
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
                {
                    let _held = CHILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
                    let child = CHILD.load(Ordering::SeqCst);
                    if child != 0 {
                        // Seen by the waiting thread once it clears CHILD (under the lock).
                        let _ =
                            PENDING.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
                        if signal != SIGINT && child != STARTING {
                            // SAFETY: kill(2) has no memory effects; the child is not
                            // reaped while CHILD holds its id and the lock is held.
                            unsafe { libc::kill(child as libc::pid_t, signal) };
                        }
                        continue;
                    }
                }
                remove_staged();
                std::process::exit(128 + signal);
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
