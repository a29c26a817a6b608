//! Allocation: `GC_malloc` and its kinds, `realloc`, `free`, string copies,
//! alignment, and the questions about an address (`GC_base`, `GC_size`).
//!
//! Kinds map onto Mosaic's flags: normal objects are `CONSERVATIVE`
//! (zeroed, every word ambiguous), atomic ones `UNINIT` (not cleared, never
//! scanned), uncollectable ones are normal or atomic objects listed as
//! roots until `GC_free`. With `GC_all_interior_pointers` on, each request
//! gets bdwgc's extra byte, so that a pointer just past the end keeps the
//! object alive.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

use mosaic::{AllocFlags, ObjRef};

use crate::heap::heap;
use crate::threads::with_mutator;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Normal,
    Atomic,
    Uncollectable,
    AtomicUncollectable,
    /// A kind the program made (`kinds.rs`), by number.
    Made(usize),
    /// `GC_finalized_malloc`'s small objects: normal ones whose closure
    /// runs when the sweep reclaims them (`disclaim.rs`).
    Finalized,
}

impl Kind {
    fn flags(self) -> AllocFlags {
        match self {
            Kind::Normal | Kind::Uncollectable => AllocFlags::CONSERVATIVE,
            Kind::Atomic | Kind::AtomicUncollectable => AllocFlags::UNINIT,
            Kind::Made(_) => AllocFlags::NONE,
            Kind::Finalized => AllocFlags::CONSERVATIVE
                .with(AllocFlags::NEEDS_CLEANUP)
                .with(AllocFlags::KEEP_REFERENTS),
        }
    }

    /// bdwgc's number for the kind.
    pub fn number(self) -> c_int {
        match self {
            Kind::Atomic => 0,
            Kind::Normal | Kind::Finalized => 1,
            Kind::Uncollectable => 2,
            Kind::AtomicUncollectable => 3,
            Kind::Made(k) => k as c_int,
        }
    }
}

/// Allocates one object of `kind` with `m`: `size` is the request with the
/// extra byte, and for a made kind what `kinds::request_size` gave.
#[inline]
fn alloc_one(m: &mut crate::heap::GcMutator, size: usize, kind: Kind) -> Option<ObjRef> {
    match kind {
        Kind::Made(k) => crate::kinds::alloc_with(m, size, k),
        _ => m.alloc_with(size, kind.flags()).ok(),
    }
}

/// The size to request from Mosaic for `n` bytes of `kind` (`None`: too
/// large to represent).
#[inline]
fn request_size(n: usize, kind: Kind) -> Option<usize> {
    let size = with_extra_byte(n);
    match kind {
        Kind::Made(_) => crate::kinds::request_size(size),
        _ => Some(size),
    }
}

/// Bytes to ask Mosaic for a request of `n`.
#[inline]
fn with_extra_byte(n: usize) -> usize {
    n.saturating_add(crate::data::extra_byte())
}

/// Allocates `n` bytes of `kind`; on failure, the program's OOM function
/// decides (bdwgc's `GC_oom_fn`: NULL by default).
pub fn alloc(n: usize, kind: Kind) -> *mut c_void {
    let _errno = crate::errno::ErrnoKept::new();
    if crate::mark::marking() {
        return in_pause(n, kind);
    }
    crate::reserve::refill_if_needed();
    let Some(size) = request_size(n, kind) else {
        return out_of_memory(n);
    };
    // A pointer, not a `Result`, out of the closure: the result comes back
    // in a register (a large `Result` moved through memory cost a stall).
    let p = with_mutator(|m| match alloc_one(m, size, kind) {
        Some(o) => {
            if matches!(kind, Kind::Uncollectable | Kind::AtomicUncollectable) {
                crate::roots::add_uncollectable(o.addr());
            }
            o.as_ptr()
        }
        None => std::ptr::null_mut(),
    });
    handed_out(p.cast(), n)
}

/// `GC_malloc` (`ATOMIC` false) or `GC_malloc_atomic` (true): a bump in the
/// thread's current run when it has room and nothing else waits for the
/// thread; everything else in [`alloc_builtin_slow`]. No call and no stack
/// frame on that path: the thread's state is one TLS block at a fixed
/// offset from the thread pointer (`threads::fast_alloc`).
#[inline(always)]
fn alloc_builtin<const ATOMIC: bool>(n: usize) -> *mut c_void {
    let p = crate::threads::fast_alloc::<ATOMIC>(with_extra_byte(n));
    if !p.is_null() && !crate::threads::stop_requested() && !crate::finalize::attention() {
        return p;
    }
    alloc_builtin_slow::<ATOMIC>(n, p)
}

