//! The allocation slow path: a new run or page, the heap's collection
//! trigger, and what an allocation does when the heap is full.
//!
//! Invariant: an allocation reports out of memory only when a collection
//! it ran itself left no page for it (after sweeping everything, inside
//! that pause), no other thread is in the middle of a sweep (whose freed
//! pages are not visible yet) and no other collection has happened or is
//! pending since. The thread that collects because the heap is full takes
//! its memory before the world resumes, so other threads cannot use up
//! what that collection freed first. A thread that only waited for another
//! thread's collection proves nothing by finding the heap full again
//! afterwards (the others may have refilled it while it was not running):
//! it collects itself next.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use crate::alloc::context;
use crate::collect::{in_callback, run_collection, GcReason, HeapCore, PanicSlot};
use crate::embedder::Embedder;
use crate::error::Error;
use crate::flags::AllocFlags;
use crate::object::ObjRef;
use crate::pool::Acquired;

use super::{Mutator, PauseGuard, REPORT_BYTES};

/// Most collections one allocation runs after finding the heap full, when
/// other threads keep refilling it.
const MAX_FULL_COLLECTIONS: u32 = 4;

/// Most collections of other threads one allocation waits for after
/// finding the heap full (a bound against livelock, far above what
/// contention needs: each wait is followed by a try to collect itself).
const MAX_WAITED_COLLECTIONS: u32 = 64;

/// What one allocation has done about a full heap.
#[derive(Default)]
struct Exhaustion {
    /// Collections this thread ran because no page was left.
    collections: u32,
    /// Collections it waited for instead (another thread was collecting).
    waited: u32,
    /// The collection count after the last collection it ran; `None` after
    /// waiting for another thread's.
    after: Option<u64>,
    /// Full collections it forced past its limits because the last
    /// collection was minor (generational mode).
    forced_full: u32,
}

/// What one step of the small-object slow path found.
enum Step {
    /// A new run is the context's current run.
    Run,
    /// A page from the sweep is the context's current page.
    Page,
    /// The pool has no page: the heap is full.
    Exhausted,
}

/// What to do after finding the heap full.
enum Full<T> {
    /// The memory was taken inside the collection's pause.
    Took(T),
    /// Something changed: try the ordinary path again.
    Retry,
    OutOfMemory,
}

impl<E: Embedder> Mutator<E> {
    pub(super) fn alloc_small(
        &mut self,
        class: usize,
        flags: AllocFlags,
        size: usize,
    ) -> Result<ObjRef, Error> {
        // The run may have room: the caller came here for another reason
        // (a safepoint, an embedder's own fast path that called in), and
        // a one-slot run of a freed slot must not be overwritten.
        if let Some(o) = self.bump(class, flags) {
            return Ok(o);
        }
        if let Some(o) = self.reuse_freed(class, flags) {
            return Ok(o);
        }
        let ctx = context(class, flags);
        // A detached run these flags may not take (they write side bits)
        // is given back before a new run replaces it.
        {
            let core = &self.heap.core;
            self.local
                .detached_to_list(&core.table, ctx, &core.pools[class]);
        }
        let mut triggered = false;
        let mut exhausted = Exhaustion::default();
        loop {
            let seen = self.heap.core.counters.collections.load(Relaxed);
            let due = self.report_and_due();
            if !triggered && due && heap_allows_collection(&self.heap) {
                self.collect_for(GcReason::Allocation, Some(seen));
                triggered = true;
            }
            match self.next_run_or_page(class, ctx) {
                Step::Run => {
                    if let Some(o) = self.bump(class, flags) {
                        return Ok(o);
                    }
                    unreachable!("a new run has a free slot");
                }
                Step::Page => continue,
                Step::Exhausted => {}
            }
            triggered = true;
            // In the pause: sweep this pool for a page (as deep as needed).
            let take = |m: &mut Self| {
                let core = &m.heap.core;
                let swept = core.with_sweeper(|cx| core.pools[class].acquire(cx, usize::MAX));
                let got = match swept.value {
                    Acquired::Page(p) => {
                        m.local.set_page(ctx, p);
                        Some(())
                    }
                    Acquired::Exhausted => None,
                };
                (got, swept.panic)
            };
            match self.retry_exhausted(&mut exhausted, take) {
                Full::Took(()) | Full::Retry => {}
                Full::OutOfMemory => return Err(self.out_of_memory(size)),
            }
        }
    }

    /// Reports the bytes allocated to the heap's allowance when enough
    /// have gathered; returns whether a collection is due.
    ///
    /// A run counts whole when it is taken. With many size classes in use
    /// and a small allowance, the unused rest of this thread's runs can be
    /// most of what counts (a C program allocating objects of 50 sizes on
    /// a 256 KiB heap collected after about 70 allocations, 7× as often as
    /// bdwgc): a collection is due only if it still is without them.
    #[inline]
    fn report_and_due(&mut self) -> bool {
        let core = &self.heap.core;
        if self.local.pending_bytes() >= REPORT_BYTES {
            core.sizer.add(self.local.take_bytes());
        }
        core.sizer.due() && self.due_without_unused_runs()
    }

