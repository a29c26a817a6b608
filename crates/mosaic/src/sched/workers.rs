//! GC worker threads: a fixed pool created with the heap and parked between
//! collections, and the one scheduling primitive the collector needs — a
//! *phase*.
//!
//! [`Workers::run`] calls `job(i)` at most once on every worker: `i = 0`
//! on the calling thread (the collecting mutator works too), `1..count` on
//! the pool's threads that take the phase before the caller's own call has
//! returned. It returns when every call has returned, so a job may borrow
//! from the caller's stack. A collection is a sequence of phases (mark,
//! release, ...), each a function that shares its work out itself as it
//! goes (work stealing for marking, an atomic cursor over pages for
//! release), so that the caller alone can finish it.
//!
//! The pool's threads run every job inside a wrapper given to
//! [`Workers::new`] (the collector passes the one that marks the thread as
//! inside a pause, `collect/callbacks.rs`): this layer imports nothing of
//! the collector's.
//!
//! Between the phases of one pause the pool's threads *linger*: after a
//! job they spin for up to [`LINGER`] watching for the next phase, and the
//! caller of `run` spins up to as long for them to finish, before either
//! sleeps on a condition variable. A pause's phases follow each other
//! within tens of microseconds, and on a virtual machine a sleeping
//! thread's CPU halts and takes 20–500 µs to wake (measured on the 2-vCPU
//! machine of BENCHMARKS.md): one sleep and wake per phase, each way, was
//! a fifth of a small parallel pause. The spins do not yield (unless the
//! pool's threads outnumber the CPUs): on a machine other programs load, a
//! yield hands the CPU to one of them for a whole time slice, several
//! milliseconds in the middle of the pause.
//!
//! A woken thread may also land on the CPU of the thread that woke it: when
//! the wake comes while every CPU looks busy (a stopped mutator is still
//! leaving its CPU), or when the guest kernel counts a halted vCPU as
//! preempted. A pool thread that finds itself on the caller's CPU moves
//! off it (`os::step_off_cpu`: its own affinity mask less that CPU,
//! restored after) before it takes the job; if it comes only once the
//! caller's share is done, it skips the phase. [`Workers::rest`] (the end
//! of the pause) sends lingering threads to sleep at once, so they do not
//! hold a CPU a resuming mutator wants. Lingering changes only timing: a
//! thread that gives up sleeps on the same generation check as before.
//!
//! Outside pauses the pool's first thread may run one *background job*
//! ([`Workers::set_background`], started by [`Workers::kick_background`]):
//! the collector's sweeping ahead of the mutators on a CPU they leave idle.
//! The job is handed a `stop` question that turns true as soon as a phase
//! is published or the job is withdrawn, and must return soon after (it
//! asks between pages); the thread then takes the phase as usual.
//! [`Workers::clear_background`] returns only once no thread runs the job.
//!
//! A pool thread that arrives after the caller's share has returned skips
//! the phase instead of being waited for: on a machine that other programs
//! load, a woken pool thread may wait a whole time slice for a CPU, and
//! the pause does not wait with it.
//!
//! Invariant: a job pointer handed to the pool is used only by a thread
//! that took it under the pool's lock while it was published (counted in
//! `running` from then until it is done), and `run` withdraws it and waits
//! for `running` to fall to zero before it returns (or unwinds) — which is
//! what makes erasing the job's lifetime sound. A panicking job is caught
//! on its thread; the first panic is resumed from `run` after every worker
//! that took the job has finished.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{
    AtomicBool, AtomicU64, AtomicUsize,
    Ordering::{Acquire, Relaxed, Release},
};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

/// The job of one phase, as the pool's threads see it.
type Job = dyn Fn(usize) + Sync;

/// Runs a pool thread's share of a phase: it must call the function it is
/// given, once.
pub type Around = fn(&dyn Fn());

/// The background job: called with a `stop` question it asks between
/// pieces of work, returning once it has none left or `stop()` is true.
pub type Background = dyn Fn(&dyn Fn() -> bool) + Send + Sync;

/// How long a pool thread spins for the next phase after a job, and the
/// caller of [`Workers::run`] for the pool's threads to finish, before
/// sleeping.
pub const LINGER: Duration = Duration::from_micros(150);

