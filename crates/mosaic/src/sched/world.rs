//! The stop-the-world handshake.
//!
//! Invariant: while `collecting` is true, every attached mutator other than
//! the collector is parked (inside [`World::park`] or [`World::stop`]) or
//! detached (dropped, exited with its thread, or in a blocking region), and
//! so touches no heap state. `parked` counts the mutators parked in the
//! *current* pause only: [`World::resume`] resets it to zero and bumps the
//! epoch, and a parked mutator waits for the epoch to change (not for
//! `collecting` to fall). So a collection started right after another, before
//! the previous pause's sleepers have woken, cannot count them as parked
//! while they are about to run again.
//!
//! Every mutator is registered with its thread, so a collection that has
//! waited longer than the stall warning for some mutator to reach a
//! safepoint says once, on stderr, which mutators and threads it waits for.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

/// Identifies a registered mutator.
pub type MutatorId = u64;

/// Why a registered mutator is not taking part in pauses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detached {
    /// Inside a blocking region.
    Blocking,
    /// Its thread exited without dropping it.
    ThreadExited,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Running,
    Parked,
    Detached(Detached),
}

struct Info {
    thread: String,
    status: Status,
}

/// The set of mutators and whether one of them is collecting.
pub struct World {
    requested: AtomicBool,
    state: Mutex<State>,
    cv: Condvar,
    /// Warn after a collection has waited this long (`None`: never).
    stall_warning: Option<Duration>,
    stall_warnings: AtomicU64,
}

#[derive(Default)]
struct State {
    active: usize,
    parked: usize,
    collecting: bool,
    epoch: u64,
    next_id: MutatorId,
    mutators: BTreeMap<MutatorId, Info>,
}

impl Default for World {
    fn default() -> Self {
        World::new(Some(Duration::from_secs(1)))
    }
}

/// `"\"worker\" (tid 12345)"`: the thread's name and kernel id, enough to find it in a debugger.
pub fn describe_current_thread() -> String {
    // From the OS, not `std::thread::current()`: on a thread Rust did not
    // start (a C embedder's), that allocates a handle freed only by the
    // thread's exit, which a leak checker reports when `exit` ends the
    // process first.
    let mut name = [0u8; 64];
    // SAFETY: gettid has no preconditions; pthread_getname_np writes at most
    // `name.len()` bytes, NUL included, into the buffer.
    let (tid, rc) = unsafe {
        (
            libc::gettid(),
            libc::pthread_getname_np(libc::pthread_self(), name.as_mut_ptr().cast(), name.len()),
        )
    };
    let len = name.iter().position(|&b| b == 0).unwrap_or(0);
    let name = match std::str::from_utf8(&name[..len]) {
        Ok(n) if rc == 0 && !n.is_empty() => n,
        _ => "<unnamed>",
    };
    format!("{name:?} (tid {tid})")
}

impl World {
    pub fn new(stall_warning: Option<Duration>) -> Self {
        World {
            requested: AtomicBool::new(false),
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
            stall_warning,
            stall_warnings: AtomicU64::new(0),
        }
    }

    /// A new mutator of the calling thread joins (waiting out a pause in
    /// progress). Returns its id.
    pub fn register(&self) -> MutatorId {
        let thread = describe_current_thread();
        let mut s = self.state.lock();
        while s.collecting {
            self.cv.wait(&mut s);
        }
        s.next_id += 1;
        let id = s.next_id;
        s.mutators.insert(
            id,
            Info {
                thread,
                status: Status::Running,
            },
        );
        s.active += 1;
        id
    }

    /// A detached mutator takes part in pauses again (waiting out a pause
    /// in progress). Its thread may have changed (a mutator whose thread
    /// exited, used again by the thread's later destructors).
    pub fn attach(&self, id: MutatorId) {
        let mut s = self.state.lock();
        while s.collecting {
            self.cv.wait(&mut s);
        }
        let info = s.mutators.get_mut(&id).expect("registered mutator");
        if let Status::Detached(_) = info.status {
            info.status = Status::Running;
            s.active += 1;
        }
    }

    /// A mutator stops taking part in pauses (blocking region, thread exit).
    pub fn detach(&self, id: MutatorId, why: Detached) {
        let mut s = self.state.lock();
        let info = s.mutators.get_mut(&id).expect("registered mutator");
        if info.status == Status::Running {
            info.status = Status::Detached(why);
            s.active -= 1;
            self.cv.notify_all();
        }
    }

    /// A mutator goes away for good.
    pub fn unregister(&self, id: MutatorId) {
        let mut s = self.state.lock();
        if let Some(info) = s.mutators.remove(&id) {
            if info.status == Status::Running {
                s.active -= 1;
                self.cv.notify_all();
            }
        }
    }

    /// Whether the mutator is detached, and why. Only the mutator's owner
    /// changes that, so the owner may act on the answer.
    pub fn detached(&self, id: MutatorId) -> Option<Detached> {
        match self.state.lock().mutators.get(&id)?.status {
            Status::Detached(why) => Some(why),
            _ => None,
        }
    }

    /// Has a collector asked mutators to park? (Cheap; poll at safepoints.)
    #[inline(always)]
    pub fn requested(&self) -> bool {
        self.requested.load(Ordering::Acquire)
    }

