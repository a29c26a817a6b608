//! bdwgc's marking interface for clients (`gc_mark.h`): mark procedures,
//! mark descriptors, `GC_mark_and_push`, the `GC_push_*` calls and the
//! push-other-roots hook, on top of Mosaic's marker.
//!
//! While Mosaic traces an object of a client kind (`kinds.rs`) or scans
//! this library's roots, the thread's tracer is published in a
//! thread-local ([`with_visitor`]); every word a client hands over
//! (`GC_mark_and_push`, a range given to `GC_push_all`, an entry a mark
//! procedure pushed) goes to that tracer's `visit_ambiguous`, which marks
//! the object it points into (interior pointers resolved, anything else
//! ignored) and queues it on Mosaic's own mark stack. A mark procedure
//! runs against a scratch stack with bdwgc's layout (`struct GC_ms_entry
//! { start, descr }`, the pointer it is given is the top, pushes
//! pre-increment); what it returns is interpreted here by descriptor
//! (`GC_DS_LENGTH`, `GC_DS_BITMAP`, `GC_DS_PROC`, `GC_DS_PER_OBJECT`) until
//! nothing is left. A procedure that runs past the limit it was given
//! (bdwgc's overflow signal) is run again with a stack twice as large:
//! marking is idempotent, so only the lost entries matter.
//!
//! Invariants: a range read on behalf of an entry that starts in the heap
//! never goes past the end of that object (a descriptor that lies about a
//! length reads nothing beyond it); outside a collection these calls do
//! nothing.

use std::cell::Cell;
use std::ffi::{c_int, c_uint, c_void};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

use mosaic::Tracer;
use parking_lot::Mutex;

const W: usize = std::mem::size_of::<usize>();

pub const DS_TAGS: usize = 3;
pub const DS_LENGTH: usize = 0;
pub const DS_BITMAP: usize = 1;
pub const DS_PROC: usize = 2;
pub const DS_PER_OBJECT: usize = 3;
const LOG_MAX_MARK_PROCS: usize = 6;
const MAX_MARK_PROCS: usize = 1 << LOG_MAX_MARK_PROCS;
/// bdwgc reserves the first indices for well-known clients (gcj).
const RESERVED_MARK_PROCS: usize = 8;
const INDIR_PER_OBJ_BIAS: usize = 0x10;

/// One entry of bdwgc's mark stack.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct MsEntry {
    pub start: usize,
    pub descr: usize,
}

pub type MarkProc =
    unsafe extern "C" fn(*mut usize, *mut MsEntry, *mut MsEntry, usize) -> *mut MsEntry;

/// Registered mark procedures by index (0 = none).
static PROCS: [AtomicUsize; MAX_MARK_PROCS] = [const { AtomicUsize::new(0) }; MAX_MARK_PROCS];
static N_PROCS: Mutex<usize> = Mutex::new(RESERVED_MARK_PROCS);

type Visit = dyn FnMut(usize);

thread_local! {
    /// The tracer of the collection this thread is marking for, if any.
    static VISITOR: Cell<Option<NonNull<Visit>>> = const { Cell::new(None) };
}

/// Scratch stacks mark procedures push onto, lent to one procedure call
/// at a time. Not a thread-local: a thread-local with a destructor asks
/// the C library (`calloc`, under its loader lock) on its first use, which
/// would be inside a pause, on a GC worker or the collecting thread, while
/// the program's threads may be stopped holding those locks.
static SCRATCH: Mutex<Vec<Vec<MsEntry>>> = Mutex::new(Vec::new());

/// Restores the previous visitor when dropped (nesting, panics).
struct Restore(Option<NonNull<Visit>>);

impl Drop for Restore {
    fn drop(&mut self) {
        VISITOR.with(|v| v.set(self.0));
    }
}

/// Runs `f` with `t` as this thread's visitor: client calls made inside
/// (`GC_mark_and_push`, `GC_push_all`...) reach `t`.
pub fn with_visitor<T: Tracer, R>(t: &mut T, f: impl FnOnce() -> R) -> R {
    let mut visit = |w: usize| t.visit_ambiguous(w);
    let dyn_visit: &mut (dyn FnMut(usize) + '_) = &mut visit;
    // SAFETY: only the lifetime is erased; the pointer is published for
    // the duration of `f` and withdrawn (by `Restore`) before `visit` goes
    // out of scope, even on a panic.
    let ptr: NonNull<Visit> = unsafe {
        std::mem::transmute::<NonNull<dyn FnMut(usize) + '_>, NonNull<Visit>>(NonNull::from(
            dyn_visit,
        ))
    };
    let _restore = Restore(VISITOR.with(|v| v.replace(Some(ptr))));
    f()
}

/// Hands `w` to this thread's visitor; false when no collection is marking
/// on this thread.
#[inline]
fn visit(w: usize) -> bool {
    match VISITOR.with(Cell::get) {
        Some(mut v) => {
            // SAFETY: published by `with_visitor` on this thread, which is
            // still inside `f`; not otherwise borrowed while a client call
            // runs.
            unsafe { v.as_mut()(w) };
            true
        }
        None => false,
    }
}

