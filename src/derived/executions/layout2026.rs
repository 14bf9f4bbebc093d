//! XLA's layout since 2026, beyond what nsys-jax reads: thunk and NCCL ranges outside
//! every module range given to the module execution of their thread (else process)
//! whose span holds them, and collectives seen only as NCCL ranges named from the
//! program's HLO schedule.

use super::building::{CollectiveSchedule, Comm, Derived, ProgramInfo, Programs, ThunkRecords};
use crate::error::Result;
use crate::records::{GpuRange, Module, Reconstructed, Thunk};
use crate::source::xla_names::{thunk_op, thunk_unique_id};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Gives each thunk of `parentless` (outside every module range) to the module execution
/// of its thread, else of its process, whose span holds it ([`Spans::attribute`]),
/// confirmed by the instruction's unique id where the dump can tell; adds them to
/// `thunk_module` and says what was given and left out. Returns the thunks given.
pub(super) fn attribute_thunks(
    ranges: &[GpuRange],
    spans: &Spans,
    program: &Programs,
    parentless: &[usize],
    info: &mut dyn ProgramInfo,
    thunk_module: &mut Vec<(usize, usize)>,
    notes: &mut Vec<String>,
) -> Result<HashSet<usize>> {
    let mut attributed: HashSet<usize> = HashSet::new();
    let mut unplaced: Vec<usize> = Vec::new();
    let mut unconfirmed = 0usize;
    for &t in parentless {
        let id = thunk_unique_id(&ranges[t].name);
        let op = thunk_op(&ranges[t].name).unwrap_or(&ranges[t].name);
        let mut confirmed = |m: usize| -> Result<Option<bool>> {
            let (key, program_id, short) = &program[&m];
            match (program_id, key.as_str()) {
                (Some(pid), k) if k != "unknown" => {
                    Ok(info.instruction_id(*pid, short, op)?.map(|found| {
                        found.is_some_and(|found| id.is_none_or(|id| found as u64 == id))
                    }))
                }
                _ => Ok(None),
            }
        };
        match spans.attribute(&ranges[t], &mut confirmed)? {
            Some((m, sure)) => {
                unconfirmed += usize::from(!sure);
                attributed.insert(t);
                thunk_module.push((t, m));
            }
            None => unplaced.push(t),
        }
    }
    if !attributed.is_empty() {
        notes.push(format!(
            "{} thunks had no XlaModule range around them: each given to the module \
             execution of its thread (else of its process) whose span holds it (records: \
             reconstructed = module)",
            attributed.len()
        ));
    }
    if unconfirmed > 0 {
        notes.push(format!(
            "{unconfirmed} of the thunks given to a module execution by time are not \
             instructions of that program's HLO dump with the unique id they carry"
        ));
    }
    if !unplaced.is_empty() {
        notes.push(format!(
            "left out {} thunks outside any XlaModule range, on their thread or in their \
             process, at their time: {}",
            unplaced.len(),
            names_of(ranges, &unplaced)
        ));
    }
    Ok(attributed)
}

/// The module range of each NCCL range of `nccl` (outside every thunk): the one above it,
/// else the one of its thread or process whose span holds it; what none holds is left
/// out and said.
pub(super) fn attribute_nccl(
    ranges: &[GpuRange],
    spans: &Spans,
    nccl: &[(usize, Option<usize>)],
    notes: &mut Vec<String>,
) -> Result<Vec<(usize, usize)>> {
    let mut nccl_module: Vec<(usize, usize)> = Vec::new();
    let mut nccl_unplaced: Vec<usize> = Vec::new();
    for &(n, m) in nccl {
        match m {
            Some(m) => nccl_module.push((n, m)),
            None => match spans.attribute(&ranges[n], &mut |_| Ok(None))? {
                Some((m, _)) => nccl_module.push((n, m)),
                None => nccl_unplaced.push(n),
            },
        }
    }
    if !nccl_unplaced.is_empty() {
        notes.push(format!(
            "left out {} NCCL ranges outside any thunk and any XlaModule range, on their \
             thread or in their process, at their time: {}",
            nccl_unplaced.len(),
            names_of(ranges, &nccl_unplaced)
        ));
    }
    Ok(nccl_module)
}

/// Communication seen only as NCCL ranges: the n-th NCCL range of an execution (in
/// host order) is the n-th of the program's collectives (in schedule order) that has
/// no thunk range in that execution. `nccl_module`: each NCCL range outside thunks with
/// its module range; the thunk records made go to `thunks`, each counted in its module
/// execution of `out`, and what could not be matched is said in `out`'s notes.
pub(super) fn name_nccl(
    ranges: &[GpuRange],
    nccl_module: &[(usize, usize)],
    module_index: &HashMap<usize, usize>,
    thunks: &mut ThunkRecords,
    info: &mut dyn ProgramInfo,
    out: &mut Derived,
) -> Result<()> {
    let mut nccl_by_module: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &(n, m) in nccl_module {
        nccl_by_module.entry(m).or_default().push(n);
    }
    let mut naming = Naming {
        orders: Orders {
            known: HashMap::new(),
            no_dump: CollectiveSchedule::Unknown("there is no HLO dump of the program".into()),
        },
        comm_ranges: comm_thunks_by_name(&thunks.list, &nccl_by_module, module_index),
        unmatched: BTreeMap::new(),
        matched: 0,
    };
    for (m, ns) in nccl_by_module {
        let Some(&mi) = module_index.get(&m) else {
            continue;
        };
        naming.execution(ranges, mi, ns, thunks, info, out)?;
    }
    naming.say(&mut out.notes);
    Ok(())
}

