//! Generations with sticky mark bits (`Config::generational`): which
//! collections are minor, the remembered set, and the minor collection's
//! extra roots.
//!
//! *Old* means marked by an earlier collection and kept: sweeping leaves
//! the mark bits of survivors set (`pool/sweep.rs`, `sticky`), so a young
//! object is one allocated since the last collection, whose mark bit is
//! clear. A **minor** collection keeps the old objects' marks, marks from
//! the roots plus
//!
//! - the **remembered set**: old `BARRIERED` objects a write barrier
//!   logged since the last collection (their unlogged bit,
//!   `space/log_bits.rs`, was cleared by the barrier and is set again here
//!   once they are traced), and
//! - every old object allocated without `BARRIERED` (and not pointer-free):
//!   no barrier covers it, so it is traced again by every minor collection
//!   ("shady" objects in Ruby's terms),
//!
//! and sweeps only the pages a mutator allocated into since the last
//! collection (`SizePool::begin_cycle`). A **full** collection clears every
//! mark first and forgets the remembered set: it is the old non-generational
//! collection, and the only one that compacts.
//!
//! Invariant: between collections, an old barriered object that may hold a
//! reference to a young object is in the remembered set (its barrier ran:
//! the embedder's promise), so a minor collection marks every young object
//! reachable from the roots. Verify mode checks it after every minor
//! collection with an independent walk of the whole graph from the roots.
//!
//! Weak references, ephemerons and finalizers follow from "old objects are
//! marked": in a minor collection a weak reference to an old object stays
//! and one to an unreached young object is cleared; an ephemeron whose key
//! is old keeps its value; an old object's finalizer waits for a full
//! collection; a young unreached object's finalizer runs.
//!
//! | next collection is full when | why |
//! |---|---|
//! | the embedder asked (`Mutator::collect`), a compaction is asked for, or the last one was abandoned | the old generation's garbage must go, or the marks are gone |
//! | the old generation has used half the headroom the policy gave after the last full collection | the target counts old bytes: young room shrinks, minor collections come faster |
//! | the last minor collection found fewer than [`MIN_YIELD`] of the bytes allocated before it dead, traced (remembered, rescanned and newly marked objects) more than [`MAX_MINOR_WORK`] of what the last full collection marked, or both its pause and the typical of the last [`COST_WINDOW`] (the lower of two, the median of three; each as a fraction of the full pause it was measured against) were at least [`MAX_MINOR_COST`] of the last full collection's pause: one pause the machine stretched does not start a back-off, and a cheap one ends it | generations do not pay: the next collection is full, and the next 2, 4, … [`MAX_BACKOFF`] after each further minor collection that does not pay either, until one does |

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::events::GcReason;

/// A minor collection must find at least this fraction of the bytes
/// allocated since the previous collection dead, or the next is full.
pub const MIN_YIELD: f64 = 0.5;

/// A minor collection that traced more than this fraction of the objects
/// the last full collection marked makes the next one full.
pub const MAX_MINOR_WORK: f64 = 0.5;

/// A minor collection whose pause is at least this fraction of the last
/// full collection's does not pay: the full one reclaims the old
/// generation's garbage too, for about the same price (a small live set,
/// where every collection costs little more than stopping the world, or
/// a drop-in program that writes every page between collections).
pub const MAX_MINOR_COST: f64 = 0.5;

/// The cost rule looks at this many of the latest minor pauses: a single
/// pause is too noisy on a shared machine (a preempted thread made one
/// minor pause of 33 objects take 3.3 ms, ten times its neighbours, and
/// GCBench's full collections ranged 4-17 over identical runs).
pub const COST_WINDOW: usize = 3;

/// A minor collection that did not pay makes the next collections full:
/// one, then twice as many each time it happens again (up to this many),
/// and none once a minor collection pays again.
pub const MAX_BACKOFF: u32 = 32;

