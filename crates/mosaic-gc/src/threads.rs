//! Threads: registration, the stop signal, blocking regions and bdwgc's
//! pthread wrappers.
//!
//! Each registered thread owns a [`ThreadState`] (its mutator, with
//! conservative stack scanning, and its signal parker), reached through a
//! thread-local block (`tls::Local`: initial-exec TLS, no destructor, so
//! readable in a signal handler and during thread exit; the allocation
//! fast path reads it too) and kept in `REGISTRY` for the stop hook. A
//! collector's stop hook sends `SIGPWR` to every other registered thread;
//! the handler parks it unless the thread is inside one of this library's
//! calls (its call depth, `IN_GC`, > 0), in which case the call polls the
//! safepoint on its way out ([`with_mutator`]; `GC_malloc` after
//! [`fast_alloc`]). A pthread key's destructor unregisters a thread at
//! exit, on its second round, so that other keys' destructors may still
//! allocate in the first.
//!
//! Invariant: a thread in `REGISTRY` has a live `ThreadState` whose mutator
//! is registered with the heap; it leaves `REGISTRY` before the state is
//! dropped, with `IN_GC` raised so that no signal parks it meanwhile.

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{compiler_fence, AtomicPtr, AtomicU32, AtomicU8, Ordering::SeqCst};
use std::sync::OnceLock;

use mosaic::unstable::futex;
use mosaic::SignalParker;
use parking_lot::Mutex;

use crate::errno::ErrnoKept;
use crate::heap::{heap, Boehm, GcHeap, GcMutator};
pub use crate::tls::{fast_alloc, fast_take, stop_requested};
use crate::tls::{local, FastView};

/// bdwgc's signals on Linux: suspend and restart.
pub const SIG_SUSPEND: c_int = libc::SIGPWR;
pub const SIG_RESTART: c_int = libc::SIGXCPU;

pub struct ThreadState {
    pub mutator: GcMutator,
    parker: SignalParker<Boehm>,
    /// Rounds of the exit destructor seen.
    exit_rounds: Cell<u32>,
    /// `GC_suspend_thread` and its acknowledgement (`suspend.rs`).
    pub suspend: crate::suspend::SuspendState,
}

/// Runs `f` with `m` lent to the calls it makes (a finalizer's).
///
/// If `f` unregisters the thread (a finalizer calling
/// `GC_unregister_my_thread`), nothing is put back: the thread then has no
/// mutator and no fast path, not a stale view of a freed one.
pub fn lend<R>(m: &mut GcMutator, f: impl FnOnce() -> R) -> R {
    let l = local();
    let view = FastView::of(m);
    let cur = l.cur.get();
    let saved = (l.lent.replace(m), l.fast.replace(view));
    let r = f();
    if l.cur.get() == cur {
        l.lent.set(saved.0);
        l.fast.set(saved.1);
    }
    r
}

struct Entry(libc::pthread_t, *mut ThreadState);
// SAFETY: the pointer is only compared, and the pthread_t only signalled,
// from other threads; the state is used by its own thread only.
unsafe impl Send for Entry {}

static REGISTRY: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// bdwgc's main thread: the one that created the heap. The cold end of its
/// scanned stack is `GC_stackbottom`, which the program may move (Crystal
/// writes it at every fiber switch, to the fiber's stack); null once that
/// thread has unregistered.
static MAIN: AtomicPtr<ThreadState> = AtomicPtr::new(std::ptr::null_mut());
/// Makes `ts` (the heap's creator) the main thread; `GC_stackbottom` is
/// its stack's top unless the program set it already.
pub fn set_main(ts: *mut ThreadState) {
    MAIN.store(ts, SeqCst);
    if crate::data::stackbottom().is_null() {
        if let Some(top) = scanned_stack_top(ts) {
            crate::data::set_stackbottom(top as *mut std::ffi::c_char);
        }
    }
    sync_main_stackbottom();
}

