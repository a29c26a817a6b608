//! bdwgc's thread calls: registration, stack bases, blocking regions, the
//! allocation lock, fork handling and the signal numbers.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use crate::heap::heap;
use crate::threads::{self, InGc};

const GC_SUCCESS: c_int = 0;
const GC_DUPLICATE: c_int = 1;
const GC_UNIMPLEMENTED: c_int = 3;

/// `struct GC_stack_base` on x86-64: the stack's cold end.
#[repr(C)]
pub struct StackBase {
    pub mem_base: *mut c_void,
}

pub type FnType = Option<unsafe extern "C" fn(*mut c_void) -> *mut c_void>;
pub type StackBaseFn = Option<unsafe extern "C" fn(*mut StackBase, *mut c_void) -> *mut c_void>;

#[no_mangle]
pub extern "C" fn GC_allow_register_threads() {
    crate::control::GC_init();
}

#[no_mangle]
pub extern "C" fn GC_register_my_thread(_sb: *const StackBase) -> c_int {
    if threads::is_registered() {
        return GC_DUPLICATE;
    }
    threads::current();
    GC_SUCCESS
}

#[no_mangle]
pub extern "C" fn GC_unregister_my_thread() -> c_int {
    threads::unregister_current();
    GC_SUCCESS
}

#[no_mangle]
pub extern "C" fn GC_thread_is_registered() -> c_int {
    c_int::from(threads::is_registered())
}

#[no_mangle]
pub unsafe extern "C" fn GC_get_stack_base(sb: *mut StackBase) -> c_int {
    match crate::stack::stack_top() {
        Some(top) if !sb.is_null() => {
            // SAFETY: the caller's out structure.
            unsafe { (*sb).mem_base = top as *mut c_void };
            GC_SUCCESS
        }
        _ => GC_UNIMPLEMENTED,
    }
}

