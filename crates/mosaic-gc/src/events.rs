//! bdwgc's collection and thread events (`GC_set_on_collection_event`,
//! `GC_set_on_thread_event`), sent in bdwgc's order from Mosaic's pause.
//!
//! A collection sends `START` and `PRE_STOP_WORLD` before the first thread
//! is signalled (from the stop hook), `POST_STOP_WORLD` and `MARK_START`
//! once every thread has stopped (the core's `CollectionStart`),
//! `MARK_END` when marking is complete, `PRE_START_WORLD` at the end of
//! the pause, then `POST_START_WORLD`, `RECLAIM_START`, `RECLAIM_END` and
//! `END` once the world runs again (the resume hook). Mosaic sweeps lazily
//! in allocations, so the reclaim pair brackets nothing, as bdwgc's does
//! with lazy sweeping on. The thread callback gets `THREAD_SUSPENDED` for
//! each thread a pause signalled and `THREAD_UNSUSPENDED` for the same
//! threads after it (not for a thread held by `GC_suspend_thread`, as
//! bdwgc skips it), for every stop of the world: `GC_stop_world_external`
//! sends thread events but no collection events, as in bdwgc; stops bdwgc
//! makes without stopping the world (`fork`, enumerating the heap's
//! objects) send none.
//!
//! Invariant: only the thread that stopped the world sends events, between
//! its stop hook and its resume hook, and the core starts no pause until
//! the previous one's resume hook has returned, so `STATE` and `SUSPENDED`
//! are touched by one thread at a time and the program's callbacks never
//! run on two threads at once. Callbacks are the program's and must not
//! allocate (bdwgc calls them holding its allocation lock).

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::AtomicU8;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;

use parking_lot::Mutex;

// bdwgc's `GC_EventType`.
const START: c_int = 0;
const MARK_START: c_int = 1;
const MARK_END: c_int = 2;
const RECLAIM_START: c_int = 3;
const RECLAIM_END: c_int = 4;
const END: c_int = 5;
const PRE_STOP_WORLD: c_int = 6;
const POST_STOP_WORLD: c_int = 7;
const PRE_START_WORLD: c_int = 8;
const POST_START_WORLD: c_int = 9;
const THREAD_SUSPENDED: c_int = 10;
const THREAD_UNSUSPENDED: c_int = 11;

type CollectionFn = unsafe extern "C" fn(c_int);
type ThreadFn = unsafe extern "C" fn(c_int, *mut c_void);

static ON_COLLECTION: AtomicUsize = AtomicUsize::new(0);
static ON_THREAD: AtomicUsize = AtomicUsize::new(0);

/// Where the pause in progress is, as far as the collection events go.
static STATE: AtomicU8 = AtomicU8::new(IDLE);
/// No collection events sent for this pause (none is on, or it is not a
/// collection's).
const IDLE: u8 = 0;
/// `START` and `PRE_STOP_WORLD` sent.
const STOPPING: u8 = 1;
/// `POST_STOP_WORLD` and `MARK_START` sent.
const MARKING: u8 = 2;
/// `PRE_START_WORLD` sent.
const RESTARTING: u8 = 3;

/// The threads this pause signalled (`THREAD_UNSUSPENDED` goes to them).
static SUSPENDED: Mutex<Vec<libc::pthread_t>> = Mutex::new(Vec::new());

/// What the pause this thread starts sends: everything (a collection's).
const ALL: u8 = 0;
/// Thread events only (`GC_stop_world_external`).
const THREADS_ONLY: u8 = 1;
/// Nothing (a stop bdwgc makes without stopping the world).
const NONE: u8 = 2;

thread_local! {
    /// Which events the pause this thread starts sends.
    static SENDS: Cell<u8> = const { Cell::new(ALL) };
}

fn send(e: c_int) {
    let f = ON_COLLECTION.load(Relaxed);
    if f != 0 {
        // SAFETY: a `GC_on_collection_event_proc` the program set.
        let f: CollectionFn = unsafe { std::mem::transmute(f) };
        unsafe { f(e) };
    }
}

fn send_thread(e: c_int, t: libc::pthread_t) {
    let f = ON_THREAD.load(Relaxed);
    if f != 0 {
        // SAFETY: a `GC_on_thread_event_proc` the program set; bdwgc passes
        // the thread's `pthread_t` as its id.
        let f: ThreadFn = unsafe { std::mem::transmute(f) };
        unsafe { f(e, t as *mut c_void) };
    }
}

