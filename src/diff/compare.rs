//! The comparison of two settled sides: keys matched (by name; instructions a
//! recompilation renamed, by what the dumps say of them), each key's change with its
//! interval ([`inference::welch_ratio`]), the p-values adjusted for every key compared
//! ([`inference::benjamini_hochberg`]), and the whole step ([`Total`]).

use super::By;
use super::side::{Key, Settled, Signature};
use crate::records::Change;
use crate::util::inference::{self, Comparison};
use std::collections::{BTreeMap, BTreeSet};

/// What decides significance.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// The false-discovery rate (and 1 − the interval's level).
    pub alpha: f64,
    /// The least relative change, percent, that counts.
    pub min_change: f64,
    /// The fewest samples a side needs for an interval.
    pub min_samples: u64,
}

/// How the keys were matched.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Matched {
    /// By name.
    pub by_name: usize,
    /// By what the dumps say (instructions renamed by a recompilation).
    pub by_dumps: usize,
    /// After only.
    pub new: usize,
    /// Before only.
    pub gone: usize,
}

/// The whole step: the sum of every key's value on each side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Total {
    /// Sum before, nanoseconds.
    pub before_ns: f64,
    /// Sum after.
    pub after_ns: f64,
    /// The comparison (none where a sum is not positive).
    pub comparison: Option<Comparison>,
    /// Whether it is significant (p at most alpha and at least the least change).
    pub significant: bool,
}

/// The comparison.
#[derive(Debug)]
pub struct Compared {
    /// One per key on either side, largest change first.
    pub changes: Vec<Change>,
    /// How the keys were matched.
    pub matched: Matched,
    /// The whole step.
    pub total: Total,
}

/// A pair of keys: (before, after), either absent.
type Pair<'a> = (
    Option<(&'a str, &'a Key)>,
    Option<(&'a str, &'a Key)>,
    Option<&'static str>,
);

/// Compares `after` with `before`.
pub fn compare(by: By, before: &Settled, after: &Settled, rules: &Rules) -> Compared {
    let mut matched = Matched::default();
    let pairs = if by == By::Instruction {
        match_instructions(before, after, &mut matched)
    } else {
        let names: BTreeSet<&String> = before.keys.keys().chain(after.keys.keys()).collect();
        names
            .into_iter()
            .map(|n| {
                let b = before.keys.get_key_value(n).map(|(k, v)| (k.as_str(), v));
                let a = after.keys.get_key_value(n).map(|(k, v)| (k.as_str(), v));
                let how = (b.is_some() && a.is_some()).then_some("name");
                match (&b, &a) {
                    (Some(_), Some(_)) => matched.by_name += 1,
                    (Some(_), None) => matched.gone += 1,
                    _ => matched.new += 1,
                }
                (b, a, how)
            })
            .collect()
    };
    let level = 1.0 - rules.alpha;
    let after_names: BTreeSet<&str> = pairs.iter().filter_map(|p| p.1.map(|k| k.0)).collect();
    let mut changes: Vec<Change> = pairs
        .iter()
        .map(|&p| {
            let twin = p.1.is_none() && p.0.is_some_and(|b| after_names.contains(b.0));
            change(by, p, twin, level, rules.min_samples)
        })
        .collect();
    // Benjamini–Hochberg over every key with a test.
    let tested: Vec<usize> = (0..changes.len())
        .filter(|&i| changes[i].p_value.is_some())
        .collect();
    let p: Vec<f64> = tested
        .iter()
        .map(|&i| changes[i].p_value.unwrap_or(1.0))
        .collect();
    for (&i, q) in tested.iter().zip(inference::benjamini_hochberg(&p)) {
        let c = &mut changes[i];
        c.q_value = Some(q);
        c.significant =
            q <= rules.alpha && c.change_pct.is_some_and(|p| p.abs() >= rules.min_change);
        if c.significant {
            c.status = if c.change_ns > 0.0 {
                "slower"
            } else {
                "faster"
            }
            .into();
        }
    }
    changes.sort_by(|x, y| {
        y.change_ns
            .abs()
            .total_cmp(&x.change_ns.abs())
            .then_with(|| x.key.cmp(&y.key))
    });
    let total = total(by, &pairs, level, rules);
    Compared {
        changes,
        matched,
        total,
    }
}

