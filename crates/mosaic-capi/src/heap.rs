//! Heaps, mutators, allocation and collection.

use std::cell::UnsafeCell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use mosaic_core::{inside_callback, AllocFlags, Config, Heap, Mutator, ObjRef};

use crate::config::mosaic_config;
use crate::embedder::{mosaic_embedder, CEmbedder};
use crate::error::{
    clear_error, clear_error_slow, error_may_be_set, invalid, misuse, mosaic_error, report,
};
use crate::fast_path::mosaic_fast_path;
use crate::handle::{usable, Guarded, DEAD, LIVE};

/// The object holds no references and is never traced.
pub const MOSAIC_NO_POINTERS: u32 = 1;
/// Call the embedder's `on_free` when the object dies.
pub const MOSAIC_NEEDS_CLEANUP: u32 = 2;
/// The object never moves: no compaction relocates it, for life (see
/// MOVING at the top of this header). Use it for memory handed to the OS
/// or to code that keeps raw pointers; `mosaic_pin` pins for a while.
pub const MOSAIC_PINNED: u32 = 4;
/// Not cleared: the object's bytes are whatever was there before (an old
/// object's bytes), not zeroes; the caller must overwrite all of them (a
/// byte string, an array of numbers). Implies `MOSAIC_NO_POINTERS`: the
/// collector never reads it. The Boehm collector's `GC_MALLOC_ATOMIC`.
pub const MOSAIC_UNINIT: u32 = 8;
/// Scanned conservatively: every aligned word of the object is an
/// ambiguous reference (see `mosaic_visit_ambiguous`), and the `trace`
/// callback is never called for it. What such a word points into, interior
/// pointers included, stays alive and does not move in that collection. A
/// pointer one past the end keeps the object alive only while it falls
/// inside the slot: allocate one byte more if that must hold.
pub const MOSAIC_CONSERVATIVE: u32 = 16;
/// The caller promises the write barrier (`mosaic_write_barrier`) for
/// every store of a reference into this object (see GENERATIONS at the
/// top of this header): in generational mode a minor collection then
/// traces it only if a barrier logged it. Without the flag an old object
/// is rescanned by every minor collection. No effect outside
/// generational mode; ignored with `MOSAIC_CONSERVATIVE`.
pub const MOSAIC_BARRIERED: u32 = 32;
/// With `MOSAIC_NEEDS_CLEANUP`: what the object references stays alive
/// (and in place) until its `on_free` ran, so `on_free` may read those
/// objects (bdwgc's disclaim procedures with "mark from all"). A chain of
/// such objects takes a collection per link to reclaim; such objects in a
/// cycle longer than a direct self-reference are never reclaimed.
pub const MOSAIC_KEEP_REFERENTS: u32 = 64;

/// A garbage-collected heap (opaque).
pub struct mosaic_heap {
    /// `LIVE`, or `DEAD` once freed: the handle then stays as a tombstone.
    magic: AtomicU64,
    /// `None` once freed.
    heap: UnsafeCell<Option<Heap<CEmbedder>>>,
}

/// One thread's handle on a heap (opaque).
pub struct mosaic_mutator {
    _opaque: [u8; 0],
}

/// What a `mosaic_mutator *` points to. The Rust mutator's data pointer
/// (`Mutator::set_data`) is the handle's own address, so that code handed
/// only a `&mut Mutator` or a `MutatorInfo` (finalizers, `mutator_roots`)
/// finds the C handle, and through it the C user data.
pub(crate) struct CMutator {
    mutator: Mutator<CEmbedder>,
    /// `mosaic_mutator_set_data`'s pointer. Written by the owner thread,
    /// read by the collector (for `mutator_roots`) while the owner is
    /// stopped, or in a blocking region: hence atomic.
    data: AtomicPtr<c_void>,
    /// The thread that made the mutator.
    /// The creating thread's kernel id (not `std::thread::current()`,
    /// which on a C thread allocates a handle a leak checker reports).
    owner: libc::pid_t,
    /// What mosaic.h's inline fast path reads.
    fast: mosaic_fast_path,
}

/// What a `mosaic_mutator *` points to.
type MutatorHandle = Guarded<CMutator>;

