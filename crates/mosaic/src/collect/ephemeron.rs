//! Ephemerons: key/value pairs whose value is alive only while the key is
//! reachable by other paths (JavaScript's `WeakMap`, Guile's and Racket's
//! weak tables).
//!
//! An ephemeron is a 16-byte heap object, `[key, value]`, allocated by
//! `Mutator::alloc_ephemeron` with `NO_POINTERS` so that the marker never
//! traces it like an ordinary object. The heap keeps the set of ephemeron
//! addresses. After the strong closure, the pass below visits each marked
//! ephemeron: a marked (or out-of-heap) key makes its value traced; an
//! unmarked key parks the ephemeron in a table indexed by the key. From then
//! on the marker *watches* what it newly marks (`Marker<true>`): a newly
//! marked key releases the values parked on it, and a newly marked
//! ephemeron is visited as above. Every ephemeron and every object is thus
//! handled a bounded number of times: the fixed point costs time linear in
//! the ephemerons plus the objects marked, whatever order a chain of
//! ephemerons comes in.
//!
//! At the end of the collection, an ephemeron whose key stayed unmarked has
//! its key and value cleared (null), as has the value of an ephemeron with
//! no key (a null key counts as dead), and a dead ephemeron leaves the set.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use parking_lot::{Mutex, MutexGuard};
use rustc_hash::{FxHashMap, FxHashSet};

use super::mark::Marker;
use crate::space::{MarkState, PageTable};

/// Bytes of an ephemeron object: the key word, then the value word.
pub const EPHEMERON_SIZE: usize = 16;

/// The heap's ephemerons.
#[derive(Default)]
pub struct Ephemerons {
    set: Mutex<FxHashSet<usize>>,
    count: AtomicUsize,
}

/// The ephemeron fixed point of one collection.
pub struct EphemeronPass<'a> {
    set: MutexGuard<'a, FxHashSet<usize>>,
    /// Unmarked key → ephemerons (marked) waiting for it.
    waiting: FxHashMap<usize, Vec<usize>>,
    /// Marked ephemerons with no key: their value is cleared at the end.
    keyless: Vec<usize>,
}

fn key_word(e: usize) -> *mut *mut u8 {
    e as *mut *mut u8
}

fn value_word(e: usize) -> *mut *mut u8 {
    (e + 8) as *mut *mut u8
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

    /// Pause, after the strong closure: starts the fixed point by visiting
    /// every marked ephemeron. The caller then drains with
    /// [`EphemeronPass::drain`].
    pub fn begin<'a, const W: bool>(
        &'a self,
        table: &PageTable,
        marker: &mut Marker<'_, W>,
    ) -> EphemeronPass<'a> {
        let mut pass = EphemeronPass {
            set: self.set.lock(),
            waiting: FxHashMap::default(),
            keyless: Vec::new(),
        };
        let marked: Vec<usize> = pass
            .set
            .iter()
            .copied()
            .filter(|&e| matches!(table.mark_state(e), MarkState::Marked(_)))
            .collect();
        for e in marked {
            pass.visit_ephemeron(table, e, marker);
        }
        pass
    }
}

impl EphemeronPass<'_> {
    /// A marked ephemeron: trace its value now if its key is alive, else
    /// wait for the key.
    fn visit_ephemeron<const W: bool>(
        &mut self,
        table: &PageTable,
        e: usize,
        marker: &mut Marker<'_, W>,
    ) {
        // SAFETY: `e` is an allocated ephemeron object of 16 bytes; the
        // world is stopped.
        let key = unsafe { key_word(e).read() } as usize;
        match table.mark_state(key) {
            // No key is a dead key: the value is not kept, and is cleared
            // at the end so that it never dangles.
            _ if key == 0 => self.keyless.push(e),
            MarkState::Outside | MarkState::Marked(_) => trace_value(e, marker),
            MarkState::Unmarked(k) => self.waiting.entry(k).or_default().push(e),
            // A key that is no object (freed and reused memory cannot be: the
            // key was checked when set): nothing to keep.
            MarkState::NotObject => {}
        }
    }

    /// Drains the marker to the ephemeron fixed point: every object newly
    /// marked is checked for being a waited-for key or an ephemeron.
    pub fn drain<E: crate::Embedder>(
        &mut self,
        table: &PageTable,
        marker: &mut Marker<'_, true>,
        embedder: &E,
    ) {
        let mut batch = Vec::new();
        loop {
            marker.drain(embedder);
            if marker.newly.is_empty() {
                return;
            }
            std::mem::swap(&mut batch, &mut marker.newly);
            for &o in &batch {
                if let Some(es) = self.waiting.remove(&o) {
                    for e in es {
                        trace_value(e, marker);
                    }
                }
                if self.set.contains(&o) {
                    self.visit_ephemeron(table, o, marker);
                }
            }
            batch.clear();
        }
    }

    /// Pause, after all marking: clears the ephemerons whose key died and
    /// forgets the dead ephemerons.
    pub fn finish(mut self, table: &PageTable, count: &AtomicUsize) {
        for es in self.waiting.values().chain(std::iter::once(&self.keyless)) {
            for &e in es {
                // SAFETY: `e` is a marked (live) ephemeron; world stopped.
                unsafe {
                    key_word(e).write(std::ptr::null_mut());
                    value_word(e).write(std::ptr::null_mut());
                }
            }
        }
        self.set
            .retain(|&e| matches!(table.mark_state(e), MarkState::Marked(_)));
        count.store(self.set.len(), Relaxed);
    }
}

impl Ephemerons {
    /// Ends a pass (see [`EphemeronPass::finish`]).
    pub fn finish(&self, pass: EphemeronPass<'_>, table: &PageTable) {
        pass.finish(table, &self.count);
    }
}

fn trace_value<const W: bool>(e: usize, marker: &mut Marker<'_, W>) {
    use crate::embedder::Tracer;
    // SAFETY: `e` is an allocated 16-byte ephemeron; the world is stopped,
    // and the tracer may update the word (a moving collector).
    marker.visit(unsafe { &mut *value_word(e) });
}

/// Reads an ephemeron's key and value (outside a pause: the collector
/// clears them only while the world is stopped).
pub fn read(e: usize) -> (usize, usize) {
    // SAFETY: callers checked that `e` is a live ephemeron object.
    unsafe { (key_word(e).read() as usize, value_word(e).read() as usize) }
}

/// Writes an ephemeron's key and value (the owner mutator, attached).
pub fn write(e: usize, key: usize, value: usize) {
    // SAFETY: callers checked that `e` is a live ephemeron object.
    unsafe {
        key_word(e).write(key as *mut u8);
        value_word(e).write(value as *mut u8);
    }
}