/// What the key of a `gone` row ends with when another instruction has its name after.
pub const BEFORE_SUFFIX: &str = " (before)";

/// The change of one pair of keys (significance decided over all of them later); `twin`:
/// the name of a key before only is held by another key after.
fn change(
    by: By,
    (before, after, how): Pair<'_>,
    twin: bool,
    level: f64,
    min_samples: u64,
) -> Change {
    let side = |k: Option<(&str, &Key)>| k.map(|(_, k)| k.side(by));
    let (sb, sa) = (side(before), side(after));
    let value = |k: Option<(&str, &Key)>| k.map(|(_, k)| k.value(by));
    let (vb, va) = (value(before), value(after));
    let mut key = after.or(before).map_or("", |k| k.0).to_string();
    let before_key = before.map(|b| b.0.to_string()).filter(|b| *b != key);
    if after.is_none() && twin {
        // Another instruction holds the name after: this row is the one before.
        key.push_str(BEFORE_SUFFIX);
    }
    let mut c = Change {
        key,
        before_key,
        matched_by: how.map(str::to_string),
        before_ns: vb,
        after_ns: va,
        before_count: before.map_or(0, |k| k.1.acc.n),
        after_count: after.map_or(0, |k| k.1.acc.n),
        change_ns: va.unwrap_or(0.0) - vb.unwrap_or(0.0),
        status: match (before, after) {
            (None, _) => "new",
            (_, None) => "gone",
            _ => "same",
        }
        .into(),
        before_busbw_gbps: before.and_then(|k| k.1.busbw()),
        after_busbw_gbps: after.and_then(|k| k.1.busbw()),
        ..Change::default()
    };
    if let (Some(sb), Some(sa), Some(vb), Some(va)) = (sb, sa, vb, va) {
        if vb > 0.0 {
            c.change_pct = Some(100.0 * (va / vb - 1.0));
        }
        // An instruction's samples within one module execution are not independent:
        // module executions must be enough too.
        let executions_enough = by != By::Instruction
            || [before, after]
                .iter()
                .all(|k| k.is_some_and(|k| k.1.executions >= min_samples));
        if let Some(cmp) =
            inference::welch_ratio(&sb, &sa, level, min_samples).filter(|_| executions_enough)
        {
            c.ci_low_pct = Some(100.0 * cmp.low);
            c.ci_high_pct = Some(100.0 * cmp.high);
            c.p_value = Some(cmp.p);
        }
    }
    c
}

/// The sums of every key's value, compared.
fn total<'a>(by: By, pairs: &[Pair<'a>], level: f64, rules: &Rules) -> Total {
    let before: Vec<inference::Side> = pairs
        .iter()
        .filter_map(|p| p.0.map(|(_, k)| k.side(by)))
        .collect();
    let after: Vec<inference::Side> = pairs
        .iter()
        .filter_map(|p| p.1.map(|(_, k)| k.side(by)))
        .collect();
    let sum = |pick: &dyn Fn(&Pair<'a>) -> Option<(&'a str, &'a Key)>| -> f64 {
        pairs
            .iter()
            .filter_map(|p| pick(p).map(|(_, k)| k.value(by)))
            .sum()
    };
    let comparison = inference::welch_ratio_of_sums(&before, &after, level, rules.min_samples);
    Total {
        before_ns: sum(&|p| p.0),
        after_ns: sum(&|p| p.1),
        significant: comparison
            .is_some_and(|c| c.p <= rules.alpha && 100.0 * c.change.abs() >= rules.min_change),
        comparison,
    }
}

