//! Finalizers and disappearing links with bdwgc's semantics.
//!
//! A finalizer is a Mosaic finalizer (`register_finalizer_fn`, ordered for
//! `GC_register_finalizer` and `_ignore_self`, unordered for `_no_order`
//! and `_unreachable`) whose tag is the C function and whose data is the
//! client data: registering asks the core what the object had
//! (`finalizer_fn_of`) to return the previous pair, as bdwgc does, and
//! the client data are roots (`Heap::visit_finalizer_data`; bdwgc keeps
//! them in scanned memory). No table of ours but `INTERIOR`, for the rare
//! registration through an interior pointer. By default finalizers run at the end of
//! allocation calls, outside any pause; with `GC_finalize_on_demand` only
//! from `GC_invoke_finalizers`, and the notifier says when some wait.

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use mosaic::{FinalizerOrder, ObjRef, Tracer, WeakKind};
use parking_lot::Mutex;
use rustc_hash::FxHashMap;

use crate::heap::GcMutator;
use crate::threads::{client_code, with_mutator};

pub type FinalizerProc = Option<unsafe extern "C" fn(*mut c_void, *mut c_void)>;

/// Object → (function, client data, pointer given) of its current
/// registration, for registrations through an interior pointer only
/// (bdwgc accepts any address in the object, and ECL registers tagged
/// cons pointers): the finalizer gets that pointer back.
#[allow(clippy::type_complexity)]
static INTERIOR: Mutex<Option<FxHashMap<usize, (usize, usize, usize)>>> = Mutex::new(None);
/// Whether `INTERIOR` was ever used (the finalizer's trampoline skips its
/// lock until then).
static ANY_INTERIOR: AtomicBool = AtomicBool::new(false);
/// A collection queued finalizers that have not run yet.
static QUEUED: AtomicBool = AtomicBool::new(false);
/// A collection queued finalizers and the notifier was not called since.
static NOTIFY: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread is running finalizers (they may allocate: no nesting).
    static RUNNING: Cell<bool> = const { Cell::new(false) };
}

/// Visits every registration's client data as an ambiguous root.
pub fn scan_client_data<T: Tracer>(t: &mut T) {
    crate::heap::heap().visit_finalizer_data(|cd| t.visit_ambiguous(cd));
}

/// Installed on the heap at creation: a collection queued finalizers.
/// Called inside the collecting allocation, so it only takes note: the
/// program's code runs at the end of the call (`after_allocation`).
pub fn notified() {
    QUEUED.store(true, Relaxed);
    NOTIFY.store(true, Relaxed);
}

/// Whether [`after_allocation`] has something to do (the fast allocation
/// path asks this first): the same test, so that a program finalizing on
/// demand, with finalizers queued until it asks, keeps the fast path.
#[inline(always)]
pub fn attention() -> bool {
    NOTIFY.load(Relaxed) || QUEUED.load(Relaxed) && !crate::data::finalize_on_demand()
}

/// At the end of an allocation (or collection) call, outside every lock,
/// as bdwgc's `GC_notify_or_invoke_finalizers`: runs what a collection
/// queued, or with `GC_finalize_on_demand` calls the program's notifier
/// (once per collection that queued some; it may allocate).
#[inline]
pub fn after_allocation() {
    if NOTIFY.load(Relaxed) || QUEUED.load(Relaxed) && !crate::data::finalize_on_demand() {
        notify_or_run();
    }
}

#[cold]
fn notify_or_run() {
    if !crate::data::finalize_on_demand() {
        NOTIFY.store(false, Relaxed);
        run_pending();
    } else if NOTIFY.swap(false, Relaxed) && crate::heap::heap().pending_finalizers() > 0 {
        // (None left: the program ran them already.)
        if let Some(f) = crate::data::finalizer_notifier() {
            // SAFETY: the program's notifier, called as bdwgc calls it.
            client_code(|| unsafe { f() });
        }
    }
}

/// Runs the queued finalizers on this thread; how many ran.
#[cold]
pub fn run_pending() -> usize {
    if RUNNING.with(|r| r.replace(true)) {
        return 0;
    }
    QUEUED.store(false, Relaxed);
    let n = with_mutator(|m| m.run_finalizers().unwrap_or(0));
    RUNNING.with(|r| r.set(false));
    n
}

