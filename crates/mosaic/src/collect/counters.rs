//! Counters the collector and the allocation slow path update, read by stats.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use hdrhistogram::Histogram;
use parking_lot::Mutex;

/// Running totals for one heap.
pub struct GcCounters {
    pub collections: AtomicU64,
    pub mark_ns: AtomicU64,
    pub sweep_ns: AtomicU64,
    /// Sweeping done in allocation slow paths (outside pauses), and by
    /// background sweeping.
    pub lazy_sweep_ns: AtomicU64,
    /// Pages background sweeping swept (`background.rs`).
    pub background_pages: AtomicU64,
    /// Bytes background sweeping cleared ahead of the allocator.
    pub background_zeroed: AtomicU64,
    pub last_marked: AtomicU64,
    pub last_marked_bytes: AtomicU64,
    /// Empty pages the last release phase gave back.
    pub last_released_pages: AtomicU64,
    /// Every stop-the-world pause, in nanoseconds.
    pub pauses: Mutex<Histogram<u64>>,
    /// The pauses of minor collections (generational mode), in nanoseconds.
    pub minor_pauses: Mutex<Histogram<u64>>,
    /// Every lazy sweep step taken in an allocation slow path, in nanoseconds.
    pub sweep_steps: Mutex<Histogram<u64>>,
    /// Time from a collection's stop request until every mutator had
    /// reached a safepoint (part of the pause), in nanoseconds.
    pub safepoints: Mutex<Histogram<u64>>,
    /// Every release phase (empty pages and dead large objects given back
    /// by the GC workers inside the pause), in nanoseconds.
    pub releases: Mutex<Histogram<u64>>,
    /// The last compaction, and the sum of all of them (`time` summed).
    pub compaction: Mutex<(CompactionStats, CompactionStats)>,
    pub compactions: AtomicU64,
    /// Explicit frees (`Mutator::free`) whose memory was reusable at once,
    /// their bytes (slot sizes, a large object's pages), those the lazy
    /// sweep frees, and those left to the next collection.
    /// (The first two, and `freed_bytes`, hold only what mutators whose
    /// tables are gone counted: each live mutator counts its own frees in
    /// its [`FreeCounts`], summed with these by stats.)
    pub freed_now: AtomicU64,
    pub freed_now_bytes: AtomicU64,
    pub freed_at_sweep: AtomicU64,
    pub frees_deferred: AtomicU64,
    /// Bytes of every explicit free the call accepted (now, at the sweep or
    /// at the next collection), folded in from [`FreeCounts`].
    pub freed_bytes: AtomicU64,
}

/// One mutator's counts of its explicit frees. Only the owner mutator
/// writes them, with a load and a store (no locked read-modify-write: a
/// free that follows a copy would wait for the store buffer to drain);
/// readers sum them under the heap's root-table lock, and the table's
/// removal (under the same lock, after the owner's last free) folds them
/// into [`GcCounters`], so a sum taken under the lock is exact.
#[derive(Default)]
pub struct FreeCounts {
    now: AtomicU64,
    now_bytes: AtomicU64,
    bytes: AtomicU64,
}

/// A single writer's increment.
#[inline]
fn bump(c: &AtomicU64, by: u64) {
    c.store(c.load(Relaxed).wrapping_add(by), Relaxed);
}

/// Explicit frees summed over the heap and its mutators.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FreeTotals {
    pub now: u64,
    pub now_bytes: u64,
    pub bytes: u64,
}

impl FreeCounts {
    /// Counts a free whose memory is reusable at once: `reusable` bytes
    /// back (a slot, a large object's pages) of an object of `size`.
    /// Owner only.
    #[inline]
    pub fn add_now(&self, reusable: u64, size: u64) {
        bump(&self.now, 1);
        bump(&self.now_bytes, reusable);
        bump(&self.bytes, size);
    }

    /// Counts a free of an object of `size` whose memory comes back later
    /// (at the sweep, at the next collection). Owner only.
    #[inline]
    pub fn add_later(&self, size: u64) {
        bump(&self.bytes, size);
    }

    /// Adds these counts to `totals`.
    pub fn add_to(&self, totals: &mut FreeTotals) {
        totals.now += self.now.load(Relaxed);
        totals.now_bytes += self.now_bytes.load(Relaxed);
        totals.bytes += self.bytes.load(Relaxed);
    }

    /// Moves these counts into the heap's (the table is going away; its
    /// owner frees no more).
    pub fn fold_into(&self, c: &GcCounters) {
        c.freed_now.fetch_add(self.now.swap(0, Relaxed), Relaxed);
        c.freed_now_bytes
            .fetch_add(self.now_bytes.swap(0, Relaxed), Relaxed);
        c.freed_bytes
            .fetch_add(self.bytes.swap(0, Relaxed), Relaxed);
    }
}

/// What one compaction did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactionStats {
    /// Objects moved (cross-pool moves included).
    pub objects_moved: u64,
    /// Bytes of the moved objects (their old slot sizes).
    pub bytes_moved: u64,
    /// Moves into another size pool ([`crate::Embedder::resize`]).
    pub cross_pool_moves: u64,
    /// Live pinned objects in the compacted pools (they stayed).
    pub pinned_objects: u64,
    /// Pages the compaction left with no live object.
    pub pages_emptied: u64,
    /// Pools compacted.
    pub pools: u32,
    /// Time in the pause: planning, moving, updating, verifying.
    pub time: Duration,
}

