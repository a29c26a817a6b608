//! The marking of one collection, weak semantics included: steps 2–4 of
//! a collection (`cycle.rs`), as two calls. [`strong_closure`] is step 1
//! below (the roots and the mark, serial or parallel); [`weak_phases`] is
//! steps 2–5 (the weak phases).
//!
//! 1. The strong closure: root handles, every live mutator's scope slots
//!    and `mutator_roots`, the embedder's `roots`, and the objects waiting
//!    in the finalizer queue; drained with the plain marker, or on every GC
//!    worker when there are several (`par_mark.rs`).
//! 2. Only if ephemerons or finalizers exist: the marker turns *watching*
//!    and the ephemeron fixed point runs (`ephemeron.rs`).
//! 3. Short weak references to unmarked objects are found (cleared after
//!    step 4, when no embedder code can abandon the collection any more).
//! 4. Finalizers are chosen (`finalize.rs`) and their objects marked, with
//!    what they reach; ephemerons keep reaching their fixed point meanwhile.
//! 5. Ephemerons whose key died are cleared, long weak references to
//!    unmarked objects are cleared, registrations held by dead objects go.
//!
//! A heap with no weak reference, ephemeron or finalizer runs step 1, a few
//! relaxed loads and two uncontended locks (the weak handle tables, held for
//! the whole marking so that `WeakRoot::get` on a thread outside the pause
//! waits for the clearing): the cost of a collection without them is
//! unchanged.
//!
//! A panic in `trace` abandons the collection (`cycle.rs` clears the marks).
//! Embedder code runs only before anything is cleared or queued: short weak
//! references are *found* at step 3 but cleared with the rest after the
//! last `trace`, so an abandoned collection leaves every weak reference,
//! ephemeron, registration and the queue as they were.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::ephemeron_pass::EphemeronPass;
use super::heap::HeapCore;
use super::mark::{trace_object, trace_words, Marker};
use super::par_mark;
use super::root_scan::scan_marking_roots;
use super::roots::RootTable;
use super::weak::{WeakKind, WeakPause};
use crate::embedder::{Embedder, Tracer};
use crate::space::{Located, PageTable};

/// A strong closure begun on the collecting thread alone (the collection
/// was judged small, `HeapCore::is_small`) hands what is left to every
/// worker once it has marked for `Config::parallel_help_us` with at least
/// this many entries on its stack (a binary tree keeps about its depth
/// there; fewer is a list being walked, which no second worker can speed
/// up). The judgement is by the previous collections, and one that keeps
/// far more than they did (a program's data built between two minor
/// collections) would otherwise take its whole length on one thread. The
/// default wait, 100 µs, is about twice what waking the workers costs on
/// the 2-core VM (45–70 µs), so a pause that ends sooner never wakes them.
pub const HELP_MIN_WORK: usize = 8;

/// What marking found.
pub struct Marked {
    pub objects: usize,
    pub bytes: usize,
    pub time: Duration,
    /// The strong closure's work as one thread would do it (its time when
    /// serial, the workers' busy time summed when parallel; the weak
    /// phases, which run on one thread either way, left out): whether the
    /// next collection of its kind is parallel (`HeapCore::is_small`).
    pub work: Duration,
    /// Finalizers chosen by this collection.
    pub finalizers: usize,
    /// Of `bytes`, what only finalization kept: the objects whose finalizer
    /// was chosen, and what they (or ordered finalizable objects) reach and
    /// nothing else did. Garbage that the next collection reclaims, unless
    /// a finalizer makes it reachable again.
    pub finalization_bytes: usize,
    /// Objects ambiguous words pointed into: pinned for this collection
    /// (may hold duplicates). Empty unless the collection may compact.
    pub pins: Vec<usize>,
}

/// The strong closure, complete: what the weak phases go on from. Holds
/// both weak handle tables from the start of marking to the end of
/// [`weak_phases`].
pub struct Strong<'h> {
    start: Instant,
    /// The closure's work as one thread would do it: its time when
    /// serial, the workers' busy time summed when parallel.
    work: Duration,
    weak: WeakPause<'h>,
    marker: Marker<'h>,
}

