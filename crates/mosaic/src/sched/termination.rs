//! Termination detection for work-stealing phases (parallel marking).
//!
//! Workers *join* a phase before they take any work: the caller of the
//! phase (worker 0) has joined from the start, a pool thread joins when it
//! wakes, if the phase is still open. A worker that has no work of its own
//! and found none to steal calls [`Termination::idle`]: it counts itself
//! idle, then watches for work (`visible`), leaving the count when some
//! shows up. The phase *closes* when every joined worker is idle at once
//! (or one aborted, a panic); a worker that wakes after that does not join
//! and takes no part, so a pause never waits for a thread that the OS has
//! not yet scheduled.
//!
//! Why "all joined workers idle" means "no work left": work lives only in a
//! busy worker's private stack or in a queue, and a worker that has not
//! joined holds none (it has taken no root task and no queued work); only a
//! busy worker pushes to a queue, and a worker takes what is in its own
//! queue before going idle. So once the idle count equals the joined count
//! nothing can create work again: the phase closes in the same atomic step,
//! no one joins after it, and every idle worker sees the flag and returns.
//! (Nothing is lost even if a worker left early: each drains its own stack
//! and queue first; what the count buys is that idle workers keep stealing
//! until the whole phase is done, and that every one of them then stops.)
//! Checked with loom, two workers (the second joining at any point, or too
//! late), every interleaving up to 3 preemptions: each item processed
//! exactly once, every worker ends (`RUSTFLAGS="--cfg loom" cargo test -p
//! mosaic --lib --release termination`).

#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, AtomicU64};

/// Set in [`Termination`]'s state once every joined worker was idle.
const CLOSED: u64 = 1 << 63;
/// One joined worker, in the state's upper half (the lower half counts the
/// idle ones).
const JOINED: u64 = 1 << 32;
const IDLE_MASK: u64 = JOINED - 1;

/// The joined and idle counts, and the abort flag, of one phase.
pub struct Termination {
    /// `CLOSED | joined << 32 | idle`.
    state: AtomicU64,
    abort: AtomicBool,
}

impl Default for Termination {
    fn default() -> Self {
        Self::new()
    }
}

impl Termination {
    /// A phase whose caller (worker 0) has joined.
    pub fn new() -> Self {
        Termination {
            state: AtomicU64::new(JOINED),
            abort: AtomicBool::new(false),
        }
    }

    /// Takes part in the phase, if it is still open. A worker for which
    /// this returns `false` must take no work and return at once.
    pub fn join(&self) -> bool {
        let mut s = self.state.load(Acquire);
        loop {
            if s & CLOSED != 0 || self.aborted() {
                return false;
            }
            match self
                .state
                .compare_exchange_weak(s, s + JOINED, AcqRel, Acquire)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
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
        let mut s = self.state.load(Acquire);
        loop {
            if s & CLOSED != 0 {
                return true;
            }
            let mut next = s + 1;
            if next & IDLE_MASK == (next & !CLOSED) >> 32 {
                next |= CLOSED;
            }
            match self.state.compare_exchange_weak(s, next, AcqRel, Acquire) {
                Ok(_) if next & CLOSED != 0 => return true,
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        loop {
            if self.aborted() || self.state.load(Acquire) & CLOSED != 0 {
                return true;
            }
            if visible() {
                // Busy again, unless the phase closed meanwhile (then the
                // work seen was taken by a worker that has since gone idle).
                let mut s = self.state.load(Acquire);
                loop {
                    if s & CLOSED != 0 {
                        return true;
                    }
                    match self.state.compare_exchange_weak(s, s - 1, AcqRel, Acquire) {
                        Ok(_) => return false,
                        Err(now) => s = now,
                    }
                }
            }
            pause();
        }
    }
}

#[cfg(not(loom))]
fn pause() {
    std::hint::spin_loop();
    std::thread::yield_now();
}

#[cfg(loom)]
fn pause() {
    loom::thread::yield_now();
}

#[cfg(all(test, loom))]
mod tests {
    use super::*;
    use loom::sync::{Arc, Mutex};

    /// Workers with one queue each plus a shared one (the injector, which
    /// holds the seeds: a worker that has not joined holds no work); an
    /// item `k > 0` makes one item `k - 1` in the worker's own queue (so
    /// work moves and grows while others steal). Worker 0 has joined from
    /// the start, the others join when they run, if the phase is open.
    /// Every item is processed exactly once, every worker ends, and none
    /// sees the end while another is still busy.
    fn run(workers: usize, preemptions: usize, seeds: &'static [u32]) {
        // Every interleaving with up to `preemptions` preemptions (the
        // unbounded search does not end once workers spin while idle; with
        // three workers even a bound of 1 ran for more than 5 minutes).
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(preemptions);
        // Idle workers spin (yielding) until the others finish.
        model.max_branches = 100_000;
        model.check(move || {
            // Queue `workers` is the shared one.
            let queues: Arc<Vec<Mutex<Vec<u32>>>> =
                Arc::new((0..=workers).map(|_| Mutex::new(Vec::new())).collect());
            let mut expected = 0;
            for &k in seeds {
                queues[workers].lock().unwrap().push(k);
                expected += k as usize + 1;
            }
            let term = Arc::new(Termination::new());
            let done = Arc::new(AtomicU64::new(0));
            let handles: Vec<_> = (0..workers)
                .map(|me| {
                    let (queues, term, done) = (queues.clone(), term.clone(), done.clone());
                    loom::thread::spawn(move || {
                        if me > 0 && !term.join() {
                            return;
                        }
                        loop {
                            let mine = queues[me].lock().unwrap().pop();
                            let got = mine.or_else(|| {
                                (1..=workers).find_map(|k| {
                                    queues[(me + k) % (workers + 1)].lock().unwrap().pop()
                                })
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
                                        // item was processed (no worker
                                        // is still busy).
                                        assert_eq!(done.load(Acquire), expected as u64);
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
            assert_eq!(done.load(Acquire), expected as u64);
            assert!(queues.iter().all(|q| q.lock().unwrap().is_empty()));
        });
    }

    #[test]
    fn termination_two_workers_one_seed() {
        run(2, 3, &[2]);
    }

    #[test]
    fn termination_two_workers_two_seeds() {
        run(2, 3, &[1, 1]);
    }

    #[test]
    fn termination_two_workers_nothing_to_do() {
        run(2, 3, &[]);
    }
}
