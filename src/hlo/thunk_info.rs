//! What the HLO dumps say about the thunks of XLA programs: per thunk its opcode and, for
//! its instruction and those of the computations it calls, the op_name and the Python
//! stack frames ([`ThunkInfo`]); read from the after-optimizations dumps of every source
//! (archives, nsys-jax-combine archives, XLA dump folders) or taken from a profile's own
//! dumps as they are decoded. Several dumps of one program are reduced into one view: the
//! notebook's `reduce_instructions_and_frames` (stacks that differ keep their common ends
//! around [`INCONSISTENT`]). Used by the GPU-time aggregate
//! ([`crate::derived::gpu_time`]) and so by the flame graphs and njx-thunks.

use crate::error::Result;
use crate::hlo::{Dumps, HloModule, Instruction, ProgramKey};
use crate::output::notes::Notes;
use crate::source;
use crate::util::parallel::{parallel_map, workers};
use hashbrown::{HashMap, HashSet};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where stacks of several dumps of one program differ.
pub const INCONSISTENT: &str = "[inconsistent metadata]";

/// What the HLO says about one thunk: its opcode and, for its instruction and those of
/// the computations it calls, the op_name and the Python frames. Op names and stacks are
/// shared ([`Interner`]): the instructions of a program repeat few of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThunkInfo {
    opcode: String,
    insts: Vec<(Arc<str>, Stack)>,
}

impl ThunkInfo {
    /// The HLO opcode of the thunk's instruction (`fusion`, `custom-call`, …).
    pub fn opcode(&self) -> &str {
        &self.opcode
    }

    /// The JAX op_name of the thunk's own instruction (empty where it has none).
    pub fn op_name(&self) -> &str {
        self.insts.first().map_or("", |(op_name, _)| op_name)
    }

    /// Its instruction's, then the called instructions': (op_name, Python frames
    /// outermost first).
    pub fn insts(&self) -> impl Iterator<Item = (&str, &[Arc<str>])> {
        self.insts
            .iter()
            .map(|(op_name, frames)| (&**op_name, &**frames))
    }

    /// A thunk's info from its opcode and (op_name, frames) per instruction (tests).
    #[cfg(test)]
    pub fn of(opcode: &str, insts: &[(&str, &[&str])]) -> ThunkInfo {
        ThunkInfo {
            opcode: opcode.into(),
            insts: insts
                .iter()
                .map(|(n, f)| (Arc::from(*n), f.iter().map(|&s| Arc::from(s)).collect()))
                .collect(),
        }
    }
}

/// A Python stack, outermost frame first (`file:line[function]`).
type Stack = Arc<[Arc<str>]>;

/// One allocation per distinct string and stack of the infos read together.
#[derive(Debug, Default)]
pub struct Interner {
    strings: crate::util::compact::Shared,
    stacks: HashSet<Stack>,
}

impl Interner {
    /// The shared copy of `s`.
    pub fn string(&mut self, s: &str) -> Arc<str> {
        self.strings.get(s)
    }

    /// The shared copy of `frames`.
    pub fn stack(&mut self, frames: Vec<Arc<str>>) -> Stack {
        if let Some(s) = self.stacks.get(&frames[..]) {
            return Arc::clone(s);
        }
        let s: Stack = Arc::from(frames);
        self.stacks.insert(Arc::clone(&s));
        s
    }
}

/// What one program needs from the dumps: where its executions came from (profile,
/// program id, module name) and the thunks to look up.
pub struct Wanted<'a> {
    /// (profile, program id, module name) of the executions.
    pub from: &'a BTreeSet<(String, u64, String)>,
    /// The thunks to look up.
    pub names: BTreeSet<&'a str>,
}

/// Per program: per thunk, what the dumps say (`None` for a thunk no dump has), or `None`
/// for a program without any dump.
pub type Infos = BTreeMap<String, Option<BTreeMap<String, Option<ThunkInfo>>>>;

