//! Heap statistics, in the spirit of Ruby's `GC.stat` / `GC.stat_heap`.

use std::fmt;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use crate::collect::{
    CompactionStats, Distribution, FreeTotals, GcCounters, HeapCore, HeapDecision,
};
use crate::config::HeapPolicy;
use crate::embedder::Embedder;
use crate::os::rss_bytes;
use crate::pool::Decision;
use crate::sched::World;
use crate::space::{LargeStats, PAGE_SIZE};

/// A snapshot of a heap's statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// Collections so far.
    pub collections: u64,
    /// Total time spent marking.
    pub mark_time: Duration,
    /// Total time spent sweeping (in pauses and lazily in allocation slow paths).
    pub sweep_time: Duration,
    /// Every stop-the-world pause.
    pub pauses: Distribution,
    /// Generational mode: minor collections and their pauses (included
    /// in `collections` and `pauses`), full collections, objects traced
    /// from the remembered set and unbarriered old objects rescanned (over
    /// all minor collections), and objects write barriers logged.
    pub minor_collections: u64,
    pub minor_pauses: Distribution,
    pub full_collections: u64,
    pub remembered_objects: u64,
    pub rescanned_objects: u64,
    /// Every lazy sweep step an allocation took.
    pub sweep_steps: Distribution,
    /// Pages background sweeping swept or cleared between pauses
    /// (`Config::background_sweep`).
    pub background_pages: u64,
    /// Bytes background sweeping cleared ahead of the allocator.
    pub background_cleared_bytes: u64,
    /// Of each pause, the time from the stop request until every mutator
    /// had reached a safepoint (included in `pauses`).
    pub time_to_safepoint: Distribution,
    /// Of each pause, the release phase: the GC workers giving empty pages
    /// and dead large objects back to the page resource (included in
    /// `pauses` and in `sweep_time`).
    pub release_phases: Distribution,
    /// Empty pages the last release phase gave back.
    pub last_released_pages: u64,
    /// Compactions so far, the last one, and all of them summed.
    pub compactions: u64,
    pub last_compaction: CompactionStats,
    pub compaction_totals: CompactionStats,
    /// Explicit frees (`Mutator::free`) whose memory was reusable at once,
    /// their bytes (slot sizes; a large object's whole pages), those on a
    /// page not yet swept (the lazy sweep frees them), and those left to
    /// the next collection.
    pub freed_now: u64,
    pub freed_now_bytes: u64,
    pub freed_at_sweep: u64,
    pub frees_deferred: u64,
    /// Objects pinned with `Mutator::pin` (not counting `PINNED`
    /// allocations).
    pub pinned_objects: usize,
    /// The heap policy deciding when to collect.
    pub heap_policy: HeapPolicy,
    /// The heap target now: the next collection is due when the bytes
    /// allocated since the last one reach `heap_target − live bytes`.
    pub heap_target: usize,
    /// Bytes allocated since the last collection (as mutators reported them;
    /// each may hold up to 32 KiB not yet counted).
    pub allocated_since_gc: u64,
    /// What the policy decided at the end of the last collection: live
    /// bytes, the new target and allowance, the allocation rate and
    /// collection speed it measured. `None` before the first collection.
    pub last_heap_decision: Option<HeapDecision>,
    /// Objects marked by the last collection (the live objects it found,
    /// plus those kept for their finalizers; after a minor collection, the
    /// young objects it kept).
    pub last_marked: u64,
    /// The bytes found live by the last collection (slot sizes; a large
    /// object's whole pages); after a minor collection, the bytes believed
    /// live: the old generation, old garbage included, plus what it kept.
    pub last_marked_bytes: u64,
    /// Weak handles alive, weak slots registered, ephemerons not yet
    /// reclaimed.
    pub weak_handles: usize,
    pub weak_slots: usize,
    pub ephemerons: usize,
    /// Finalizers registered (not yet queued), and queued but not run.
    pub finalizers_registered: usize,
    pub finalizers_pending: usize,
    /// One entry per size pool.
    pub pools: Vec<PoolStats>,
    pub large: LargeStats,
    /// Heap memory touched since its last decommit (pages in use or cached).
    /// Never more than `max_heap`.
    pub committed_bytes: usize,
    /// Free pages given back to the OS (decommitted) since the heap was
    /// created, in bytes: the heap shrank, or a large object needed a span.
    pub decommitted_bytes: u64,
    /// The heap's maximum size: it bounds `committed_bytes` (object pages),
    /// not the side metadata below.
    pub max_heap: usize,
    /// Memory of the page descriptors touched so far (side bitmaps and page
    /// geometry, 1.6 KiB per page ever used, 2.5%). Outside `max_heap`. An
    /// upper bound: the descriptors of free pages given back to the OS go
    /// with them, in whole OS pages.
    pub metadata_bytes: usize,
    /// Collections that waited longer than the stall warning for mutators
    /// to reach a safepoint (each printed which ones on stderr).
    pub stall_warnings: u64,
    /// Resident set size of the whole process.
    pub rss_bytes: usize,
}