/// What [`name_nccl`] keeps over the module executions.
struct Naming {
    orders: Orders,
    /// The communication thunk ranges of each execution with NCCL ranges, by name
    /// ([`comm_thunks_by_name`]); an execution's are taken when it is named.
    comm_ranges: HashMap<usize, HashMap<String, usize>>,
    /// Per module name: the NCCL ranges left out, and why (the first reason met).
    unmatched: BTreeMap<String, (usize, String)>,
    /// The NCCL ranges matched to a collective.
    matched: usize,
}

/// Each program's collectives in schedule order, asked of its dump once.
struct Orders {
    /// By program key.
    known: HashMap<String, CollectiveSchedule>,
    /// The order of a module execution whose program has no dump.
    no_dump: CollectiveSchedule,
}

impl Orders {
    /// The collective order of `module`'s program.
    fn of(&mut self, module: &Module, info: &mut dyn ProgramInfo) -> Result<&CollectiveSchedule> {
        Ok(match module.program_id {
            Some(id) if module.program != "unknown" => {
                if !self.known.contains_key(&module.program) {
                    let o = info.collective_schedule(id, &module.name)?;
                    self.known.insert(module.program.clone(), o);
                }
                &self.known[&module.program]
            }
            _ => &self.no_dump,
        })
    }
}

impl Naming {
    /// Names the NCCL ranges `ns` of module execution `mi` after its program's collectives
    /// without a thunk range there, adding their thunk records to `thunks`; where the
    /// order is unknown or the counts differ, they are left out.
    fn execution(
        &mut self,
        ranges: &[GpuRange],
        mi: usize,
        mut ns: Vec<usize>,
        thunks: &mut ThunkRecords,
        info: &mut dyn ProgramInfo,
        out: &mut Derived,
    ) -> Result<()> {
        let module = out.modules[mi].clone();
        let expected = match self.orders.of(&module, info)? {
            CollectiveSchedule::Known(all) => {
                // Less those with a thunk range in this execution, once each.
                without_thunks(all, self.comm_ranges.remove(&mi).unwrap_or_default())
            }
            CollectiveSchedule::Unknown(why) => {
                let e = self
                    .unmatched
                    .entry(module.name.clone())
                    .or_insert((0, why.clone()));
                e.0 += ns.len();
                return Ok(());
            }
        };
        if expected.len() != ns.len() {
            let e = self.unmatched.entry(module.name.clone()).or_insert((
                0,
                format!(
                    "an execution has {} NCCL ranges outside thunks where its HLO schedule has \
                     {} collectives without a thunk range",
                    ns.len(),
                    expected.len()
                ),
            ));
            e.0 += ns.len();
            return Ok(());
        }
        ns.sort_by_key(|&n| {
            let r = &ranges[n];
            (r.cpu_start_ns.unwrap_or(r.start_ns), r.start_ns, r.id)
        });
        for (&n, (name, comm)) in ns.iter().zip(expected) {
            let r = &ranges[n];
            thunks.push(
                mi,
                &module,
                name.clone(),
                r,
                Some(comm),
                Some(Reconstructed::Nccl),
            );
            out.modules[mi].thunks += 1;
            self.matched += 1;
        }
        Ok(())
    }

    /// Says in `notes` how many NCCL ranges were matched, and which were left out and why.
    fn say(self, notes: &mut Vec<String>) {
        let matched = self.matched;
        if matched > 0 {
            notes.push(format!(
                "{matched} collectives had no thunk range, only an NCCL range: each matched to \
                 the program's collectives in HLO schedule order (records: reconstructed = nccl)"
            ));
        }
        for (module, (n, why)) in self.unmatched {
            notes.push(format!(
                "left out {n} NCCL ranges outside thunks in executions of {module}: they \
                 cannot be matched to its collectives, {why}"
            ));
        }
    }
}

/// The collectives of `all` less those of `seen` (thunk ranges of the execution counted
/// by name), each taken once per range, in order.
fn without_thunks(
    all: &[(String, Comm)],
    mut seen: HashMap<String, usize>,
) -> Vec<&(String, Comm)> {
    all.iter()
        .filter(|(name, _)| match seen.get_mut(name.as_str()) {
            Some(k) if *k > 0 => {
                *k -= 1;
                false
            }
            _ => true,
        })
        .collect()
}