/// The calling thread's kernel id.
fn this_thread() -> libc::pid_t {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// A C handle for a mutator just made on the calling thread.
pub(crate) fn new_mutator_handle(mut m: Mutator<CEmbedder>) -> *mut mosaic_mutator {
    let fast = m.raw_fast_path().into();
    let h: *mut mosaic_mutator = MutatorHandle::into_raw(CMutator {
        mutator: m,
        data: AtomicPtr::new(std::ptr::null_mut()),
        owner: this_thread(),
        fast,
    });
    // SAFETY: `h` was just made and nothing else uses it yet. No collection
    // can scan the new mutator before this: it is attached and running,
    // so a pause waits for it to reach a safepoint.
    unsafe { (*MutatorHandle::value_ptr(h)).mutator.set_data(h.cast()) };
    h
}

/// Frees a mutator handle: see `mosaic_mutator_free`. Returns whether a
/// handle was freed (`false`, with the error recorded, if it is not live).
///
/// # Safety
/// `m` must be NULL or from `new_mutator_handle`, not in use by any call.
pub(crate) unsafe fn free_mutator_handle(function: &str, m: *mut mosaic_mutator) -> bool {
    if m.is_null() {
        return false;
    }
    // SAFETY: per this function's contract.
    let Some(c) = (unsafe { MutatorHandle::live_ptr(function, "mutator", m) }) else {
        return false;
    };
    // SAFETY: live, and not in use by any call (the contract). Only the
    // `mutator` field is borrowed: a collection may be reading `data`.
    let (mutator, owner) = unsafe { (&mut *std::ptr::addr_of_mut!((*c).mutator), (*c).owner) };
    // A mutator dropped inside a blocking region would forget its scope
    // while a collection may be reading it: leave the region first (which
    // waits out a collection in progress). Only on its own thread, where
    // the mutator is detached and waiting cannot deadlock.
    if mutator.is_blocking() && owner == this_thread() {
        let _ = mutator.leave_blocking();
    }
    // SAFETY: as above; no reference to the contents is used after this.
    unsafe { MutatorHandle::free(function, "mutator", m) }
}

/// The heap behind a handle; `None` (with the error recorded for `function`)
/// if the handle is NULL or freed.
pub(crate) fn heap_ref<'a>(function: &str, h: *const mosaic_heap) -> Option<&'a Heap<CEmbedder>> {
    // SAFETY: the API's contract: a non-null heap pointer came from
    // mosaic_heap_new, and heap handles are never deallocated.
    let h = unsafe { h.as_ref() };
    if !usable(function, "heap", h.map(|h| h.magic.load(Ordering::Acquire))) {
        return None;
    }
    // SAFETY: the handle is live, so only mosaic_heap_free may empty the
    // cell, and it must not run concurrently with other uses of the handle
    // (mosaic.h).
    h.and_then(|h| unsafe { (*h.heap.get()).as_ref() })
}

/// The mutator behind a handle; `None` (with the error recorded for
/// `function`) if the handle is NULL or freed.
#[inline(always)]
pub(crate) fn mutator_mut<'a>(
    function: &str,
    m: *mut mosaic_mutator,
) -> Option<&'a mut Mutator<CEmbedder>> {
    // SAFETY: the API's contract: `m` is NULL or came from
    // mosaic_mutator_new, and is used by one thread at a time. Only the
    // `mutator` field is borrowed: the collector may read `data` meanwhile.
    unsafe {
        MutatorHandle::live_ptr(function, "mutator", m)
            .map(|c| &mut *std::ptr::addr_of_mut!((*c).mutator))
    }
}

/// The fast-path view of a mutator handle; `None` (with the error
/// recorded for `function`) if the handle is NULL or freed.
pub(crate) fn mutator_fast_path(
    function: &str,
    m: *mut mosaic_mutator,
) -> Option<*const mosaic_fast_path> {
    // SAFETY: as `mutator_mut`; only the address of `fast` is taken.
    unsafe {
        MutatorHandle::live_ptr(function, "mutator", m).map(|c| std::ptr::addr_of!((*c).fast))
    }
}

