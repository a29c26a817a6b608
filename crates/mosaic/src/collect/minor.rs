//! A minor collection's own steps (generational mode; the state and the
//! rules are in `generations.rs`): choosing the kind of the pause, and the
//! extra marking tasks — the remembered set, and the rescan of old objects
//! no barrier covers.

use super::events::GcReason;
use super::heap::HeapCore;
use super::mark::trace_object;
use crate::embedder::{Embedder, Tracer};
use crate::space::{PageKind, PAGE_SHIFT};

/// Decides whether the pause starting now is minor (after the previous
/// sweep finished, before marking). A full collection in generational
/// mode starts by clearing every mark: nothing is old any more.
pub fn begin<E: Embedder>(
    core: &HeapCore<E>,
    reason: GcReason,
    compaction: bool,
    number: u64,
) -> bool {
    let g = &core.generations;
    let minor = g.decide(reason, compaction, number);
    if minor {
        let mut pages: Vec<u32> = Vec::new();
        for p in core.pools.iter() {
            pages.extend(p.pages().into_iter().map(|p| p as u32));
        }
        pages.extend(
            core.large
                .objects(&core.table)
                .into_iter()
                .filter_map(|a| core.table.page_index(a).map(|p| p as u32)),
        );
        g.set_rescan_pages(pages);
    } else if g.enabled {
        core.clear_marks();
    }
    minor
}

/// Runs a minor collection's extra marking task `task`: 0, every object of
/// the remembered set is traced and becomes unlogged again; from 1, a
/// part of the rescan of unbarriered old objects.
pub fn scan_task<E: Embedder, T: Tracer>(core: &HeapCore<E>, task: usize, t: &mut T) {
    let table = &core.table;
    let g = &core.generations;
    if task == 0 {
        let set = g.take_remembered();
        for &obj in &set {
            trace_object(table, &core.embedder, obj, t);
            table.log().set_unlogged(obj);
        }
        g.note_traced(set.len(), true);
    } else {
        let mut traced = 0;
        for p in g.rescan_part(task - 1) {
            traced += rescan_page(core, p as usize, t);
        }
        g.note_traced(traced, false);
    }
}

/// Traces every old (marked), unbarriered, pointer-holding object on page
/// `p` (a pool page or a large object's head). Returns how many.
fn rescan_page<E: Embedder, T: Tracer>(core: &HeapCore<E>, p: usize, t: &mut T) -> usize {
    let table = &core.table;
    let d = table.desc(p);
    let base = table.page_addr(p);
    let (n, size) = match d.kind() {
        PageKind::Small => (d.slot_count(), d.slot_size()),
        PageKind::LargeHead => (1, d.span() << PAGE_SHIFT),
        _ => return 0,
    };
    let mut traced = 0;
    for w in 0..n.div_ceil(64) {
        let mut old = d.mark.word(w) & !d.no_pointers.word(w) & !d.barriered.word(w);
        while old != 0 {
            let slot = w * 64 + old.trailing_zeros() as usize;
            old &= old - 1;
            if slot < n {
                trace_object(table, &core.embedder, base + slot * size, t);
                traced += 1;
            }
        }
    }
    traced
}
