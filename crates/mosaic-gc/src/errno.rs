//! The program's `errno` across the library's calls.
//!
//! Invariant: a call of this library that succeeds returns with `errno`
//! as the program left it (or as the program's own function, run inside
//! the call, left it), as bdwgc's calls do.

/// The calling thread's `errno` as it was when made, put back when
/// dropped if it changed. The collector's waits (futexes, its locks'
/// parking) leave EAGAIN or ETIMEDOUT behind; bdwgc's calls leave `errno`
/// alone when they succeed, and programs read it after an allocation
/// (`read` failed, a message is built, then `strerror(errno)`).
pub struct ErrnoKept(libc::c_int);

impl ErrnoKept {
    #[inline(always)]
    pub fn new() -> Self {
        // SAFETY: errno is the calling thread's; the location is valid for
        // the thread's life.
        ErrnoKept(unsafe { *libc::__errno_location() })
    }

    /// Puts `errno` back to what the program's own code left (a callback
    /// run inside the guard) instead of its value before.
    #[inline(always)]
    pub fn keep_current(&mut self) {
        // SAFETY: as in `new`.
        self.0 = unsafe { *libc::__errno_location() };
    }
}

impl Drop for ErrnoKept {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: the calling thread's errno (the guard lives in one
        // call's frame, so this is the thread that made it).
        unsafe {
            let e = libc::__errno_location();
            if *e != self.0 {
                *e = self.0;
            }
        }
    }
}
