//! The calling thread's stack bounds, from the C library (a leaf: no other
//! module of the library is used here).

use std::ffi::c_void;

/// The top (highest address) of the calling thread's stack.
pub fn stack_top() -> Option<usize> {
    // SAFETY: pthread_getattr_np fills the attribute object we destroy.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut c_void = std::ptr::null_mut();
        let mut size: usize = 0;
        let rc = libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        (rc == 0).then(|| addr as usize + size)
    }
}
