//! Disclaim procedures and finalized allocation (`gc_disclaim.h`).
//!
//! bdwgc calls a kind's disclaim procedure on each unreachable object of
//! the kind just before its memory is reclaimed, and keeps the object if
//! the procedure returns non-zero; with `mark_unconditionally` the
//! object's referents stay alive until the object itself goes.
//! `GC_finalized_malloc` builds on it: the object's first (hidden) word
//! holds its finalizer closure, tagged with bit 0, and the program gets the
//! address one word in.
//!
//! A small `GC_finalized_malloc` object is bdwgc's exactly: allocated
//! `NEEDS_CLEANUP | KEEP_REFERENTS`, its closure runs from the sweep that
//! reclaims it (Mosaic's `on_free`), in the same collection cycle, and
//! what it references stays alive until then.
//!
//! Objects of kinds with a disclaim procedure (and large finalized ones)
//! carry the heap's shared Mosaic finalizer
//! (two bits on its page, no entry: such programs have hundreds of
//! thousands of them), ordered when the kind marks unconditionally (an
//! ordered finalizer runs only after every finalizable object that
//! reaches it is gone, which keeps the referents the same way) and
//! unordered otherwise. The finalizer finds the kind from the object: a
//! `GC_finalized_malloc` object is the only conservatively scanned one
//! given it, and a made kind's objects end in their kind's number
//! (`kinds.rs`). When it runs, the disclaim procedure is called; a
//! non-zero answer registers the finalizer again, so the object stays
//! until a later collection finds it unreachable and the procedure lets
//! it go. Then the object is freed explicitly
//! (`Mutator::free`), as bdwgc reclaims it. Differences from bdwgc: the
//! procedure runs at the end of an allocation call (or in
//! `GC_invoke_finalizers`), not inside the sweep, so it may even allocate.
//!
//! Marks: inside a disclaim procedure, `GC_is_marked` of that object
//! answers whether it was found reachable, i.e. no (that is why the
//! procedure runs) unless the program called `GC_set_mark_bit` on it since
//! the collection that found it unreachable began, as bdwgc's weak maps do
//! to keep an entry they just looked up. Every other question gets the
//! usual answer.
//!
//! Invariant: the answer compares two collection numbers, never a set
//! emptied at some point. A revival is stamped with the number of the last
//! collection begun when it happened (under the lock that collection's
//! start takes, so no collection can begin between reading the number and
//! recording the revival), and the core gives the shared finalizer the
//! number of the collection that queued the object: the object was revived
//! after being found unreachable exactly when its stamp is at least that
//! number. (bdwgc sweeps every block before the next collection clears the
//! marks; here a procedure queued by one collection may run after the next
//! one began, and forgetting revivals then freed objects a weak map had
//! just handed out.) Stamps older than every queued finalizer answer no
//! for any procedure still to run, so they are dropped when a collection
//! begins with none queued or running; otherwise the table holds at most
//! one stamp per object address.

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

use mosaic::{AllocFlags, FinalizerOrder, ObjRef};
use parking_lot::Mutex;
use rustc_hash::FxHashMap;

use crate::heap::GcMutator;
use crate::kinds::MAX_KINDS;
use crate::threads::{client_code, with_mutator};

const W: usize = std::mem::size_of::<usize>();

pub type DisclaimProc = Option<unsafe extern "C" fn(*mut c_void) -> c_int>;

/// Each kind's disclaim procedure (0: none) and whether it marks
/// unconditionally.
static PROCS: [AtomicUsize; MAX_KINDS] = [const { AtomicUsize::new(0) }; MAX_KINDS];
static UNCONDITIONAL: [AtomicUsize; MAX_KINDS] = [const { AtomicUsize::new(0) }; MAX_KINDS];

/// The finalized kind (`GC_init_finalized_malloc`): bdwgc's normal kind
/// with its own number, here the plain conservative kind plus this flag.
const FINALIZED: usize = usize::MAX;

/// Revivals (`GC_set_mark_bit` outside a collection), stamped.
struct Revived {
    /// The number of the last collection begun.
    started: u64,
    /// Object address → `started` at its last revival (made at the first).
    stamps: Option<FxHashMap<usize, u64>>,
}

static REVIVED: Mutex<Revived> = Mutex::new(Revived {
    started: 0,
    stamps: None,
});

/// Disclaim procedures running now: each was taken off the queue already,
/// so the queue's length alone does not say that none is left to ask.
/// (Counted before the procedure's program code, while the stop signal is
/// still deferred: no collection can begin between taking it and counting
/// it.)
static RUNNING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The object whose disclaim procedure this thread runs and the number
    /// of the collection that queued it (object 0: none).
    static IN_DISCLAIM: Cell<(usize, u64)> = const { Cell::new((0, 0)) };
    /// The finalized object whose closure this thread runs from the sweep
    /// (0: none).
    static RECLAIMING: Cell<usize> = const { Cell::new(0) };
}

