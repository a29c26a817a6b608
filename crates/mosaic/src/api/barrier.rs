//! The write barrier of generational mode (`Config::generational`):
//! object-granularity logging with the unlogged bit of `space/log_bits.rs`.
//!
//! The contract: for every store of a reference into an object allocated
//! `AllocFlags::BARRIERED`, call [`Mutator::write_barrier`] on the object,
//! before or after the store, with no safepoint, allocation or blocking
//! region between the two. One exemption, which is how initialising
//! stores usually go free: an object this mutator allocated with no
//! allocation, safepoint, collection or blocking region of it since is
//! young (no pause can have happened), so stores into it need no barrier.
//! An initialising store made after another allocation is not exempt: a
//! pause inside that allocation may have made the object old before it
//! was initialised. Objects allocated without the flag need no barrier
//! (every minor collection rescans them). Outside generational mode the
//! barrier is one load that always finds a clear bit. A thread that may
//! be stopped by a signal anywhere (`SignalParker`) calls the barrier
//! *before* the store: a pause between the two then finds the value still
//! in its registers or stack, and marks it.
//!
//! The fast path reads one bit: clear (young, unbarriered, or already
//! logged) returns. Set (old and not yet logged since the last
//! collection), the slow path clears it atomically and the thread that
//! cleared it appends the object to its mutator's log; the next minor
//! collection traces it and sets the bit again.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::Mutator;
use crate::embedder::Embedder;
use crate::object::ObjRef;

/// Barriers taken by the slow path, over all mutators (for the barrier
/// benchmark's report and tests).
pub(crate) static LOGGED: AtomicU64 = AtomicU64::new(0);

impl<E: Embedder> Mutator<E> {
    /// The write barrier: call it for every store of a reference into
    /// `obj` (an object allocated [`crate::AllocFlags::BARRIERED`]), right
    /// before or after the store, with no safepoint or allocation between
    /// the two. Stores into an object allocated since this mutator's last
    /// allocation, safepoint or blocking region need none (it is young).
    ///
    /// # Panics
    /// In verify mode (and in debug builds), if `obj` is not the start of
    /// an allocated object of this heap: a barrier on a foreign or stale
    /// pointer would silently log nothing.
    #[inline(always)]
    pub fn write_barrier(&mut self, obj: ObjRef) {
        let a = obj.addr();
        if self.barrier_checks {
            self.check_barrier_target(a);
        }
        if self.heap.core.table.log().is_unlogged(a) {
            self.log_object(a);
        }
    }

    /// Stores `value` into the reference field `field` of `obj` with the
    /// write barrier.
    ///
    /// # Safety
    /// `field` must be a writable, aligned pointer-sized field inside `obj`.
    #[inline(always)]
    pub unsafe fn write_ref(&mut self, obj: ObjRef, field: *mut *mut u8, value: *mut u8) {
        self.write_barrier(obj);
        // SAFETY: the caller's promise.
        unsafe { field.write(value) }
    }

    /// The range barrier: copies `count` reference fields from `src` to
    /// `dst` (which may overlap, as `memmove`), where `dst` lies inside
    /// `obj`. With object-granularity logging one barrier covers the whole
    /// copy, however long.
    ///
    /// # Safety
    /// `src` must be readable and `dst` writable for `count` aligned
    /// pointer-sized fields, and `dst..dst + count` must lie inside `obj`.
    pub unsafe fn copy_refs(
        &mut self,
        obj: ObjRef,
        dst: *mut *mut u8,
        src: *const *mut u8,
        count: usize,
    ) {
        self.write_barrier(obj);
        // SAFETY: the caller's promise.
        unsafe { std::ptr::copy(src, dst, count) }
    }

    /// The barrier's slow path: the object was old and unlogged.
    #[cold]
    #[inline(never)]
    fn log_object(&mut self, a: usize) {
        if self.heap.core.table.log().take(a) {
            self.log.push(a);
            LOGGED.fetch_add(1, Relaxed);
        }
    }

    #[cold]
    #[inline(never)]
    fn check_barrier_target(&self, a: usize) {
        if self.heap.core.table.object_at(a).is_none() {
            let what = if self.heap.core.table.page_index(a).is_some() {
                "inside the heap but not the start of an allocated object"
            } else {
                "outside the heap (a foreign pointer)"
            };
            panic!("mosaic: write barrier on {a:#x}, which is {what}");
        }
    }
}
