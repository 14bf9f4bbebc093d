//! When each module was compiled and first ran, and how long each profile is: what the
//! findings' `compile-time` and `recompilation` rules judge by. Mergeable (partial
//! results carry it); its size follows the compilations, not the executions.

use crate::analysis::compile::{Compilation, Group, key};
use crate::derived::executions::Executions;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One compilation (an `XlaCompile` range).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compiled {
    /// The profile that recorded it.
    pub profile: String,
    /// The module compiled (`module=` of the range name; the name itself without one).
    pub module: String,
    /// Its start, ns.
    pub start_ns: i64,
    /// Its wall time, ns.
    pub wall_ns: i64,
    /// The part of its time in the autotuner's ranges (`XlaAutotuner…`), ns.
    pub autotune_ns: i64,
}

impl Compiled {
    fn of(c: &Compilation) -> Compiled {
        let name = c.name.strip_prefix("TSL:").unwrap_or(&c.name);
        let module = name
            .split_once("module=")
            .map(|(_, rest)| rest.split([',', '#']).next().unwrap_or(rest))
            .unwrap_or(name);
        let autotune: f64 = (c.parts.iter())
            .filter(|(k, _)| key(k, Group::Category, false).starts_with("XlaAutotun"))
            .map(|(_, v)| v)
            .sum();
        Compiled {
            profile: c.profile.to_string(),
            module: module.to_string(),
            start_ns: c.start_ns,
            wall_ns: c.wall_ns,
            autotune_ns: autotune.round() as i64,
        }
    }
}

/// The compilations, first executions and spans of the profiles read.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compilations {
    /// Every compilation, in the order read.
    pub compiled: Vec<Compiled>,
    /// (profile, module name) → the start of its first steady execution (of any program
    /// of that name: the first but one of a program, the first being its warm-up), ns.
    #[serde(with = "crate::derived::partial::pairs")]
    pub first_runs: BTreeMap<(String, String), i64>,
    /// Profile → the first and last time anything in it was recorded (push/pop ranges,
    /// module executions), ns.
    pub spans: BTreeMap<String, (i64, i64)>,
}

impl Compilations {
    /// Adds a profile's compilations and executions.
    pub fn add(&mut self, compilations: &[Compilation], part: &Executions) {
        self.compiled.extend(compilations.iter().map(Compiled::of));
        for r in &part.ranges {
            self.widen(&r.profile, r.start_ns, r.end_ns);
        }
        for m in &part.modules {
            let end = m.start_ns.saturating_add(m.dur_ns);
            self.widen(&m.profile, m.start_ns, end);
            if m.execution == 0 {
                continue;
            }
            let first = (self.first_runs)
                .entry((m.profile.to_string(), m.name.clone()))
                .or_insert(m.start_ns);
            *first = (*first).min(m.start_ns);
        }
    }

    fn widen(&mut self, profile: &str, start: i64, end: i64) {
        match self.spans.get_mut(profile) {
            Some(s) => *s = (s.0.min(start), s.1.max(end)),
            None => {
                self.spans.insert(profile.to_string(), (start, end));
            }
        }
    }

    /// Merges another's.
    pub fn merge(&mut self, o: Compilations) {
        self.compiled.extend(o.compiled);
        for (k, v) in o.first_runs {
            let first = self.first_runs.entry(k).or_insert(v);
            *first = (*first).min(v);
        }
        for (p, (s, e)) in o.spans {
            self.widen(&p, s, e);
        }
    }
}
