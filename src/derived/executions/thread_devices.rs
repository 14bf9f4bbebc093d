//! Which device each thread of a profile launched its XLA work on, in one place for every
//! container and generation of profile:
//!
//! - **launcher names** (XLA since mid-2024 names a thread per device
//!   `XlaLauncher:#global=G,…#`): a named thread runs on device G. A program that ran on
//!   one unnamed thread only (the main thread of a process driving one GPU) or an
//!   autotuning execution (program `unknown`) runs on the first device of its process, as
//!   nsys-jax maps it to the first launcher (`data_loaders.py` since JAX-Toolbox#936);
//! - **kernel devices** (SQLite exports without launcher names): each thread runs on the
//!   CUDA device most of its kernels ran on. Those count from 0 in every process, so they
//!   are numbered per process: local device = the device's position among the devices the
//!   process's threads used, global device = process index × local devices + local;
//! - **neither** (nsys-jax archives written before thread metadata existed): inferred as
//!   nsys-jax did before it had the names (`_load_nvtx_gpu_proj_trace_single` of
//!   JAX-Toolbox#924, "assume that thread ID order is local device order"): the threads
//!   that ran a program, sorted by thread id, are the process's local devices 0..N-1, so a
//!   program run by one thread runs on the first device; a thread must get the same
//!   number in every program; N is the most threads any program ran on.
//!
//! The process index of a profile is its position among the profiles read (the inputs in
//! order, the profiles of a combine archive in theirs, the processes of one SQLite export
//! by process id).

use crate::error::{Error, Result};
use crate::source::devices::{Launcher, Launchers};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A thread: (process id where known, thread id).
pub type Thread = (Option<u64>, u64);

/// The device of each thread that ran XLA work, and what to say about how it was found.
#[derive(Debug, Default)]
pub struct Mapping {
    /// Global device of each mapped thread.
    pub device_of: HashMap<Thread, u32>,
    /// What was assumed, said once per run.
    pub note: Option<String>,
    /// Devices per process, where devices were numbered per process (kernel devices,
    /// thread order): numbers are unique across profiles only where every process drives
    /// as many.
    pub per_process: Option<u32>,
}

/// Key of autotuning executions, which have no program id.
const UNKNOWN: &str = "unknown";

/// Maps the threads that ran each program (`programs`: program key → threads of its
/// modules) to global devices. `first_process` gives the process index of the profile's
/// first process, asked for only where devices are numbered per process and there is
/// something to number. `place` names the profile in errors.
pub fn map_threads(
    launchers: &Launchers,
    programs: &BTreeMap<&str, BTreeSet<Thread>>,
    first_process: &mut dyn FnMut() -> Result<u32>,
    place: &str,
) -> Result<Mapping> {
    if programs.is_empty() {
        return Ok(Mapping::default());
    }
    match launchers {
        Launchers::Named(named) => Ok(named_threads(named, programs)),
        Launchers::Local(local) => Ok(kernel_devices(local, programs, first_process()?)),
        Launchers::None => thread_order(programs, first_process()?, place),
    }
}

/// Launcher threads by name; threads left over follow the first launcher of their process.
fn named_threads(named: &[Launcher], programs: &BTreeMap<&str, BTreeSet<Thread>>) -> Mapping {
    let device_of: HashMap<Thread, u32> = named
        .iter()
        .map(|l| ((Some(l.pid), l.tid), l.device))
        .collect();
    let mut first: HashMap<u64, u32> = HashMap::new();
    for l in named.iter().rev() {
        first.insert(l.pid, l.device);
    }
    let fallback = named.first().map_or(0, |l| l.device);
    let first_of = |t: &Thread| t.0.and_then(|p| first.get(&p).copied()).unwrap_or(fallback);
    fill_unmapped(device_of, programs, first_of)
}

/// Threads not mapped yet of autotuning executions, and of programs that ran on one such
/// thread in a process, run on their process's first device.
fn fill_unmapped(
    mut device_of: HashMap<Thread, u32>,
    programs: &BTreeMap<&str, BTreeSet<Thread>>,
    first_of: impl Fn(&Thread) -> u32,
) -> Mapping {
    let mut add = Vec::new();
    for (program, threads) in programs {
        let mut unmapped: BTreeMap<Option<u64>, Vec<&Thread>> = BTreeMap::new();
        for t in threads.iter().filter(|t| !device_of.contains_key(t)) {
            unmapped.entry(t.0).or_default().push(t);
        }
        for threads in unmapped.into_values() {
            if *program == UNKNOWN || threads.len() == 1 {
                add.extend(threads.into_iter().map(|t| (*t, first_of(t))));
            }
        }
    }
    device_of.extend(add);
    Mapping {
        device_of,
        note: None,
        per_process: None,
    }
}

