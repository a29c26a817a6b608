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

mod alloc;
mod control;

/// The library's own memory (its Rust code's `Vec`s and `Box`es: mark
/// stacks, tables, the collector's scratch during a pause) comes from
/// mimalloc, never from the program's `malloc`. A collection stops the
/// program's threads wherever they are, inside glibc's `malloc` too,
/// holding an arena's lock; with more threads than glibc has arenas (or
/// `MALLOC_ARENA_MAX=1`) the collecting thread shares that arena, and a
/// `malloc` during the pause would wait for the stopped thread forever.
/// The stop signal is put off while a thread runs this library's code
/// (`threads::InGc`), and the program's own code does not call mimalloc,
/// so a stopped thread holds none of mimalloc's locks. (At thread exit the
/// core detaches the thread's mutator with signals held off, before this
/// library's own exit key unregisters it.)
/// mimalloc commits its first arena eagerly, with transparent huge pages
/// where the kernel allows them: 6 MB resident before the program's first
/// allocation. Committed on demand instead (`MIMALLOC_ARENA_EAGER_COMMIT`
/// still overrides), it adds under 1 MB. Memory freed is given back after
/// 1 ms (10 ms for whole arena ranges) instead of mimalloc's 10 (100):
/// a collection's scratch (the finalizer log, the ready queue, mark
/// stacks) is freed in bursts, and with the default delays it stayed
/// resident as long as collections came often (`MIMALLOC_PURGE_DELAY`
/// still overrides; BENCHMARKS.md, 2026-11-27 second session).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_arena_eager_commit` in mimalloc's `mi_option_t`.
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
/// `mi_option_purge_delay` in mimalloc's `mi_option_t`.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Runs when the library is loaded, before any allocation of ours.
extern "C" fn configure_allocator() {
    // SAFETY: sets an option's default; mimalloc reads it when it first
    // reserves an arena.
    unsafe { libmimalloc_sys::mi_option_set_default(MI_OPTION_ARENA_EAGER_COMMIT, 0) };
    // SAFETY: as above; read when memory is first freed.
    unsafe { libmimalloc_sys::mi_option_set_default(MI_OPTION_PURGE_DELAY, 1) };
}

#[used]
#[link_section = ".init_array"]
static CONFIGURE_ALLOCATOR: extern "C" fn() = configure_allocator;
mod data;
mod debug;
mod disclaim;
mod events;
mod finalize;
mod heap;
mod kinds;
mod mark;
mod roots;
mod suspend;
mod thread_api;
mod threads;
mod tls;
mod typed;
