//! Aggregates keyed by names, for inputs with millions of distinct keys: each name held
//! once in one buffer and known by a number ([`Names`]), and values in a table by small
//! copyable keys ([`Table`]), its entries in fixed-size chunks so that growing never
//! holds two copies. Per distinct key this costs the value, the key and about 8 bytes of
//! index; a map of owned strings cost several times that (issue 28: njx-thunks held
//! ~500 bytes per distinct thunk).
//!
//! Both index their entries with open addressing (linear probing, at most half full)
//! over `u32` entry numbers, hashed with std's randomly keyed SipHash.

use hashbrown::DefaultHashBuilder as RandomState;
use std::hash::{BuildHasher, Hash};

/// An index of entries numbered from 0, held elsewhere: a slot holds an entry's number
/// plus one, 0 where empty.
#[derive(Debug, Default, Clone)]
struct Slots {
    slots: Vec<u32>,
}

impl Slots {
    /// The entry for which `eq` holds, or the free slot where it belongs.
    fn find(&self, hash: u64, eq: impl Fn(u32) -> bool) -> Result<u32, usize> {
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            match self.slots[at] {
                0 => return Err(at),
                n if eq(n - 1) => return Ok(n - 1),
                _ => at = (at + 1) & mask,
            }
        }
    }

    /// Makes room for one more entry beyond the `len` held, rehashing them with `hash_of`
    /// where the index would be more than half full.
    fn reserve(&mut self, len: usize, hash_of: impl Fn(u32) -> u64) {
        if (len + 1) * 2 <= self.slots.len() {
            return;
        }
        let size = ((len + 1) * 2).next_power_of_two().max(16);
        self.slots = vec![0; size];
        let mask = size - 1;
        for id in 0..len as u32 {
            let mut at = hash_of(id) as usize & mask;
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = id + 1;
        }
    }
}

/// The number of the next entry of a store holding `len`. Four thousand million distinct
/// names or keys would need hundreds of GB before this could fail.
fn next_id(len: usize) -> u32 {
    u32::try_from(len)
        .ok()
        .filter(|&n| n < u32::MAX)
        .expect("fewer than 2^32 - 1 distinct entries")
}

/// Names, each held once, by number in the order first seen.
#[derive(Debug, Default, Clone)]
pub struct Names {
    text: String,
    /// Where each name ends in `text`.
    ends: Vec<usize>,
    index: Slots,
    hasher: RandomState,
}

impl Names {
    /// The number of `name`, given one if it is new.
    pub fn id(&mut self, name: &str) -> u32 {
        let hash = self.hasher.hash_one(name);
        if let Some(id) = self.lookup(hash, name) {
            return id;
        }
        let (text, ends, hasher) = (&self.text, &self.ends, &self.hasher);
        self.index.reserve(ends.len(), |id| {
            hasher.hash_one(get(text, ends, id as usize))
        });
        let id = next_id(self.ends.len());
        let Err(at) = self.index.find(hash, |_| false) else {
            unreachable!("no entry is equal")
        };
        self.index.slots[at] = id + 1;
        self.text.push_str(name);
        self.ends.push(self.text.len());
        id
    }

    /// The number of `name` where it is held.
    pub fn find(&self, name: &str) -> Option<u32> {
        self.lookup(self.hasher.hash_one(name), name)
    }

    fn lookup(&self, hash: u64, name: &str) -> Option<u32> {
        if self.index.slots.is_empty() {
            return None;
        }
        self.index.find(hash, |id| self.get(id) == name).ok()
    }

    /// The name numbered `id`.
    pub fn get(&self, id: u32) -> &str {
        get(&self.text, &self.ends, id as usize)
    }

    /// How many names are held.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether no name is held.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

fn get<'a>(text: &'a str, ends: &[usize], i: usize) -> &'a str {
    let start = if i == 0 { 0 } else { ends[i - 1] };
    &text[start..ends[i]]
}

/// Entries per chunk of a [`Table`]'s values (a power of two: a chunk grows as a vector
/// does, by doubling, up to it; small tables stay small).
const CHUNK: usize = 1 << 14;

/// Values by key, in the order their keys were first seen.
#[derive(Debug, Clone)]
pub struct Table<K, V> {
    keys: Vec<K>,
    values: Vec<Vec<V>>,
    index: Slots,
    hasher: RandomState,
}

