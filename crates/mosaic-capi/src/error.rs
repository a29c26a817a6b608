//! Error codes and the per-thread last error.

use std::cell::RefCell;
use std::ffi::{c_char, CString};

use mosaic_core::Error;

/// Why the last failing call on this thread failed.
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
    /// A NULL handle, unknown flag bits or another misuse of the API.
    MOSAIC_ERR_INVALID_ARGUMENT = 4,
    /// A configuration value is out of range.
    MOSAIC_ERR_CONFIG = 5,
    /// The operating system refused to reserve the heap.
    MOSAIC_ERR_RESERVE = 6,
}

thread_local! {
    static LAST: RefCell<(mosaic_error, CString)> = RefCell::new((mosaic_error::MOSAIC_OK, CString::default()));
}

pub(crate) fn set_error(code: mosaic_error, message: impl Into<String>) {
    let msg = CString::new(message.into().replace('\0', " ")).unwrap_or_default();
    LAST.with(|l| *l.borrow_mut() = (code, msg));
}

pub(crate) fn clear_error() {
    LAST.with(|l| l.borrow_mut().0 = mosaic_error::MOSAIC_OK);
}

/// Records a Rust error as this thread's last error and returns its code.
pub(crate) fn report(e: &Error) -> mosaic_error {
    let code = match e {
        Error::OutOfMemory { .. } => mosaic_error::MOSAIC_ERR_OUT_OF_MEMORY,
        Error::TooLarge { .. } => mosaic_error::MOSAIC_ERR_TOO_LARGE,
        Error::ForeignPointer { .. } => mosaic_error::MOSAIC_ERR_FOREIGN_POINTER,
        Error::InvalidFlags { .. } => mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT,
        Error::Config(_) => mosaic_error::MOSAIC_ERR_CONFIG,
        Error::Reserve(_) => mosaic_error::MOSAIC_ERR_RESERVE,
        Error::MutatorExists { .. } => mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT,
    };
    set_error(code, e.to_string());
    code
}

pub(crate) fn invalid(what: &str) -> mosaic_error {
    set_error(
        mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT,
        format!("invalid argument: {what}"),
    );
    mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT
}

/// The error code of the last failing call on this thread (`MOSAIC_OK` if the
/// last call that reports errors succeeded).
#[no_mangle]
pub extern "C" fn mosaic_last_error() -> mosaic_error {
    LAST.with(|l| l.borrow().0)
}

/// A message describing the last error on this thread ("" if none). Valid
/// until the next failing call on this thread.
#[no_mangle]
pub extern "C" fn mosaic_last_error_message() -> *const c_char {
    LAST.with(|l| {
        let l = l.borrow();
        if l.0 == mosaic_error::MOSAIC_OK {
            c"".as_ptr()
        } else {
            l.1.as_ptr()
        }
    })
}
