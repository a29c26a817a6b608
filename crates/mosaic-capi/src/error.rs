//! Error codes and the per-thread last error.
//!
//! Every function that can fail records why in a thread-local, and every
//! successful call resets it to `MOSAIC_OK`. Reaching a thread-local from a
//! cdylib costs a `__tls_get_addr` call, too much for `mosaic_alloc`'s fast
//! path, so a process-wide count of the threads whose last error is set gates
//! the reset: while no thread has an error set (the normal state) a success
//! costs one relaxed load. A thread always sees its own increments, so while
//! its own error is set the count it reads is nonzero and it does reset.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::sync::atomic::{AtomicUsize, Ordering};

use mosaic_core::Error;

/// Why the last call on this thread that reports errors failed
/// (`MOSAIC_OK`: it succeeded).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum mosaic_error {
    MOSAIC_OK = 0,
    /// The heap is full at its maximum size, even after a collection.
    MOSAIC_ERR_OUT_OF_MEMORY = 1,
    /// The request is larger than any object the heap can hold.
    MOSAIC_ERR_TOO_LARGE = 2,
    /// The pointer is not the start of an object of this heap.
    MOSAIC_ERR_FOREIGN_POINTER = 3,
    /// A NULL or freed handle, unknown flag bits, an out-of-range value (an
    /// alignment, an enum value), a weak slot outside the heap's objects, an
    /// ephemeron (or ephemeron key) that is not one.
    MOSAIC_ERR_INVALID_ARGUMENT = 4,
    /// A configuration value is out of range.
    MOSAIC_ERR_CONFIG = 5,
    /// The operating system refused to reserve the heap or to start its GC
    /// worker threads.
    MOSAIC_ERR_RESERVE = 6,
    /// The object (or weak slot) already has the registration asked for: a
    /// second finalizer, a weak slot registered twice. Unregister it first.
    MOSAIC_ERR_ALREADY_REGISTERED = 7,
    /// The call is not allowed in the state the thread is in: allocating,
    /// collecting or running finalizers inside a collector callback or a
    /// blocking region, leaving a blocking region never entered, starting
    /// the finalizer thread twice...
    MOSAIC_ERR_MISUSE = 8,
}

/// Threads whose last error is not `MOSAIC_OK`.
static THREADS_WITH_ERROR: AtomicUsize = AtomicUsize::new(0);

struct LastError {
    code: mosaic_error,
    /// Kept after a reset, so a message pointer stays valid until the next
    /// failing call.
    message: CString,
}

impl Drop for LastError {
    /// A thread exiting with its error set leaves the count.
    fn drop(&mut self) {
        if self.code != mosaic_error::MOSAIC_OK {
            THREADS_WITH_ERROR.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

thread_local! {
    static LAST: RefCell<LastError> = RefCell::new(LastError {
        code: mosaic_error::MOSAIC_OK,
        message: CString::default(),
    });
}

/// Records `code` as this thread's last error, with `"{function}: {message}"`.
pub(crate) fn set_error(function: &str, code: mosaic_error, message: &str) {
    debug_assert_ne!(code, mosaic_error::MOSAIC_OK);
    let text = format!("{function}: {message}").replace('\0', " ");
    let text = CString::new(text).unwrap_or_default();
    // Ignored while the thread's locals are being destroyed.
    let _ = LAST.try_with(|l| {
        let mut l = l.borrow_mut();
        if l.code == mosaic_error::MOSAIC_OK {
            THREADS_WITH_ERROR.fetch_add(1, Ordering::Relaxed);
        }
        l.code = code;
        l.message = text;
    });
}

/// Resets this thread's last error to `MOSAIC_OK` (call on every success).
#[inline(always)]
pub(crate) fn clear_error() {
    if error_may_be_set() {
        clear_error_slow();
    }
}

/// Whether this thread's last error may be set: `false` means it is
/// `MOSAIC_OK`, known without touching the thread-local.
#[inline(always)]
pub(crate) fn error_may_be_set() -> bool {
    THREADS_WITH_ERROR.load(Ordering::Relaxed) != 0
}

#[cold]
#[inline(never)]
pub(crate) fn clear_error_slow() {
    let _ = LAST.try_with(|l| {
        let mut l = l.borrow_mut();
        if l.code != mosaic_error::MOSAIC_OK {
            l.code = mosaic_error::MOSAIC_OK;
            THREADS_WITH_ERROR.fetch_sub(1, Ordering::Relaxed);
        }
    });
}

/// Records a Rust error as this thread's last error and returns its code.
pub(crate) fn report(function: &str, e: &Error) -> mosaic_error {
    let code = match e {
        Error::OutOfMemory { .. } => mosaic_error::MOSAIC_ERR_OUT_OF_MEMORY,
        Error::TooLarge { .. } => mosaic_error::MOSAIC_ERR_TOO_LARGE,
        Error::ForeignPointer { .. } => mosaic_error::MOSAIC_ERR_FOREIGN_POINTER,
        Error::InvalidFlags { .. } => mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT,
        Error::Config(_) => mosaic_error::MOSAIC_ERR_CONFIG,
        Error::Reserve(_) | Error::Workers(_) => mosaic_error::MOSAIC_ERR_RESERVE,
        Error::MutatorExists { .. } | Error::ThreadExiting { .. } => {
            mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT
        }
        Error::InvalidArgument(_) => mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT,
        Error::AlreadyRegistered { .. } => mosaic_error::MOSAIC_ERR_ALREADY_REGISTERED,
        Error::Misuse(_) => mosaic_error::MOSAIC_ERR_MISUSE,
        Error::Io { .. } => mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT,
    };
    set_error(function, code, &e.to_string());
    code
}

/// Records `MOSAIC_ERR_MISUSE` ("{function}: misuse: {what}") and returns it.
pub(crate) fn misuse(function: &str, what: &str) -> mosaic_error {
    report(function, &Error::Misuse(what.into()))
}

/// Records `MOSAIC_ERR_INVALID_ARGUMENT` ("{function}: {what}") and returns it.
pub(crate) fn invalid(function: &str, what: &str) -> mosaic_error {
    set_error(function, mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT, what);
    mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT
}

/// The error code of the last call on this thread that reports errors:
/// `MOSAIC_OK` if it succeeded.
///
/// Every function of this API that can fail reports: on failure (a NULL or
/// freed handle included) it sets the code and a message naming the
/// function; on success it resets the code to `MOSAIC_OK`. The exceptions:
/// `mosaic_last_error` and `mosaic_last_error_message` change nothing;
/// `mosaic_visit`, `mosaic_visit_ambiguous` and
/// `mosaic_visit_ambiguous_range` report nothing (they run once per edge
/// or word and must stay cheap); the `*_free` functions ignore NULL like `free()` and leave the
/// last error as it was (freeing a live handle resets it, freeing one twice
/// is an error where it can be detected).
#[no_mangle]
pub extern "C" fn mosaic_last_error() -> mosaic_error {
    LAST.try_with(|l| l.borrow().code)
        .unwrap_or(mosaic_error::MOSAIC_OK)
}

/// A message describing the last error on this thread, starting with the
/// name of the function that failed; "" if the last call succeeded. The
/// string stays valid until the next failing call on this thread.
#[no_mangle]
pub extern "C" fn mosaic_last_error_message() -> *const c_char {
    LAST.try_with(|l| {
        let l = l.borrow();
        if l.code == mosaic_error::MOSAIC_OK {
            c"".as_ptr()
        } else {
            l.message.as_ptr()
        }
    })
    .unwrap_or(c"".as_ptr())
}
