//! Heaps, mutators, allocation and collection.

use std::cell::UnsafeCell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

use mosaic_core::{AllocFlags, Config, Heap, Mutator};

use crate::config::mosaic_config;
use crate::embedder::{mosaic_embedder, CEmbedder};
use crate::error::{clear_error, clear_error_slow, error_may_be_set, invalid, report};
use crate::handle::{usable, Guarded, DEAD, LIVE};

/// The object holds no references and is never traced.
pub const MOSAIC_NO_POINTERS: u32 = 1;
/// Call the embedder's `on_free` when the object dies.
pub const MOSAIC_NEEDS_CLEANUP: u32 = 2;
/// The object never moves.
pub const MOSAIC_PINNED: u32 = 4;

/// A garbage-collected heap (opaque).
pub struct mosaic_heap {
    /// `LIVE`, or `DEAD` once freed: the handle then stays as a tombstone.
    magic: AtomicU64,
    /// `None` once freed.
    heap: UnsafeCell<Option<Heap<CEmbedder>>>,
}

/// One thread's handle on a heap (opaque).
pub struct mosaic_mutator {
    _opaque: [u8; 0],
}

/// What a `mosaic_mutator *` points to.
type MutatorHandle = Guarded<Mutator<CEmbedder>>;

/// The heap behind a handle; `None` (with the error recorded for `function`)
/// if the handle is NULL or freed.
pub(crate) fn heap_ref<'a>(function: &str, h: *const mosaic_heap) -> Option<&'a Heap<CEmbedder>> {
    // SAFETY: the API's contract: a non-null heap pointer came from
    // mosaic_heap_new, and heap handles are never deallocated.
    let h = unsafe { h.as_ref() };
    if !usable(function, "heap", h.map(|h| h.magic.load(Ordering::Acquire))) {
        return None;
    }
    // SAFETY: the handle is live, so only mosaic_heap_free may empty the
    // cell, and it must not run concurrently with other uses of the handle
    // (mosaic.h).
    h.and_then(|h| unsafe { (*h.heap.get()).as_ref() })
}

/// The mutator behind a handle; `None` (with the error recorded for
/// `function`) if the handle is NULL or freed.
#[inline(always)]
pub(crate) fn mutator_mut<'a>(
    function: &str,
    m: *mut mosaic_mutator,
) -> Option<&'a mut Mutator<CEmbedder>> {
    // SAFETY: the API's contract: `m` is NULL or came from
    // mosaic_mutator_new, and is used by one thread at a time.
    unsafe { MutatorHandle::live_mut(function, "mutator", m) }
}

/// Creates a heap. `config` may be NULL (defaults plus `MOSAIC_*` variables).
/// `embedder->trace` is required. Returns NULL on error.
///
/// # Safety
/// `config` and `embedder` must be NULL or valid pointers.
#[no_mangle]
pub unsafe extern "C" fn mosaic_heap_new(
    config: *const mosaic_config,
    embedder: *const mosaic_embedder,
) -> *mut mosaic_heap {
    const F: &str = "mosaic_heap_new";
    // SAFETY: per the contract.
    let Some(e) = (unsafe { embedder.as_ref() }) else {
        invalid(F, "embedder is NULL");
        return std::ptr::null_mut();
    };
    if e.trace.is_none() {
        invalid(F, "embedder->trace is NULL");
        return std::ptr::null_mut();
    }
    // SAFETY: per the contract.
    let config = match unsafe { config.as_ref() } {
        Some(c) => match c.to_config(F) {
            Ok(c) => c,
            Err(_) => return std::ptr::null_mut(),
        },
        None => match Config::from_env() {
            Ok(c) => c,
            Err(err) => {
                report(F, &err);
                return std::ptr::null_mut();
            }
        },
    };
    match Heap::new(config, CEmbedder(*e)) {
        Ok(heap) => {
            clear_error();
            Box::into_raw(Box::new(mosaic_heap {
                magic: AtomicU64::new(LIVE),
                heap: UnsafeCell::new(Some(heap)),
            }))
        }
        Err(err) => {
            report(F, &err);
            std::ptr::null_mut()
        }
    }
}

