//! The marking of one collection, weak semantics included.
//!
//! 1. The strong closure: root handles, every live mutator's scope slots
//!    and `mutator_roots`, the embedder's `roots`, and the objects waiting
//!    in the finalizer queue; drained with the plain marker.
//! 2. Only if ephemerons or finalizers exist: the marker turns *watching*
//!    and the ephemeron fixed point runs (`ephemeron.rs`).
//! 3. Short weak references to unmarked objects are found (cleared after
//!    step 4, when no embedder code can abandon the collection any more).
//! 4. Finalizers are chosen (`finalize.rs`) and their objects marked, with
//!    what they reach; ephemerons keep reaching their fixed point meanwhile.
//! 5. Ephemerons whose key died are cleared, long weak references to
//!    unmarked objects are cleared, registrations held by dead objects go.
//!
//! A heap with no weak reference, ephemeron or finalizer runs step 1 and
//! three relaxed loads: the cost of a collection without them is unchanged.
//!
//! A panic in `trace` abandons the collection (`core.rs` clears the marks).
//! Embedder code runs only before anything is cleared or queued: short weak
//! references are *found* at step 3 but cleared with the rest after the
//! last `trace`, so an abandoned collection leaves every weak reference,
//! ephemeron, registration and the queue as they were.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::core::HeapCore;
use super::mark::Marker;
use super::roots::RootTable;
use super::weak::WeakKind;
use crate::embedder::{Embedder, Tracer};
use crate::space::{Located, PageTable};

/// What marking found.
pub struct Marked {
    pub objects: usize,
    pub bytes: usize,
    pub time: Duration,
    /// Finalizers chosen by this collection.
    pub finalizers: usize,
}

/// Visits every strong root: handles, scopes, `mutator_roots`, `roots`,
/// and the finalizer queue.
pub fn scan_roots<E: Embedder, T: Tracer>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    tracer: &mut T,
) {
    RootTable::scan_all(handles, tracer, |m, t| core.embedder.mutator_roots(m, t));
    core.embedder.roots(tracer);
    core.finalizers.scan_ready(tracer);
}

/// Marks everything live (see the module docs).
pub fn mark<E: Embedder>(core: &HeapCore<E>, handles: &[Arc<RootTable>]) -> Marked {
    let start = Instant::now();
    let table = &core.table;
    let mut marker = Marker::new(table);
    scan_roots(core, handles, &mut marker);
    marker.drain(&core.embedder);
    let mut finalizers = 0;
    let (objects, bytes) = if core.ephemerons.any() || core.finalizers.any() {
        let mut m = marker.watching();
        let mut pass = core.ephemerons.begin(table, &mut m);
        pass.drain(table, &mut m, &core.embedder);
        let short = core.weak.unmarked(table, WeakKind::Short);
        let chosen = core.finalizers.choose(table, |o| {
            if has_pointers(table, o) {
                core.embedder.trace(
                    crate::object::ObjRef::from_heap_addr(o),
                    &mut SkipSelf { m: &mut m, this: o },
                );
            }
            pass.drain(table, &mut m, &core.embedder);
        });
        for &o in &chosen {
            m.mark_addr(o);
        }
        pass.drain(table, &mut m, &core.embedder);
        finalizers = chosen.len();
        // No embedder code runs from here on: the collection completes.
        core.weak.clear(short);
        core.finalizers.enqueue(chosen);
        core.ephemerons.finish(pass, table);
        (m.marked, m.marked_bytes)
    } else {
        core.weak.clear(core.weak.unmarked(table, WeakKind::Short));
        (marker.marked, marker.marked_bytes)
    };
    core.weak.clear(core.weak.unmarked(table, WeakKind::Long));
    core.weak.forget_dead_holders(table);
    Marked {
        objects,
        bytes,
        time: start.elapsed(),
        finalizers,
    }
}

/// Whether the object at `o` is traced (not `NO_POINTERS`).
fn has_pointers(table: &PageTable, o: usize) -> bool {
    match table.locate(o) {
        Located::Small { page, slot, .. } => !table.desc(page).no_pointers.get(slot),
        Located::Large { head, .. } => !table.desc(head).no_pointers.get(0),
        _ => false,
    }
}

/// Marks an object's children but not the object itself (ordered
/// finalization ignores direct self-references).
struct SkipSelf<'a, 'h> {
    m: &'a mut Marker<'h, true>,
    this: usize,
}

impl Tracer for SkipSelf<'_, '_> {
    fn visit(&mut self, slot: &mut *mut u8) {
        if *slot as usize != self.this {
            self.m.visit(slot);
        }
    }
}
