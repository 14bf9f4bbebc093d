//! Module variants: how programs are keyed ([`KeyBy`]), the programs each module name ran
//! as and where ([`Variants`]), and the records rekeyed by module name.

use crate::records::{Module, Thunk};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// How programs are keyed across profiles (the records' `program`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum KeyBy {
    /// The HLO fingerprint (`fingerprint_before_lhs`), as nsys-jax keys them: ranks that
    /// compiled a program differently run different programs.
    #[default]
    Fingerprint,
    /// The module name: the programs one name runs as on different devices are analysed
    /// together (each device should run one of them; their collective sequences are
    /// compared and said on stderr).
    Name,
}

/// The programs (keys) run under each module name, with the devices that ran each and
/// their collective sequences: ranks that compiled one program differently show as one
/// name with several keys, whose executions are not compared with each other's unless
/// programs are keyed by name ([`KeyBy::Name`]).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variants {
    /// Module name → program key (fingerprint) → where it ran.
    pub by_name: BTreeMap<String, BTreeMap<String, Variant>>,
    /// Whether the records were keyed by name ([`KeyBy::Name`]).
    #[serde(default)]
    pub keyed_by_name: bool,
}

/// Where one program ran, and what it communicated.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    /// Devices that ran it.
    pub devices: BTreeSet<u32>,
    /// Digests of its collective sequence (each device's first execution: the
    /// communication thunks' instruction, kind, group size and message size, in order),
    /// where read from profiles.
    #[serde(default)]
    pub collectives: BTreeSet<u64>,
}

impl Variants {
    /// Takes in that `device` ran program `program` named `name`.
    pub fn add(&mut self, name: &str, program: &str, device: u32) {
        if program == "unknown" {
            return;
        }
        let keys = match self.by_name.get_mut(name) {
            Some(keys) => keys,
            None => self.by_name.entry(name.to_string()).or_default(),
        };
        match keys.get_mut(program) {
            Some(v) => {
                v.devices.insert(device);
            }
            None => {
                let mut v = Variant::default();
                v.devices.insert(device);
                keys.insert(program.to_string(), v);
            }
        }
    }

    /// Takes in the executions of one profile (keyed by fingerprint): where each program
    /// ran and the collective sequence of each device's first execution of it.
    pub(super) fn add_profile(&mut self, modules: &[Module], thunks: &[Thunk]) {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let mut first: HashMap<(&str, u32), u32> = HashMap::new();
        for m in modules {
            self.add(&m.name, &m.program, m.device);
            let e = first
                .entry((m.program.as_str(), m.device))
                .or_insert(m.execution);
            *e = (*e).min(m.execution);
        }
        let mut digests: HashMap<(&str, u32), (&str, DefaultHasher)> = HashMap::new();
        for t in thunks {
            if first.get(&(t.program.as_str(), t.device)) != Some(&t.execution) {
                continue;
            }
            let (_, h) = digests
                .entry((t.program.as_str(), t.device))
                .or_insert_with(|| (t.module.as_str(), DefaultHasher::new()));
            if t.comm {
                (&t.name, &t.collective, t.group_size, t.message_bytes).hash(h);
            }
        }
        for ((program, _), (name, h)) in digests {
            if let Some(v) = self
                .by_name
                .get_mut(name)
                .and_then(|keys| keys.get_mut(program))
            {
                v.collectives.insert(h.finish());
            }
        }
    }

    /// Takes in another's.
    pub fn merge(&mut self, other: &Variants) {
        self.keyed_by_name |= other.keyed_by_name;
        for (name, keys) in &other.by_name {
            let mine = match self.by_name.get_mut(name) {
                Some(mine) => mine,
                None => self.by_name.entry(name.clone()).or_default(),
            };
            for (key, v) in keys {
                let m = match mine.get_mut(key) {
                    Some(m) => m,
                    None => mine.entry(key.clone()).or_default(),
                };
                m.devices.extend(&v.devices);
                m.collectives.extend(&v.collectives);
            }
        }
    }

    /// What to say of each module name that ran as several programs: with programs keyed
    /// by fingerprint, when each ran on devices of its own, together on every device seen
    /// (the ranks compiled it differently, as rank 3 of the pax profiles did its step
    /// function); with programs keyed by name, always, with whether their collective
    /// sequences agree (what makes comparing their collectives by instruction name safe)
    /// and whether a device ran several of them.
    pub fn notes(&self) -> Vec<String> {
        self.notes_except(&BTreeSet::new(), true)
    }

