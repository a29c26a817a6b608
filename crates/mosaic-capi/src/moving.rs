//! Moving objects: pins, compaction, conservative stack scanning, heap
//! dumps.

use std::ffi::{c_char, c_void, CStr, OsStr};
use std::os::unix::ffi::OsStrExt;

use mosaic_core::{inside_callback, ObjRef};

use crate::config::{compact_order_from_c, mosaic_compact_order};
use crate::error::{clear_error, invalid, misuse, mosaic_error, report};
use crate::heap::{heap_ref, mosaic_heap, mosaic_mutator, mutator_mut};

/// The result of a call returning nothing: `MOSAIC_OK`, or the error
/// recorded for `function`.
fn done(function: &str, r: Result<(), mosaic_core::Error>) -> mosaic_error {
    match r {
        Ok(()) => {
            clear_error();
            mosaic_error::MOSAIC_OK
        }
        Err(e) => report(function, &e),
    }
}

/// Pins `obj`: no compaction moves it until it has been unpinned as many
/// times as it was pinned (pins are counted). Pinning does not keep the
/// object alive: keep it reachable as usual. Use it while C code holds the
/// object's address where the collector does not look (a pointer handed to
/// the OS, a hash table keyed by address). Errors: a NULL or freed
/// mutator, `MOSAIC_ERR_INVALID_ARGUMENT` for a NULL `obj`,
/// `MOSAIC_ERR_FOREIGN_POINTER` if `obj` is not the start of an object of
/// the heap, `MOSAIC_ERR_MISUSE` inside a blocking region or a collector
/// callback.
///
/// # Safety
/// `m` must be NULL or a live mutator used only by the calling thread;
/// `obj` may be any value.
#[no_mangle]
pub unsafe extern "C" fn mosaic_pin(m: *mut mosaic_mutator, obj: *mut c_void) -> mosaic_error {
    const F: &str = "mosaic_pin";
    let Some(m) = mutator_mut(F, m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    let Some(obj) = ObjRef::from_ptr(obj.cast()) else {
        return invalid(F, "obj is NULL");
    };
    done(F, m.pin(obj))
}

/// Removes one pin of `obj` (see `mosaic_pin`). Errors: a NULL or freed
/// mutator; `MOSAIC_ERR_INVALID_ARGUMENT` if `obj` is NULL or has no pin
/// left (an object allocated `MOSAIC_PINNED` stays pinned for life and has
/// no pin to remove); `MOSAIC_ERR_MISUSE` inside a blocking region or a
/// collector callback.
///
/// # Safety
/// As `mosaic_pin`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_unpin(m: *mut mosaic_mutator, obj: *mut c_void) -> mosaic_error {
    const F: &str = "mosaic_unpin";
    let Some(m) = mutator_mut(F, m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    let Some(obj) = ObjRef::from_ptr(obj.cast()) else {
        return invalid(F, "obj is NULL");
    };
    done(F, m.unpin(obj))
}

/// Whether `obj` is pinned now: allocated `MOSAIC_PINNED` or pinned with
/// `mosaic_pin`. (Large objects never move, pinned or not; an object an
/// ambiguous word pointed to is pinned only during that collection.) Any
/// `obj` that is not an object of `heap` gets `false` and counts as
/// success; a NULL or freed heap gets `false` and
/// `MOSAIC_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`; `obj` may be any value.
#[no_mangle]
pub unsafe extern "C" fn mosaic_is_pinned(heap: *const mosaic_heap, obj: *const c_void) -> bool {
    let Some(h) = heap_ref("mosaic_is_pinned", heap) else {
        return false;
    };
    let answer = ObjRef::from_ptr(obj.cast_mut().cast()).is_some_and(|o| h.is_pinned(o));
    clear_error();
    answer
}

/// Collects, then compacts every size pool (like Ruby's `GC.compact`):
/// every live object that is not pinned (`MOSAIC_PINNED`, `mosaic_pin`, or
/// pointed to by an ambiguous word: `mosaic_visit_ambiguous`, a
/// conservatively scanned stack) may move to fill the pages in the
/// configured order (`compact_toward` in `mosaic_config`), and pages left
/// empty go back to the heap. Afterwards only the references the collector
/// knows hold the new addresses: the fields `trace` reports, the slots
/// `roots` and `mutator_roots` report, root handles, scope slots, weak
/// handles, weak slots and ephemerons. Any other copy of an object's
/// address is stale (see MOVING at the top of this header); `on_move`
/// tells the embedder of each move. Large objects never move. Errors: a
/// NULL or freed mutator, `MOSAIC_ERR_MISUSE` inside a blocking region or
/// a collector callback (nothing is collected then).
///
/// # Safety
/// As `mosaic_pin`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_compact(m: *mut mosaic_mutator) -> mosaic_error {
    const F: &str = "mosaic_compact";
    let Some(m) = mutator_mut(F, m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    done(F, m.compact())
}

/// `mosaic_compact` filling pages in the order given
/// (`MOSAIC_COMPACT_PINNED_FIRST` or `MOSAIC_COMPACT_ADDRESS`) instead of
/// the configured one, to compare orders. An unknown `order` is
/// `MOSAIC_ERR_INVALID_ARGUMENT` (nothing is collected); other errors as
/// `mosaic_compact`.
///
/// # Safety
/// As `mosaic_pin`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_compact_toward(
    m: *mut mosaic_mutator,
    order: mosaic_compact_order,
) -> mosaic_error {
    const F: &str = "mosaic_compact_toward";
    let Some(m) = mutator_mut(F, m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    let Some(order) = compact_order_from_c(order) else {
        return invalid(
            F,
            &format!(
                "unknown order {order} (expected MOSAIC_COMPACT_PINNED_FIRST or MOSAIC_COMPACT_ADDRESS)"
            ),
        );
    };
    done(F, m.compact_toward(order))
}

/// Scans the calling thread's stack and callee-saved registers
/// conservatively at every collection (`on` true), or stops (`on` false).
/// Every word there that points into an object (interior pointers
/// included) keeps it alive and pinned for that collection, so C code may
/// hold objects in plain locals, without a root, scope slot or shadow
/// stack, and they neither die nor move. The words are recorded where the
/// thread stops for a collection: in `mosaic_alloc` (or any call that may
/// collect), `mosaic_collect`, `mosaic_safepoint`, or on entering a
/// blocking region; code running inside a blocking region must leave heap
/// objects alone as always. Call it on `m`'s thread (the mutator's own
/// stack is the one scanned). Errors: a NULL or freed mutator;
/// `MOSAIC_ERR_INVALID_ARGUMENT` where the platform cannot tell where the
/// thread's stack is (nothing changes); `MOSAIC_ERR_MISUSE` inside a
/// blocking region or a collector callback.
///
/// # Safety
/// As `mosaic_pin`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_conservative_stack(
    m: *mut mosaic_mutator,
    on: bool,
) -> mosaic_error {
    const F: &str = "mosaic_conservative_stack";
    let Some(m) = mutator_mut(F, m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    // While blocked, the stack recorded on entry is what a collection
    // scans: changing the setting would forget it.
    if m.is_blocking() {
        return misuse(F, "cannot change stack scanning inside a blocking region");
    }
    if inside_callback() {
        return misuse(
            F,
            "cannot change stack scanning inside a collector callback",
        );
    }
    done(F, m.set_conservative_stack(on))
}

/// Writes a heap dump to the file `path` (created or truncated): one JSON
/// object per line, like Ruby's `ObjectSpace.dump_all`. First a `HEAP`
/// line (page size, pages in use, objects), then a `PAGE` line per
/// small-object page in address order (pool, slot size, slots, live and
/// pinned counts), then an `OBJECT` line per live object (address, page,
/// slot, pool, size, pinned, flags, and `type_name` when the embedder's
/// `type_name` callback names it; large objects have `"large":true`).
/// The world is stopped while the file is written, so the dump is one
/// consistent moment; nothing is collected. `mosaic-heapviz` draws it.
/// Errors: a NULL or freed mutator, `MOSAIC_ERR_INVALID_ARGUMENT` for a
/// NULL `path` or a file that cannot be written (the message says why),
/// `MOSAIC_ERR_MISUSE` inside a blocking region or a collector callback.
///
/// # Safety
/// As `mosaic_pin`; `path` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn mosaic_dump_heap(
    m: *mut mosaic_mutator,
    path: *const c_char,
) -> mosaic_error {
    const F: &str = "mosaic_dump_heap";
    let Some(m) = mutator_mut(F, m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    if path.is_null() {
        return invalid(F, "path is NULL");
    }
    // SAFETY: non-null and NUL-terminated per the contract.
    let path = OsStr::from_bytes(unsafe { CStr::from_ptr(path) }.to_bytes());
    if path.is_empty() {
        return invalid(F, "path is empty");
    }
    done(F, m.dump_heap(path).map(|_| ()))
}
