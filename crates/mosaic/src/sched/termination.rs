//! Termination detection for work-stealing phases (parallel marking).
//!
//! A worker joins the phase ([`Termination::join`]) before it looks for
//! work. One that has no work of its own and found none to steal calls
//! [`Termination::idle`]: it counts itself idle, then watches for work
//! (`visible`), leaving the count when some shows up. The phase is over
//! when every worker that joined is idle at once, or when one aborted (a
//! panic). Workers may join late, or never (`Workers::run` lets a
//! pool thread that comes after the caller's share has returned skip the
//! phase): the count is of those that joined.
//!
//! Why "all joined idle" means "no work left": work lives only in a busy
//! worker's private stack or in a queue; only a busy worker pushes to a
//! queue, and a worker takes what is in its own queue before going idle. A
//! worker that has not joined holds no work (it joins first), and one
//! that joins late finds only what joined ones left visible. So once the
//! idle count reaches the joined count nothing can create work again, and
//! every worker that watches sees the counts equal and returns; one that
//! joins after that finds nothing, goes idle and sees them equal again.
//! Both counts live in one word, so that a worker compares the two as they
//! were at one moment. (Nothing is lost even if a worker left early: each
//! drains its own stack and queue first; what the counts buy is that idle
//! workers keep stealing until the whole phase is done, and that every one
//! of them then stops.) Checked with loom, two workers, every interleaving
//! up to 3 preemptions, joins included: each item processed exactly once,
//! every worker ends (`RUSTFLAGS="--cfg loom" cargo test -p mosaic --lib
//! --release termination`).

#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, AtomicU64};

/// One joined worker in [`Termination::counts`] (the idle count is the low
/// half).
const JOINED: u64 = 1 << 32;

/// The joined and idle counts and the abort flag of one phase.
pub struct Termination {
    /// Workers joined (high 32 bits) and idle (low 32 bits).
    counts: AtomicU64,
    abort: AtomicBool,
    /// Idle workers give their CPU up while they wait: only when the
    /// workers outnumber the CPUs (a busy one may be queued behind an idle
    /// one). Otherwise a yield gains nothing, and on a machine that other
    /// programs load it hands the CPU to one of them for a time slice in
    /// the middle of the pause.
    yields: bool,
}

/// Every joined worker is idle.
fn all_idle(counts: u64) -> bool {
    counts >> 32 == counts & (JOINED - 1)
}

impl Termination {
    /// A phase no worker has joined yet; `oversubscribed` when the workers
    /// outnumber the CPUs the process may use.
    pub fn new(oversubscribed: bool) -> Self {
        Termination {
            counts: AtomicU64::new(0),
            abort: AtomicBool::new(false),
            yields: oversubscribed,
        }
    }

    /// Counts the calling worker in, before it looks for work.
    pub fn join(&self) {
        self.counts.fetch_add(JOINED, AcqRel);
    }

    /// Ends the phase for every worker (one of them failed).
    pub fn abort(&self) {
        self.abort.store(true, Release);
    }

    pub fn aborted(&self) -> bool {
        self.abort.load(Acquire)
    }

    /// Called by a joined worker that found no work anywhere. Returns
    /// `true` when the phase is over (every joined worker idle, or
    /// aborted), `false` when `visible()` reported work: the worker is busy
    /// again and should look for it.
    pub fn idle(&self, visible: impl Fn() -> bool) -> bool {
        if all_idle(self.counts.fetch_add(1, AcqRel) + 1) {
            return true;
        }
        loop {
            if self.aborted() || all_idle(self.counts.load(Acquire)) {
                return true;
            }
            if visible() {
                self.counts.fetch_sub(1, AcqRel);
                return false;
            }
            pause(self.yields);
        }
    }
}

#[cfg(not(loom))]
fn pause(yields: bool) {
    std::hint::spin_loop();
    if yields {
        std::thread::yield_now();
    }
}

#[cfg(loom)]
fn pause(_: bool) {
    loom::thread::yield_now();
}

#[cfg(all(test, loom))]
mod tests {
    use super::*;
    use loom::sync::atomic::AtomicUsize;
    use loom::sync::{Arc, Mutex};

    /// Workers with one queue each; an item `k > 0` makes one item `k - 1`
    /// in the worker's own queue (so work moves and grows while others
    /// steal). Every item is processed exactly once, every worker ends, and
    /// none sees the end while another is still busy.
    fn run(workers: usize, preemptions: usize, seeds: &'static [(usize, u32)]) {
        // Every interleaving with up to `preemptions` preemptions (the
        // unbounded search does not end once workers spin while idle; with
        // three workers even a bound of 1 ran for more than 5 minutes).
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(preemptions);
        // Idle workers spin (yielding) until the others finish.
        model.max_branches = 100_000;
        model.check(move || {
            let queues: Arc<Vec<Mutex<Vec<u32>>>> =
                Arc::new((0..workers).map(|_| Mutex::new(Vec::new())).collect());
            let mut expected = 0;
            for &(w, k) in seeds {
                queues[w].lock().unwrap().push(k);
                expected += k as usize + 1;
            }
            let term = Arc::new(Termination::new(true));
            let done = Arc::new(AtomicUsize::new(0));
            let handles: Vec<_> = (0..workers)
                .map(|me| {
                    let (queues, term, done) = (queues.clone(), term.clone(), done.clone());
                    loom::thread::spawn(move || {
                        term.join();
                        loop {
                            let mine = queues[me].lock().unwrap().pop();
                            let got = mine.or_else(|| {
                                (1..workers)
                                    .find_map(|k| queues[(me + k) % workers].lock().unwrap().pop())
                            });
                            match got {
                                Some(k) => {
                                    done.fetch_add(1, AcqRel);
                                    if k > 0 {
                                        queues[me].lock().unwrap().push(k - 1);
                                    }
                                }
                                None => {
                                    let visible =
                                        || queues.iter().any(|q| !q.lock().unwrap().is_empty());
                                    if term.idle(visible) {
                                        // The end is seen only once every
                                        // item was processed (no worker is
                                        // still busy).
                                        assert_eq!(done.load(Acquire), expected);
                                        return;
                                    }
                                }
                            }
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            assert_eq!(done.load(Acquire), expected);
            assert!(queues.iter().all(|q| q.lock().unwrap().is_empty()));
        });
    }

    #[test]
    fn termination_two_workers_one_seed() {
        run(2, 3, &[(0, 2)]);
    }

    #[test]
    fn termination_two_workers_two_seeds() {
        run(2, 3, &[(0, 1), (1, 1)]);
    }

    #[test]
    fn termination_two_workers_work_on_one_side() {
        run(2, 3, &[(1, 0), (1, 1)]);
    }
}
