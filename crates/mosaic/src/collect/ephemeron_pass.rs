//! The ephemeron fixed point of one collection (step 4 of a collection,
//! the first of the weak phases; how ephemerons are found is `ephemeron.rs`).
//!
//! After the strong closure, the pass visits each marked ephemeron: a
//! marked (or out-of-heap) key makes its value traced; an unmarked key
//! parks the ephemeron in a table indexed by the key. From then on the
//! marker *watches* what it newly marks (`Marker<true>`): a newly marked
//! key releases the values parked on it, and a newly marked ephemeron is
//! visited as above. Every ephemeron and every object is thus handled a
//! bounded number of times: the fixed point costs time linear in the
//! ephemerons plus the objects marked, whatever order a chain of
//! ephemerons comes in.
//!
//! At the end of the collection, an ephemeron whose key stayed unmarked has
//! its key and value cleared (null), as has the value of an ephemeron with
//! no key (a null key counts as dead).

use std::sync::atomic::Ordering::Relaxed;

use rustc_hash::{FxHashMap, FxHashSet};

use super::ephemeron::{key_word, value_word, Ephemerons};
use super::mark::Marker;
use crate::space::{MarkState, PageTable};

/// The end of a chain in `EphemeronPass::links`.
const END: u32 = u32::MAX;

/// The ephemeron fixed point of one collection. No lock is held while
/// `trace` runs (a callback may read ephemerons through the API).
pub struct EphemeronPass<'a> {
    owner: &'a Ephemerons,
    /// Bytes of embedder header before an ephemeron's key.
    h: usize,
    /// Unmarked key → the last of the ephemerons (marked) waiting for it,
    /// an index into `links`.
    waiting: FxHashMap<usize, u32>,
    /// Waiting ephemerons: (ephemeron, index of the previous one waiting
    /// for the same key, or `END`). One vector for all keys: a weak table
    /// whose keys died has as many keys as entries.
    links: Vec<(usize, u32)>,
    /// Marked ephemerons with no key: their value is cleared at the end.
    keyless: Vec<usize>,
    /// Unmarked keys that count as alive (ordered finalizable objects whose
    /// children are being marked: they end up marked either way).
    released: FxHashSet<usize>,
}

impl<'a> EphemeronPass<'a> {
    /// Pause, after the strong closure: starts the fixed point by visiting
    /// every marked ephemeron. The caller then drains with
    /// [`EphemeronPass::drain`].
    pub fn begin<const W: bool>(
        owner: &'a Ephemerons,
        table: &PageTable,
        marker: &mut Marker<'_, W>,
    ) -> Self {
        let mut pass = EphemeronPass {
            owner,
            h: owner.header(),
            waiting: FxHashMap::default(),
            links: Vec::new(),
            keyless: Vec::new(),
            released: FxHashSet::default(),
        };
        for e in owner.marked(table) {
            pass.visit_ephemeron(table, e, marker);
        }
        pass
    }

    /// A marked ephemeron: trace its value now if its key is alive, else
    /// wait for the key.
    fn visit_ephemeron<const W: bool>(
        &mut self,
        table: &PageTable,
        e: usize,
        marker: &mut Marker<'_, W>,
    ) {
        let key = key_word(e, self.h).load(Relaxed);
        match table.mark_state(key) {
            // No key is a dead key: the value is not kept, and is cleared
            // at the end so that it never dangles.
            _ if key == 0 => self.keyless.push(e),
            MarkState::Outside | MarkState::Marked(_) => trace_value(e, self.h, marker),
            MarkState::Unmarked(k) if self.released.contains(&k) => trace_value(e, self.h, marker),
            MarkState::Unmarked(k) => {
                let next = self.waiting.get(&k).copied().unwrap_or(END);
                self.waiting.insert(k, self.links.len() as u32);
                self.links.push((e, next));
            }
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
                if let Some(head) = self.waiting.remove(&o) {
                    self.release(head, marker);
                }
                if self.owner.is_ephemeron(table, o) {
                    self.visit_ephemeron(table, o, marker);
                }
            }
            batch.clear();
        }
    }

    /// Traces the values of the ephemerons waiting on one key (the chain
    /// from `head`).
    fn release<const W: bool>(&mut self, head: u32, marker: &mut Marker<'_, W>) {
        let mut i = head;
        while i != END {
            let (e, next) = self.links[i as usize];
            trace_value(e, self.h, marker);
            i = next;
        }
    }

    /// An ordered finalizable object's children are being marked as if it
    /// were reachable: values of ephemerons keyed on it are reachable too,
    /// now and for the rest of the collection.
    pub fn release_key<const W: bool>(&mut self, key: usize, marker: &mut Marker<'_, W>) {
        self.released.insert(key);
        if let Some(head) = self.waiting.remove(&key) {
            self.release(head, marker);
        }
    }

    /// Pause, after all marking: clears the ephemerons whose key died and
    /// counts the live ones.
    pub fn finish(self, table: &PageTable) {
        let mut dead = self.keyless;
        for &head in self.waiting.values() {
            let mut i = head;
            while i != END {
                let (e, next) = self.links[i as usize];
                dead.push(e);
                i = next;
            }
        }
        for e in dead {
            key_word(e, self.h).store(0, Relaxed);
            value_word(e, self.h).store(0, Relaxed);
        }
        self.owner.count_live(table);
    }
}

fn trace_value<const W: bool>(e: usize, h: usize, marker: &mut Marker<'_, W>) {
    use crate::embedder::Tracer;
    let w = value_word(e, h);
    let old = w.load(Relaxed);
    let mut p = old as *mut u8;
    marker.visit(&mut p);
    if p as usize != old {
        w.store(p as usize, Relaxed); // a moving collector's update
    }
}