/// A pool of `count - 1` GC threads plus the caller of [`Workers::run`].
pub struct Workers {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    count: usize,
    /// Phases run on the caller alone ([`Workers::set_serial`]).
    serial: AtomicBool,
    /// In a child process after `fork`: the pool's threads do not exist.
    forked: AtomicBool,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the pool's threads: a new phase, or shutdown.
    wake: Condvar,
    /// Wakes the caller of `run`: the last thread finished its job.
    done: Condvar,
    /// Wraps every job a pool thread runs.
    around: Around,
    /// `State::generation`, readable without the lock (lingering threads).
    published: AtomicU64,
    /// `State::running`, readable without the lock (a lingering caller).
    left: AtomicUsize,
    /// Set by every `run`, cleared by [`Workers::rest`]: pool threads may
    /// linger for the next phase.
    in_pause: AtomicBool,
    /// The CPU the caller of `run` was on when it published the phase
    /// (`usize::MAX`: unknown).
    caller_cpu: AtomicUsize,
    /// The background job, if any ([`Workers::set_background`]).
    background: Mutex<Option<Arc<Background>>>,
    /// Asked for by [`Workers::kick_background`], not yet started.
    bg_kicked: AtomicBool,
    /// Set while the first pool thread runs the background job (set under
    /// the `background` lock, so [`Workers::clear_background`] sees it).
    bg_running: AtomicBool,
    /// Withdrawing the job: a running one stops at its next question.
    bg_cancel: AtomicBool,
    /// [`Workers::suspend_background`]: no run starts until resumed.
    bg_suspended: AtomicBool,
    /// The pool's threads outnumber the CPUs the process may use: a thread
    /// that spins for another yields now and then (see [`linger`]).
    oversubscribed: bool,
}

struct State {
    /// Bumped for every phase; a thread runs each generation's job once.
    generation: u64,
    /// The current phase's job, lifetime erased (see the module invariant).
    job: Option<JobPtr>,
    /// Pool threads that took the current job and have not finished it.
    running: usize,
    /// Pool threads asleep on `wake` (not lingering).
    sleeping: usize,
    shutdown: bool,
    /// The first panic of a pool thread's job in the current phase.
    panic: Option<Box<dyn Any + Send>>,
}

#[derive(Clone, Copy)]
struct JobPtr(*const Job);

// SAFETY: the pointee is `Sync` (`Job: Sync`), so sharing the pointer
// between threads is sharing a `&Job`; its lifetime is the module invariant.
unsafe impl Send for JobPtr {}

