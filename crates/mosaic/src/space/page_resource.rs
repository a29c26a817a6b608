//! The page resource: where free pages wait until a pool or a large object
//! takes them.
//!
//! Two stores, after MMTk's `BlockPageResource` (seed 004):
//!
//! - a lock-free queue of **dirty** single pages (committed memory that held
//!   objects). Sweepers release pages through a [`ReleaseBuffer`] that pushes
//!   them in batches, so neither mutators sweeping lazily nor the GC workers
//!   of the release phase contend on a lock. Pools take single pages from
//!   here first, which reuses resident memory before touching new memory.
//!   [`PageResourceKind::Mutex`] replaces the queue by a mutex-protected free list
//!   taken once per page released (MMTk's `FreeListPageResource`, the
//!   baseline of seed 004's experiment; `MOSAIC_PAGE_RESOURCE=mutex`);
//! - a lock-free queue of dirty pages that background sweeping has
//!   **cleared** (`collect/background.rs`), taken first: the allocator
//!   then need not clear them. They count among the dirty pages
//!   ([`PageResource::dirty_pages`]); trimming decommits them last;
//! - a mutex-protected, coalescing set of **clean** spans (decommitted or
//!   never used, so reading zeroes), which also holds the never-used end of
//!   the reservation. Large objects take contiguous runs from it.
//!
//! The maximum heap size is enforced here, on pages **in use** (held by a
//! pool or a large object), not by the size of the address range: the
//! reservation is larger than the maximum heap, so a large object can still
//! find a contiguous span when small-object pages are scattered over the
//! range (the same reason the Boehm collector's heap is discontiguous).
//!
//! Invariants: a page is in at most one of the stores, and only when its
//! descriptor kind is `Free`; every page in the cleared queue reads as
//! zeroes and has its descriptor's `zeroed` flag set; every page in the span set is decommitted;
//! a request is granted only if `in_use` stays within `max_pages`;
//! `committed` counts the pages touched since their last decommit (in use
//! or queued), and committing never takes it past `max_pages` either:
//! committing clean pages first decommits queued dirty ones. (Lowering
//! `max_pages` below what is in use or committed refuses requests until
//! pages are released; it takes nothing away.) When the heap shrinks,
//! [`PageResource::trim`] decommits queued pages beyond what its caller
//! keeps (the heap target's room, see `HeapCore::trim_step`), so RSS falls.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering::Relaxed;

#[cfg(not(loom))]
use crossbeam_queue::SegQueue;
#[cfg(not(loom))]
use parking_lot::Mutex;
#[cfg(not(loom))]
use std::sync::atomic::AtomicUsize;

#[cfg(loom)]
use loom_shim::{AtomicUsize, Mutex, SegQueue};

use super::page::PageKind;
use super::page_table::PageTable;

/// Free pages of the heap.
pub struct PageResource {
    dirty: Dirty,
    /// Pages in `dirty` and `cleared`.
    dirty_len: AtomicUsize,
    cleared: SegQueue<u32>,
    clean: Mutex<BTreeMap<usize, usize>>,
    committed: AtomicUsize,
    /// Free pages decommitted so far (large objects' spans not counted).
    trimmed: AtomicUsize,
    in_use: AtomicUsize,
    /// Most pages in use at once since [`PageResource::take_peak_in_use`]
    /// last looked.
    peak_in_use: AtomicUsize,
    /// Most pages in use at once: at most `reserved_pages`, lowered or
    /// raised by [`PageResource::set_max_pages`].
    max_pages: AtomicUsize,
    /// The maximum the heap was created with (its reservation's pages).
    reserved_pages: usize,
    /// One past the highest page index ever handed out: descriptors below
    /// it have been touched (those of trimmed pages may have been given
    /// back since).
    high_water: AtomicUsize,
}

/// How the dirty free pages are kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PageResourceKind {
    /// A lock-free queue, released into in batches through per-thread
    /// [`ReleaseBuffer`]s (the default).
    #[default]
    LockFree,
    /// A free list behind one mutex, taken for every page released.
    Mutex,
}

// One per heap: its size does not matter, an indirection on every
// release would.
#[allow(clippy::large_enum_variant)]
enum Dirty {
    LockFree(SegQueue<u32>),
    Mutex(Mutex<Vec<u32>>),
}

