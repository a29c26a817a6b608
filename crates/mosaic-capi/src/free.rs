//! Explicit deallocation through the C API (`mosaic_free`).

use std::ffi::c_void;

use mosaic_core::{Freed, ObjRef};

use crate::error::{clear_error, invalid, mosaic_error, report};
use crate::heap::{mosaic_mutator, mutator_mut};

/// Frees `obj`, an object the program will not use again (like bdwgc's
/// `GC_free`): a small object's memory goes to this mutator's next
/// allocation of the same size and flags, a large object's pages back to
/// the heap at once. An object the collector still has business with (a
/// finalizer, `MOSAIC_NEEDS_CLEANUP`, an ephemeron, a pin, a weak slot
/// inside it) is left to the next collection that finds it unreachable, as
/// without the call. `*now` (if not NULL) tells whether the memory is
/// reusable before the next collection. Errors: a NULL or freed mutator;
/// `MOSAIC_ERR_FOREIGN_POINTER` if `obj` is not the start of a live object
/// of the heap; `MOSAIC_ERR_MISUSE` for an object freed twice, inside a
/// blocking region or a collector callback.
///
/// # Safety
/// `m` must be NULL or a live mutator used only by the calling thread;
/// nothing may use `obj` after the call (a reference left where the
/// collector looks keeps nothing: the memory may hold a new object); `now`
/// must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mosaic_free(
    m: *mut mosaic_mutator,
    obj: *mut c_void,
    now: *mut bool,
) -> mosaic_error {
    const F: &str = "mosaic_free";
    let Some(m) = mutator_mut(F, m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    let Some(obj) = ObjRef::from_ptr(obj.cast()) else {
        return invalid(F, "obj is NULL");
    };
    // SAFETY: the caller gives the object up (this function's contract).
    match unsafe { m.free(obj) } {
        Ok(f) => {
            if !now.is_null() {
                // SAFETY: writable, per the contract.
                unsafe { now.write(f != Freed::AtNextCollection) };
            }
            clear_error();
            mosaic_error::MOSAIC_OK
        }
        Err(e) => report(F, &e),
    }
}
