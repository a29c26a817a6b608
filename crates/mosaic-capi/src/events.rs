//! GC events for C: `mosaic_event` and the event callback.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::time::Duration;

use mosaic_core::{GcEvent, GcReason};

use crate::error::{clear_error, mosaic_error};
use crate::heap::{heap_ref, mosaic_heap};

/// What happened (see `mosaic_set_event_callback` for where each kind is
/// reported).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum mosaic_event_kind {
    /// A collection begins: the world is stopped. Fields: `number`,
    /// `reason`, `heap_bytes`, `allocated_bytes`, `target_bytes` (the target
    /// in force).
    MOSAIC_EVENT_COLLECTION_START = 0,
    /// Marking is complete (strong, ephemeron and finalizer closure).
    /// Fields: `number`, `reason`, `marked_objects`, `marked_bytes`,
    /// `mark_ns`.
    MOSAIC_EVENT_MARK_END = 1,
    /// The collection ends; the world resumes after the callback returns.
    /// Fields: `number`, `reason`, `live_bytes`, `heap_bytes`, `pause_ns`,
    /// `finalizers_queued`, `target_bytes` (the target set for the next
    /// cycle), `allocation_rate`.
    MOSAIC_EVENT_COLLECTION_END = 2,
    /// The heap policy changed the heap target (never more than
    /// `max_heap`), at the end of a pause. Fields: `old_bytes`, `new_bytes`.
    MOSAIC_EVENT_HEAP_RESIZE = 3,
}

/// Why a collection ran.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum mosaic_gc_reason {
    /// Not about a collection (`MOSAIC_EVENT_HEAP_RESIZE`).
    MOSAIC_REASON_NONE = 0,
    /// The bytes allocated since the last collection reached the heap's
    /// allowance (heap target − live bytes after the last collection).
    MOSAIC_REASON_ALLOCATION = 1,
    /// `mosaic_collect`.
    MOSAIC_REASON_EXPLICIT = 2,
    /// The heap reached `max_heap`: an allocation could not get a page.
    MOSAIC_REASON_HEAP_LIMIT = 3,
    /// Stress mode (`stress`, `MOSAIC_STRESS`) collected.
    MOSAIC_REASON_STRESS = 4,
    /// The embedder asked for a minor collection (`mosaic_collect_young`).
    MOSAIC_REASON_YOUNG = 5,
}

/// One GC event: `kind` says which fields are set (see
/// `mosaic_event_kind`); the others are 0. Times are in nanoseconds, sizes
/// in bytes. Valid only during the callback.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mosaic_event {
    pub kind: mosaic_event_kind,
    pub reason: mosaic_gc_reason,
    /// The collection's number: 1 for the heap's first.
    pub number: u64,
    /// Objects marked: the live objects, plus those kept for finalizers.
    pub marked_objects: u64,
    /// Their bytes (slot sizes; a large object's whole pages).
    pub marked_bytes: u64,
    /// Bytes found live (as `marked_bytes`).
    pub live_bytes: u64,
    /// Heap memory committed (pages in use or cached).
    pub heap_bytes: usize,
    /// The size target before and after a `MOSAIC_EVENT_HEAP_RESIZE`.
    pub old_bytes: usize,
    pub new_bytes: usize,
    /// The whole pause, start to end.
    pub pause_ns: u64,
    /// Marking time.
    pub mark_ns: u64,
    /// Finalizers this collection queued.
    pub finalizers_queued: usize,
    /// Bytes allocated since the previous collection (COLLECTION_START).
    pub allocated_bytes: u64,
    /// The heap target: in force (COLLECTION_START) or set for the next
    /// cycle (COLLECTION_END).
    pub target_bytes: usize,
    /// Allocation rate the policy measured, bytes per second of mutator
    /// time (COLLECTION_END).
    pub allocation_rate: f64,
    /// Time from the stop request until every other mutator reached a
    /// safepoint (COLLECTION_START; it is part of `pause_ns`).
    pub time_to_safepoint_ns: u64,
    /// A minor collection (MARK_END, generational mode): the marked counts
    /// are of the young objects it kept.
    pub minor: bool,
}

/// Receives GC events (see `mosaic_set_event_callback`).
pub type mosaic_event_fn = Option<unsafe extern "C" fn(ctx: *mut c_void, ev: *const mosaic_event)>;

fn reason(r: GcReason) -> mosaic_gc_reason {
    match r {
        GcReason::Allocation => mosaic_gc_reason::MOSAIC_REASON_ALLOCATION,
        GcReason::Explicit => mosaic_gc_reason::MOSAIC_REASON_EXPLICIT,
        GcReason::HeapLimit => mosaic_gc_reason::MOSAIC_REASON_HEAP_LIMIT,
        GcReason::Stress => mosaic_gc_reason::MOSAIC_REASON_STRESS,
        GcReason::Young => mosaic_gc_reason::MOSAIC_REASON_YOUNG,
    }
}

fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

