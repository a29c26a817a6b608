//! Objects for allocations made inside a pause, by the program's
//! push-other-roots procedure (`GC_push_other_roots`).
//!
//! bdwgc calls that procedure while the world is stopped, and a
//! `GC_malloc` made there succeeds from the thread's own free list (bdwgc
//! 8.2.2 then frees the last such object in the same collection:
//! `tests/c/fibers.c`). Programs rely on it:
//! Crystal's procedure walks its fiber list, which it creates on first use
//! with `GC_malloc`, and the first walk is inside the first collection.
//! Mosaic's mutators hold nothing during a pause (their runs are given
//! back when it starts), so this library keeps a small reserve instead:
//! `PER` normal (zeroed) and `PER` atomic objects of `SIZE` bytes, which
//! serve any request up to that size, allocated outside any pause and only
//! while the program has a push-other-roots procedure. One size, so that
//! the reserve takes room in one size class of each kind (a page each at
//! most), not in every class a request could need.
//!
//! Invariants:
//! - every object in the reserve, and every object handed out during a
//!   pause that has not ended (each taken object carries the number of
//!   pauses ended when it was taken, [`ENDED`]), is visited as a root by
//!   [`scan`], after the program's procedure returns: what the procedure
//!   stored into an object it was given is traced in the same collection,
//!   whatever other threads (unregistered ones, blocking ones) do meanwhile;
//! - only the push-other-roots procedure is served: a mark procedure's
//!   allocation (bdwgc forbids it) gets null;
//! - a thread filling the reserve starts no collection (a thread-local
//!   flag read by the collection gate, `heap::collections_allowed`), so a
//!   collection never begins with the reserve half filled by its own
//!   thread; other threads collect as usual;
//! - nothing here allocates memory from the C library during a pause (the
//!   program's threads may be stopped holding its locks): fixed arrays;
//! - the lock is taken with signals deferred, or by the pause itself.

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};

use parking_lot::Mutex;

use crate::alloc::Kind;

/// The size of every reserved object: requests up to this size are served
/// (with bdwgc's extra byte, a 256-byte slot).
const SIZE: usize = 240;
/// Objects kept of each kind.
const PER: usize = 8;
/// The most objects handed out between two refills.
const MOST: usize = 2 * PER;

struct Reserve {
    /// `[atomic as usize]`: up to `PER` objects each.
    free: [[usize; PER]; 2],
    count: [usize; 2],
    /// Handed out, each with the value of [`ENDED`] when taken; dropped by
    /// a [`refill`] once that pause has ended.
    taken: [(usize, u64); MOST],
    taken_count: usize,
}

static RESERVE: Mutex<Reserve> = Mutex::new(Reserve {
    free: [[0; PER]; 2],
    count: [0; 2],
    taken: [(0, 0); MOST],
    taken_count: 0,
});

/// Collections ended (counted at their end event, inside the pause, after
/// marking).
static ENDED: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// This thread is filling the reserve: it starts no collection.
    static FILLING: Cell<bool> = const { Cell::new(false) };
}

/// Called when a collection ends (its end event, in the pause).
pub fn collection_ended() {
    ENDED.fetch_add(1, Relaxed);
}

/// Whether this thread is filling the reserve (then the collection gate
/// lets it start no collection).
pub fn filling_here() -> bool {
    FILLING.with(Cell::get)
}

/// Every list is full (set by [`refill`], cleared by [`take`]).
static FULL: AtomicBool = AtomicBool::new(false);
/// The size of the last in-pause request the reserve could not serve (0:
/// none since the last warning); warned about outside the pause.
static REFUSED: AtomicUsize = AtomicUsize::new(0);

/// Called from allocation slow paths outside a pause: fills the reserve if
/// the program has a push-other-roots procedure and the reserve is short.
#[inline]
pub fn refill_if_needed() {
    if !FULL.load(Relaxed) && crate::data::program_push_other_roots().is_some() {
        refill();
    }
}

#[cold]
#[inline(never)]
fn refill() {
    let n = REFUSED.swap(0, Relaxed);
    if n != 0 {
        crate::control::warn(&format!(
            "GC Warning: an allocation of {n} bytes inside a collection (from the \
             push-other-roots procedure) returned NULL: only normal and atomic objects \
             up to {SIZE} bytes are served there, {PER} of each between two allocations \
             outside it\n"
        ));
    }
    // No collection from this thread while it fills: one started by these
    // allocations would find the reserve empty when the program's
    // procedure allocates (the collection this thread is due for comes at
    // its next allocation, with the reserve full).
    struct Filling;
    impl Drop for Filling {
        fn drop(&mut self) {
            FILLING.with(|f| f.set(false));
        }
    }
    FILLING.with(|f| f.set(true));
    let _filling = Filling;
    // Objects taken by a pause that has ended were marked by it; from now
    // on they are the program's like any other.
    crate::threads::guarded(|| {
        let ended = ENDED.load(Relaxed);
        let r = &mut *RESERVE.lock();
        let mut kept = 0;
        for i in 0..r.taken_count {
            if r.taken[i].1 >= ended {
                r.taken[kept] = r.taken[i];
                kept += 1;
            }
        }
        r.taken_count = kept;
    });
    for (atomic, kind) in [(0, Kind::Normal), (1, Kind::Atomic)] {
        let missing = crate::threads::guarded(|| PER - RESERVE.lock().count[atomic]);
        for _ in 0..missing {
            // Allocated with no lock held: another thread may collect
            // meanwhile (or a full heap), and its pause scans the reserve.
            let Some(o) = crate::alloc::alloc_object(SIZE, kind) else {
                // Out of memory: tried again at a later allocation.
                return;
            };
            crate::threads::guarded(|| {
                let mut r = RESERVE.lock();
                let c = r.count[atomic];
                // Full already (another thread filled it meanwhile): `o`
                // is garbage for the next collection.
                if c < PER {
                    r.free[atomic][c] = o;
                    r.count[atomic] = c + 1;
                }
            });
        }
    }
    // Under the lock, as `take` clears it: set only if full now.
    crate::threads::guarded(|| {
        let r = RESERVE.lock();
        if r.count == [PER; 2] {
            FULL.store(true, Relaxed);
        }
    });
}

/// An object of at least `n` bytes for an allocation made while this
/// thread marks for a collection (null if the reserve has none): zeroed for
/// a normal object, as `GC_malloc` promises.
pub fn take(n: usize, atomic: bool) -> *mut c_void {
    if n > SIZE {
        REFUSED.store(n, Relaxed);
        // The next slow path outside the pause warns (from `refill`).
        FULL.store(false, Relaxed);
        return std::ptr::null_mut();
    }
    let mut r = RESERVE.lock();
    let c = r.count[atomic as usize];
    if c == 0 || r.taken_count == MOST {
        REFUSED.store(n.max(1), Relaxed);
        return std::ptr::null_mut();
    }
    let o = r.free[atomic as usize][c - 1];
    r.count[atomic as usize] = c - 1;
    let t = r.taken_count;
    r.taken[t] = (o, ENDED.load(Relaxed));
    r.taken_count = t + 1;
    FULL.store(false, Relaxed);
    o as *mut c_void
}

/// Visits the reserve and what pauses that have not ended took from it
/// (see the module's invariants); called at the end of the root scan.
pub fn scan(visit: &mut impl FnMut(usize)) {
    let r = RESERVE.lock();
    for atomic in 0..2 {
        for &o in &r.free[atomic][..r.count[atomic]] {
            visit(o);
        }
    }
    for &(o, _) in &r.taken[..r.taken_count] {
        visit(o);
    }
}
