//! Root handles for C.

use std::ffi::c_void;

use mosaic_core::{ObjRef, Root};

use crate::error::{invalid, report};
use crate::heap::{mosaic_mutator, mutator_mut};

/// A handle keeping one object alive.
pub struct mosaic_root {
    root: Root,
}

/// A new root holding `obj` (NULL for none). Returns NULL with
/// `MOSAIC_ERR_FOREIGN_POINTER` if `obj` is not an object of the heap.
///
/// # Safety
/// `m` must be NULL or a live mutator of the calling thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_root_new(
    m: *mut mosaic_mutator,
    obj: *mut c_void,
) -> *mut mosaic_root {
    let Some(m) = mutator_mut(m) else {
        invalid("mosaic_root_new: mutator is NULL");
        return std::ptr::null_mut();
    };
    let root = match ObjRef::from_ptr(obj.cast()) {
        None => m.m.empty_root(),
        Some(o) => match m.m.root(o) {
            Ok(r) => r,
            Err(e) => {
                report(&e);
                return std::ptr::null_mut();
            }
        },
    };
    Box::into_raw(Box::new(mosaic_root { root }))
}

/// The object a root holds (NULL if none, or if `r` is NULL).
///
/// # Safety
/// `r` must be NULL or a live root, used on its mutator's thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_root_get(r: *const mosaic_root) -> *mut c_void {
    // SAFETY: per the contract.
    match unsafe { r.as_ref() } {
        Some(r) => r
            .root
            .get()
            .map_or(std::ptr::null_mut(), |o| o.as_ptr().cast()),
        None => std::ptr::null_mut(),
    }
}

/// Makes a root hold `obj` (NULL for none).
///
/// # Safety
/// As `mosaic_root_get`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_root_set(r: *mut mosaic_root, obj: *mut c_void) {
    // SAFETY: per the contract.
    match unsafe { r.as_ref() } {
        Some(r) => r.root.set(ObjRef::from_ptr(obj.cast())),
        None => {
            invalid("mosaic_root_set: root is NULL");
        }
    }
}

/// Frees a root. NULL is ignored.
///
/// # Safety
/// `r` must be NULL or from `mosaic_root_new`, freed once, on its thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_root_free(r: *mut mosaic_root) {
    if !r.is_null() {
        // SAFETY: per the contract, we own it.
        drop(unsafe { Box::from_raw(r) });
    }
}