impl Dirty {
    fn pop(&self) -> Option<u32> {
        match self {
            Dirty::LockFree(q) => q.pop(),
            Dirty::Mutex(v) => v.lock().pop(),
        }
    }
}

/// Pages released by one sweeper, pushed to the shared queue in batches.
pub struct ReleaseBuffer {
    pages: Vec<u32>,
    /// Flush when this many pages are buffered.
    batch: usize,
}

const RELEASE_BATCH: usize = 32;

impl Default for ReleaseBuffer {
    /// An empty buffer; it allocates only when a page is released.
    fn default() -> Self {
        ReleaseBuffer {
            pages: Vec::new(),
            batch: RELEASE_BATCH,
        }
    }
}

impl ReleaseBuffer {
    /// A buffer for one GC worker's share of a release phase: it never
    /// flushes by itself, so the worker touches the shared queue once, when
    /// the phase ends (seed 004's per-worker buffers).
    pub fn for_phase() -> Self {
        ReleaseBuffer {
            pages: Vec::new(),
            batch: usize::MAX,
        }
    }

    /// Hands a page (already marked `Free`) to the resource, eventually.
    pub fn release(&mut self, res: &PageResource, page: usize) {
        self.pages.push(page as u32);
        // The mutex store is the baseline: one lock acquisition per page.
        if self.pages.len() >= self.batch || matches!(res.dirty, Dirty::Mutex(_)) {
            self.flush(res);
        }
    }

    /// Pushes every buffered page to the shared queue.
    pub fn flush(&mut self, res: &PageResource) {
        if self.pages.is_empty() {
            return;
        }
        // Queue first, count as free last: a page must be drainable (to keep
        // committed memory under the maximum) before it can be reserved again.
        let n = self.pages.len();
        match &res.dirty {
            Dirty::LockFree(q) => self.pages.drain(..).for_each(|p| q.push(p)),
            Dirty::Mutex(list) => list.lock().append(&mut self.pages),
        }
        res.dirty_len.fetch_add(n, Relaxed);
        res.in_use.fetch_sub(n, Relaxed);
    }
}

impl Drop for ReleaseBuffer {
    fn drop(&mut self) {
        debug_assert!(self.pages.is_empty(), "ReleaseBuffer dropped without flush");
    }
}

impl PageResource {
    /// A resource owning every page of `table`, all clean, of which at most
    /// `max_pages` may be in use at once.
    #[cfg(test)]
    pub fn new(table: &PageTable, max_pages: usize) -> Self {
        Self::with_store(table, max_pages, PageResourceKind::LockFree)
    }

    /// [`PageResource::new`] with the dirty pages kept in `store`.
    pub fn with_store(table: &PageTable, max_pages: usize, store: PageResourceKind) -> Self {
        let mut clean = BTreeMap::new();
        clean.insert(0, table.npages());
        PageResource {
            dirty: match store {
                PageResourceKind::LockFree => Dirty::LockFree(SegQueue::new()),
                PageResourceKind::Mutex => Dirty::Mutex(Mutex::new(Vec::new())),
            },
            dirty_len: AtomicUsize::new(0),
            cleared: SegQueue::new(),
            clean: Mutex::new(clean),
            committed: AtomicUsize::new(0),
            trimmed: AtomicUsize::new(0),
            in_use: AtomicUsize::new(0),
            peak_in_use: AtomicUsize::new(0),
            max_pages: AtomicUsize::new(max_pages.min(table.npages())),
            reserved_pages: max_pages.min(table.npages()),
            high_water: AtomicUsize::new(0),
        }
    }

    /// Counts `n` more pages in use, unless that would pass the maximum.
    /// A compare-and-swap loop: a request that does not fit never counts,
    /// not even for a moment, so it cannot make a concurrent one that fits
    /// fail.
    fn reserve(&self, n: usize) -> bool {
        let max = self.max_pages.load(Relaxed);
        match self
            .in_use
            .fetch_update(Relaxed, Relaxed, |u| u.checked_add(n).filter(|&t| t <= max))
        {
            Ok(before) => {
                self.peak_in_use.fetch_max(before + n, Relaxed);
                true
            }
            Err(_) => false,
        }
    }

