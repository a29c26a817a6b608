//! Holding off asynchronous signals on the calling thread for a scope.
//!
//! Used while a thread that is exiting detaches its mutators
//! (`sched::threads`): an embedder that stops threads by a signal (the
//! drop-in's C threads) would otherwise park the thread in its handler
//! halfway through, holding a pool's lock the collector then needs.
//! Signals that arrive meanwhile stay pending and are delivered when the
//! scope ends (the thread's mutator is detached by then, so the handler
//! does not park it). `SIGKILL` and `SIGSTOP` cannot be held off.

/// Asynchronous signals are held off on this thread until it is dropped.
pub struct SignalsHeld {
    old: libc::sigset_t,
    blocked: bool,
    /// The mask is the thread's: restored on the thread that saved it.
    _not_send: std::marker::PhantomData<*const ()>,
}

impl SignalsHeld {
    pub fn new() -> Self {
        // SAFETY: `all` and `old` are valid sigset_t values the calls fill;
        // pthread_sigmask changes only the calling thread's mask.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            let blocked = libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old) == 0;
            SignalsHeld {
                old,
                blocked,
                _not_send: std::marker::PhantomData,
            }
        }
    }
}

impl Default for SignalsHeld {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for SignalsHeld {
    fn drop(&mut self) {
        if self.blocked {
            // SAFETY: restores the mask saved by `new` on this same thread
            // (`SignalsHeld` is not `Send`).
            unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
        }
    }
}