fn sending<R>(what: u8, f: impl FnOnce() -> R) -> R {
    let before = SENDS.with(|c| c.replace(what));
    let r = f();
    SENDS.with(|c| c.set(before));
    r
}

/// Runs `f` (which stops the world) as a stop that is not a collection:
/// thread events only.
pub fn not_collecting<R>(f: impl FnOnce() -> R) -> R {
    sending(THREADS_ONLY, f)
}

/// Runs `f` (which stops the world) sending no events: bdwgc does the
/// same without stopping the world.
pub fn silent<R>(f: impl FnOnce() -> R) -> R {
    sending(NONE, f)
}

/// The stop hook's first call for a pause, before any thread is signalled.
pub fn before_stop() {
    SUSPENDED.lock().clear();
    if SENDS.with(Cell::get) == ALL {
        STATE.store(STOPPING, Relaxed);
        send(START);
        send(PRE_STOP_WORLD);
    }
}

/// The stop hook signalled `t` (its first signal of the pause).
pub fn suspended(t: libc::pthread_t) {
    if ON_THREAD.load(Relaxed) != 0 && SENDS.with(Cell::get) != NONE {
        SUSPENDED.lock().push(t);
        send_thread(THREAD_SUSPENDED, t);
    }
}

/// Every thread has stopped and marking begins (the core's
/// `CollectionStart`).
pub fn marking() {
    if STATE.load(Relaxed) == IDLE {
        // A collection inside a stop that said it would not collect.
        send(START);
        send(PRE_STOP_WORLD);
    }
    STATE.store(MARKING, Relaxed);
    send(POST_STOP_WORLD);
    send(MARK_START);
}

/// Marking is complete (the core's `MarkEnd`).
pub fn marked() {
    send(MARK_END);
}

/// The pause ends; the world restarts next (the core's `CollectionEnd`).
pub fn restarting() {
    STATE.store(RESTARTING, Relaxed);
    send(PRE_START_WORLD);
}

/// The resume hook: the world runs again.
pub fn resumed() {
    crate::roots::collecting(false);
    let threads = std::mem::take(&mut *SUSPENDED.lock());
    for t in threads {
        send_thread(THREAD_UNSUSPENDED, t);
    }
    match STATE.swap(IDLE, Relaxed) {
        IDLE => {}
        STOPPING => {
            // The pause collected nothing (another thread's collection
            // ended between the caller's look and its stop; rare, since
            // the core checks first): close the sequence.
            send(POST_STOP_WORLD);
            send(PRE_START_WORLD);
            send(POST_START_WORLD);
            send(END);
        }
        MARKING => {
            send(PRE_START_WORLD);
            send(POST_START_WORLD);
            send(END);
        }
        _ => {
            send(POST_START_WORLD);
            send(RECLAIM_START);
            send(RECLAIM_END);
            send(END);
        }
    }
}

/// In a child after `fork`: the parent's other threads are gone.
pub fn forget_suspended() {
    SUSPENDED.lock().clear();
    STATE.store(IDLE, Relaxed);
}

#[no_mangle]
pub extern "C" fn GC_set_on_collection_event(f: Option<CollectionFn>) {
    ON_COLLECTION.store(f.map_or(0, |f| f as usize), Relaxed);
}

#[no_mangle]
pub extern "C" fn GC_get_on_collection_event() -> Option<CollectionFn> {
    let f = ON_COLLECTION.load(Relaxed);
    // SAFETY: 0 or a function pointer stored by the setter.
    (f != 0).then(|| unsafe { std::mem::transmute::<usize, CollectionFn>(f) })
}

#[no_mangle]
pub extern "C" fn GC_set_on_thread_event(f: Option<ThreadFn>) {
    ON_THREAD.store(f.map_or(0, |f| f as usize), Relaxed);
}

#[no_mangle]
pub extern "C" fn GC_get_on_thread_event() -> Option<ThreadFn> {
    let f = ON_THREAD.load(Relaxed);
    // SAFETY: 0 or a function pointer stored by the setter.
    (f != 0).then(|| unsafe { std::mem::transmute::<usize, ThreadFn>(f) })
}