/// The rest of [`alloc_builtin`]: with `p` null, the allocation through
/// the thread's mutator (registering the thread, taking a new run,
/// collecting); then the safepoint and the finalizers due, as after every
/// allocation call.
#[cold]
#[inline(never)]
fn alloc_builtin_slow<const ATOMIC: bool>(n: usize, p: *mut c_void) -> *mut c_void {
    let _errno = crate::errno::ErrnoKept::new();
    let kind = if ATOMIC { Kind::Atomic } else { Kind::Normal };
    if p.is_null() && crate::mark::marking() {
        return in_pause(n, kind);
    }
    let p = if p.is_null() {
        crate::reserve::refill_if_needed();
        let size = with_extra_byte(n);
        with_mutator(|m| match m.alloc_with(size, kind.flags()) {
            Ok(o) => o.as_ptr(),
            Err(_) => std::ptr::null_mut(),
        })
        .cast()
    } else {
        crate::threads::poll_current();
        p
    };
    handed_out(p, n)
}

/// An allocation made while this thread marks for a collection (the
/// program's push-other-roots procedure): an object from the pause reserve
/// (`reserve.rs`), or null, without the OOM function or finalizers (the
/// world is stopped).
#[cold]
#[inline(never)]
fn in_pause(n: usize, kind: Kind) -> *mut c_void {
    if !crate::mark::in_push_other_roots() {
        // A mark procedure's allocation: bdwgc forbids it, and an object
        // taken after the reserve was scanned would not be marked.
        return std::ptr::null_mut();
    }
    match kind {
        Kind::Normal => crate::reserve::take(n, false),
        Kind::Atomic => crate::reserve::take(n, true),
        _ => std::ptr::null_mut(),
    }
}

/// Allocates an object of `n` bytes of a built-in collectable kind through
/// the thread's mutator, outside any pause; its address, or `None` when the
/// heap has no room.
pub fn alloc_object(n: usize, kind: Kind) -> Option<usize> {
    let size = with_extra_byte(n);
    with_mutator(|m| m.alloc_with(size, kind.flags()).ok()).map(ObjRef::addr)
}

/// The end of every allocation call for `n` bytes: `p`, or when it is
/// null what the OOM function gives; queued finalizers run first.
#[inline(always)]
fn handed_out(p: *mut c_void, n: usize) -> *mut c_void {
    if p.is_null() {
        return out_of_memory(n);
    }
    crate::finalize::after_allocation();
    p
}

/// Calls the OOM function (from a C frame: a C++ exception thrown there
/// must not unwind through Rust frames, so it is called last, with nothing
/// of ours to clean up, from an `extern "C-unwind"` function).
#[cold]
pub fn out_of_memory(n: usize) -> *mut c_void {
    match crate::data::oom_fn() {
        // SAFETY: the program's OOM function, with bdwgc's argument.
        Some(f) => unsafe { call_oom(f, n) },
        None => std::ptr::null_mut(),
    }
}

#[inline(never)]
unsafe extern "C-unwind" fn call_oom(
    f: unsafe extern "C" fn(usize) -> *mut c_void,
    n: usize,
) -> *mut c_void {
    // SAFETY: as the caller says. The function type is "C"; a C++ throw
    // from it is caught by the client's frames above ours only if the
    // program built with exceptions through C (as bdwgc's gc_cpp does).
    unsafe {
        std::mem::transmute::<
            unsafe extern "C" fn(usize) -> *mut c_void,
            unsafe extern "C-unwind" fn(usize) -> *mut c_void,
        >(f)(n)
    }
}

/// The live object `p` points into, if any.
pub fn base_of(p: *const c_void) -> Option<ObjRef> {
    if p.is_null() {
        return None;
    }
    heap()
        .object_containing(p.cast())
        .or_else(|| crate::disclaim::base_while_reclaimed(p as usize))
}

/// The kind `obj` was allocated with.
pub fn kind_of(obj: ObjRef) -> Kind {
    let slot = heap().object_size(obj).unwrap_or(0);
    if let Some(k) = crate::kinds::kind_of(obj, slot) {
        return Kind::Made(k);
    }
    let atomic = heap()
        .object_flags(obj)
        .is_some_and(|f| f.contains(AllocFlags::NO_POINTERS));
    match (atomic, crate::roots::is_uncollectable(obj.addr())) {
        (false, false) => Kind::Normal,
        (true, false) => Kind::Atomic,
        (false, true) => Kind::Uncollectable,
        (true, true) => Kind::AtomicUncollectable,
    }
}