/// The C view of an event. `MarkEnd` carries no reason: it is the one of
/// the collection's start, remembered in `current`.
fn flatten(e: &GcEvent, current: &AtomicU32) -> mosaic_event {
    let mut ev = mosaic_event {
        kind: mosaic_event_kind::MOSAIC_EVENT_HEAP_RESIZE,
        reason: mosaic_gc_reason::MOSAIC_REASON_NONE,
        number: 0,
        marked_objects: 0,
        marked_bytes: 0,
        live_bytes: 0,
        heap_bytes: 0,
        old_bytes: 0,
        new_bytes: 0,
        pause_ns: 0,
        mark_ns: 0,
        finalizers_queued: 0,
        allocated_bytes: 0,
        target_bytes: 0,
        allocation_rate: 0.0,
        time_to_safepoint_ns: 0,
        minor: false,
    };
    let remembered = || match current.load(Relaxed) {
        1 => mosaic_gc_reason::MOSAIC_REASON_ALLOCATION,
        2 => mosaic_gc_reason::MOSAIC_REASON_EXPLICIT,
        3 => mosaic_gc_reason::MOSAIC_REASON_HEAP_LIMIT,
        4 => mosaic_gc_reason::MOSAIC_REASON_STRESS,
        5 => mosaic_gc_reason::MOSAIC_REASON_YOUNG,
        _ => mosaic_gc_reason::MOSAIC_REASON_NONE,
    };
    match *e {
        GcEvent::CollectionStart {
            number,
            reason: r,
            heap_bytes,
            allocated_bytes,
            target_bytes,
            time_to_safepoint,
        } => {
            ev.kind = mosaic_event_kind::MOSAIC_EVENT_COLLECTION_START;
            ev.time_to_safepoint_ns = ns(time_to_safepoint);
            ev.reason = reason(r);
            current.store(ev.reason as u32, Relaxed);
            ev.number = number;
            ev.heap_bytes = heap_bytes;
            ev.allocated_bytes = allocated_bytes;
            ev.target_bytes = target_bytes;
        }
        GcEvent::MarkEnd {
            number,
            marked_objects,
            marked_bytes,
            mark_time,
            minor,
        } => {
            ev.kind = mosaic_event_kind::MOSAIC_EVENT_MARK_END;
            ev.reason = remembered();
            ev.number = number;
            ev.marked_objects = marked_objects;
            ev.marked_bytes = marked_bytes;
            ev.mark_ns = ns(mark_time);
            ev.minor = minor;
        }
        GcEvent::CollectionEnd {
            number,
            reason: r,
            live_bytes,
            heap_bytes,
            pause,
            finalizers_queued,
            target_bytes,
            allocation_rate,
        } => {
            ev.kind = mosaic_event_kind::MOSAIC_EVENT_COLLECTION_END;
            ev.reason = reason(r);
            ev.number = number;
            ev.live_bytes = live_bytes;
            ev.heap_bytes = heap_bytes;
            ev.pause_ns = ns(pause);
            ev.finalizers_queued = finalizers_queued;
            ev.target_bytes = target_bytes;
            ev.allocation_rate = allocation_rate;
        }
        GcEvent::HeapResize {
            old_bytes,
            new_bytes,
        } => {
            ev.old_bytes = old_bytes;
            ev.new_bytes = new_bytes;
        }
    }
    ev
}

/// The C callback, its context, and the reason of the collection under way.
struct CListener {
    f: unsafe extern "C" fn(*mut c_void, *const mosaic_event),
    ctx: *mut c_void,
    reason: AtomicU32,
}

// SAFETY: mosaic.h says on which threads the callback runs (whichever
// thread collects); the embedder promises `f` and `ctx` may be used there.
unsafe impl Send for CListener {}
// SAFETY: as above.
unsafe impl Sync for CListener {}

impl CListener {
    fn call(&self, e: &GcEvent) {
        let ev = flatten(e, &self.reason);
        // SAFETY: the embedder's callback with its own context; `ev` lives
        // through the call.
        unsafe { (self.f)(self.ctx, &ev) }
    }
}

/// Sets the function called with every GC event (`f(ctx, ev)`; NULL `f`
/// removes it). `ev` is valid during the call only.
///
/// Where each kind is reported: `MOSAIC_EVENT_COLLECTION_START`,
/// `MOSAIC_EVENT_MARK_END` and `MOSAIC_EVENT_COLLECTION_END`, in that order
/// for each collection, inside the pause on the collecting thread, every
/// other mutator stopped. `MOSAIC_EVENT_HEAP_RESIZE` when the heap policy
/// changes the heap target: inside the pause, just before
/// `COLLECTION_END`.
///
/// The callback is a collector callback: it must return normally, must not
/// allocate, collect, run finalizers or block (refused with
/// `MOSAIC_ERR_MISUSE`), and must be thread-safe. It may read
/// `mosaic_heap_stats`. Any thread. Errors: a NULL or freed heap.
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`; `f` NULL or a function
/// safe to call with `ctx` from any mutator thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_set_event_callback(
    heap: *mut mosaic_heap,
    f: mosaic_event_fn,
    ctx: *mut c_void,
) -> mosaic_error {
    let Some(h) = heap_ref("mosaic_set_event_callback", heap) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    let listener = f.map(|f| {
        let l = CListener {
            f,
            ctx,
            reason: AtomicU32::new(0),
        };
        Box::new(move |e: &GcEvent| l.call(e)) as Box<dyn Fn(&GcEvent) + Send + Sync>
    });
    h.set_event_listener(listener);
    clear_error();
    mosaic_error::MOSAIC_OK
}
