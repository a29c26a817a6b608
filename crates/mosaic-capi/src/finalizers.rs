//! Finalizers for C: registering, running the queued ones, the notifier
//! and the finalizer thread.
//!
//! A Rust finalizer receives `&mut Mutator`; C wants its `mosaic_mutator *`.
//! Every mutator of a C heap carries its handle's address as its data
//! pointer (see `heap.rs`), so the closure recovers the handle from the
//! mutator that runs it, whichever thread that is.

use std::ffi::c_void;

use mosaic_core::{FinalizerOrder, Heap, ObjRef};

use crate::embedder::CEmbedder;
use crate::error::{clear_error, invalid, mosaic_error, report};
use crate::heap::{
    free_mutator_handle, heap_ref, mosaic_heap, mosaic_mutator, mutator_mut, new_mutator_handle,
};

/// A finalizer: runs once for `obj`, with `data` as registered, on a thread
/// running finalizers, with that thread's mutator `m` (see
/// `mosaic_register_finalizer`). `obj` is pinned until it returns, so it
/// stays valid even if the finalizer allocates and a compaction runs.
pub type mosaic_finalizer_fn =
    Option<unsafe extern "C" fn(m: *mut mosaic_mutator, obj: *mut c_void, data: *mut c_void)>;

/// Called when a collection has queued finalizers (see
/// `mosaic_set_finalizer_notifier`).
pub type mosaic_notify_fn = Option<unsafe extern "C" fn(ctx: *mut c_void)>;

/// The order in which unreachable finalizable objects are finalized: one
/// of the `MOSAIC_FINALIZE_*` values.
pub type mosaic_finalizer_order = u32;

/// If an unreachable finalizable object A reaches another one B, A is
/// finalized first and B only in a later collection, once A is gone (B
/// stays intact for A's finalizer). Direct self-references are ignored;
/// objects in a longer cycle of ordered finalizable objects are never
/// finalized (they leak, as with Boehm's `GC_register_finalizer`).
pub const MOSAIC_FINALIZE_ORDERED: mosaic_finalizer_order = 0;
/// Every unreachable finalizable object is finalized as soon as it is
/// unreachable, cycles included, in no particular order: a finalizer may
/// see objects whose own finalizer already ran.
pub const MOSAIC_FINALIZE_UNORDERED: mosaic_finalizer_order = 1;

/// Runs a C finalizer: the tag is the C function, `data` its data word
/// (registered through `register_finalizer_fn`, so that a registration
/// allocates nothing).
fn run_c_finalizer(m: &mut mosaic_core::Mutator<CEmbedder>, obj: ObjRef, tag: usize, data: usize) {
    // SAFETY: `tag` was made from a `mosaic_finalizer_fn` (non-null) by
    // `mosaic_register_finalizer`.
    let f = unsafe {
        std::mem::transmute::<
            usize,
            unsafe extern "C" fn(*mut mosaic_mutator, *mut c_void, *mut c_void),
        >(tag)
    };
    let handle: *mut mosaic_mutator = m.data().cast();
    // SAFETY: calling the embedder's finalizer with its own data (mosaic.h:
    // it runs on whichever thread runs finalizers); the handle is the live
    // C handle of the mutator running finalizers.
    unsafe { f(handle, obj.as_ptr().cast(), data as *mut c_void) }
}

/// A `MOSAIC_FINALIZE_*` value as an order (the error recorded for
/// `function` otherwise).
fn order_of(function: &str, order: mosaic_finalizer_order) -> Result<FinalizerOrder, mosaic_error> {
    match order {
        MOSAIC_FINALIZE_ORDERED => Ok(FinalizerOrder::Ordered),
        MOSAIC_FINALIZE_UNORDERED => Ok(FinalizerOrder::Unordered),
        other => Err(invalid(
            function,
            &format!("unknown finalizer order {other}"),
        )),
    }
}

/// A C callback and its context, called from any thread.
struct CNotify {
    f: unsafe extern "C" fn(*mut c_void),
    ctx: *mut c_void,
}

// SAFETY: mosaic.h says the notifier runs on collecting threads; the
// embedder promises its function and ctx may be used from any of them.
unsafe impl Send for CNotify {}
// SAFETY: as above.
unsafe impl Sync for CNotify {}

