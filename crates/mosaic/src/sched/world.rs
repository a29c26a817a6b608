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
//!
//! Threads that never poll (C code) are stopped by a signal: the stop hook
//! ([`World::set_stop_hook`]) sends it once `requested` is set, and the
//! handler calls [`World::park_from_signal`], which uses no lock: it counts
//! itself into `signal_parked`, whose high half is the number of the pause
//! it counts for (`stop_seq`, odd while a pause is on), so a late signal can
//! never count for a pause it did not see start, and sleeps on `stop_seq`
//! with a futex until the pause ends. Before it sleeps it bumps and wakes
//! `parked_ack`, on which the collector waiting for the stop sleeps (after
//! a short spin).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
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

/// How long a collector waits for signalled threads before calling the
/// stop hook again.
const HOOK_RETRY: Duration = Duration::from_millis(2);

/// How long a collector waiting for signalled threads to park spins before
/// it sleeps.
const STOP_SPIN: Duration = Duration::from_micros(100);

/// The set of mutators and whether one of them is collecting.
pub struct World {
    requested: AtomicBool,
    state: Mutex<State>,
    cv: Condvar,
    /// Warn after a collection has waited this long (`None`: never).
    stall_warning: Option<Duration>,
    stall_warnings: AtomicU64,
    /// Pauses started and ended: odd while one is on. Only changed under
    /// `state`'s lock; signal handlers read it and sleep on it.
    stop_seq: AtomicU32,
    /// `stop_seq << 32 | mutators parked from a signal handler` for the
    /// pause in progress.
    signal_parked: AtomicU64,
    /// Bumped (and woken) by every mutator that parks during a stop: the
    /// collector waiting for a stop sleeps on it. A signal handler cannot
    /// notify the condition variable, and polling it every 50 µs cost
    /// about 180 µs a pause (timer slack, a halted vCPU).
    parked_ack: AtomicU32,
    /// A stop hook is installed (the collector then sleeps on `parked_ack`).
    hooked: AtomicBool,
    /// Called by a collector once it has requested a pause (see the module docs).
    stop_hook: parking_lot::RwLock<Option<StopHook>>,
    /// Called by the collector once the world runs again.
    resume_hook: parking_lot::RwLock<Option<StopHook>>,
    /// The thread that ended the last pause runs the resume hook: no new
    /// pause starts until it returns (the hook's notices stay in order).
    /// Set under `state`'s lock, cleared without it: the threads the
    /// resume woke take that lock first, and a resumer that queued behind
    /// one preempted by the other mutators waited up to milliseconds
    /// (Guile, 2 threads: the resume took 54 µs at the median, 277 µs at
    /// the 99th percentile; 14 and 34 µs without the lock).
    resuming: AtomicBool,
    /// Threads in [`World::stop`] waiting for `resuming` to clear: the
    /// resumer takes the lock to wake them only if there are some.
    resume_waiters: AtomicUsize,
}

