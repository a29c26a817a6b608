//! Counted pins: objects the embedder asked not to move.
//!
//! An object is pinned when it was allocated `PINNED` (its pin bit is set
//! for life), when the embedder pinned it with `Mutator::pin` (counted
//! here, so nested pins work), or when an ambiguous word pointed into it
//! during the current collection (`Marker::pins`). Compaction reads only the
//! pin bitmap: at its start it sets the bits of counted and ambiguous pins
//! that are not set already, and clears exactly those at its end
//! ([`Pins::materialise`] / [`Materialised::clear`]), so the bit of a
//! `PINNED` allocation is never touched.
//!
//! Invariant: the map holds only live objects; a pause drops the entries
//! of objects it found dead ([`Pins::finish`]). Pinning does not keep an
//! object alive.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use parking_lot::Mutex;
use rustc_hash::FxHashMap;

use crate::space::{Located, MarkState, PageTable};

/// The counted pins of a heap: object address → count.
#[derive(Default)]
pub struct Pins {
    counted: Mutex<FxHashMap<usize, u32>>,
    /// Objects in `counted`, written under its lock: [`Pins::is_pinned`]
    /// (asked by every explicit free) takes no lock while it is zero.
    len: AtomicUsize,
}

impl Pins {
    /// Pins `obj` once more.
    pub fn pin(&self, obj: usize) {
        let mut m = self.counted.lock();
        *m.entry(obj).or_insert(0) += 1;
        self.len.store(m.len(), Relaxed);
    }

    /// Removes one pin of `obj`; `false` if it had none.
    pub fn unpin(&self, obj: usize) -> bool {
        let mut m = self.counted.lock();
        match m.get_mut(&obj) {
            None => false,
            Some(1) => {
                m.remove(&obj);
                self.len.store(m.len(), Relaxed);
                true
            }
            Some(n) => {
                *n -= 1;
                true
            }
        }
    }

    /// Whether `obj` has a counted pin.
    pub fn is_pinned(&self, obj: usize) -> bool {
        self.len.load(Relaxed) != 0 && self.counted.lock().contains_key(&obj)
    }

    /// Objects with a counted pin.
    pub fn len(&self) -> usize {
        self.counted.lock().len()
    }

    /// Pause, after marking: forgets the pins of objects found dead.
    pub fn finish(&self, table: &PageTable) {
        let mut m = self.counted.lock();
        if !m.is_empty() {
            m.retain(|&o, _| matches!(table.mark_state(o), MarkState::Marked(_)));
            self.len.store(m.len(), Relaxed);
        }
    }

    /// Pause, before compacting: sets the pin bit of every counted pin and
    /// of every object in `ambiguous` (small objects only: large objects
    /// never move), remembering which bits were clear before.
    pub fn materialise(&self, table: &PageTable, ambiguous: &[usize]) -> Materialised {
        let mut set = Vec::new();
        let counted = self.counted.lock();
        for &o in counted.keys().chain(ambiguous) {
            if let Located::Small { page, slot, .. } = table.locate(o) {
                let d = table.desc(page);
                if d.mark.get(slot) && !d.pin.get(slot) {
                    d.pin.set(slot);
                    set.push((page, slot));
                }
            }
        }
        Materialised { set }
    }
}

/// Pin bits set for one compaction only.
pub struct Materialised {
    set: Vec<(usize, usize)>,
}

impl Materialised {
    /// Clears the bits [`Pins::materialise`] set.
    pub fn clear(self, table: &PageTable) {
        for (page, slot) in self.set {
            table.desc(page).pin.clear(slot);
        }
    }
}
