//! The thread's block in the initial-exec TLS model: what every entry
//! point reads first, and all that `GC_malloc`'s fast path reads.
//!
//! Invariant: a zeroed block is an unregistered thread's; while the
//! thread is registered, `cur` points to its `ThreadState` and `fast`
//! views the buffers of the mutator in use (its own, or the one lent to a
//! running finalizer). The call depth (`in_gc`) is above 0 exactly while
//! the thread is inside a call that touches the heap or one of this
//! library's locks: the stop signal's handler then parks nothing.

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{compiler_fence, AtomicU8, Ordering::SeqCst};

use mosaic::AllocFlags;

use crate::heap::GcMutator;
use crate::threads::ThreadState;

/// The thread's state, in one thread-local block that the allocation fast
/// path reads ([`fast_alloc`]): a pointer to the rest of it, the count of
/// calls of this library the thread is in (signals deferred while it is
/// not 0), and where a bump allocation finds its buffers.
#[repr(C)]
pub struct Local {
    pub(crate) cur: Cell<*mut ThreadState>,
    pub(crate) in_gc: Cell<u32>,
    /// The mutator a running finalizer was handed (`finalize.rs`): calls the
    /// finalizer makes use it, not a second reference to the same mutator.
    pub(crate) lent: Cell<*mut GcMutator>,
    /// The fast path's view of the mutator in use (its own or the lent
    /// one); `buffers` is null while there is none (not registered).
    pub(crate) fast: Cell<FastView>,
    /// The world's "a collection wants threads to stop" byte.
    pub(crate) requested: Cell<*const AtomicU8>,
}

/// What [`fast_alloc`] reads of a mutator: the allocation buffers of its
/// conservative (`GC_malloc`) and pointer-free (`GC_malloc_atomic`) runs
/// by class, and its table from a request's size in 8-byte steps to its
/// class.
#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct FastView {
    normal: *mut Buffer,
    atomic: *mut Buffer,
    class_of: *const u8,
    class_of_len: usize,
}

impl FastView {
    pub(crate) const NONE: FastView = FastView {
        normal: std::ptr::null_mut(),
        atomic: std::ptr::null_mut(),
        class_of: std::ptr::null(),
        class_of_len: 0,
    };

    /// The view of `m`, or none if its buffers are not what this file
    /// bumps through (every allocation then goes through the mutator).
    pub(crate) fn of(m: &mut GcMutator) -> FastView {
        let raw = m.raw_fast_path();
        let base = |flags| raw.bump_buffers(flags);
        match (base(AllocFlags::CONSERVATIVE), base(AllocFlags::UNINIT)) {
            (Some(n), Some(a)) if raw.buffer_size == std::mem::size_of::<Buffer>() => {
                let buffers = raw.buffers.cast::<Buffer>();
                FastView {
                    // SAFETY: indexes of the mutator's buffer array.
                    normal: unsafe { buffers.add(n) },
                    // SAFETY: as above.
                    atomic: unsafe { buffers.add(a) },
                    class_of: raw.class_of,
                    class_of_len: raw.class_of_len,
                }
            }
            _ => FastView::NONE,
        }
    }
}

/// An allocation buffer as the core lays it out (`RawFastPath`): the run's
/// next free byte, its end, the slot size, then fields only the core uses.
#[repr(C)]
struct Buffer {
    cursor: usize,
    limit: usize,
    slot_size: usize,
    _core: [usize; 3],
}

/// Runs `f` on the calling thread's allocation buffer for `size` bytes
/// (the extra byte included) of the kind (`ATOMIC`: pointer-free, else
/// conservative) with the stop signal deferred, since a collection flushes
/// the buffers of threads its signal parked; 0 without calling it when the
/// thread has no fast path or the size is large.
#[inline(always)]
fn with_buffer<const ATOMIC: bool>(size: usize, f: impl FnOnce(&mut Buffer) -> usize) -> usize {
    let l = local();
    let v = l.fast.get();
    let i = size.saturating_add(7) >> 3;
    if i >= v.class_of_len {
        return 0;
    }
    // SAFETY: below `class_of_len`; the table lives as long as the mutator,
    // which is registered while its view is in `fast`.
    let class = usize::from(unsafe { *v.class_of.add(i) });
    let buffers = if ATOMIC { v.atomic } else { v.normal };
    // (The depth is put back as it was, not decremented: two stores, no
    // read-modify-write. A signal handler leaves it as it found it.)
    let depth = l.in_gc.get();
    l.in_gc.set(depth + 1);
    compiler_fence(SeqCst);
    // SAFETY: the mutator's buffer of that class and kind, used by this
    // thread only; no collection changes it meanwhile (signals deferred).
    let r = f(unsafe { &mut *buffers.add(class) });
    compiler_fence(SeqCst);
    l.in_gc.set(depth);
    r
}