/// Applies a `GC_stackbottom` the program wrote to the main thread's
/// scanned stack. Called by the collection's root scan, with the world
/// stopped, before the stacks are scanned (bdwgc reads the variable when
/// it pushes the stacks): the main thread cannot switch fibers meanwhile.
/// Holds the registry's lock, so the main thread cannot unregister (and
/// free its state) under it.
pub fn sync_main_stackbottom() {
    let _registry = REGISTRY.lock();
    let ts = MAIN.load(SeqCst);
    if ts.is_null() {
        return;
    }
    // Nothing else moves the main thread's scanned stack (`set_stack_bottom`
    // writes the variable too), so the variable is the whole state.
    let b = crate::data::stackbottom() as usize;
    if b != 0 {
        set_scanned_stack_top(ts, b);
    }
}

/// `GC_set_stackbottom` on `ts`: for the main thread, `GC_stackbottom`
/// follows, as in bdwgc.
pub fn set_stack_bottom(ts: *mut ThreadState, top: usize) {
    if ts == MAIN.load(SeqCst) {
        crate::data::set_stackbottom(top as *mut std::ffi::c_char);
    }
    set_scanned_stack_top(ts, top);
}
static KEY: OnceLock<libc::pthread_key_t> = OnceLock::new();

/// Sets up the stop signal, the stop hook and the exit key for `heap`
/// (once, when the heap is created; threads register on first use).
pub fn install(heap: &GcHeap) {
    // SAFETY: a handler that is async-signal-safe (see `on_suspend`), a
    // no-op for the restart signal, and a key whose destructor is ours.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_suspend as *const () as usize;
        sa.sa_flags = libc::SA_RESTART | libc::SA_SIGINFO;
        libc::sigfillset(&mut sa.sa_mask);
        // Let fatal signals through while parked.
        for s in [
            libc::SIGSEGV,
            libc::SIGBUS,
            libc::SIGILL,
            libc::SIGFPE,
            libc::SIGABRT,
        ] {
            libc::sigdelset(&mut sa.sa_mask, s);
        }
        libc::sigaction(SIG_SUSPEND, &sa, std::ptr::null_mut());
        let mut sr: libc::sigaction = std::mem::zeroed();
        sr.sa_sigaction = on_restart as *const () as usize;
        sr.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sr.sa_mask);
        libc::sigaction(SIG_RESTART, &sr, std::ptr::null_mut());
        let mut key: libc::pthread_key_t = 0;
        if libc::pthread_key_create(&mut key, Some(on_thread_exit)) == 0 {
            let _ = KEY.set(key);
        }
    }
    heap.set_stop_hook(Some(Box::new(stop_others)));
    heap.set_resume_hook(Some(Box::new(crate::events::resumed)));
    // SAFETY: plain functions; see `fork_prepare`.
    unsafe { libc::pthread_atfork(Some(auto_prepare), Some(auto_parent), Some(auto_child)) };
}

extern "C" fn on_restart(_: c_int) {}

/// Signal handler: parks the thread for the pause in progress.
extern "C" fn on_suspend(_: c_int, _: *mut libc::siginfo_t, _: *mut c_void) {
    // SAFETY: errno is thread-local; saved and restored around the handler.
    let saved = unsafe { *libc::__errno_location() };
    let l = local();
    if l.in_gc.get() == 0 {
        let ts = l.cur.get();
        if !ts.is_null() {
            // SAFETY: the state belongs to this thread and stays alive while
            // CUR points to it; the thread was interrupted outside every
            // call of this library (IN_GC is 0), so outside the heap.
            unsafe { (*ts).parker.park() };
            // SAFETY: as above; stays here while `GC_suspend_thread` says.
            unsafe { crate::suspend::in_handler(&(*ts).suspend, &(*ts).parker) };
        }
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = saved };
}

