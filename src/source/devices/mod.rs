//! Which GPU each thread launches work on: XLA names those threads
//! `XlaLauncher:#global=G,local=L,process=P,partition=S#` (`slice=` before xla#29725).
//! nsys-jax archives keep thread names in `thread-metadata.parquet` ([`parquet`]); SQLite
//! exports in `ThreadNames`, with the kernels' `deviceId` to fall back on ([`sqlite`]).

pub mod gpus;
pub mod parquet;
pub mod sqlite;

use regex::Regex;
use std::sync::LazyLock;

/// How a profile tells the device each thread launches work on (the mapping itself is
/// `executions::thread_devices`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Launchers {
    /// XlaLauncher thread names: each named thread's global device.
    Named(Vec<Launcher>),
    /// No names, but the CUDA device each thread's kernels ran on (SQLite exports): local
    /// to its process, counting from 0 in every process.
    Local(Vec<Launcher>),
    /// Neither (nsys-jax archives written before thread metadata existed).
    #[default]
    None,
}

impl Launchers {
    /// Named launchers, or [`Launchers::None`] when there are none.
    pub fn named(list: Vec<Launcher>) -> Launchers {
        if list.is_empty() {
            Launchers::None
        } else {
            Launchers::Named(list)
        }
    }
}

/// A thread that launches work on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launcher {
    /// Process id.
    pub pid: u64,
    /// Thread id.
    pub tid: u64,
    /// Device id: global for named launchers, the CUDA device for [`Launchers::Local`].
    pub device: u32,
}

static LAUNCHER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^XlaLauncher:#global=(\d+),local=\d+,process=\d+,(?:partition|slice)=\d+#$")
        .expect("valid regex")
});

/// The global device of a launcher thread's name, `None` for other threads.
pub fn launcher_device(name: &str) -> Option<u32> {
    LAUNCHER.captures(name)?[1].parse().ok()
}