/// Mosaic's side of a finalizer: forgets the registration, then calls the
/// program's function (as program code: a signal may stop it there).
fn trampoline(m: &mut GcMutator, obj: ObjRef, f: usize, cd: usize) {
    let mut p = obj.addr();
    if ANY_INTERIOR.load(Relaxed) {
        let mut reg = INTERIOR.lock();
        if let Some(map) = reg.as_mut() {
            if let Some(&(rf, rcd, ptr)) = map.get(&p) {
                if (rf, rcd) == (f, cd) {
                    map.remove(&p);
                    p = ptr;
                }
            }
        }
    }
    // SAFETY: `f` is the non-null C function registered with this pair.
    let f: unsafe extern "C" fn(*mut c_void, *mut c_void) = unsafe { std::mem::transmute(f) };
    // SAFETY: bdwgc's call: the pointer registered (the object's start, or
    // the interior pointer the program gave) and the client data. Calls it
    // makes into this library use `m` (`lend`).
    crate::threads::lend(m, || {
        client_code(|| unsafe { f(p as *mut c_void, cd as *mut c_void) })
    });
}

/// Registers `f` for `obj` (removing it when `f` is null) and returns the
/// previous registration.
fn register(
    obj: *mut c_void,
    f: FinalizerProc,
    cd: *mut c_void,
    order: FinalizerOrder,
) -> (FinalizerProc, *mut c_void) {
    let none = (None, std::ptr::null_mut());
    let Some(o) = crate::alloc::base_of(obj) else {
        return none;
    };
    with_mutator(|m| {
        // Only this library registers functions on its heap, all through
        // the trampoline, with the C function as the tag.
        let old = m.finalizer_fn_of(o).map(|(_, f, cd)| (f, cd));
        if old.is_some() {
            m.unregister_finalizer(o);
        }
        // A registration through an interior pointer made earlier for
        // this address (this object's, or a freed one's) is gone now.
        if ANY_INTERIOR.load(Relaxed) {
            let mut reg = INTERIOR.lock();
            if let Some(map) = reg.as_mut() {
                map.remove(&o.addr());
            }
        }
        if let Some(f) = f {
            if m.register_finalizer_fn(o, order, trampoline, f as usize, cd as usize)
                .is_ok()
                && obj as usize != o.addr()
            {
                INTERIOR
                    .lock()
                    .get_or_insert_with(Default::default)
                    .insert(o.addr(), (f as usize, cd as usize, obj as usize));
                ANY_INTERIOR.store(true, Relaxed);
            }
        }
        match old {
            // SAFETY: a function pointer stored from a registration.
            Some((f, cd)) => (
                Some(unsafe {
                    std::mem::transmute::<usize, unsafe extern "C" fn(*mut c_void, *mut c_void)>(f)
                }),
                cd as *mut c_void,
            ),
            None => none,
        }
    })
}

fn register_out(
    obj: *mut c_void,
    f: FinalizerProc,
    cd: *mut c_void,
    ofn: *mut FinalizerProc,
    ocd: *mut *mut c_void,
    order: FinalizerOrder,
) {
    let (of, od) = register(obj, f, cd, order);
    // SAFETY: the caller's optional out pointers.
    unsafe {
        if !ofn.is_null() {
            *ofn = of;
        }
        if !ocd.is_null() {
            *ocd = od;
        }
    }
}

/// bdwgc's four registration calls, each with its debugging form (a
/// 0-byte debug header: the same call): ordered (`_ignore_self` too:
/// Mosaic's ordered finalization already skips self-references) or
/// unordered.
macro_rules! register_calls {
    ($($name:ident, $debug:ident => $order:expr),*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            obj: *mut c_void,
            f: FinalizerProc,
            cd: *mut c_void,
            ofn: *mut FinalizerProc,
            ocd: *mut *mut c_void,
        ) {
            register_out(obj, f, cd, ofn, ocd, $order);
        }

        #[no_mangle]
        pub unsafe extern "C" fn $debug(
            obj: *mut c_void,
            f: FinalizerProc,
            cd: *mut c_void,
            ofn: *mut FinalizerProc,
            ocd: *mut *mut c_void,
        ) {
            // SAFETY: the same contract as the plain form's.
            unsafe { $name(obj, f, cd, ofn, ocd) }
        }
    )*};
}

