//! GC events: what a runtime logs or reacts to, given to one listener the
//! embedder sets (`Heap::set_event_listener`), in the spirit of Whippet's
//! event listener and the Boehm collector's `GC_set_on_collection_event`.
//!
//! `CollectionStart`, `MarkEnd` and `CollectionEnd` are emitted inside the
//! pause on the collecting thread, every other mutator stopped.
//! `HeapResize` is emitted at the end of a pause when the heap policy
//! changed the heap's target (`collect/heap_sizing.rs`). A listener
//! must not allocate in the heap or collect; a panic in it is caught and
//! continues once the heap is consistent, like other callbacks.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::callbacks::PanicSlot;

/// Why a collection ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum GcReason {
    /// The bytes allocated since the last collection reached the heap's
    /// allowance (heap target − live bytes after the last collection).
    Allocation = 0,
    /// The embedder asked (`Mutator::collect`).
    Explicit = 1,
    /// The heap reached its maximum size: an allocation could not get a page.
    HeapLimit = 2,
    /// Stress mode (`Config::stress`) collected.
    Stress = 3,
    /// The embedder asked for a minor collection (`Mutator::collect_young`;
    /// a full one outside generational mode).
    Young = 4,
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
        /// Bytes allocated since the previous collection.
        allocated_bytes: u64,
        /// The heap target in force (what the allowance was computed from).
        target_bytes: usize,
        /// From the stop request until every other mutator had reached a
        /// safepoint: the event comes once the world has stopped, and this
        /// part of the pause is already over.
        time_to_safepoint: Duration,
    },
    /// Marking is complete (strong, ephemeron and finalizer closure).
    MarkEnd {
        number: u64,
        /// Objects marked: the live objects, plus those kept for finalizers.
        marked_objects: u64,
        /// Their bytes (slot sizes; a large object's whole pages).
        marked_bytes: u64,
        mark_time: Duration,
        /// A minor collection (generational mode): the counts are of the
        /// young objects it kept; old objects stay marked from before.
        minor: bool,
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
        /// The heap target the policy set for the next cycle: the next
        /// collection is due after `target_bytes − live_bytes` more bytes.
        target_bytes: usize,
        /// Allocation rate the policy measured, bytes per second of mutator
        /// time (smoothed).
        allocation_rate: f64,
    },
    /// The heap policy changed the heap's target (never more than the
    /// maximum heap).
    HeapResize { old_bytes: usize, new_bytes: usize },
}

/// The listener a heap calls.
pub type Listener = Arc<dyn Fn(&GcEvent) + Send + Sync>;

/// The heap's listener.
#[derive(Default)]
pub struct Events {
    listener: Mutex<Option<Listener>>,
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
}
