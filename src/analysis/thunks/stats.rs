//! The statistics of the executions of one thunk (of one program, in one phase): their
//! count, exact sums of durations and their squares, whether it communicates, and the
//! few slowest executions.

use crate::records::Thunk;
use crate::util::stats::Sums;
use serde::{Deserialize, Serialize};

/// How many of the slowest executions of each thunk are kept.
pub const SLOWEST: usize = 3;

/// One execution of a thunk, as the variability view names it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Slow {
    pub(super) dur_ns: i64,
    pub(super) device: u32,
    pub(super) execution: u32,
    pub(super) thunk_execution: u32,
}

impl Slow {
    /// Slowest first; ties by device, then execution, so that merges are exact.
    fn key(&self) -> (std::cmp::Reverse<i64>, u32, u32, u32) {
        (
            std::cmp::Reverse(self.dur_ns),
            self.device,
            self.execution,
            self.thunk_execution,
        )
    }
}

/// The executions of one thunk of one program in one phase.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Stats {
    pub(super) n: u64,
    pub(super) dur: Sums,
    /// Whether it is a communication thunk.
    pub(super) comm: bool,
    /// The slowest executions, slowest first, at most [`SLOWEST`].
    pub(super) slowest: Slowest,
    /// The fastest execution, ns (none before any, or from a partial result that did not
    /// carry it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) fastest: Option<i64>,
}

/// The slowest executions of a thunk, slowest first, held in place (no allocation per
/// thunk); written and read as the list of them.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct Slowest {
    n: u8,
    items: [Slow; SLOWEST],
}

impl Slowest {
    pub(super) fn as_slice(&self) -> &[Slow] {
        &self.items[..usize::from(self.n)]
    }

    pub(super) fn first(&self) -> Option<&Slow> {
        self.as_slice().first()
    }

    /// Keeps `s` if it is among the slowest.
    fn keep(&mut self, s: Slow) {
        let n = usize::from(self.n);
        let at = self.items[..n].partition_point(|k| k.key() < s.key());
        if at < SLOWEST {
            let end = (n + 1).min(SLOWEST);
            self.items.copy_within(at..end - 1, at + 1);
            self.items[at] = s;
            self.n = end as u8;
        }
    }
}

impl Serialize for Slowest {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        self.as_slice().serialize(ser)
    }
}

impl<'de> Deserialize<'de> for Slowest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let list = Vec::<Slow>::deserialize(d)?;
        let mut out = Slowest::default();
        list.into_iter().for_each(|s| out.keep(s));
        Ok(out)
    }
}

impl Stats {
    pub(super) fn add(&mut self, t: &Thunk) {
        self.fastest = match (self.n, self.fastest) {
            (0, _) => Some(t.dur_ns),
            (_, f) => f.map(|f| f.min(t.dur_ns)),
        };
        self.n += 1;
        self.dur.add(t.dur_ns);
        self.comm |= t.comm;
        self.keep(Slow {
            dur_ns: t.dur_ns,
            device: t.device,
            execution: t.execution,
            thunk_execution: t.thunk_execution,
        });
    }

    fn keep(&mut self, s: Slow) {
        self.slowest.keep(s);
    }

    pub(super) fn merge(&mut self, o: &Stats) {
        self.fastest = match (self.n, o.n) {
            (_, 0) => self.fastest,
            (0, _) => o.fastest,
            _ => self.fastest.zip(o.fastest).map(|(a, b)| a.min(b)),
        };
        self.n = self.n.saturating_add(o.n);
        self.dur.merge(o.dur);
        self.comm |= o.comm;
        o.slowest.as_slice().iter().for_each(|&s| self.keep(s));
    }
}

/// Held at the ends of i64: only made-up records reach them.
pub(super) fn clamp(ns: i128) -> i64 {
    ns.clamp(i64::MIN.into(), i64::MAX.into()) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_of_partial_results_saturate_when_merged() {
        let big = Stats {
            n: u64::MAX - 1,
            ..Stats::default()
        };
        let mut sum = big.clone();
        sum.merge(&big);
        assert_eq!(sum.n, u64::MAX);
    }
}
