//! Stopping threads that never poll safepoints, by a signal: C code, a
//! program built for another collector (the `libgc.so.1` drop-in).
//!
//! The embedder installs a stop hook ([`Heap::set_stop_hook`]) that sends
//! its signal to every such thread, and its signal handler calls
//! [`SignalParker::park`], which records the thread's stack and sleeps
//! until the pause ends. The thread was interrupted outside every heap
//! call (the embedder defers the signal while one runs and calls
//! [`Mutator::safepoint`] after it), so its allocation context is idle:
//! the pause flushes it on the thread's behalf
//! (`HeapInner::flush_signal_parked`), which keeps every lock and
//! allocation out of the handler.
//!
//! A signal stops a thread anywhere, inside the C library's `malloc` too,
//! holding an arena's lock. The collector's own memory must then not come
//! from that `malloc`: the drop-in makes its Rust allocations through
//! its own dlmalloc heap (its `#[global_allocator]`, every call with the
//! stop signal deferred), and an embedder that stops threads by signal
//! should do the same, or the pause may wait for an arena lock a stopped
//! thread holds. A thread joining the world readies
//! its thread-locals and stack bounds first (`sched::prepare_thread`),
//! since the first stop may come before it reaches a safepoint.
//!
//! Invariant: a slot's `parked` flag is set only between the handler's
//! recording of the stack and its wake-up, and a collector reads it only
//! after `World::stop` has counted that thread, so the collector flushes
//! exactly the allocators whose owners are asleep in a handler.

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::Arc;

use super::{Heap, HeapInner, Link, Mutator};
use crate::api::heap::SignalSlot;
use crate::embedder::Embedder;
use crate::sched::World;

/// Parks a mutator from a signal handler on its own thread (see
/// [`Mutator::signal_parker`]). Cheap to clone; may be kept in a
/// thread-local of the embedder.
pub struct SignalParker<E: Embedder> {
    heap: Arc<HeapInner<E>>,
    link: Arc<Link<E>>,
}

impl<E: Embedder> Clone for SignalParker<E> {
    fn clone(&self) -> Self {
        SignalParker {
            heap: self.heap.clone(),
            link: self.link.clone(),
        }
    }
}

impl<E: Embedder> Heap<E> {
    /// The number of the pause in progress (odd while one is on; every
    /// stop of the world, collection or not, gets a new one): a stop hook
    /// called again for the same pause sees the same number.
    pub fn stop_sequence(&self) -> u32 {
        self.inner.world.stop_sequence()
    }

    /// Installs (or removes, with `None`) the function a collecting thread
    /// calls once it has asked every mutator to stop: it must make each
    /// thread whose mutator has a [`SignalParker`] and is not in a blocking
    /// region run [`SignalParker::park`], by a signal (`pthread_kill`). It
    /// runs without any lock of the heap held, and must skip the calling
    /// thread (the collector: a signal would park it inside its own
    /// collection). While a hook is installed, a collector looks for threads
    /// parked by a signal every 50 µs, and calls the hook again every 2 ms
    /// while some thread has not stopped (a thread may put a signal off
    /// while it is inside a call, then leave the call without parking): it
    /// must tolerate threads that are stopped already.
    pub fn set_stop_hook(&self, hook: Option<Box<dyn Fn() + Send + Sync>>) {
        self.inner
            .world
            .set_stop_hook(hook.map(|h| Arc::from(h) as crate::sched::StopHook));
    }

    /// Installs (or removes, with `None`) the function the thread that
    /// stopped the world calls once every mutator runs again, after each
    /// pause (a collection's, or [`Mutator::stop_world`]'s), without any
    /// lock of the heap held: the counterpart of the stop hook, for an
    /// embedder that reports the end of a pause after the world restarted
    /// (the drop-in's `GC_EVENT_POST_START_WORLD` and `GC_EVENT_END`). No
    /// other pause starts until it returns, so its notices never interleave
    /// with the next pause's stop hook. The caller is still inside the heap
    /// call that paused; the hook must not allocate or collect.
    pub fn set_resume_hook(&self, hook: Option<Box<dyn Fn() + Send + Sync>>) {
        self.inner
            .world
            .set_resume_hook(hook.map(|h| Arc::from(h) as crate::sched::StopHook));
    }
}

impl<E: Embedder> Mutator<E> {
    /// Lets a signal handler on this mutator's thread park it
    /// ([`SignalParker::park`]), for threads that run code which never
    /// polls safepoints. Turn conservative stack scanning on too
    /// ([`Mutator::set_conservative_stack`]): the parked thread's stack and
    /// registers are its roots.
    pub fn signal_parker(&mut self) -> SignalParker<E> {
        let mut slots = self.heap.signal_slots.lock();
        if !slots.iter().any(|s| s.id == self.link.id) {
            slots.push(SignalSlot {
                id: self.link.id,
                flusher: self.link.flusher.clone_handle(),
                parked: self.link.signal_parked.clone(),
            });
        }
        SignalParker {
            heap: self.heap.clone(),
            link: self.link.clone(),
        }
    }
}

impl<E: Embedder> Mutator<E> {
    /// Stops every other mutator, as a collection does, without
    /// collecting, until [`Mutator::resume_world`]: for a `fork` prepare
    /// handler, so that no other thread is inside the heap's code (holding
    /// one of its locks) when the process is copied. Waits out a collection
    /// in progress first. The caller must call `resume_world` on this
    /// mutator (in the parent and in the child, after
    /// [`Mutator::after_fork_child`]) before any other use of the heap.
    pub fn stop_world(&mut self) {
        loop {
            self.ensure_attached();
            let heap = self.heap.clone();
            let core = &heap.core;
            core.sizer.add(self.local.flush(&core.table, &core.pools));
            self.link.roots.record_stack();
            if heap.world.stop(self.link.id) {
                core.quiesce_background();
                heap.flush_signal_parked();
                return;
            }
        }
    }