/// Whether this thread is marking for a collection now (inside the
/// program's push-other-roots procedure or a mark procedure).
pub fn marking() -> bool {
    VISITOR.with(Cell::get).is_some()
}

thread_local! {
    /// This thread is running the program's push-other-roots procedure.
    static IN_OTHER_ROOTS: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is inside the program's push-other-roots procedure.
pub fn in_push_other_roots() -> bool {
    IN_OTHER_ROOTS.with(Cell::get)
}

/// Visits every aligned word of `lo..hi`.
///
/// # Safety
/// `lo..hi` is readable.
unsafe fn visit_range(lo: usize, hi: usize) {
    let mut p = lo.next_multiple_of(W);
    while p + W <= hi {
        // SAFETY: inside the readable range.
        visit(unsafe { (p as *const usize).read() });
        p += W;
    }
}

/// The end of the heap object `p` points into, or `usize::MAX` when `p`
/// is outside the heap (a client's own memory: trusted, as bdwgc does).
fn bound_of(p: usize) -> usize {
    match crate::heap::heap_if_created().and_then(|h| h.object_containing_sized(p as *const u8)) {
        Some((o, size)) => o.addr() + size,
        None => usize::MAX,
    }
}

/// Marks from one object (or client range) described by `descr`: the
/// words at `start..limit` that the descriptor names, and everything
/// procedures push on the way.
///
/// # Safety
/// Called during marking (with a visitor); `start..limit` is readable as
/// far as the descriptor says.
pub unsafe fn mark_from(start: usize, descr: usize, limit: usize) {
    // Only procedures and per-object descriptors queue more work: the
    // common case allocates nothing.
    let mut pending = Vec::new();
    // SAFETY: as the caller says.
    unsafe { mark_entry(start, descr, limit, &mut pending) };
    while let Some((start, descr, limit)) = pending.pop() {
        // SAFETY: as the caller says, for entries it gave and for those
        // procedures pushed (bounded by their object when in the heap).
        unsafe { mark_entry(start, descr, limit, &mut pending) };
    }
}

unsafe fn mark_entry(
    start: usize,
    descr: usize,
    limit: usize,
    pending: &mut Vec<(usize, usize, usize)>,
) {
    match descr & DS_TAGS {
        DS_LENGTH => {
            let end = start.saturating_add(descr).min(limit);
            // SAFETY: the caller's range, bounded by the object.
            unsafe { visit_range(start, end) };
        }
        DS_BITMAP => {
            let mut bits = descr & !DS_TAGS;
            let mut p = start;
            while bits != 0 && p + W <= limit {
                if bits >> (usize::BITS - 1) == 1 {
                    // SAFETY: a word the bitmap names, inside the object.
                    visit(unsafe { (p as *const usize).read() });
                }
                bits <<= 1;
                p += W;
            }
        }
        DS_PROC => {
            let index = (descr >> 2) & (MAX_MARK_PROCS - 1);
            let env = descr >> (2 + LOG_MAX_MARK_PROCS);
            let f = PROCS[index].load(Ordering::Acquire);
            if f != 0 && start != 0 {
                // SAFETY: a procedure registered with GC_new_proc.
                let f: MarkProc = unsafe { std::mem::transmute::<usize, MarkProc>(f) };
                run_proc(f, start, env, pending);
            }
        }
        _ => {
            // GC_DS_PER_OBJECT: the real descriptor is in the object, or in
            // a type descriptor its first word points to.
            let off = descr & !DS_TAGS;
            let real = if (descr as isize) >= 0 {
                if start + off + W > limit {
                    return;
                }
                // SAFETY: inside the object.
                unsafe { ((start + off) as *const usize).read() }
            } else {
                if start + W > limit {
                    return;
                }
                // SAFETY: the object's first word, inside it.
                let type_descr = unsafe { (start as *const usize).read() };
                if type_descr == 0 {
                    return; // an object on a free list
                }
                // bdwgc: type_descr - (descr + (BIAS - GC_DS_PER_OBJECT)),
                // descr signed (gcj's puts the descriptor a word in).
                let back =
                    (descr as isize).wrapping_add((INDIR_PER_OBJ_BIAS - DS_PER_OBJECT) as isize);
                let at = type_descr.wrapping_sub(back as usize);
                // SAFETY: the client's type descriptor, as bdwgc reads it.
                unsafe { (at as *const usize).read() }
            };
            // A per-object descriptor naming another indirection would
            // loop: bdwgc never produces one; treat it as "nothing".
            if real != 0 && real & DS_TAGS != DS_PER_OBJECT {
                pending.push((start, real, limit));
            }
        }
    }
}

/// The scratch stack starts at this many entries and doubles on overflow.
const SCRATCH_START: usize = 1024;
const SCRATCH_MAX: usize = 1 << 24;
/// Entries beyond the limit that a procedure may write before it notices.
const SLACK: usize = 64;

fn run_proc(f: MarkProc, addr: usize, env: usize, pending: &mut Vec<(usize, usize, usize)>) {
    let mut buf = SCRATCH.lock().pop().unwrap_or_default();
    let mut cap = buf.len().saturating_sub(SLACK + 1).max(SCRATCH_START);
    loop {
        buf.resize(cap + 1 + SLACK, MsEntry::default());
        let base = buf.as_mut_ptr();
        // SAFETY: both inside `buf` (limit = one past the `cap` usable
        // entries after the top sentinel at index 0).
        let (top, limit) = unsafe { (base, base.add(cap + 1)) };
        // SAFETY: the client's procedure, called as bdwgc calls it.
        let r = unsafe { f(addr as *mut usize, top, limit, env) };
        let r = r as usize;
        if r >= limit as usize {
            if cap >= SCRATCH_MAX {
                crate::control::abort_with(
                    "mosaic-gc: a mark procedure keeps overflowing a mark stack of 16M entries",
                );
            }
            cap *= 2;
            continue;
        }
        let n = r.saturating_sub(base as usize) / std::mem::size_of::<MsEntry>();
        for e in &buf[1..=n] {
            if e.start != 0 {
                pending.push((e.start, e.descr, bound_of(e.start)));
            }
        }
        break;
    }
    SCRATCH.lock().push(buf);
}

/// Registers a mark procedure; its index goes into `GC_MAKE_PROC`.
fn new_proc(f: Option<MarkProc>) -> c_uint {
    let mut n = N_PROCS.lock();
    if *n >= MAX_MARK_PROCS {
        crate::control::abort_with("mosaic-gc: too many mark procedures (GC_new_proc)");
    }
    PROCS[*n].store(f.map_or(0, |f| f as usize), Ordering::Release);
    *n += 1;
    (*n - 1) as c_uint
}

/// Installs `f` at a reserved index (gcj's procedure, `GC_init_gcj_malloc`).
pub fn set_reserved_proc(index: usize, f: *mut c_void) {
    if index < RESERVED_MARK_PROCS {
        PROCS[index].store(f as usize, Ordering::Release);
    }
}

/// gcj's kind descriptor: the object's first word points to a vtable
/// whose second word is the mark descriptor.
pub const GCJ_DESCR: usize = (0usize.wrapping_sub(W + INDIR_PER_OBJ_BIAS)) | DS_PER_OBJECT;

#[no_mangle]
pub extern "C" fn GC_new_proc(f: Option<MarkProc>) -> c_uint {
    crate::threads::guarded(|| new_proc(f))
}

#[no_mangle]
pub extern "C" fn GC_new_proc_inner(f: Option<MarkProc>) -> c_uint {
    new_proc(f)
}

/// Marks the object `obj` points into (any word: outside the heap it is
/// ignored, inside it interior pointers count) and queues it for scanning.
/// The client's stack is left as it was.
#[no_mangle]
pub extern "C" fn GC_mark_and_push(
    obj: *mut c_void,
    msp: *mut MsEntry,
    _limit: *mut MsEntry,
    _src: *mut *mut c_void,
) -> *mut MsEntry {
    visit(obj as usize);
    msp
}

#[no_mangle]
pub unsafe extern "C" fn GC_push_all(bottom: *mut c_void, top: *mut c_void) {
    if marking() {
        // SAFETY: the client's readable range.
        unsafe { visit_range(bottom as usize, top as usize) };
    }
}

#[no_mangle]
pub unsafe extern "C" fn GC_push_all_eager(bottom: *mut c_void, top: *mut c_void) {
    // SAFETY: as GC_push_all (every push here is scanned at once).
    unsafe { GC_push_all(bottom, top) }
}

/// Every page counts as dirty (no incremental mode): all of it is pushed.
#[no_mangle]
pub unsafe extern "C" fn GC_push_conditional(bottom: *mut c_void, top: *mut c_void, _all: c_int) {
    // SAFETY: as GC_push_all.
    unsafe { GC_push_all(bottom, top) }
}

/// Marks `p`'s object during a collection (it is scanned too: a superset
/// of what bdwgc retains). Outside one, it counts as marked for the
/// disclaim procedures that run before the next collection
/// (`disclaim.rs`).
#[no_mangle]
pub extern "C" fn GC_set_mark_bit(p: *const c_void) {
    if !visit(p as usize) {
        if let Some(o) = crate::alloc::base_of(p) {
            crate::disclaim::revive(o.addr());
        }
    }
}

/// Mosaic's mark bits belong to the collection in progress; there is
/// nothing to clear between collections.
#[no_mangle]
pub extern "C" fn GC_clear_mark_bit(_p: *const c_void) {}

/// The finalizer tables are this library's own and always scanned.
#[no_mangle]
pub extern "C" fn GC_push_finalizer_structures() {}

/// Runs the program's push-other-roots procedure (`GC_push_other_roots`)
/// against `t`.
pub fn push_other_roots<T: Tracer>(t: &mut T) {
    if let Some(f) = crate::data::program_push_other_roots() {
        // SAFETY: the program's procedure, called as bdwgc calls it (all
        // its threads stopped).
        IN_OTHER_ROOTS.with(|c| c.set(true));
        with_visitor(t, || unsafe { f() });
        IN_OTHER_ROOTS.with(|c| c.set(false));
    }
}