/// Reads the after-optimizations dumps the programs need from every source (archives,
/// also nsys-jax-combine ones, and XLA dump folders), each once, on every core: a dump is
/// a candidate when its file name has the program id and module name of an execution,
/// and it counts for the program whose key its fingerprint is. Several dumps of one
/// program (one per process, or one per compilation) are reduced in source order.
pub fn read_infos(
    sources: &[PathBuf],
    wanted: &BTreeMap<&str, &Wanted<'_>>,
    notes: &Notes,
) -> Result<Infos> {
    notes
        .progress()
        .phase("reading the HLO dumps' stack frames");
    let mut out: Infos = wanted.keys().map(|p| (p.to_string(), None)).collect();
    // As many sources at a time as there are cores, each reduced into `out` (in source
    // order) before the next are read: memory holds one source's infos per core, not
    // every rank's.
    let per_source = sources
        .chunks(workers())
        .flat_map(|chunk| parallel_map(chunk, |path| source_infos(path, wanted, notes.progress())));
    for found in per_source {
        for (program, place, infos) in found? {
            let slot = out
                .get_mut(&program)
                .expect("only wanted programs are read");
            *slot = combine(slot.take(), Some(infos), &place, notes);
        }
    }
    notes.progress().phase("folding");
    Ok(out)
}

/// [`Infos`] as partial results carry them (`#[serde(with = "…")]` on an
/// `Option<Infos>`): every string, stack, (op_name, stack) pair and list of pairs written
/// once and referred to by number, since a program's thousands of thunks share a few
/// hundred stacks and op_names (a pax rank's infos: 60 MB written out in full, 0.7 MB so).
///
/// `{"strings": [s…], "stacks": [[string…]…], "insts": [[op_name string, stack]…],
/// "lists": [[inst…]…], "programs": [[key, null | [[thunk, null | [opcode string,
/// list]]…]]…]}`, each number an index into the list named; a number out of range is an
/// error, not a panic.
pub mod interned {
    use super::{Infos, Interner, Stack, ThunkInfo};
    use hashbrown::HashMap;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;
    use std::sync::Arc;

    type Thunks<T> = Option<Vec<(T, Option<(u32, u32)>)>>;

    #[derive(Serialize, Deserialize)]
    struct Tables<T> {
        strings: Vec<T>,
        stacks: Vec<Vec<u32>>,
        insts: Vec<(u32, u32)>,
        lists: Vec<Vec<u32>>,
        programs: Vec<(T, Thunks<T>)>,
    }

    /// Numbers in the order first seen.
    struct Numbered<K> {
        ids: HashMap<K, u32>,
    }

    impl<K: std::hash::Hash + Eq> Numbered<K> {
        fn id(&mut self, k: K, push: impl FnOnce()) -> u32 {
            let n = self.ids.len() as u32;
            *self.ids.entry(k).or_insert_with(|| {
                push();
                n
            })
        }
    }

    impl<K> Default for Numbered<K> {
        fn default() -> Self {
            Numbered {
                ids: HashMap::new(),
            }
        }
    }

    /// Writes `infos` (or `null`) interned.
    pub fn serialize<S: Serializer>(infos: &Option<Infos>, s: S) -> Result<S::Ok, S::Error> {
        let Some(infos) = infos else {
            return s.serialize_none();
        };
        let mut t = Tables::<&str> {
            strings: Vec::new(),
            stacks: Vec::new(),
            insts: Vec::new(),
            lists: Vec::new(),
            programs: Vec::new(),
        };
        let (mut strings, mut stacks) = (Numbered::<&str>::default(), Numbered::default());
        let (mut insts, mut lists) = (Numbered::default(), Numbered::default());
        for (key, thunks) in infos {
            let thunks = thunks.as_ref().map(|thunks| {
                thunks
                    .iter()
                    .map(|(name, info)| {
                        let info = info.as_ref().map(|info| {
                            let opcode = strings.id(&info.opcode, || t.strings.push(&info.opcode));
                            let list: Vec<u32> = info
                                .insts
                                .iter()
                                .map(|(op_name, stack)| {
                                    let op = strings.id(op_name, || t.strings.push(op_name));
                                    let frames: Vec<u32> = stack
                                        .iter()
                                        .map(|f| strings.id(f, || t.strings.push(f)))
                                        .collect();
                                    let stack = stacks.id(frames.clone(), || t.stacks.push(frames));
                                    insts.id((op, stack), || t.insts.push((op, stack)))
                                })
                                .collect();
                            let list = lists.id(list.clone(), || t.lists.push(list));
                            (opcode, list)
                        });
                        (name.as_str(), info)
                    })
                    .collect()
            });
            t.programs.push((key.as_str(), thunks));
        }
        s.serialize_some(&t)
    }