register_calls!(
    GC_register_finalizer, GC_debug_register_finalizer => FinalizerOrder::Ordered,
    GC_register_finalizer_ignore_self, GC_debug_register_finalizer_ignore_self
        => FinalizerOrder::Ordered,
    GC_register_finalizer_no_order, GC_debug_register_finalizer_no_order
        => FinalizerOrder::Unordered,
    GC_register_finalizer_unreachable, GC_debug_register_finalizer_unreachable
        => FinalizerOrder::Unordered
);

#[no_mangle]
pub extern "C" fn GC_invoke_finalizers() -> c_int {
    run_pending() as c_int
}

#[no_mangle]
pub extern "C" fn GC_should_invoke_finalizers() -> c_int {
    c_int::from(crate::heap::heap().pending_finalizers() > 0)
}

#[no_mangle]
pub extern "C" fn GC_finalize_all() {
    // Runs what is queued; bdwgc's also queues every registered object
    // (used only at shutdown by some runtimes).
    run_pending();
}

// ---- disappearing links ----

const GC_SUCCESS: c_int = 0;
const GC_DUPLICATE: c_int = 1;
const GC_NO_MEMORY: c_int = 2;
const GC_NOT_FOUND: c_int = 4;

fn register_link(link: *mut *mut c_void, obj: *const c_void, kind: WeakKind) -> c_int {
    if link.is_null() || (link as usize) % std::mem::size_of::<usize>() != 0 {
        crate::control::abort_with(
            "mosaic-gc: bad link given to GC_general_register_disappearing_link",
        );
    }
    let Some(o) = crate::alloc::base_of(obj) else {
        // Not a heap object: it never dies, the link is never cleared.
        return GC_SUCCESS;
    };
    // SAFETY: the program promises `link` stays writable while registered.
    match with_mutator(|m| unsafe { m.register_disappearing_link(link.cast(), o, kind) }) {
        Ok(()) => GC_SUCCESS,
        Err(mosaic::Error::AlreadyRegistered { .. }) => GC_DUPLICATE,
        Err(_) => GC_NO_MEMORY,
    }
}

#[no_mangle]
pub extern "C" fn GC_general_register_disappearing_link(
    link: *mut *mut c_void,
    obj: *const c_void,
) -> c_int {
    register_link(link, obj, WeakKind::Short)
}

#[no_mangle]
pub extern "C" fn GC_register_disappearing_link(link: *mut *mut c_void) -> c_int {
    // The link is cleared when the object holding it dies.
    let base = crate::alloc::base_of(link.cast())
        .map_or(std::ptr::null(), |o| o.as_ptr().cast_const().cast());
    register_link(link, base, WeakKind::Short)
}

#[no_mangle]
pub extern "C" fn GC_register_long_link(link: *mut *mut c_void, obj: *const c_void) -> c_int {
    register_link(link, obj, WeakKind::Long)
}

fn unregister_link(link: *mut *mut c_void) -> c_int {
    if link.is_null() {
        return 0;
    }
    c_int::from(with_mutator(|m| m.unregister_weak_slot(link.cast())))
}

#[no_mangle]
pub extern "C" fn GC_unregister_disappearing_link(link: *mut *mut c_void) -> c_int {
    unregister_link(link)
}

#[no_mangle]
pub extern "C" fn GC_unregister_long_link(link: *mut *mut c_void) -> c_int {
    unregister_link(link)
}

fn move_link(link: *mut *mut c_void, new_link: *mut *mut c_void) -> c_int {
    if new_link.is_null() || (new_link as usize) % std::mem::size_of::<usize>() != 0 {
        crate::control::abort_with("mosaic-gc: bad new_link given to GC_move_disappearing_link");
    }
    match with_mutator(|m| m.move_weak_slot(link.cast(), new_link.cast())) {
        Ok(true) => GC_SUCCESS,
        Ok(false) => GC_NOT_FOUND,
        Err(_) => GC_DUPLICATE,
    }
}

#[no_mangle]
pub extern "C" fn GC_move_disappearing_link(
    link: *mut *mut c_void,
    new_link: *mut *mut c_void,
) -> c_int {
    move_link(link, new_link)
}

#[no_mangle]
pub extern "C" fn GC_move_long_link(link: *mut *mut c_void, new_link: *mut *mut c_void) -> c_int {
    move_link(link, new_link)
}