/// Process index of each process that ran programs, counting from `first_process` in
/// process id order.
fn process_index(
    programs: &BTreeMap<&str, BTreeSet<Thread>>,
    first_process: u32,
) -> BTreeMap<Option<u64>, u32> {
    let pids: BTreeSet<Option<u64>> = programs.values().flatten().map(|t| t.0).collect();
    pids.into_iter()
        .enumerate()
        .map(|(i, p)| (p, first_process + i as u32))
        .collect()
}

/// Threads by the CUDA device their kernels ran on, numbered per process.
fn kernel_devices(
    local: &[Launcher],
    programs: &BTreeMap<&str, BTreeSet<Thread>>,
    first_process: u32,
) -> Mapping {
    let index = process_index(programs, first_process);
    // Each process's devices, in device order: the position is the local device.
    let mut devices: BTreeMap<u64, BTreeSet<u32>> = BTreeMap::new();
    for l in local {
        if index.contains_key(&Some(l.pid)) {
            devices.entry(l.pid).or_default().insert(l.device);
        }
    }
    let per_process = devices
        .values()
        .map(BTreeSet::len)
        .max()
        .unwrap_or(1)
        .max(1) as u32;
    let global = |pid: u64, local: u32| index[&Some(pid)] * per_process + local;
    let mut device_of = HashMap::new();
    for l in local {
        if let Some(set) = devices.get(&l.pid) {
            let position = set.iter().position(|&d| d == l.device).unwrap_or(0) as u32;
            device_of.insert((Some(l.pid), l.tid), global(l.pid, position));
        }
    }
    let mut mapping = fill_unmapped(device_of, programs, |t| {
        index.get(&t.0).copied().unwrap_or(first_process) * per_process
    });
    mapping.per_process = Some(per_process);
    mapping.note = Some(
        "no XlaLauncher thread names: each thread's device is the CUDA device its kernels \
         ran on, numbered per process (device = process index × devices per process + the \
         device's position among its process's devices; processes numbered in input order, \
         then by process id)"
            .to_string(),
    );
    mapping
}