    /// The most pages in use at once since the last call (or creation),
    /// and starts again from the pages in use now.
    pub fn take_peak_in_use(&self) -> usize {
        let now = self.in_use.load(Relaxed);
        self.peak_in_use.swap(now, Relaxed).max(now)
    }

    /// Takes one free page: a dirty one if any, else the lowest clean one.
    /// `None` when the heap is at its maximum size.
    pub fn acquire_page(&self, table: &PageTable) -> Option<usize> {
        if !self.reserve(1) {
            return None;
        }
        if let Some(p) = self.cleared.pop().or_else(|| self.dirty.pop()) {
            self.dirty_len.fetch_sub(1, Relaxed);
            // (Its `zeroed` flag is what the releaser said: set only by
            // background sweeping, which cleared the page before.)
            debug_assert_eq!(table.desc(p as usize).kind(), PageKind::Free);
            return Some(p as usize);
        }
        let got = self.take_span(table, 1);
        if got.is_none() {
            self.in_use.fetch_sub(1, Relaxed);
        }
        got
    }

    /// Takes `n` contiguous clean pages (first fit, lowest address). Queued
    /// dirty pages are decommitted and merged in when no span is big enough.
    /// `None` when the heap is at its maximum size or no span fits.
    pub fn acquire_span(&self, table: &PageTable, n: usize) -> Option<usize> {
        if !self.reserve(n) {
            return None;
        }
        let got = self.take_span(table, n);
        if got.is_none() {
            self.in_use.fetch_sub(n, Relaxed);
        }
        got
    }

    fn take_span(&self, table: &PageTable, n: usize) -> Option<usize> {
        let mut clean = self.clean.lock();
        // Committing `n` clean pages must not take committed memory past the
        // maximum: decommit queued dirty pages first (there are enough, since
        // pages in use, the `n` included, are within the maximum).
        let excess =
            (self.committed.load(Relaxed) + n).saturating_sub(self.max_pages.load(Relaxed));
        if excess > 0 {
            let _ = self.drain_dirty_into(table, &mut clean, 0, excess);
        }
        let first = match first_fit(&clean, n) {
            Some(f) => f,
            None => {
                let _ = self.drain_dirty_into(table, &mut clean, 0, usize::MAX);
                first_fit(&clean, n)?
            }
        };
        let len = clean.remove(&first).expect("span vanished");
        if len > n {
            clean.insert(first + n, len - n);
        }
        // Counted before the lock is released, so a concurrent taker sees it.
        self.committed.fetch_add(n, Relaxed);
        drop(clean);
        for p in first..first + n {
            let d = table.desc(p);
            d.set_zeroed(true);
            d.set_committed(true);
        }
        self.high_water.fetch_max(first + n, Relaxed);
        Some(first)
    }

    /// Takes a queued dirty page (not a cleared one) for the caller to
    /// clear and hand back with [`PageResource::put_cleared`]. Meanwhile
    /// it is in no store and counts as committed and in use.
    pub fn take_dirty_to_clear(&self) -> Option<usize> {
        // Counted in use while it is cleared: it stays committed, so a
        // taker that found no queued page must not commit a clean one in
        // its place past the maximum (`take_span` counts on it). `None`
        // when the heap is at its maximum.
        if self.dirty_len.load(Relaxed) == 0 || !self.reserve(1) {
            return None;
        }
        let Some(p) = self.dirty.pop() else {
            self.in_use.fetch_sub(1, Relaxed);
            return None;
        };
        self.dirty_len.fetch_sub(1, Relaxed);
        Some(p as usize)
    }

    /// Queues a page taken with [`PageResource::take_dirty_to_clear`],
    /// now all zeroes, with its `zeroed` flag set.
    pub fn put_cleared(&self, table: &PageTable, page: usize) {
        debug_assert!(table.desc(page).zeroed() && table.desc(page).kind() == PageKind::Free);
        // (Counted first, so that a taker of the page cannot count it
        // down before it is counted.)
        self.dirty_len.fetch_add(1, Relaxed);
        self.cleared.push(page as u32);
        self.in_use.fetch_sub(1, Relaxed);
    }

    /// Returns `n` pages starting at `first` (kinds already `Free`) straight
    /// to the clean set, decommitting them.
    pub fn release_span_clean(&self, table: &PageTable, first: usize, n: usize) {
        table.decommit(first, n);
        self.committed.fetch_sub(n, Relaxed);
        self.in_use.fetch_sub(n, Relaxed);
        let mut clean = self.clean.lock();
        insert_coalesced(&mut clean, first, n);
    }

