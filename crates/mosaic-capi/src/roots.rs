//! Root handles for C.

use std::ffi::c_void;

use mosaic_core::{ObjRef, Root};

use crate::error::{clear_error, report};
use crate::handle::Guarded;
use crate::heap::{mosaic_mutator, mutator_mut};

/// A handle keeping one object alive (opaque).
pub struct mosaic_root {
    _opaque: [u8; 0],
}

/// What a `mosaic_root *` points to.
type RootHandle = Guarded<Root>;

/// The root behind a handle; `None` (with the error recorded for `function`)
/// if the handle is NULL or freed.
fn root_ref<'a>(function: &str, r: *const mosaic_root) -> Option<&'a Root> {
    // SAFETY: the API's contract: `r` is NULL or came from mosaic_root_new;
    // the reference is shared and lives no longer than the call.
    unsafe { RootHandle::live_ref(function, "root", r) }
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
    const F: &str = "mosaic_root_new";
    let Some(m) = mutator_mut(F, m) else {
        return std::ptr::null_mut();
    };
    let root = match ObjRef::from_ptr(obj.cast()) {
        None => m.empty_root(),
        Some(o) => match m.root(o) {
            Ok(r) => r,
            Err(e) => {
                report(F, &e);
                return std::ptr::null_mut();
            }
        },
    };
    clear_error();
    RootHandle::into_raw(root)
}

/// The object a root holds: NULL if none, or with an error if `r` is NULL
/// or freed.
///
/// # Safety
/// `r` must be NULL or a live root, used on its mutator's thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_root_get(r: *const mosaic_root) -> *mut c_void {
    let Some(r) = root_ref("mosaic_root_get", r) else {
        return std::ptr::null_mut();
    };
    let obj = r.get();
    clear_error();
    obj.map_or(std::ptr::null_mut(), |o| o.as_ptr().cast())
}

/// Makes a root hold `obj` (NULL for none).
///
/// # Safety
/// As `mosaic_root_get`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_root_set(r: *mut mosaic_root, obj: *mut c_void) {
    if let Some(r) = root_ref("mosaic_root_set", r) {
        r.set(ObjRef::from_ptr(obj.cast()));
        clear_error();
    }
}

/// Frees a root. NULL is ignored (the last error is left as it was).
///
/// A root freed twice, or used after it was freed, is reported as
/// `MOSAIC_ERR_INVALID_ARGUMENT` ("root was already freed (or is not a
/// root)") as long as its memory has not been reused for a new root; the
/// check is a cheap safety net, not a guarantee, and such use is undefined
/// behaviour.
///
/// # Safety
/// `r` must be NULL or from `mosaic_root_new`, freed once, on its thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_root_free(r: *mut mosaic_root) {
    // SAFETY: the API's contract: `r` is NULL or came from mosaic_root_new.
    if unsafe { RootHandle::free("mosaic_root_free", "root", r) } {
        clear_error();
    }
}
