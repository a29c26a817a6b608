//! Weak handles, weak slots ("disappearing links") and ephemerons for C.

use std::ffi::c_void;

use mosaic_core::{ObjRef, WeakKind, WeakRoot};

use crate::error::{clear_error, invalid, misuse, mosaic_error, report};
use crate::handle::Guarded;
use crate::heap::{heap_ref, mosaic_heap, mosaic_mutator, mutator_mut};

/// When a weak reference is cleared: one of the `MOSAIC_WEAK_*` values.
pub type mosaic_weak_kind = u32;

/// Cleared as soon as the target is found unreachable, before its finalizer
/// (if any) runs: a finalizer never sees its object through a short weak
/// reference (Java's `WeakReference`).
pub const MOSAIC_WEAK_SHORT: mosaic_weak_kind = 0;
/// Cleared only when the target is reclaimed: an object kept alive for its
/// finalizer keeps its long weak references until it dies for good, in a
/// later collection (Boehm's `GC_register_long_link`).
pub const MOSAIC_WEAK_LONG: mosaic_weak_kind = 1;

/// A weak handle: holds an object without keeping it alive (opaque).
pub struct mosaic_weak {
    _opaque: [u8; 0],
}

/// What a `mosaic_weak *` points to.
type WeakHandle = Guarded<WeakRoot>;

fn weak_kind(function: &str, kind: mosaic_weak_kind) -> Result<WeakKind, mosaic_error> {
    match kind {
        MOSAIC_WEAK_SHORT => Ok(WeakKind::Short),
        MOSAIC_WEAK_LONG => Ok(WeakKind::Long),
        other => Err(invalid(function, &format!("unknown weak kind {other}"))),
    }
}

/// A weak handle on `obj`: `mosaic_weak_get` returns `obj` until a
/// collection finds it dead (`kind` says when: `MOSAIC_WEAK_SHORT` or
/// `MOSAIC_WEAK_LONG`), then NULL. Clearing happens only inside a
/// collection, so what `mosaic_weak_get` returns is NULL or a live object.
/// Returns NULL on error: `MOSAIC_ERR_FOREIGN_POINTER` if `obj` is not an
/// object of the heap, `MOSAIC_ERR_INVALID_ARGUMENT` for a NULL `obj`, an
/// unknown `kind`, a NULL or freed mutator.
///
/// # Safety
/// `m` must be NULL or a live mutator of the calling thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_weak_new(
    m: *mut mosaic_mutator,
    obj: *mut c_void,
    kind: mosaic_weak_kind,
) -> *mut mosaic_weak {
    const F: &str = "mosaic_weak_new";
    let Some(m) = mutator_mut(F, m) else {
        return std::ptr::null_mut();
    };
    let Ok(kind) = weak_kind(F, kind) else {
        return std::ptr::null_mut();
    };
    let Some(obj) = ObjRef::from_ptr(obj.cast()) else {
        invalid(F, "obj is NULL");
        return std::ptr::null_mut();
    };
    match m.weak_root(obj, kind) {
        Ok(w) => {
            clear_error();
            WeakHandle::into_raw(w)
        }
        Err(e) => {
            report(F, &e);
            std::ptr::null_mut()
        }
    }
}

/// The object a weak handle holds, or NULL once it died (or with an error
/// if `w` is NULL or freed). Call it on a thread whose mutator of the heap
/// is attached (not in a blocking region), and store the result in a root,
/// a scope slot or a traced field before the next safepoint if it must
/// stay alive: the weak handle does not keep it.
///
/// # Safety
/// `w` must be NULL or a live weak handle.
#[no_mangle]
pub unsafe extern "C" fn mosaic_weak_get(w: *const mosaic_weak) -> *mut c_void {
    // SAFETY: the API's contract: `w` is NULL or came from mosaic_weak_new.
    let Some(w) = (unsafe { WeakHandle::live_ref("mosaic_weak_get", "weak handle", w) }) else {
        return std::ptr::null_mut();
    };
    let obj = w.get();
    clear_error();
    obj.map_or(std::ptr::null_mut(), |o| o.as_ptr().cast())
}

