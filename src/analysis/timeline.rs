//! A timeline users can open: range, module and thunk records as Trace Event Format JSON
//! (the object form, `{"traceEvents":[…],"displayTimeUnit":"ns"}`), which Perfetto UI and
//! `chrome://tracing` open.
//!
//! Tracks:
//! - per profile and device, a process `device D (profile)` with lanes (threads)
//!   `modules` (module executions), `thunks` (compute thunks) and `communication`
//!   (communication thunks, category `communication`, their whole GPU time drawn, the
//!   hidden and exposed parts in `args`; coloured `good` when mostly hidden, `terrible`
//!   when mostly exposed). Slices that would overlap without nesting on a lane (thunks
//!   on several streams) go to a further lane of the same kind (`thunks 2`, …), so every
//!   lane nests;
//! - per profile and process, a process `profile pid P` with a thread per OS thread
//!   carrying its NVTX ranges (compilation ranges among them, on the threads that
//!   compiled).
//!
//! Events are written as they are read, each once, never all held: what is held is one
//! entry per track and lane. Times are microseconds written exactly (`ns / 1000` with
//! three decimals), module and thunk times on the device clocks as `njx-export` aligns
//! them.

use crate::derived::executions::{self, Execution, Hlo, KeyBy, Want, WithoutXla};
use crate::error::{Error, Result};
use crate::output::notes::Notes;
use crate::records::{Module, Range, Thunk};
use crate::source::{self, records::RecordStream};
use serde::Serialize;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// What the timeline holds.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Leave out the NVTX ranges of profiles (record streams of ranges are still drawn).
    pub no_ranges: bool,
    /// Leave out the module and thunk executions of profiles.
    pub no_executions: bool,
    /// Leave out initialisation executions (warm-up, as `njx-modules` decides it).
    pub steady: bool,
    /// Align device clocks across profiles (as `njx-export` does by default).
    pub align: bool,
    /// How programs are keyed.
    pub program_key: KeyBy,
}

/// The lanes of a device's process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Lane {
    Modules,
    Thunks,
    Communication,
}

impl Lane {
    fn name(self) -> &'static str {
        match self {
            Lane::Modules => "modules",
            Lane::Thunks => "thunks",
            Lane::Communication => "communication",
        }
    }

    /// Where the lanes sort in the UIs (`thread_sort_index`), each kind's extra lanes
    /// after it.
    fn sort(self) -> u64 {
        match self {
            Lane::Modules => 0,
            Lane::Thunks => 1000,
            Lane::Communication => 2000,
        }
    }
}

/// One lane's extent: what a slice must stay clear of to go on it.
#[derive(Debug, Clone, Copy)]
struct Extent {
    first: i64,
    last: i64,
    tid: u64,
}

/// The trace being written: the writer, the processes and threads named so far.
struct Trace<'w> {
    out: &'w mut dyn Write,
    first: bool,
    next_pid: u64,
    devices: HashMap<(Arc<str>, u32), u64>,
    lanes: HashMap<(u64, Lane), Vec<Extent>>,
    hosts: HashMap<(Arc<str>, Option<u64>), u64>,
    threads: HashMap<(u64, u64), u64>,
    next_tid: HashMap<u64, u64>,
    events: u64,
}

/// Microseconds, exactly: `ns / 1000` with three decimals.
struct Us(i64);

impl std::fmt::Display for Us {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let a = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:03}", a / 1000, a % 1000)
    }
}

#[derive(Serialize)]
struct ModuleArgs<'a> {
    program: &'a str,
    module: &'a str,
    execution: u32,
    thunks: u32,
    warmup: bool,
}

#[derive(Serialize)]
struct ThunkArgs<'a> {
    program: &'a str,
    module: &'a str,
    execution: u32,
    thunk_execution: u32,
    warmup: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    exposed_ns: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hidden_ns: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    collective: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    group_size: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message_bytes: Option<u64>,
}

#[derive(Serialize)]
struct RangeArgs {
    id: u64,
    depth: u32,
    self_ns: i64,
}

/// What a trace starts with.
const HEADER: &[u8] = b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";