/// The communication thunk ranges of each execution with NCCL ranges, counted by name
/// (one pass, not one per execution).
fn comm_thunks_by_name(
    thunks: &[(usize, u64, Thunk)],
    nccl_by_module: &BTreeMap<usize, Vec<usize>>,
    module_index: &HashMap<usize, usize>,
) -> HashMap<usize, HashMap<String, usize>> {
    let nccl_executions: HashSet<usize> = nccl_by_module
        .keys()
        .filter_map(|m| module_index.get(m).copied())
        .collect();
    let mut comm_ranges: HashMap<usize, HashMap<String, usize>> = HashMap::new();
    for (mi, _, t) in thunks {
        if t.comm && nccl_executions.contains(mi) {
            *comm_ranges
                .entry(*mi)
                .or_default()
                .entry(t.name.clone())
                .or_default() += 1;
        }
    }
    comm_ranges
}

/// The module ranges of a profile by thread and by process, for finding the module
/// execution whose span holds a range that has no module range above it.
pub(super) struct Spans {
    by_thread: HashMap<(Option<u64>, u64), Holders>,
    by_process: HashMap<Option<u64>, Holders>,
}

/// Spans sorted by start, with the running maximum of their ends, so that a search for
/// the spans holding a time stops once no earlier span can reach it.
#[derive(Default)]
struct Holders {
    spans: Vec<(i64, i64, usize)>,
    max_end: Vec<i64>,
}

impl Holders {
    fn add(&mut self, start: i64, end: i64, m: usize) {
        self.spans.push((start, end, m));
    }

    fn seal(&mut self) {
        self.spans.sort_unstable();
        let mut m = i64::MIN;
        self.max_end = self
            .spans
            .iter()
            .map(|&(_, e, _)| {
                m = m.max(e);
                m
            })
            .collect();
    }

    /// The modules whose span holds `[start, end]` whole, else those that hold `start`;
    /// the latest-starting (innermost) first.
    fn holding(&self, start: i64, end: i64) -> Vec<usize> {
        let upto = self.spans.partition_point(|&(s, _, _)| s <= start);
        let (mut whole, mut part) = (Vec::new(), Vec::new());
        for j in (0..upto).rev() {
            if self.max_end[j] < start {
                break;
            }
            let (_, e, m) = self.spans[j];
            if e >= end {
                whole.push(m);
            } else if e > start {
                part.push(m);
            }
        }
        if whole.is_empty() { part } else { whole }
    }
}

impl Spans {
    pub(super) fn new(ranges: &[GpuRange], modules: &[usize]) -> Spans {
        let mut spans = Spans {
            by_thread: HashMap::new(),
            by_process: HashMap::new(),
        };
        for &m in modules {
            let r = &ranges[m];
            let end = r.start_ns.saturating_add(r.dur_ns);
            spans
                .by_thread
                .entry((r.pid, r.tid))
                .or_default()
                .add(r.start_ns, end, m);
            spans
                .by_process
                .entry(r.pid)
                .or_default()
                .add(r.start_ns, end, m);
        }
        spans.by_thread.values_mut().for_each(Holders::seal);
        spans.by_process.values_mut().for_each(Holders::seal);
        spans
    }

    /// The module execution a range outside every module range belongs to, and whether
    /// that is sure: a module of its thread whose span holds it (where several do, the one
    /// whose dump `confirmed` has the instruction, else the innermost), else the one
    /// module of its process that holds it and is confirmed or cannot be asked.
    /// `confirmed(m)`: whether module range `m`'s program has the range's instruction,
    /// `None` where that cannot be told.
    fn attribute(
        &self,
        r: &GpuRange,
        confirmed: &mut dyn FnMut(usize) -> Result<Option<bool>>,
    ) -> Result<Option<(usize, bool)>> {
        let end = r.start_ns.saturating_add(r.dur_ns);
        let on_thread = self
            .by_thread
            .get(&(r.pid, r.tid))
            .map(|h| h.holding(r.start_ns, end))
            .unwrap_or_default();
        if let Some(&first) = on_thread.first() {
            if on_thread.len() > 1 {
                let mut sure = Vec::new();
                for &m in &on_thread {
                    if confirmed(m)? == Some(true) {
                        sure.push(m);
                    }
                }
                if let [m] = sure[..] {
                    return Ok(Some((m, true)));
                }
            }
            return Ok(Some((first, confirmed(first)? != Some(false))));
        }
        let in_process = self
            .by_process
            .get(&r.pid)
            .map(|h| h.holding(r.start_ns, end))
            .unwrap_or_default();
        let mut sure = Vec::new();
        let mut unknown = Vec::new();
        for &m in &in_process {
            match confirmed(m)? {
                Some(true) => sure.push(m),
                None => unknown.push(m),
                Some(false) => {}
            }
        }
        Ok(match (&sure[..], &unknown[..], in_process.len()) {
            ([m], _, _) => Some((*m, true)),
            ([], [m], 1) => Some((*m, true)),
            _ => None,
        })
    }
}

/// The first few distinct names of `ranges[i]` for `i` in `which`, for a note.
fn names_of(ranges: &[GpuRange], which: &[usize]) -> String {
    let names: BTreeSet<&str> = which.iter().map(|&i| ranges[i].name.as_str()).collect();
    let mut text: Vec<String> = names.iter().take(3).map(|n| format!("`{n}`")).collect();
    if names.len() > 3 {
        text.push(format!("and {} other names", names.len() - 3));
    }
    text.join(", ")
}
