//! Waiting on a 32-bit word without a lock: the part of the handshake a
//! signal handler runs (`World::park_from_signal`), where no lock, condition
//! variable or allocation may be used. `futex(2)` is a system call, safe in
//! a signal handler. (The drop-in also waits here for a thread it created
//! to register: `mosaic::unstable::futex`.)

use std::sync::atomic::{AtomicU32, Ordering::Acquire};

/// Sleeps while `word` holds `expected` (returns at once if it does not;
/// may return spuriously: callers loop).
pub fn wait(word: &AtomicU32, expected: u32) {
    if word.load(Acquire) != expected {
        return;
    }
    // SAFETY: FUTEX_WAIT on a valid, aligned u32 that outlives the call;
    // no timeout; the kernel only reads the word.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

/// [`wait`] for at most `timeout`.
pub fn wait_for(word: &AtomicU32, expected: u32, timeout: std::time::Duration) {
    if word.load(Acquire) != expected {
        return;
    }
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: FUTEX_WAIT on a valid, aligned u32 that outlives the call,
    // with a relative timeout read by the kernel during the call.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            &ts as *const libc::timespec,
        );
    }
}

/// Wakes every thread sleeping in [`wait`] on `word`.
pub fn wake_all(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE on a valid, aligned u32; wakes at most i32::MAX.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
        );
    }
}
