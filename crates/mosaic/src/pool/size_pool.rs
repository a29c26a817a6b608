//! One size pool: the pages holding slots of one size, and how a mutator
//! gets one with free slots.
//!
//! The pool's lists are behind one mutex, taken once per page a mutator
//! acquires (never per object). Sweeping happens outside the lock: a sweeper
//! pops a page from `unswept`, owns it while sweeping, and pushes the result.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use parking_lot::Mutex;

use super::growth::{decide, CycleSample, Decision, GrowthPolicy};
use super::sweep::{sweep_page, SweepResult};
use crate::space::{PageKind, PageResource, PageTable, ReleaseBuffer, PAGE_SIZE};

/// How far from the end of a pool's unswept list background sweeping
/// looks for a page without cleanup work.
const AHEAD_WINDOW: usize = 16;

/// One size pool.
pub struct SizePool {
    pub index: usize,
    pub slot_size: usize,
    pub slots_per_page: usize,
    /// Mirror of `state.unswept.len()`, readable without the lock (updated
    /// under it), so "does any pool need sweeping?" costs no lock.
    unswept_len: AtomicUsize,
    state: Mutex<PoolState>,
}

struct PoolState {
    /// Pages swept this cycle or acquired fresh (including mutators' current pages).
    pages: Vec<u32>,
    /// Pages not yet swept since the last marking.
    unswept: Vec<u32>,
    /// Pages of `pages` with free slots that no mutator owns.
    available: Vec<u32>,
    budget: usize,
    decision: Decision,
    /// Is a sweep cycle in progress (unswept pages remain from the last marking)?
    sweeping: bool,
    /// The cycle follows a minor collection: only pages allocated into
    /// since the one before are swept, so its counts are partial and the
    /// growth policy does not decide on them.
    minor: bool,
    /// Pages held when the current cycle's marking started.
    cycle_pages: usize,
    cycle_live: usize,
    cycle_free: usize,
    /// Slots handed out since the last collection (running, then snapshotted).
    allocated_since_gc: u64,
    /// Slots handed out before the minor collections since the last full one.
    minor_allocated: u64,
    cycle_allocated: u64,
    /// Slots freed explicitly that their mutator flushed before reusing
    /// them: still allocated, free tags written, until the next pause makes
    /// them free ([`SizePool::reclaim_forgotten`]).
    forgotten: Vec<usize>,
    c: PoolCounters,
}

/// Counters of one pool, as reported in stats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolCounters {
    /// Slots handed to mutators since the heap was created.
    pub allocated_total: u64,
    /// Slots freed by sweeping since the heap was created.
    pub freed_total: u64,
    /// Live slots found by the last completed sweep cycle.
    pub last_live: usize,
    /// Free slots found by the last completed sweep cycle.
    pub last_free: usize,
    /// Pages swept lazily or eagerly since the heap was created.
    pub pages_swept: u64,
    /// Empty pages given back to the page resource.
    pub pages_released: u64,
    /// Longest single lazy sweep step taken in a mutator's slow path.
    pub longest_sweep_step: Duration,
}

/// Outcome of asking a pool for a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquired {
    /// A page with at least one free slot, now owned by the caller.
    Page(usize),
    /// The page resource has no page left (the heap is at its maximum).
    Exhausted,
}

/// What the caller needs for sweeping: where pages are and where empty ones go.
pub struct SweepCtx<'a> {
    pub table: &'a PageTable,
    pub resource: &'a PageResource,
    pub release: &'a mut ReleaseBuffer,
    pub on_free: &'a mut dyn FnMut(usize),
    pub policy: &'a GrowthPolicy,
    /// Set when some pool finished its sweep cycle during the call.
    pub finished_cycle: bool,
    /// Pages swept during the call.
    pub swept: usize,
    /// Generational mode: sweeping keeps the survivors' marks (old objects).
    pub sticky: bool,
    /// Verify mode: freed slots are overwritten with `POISON` (`space/page_table.rs`).
    pub poison: bool,
}