/// Allocates `size` bytes (the extra byte included) from the calling
/// thread's current run for the kind (`ATOMIC`: pointer-free, else
/// conservative), or returns null: the thread has no fast path, the size
/// is large, or the run is used up. After a non-null result the caller
/// checks [`attention`].
#[inline(always)]
pub fn fast_alloc<const ATOMIC: bool>(size: usize) -> *mut c_void {
    with_buffer::<ATOMIC>(size, |b| {
        let p = b.cursor;
        let next = p.wrapping_add(b.slot_size);
        if next <= b.limit {
            b.cursor = next;
            p
        } else {
            0
        }
    }) as *mut c_void
}

/// Takes up to `max` (at least 1) objects of `size` bytes (the extra
/// byte included) from the calling thread's current run for the kind, as
/// [`fast_alloc`] takes one, and links them through their first word in
/// address order, the last one's link null: `GC_malloc_many`'s list from
/// one bump, as bdwgc hands out a block's free list. Null when the run is
/// used up (or there is no fast path, or the size is large). The links are
/// written before the stop signal can park the thread: a collection then
/// finds every taken object reachable from the first, which the caller
/// holds.
#[inline]
pub fn fast_take<const ATOMIC: bool>(size: usize, max: usize) -> *mut c_void {
    with_buffer::<ATOMIC>(size, |b| {
        let (first, slot) = (b.cursor, b.slot_size);
        let n = (b.limit.saturating_sub(first) / slot.max(1)).min(max);
        if n == 0 {
            return 0;
        }
        b.cursor = first + n * slot;
        for k in 0..n {
            let o = first + k * slot;
            let next = if k + 1 < n { o + slot } else { 0 };
            // SAFETY: a slot of the run just taken (at least a word).
            unsafe { (o as *mut usize).write(next) };
        }
        first
    }) as *mut c_void
}

/// Whether the thread must do more than return after a fast allocation:
/// a collection waits for it to stop.
#[inline(always)]
pub fn stop_requested() -> bool {
    let r = local().requested.get();
    // SAFETY: null, or the world's flag, which lives as long as the heap.
    !r.is_null() && unsafe { (*r).load(std::sync::atomic::Ordering::Relaxed) } != 0
}

// The block, in the initial-exec TLS model: the dynamic linker places it
// in the static TLS area when the library is loaded, so that reaching it
// is one load from the thread pointer and an add. (Rust's
// `thread_local!` in a shared library goes through `__tls_get_addr`, a
// call on every allocation.) Zero-initialised, and a zeroed `Local` is an
// unregistered thread's.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
std::arch::global_asm!(
    ".pushsection .tbss,\"awT\",@nobits",
    ".p2align 6",
    ".globl mosaic_gc_local_tls",
    ".hidden mosaic_gc_local_tls",
    ".type mosaic_gc_local_tls, @object",
    ".size mosaic_gc_local_tls, 64",
    "mosaic_gc_local_tls:",
    ".zero 64",
    ".popsection",
);

const _: () = assert!(std::mem::size_of::<Local>() <= 64);

/// This thread's `Local`. Valid on this thread while it runs: no
/// destructor, so also during its exit and in signal handlers.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[inline(always)]
pub(crate) fn local() -> &'static Local {
    let p: *const Local;
    // SAFETY: the thread pointer (fs:0 holds its own address on x86-64
    // Linux) plus the block's offset in the static TLS area, which the
    // dynamic linker wrote in the GOT: the address of this thread's block.
    // Constant for a thread, so `pure` and `nomem`.
    unsafe {
        std::arch::asm!(
            "mov {p}, qword ptr fs:[0]",
            "add {p}, qword ptr [rip + mosaic_gc_local_tls@GOTTPOFF]",
            p = out(reg) p,
            options(pure, nomem, nostack),
        );
    }
    // SAFETY: 64 zero-initialised, 64-aligned bytes for each thread (see the
    // block's definition), a valid `Local`; the reference never leaves the
    // thread, and the block outlives the thread's code.
    unsafe { &*p }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
thread_local! {
    static LOCAL: Local = const {
        Local {
            cur: Cell::new(std::ptr::null_mut()),
            in_gc: Cell::new(0),
            lent: Cell::new(std::ptr::null_mut()),
            fast: Cell::new(FastView::NONE),
            requested: Cell::new(std::ptr::null()),
        }
    };
}

/// This thread's `Local` (one thread-local access). Valid on this thread
/// while it runs: no destructor, so also during its exit.
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
#[inline(always)]
pub(crate) fn local() -> &'static Local {
    // SAFETY: a const-initialised thread-local without a destructor lives
    // as long as its thread, and the reference never leaves the thread.
    LOCAL.with(|l| unsafe { &*(l as *const Local) })
}
