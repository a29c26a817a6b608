//! GC events: what a runtime logs or reacts to, given to one listener the
//! embedder sets (`Heap::set_event_listener`), in the spirit of Whippet's
//! event listener and the Boehm collector's `GC_set_on_collection_event`.
//!
//! `CollectionStart`, `MarkEnd` and `CollectionEnd` are emitted inside the
//! pause on the collecting thread, every other mutator stopped.
//! `HeapResize` is emitted where the growth policy changes the heap's size
//! target: at the end of a pause, or on the mutator thread whose lazy sweep
//! finished a pool's cycle (concurrently with other mutators). A listener
//! must not allocate in the heap or collect; a panic in it is caught and
//! continues once the heap is consistent, like other callbacks.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::callbacks::PanicSlot;

/// Why a collection ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum GcReason {
    /// A size pool (or the large-object space) reached its budget.
    Allocation = 0,
    /// The embedder asked (`Mutator::collect`).
    Explicit = 1,
    /// The heap reached its maximum size: an allocation could not get a page.
    HeapLimit = 2,
    /// Stress mode (`Config::stress`) collected.
    Stress = 3,
}

/// One event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GcEvent {
    /// A pause begins: the world is stopped.
    CollectionStart {
        /// 1 for the heap's first collection.
        number: u64,
        reason: GcReason,
        /// Heap memory committed (bytes of pages in use or cached).
        heap_bytes: usize,
    },
    /// Marking is complete (strong, ephemeron and finalizer closure).
    MarkEnd {
        number: u64,
        /// Objects marked: the live objects, plus those kept for finalizers.
        marked_objects: u64,
        /// Their bytes (slot sizes; a large object's requested size).
        marked_bytes: u64,
        mark_time: Duration,
    },
    /// The pause ends; the world resumes after the listener returns.
    CollectionEnd {
        number: u64,
        reason: GcReason,
        /// Bytes found live (as `MarkEnd::marked_bytes`).
        live_bytes: u64,
        /// Heap memory committed now.
        heap_bytes: usize,
        /// The whole pause, start to end.
        pause: Duration,
        /// Finalizers this collection queued.
        finalizers_queued: usize,
    },
    /// The growth policy changed the heap's size target: the bytes the
    /// pools and the large-object space may use before the next collection
    /// (never more than the maximum heap).
    HeapResize { old_bytes: usize, new_bytes: usize },
}

/// The listener a heap calls.
pub type Listener = Arc<dyn Fn(&GcEvent) + Send + Sync>;

/// The heap's listener and the last size target reported.
#[derive(Default)]
pub struct Events {
    listener: Mutex<Option<Listener>>,
    target: AtomicUsize,
}

impl Events {
    pub fn set(&self, listener: Option<Listener>) {
        *self.listener.lock() = listener;
    }

    /// The current listener (cloned, so it is not called under the lock).
    pub fn listener(&self) -> Option<Listener> {
        self.listener.lock().clone()
    }

    /// Calls the listener, if any; a panic goes into `panics`.
    pub fn emit(&self, panics: &mut PanicSlot, event: impl FnOnce() -> GcEvent) {
        if let Some(l) = self.listener() {
            let e = event();
            panics.call(|| super::callbacks::in_callback(|| l(&e)));
        }
    }

    /// Records the heap's size target; emits `HeapResize` if it changed
    /// (the heap records its initial target before any listener is set).
    pub fn size_target(&self, panics: &mut PanicSlot, bytes: usize) {
        let old = self.target.swap(bytes, Relaxed);
        if old != bytes {
            self.emit(panics, || GcEvent::HeapResize {
                old_bytes: old,
                new_bytes: bytes,
            });
        }
    }
}