/// Sends the stop signal to the threads that do not poll (see
/// [`World::set_stop_hook`]).
pub type StopHook = Arc<dyn Fn() + Send + Sync>;

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
            stop_seq: AtomicU32::new(0),
            signal_parked: AtomicU64::new(0),
            parked_ack: AtomicU32::new(0),
            hooked: AtomicBool::new(false),
            stop_hook: parking_lot::RwLock::new(None),
            resume_hook: parking_lot::RwLock::new(None),
            resuming: AtomicBool::new(false),
            resume_waiters: AtomicUsize::new(0),
        }
    }

    /// Installs the function a collecting thread calls, without any lock
    /// of the world held, after it has requested a pause: it must make
    /// every mutator thread that does not poll safepoints call
    /// [`World::park_from_signal`] (by a signal), and may skip the caller's
    /// own thread and threads in blocking regions.
    pub fn set_stop_hook(&self, hook: Option<StopHook>) {
        self.hooked.store(hook.is_some(), Ordering::Relaxed);
        *self.stop_hook.write() = hook;
    }

    /// Installs the function the thread that stopped the world calls after
    /// [`World::resume`] has woken every mutator, without any lock of the
    /// world held (the counterpart of the stop hook: an embedder's "world
    /// started" notice). No other pause starts until it returns.
    pub fn set_resume_hook(&self, hook: Option<StopHook>) {
        *self.resume_hook.write() = hook;
    }

    /// Parks the calling thread's mutator from inside a signal handler until
    /// the pause in progress ends; `false` at once if no pause is on, or
    /// if the pause this signal was sent for has ended. `before` runs just
    /// before the mutator counts as parked (to record its stack: the
    /// collector may read it as soon as the count is seen).
    ///
    /// Async-signal-safe: atomics and a futex, no lock, no allocation. The
    /// caller must be an attached mutator (not in a blocking region) whose
    /// thread was interrupted outside any call into the heap.
    pub fn park_from_signal(&self, before: impl FnOnce(), after: impl FnOnce()) -> bool {
        let seq = self.stop_seq.load(Ordering::Acquire);
        if seq & 1 == 0 {
            return false;
        }
        before();
        let mut v = self.signal_parked.load(Ordering::Acquire);
        loop {
            if (v >> 32) as u32 != seq {
                after();
                return false;
            }
            match self.signal_parked.compare_exchange_weak(
                v,
                v + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(now) => v = now,
            }
        }
        self.ack_parked();
        while self.stop_seq.load(Ordering::Acquire) == seq {
            super::futex::wait(&self.stop_seq, seq);
        }
        after();
        true
    }

    /// Mutators parked from a signal handler in the pause in progress.
    fn signal_parked(&self, seq: u32) -> usize {
        let v = self.signal_parked.load(Ordering::Acquire);
        if (v >> 32) as u32 == seq {
            (v & u32::MAX as u64) as usize
        } else {
            0
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
            if s.collecting {
                self.ack_parked();
            }
        }
    }

    /// A mutator goes away for good.
    pub fn unregister(&self, id: MutatorId) {
        let mut s = self.state.lock();
        if let Some(info) = s.mutators.remove(&id) {
            if info.status == Status::Running {
                s.active -= 1;
                self.cv.notify_all();
                if s.collecting {
                    self.ack_parked();
                }
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
        self.ack_parked();
        let epoch = s.epoch;
        while s.epoch == epoch {
            self.cv.wait(s);
        }
        set_status(s, id, Status::Running);
    }

    /// Tells a collector waiting in [`World::stop`] that one more mutator
    /// parked or left (async-signal-safe: an atomic and a futex wake). Only
    /// with a stop hook: without one the collector waits on the condition
    /// variable, and nobody sleeps on the word.
    fn ack_parked(&self) {
        if !self.hooked.load(Ordering::Relaxed) {
            return;
        }
        self.parked_ack.fetch_add(1, Ordering::Release);
        super::futex::wake_all(&self.parked_ack);
    }

    /// Stops the world for the calling mutator. Returns `true` when the
    /// caller now owns the pause (call [`World::resume`] after collecting);
    /// `false` when another mutator collected meanwhile (the caller was
    /// parked through that pause).
    pub fn stop(&self, id: MutatorId) -> bool {
        let mut s = self.state.lock();
        if self.resuming.load(Ordering::SeqCst) && !s.collecting {
            // Counted before `resuming` is read again (both SeqCst): a
            // resumer that clears it then either sees the count and
            // notifies under the lock, or this thread sees it cleared.
            self.resume_waiters.fetch_add(1, Ordering::SeqCst);
            while self.resuming.load(Ordering::SeqCst) && !s.collecting {
                self.cv.wait(&mut s);
            }
            self.resume_waiters.fetch_sub(1, Ordering::SeqCst);
        }
        if s.collecting {
            self.wait_out_pause(&mut s, id);
            return false;
        }
        s.collecting = true;
        let seq = self.stop_seq.load(Ordering::Relaxed).wrapping_add(1);
        self.signal_parked
            .store((seq as u64) << 32, Ordering::Release);
        self.stop_seq.store(seq, Ordering::Release);
        self.requested.store(true, Ordering::Release);
        let hook = self.stop_hook.read().clone();
        if let Some(hook) = &hook {
            // Without the lock: the hook takes the embedder's own locks,
            // which its threads may hold while they register here.
            MutexGuard::unlocked(&mut s, || hook());
        }
        let started = Instant::now();
        let mut last_hook = started;
        let mut warned = false;
        loop {
            // (Read before the check: an acknowledgement after it changes
            // the word, and the futex wait below returns at once.)
            let ack = self.parked_ack.load(Ordering::Acquire);
            if s.parked + self.signal_parked(seq) + 1 >= s.active {
                break;
            }
            // A thread may have put off the signal (it was inside a call
            // that must not stop) and left that call without stopping: ask
            // again, as the Boehm collector retries its signals.
            if let Some(hook) = &hook {
                if last_hook.elapsed() >= HOOK_RETRY {
                    last_hook = Instant::now();
                    MutexGuard::unlocked(&mut s, || hook());
                    continue;
                }
            }
            // A signal handler cannot notify the condition variable: with
            // a hook, sleep on the acknowledgement word (every mutator
            // that parks, detaches or unregisters wakes it), and look
            // again every 50 µs all the same.
            let step = hook.as_ref().map(|_| Duration::from_micros(50));
            let mut timeout = step;
            if let Some(limit) = self.stall_warning.filter(|_| !warned) {
                let waited = started.elapsed();
                if waited >= limit {
                    warned = true;
                    self.warn_stall(&s, id, waited);
                    continue;
                }
                timeout = Some(step.map_or(limit - waited, |st| st.min(limit - waited)));
            }
            match (step, timeout) {
                (Some(_), Some(t)) => MutexGuard::unlocked(&mut s, || {
                    // A signalled thread usually parks within tens of µs:
                    // spin a little before sleeping, since a sleeping CPU
                    // of a VM wakes late. Only at the start of the stop: a
                    // thread that puts the signal off (or a stalled one) is
                    // waited for asleep, not by a spin that takes the CPU
                    // it may need. No yield while spinning: on a machine
                    // other programs load, it hands the CPU to one of them
                    // for a time slice, and a signalled thread queued on
                    // this CPU gets it when the futex wait below begins.
                    while self.parked_ack.load(Ordering::Acquire) == ack
                        && started.elapsed() < STOP_SPIN
                    {
                        std::hint::spin_loop();
                    }
                    super::futex::wait_for(&self.parked_ack, ack, t)
                }),
                (None, Some(t)) => {
                    self.cv.wait_for(&mut s, t);
                }
                (_, None) => self.cv.wait(&mut s),
            }
        }
        true
    }

    #[cold]
    fn warn_stall(&self, s: &State, collector: MutatorId, waited: Duration) {
        self.stall_warnings.fetch_add(1, Ordering::Relaxed);
        let me = s.mutators.get(&collector).map_or("?", |i| &i.thread);
        let secs = crate::os::with_default_float_env(|| format!("{:.1}", waited.as_secs_f64()));
        let mut msg = format!(
            "mosaic: a collection requested by mutator #{collector} on thread {me} has waited {secs} s \
             for mutators to reach a safepoint:"
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
        let seq = self.stop_seq.load(Ordering::Relaxed).wrapping_add(1);
        self.stop_seq.store(seq, Ordering::Release);
        let hook = self.resume_hook.read().clone();
        self.resuming.store(hook.is_some(), Ordering::SeqCst);
        self.cv.notify_all();
        drop(s);
        super::futex::wake_all(&self.stop_seq);
        if let Some(hook) = hook {
            // The world is consistent again: a panic goes on from here,
            // unless one is unwinding already (a panic during a pause).
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook()));
            self.resuming.store(false, Ordering::SeqCst);
            if self.resume_waiters.load(Ordering::SeqCst) != 0 {
                let _s = self.state.lock();
                self.cv.notify_all();
            }
            if let Err(e) = r {
                if !std::thread::panicking() {
                    std::panic::resume_unwind(e);
                }
            }
        }
    }

    /// In a child after `fork`: removes the parent's threads still queued on
    /// the lock or condition variable at `key` from the parking lot's table
    /// (the child copied it), so that releasing the lock never hands it to
    /// a thread this process does not have.
    ///
    /// # Safety
    /// `key` is the address of a parking_lot lock or condition variable;
    /// call it only in a fork child, where its queued threads do not exist.
    pub unsafe fn forget_parked_threads(key: usize) {
        // SAFETY: unparking only removes queue entries and wakes their
        // (absent) threads.
        unsafe { parking_lot_core::unpark_all(key, parking_lot_core::DEFAULT_UNPARK_TOKEN) };
    }

    /// Before `fork`, with the world stopped by the caller: takes the lock
    /// and keeps it across the `fork`, so that no thread is inside it when
    /// the process is copied (a blocking thread that wakes up waits).
    pub fn lock_for_fork(&self) {
        std::mem::forget(self.state.lock());
    }

    /// After `fork`, in the parent: releases what [`World::lock_for_fork`] took.
    pub fn unlock_after_fork_parent(&self) {
        // SAFETY: this thread took the lock in `lock_for_fork` and never
        // released it.
        unsafe { self.state.force_unlock() };
    }

    /// After `fork`, in the child, on the forking thread: forgets every
    /// mutator but `keep` (their threads do not exist in this process) and
    /// releases the lock taken by [`World::lock_for_fork`].
    pub fn after_fork_child(&self, keep: MutatorId) {
        // Threads of the parent parked on the condition variable or the
        // lock are still queued in the parking lot's table, which the child
        // copied: notifying or unlocking would hand the lock to one of
        // them, which does not exist here. Drop them from the queues.
        // SAFETY: unparking only removes queue entries and wakes their
        // (absent) threads; these addresses are the keys parking_lot uses
        // for this condition variable and this mutex. The lock was taken
        // by this thread in `lock_for_fork` (the same thread in the child).
        let mut s = unsafe {
            let token = parking_lot_core::DEFAULT_UNPARK_TOKEN;
            parking_lot_core::unpark_all(&self.cv as *const Condvar as usize, token);
            parking_lot_core::unpark_all(self.state.raw() as *const _ as usize, token);
            self.state.make_guard_unchecked()
        };
        s.mutators.retain(|id, _| *id == keep);
        s.active = s
            .mutators
            .values()
            .filter(|i| i.status == Status::Running)
            .count();
        s.parked = 0;
    }

    /// The pause number: odd while a pause is on, a new value for each
    /// pause (what a stop hook uses to tell a pause's first call from
    /// its retries).
    pub fn stop_sequence(&self) -> u32 {
        self.stop_seq.load(Ordering::Acquire)
    }

    /// Whether a pause is on now (what a signal handler checks).
    pub fn pause_on(&self) -> bool {
        self.stop_seq.load(Ordering::Acquire) & 1 == 1
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
    fn stops_wait_for_the_resume_hook_and_are_all_woken_when_it_returns() {
        use std::sync::atomic::AtomicBool;
        use std::sync::mpsc::{channel, RecvTimeoutError};
        let w = Arc::new(World::default());
        let hold = Arc::new(AtomicBool::new(true));
        let (in_hook, in_hook_rx) = channel::<()>();
        let (release, release_rx) = channel::<()>();
        let (in_hook, release_rx) = (Mutex::new(in_hook), Mutex::new(release_rx));
        let h = hold.clone();
        w.set_resume_hook(Some(Arc::new(move || {
            // Only the first pause's hook blocks, until released.
            if h.swap(false, Ordering::SeqCst) {
                in_hook.lock().send(()).unwrap();
                release_rx.lock().recv().unwrap();
            }
        })));
        let (w2, finish) = (w.clone(), Arc::new(AtomicBool::new(false)));
        let f = finish.clone();
        let first = std::thread::spawn(move || {
            let id = w2.register();
            assert!(w2.stop(id));
            w2.resume();
            // A mutator that polls, and so wakes no one but the collectors
            // it parks for: the stoppers waiting for the hook are woken
            // by the resume alone.
            while !f.load(Ordering::SeqCst) {
                if w2.requested() {
                    w2.park(id);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            w2.unregister(id);
        });
        in_hook_rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the first pause reached its resume hook");
        let (done, done_rx) = channel();
        let stoppers: Vec<_> = (0..2)
            .map(|_| {
                let (w, done) = (w.clone(), done.clone());
                std::thread::spawn(move || {
                    let id = w.register();
                    // Another's pause may come first: then stop again.
                    while !w.stop(id) {}
                    done.send(()).unwrap();
                    w.resume();
                    w.unregister(id);
                })
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(60);
        while w.resume_waiters.load(Ordering::SeqCst) < 2 {
            assert!(Instant::now() < deadline, "both stoppers wait for the hook");
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(
            done_rx.try_recv(),
            Err(std::sync::mpsc::TryRecvError::Empty),
            "a pause started while the previous one's resume hook ran"
        );
        release.send(()).unwrap();
        for _ in 0..2 {
            // A lost wake-up fails here instead of hanging the test.
            assert_ne!(
                done_rx.recv_timeout(Duration::from_secs(60)),
                Err(RecvTimeoutError::Timeout),
                "a stopper never got its pause"
            );
        }
        finish.store(true, Ordering::SeqCst);
        first.join().unwrap();
        for t in stoppers {
            t.join().unwrap();
        }
        assert_eq!(w.active(), 0);
        assert_eq!(w.resume_waiters.load(Ordering::SeqCst), 0);
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
