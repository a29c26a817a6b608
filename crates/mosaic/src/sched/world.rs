//! The stop-the-world handshake.
//!
//! Invariant: while `collecting` is true, every attached mutator other than
//! the collector is parked (inside [`World::park`] or [`World::stop`]) or
//! detached (dropped, or in a blocking region), and so touches no heap state.
//! `parked` counts the mutators parked in the *current* pause only:
//! [`World::resume`] resets it to zero and bumps the epoch, and a parked
//! mutator waits for the epoch to change (not for `collecting` to fall).
//! So a collection started right after another, before the previous pause's
//! sleepers have woken, cannot count them as parked while they are about to
//! run again.

use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::{Condvar, Mutex};

/// The set of mutators and whether one of them is collecting.
#[derive(Default)]
pub struct World {
    requested: AtomicBool,
    state: Mutex<State>,
    cv: Condvar,
}

#[derive(Default)]
struct State {
    active: usize,
    parked: usize,
    collecting: bool,
    epoch: u64,
}

impl World {
    /// A new mutator joins (waiting out a pause in progress).
    pub fn attach(&self) {
        let mut s = self.state.lock();
        while s.collecting {
            self.cv.wait(&mut s);
        }
        s.active += 1;
    }

    /// A mutator leaves (dropped, or entering a blocking region).
    pub fn detach(&self) {
        let mut s = self.state.lock();
        s.active -= 1;
        self.cv.notify_all();
    }

    /// Has a collector asked mutators to park? (Cheap; poll at safepoints.)
    #[inline(always)]
    pub fn requested(&self) -> bool {
        self.requested.load(Ordering::Acquire)
    }

    /// Parks the calling mutator until the pause in progress, if any, ends.
    /// The caller must have flushed its allocation context.
    pub fn park(&self) {
        let mut s = self.state.lock();
        if s.collecting {
            self.wait_out_pause(&mut s);
        }
    }

    fn wait_out_pause(&self, s: &mut parking_lot::MutexGuard<'_, State>) {
        s.parked += 1;
        self.cv.notify_all();
        let epoch = s.epoch;
        while s.epoch == epoch {
            self.cv.wait(s);
        }
    }

    /// Stops the world for the calling mutator. Returns `true` when the
    /// caller now owns the pause (call [`World::resume`] after collecting);
    /// `false` when another mutator collected meanwhile (the caller was
    /// parked through that pause).
    pub fn stop(&self) -> bool {
        let mut s = self.state.lock();
        if s.collecting {
            self.wait_out_pause(&mut s);
            return false;
        }
        s.collecting = true;
        self.requested.store(true, Ordering::Release);
        while s.parked + 1 < s.active {
            self.cv.wait(&mut s);
        }
        true
    }

    /// Ends the pause and wakes every parked mutator.
    pub fn resume(&self) {
        let mut s = self.state.lock();
        s.collecting = false;
        s.parked = 0;
        s.epoch += 1;
        self.requested.store(false, Ordering::Release);
        self.cv.notify_all();
    }

    /// Number of attached, non-blocked mutators.
    pub fn active(&self) -> usize {
        self.state.lock().active
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    #[test]
    fn collector_waits_for_every_mutator_to_park() {
        let w = Arc::new(World::default());
        let in_pause = Arc::new(AtomicUsize::new(0));
        let running = Arc::new(AtomicUsize::new(0));
        w.attach(); // the collector itself
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let (w, in_pause, running) = (w.clone(), in_pause.clone(), running.clone());
                w.attach();
                std::thread::spawn(move || {
                    for _ in 0..2000 {
                        running.fetch_add(1, Ordering::SeqCst);
                        assert_eq!(
                            in_pause.load(Ordering::SeqCst),
                            0,
                            "mutator ran during a pause"
                        );
                        running.fetch_sub(1, Ordering::SeqCst);
                        if w.requested() {
                            w.park();
                        }
                    }
                    w.detach();
                })
            })
            .collect();
        for _ in 0..50 {
            assert!(w.stop());
            in_pause.store(1, Ordering::SeqCst);
            assert_eq!(running.load(Ordering::SeqCst), 0);
            in_pause.store(0, Ordering::SeqCst);
            w.resume();
        }
        for t in threads {
            t.join().unwrap();
        }
        w.detach();
        assert_eq!(w.active(), 0);
    }
}
