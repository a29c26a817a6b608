//! `GC_suspend_thread`, `GC_resume_thread`, `GC_is_thread_suspended`: one
//! registered thread stopped at the program's request, for as long as it
//! likes, while collections go on.
//!
//! The suspender sets the target's flag and sends it the stop signal
//! (`SIGPWR`), then waits for the handler's acknowledgement, signalling
//! again every millisecond: a thread inside one of this library's calls
//! defers the signal, and takes a later one once it is out. In the handler
//! the thread stays until the flag is cleared, parking for every pause
//! that begins meanwhile (the stop signal is blocked while its handler
//! runs, so it polls instead; `nanosleep` is async-signal-safe). A thread
//! in a blocking region is not signalled: it stops where the region ends,
//! still detached. A thread that suspends itself waits in a blocking
//! region. Resuming clears the flag.
//!
//! Invariant: the acknowledgement is set only by the target's handler, and
//! cleared by it when it leaves; a suspender reads it only under the
//! registry's lock, so the target cannot have unregistered.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

use mosaic::SignalParker;
use parking_lot::Mutex;

use crate::heap::Boehm;
use crate::threads::{blocking_region, guarded, with_thread, SIG_SUSPEND};

/// Threads suspended after they ended (unregistered, not joined yet):
/// bdwgc marks those suspended too. Forgotten when resumed or joined.
static ENDED: Mutex<Vec<libc::pthread_t>> = Mutex::new(Vec::new());

/// Forgets `t` (joined: its id may be reused).
pub fn forget(t: libc::pthread_t) {
    // (Signals deferred while the lock is held, as for every lock here.)
    guarded(|| {
        // SAFETY: pthread_equal has no preconditions.
        ENDED
            .lock()
            .retain(|&e| unsafe { libc::pthread_equal(e, t) } == 0);
    });
}

fn ended(t: libc::pthread_t) -> bool {
    guarded(|| {
        // SAFETY: pthread_equal has no preconditions.
        ENDED
            .lock()
            .iter()
            .any(|&e| unsafe { libc::pthread_equal(e, t) } != 0)
    })
}

fn mark_ended(t: libc::pthread_t) {
    if !ended(t) {
        guarded(|| ENDED.lock().push(t));
    }
}

/// Per-thread suspension state.
#[derive(Default)]
pub struct SuspendState {
    suspended: AtomicBool,
    /// The thread is stopped in its handler for a suspension.
    ack: AtomicBool,
    /// The thread is inside `GC_do_blocking`'s region.
    blocking: AtomicBool,
}

const POLL: libc::timespec = libc::timespec {
    tv_sec: 0,
    tv_nsec: 1_000_000,
};

fn nap() {
    // SAFETY: nanosleep with a valid request and no remainder.
    unsafe { libc::nanosleep(&POLL, std::ptr::null_mut()) };
}

impl SuspendState {
    pub fn set_blocking(&self, on: bool) {
        self.blocking.store(on, SeqCst);
    }

    /// The thread is held by `GC_suspend_thread`.
    pub fn is_suspended(&self) -> bool {
        self.suspended.load(SeqCst)
    }

    /// The thread is inside a blocking region (detached: no signal needed).
    pub fn is_blocking(&self) -> bool {
        self.blocking.load(SeqCst)
    }

    /// Waits (in a blocking region already) while the thread is suspended.
    pub fn wait_while_suspended(&self) {
        while self.suspended.load(SeqCst) {
            nap();
        }
    }

    /// Clears the blocking flag on the way out of a blocking region, once
    /// no suspension is asked for: a suspender that saw the flag set
    /// returned at once, counting on the thread to stop here.
    pub fn leave_blocking_unsuspended(&self) {
        loop {
            self.wait_while_suspended();
            self.blocking.store(false, SeqCst);
            if !self.suspended.load(SeqCst) {
                return;
            }
            self.blocking.store(true, SeqCst);
        }
    }
}

/// In the stop signal's handler, after the pause's park: stays while the
/// thread is suspended, parking for each pause that starts.
///
/// # Safety
/// Called from the stop signal's handler of the thread owning `s` and `p`.
pub unsafe fn in_handler(s: &SuspendState, p: &SignalParker<Boehm>) {
    if !s.suspended.load(SeqCst) {
        return;
    }
    s.ack.store(true, SeqCst);
    while s.suspended.load(SeqCst) {
        // SAFETY: as the caller says (the handler, this thread's parker).
        if p.pause_requested() && unsafe { p.park() } {
            continue;
        }
        nap();
    }
    s.ack.store(false, SeqCst);
}

fn is_self(t: libc::pthread_t) -> bool {
    // SAFETY: pthread_self and pthread_equal have no preconditions.
    unsafe { libc::pthread_equal(t, libc::pthread_self()) != 0 }
}

/// Suspends thread `t` until `GC_resume_thread(t)`; returns once it is
/// stopped (or in a blocking region, where it will stop). Unregistered
/// threads and threads already suspended are left alone.
#[no_mangle]
pub extern "C" fn GC_suspend_thread(t: libc::pthread_t) {
    if is_self(t) {
        let ts = crate::threads::current();
        // SAFETY: the calling thread's own state, alive while it runs.
        let s = unsafe { &(*ts).suspend };
        if !s.suspended.swap(true, SeqCst) {
            blocking_region(|| s.wait_while_suspended());
        }
        return;
    }
    let first = with_thread(t, |ts| {
        let was = ts.suspend.suspended.swap(true, SeqCst);
        !was
    });
    match first {
        Some(true) => {}
        Some(false) => return,
        None => {
            // Ended (or never registered): nothing to stop, but it reads
            // as suspended until resumed, as in bdwgc.
            mark_ended(t);
            return;
        }
    }
    loop {
        let done = with_thread(t, |ts| {
            let s = &ts.suspend;
            if s.ack.load(SeqCst) || s.blocking.load(SeqCst) || !s.suspended.load(SeqCst) {
                return true;
            }
            // SAFETY: a registered thread (listed, so not exited).
            unsafe { libc::pthread_kill(t, SIG_SUSPEND) };
            false
        });
        match done {
            Some(true) => return,
            Some(false) => nap(),
            None => {
                // It ended meanwhile: it reads as suspended, as above.
                mark_ended(t);
                return;
            }
        }
    }
}

/// Lets a suspended thread go on (it leaves its handler within a
/// millisecond). Not suspended: nothing happens.
#[no_mangle]
pub extern "C" fn GC_resume_thread(t: libc::pthread_t) {
    if with_thread(t, |ts| ts.suspend.suspended.store(false, SeqCst)).is_none() {
        forget(t);
    }
}

#[no_mangle]
pub extern "C" fn GC_is_thread_suspended(t: libc::pthread_t) -> std::ffi::c_int {
    with_thread(t, |ts| ts.suspend.suspended.load(SeqCst))
        .unwrap_or_else(|| ended(t))
        .into()
}
