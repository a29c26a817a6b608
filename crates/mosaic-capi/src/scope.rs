//! The scope: a per-mutator LIFO stack of root-slot addresses, for C
//! locals. Pushing and popping take no lock and allocate only to grow the
//! stack (amortised; 256 slots are reserved up front).

use std::ffi::c_void;

use crate::error::{clear_error, invalid, misuse, mosaic_error};
use crate::heap::{mosaic_mutator, mutator_mut};

/// The depth of the mutator's scope: save it, add slots, then close back to
/// it with `mosaic_scope_close`. 0 with an error for a NULL or freed
/// mutator (0 is also the depth of an empty scope: check
/// `mosaic_last_error()` if that matters).
///
/// ```c
/// size_t depth = mosaic_scope_open(m);
/// Node *n = NULL;
/// mosaic_scope_add(m, (void **)&n);   // n survives collections, and
/// n = mosaic_alloc(m, sizeof *n, 0);  // would be updated if it moved
/// ...
/// mosaic_scope_close(m, depth);
/// ```
///
/// # Safety
/// `m` must be NULL or a live mutator of the calling thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_scope_open(m: *mut mosaic_mutator) -> usize {
    let Some(m) = mutator_mut("mosaic_scope_open", m) else {
        return 0;
    };
    let depth = m.scope_depth();
    clear_error();
    depth
}

/// Pushes `slot`, the address of a pointer variable, onto the mutator's
/// scope: until closed, every collection visits it like a root (it keeps
/// its object alive and would be updated if the object moved). The
/// variable may hold NULL, an object of the heap or a pointer outside the
/// heap, and must stay valid (its function must not return) until its
/// scope is closed. No lock; no allocation beyond growing the stack.
/// Errors: `MOSAIC_ERR_INVALID_ARGUMENT` for a NULL or misaligned slot;
/// `MOSAIC_ERR_MISUSE` inside a blocking region (a collection may be
/// reading the scope); a NULL or freed mutator.
///
/// # Safety
/// `m` must be NULL or a live mutator of the calling thread; `slot` a
/// writable pointer-sized variable that outlives its scope.
#[no_mangle]
pub unsafe extern "C" fn mosaic_scope_add(
    m: *mut mosaic_mutator,
    slot: *mut *mut c_void,
) -> mosaic_error {
    const F: &str = "mosaic_scope_add";
    let Some(m) = mutator_mut(F, m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    if slot.is_null() || !slot.is_aligned() {
        return invalid(F, "slot is NULL or not aligned to a pointer");
    }
    if m.is_blocking() {
        return misuse(F, "cannot add scope slots inside a blocking region");
    }
    // SAFETY: the caller keeps the slot valid until it closes the scope
    // (this function's contract); not in a blocking region (checked).
    unsafe { m.scope_push(slot.cast()) };
    clear_error();
    mosaic_error::MOSAIC_OK
}

/// Pops the scope back to `depth` (a value `mosaic_scope_open` returned):
/// the slots added since are no longer visited. Errors:
/// `MOSAIC_ERR_INVALID_ARGUMENT` if `depth` is deeper than the scope (it
/// was closed already: the scope is left as it is); `MOSAIC_ERR_MISUSE`
/// inside a blocking region; a NULL or freed mutator.
///
/// # Safety
/// As `mosaic_scope_open`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_scope_close(m: *mut mosaic_mutator, depth: usize) -> mosaic_error {
    const F: &str = "mosaic_scope_close";
    let Some(m) = mutator_mut(F, m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    if m.is_blocking() {
        return misuse(F, "cannot close a scope inside a blocking region");
    }
    let now = m.scope_depth();
    if depth > now {
        return invalid(
            F,
            &format!("depth {depth} is deeper than the scope ({now}): closed twice?"),
        );
    }
    m.scope_truncate(depth);
    clear_error();
    mosaic_error::MOSAIC_OK
}
