//! The replay of a heap simulator trace as XLA's `ComputePeakMemoryLogicalBuffers`: the
//! live total after each event, the peak and the buffers live at it (module comment of
//! [`super`]).

use crate::hlo::proto::{self, heap_simulator_trace::event::Kind};
use std::collections::HashMap;

/// The replay of one trace.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replay {
    /// The largest live total.
    pub peak: i64,
    /// The first event reaching it (`None` when nothing is ever live).
    pub peak_event: Option<usize>,
    /// (buffer id, bytes counted) live just after that event, by buffer id.
    pub live: Vec<(i64, i64)>,
    /// The live total after each event (events not counted keep the total).
    pub totals: Vec<i64>,
}

/// One event as the replay takes it: its kind as written, its buffer and the canonical
/// buffer it shares with, as indices into the ids of the buffers (dense: the replay's
/// state is arrays, not maps, and a buffer's id is looked up once per event, not once
/// per table of the state).
#[derive(Debug, Clone, Copy)]
pub(super) struct Step {
    pub(super) kind: i32,
    pub(super) buffer: u32,
    pub(super) canonical: u32,
}

/// No buffer (a buffer that shares with nothing).
pub(super) const NONE: u32 = u32::MAX;

/// The state of a replay over buffers `0..n`: the bytes each live buffer counts (-1: not
/// live), how many instances of each canonical buffer are live, the canonical buffer of
/// each shared one, the live total. What a replay changed is listed in `touched` and set
/// back after it, so that one state serves every trace of a dump in time proportional to
/// each trace's events (not to the buffers of the dump once per trace).
pub(super) struct Heap {
    live: Vec<i64>,
    outstanding: Vec<i64>,
    canonical: Vec<u32>,
    touched: Vec<u32>,
    total: i64,
}

impl Heap {
    pub(super) fn new(n: usize) -> Heap {
        Heap {
            live: vec![-1; n],
            outstanding: vec![0; n],
            canonical: vec![NONE; n],
            touched: Vec::new(),
            total: 0,
        }
    }

    /// Back to nothing live.
    fn reset(&mut self) {
        for &d in &self.touched {
            let d = d as usize;
            (self.live[d], self.outstanding[d], self.canonical[d]) = (-1, 0, NONE);
        }
        self.touched.clear();
        self.total = 0;
    }

    /// Applies event `i` (`s`) to a buffer counting `bytes`; `ids` name the buffers in
    /// messages. The rule is XLA's `ComputePeakMemoryLogicalBuffers` (module comment).
    fn step(&mut self, i: usize, s: Step, bytes: i64, ids: &[i64]) -> ReplayResult<()> {
        let kind =
            Kind::try_from(s.kind).map_err(|_| format!("event {i}: unknown kind {}", s.kind))?;
        let (b, id) = (s.buffer as usize, ids[s.buffer as usize]);
        if bytes < 0 {
            return Err(format!(
                "event {i}: buffer {id} has a negative size ({bytes})"
            ));
        }
        match kind {
            Kind::Alloc | Kind::ShareWith => {
                let counted = if kind == Kind::Alloc {
                    self.outstanding[b] = 1;
                    bytes
                } else {
                    let c = s.canonical as usize;
                    self.canonical[b] = s.canonical;
                    self.outstanding[c] += 1;
                    self.touched.push(s.canonical);
                    if self.outstanding[c] == 1 { bytes } else { 0 }
                };
                self.touched.push(s.buffer);
                if self.live[b] >= 0 {
                    return Err(format!("event {i}: buffer {id} allocated while live"));
                }
                self.live[b] = counted;
                // Sizes are never negative, so only a sum can overflow.
                self.total = self
                    .total
                    .checked_add(counted)
                    .ok_or_else(|| format!("event {i}: the live total passes 2^63 bytes"))?;
            }
            Kind::Free => {
                let counted = self.live[b];
                if counted < 0 {
                    return Err(format!("event {i}: FREE of buffer {id}, which is not live"));
                }
                self.live[b] = -1;
                let c = match self.canonical[b] {
                    NONE => b,
                    c => c as usize,
                };
                // Live, the buffer was counted in by its ALLOC (or SHARE_WITH) and its
                // canonical buffer's count is at least 1.
                self.outstanding[c] -= 1;
                self.total -= counted;
            }
        }
        Ok(())
    }
}