/// The C user data cell of a mutator handle; `None` (with the error
/// recorded for `function`) if the handle is NULL or freed.
fn mutator_data_cell<'a>(
    function: &str,
    m: *const mosaic_mutator,
) -> Option<&'a AtomicPtr<c_void>> {
    // SAFETY: as `mutator_mut`; only the atomic `data` field is borrowed.
    unsafe {
        MutatorHandle::live_ptr(function, "mutator", m).map(|c| &*std::ptr::addr_of!((*c).data))
    }
}

/// The C user data of the mutator whose handle is `m`, for the collector.
///
/// # Safety
/// `m` must be a live mutator handle (from `new_mutator_handle`).
pub(crate) unsafe fn mutator_user_data(m: *const mosaic_mutator) -> *mut c_void {
    // SAFETY: per the contract; only the atomic `data` field is read, so a
    // `&mut` borrow of the `mutator` field elsewhere is not disturbed.
    unsafe { (*std::ptr::addr_of!((*MutatorHandle::value_ptr(m)).data)).load(Ordering::Relaxed) }
}

/// Creates a heap. `config` may be NULL (defaults plus `MOSAIC_*` variables).
/// `embedder->trace` is required. Returns NULL on error.
///
/// # Safety
/// `config` and `embedder` must be NULL or valid pointers.
#[no_mangle]
pub unsafe extern "C" fn mosaic_heap_new(
    config: *const mosaic_config,
    embedder: *const mosaic_embedder,
) -> *mut mosaic_heap {
    const F: &str = "mosaic_heap_new";
    // SAFETY: per the contract.
    let Some(e) = (unsafe { embedder.as_ref() }) else {
        invalid(F, "embedder is NULL");
        return std::ptr::null_mut();
    };
    if e.trace.is_none() {
        invalid(F, "embedder->trace is NULL");
        return std::ptr::null_mut();
    }
    // SAFETY: per the contract.
    let config = match unsafe { config.as_ref() } {
        Some(c) => match c.to_config(F) {
            Ok(c) => c,
            Err(_) => return std::ptr::null_mut(),
        },
        None => match Config::from_env() {
            Ok(c) => c,
            Err(err) => {
                report(F, &err);
                return std::ptr::null_mut();
            }
        },
    };
    match Heap::new(config, CEmbedder(*e)) {
        Ok(heap) => {
            clear_error();
            Box::into_raw(Box::new(mosaic_heap {
                magic: AtomicU64::new(LIVE),
                heap: UnsafeCell::new(Some(heap)),
            }))
        }
        Err(err) => {
            report(F, &err);
            std::ptr::null_mut()
        }
    }
}