/// Usable bytes of `obj` (its slot, less a made kind's trailer and the
/// extra byte).
pub fn usable_size(obj: ObjRef) -> usize {
    let slot = heap().object_size(obj).unwrap_or(0);
    crate::kinds::visible_size(obj, slot).saturating_sub(crate::data::extra_byte())
}

#[no_mangle]
pub extern "C" fn GC_malloc(n: usize) -> *mut c_void {
    alloc_builtin::<false>(n)
}

#[no_mangle]
pub extern "C" fn GC_malloc_atomic(n: usize) -> *mut c_void {
    alloc_builtin::<true>(n)
}

#[no_mangle]
pub extern "C" fn GC_malloc_uncollectable(n: usize) -> *mut c_void {
    alloc(n, Kind::Uncollectable)
}

#[no_mangle]
pub extern "C" fn GC_malloc_atomic_uncollectable(n: usize) -> *mut c_void {
    alloc(n, Kind::AtomicUncollectable)
}

#[no_mangle]
pub extern "C" fn GC_malloc_ignore_off_page(n: usize) -> *mut c_void {
    alloc(n, Kind::Normal)
}

#[no_mangle]
pub extern "C" fn GC_malloc_atomic_ignore_off_page(n: usize) -> *mut c_void {
    alloc(n, Kind::Atomic)
}

#[no_mangle]
pub extern "C" fn GC_malloc_stubborn(n: usize) -> *mut c_void {
    alloc(n, Kind::Normal)
}

/// bdwgc's kind numbers (`GC_I_PTRFREE`, `GC_I_NORMAL`, uncollectable,
/// atomic uncollectable).
pub fn kind_from_number(k: c_int) -> Option<Kind> {
    match k {
        0 => Some(Kind::Atomic),
        1 => Some(Kind::Normal),
        2 => Some(Kind::Uncollectable),
        3 => Some(Kind::AtomicUncollectable),
        k if crate::kinds::is_made(k) => Some(Kind::Made(k as usize)),
        _ => None,
    }
}

/// An allocation of a kind that does not exist: bdwgc reads past its
/// kind table there; stop with a message instead.
#[cold]
fn unknown_kind(what: &str, k: c_int) -> ! {
    crate::control::abort_with(&format!(
        "mosaic-gc: {what} with kind {k}, which was never made (GC_new_kind)"
    ))
}

#[no_mangle]
pub extern "C" fn GC_malloc_kind(n: usize, k: c_int) -> *mut c_void {
    match kind_from_number(k) {
        Some(kind) => alloc(n, kind),
        None => unknown_kind("GC_malloc_kind", k),
    }
}

#[no_mangle]
pub extern "C" fn GC_malloc_kind_global(n: usize, k: c_int) -> *mut c_void {
    GC_malloc_kind(n, k)
}

#[no_mangle]
pub extern "C" fn GC_generic_malloc(n: usize, k: c_int) -> *mut c_void {
    GC_malloc_kind(n, k)
}

#[no_mangle]
pub extern "C" fn GC_generic_malloc_ignore_off_page(n: usize, k: c_int) -> *mut c_void {
    GC_malloc_kind(n, k)
}

#[no_mangle]
pub extern "C" fn GC_generic_malloc_uncollectable(n: usize, k: c_int) -> *mut c_void {
    match kind_from_number(k) {
        Some(Kind::Atomic | Kind::AtomicUncollectable) => alloc(n, Kind::AtomicUncollectable),
        Some(Kind::Made(k)) => {
            let p = alloc(n, Kind::Made(k));
            if let Some(o) = base_of(p) {
                crate::threads::guarded(|| crate::roots::add_uncollectable(o.addr()));
            }
            p
        }
        Some(_) => alloc(n, Kind::Uncollectable),
        None => unknown_kind("GC_generic_malloc_uncollectable", k),
    }
}

#[no_mangle]
pub extern "C" fn GC_generic_or_special_malloc(n: usize, k: c_int) -> *mut c_void {
    GC_malloc_kind(n, k)
}

/// Most objects handed out per `GC_malloc_many` call.
const MANY_MAX: usize = 64;

