//! Ephemerons: key/value pairs whose value is alive only while the key is
//! reachable by other paths (JavaScript's `WeakMap`, Guile's and Racket's
//! weak tables).
//!
//! An ephemeron is a 16-byte heap object, `[key, value]`, allocated by
//! `Mutator::alloc_ephemeron` with `NO_POINTERS` so that the marker never
//! traces it like an ordinary object. The heap keeps the set of ephemeron
//! addresses (this file). After the strong closure, a collection's
//! ephemeron pass (`ephemeron_pass.rs`) finds the fixed point: a value is
//! traced only once its key is marked; at the end, an ephemeron whose key
//! stayed unmarked has its key and value cleared (null), as has the value
//! of an ephemeron with no key (a null key counts as dead), and a dead
//! ephemeron leaves the set.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use parking_lot::Mutex;
use rustc_hash::FxHashSet;

use crate::space::{MarkState, PageTable};

/// Bytes of an ephemeron object: the key word, then the value word.
pub const EPHEMERON_SIZE: usize = 16;

/// The heap's ephemerons.
#[derive(Default)]
pub struct Ephemerons {
    set: Mutex<FxHashSet<usize>>,
    count: AtomicUsize,
}

/// The key word of the ephemeron at `e`.
pub(super) fn key_word<'a>(e: usize) -> &'a AtomicUsize {
    // SAFETY: callers pass a live (allocated) ephemeron: 16 bytes, aligned
    // to 16; its words are only accessed atomically (through these two
    // functions) by Mosaic.
    unsafe { &*(e as *const AtomicUsize) }
}

/// The value word of the ephemeron at `e`.
pub(super) fn value_word<'a>(e: usize) -> &'a AtomicUsize {
    // SAFETY: as in `key_word`.
    unsafe { &*((e + 8) as *const AtomicUsize) }
}

impl Ephemerons {
    /// Records a new ephemeron object.
    pub fn add(&self, e: usize) {
        self.set.lock().insert(e);
        self.count.fetch_add(1, Relaxed);
    }

    /// Whether `e` is a (not yet reclaimed) ephemeron object.
    pub fn contains(&self, e: usize) -> bool {
        self.any() && self.set.lock().contains(&e)
    }

    pub fn any(&self) -> bool {
        self.count.load(Relaxed) != 0
    }

    pub fn len(&self) -> usize {
        self.count.load(Relaxed)
    }

    /// Compaction: the set follows moved ephemerons, and a key or value
    /// holding a moved object's old address (`fwd` maps it) gets the new one.
    pub fn update_moved(&self, fwd: &impl Fn(usize) -> Option<usize>) {
        if !self.any() {
            return;
        }
        let mut set = self.set.lock();
        let old = std::mem::take(&mut *set);
        for e in old {
            let e = fwd(e).unwrap_or(e);
            for w in [key_word(e), value_word(e)] {
                if let Some(n) = fwd(w.load(Relaxed)) {
                    w.store(n, Relaxed);
                }
            }
            set.insert(e);
        }
    }

    /// A copy of the set, for a collection's pass (which holds no lock
    /// while `trace` runs).
    pub(super) fn snapshot(&self) -> FxHashSet<usize> {
        self.set.lock().clone()
    }

    /// Pause, after all marking: forgets the ephemerons that died.
    pub(super) fn forget_dead(&self, table: &PageTable) {
        let mut set = self.set.lock();
        set.retain(|&e| matches!(table.mark_state(e), MarkState::Marked(_)));
        self.count.store(set.len(), Relaxed);
    }
}

/// Reads an ephemeron's key and value. Callers checked that `e` is a live
/// ephemeron; the collector clears them only while the world is stopped.
pub fn read(e: usize) -> (usize, usize) {
    (key_word(e).load(Relaxed), value_word(e).load(Relaxed))
}

/// Writes an ephemeron's key and value (an attached mutator; callers
/// checked that `e` is a live ephemeron).
pub fn write(e: usize, key: usize, value: usize) {
    key_word(e).store(key, Relaxed);
    value_word(e).store(value, Relaxed);
}