    /// [`HeapSizer::due`] without this thread's reserved, unused run
    /// bytes (those not yet reported are not counted there either).
    #[cold]
    fn due_without_unused_runs(&mut self) -> bool {
        let table = &self.heap.core.table;
        let credit = self
            .local
            .unused_run_bytes(table)
            .saturating_sub(self.local.pending_bytes());
        self.heap.core.sizer.due_with_credit(credit)
    }

    /// The next run of context `ctx` (class `class`): from its current
    /// page, else a page from the pool's sweep step (made the current
    /// page: call again). It borrows the heap through the field, so the
    /// common slow path takes no handle of its own (cloning the `Arc` is
    /// two locked instructions: about 2% of a GCBench run).
    fn next_run_or_page(&mut self, class: usize, ctx: usize) -> Step {
        let core = &self.heap.core;
        if self.local.next_run(&core.table, ctx, core.sizer.max_run()) {
            return Step::Run;
        }
        let pool = &core.pools[class];
        self.local.report(ctx, pool);
        let started = Instant::now();
        let swept = core.with_sweeper(|cx| {
            let a = pool.acquire(cx, core.config.sweep_step_pages);
            core.sweep_another_pool(cx, class);
            a
        });
        if swept.pages > 0 {
            let step = started.elapsed();
            pool.note_sweep_step(step);
            core.counters.record_sweep_step(step);
        }
        // Once the page is ours (or there is none) the pool is
        // consistent: an on_free panic may continue then.
        let step = match swept.value {
            Acquired::Page(p) => {
                self.local.set_page(ctx, p);
                Step::Page
            }
            Acquired::Exhausted => Step::Exhausted,
        };
        swept.panic.resume();
        step
    }

    pub(super) fn alloc_large(&mut self, size: usize, flags: AllocFlags) -> Result<ObjRef, Error> {
        let heap = self.heap.clone();
        let core = &heap.core;
        let max = core.max_heap();
        if size > max {
            return Err(Error::TooLarge {
                requested: size,
                max,
            });
        }
        let mut triggered = false;
        let mut exhausted = Exhaustion::default();
        loop {
            let seen = core.counters.collections.load(Relaxed);
            if !triggered && core.sizer.would_exceed(size as u64) && heap_allows_collection(&heap) {
                self.collect_for(GcReason::Allocation, Some(seen));
            }
            if let Some(a) = core.alloc_large(size, flags) {
                return Ok(ObjRef::from_addr(a));
            }
            triggered = true;
            let take = |_: &mut Self| (core.alloc_large(size, flags), PanicSlot::default());
            match self.retry_exhausted(&mut exhausted, take) {
                Full::Took(a) => return Ok(ObjRef::from_addr(a)),
                Full::Retry => {}
                Full::OutOfMemory => return Err(self.out_of_memory(size)),
            }
        }
    }

    /// The page resource had no page for this allocation: makes room if
    /// anything can. In order: sweep what is unswept; wait for other
    /// threads' sweeps to end; collect (`HeapLimit`) and, still in the
    /// pause, `take` the memory (after sweeping everything if need be).
    /// Collects again only if another collection happened or is pending
    /// since its last one (other threads kept allocating), at most
    /// [`MAX_FULL_COLLECTIONS`] times.
    #[cold]
    fn retry_exhausted<T>(
        &mut self,
        e: &mut Exhaustion,
        mut take: impl FnMut(&mut Self) -> (Option<T>, PanicSlot),
    ) -> Full<T> {
        let heap = self.heap.clone();
        let core = &heap.core;
        if core.has_unswept() {
            core.finish_sweeping().resume();
            return Full::Retry;
        }
        if core.sweeping_elsewhere() {
            self.wait_for_sweepers();
            return Full::Retry;
        }
        let now = core.counters.collections.load(Relaxed);
        // After a minor collection old garbage may remain: once this
        // allocation has seen a collection and still finds no room, the
        // heap is called full only after a full one (the next is made full,
        // past this allocation's limits a bounded number of times).
        let seen = e.collections + e.waited > 0;
        let last_minor =
            seen && core.generations.last_was_minor() && e.forced_full < MAX_FULL_COLLECTIONS;
        let another = e.after != Some(now) || heap.world.requested() || last_minor;
        let limits = e.collections >= MAX_FULL_COLLECTIONS || e.waited >= MAX_WAITED_COLLECTIONS;
        if !another || (limits && !last_minor) {
            return Full::OutOfMemory;
        }
        if last_minor {
            core.generations.force_full();
            if limits {
                e.forced_full += 1;
            }
        }
        let mut panic = PanicSlot::default();
        let took = self.collect_then(GcReason::HeapLimit, None, |m| {
            let (mut got, p) = take(m);
            panic.merge(p);
            if got.is_none() && core.has_unswept() {
                panic.merge(core.finish_sweeping());
                let (again, p) = take(m);
                panic.merge(p);
                got = again;
            }
            got
        });
        if took.is_some() {
            e.collections += 1;
            e.after = Some(core.counters.collections.load(Relaxed));
        } else {
            e.waited += 1;
            e.after = None;
        }
        // Whatever was taken is consistent (a page is the mutator's, a
        // large object allocated): an on_free panic may continue.
        panic.resume();
        match took.flatten() {
            Some(t) => Full::Took(t),
            None => Full::Retry,
        }
    }