/// Frees a weak handle, on any thread. NULL is ignored (the last error is
/// left as it was); a handle freed twice is reported as
/// `MOSAIC_ERR_INVALID_ARGUMENT` on a best-effort basis, as for roots.
///
/// # Safety
/// `w` must be NULL or from `mosaic_weak_new`, freed once.
#[no_mangle]
pub unsafe extern "C" fn mosaic_weak_free(w: *mut mosaic_weak) {
    // SAFETY: the API's contract: `w` is NULL or came from mosaic_weak_new.
    if unsafe { WeakHandle::free("mosaic_weak_free", "weak handle", w) } {
        clear_error();
    }
}

/// Registers a weak slot (a "disappearing link"): `slot` is the address of
/// a pointer field inside a live object of the heap, and a collection that
/// finds the object the field points to dead sets the field to NULL
/// (`kind` says when: `MOSAIC_WEAK_SHORT` or `MOSAIC_WEAK_LONG`). The field
/// may hold NULL, an object of the heap or a pointer outside the heap
/// (never cleared). `trace` should *not* visit the field, or it keeps its
/// target alive. The registration ends when the object holding the slot
/// dies, or with `mosaic_unregister_weak_slot`. Call on the mutator's
/// thread.
///
/// Errors: `MOSAIC_ERR_INVALID_ARGUMENT` if `slot` is not inside a live
/// object of this heap (a global, a stack variable) or not aligned to a
/// pointer, or for an unknown `kind`; `MOSAIC_ERR_ALREADY_REGISTERED` if
/// the slot is registered already; a NULL or freed mutator.
///
/// # Safety
/// `m` must be NULL or a live mutator of the calling thread. While
/// registered, the field must only hold what is described above, and the
/// program must expect the collector to write NULL into it.
#[no_mangle]
pub unsafe extern "C" fn mosaic_register_weak_slot(
    m: *mut mosaic_mutator,
    slot: *mut *mut c_void,
    kind: mosaic_weak_kind,
) -> mosaic_error {
    const F: &str = "mosaic_register_weak_slot";
    let Some(m) = mutator_mut(F, m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    let kind = match weak_kind(F, kind) {
        Ok(k) => k,
        Err(code) => return code,
    };
    // SAFETY: the field's contents and the collector's writes are the
    // caller's promise (this function's contract); the address itself is
    // checked by the collector.
    match unsafe { m.register_weak_slot(slot.cast(), kind) } {
        Ok(()) => {
            clear_error();
            mosaic_error::MOSAIC_OK
        }
        Err(e) => report(F, &e),
    }
}

/// Ends a weak slot's registration. Returns whether it was registered
/// (`false` is not an error: the last error is `MOSAIC_OK`), `false` with
/// an error for a NULL or freed mutator. Call on the mutator's thread.
///
/// # Safety
/// `m` must be NULL or a live mutator of the calling thread; `slot` may be
/// any value.
#[no_mangle]
pub unsafe extern "C" fn mosaic_unregister_weak_slot(
    m: *mut mosaic_mutator,
    slot: *mut *mut c_void,
) -> bool {
    let Some(m) = mutator_mut("mosaic_unregister_weak_slot", m) else {
        return false;
    };
    let was = m.unregister_weak_slot(slot.cast());
    clear_error();
    was
}

/// Allocates an ephemeron: a heap object holding two pointer words, `key`
/// at offset `H` and `value` at offset `H + 8`, readable in place
/// (`((void **)e)[H / 8]`, `[H / 8 + 1]`) or with `mosaic_ephemeron_key`
/// and `mosaic_ephemeron_value`, where `H` is the heap's
/// `ephemeron_header` (0 by default: a 16-byte object). The `H` bytes
/// before the key are the embedder's (a type header; zeroed at
/// allocation): with `H > 0`, `trace` is called on the ephemeron like on
/// any object and must visit the header's references only, never the key
/// and value. Nothing is kept per ephemeron outside the object. The value is kept alive only while the key is
/// reachable by other paths (not through this ephemeron's value); when a
/// collection finds the key dead it sets both words to NULL. The ephemeron
/// itself is an ordinary object: keep it alive with a root or a traced
/// field (a weak table's buckets), and have `trace` visit the fields that
/// hold it; never write its words directly, use `mosaic_ephemeron_set`.
/// `key` must be NULL or an object of the heap; `value` may be anything a
/// traced field may hold. Both survive the allocation even if it collects.
///
/// Returns NULL on error: `MOSAIC_ERR_INVALID_ARGUMENT` if `key` is not an
/// object of the heap; the errors of `mosaic_alloc`.
///
/// # Safety
/// `m` must be NULL or a live mutator of the calling thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_ephemeron_new(
    m: *mut mosaic_mutator,
    key: *mut c_void,
    value: *mut c_void,
) -> *mut c_void {
    const F: &str = "mosaic_ephemeron_new";
    let Some(m) = mutator_mut(F, m) else {
        return std::ptr::null_mut();
    };
    // Refused here: the Rust side would push key and value onto the scope
    // (which a collection may be reading) before refusing the allocation.
    if m.is_blocking() {
        misuse(
            F,
            "cannot allocate inside a blocking region (call mosaic_blocking_leave first)",
        );
        return std::ptr::null_mut();
    }
    match m.alloc_ephemeron(ObjRef::from_ptr(key.cast()), ObjRef::from_ptr(value.cast())) {
        Ok(e) => {
            clear_error();
            e.as_ptr().cast()
        }
        Err(e) => {
            report(F, &e);
            std::ptr::null_mut()
        }
    }
}