/// The pause (its stop sequence number) that last listed the segments.
static REFRESHED_FOR: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// The stop hook: signals every other registered thread. A collector calls
/// it again while some thread has not stopped (one that put the signal off
/// inside a call and left it without parking, see
/// `GC_call_with_alloc_lock`): parked threads ignore the repeat.
fn stop_others() {
    // The segments are listed before any thread stops (one could hold the
    // loader's lock), once per pause: on a retry some threads are
    // stopped already.
    let pause = heap().stop_sequence();
    let first = REFRESHED_FOR.swap(pause, SeqCst) != pause;
    if first {
        crate::roots::collecting(true);
        crate::events::before_stop();
        crate::control::run_start_callback();
        crate::roots::refresh();
    }
    // SAFETY: pthread_self has no preconditions.
    let me = unsafe { libc::pthread_self() };
    for e in REGISTRY.lock().iter() {
        // A thread in a blocking region is not signalled (as in bdwgc: its
        // system calls are not interrupted, the hook's retries included).
        // SAFETY: a registered thread's state is alive while it is listed.
        if unsafe { &*e.1 }.suspend.is_blocking() {
            continue;
        }
        // SAFETY: a registered thread has not exited (it leaves the registry
        // first).
        if unsafe { libc::pthread_equal(e.0, me) } == 0
            && unsafe { libc::pthread_kill(e.0, SIG_SUSPEND) } == 0
            && first
            // SAFETY: as above.
            && !unsafe { &*e.1 }.suspend.is_suspended()
        {
            crate::events::suspended(e.0);
        }
    }
}

/// Raises `IN_GC` for the scope: signals are deferred.
pub struct InGc;

impl InGc {
    #[inline(always)]
    pub fn enter() -> InGc {
        let l = local();
        l.in_gc.set(l.in_gc.get() + 1);
        compiler_fence(SeqCst);
        InGc
    }
}

impl Drop for InGc {
    #[inline(always)]
    fn drop(&mut self) {
        compiler_fence(SeqCst);
        let l = local();
        l.in_gc.set(l.in_gc.get() - 1);
    }
}

/// Runs `f` with the calling thread's mutator (registering the thread if
/// needed), signals deferred; then stops at the safepoint if a collection
/// waits for this thread. `errno` comes back as it was.
#[inline(always)]
pub fn with_mutator<R>(f: impl FnOnce(&mut GcMutator) -> R) -> R {
    let _errno = ErrnoKept::new();
    let l = local();
    let mut ts = l.cur.get();
    if ts.is_null() {
        ts = register_current();
    }
    let depth = l.in_gc.get();
    l.in_gc.set(depth + 1);
    compiler_fence(SeqCst);
    let lent = l.lent.get();
    let m = if lent.is_null() {
        // SAFETY: the thread's own state, alive while registered; the
        // reference ends with the call.
        unsafe { &mut (*ts).mutator }
    } else {
        // SAFETY: see `mutator_of`.
        unsafe { &mut *lent }
    };
    let r = f(m);
    compiler_fence(SeqCst);
    l.in_gc.set(depth);
    // SAFETY: the thread's own state; the flag lives as long as the heap.
    if depth == 0 && stop_requested() {
        poll(ts);
    }
    r
}

/// [`with_mutator`] without the safepoint on the way out: a collection that
/// asked this thread to stop meanwhile gets it by its next signal, a moment
/// later, not right where `f` returns. For the calls that stand for bdwgc's
/// allocation lock: their callers may finish a change to their own data
/// right after the lock is released (Guile relocates its VM stack in
/// `GC_call_with_alloc_lock` and updates its stack pointer after it), and
/// no collection may see the change half done.
pub fn with_mutator_no_stop<R>(f: impl FnOnce(&mut GcMutator) -> R) -> R {
    let _errno = ErrnoKept::new();
    let l = local();
    if l.cur.get().is_null() {
        register_current();
    }
    let _g = InGc::enter();
    // SAFETY: see `mutator_of`; the reference ends with the call.
    f(unsafe { mutator_of(l.cur.get()) })
}

/// The calling thread's mutator: its own, or the one lent to a running
/// finalizer (`lend`), reborrowed from the reference `run_finalizers` holds.
///
/// # Safety
/// `ts` is the calling thread's registered state; the reference must end
/// before the call that made it returns.
unsafe fn mutator_of<'a>(ts: *mut ThreadState) -> &'a mut GcMutator {
    let lent = local().lent.get();
    if lent.is_null() {
        // SAFETY: the caller's promise.
        unsafe { &mut (*ts).mutator }
    } else {
        // SAFETY: lent for the finalizer's duration, on this thread.
        unsafe { &mut *lent }
    }
}

/// [`poll`] for the calling thread, if it is registered (on the way out of
/// a call that did not go through [`with_mutator`]).
pub fn poll_current() {
    let ts = local().cur.get();
    if !ts.is_null() {
        let _errno = ErrnoKept::new();
        poll(ts);
    }
}