/// Devices inferred from the order of thread ids (no launcher names, no kernel devices).
fn thread_order(
    programs: &BTreeMap<&str, BTreeSet<Thread>>,
    first_process: u32,
    place: &str,
) -> Result<Mapping> {
    let index = process_index(programs, first_process);
    // Local device of each thread: its position among the threads of its process that ran
    // the same program, the same in every program.
    let mut local: BTreeMap<Thread, (u32, &str)> = BTreeMap::new();
    let mut per_process = 1usize;
    for (&program, threads) in programs.iter().filter(|(p, _)| **p != UNKNOWN) {
        let mut by_process: BTreeMap<Option<u64>, Vec<u64>> = BTreeMap::new();
        for t in threads {
            by_process.entry(t.0).or_default().push(t.1);
        }
        for (pid, tids) in by_process {
            per_process = per_process.max(tids.len());
            for (position, tid) in tids.into_iter().enumerate() {
                let position = position as u32;
                match local.get(&(pid, tid)) {
                    Some(&(seen, other)) if seen != position => {
                        return Err(Error::data(
                            place,
                            format!(
                                "no XlaLauncher thread names, and devices cannot be inferred \
                                 from thread order: thread {tid}{} is local device {seen} in \
                                 program {other} but {position} in program {program} (the \
                                 threads that ran each program, sorted by thread id, must be \
                                 the same devices in every program)",
                                pid.map_or(String::new(), |p| format!(" of process {p}")),
                            ),
                        ));
                    }
                    Some(_) => {}
                    None => {
                        local.insert((pid, tid), (position, program));
                    }
                }
            }
        }
    }
    let per_process = per_process as u32;
    let base = |t: &Thread| index.get(&t.0).copied().unwrap_or(first_process) * per_process;
    let device_of: HashMap<Thread, u32> = local
        .iter()
        .map(|(t, &(position, _))| (*t, base(t) + position))
        .collect();
    // Threads of autotuning executions only run on the first device of their process.
    let mut mapping = fill_unmapped(device_of, programs, base);
    mapping.per_process = Some(per_process);
    mapping.note = Some(format!(
        "no XlaLauncher thread names: devices inferred from thread order as nsys-jax did \
         before it had them (the threads that ran a program, sorted by thread id, are local \
         devices 0..N-1 of their process, N = {per_process} here; device = process index × \
         N + local device; processes numbered in input order, then by process id)"
    ));
    Ok(mapping)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn programs(list: &[(&'static str, &[Thread])]) -> BTreeMap<&'static str, BTreeSet<Thread>> {
        list.iter()
            .map(|(p, t)| (*p, t.iter().copied().collect()))
            .collect()
    }

    #[test]
    fn thread_order_numbers_each_programs_threads_per_process() {
        let p = programs(&[
            (
                "step",
                &[
                    (Some(9), 104),
                    (Some(9), 101),
                    (Some(9), 103),
                    (Some(9), 102),
                ],
            ),
            ("init", &[(Some(9), 100)]),
            (UNKNOWN, &[(Some(9), 200)]),
        ]);
        let m = map_threads(&Launchers::None, &p, &mut || Ok(2), "x").unwrap();
        let d = |tid| m.device_of[&(Some(9), tid)];
        assert_eq!([d(101), d(102), d(103), d(104)], [8, 9, 10, 11]);
        assert_eq!((d(100), d(200)), (8, 8));
        assert!(m.note.unwrap().contains("N = 4"));
    }

    #[test]
    fn thread_order_numbers_processes_by_id() {
        let p = programs(&[(
            "step",
            &[(Some(7), 2), (Some(7), 1), (Some(5), 9), (Some(5), 8)],
        )]);
        let m = map_threads(&Launchers::None, &p, &mut || Ok(0), "x").unwrap();
        let d = |pid, tid| m.device_of[&(Some(pid), tid)];
        assert_eq!([d(5, 8), d(5, 9), d(7, 1), d(7, 2)], [0, 1, 2, 3]);
    }

    #[test]
    fn thread_order_rejects_threads_numbered_differently() {
        let p = programs(&[
            ("a", &[(None, 1), (None, 2)]),
            ("b", &[(None, 2), (None, 3)]),
        ]);
        let e = map_threads(&Launchers::None, &p, &mut || Ok(0), "rank0.zip").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("rank0.zip"), "{msg}");
        assert!(
            msg.contains("thread 2 is local device 1 in program a but 0 in program b"),
            "{msg}"
        );
    }

    #[test]
    fn kernel_devices_are_numbered_per_process() {
        let l = |pid, tid, device| Launcher { pid, tid, device };
        // Two processes, each seeing its two GPUs as 0 and 1; a third thread of process 5
        // launched on a device no program thread used.
        let local = [
            l(5, 51, 1),
            l(5, 50, 0),
            l(6, 60, 0),
            l(6, 61, 1),
            l(8, 80, 3),
        ];
        let p = programs(&[
            (
                "step",
                &[(Some(5), 50), (Some(5), 51), (Some(6), 60), (Some(6), 61)],
            ),
            ("init", &[(Some(6), 1)]),
        ]);
        let m = map_threads(&Launchers::Local(local.to_vec()), &p, &mut || Ok(1), "x").unwrap();
        let d = |pid, tid| m.device_of.get(&(Some(pid), tid)).copied();
        assert_eq!(
            [d(5, 50), d(5, 51), d(6, 60), d(6, 61), d(6, 1), d(8, 80)],
            [Some(2), Some(3), Some(4), Some(5), Some(4), None]
        );
    }

    #[test]
    fn named_threads_fall_back_to_their_process_first_launcher() {
        let l = |pid, tid, device| Launcher { pid, tid, device };
        let named = [l(5, 50, 0), l(5, 51, 1), l(6, 60, 2), l(6, 61, 3)];
        let p = programs(&[
            (
                "step",
                &[(Some(5), 50), (Some(5), 51), (Some(6), 60), (Some(6), 61)],
            ),
            ("init", &[(Some(5), 5), (Some(6), 6)]),
            ("twice", &[(Some(6), 3), (Some(6), 4)]),
            ("single", &[(Some(6), 7)]),
            (UNKNOWN, &[(Some(6), 8), (Some(5), 9)]),
        ]);
        let m = map_threads(
            &Launchers::Named(named.to_vec()),
            &p,
            &mut || panic!("not asked"),
            "x",
        )
        .unwrap();
        let d = |pid, tid| m.device_of.get(&(Some(pid), tid)).copied();
        // One unnamed thread per process: the main threads.
        assert_eq!((d(5, 5), d(6, 6)), (Some(0), Some(2)));
        // Two unnamed threads in one process: no device (nsys-jax drops them too).
        assert_eq!((d(6, 3), d(6, 4)), (None, None));
        assert_eq!((d(6, 7), d(6, 8), d(5, 9)), (Some(2), Some(2), Some(0)));
        assert!(m.note.is_none());
    }
}
