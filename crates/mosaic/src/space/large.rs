//! The large-object space: one object per span of whole pages.
//!
//! Objects bigger than the largest size class get a span of
//! `ceil(size / PAGE_SIZE)` clean (zeroed) pages from the page resource. The
//! head page's descriptor describes the object with bit 0 of each bitmap; tail
//! pages point back at the head so interior addresses resolve in O(1).
//! Sweeping is eager, right after marking: a dead object's span is decommitted
//! and returned to the clean span set at once.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use parking_lot::Mutex;

use super::geometry::PAGE_SIZE;
use super::page::PageKind;
use super::page_resource::PageResource;
use super::page_table::PageTable;
use crate::flags::AllocFlags;

/// All large objects of a heap.
#[derive(Default)]
pub struct LargeSpace {
    /// Head page index of every live large object.
    heads: Mutex<Vec<u32>>,
    allocated_bytes: AtomicU64,
    freed_bytes: AtomicU64,
}

/// Counters of the large-object space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LargeStats {
    /// Large objects currently allocated.
    pub objects: usize,
    /// Pages their spans cover.
    pub pages: usize,
    /// Bytes requested by every large allocation so far.
    pub allocated_bytes: u64,
    /// Bytes of large objects freed so far.
    pub freed_bytes: u64,
}

impl LargeSpace {
    /// Allocates a zeroed object of `size` bytes; `None` when no span fits.
    pub fn alloc(
        &self,
        table: &PageTable,
        res: &PageResource,
        size: usize,
        flags: AllocFlags,
    ) -> Option<usize> {
        let pages = size.div_ceil(PAGE_SIZE);
        let head = res.acquire_span(table, pages)?;
        let d = table.desc(head);
        d.init_large_head(pages, size);
        for p in head + 1..head + pages {
            table.desc(p).init_large_tail(head);
        }
        d.alloc.set(0);
        // `UNINIT` implies `NO_POINTERS` (large objects are zeroed anyway).
        if flags.contains(AllocFlags::NO_POINTERS) || flags.contains(AllocFlags::UNINIT) {
            d.no_pointers.set(0);
        }
        if flags.contains(AllocFlags::NEEDS_CLEANUP) {
            d.cleanup.set(0);
            d.set_has_cleanup(true);
        }
        if flags.contains(AllocFlags::PINNED) {
            d.pin.set(0);
        }
        if flags.contains(AllocFlags::CONSERVATIVE) {
            d.conservative.set(0);
        } else if flags.contains(AllocFlags::BARRIERED) {
            d.barriered.set(0);
        }
        if !d.no_pointers.get(0) && !d.barriered.get(0) {
            d.note_unbarriered();
        }
        // A young object: a dead one's stale unlogged bit must go.
        table.log().clear_range(table.page_addr(head), 8);
        self.heads.lock().push(head as u32);
        self.allocated_bytes.fetch_add(size as u64, Relaxed);
        Some(table.page_addr(head))
    }

    /// Frees every unmarked large object (calling `on_free` for those that
    /// asked for cleanup) and clears the marks of the survivors: the serial
    /// form of [`LargeSpace::unlink_dead`] then [`LargeSpace::free_dead`].
    /// Returns the number of objects freed.
    #[cfg(test)]
    pub fn sweep(
        &self,
        table: &PageTable,
        res: &PageResource,
        mut on_free: impl FnMut(usize),
    ) -> usize {
        let dead = self.unlink_dead(table, false);
        for &h in &dead {
            self.free_dead(table, res, h, &mut on_free);
        }
        dead.len()
    }

    /// Takes every unmarked large object off the list and clears the marks
    /// of the survivors (unless `sticky`: generational mode keeps them, they
    /// say the object is old). Runs inside a pause. Returns the head pages
    /// of the dead, each to be given to [`LargeSpace::free_dead`] exactly once.
    pub fn unlink_dead(&self, table: &PageTable, sticky: bool) -> Vec<usize> {
        let mut dead = Vec::new();
        self.heads.lock().retain(|&h| {
            let d = table.desc(h as usize);
            if d.mark.get(0) {
                if !sticky {
                    d.mark.clear(0);
                }
                return true;
            }
            dead.push(h as usize);
            false
        });
        dead
    }