/// Parks here if a pause waits for this thread (on the way out of a call).
#[inline]
#[cold]
fn poll(ts: *mut ThreadState) {
    if local().in_gc.get() != 0 {
        return;
    }
    // SAFETY: as in `with_mutator`.
    if unsafe { &*ts }.parker.pause_requested() {
        let _g = InGc::enter();
        // SAFETY: see `mutator_of`.
        unsafe { mutator_of(ts) }.safepoint();
    }
}

/// Runs `f` (which takes locks of this library) with signals deferred, so
/// that no thread is ever stopped holding one of them while a collector
/// needs it (roots and finalizer data are read in the pause); then stops
/// at the safepoint if a collection waited meanwhile. For entry points
/// that do not need the thread's mutator.
pub fn guarded<R>(f: impl FnOnce() -> R) -> R {
    let _errno = ErrnoKept::new();
    let r = {
        let _g = InGc::enter();
        f()
    };
    let ts = local().cur.get();
    if !ts.is_null() {
        poll(ts);
    }
    r
}

/// Runs client code (a finalizer, a callback) from inside a call: signals
/// stop the thread there like anywhere in the program.
pub fn client_code<R>(f: impl FnOnce() -> R) -> R {
    let saved = local().in_gc.replace(0);
    compiler_fence(SeqCst);
    let r = f();
    compiler_fence(SeqCst);
    local().in_gc.set(saved);
    r
}

/// The calling thread's state, registering the thread first if needed.
#[inline]
pub fn current() -> *mut ThreadState {
    let p = local().cur.get();
    if !p.is_null() {
        return p;
    }
    register_current()
}

/// Whether the calling thread is registered.
pub fn is_registered() -> bool {
    !local().cur.get().is_null()
}

#[cold]
fn register_current() -> *mut ThreadState {
    let _errno = ErrnoKept::new();
    let heap = heap();
    // Creating the heap registers its creator: this thread, maybe.
    let p = local().cur.get();
    if !p.is_null() {
        return p;
    }
    let _g = InGc::enter();
    // Whatever calls the C library's `malloc` happens before the thread
    // joins the world (the core readies its own thread-locals and stack
    // bounds the same way): a collection may then stop other threads
    // inside `malloc`, and this one could not reach its safepoint. Setting
    // our key makes its slot (a `calloc` for a key past glibc's first 32);
    // the exit destructor ignores this placeholder.
    if let Some(&k) = KEY.get() {
        // SAFETY: our key; any non-null value other than the thread's state
        // is ignored by `on_thread_exit`.
        unsafe { libc::pthread_setspecific(k, std::ptr::from_ref(&KEY).cast()) };
    }
    let made = match heap.mutator() {
        // A thread-key destructor of an exiting thread registers it again
        // (bdwgc allows it): our own key's destructor, which runs in a later
        // round (`register_current` sets the key again), drops the state.
        // SAFETY: see above; `on_thread_exit` unregisters before the end.
        Err(mosaic::Error::ThreadExiting { .. }) => unsafe { heap.mutator_on_exiting_thread() },
        other => other,
    };
    let mut m = match made {
        Ok(m) => m,
        Err(e) => crate::control::abort_with(&format!(
            "mosaic-gc: cannot register thread {} with the collector: {e}",
            mosaic_thread_name()
        )),
    };
    let _ = m.set_conservative_stack(true);
    let parker = m.signal_parker();
    let requested = m.raw_fast_path().safepoint_requested.cast::<AtomicU8>();
    // SAFETY: pthread_self has no preconditions.
    let me = unsafe { libc::pthread_self() };
    let ts = Box::into_raw(Box::new(ThreadState {
        mutator: m,
        parker,
        exit_rounds: Cell::new(0),
        suspend: Default::default(),
    }));
    let l = local();
    l.cur.set(ts);
    l.requested.set(requested);
    // SAFETY: just made; this thread's own.
    l.fast.set(FastView::of(unsafe { &mut (*ts).mutator }));
    REGISTRY.lock().push(Entry(me, ts));
    if let Some(&k) = KEY.get() {
        // SAFETY: our key; the value is only read by `on_thread_exit`.
        unsafe { libc::pthread_setspecific(k, ts.cast()) };
    }
    ts
}