/// Releases the caller's handle on the heap. The heap itself goes away once
/// every mutator is freed too; then `on_free` runs, on the thread freeing
/// that last handle, for the objects that asked for cleanup. NULL is
/// ignored (the last error is left as it was).
///
/// The handle's few bytes stay allocated as a tombstone, so any later use of
/// a freed heap handle, freeing it again included, is reliably reported as
/// `MOSAIC_ERR_INVALID_ARGUMENT` ("heap was already freed").
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`. Freeing a heap handle
/// while another thread uses the same handle is undefined behaviour.
#[no_mangle]
pub unsafe extern "C" fn mosaic_heap_free(heap: *mut mosaic_heap) {
    // SAFETY: the API's contract: a non-null heap pointer came from
    // mosaic_heap_new, and heap handles are never deallocated.
    let Some(h) = (unsafe { heap.as_ref() }) else {
        return;
    };
    let magic = h
        .magic
        .compare_exchange(LIVE, DEAD, Ordering::AcqRel, Ordering::Acquire);
    if usable(
        "mosaic_heap_free",
        "heap",
        Some(magic.unwrap_or_else(|m| m)),
    ) {
        // SAFETY: we turned the handle DEAD, so no later call reads the
        // cell; no call may use the handle concurrently (mosaic.h).
        drop(unsafe { (*h.heap.get()).take() });
        clear_error();
    }
}

/// Creates a mutator for the calling thread. NULL on error: a NULL or freed
/// heap, or `MOSAIC_ERR_INVALID_ARGUMENT` if the calling thread already has
/// a mutator of this heap (one mutator per thread and heap).
///
/// A thread that exits without freeing its mutator has it detached
/// automatically, so collections no longer wait for it; its memory is
/// leaked until `mosaic_mutator_free`, which may then be called from
/// another thread.
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_mutator_new(heap: *mut mosaic_heap) -> *mut mosaic_mutator {
    const F: &str = "mosaic_mutator_new";
    let Some(h) = heap_ref(F, heap) else {
        return std::ptr::null_mut();
    };
    match h.mutator() {
        Ok(m) => {
            clear_error();
            MutatorHandle::into_raw(m)
        }
        Err(e) => {
            report(F, &e);
            std::ptr::null_mut()
        }
    }
}

/// Frees a mutator. Its root handles stay valid until freed. NULL is ignored
/// (the last error is left as it was).
///
/// A mutator freed twice, or used after it was freed, is reported as
/// `MOSAIC_ERR_INVALID_ARGUMENT` ("mutator was already freed") as long as
/// its memory has not been reused for a new mutator; the check is a cheap
/// safety net, not a guarantee, and such use is undefined behaviour.
///
/// When this was the heap's last handle, `on_free` runs here for the objects
/// that asked for cleanup.
///
/// # Safety
/// `m` must be NULL or from `mosaic_mutator_new`, freed once, on its thread
/// (or on any thread once its thread has exited).
#[no_mangle]
pub unsafe extern "C" fn mosaic_mutator_free(m: *mut mosaic_mutator) {
    // SAFETY: the API's contract: `m` is NULL or came from mosaic_mutator_new.
    if unsafe { MutatorHandle::free("mosaic_mutator_free", "mutator", m) } {
        clear_error();
    }
}

/// Allocates `size` zeroed bytes with `flags` (`MOSAIC_NO_POINTERS`, ...).
/// Returns NULL on error: out of memory, too large, bad flags, a NULL or
/// freed mutator.
///
/// Allocation is a safepoint and may collect on this thread (running
/// `trace` and `roots` here) or, with lazy sweeping, sweep pages (running
/// `on_free` here); see `mosaic_embedder`.
///
/// # Safety
/// `m` must be NULL or a live mutator used only by the calling thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_alloc(
    m: *mut mosaic_mutator,
    size: usize,
    flags: u32,
) -> *mut c_void {
    if error_may_be_set() {
        // SAFETY: same contract.
        return unsafe { alloc_clearing_error(m, size, flags) };
    }
    // SAFETY: same contract.
    unsafe { alloc(m, size, flags) }
}

/// `mosaic_alloc` when this thread's last error may be set: reset it first.
/// Kept out of line so that the common path needs no registers saved.
///
/// # Safety
/// As `mosaic_alloc`.
#[cold]
#[inline(never)]
unsafe fn alloc_clearing_error(m: *mut mosaic_mutator, size: usize, flags: u32) -> *mut c_void {
    clear_error_slow();
    // SAFETY: same contract.
    unsafe { alloc(m, size, flags) }
}

/// `mosaic_alloc` with the last error already `MOSAIC_OK`: a success leaves
/// it so, a failure sets it.
///
/// # Safety
/// As `mosaic_alloc`.
#[inline(always)]
unsafe fn alloc(m: *mut mosaic_mutator, size: usize, flags: u32) -> *mut c_void {
    const F: &str = "mosaic_alloc";
    let Some(m) = mutator_mut(F, m) else {
        return std::ptr::null_mut();
    };
    let Some(flags) = AllocFlags::from_bits(flags) else {
        report(F, &mosaic_core::Error::InvalidFlags { bits: flags });
        return std::ptr::null_mut();
    };
    match m.alloc_with(size, flags) {
        Ok(o) => o.as_ptr().cast(),
        Err(e) => {
            report(F, &e);
            std::ptr::null_mut()
        }
    }
}

/// Collects garbage now (stop-the-world): `trace` and `roots` run on this
/// thread while the other mutators are stopped. If another thread is
/// already collecting, waits for that collection instead.
///
/// # Safety
/// As `mosaic_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_collect(m: *mut mosaic_mutator) {
    if let Some(m) = mutator_mut("mosaic_collect", m) {
        m.collect();
        clear_error();
    }
}