/// Instructions matched within each module: by name where the name is on both sides and
/// the dumps (where read) agree on what it is; the rest by what the dumps say, where one
/// signature is held by as many instructions before as after (paired in the order of
/// their names' numbers).
fn match_instructions<'a>(
    before: &'a Settled,
    after: &'a Settled,
    m: &mut Matched,
) -> Vec<Pair<'a>> {
    let mut out = Vec::new();
    let mut unmatched_b: Vec<(&str, &Key)> = Vec::new();
    let mut unmatched_a: Vec<(&str, &Key)> = Vec::new();
    for (name, kb) in &before.keys {
        match after.keys.get(name) {
            Some(ka) if agree(kb.signature.as_ref(), ka.signature.as_ref()) => {
                m.by_name += 1;
                out.push((
                    Some((name.as_str(), kb)),
                    Some((name.as_str(), ka)),
                    Some("name"),
                ));
            }
            Some(_) => unmatched_b.push((name.as_str(), kb)),
            None => unmatched_b.push((name.as_str(), kb)),
        }
    }
    for (name, ka) in &after.keys {
        let paired = before
            .keys
            .get(name)
            .is_some_and(|kb| agree(kb.signature.as_ref(), ka.signature.as_ref()));
        if !paired {
            unmatched_a.push((name.as_str(), ka));
        }
    }
    // Two tiers: every field of the signature, then without the source line (code
    // edited above it). Within a tier, (module, signature) → instructions in the order of
    // their names' numbers, paired where as many hold it before as after.
    let mut done_b: BTreeSet<&str> = BTreeSet::new();
    let mut done_a: BTreeSet<&str> = BTreeSet::new();
    for with_source in [true, false] {
        type Groups<'a> = BTreeMap<(&'a str, Signature), Vec<(&'a str, &'a Key)>>;
        let group = |keys: &[(&'a str, &'a Key)], done: &BTreeSet<&str>| -> Groups<'a> {
            let mut g: Groups<'a> = BTreeMap::new();
            for &(name, k) in keys.iter().filter(|k| !done.contains(k.0)) {
                if let Some(s) = &k.signature {
                    let mut s = s.clone();
                    if !with_source {
                        s.source.clear();
                    }
                    g.entry((k.module.as_str(), s)).or_default().push((name, k));
                }
            }
            for v in g.values_mut() {
                v.sort_by_key(|(_, k)| natural(&k.instruction));
            }
            g
        };
        let (gb, ga) = (group(&unmatched_b, &done_b), group(&unmatched_a, &done_a));
        for (sig, bs) in &gb {
            let Some(as_) = ga.get(sig) else { continue };
            if bs.len() != as_.len() {
                continue;
            }
            for (&b, &a) in bs.iter().zip(as_) {
                m.by_dumps += 1;
                done_b.insert(b.0);
                done_a.insert(a.0);
                out.push((Some(b), Some(a), Some("dumps")));
            }
        }
    }
    for b in unmatched_b.into_iter().filter(|b| !done_b.contains(b.0)) {
        m.gone += 1;
        out.push((Some(b), None, None));
    }
    for a in unmatched_a.into_iter().filter(|a| !done_a.contains(a.0)) {
        m.new += 1;
        out.push((None, Some(a), None));
    }
    out
}

/// Whether two views of an instruction of one name are of one instruction: the same
/// opcode and shape (either unknown agrees). Its op_name and source line may move with
/// the code around it (an edit above it shifts every line number).
fn agree(a: Option<&Signature>, b: Option<&Signature>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.opcode == b.opcode && a.shape == b.shape,
        _ => true,
    }
}

