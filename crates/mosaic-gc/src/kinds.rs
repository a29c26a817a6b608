//! Object kinds made by the program (`GC_new_kind`): each has a mark
//! descriptor template (a length, a bitmap, a mark procedure, or a
//! per-object descriptor, `mark.rs`), whether the object's size is added
//! to it, and whether new objects are cleared.
//!
//! An object of such a kind is allocated with Mosaic's plain flags (so
//! `Boehm::trace` sees it) and one trailing word at the end of its slot
//! holding the kind's number. Typed objects (`typed.rs`) also end in a
//! trailer, whose last word is a descriptor's address: a number below
//! [`MAX_KINDS`] can only be a kind. The trailer is not part of the
//! object as the program sees it (`GC_size` excludes it), so a procedure
//! that walks `GC_size` bytes never reads it.
//!
//! Kinds 0 to 3 are bdwgc's predefined ones (pointer-free, normal,
//! uncollectable, atomic uncollectable; `alloc.rs`); made kinds are
//! numbered from 4, as in bdwgc before its optional kinds exist.

use std::ffi::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use mosaic::{AllocFlags, ObjRef, Tracer};
use parking_lot::Mutex;

use crate::heap::heap;
use crate::mark::{DS_LENGTH, DS_TAGS};

const W: usize = std::mem::size_of::<usize>();

/// bdwgc's predefined kinds come first.
pub const FIRST: usize = 4;
/// bdwgc's `MAXOBJKINDS`.
pub const MAX_KINDS: usize = 24;

struct KindInfo {
    descr: AtomicUsize,
    adjust: AtomicBool,
}

static KINDS: [KindInfo; MAX_KINDS] = [const {
    KindInfo {
        descr: AtomicUsize::new(0),
        adjust: AtomicBool::new(false),
    }
}; MAX_KINDS];
/// The number of kinds (made ones are below it); grows under `MAKING`.
static COUNT: AtomicUsize = AtomicUsize::new(FIRST);
static MAKING: Mutex<()> = Mutex::new(());
/// Whether any kind was made (GC_size's fast path skips the trailer check
/// otherwise).
static ANY: AtomicBool = AtomicBool::new(false);

/// Whether `k` is a kind the program made.
pub fn is_made(k: c_int) -> bool {
    usize::try_from(k).is_ok_and(|k| k >= FIRST && k < COUNT.load(Ordering::Acquire))
}

fn new_kind(descr: usize, adjust: c_int, _clear: c_int) -> c_uint {
    let _making = MAKING.lock();
    let n = COUNT.load(Ordering::Relaxed);
    if n >= MAX_KINDS {
        crate::control::abort_with("mosaic-gc: too many object kinds (GC_new_kind)");
    }
    KINDS[n].descr.store(descr, Ordering::Relaxed);
    KINDS[n].adjust.store(adjust != 0, Ordering::Relaxed);
    ANY.store(true, Ordering::Release);
    COUNT.store(n + 1, Ordering::Release);
    n as c_uint
}

/// A free-list array the program may pass to `GC_new_kind` (bdwgc's
/// `MAXOBJGRANULES + 1` entries). Objects are never handed out through
/// it: allocation goes through Mosaic's own per-thread runs.
fn new_free_list() -> *mut c_void {
    Box::leak(vec![0usize; 129].into_boxed_slice())
        .as_mut_ptr()
        .cast()
}

#[no_mangle]
pub extern "C" fn GC_new_free_list() -> *mut c_void {
    new_free_list()
}

#[no_mangle]
pub extern "C" fn GC_new_free_list_inner() -> *mut c_void {
    new_free_list()
}

/// Objects of a made kind are always cleared (`clear_new_objects` = 0
/// only allows bdwgc to skip it).
#[no_mangle]
pub extern "C" fn GC_new_kind(
    _free_list: *mut c_void,
    descr: usize,
    adjust: c_int,
    clear: c_int,
) -> c_uint {
    crate::threads::guarded(|| new_kind(descr, adjust, clear))
}

#[no_mangle]
pub extern "C" fn GC_new_kind_inner(
    _free_list: *mut c_void,
    descr: usize,
    adjust: c_int,
    clear: c_int,
) -> c_uint {
    new_kind(descr, adjust, clear)
}

/// Bytes to ask Mosaic for an object of `n` bytes (the extra byte
/// included) of a made kind: rounded to words, plus the trailer.
pub fn request_size(n: usize) -> Option<usize> {
    n.checked_next_multiple_of(W)?.checked_add(W)
}