/// Objects handed out per `GC_malloc_many` call: about a page's worth.
fn many_count(n: usize) -> usize {
    (4096 / n.max(16)).clamp(1, MANY_MAX)
}

/// A list of objects of `n` bytes linked through their first word, made
/// in one call into the heap.
pub fn alloc_many(n: usize, kind: Kind) -> *mut c_void {
    let n = n.max(std::mem::size_of::<usize>());
    let Some(size) = request_size(n, kind) else {
        return out_of_memory(n);
    };
    // From the thread's current run in one bump when it has some left (the
    // common case: a run is a page's free slots); when it is used up, one
    // object through the mutator (which takes the next run, or collects)
    // and the rest from that run.
    let take = |max| match kind {
        Kind::Normal => crate::threads::fast_take::<false>(size, max),
        Kind::Atomic => crate::threads::fast_take::<true>(size, max),
        _ => std::ptr::null_mut(),
    };
    let count = many_count(n);
    let taken = take(count);
    if !taken.is_null() {
        if crate::threads::stop_requested() {
            crate::threads::poll_current();
        }
        return handed_out(taken, n);
    }
    if matches!(kind, Kind::Normal | Kind::Atomic) && count > 1 {
        let first =
            with_mutator(|m| alloc_one(m, size, kind).map_or(std::ptr::null_mut(), |o| o.as_ptr()));
        if first.is_null() {
            return out_of_memory(n);
        }
        // (`first` is on this thread's stack or in a register, which a
        // collection scans, until it holds the rest.)
        let rest = take(count - 1);
        // SAFETY: a fresh object of at least one word.
        unsafe { first.cast::<*mut c_void>().write(rest) };
        crate::threads::poll_current();
        return handed_out(first.cast(), n);
    }
    let uncollectable = matches!(kind, Kind::Uncollectable | Kind::AtomicUncollectable);
    let head = with_mutator(|m| {
        // Every object made so far stays in this array, on this thread's
        // stack, until the list is linked: an allocation below may collect,
        // and a pointer-free object's link word is never scanned, so a
        // chain built as it goes would keep only its newest object.
        let mut made = [0usize; MANY_MAX];
        let mut count = 0;
        while count < many_count(n) {
            let Some(o) = alloc_one(m, size, kind) else {
                break;
            };
            if uncollectable {
                crate::roots::add_uncollectable(o.addr());
            }
            // SAFETY: an element of the local array (a volatile store, so
            // the array is in memory when a collection scans the stack).
            unsafe { std::ptr::write_volatile(&mut made[count], o.addr()) };
            count += 1;
        }
        // Linked from the last made to the first: the list hands the
        // objects out in the order they were made (ascending addresses
        // within a run; bdwgc's lists descend), measured 3% faster for
        // Guile, which pops these lists inline.
        let mut head: *mut c_void = std::ptr::null_mut();
        for &o in std::hint::black_box(&made)[..count].iter().rev() {
            // SAFETY: a fresh object of at least one word.
            unsafe { *(o as *mut *mut c_void) = head };
            head = o as *mut c_void;
        }
        head
    });
    handed_out(head, n)
}

#[no_mangle]
pub extern "C" fn GC_malloc_many(n: usize) -> *mut c_void {
    alloc_many(n, Kind::Normal)
}

#[no_mangle]
pub extern "C" fn GC_generic_malloc_many(n: usize, k: c_int, result: *mut *mut c_void) {
    let list = match kind_from_number(k) {
        Some(kind) => alloc_many(n, kind),
        None => unknown_kind("GC_generic_malloc_many", k),
    };
    if !result.is_null() {
        // SAFETY: the caller's out pointer.
        unsafe { *result = list };
    }
}

#[no_mangle]
pub extern "C" fn GC_memalign(align: usize, n: usize) -> *mut c_void {
    if align <= 16 {
        return GC_malloc(n);
    }
    if !align.is_power_of_two() || align > mosaic::PAGE_SIZE {
        // Beyond a page: a large object is page-aligned; more is refused.
        return std::ptr::null_mut();
    }
    let size = with_extra_byte(n);
    match with_mutator(|m| m.alloc_aligned(size, align, AllocFlags::CONSERVATIVE)) {
        Ok(o) => {
            crate::finalize::after_allocation();
            o.as_ptr().cast()
        }
        Err(_) => out_of_memory(n),
    }
}

