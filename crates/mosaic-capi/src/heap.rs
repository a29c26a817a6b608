//! Heaps, mutators, allocation and collection.

use std::ffi::c_void;

use mosaic_core::{AllocFlags, Config, Heap, Mutator};

use crate::config::mosaic_config;
use crate::embedder::{mosaic_embedder, CEmbedder};
use crate::error::{clear_error, invalid, report};

/// The object holds no references and is never traced.
pub const MOSAIC_NO_POINTERS: u32 = 1;
/// Call the embedder's `on_free` when the object dies.
pub const MOSAIC_NEEDS_CLEANUP: u32 = 2;
/// The object never moves.
pub const MOSAIC_PINNED: u32 = 4;

/// A garbage-collected heap.
pub struct mosaic_heap {
    pub(crate) heap: Heap<CEmbedder>,
}

/// One thread's handle on a heap.
pub struct mosaic_mutator {
    pub(crate) m: Mutator<CEmbedder>,
}

/// The heap behind a handle; `None` (with the error recorded for `function`)
/// if it is NULL.
pub(crate) fn heap_ref<'a>(function: &str, h: *const mosaic_heap) -> Option<&'a mosaic_heap> {
    // SAFETY: the API's contract: a non-null heap pointer came from mosaic_heap_new.
    let h = unsafe { h.as_ref() };
    if h.is_none() {
        invalid(function, "heap is NULL");
    }
    h
}

/// The mutator behind a handle; `None` (with the error recorded for
/// `function`) if it is NULL.
pub(crate) fn mutator_mut<'a>(
    function: &str,
    m: *mut mosaic_mutator,
) -> Option<&'a mut mosaic_mutator> {
    // SAFETY: the API's contract: a non-null mutator pointer came from
    // mosaic_mutator_new and is used by one thread at a time.
    let m = unsafe { m.as_mut() };
    if m.is_none() {
        invalid(function, "mutator is NULL");
    }
    m
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
            Box::into_raw(Box::new(mosaic_heap { heap }))
        }
        Err(err) => {
            report(F, &err);
            std::ptr::null_mut()
        }
    }
}

/// Releases the caller's handle on the heap. The heap itself goes away once
/// every mutator is freed too; then `on_free` runs for objects that asked for
/// cleanup. NULL is ignored.
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`, freed once.
#[no_mangle]
pub unsafe extern "C" fn mosaic_heap_free(heap: *mut mosaic_heap) {
    if !heap.is_null() {
        // SAFETY: per the contract, we own it.
        drop(unsafe { Box::from_raw(heap) });
        clear_error();
    }
}

/// Creates a mutator for the calling thread (one per thread). NULL on error.
///
/// # Safety
/// `heap` must be NULL or a live heap.
#[no_mangle]
pub unsafe extern "C" fn mosaic_mutator_new(heap: *mut mosaic_heap) -> *mut mosaic_mutator {
    let Some(h) = heap_ref("mosaic_mutator_new", heap) else {
        return std::ptr::null_mut();
    };
    let m = h.heap.mutator();
    clear_error();
    Box::into_raw(Box::new(mosaic_mutator { m }))
}

/// Frees a mutator. Its root handles stay valid until freed. NULL is ignored.
///
/// # Safety
/// `m` must be NULL or from `mosaic_mutator_new`, freed once, on its thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_mutator_free(m: *mut mosaic_mutator) {
    if !m.is_null() {
        // SAFETY: per the contract, we own it.
        drop(unsafe { Box::from_raw(m) });
        clear_error();
    }
}

/// Allocates `size` zeroed bytes with `flags` (`MOSAIC_NO_POINTERS`, ...).
/// Returns NULL on error: out of memory, too large, bad flags, NULL mutator.
///
/// # Safety
/// `m` must be NULL or a live mutator used only by the calling thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_alloc(
    m: *mut mosaic_mutator,
    size: usize,
    flags: u32,
) -> *mut c_void {
    const F: &str = "mosaic_alloc";
    let Some(m) = mutator_mut(F, m) else {
        return std::ptr::null_mut();
    };
    let Some(flags) = AllocFlags::from_bits(flags) else {
        report(F, &mosaic_core::Error::InvalidFlags { bits: flags });
        return std::ptr::null_mut();
    };
    match m.m.alloc_with(size, flags) {
        Ok(o) => {
            clear_error();
            o.as_ptr().cast()
        }
        Err(e) => {
            report(F, &e);
            std::ptr::null_mut()
        }
    }
}

/// Collects garbage now (stop-the-world).
///
/// # Safety
/// As `mosaic_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_collect(m: *mut mosaic_mutator) {
    if let Some(m) = mutator_mut("mosaic_collect", m) {
        m.m.collect();
        clear_error();
    }
}

/// Sweeps every page left unswept since the last collection.
///
/// # Safety
/// As `mosaic_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_finish_sweep(m: *mut mosaic_mutator) {
    if let Some(m) = mutator_mut("mosaic_finish_sweep", m) {
        m.m.finish_sweep();
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
        m.m.safepoint();
        clear_error();
    }
}

/// Runs `f(arg)` as a blocking region (a system call, a lock wait): other
/// threads may collect meanwhile. `f` must not touch the heap.
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
    m.m.blocking(|| unsafe { f(arg) });
    clear_error();
}

/// Whether `p` is the start of an object allocated in `heap`.
///
/// # Safety
/// `heap` must be NULL or a live heap; `p` may be any value.
#[no_mangle]
pub unsafe extern "C" fn mosaic_is_object(heap: *const mosaic_heap, p: *const c_void) -> bool {
    let Some(h) = heap_ref("mosaic_is_object", heap) else {
        return false;
    };
    let answer = h.heap.is_object(p.cast());
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
    match h
        .heap
        .check_object(p.cast())
        .and_then(|o| h.heap.object_size(o))
    {
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