    /// Decommits queued dirty pages until at most `keep` remain, but no
    /// more than `max` pages per call, so the work fits in a bounded step.
    /// Returns the pages decommitted.
    pub fn trim(&self, table: &PageTable, keep: usize, max: usize) -> usize {
        if self.dirty_len.load(Relaxed) <= keep {
            return 0;
        }
        let mut clean = self.clean.lock();
        self.drain_dirty_into(table, &mut clean, keep, max)
    }

    fn drain_dirty_into(
        &self,
        table: &PageTable,
        clean: &mut BTreeMap<usize, usize>,
        keep: usize,
        max: usize,
    ) -> usize {
        let mut pages = Vec::new();
        while self.dirty_len.load(Relaxed) > keep && pages.len() < max {
            let Some(p) = self.dirty.pop().or_else(|| self.cleared.pop()) else {
                break;
            };
            self.dirty_len.fetch_sub(1, Relaxed);
            pages.push(p as usize);
        }
        pages.sort_unstable();
        let mut i = 0;
        while i < pages.len() {
            let mut j = i + 1;
            while j < pages.len() && pages[j] == pages[j - 1] + 1 {
                j += 1;
            }
            let (first, n) = (pages[i], j - i);
            table.decommit(first, n);
            for p in first..first + n {
                table.desc(p).set_committed(false);
                table.desc(p).set_zeroed(true);
            }
            // Their descriptors too, where whole OS pages allow: a clean
            // page's descriptor reads as zero (free, not known zeroed, not
            // committed), and `take_span` sets the rest when it is taken.
            table.decommit_descriptors(first, n);
            self.committed.fetch_sub(n, Relaxed);
            self.trimmed.fetch_add(n, Relaxed);
            insert_coalesced(clean, first, n);
            i = j;
        }
        pages.len()
    }

    /// Free pages queued dirty (committed, not in use).
    pub fn dirty_pages(&self) -> usize {
        self.dirty_len.load(Relaxed)
    }

    /// Pages touched since their last decommit (in use or queued dirty).
    pub fn committed_pages(&self) -> usize {
        self.committed.load(Relaxed)
    }

    /// Free small-object pages decommitted so far (by trimming, or to make
    /// room for a large span).
    pub fn trimmed_pages(&self) -> usize {
        self.trimmed.load(Relaxed)
    }

    /// Page descriptors touched so far (one past the highest page used).
    pub fn touched_descriptors(&self) -> usize {
        self.high_water.load(Relaxed)
    }

    /// Pages held by pools and large objects.
    pub fn in_use_pages(&self) -> usize {
        self.in_use.load(Relaxed)
    }

    /// Most pages that may be in use at once (the maximum heap size).
    pub fn max_pages(&self) -> usize {
        self.max_pages.load(Relaxed)
    }

    /// The maximum the resource was created with; [`Self::set_max_pages`]
    /// cannot go above it.
    pub fn reserved_pages(&self) -> usize {
        self.reserved_pages
    }

    /// Sets the most pages in use at once to `n` (at most the reserved
    /// maximum, at least 1). Pages already in use above it stay: requests
    /// fail until enough are released.
    pub fn set_max_pages(&self, n: usize) {
        self.max_pages
            .store(n.clamp(1, self.reserved_pages), Relaxed);
    }

    /// Clean free pages (including the never-used part of the reservation).
    #[cfg(test)]
    pub fn clean_pages(&self) -> usize {
        self.clean.lock().values().sum()
    }
}

fn first_fit(clean: &BTreeMap<usize, usize>, n: usize) -> Option<usize> {
    clean.iter().find(|(_, &len)| len >= n).map(|(&s, _)| s)
}

fn insert_coalesced(clean: &mut BTreeMap<usize, usize>, mut first: usize, mut n: usize) {
    if let Some((&ps, &pl)) = clean.range(..first).next_back() {
        debug_assert!(ps + pl <= first, "double free of page {first}");
        if ps + pl == first {
            clean.remove(&ps);
            first = ps;
            n += pl;
        }
    }
    if let Some(nl) = clean.remove(&(first + n)) {
        n += nl;
    }
    clean.insert(first, n);
}