impl Workers {
    /// A pool of `count` workers (at least 1): `count - 1` threads named
    /// `mosaic-gc-N`, each running its jobs inside `around`. Fails only if
    /// a thread cannot be spawned.
    pub fn new(count: usize, around: Around) -> std::io::Result<Self> {
        let count = count.max(1);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                generation: 0,
                job: None,
                running: 0,
                sleeping: 0,
                shutdown: false,
                panic: None,
            }),
            wake: Condvar::new(),
            done: Condvar::new(),
            around,
            published: AtomicU64::new(0),
            left: AtomicUsize::new(0),
            in_pause: AtomicBool::new(false),
            caller_cpu: AtomicUsize::new(usize::MAX),
            background: Mutex::new(None),
            bg_kicked: AtomicBool::new(false),
            bg_running: AtomicBool::new(false),
            bg_cancel: AtomicBool::new(false),
            bg_suspended: AtomicBool::new(false),
            oversubscribed: count > std::thread::available_parallelism().map_or(1, |n| n.get()),
        });
        let mut workers = Workers {
            shared,
            threads: Vec::with_capacity(count - 1),
            count,
            serial: AtomicBool::new(false),
            forked: AtomicBool::new(false),
        };
        for i in 1..count {
            let shared = workers.shared.clone();
            let t = std::thread::Builder::new()
                .name(format!("mosaic-gc-{i}"))
                .spawn(move || {
                    // Not the traps of the thread that made the heap
                    // (`os/float_env.rs`).
                    crate::os::reset_float_env();
                    worker_loop(&shared, i)
                })?;
            workers.threads.push(t);
        }
        Ok(workers)
    }

    /// Workers the current phases run on, the caller of `run` included:
    /// the pool's size, or 1 while [`Workers::set_serial`] is on.
    pub fn count(&self) -> usize {
        if self.serial.load(Relaxed) || self.forked.load(Relaxed) {
            1
        } else {
            self.count
        }
    }

    /// Whether the pool's threads outnumber the CPUs the process may use
    /// (so that a spinning worker may hold the CPU a busy one waits for).
    pub fn oversubscribed(&self) -> bool {
        self.shared.oversubscribed
    }

    /// Workers in the pool, the caller of `run` included, whether or not
    /// [`Workers::set_serial`] is on (1 in a child after `fork`).
    pub fn pool_size(&self) -> usize {
        if self.forked.load(Relaxed) {
            1
        } else {
            self.count
        }
    }

    /// Whether the next phases run on the calling thread alone (the pool
    /// threads stay parked): for a collection too small to repay waking
    /// them. Set between phases only (the collector sets it at the start
    /// of a pause).
    pub fn set_serial(&self, serial: bool) {
        self.serial.store(serial, Relaxed);
    }

    /// Runs `job(0)` on this thread and `job(i)` on each pool thread `i`
    /// that takes the phase before `job(0)` has returned; returns when
    /// those are done. If any call panicked, resumes the first panic then.
    /// A pool thread that comes later skips the phase. For phases whose work
    /// is shared out as it goes (a cursor over chunks, work stealing), so
    /// that `job(0)` returns only once no work is left to take: the pause
    /// then does not wait for a thread the kernel has not run yet (on a
    /// machine other programs load, a time slice of theirs).
    pub fn run(&self, job: &(dyn Fn(usize) + Sync)) {
        if self.count() == 1 {
            job(0);
            return;
        }
        // SAFETY: only the lifetime is erased. The pointer is published
        // below and withdrawn (`st.job = None`) before this function
        // returns or unwinds, which it does only once `running` is zero
        // (its own call is inside `catch_unwind`): a pool thread uses it
        // only after taking it under the lock, counted in `running`.
        let erased: *const Job =
            unsafe { std::mem::transmute::<&(dyn Fn(usize) + Sync), &'static Job>(job) };
        {
            let mut st = self.shared.state.lock();
            st.generation += 1;
            st.job = Some(JobPtr(erased));
            st.running = 0;
            self.shared.left.store(st.running, Relaxed);
            let cpu = crate::os::current_cpu().unwrap_or(usize::MAX);
            self.shared.caller_cpu.store(cpu, Relaxed);
            self.shared.in_pause.store(true, Relaxed);
            self.shared.published.store(st.generation, Release);
            // (Wakes only threads that sleep: lingering ones see
            // `published` change.)
            if st.sleeping > 0 {
                self.shared.wake.notify_all();
            }
        }
        // No yield for a woken thread the kernel may have queued on this
        // CPU: if it comes only after this thread's share, it skips the
        // phase (nothing waits for it), while a yield on a machine other
        // programs load hands this CPU to one of them for a time slice.
        let mine = catch_unwind(AssertUnwindSafe(|| job(0)));
        // Closed: threads that have not taken it skip it.
        self.shared.state.lock().job = None;
        // The others usually end within microseconds of this thread (a
        // marking phase ends when all are idle): spin before sleeping.
        linger(self.shared.oversubscribed, || {
            self.shared.left.load(Acquire) == 0
        });
        let theirs = {
            let mut st = self.shared.state.lock();
            while st.running > 0 {
                self.shared.done.wait(&mut st);
            }
            st.job = None;
            st.panic.take()
        };
        if let Err(p) = mine {
            resume_unwind(p);
        }
        if let Some(p) = theirs {
            resume_unwind(p);
        }
    }
}

impl Workers {
    /// Installs the background job (replacing any; see the module docs).
    /// A pool of one worker never runs it.
    pub fn set_background(&self, job: Arc<Background>) {
        self.shared.bg_cancel.store(false, Release);
        *self.shared.background.lock() = Some(job);
    }

    /// Withdraws the background job and returns once no thread runs it:
    /// after this, nothing it borrows is used again.
    pub fn clear_background(&self) {
        self.shared.bg_cancel.store(true, Release);
        let job = self.shared.background.lock().take();
        self.wait_background_idle();
        // Dropped after the running thread let go of its clone (its
        // `bg_running` store, which the wait acquired, follows that drop),
        // so this drop sees the other one.
        drop(job);
    }

