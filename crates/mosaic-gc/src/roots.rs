//! Roots found as bdwgc finds them: the writable `PT_LOAD` segments of the
//! program and of every loaded shared object, minus `PT_GNU_RELRO` and
//! minus this library; ranges added with `GC_add_roots`; uncollectable
//! objects; finalizers' client data. (Thread stacks are the mutators'.)
//!
//! Every lock here is taken with signals deferred (`guarded`), or by the
//! collector itself: the pause reads these sets.
//!
//! The segments are listed again before every pause, by the collecting
//! thread before it stops the others (`refresh`, from the stop hook), so
//! that a library opened since is found and no stopped thread can hold the
//! loader's lock while we need it.

use std::ffi::{c_char, c_int, c_void};

use mosaic::Tracer;
use parking_lot::Mutex;
use rustc_hash::FxHashSet;

use crate::threads::guarded;

type Range = (usize, usize);

static SEGMENTS: Mutex<Vec<Range>> = Mutex::new(Vec::new());
static ADDED: Mutex<Vec<Range>> = Mutex::new(Vec::new());
static EXCLUDED: Mutex<Vec<Range>> = Mutex::new(Vec::new());
pub static UNCOLLECTABLE: Mutex<Option<FxHashSet<usize>>> = Mutex::new(None);
/// The arguments of threads `GC_pthread_create` started that have not
/// registered yet (bdwgc keeps them in scanned memory too): nothing else
/// may hold them meanwhile.
static STARTING: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// `GC_register_has_static_roots_callback`'s function.
pub type StaticRootsCallback =
    Option<unsafe extern "C" fn(*const c_char, *mut c_void, usize) -> c_int>;
static HAS_STATIC_ROOTS: Mutex<StaticRootsCallback> = Mutex::new(None);

/// Something in this library, to recognise its own segments.
static MARKER: u8 = 0;

/// Visits every root range and root object.
pub fn scan<T: Tracer>(t: &mut T) {
    let excluded = EXCLUDED.lock().clone();
    for &(lo, hi) in SEGMENTS.lock().iter().chain(ADDED.lock().iter()) {
        for (a, b) in subtract((lo, hi), &excluded) {
            // SAFETY: a mapped, writable segment of a loaded object (or a
            // range the program registered as readable), word-aligned.
            // Deferred (queued for any GC worker, as bdwgc's marker queues
            // its roots): every registered thread is stopped until the
            // marking ends, and the program may not unload a library or
            // free a registered range meanwhile, under bdwgc either.
            unsafe { t.defer_ambiguous_range(a as *const usize, b as *const usize) };
        }
    }
    if let Some(set) = UNCOLLECTABLE.lock().as_ref() {
        for &o in set {
            t.visit_ambiguous(o);
        }
    }
    for &a in STARTING.lock().iter() {
        t.visit_ambiguous(a);
    }
    crate::finalize::scan_client_data(t);
    crate::mark::push_other_roots(t);
    // The stacks are scanned next (`Boehm::STACKS_AFTER_ROOTS`).
    crate::threads::sync_main_stackbottom();
    crate::reserve::scan(&mut |o| t.visit_ambiguous(o));
}

/// `(lo, hi)` aligned inward to words, minus every excluded range.
fn subtract((lo, hi): Range, excluded: &[Range]) -> Vec<Range> {
    let w = std::mem::size_of::<usize>();
    let mut out = vec![((lo + w - 1) & !(w - 1), hi & !(w - 1))];
    for &(xa, xb) in excluded {
        out = out
            .into_iter()
            .flat_map(|(a, b)| {
                if xb <= a || xa >= b {
                    vec![(a, b)]
                } else {
                    let mut v = Vec::new();
                    if xa > a {
                        v.push((a, xa & !(w - 1)));
                    }
                    if xb < b {
                        v.push(((xb + w - 1) & !(w - 1), b));
                    }
                    v
                }
            })
            .filter(|(a, b)| a < b)
            .collect();
    }
    out
}