/// Under loom, the queue and the locks are loom's, so the model checker
/// sees every interleaving of the counting protocol around them (the
/// queue itself is crossbeam's, checked by its own authors).
#[cfg(loom)]
mod loom_shim {
    pub use loom::sync::atomic::AtomicUsize;

    pub struct Mutex<T>(loom::sync::Mutex<T>);

    impl<T> Mutex<T> {
        pub fn new(v: T) -> Self {
            Mutex(loom::sync::Mutex::new(v))
        }

        pub fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
            self.0.lock().expect("poisoned")
        }
    }

    pub struct SegQueue<T>(Mutex<std::collections::VecDeque<T>>);

    impl<T> SegQueue<T> {
        pub fn new() -> Self {
            SegQueue(Mutex::new(Default::default()))
        }

        pub fn push(&self, v: T) {
            self.0.lock().push_back(v)
        }

        pub fn pop(&self) -> Option<T> {
            self.0.lock().pop_front()
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_peak_in_use_counts_pages_given_back_and_taken_again() {
        let t = PageTable::new(16).unwrap();
        let r = PageResource::new(&t, 16);
        let pages: Vec<_> = (0..5).map(|_| r.acquire_page(&t).unwrap()).collect();
        let mut buf = ReleaseBuffer::default();
        for &p in &pages[..4] {
            buf.release(&r, p);
        }
        buf.flush(&r);
        assert_eq!(r.acquire_page(&t), Some(pages[0]));
        assert_eq!(r.in_use_pages(), 2);
        assert_eq!(r.take_peak_in_use(), 5, "the most since creation");
        assert_eq!(r.take_peak_in_use(), 2, "from the pages in use then");
        let span = r.acquire_span(&t, 3).unwrap();
        r.release_span_clean(&t, span, 3);
        assert!(r.acquire_span(&t, 16).is_none(), "refused: not counted");
        assert_eq!(r.take_peak_in_use(), 5);
    }

    #[test]
    fn pages_cycle_through_dirty_queue_and_clean_spans() {
        let t = PageTable::new(16).unwrap();
        let r = PageResource::new(&t, 16);
        let a = r.acquire_page(&t).unwrap();
        let b = r.acquire_page(&t).unwrap();
        assert_eq!((a, b), (0, 1));
        assert_eq!(r.committed_pages(), 2);
        let mut buf = ReleaseBuffer::default();
        // (Releasers say whether the page is cleared: this one is not.)
        t.desc(a).set_zeroed(false);
        buf.release(&r, a);
        buf.flush(&r);
        assert_eq!(r.dirty_pages(), 1);
        // A dirty page is reused first, as its releaser left it.
        assert_eq!(r.acquire_page(&t), Some(0));
        assert!(!t.desc(0).zeroed());
        t.desc(0).set_zeroed(true);
        buf.release(&r, 0);
        buf.flush(&r);
        assert_eq!(r.acquire_page(&t), Some(0));
        assert!(
            t.desc(0).zeroed(),
            "a page released cleared stays known cleared"
        );
        buf.release(&r, 0);
        buf.release(&r, 1);
        buf.flush(&r);
        // Trimming decommits and merges them back into one clean span.
        r.trim(&t, 0, 1);
        assert_eq!(r.dirty_pages(), 1, "at most one page per call");
        r.trim(&t, 0, 8);
        assert_eq!(r.dirty_pages(), 0);
        assert_eq!(r.committed_pages(), 0);
        assert_eq!(r.clean_pages(), 16);
        assert_eq!(*r.clean.lock(), BTreeMap::from([(0, 16)]));
    }

    #[test]
    fn span_allocation_is_first_fit_and_exhaustion_returns_none() {
        let t = PageTable::new(8).unwrap();
        let r = PageResource::new(&t, 8);
        assert_eq!(r.acquire_span(&t, 3), Some(0));
        assert_eq!(r.acquire_span(&t, 4), Some(3));
        assert_eq!(r.acquire_span(&t, 2), None);
        r.release_span_clean(&t, 0, 3);
        assert_eq!(r.acquire_span(&t, 2), Some(0));
        assert_eq!(r.acquire_page(&t), Some(2));
        assert_eq!(r.acquire_page(&t), Some(7));
        assert_eq!(r.acquire_page(&t), None);
        // Dirty pages are merged into spans when a span is needed.
        let mut buf = ReleaseBuffer::default();
        buf.release(&r, 0);
        buf.release(&r, 1);
        buf.flush(&r);
        assert_eq!(r.acquire_span(&t, 2), Some(0));
        assert!(t.desc(0).zeroed() && t.desc(1).zeroed());
    }

    #[test]
    fn the_maximum_counts_pages_in_use_not_addresses() {
        // 16 pages of address space, at most 4 in use.
        let t = PageTable::new(16).unwrap();
        let r = PageResource::new(&t, 4);
        let a = r.acquire_page(&t).unwrap();
        let _b = r.acquire_page(&t).unwrap();
        let _c = r.acquire_page(&t).unwrap();
        assert_eq!(r.acquire_span(&t, 2), None, "3 + 2 > 4");
        assert_eq!(r.in_use_pages(), 3, "a refused request reserves nothing");
        let mut buf = ReleaseBuffer::default();
        buf.release(&r, a);
        buf.flush(&r);
        assert_eq!(r.in_use_pages(), 2);
        // Page 0 is free but alone: the span comes from fresh address space.
        assert_eq!(r.acquire_span(&t, 2), Some(3));
        assert_eq!(r.acquire_page(&t), None, "at the maximum");
        r.release_span_clean(&t, 3, 2);
        assert_eq!(r.in_use_pages(), 2);
    }

    #[test]
    fn a_page_being_cleared_counts_against_the_maximum() {
        // At most 2 pages, both committed: one in use, one dirty.
        let t = PageTable::new(16).unwrap();
        let r = PageResource::new(&t, 2);
        let a = r.acquire_page(&t).unwrap();
        let _b = r.acquire_page(&t).unwrap();
        t.desc(a).set_zeroed(false);
        let mut buf = ReleaseBuffer::default();
        buf.release(&r, a);
        buf.flush(&r);
        assert_eq!(r.take_dirty_to_clear(), Some(a));
        // While it is cleared no page may be committed in its place.
        assert_eq!(r.acquire_page(&t), None, "the cleared page is in use");
        assert_eq!(r.acquire_span(&t, 1), None);
        assert_eq!(r.committed_pages(), 2);
        assert_eq!(r.take_dirty_to_clear(), None, "none queued, none held");
        t.zero(t.page_addr(a), crate::space::PAGE_SIZE);
        t.desc(a).set_zeroed(true);
        r.put_cleared(&t, a);
        assert_eq!((r.in_use_pages(), r.dirty_pages()), (1, 1));
        assert_eq!(r.acquire_page(&t), Some(a));
        assert!(t.desc(a).zeroed(), "handed out known cleared");
        assert_eq!(r.committed_pages(), 2);
    }

    #[test]
    fn a_refused_request_never_makes_a_fitting_one_fail() {
        use std::sync::atomic::AtomicBool;
        let t = PageTable::new(64).unwrap();
        let r = PageResource::new(&t, 16);
        for _ in 0..15 {
            r.acquire_page(&t).unwrap();
        }
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Relaxed) {
                    assert_eq!(r.acquire_span(&t, 2), None, "15 + 2 > 16");
                }
            });
            let mut buf = ReleaseBuffer::default();
            let mut failures = 0;
            for _ in 0..300_000 {
                match r.acquire_page(&t) {
                    Some(p) => {
                        buf.release(&r, p);
                        buf.flush(&r);
                    }
                    None => failures += 1,
                }
            }
            stop.store(true, Relaxed);
            assert_eq!(failures, 0, "15 + 1 <= 16 must always fit");
        });
        assert_eq!(r.in_use_pages(), 15);
    }

    /// Thousands of pages released from several threads at once (each
    /// through its own buffer, as the release phase's workers do) while
    /// other threads take pages: every page comes back exactly once, none
    /// is handed out twice, with either store.
    #[test]
    fn pages_released_from_many_threads_are_neither_lost_nor_handed_out_twice() {
        use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
        use std::sync::Arc;
        const PAGES: usize = 4096;
        const RELEASERS: usize = 4;
        const TAKERS: usize = 2;
        for store in [PageResourceKind::LockFree, PageResourceKind::Mutex] {
            let t = Arc::new(PageTable::new(PAGES).unwrap());
            let r = Arc::new(PageResource::with_store(&t, PAGES, store));
            let held: Arc<Vec<AtomicBool>> =
                Arc::new((0..PAGES).map(|_| AtomicBool::new(false)).collect());
            for _ in 0..PAGES {
                let p = r.acquire_page(&t).unwrap();
                assert!(!held[p].swap(true, SeqCst));
            }
            assert_eq!(r.acquire_page(&t), None, "{store:?}: all taken");
            let taken = Arc::new(AtomicUsize::new(0));
            let mut threads = Vec::new();
            for k in 0..RELEASERS {
                let (t, r, held) = (t.clone(), r.clone(), held.clone());
                threads.push(std::thread::spawn(move || {
                    let mut buf = ReleaseBuffer::for_phase();
                    for p in (k..PAGES).step_by(RELEASERS) {
                        assert!(held[p].swap(false, SeqCst));
                        t.desc(p).set_kind(PageKind::Free);
                        buf.release(&r, p);
                        if p % 256 < RELEASERS {
                            buf.flush(&r);
                        }
                    }
                    buf.flush(&r);
                    Vec::new()
                }));
            }
            for _ in 0..TAKERS {
                let (t, r, held, taken) = (t.clone(), r.clone(), held.clone(), taken.clone());
                threads.push(std::thread::spawn(move || {
                    let mut mine = Vec::new();
                    while taken.load(SeqCst) < PAGES / 2 {
                        if let Some(p) = r.acquire_page(&t) {
                            assert!(!held[p].swap(true, SeqCst), "page {p} handed out twice");
                            taken.fetch_add(1, SeqCst);
                            mine.push(p);
                        } else {
                            std::thread::yield_now();
                        }
                    }
                    mine
                }));
            }
            let mut got = 0;
            for h in threads {
                got += h.join().unwrap().len();
            }
            assert!(got >= PAGES / 2);
            assert_eq!(r.in_use_pages(), got, "{store:?}");
            assert_eq!(r.dirty_pages(), PAGES - got, "{store:?}");
            // The rest comes back, each page once, and then nothing.
            for _ in got..PAGES {
                let p = r.acquire_page(&t).unwrap();
                assert!(!held[p].swap(true, SeqCst), "page {p} handed out twice");
            }
            assert!(
                held.iter().all(|h| h.load(SeqCst)),
                "{store:?}: a page was lost"
            );
            assert_eq!(r.acquire_page(&t), None, "{store:?}");
        }
    }
}