impl SizePool {
    pub fn new(index: usize, slot_size: usize, policy: &GrowthPolicy) -> Self {
        let slots_per_page = PAGE_SIZE / slot_size;
        SizePool {
            index,
            slot_size,
            slots_per_page,
            unswept_len: AtomicUsize::new(0),
            state: Mutex::new(PoolState {
                pages: Vec::new(),
                unswept: Vec::new(),
                available: Vec::new(),
                budget: policy.initial_pages(slots_per_page),
                decision: Decision::Initial,
                sweeping: false,
                minor: false,
                cycle_pages: 0,
                cycle_live: 0,
                cycle_free: 0,
                allocated_since_gc: 0,
                minor_allocated: 0,
                cycle_allocated: 0,
                forgotten: Vec::new(),
                c: PoolCounters::default(),
            }),
        }
    }

    /// Finds a page with free slots for a mutator: an available page, else
    /// a lazily swept one (at most `sweep_budget` pages swept while the pool
    /// is under its page budget; every unswept page first once it is at its
    /// budget), else a fresh page from the page resource, else — after
    /// sweeping everything left — `Exhausted`. Whether the heap should
    /// collect first is not the pool's question (`collect/heap_sizing.rs`).
    pub fn acquire(&self, cx: &mut SweepCtx<'_>, sweep_budget: usize) -> Acquired {
        let mut swept_here = 0;
        let mut must_sweep = false;
        loop {
            let mut st = self.state.lock();
            if let Some(p) = st.available.pop() {
                return Acquired::Page(p as usize);
            }
            let at_budget = st.pages.len() + st.unswept.len() >= st.budget;
            if swept_here < sweep_budget || at_budget || must_sweep {
                if let Some(p) = st.unswept.pop() {
                    self.unswept_len.store(st.unswept.len(), Relaxed);
                    drop(st);
                    swept_here += 1;
                    let r = self.sweep_one(cx, p as usize);
                    let mut st = self.state.lock();
                    let finished = self.record_sweep(&mut st, cx, r);
                    cx.finished_cycle |= finished;
                    st.pages.push(p);
                    if r.live < r.slots {
                        return Acquired::Page(p as usize);
                    }
                    continue;
                }
            }
            drop(st);
            match cx.resource.acquire_page(cx.table) {
                Some(p) => {
                    cx.table.desc(p).init_small(self.index, self.slot_size);
                    self.state.lock().pages.push(p as u32);
                    return Acquired::Page(p);
                }
                None if self.has_unswept() => must_sweep = true,
                None => return Acquired::Exhausted,
            }
        }
    }

    /// Sweeps one unswept page of this pool, if any ("a little of every
    /// pool"). Empty pages go back to the page resource. Returns whether a
    /// page was swept.
    pub fn sweep_step(&self, cx: &mut SweepCtx<'_>) -> bool {
        if !self.has_unswept() {
            return false;
        }
        let mut st = self.state.lock();
        let Some(p) = st.unswept.pop() else {
            return false;
        };
        self.unswept_len.store(st.unswept.len(), Relaxed);
        drop(st);
        let r = self.sweep_one(cx, p as usize);
        self.file_swept(cx, p, r, false);
        true
    }