fn mosaic_thread_name() -> String {
    // SAFETY: gettid has no preconditions.
    format!("(tid {})", unsafe { libc::gettid() })
}

/// Unregisters the calling thread; whether it was registered.
pub fn unregister_current() -> bool {
    let _errno = ErrnoKept::new();
    let ts = local().cur.get();
    if ts.is_null() {
        return false;
    }
    let _g = InGc::enter();
    {
        let mut reg = REGISTRY.lock();
        reg.retain(|e| e.1 != ts);
        let _ = MAIN.compare_exchange(ts, std::ptr::null_mut(), SeqCst, SeqCst);
    }
    let l = local();
    l.fast.set(FastView::NONE);
    l.lent.set(std::ptr::null_mut());
    l.cur.set(std::ptr::null_mut());
    if let Some(&k) = KEY.get() {
        // SAFETY: our key.
        unsafe { libc::pthread_setspecific(k, std::ptr::null()) };
    }
    // SAFETY: created by `register_current` on this thread, out of the
    // registry and of CUR now: nothing else reaches it.
    drop(unsafe { Box::from_raw(ts) });
    true
}

/// The exit key's destructor: unregisters the thread on the second round,
/// so that other keys' destructors of the first round may still allocate.
unsafe extern "C" fn on_thread_exit(v: *mut c_void) {
    let ts = v.cast::<ThreadState>();
    if ts.is_null() || local().cur.get() != ts {
        return;
    }
    // SAFETY: this thread's registered state.
    let rounds = unsafe { &(*ts).exit_rounds };
    rounds.set(rounds.get() + 1);
    if rounds.get() == 1 {
        if let Some(&k) = KEY.get() {
            // SAFETY: our key: asks for one more destructor round.
            unsafe { libc::pthread_setspecific(k, v) };
        }
        return;
    }
    unregister_current();
}

/// `GC_do_blocking`: `f` runs with the thread detached: collections go on
/// without it, and the stack above this frame stays scanned.
pub fn do_blocking(f: impl FnOnce() -> *mut c_void) -> *mut c_void {
    let ts = current();
    let entered = {
        let _g = InGc::enter();
        // SAFETY: see `mutator_of`; each reference ends with its statement.
        unsafe { mutator_of(ts) }.enter_blocking().is_ok()
    };
    // SAFETY: the thread's own state.
    let suspend = unsafe { &(*ts).suspend };
    // Set only while detached (stop signals skip the thread then).
    if entered {
        suspend.set_blocking(true);
    }
    let r = client_code(f);
    // The program's errno from `f` (a system call's) is what it reads next.
    let _errno = ErrnoKept::new();
    if entered {
        // A thread suspended while it blocked stops here, still detached;
        // the flag is cleared only when no suspension is asked for (a
        // suspender that saw it set returned at once).
        suspend.leave_blocking_unsuspended();
        let _g = InGc::enter();
        // SAFETY: as above.
        let _ = unsafe { mutator_of(ts) }.leave_blocking();
    }
    poll(ts);
    r
}

/// Runs `f` with the registered thread `t`'s state, under the registry's
/// lock (so the thread cannot unregister meanwhile); `None` if `t` is not
/// registered.
pub fn with_thread<R>(t: libc::pthread_t, f: impl FnOnce(&ThreadState) -> R) -> Option<R> {
    // No stop signal may park this thread while it holds the registry.
    let _g = InGc::enter();
    let reg = REGISTRY.lock();
    let e = reg
        .iter()
        // SAFETY: pthread_equal has no preconditions.
        .find(|e| unsafe { libc::pthread_equal(e.0, t) } != 0)?;
    // SAFETY: a registered thread's state is alive while it is listed.
    Some(f(unsafe { &*e.1 }))
}

/// Runs `f` in a blocking region of the calling thread (collections go on
/// without it).
pub fn blocking_region(f: impl FnOnce()) {
    do_blocking(|| {
        f();
        std::ptr::null_mut()
    });
}