/// A distribution summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Distribution {
    pub count: u64,
    pub total: Duration,
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
}

impl Default for GcCounters {
    fn default() -> Self {
        // 1 ns to one hour at 2 significant digits (percentiles within 1%);
        // values beyond saturate. 3 digits made each histogram's counts
        // about 270 KiB, written at creation: 1 MiB of every heap's RSS.
        let h = || {
            Mutex::new(Histogram::new_with_bounds(1, 3_600_000_000_000, 2).expect("valid bounds"))
        };
        GcCounters {
            collections: AtomicU64::new(0),
            mark_ns: AtomicU64::new(0),
            sweep_ns: AtomicU64::new(0),
            lazy_sweep_ns: AtomicU64::new(0),
            background_pages: AtomicU64::new(0),
            background_zeroed: AtomicU64::new(0),
            last_marked: AtomicU64::new(0),
            last_marked_bytes: AtomicU64::new(0),
            last_released_pages: AtomicU64::new(0),
            pauses: h(),
            minor_pauses: h(),
            sweep_steps: h(),
            safepoints: h(),
            releases: h(),
            compaction: Mutex::default(),
            compactions: AtomicU64::new(0),
            freed_now: AtomicU64::new(0),
            freed_now_bytes: AtomicU64::new(0),
            freed_at_sweep: AtomicU64::new(0),
            frees_deferred: AtomicU64::new(0),
            freed_bytes: AtomicU64::new(0),
        }
    }
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

impl GcCounters {
    /// The frees of mutators whose tables are gone, as totals.
    pub fn free_totals(&self) -> FreeTotals {
        FreeTotals {
            now: self.freed_now.load(Relaxed),
            now_bytes: self.freed_now_bytes.load(Relaxed),
            bytes: self.freed_bytes.load(Relaxed),
        }
    }

    /// Records one compaction.
    pub fn record_compaction(&self, c: &CompactionStats) {
        self.compactions.fetch_add(1, Relaxed);
        let mut g = self.compaction.lock();
        g.0 = *c;
        let t = &mut g.1;
        t.objects_moved += c.objects_moved;
        t.bytes_moved += c.bytes_moved;
        t.cross_pool_moves += c.cross_pool_moves;
        t.pinned_objects = c.pinned_objects;
        t.pages_emptied += c.pages_emptied;
        t.pools += c.pools;
        t.time += c.time;
    }

    pub fn add_sweep(&self, d: Duration) {
        self.sweep_ns.fetch_add(nanos(d), Relaxed);
    }

    pub fn record_sweep_step(&self, d: Duration) {
        self.add_sweep(d);
        self.lazy_sweep_ns.fetch_add(nanos(d), Relaxed);
        self.sweep_steps.lock().saturating_record(nanos(d).max(1));
    }

    /// A stretch of background sweeping: `pages` swept, `zeroed` bytes
    /// cleared, in `d` (sweeping time, as a lazy sweep's).
    pub fn record_background_sweep(&self, d: Duration, pages: u64, zeroed: u64) {
        self.add_sweep(d);
        self.lazy_sweep_ns.fetch_add(nanos(d), Relaxed);
        self.background_pages.fetch_add(pages, Relaxed);
        self.background_zeroed.fetch_add(zeroed, Relaxed);
    }

    pub fn record_safepoint(&self, d: Duration) {
        self.safepoints.lock().saturating_record(nanos(d).max(1));
    }

    /// Records a release phase; its time counts as sweeping too.
    pub fn record_release(&self, d: Duration) {
        self.add_sweep(d);
        self.releases.lock().saturating_record(nanos(d).max(1));
    }

    pub fn record_pause(&self, d: Duration) {
        self.pauses.lock().saturating_record(nanos(d).max(1));
    }

    /// A minor collection's pause (generational mode), also in `pauses`.
    pub fn record_minor_pause(&self, d: Duration) {
        self.minor_pauses.lock().saturating_record(nanos(d).max(1));
    }

    /// (Quantiles are doubles: under the default floating-point
    /// environment, `os/float_env.rs`.)
    pub fn distribution(h: &Mutex<Histogram<u64>>) -> Distribution {
        crate::os::with_default_float_env(|| Self::distribution_of(h))
    }

    fn distribution_of(h: &Mutex<Histogram<u64>>) -> Distribution {
        let h = h.lock();
        if h.is_empty() {
            return Distribution::default();
        }
        let total: u64 = h
            .iter_recorded()
            .map(|v| v.value_iterated_to() * v.count_at_value())
            .sum();
        Distribution {
            count: h.len(),
            total: Duration::from_nanos(total),
            p50: Duration::from_nanos(h.value_at_quantile(0.5)),
            p99: Duration::from_nanos(h.value_at_quantile(0.99)),
            max: Duration::from_nanos(h.max()),
        }
    }
}