    /// Ends what [`Mutator::stop_world`] began.
    pub fn resume_world(&mut self) {
        self.heap.world.resume();
        // (The pause stopped background sweeping between pages.)
        self.heap.core.kick_background_sweep();
    }

    /// Before `fork` (a `pthread_atfork` prepare handler): stops the world
    /// ([`Mutator::stop_world`]) and holds the heap's locks that threads
    /// outside the pause (blocking, exiting) may take, so that the child
    /// gets none of them held by a thread it does not have. Follow it with
    /// [`Mutator::after_fork_parent`] in the parent and
    /// [`Mutator::after_fork_child`] in the child, on the same thread.
    pub fn prepare_fork(&mut self) {
        self.stop_world();
        let heap = &self.heap;
        // No background run may be between pages (or finishing one) when
        // the process is copied.
        heap.core.workers.suspend_background();
        std::mem::forget(heap.signal_slots.lock());
        std::mem::forget(heap.root_tables.lock());
        heap.world.lock_for_fork();
    }

    /// After `fork` in the parent: releases what `prepare_fork` held and
    /// resumes the world.
    pub fn after_fork_parent(&mut self) {
        let heap = &self.heap;
        heap.world.unlock_after_fork_parent();
        // SAFETY: taken by this thread in `prepare_fork`, never released.
        unsafe {
            heap.root_tables.force_unlock();
            heap.signal_slots.force_unlock();
        }
        heap.core.workers.resume_background();
        self.resume_world();
    }

    /// After `fork` in the child, on the thread that forked: only this
    /// thread exists now, so the heap forgets every other mutator (its
    /// roots are no longer scanned, its allocation context is abandoned)
    /// and runs collections on this thread alone (the GC worker threads
    /// were not copied); then the world resumes.
    pub fn after_fork_child(&mut self) {
        let id = self.link.id;
        let heap = self.heap.clone();
        heap.world.after_fork_child(id);
        heap.core.workers.after_fork_child();
        // SAFETY: taken by this thread in `prepare_fork` (this thread is
        // the forking one, in the child).
        let (mut slots, tables) = unsafe {
            World::forget_parked_threads(heap.signal_slots.raw() as *const _ as usize);
            World::forget_parked_threads(heap.root_tables.raw() as *const _ as usize);
            (
                heap.signal_slots.make_guard_unchecked(),
                heap.root_tables.make_guard_unchecked(),
            )
        };
        slots.retain(|s| s.id == id);
        // Other threads' handles stay roots (a Root may have been handed to
        // this thread); their stacks and scopes are gone.
        for t in tables.iter() {
            if !Arc::ptr_eq(t, &self.link.roots) {
                t.set_conservative_stack(None);
                t.clear_scope();
            }
        }
        drop((slots, tables));
        heap.world.unlock_after_fork_parent();
        self.resume_world();
    }
}

impl<E: Embedder> SignalParker<E> {
    /// Parks the thread until the pause in progress ends, after recording
    /// its stack (this frame and everything above it, the interrupted
    /// context included) for the collector. Returns `false` at once if no
    /// pause is on, if the signal is older than the pause in progress, or
    /// if the mutator is in a blocking region or was dropped. Uses no lock
    /// and allocates nothing: async-signal-safe.
    ///
    /// # Safety
    /// Call only from a signal handler (or code that cannot be
    /// re-entered) on the thread that owns the mutator, interrupting code
    /// that is not inside any call on that mutator or its heap: the
    /// collector flushes the mutator's allocation context meanwhile. The
    /// embedder's `on_free` runs inside such a call (a sweep step that
    /// owns a half-swept page): keep the signal deferred while it runs.
    pub unsafe fn park(&self) -> bool {
        let link = &*self.link;
        if link.in_blocking.load(Relaxed) || link.orphaned.load(Relaxed) {
            return false;
        }
        self.heap.world.park_from_signal(
            || {
                link.roots.record_stack();
                link.signal_parked.store(true, Release);
            },
            || link.signal_parked.store(false, Release),
        )
    }

    /// Moves the cold end (highest address) of the stack scanned for this
    /// mutator's thread (a fiber or coroutine switched stacks: the Boehm
    /// collector's `GC_set_stackbottom`). Conservative stack scanning must
    /// be on. Call it from the owner thread, or while that thread is
    /// stopped or blocked.
    pub fn set_stack_top(&self, top: usize) {
        self.link.roots.move_stack_top(top);
    }

    /// The cold end of the stack scanned for this mutator's thread, if
    /// conservative scanning is on.
    pub fn stack_top(&self) -> Option<usize> {
        self.link.roots.conservative_stack_top()
    }

    /// Whether a collection is waiting for threads to stop now.
    pub fn pause_requested(&self) -> bool {
        self.heap.world.pause_on()
    }
}

impl<E: Embedder> HeapInner<E> {
    /// Flushes the allocation context of every mutator parked in a signal
    /// handler: called by the collector right after `World::stop`.
    pub(super) fn flush_signal_parked(&self) {
        let core = &self.core;
        for s in self.signal_slots.lock().iter() {
            if s.parked.load(Acquire) {
                // SAFETY: the owner sleeps in its signal handler until the
                // world resumes, outside any heap call (module invariant).
                let bytes = unsafe { s.flusher.flush(&core.table, &core.pools) };
                core.sizer.add(bytes);
            }
        }
    }
}