/// Stress mode: every this many collections is full.
const STRESS_FULL_EVERY: u64 = 4;

/// The rescan of unbarriered old objects is split into this many tasks
/// (by page), so that parallel marking spreads it over the workers.
pub const RESCAN_TASKS: usize = 8;

/// One mutator's log: objects its barriers logged since the last
/// collection. Only its owner pushes (outside pauses); the collector
/// drains it inside a pause.
#[derive(Default)]
pub struct LogBuffer(Mutex<Vec<usize>>);

impl LogBuffer {
    /// Logs `obj` (its unlogged bit was just cleared by this thread).
    pub fn push(&self, obj: usize) {
        self.0.lock().push(obj);
    }
}

/// The generational state of a heap (the minor collection's phases are
/// in `minor.rs`).
#[derive(Default)]
pub struct Generations {
    pub enabled: bool,
    /// The pause in progress is a minor collection.
    minor: AtomicBool,
    /// The next collection must be full.
    next_full: AtomicBool,
    /// The last collection was minor (old garbage may remain).
    last_minor: AtomicBool,
    /// Full collections still owed after minor ones that did not pay, and
    /// how many the last such minor collection asked for.
    owed_full: AtomicU32,
    backoff: AtomicU32,
    buffers: Mutex<Vec<Arc<LogBuffer>>>,
    /// Logs of mutators that were dropped since the last collection.
    orphans: Mutex<Vec<usize>>,
    /// The remembered set this pause traces (taken when it starts).
    remembered: Mutex<Vec<usize>>,
    /// The pages whose unbarriered old objects this pause rescans (taken
    /// before any marking, so objects marked during the pause are not
    /// among them).
    rescan_pages: Mutex<Arc<Vec<RescanPage>>>,
    /// Old objects traced by this pause's rescan and remembered-set tasks.
    traced_old: AtomicUsize,
    /// Bytes believed live: marked by the last full collection, plus what
    /// every minor collection since kept (old garbage is not known).
    old_bytes: AtomicU64,
    full_live: AtomicU64,
    full_objects: AtomicU64,
    /// The last full collection's pause (ns; 0: none yet).
    full_pause_ns: AtomicU64,
    /// The latest minor pauses, each over the full pause it was measured
    /// against, oldest first, at most [`COST_WINDOW`].
    minor_costs: Mutex<Vec<f64>>,
    pub counts: GenCounts,
}

/// One page of a minor collection's rescan: its old, unbarriered,
/// pointer-holding objects when the pause began (one bit per slot; a
/// large object's head has one bit), and which of its 4 KiB OS pages were
/// written since the last collection (all ones without dirty-page
/// tracking).
pub struct RescanPage {
    pub page: u32,
    pub written: u16,
    pub old: Box<[u64]>,
}

/// Counters of the generational mode, for stats.
#[derive(Default)]
pub struct GenCounts {
    pub minor: AtomicU64,
    pub full: AtomicU64,
    /// Objects taken from the remembered set, over all minor collections.
    pub remembered: AtomicU64,
    /// Unbarriered old objects rescanned, over all minor collections.
    pub rescanned: AtomicU64,
}

/// What a minor collection found, for the next decision.
pub struct MinorSample {
    /// Bytes newly marked (young objects kept: now old).
    pub promoted: u64,
    pub promoted_objects: u64,
    /// Bytes allocated since the previous collection.
    pub allocated: u64,
    /// The heap policy's target.
    pub target: u64,
    /// The collection's work so far: marking and release (not reaching
    /// the safepoints, the previous cycle's leftover sweep or verify's
    /// walk).
    pub pause: Duration,
}

impl Generations {
    pub fn new(enabled: bool) -> Self {
        Generations {
            enabled,
            ..Default::default()
        }
    }

    /// A new mutator's log.
    pub fn register(&self) -> Arc<LogBuffer> {
        let b = Arc::new(LogBuffer::default());
        if self.enabled {
            self.buffers.lock().push(b.clone());
        }
        b
    }