/// Sweeps every page left unswept since the last collection (`on_free` runs
/// on this thread for the dead objects found).
///
/// # Safety
/// As `mosaic_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_finish_sweep(m: *mut mosaic_mutator) {
    if let Some(m) = mutator_mut("mosaic_finish_sweep", m) {
        m.finish_sweep();
        clear_error();
    }
}

/// Parks here if another thread wants to collect. Call it in long loops
/// that do not allocate.
///
/// # Safety
/// As `mosaic_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_safepoint(m: *mut mosaic_mutator) {
    if let Some(m) = mutator_mut("mosaic_safepoint", m) {
        m.safepoint();
        clear_error();
    }
}

/// Runs `f(arg)` as a blocking region (a system call, a lock wait): other
/// threads may collect meanwhile. `f` must not touch the heap or call
/// mosaic functions, and must return normally (no `longjmp` out of it).
///
/// # Safety
/// As `mosaic_alloc`; `f` must be a valid function.
#[no_mangle]
pub unsafe extern "C" fn mosaic_blocking(
    m: *mut mosaic_mutator,
    f: Option<unsafe extern "C" fn(arg: *mut c_void)>,
    arg: *mut c_void,
) {
    const F: &str = "mosaic_blocking";
    let Some(m) = mutator_mut(F, m) else {
        return;
    };
    let Some(f) = f else {
        invalid(F, "f is NULL");
        return;
    };
    // SAFETY: calling the caller's function with its own argument.
    m.blocking(|| unsafe { f(arg) });
    clear_error();
}

/// Whether `p` is the start of an object allocated in `heap`. Any other `p`
/// gets `false` and counts as success; a NULL or freed heap gets `false`
/// and `MOSAIC_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`; `p` may be any value.
#[no_mangle]
pub unsafe extern "C" fn mosaic_is_object(heap: *const mosaic_heap, p: *const c_void) -> bool {
    let Some(h) = heap_ref("mosaic_is_object", heap) else {
        return false;
    };
    let answer = h.is_object(p.cast());
    clear_error();
    answer
}

/// The usable size of an object (its slot size), or 0 with
/// `MOSAIC_ERR_FOREIGN_POINTER` if `p` is not an object of `heap`.
///
/// # Safety
/// As `mosaic_is_object`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_object_size(heap: *const mosaic_heap, p: *const c_void) -> usize {
    const F: &str = "mosaic_object_size";
    let Some(h) = heap_ref(F, heap) else {
        return 0;
    };
    match h.check_object(p.cast()).and_then(|o| h.object_size(o)) {
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