impl<'w> Trace<'w> {
    /// A trace writing to `out`; its header is written with the first event (or by
    /// `finish`), so that an input refused before any event leaves no half trace.
    fn new(out: &'w mut dyn Write) -> Result<Trace<'w>> {
        Ok(Trace {
            out,
            first: true,
            next_pid: 1,
            devices: HashMap::new(),
            lanes: HashMap::new(),
            hosts: HashMap::new(),
            threads: HashMap::new(),
            next_tid: HashMap::new(),
            events: 0,
        })
    }

    /// Writes one event: `body` writes its fields between the braces.
    fn event(&mut self, body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
        let sep: &[u8] = if self.first { b"\n{" } else { b",\n{" };
        self.begin()?;
        self.out
            .write_all(sep)
            .and_then(|()| body(self.out))
            .and_then(|()| self.out.write_all(b"}"))
            .map_err(Error::Output)
    }

    /// A metadata event (`process_name`, `thread_name`, `…_sort_index`).
    fn meta<V: Serialize + ?Sized>(
        &mut self,
        what: &str,
        pid: u64,
        tid: u64,
        key: &str,
        value: &V,
    ) -> Result<()> {
        self.event(|w| {
            write!(
                w,
                "\"ph\":\"M\",\"cat\":\"__metadata\",\"pid\":{pid},\"tid\":{tid},\"name\":\"{what}\",\"args\":{{\"{key}\":"
            )?;
            serde_json::to_writer(&mut *w, value)?;
            w.write_all(b"}")
        })
    }

    /// A complete event.
    #[allow(clippy::too_many_arguments)]
    fn slice<A: Serialize>(
        &mut self,
        pid: u64,
        tid: u64,
        name: &str,
        cat: &str,
        cname: Option<&str>,
        start: i64,
        dur: i64,
        args: &A,
    ) -> Result<()> {
        self.events += 1;
        self.event(|w| {
            w.write_all(b"\"ph\":\"X\",\"name\":")?;
            serde_json::to_writer(&mut *w, name)?;
            write!(
                w,
                ",\"cat\":\"{cat}\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"dur\":{}",
                Us(start),
                Us(dur)
            )?;
            if let Some(c) = cname {
                write!(w, ",\"cname\":\"{c}\"")?;
            }
            w.write_all(b",\"args\":")?;
            serde_json::to_writer(&mut *w, args)?;
            Ok(())
        })
    }

    /// The process of a device, named when first met.
    fn device(&mut self, profile: &Arc<str>, device: u32) -> Result<u64> {
        if let Some(&pid) = self.devices.get(&(profile.clone(), device)) {
            return Ok(pid);
        }
        let pid = self.next_pid;
        self.next_pid += 1;
        self.devices.insert((profile.clone(), device), pid);
        self.meta(
            "process_name",
            pid,
            0,
            "name",
            &format!("device {device} ({profile})"),
        )?;
        // Devices after the hosts, in device order.
        self.meta(
            "process_sort_index",
            pid,
            0,
            "sort_index",
            &(1_000_000 + u64::from(device)),
        )?;
        Ok(pid)
    }

    /// The thread of a lane of `pid` that `[start, end)` fits on without overlapping what
    /// it holds (it holds slices before or after it: records come in time order, mostly).
    fn lane(&mut self, pid: u64, lane: Lane, start: i64, end: i64) -> Result<u64> {
        let lanes = self.lanes.entry((pid, lane)).or_default();
        for e in lanes.iter_mut() {
            if start >= e.last {
                e.last = end;
                return Ok(e.tid);
            }
            if end <= e.first {
                e.first = start;
                return Ok(e.tid);
            }
        }
        let k = lanes.len() as u64;
        let tid = lane.sort() + k + 1;
        lanes.push(Extent {
            first: start,
            last: end,
            tid,
        });
        let name = if k == 0 {
            lane.name().to_string()
        } else {
            format!("{} {}", lane.name(), k + 1)
        };
        self.meta("thread_name", pid, tid, "name", &name)?;
        self.meta("thread_sort_index", pid, tid, "sort_index", &tid)?;
        Ok(tid)
    }

    fn module(&mut self, m: &Module) -> Result<()> {
        let pid = self.device(&m.profile, m.device)?;
        let tid = self.lane(pid, Lane::Modules, m.start_ns, m.start_ns + m.dur_ns)?;
        let args = ModuleArgs {
            program: &m.program,
            module: &m.name,
            execution: m.execution,
            thunks: m.thunks,
            warmup: m.warmup,
        };
        self.slice(
            pid, tid, &m.name, "module", None, m.start_ns, m.dur_ns, &args,
        )
    }

    fn thunk(&mut self, t: &Thunk) -> Result<()> {
        let pid = self.device(&t.profile, t.device)?;
        // A communication thunk's record holds its exposed time; drawn whole.
        let dur = t.dur_ns + t.hidden_ns;
        let lane = if t.comm {
            Lane::Communication
        } else {
            Lane::Thunks
        };
        let tid = self.lane(pid, lane, t.start_ns, t.start_ns + dur)?;
        let args = ThunkArgs {
            program: &t.program,
            module: &t.module,
            execution: t.execution,
            thunk_execution: t.thunk_execution,
            warmup: t.warmup,
            exposed_ns: t.comm.then_some(t.dur_ns),
            hidden_ns: t.comm.then_some(t.hidden_ns),
            collective: t.collective.as_deref(),
            group_size: t.group_size,
            message_bytes: t.message_bytes,
        };
        let (cat, cname) = if t.comm {
            let c = if t.hidden_ns >= t.dur_ns {
                "good"
            } else {
                "terrible"
            };
            ("communication", Some(c))
        } else {
            ("compute", None)
        };
        self.slice(pid, tid, &t.name, cat, cname, t.start_ns, dur, &args)
    }

    fn range(&mut self, r: &Range) -> Result<()> {
        let pid = match self.hosts.get(&(r.profile.clone(), r.pid)) {
            Some(&pid) => pid,
            None => {
                let pid = self.next_pid;
                self.next_pid += 1;
                self.hosts.insert((r.profile.clone(), r.pid), pid);
                let name = match r.pid {
                    Some(p) => format!("{} pid {p}", r.profile),
                    None => r.profile.to_string(),
                };
                self.meta("process_name", pid, 0, "name", &name)?;
                self.meta("process_sort_index", pid, 0, "sort_index", &pid)?;
                pid
            }
        };
        let tid = match self.threads.get(&(pid, r.tid)) {
            Some(&tid) => tid,
            None => {
                let n = self.next_tid.entry(pid).or_insert(0);
                *n += 1;
                let tid = *n;
                self.threads.insert((pid, r.tid), tid);
                self.meta(
                    "thread_name",
                    pid,
                    tid,
                    "name",
                    &format!("thread {}", r.tid),
                )?;
                tid
            }
        };
        let args = RangeArgs {
            id: r.id,
            depth: r.depth,
            self_ns: r.self_ns,
        };
        self.slice(pid, tid, &r.name, "nvtx", None, r.start_ns, r.dur_ns, &args)
    }

    /// Writes the header before the first event (or the end of a trace without any).
    fn begin(&mut self) -> Result<()> {
        if self.first {
            self.out.write_all(HEADER).map_err(Error::Output)?;
            self.first = false;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<u64> {
        self.begin()?;
        self.out.write_all(b"\n]}\n").map_err(Error::Output)?;
        Ok(self.events)
    }
}

/// Which records a stream holds, from its first line's fields.
fn stream_kind(s: &mut RecordStream) -> Result<&'static str> {
    if let Some(got) = s.summary()? {
        return Err(Error::data(
            s.place.clone(),
            format!(
                "this is {got}, not range, module or thunk records: give it `njx-export \
                 --table ranges|modules|thunks` output (or the profiles themselves)"
            ),
        ));
    }
    Ok(if s.first_line_has("thunk_execution")? {
        "thunks"
    } else if s.first_line_has("self_ns")? {
        "ranges"
    } else if s.first_line_has("warmup")? {
        "modules"
    } else {
        return Err(Error::data(
            s.place.clone(),
            "neither range, module nor thunk records",
        ));
    })
}

/// Writes the timeline of `inputs` — range, module and thunk records (JSON Lines or CSV),
/// nsys-jax archives, nsys SQLite exports or reports — to `out`; returns how many slices
/// were written.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<u64> {
    let mut trace = Trace::new(out)?;
    let steady = options.steady;
    let profiles = source::split_inputs(
        inputs,
        "ranges|modules|thunks",
        notes.progress(),
        &mut |mut s| {
            match stream_kind(&mut s)? {
                "ranges" => s.read(&mut |r: Range| trace.range(&r)),
                "modules" => s.read(&mut |m: Module| {
                    if steady && m.warmup {
                        return Ok(());
                    }
                    trace.module(&m)
                }),
                _ => s.read(&mut |t: Thunk| {
                    if steady && t.warmup {
                        return Ok(());
                    }
                    trace.thunk(&t)
                }),
            }
            .map(drop)
        },
    )?;
    if !profiles.is_empty() && !options.no_executions {
        // A profile without XLA programs (PyTorch, CUDA) still has its ranges drawn.
        executions::visit_with(
            &profiles,
            Hlo {
                dumps: &[],
                key: options.program_key,
            },
            options.align,
            Want::Both,
            WithoutXla::Skip,
            notes,
            &mut |e| match e {
                Execution::Module(m) if !(steady && m.warmup) => trace.module(&m),
                Execution::Thunk(t) if !(steady && t.warmup) => trace.thunk(&t),
                _ => Ok(()),
            },
        )?;
    }
    if !options.no_ranges {
        for path in &profiles {
            source::read_ranges(path, source::Options::default(), notes, &mut |r| {
                trace.range(&r)
            })?;
        }
    }
    trace.finish()
}

#[cfg(test)]
mod tests {
    use super::Us;

    #[test]
    fn microseconds_are_exact() {
        assert_eq!(Us(0).to_string(), "0.000");
        assert_eq!(Us(1).to_string(), "0.001");
        assert_eq!(Us(1_234_567).to_string(), "1234.567");
        assert_eq!(Us(-1500).to_string(), "-1.500");
        assert_eq!(Us(i64::MIN).to_string(), "-9223372036854775.808");
    }
}