#[no_mangle]
pub unsafe extern "C" fn GC_call_with_stack_base(f: StackBaseFn, arg: *mut c_void) -> *mut c_void {
    let mut sb = StackBase {
        mem_base: crate::stack::stack_top().unwrap_or(0) as *mut c_void,
    };
    match f {
        // SAFETY: the program's function with bdwgc's arguments.
        Some(f) => unsafe { f(&mut sb, arg) },
        None => std::ptr::null_mut(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn GC_do_blocking(f: FnType, data: *mut c_void) -> *mut c_void {
    let Some(f) = f else {
        return std::ptr::null_mut();
    };
    // SAFETY: the program's function with its argument.
    threads::do_blocking(|| unsafe { f(data) })
}

#[no_mangle]
pub unsafe extern "C" fn GC_call_with_gc_active(f: FnType, data: *mut c_void) -> *mut c_void {
    let Some(f) = f else {
        return std::ptr::null_mut();
    };
    // SAFETY: as above.
    threads::with_gc_active(|| unsafe { f(data) })
}

/// `GC_call_with_alloc_lock`: `f` runs with this thread inside a call, so
/// no collection (and so no clearing of disappearing links) can run until
/// it returns: a collector waits for this thread to stop.
#[no_mangle]
pub unsafe extern "C" fn GC_call_with_alloc_lock(f: FnType, data: *mut c_void) -> *mut c_void {
    let Some(f) = f else {
        return std::ptr::null_mut();
    };
    // As bdwgc's, the call returns with the errno `f` left.
    let mut errno = crate::errno::ErrnoKept::new();
    let r = threads::with_mutator_no_stop(|_| {
        // SAFETY: the program's function with its argument.
        let r = unsafe { f(data) };
        errno.keep_current();
        r
    });
    drop(errno);
    r
}

/// `GC_alloc_lock` / `GC_alloc_unlock`: the same exclusion as a pair.
#[no_mangle]
pub extern "C" fn GC_alloc_lock() {
    threads::current();
    std::mem::forget(InGc::enter());
}

#[no_mangle]
pub extern "C" fn GC_alloc_unlock() {
    // A collection that waited meanwhile stops this thread by its next
    // signal (see `threads::with_mutator_no_stop`).
    drop(InGc);
}

/// Fork handlers are always installed (when the heap is created): a
/// thread stopped inside `fork` would hold malloc's locks, which the
/// collector needs. `GC_set_handle_fork(-1)` says the program calls the
/// `GC_atfork_*` functions itself around `fork`; ours then do nothing.
static MANUAL_FORK: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread is inside a program-driven prepare/parent or
    /// prepare/child pair (several threads may fork at once).
    static IN_MANUAL_FORK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[no_mangle]
pub extern "C" fn GC_set_handle_fork(on: c_int) {
    MANUAL_FORK.store(on < 0, Relaxed);
}

/// Whether the installed handlers should act: not when the program calls
/// the `GC_atfork_*` functions itself around this fork (or said it would).
pub fn automatic_fork_handling() -> bool {
    !IN_MANUAL_FORK.with(|f| f.get()) && !MANUAL_FORK.load(Relaxed)
}

#[no_mangle]
pub extern "C" fn GC_atfork_prepare() {
    if !IN_MANUAL_FORK.with(|f| f.replace(true)) {
        threads::fork_prepare();
    }
}
#[no_mangle]
pub extern "C" fn GC_atfork_parent() {
    if IN_MANUAL_FORK.with(|f| f.replace(false)) {
        threads::fork_parent();
    }
}
#[no_mangle]
pub extern "C" fn GC_atfork_child() {
    if IN_MANUAL_FORK.with(|f| f.replace(false)) {
        threads::fork_child();
    }
}

#[no_mangle]
pub extern "C" fn GC_get_suspend_signal() -> c_int {
    threads::SIG_SUSPEND
}
#[no_mangle]
pub extern "C" fn GC_get_thr_restart_signal() -> c_int {
    threads::SIG_RESTART
}
#[no_mangle]
pub extern "C" fn GC_set_suspend_signal(_sig: c_int) {}
#[no_mangle]
pub extern "C" fn GC_set_thr_restart_signal(_sig: c_int) {}

/// Returns this thread's handle (for `GC_set_stackbottom`) and the cold end
/// of its scanned stack.
#[no_mangle]
pub extern "C" fn GC_get_my_stackbottom(sb: *mut StackBase) -> *mut c_void {
    let ts = threads::current();
    if !sb.is_null() {
        let top = threads::scanned_stack_top(ts)
            .or_else(crate::stack::stack_top)
            .unwrap_or(0);
        // SAFETY: the caller's out structure.
        unsafe { (*sb).mem_base = top as *mut c_void };
    }
    ts.cast()
}

/// Sets the cold end of the stack scanned for a thread (`handle` from
/// `GC_get_my_stackbottom`, or null for the calling thread): for programs
/// that switch stacks (fibers, coroutines).
#[no_mangle]
pub unsafe extern "C" fn GC_set_stackbottom(handle: *mut c_void, sb: *const StackBase) {
    if sb.is_null() {
        return;
    }
    let ts = if handle.is_null() {
        threads::current()
    } else {
        handle.cast()
    };
    // SAFETY: the caller's structure.
    let top = unsafe { (*sb).mem_base } as usize;
    if top != 0 {
        threads::set_stack_bottom(ts, top);
    }
}

#[no_mangle]
pub extern "C" fn GC_register_altstack(
    _stack: *mut c_void,
    _size: usize,
    _alt: *mut c_void,
    _alt_size: usize,
) {
}

/// Opens a library: blocking (the loader may take long, and its lock).
#[no_mangle]
pub unsafe extern "C" fn GC_dlopen(path: *const std::ffi::c_char, mode: c_int) -> *mut c_void {
    heap();
    // SAFETY: the caller's arguments.
    threads::do_blocking(|| unsafe { libc::dlopen(path, mode) })
}