/// The release hand-off under loom: a page released through a buffer
/// becomes free (`in_use` drops) only after it is in the queue, so a
/// thread that sees room in the heap always finds a page — checked over
/// every interleaving, with both stores (`RUSTFLAGS="--cfg loom" cargo test
/// -p mosaic --lib --release page_resource`).
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    fn model(store: PageResourceKind) {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(3);
        b.check(move || {
            // Two pages, both in use: one thread releases page 0 while
            // another waits for room and takes a page.
            let t = Arc::new(PageTable::new(2).unwrap());
            let r = Arc::new(PageResource::with_store(&t, 2, store));
            assert_eq!(r.acquire_page(&t), Some(0));
            assert_eq!(r.acquire_page(&t), Some(1));
            let (t1, r1) = (t.clone(), r.clone());
            let releaser = loom::thread::spawn(move || {
                let mut buf = ReleaseBuffer::for_phase();
                t1.desc(0).set_kind(PageKind::Free);
                buf.release(&r1, 0);
                buf.flush(&r1);
            });
            let (t2, r2) = (t.clone(), r.clone());
            let taker = loom::thread::spawn(move || {
                while r2.in_use.load(Relaxed) == 2 {
                    loom::thread::yield_now();
                }
                r2.acquire_page(&t2)
            });
            releaser.join().unwrap();
            assert_eq!(taker.join().unwrap(), Some(0), "room seen, no page found");
            assert_eq!(r.in_use.load(Relaxed), 2);
            assert_eq!(r.dirty_len.load(Relaxed), 0);
        });
    }

    #[test]
    fn page_resource_release_hand_off_lock_free() {
        model(PageResourceKind::LockFree);
    }

    #[test]
    fn page_resource_release_hand_off_mutex() {
        model(PageResourceKind::Mutex);
    }
}