/// Marks everything the strong roots reach (step 1 in the module docs),
/// on every GC worker when there are several. `pins`: list the objects
/// ambiguous words point into (the collection may compact).
pub fn strong_closure<'h, E: Embedder>(
    core: &'h HeapCore<E>,
    handles: &[Arc<RootTable>],
    pins: bool,
) -> Strong<'h> {
    let start = Instant::now();
    let table = &core.table;
    let weak = core.weak.pause();
    let mut marker = Marker::new(table)
        .generational(core.config.generational)
        .recording_pins(pins);
    let work = if core.workers.count() > 1 {
        let busy;
        (marker.marked, marker.marked_bytes, marker.pins, busy) =
            par_mark::strong_closure(core, handles, pins);
        busy
    } else {
        scan_marking_roots(core, handles, &mut marker);
        core.span("roots", start, Some(("workers", 1)));
        let t = Instant::now();
        if core.workers.pool_size() > 1 {
            // Judged small, but a pool is there: if marking runs past
            // `parallel_help_us`, the rest goes to every worker.
            let after = Duration::from_micros(core.config.parallel_help_us);
            // (With no wait, any work at all is handed over: the model
            // test's small graphs take that path too.)
            let min_work = if after.is_zero() { 1 } else { HELP_MIN_WORK };
            let mut help = false;
            marker.drain_sharing(&core.embedder, |stack| {
                help = stack.len() >= min_work && t.elapsed() >= after;
                help
            });
            core.span("mark", t, Some(("objects", marker.marked as u64)));
            if help {
                let alone = start.elapsed();
                core.workers.set_serial(false);
                let (objects, bytes, mut found, busy) =
                    par_mark::finish_closure(core, pins, marker.take_stack());
                marker.marked += objects;
                marker.marked_bytes += bytes;
                marker.pins.append(&mut found);
                alone + busy
            } else {
                start.elapsed()
            }
        } else {
            marker.drain(&core.embedder);
            core.span("mark", t, Some(("objects", marker.marked as u64)));
            start.elapsed()
        }
    };
    Strong {
        start,
        work,
        weak,
        marker,
    }
}

/// The weak phases (steps 2–5 in the module docs): ephemerons, short weak
/// references, finalizers, long weak references. Returns what marking found.
pub fn weak_phases<E: Embedder>(core: &HeapCore<E>, strong: Strong<'_>) -> Marked {
    let Strong {
        start,
        work,
        mut weak,
        mut marker,
    } = strong;
    let table = &core.table;
    // This collection's number (the count goes up when it completes).
    let number = core.counters.collections.load(Relaxed) + 1;
    let weak_start = Instant::now();
    let mut finalizers = 0;
    let mut finalization_bytes = 0;
    let (objects, bytes, pins) = if core.ephemerons.any() {
        let mut m = marker.watching();
        let mut pass = EphemeronPass::begin(&core.ephemerons, table, &mut m);
        pass.drain(table, &mut m, &core.embedder);
        keep_referents(core, &mut m, |m| pass.drain(table, m, &core.embedder));
        let mut pins = m.take_pins();
        let short = weak.unmarked(table, WeakKind::Short);
        let before_finalization = m.marked_bytes;
        let chosen = choose_finalizers(core, &mut m, |m, released| {
            if let Some(o) = released {
                pass.release_key(o, m);
            }
            pass.drain(table, m, &core.embedder);
        });
        finalizers = chosen.len();
        finalization_bytes = m.marked_bytes - before_finalization;
        // No embedder code runs from here on: the collection completes.
        weak.clear(short);
        core.finalizers.enqueue(table, chosen, number);
        pass.finish(table);
        // Ambiguous words met while the weak phases marked (a conservative
        // object reached only through an ephemeron's value or a finalizable
        // object) pin their targets too.
        pins.extend(m.take_pins());
        (m.marked, m.marked_bytes, pins)
    } else if core.finalizers.any() {
        // No ephemeron anywhere: nothing to watch for while finalization
        // marks.
        keep_referents(core, &mut marker, |m| m.drain(&core.embedder));
        let mut pins = marker.take_pins();
        let short = weak.unmarked(table, WeakKind::Short);
        let before_finalization = marker.marked_bytes;
        let chosen = choose_finalizers(core, &mut marker, |m, _| m.drain(&core.embedder));
        finalizers = chosen.len();
        finalization_bytes = marker.marked_bytes - before_finalization;
        weak.clear(short);
        core.finalizers.enqueue(table, chosen, number);
        pins.extend(marker.take_pins());
        (marker.marked, marker.marked_bytes, pins)
    } else {
        keep_referents(core, &mut marker, |m| m.drain(&core.embedder));
        let short = weak.unmarked(table, WeakKind::Short);
        weak.clear(short);
        (marker.marked, marker.marked_bytes, marker.take_pins())
    };
    let long = weak.unmarked(table, WeakKind::Long);
    weak.clear(long);
    weak.finish(table);
    core.span("weak", weak_start, None);
    Marked {
        objects,
        bytes,
        time: start.elapsed(),
        work,
        finalizers,
        finalization_bytes,
        pins,
    }
}