/// `GC_call_with_gc_active`: inside a blocking region, `f` runs attached.
pub fn with_gc_active(f: impl FnOnce() -> *mut c_void) -> *mut c_void {
    let ts = current();
    // SAFETY: see `mutator_of`; each reference ends with its statement.
    let blocking = unsafe { mutator_of(ts) }.is_blocking();
    // SAFETY: the thread's own state.
    let suspend = unsafe { &(*ts).suspend };
    if blocking {
        // Attached from here on: stop signals must reach the thread (and a
        // suspension asked for meanwhile holds it here first).
        suspend.leave_blocking_unsuspended();
        let _g = InGc::enter();
        // SAFETY: as above.
        let _ = unsafe { mutator_of(ts) }.leave_blocking();
    }
    let r = client_code(f);
    let _errno = ErrnoKept::new();
    if blocking {
        {
            let _g = InGc::enter();
            // SAFETY: as above.
            let _ = unsafe { mutator_of(ts) }.enter_blocking();
        }
        suspend.set_blocking(true);
    }
    r
}

/// The cold end of the stack scanned for a registered thread.
pub fn scanned_stack_top(ts: *mut ThreadState) -> Option<usize> {
    // SAFETY: a registered state (a handle the program got from us).
    unsafe { &*ts }.parker.stack_top()
}

/// Moves the cold end of the stack scanned for a registered thread.
pub fn set_scanned_stack_top(ts: *mut ThreadState, top: usize) {
    // SAFETY: as above; the parker is shared, its setter atomic.
    unsafe { &*ts }.parker.set_stack_top(top);
}

// ---- fork: the forking thread stops the world around it, so that no other
// thread is inside the collector's code (holding one of its locks, or
// malloc's, which a collector needs) when the process is copied. ----

extern "C" fn auto_prepare() {
    if crate::thread_api::automatic_fork_handling() {
        fork_prepare();
    }
}

extern "C" fn auto_parent() {
    if crate::thread_api::automatic_fork_handling() {
        fork_parent();
    }
}

extern "C" fn auto_child() {
    if crate::thread_api::automatic_fork_handling() {
        fork_child();
    }
}

/// Before `fork`: stops the world (see above).
pub fn fork_prepare() {
    let ts = current();
    std::mem::forget(InGc::enter());
    // SAFETY: this thread's own state.
    crate::events::silent(|| unsafe { &mut *ts }.mutator.prepare_fork());
    std::mem::forget(REGISTRY.lock());
}

/// After `fork`, in the parent.
pub fn fork_parent() {
    let ts = local().cur.get();
    if ts.is_null() {
        return;
    }
    // SAFETY: taken by this thread in `fork_prepare`.
    unsafe { REGISTRY.force_unlock() };
    // SAFETY: this thread's own state.
    unsafe { &mut *ts }.mutator.after_fork_parent();
    drop(InGc);
    poll(ts);
}

/// After `fork`, in the child: only this thread exists now.
pub fn fork_child() {
    let me = local().cur.get();
    if me.is_null() {
        return;
    }
    // SAFETY: this thread's own state.
    let st = unsafe { &mut *me };
    // SAFETY: pthread_self has no preconditions.
    let self_id = unsafe { libc::pthread_self() };
    {
        // SAFETY: taken by this thread in `fork_prepare`; threads of the
        // parent queued on it do not exist here (see World::after_fork_child).
        let mut reg = unsafe {
            parking_lot_core::unpark_all(
                REGISTRY.raw() as *const _ as usize,
                parking_lot_core::DEFAULT_UNPARK_TOKEN,
            );
            REGISTRY.make_guard_unchecked()
        };
        reg.retain(|e| e.1 == me);
        // The main thread was not copied, unless it forked.
        if MAIN.load(SeqCst) != me {
            MAIN.store(std::ptr::null_mut(), SeqCst);
        }
        for e in reg.iter_mut() {
            e.0 = self_id;
        }
    }
    crate::events::forget_suspended();
    st.mutator.after_fork_child();
    drop(InGc);
}

// ---- bdwgc's pthread wrappers (gc.h redirects to them under GC_THREADS) ----

struct Start {
    f: extern "C" fn(*mut c_void) -> *mut c_void,
    arg: *mut c_void,
    /// Set (and woken) once the new thread is registered.
    registered: std::sync::Arc<AtomicU32>,
}

/// Waits until `flag` is nonzero (a futex: a stop signal interrupts the
/// wait, which resumes).
fn wait_until_set(flag: &AtomicU32) {
    while flag.load(SeqCst) == 0 {
        futex::wait(flag, 0);
    }
}