/// `GC_set_mark_bit` outside a collection: `obj` counts as marked for the
/// disclaim procedure of any collection begun so far.
pub fn revive(obj: usize) {
    crate::threads::guarded(|| {
        let mut r = REVIVED.lock();
        let stamp = r.started;
        r.stamps
            .get_or_insert_with(Default::default)
            .insert(obj, stamp);
    });
}

/// Collection `number` begins (in its pause): revivals from now on are
/// stamped with it; with no finalizer queued or running, no procedure is
/// left that an earlier stamp could answer yes for.
pub fn collection_started(number: u64, queued: usize) {
    let mut r = REVIVED.lock();
    r.started = number;
    if queued == 0 && RUNNING.load(Ordering::SeqCst) == 0 {
        if let Some(s) = r.stamps.as_mut() {
            s.clear();
        }
    }
}

/// `GC_is_marked` of the object a disclaim procedure runs for, asked from
/// inside it outside any pause (`None`: another question).
pub fn is_marked_in_disclaim(obj: usize) -> Option<bool> {
    let (running, queued_by) = IN_DISCLAIM.with(Cell::get);
    if running != obj || crate::heap::heap_if_created().is_some_and(|h| h.stop_sequence() & 1 == 1)
    {
        return None;
    }
    Some(crate::threads::guarded(|| {
        REVIVED
            .lock()
            .stamps
            .as_ref()
            .and_then(|s| s.get(&obj))
            .is_some_and(|&stamp| stamp >= queued_by)
    }))
}

fn order_of(kind: usize) -> FinalizerOrder {
    let unconditional = kind == FINALIZED
        || UNCONDITIONAL
            .get(kind)
            .is_some_and(|u| u.load(Ordering::Relaxed) != 0);
    if unconditional {
        FinalizerOrder::Ordered
    } else {
        FinalizerOrder::Unordered
    }
}

/// After allocating `o` of `kind` (inside the allocation call): gives it
/// its finalizer if the kind has a disclaim procedure.
pub fn after_alloc(m: &mut GcMutator, o: ObjRef, kind: usize) {
    let Some(p) = PROCS.get(kind) else { return };
    if p.load(Ordering::Acquire) != 0 {
        let _ = m.register_shared_finalizer(o, order_of(kind));
    }
}

/// The kind whose procedure finalizes `obj`: `FINALIZED` for a
/// conservatively scanned object (only `GC_finalized_malloc` gives those
/// the finalizer), else the made kind its trailer names.
fn kind_of(obj: ObjRef) -> Option<usize> {
    let h = crate::heap::heap();
    if h.object_flags(obj)?.contains(AllocFlags::CONSERVATIVE) {
        return Some(FINALIZED);
    }
    crate::kinds::kind_of(obj, h.object_size(obj).ok()?)
}

/// Mosaic's shared finalizer: the disclaim procedure of the object's kind.
/// `queued_by` is the number of the collection that found `obj`
/// unreachable.
pub fn on_unreachable(m: &mut GcMutator, obj: ObjRef, _tag: usize, queued_by: usize) {
    let Some(kind) = kind_of(obj) else { return };
    let keep = if kind == FINALIZED {
        // A Mosaic finalizer, outside any sweep: program code like any.
        finalize_closure(obj, |f| client_code(f));
        0
    } else {
        let f = PROCS[kind].load(Ordering::Acquire);
        if f == 0 {
            // The procedure was removed since: nothing to ask.
            return;
        }
        // SAFETY: a disclaim procedure registered for this object's kind.
        let f: unsafe extern "C" fn(*mut c_void) -> c_int = unsafe { std::mem::transmute(f) };
        let p = obj.as_ptr().cast::<c_void>();
        RUNNING.fetch_add(1, Ordering::SeqCst);
        let outer = IN_DISCLAIM.with(|d| d.replace((obj.addr(), queued_by as u64)));
        // SAFETY: bdwgc's call: the object's base.
        let keep = crate::threads::lend(m, || client_code(|| unsafe { f(p) }));
        IN_DISCLAIM.with(|d| d.set(outer));
        RUNNING.fetch_sub(1, Ordering::SeqCst);
        keep
    };
    if keep != 0 {
        let _ = m.register_shared_finalizer(obj, order_of(kind));
    } else {
        // bdwgc reclaims the object right after its procedure lets it go,
        // and counts it with what the sweep found, not as an explicit
        // free (`GC_get_expl_freed_bytes_since_gc`).
        // SAFETY: unreachable when the collection chose it, and its
        // procedure gave it up.
        if let Ok((_, size)) = unsafe { m.free_sized(obj) } {
            crate::alloc::not_explicitly_freed(size);
        }
    }
}