    /// The module names that ran as several programs keyed by fingerprint: each one
    /// [`Variants::notes`] may say was compiled differently.
    pub fn compiled_differently(&self) -> BTreeSet<String> {
        if self.keyed_by_name {
            return BTreeSet::new();
        }
        self.by_name
            .iter()
            .filter(|(_, keys)| keys.len() > 1)
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// [`Variants::notes`], a module of `said` in one short line: the modules one stream of
    /// records showed that of already, said in full by the tool that read the profiles and
    /// wrote it (where it was not silenced, or the stream is not several exports joined).
    /// Without `compares` (the tool draws no figure that compares devices: flame graphs,
    /// thunk tables) the note says the programs are apart, not what wait and straggler
    /// figures leave out.
    pub fn notes_except(&self, said: &BTreeSet<String>, compares: bool) -> Vec<String> {
        let all: BTreeSet<u32> = self
            .by_name
            .values()
            .flat_map(|keys| keys.values())
            .flat_map(|v| v.devices.iter().copied())
            .collect();
        let mut out = Vec::new();
        for (name, keys) in &self.by_name {
            if keys.len() < 2 {
                continue;
            }
            let count: usize = keys.values().map(|v| v.devices.len()).sum();
            let union: BTreeSet<u32> = keys
                .values()
                .flat_map(|v| v.devices.iter().copied())
                .collect();
            let list: Vec<String> = keys
                .iter()
                .map(|(key, v)| format!("{key} on {}", device_list(&v.devices)))
                .collect();
            let ran = format!("{} programs ({})", keys.len(), list.join(", "));
            if !self.keyed_by_name {
                if count != union.len() || union != all {
                    continue;
                }
                out.push(if !compares && said.contains(name) {
                    format!(
                        "module {name} ran as {} programs: each program's time is shown apart",
                        keys.len()
                    )
                } else if !compares {
                    format!(
                        "module {name} was compiled differently across devices: {ran}; \
                         each program's time is shown apart"
                    )
                } else if said.contains(name) {
                    // One stream of records showed it: the tool that wrote them from the
                    // profiles said it in full, unless it was silenced or the stream is
                    // several exports put together. Said again, shorter, never left out.
                    format!(
                        "module {name} ran as {} programs, each on devices of its own: its \
                         figures compare each program's devices only",
                        keys.len()
                    )
                } else {
                    format!(
                        "module {name} was compiled differently across devices: {ran}; each \
                         is compared only across its own devices, so wait, straggler and \
                         alignment figures leave the others out (njx-modules --program-key \
                         name analyses them together, as do njx-collectives, njx-export and \
                         njx-timeline)"
                    )
                });
                continue;
            }
            let digests: BTreeSet<u64> = keys
                .values()
                .flat_map(|v| v.collectives.iter().copied())
                .collect();
            let known = keys.values().all(|v| !v.collectives.is_empty());
            let verdict = if !known {
                "their collective sequences were not all read (records or partial results \
                 keyed by name carry none): not checked"
                    .to_string()
            } else if digests.len() == 1 {
                "their collective sequences are identical (each device's first execution: \
                 instruction names, kinds, group sizes and message sizes, in order), so their \
                 collectives pair up by instruction name"
                    .to_string()
            } else {
                "their collective sequences differ (instruction names, kinds, group sizes or \
                 message sizes): collectives paired by instruction name may not be the same \
                 operation"
                    .to_string()
            };
            let shared = if count == union.len() {
                String::new()
            } else {
                "; some devices ran several of them, whose executions are counted together"
                    .to_string()
            };
            out.push(format!(
                "module {name} ran as {ran}, analysed together by module name: \
                 {verdict}{shared}"
            ));
        }
        out
    }
}

/// Keys the programs of executions by module name (autotuning executions stay
/// `unknown`), counting executions per (device, name) in time order.
pub(super) fn key_by_name(modules: &mut [Module], thunks: &mut [Thunk]) {
    let mut order: Vec<usize> = (0..modules.len()).collect();
    order.sort_by_key(|&i| (modules[i].start_ns, i));
    let mut counter: HashMap<(u32, String), u32> = HashMap::new();
    // Old program → (device, old execution) → new execution.
    let mut renumbered: HashMap<String, HashMap<(u32, u32), u32>> = HashMap::new();
    for i in order {
        let m = &mut modules[i];
        if m.program == "unknown" {
            continue;
        }
        let n = counter.entry((m.device, m.name.clone())).or_default();
        let old = std::mem::replace(&mut m.program, m.name.clone());
        renumbered
            .entry(old)
            .or_default()
            .insert((m.device, m.execution), *n);
        m.execution = *n;
        *n += 1;
    }
    for t in thunks {
        let new = renumbered
            .get(t.program.as_str())
            .and_then(|by| by.get(&(t.device, t.execution)));
        if let Some(&n) = new {
            t.program = t.module.clone();
            t.execution = n;
        }
    }
}

/// `devices 0-2, 5` or `device 3`.
pub fn device_list(devices: &BTreeSet<u32>) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &d in devices {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == d => *end = d,
            _ => runs.push((d, d)),
        }
    }
    let text: Vec<String> = runs
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    format!(
        "device{} {}",
        if devices.len() == 1 { "" } else { "s" },
        text.join(", ")
    )
}
