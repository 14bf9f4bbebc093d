//! Clock alignment across profiles (nsys-jax's `align_profiler_data_timestamps`): each
//! device's correction from the end times of the collectives that span every device.

use super::Executions;
use crate::records::Thunk;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Per-device clock corrections applied, nanoseconds to subtract from device times.
pub type Corrections = BTreeMap<u32, f64>;

/// What clock alignment needs of the profiles read (nsys-jax's
/// `align_profiler_data_timestamps`): the devices that communicate and the end times of
/// the collectives with the largest group, per instance, in reading order.
#[derive(Debug, Default)]
pub struct Alignment {
    devices: BTreeSet<u32>,
    max_group: Option<u32>,
    ends: HashMap<InstanceKey, Vec<(u32, i64)>>,
}

/// A collective instance: (program, execution, thunk, thunk execution).
type InstanceKey = (String, u32, String, u32);

impl Alignment {
    /// Takes in thunk executions.
    pub fn add(&mut self, thunks: &[Thunk]) {
        for t in thunks.iter().filter(|t| t.comm) {
            self.devices.insert(t.device);
            let Some(g) = t.group_size else { continue };
            match self.max_group {
                Some(m) if g < m => continue,
                Some(m) if g == m => {}
                _ => {
                    self.max_group = Some(g);
                    self.ends.clear();
                }
            }
            let key = (
                t.program.clone(),
                t.execution,
                t.name.clone(),
                t.thunk_execution,
            );
            self.ends
                .entry(key)
                .or_default()
                .push((t.device, t.start_ns + t.dur_ns + t.hidden_ns));
        }
    }

    /// On the collectives whose groups span every device, each device's clock is
    /// corrected by the median over those collectives of how far its end time is from
    /// the mean end time of all devices. `None` where alignment does not apply (one
    /// device, or no collective over all devices).
    pub fn corrections(&self) -> Option<Corrections> {
        let max_group = self.max_group?;
        if max_group < 2 || self.devices.len() != max_group as usize {
            return None;
        }
        let mut skews: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
        for ends in self.ends.values() {
            let mean = ends.iter().map(|&(_, e)| e as f64).sum::<f64>() / ends.len() as f64;
            for &(d, e) in ends {
                skews.entry(d).or_default().push(e as f64 - mean);
            }
        }
        Some(
            skews
                .into_iter()
                .map(|(d, mut s)| {
                    s.sort_by(f64::total_cmp);
                    let n = s.len();
                    let median = if n % 2 == 1 {
                        s[n / 2]
                    } else {
                        (s[n / 2 - 1] + s[n / 2]) / 2.0
                    };
                    (d, median)
                })
                .collect(),
        )
    }
}

/// Aligns device clocks across profiles as nsys-jax's `align_profiler_data_timestamps`
/// ([`Alignment`]), shifting every execution's start. Returns the corrections, or `None`
/// where alignment does not apply.
pub fn align_clocks(all: &mut Executions) -> Option<Corrections> {
    let mut alignment = Alignment::default();
    alignment.add(&all.thunks);
    let corrections = alignment.corrections()?;
    let shift = |device: u32| corrections.get(&device).map_or(0, |c| c.round() as i64);
    for m in &mut all.modules {
        m.start_ns -= shift(m.device);
    }
    for t in &mut all.thunks {
        t.start_ns -= shift(t.device);
    }
    Some(corrections)
}