pub(super) type ReplayResult<T> = std::result::Result<T, String>;

/// [`replay`] of events as [`Step`]s over buffers named by `ids`, with `heap` (all of
/// `ids`, nothing live) as its state, left as it was found; the replay and the dense
/// indices of its live buffers at the peak, in the order of `Replay::live`.
///
/// Linear in the events: a first pass finds the peak and its first event, a second
/// replays the events up to it and takes the live set there (a copy of the live set at
/// every new peak instead is quadratic where the total keeps rising, as it does while a
/// program allocates its buffers: 200,000 buffers took minutes).
pub(super) fn replay_steps(
    steps: &[Step],
    bytes: impl Fn(u32) -> Option<i64>,
    ids: &[i64],
    heap: &mut Heap,
) -> ReplayResult<(Replay, Vec<u32>)> {
    let mut best = Replay::default();
    let mut totals = Vec::with_capacity(steps.len());
    let mut first = || -> ReplayResult<()> {
        for (i, s) in steps.iter().enumerate() {
            if let Some(n) = bytes(s.buffer) {
                heap.step(i, *s, n, ids)?;
            }
            totals.push(heap.total);
            if heap.total > best.peak {
                best.peak = heap.total;
                best.peak_event = Some(i);
            }
        }
        Ok(())
    };
    let first = first();
    heap.reset();
    first?;
    let mut live = Vec::new();
    if let Some(peak) = best.peak_event {
        let mut second = || -> ReplayResult<()> {
            for (i, s) in steps.iter().enumerate().take(peak + 1) {
                if let Some(n) = bytes(s.buffer) {
                    heap.step(i, *s, n, ids)?;
                }
            }
            live = heap
                .touched
                .iter()
                .filter(|&&d| heap.live[d as usize] > 0)
                .map(|&d| (ids[d as usize], heap.live[d as usize], d))
                .collect();
            Ok(())
        };
        let second = second();
        heap.reset();
        second?;
        // A buffer is listed in `touched` once per event that changed it.
        live.sort_unstable();
        live.dedup();
    }
    best.live = live.iter().map(|&(id, b, _)| (id, b)).collect();
    best.totals = totals;
    Ok((best, live.into_iter().map(|(_, _, d)| d).collect()))
}