impl CNotify {
    fn call(&self) {
        // SAFETY: the embedder's function with its own context.
        unsafe { (self.f)(self.ctx) }
    }
}

/// Registers a finalizer for `obj`: when `obj` becomes unreachable it is
/// kept alive, with everything it references, until `f(m, obj, data)` has
/// run once; a later collection reclaims it, unless `f` stored it somewhere
/// reachable again. `order` is `MOSAIC_FINALIZE_ORDERED` or
/// `MOSAIC_FINALIZE_UNORDERED`.
///
/// `f` never runs inside a collection or an allocation: collections queue
/// the finalizers of objects they find unreachable, and they run in
/// `mosaic_run_finalizers` on the thread that calls it (or on the finalizer
/// thread, `mosaic_start_finalizer_thread`). `m` is the mutator of that
/// thread, valid during the call: `f` may allocate, collect and use heap
/// objects through it, but must not free it. A finalizer still registered
/// or queued when the heap goes away never runs (`on_free` still does).
///
/// `data` is stored as given: it is neither traced nor updated when
/// objects move. A heap object the finalizer needs should be reached from
/// `obj` (traced, and kept alive with it); if `data` points to one, that
/// object must stay reachable by other paths and be pinned
/// (`mosaic_pin`) until the finalizer has run. A registration allocates
/// nothing and takes 16 bytes.
///
/// Call on the mutator's thread. Errors: `MOSAIC_ERR_FOREIGN_POINTER` if
/// `obj` is not an object of the heap; `MOSAIC_ERR_ALREADY_REGISTERED` if it
/// has a finalizer already (registered, not yet queued);
/// `MOSAIC_ERR_INVALID_ARGUMENT` for a NULL `f`, an unknown `order`, a NULL
/// or freed mutator.
///
/// # Safety
/// `m` must be NULL or a live mutator of the calling thread; `f` a valid
/// function, safe to call on any thread running finalizers with `data`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_register_finalizer(
    m: *mut mosaic_mutator,
    obj: *mut c_void,
    f: mosaic_finalizer_fn,
    data: *mut c_void,
    order: mosaic_finalizer_order,
) -> mosaic_error {
    const F: &str = "mosaic_register_finalizer";
    let Some(m) = mutator_mut(F, m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    let Some(f) = f else {
        return invalid(F, "f is NULL");
    };
    let order = match order_of(F, order) {
        Ok(o) => o,
        Err(e) => return e,
    };
    let Some(obj) = ObjRef::from_ptr(obj.cast()) else {
        return invalid(F, "obj is NULL");
    };
    match m.register_finalizer_fn(obj, order, run_c_finalizer, f as usize, data as usize) {
        Ok(()) => {
            clear_error();
            mosaic_error::MOSAIC_OK
        }
        Err(e) => report(F, &e),
    }
}

/// The heap's shared C finalizer and its data (`mosaic_set_shared_finalizer`).
struct SharedC {
    f: unsafe extern "C" fn(*mut mosaic_mutator, *mut c_void, *mut c_void),
    data: *mut c_void,
}

/// Runs the shared C finalizer: `tag` is its `SharedC`.
fn run_shared_c(m: &mut mosaic_core::Mutator<CEmbedder>, obj: ObjRef, tag: usize, _: usize) {
    // SAFETY: `tag` is a `SharedC` leaked by `mosaic_set_shared_finalizer`
    // (it lives as long as the process).
    let s = unsafe { &*(tag as *const SharedC) };
    let handle: *mut mosaic_mutator = m.data().cast();
    // SAFETY: as in `run_c_finalizer`.
    unsafe { (s.f)(handle, obj.as_ptr().cast(), s.data) }
}

/// Sets the heap's shared finalizer: `f(m, obj, data)` runs, on the terms
/// of `mosaic_register_finalizer`, for each object registered with
/// `mosaic_register_shared_finalizer`. For objects whose finalization is
/// known from the object itself (a type word, a closure it holds): such a
/// registration costs two bits and no entry. Setting it again changes what
/// runs for objects queued from then on; each call keeps 16 bytes for the
/// process's life. Errors: `MOSAIC_ERR_INVALID_ARGUMENT` for a NULL `f` or
/// a NULL or freed heap. Any thread.
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`; `f` a valid function,
/// safe to call on any thread running finalizers with `data`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_set_shared_finalizer(
    heap: *mut mosaic_heap,
    f: mosaic_finalizer_fn,
    data: *mut c_void,
) -> mosaic_error {
    const F: &str = "mosaic_set_shared_finalizer";
    let Some(h) = heap_ref(F, heap) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    let Some(f) = f else {
        return invalid(F, "f is NULL");
    };
    let tag = Box::into_raw(Box::new(SharedC { f, data })) as usize;
    match h.set_shared_finalizer(run_shared_c, tag) {
        Ok(()) => {
            clear_error();
            mosaic_error::MOSAIC_OK
        }
        Err(e) => report(F, &e),
    }
}

/// Registers the heap's shared finalizer (`mosaic_set_shared_finalizer`)
/// for `obj`, in `order`, on the terms of `mosaic_register_finalizer`.
/// Errors: those of `mosaic_register_finalizer`, and `MOSAIC_ERR_MISUSE` if
/// no shared finalizer was set. Call on the mutator's thread.
///
/// # Safety
/// `m` must be NULL or a live mutator of the calling thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_register_shared_finalizer(
    m: *mut mosaic_mutator,
    obj: *mut c_void,
    order: mosaic_finalizer_order,
) -> mosaic_error {
    const F: &str = "mosaic_register_shared_finalizer";
    let Some(m) = mutator_mut(F, m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    let order = match order_of(F, order) {
        Ok(o) => o,
        Err(e) => return e,
    };
    let Some(obj) = ObjRef::from_ptr(obj.cast()) else {
        return invalid(F, "obj is NULL");
    };
    match m.register_shared_finalizer(obj, order) {
        Ok(()) => {
            clear_error();
            mosaic_error::MOSAIC_OK
        }
        Err(e) => report(F, &e),
    }
}

/// Whether `obj` has a finalizer registered by `mosaic_register_finalizer`
/// that a collection has not queued yet; if so, its function and data are
/// stored through `f` and `data` (each may be NULL). For an embedder that
/// must answer "what was registered" (the Boehm collector's calls return
/// the previous finalizer) without a table of its own. `false` (not an
/// error: the last error is `MOSAIC_OK`) for no finalizer, a shared one, a
/// queued one, or a value that is not an object of the heap; `false` with
/// an error for a NULL or freed mutator. Cost: a look at the object's
/// bit, and for a registered object a search of at most a few thousand
/// recent registrations plus a binary search. Call on the mutator's thread.
///
/// # Safety
/// `m` must be NULL or a live mutator of the calling thread; `obj` may be
/// any value; `f` and `data` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mosaic_finalizer_of(
    m: *mut mosaic_mutator,
    obj: *mut c_void,
    f: *mut mosaic_finalizer_fn,
    data: *mut *mut c_void,
) -> bool {
    let Some(m) = mutator_mut("mosaic_finalizer_of", m) else {
        return false;
    };
    clear_error();
    // Every function registration of this library runs `run_c_finalizer`
    // with the C function as its tag.
    let Some((_, tag, d)) = ObjRef::from_ptr(obj.cast()).and_then(|o| m.finalizer_fn_of(o)) else {
        return false;
    };
    // SAFETY: the caller's optional out pointers; `tag` was made from a
    // non-null `mosaic_finalizer_fn` by `mosaic_register_finalizer`.
    unsafe {
        if !f.is_null() {
            *f = Some(std::mem::transmute::<
                usize,
                unsafe extern "C" fn(*mut mosaic_mutator, *mut c_void, *mut c_void),
            >(tag));
        }
        if !data.is_null() {
            *data = d as *mut c_void;
        }
    }
    true
}

/// Removes `obj`'s finalizer if it has not been queued yet. Returns whether
/// it had one (`false` is not an error: the last error is `MOSAIC_OK`),
/// `false` with an error for a NULL or freed mutator. Call on the mutator's
/// thread.
///
/// # Safety
/// `m` must be NULL or a live mutator of the calling thread; `obj` may be
/// any value.
#[no_mangle]
pub unsafe extern "C" fn mosaic_unregister_finalizer(
    m: *mut mosaic_mutator,
    obj: *mut c_void,
) -> bool {
    let Some(m) = mutator_mut("mosaic_unregister_finalizer", m) else {
        return false;
    };
    let had = ObjRef::from_ptr(obj.cast()).is_some_and(|o| m.unregister_finalizer(o));
    clear_error();
    had
}

/// Runs every queued finalizer on this thread, oldest first, including
/// those queued by collections the finalizers themselves cause; returns
/// how many ran. Each gets `m` as its mutator. Errors (0 returned, nothing
/// run): `MOSAIC_ERR_MISUSE` inside a collector callback or a blocking
/// region; a NULL or freed mutator.
///
/// # Safety
/// `m` must be NULL or a live mutator of the calling thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_run_finalizers(m: *mut mosaic_mutator) -> usize {
    const F: &str = "mosaic_run_finalizers";
    let Some(mutator) = mutator_mut(F, m) else {
        return 0;
    };
    // The finalizers get `m` back (through the mutator's data pointer) and
    // may call any mosaic function with it: `run_finalizers` hands them
    // its `&mut Mutator` and reads it again only after they return.
    match mutator.run_finalizers() {
        Ok(n) => {
            clear_error();
            n
        }
        Err(e) => {
            report(F, &e);
            0
        }
    }
}

/// Finalizers queued and not run yet (0 with an error for a NULL or freed
/// heap). Any thread.
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_pending_finalizers(heap: *const mosaic_heap) -> usize {
    let Some(h) = heap_ref("mosaic_pending_finalizers", heap) else {
        return 0;
    };
    let n = h.pending_finalizers();
    clear_error();
    n
}

/// Sets the function called when a collection has queued finalizers:
/// `f(ctx)` runs on the collecting thread once the world has resumed
/// (possibly inside the `mosaic_alloc` that collected). It should only
/// signal (set a flag, post a semaphore) for some thread to call
/// `mosaic_run_finalizers`: it must not allocate, collect or run
/// finalizers (refused with `MOSAIC_ERR_MISUSE`). NULL `f` removes it.
/// Any thread. Errors: a NULL or freed heap.
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`; `f` NULL or a function
/// safe to call with `ctx` on any mutator thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_set_finalizer_notifier(
    heap: *mut mosaic_heap,
    f: mosaic_notify_fn,
    ctx: *mut c_void,
) -> mosaic_error {
    let Some(h) = heap_ref("mosaic_set_finalizer_notifier", heap) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    let notifier = f.map(|f| {
        let n = CNotify { f, ctx };
        Box::new(move || n.call()) as Box<dyn Fn() + Send + Sync>
    });
    h.set_finalizer_notifier(notifier);
    clear_error();
    mosaic_error::MOSAIC_OK
}