    /// A mutator goes: what it logged stays in the remembered set.
    pub fn unregister(&self, b: &Arc<LogBuffer>) {
        if !self.enabled {
            return;
        }
        self.buffers.lock().retain(|x| !Arc::ptr_eq(x, b));
        let mut left = std::mem::take(&mut *b.0.lock());
        self.orphans.lock().append(&mut left);
    }

    /// Whether the pause in progress is a minor collection.
    pub fn is_minor(&self) -> bool {
        self.minor.load(Relaxed)
    }

    /// Whether the last collection was minor: the heap is not known to be
    /// full of live objects until a full one ran.
    pub fn last_was_minor(&self) -> bool {
        self.last_minor.load(Relaxed)
    }

    /// The next collection must be full (an allocation found no room
    /// after a minor one).
    pub fn force_full(&self) {
        self.next_full.store(true, Relaxed);
    }

    /// The collection that failed cleared every mark: nothing is old.
    pub fn abandoned(&self) {
        self.next_full.store(true, Relaxed);
        self.minor.store(false, Relaxed);
    }

    /// Decides whether the pause starting now (collection `number`) is
    /// minor, and takes the remembered set for it — or forgets it, for a
    /// full collection.
    pub fn decide(&self, reason: GcReason, compaction: bool, number: u64) -> bool {
        let forced = self.next_full.swap(false, Relaxed);
        // Full collections owed after minor ones that did not pay (not in
        // stress mode, which mixes both on purpose, nor when a minor one
        // is asked for).
        let owed = matches!(reason, GcReason::Allocation | GcReason::HeapLimit)
            && self
                .owed_full
                .fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1))
                .is_ok();
        let minor = self.enabled
            && !forced
            && !owed
            && !compaction
            && number > 1
            && match reason {
                // At the heap's maximum a minor collection goes first: if
                // it frees nothing, its yield makes the next one full, and
                // an allocation is refused only after a full one
                // (`last_was_minor`).
                GcReason::Allocation | GcReason::Young | GcReason::HeapLimit => true,
                GcReason::Stress => number % STRESS_FULL_EVERY != 0,
                GcReason::Explicit => false,
            };
        self.minor.store(minor, Relaxed);
        self.last_minor.store(minor, Relaxed);
        self.traced_old.store(0, Relaxed);
        let mut set = self.remembered.lock();
        set.clear();
        for b in self.buffers.lock().iter() {
            let mut l = b.0.lock();
            if minor {
                set.append(&mut l);
            } else {
                l.clear();
            }
        }
        let mut o = self.orphans.lock();
        if minor {
            set.append(&mut o);
        } else {
            o.clear();
        }
        minor
    }

    /// The pages a minor collection's rescan tasks go through.
    pub fn set_rescan_pages(&self, pages: Vec<RescanPage>) {
        *self.rescan_pages.lock() = Arc::new(pages);
    }

    /// Root tasks a minor collection adds: the remembered set, then the
    /// rescan of unbarriered old objects in [`RESCAN_TASKS`] parts.
    pub fn extra_tasks(&self) -> usize {
        if self.is_minor() {
            1 + RESCAN_TASKS
        } else {
            0
        }
    }

    /// The remembered set, taken (the first extra task).
    pub fn take_remembered(&self) -> Vec<usize> {
        std::mem::take(&mut *self.remembered.lock())
    }

    /// The pages to rescan and the range of them that is part `part` (of
    /// [`RESCAN_TASKS`]).
    pub fn rescan_part(&self, part: usize) -> (Arc<Vec<RescanPage>>, std::ops::Range<usize>) {
        let pages = self.rescan_pages.lock().clone();
        let n = pages.len().div_ceil(RESCAN_TASKS);
        let from = (part * n).min(pages.len());
        let to = (from + n).min(pages.len());
        (pages, from..to)
    }

    /// Old objects a task traced (remembered or rescanned).
    pub fn note_traced(&self, n: usize, remembered: bool) {
        self.traced_old.fetch_add(n, Relaxed);
        let c = if remembered {
            &self.counts.remembered
        } else {
            &self.counts.rescanned
        };
        c.fetch_add(n as u64, Relaxed);
    }

    /// After a full collection: what it marked is the old generation.
    /// `pause`: its work so far, measured as [`MinorSample::pause`] is (a
    /// compaction included).
    pub fn after_full(&self, live_bytes: u64, objects: u64, pause: Duration) {
        if !self.enabled {
            return;
        }
        self.counts.full.fetch_add(1, Relaxed);
        self.full_pause_ns
            .store(pause.as_nanos().min(u64::MAX as u128) as u64, Relaxed);
        self.old_bytes.store(live_bytes, Relaxed);
        self.full_live.store(live_bytes, Relaxed);
        self.full_objects.store(objects, Relaxed);
    }

    /// Adds `cost` (a minor pause over the last full pause) to the window
    /// and returns the typical one: `None` with a single cost known, the
    /// lower of two, the median of three.
    fn typical_minor_cost(&self, cost: f64) -> Option<f64> {
        let mut w = self.minor_costs.lock();
        if w.len() == COST_WINDOW {
            w.remove(0);
        }
        w.push(cost);
        let mut sorted = w.clone();
        sorted.sort_unstable_by(f64::total_cmp);
        match sorted.len() {
            0 | 1 => None,
            n => Some(sorted[(n - 1) / 2]),
        }
    }

    /// After a minor collection: the old generation grew by what it kept;
    /// decides whether the next collection is full. Returns the bytes now
    /// believed live.
    pub fn after_minor(&self, s: &MinorSample) -> u64 {
        self.counts.minor.fetch_add(1, Relaxed);
        self.minor.store(false, Relaxed);
        *self.rescan_pages.lock() = Arc::default();
        let old = self.old_bytes.fetch_add(s.promoted, Relaxed) + s.promoted;
        let full_live = self.full_live.load(Relaxed);
        let headroom = s.target.saturating_sub(full_live);
        let grown = old.saturating_sub(full_live);
        let yield_low = (s.promoted as f64) > (1.0 - MIN_YIELD) * s.allocated as f64;
        let work = self.traced_old.load(Relaxed) as u64 + s.promoted_objects;
        let work_high =
            work as f64 > MAX_MINOR_WORK * self.full_objects.load(Relaxed).max(4096) as f64;
        let full_pause = self.full_pause_ns.load(Relaxed);
        let cost_high = full_pause > 0 && {
            let cost = s.pause.as_nanos() as f64 / full_pause as f64;
            self.typical_minor_cost(cost)
                .is_some_and(|t| t.min(cost) >= MAX_MINOR_COST)
        };
        if yield_low || work_high || cost_high {
            // Generations do not pay here: back off.
            let b = (self.backoff.load(Relaxed) * 2).clamp(1, MAX_BACKOFF);
            self.backoff.store(b, Relaxed);
            self.owed_full.store(b, Relaxed);
        } else {
            self.backoff.store(0, Relaxed);
            if grown * 2 >= headroom {
                self.next_full.store(true, Relaxed);
            }
        }
        old
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kinds of `n` allocation-triggered collections ('m' minor, 'F'
    /// full), each minor one paying or not.
    fn kinds(g: &Generations, n: u64, paying: bool) -> String {
        let mut out = String::new();
        for number in 2..2 + n {
            if g.decide(GcReason::Allocation, false, number) {
                out.push('m');
                let allocated = 1 << 20;
                g.after_minor(&MinorSample {
                    promoted: if paying { 1 << 10 } else { allocated },
                    promoted_objects: 10,
                    allocated,
                    target: 1 << 30,
                    pause: Duration::from_micros(100),
                });
            } else {
                out.push('F');
                g.after_full(1 << 20, 1 << 16, Duration::from_millis(1));
            }
        }
        out
    }

    #[test]
    fn minor_collections_that_do_not_pay_back_off_and_one_that_pays_ends_it() {
        let g = Generations::new(true);
        g.after_full(1 << 20, 1 << 16, Duration::from_millis(1));
        assert_eq!(kinds(&g, 4, true), "mmmm");
        assert_eq!(kinds(&g, 16, false), "mFmFFmFFFFmFFFFF");
        // A minor collection that pays again: no more owed full ones.
        let g = Generations::new(true);
        g.after_full(1 << 20, 1 << 16, Duration::from_millis(1));
        assert_eq!(kinds(&g, 4, false), "mFmF");
        assert_eq!(kinds(&g, 4, true), "Fmmm");
        // Asked-for minor collections and stress mode do not back off.
        assert_eq!(kinds(&g, 1, false), "m");
        assert!(g.decide(GcReason::Young, false, 100));
        assert!(g.decide(GcReason::Stress, false, 101));
        assert!(!Generations::new(false).decide(GcReason::Allocation, false, 5));
    }

    /// Collection `number` must be minor; it pays on yield and work, and
    /// paused `pause`.
    fn minor(g: &Generations, number: u64, pause: Duration) {
        assert!(g.decide(GcReason::Allocation, false, number), "{number}");
        g.after_minor(&MinorSample {
            promoted: 1 << 10,
            promoted_objects: 10,
            allocated: 1 << 20,
            target: 1 << 30,
            pause,
        });
    }

    #[test]
    fn a_minor_collection_that_costs_half_a_full_one_does_not_pay() {
        let g = Generations::new(true);
        g.after_full(1 << 20, 1 << 16, Duration::from_micros(1000));
        minor(&g, 2, Duration::from_micros(499));
        minor(&g, 3, Duration::from_micros(500));
        minor(&g, 4, Duration::from_micros(500));
        // This one and the typical of the last three cost half the full
        // pause: the next one is full.
        assert!(!g.decide(GcReason::Allocation, false, 5));
        g.after_full(1 << 20, 1 << 16, Duration::from_micros(1000));
        // Backing off as for a low yield: a minor one, then two full ones.
        minor(&g, 6, Duration::from_micros(800));
        assert!(!g.decide(GcReason::Allocation, false, 7));
        assert!(!g.decide(GcReason::Allocation, false, 8));
        // A cheap one ends it, though the typical is still high.
        minor(&g, 9, Duration::from_micros(10));
        minor(&g, 10, Duration::from_micros(10));
    }

    #[test]
    fn minor_costs_are_fractions_of_the_full_pause_they_were_measured_against() {
        let g = Generations::new(true);
        // Minors of 3 ms against a 10 ms full pause pay ...
        g.after_full(1 << 20, 1 << 16, Duration::from_millis(10));
        for n in 2..5 {
            minor(&g, n, Duration::from_millis(3));
        }
        // ... and after a full pause of 1 ms, minors of 0.2 ms pay too,
        // though the window still holds the 3 ms ones.
        g.after_full(1 << 16, 1 << 12, Duration::from_millis(1));
        for n in 5..10 {
            minor(&g, n, Duration::from_micros(200));
        }
    }

    #[test]
    fn one_minor_pause_the_machine_stretched_does_not_make_the_next_full() {
        let g = Generations::new(true);
        g.after_full(1 << 20, 1 << 16, Duration::from_micros(1000));
        // The first minor pause alone decides nothing, however long.
        minor(&g, 2, Duration::from_micros(3000));
        minor(&g, 3, Duration::from_micros(100));
        minor(&g, 4, Duration::from_micros(100));
        // A preempted one among cheap ones: the typical stays 100 us.
        minor(&g, 5, Duration::from_micros(6000));
        minor(&g, 6, Duration::from_micros(100));
        minor(&g, 7, Duration::from_micros(100));
    }
}
