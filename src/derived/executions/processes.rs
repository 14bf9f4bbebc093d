//! Process numbering across inputs: the process index of each input's first process,
//! where devices are numbered per process.

use crate::error::Result;
use crate::output::notes::Notes;
use crate::output::progress::Progress;
use crate::source::Profiles;
use std::path::PathBuf;
use std::sync::Mutex;

/// The process index of each input's first process, where devices are numbered per process
/// (`devices`): the processes of the inputs before it. Counted only when asked for (a
/// profile without launcher names), each input once: an input records its count when it
/// is cheap to know (an archive: one process per profile), and an input counted by
/// another is locked while it is (opening it again: for a `.nsys-rep` report, exporting
/// it again).
pub(super) struct Processes<'a> {
    paths: &'a [PathBuf],
    counts: Vec<Mutex<Option<u32>>>,
    /// The first devices-per-process seen where devices were numbered per process, and
    /// where.
    per_process: Mutex<Option<(u32, String)>>,
}

impl<'a> Processes<'a> {
    pub(super) fn new(paths: &'a [PathBuf]) -> Processes<'a> {
        Processes {
            paths,
            counts: paths.iter().map(|_| Mutex::new(None)).collect(),
            per_process: Mutex::new(None),
        }
    }

    /// Records that input `k` holds `n` processes.
    pub(super) fn record(&self, k: usize, n: u32) {
        *self.counts[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(n);
    }

    /// Takes in that `place` numbered its devices per process with `n` per process; says
    /// when another profile had another number, whose device numbers then overlap
    /// (nsys-jax requires the same number in every profile).
    pub(super) fn check_per_process(&self, n: u32, place: &str, notes: &Notes) {
        let mut first = self.per_process.lock().unwrap_or_else(|e| e.into_inner());
        match &*first {
            None => *first = Some((n, place.to_string())),
            Some((m, other)) if *m != n => notes.note(format!(
                "{place}: devices numbered per process with {n} per process, but {other} \
                 with {m}: device numbers of the two overlap (processes must drive as many \
                 GPUs each, or be named by XLA's launcher threads)"
            )),
            Some(_) => {}
        }
    }

    /// The process index of input `k`'s first process.
    pub(super) fn first(&self, k: usize) -> Result<u32> {
        let mut first = 0;
        for j in 0..k {
            let mut count = self.counts[j].lock().unwrap_or_else(|e| e.into_inner());
            let n = match *count {
                Some(n) => n,
                None => {
                    let n = Profiles::open(&self.paths[j], &Progress::none())?.processes()?;
                    *count = Some(n);
                    n
                }
            };
            first += n;
        }
        Ok(first)
    }
}
