//! A minor collection's own steps (generational mode; the state and the
//! rules are in `generations.rs`): choosing the kind of the pause, and the
//! extra marking tasks — the remembered set, and the rescan of old objects
//! no barrier covers.

use super::events::GcReason;
use super::heap::HeapCore;
use super::mark::trace_object;
use crate::embedder::{Embedder, Tracer};
use crate::os::OS_PAGE;
use crate::space::{PageKind, PAGE_SHIFT, PAGE_SIZE};

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
        g.set_rescan_pages(written(core, pages));
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
        for (p, written) in g.rescan_part(task - 1) {
            if written != 0 {
                traced += rescan_page(core, p as usize, written, t);
            }
        }
        g.note_traced(traced, false);
    }
}

/// Each page with the mask of its OS pages written since the last
/// collection (`Config::dirty_pages`: Linux's soft-dirty bits; a large
/// object's head gets all ones if any page of its span was written, and 0
/// if none). Without dirty-page tracking, or if the bits cannot be read,
/// every page reads fully written.
fn written<E: Embedder>(core: &HeapCore<E>, mut pages: Vec<u32>) -> Vec<(u32, u16)> {
    const OS_PER_PAGE: usize = PAGE_SIZE / OS_PAGE;
    let Some(dirty) = &core.dirty else {
        return pages.into_iter().map(|p| (p, u16::MAX)).collect();
    };
    pages.sort_unstable();
    let table = &core.table;
    let span = |p: u32| match table.desc(p as usize).kind() {
        PageKind::LargeHead => table.desc(p as usize).span(),
        _ => 1,
    };
    let mut out = Vec::with_capacity(pages.len());
    let mut i = 0;
    while i < pages.len() {
        // A run of pages adjacent in memory: one read.
        let first = pages[i] as usize;
        let mut end = first + span(pages[i]);
        let mut j = i + 1;
        while j < pages.len() && pages[j] as usize == end {
            end += span(pages[j]);
            j += 1;
        }
        let bits = dirty.dirty(table.page_addr(first), (end - first) * OS_PER_PAGE);
        for &p in &pages[i..j] {
            let from = (p as usize - first) * OS_PER_PAGE;
            let n = span(p) * OS_PER_PAGE;
            let mask = match &bits {
                Err(_) => u16::MAX,
                Ok(b) => {
                    let bit = |k: usize| b[k / 64] >> (k % 64) & 1 != 0;
                    if n == OS_PER_PAGE {
                        (0..n).fold(0u16, |m, k| m | (u16::from(bit(from + k)) << k))
                    } else if (from..from + n).any(bit) {
                        u16::MAX
                    } else {
                        0
                    }
                }
            };
            out.push((p, mask));
        }
        i = j;
    }
    out
}

/// Traces every old (marked), unbarriered, pointer-holding object on page
/// `p` (a pool page or a large object's head) that overlaps an OS page of
/// `written` (bit `k`: the page's `k`th 4 KiB). Returns how many.
fn rescan_page<E: Embedder, T: Tracer>(
    core: &HeapCore<E>,
    p: usize,
    written: u16,
    t: &mut T,
) -> usize {
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
            if slot >= n {
                continue;
            }
            let (from, to) = (slot * size, (slot * size + size).min(PAGE_SIZE) - 1);
            let covers = if n == 1 {
                u16::MAX
            } else {
                (u16::MAX >> (15 - to / OS_PAGE)) & (u16::MAX << (from / OS_PAGE))
            };
            if written & covers != 0 {
                trace_object(table, &core.embedder, base + slot * size, t);
                traced += 1;
            }
        }
    }
    traced
}