    /// Until the next [`Workers::resume_background`], no background run
    /// starts; returns once none runs (a running one returns at its next
    /// `stop` question, which a stopped world answers with true). Before
    /// `fork`: the job then holds no lock and no count for the child to
    /// inherit.
    pub fn suspend_background(&self) {
        self.shared.bg_suspended.store(true, Release);
        self.shared.bg_kicked.store(false, Relaxed);
        // A thread about to start a run decides under this lock: after
        // this it has either set `bg_running` (waited for below) or will
        // see `bg_suspended`.
        drop(self.shared.background.lock());
        self.wait_background_idle();
    }

    /// Ends [`Workers::suspend_background`] (the next kick starts a run).
    pub fn resume_background(&self) {
        self.shared.bg_suspended.store(false, Release);
    }

    fn wait_background_idle(&self) {
        spin_until(|| !self.shared.bg_running.load(Acquire));
    }

    /// Asks the first pool thread to run the background job once it has
    /// no phase to run (waking it if it sleeps). Does nothing without a job
    /// or a pool thread (one worker, or a child after `fork`).
    pub fn kick_background(&self) {
        if self.count < 2 || self.forked.load(Relaxed) || self.shared.background.lock().is_none() {
            return;
        }
        let cpu = crate::os::current_cpu().unwrap_or(usize::MAX);
        self.shared.caller_cpu.store(cpu, Relaxed);
        self.shared.bg_kicked.store(true, Release);
        // Under the lock: a thread that looked at `bg_kicked` before it was
        // set is asleep on `wake` by now, and gets the notification.
        let st = self.shared.state.lock();
        if st.sleeping > 0 {
            self.shared.wake.notify_all();
        }
    }

    /// The pause's last phase has run: lingering pool threads sleep now
    /// instead of spinning out [`LINGER`] on a CPU the world is about to
    /// want back.
    pub fn rest(&self) {
        self.shared.in_pause.store(false, Relaxed);
    }