/// Replays heap simulator `events` as XLA's `ComputePeakMemoryLogicalBuffers`; `size`
/// gives the bytes of a buffer, `None` for a buffer not counted (not in the allocation).
/// An event that frees a buffer that is not live, a buffer allocated while live, an
/// unknown kind, a negative size and a live total past 2^63 are errors (the message says
/// which). Linear in the events (see [`replay_steps`]).
pub fn replay(
    events: &[proto::heap_simulator_trace::Event],
    size: impl Fn(i64) -> Option<i64>,
) -> ReplayResult<Replay> {
    // Dense indices are u32, two per event at most.
    if events.len() >= (NONE / 2) as usize {
        return Err(format!("{} events: more than njx replays", events.len()));
    }
    let mut dense: HashMap<i64, u32> = HashMap::new();
    let mut ids = Vec::new();
    let mut index = |id: i64| {
        *dense.entry(id).or_insert_with(|| {
            ids.push(id);
            (ids.len() - 1) as u32
        })
    };
    let steps: Vec<Step> = events
        .iter()
        .map(|e| Step {
            kind: e.kind,
            buffer: index(e.buffer_id),
            canonical: if e.kind == Kind::ShareWith as i32 {
                index(e.share_with_canonical_id)
            } else {
                NONE
            },
        })
        .collect();
    let sizes: Vec<Option<i64>> = ids.iter().map(|&id| size(id)).collect();
    let mut heap = Heap::new(ids.len());
    replay_steps(&steps, |d| sizes[d as usize], &ids, &mut heap).map(|(r, _)| r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::heap_simulator_trace::Event;

    fn ev(kind: Kind, id: i64, canonical: i64) -> Event {
        Event {
            kind: kind as i32,
            buffer_id: id,
            share_with_canonical_id: canonical,
            ..Default::default()
        }
    }

    #[test]
    fn shared_buffers_count_once_while_their_canonical_lives() {
        // 1: 100, 2 shares 1, 3: 50. Peak 150 after 3's ALLOC with 1 and 3 live.
        let events = [
            ev(Kind::Alloc, 1, 0),
            ev(Kind::ShareWith, 2, 1),
            ev(Kind::Alloc, 3, 0),
            ev(Kind::Free, 1, 0),
            ev(Kind::Free, 2, 0),
            ev(Kind::Free, 3, 0),
        ];
        let sizes = HashMap::from([(1, 100), (2, 100), (3, 50)]);
        let r = replay(&events, |id| sizes.get(&id).copied()).unwrap();
        assert_eq!(r.peak, 150);
        assert_eq!(r.peak_event, Some(2));
        assert_eq!(r.live, vec![(1, 100), (3, 50)]);
    }

    #[test]
    fn a_share_after_its_canonical_is_freed_counts() {
        let events = [
            ev(Kind::Alloc, 1, 0),
            ev(Kind::Free, 1, 0),
            ev(Kind::ShareWith, 2, 1),
            ev(Kind::Alloc, 3, 0),
        ];
        let r = replay(&events, |_| Some(10)).unwrap();
        assert_eq!((r.peak, r.peak_event), (20, Some(3)));
        assert_eq!(r.live, vec![(2, 10), (3, 10)]);
    }

    #[test]
    fn freeing_what_is_not_live_is_an_error() {
        let e = replay(&[ev(Kind::Free, 4, 0)], |_| Some(1)).unwrap_err();
        assert!(e.contains("buffer 4"), "{e}");
    }

    /// The replay as njx wrote it first, and as XLA's rule reads: the live set copied
    /// at every new peak (quadratic, plain). The reference the linear replay must equal.
    fn reference(events: &[Event], size: impl Fn(i64) -> Option<i64>) -> Result<Replay, String> {
        let mut live: HashMap<i64, i64> = HashMap::new();
        let mut outstanding: HashMap<i64, i64> = HashMap::new();
        let mut canonical: HashMap<i64, i64> = HashMap::new();
        let mut total: i64 = 0;
        let mut best = Replay::default();
        let mut totals = Vec::new();
        for (i, e) in events.iter().enumerate() {
            let Some(bytes) = size(e.buffer_id) else {
                totals.push(total);
                continue;
            };
            let kind = Kind::try_from(e.kind)
                .map_err(|_| format!("event {i}: unknown kind {}", e.kind))?;
            match kind {
                Kind::Alloc | Kind::ShareWith => {
                    let counted = if kind == Kind::Alloc {
                        outstanding.insert(e.buffer_id, 1);
                        bytes
                    } else {
                        canonical.insert(e.buffer_id, e.share_with_canonical_id);
                        let n = outstanding.entry(e.share_with_canonical_id).or_insert(0);
                        *n += 1;
                        if *n == 1 { bytes } else { 0 }
                    };
                    if live.insert(e.buffer_id, counted).is_some() {
                        return Err(format!(
                            "event {i}: buffer {} allocated while live",
                            e.buffer_id
                        ));
                    }
                    total += counted;
                }
                Kind::Free => {
                    let Some(counted) = live.remove(&e.buffer_id) else {
                        return Err(format!(
                            "event {i}: FREE of buffer {}, which is not live",
                            e.buffer_id
                        ));
                    };
                    let c = canonical.get(&e.buffer_id).copied().unwrap_or(e.buffer_id);
                    if let Some(n) = outstanding.get_mut(&c) {
                        *n -= 1;
                    }
                    total -= counted;
                }
            }
            totals.push(total);
            if total > best.peak {
                best.peak = total;
                best.peak_event = Some(i);
                let mut set: Vec<(i64, i64)> = live
                    .iter()
                    .filter(|(_, b)| **b > 0)
                    .map(|(&id, &b)| (id, b))
                    .collect();
                set.sort_unstable();
                best.live = set;
            }
        }
        best.totals = totals;
        Ok(best)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Random traces over a few buffers (any order of kinds, unknown kinds, shares
        /// of any buffer, buffers not counted, sizes of 0): the linear replay gives what
        /// the reference gives, errors included.
        #[test]
        fn the_linear_replay_equals_the_reference(
            raw in proptest::collection::vec((0i32..4, 0i64..6, 0i64..6), 0..40),
            sizes in proptest::collection::vec(proptest::option::weighted(0.8, 0i64..50), 6),
        ) {
            let events: Vec<Event> = raw
                .iter()
                .map(|&(k, id, c)| Event {
                    // 3: an unknown kind.
                    kind: k,
                    buffer_id: id,
                    share_with_canonical_id: c,
                    ..Default::default()
                })
                .collect();
            let size = |id: i64| sizes[id as usize];
            proptest::prop_assert_eq!(replay(&events, size), reference(&events, size));
        }

        /// The same on traces as XLA writes them (each buffer allocated or shared once,
        /// freed at most once after), which run to the end rather than to an error.
        #[test]
        fn the_linear_replay_equals_the_reference_on_valid_traces(
            order in proptest::collection::vec((0usize..1000, 0usize..1000, 0i64..20), 1..30),
            sizes in proptest::collection::vec(0i64..50, 30),
        ) {
            // Buffer k enters at step 2k (ALLOC, or SHARE_WITH an earlier one) and leaves
            // at a later random step, or never.
            let mut timed: Vec<(usize, usize, Event)> = Vec::new();
            for (k, &(share, life, _)) in order.iter().enumerate() {
                let kind = if k > 0 && share % 3 == 0 { Kind::ShareWith } else { Kind::Alloc };
                let canonical = if kind == Kind::ShareWith { (share % k) as i64 } else { 0 };
                timed.push((2 * k, 0, ev(kind, k as i64, canonical)));
                if life % 5 != 0 {
                    timed.push((2 * k + 1 + life % 40, 1, ev(Kind::Free, k as i64, 0)));
                }
            }
            timed.sort_by_key(|&(at, order, _)| (at, order));
            let events: Vec<Event> = timed.into_iter().map(|(_, _, e)| e).collect();
            // Shares of a shared buffer are chains XLA does not write; they replay all the
            // same, so they are kept.
            let size = |id: i64| (id % 7 != 3).then(|| sizes[id as usize]);
            let r = replay(&events, size);
            proptest::prop_assert!(r.is_ok(), "{:?}", r);
            proptest::prop_assert_eq!(r, reference(&events, size));
        }
    }

    /// 200,000 buffers allocated one after the other, each a new peak, then freed: the
    /// replay is linear (a copy of the live set at every new peak took minutes here).
    #[test]
    fn two_hundred_thousand_live_buffers_replay_at_once() {
        const N: i64 = 200_000;
        let events: Vec<Event> = (0..N)
            .map(|k| ev(Kind::Alloc, k, 0))
            .chain((0..N).map(|k| ev(Kind::Free, k, 0)))
            .collect();
        let start = std::time::Instant::now();
        let r = replay(&events, |id| Some(id % 100 + 1)).unwrap();
        let took = start.elapsed();
        assert_eq!(r.peak_event, Some(N as usize - 1));
        assert_eq!(r.live.len(), N as usize);
        assert_eq!(r.peak, (0..N).map(|k| k % 100 + 1).sum::<i64>());
        assert_eq!(r.totals.len(), 2 * N as usize);
        assert_eq!(*r.totals.last().unwrap(), 0);
        // Milliseconds in release, well under a second unoptimised; the bound leaves room
        // for a loaded machine.
        assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    }

    #[test]
    fn sizes_past_64_bits_and_negative_sizes_are_errors() {
        let events = [ev(Kind::Alloc, 1, 0), ev(Kind::Alloc, 2, 0)];
        let e = replay(&events, |_| Some(i64::MAX)).unwrap_err();
        assert!(e.contains("event 1") && e.contains("2^63"), "{e}");
        let e = replay(&events, |id| Some(if id == 2 { -1 } else { 1 })).unwrap_err();
        assert!(e.contains("buffer 2 has a negative size"), "{e}");
    }
}