/// Which word of an ephemeron `ephemeron_word` reads.
enum Word {
    Key,
    Value,
}

fn ephemeron_word(
    function: &str,
    heap: *const mosaic_heap,
    e: *const c_void,
    word: Word,
) -> *mut c_void {
    let Some(h) = heap_ref(function, heap) else {
        return std::ptr::null_mut();
    };
    let Some(e) = ObjRef::from_ptr(e.cast_mut().cast()) else {
        invalid(function, "the ephemeron is NULL");
        return std::ptr::null_mut();
    };
    let read = match word {
        Word::Key => h.ephemeron_key(e),
        Word::Value => h.ephemeron_value(e),
    };
    match read {
        Ok(o) => {
            clear_error();
            o.map_or(std::ptr::null_mut(), |o| o.as_ptr().cast())
        }
        Err(err) => {
            report(function, &err);
            std::ptr::null_mut()
        }
    }
}

/// An ephemeron's key: NULL once the key died (or if it was never set), or
/// with `MOSAIC_ERR_INVALID_ARGUMENT` if `e` is not an ephemeron of the
/// heap (or the heap is NULL or freed). Call it on a thread whose mutator
/// of the heap is attached.
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`; `e` may be any value.
#[no_mangle]
pub unsafe extern "C" fn mosaic_ephemeron_key(
    heap: *const mosaic_heap,
    e: *const c_void,
) -> *mut c_void {
    ephemeron_word("mosaic_ephemeron_key", heap, e, Word::Key)
}

/// An ephemeron's value: NULL once the key died, or with an error as
/// `mosaic_ephemeron_key`.
///
/// # Safety
/// As `mosaic_ephemeron_key`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_ephemeron_value(
    heap: *const mosaic_heap,
    e: *const c_void,
) -> *mut c_void {
    ephemeron_word("mosaic_ephemeron_value", heap, e, Word::Value)
}

/// Replaces an ephemeron's key and value (same rules as
/// `mosaic_ephemeron_new`). Call on the mutator's thread. Errors:
/// `MOSAIC_ERR_INVALID_ARGUMENT` if `e` is not an ephemeron of the heap or
/// `key` not an object of it; a NULL or freed mutator.
///
/// # Safety
/// `m` must be NULL or a live mutator of the calling thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_ephemeron_set(
    m: *mut mosaic_mutator,
    e: *mut c_void,
    key: *mut c_void,
    value: *mut c_void,
) -> mosaic_error {
    const F: &str = "mosaic_ephemeron_set";
    let Some(m) = mutator_mut(F, m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    let Some(e) = ObjRef::from_ptr(e.cast()) else {
        return invalid(F, "the ephemeron is NULL");
    };
    match m.ephemeron_set(
        e,
        ObjRef::from_ptr(key.cast()),
        ObjRef::from_ptr(value.cast()),
    ) {
        Ok(()) => {
            clear_error();
            mosaic_error::MOSAIC_OK
        }
        Err(err) => report(F, &err),
    }
}