    /// The page resource is empty while another thread sweeps: the pages
    /// it is sweeping or has buffered for release are not visible yet, so
    /// the heap is not known to be full. Yields (answering a collection
    /// request) until that sweeper is done, then the caller retries.
    #[cold]
    fn wait_for_sweepers(&mut self) {
        while self.heap.core.sweeping_elsewhere() {
            self.safepoint();
            std::thread::yield_now();
        }
    }

    fn out_of_memory(&self, requested: usize) -> Error {
        Error::OutOfMemory {
            requested,
            max_heap: self.heap.core.max_heap(),
        }
    }

    /// Collects for `reason`, unless `seen` (the collection count when an
    /// allocation found the heap due) shows that another thread collected
    /// since: then that collection was this one.
    pub(crate) fn collect_for(&mut self, reason: GcReason, seen: Option<u64>) {
        self.collect_then(reason, seen, |_| ());
    }

    /// [`Mutator::collect_for`], then `then` before the world resumes, if
    /// this thread ran the pause (`None` if it waited out another thread's
    /// collection instead).
    fn collect_then<R>(
        &mut self,
        reason: GcReason,
        seen: Option<u64>,
        then: impl FnOnce(&mut Self) -> R,
    ) -> Option<R> {
        self.ensure_attached();
        let heap = self.heap.clone();
        let core = &heap.core;
        if seen.is_some_and(|n| n != core.counters.collections.load(Relaxed)) {
            // Another thread collected since the caller looked: no pause
            // (one that would collect nothing).
            return None;
        }
        // The previous cycle's sweep is finished before the world stops:
        // `on_free` then runs with the world running (a drop-in's may be a
        // C program's code, which could wait for a lock a stopped thread
        // holds), and the pause has less to do.
        if core.has_unswept() {
            core.finish_sweeping_before_pause().resume();
        }
        core.sizer.add(self.local.flush(&core.table, &core.pools));
        let stop_start = Instant::now();
        let mut out = None;
        self.link.roots.record_stack();
        if heap.world.stop(self.link.id) {
            core.quiesce_background();
            // Declared before the resume guard, so dropped after it: what
            // the pause left to decommit goes back to the OS once the
            // world runs again, on this thread (the others run meanwhile),
            // on every way out of the pause, a panic's included; then
            // background sweeping starts.
            let _trim = TrimWhenResumed(core);
            heap.flush_signal_parked();
            core.span("stop", stop_start, None);
            let _resume = PauseGuard(&heap.world, core.timeline.as_ref());
            let done = core.counters.collections.load(Relaxed);
            if seen.map_or(true, |n| n == done) {
                let tables = heap.live_root_tables();
                run_collection(core, &tables, reason, stop_start);
            }
            out = Some(then(self));
        }
        // The world runs again: tell the embedder finalizers are waiting.
        if core.finalizers.take_queued() {
            heap.notify_finalizers();
        }
        out
    }

    /// Runs `f` with the world stopped, every page swept (alloc bits
    /// exact) and every explicitly freed slot free, without collecting:
    /// for heap dumps. `f` runs as a collector
    /// callback (it cannot allocate).
    pub(crate) fn with_world_stopped<R>(&mut self, f: impl FnOnce(&HeapCore<E>) -> R) -> R {
        self.stop_world();
        let heap = self.heap.clone();
        let core = &heap.core;
        let resume = PauseGuard(&heap.world, core.timeline.as_ref());
        let panic = in_callback(|| core.finish_sweeping());
        // Every mutator flushed its freed slots: as a pause does before it
        // marks, make them free slots, so that `f` sees no freed object
        // (whose first word holds its free tag).
        for pool in core.pools.iter() {
            pool.reclaim_forgotten(&core.table);
        }
        let r = in_callback(|| f(core));
        drop(resume);
        panic.resume();
        r
    }
}

/// Whether the embedder's gate (`Heap::set_collection_gate`) lets a
/// collection the allocation rate made due start now.
#[cold]
fn heap_allows_collection<E: Embedder>(heap: &super::HeapInner<E>) -> bool {
    heap.collection_gate.read().as_ref().map_or(true, |g| g())
}

/// Decommits what the pause left (`HeapCore::trim_after_pause`), then
/// starts background sweeping, when dropped.
struct TrimWhenResumed<'a, E: Embedder>(&'a HeapCore<E>);

impl<E: Embedder> Drop for TrimWhenResumed<'_, E> {
    fn drop(&mut self) {
        self.0.trim_after_pause();
        self.0.kick_background_sweep();
    }
}
