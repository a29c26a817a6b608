//! Background sweeping: after a pause, a GC worker sweeps the pools'
//! unswept pages ahead of the mutators, and clears the free slots of the
//! pages that held pointer objects, on a CPU the mutators leave idle.
//!
//! A program with fewer allocating threads than CPUs otherwise sweeps and
//! clears every page it reuses on its own thread, in allocation slow paths
//! (clearing reused runs was 14–17% of GCBench's time, BENCHMARKS.md).
//! Here the first pool thread (`sched/workers.rs`, its background job)
//! takes pages from the end of each pool's unswept list, sweeps them as a
//! lazy sweep would, clears what is free, marks the page
//! [`PageDesc::zeroed`](crate::space::PageDesc::zeroed) and files it (free
//! slots: among the pool's available pages; empty: to the page resource,
//! known cleared). The allocator then hands those slots out without
//! clearing them. It is kicked at the end of every pause while the heap
//! sizer counts fewer running mutators than CPUs
//! ([`HeapSizer::leaves_a_cpu_idle`](super::heap_sizing::HeapSizer::leaves_a_cpu_idle))
//! and `Config::background_sweep` is on.
//!
//! Invariants:
//! - **No page is held across a pause.** The job counts itself in
//!   `HeapCore::background_in_flight` before it takes a page and looks
//!   at the world's stop request after (both sequentially consistent);
//!   whoever stops the world calls [`HeapCore::quiesce_background`],
//!   which waits for the count to fall to zero. So a page is swept and
//!   filed (its released pages flushed to the page resource) either wholly
//!   before the pause looks at the pools, or not taken at all. The job
//!   then returns and is kicked again after the pause. Before `fork` the
//!   pool's job is suspended and waited out
//!   (`Workers::suspend_background`), so the child inherits no count, no
//!   held lock and no half-filed page.
//! - **A page being cleared is in use.** `PageResource::take_dirty_to_clear`
//!   counts it against the maximum until `put_cleared`: committed memory
//!   stays within the maximum heap.
//! - **No embedder code runs on the job.** Pages with objects that ask for
//!   cleanup (`PageDesc::has_cleanup`) are left to the mutators, so
//!   `on_free` never runs there: a slot gets a cleanup bit only while its
//!   object is live, and the page's flag was clear when the job took it.
//! - **A page marked zeroed has every free slot cleared**, as for pages
//!   fresh from the OS. Verify mode does not clear (its sweep's poison
//!   must stay visible).

use std::sync::atomic::{fence, AtomicUsize, Ordering};
use std::time::Instant;

use super::callbacks::{in_callback, PanicSlot};
use super::heap::{HeapCore, SweeperGuard};
use crate::embedder::Embedder;
use crate::object::ObjRef;
use crate::pool::SweepCtx;
use crate::space::{ReleaseBuffer, PAGE_SIZE};

/// Counts the background job in `HeapCore::background_in_flight` while it
/// holds a page; dropped (also when a panic unwinds) it counts out, so a
/// pause never waits for a page nobody holds.
struct InFlight<'a>(&'a AtomicUsize);

impl<'a> InFlight<'a> {
    /// Counted in, then (both sequentially consistent) the caller looks at
    /// the world's stop request: a stopper that reads the count after
    /// setting its request either sees this or is seen.
    fn enter(n: &'a AtomicUsize) -> Self {
        n.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        InFlight(n)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

impl<E: Embedder> HeapCore<E> {
    /// The background job: sweeps ahead until no pool has an unswept page
    /// it may take, `stop()` (a phase or shutdown) or `world_stopping()`
    /// (a pause asked for) turns true.
    pub fn sweep_in_background(&self, world_stopping: &dyn Fn() -> bool, stop: &dyn Fn() -> bool) {
        let start = Instant::now();
        let mut release = ReleaseBuffer::default();
        let mut panic = PanicSlot::default();
        // (Never called: see the module invariants.)
        let mut on_free = |a: usize| {
            debug_assert!(false, "on_free from background sweeping");
            panic.call(|| self.embedder.on_free(ObjRef::from_addr(a)));
        };
        let mut cx = SweepCtx {
            table: &self.table,
            resource: &self.resource,
            release: &mut release,
            on_free: &mut on_free,
            policy: &self.policy,
            finished_cycle: false,
            swept: 0,
            sticky: self.config.generational,
            poison: self.config.verify,
        };
        let zero = !self.config.verify;
        let n = self.pools.len();
        let (mut k, mut empty_pools) = (0, 0);
        let (mut pages, mut zeroed) = (0u64, 0u64);
        let flight = &self.background_in_flight;
        while empty_pools < n && !stop() {
            let held = InFlight::enter(flight);
            if world_stopping() {
                break;
            }
            // Counted as a sweeper for the page, as a lazy sweep is: a
            // mutator that finds no free page waits for it instead of
            // collecting.
            let sweeping = SweeperGuard::enter(&self.sweepers);
            // A dirty free page first (pools take them when their budget
            // lets them grow), then a page of the next pool.
            let cleared = zero && self.clear_a_dirty_page();
            let got = in_callback(|| self.pools[k].sweep_ahead(&mut cx, zero));
            cx.release.flush(&self.resource);
            drop(sweeping);
            drop(held);
            if cleared {
                pages += 1;
                zeroed += PAGE_SIZE as u64;
                empty_pools = 0;
            }
            match got {
                Some(bytes) => {
                    pages += 1;
                    zeroed += bytes as u64;
                    empty_pools = 0;
                }
                None => {
                    k = (k + 1) % n;
                    empty_pools += 1;
                }
            }
        }
        if pages > 0 {
            self.counters
                .record_background_sweep(start.elapsed(), pages, zeroed);
            self.span("background sweep", start, Some(("pages", pages)));
        }
        // (A panic here would be the embedder's, which cannot happen; the
        // pool thread would drop it.)
        panic.resume();
    }

    /// Clears one dirty free page of the page resource and queues it as
    /// cleared. False if none is queued.
    fn clear_a_dirty_page(&self) -> bool {
        let Some(p) = self.resource.take_dirty_to_clear() else {
            return false;
        };
        self.table.zero(self.table.page_addr(p), PAGE_SIZE);
        self.table.desc(p).set_zeroed(true);
        self.resource.put_cleared(&self.table, p);
        true
    }

    /// With the world stopped (after `World::stop` returned true): waits
    /// until background sweeping holds no page. It takes none until the
    /// world resumes.
    pub fn quiesce_background(&self) {
        fence(Ordering::SeqCst);
        self.wait_for_background_page();
    }

    /// Waits until the page background sweeping holds, if any, is swept
    /// and filed (with the world running it may take another one after).
    pub fn wait_for_background_page(&self) {
        crate::sched::spin_until(|| self.background_in_flight.load(Ordering::Acquire) == 0);
    }

    /// After a pause, with the world running: starts background sweeping
    /// if it is on, some pool has unswept pages and a CPU is left idle.
    pub fn kick_background_sweep(&self) {
        if self.config.background_sweep
            && self.has_unswept()
            && crate::os::with_default_float_env(|| self.sizer.leaves_a_cpu_idle())
        {
            self.workers.kick_background();
        }
    }
}