/// Releases the caller's handle on the heap. The heap itself goes away once
/// every mutator is freed too; then `on_free` runs, on the thread freeing
/// that last handle, for the objects that asked for cleanup. NULL is
/// ignored (the last error is left as it was).
///
/// The handle's few bytes stay allocated as a tombstone, so any later use of
/// a freed heap handle, freeing it again included, is reliably reported as
/// `MOSAIC_ERR_INVALID_ARGUMENT` ("heap was already freed").
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`. Freeing a heap handle
/// while another thread uses the same handle is undefined behaviour.
#[no_mangle]
pub unsafe extern "C" fn mosaic_heap_free(heap: *mut mosaic_heap) {
    // SAFETY: the API's contract: a non-null heap pointer came from
    // mosaic_heap_new, and heap handles are never deallocated.
    let Some(h) = (unsafe { heap.as_ref() }) else {
        return;
    };
    let magic = h
        .magic
        .compare_exchange(LIVE, DEAD, Ordering::AcqRel, Ordering::Acquire);
    if usable(
        "mosaic_heap_free",
        "heap",
        Some(magic.unwrap_or_else(|m| m)),
    ) {
        // SAFETY: we turned the handle DEAD, so no later call reads the
        // cell; no call may use the handle concurrently (mosaic.h).
        drop(unsafe { (*h.heap.get()).take() });
        keep_tombstone(heap);
        clear_error();
    }
}

/// Freed heap handles, so that they stay reachable: a leak checker
/// (valgrind's `--leak-check=full`) then counts the tombstones as still
/// reachable rather than lost.
static TOMBSTONES: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

fn keep_tombstone(heap: *mut mosaic_heap) {
    let mut t = TOMBSTONES.lock().unwrap_or_else(|e| e.into_inner());
    t.push(heap as usize);
}

/// Creates a mutator for the calling thread. NULL on error: a NULL or freed
/// heap, or `MOSAIC_ERR_INVALID_ARGUMENT` if the calling thread already has
/// a mutator of this heap (one mutator per thread and heap).
///
/// A thread that exits without freeing its mutator has it detached
/// automatically, so collections no longer wait for it; its memory is
/// leaked until `mosaic_mutator_free`, which may then be called from
/// another thread.
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_mutator_new(heap: *mut mosaic_heap) -> *mut mosaic_mutator {
    const F: &str = "mosaic_mutator_new";
    let Some(h) = heap_ref(F, heap) else {
        return std::ptr::null_mut();
    };
    match h.mutator() {
        Ok(m) => {
            clear_error();
            new_mutator_handle(m)
        }
        Err(e) => {
            report(F, &e);
            std::ptr::null_mut()
        }
    }
}

/// Frees a mutator. Its root handles stay valid until freed. NULL is ignored
/// (the last error is left as it was).
///
/// A mutator freed twice, or used after it was freed, is reported as
/// `MOSAIC_ERR_INVALID_ARGUMENT` ("mutator was already freed") as long as
/// its memory has not been reused for a new mutator; the check is a cheap
/// safety net, not a guarantee, and such use is undefined behaviour.
///
/// When this was the heap's last handle, `on_free` runs here for the objects
/// that asked for cleanup.
///
/// Freed on its own thread inside a blocking region
/// (`mosaic_blocking_enter`), the mutator leaves the region first (waiting
/// for a collection in progress to end). It must not be freed from inside
/// one of its own finalizers or a collector callback.
///
/// # Safety
/// `m` must be NULL or from `mosaic_mutator_new`, freed once, on its thread
/// (or on any thread once its thread has exited).
#[no_mangle]
pub unsafe extern "C" fn mosaic_mutator_free(m: *mut mosaic_mutator) {
    // SAFETY: the API's contract: `m` is NULL or came from mosaic_mutator_new.
    if unsafe { free_mutator_handle("mosaic_mutator_free", m) } {
        clear_error();
    }
}

/// Sets the pointer this mutator's `mutator_roots` callback receives as
/// `mutator_data` (your interpreter's per-thread state, say); NULL clears
/// it. Call it on the mutator's thread. Errors: a NULL or freed mutator.
///
/// # Safety
/// `m` must be NULL or a live mutator of the calling thread; `data` is
/// never dereferenced by the library.
#[no_mangle]
pub unsafe extern "C" fn mosaic_mutator_set_data(
    m: *mut mosaic_mutator,
    data: *mut c_void,
) -> mosaic_error {
    let Some(cell) = mutator_data_cell("mosaic_mutator_set_data", m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    cell.store(data, Ordering::Relaxed);
    clear_error();
    mosaic_error::MOSAIC_OK
}

/// The pointer set with `mosaic_mutator_set_data` (NULL if none, or with
/// an error for a NULL or freed mutator).
///
/// # Safety
/// `m` must be NULL or a live mutator.
#[no_mangle]
pub unsafe extern "C" fn mosaic_mutator_data(m: *const mosaic_mutator) -> *mut c_void {
    let Some(cell) = mutator_data_cell("mosaic_mutator_data", m) else {
        return std::ptr::null_mut();
    };
    let data = cell.load(Ordering::Relaxed);
    clear_error();
    data
}

/// Allocates `size` bytes with `flags` (`MOSAIC_NO_POINTERS`, ...): zeroed,
/// unless `flags` has `MOSAIC_UNINIT`. `mosaic_alloc_inline` (below) is
/// the same without a call on its fast path.
/// The memory is aligned to 8 bytes, and to 16 when its slot size is a
/// multiple of 16 (see the top of this header; `mosaic_alloc_aligned` for
/// more). Returns NULL on error: out of memory, too large, bad flags, a
/// NULL or freed mutator, or `MOSAIC_ERR_MISUSE` inside a blocking region
/// (`mosaic_blocking_enter`) or a collector callback.
///
/// Allocation is a safepoint and may collect on this thread (running
/// `trace`, `roots` and `mutator_roots` here) or, with lazy sweeping, sweep
/// pages (running `on_free` here); see `mosaic_embedder`.
///
/// # Safety
/// `m` must be NULL or a live mutator used only by the calling thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_alloc(
    m: *mut mosaic_mutator,
    size: usize,
    flags: u32,
) -> *mut c_void {
    if error_may_be_set() {
        // SAFETY: same contract.
        return unsafe { alloc_clearing_error(m, size, flags) };
    }
    // SAFETY: same contract.
    unsafe { alloc(m, size, flags) }
}

/// `mosaic_alloc` when this thread's last error may be set: reset it first.
/// Kept out of line so that the common path needs no registers saved.
///
/// # Safety
/// As `mosaic_alloc`.
#[cold]
#[inline(never)]
unsafe fn alloc_clearing_error(m: *mut mosaic_mutator, size: usize, flags: u32) -> *mut c_void {
    clear_error_slow();
    // SAFETY: same contract.
    unsafe { alloc(m, size, flags) }
}

/// `mosaic_alloc` with the last error already `MOSAIC_OK`: a success leaves
/// it so, a failure sets it.
///
/// # Safety
/// As `mosaic_alloc`.
#[inline(always)]
unsafe fn alloc(m: *mut mosaic_mutator, size: usize, flags: u32) -> *mut c_void {
    const F: &str = "mosaic_alloc";
    let Some(m) = mutator_mut(F, m) else {
        return std::ptr::null_mut();
    };
    let Some(flags) = AllocFlags::from_bits(flags) else {
        report(F, &mosaic_core::Error::InvalidFlags { bits: flags });
        return std::ptr::null_mut();
    };
    match m.alloc_with(size, flags) {
        Ok(o) => o.as_ptr().cast(),
        Err(e) => {
            report(F, &e);
            std::ptr::null_mut()
        }
    }
}

/// Allocates `size` zeroed bytes aligned to `align`, a power of two from 1
/// to 65536 (a page): SIMD data, cache lines. The object gets the smallest
/// size class whose slots are all aligned (with the default classes that
/// is up to 4096, and the object's usable size may exceed `size`), or
/// else a large object, which starts a 64 KiB page. `align` up to 8 is
/// plain `mosaic_alloc`. Errors as `mosaic_alloc`, plus
/// `MOSAIC_ERR_INVALID_ARGUMENT` for a bad `align`.
///
/// # Safety
/// As `mosaic_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_alloc_aligned(
    m: *mut mosaic_mutator,
    size: usize,
    align: usize,
    flags: u32,
) -> *mut c_void {
    const F: &str = "mosaic_alloc_aligned";
    let Some(m) = mutator_mut(F, m) else {
        return std::ptr::null_mut();
    };
    let Some(flags) = AllocFlags::from_bits(flags) else {
        report(F, &mosaic_core::Error::InvalidFlags { bits: flags });
        return std::ptr::null_mut();
    };
    match m.alloc_aligned(size, align, flags) {
        Ok(o) => {
            clear_error();
            o.as_ptr().cast()
        }
        Err(e) => {
            report(F, &e);
            std::ptr::null_mut()
        }
    }
}