/// Allocates an object of the made kind `k` with `m`, its trailer
/// written; `size` is what [`request_size`] gave.
pub fn alloc_with(m: &mut crate::heap::GcMutator, size: usize, k: usize) -> Option<ObjRef> {
    let o = m.alloc_with(size, AllocFlags::NONE).ok()?;
    let slot = heap().object_size(o).unwrap_or(size);
    // SAFETY: the last word of the fresh object's slot.
    unsafe { o.as_ptr().add(slot - W).cast::<usize>().write(k) };
    crate::disclaim::after_alloc(m, o, k);
    Some(o)
}

/// The made kind of the live object `obj` whose slot is `slot` bytes, if
/// it is one.
pub fn kind_of(obj: ObjRef, slot: usize) -> Option<usize> {
    if !ANY.load(Ordering::Acquire) || slot < W {
        return None;
    }
    let flags = heap().object_flags(obj)?;
    if flags.contains(AllocFlags::CONSERVATIVE) || flags.contains(AllocFlags::NO_POINTERS) {
        return None;
    }
    // SAFETY: the last word of a live object's slot.
    let k = unsafe { obj.as_ptr().add(slot - W).cast::<usize>().read() };
    (FIRST..MAX_KINDS).contains(&k).then_some(k)
}

/// The bytes of `obj` the program sees: its slot less a made kind's
/// trailer.
pub fn visible_size(obj: ObjRef, slot: usize) -> usize {
    match kind_of(obj, slot) {
        Some(_) => slot - W,
        None => slot,
    }
}

/// Marks from `obj`, an object of made kind `k` in a slot of `slot` bytes:
/// its kind's descriptor, with the object's size added when the kind says
/// so, bounded by the object.
pub fn trace<T: Tracer>(obj: ObjRef, slot: usize, k: usize, t: &mut T) {
    let info = &KINDS[k];
    let size = slot - W;
    let mut descr = info.descr.load(Ordering::Relaxed);
    if info.adjust.load(Ordering::Relaxed) && descr & DS_TAGS == DS_LENGTH {
        descr = descr.wrapping_add(size);
    }
    let start = obj.addr();
    crate::mark::with_visitor(t, || {
        // SAFETY: marking, and `start..start + size` is the live object.
        unsafe { crate::mark::mark_from(start, descr, start + size) }
    });
}

// ---- gcj (Java-style objects: the first word points to a vtable) ----

/// gcj's kind once `GC_init_gcj_malloc` made it (0 before).
static GCJ_KIND: AtomicUsize = AtomicUsize::new(0);

/// Makes gcj's kind, whose descriptor is the vtable's second word, and
/// installs `mp` at the reserved procedure index `mp_index` (vtables may
/// name it through `GC_MAKE_PROC`).
#[no_mangle]
pub extern "C" fn GC_init_gcj_malloc(mp_index: c_int, mp: *mut c_void) {
    crate::threads::guarded(|| {
        if GCJ_KIND.load(Ordering::Acquire) != 0 {
            return;
        }
        if let Ok(i) = usize::try_from(mp_index) {
            crate::mark::set_reserved_proc(i, mp);
        }
        let k = new_kind(crate::mark::GCJ_DESCR, 0, 1) as usize;
        GCJ_KIND.store(k, Ordering::Release);
        crate::data::set_gcj_kinds(k as c_int);
    });
}

fn gcj_malloc(lb: usize, vtable: *mut c_void) -> *mut c_void {
    let k = GCJ_KIND.load(Ordering::Acquire);
    if k == 0 {
        crate::control::abort_with("mosaic-gc: GC_gcj_malloc called before GC_init_gcj_malloc");
    }
    let p = crate::alloc::alloc(lb.max(W), crate::alloc::Kind::Made(k));
    if !p.is_null() {
        // SAFETY: a fresh object of at least one word; until this store
        // its first word is 0, which the marker reads as "no vtable yet".
        unsafe { p.cast::<*mut c_void>().write(vtable) };
    }
    p
}

#[no_mangle]
pub extern "C" fn GC_gcj_malloc(lb: usize, vtable: *mut c_void) -> *mut c_void {
    gcj_malloc(lb, vtable)
}

#[no_mangle]
pub extern "C" fn GC_gcj_malloc_ignore_off_page(lb: usize, vtable: *mut c_void) -> *mut c_void {
    gcj_malloc(lb, vtable)
}

#[no_mangle]
pub extern "C" fn GC_debug_gcj_malloc(
    lb: usize,
    vtable: *mut c_void,
    _s: *const std::ffi::c_char,
    _i: c_int,
) -> *mut c_void {
    gcj_malloc(lb, vtable)
}