    /// Frees one object unlinked by [`LargeSpace::unlink_dead`]: calls
    /// `on_free` if it asked for cleanup (never under this space's lock, so
    /// it may read the stats), then decommits its span and returns it to
    /// the clean span set. Dead objects may be freed on several threads.
    pub fn free_dead(
        &self,
        table: &PageTable,
        res: &PageResource,
        head: usize,
        on_free: &mut impl FnMut(usize),
    ) {
        let d = table.desc(head);
        if d.cleanup.get(0) {
            on_free(table.page_addr(head));
        }
        let pages = d.span();
        self.freed_bytes.fetch_add(d.large_size() as u64, Relaxed);
        for p in head..head + pages {
            let pd = table.desc(p);
            pd.clear_bitmaps();
            pd.set_kind(PageKind::Free);
        }
        res.release_span_clean(table, head, pages);
    }

    /// Frees the live object headed at `head` now, outside a pause (an
    /// explicit free; the caller checked that it needs no cleanup). False
    /// if it is not on the list: another thread freed it first.
    pub fn free_now(&self, table: &PageTable, res: &PageResource, head: usize) -> bool {
        {
            let mut heads = self.heads.lock();
            let Some(i) = heads.iter().position(|&h| h as usize == head) else {
                return false;
            };
            heads.swap_remove(i);
        }
        self.free_dead(table, res, head, &mut |_| {});
        true
    }

    /// Clears the mark bit of every large object (an abandoned collection).
    pub fn clear_marks(&self, table: &PageTable) {
        for &h in self.heads.lock().iter() {
            table.desc(h as usize).mark.clear(0);
        }
    }

    /// The address of every allocated large object (a snapshot: callers may
    /// run callbacks on them without holding this space's lock).
    pub fn objects(&self, table: &PageTable) -> Vec<usize> {
        let heads = self.heads.lock();
        heads.iter().map(|&h| table.page_addr(h as usize)).collect()
    }

    pub fn stats(&self, table: &PageTable) -> LargeStats {
        let heads = self.heads.lock();
        LargeStats {
            objects: heads.len(),
            pages: heads.iter().map(|&h| table.desc(h as usize).span()).sum(),
            allocated_bytes: self.allocated_bytes.load(Relaxed),
            freed_bytes: self.freed_bytes.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::space::Located;

    #[test]
    fn large_objects_span_pages_and_dead_ones_are_freed_eagerly() {
        let t = PageTable::new(16).unwrap();
        let r = PageResource::new(&t, t.npages());
        let los = LargeSpace::default();
        let a = los
            .alloc(&t, &r, 3 * PAGE_SIZE + 1, AllocFlags::NEEDS_CLEANUP)
            .unwrap();
        let b = los.alloc(&t, &r, 10_000, AllocFlags::NONE).unwrap();
        assert_eq!(
            t.locate(a + 2 * PAGE_SIZE + 5),
            Located::Large { head: 0, start: a }
        );
        assert_eq!(t.object_at(b), Some(Located::Large { head: 4, start: b }));
        assert_eq!(los.stats(&t).pages, 5);
        // Only b is marked: a dies and its cleanup runs.
        t.desc(4).mark.set(0);
        let mut freed = vec![];
        assert_eq!(los.sweep(&t, &r, |o| freed.push(o)), 1);
        assert_eq!(freed, vec![a]);
        assert_eq!(t.locate(a), Located::FreePage);
        assert!(!t.desc(4).mark.get(0), "survivor's mark cleared");
        let s = los.stats(&t);
        assert_eq!(
            (s.objects, s.pages, s.freed_bytes),
            (1, 1, (3 * PAGE_SIZE + 1) as u64)
        );
        // The freed span is reusable for an object of the same size.
        assert_eq!(los.alloc(&t, &r, 4 * PAGE_SIZE, AllocFlags::NONE), Some(a));
        assert_eq!(los.alloc(&t, &r, 12 * PAGE_SIZE, AllocFlags::NONE), None);
    }
}