    /// In the child of a `fork`, where only the forking thread exists:
    /// every phase runs on the caller from now on, and the pool's threads
    /// (which do not exist here) are never woken or joined.
    pub fn after_fork_child(&self) {
        self.forked.store(true, Relaxed);
        // The thread that ran the background job, if one did, is not here.
        self.shared.bg_running.store(false, Release);
        self.shared.bg_kicked.store(false, Relaxed);
        if self.shared.background.is_locked() {
            // SAFETY: only this thread exists in the child, so the lock's
            // holder was a thread of the parent that is not here (it would
            // never release it).
            unsafe { self.shared.background.force_unlock() };
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.clear_background();
        if self.forked.load(Relaxed) {
            // Their handles name threads of the parent process.
            std::mem::forget(std::mem::take(&mut self.threads));
            return;
        }
        self.shared.state.lock().shutdown = true;
        self.shared.wake.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn worker_loop(shared: &Shared, index: usize) {
    // Workers run only in pauses: what their thread-locals first ask of the
    // C library (`malloc`, the destructor list) happens now instead.
    super::threads::prepare_current();
    let mut seen = 0;
    let mut st = shared.state.lock();
    loop {
        if st.shutdown {
            return;
        }
        if st.generation == seen {
            if shared.in_pause.load(Relaxed) {
                // Within a pause the next phase is usually microseconds
                // away: watch for it before sleeping (module docs).
                drop(st);
                linger(shared.oversubscribed, || {
                    shared.published.load(Acquire) != seen || !shared.in_pause.load(Relaxed)
                });
                st = shared.state.lock();
                if st.generation == seen && !st.shutdown && !background_due(shared, index) {
                    sleep(shared, &mut st);
                }
            } else if index == 1 && background_due(shared, index) {
                drop(st);
                run_background(shared, seen);
                st = shared.state.lock();
            } else {
                sleep(shared, &mut st);
            }
            continue;
        }
        seen = st.generation;
        if st.job.is_none() {
            // (A phase the caller closed before this thread came.)
            continue;
        }
        // Woken onto the caller's CPU (where the kernel may put a waking
        // thread when the other CPUs look busy or their vCPU is halted),
        // this thread would only take turns with the caller: move, before
        // taking the job (on a loaded machine the move may wait for the
        // other CPU a while, and a taken job is waited for).
        let caller = shared.caller_cpu.load(Relaxed);
        let off = if crate::os::current_cpu() == Some(caller) {
            drop(st);
            let off = crate::os::step_off_cpu(caller);
            st = shared.state.lock();
            off
        } else {
            None
        };
        let job = match st.job {
            Some(JobPtr(job)) if st.generation == seen => job,
            _ => {
                // Closed meanwhile (or a newer phase is out: the loop
                // takes it). The old mask back outside the lock.
                drop(st);
                drop(off);
                st = shared.state.lock();
                continue;
            }
        };
        st.running += 1;
        shared.left.store(st.running, Release);
        drop(st);
        // SAFETY: `run` keeps the job alive until `running` reaches zero,
        // which happens only after this call returns (decrement below).
        let r = catch_unwind(AssertUnwindSafe(|| {
            (shared.around)(&|| unsafe { (*job)(index) })
        }));
        // The old mask back before the lock: the caller may be spinning
        // for `left` and then want the lock at once.
        drop(off);
        st = shared.state.lock();
        if let Err(p) = r {
            st.panic.get_or_insert(p);
        }
        st.running -= 1;
        shared.left.store(st.running, Release);
        if st.running == 0 {
            shared.done.notify_one();
        }
    }
}

/// Whether the background job was asked for and this thread (the first
/// pool thread) should run it.
fn background_due(shared: &Shared, index: usize) -> bool {
    index == 1
        && shared.bg_kicked.load(Acquire)
        && !shared.in_pause.load(Relaxed)
        && !shared.bg_suspended.load(Relaxed)
}

/// Runs the background job once, if it is still installed, until it
/// returns; `seen` is the last phase this thread ran (a newer one stops
/// the job).
fn run_background(shared: &Shared, seen: u64) {
    shared.bg_kicked.store(false, Relaxed);
    let job = {
        let slot = shared.background.lock();
        if shared.bg_suspended.load(Acquire) {
            return;
        }
        let Some(job) = slot.clone() else {
            return;
        };
        shared.bg_running.store(true, Relaxed);
        job
    };
    // Not on the CPU of the thread that asked (a mutator about to run on).
    let caller = shared.caller_cpu.load(Relaxed);
    let off = if crate::os::current_cpu() == Some(caller) {
        crate::os::step_off_cpu(caller)
    } else {
        None
    };
    let stop = || shared.published.load(Acquire) != seen || shared.bg_cancel.load(Acquire);
    // A panic is the job's own bug: it ends this run, never the pool.
    let _ = catch_unwind(AssertUnwindSafe(|| job(&stop)));
    drop(off);
    drop(job);
    shared.bg_running.store(false, Release);
}

/// Sleeps on `wake`, counted in `sleeping` (so that `run` knows whether
/// it woke anyone).
fn sleep(shared: &Shared, st: &mut MutexGuard<'_, State>) {
    st.sleeping += 1;
    shared.wake.wait(st);
    st.sleeping -= 1;
}

/// How long [`spin_until`] spins before it yields the CPU now and then.
const SPIN_FIRST: Duration = Duration::from_micros(100);

/// Spins until `done()` (for a wait of microseconds on another thread's
/// short piece of work), yielding the CPU now and then once [`SPIN_FIRST`]
/// has passed: the thread waited for may be queued on this CPU. Not
/// before: on a machine that other programs load, a yield hands the CPU to
/// one of them for a whole time slice.
pub fn spin_until(done: impl Fn() -> bool) {
    let start = Instant::now();
    let mut spins = 0u32;
    while !done() {
        spins = spins.wrapping_add(1);
        if spins % 64 == 0 && start.elapsed() >= SPIN_FIRST {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Spins until `done()` or [`LINGER`] has passed. It yields the CPU now
/// and then only when the pool's threads outnumber the CPUs
/// (`oversubscribed`: a thread that wants this CPU may be queued on it);
/// otherwise a yield gains nothing, and a program that loads the machine
/// would get the CPU for a time slice in the middle of the pause.
fn linger(oversubscribed: bool, done: impl Fn() -> bool) {
    let start = Instant::now();
    let mut spins = 0u32;
    while !done() {
        spins = spins.wrapping_add(1);
        if spins % 64 == 0 {
            if start.elapsed() >= LINGER {
                return;
            }
            if oversubscribed {
                std::thread::yield_now();
            }
        } else {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

    /// In the caller's share (`i == 0`): waits until `arrived` counts
    /// `n` workers, so that every pool thread takes the phase (one that
    /// came after the caller's share returned would skip it).
    fn wait_for_all(i: usize, arrived: &AtomicUsize, n: usize) {
        arrived.fetch_add(1, Relaxed);
        if i == 0 {
            let t = Instant::now();
            while arrived.load(Relaxed) < n {
                assert!(
                    t.elapsed() < Duration::from_secs(30),
                    "a pool thread never came"
                );
                std::hint::spin_loop();
            }
        }
    }

    #[test]
    fn a_serial_phase_runs_on_the_caller_alone() {
        let w = Workers::new(3, |f| f()).unwrap();
        let caller = std::thread::current().id();
        let runs = AtomicUsize::new(0);
        w.set_serial(true);
        assert_eq!(w.count(), 1);
        w.run(&|i| {
            assert_eq!((i, std::thread::current().id()), (0, caller));
            runs.fetch_add(1, Relaxed);
        });
        assert_eq!(runs.load(Relaxed), 1);
        w.set_serial(false);
        assert_eq!(w.count(), 3);
        let arrived = AtomicUsize::new(0);
        w.run(&|i| {
            wait_for_all(i, &arrived, 3);
            runs.fetch_add(1, Relaxed);
        });
        assert_eq!(runs.load(Relaxed), 4);
    }

    #[test]
    fn every_worker_runs_each_phase_once() {
        let w = Workers::new(4, |f| f()).unwrap();
        assert_eq!(w.count(), 4);
        let hits: Vec<AtomicUsize> = (0..4).map(|_| AtomicUsize::new(0)).collect();
        for _ in 0..100 {
            let arrived = AtomicUsize::new(0);
            w.run(&|i| {
                wait_for_all(i, &arrived, 4);
                hits[i].fetch_add(1, Relaxed);
            });
        }
        assert!(hits.iter().all(|h| h.load(Relaxed) == 100));
    }

    #[test]
    fn phases_reach_lingering_resting_and_sleeping_workers_alike() {
        // Back to back (the pool's threads linger), after `rest` (they
        // sleep at once) and after the linger ran out without `rest`: each
        // phase runs once on every worker, and each sees the phase it was
        // published with. A lost wake-up fails the test (a deadline)
        // instead of hanging it; so does a `run` that skips the wake of a
        // sleeping thread.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let w = Workers::new(3, |f| f()).unwrap();
            let hits: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
            let phase = AtomicUsize::new(0);
            for round in 0..60 {
                phase.store(round, Relaxed);
                let arrived = AtomicUsize::new(0);
                w.run(&|i| {
                    wait_for_all(i, &arrived, 3);
                    assert_eq!(phase.load(Relaxed), round);
                    hits[i].fetch_add(1, Relaxed);
                });
                match round % 3 {
                    0 => {}
                    1 => w.rest(),
                    _ => std::thread::sleep(LINGER * 3),
                }
            }
            let counts: Vec<usize> = hits.iter().map(|h| h.load(Relaxed)).collect();
            let _ = tx.send((counts, w.shared.left.load(Relaxed)));
        });
        let (counts, left) = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("every phase ends (no worker missed a wake-up)");
        assert_eq!(counts, vec![60; 3]);
        assert_eq!(left, 0);
    }

    #[test]
    fn a_job_may_borrow_the_callers_stack_and_sees_its_writes() {
        let w = Workers::new(3, |f| f()).unwrap();
        let total = AtomicUsize::new(0);
        let data = vec![1usize; 3000];
        let arrived = AtomicUsize::new(0);
        w.run(&|i| {
            wait_for_all(i, &arrived, 3);
            let s: usize = data[i * 1000..(i + 1) * 1000].iter().sum();
            total.fetch_add(s, Relaxed);
        });
        assert_eq!(total.load(Relaxed), 3000);
    }

    #[test]
    fn a_panic_on_a_pool_thread_resumes_after_every_worker_is_done() {
        let w = Workers::new(3, |f| f()).unwrap();
        let finished = AtomicUsize::new(0);
        let arrived = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            w.run(&|i| {
                wait_for_all(i, &arrived, 3);
                if i == 2 {
                    panic!("worker two");
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
                finished.fetch_add(1, Relaxed);
            })
        }));
        let msg = *r.unwrap_err().downcast::<&str>().unwrap();
        assert_eq!(msg, "worker two");
        assert_eq!(finished.load(Relaxed), 2, "the others ran to the end");
        // The pool still works.
        let n = AtomicUsize::new(0);
        let arrived = AtomicUsize::new(0);
        w.run(&|i| {
            wait_for_all(i, &arrived, 3);
            n.fetch_add(1, Relaxed);
        });
        assert_eq!(n.load(Relaxed), 3);
    }

    #[test]
    fn the_background_job_runs_when_kicked_yields_to_a_phase_and_is_withdrawn() {
        let w = Workers::new(2, |f| f()).unwrap();
        let runs = Arc::new(AtomicUsize::new(0));
        let stopped = Arc::new(AtomicUsize::new(0));
        let (r, st) = (runs.clone(), stopped.clone());
        // The job works until asked to stop: only a phase (or withdrawal)
        // ends it.
        w.set_background(Arc::new(move |stop: &dyn Fn() -> bool| {
            r.fetch_add(1, Relaxed);
            let t = Instant::now();
            while !stop() {
                assert!(
                    t.elapsed() < Duration::from_secs(30),
                    "stop never turned true"
                );
                std::hint::spin_loop();
            }
            st.fetch_add(1, Relaxed);
        }));
        let wait_for = |what: &AtomicUsize, n: usize| {
            let t = Instant::now();
            while what.load(Relaxed) < n {
                assert!(t.elapsed() < Duration::from_secs(30), "the job did not run");
                std::thread::sleep(Duration::from_millis(1));
            }
        };
        w.kick_background();
        wait_for(&runs, 1);
        // A phase stops the job; every worker still runs the phase once.
        let hits = AtomicUsize::new(0);
        let arrived = AtomicUsize::new(0);
        w.run(&|i| {
            wait_for_all(i, &arrived, 2);
            hits.fetch_add(1, Relaxed);
        });
        assert_eq!(hits.load(Relaxed), 2);
        assert_eq!(
            stopped.load(Relaxed),
            1,
            "the job returned before the phase ran"
        );
        w.rest();
        // Kicked again, it runs again; withdrawn, it stops and is gone.
        w.kick_background();
        wait_for(&runs, 2);
        w.clear_background();
        assert_eq!(stopped.load(Relaxed), 2);
        assert!(!w.shared.bg_running.load(Relaxed));
        w.kick_background();
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(runs.load(Relaxed), 2, "a withdrawn job never runs");
    }

    #[test]
    fn a_phase_does_not_wait_for_a_pool_thread_that_has_not_come() {
        // The pool's thread is held in the background job, which ignores
        // `stop` for a while (as a thread the kernel has not run yet): the
        // caller's share ends at once, so the phase ends without it, and
        // the thread skips that phase when it comes.
        let w = Workers::new(2, |f| f()).unwrap();
        let release = Arc::new(AtomicBool::new(false));
        let held = Arc::new(AtomicUsize::new(0));
        let (r, h) = (release.clone(), held.clone());
        w.set_background(Arc::new(move |_stop: &dyn Fn() -> bool| {
            h.fetch_add(1, Relaxed);
            let t = Instant::now();
            while !r.load(Acquire) {
                assert!(t.elapsed() < Duration::from_secs(30), "never released");
                std::thread::sleep(Duration::from_millis(1));
            }
        }));
        w.kick_background();
        let t = Instant::now();
        while held.load(Relaxed) == 0 {
            assert!(t.elapsed() < Duration::from_secs(30), "the job did not run");
            std::thread::sleep(Duration::from_millis(1));
        }
        let ran = Mutex::new(Vec::new());
        w.run(&|i| ran.lock().push(i));
        assert_eq!(
            *ran.lock(),
            vec![0],
            "the phase ended with the caller's share"
        );
        release.store(true, Release);
        // The thread comes back, skips the closed phase, and takes the next.
        let ran = Mutex::new(Vec::new());
        let arrived = AtomicUsize::new(0);
        w.run(&|i| {
            wait_for_all(i, &arrived, 2);
            ran.lock().push(i);
        });
        let mut got = ran.into_inner();
        got.sort_unstable();
        assert_eq!(got, vec![0, 1]);
        w.clear_background();
    }

    #[test]
    fn one_worker_is_the_caller_alone() {
        let w = Workers::new(1, |f| f()).unwrap();
        let me = std::thread::current().id();
        w.run(&|i| {
            assert_eq!(i, 0);
            assert_eq!(std::thread::current().id(), me);
        });
    }
}