/// Collects garbage now (stop-the-world): `trace`, `roots` and
/// `mutator_roots` run on this thread while the other mutators are
/// stopped. If another thread is already collecting, waits for that
/// collection instead. Refused with `MOSAIC_ERR_MISUSE` inside a collector
/// callback (`trace`, `roots`, `mutator_roots`, `on_free`, the event
/// callback, the finalizer notifier) or a blocking region
/// (`mosaic_blocking_enter`): nothing is collected then.
///
/// # Safety
/// As `mosaic_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_collect(m: *mut mosaic_mutator) {
    collect_as("mosaic_collect", m, Mutator::try_collect);
}

/// Runs `collect` on the mutator behind `m`, recording its error for
/// `function` (or clearing the last error).
fn collect_as(
    function: &str,
    m: *mut mosaic_mutator,
    collect: fn(&mut Mutator<CEmbedder>) -> Result<(), mosaic_core::Error>,
) {
    if let Some(m) = mutator_mut(function, m) {
        match collect(m) {
            Ok(()) => clear_error(),
            Err(e) => {
                report(function, &e);
            }
        }
    }
}

/// A full collection that then gives every free page back to the OS
/// (bdwgc's `GC_gcollect_and_unmap`): for a program about to go idle or
/// one that just dropped most of its data. An ordinary collection keeps
/// the free pages the heap target has room for. Refused like
/// `mosaic_collect`.
///
/// # Safety
/// As `mosaic_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_collect_and_release(m: *mut mosaic_mutator) {
    collect_as(
        "mosaic_collect_and_release",
        m,
        Mutator::try_collect_and_release,
    );
}