/// Starts a thread (named `mosaic-finalizer`) that runs the queued
/// finalizers whenever a collection queues some. Each time, it makes a
/// mutator of its own (finalizers receive it as `m`, and `mutator_roots`
/// sees it while it exists), runs them all and frees that mutator. The
/// thread does not keep the heap alive while it waits, and ends when the
/// heap goes away. Any thread. Errors: `MOSAIC_ERR_MISUSE` if the heap's
/// finalizer thread is already started or the thread cannot be created; a
/// NULL or freed heap.
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_start_finalizer_thread(heap: *mut mosaic_heap) -> mosaic_error {
    const F: &str = "mosaic_start_finalizer_thread";
    let Some(h) = heap_ref(F, heap) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    match h.start_finalizer_thread_with(run_on_finalizer_thread) {
        Ok(()) => {
            clear_error();
            mosaic_error::MOSAIC_OK
        }
        Err(e) => report(F, &e),
    }
}

/// The finalizer thread's runner: a C mutator handle for the thread (as
/// `mosaic_mutator_new` makes), the queued finalizers, and the handle freed.
fn run_on_finalizer_thread(heap: &Heap<CEmbedder>) {
    /// Frees the handle even if running the finalizers unwinds.
    struct Free(*mut mosaic_mutator);
    impl Drop for Free {
        fn drop(&mut self) {
            // SAFETY: made below on this thread, no longer in use.
            unsafe { free_mutator_handle("mosaic finalizer thread", self.0) };
        }
    }
    let Ok(m) = heap.mutator() else {
        return;
    };
    let handle = Free(new_mutator_handle(m));
    if let Some(m) = mutator_mut("mosaic finalizer thread", handle.0) {
        let _ = m.run_finalizers();
    }
}