/// Runs the finalizer closure of a `GC_finalized_malloc` object, if its
/// first word still holds one (tag bit set), through `run` (which says
/// whether a stop signal may park the thread inside it).
fn finalize_closure(obj: ObjRef, run: impl FnOnce(&mut dyn FnMut())) {
    // SAFETY: the object's first word, written at allocation.
    let w = unsafe { obj.as_ptr().cast::<usize>().read() };
    if w & 1 == 0 {
        return;
    }
    let fc = (w & !1) as *const Closure;
    // SAFETY: the closure the program passed (it must outlive the object).
    let (proc_, cd) = unsafe { ((*fc).proc_, (*fc).cd) };
    if let Some(f) = proc_ {
        // SAFETY: the program's finalizer with bdwgc's arguments: the
        // address it was given and the closure's data.
        run(&mut || unsafe { f(obj.as_ptr().add(W).cast(), cd) });
    }
}

/// `struct GC_finalizer_closure`.
#[repr(C)]
pub struct Closure {
    proc_: crate::finalize::FinalizerProc,
    cd: *mut c_void,
}

#[no_mangle]
pub extern "C" fn GC_init_finalized_malloc() {}

#[no_mangle]
pub extern "C" fn GC_register_disclaim_proc(
    kind: c_int,
    proc_: DisclaimProc,
    mark_unconditionally: c_int,
) {
    let Ok(k) = usize::try_from(kind) else { return };
    if k >= MAX_KINDS {
        return;
    }
    UNCONDITIONAL[k].store(usize::from(mark_unconditionally != 0), Ordering::Relaxed);
    PROCS[k].store(proc_.map_or(0, |f| f as usize), Ordering::Release);
}

/// `size` bytes finalized by `fc` when unreachable; the program gets the
/// address one word into the object (the first word is the closure).
///
/// A small object is bdwgc's: allocated `NEEDS_CLEANUP` and
/// `KEEP_REFERENTS`, it is reclaimed by the sweep, which runs the closure
/// just before ([`on_reclaim`]), what it references kept alive until then.
/// A large one (whose reclaim happens inside the pause) carries the shared
/// finalizer instead (ordered: its referents stay too), run after the
/// pause and then freed.
#[no_mangle]
pub extern "C" fn GC_finalized_malloc(size: usize, fc: *const Closure) -> *mut c_void {
    let Some(total) = size.checked_add(W) else {
        return crate::alloc::out_of_memory(size);
    };
    let small = crate::heap::heap()
        .slot_size_for(total.saturating_add(crate::data::extra_byte()))
        .is_some();
    let kind = if small {
        crate::alloc::Kind::Finalized
    } else {
        crate::alloc::Kind::Normal
    };
    let p = crate::alloc::alloc(total, kind);
    if p.is_null() {
        return p;
    }
    // SAFETY: a fresh object of at least one word.
    unsafe { p.cast::<usize>().write(fc as usize | 1) };
    if !small {
        let Some(o) = crate::alloc::base_of(p) else {
            return std::ptr::null_mut();
        };
        with_mutator(|m| {
            let _ = m.register_shared_finalizer(o, FinalizerOrder::Ordered);
        });
    }
    // SAFETY: one word into the object.
    unsafe { p.cast::<u8>().add(W).cast() }
}

/// The embedder's `on_free`: a small `GC_finalized_malloc` object is being
/// reclaimed by the sweep (a mutator's, with the world running); its
/// closure runs now, as bdwgc runs it from its reclaim. Like bdwgc's
/// (which holds the allocation lock then), the closure must not call the
/// collector.
///
/// The stop signal stays deferred while it runs (as bdwgc's allocation
/// lock keeps collections out): the sweep step around it owns a page half
/// swept, and a collection that parked the thread here would mark with
/// that page's bits half old, half new, then the step would go on with
/// the new marks (objects freed under their referrers, closures run
/// twice: `disclaim_test` failed one run in six that way).
pub fn on_reclaim(obj: ObjRef) {
    RECLAIMING.with(|r| {
        let outer = r.replace(obj.addr());
        finalize_closure(obj, |f| f());
        r.set(outer);
    });
}

/// `GC_base` of `p` while this thread runs the closure of the object being
/// reclaimed (no longer an object for the heap): its base, for the base
/// and the address the program was given (bdwgc still knows the object
/// then).
pub fn base_while_reclaimed(p: usize) -> Option<ObjRef> {
    let obj = RECLAIMING.with(Cell::get);
    (obj != 0 && (p == obj || p == obj + W)).then(|| ObjRef::from_ptr(obj as *mut u8))?
}

/// `GC_free` of `p`, inside the object at `base`: a finalized object is
/// freed without its closure running (bdwgc frees it without asking its
/// disclaim procedure): the closure word is cleared, and the object goes
/// with the next collection that finds it unreachable.
pub fn forget_closure(base: ObjRef, p: *mut c_void) {
    let finalized = crate::heap::heap()
        .object_flags(base)
        .is_some_and(|f| f.contains(AllocFlags::KEEP_REFERENTS));
    if finalized && p as usize == base.addr() + W {
        // SAFETY: the closure word of a live finalized object.
        unsafe { base.as_ptr().cast::<usize>().write(0) };
    }
}
