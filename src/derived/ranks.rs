//! Every rank counts once (issue 41). A glob that overlaps (`out/*.zip out/rank0.zip`), a
//! cluster job retried under another file name, or a partial result given beside its own
//! archive would otherwise count a device's executions twice without a word.
//!
//! A rank is known by what its executions are, not by a file name: its device and the
//! start of its first module execution there, in nanoseconds of the profile's clock
//! ([`Rank`]). A copy of a profile, renamed or not, and a partial result made from it
//! have the same ranks; the ranks of one run differ in device, and two runs' profiles of
//! one device in the first start (nanoseconds apart at the least). Every input path read
//! as profiles is checked ([`Seen::add`]), and partial results carry the ranks they hold
//! with the path each was read from, so that every level of a tree reduce checks them.

use crate::derived::executions::Executions;
use crate::error::{Error, Result};
use std::collections::BTreeMap;

/// A device's executions in one profile, known by the start of the first module
/// execution there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rank {
    /// The device.
    pub device: u32,
    /// The start of its first module execution, ns (the profile's clock).
    pub first_ns: i64,
}

/// The ranks of one input path's executions (none without module executions).
pub fn of(part: &Executions) -> Vec<Rank> {
    let mut first: BTreeMap<u32, i64> = BTreeMap::new();
    for m in &part.modules {
        crate::source::records::keep_first(&mut first, m.device, m.start_ns);
    }
    first
        .into_iter()
        .map(|(device, first_ns)| Rank { device, first_ns })
        .collect()
}

/// The ranks read so far, each with the input it was read from and, for a rank carried
/// by a partial result, the path that partial read it from.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    from: BTreeMap<Rank, (String, String)>,
    /// What the ranks are known by the first of, where not module executions: `thunk`
    /// (thunk records read without their modules), `kernel` (kernel tables).
    known_by: Option<&'static str>,
}

/// Aggregates are equal by what they hold, not by where it was read from: their ranks
/// travel beside their data.
impl PartialEq for Seen {
    fn eq(&self, _: &Seen) -> bool {
        true
    }
}

impl Seen {
    /// Ranks known by the start of their first `what` execution (`thunk`, `kernel`), not
    /// their first module execution: kept apart from those, as a profile's module records
    /// and its thunk records are read together.
    pub fn known_by(what: &'static str) -> Seen {
        Seen {
            known_by: Some(what),
            ..Seen::default()
        }
    }

    fn first(&self) -> &'static str {
        self.known_by.unwrap_or("module")
    }

    /// Adds the ranks of `place` from each device's first start there.
    pub fn add_firsts(&mut self, firsts: BTreeMap<u32, i64>, place: &str) -> Result<()> {
        let ranks = firsts
            .into_iter()
            .map(|(device, first_ns)| (Rank { device, first_ns }, place.to_string()));
        self.add(ranks, place, place)
    }

    /// Adds the ranks of `place`, each with the path it was first read from (`place`
    /// itself for a profile); a rank already read is refused, naming both inputs (the
    /// error at `at`: the place, or its line).
    pub fn add(
        &mut self,
        ranks: impl IntoIterator<Item = (Rank, String)>,
        place: &str,
        at: &str,
    ) -> Result<()> {
        for (rank, origin) in ranks {
            if let Some((before, was)) = self.from.get(&rank) {
                if before == place && was == &origin {
                    return Err(Error::data(
                        at,
                        format!(
                            "given twice (device {} is in it, first {} execution at {} ns): \
                             a rank counts once",
                            rank.device,
                            self.first(),
                            rank.first_ns
                        ),
                    ));
                }
                let said = |p: &str, o: &str| {
                    if p == o {
                        format!("`{p}`")
                    } else {
                        format!("`{p}` (which read it from `{o}`)")
                    }
                };
                return Err(Error::data(
                    at,
                    format!(
                        "device {} (first {} execution at {} ns) is read twice: from {} \
                         and from {}; a rank counts once (a copy of a profile, a glob that \
                         overlaps, or a partial result beside its own profile)",
                        rank.device,
                        self.first(),
                        rank.first_ns,
                        said(before, was),
                        said(place, &origin),
                    ),
                ));
            }
            self.from.insert(rank, (place.to_string(), origin));
        }
        Ok(())
    }

    /// Every rank with the path it was first read from, in rank order: what a partial
    /// result carries.
    pub fn listed(&self) -> Vec<(u32, i64, String)> {
        self.from
            .iter()
            .map(|(r, (_, origin))| (r.device, r.first_ns, origin.clone()))
            .collect()
    }

    /// How many ranks were read.
    pub fn len(&self) -> usize {
        self.from.len()
    }

    /// Whether none was read.
    pub fn is_empty(&self) -> bool {
        self.from.is_empty()
    }
}
