//! Work spread over the cores: inputs are independent until they are merged, so each is
//! read on a thread of its own and the results come back in input order, whatever the
//! scheduling.

use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

thread_local! {
    /// Set on the threads of a [`parallel_map`] that runs several at once.
    static SHARING: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is one of several [`parallel_map`] runs at once: the cores are
/// taken, so its work is not split over more threads (a decoder thread of its own, say,
/// costs more than it gains then: 6–8 % on 64 ranks).
pub fn cores_taken() -> bool {
    SHARING.with(Cell::get)
}

/// How many threads work at once: one per core.
pub fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `f` applied to every item on a pool of threads (one per core), results in item order.
pub fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = workers().min(items.len());
    if workers <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                SHARING.with(|s| s.set(true));
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    results.lock().expect("no worker panicked")[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|r| r.expect("every item processed"))
        .collect()
}
