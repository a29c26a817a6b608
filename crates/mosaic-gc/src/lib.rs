//! `libgc.so.1` on Mosaic: the Boehm collector's (bdwgc 8.2) C API and
//! ABI, so that a program linked against Debian's `libgc1` runs unchanged
//! with `LD_LIBRARY_PATH=<dir with this libgc.so.1>` (or the `mosaic-gc`
//! command).
//!
//! How bdwgc's model maps onto Mosaic:
//!
//! - Every object is allocated `CONSERVATIVE` (each word an ambiguous
//!   reference, interior pointers included), or uncleared and unscanned for
//!   the `_atomic` forms; with `GC_all_interior_pointers` on (Debian's
//!   default) each request gets one byte more, so a pointer one past the
//!   end still falls inside the object. Objects never move (compaction
//!   off). `GC_malloc_explicitly_typed` objects are scanned precisely
//!   from their bitmap (`typed.rs`).
//! - Roots (`roots.rs`): the writable `PT_LOAD` segments of every loaded
//!   object minus `PT_GNU_RELRO` and minus this library, walked again at
//!   each collection; `GC_add_roots` ranges; uncollectable objects; every
//!   registered thread's stack and registers.
//! - Threads (`threads.rs`): each registered thread owns a Mosaic mutator
//!   with conservative stack scanning. C threads never poll safepoints, so
//!   a collector stops them with `SIGPWR` (bdwgc's signal); the handler
//!   parks through Mosaic's `SignalParker`. While a thread is inside one of
//!   this library's calls the signal is deferred, and the call polls the
//!   safepoint on its way out.
//!
//! Invariant: no Rust static of this library holds a pointer into the
//! heap except through the explicit root sets (the library's own segments
//! are not scanned).

use std::alloc::{GlobalAlloc, Layout};

mod alloc;
mod control;

/// The library's own memory (its Rust code's `Vec`s and `Box`es: mark
/// stacks, tables, each thread's state, the collector's scratch during a
/// pause) comes from dlmalloc: one heap for the whole process behind one
/// lock, never the program's `malloc`.
///
/// - **Why not the program's `malloc`:** a collection stops the program's
///   threads wherever they are, inside glibc's `malloc` too, holding an
///   arena's lock; with more threads than glibc has arenas (or
///   `MALLOC_ARENA_MAX=1`) the collecting thread shares that arena, and a
///   `malloc` during the pause would wait for the stopped thread forever.
/// - **Why one heap:** a per-thread allocator (mimalloc, before) gave
///   each thread pages of its own for every size it used: the dozen
///   small allocations that register a thread spread over a dozen pages,
///   about 130 KB resident per thread, and kept after the thread exited
///   until another thread reclaimed them (bdwgc's `threadkey_test`: 12.6
///   MB peak against the real library's 3.0; BENCHMARKS.md, 2026-11-27,
///   sixth session). The library allocates seldom (per collection, per
///   registration, per finalizer or link table growth), so one lock costs
///   nothing measurable.
/// - **No thread is stopped holding the lock:** every call raises the
///   thread's call depth (`threads::InGc`), which defers the stop signal
///   as inside any of the library's calls. Nearly every allocation is
///   made inside one of them already; this holds for any that is not
///   (a Rust thread-local's destructor at thread exit, say, which runs
///   before the thread unregisters). A signal deferred there is sent
///   again by the collector (`World::stop` retries every 2 ms).
/// - **`fork`:** dlmalloc's own fork handlers take the lock before `fork`
///   and release it in both processes (`configure_allocator`).
struct LibraryAlloc;

// SAFETY: every method passes its arguments to dlmalloc's global
// allocator, which implements `GlobalAlloc`'s contract; raising the call
// depth around it changes only when the stop signal parks the thread.
unsafe impl GlobalAlloc for LibraryAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _deferred = threads::InGc::enter();
        // SAFETY: the caller's promises, passed on.
        unsafe { dlmalloc::GlobalDlmalloc.alloc(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let _deferred = threads::InGc::enter();
        // SAFETY: the caller's promises, passed on.
        unsafe { dlmalloc::GlobalDlmalloc.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let _deferred = threads::InGc::enter();
        // SAFETY: the caller's promises, passed on.
        unsafe { dlmalloc::GlobalDlmalloc.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _deferred = threads::InGc::enter();
        // SAFETY: the caller's promises, passed on.
        unsafe { dlmalloc::GlobalDlmalloc.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: LibraryAlloc = LibraryAlloc;

/// Runs when the library is loaded, before any allocation of ours: installs
/// dlmalloc's fork handlers, so a `fork` never leaves the child a lock
/// that another thread of the parent held.
extern "C" fn configure_allocator() {
    // SAFETY: called once, before the allocator's first use.
    unsafe { dlmalloc::enable_alloc_after_fork() };
}

#[used]
#[link_section = ".init_array"]
static CONFIGURE_ALLOCATOR: extern "C" fn() = configure_allocator;
mod data;
mod debug;
mod disclaim;
mod errno;
mod events;
mod finalize;
mod heap;
mod kinds;
mod mark;
mod reserve;
mod roots;
mod stack;
mod suspend;
mod thread_api;
mod threads;
mod tls;
mod typed;