    /// The flag [`World::requested`] reads, as a byte other languages may
    /// poll (an `AtomicBool` is one byte, 0 or 1).
    pub fn requested_flag(&self) -> *const u8 {
        self.requested.as_ptr().cast_const().cast()
    }

    /// Parks the calling mutator until the pause in progress, if any, ends.
    /// The caller must have flushed its allocation context.
    pub fn park(&self, id: MutatorId) {
        let mut s = self.state.lock();
        if s.collecting {
            self.wait_out_pause(&mut s, id);
        }
    }

    fn wait_out_pause(&self, s: &mut MutexGuard<'_, State>, id: MutatorId) {
        s.parked += 1;
        set_status(s, id, Status::Parked);
        self.cv.notify_all();
        let epoch = s.epoch;
        while s.epoch == epoch {
            self.cv.wait(s);
        }
        set_status(s, id, Status::Running);
    }

    /// Stops the world for the calling mutator. Returns `true` when the
    /// caller now owns the pause (call [`World::resume`] after collecting);
    /// `false` when another mutator collected meanwhile (the caller was
    /// parked through that pause).
    pub fn stop(&self, id: MutatorId) -> bool {
        let mut s = self.state.lock();
        if s.collecting {
            self.wait_out_pause(&mut s, id);
            return false;
        }
        s.collecting = true;
        self.requested.store(true, Ordering::Release);
        let started = Instant::now();
        let mut warned = false;
        while s.parked + 1 < s.active {
            match self.stall_warning.filter(|_| !warned) {
                None => self.cv.wait(&mut s),
                Some(limit) => {
                    let waited = started.elapsed();
                    if waited >= limit {
                        warned = true;
                        self.warn_stall(&s, id, waited);
                    } else {
                        self.cv.wait_for(&mut s, limit - waited);
                    }
                }
            }
        }
        true
    }

    #[cold]
    fn warn_stall(&self, s: &State, collector: MutatorId, waited: Duration) {
        self.stall_warnings.fetch_add(1, Ordering::Relaxed);
        let me = s.mutators.get(&collector).map_or("?", |i| &i.thread);
        let mut msg = format!(
            "mosaic: a collection requested by mutator #{collector} on thread {me} has waited {:.1} s \
             for mutators to reach a safepoint:",
            waited.as_secs_f64()
        );
        for (id, info) in &s.mutators {
            if *id != collector && info.status == Status::Running {
                msg.push_str(&format!(
                    "\n  mutator #{id} on thread {} is running",
                    info.thread
                ));
            }
        }
        msg.push_str(
            "\n  (a thread that blocks — join, I/O, a lock, a long loop — with its mutator attached holds up \
             every collection: wrap the wait in Mutator::blocking / mosaic_blocking, or call safepoint)",
        );
        eprintln!("{msg}");
    }

    /// How many times a collection warned that it was stalled.
    pub fn stall_warnings(&self) -> u64 {
        self.stall_warnings.load(Ordering::Relaxed)
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
    #[cfg(test)]
    pub fn active(&self) -> usize {
        self.state.lock().active
    }
}

fn set_status(s: &mut State, id: MutatorId, status: Status) {
    if let Some(info) = s.mutators.get_mut(&id) {
        info.status = status;
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
        let me = w.register(); // the collector itself
        let (tx, rx) = std::sync::mpsc::channel();
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let (w, in_pause, running, tx) =
                    (w.clone(), in_pause.clone(), running.clone(), tx.clone());
                std::thread::spawn(move || {
                    let id = w.register();
                    tx.send(()).unwrap();
                    for _ in 0..2000 {
                        running.fetch_add(1, Ordering::SeqCst);
                        assert_eq!(
                            in_pause.load(Ordering::SeqCst),
                            0,
                            "mutator ran during a pause"
                        );
                        running.fetch_sub(1, Ordering::SeqCst);
                        if w.requested() {
                            w.park(id);
                        }
                    }
                    w.unregister(id);
                })
            })
            .collect();
        for _ in 0..3 {
            rx.recv().unwrap();
        }
        for _ in 0..50 {
            assert!(w.stop(me));
            in_pause.store(1, Ordering::SeqCst);
            assert_eq!(running.load(Ordering::SeqCst), 0);
            in_pause.store(0, Ordering::SeqCst);
            w.resume();
        }
        for t in threads {
            t.join().unwrap();
        }
        w.unregister(me);
        assert_eq!(w.active(), 0);
        assert_eq!(w.stall_warnings(), 0);
    }

    #[test]
    fn a_stalled_collection_warns_once_then_proceeds_when_the_mutator_detaches() {
        let w = Arc::new(World::new(Some(Duration::from_millis(50))));
        let me = w.register();
        let (tx, rx) = std::sync::mpsc::channel();
        let w2 = w.clone();
        let stuck = std::thread::spawn(move || {
            let id = w2.register();
            tx.send(id).unwrap();
            std::thread::sleep(Duration::from_millis(400)); // never polls
            w2.detach(id, Detached::Blocking);
            id
        });
        let id = rx.recv().unwrap();
        assert!(w.stop(me));
        assert_eq!(w.stall_warnings(), 1, "warned exactly once");
        w.resume();
        assert_eq!(stuck.join().unwrap(), id);
        assert_eq!(w.detached(id), Some(Detached::Blocking));
        w.attach(id);
        assert_eq!(w.detached(id), None);
        assert_eq!(w.active(), 2);
    }
}