    /// Background sweeping (`collect/background.rs`): sweeps one of the
    /// last [`AHEAD_WINDOW`] unswept pages that holds no object asking for
    /// cleanup (so no `on_free` runs: those pages are left to the
    /// mutators), and with `zero` clears its free slots — the whole page
    /// if none is left live — when it held pointer objects, so that the
    /// allocator hands them out without clearing them (`PageDesc::zeroed`).
    /// Returns the bytes cleared, or `None` if no such page was found.
    pub fn sweep_ahead(&self, cx: &mut SweepCtx<'_>, zero: bool) -> Option<usize> {
        if !self.has_unswept() {
            return None;
        }
        let mut st = self.state.lock();
        let n = st.unswept.len();
        let i = (n.saturating_sub(AHEAD_WINDOW)..n)
            .rev()
            .find(|&i| !cx.table.desc(st.unswept[i] as usize).has_cleanup())?;
        let p = st.unswept.swap_remove(i);
        self.unswept_len.store(st.unswept.len(), Relaxed);
        drop(st);
        // (No cleanup bit can be set on a dead slot now: a slot gets one
        // only while its object is live, and `has_cleanup` was clear after
        // the pause that found this page's dead.)
        let d = cx.table.desc(p as usize);
        let pointers = zero && d.holds_pointer_objects();
        let r = self.sweep_one(cx, p as usize);
        let mut zeroed = 0;
        if pointers && r.live < r.slots && !d.zeroed() {
            let base = cx.table.page_addr(p as usize);
            if r.live == 0 {
                // Empty: it may serve another size class next.
                cx.table.zero(base, PAGE_SIZE);
                zeroed = PAGE_SIZE;
            } else {
                let (n, size) = (d.slot_count(), d.slot_size());
                let mut from = 0;
                while let Some(first) = d.alloc.find(from, n, false) {
                    let end = d.alloc.find(first, n, true).unwrap_or(n);
                    cx.table.zero(base + first * size, (end - first) * size);
                    zeroed += (end - first) * size;
                    from = end;
                }
            }
            d.set_zeroed(true);
        }
        self.file_swept(cx, p, r, zeroed == PAGE_SIZE);
        Some(zeroed)
    }

    /// Files a page its caller swept: released when empty (kept known
    /// zeroed only if `zeroed`), else kept, and available if it has room.
    fn file_swept(&self, cx: &mut SweepCtx<'_>, p: u32, r: SweepResult, zeroed: bool) {
        let mut st = self.state.lock();
        let finished = self.record_sweep(&mut st, cx, r);
        cx.finished_cycle |= finished;
        if r.live == 0 {
            drop(st);
            self.release_page(cx, p as usize, zeroed);
        } else {
            st.pages.push(p);
            if r.live < r.slots {
                st.available.push(p);
            }
        }
    }

    /// Sweeps every remaining unswept page.
    pub fn finish_sweep(&self, cx: &mut SweepCtx<'_>) {
        while self.sweep_step(cx) {}
    }

    fn sweep_one(&self, cx: &mut SweepCtx<'_>, page: usize) -> SweepResult {
        cx.swept += 1;
        sweep_page(
            cx.table.desc(page),
            cx.table.page_addr(page),
            cx.sticky,
            cx.on_free,
            cx.poison.then_some(cx.table),
        )
    }

    /// Gives an empty page to the page resource, which hands it out again
    /// as known zeroed only if `zeroed` says so.
    fn release_page(&self, cx: &mut SweepCtx<'_>, page: usize, zeroed: bool) {
        let d = cx.table.desc(page);
        d.set_zeroed(zeroed);
        d.clear_bitmaps();
        d.set_kind(PageKind::Free);
        self.state.lock().c.pages_released += 1;
        cx.release.release(cx.resource, page);
    }

    /// Adds one page's sweep to the cycle; when it was the last unswept page,
    /// applies the growth policy. Returns whether the cycle finished.
    fn record_sweep(&self, st: &mut PoolState, cx: &SweepCtx<'_>, r: SweepResult) -> bool {
        st.cycle_live += r.live;
        st.cycle_free += r.free();
        st.c.freed_total += r.freed as u64;
        st.c.pages_swept += 1;
        self.finish_cycle_if_done(st, cx.policy)
    }

    /// Applies the growth policy once no unswept page is left. Returns
    /// whether the cycle finished now.
    fn finish_cycle_if_done(&self, st: &mut PoolState, policy: &GrowthPolicy) -> bool {
        if !st.sweeping || !st.unswept.is_empty() {
            return false;
        }
        st.sweeping = false;
        if st.minor {
            return true;
        }
        let sample = CycleSample {
            live_slots: st.cycle_live,
            free_slots: st.cycle_free,
            allocated_slots: st.cycle_allocated as usize,
            pages: st.cycle_pages,
            slots_per_page: self.slots_per_page,
            budget: st.budget,
        };
        (st.budget, st.decision) = crate::os::with_default_float_env(|| decide(policy, &sample));
        st.c.last_live = st.cycle_live;
        st.c.last_free = st.cycle_free;
        true
    }