    /// Reads interned infos back (or `null`), sharing each string and stack.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Infos>, D::Error> {
        let Some(t) = Option::<Tables<String>>::deserialize(d)? else {
            return Ok(None);
        };
        // One interner for every partial a thread reads: the copies of a program's facts
        // that many ranks carry then share their strings and stacks, and comparing them
        // when they are merged ([`super::combine`]) is mostly comparing pointers. It holds
        // the distinct strings and stacks of the facts read, which the merged facts hold
        // anyway.
        thread_local! {
            static INTERNER: std::cell::RefCell<Interner> = Default::default();
        }
        INTERNER.with_borrow_mut(|interner| tables::<D::Error>(t, interner))
    }

    /// Interned tables read back, sharing strings and stacks through `interner`.
    fn tables<E: serde::de::Error>(
        t: Tables<String>,
        interner: &mut Interner,
    ) -> Result<Option<Infos>, E> {
        let strings: Vec<Arc<str>> = t.strings.iter().map(|s| interner.string(s)).collect();
        let at = |what: &str, i: u32, len: usize| -> Result<usize, E> {
            (i as usize)
                .lt(&len)
                .then_some(i as usize)
                .ok_or_else(|| E::custom(format!("{what} {i} of {len}: out of range")))
        };
        let string = |i: u32| at("string", i, strings.len()).map(|i| Arc::clone(&strings[i]));
        let mut stacks: Vec<Stack> = Vec::with_capacity(t.stacks.len());
        for frames in t.stacks {
            let frames = frames.into_iter().map(string).collect::<Result<_, _>>()?;
            stacks.push(interner.stack(frames));
        }
        let mut insts: Vec<(Arc<str>, Stack)> = Vec::with_capacity(t.insts.len());
        for (op, stack) in t.insts {
            let stack = Arc::clone(&stacks[at("stack", stack, stacks.len())?]);
            insts.push((string(op)?, stack));
        }
        let mut lists: Vec<Vec<(Arc<str>, Stack)>> = Vec::with_capacity(t.lists.len());
        for list in t.lists {
            let list = list
                .into_iter()
                .map(|i| at("inst", i, insts.len()).map(|i| insts[i].clone()))
                .collect::<Result<_, _>>()?;
            lists.push(list);
        }
        let mut out = Infos::new();
        for (key, thunks) in t.programs {
            let thunks = match thunks {
                None => None,
                Some(thunks) => {
                    let mut m = BTreeMap::new();
                    for (name, info) in thunks {
                        let info = match info {
                            None => None,
                            Some((opcode, list)) => Some(ThunkInfo {
                                opcode: string(opcode)?.to_string(),
                                insts: lists[at("list", list, lists.len())?].clone(),
                            }),
                        };
                        if m.insert(name, info).is_some() {
                            return Err(E::custom("a thunk is given twice"));
                        }
                    }
                    Some(m)
                }
            };
            if out.insert(key, thunks).is_some() {
                return Err(E::custom("a program is given twice"));
            }
        }
        Ok(Some(out))
    }
}

/// Two sets of per-thunk infos of one program reduced into one, `a`'s first.
pub fn combine(
    a: Option<BTreeMap<String, Option<ThunkInfo>>>,
    b: Option<BTreeMap<String, Option<ThunkInfo>>>,
    place: &str,
    notes: &Notes,
) -> Option<BTreeMap<String, Option<ThunkInfo>>> {
    match (a, b) {
        // The same facts (every rank of a program, read back with shared strings): a
        // comparison of pointers mostly.
        (Some(acc), Some(infos)) if acc == infos => Some(acc),
        (Some(mut acc), Some(infos)) => {
            for (name, info) in infos {
                let have = acc.entry(name.clone()).or_insert(None);
                *have = match (have.take(), info) {
                    (Some(a), Some(b)) => Some(reduce(a, b, &name, place, notes)),
                    (a, b) => a.or(b),
                };
            }
            Some(acc)
        }
        (a, b) => a.or(b),
    }
}

/// The infos of one source: (program, dump place, per-thunk infos) for each candidate
/// dump that belongs to a wanted program, in member order.
#[allow(clippy::type_complexity)]
fn source_infos(
    path: &Path,
    wanted: &BTreeMap<&str, &Wanted<'_>>,
    progress: &crate::output::progress::Progress,
) -> Result<Vec<(String, String, BTreeMap<String, Option<ThunkInfo>>)>> {
    let mut archive = source::open_dumps(path, progress)?;
    let mut dumps = Dumps::new(&archive);
    // Every copy of a candidate dump (one per profile in combine archives), in member
    // order: a dump whose file name has the program id and module name of an execution.
    let mut candidates: Vec<String> = wanted
        .values()
        .flat_map(|w| w.from.iter())
        .flat_map(|(_, id, module)| dumps.copies(*id, module).map(str::to_string))
        .collect();
    candidates.sort();
    candidates.dedup();
    let mut out = Vec::new();
    let mut interner = Interner::default();
    for member in candidates {
        let place = archive.member_place(&member);
        let hlo = dumps.read(&mut archive, &member)?;
        let key = ProgramKey::of(&hlo, hlo.id() as u64).record();
        // The same id may be another program in another process.
        let Some(w) = wanted.get(key.as_str()) else {
            continue;
        };
        let infos = module_infos(&hlo, &w.names, &mut interner)?;
        out.push((key, place, infos));
    }
    Ok(out)
}