/// The heap's running counters, cheap to read (a few atomic loads; no
/// histogram, no RSS): for embedders that ask often (`GC_get_heap_size`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    pub collections: u64,
    pub committed_bytes: usize,
    pub heap_target: usize,
    pub allocated_since_gc: u64,
    pub last_marked_bytes: u64,
}

/// Statistics of one size pool.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolStats {
    pub slot_size: usize,
    /// Pages the pool holds.
    pub pages: usize,
    /// Of those, pages not yet swept since the last collection.
    pub unswept_pages: usize,
    /// Pages the pool may hold before it must sweep all of its pages
    /// before taking a fresh one (the pool's share; it never triggers a
    /// collection).
    pub budget_pages: usize,
    /// How the growth policy last set the budget.
    pub last_decision: Decision,
    /// Slots allocated now (handed out minus freed; garbage on unswept pages
    /// counts until swept).
    pub live_slots: u64,
    /// Free slots on the pool's pages.
    pub free_slots: u64,
    /// Slots handed out since the heap was created.
    pub allocated_total: u64,
    /// Slots freed since the heap was created.
    pub freed_total: u64,
    /// Live and free slots found by the last completed sweep cycle.
    pub last_sweep_live: usize,
    pub last_sweep_free: usize,
    /// Empty pages given back to the page resource since the heap was
    /// created (by the pause's release phase or by sweeping).
    pub pages_released: u64,
    /// Longest lazy sweep step taken while allocating from this pool.
    pub longest_sweep_step: Duration,
}

impl Counters {
    pub(crate) fn collect<E: Embedder>(core: &HeapCore<E>) -> Counters {
        Counters {
            collections: core.counters.collections.load(Relaxed),
            committed_bytes: core.resource.committed_pages() * PAGE_SIZE,
            heap_target: core.sizer.target() as usize,
            allocated_since_gc: core.sizer.allocated(),
            last_marked_bytes: core.counters.last_marked_bytes.load(Relaxed),
        }
    }
}

