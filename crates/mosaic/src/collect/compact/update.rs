//! Updating references after objects moved, and checking that none is left.
//!
//! [`Forwarder`] maps an address into a moved object's old slot (interior
//! addresses included) to the same offset in its new slot: the slot's
//! forwarded bit says it moved, its first word says where. Updating visits
//! every reference the collector knows of: the fields of every live object
//! (through `trace`, on every GC worker, pages from an atomic cursor),
//! then, on the coordinator, root handles, scope slots, `mutator_roots`,
//! `roots`, the finalizer queue, weak handles and slots, ephemerons and
//! finalizer registrations. Ambiguous words are never updated: what they
//! point into is pinned.
//!
//! A panic in `trace` or a roots callback *here* cannot be undone (some
//! references are updated, others not), so it aborts the process with a
//! message; the same callbacks already ran without panicking during this
//! collection's marking.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::MutexGuard;

use crate::collect::handles::Words;
use crate::collect::heap::HeapCore;
use crate::collect::roots::RootTable;
use crate::embedder::{Embedder, Tracer};
use crate::object::ObjRef;
use crate::space::{MarkState, PageKind, PageTable, PAGE_MASK, PAGE_SHIFT};

/// Old address → new address, for addresses into moved objects.
#[derive(Clone, Copy)]
pub struct Forwarder<'h> {
    table: &'h PageTable,
    base: usize,
    capacity: usize,
}

impl<'h> Forwarder<'h> {
    pub fn new(table: &'h PageTable) -> Self {
        Forwarder {
            table,
            base: table.base(),
            capacity: table.capacity(),
        }
    }

    /// Where the byte at `v` went, if `v` points into a moved object.
    #[inline(always)]
    pub fn forward(&self, v: usize) -> Option<usize> {
        let off = v.wrapping_sub(self.base);
        if off >= self.capacity {
            return None;
        }
        let d = self.table.desc(off >> PAGE_SHIFT);
        if d.kind() != PageKind::Small {
            return None;
        }
        let in_page = off & PAGE_MASK;
        let slot = d.slot_of_offset(in_page);
        if slot >= d.slot_count() || !d.forwarded.get(slot) {
            return None;
        }
        let start = v - (in_page - slot * d.slot_size());
        Some(self.table.forwarding(start) + (v - start))
    }
}

impl Tracer for Forwarder<'_> {
    #[inline(always)]
    fn visit(&mut self, slot: &mut *mut u8) {
        if let Some(n) = self.forward(*slot as usize) {
            *slot = n as *mut u8;
        }
    }
}

/// Runs `f`; a panic aborts the process (see the module docs).
fn or_abort(what: &str, f: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        eprintln!(
            "mosaic: {what} panicked while a compaction was updating references; \
             the heap cannot be made consistent, aborting"
        );
        std::process::abort();
    }
}

/// Every live object's fields go through `tracer` (made per worker by
/// `make`), on every GC worker.
pub fn trace_live<E: Embedder, T: Tracer>(
    core: &HeapCore<E>,
    span: &'static str,
    make: impl Fn() -> T + Sync,
) {
    let table = &core.table;
    let mut pages: Vec<usize> = core.pools.iter().flat_map(|p| p.pages()).collect();
    pages.extend(
        core.large
            .objects(table)
            .into_iter()
            .filter_map(|a| table.page_index(a)),
    );
    let next = AtomicUsize::new(0);
    const CHUNK: usize = 16;
    core.workers.run(&|_| {
        let t = Instant::now();
        let mut tracer = make();
        or_abort("trace", || loop {
            let from = next.fetch_add(CHUNK, Relaxed);
            if from >= pages.len() {
                break;
            }
            for &p in &pages[from..(from + CHUNK).min(pages.len())] {
                let d = table.desc(p);
                let (size, base) = (d.slot_size(), table.page_addr(p));
                for w in 0..d.slot_count().div_ceil(64) {
                    // Conservative objects hold only ambiguous words, whose
                    // targets are pinned: nothing in them to update.
                    let mut live =
                        d.mark.word(w) & !d.no_pointers.word(w) & !d.conservative.word(w);
                    while live != 0 {
                        let s = w * 64 + live.trailing_zeros() as usize;
                        live &= live - 1;
                        let obj = ObjRef::from_heap_addr(base + s * size);
                        core.embedder.trace(obj, &mut tracer);
                    }
                }
            }
        });
        core.span(span, t, None);
    });
}

/// Every root slot goes through `tracer`, with the root tables' locks
/// already held (`guards`).
pub fn visit_roots<E: Embedder, T: Tracer>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    guards: &[MutexGuard<'_, Words>],
    tracer: &mut T,
) {
    or_abort("a roots callback", || {
        RootTable::scan_locked(handles, guards, true, tracer, |m, t| {
            core.embedder.mutator_roots(m, t)
        });
        core.embedder.roots(tracer);
        core.finalizers.scan_ready(&core.table, tracer);
    });
}

/// Verification's tracer: finds a reference still holding an old address.
pub struct StaleCheck<'h> {
    fwd: Forwarder<'h>,
    pub error: Option<String>,
}

impl<'h> StaleCheck<'h> {
    pub fn new(table: &'h PageTable) -> Self {
        StaleCheck {
            fwd: Forwarder::new(table),
            error: None,
        }
    }

    /// Checks every word of every live object that may hold pointers,
    /// whether `trace` reports it or not: a field the embedder forgot to
    /// report is found too (the verification of `verify_compaction`).
    /// Pointer-free objects (`NO_POINTERS`, `UNINIT`) are skipped: their
    /// words are data by contract, and an uncleared one's slot may still
    /// hold a dead object's fields past its end.
    pub fn scan_objects<E: Embedder>(&mut self, core: &HeapCore<E>) {
        let table = self.fwd.table;
        let mut objects = Vec::new();
        for p in core.pools.iter().flat_map(|p| p.pages()) {
            let d = table.desc(p);
            let base = table.page_addr(p);
            d.mark.for_each_set(d.slot_count(), |s| {
                if !d.no_pointers.get(s) {
                    objects.push((base + s * d.slot_size(), d.slot_size()))
                }
            });
        }
        for a in core.large.objects(table) {
            if let MarkState::Marked(_) = table.mark_state(a) {
                let head = table.desc(table.page_index(a).expect("large object in the heap"));
                if !head.no_pointers.get(0) {
                    objects.push((a, head.large_size()));
                }
            }
        }
        for (obj, size) in objects {
            for off in (0..size / 8 * 8).step_by(8) {
                if self.error.is_some() {
                    return;
                }
                let v = table.read_word(obj + off);
                self.check(v, || format!("the word at offset {off} of object {obj:#x}"));
            }
        }
    }

    /// Reports `v`, found in `place`, if it is an old address.
    pub fn check(&mut self, v: usize, place: impl FnOnce() -> String) {
        if self.error.is_none() {
            if let Some(n) = self.fwd.forward(v) {
                self.error = Some(format!(
                    "{} holds {v:#x}, the old address of an object moved to {n:#x}",
                    place()
                ));
            }
        }
    }
}

impl Tracer for StaleCheck<'_> {
    fn visit(&mut self, slot: &mut *mut u8) {
        let (v, at) = (*slot as usize, slot as *mut *mut u8 as usize);
        self.check(v, || format!("the root slot at {at:#x}"));
    }
}