#[no_mangle]
pub unsafe extern "C" fn GC_posix_memalign(out: *mut *mut c_void, align: usize, n: usize) -> c_int {
    if !align.is_power_of_two() || align % std::mem::size_of::<usize>() != 0 {
        return libc::EINVAL;
    }
    let p = GC_memalign(align, n);
    if p.is_null() {
        return libc::ENOMEM;
    }
    // SAFETY: the caller's out pointer.
    unsafe { *out = p };
    0
}

#[no_mangle]
pub unsafe extern "C" fn GC_realloc(p: *mut c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { realloc(p, n) }
}

unsafe fn realloc(p: *mut c_void, n: usize) -> *mut c_void {
    if p.is_null() {
        return GC_malloc(n);
    }
    let Some(obj) = base_of(p) else {
        return std::ptr::null_mut();
    };
    let kind = crate::threads::guarded(|| kind_of(obj));
    if n == 0 {
        // SAFETY: an object of ours.
        unsafe { GC_free(p) };
        return std::ptr::null_mut();
    }
    let old = usable_size(obj);
    if n <= old && n >= old / 2 {
        // Fits, and does not waste more than half: in place. The bytes past
        // the new end are cleared, so that a later growth reads zeroes.
        if !matches!(kind, Kind::Atomic | Kind::AtomicUncollectable) {
            // SAFETY: inside the object's slot.
            unsafe { std::ptr::write_bytes(obj.as_ptr().add(n), 0, old - n) };
        }
        return p;
    }
    let q = alloc(n, kind);
    if !q.is_null() {
        // SAFETY: both objects are at least min(old, n) bytes.
        unsafe { std::ptr::copy_nonoverlapping(obj.as_ptr(), q.cast::<u8>(), old.min(n)) };
        // SAFETY: the old object, which the program gave up.
        unsafe { GC_free(p) };
    }
    q
}

/// What `GC_free`'s count differs by from the heap's own
/// (`Heap::freed_bytes`, kept per thread): plus every call the core refused
/// (an interior pointer, a second free, a free inside a blocking region),
/// which only counts, as before; minus the objects a disclaim procedure let
/// go (reclaimed with `Mutator::free`, but no `GC_free`).
static FREED_ADJUSTMENT: AtomicI64 = AtomicI64::new(0);
/// The bytes given to `GC_free` when the last collection ended.
static FREED_AT_GC: AtomicU64 = AtomicU64::new(0);

fn freed_total() -> u64 {
    (heap().freed_bytes() as i64 + FREED_ADJUSTMENT.load(Relaxed)).max(0) as u64
}

/// `size` bytes freed through the core that were no `GC_free` (the
/// disclaim path).
pub fn not_explicitly_freed(size: usize) {
    FREED_ADJUSTMENT.fetch_sub(size as i64, Relaxed);
}

/// Bytes given to `GC_free` since the last collection.
pub fn freed_since_gc() -> usize {
    freed_total().saturating_sub(FREED_AT_GC.load(Relaxed)) as usize
}

/// At the end of a collection (its event, in the pause): the count since
/// the last one starts again.
pub fn collection_ended() {
    FREED_AT_GC.store(freed_total(), Relaxed);
}

/// Explicit deallocation, as bdwgc's: uncollectable objects stop being
/// roots, and the memory is reused at once (`Mutator::free`): a small
/// object's slot by this thread's next allocation of its size and kind
/// (the rest become free slots at the next collection), a large object's
/// pages by any allocation. An object the collector still has business
/// with (a finalizer, a disappearing link inside it) and an interior
/// pointer are left to the next collection that finds the object
/// unreachable. The bytes count in `GC_get_expl_freed_bytes_since_gc`.
/// Foreign pointers are ignored; a second free is refused.
#[no_mangle]
pub unsafe extern "C" fn GC_free(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // The usual case first: `p` is an object's start, freed with one
    // lookup; an interior pointer only counts, as before.
    // (Only whether it was freed leaves the closure: it comes back in a
    // register, where the whole `Result` went through memory. The freed
    // bytes are counted by the thread's mutator.)
    let freed = ObjRef::from_ptr(p.cast()).is_some_and(|o| {
        if crate::roots::any_uncollectable() {
            crate::threads::guarded(|| crate::roots::remove_uncollectable(o.addr()));
        }
        // SAFETY: the program gives the object up (bdwgc's contract).
        with_mutator(|m| unsafe { m.free_sized(o) }.is_ok())
    });
    if !freed {
        let Some(o) = base_of(p) else { return };
        crate::disclaim::forget_closure(o, p);
        crate::threads::guarded(|| crate::roots::remove_uncollectable(o.addr()));
        let size = heap().object_size(o).unwrap_or(0);
        FREED_ADJUSTMENT.fetch_add(size as i64, Relaxed);
    }
}

