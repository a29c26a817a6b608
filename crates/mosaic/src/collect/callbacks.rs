//! Running embedder callbacks so that a panic cannot corrupt the heap.
//!
//! The policy (documented on [`crate::Embedder`]): a panic inside a callback
//! leaves the heap consistent and then propagates to the caller of the
//! Mosaic function that ran the callback.
//!
//! - `trace` and `roots` run while marking. A panic abandons the collection:
//!   every mark bit is cleared, nothing is freed, the world resumes, and the
//!   panic continues out of `collect` (or the allocation that collected).
//! - `on_free` runs while sweeping. A [`PanicSlot`] catches the panic, the
//!   sweep finishes the page (and every other `on_free` of the batch still
//!   runs), the page's bookkeeping completes, and only then is the first
//!   panic resumed.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The first panic caught from a batch of callbacks, resumed later.
#[derive(Default)]
pub struct PanicSlot(Option<Box<dyn Any + Send>>);

impl PanicSlot {
    /// Runs `f`; if it panics, keeps the first payload (later ones are dropped).
    #[inline]
    pub fn call(&mut self, f: impl FnOnce()) {
        if let Err(p) = catch_unwind(AssertUnwindSafe(f)) {
            self.0.get_or_insert(p);
        }
    }

    /// A slot holding an already caught panic.
    pub fn caught(payload: Box<dyn Any + Send>) -> Self {
        PanicSlot(Some(payload))
    }

    /// Moves another slot's panic into this one (the first one wins).
    pub fn merge(&mut self, other: PanicSlot) {
        if let Some(p) = other.0 {
            self.0.get_or_insert(p);
        }
    }

    /// Continues the caught panic, if any. Call once the heap is consistent.
    pub fn resume(self) {
        if let Some(p) = self.0 {
            resume_unwind(p)
        }
    }
}

thread_local! {
    /// Embedder callbacks running on this thread (nesting depth).
    static IN_CALLBACK: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Threads inside [`in_callback`] now, all heaps together: while it is 0
/// no thread is, and [`inside_callback`] answers without reading the
/// thread-local (which costs a call in a shared library). A thread's own
/// entry is visible to itself, so the answer is exact for the caller.
static ANY_IN_CALLBACK: AtomicUsize = AtomicUsize::new(0);

/// Runs `f` marked as a collector callback: allocating, collecting or
/// running finalizers from the same thread is refused meanwhile.
pub fn in_callback<R>(f: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            IN_CALLBACK.with(|c| c.set(c.get() - 1));
            ANY_IN_CALLBACK.fetch_sub(1, Relaxed);
        }
    }
    ANY_IN_CALLBACK.fetch_add(1, Relaxed);
    IN_CALLBACK.with(|c| c.set(c.get() + 1));
    let _leave = Leave;
    f()
}

/// Whether the calling thread is inside a collector callback (`trace`,
/// `roots`, `mutator_roots`, `on_free`, an event listener, the finalizer
/// notifier), a pause or a sweep.
#[inline]
pub fn inside_callback() -> bool {
    ANY_IN_CALLBACK.load(Relaxed) != 0 && this_thread_in_callback()
}

/// Out of line: the compiler would otherwise compute the thread-local's
/// address before the test above.
#[cold]
#[inline(never)]
fn this_thread_in_callback() -> bool {
    IN_CALLBACK.with(|c| c.get() != 0)
}
