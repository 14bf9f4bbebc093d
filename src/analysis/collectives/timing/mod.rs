//! The Analysis notebook's communication cells, on device clocks aligned across
//! profiles (nsys-jax's `align_profiler_data_timestamps`,
//! [`executions::visit`](crate::derived::executions::visit)):
//!
//! - **Wait per collective instance** (program, execution, thunk, thunk execution): the
//!   last device's end minus the first device's start minus the fastest device's full
//!   time (exposed + hidden): time lost to devices not arriving in lockstep, as the
//!   notebook's wait-time box plot defines it; also as a multiple of the fastest
//!   device's time, against message size.
//! - Its **distribution** per collective: quantiles (linear interpolation between order
//!   statistics, as numpy's and matplotlib's box plots) and a histogram on 1-2-5 bins.
//! - **Lateness along the module timeline**: at each collective of a program, each
//!   device's start minus the first device's start, averaged over executions, placed at
//!   the collective's mean time within the module execution (from the earliest thunk
//!   start of that execution over devices): which device is late, and when.
//!
//! Unlike the report's tables (durations only, mergeable per rank), these compare clocks
//! of different devices, so they are computed from thunk records (`njx-export` aligns
//! them) or profiles read with clocks aligned, not from partial results. Memory holds
//! the collective instances of one rank (every rank runs the same ones), the module
//! executions, and (collective, device) sums for lateness.
//!
//! The files: `mod.rs`, the [`Timing`] aggregate of the thunk executions (collective
//! instances, arrivals, module starts); `tables.rs`, the four tables from it;
//! `bins.rs`, 1-2-5 bins; `chart.rs`, what the two pictures show (drawn by `output::charts`).

use crate::output::notes::Notes;
use crate::records::Thunk;
use std::collections::BTreeMap;

mod bins;
mod chart;
mod tables;

pub(super) use chart::lateness_svg;
pub use chart::{lateness_svg_text, wait_svg, wait_svg_text};

/// One collective instance over the devices read so far.
#[derive(Debug, Clone)]
struct Instance {
    /// Collective kind (the least, should devices disagree).
    collective: Option<String>,
    /// Message size (the least).
    message_bytes: Option<u64>,
    /// Earliest start, latest start (and that device: the last to arrive), latest end.
    first_start: i64,
    last_start: (i64, u32),
    last_end: i64,
    /// The fastest device's full time.
    fastest: i64,
    /// Devices (thunk executions) in it.
    devices: u64,
}

impl Instance {
    fn of(t: &Thunk) -> Instance {
        let full = t.dur_ns.saturating_add(t.hidden_ns);
        Instance {
            collective: t.collective.clone(),
            message_bytes: t.message_bytes,
            first_start: t.start_ns,
            last_start: (t.start_ns, t.device),
            last_end: t.start_ns.saturating_add(full),
            fastest: full,
            devices: 1,
        }
    }

    fn add(&mut self, t: &Thunk) {
        let o = Instance::of(t);
        if (&o.collective, o.message_bytes) < (&self.collective, self.message_bytes) {
            self.collective = o.collective;
            self.message_bytes = o.message_bytes;
        }
        self.first_start = self.first_start.min(o.first_start);
        // The latest start; of equal starts, the lowest device.
        if (o.last_start.0, std::cmp::Reverse(o.last_start.1))
            > (self.last_start.0, std::cmp::Reverse(self.last_start.1))
        {
            self.last_start = o.last_start;
        }
        self.last_end = self.last_end.max(o.last_end);
        self.fastest = self.fastest.min(o.fastest);
        self.devices += 1;
    }

    /// Last end − first start − fastest full time, ns (in i128: records read back may
    /// carry any times).
    fn wait(&self) -> i128 {
        i128::from(self.last_end) - i128::from(self.first_start) - i128::from(self.fastest)
    }

    fn collective(&self) -> String {
        self.collective.clone().unwrap_or_default()
    }
}

/// (program, execution, thunk, thunk execution).
type InstanceKey = (String, u32, String, u32);

/// (program, thunk, thunk execution): a collective's place in its program.
type Position = (String, String, u32);

/// What the wait distributions and lateness need of the thunk executions that count.
#[derive(Debug, Default)]
pub struct Timing {
    include_warmup: bool,
    instances: BTreeMap<InstanceKey, Instance>,
    /// (position, device) → (sum of starts over executions, executions).
    arrivals: BTreeMap<(Position, u32), (i128, u64)>,
    /// (program, execution) → earliest thunk start over devices.
    module_starts: BTreeMap<(String, u32), i64>,
    /// Program → module name (the least).
    names: BTreeMap<String, String>,
}

impl Timing {
    /// An empty timing; initialisation executions count when `include_warmup`.
    pub fn new(include_warmup: bool) -> Timing {
        Timing {
            include_warmup,
            ..Timing::default()
        }
    }

    /// Takes in one thunk execution (its warm-up decided, its clock aligned).
    pub fn add(&mut self, t: &Thunk) {
        if t.warmup && !self.include_warmup {
            return;
        }
        let start = self
            .module_starts
            .entry((t.program.clone(), t.execution))
            .or_insert(t.start_ns);
        *start = (*start).min(t.start_ns);
        super::keep_least_name(&mut self.names, &t.program, &t.module);
        if !t.comm {
            return;
        }
        let key = (
            t.program.clone(),
            t.execution,
            t.name.clone(),
            t.thunk_execution,
        );
        match self.instances.get_mut(&key) {
            Some(i) => i.add(t),
            None => {
                self.instances.insert(key, Instance::of(t));
            }
        }
        let a = self
            .arrivals
            .entry((
                (t.program.clone(), t.name.clone(), t.thunk_execution),
                t.device,
            ))
            .or_default();
        a.0 += i128::from(t.start_ns);
        a.1 += 1;
    }

    /// The instances over two or more devices (a device alone waits for nobody).
    fn shared(&self) -> impl Iterator<Item = (&InstanceKey, &Instance)> {
        self.instances.iter().filter(|(_, i)| i.devices > 1)
    }

    /// Notes what was left out: instances of one device.
    pub fn say_alone(&self, notes: &Notes) {
        let alone = self.instances.values().filter(|i| i.devices < 2).count();
        if alone > 0 {
            notes.note(format!(
                "{alone} of {} collective instances ran on one device only (another device \
                 ran a different program, or one profile was read): left out of the wait \
                 distributions and lateness",
                self.instances.len()
            ));
        }
    }

    /// Waits (ns) and wait ratios per collective.
    fn waits(&self) -> BTreeMap<String, (Vec<f64>, Vec<f64>)> {
        let mut by: BTreeMap<String, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
        for (_, i) in self.shared() {
            let e = by.entry(i.collective()).or_default();
            let wait = i.wait() as f64;
            e.0.push(wait);
            if i.fastest > 0 {
                e.1.push(wait / i.fastest as f64);
            }
        }
        for (w, r) in by.values_mut() {
            w.sort_by(f64::total_cmp);
            r.sort_by(f64::total_cmp);
        }
        by
    }
}