/// Marks what the dead `KEEP_REFERENTS` objects reference (`keep.rs`),
/// not the objects themselves, and pins it; `settle(m)` drains `m` every
/// 1024 of them and at the end.
fn keep_referents<'h, E: Embedder, const W: bool>(
    core: &'h HeapCore<E>,
    m: &mut Marker<'h, W>,
    mut settle: impl FnMut(&mut Marker<'h, W>),
) {
    let table = &core.table;
    let mut i = 0u32;
    core.keep.for_each_dead(table, |k| {
        // Pinned: compaction does not update a dead object's fields, and
        // `on_free` reads them.
        let mut skip = SkipSelf {
            m: &mut *m,
            this: k.start..k.end,
            pin: true,
        };
        if k.conservative {
            trace_words(k.start, k.end, &mut skip);
        } else {
            trace_object(table, &core.embedder, k.start, &mut skip);
        }
        // Drained now and then: the mark stack stays small when a
        // collection finds hundreds of thousands.
        i += 1;
        if i % 1024 == 0 {
            settle(m);
        }
    });
    settle(m);
}

/// Traces the object at `o` into `m`, skipping references to itself.
fn mark_children<'h, E: Embedder, const W: bool>(
    core: &'h HeapCore<E>,
    m: &mut Marker<'h, W>,
    o: usize,
) {
    let table = &core.table;
    if let Some(end) = traced_end(table, o) {
        let mut skip = SkipSelf {
            m: &mut *m,
            this: o..end,
            pin: false,
        };
        trace_object(table, &core.embedder, o, &mut skip);
    }
}

/// Chooses the finalizers this collection runs (`Finalizers::choose`) and
/// marks what they keep: each ordered candidate's children, then the
/// chosen objects. `settle(m, released)` drains `m` after each step
/// (`released`: the candidate whose children were just marked).
fn choose_finalizers<'h, E: Embedder, const W: bool>(
    core: &'h HeapCore<E>,
    m: &mut Marker<'h, W>,
    mut settle: impl FnMut(&mut Marker<'h, W>, Option<usize>),
) -> Vec<usize> {
    let table = &core.table;
    let chosen = core.finalizers.choose(table, |o| {
        mark_children(core, m, o);
        settle(m, Some(o));
    });
    // Drained as it goes: the mark stack holds at most a batch of chosen
    // objects (a collection may choose hundreds of thousands).
    for batch in chosen.chunks(4096) {
        for &o in batch {
            m.mark_addr(o);
        }
        settle(m, None);
    }
    if chosen.is_empty() {
        settle(m, None);
    }
    chosen
}

/// The end of the object at `o` if it is traced (not `NO_POINTERS`).
fn traced_end(table: &PageTable, o: usize) -> Option<usize> {
    match table.locate(o) {
        Located::Small { page, slot, .. } => {
            let d = table.desc(page);
            (!d.no_pointers.get(slot)).then(|| o + d.slot_size())
        }
        Located::Large { head, .. } => {
            let d = table.desc(head);
            // Its whole pages: an ambiguous word anywhere in them is a
            // reference to this object (the marker resolves it so).
            (!d.no_pointers.get(0)).then(|| o + (d.span() << crate::space::PAGE_SHIFT))
        }
        _ => None,
    }
}

/// Marks an object's children but not the object itself (ordered
/// finalization ignores direct self-references, interior ones included).
/// With `pin`, precise references pin their targets as ambiguous words do
/// (the object's own fields will not be updated if they move).
struct SkipSelf<'a, 'h, const W: bool> {
    m: &'a mut Marker<'h, W>,
    this: std::ops::Range<usize>,
    pin: bool,
}

impl<const W: bool> Tracer for SkipSelf<'_, '_, W> {
    fn visit(&mut self, slot: &mut *mut u8) {
        if !self.this.contains(&(*slot as usize)) {
            if self.pin {
                self.m.visit_ambiguous(*slot as usize);
            } else {
                self.m.visit(slot);
            }
        }
    }

    /// A conservatively traced object's words reach its children too.
    fn visit_ambiguous(&mut self, word: usize) {
        if !self.this.contains(&word) {
            self.m.visit_ambiguous(word);
        }
    }
}
