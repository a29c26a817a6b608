//! The debugging allocator's entry points: a 0-byte debug header, so they
//! are the plain calls (`GC_EXTRA_PARAMS` ignored).

use std::ffi::{c_char, c_int, c_void};

use crate::alloc::{self, Kind};

// ---- the debugging allocator: the plain calls (GC_EXTRA_PARAMS ignored) ----

#[no_mangle]
pub extern "C" fn GC_debug_malloc(n: usize, _s: *const c_char, _i: c_int) -> *mut c_void {
    alloc::alloc(n, Kind::Normal)
}
#[no_mangle]
pub extern "C" fn GC_debug_malloc_atomic(n: usize, _s: *const c_char, _i: c_int) -> *mut c_void {
    alloc::alloc(n, Kind::Atomic)
}
#[no_mangle]
pub extern "C" fn GC_debug_malloc_uncollectable(
    n: usize,
    _s: *const c_char,
    _i: c_int,
) -> *mut c_void {
    alloc::alloc(n, Kind::Uncollectable)
}
#[no_mangle]
pub extern "C" fn GC_debug_malloc_atomic_uncollectable(
    n: usize,
    _s: *const c_char,
    _i: c_int,
) -> *mut c_void {
    alloc::alloc(n, Kind::AtomicUncollectable)
}
#[no_mangle]
pub extern "C" fn GC_debug_malloc_ignore_off_page(
    n: usize,
    _s: *const c_char,
    _i: c_int,
) -> *mut c_void {
    alloc::alloc(n, Kind::Normal)
}
#[no_mangle]
pub extern "C" fn GC_debug_malloc_atomic_ignore_off_page(
    n: usize,
    _s: *const c_char,
    _i: c_int,
) -> *mut c_void {
    alloc::alloc(n, Kind::Atomic)
}
#[no_mangle]
pub extern "C" fn GC_debug_malloc_stubborn(n: usize, _s: *const c_char, _i: c_int) -> *mut c_void {
    alloc::alloc(n, Kind::Normal)
}
#[no_mangle]
pub extern "C" fn GC_debug_malloc_replacement(n: usize) -> *mut c_void {
    alloc::alloc(n, Kind::Normal)
}
#[no_mangle]
pub extern "C" fn GC_debug_generic_or_special_malloc(
    n: usize,
    k: c_int,
    _s: *const c_char,
    _i: c_int,
) -> *mut c_void {
    alloc::GC_malloc_kind(n, k)
}
#[no_mangle]
pub unsafe extern "C" fn GC_debug_free(p: *mut c_void) {
    // SAFETY: the caller's pointer, as for GC_free.
    unsafe { alloc::GC_free(p) }
}
#[no_mangle]
pub unsafe extern "C" fn GC_debug_realloc(
    p: *mut c_void,
    n: usize,
    _s: *const c_char,
    _i: c_int,
) -> *mut c_void {
    // SAFETY: as GC_realloc.
    unsafe { alloc::GC_realloc(p, n) }
}
#[no_mangle]
pub unsafe extern "C" fn GC_debug_realloc_replacement(p: *mut c_void, n: usize) -> *mut c_void {
    // SAFETY: as GC_realloc.
    unsafe { alloc::GC_realloc(p, n) }
}
#[no_mangle]
pub unsafe extern "C" fn GC_debug_strdup(
    s: *const c_char,
    _f: *const c_char,
    _i: c_int,
) -> *mut c_char {
    // SAFETY: as GC_strdup.
    unsafe { alloc::GC_strdup(s) }
}
#[no_mangle]
pub unsafe extern "C" fn GC_debug_strndup(
    s: *const c_char,
    n: usize,
    _f: *const c_char,
    _i: c_int,
) -> *mut c_char {
    // SAFETY: as GC_strndup.
    unsafe { alloc::GC_strndup(s, n) }
}

#[no_mangle]
pub extern "C" fn GC_get_debug_header_size() -> usize {
    0
}