    /// Appends the pool's unswept pages to `out` (for the release phase).
    pub fn unswept_pages(&self, out: &mut Vec<u32>) {
        out.extend_from_slice(&self.state.lock().unswept);
    }

    /// The release phase freed `pages` of this pool's unswept pages (now of
    /// kind `Free` and in the page resource), which held `freed` objects:
    /// drops them from the unswept list and counts them as swept; if no
    /// unswept page is left, the sweep cycle ends here (the growth policy
    /// decides).
    pub fn take_released(
        &self,
        table: &PageTable,
        pages: usize,
        freed: usize,
        policy: &GrowthPolicy,
    ) {
        let mut st = self.state.lock();
        st.unswept
            .retain(|&p| table.desc(p as usize).kind() != PageKind::Free);
        self.unswept_len.store(st.unswept.len(), Relaxed);
        st.cycle_free += pages * self.slots_per_page;
        st.c.freed_total += freed as u64;
        st.c.pages_swept += pages as u64;
        st.c.pages_released += pages as u64;
        self.finish_cycle_if_done(&mut st, policy);
    }

    /// Starts a new cycle after marking: every page becomes unswept — after
    /// a `minor` collection only the pages allocated into since the last
    /// collection (the others hold only old objects, all still marked).
    /// All mutators must have given their pages back (stop-the-world).
    pub fn begin_cycle(&self, table: &PageTable, minor: bool) {
        let mut st = self.state.lock();
        debug_assert!(st.unswept.is_empty(), "previous cycle not finished");
        let all = std::mem::take(&mut st.pages);
        let (pages, kept): (Vec<u32>, Vec<u32>) = if minor {
            all.into_iter()
                .partition(|&p| table.desc(p as usize).take_young())
        } else {
            for &p in &all {
                table.desc(p as usize).take_young();
            }
            (all, Vec::new())
        };
        for &p in &pages {
            table.desc(p as usize).set_unswept();
        }
        st.unswept = pages;
        st.pages = kept;
        if minor {
            // Pages that stay swept keep their place among the available.
            st.available
                .retain(|&p| !table.desc(p as usize).is_unswept());
        } else {
            st.available.clear();
        }
        st.minor = minor;
        st.cycle_pages = st.unswept.len();
        st.cycle_live = 0;
        st.cycle_free = 0;
        // A full cycle's growth decision counts what was allocated since
        // the last full collection, minor cycles included.
        let allocated = std::mem::take(&mut st.allocated_since_gc);
        if minor {
            st.minor_allocated += allocated;
            st.cycle_allocated = allocated;
        } else {
            st.cycle_allocated = allocated + std::mem::take(&mut st.minor_allocated);
        }
        st.sweeping = !st.unswept.is_empty();
        self.unswept_len.store(st.unswept.len(), Relaxed);
        if !st.sweeping && !minor {
            // Nothing to sweep: the cycle is complete at once.
            st.c.last_live = 0;
            st.c.last_free = 0;
        }
    }

    /// Compaction took `page` (a fresh page, initialised for this pool) to
    /// move objects into.
    pub fn adopt_page(&self, page: usize) {
        self.state.lock().pages.push(page as u32);
    }

    /// Compaction moved `slots` objects into this pool: they count as
    /// allocated here (their old slots are freed by sweeping).
    pub fn note_moved_in(&self, slots: u64) {
        let mut st = self.state.lock();
        st.c.allocated_total = st.c.allocated_total.wrapping_add(slots);
    }

    /// A mutator gives back its current page (it may still have free slots).
    pub fn return_page(&self, page: usize, has_free: bool) {
        if has_free {
            self.state.lock().available.push(page as u32);
        }
    }

    /// A mutator reports slots it handed out (negative: reserved but unused).
    pub fn note_allocated(&self, slots: i64) {
        let mut st = self.state.lock();
        st.allocated_since_gc = st.allocated_since_gc.wrapping_add_signed(slots);
        st.c.allocated_total = st.c.allocated_total.wrapping_add_signed(slots);
    }

