//! The statistics of every (program, thunk, phase), names held once and keys numbers,
//! with their order by name and the runs of entries of one (program, thunk) in it.

use super::stats::Stats;
use crate::derived::executions::Phase;
use crate::util::compact::{Names, Table};
use serde::{Deserialize, Serialize};

/// A key of [`ThunkStats`]: the numbers of the program's and the thunk's names, and the
/// phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Key {
    program: u32,
    name: u32,
    phase: Phase,
}

/// Per (program, thunk, [`Phase`]) the execution statistics, every name held once.
/// Written and read as the list of `[[program, thunk, phase], statistics]` in key order.
#[derive(Debug, Default, Clone)]
pub(super) struct ThunkStats {
    names: Names,
    pub(super) table: Table<Key, Stats>,
}

impl ThunkStats {
    /// The statistics of (program, name, phase), new ones where they are not held; and
    /// whether they were new.
    pub(super) fn entry(&mut self, program: &str, name: &str, phase: Phase) -> (&mut Stats, bool) {
        let key = Key {
            program: self.names.id(program),
            name: self.names.id(name),
            phase,
        };
        self.table.entry(key)
    }

    /// Entry `i`: (program, thunk, phase) and its statistics.
    pub(super) fn get(&self, i: u32) -> ((&str, &str, Phase), &Stats) {
        let (k, s) = self.table.get(i as usize);
        (
            (self.names.get(k.program), self.names.get(k.name), k.phase),
            s,
        )
    }

    /// The entries for which `keep` holds, in the order of (program, thunk, phase).
    pub(super) fn sorted(&self, keep: impl Fn((&str, &str, Phase), &Stats) -> bool) -> Vec<u32> {
        // Each name's rank among all names: the entries are then sorted by numbers.
        let mut by_name: Vec<u32> = (0..self.names.len() as u32).collect();
        by_name.sort_unstable_by(|&a, &b| self.names.get(a).cmp(self.names.get(b)));
        let mut rank = vec![0u32; by_name.len()];
        for (r, &id) in by_name.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        drop(by_name);
        let keys = self.table.keys();
        let mut order: Vec<u32> = (0..keys.len() as u32)
            .filter(|&i| {
                let (key, s) = self.get(i);
                keep(key, s)
            })
            .collect();
        order.sort_unstable_by_key(|&i| {
            let k = keys[i as usize];
            (rank[k.program as usize], rank[k.name as usize], k.phase)
        });
        order
    }

    /// `order` (entries in key order) cut into the runs of each (program, thunk).
    pub(super) fn runs(&self, order: &[u32]) -> Vec<Run> {
        let keys = self.table.keys();
        let mut runs: Vec<Run> = Vec::new();
        for (at, &i) in order.iter().enumerate() {
            let k = keys[i as usize];
            match runs.last_mut() {
                Some(r)
                    if {
                        let first = keys[order[r.at as usize] as usize];
                        (first.program, first.name) == (k.program, k.name)
                    } =>
                {
                    r.len += 1
                }
                _ => runs.push(Run {
                    at: at as u32,
                    len: 1,
                }),
            }
        }
        runs
    }
}

impl PartialEq for ThunkStats {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.sorted(|_, _| true), other.sorted(|_, _| true));
        a.len() == b.len() && a.iter().zip(&b).all(|(&i, &j)| self.get(i) == other.get(j))
    }
}

impl Serialize for ThunkStats {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        ser.collect_seq(self.sorted(|_, _| true).into_iter().map(|i| self.get(i)))
    }
}

impl<'de> Deserialize<'de> for ThunkStats {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = ThunkStats;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of [[program, thunk, phase], statistics]")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<ThunkStats, A::Error> {
                let mut stats = ThunkStats::default();
                type Entry = ((String, String, Phase), Stats);
                while let Some(((program, name, phase), s)) = seq.next_element::<Entry>()? {
                    let (slot, new) = stats.entry(&program, &name, phase);
                    if !new {
                        return Err(serde::de::Error::custom("a key is given twice"));
                    }
                    *slot = s;
                }
                Ok(stats)
            }
        }
        d.deserialize_seq(Entries)
    }
}

/// The entries of one (program, thunk) in a sorted list of entries: `len` from `at`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Run {
    pub(super) at: u32,
    pub(super) len: u32,
}