/// What `hlo` says of each of the thunks `names` (`None` for a name it does not have).
pub fn module_infos(
    hlo: &HloModule,
    names: &BTreeSet<&str>,
    interner: &mut Interner,
) -> Result<BTreeMap<String, Option<ThunkInfo>>> {
    // Stack frame ids are the module's own: each stack is formatted once.
    let mut stacks: HashMap<i32, Stack> = HashMap::new();
    let mut stack_of = |i: &Instruction<'_>, interner: &mut Interner| -> Result<Stack> {
        let id = i.stack_frame_id();
        if let Some(s) = stacks.get(&id) {
            return Ok(Arc::clone(s));
        }
        let frames = i.stack_frames()?;
        let frames = frames
            .iter()
            .map(|f| interner.string(&f.to_string()))
            .collect();
        let s = interner.stack(frames);
        stacks.insert(id, Arc::clone(&s));
        Ok(s)
    };
    let mut out = BTreeMap::new();
    for &name in names {
        let info = match hlo.instruction(name) {
            None => None,
            Some(inst) => {
                let mut insts = Vec::new();
                for i in std::iter::once(inst).chain(inst.called_instructions()?) {
                    let stack = stack_of(&i, interner)?;
                    insts.push((interner.string(i.op_name()), stack));
                }
                Some(ThunkInfo {
                    opcode: inst.opcode().to_string(),
                    insts,
                })
            }
        };
        out.insert(name.to_string(), info);
    }
    Ok(out)
}

/// Two dumps' view of one thunk as one: stacks that differ keep their common outer and
/// inner frames around [`INCONSISTENT`] (the notebook's `reduce_instructions_and_frames`).
fn reduce(mut a: ThunkInfo, b: ThunkInfo, name: &str, place: &str, notes: &Notes) -> ThunkInfo {
    let a_names: Vec<&Arc<str>> = a.insts.iter().map(|i| &i.0).collect();
    let b_names: Vec<&Arc<str>> = b.insts.iter().map(|i| &i.0).collect();
    if a.opcode != b.opcode || a_names != b_names {
        notes.note(format!(
            "{place}: thunk {name}: opcode or op_names differ from another dump of the same \
             program; the first dump's are used"
        ));
        return a;
    }
    for ((_, fa), (_, fb)) in a.insts.iter_mut().zip(b.insts) {
        if *fa == fb {
            continue;
        }
        let prefix = fa.iter().zip(fb.iter()).take_while(|(x, y)| x == y).count();
        let suffix = fa[prefix..]
            .iter()
            .rev()
            .zip(fb[prefix..].iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        let mut merged: Vec<Arc<str>> = fa[..prefix].to_vec();
        merged.push(Arc::from(INCONSISTENT));
        merged.extend(fa[fa.len() - suffix..].iter().cloned());
        *fa = Arc::from(merged);
    }
    a
}

/// The sources of HLO dumps: the archives among `inputs`, then `hlo` (`--hlo`).
pub fn dump_sources(inputs: &[PathBuf], hlo: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = inputs
        .iter()
        .filter(|p| source::is_archive(p))
        .cloned()
        .collect();
    out.extend(hlo.iter().cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differing_stacks_keep_common_ends() {
        let a = ThunkInfo::of(
            "fusion",
            &[("x", &["m.py:1[main]", "a.py:2[f]", "lib.py:3[g]"])],
        );
        let b = ThunkInfo::of(
            "fusion",
            &[("x", &["m.py:1[main]", "b.py:9[h]", "lib.py:3[g]"])],
        );
        let r = reduce(a, b, "fusion", "here", &Notes::kept());
        let merged: Vec<&str> = r.insts[0].1.iter().map(|f| &**f).collect();
        assert_eq!(merged, vec!["m.py:1[main]", INCONSISTENT, "lib.py:3[g]"]);
    }
}