    /// Takes the explicitly freed slots a mutator flushed without reusing.
    pub fn forget_freed(&self, slots: impl Iterator<Item = usize>) {
        self.state.lock().forgotten.extend(slots);
    }

    /// Pause, every page swept (alloc bits exact, no mutator running):
    /// the slots given to [`SizePool::forget_freed`] become free slots, so
    /// that a stale ambiguous word finds no object there. A pointer-free
    /// slot was not cleared when freed: its page is no longer all-zero in
    /// its free slots.
    pub fn reclaim_forgotten(&self, table: &PageTable) {
        let mut st = self.state.lock();
        if st.forgotten.is_empty() {
            return;
        }
        let mut n = 0;
        let mut forgotten = std::mem::take(&mut st.forgotten);
        for &addr in &forgotten {
            let (d, slot) = table.small_slot(addr);
            if !d.alloc.get(slot) {
                // Listed twice (two threads freed it at the same instant,
                // a misuse the free's check can miss): freed already.
                continue;
            }
            // Its first word goes back to 0: no free slot keeps a tag (a
            // later object in the slot, uncleared, would look freed; a
            // cleared slot's page must stay zero in its free slots).
            table.untag_freed(addr);
            if d.no_pointers.get(slot) {
                d.set_zeroed(false);
            }
            d.alloc.clear(slot);
            // No ephemeron is ever freed explicitly (`api/free.rs`).
            d.clear_object_bits(slot / 64, 1 << (slot % 64), false);
            n += 1;
        }
        // (The list's memory is kept for the next cycle's frees.)
        forgotten.clear();
        st.forgotten = forgotten;
        st.allocated_since_gc = st.allocated_since_gc.saturating_sub(n);
        st.c.allocated_total = st.c.allocated_total.wrapping_sub(n);
    }

    /// Records the duration of one lazy sweep step.
    pub fn note_sweep_step(&self, d: Duration) {
        let mut st = self.state.lock();
        st.c.longest_sweep_step = st.c.longest_sweep_step.max(d);
    }

    #[inline]
    pub fn has_unswept(&self) -> bool {
        self.unswept_len.load(Relaxed) != 0
    }

    /// Pages the pool may hold before it must sweep all its pages before
    /// taking a fresh one.
    #[cfg(test)]
    pub fn budget_pages(&self) -> usize {
        self.state.lock().budget
    }

    /// Every page of the pool (swept or not).
    pub fn pages(&self) -> Vec<usize> {
        let st = self.state.lock();
        st.pages
            .iter()
            .chain(&st.unswept)
            .map(|&p| p as usize)
            .collect()
    }

    /// A snapshot for stats.
    pub fn snapshot(&self) -> (usize, usize, usize, Decision, PoolCounters) {
        let st = self.state.lock();
        (
            st.pages.len() + st.unswept.len(),
            st.unswept.len(),
            st.budget,
            st.decision,
            st.c,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: GrowthPolicy = GrowthPolicy {
        initial_slots: 4096,
        factor: 2.0,
        max_growth_bytes: 0,
        free_min: 0.2,
        free_goal: 0.4,
        free_max: 0.65,
        stable_ratio: 0.1,
    };

    fn ctx<'a>(
        t: &'a PageTable,
        r: &'a PageResource,
        rel: &'a mut ReleaseBuffer,
        on_free: &'a mut dyn FnMut(usize),
    ) -> SweepCtx<'a> {
        SweepCtx {
            table: t,
            resource: r,
            release: rel,
            on_free,
            policy: &POLICY,
            finished_cycle: false,
            swept: 0,
            sticky: false,
            poison: false,
        }
    }

