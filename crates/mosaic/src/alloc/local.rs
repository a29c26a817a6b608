//! Bump-through-free-runs allocation into a mutator's current pages.

use crate::pool::SizePool;
use crate::space::PageTable;

/// No current page.
pub const NO_PAGE: usize = usize::MAX;

/// The allocation state for one size pool.
#[derive(Clone, Copy, Debug)]
struct LocalPool {
    cursor: usize,
    limit: usize,
    slot_size: usize,
    page: usize,
    /// Next slot index to search for a free run.
    next_slot: usize,
    /// Slots reserved in runs and not yet reported to the pool.
    unreported: i64,
}

/// Most size classes a table may have (see `SizeClasses::new`).
const MAX_CLASSES: usize = 64;

/// A mutator's allocation context: one current page and run per pool.
/// A fixed array indexed by `class % 64`, so the fast path has no bounds check.
pub struct LocalAllocator {
    pools: Box<[LocalPool; MAX_CLASSES]>,
    /// Hand out one slot per run (stress mode: every allocation takes the slow path).
    single_slot_runs: bool,
}

impl LocalAllocator {
    pub fn new(slot_sizes: &[usize], single_slot_runs: bool) -> Self {
        assert!(slot_sizes.len() <= MAX_CLASSES);
        // Unused entries have an empty run and never get a page.
        let pools = Box::new(std::array::from_fn(|i| LocalPool {
            cursor: 0,
            limit: 0,
            slot_size: slot_sizes.get(i).copied().unwrap_or(usize::MAX / 2),
            page: NO_PAGE,
            next_slot: 0,
            unreported: 0,
        }));
        LocalAllocator {
            pools,
            single_slot_runs,
        }
    }

    /// The fast path: the next slot of the current run, if any.
    #[inline(always)]
    pub fn bump(&mut self, class: usize) -> Option<usize> {
        let lp = &mut self.pools[class % MAX_CLASSES];
        let next = lp.cursor + lp.slot_size;
        if next <= lp.limit {
            let p = lp.cursor;
            lp.cursor = next;
            Some(p)
        } else {
            None
        }
    }

    /// Takes the next free run of the current page. Returns false when the
    /// page has none left (the page is then no longer current).
    pub fn next_run(&mut self, table: &PageTable, class: usize) -> bool {
        let single = self.single_slot_runs;
        let lp = &mut self.pools[class];
        if lp.page == NO_PAGE {
            return false;
        }
        let d = table.desc(lp.page);
        let n = d.slot_count();
        let Some(first) = d.alloc.find(lp.next_slot, n, false) else {
            lp.page = NO_PAGE;
            lp.cursor = 0;
            lp.limit = 0;
            return false;
        };
        let end = if single {
            first + 1
        } else {
            d.alloc.find(first, n, true).unwrap_or(n)
        };
        d.alloc.set_range(first, end);
        let base = table.page_addr(lp.page);
        let (start, len) = (base + first * lp.slot_size, (end - first) * lp.slot_size);
        if !d.zeroed() {
            table.zero(start, len);
        }
        lp.cursor = start;
        lp.limit = start + len;
        lp.next_slot = end;
        lp.unreported += (end - first) as i64;
        true
    }

    /// Makes `page` (owned by the caller, with a free slot) the current page.
    pub fn set_page(&mut self, class: usize, page: usize) {
        let lp = &mut self.pools[class];
        debug_assert_eq!(lp.page, NO_PAGE);
        lp.page = page;
        lp.next_slot = 0;
    }

    /// Reports reserved slots of `class` to its pool.
    pub fn report(&mut self, class: usize, pool: &SizePool) {
        let lp = &mut self.pools[class];
        if lp.unreported != 0 {
            pool.note_allocated(lp.unreported);
            lp.unreported = 0;
        }
    }

    /// Gives every current page back: the unused rest of each run is
    /// un-reserved, counts are reported and pages returned to their pools.
    pub fn flush(&mut self, table: &PageTable, pools: &[SizePool]) {
        for (class, pool) in pools.iter().enumerate().take(MAX_CLASSES) {
            let lp = &mut self.pools[class];
            if lp.page != NO_PAGE {
                let d = table.desc(lp.page);
                if lp.cursor < lp.limit {
                    let base = table.page_addr(lp.page);
                    let from = (lp.cursor - base) / lp.slot_size;
                    let to = (lp.limit - base) / lp.slot_size;
                    d.alloc.clear_range(from, to);
                    lp.unreported -= (to - from) as i64;
                }
                let has_free = d.alloc.find(0, d.slot_count(), false).is_some();
                pool.return_page(lp.page, has_free);
                lp.page = NO_PAGE;
            }
            lp.cursor = 0;
            lp.limit = 0;
            self.report(class, pool);
        }
    }
}