struct Walk {
    own: usize,
    no_dls: bool,
    cb: StaticRootsCallback,
    out: Vec<Range>,
}

unsafe extern "C" fn each_object(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: the loader passes a valid info for the call; `data` is our Walk.
    let (info, walk) = unsafe { (&*info, &mut *data.cast::<Walk>()) };
    let base = info.dlpi_addr as usize;
    // SAFETY: dlpi_phdr has dlpi_phnum entries.
    let phdrs = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
    let is_main = info.dlpi_name.is_null() || unsafe { *info.dlpi_name } == 0;
    if walk.no_dls && !is_main {
        return 0;
    }
    let own = phdrs.iter().any(|p| {
        p.p_type == libc::PT_LOAD && {
            let a = base + p.p_vaddr as usize;
            (a..a + p.p_memsz as usize).contains(&walk.own)
        }
    });
    if own {
        return 0;
    }
    let relro: Vec<Range> = phdrs
        .iter()
        .filter(|p| p.p_type == libc::PT_GNU_RELRO)
        .map(|p| {
            let a = base + p.p_vaddr as usize;
            (a, a + p.p_memsz as usize)
        })
        .collect();
    for p in phdrs {
        if p.p_type != libc::PT_LOAD || p.p_flags & libc::PF_W == 0 {
            continue;
        }
        let a = base + p.p_vaddr as usize;
        let seg = (a, a + p.p_memsz as usize);
        for r in subtract(seg, &relro) {
            if let Some(cb) = walk.cb {
                // SAFETY: the program's callback, with bdwgc's arguments.
                if unsafe { cb(info.dlpi_name, r.0 as *mut c_void, r.1 - r.0) } == 0 {
                    continue;
                }
            }
            walk.out.push(r);
        }
    }
    0
}

/// Lists the loaded objects' writable segments again.
pub fn refresh() {
    let mut walk = Walk {
        own: std::ptr::addr_of!(MARKER) as usize,
        no_dls: crate::data::no_dls(),
        cb: *HAS_STATIC_ROOTS.lock(),
        out: Vec::new(),
    };
    // SAFETY: the callback only reads what the loader passes it.
    unsafe { libc::dl_iterate_phdr(Some(each_object), (&mut walk as *mut Walk).cast()) };
    *SEGMENTS.lock() = walk.out;
}