/// Sets `flag` and wakes its waiter.
fn set_and_wake(flag: &AtomicU32) {
    flag.store(1, SeqCst);
    futex::wake_all(flag);
}

/// A new thread's first frame: registers, runs the client's start
/// routine, unregisters. `C-unwind`: `pthread_exit` and cancellation
/// unwind through it (the exit key unregisters then); it holds nothing
/// that needs dropping while the client runs.
extern "C-unwind" fn thread_start(p: *mut c_void) -> *mut c_void {
    let (f, arg, registered) = {
        // Our allocator's lock is never held by a stopped thread.
        let _g = InGc::enter();
        // SAFETY: boxed by `GC_pthread_create` for this thread alone.
        let start = unsafe { Box::from_raw(p.cast::<Start>()) };
        (start.f, start.arg, start.registered)
    };
    current();
    // The creator returns only now, as with bdwgc: the new thread is
    // listed (`GC_suspend_thread` right after the create finds it).
    set_and_wake(&registered);
    {
        let _g = InGc::enter();
        drop(registered);
    }
    // Registered: this stack (scanned from now on) holds `arg`.
    guarded(|| crate::roots::started(arg as usize));
    let r = f(std::hint::black_box(arg));
    unregister_current();
    r
}

#[no_mangle]
pub unsafe extern "C" fn GC_pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    f: extern "C" fn(*mut c_void) -> *mut c_void,
    arg: *mut c_void,
) -> c_int {
    let _errno = ErrnoKept::new();
    heap();
    // Until the new thread registers, only this library holds `arg`.
    guarded(|| crate::roots::starting(arg as usize));
    let registered = std::sync::Arc::new(AtomicU32::new(0));
    let p = Box::into_raw(Box::new(Start {
        f,
        arg,
        registered: registered.clone(),
    }));
    // SAFETY: the caller's arguments, passed on; the trampoline owns `p`.
    let rc = unsafe {
        libc::pthread_create(
            thread,
            attr,
            std::mem::transmute::<
                extern "C-unwind" fn(*mut c_void) -> *mut c_void,
                extern "C" fn(*mut c_void) -> *mut c_void,
            >(thread_start),
            p.cast(),
        )
    };
    if rc != 0 {
        // SAFETY: the thread was not created: the box is still ours.
        drop(unsafe { Box::from_raw(p) });
        guarded(|| crate::roots::started(arg as usize));
    } else {
        wait_until_set(&registered);
    }
    guarded(|| drop(registered));
    rc
}

#[no_mangle]
pub unsafe extern "C" fn GC_pthread_join(t: libc::pthread_t, ret: *mut *mut c_void) -> c_int {
    // Joining blocks: let collections proceed meanwhile.
    let r = do_blocking(|| {
        // SAFETY: the caller's arguments.
        unsafe { libc::pthread_join(t, ret) as usize as *mut c_void }
    });
    if r.is_null() {
        crate::suspend::forget(t);
    }
    r as usize as c_int
}

#[no_mangle]
pub unsafe extern "C" fn GC_pthread_detach(t: libc::pthread_t) -> c_int {
    // SAFETY: the caller's argument.
    unsafe { libc::pthread_detach(t) }
}

#[no_mangle]
pub unsafe extern "C" fn GC_pthread_cancel(t: libc::pthread_t) -> c_int {
    // SAFETY: the caller's argument.
    unsafe { libc::pthread_cancel(t) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn GC_pthread_exit(ret: *mut c_void) -> ! {
    unregister_current();
    // SAFETY: ends the calling thread, as asked.
    unsafe { libc::pthread_exit(ret) }
}

#[no_mangle]
pub unsafe extern "C" fn GC_pthread_sigmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    // The suspend signal is never blocked: a thread that blocked it could
    // not be stopped.
    if !set.is_null() && how != libc::SIG_UNBLOCK {
        // SAFETY: `set` is the caller's valid set, copied.
        let mut s = unsafe { *set };
        unsafe { libc::sigdelset(&mut s, SIG_SUSPEND) };
        return unsafe { libc::pthread_sigmask(how, &s, old) };
    }
    // SAFETY: the caller's arguments.
    unsafe { libc::pthread_sigmask(how, set, old) }
}