/// An instruction name's order: its stem, then the number after its last `.`.
fn natural(name: &str) -> (String, u64) {
    match name.rsplit_once('.') {
        Some((stem, n)) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => {
            (stem.to_string(), n.parse().unwrap_or(u64::MAX))
        }
        _ => (name.to_string(), 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::side::Acc;

    fn key(module: &str, inst: &str, sig: (&str, &str, &str, &str), durations: &[i64]) -> Key {
        let mut acc = Acc::default();
        for &d in durations {
            acc.n += 1;
            acc.dur.add(d);
        }
        Key {
            module: module.into(),
            instruction: inst.into(),
            acc,
            executions: durations.len() as u64,
            signature: Some(Signature {
                opcode: sig.0.into(),
                op_name: sig.1.into(),
                source: sig.2.into(),
                shape: sig.3.into(),
            }),
        }
    }

    /// One instruction of module `m`, settled.
    fn one(inst: &str, sig: (&str, &str, &str, &str), durations: &[i64]) -> Settled {
        settled(vec![key("m", inst, sig, durations)])
    }

    fn settled(keys: Vec<Key>) -> Settled {
        Settled {
            keys: keys
                .into_iter()
                .map(|k| (format!("{}/{}", k.module, k.instruction), k))
                .collect(),
            ..Settled::default()
        }
    }

    const RULES: Rules = Rules {
        alpha: 0.05,
        min_change: 1.0,
        min_samples: 3,
    };

    #[test]
    fn an_edit_above_an_instruction_moves_its_line_not_its_match() {
        let d = [100, 101, 99];
        let before = one("fusion.1", ("fusion", "f/a", "x.py:10[f]", "f32[8]"), &d);
        let after = one("fusion.1", ("fusion", "f/a", "x.py:14[f]", "f32[8]"), &d);
        let c = compare(By::Instruction, &before, &after, &RULES);
        assert_eq!(c.matched.by_name, 1);
        assert_eq!(c.changes[0].matched_by.as_deref(), Some("name"));
    }

    #[test]
    fn renamed_instructions_pair_by_dumps_even_with_moved_lines() {
        let d = [100, 101, 99];
        let before = one("fusion.1", ("fusion", "f/a", "x.py:10[f]", "f32[8]"), &d);
        let after = one("fusion.7", ("fusion", "f/a", "x.py:12[f]", "f32[8]"), &d);
        let c = compare(By::Instruction, &before, &after, &RULES);
        assert_eq!(
            (c.matched.by_dumps, c.matched.new, c.matched.gone),
            (1, 0, 0)
        );
        assert_eq!(c.changes[0].key, "m/fusion.7");
        assert_eq!(c.changes[0].before_key.as_deref(), Some("m/fusion.1"));
    }

    #[test]
    fn a_name_held_by_another_instruction_after_gives_two_rows_of_distinct_keys() {
        let d = [100, 101, 99];
        let before = one("fusion.1", ("fusion", "f/a", "", "f32[8]"), &d);
        let after = one("fusion.1", ("copy", "f/b", "", "f32[4]"), &d);
        let c = compare(By::Instruction, &before, &after, &RULES);
        assert_eq!((c.matched.new, c.matched.gone), (1, 1));
        let mut keys: Vec<(&str, &str)> = c
            .changes
            .iter()
            .map(|x| (x.key.as_str(), x.status.as_str()))
            .collect();
        keys.sort();
        assert_eq!(
            keys,
            vec![("m/fusion.1", "new"), ("m/fusion.1 (before)", "gone")]
        );
    }

    #[test]
    fn instructions_of_too_few_module_executions_are_not_tested() {
        // Many thunk executions, two module executions: no interval.
        let mut b = key("m", "f.1", ("fusion", "", "", ""), &[100; 20]);
        let mut a = key("m", "f.1", ("fusion", "", "", ""), &[150; 20]);
        b.executions = 2;
        a.executions = 2;
        let c = compare(
            By::Instruction,
            &settled(vec![b]),
            &settled(vec![a]),
            &RULES,
        );
        assert!(c.changes[0].p_value.is_none() && !c.changes[0].significant);
    }
}