/// A minor collection (generational mode: only young objects are marked
/// and swept, see GENERATIONS at the top of this header); a full one
/// otherwise. Refused like `mosaic_collect`.
///
/// # Safety
/// As `mosaic_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_collect_young(m: *mut mosaic_mutator) {
    collect_as("mosaic_collect_young", m, Mutator::try_collect_young);
}

/// The write barrier (see GENERATIONS at the top of this header): call
/// it for every store of a reference into `obj`, an object allocated
/// `MOSAIC_BARRIERED`, before or after the store with no allocation or
/// safepoint in between. `mosaic_write_barrier_inline` calls it only when
/// needed. In verify mode (and debug builds) it aborts with a diagnostic
/// if `obj` is not the start of an object of the heap. Never sets the
/// last error (it is called far too often to reset it).
///
/// # Safety
/// As `mosaic_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_write_barrier(m: *mut mosaic_mutator, obj: *mut c_void) {
    const F: &str = "mosaic_write_barrier";
    if let (Some(m), Some(o)) = (mutator_mut(F, m), ObjRef::from_ptr(obj.cast())) {
        m.write_barrier(o);
    }
}

/// Copies `count` reference fields from `src` to `dst` (which may
/// overlap, as `memmove`), where `dst` lies inside `obj`, with one write
/// barrier on `obj` for all of them.
///
/// # Safety
/// As `mosaic_alloc`; `src` readable and `dst` writable for `count`
/// pointer-sized, aligned fields, `dst .. dst + count` inside `obj`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_copy_refs(
    m: *mut mosaic_mutator,
    obj: *mut c_void,
    dst: *mut *mut c_void,
    src: *const *mut c_void,
    count: usize,
) {
    const F: &str = "mosaic_copy_refs";
    if let (Some(m), Some(o)) = (mutator_mut(F, m), ObjRef::from_ptr(obj.cast())) {
        // SAFETY: the caller's promise.
        unsafe { m.copy_refs(o, dst.cast(), src.cast(), count) }
    }
}

/// Sweeps every page left unswept since the last collection (`on_free` runs
/// on this thread for the dead objects found). Refused with
/// `MOSAIC_ERR_MISUSE` inside a blocking region or a collector callback.
///
/// # Safety
/// As `mosaic_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_finish_sweep(m: *mut mosaic_mutator) {
    const F: &str = "mosaic_finish_sweep";
    if let Some(m) = mutator_mut(F, m) {
        if m.is_blocking() {
            misuse(F, "cannot sweep inside a blocking region");
        } else if inside_callback() {
            misuse(F, "cannot sweep inside a collector callback");
        } else {
            m.finish_sweep();
            clear_error();
        }
    }
}

/// Parks here if another thread wants to collect. Call it in long loops
/// that do not allocate. Does nothing inside a blocking region. Refused
/// with `MOSAIC_ERR_MISUSE` inside a collector callback (parking there
/// would wait for the collection the callback is part of, or stop the
/// world in the middle of a sweep).
///
/// # Safety
/// As `mosaic_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_safepoint(m: *mut mosaic_mutator) {
    const F: &str = "mosaic_safepoint";
    if let Some(m) = mutator_mut(F, m) {
        if inside_callback() {
            misuse(F, "cannot park inside a collector callback");
            return;
        }
        m.safepoint();
        clear_error();
    }
}