/// Whether an uncollectable object was ever allocated (`GC_free` skips
/// the set's lock until then).
static ANY_UNCOLLECTABLE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn add_uncollectable(o: usize) {
    let mut set = UNCOLLECTABLE.lock();
    set.get_or_insert_with(Default::default).insert(o);
    ANY_UNCOLLECTABLE.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Keeps a starting thread's argument alive until [`started`].
pub fn starting(arg: usize) {
    STARTING.lock().push(arg);
}

/// The thread given `arg` has registered: its own stack holds it now.
pub fn started(arg: usize) {
    let mut v = STARTING.lock();
    if let Some(i) = v.iter().position(|&a| a == arg) {
        v.swap_remove(i);
    }
}

/// Whether any uncollectable object was ever allocated (then
/// `remove_uncollectable` has a set to look in).
#[inline]
pub fn any_uncollectable() -> bool {
    ANY_UNCOLLECTABLE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether `o` was uncollectable (and is not any more).
pub fn remove_uncollectable(o: usize) -> bool {
    // (Relaxed: an object's uncollectable allocation happens before its
    // free in the program's own order.)
    ANY_UNCOLLECTABLE.load(std::sync::atomic::Ordering::Relaxed)
        && UNCOLLECTABLE.lock().as_mut().is_some_and(|s| s.remove(&o))
}

pub fn is_uncollectable(o: usize) -> bool {
    UNCOLLECTABLE
        .lock()
        .as_ref()
        .is_some_and(|s| s.contains(&o))
}

#[no_mangle]
pub extern "C" fn GC_add_roots(low: *mut c_void, high_plus_1: *mut c_void) {
    crate::heap::heap();
    let (a, b) = (low as usize, high_plus_1 as usize);
    if a < b {
        guarded(|| ADDED.lock().push((a, b)));
    }
}

#[no_mangle]
pub extern "C" fn GC_remove_roots(low: *mut c_void, high_plus_1: *mut c_void) {
    let (a, b) = (low as usize, high_plus_1 as usize);
    change_added_outside_pauses(|| {
        let mut added = ADDED.lock();
        let rest: Vec<Range> = added.iter().flat_map(|&r| subtract(r, &[(a, b)])).collect();
        *added = rest;
    });
}

#[no_mangle]
pub extern "C" fn GC_clear_roots() {
    change_added_outside_pauses(|| ADDED.lock().clear());
}

/// The collecting thread of the pause in progress (`pthread_self`; 0 when
/// none), set by the stop hook and cleared by the resume hook.
static COLLECTOR: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The stop hook's note that the calling thread collects (see
/// [`change_added_outside_pauses`]).
pub fn collecting(on: bool) {
    // SAFETY: pthread_self has no preconditions.
    let me = if on {
        (unsafe { libc::pthread_self() }) as usize
    } else {
        0
    };
    COLLECTOR.store(me, std::sync::atomic::Ordering::SeqCst);
}

/// Runs `f` (a removal from `ADDED`) when no pause is marking: a pause
/// queues the added ranges for its markers (`scan`), and the program may
/// free a range as soon as it has removed it (bdwgc's `GC_remove_roots`
/// takes the allocation lock, which a collection holds throughout). A
/// thread of the pause itself (its collector in a callback, a marker in a
/// mark procedure) does not wait, which would never end.
fn change_added_outside_pauses(f: impl Fn()) {
    let pause_on = || crate::heap::heap_if_created().is_some_and(|h| h.stop_sequence() & 1 == 1);
    // SAFETY: pthread_self has no preconditions.
    let me = unsafe { libc::pthread_self() } as usize;
    let ours =
        || crate::mark::marking() || COLLECTOR.load(std::sync::atomic::Ordering::SeqCst) == me;
    loop {
        // Outside `guarded`: a registered thread parks here when signalled.
        while pause_on() && !ours() {
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
        // (A pause that starts now reads `ADDED` under its lock, before or
        // after `f`; one that started since the look above is seen here.)
        let done = guarded(|| {
            if pause_on() && !ours() {
                return false;
            }
            f();
            true
        });
        if done {
            return;
        }
    }
}

#[no_mangle]
pub extern "C" fn GC_exclude_static_roots(start: *mut c_void, finish: *mut c_void) {
    let (a, b) = (start as usize, finish as usize);
    if a < b {
        guarded(|| EXCLUDED.lock().push((a, b)));
    }
}

#[no_mangle]
pub extern "C" fn GC_clear_exclusion_table() {
    guarded(|| EXCLUDED.lock().clear());
}

#[no_mangle]
pub extern "C" fn GC_register_has_static_roots_callback(cb: StaticRootsCallback) {
    guarded(|| *HAS_STATIC_ROOTS.lock() = cb);
}

#[no_mangle]
pub extern "C" fn GC_is_tmp_root(_p: *mut c_void) -> c_int {
    0
}

#[cfg(test)]
mod tests {
    use super::subtract;

    #[test]
    fn subtracting_ranges_leaves_the_aligned_rest() {
        assert_eq!(subtract((0, 64), &[(16, 32)]), vec![(0, 16), (32, 64)]);
        assert_eq!(subtract((0, 64), &[(0, 64)]), vec![]);
        assert_eq!(subtract((3, 61), &[]), vec![(8, 56)]);
        assert_eq!(subtract((0, 64), &[(60, 100), (0, 9)]), vec![(16, 56)]);
    }
}