    #[test]
    fn pool_at_budget_sweeps_everything_before_taking_fresh_pages() {
        let t = PageTable::new(64).unwrap();
        let r = PageResource::new(&t, t.npages());
        let mut rel = ReleaseBuffer::default();
        // 4096 initial slots of 64 B = 4 pages of 1024 slots.
        let pool = SizePool::new(0, 64, &POLICY);
        let mut got = vec![];
        let mut nop = |_| {};
        let mut cx = ctx(&t, &r, &mut rel, &mut nop);
        for _ in 0..4 {
            match pool.acquire(&mut cx, 2) {
                Acquired::Page(p) => {
                    t.desc(p).alloc.set_range(0, 1024);
                    got.push(p)
                }
                other => panic!("{other:?}"),
            }
        }
        pool.note_allocated(4096);
        // "Mark" half of page 0 and nothing of the others; start a cycle.
        t.desc(got[0]).mark.set_range(0, 512);
        pool.begin_cycle(&t, false);
        // The lazy sweep finds free slots on the first page it sweeps.
        let Acquired::Page(p) = pool.acquire(&mut cx, 2) else {
            panic!()
        };
        assert_eq!(
            t.desc(p).alloc.count() + t.desc(p).mark.count(),
            if p == got[0] { 512 } else { 0 }
        );
        // Sweeping the rest releases the three empty pages and finishes the cycle.
        pool.finish_sweep(&mut cx);
        assert!(cx.finished_cycle);
        cx.release.flush(&r);
        let (pages, unswept, budget, decision, c) = pool.snapshot();
        assert_eq!(unswept, 0);
        assert_eq!(c.freed_total, 4096 - 512);
        assert_eq!((c.last_live, c.last_free), (512, 4096 - 512));
        assert_eq!(
            decision,
            Decision::Keep,
            "87% free, but the budget is already the initial one"
        );
        assert_eq!(budget, 4);
        assert!(pages <= 2, "empty pages released: {pages}");
        assert!(r.dirty_pages() >= 2);
    }

    #[test]
    fn a_pool_at_budget_with_nothing_to_sweep_still_gets_pages_until_exhaustion() {
        let t = PageTable::new(2).unwrap();
        let r = PageResource::new(&t, t.npages());
        let mut rel = ReleaseBuffer::default();
        let mut nop = |_| {};
        let mut cx = ctx(&t, &r, &mut rel, &mut nop);
        let policy = GrowthPolicy {
            initial_slots: 1,
            ..POLICY
        };
        let pool = SizePool::new(0, 8192, &policy); // 8 slots per page, budget 1 page
        assert_eq!(pool.budget_pages(), 1);
        assert!(matches!(pool.acquire(&mut cx, 1), Acquired::Page(0)));
        assert!(matches!(pool.acquire(&mut cx, 1), Acquired::Page(1)));
        assert_eq!(pool.acquire(&mut cx, 1), Acquired::Exhausted);
    }

    #[test]
    fn a_pool_at_budget_sweeps_all_its_pages_before_taking_a_fresh_one() {
        let t = PageTable::new(16).unwrap();
        let r = PageResource::new(&t, t.npages());
        let mut rel = ReleaseBuffer::default();
        let mut nop = |_| {};
        let mut cx = ctx(&t, &r, &mut rel, &mut nop);
        let pool = SizePool::new(
            0,
            8192,
            &GrowthPolicy {
                initial_slots: 32,
                ..POLICY
            },
        ); // budget 4
        let mut got = vec![];
        for _ in 0..4 {
            let Acquired::Page(p) = pool.acquire(&mut cx, 1) else {
                panic!()
            };
            t.desc(p).alloc.set_range(0, 8);
            got.push(p);
        }
        // Every page full and marked except the first, which gets one free
        // slot (the lazy sweep takes the last pages first).
        for &p in &got {
            t.desc(p).mark.set_range(0, 8);
        }
        t.desc(got[0]).mark.clear(7);
        pool.begin_cycle(&t, false);
        // At its budget, the pool sweeps past the sweep budget (1) to the
        // page with a free slot instead of taking a fresh page.
        let Acquired::Page(p) = pool.acquire(&mut cx, 1) else {
            panic!()
        };
        assert_eq!(p, got[0]);
        assert_eq!(cx.swept, 4);
    }
}