impl Stats {
    pub(crate) fn collect<E: Embedder>(
        core: &HeapCore<E>,
        world: &World,
        frees: FreeTotals,
    ) -> Stats {
        let c = &core.counters;
        let compaction = *c.compaction.lock();
        let pools = core
            .pools
            .iter()
            .map(|p| {
                let (pages, unswept, budget, decision, k) = p.snapshot();
                let live = k.allocated_total.saturating_sub(k.freed_total);
                PoolStats {
                    slot_size: p.slot_size,
                    pages,
                    unswept_pages: unswept,
                    budget_pages: budget,
                    last_decision: decision,
                    live_slots: live,
                    free_slots: ((pages * p.slots_per_page) as u64).saturating_sub(live),
                    allocated_total: k.allocated_total,
                    freed_total: k.freed_total,
                    last_sweep_live: k.last_live,
                    last_sweep_free: k.last_free,
                    pages_released: k.pages_released,
                    longest_sweep_step: k.longest_sweep_step,
                }
            })
            .collect();
        let g = &core.generations.counts;
        Stats {
            collections: c.collections.load(Relaxed),
            mark_time: Duration::from_nanos(c.mark_ns.load(Relaxed)),
            sweep_time: Duration::from_nanos(c.sweep_ns.load(Relaxed)),
            pauses: GcCounters::distribution(&c.pauses),
            minor_collections: g.minor.load(Relaxed),
            minor_pauses: GcCounters::distribution(&c.minor_pauses),
            full_collections: g.full.load(Relaxed),
            remembered_objects: g.remembered.load(Relaxed),
            rescanned_objects: g.rescanned.load(Relaxed),
            sweep_steps: GcCounters::distribution(&c.sweep_steps),
            background_pages: c.background_pages.load(Relaxed),
            background_cleared_bytes: c.background_zeroed.load(Relaxed),
            time_to_safepoint: GcCounters::distribution(&c.safepoints),
            release_phases: GcCounters::distribution(&c.releases),
            last_released_pages: c.last_released_pages.load(Relaxed),
            compactions: c.compactions.load(Relaxed),
            freed_now: frees.now,
            freed_now_bytes: frees.now_bytes,
            freed_at_sweep: c.freed_at_sweep.load(Relaxed),
            frees_deferred: c.frees_deferred.load(Relaxed),
            last_compaction: compaction.0,
            compaction_totals: compaction.1,
            pinned_objects: core.pins.len(),
            heap_policy: core.sizer.policy(),
            heap_target: core.sizer.target() as usize,
            allocated_since_gc: core.sizer.allocated(),
            last_heap_decision: core.sizer.last_decision(),
            last_marked: c.last_marked.load(Relaxed),
            last_marked_bytes: c.last_marked_bytes.load(Relaxed),
            weak_handles: core.weak.handle_count(),
            weak_slots: core.weak.slot_count(),
            ephemerons: core.ephemerons.len(),
            finalizers_registered: core.finalizers.registered(),
            finalizers_pending: core.finalizers.pending(),
            pools,
            large: core.large.stats(&core.table),
            committed_bytes: core.resource.committed_pages() * PAGE_SIZE,
            decommitted_bytes: (core.resource.trimmed_pages() * PAGE_SIZE) as u64,
            max_heap: core.max_heap(),
            metadata_bytes: core
                .table
                .descriptor_bytes(core.resource.touched_descriptors()),
            stall_warnings: world.stall_warnings(),
            rss_bytes: rss_bytes(),
        }
    }

    /// Live objects in size pools plus large objects (exact after a
    /// collection followed by `finish_sweep`).
    pub fn live_objects(&self) -> u64 {
        self.pools.iter().map(|p| p.live_slots).sum::<u64>() + self.large.objects as u64
    }

    /// Pages held by size pools.
    pub fn pool_pages(&self) -> usize {
        self.pools.iter().map(|p| p.pages).sum()
    }

    /// The longest lazy sweep step of any pool.
    pub fn longest_sweep_step(&self) -> Duration {
        self.pools
            .iter()
            .map(|p| p.longest_sweep_step)
            .max()
            .unwrap_or_default()
    }

    /// A one-line human summary.
    pub fn summary(&self) -> String {
        self.to_string()
    }
}

fn mib(b: usize) -> f64 {
    b as f64 / (1 << 20) as f64
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // (Called by programs that may trap floating-point exceptions.)
        crate::os::with_default_float_env(|| self.write_to(f))
    }
}

impl Stats {
    fn write_to(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "mosaic: {} GCs, pause p50 {:.3?} p99 {:.3?} max {:.3?}, mark {:.3?}, sweep {:.3?} (longest step {:.3?}), \
             {} live objects, {} pool pages + {} large objects, {} target {:.1} MiB, committed {:.1} MiB of {:.0} MiB max (+{:.1} MiB metadata), RSS {:.1} MiB",
            self.collections,
            self.pauses.p50,
            self.pauses.p99,
            self.pauses.max,
            self.mark_time,
            self.sweep_time,
            self.longest_sweep_step(),
            self.live_objects(),
            self.pool_pages(),
            self.large.objects,
            self.heap_policy.name(),
            mib(self.heap_target),
            mib(self.committed_bytes),
            mib(self.max_heap),
            mib(self.metadata_bytes),
            mib(self.rss_bytes),
        )
    }
}
