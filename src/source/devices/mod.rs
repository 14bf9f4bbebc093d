//! Which GPU each thread launches work on: XLA names those threads
//! `XlaLauncher:#global=G,local=L,process=P,partition=S#` (`slice=` before xla#29725).
//! nsys-jax archives keep thread names in `thread-metadata.parquet` ([`parquet`]); SQLite
//! exports in `ThreadNames`, with the kernels' `deviceId` to fall back on ([`sqlite`]).

pub mod parquet;
pub mod sqlite;

use regex::Regex;
use std::sync::LazyLock;

/// A thread that launches work on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launcher {
    /// Process id.
    pub pid: u64,
    /// Thread id.
    pub tid: u64,
    /// Global device id.
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