/// Runs `f(arg)` as a blocking region (a system call, a lock wait): other
/// threads may collect meanwhile. `f` must not touch the heap or call
/// mosaic functions, and must return normally (no `longjmp` out of it).
/// Inside a region entered with `mosaic_blocking_enter`, just calls `f`.
/// Refused with `MOSAIC_ERR_MISUSE` inside a collector callback (`f` is
/// not called).
///
/// # Safety
/// As `mosaic_alloc`; `f` must be a valid function.
#[no_mangle]
pub unsafe extern "C" fn mosaic_blocking(
    m: *mut mosaic_mutator,
    f: Option<unsafe extern "C" fn(arg: *mut c_void)>,
    arg: *mut c_void,
) {
    const F: &str = "mosaic_blocking";
    let Some(m) = mutator_mut(F, m) else {
        return;
    };
    let Some(f) = f else {
        invalid(F, "f is NULL");
        return;
    };
    if inside_callback() {
        misuse(F, "cannot block inside a collector callback");
        return;
    }
    // SAFETY: calling the caller's function with its own argument.
    m.blocking(|| unsafe { f(arg) });
    clear_error();
}

/// Enters a blocking region, for code that blocks where a callback does not
/// fit (`mosaic_blocking` with the wait written inline). Until
/// `mosaic_blocking_leave`, other threads collect without waiting for this
/// one, so the code in between must not read or write heap objects (root
/// handles may be used), and this mutator refuses to allocate, collect,
/// sweep, run finalizers or push and pop scope slots (`MOSAIC_ERR_MISUSE`).
/// Errors: `MOSAIC_ERR_MISUSE` if already inside a region or inside a
/// collector callback; a NULL or freed mutator.
///
/// # Safety
/// As `mosaic_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_blocking_enter(m: *mut mosaic_mutator) -> mosaic_error {
    const F: &str = "mosaic_blocking_enter";
    let Some(m) = mutator_mut(F, m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    if inside_callback() {
        return misuse(F, "cannot block inside a collector callback");
    }
    match m.enter_blocking() {
        Ok(()) => {
            clear_error();
            mosaic_error::MOSAIC_OK
        }
        Err(e) => report(F, &e),
    }
}

/// Leaves the blocking region entered with `mosaic_blocking_enter`,
/// waiting first for a collection in progress to end. Errors:
/// `MOSAIC_ERR_MISUSE` outside a region; a NULL or freed mutator.
///
/// # Safety
/// As `mosaic_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_blocking_leave(m: *mut mosaic_mutator) -> mosaic_error {
    const F: &str = "mosaic_blocking_leave";
    let Some(m) = mutator_mut(F, m) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    match m.leave_blocking() {
        Ok(()) => {
            clear_error();
            mosaic_error::MOSAIC_OK
        }
        Err(e) => report(F, &e),
    }
}

/// Whether `p` is the start of an object allocated in `heap`. Any other `p`
/// gets `false` and counts as success; a NULL or freed heap gets `false`
/// and `MOSAIC_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`; `p` may be any value.
#[no_mangle]
pub unsafe extern "C" fn mosaic_is_object(heap: *const mosaic_heap, p: *const c_void) -> bool {
    let Some(h) = heap_ref("mosaic_is_object", heap) else {
        return false;
    };
    let answer = h.is_object(p.cast());
    clear_error();
    answer
}

/// The usable size of an object (its slot size), or 0 with
/// `MOSAIC_ERR_FOREIGN_POINTER` if `p` is not an object of `heap`.
///
/// # Safety
/// As `mosaic_is_object`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_object_size(heap: *const mosaic_heap, p: *const c_void) -> usize {
    const F: &str = "mosaic_object_size";
    let Some(h) = heap_ref(F, heap) else {
        return 0;
    };
    match h.check_object(p.cast()).and_then(|o| h.object_size(o)) {
        Ok(n) => {
            clear_error();
            n
        }
        Err(e) => {
            report(F, &e);
            0
        }
    }
}