fn copy_bytes(src: *const u8, len: usize, extra_nul: bool) -> *mut c_char {
    let q = alloc(len + usize::from(extra_nul), Kind::Atomic).cast::<u8>();
    if !q.is_null() {
        // SAFETY: `src` has `len` readable bytes; `q` has room for them and
        // the terminator.
        unsafe {
            std::ptr::copy_nonoverlapping(src, q, len);
            if extra_nul {
                *q.add(len) = 0;
            }
        }
    }
    q.cast()
}

#[no_mangle]
pub unsafe extern "C" fn GC_strdup(s: *const c_char) -> *mut c_char {
    if s.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: a NUL-terminated string, per the contract.
    let len = unsafe { libc::strlen(s) };
    copy_bytes(s.cast(), len, true)
}

#[no_mangle]
pub unsafe extern "C" fn GC_strndup(s: *const c_char, n: usize) -> *mut c_char {
    if s.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: at most `n` bytes are read, stopping at a NUL.
    let len = unsafe { libc::strnlen(s, n) };
    copy_bytes(s.cast(), len, true)
}

#[no_mangle]
pub unsafe extern "C" fn GC_wcsdup(s: *const libc::wchar_t) -> *mut libc::wchar_t {
    if s.is_null() {
        return std::ptr::null_mut();
    }
    let mut len = 0;
    // SAFETY: a NUL-terminated wide string, per the contract.
    while unsafe { *s.add(len) } != 0 {
        len += 1;
    }
    let w = std::mem::size_of::<libc::wchar_t>();
    let q = alloc((len + 1) * w, Kind::Atomic);
    if !q.is_null() {
        // SAFETY: room for len + 1 wide characters.
        unsafe { std::ptr::copy_nonoverlapping(s.cast::<u8>(), q.cast::<u8>(), (len + 1) * w) };
    }
    q.cast()
}

#[no_mangle]
pub extern "C" fn GC_base(p: *mut c_void) -> *mut c_void {
    base_of(p).map_or(std::ptr::null_mut(), |o| o.as_ptr().cast())
}

/// The object's whole slot, the extra byte included, as bdwgc answers
/// (one page-table lookup: gc_inline.h's checks call it per allocation).
#[no_mangle]
pub extern "C" fn GC_size(p: *const c_void) -> usize {
    if p.is_null() {
        return 0;
    }
    heap()
        .object_containing_sized(p.cast())
        .map_or(0, |(o, size)| crate::kinds::visible_size(o, size))
}

#[no_mangle]
pub extern "C" fn GC_is_heap_ptr(p: *const c_void) -> c_int {
    c_int::from(base_of(p).is_some())
}

#[no_mangle]
pub extern "C" fn GC_is_visible(p: *mut c_void) -> *mut c_void {
    p
}

#[no_mangle]
pub extern "C" fn GC_same_obj(p: *mut c_void, _q: *mut c_void) -> *mut c_void {
    p
}

#[no_mangle]
pub extern "C" fn GC_is_valid_displacement(p: *mut c_void) -> *mut c_void {
    p
}

#[no_mangle]
pub unsafe extern "C" fn GC_pre_incr(p: *mut *mut c_void, how_much: isize) -> *mut c_void {
    // SAFETY: the caller's pointer variable.
    unsafe {
        *p = (*p).cast::<u8>().offset(how_much).cast();
        *p
    }
}

#[no_mangle]
pub unsafe extern "C" fn GC_post_incr(p: *mut *mut c_void, how_much: isize) -> *mut c_void {
    // SAFETY: the caller's pointer variable.
    unsafe {
        let old = *p;
        *p = old.cast::<u8>().offset(how_much).cast();
        old
    }
}

/// `GC_get_kind_and_size`: bdwgc's kind number of `p`'s object.
#[no_mangle]
pub unsafe extern "C" fn GC_get_kind_and_size(p: *const c_void, psize: *mut usize) -> c_int {
    let Some(o) = base_of(p) else { return -1 };
    if !psize.is_null() {
        // SAFETY: the caller's out pointer.
        unsafe { *psize = crate::kinds::visible_size(o, heap().object_size(o).unwrap_or(0)) };
    }
    crate::threads::guarded(|| kind_of(o)).number()
}