impl<K, V> Default for Table<K, V> {
    fn default() -> Self {
        Table {
            keys: Vec::new(),
            values: Vec::new(),
            index: Slots::default(),
            hasher: RandomState::default(),
        }
    }
}

impl<K: Copy + Eq + Hash, V: Default> Table<K, V> {
    /// The value of `key`, a default one where the key is new; and whether it was new.
    pub fn entry(&mut self, key: K) -> (&mut V, bool) {
        let hash = self.hasher.hash_one(key);
        if !self.index.slots.is_empty()
            && let Ok(id) = self.index.find(hash, |id| self.keys[id as usize] == key)
        {
            return (self.value_mut(id as usize), false);
        }
        let (keys, hasher) = (&self.keys, &self.hasher);
        self.index
            .reserve(keys.len(), |id| hasher.hash_one(keys[id as usize]));
        let id = next_id(self.keys.len());
        let Err(at) = self.index.find(hash, |_| false) else {
            unreachable!("no entry is equal")
        };
        self.index.slots[at] = id + 1;
        self.keys.push(key);
        if self.values.last().is_none_or(|c| c.len() == CHUNK) {
            self.values.push(Vec::new());
        }
        let chunk = self.values.last_mut().expect("a chunk");
        chunk.push(V::default());
        (chunk.last_mut().expect("the value just pushed"), true)
    }
}

impl<K: Copy, V> Table<K, V> {
    fn value_mut(&mut self, i: usize) -> &mut V {
        &mut self.values[i / CHUNK][i % CHUNK]
    }

    /// The entry numbered `i` (in the order first seen).
    pub fn get(&self, i: usize) -> (K, &V) {
        (self.keys[i], &self.values[i / CHUNK][i % CHUNK])
    }

    /// Every key, in the order first seen.
    pub fn keys(&self) -> &[K] {
        &self.keys
    }

    /// How many entries are held.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_held_once_and_found_again() {
        let mut names = Names::default();
        let ids: Vec<u32> = (0..10_000)
            .map(|i| names.id(&format!("n{}", i % 5000)))
            .collect();
        assert_eq!(names.len(), 5000);
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(names.get(id), format!("n{}", i % 5000));
            assert_eq!(id, ids[i % 5000]);
        }
        assert_eq!(names.find("n42"), Some(ids[42]));
        assert_eq!(names.find("absent"), None);
        assert_eq!(Names::default().find(""), None);
        let mut empty = Names::default();
        let id = empty.id("");
        assert_eq!((empty.get(id), empty.find("")), ("", Some(id)));
    }

    #[test]
    fn table_entries_across_chunks_keep_their_values() {
        let mut t: Table<(u32, u8), u64> = Table::default();
        for round in 0..2u64 {
            for k in 0..(CHUNK as u32 * 3 + 7) {
                let (v, new) = t.entry((k, (k % 3) as u8));
                assert_eq!(new, round == 0);
                *v += u64::from(k) + 1;
            }
        }
        assert_eq!(t.len(), CHUNK * 3 + 7);
        for i in 0..t.len() {
            let ((k, p), v) = t.get(i);
            assert_eq!(
                (k as usize, p, *v),
                (i, (k % 3) as u8, 2 * (u64::from(k) + 1))
            );
        }
    }
}

/// Keys shared by many entries of a map keyed by (name, numbers…): each name held once
/// and handed out as a counted reference, so that an entry's key costs a pointer, not a
/// string of its own (the per-execution maps of the step and the collectives: hundreds of
/// executions per rank, one program key; the strings of the HLO dumps' facts,
/// `hlo::thunk_info::Interner`). Not part of an aggregate's value: equal always.
#[derive(Debug, Default, Clone)]
pub struct Shared {
    keys: hashbrown::HashSet<std::sync::Arc<str>>,
}

impl Shared {
    /// The shared copy of `name`.
    pub fn get(&mut self, name: &str) -> std::sync::Arc<str> {
        if let Some(k) = self.keys.get(name) {
            return std::sync::Arc::clone(k);
        }
        let k: std::sync::Arc<str> = std::sync::Arc::from(name);
        self.keys.insert(std::sync::Arc::clone(&k));
        k
    }
}

impl PartialEq for Shared {
    fn eq(&self, _: &Shared) -> bool {
        true
    }
}
