//! A minor collection's own steps (generational mode; the state and the
//! rules are in `generations.rs`): choosing the kind of the pause, and the
//! extra marking tasks — the remembered set, and the rescan of old objects
//! no barrier covers.

use super::events::GcReason;
use super::generations::RescanPage;
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
        let table = &core.table;
        // Only pages where an object without a barrier promise was ever
        // put (most pages of a program that uses barriers have none: their
        // bitmaps are not read)...
        let mut pages: Vec<u32> = Vec::new();
        for p in core.pools.iter() {
            pages.extend(
                p.pages()
                    .into_iter()
                    .filter(|&p| table.desc(p).has_unbarriered())
                    .map(|p| p as u32),
            );
        }
        pages.extend(
            core.large
                .objects(table)
                .into_iter()
                .filter_map(|a| table.page_index(a))
                .filter(|&p| table.desc(p).has_unbarriered())
                .map(|p| p as u32),
        );
        // ... and of those, the ones that hold an old object no barrier
        // covers, in address order (adjacent ones share a pagemap read).
        pages.sort_unstable();
        let mut old = Vec::new();
        pages.retain(|&p| match old_unbarriered(core, p as usize) {
            Some(words) => {
                old.push(words);
                true
            }
            None => false,
        });
        let written = written(core, &pages);
        g.set_rescan_pages(
            pages
                .into_iter()
                .zip(written)
                .zip(old)
                .map(|((page, written), old)| RescanPage { page, written, old })
                .collect(),
        );
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
        let (pages, range) = g.rescan_part(task - 1);
        for r in &pages[range] {
            if r.written != 0 {
                traced += rescan_page(core, r, t);
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
/// `pages` must be sorted.
fn written<E: Embedder>(core: &HeapCore<E>, pages: &[u32]) -> Vec<u16> {
    const OS_PER_PAGE: usize = PAGE_SIZE / OS_PAGE;
    let Some(dirty) = &core.dirty else {
        return vec![u16::MAX; pages.len()];
    };
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
            out.push(mask);
        }
        i = j;
    }
    out
}

/// The old (marked), unbarriered, pointer-holding objects of page `p` (a
/// pool page or a large object's head) as one bit per slot, if it has any.
fn old_unbarriered<E: Embedder>(core: &HeapCore<E>, p: usize) -> Option<Box<[u64]>> {
    let d = core.table.desc(p);
    let n = match d.kind() {
        PageKind::Small => d.slot_count(),
        PageKind::LargeHead => 1,
        _ => return None,
    };
    let words: Box<[u64]> = (0..n.div_ceil(64))
        .map(|w| d.mark.word(w) & !d.no_pointers.word(w) & !d.barriered.word(w))
        .collect();
    words.iter().any(|&w| w != 0).then_some(words)
}

/// Traces the objects of `r.old` that overlap an OS page of `r.written`
/// (bit `k`: the page's `k`th 4 KiB). Returns how many.
fn rescan_page<E: Embedder, T: Tracer>(core: &HeapCore<E>, r: &RescanPage, t: &mut T) -> usize {
    let table = &core.table;
    let p = r.page as usize;
    let d = table.desc(p);
    let base = table.page_addr(p);
    let (n, size) = match d.kind() {
        PageKind::Small => (d.slot_count(), d.slot_size()),
        PageKind::LargeHead => (1, d.span() << PAGE_SHIFT),
        _ => return 0,
    };
    let mut traced = 0;
    for (w, &bits) in r.old.iter().enumerate() {
        let mut old = bits;
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
            if r.written & covers != 0 {
                trace_object(table, &core.embedder, base + slot * size, t);
                traced += 1;
            }
        }
    }
    traced
}
