//! The heap's state below the API: [`HeapCore`], everything a collection
//! works on (configuration, pools, large space, page resource and table,
//! counters, weak/ephemeron/finalizer tables, events, heap sizer, GC
//! workers, timeline, pins) and the helpers the allocator and the pause
//! share: large allocation, flags of a new small object, sweeping, trimming.
//!
//! Invariant: this file imports no phase of a collection (`closure.rs`,
//! `par_mark.rs`, `verify.rs`, `compact/`, `release.rs`, ...) and not
//! `cycle.rs`: the phases import the state, `cycle.rs` imports the phases.

use std::sync::atomic::{
    AtomicU64, AtomicU8, AtomicUsize,
    Ordering::{AcqRel, Acquire, Relaxed, Release},
};
use std::time::{Duration, Instant};

use super::callbacks::{in_callback, PanicSlot};
use super::counters::GcCounters;
use super::ephemeron::Ephemerons;
use super::events::Events;
use super::finalize::Finalizers;
use super::generations::Generations;
use super::heap_sizing::HeapSizer;
use super::keep::KeepPages;
use super::own_marks::OwnMarks;
use super::pins::Pins;
use super::timeline::Timeline;
use super::weak::WeakRefs;
use crate::config::{CompactOrder, CompactPolicy, Config};
use crate::embedder::Embedder;
use crate::error::Error;
use crate::flags::AllocFlags;
use crate::object::ObjRef;
use crate::pool::{GrowthPolicy, SizeClasses, SizePool, SweepCtx};
use crate::sched::Workers;
use crate::space::{
    LargeSpace, PageDesc, PageResource, PageTable, ReleaseBuffer, PAGE_MASK, PAGE_SHIFT, PAGE_SIZE,
};

/// Everything a heap is, minus the mutator bookkeeping of the API layer.
pub struct HeapCore<E: Embedder> {
    pub config: Config,
    pub policy: GrowthPolicy,
    pub classes: SizeClasses,
    pub table: PageTable,
    pub resource: PageResource,
    pub large: LargeSpace,
    pub pools: Box<[SizePool]>,
    pub embedder: E,
    pub counters: GcCounters,
    pub weak: WeakRefs,
    pub ephemerons: Ephemerons,
    pub finalizers: Finalizers,
    pub events: Events,
    /// When to collect: the heap target, allowance and policy.
    pub sizer: HeapSizer,
    /// The GC worker pool (the collecting thread is worker 0).
    pub workers: Workers,
    /// The pause timeline, when `Config::trace` asks for one.
    pub timeline: Option<Timeline>,
    /// Counted pins (`Mutator::pin`).
    pub pins: Pins,
    /// Pages that may hold `KEEP_REFERENTS` objects (`keep.rs`).
    pub keep: KeepPages,
    /// Generational mode's state: remembered set, minor or full.
    pub generations: Generations,
    /// The parallel markers' own mark bits, one per worker that has
    /// marked, kept for the next strong closure (`own_marks.rs`).
    pub own_marks: parking_lot::Mutex<Vec<OwnMarks>>,
    /// `Config::dirty_pages` in generational mode, when the kernel keeps
    /// soft-dirty bits.
    pub dirty: Option<crate::os::SoftDirty>,
    /// An explicit compaction asked for the next collection: 0 none,
    /// 1 pinned first, 2 address order.
    compact_request: AtomicU8,
    sweep_cursor: AtomicUsize,
    /// Threads inside [`HeapCore::with_sweeper`]. A sweeper holds pages it
    /// took off a pool's unswept list, and empty pages in its release
    /// buffer, that no other thread can see until it returns: an exhausted
    /// allocation waits for it before calling the heap full.
    pub(super) sweepers: AtomicUsize,
    /// Pages background sweeping holds now, 0 or 1 (`background.rs`).
    pub(super) background_in_flight: AtomicUsize,
    /// Pages in use when the last pause began (the cycle's peak) per byte
    /// of that cycle's target, in 1/1024ths (at least 1024): how much
    /// room in pages a target's bytes take (`trim_step`).
    page_ratio: AtomicUsize,
    /// Pages the trim keeps committed (in use plus free), set at the end
    /// of every collection from the room its target takes, with
    /// hysteresis (`update_commit_level`); 0 before the first collection.
    commit_level: AtomicUsize,
    /// The last full (0) and minor (1) collection's strong closure as one
    /// thread would have taken it, in ns (`Marked::work`, for `is_small`).
    mark_work_ns: [AtomicU64; 2],
    /// The last four minor collections' marking work (ns, as in
    /// `mark_work_ns`) and kept bytes, newest first (`is_small`).
    minor_window: parking_lot::Mutex<[(u64, u64); 4]>,
    /// Pages in use when this pause (0) and the previous one (1) began
    /// (`note_peak_pages`): how much the heap grew since the figures
    /// `is_small` judges by were measured.
    pause_pages: [AtomicUsize; 2],
    /// Free pages the ending pause left for its collecting thread to give
    /// back to the OS once the world runs again ([`TrimAfterPause`] as a
    /// number; `trim_after_pause`).
    pending_trim: AtomicU8,
}

/// What a pause leaves to decommit after it ends: `madvise` of tens of
/// megabytes took 3.3 ms of a 4.7 ms pause (GCBench, 2 threads, the full
/// collection that finds the temporary trees dead), during which no
/// mutator ran. Ordered: a later request for more keeps the larger one.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum TrimAfterPause {
    /// The heap target fell: free pages beyond its room (`trim_step`).
    ToTarget = 1,
    /// A compaction emptied pages: every free page.
    All = 2,
}

/// The fraction of the commit level (numerator, denominator) below which
/// the room of a falling target must fall before the level follows it
/// (`update_commit_level`).
const COMMIT_LEVEL_FALL: (usize, usize) = (7, 8);

/// The most pages per target byte (in 1/1024ths) that the room of a heap
/// target counts beyond [`SMALL_ROOM`] (`HeapCore::room_pages`).
const BOUNDED_PAGE_RATIO: usize = 4 * 1024;

/// The room (bytes) up to which a heap target's pages count at the ratio
/// the last cycle reached, however high (`HeapCore::room_pages`).
const SMALL_ROOM: usize = 2 << 20;

/// Pages decommitted per hold of the page resource's lock after a pause:
/// mutators that need a clean span meanwhile wait for at most this many
/// (each run of neighbours is one `madvise`).
const TRIM_PAGES_AFTER_PAUSE: usize = 64;

/// A collection runs on every GC worker, however little the previous one
/// found live, if the previous one of its kind (full or minor) took this
/// long to mark from the roots on one thread: its
/// work per live byte is high (mark procedures, conservative objects,
/// megabytes of root ranges), and the workers repay their wake-up. Guile's
/// threads load (0.9 MB live, 0.65 ms of marking a pause) ran 5–13%
/// faster on two workers; the suite's `threads` (0.25 ms) and n-queens
/// (10 µs) ran slower (BENCHMARKS.md, eleventh session).
pub const PARALLEL_MIN_MARK: Duration = Duration::from_micros(500);

/// Most pages one sweep step decommits (each run is an `madvise`). With
/// 16, decommitting made the longest steps of a one-thread soak about
/// 160 µs; with 4, about 85 µs (BENCHMARKS.md, issue 19).
const TRIM_PAGES_PER_STEP: usize = 4;

impl<E: Embedder> HeapCore<E> {
    /// (Under the default floating-point environment: the histograms'
    /// bounds and the sizer's figures are doubles, `os/float_env.rs`.)
    pub fn new(config: Config, embedder: E) -> Result<Self, Error> {
        crate::os::with_default_float_env(|| Self::build(config, embedder))
    }

    fn build(config: Config, embedder: E) -> Result<Self, Error> {
        config.validate()?;
        let classes = config.classes().map_err(Error::Config)?;
        let policy = config.growth_policy();
        // Twice the maximum heap in address space: the maximum is enforced
        // on pages in use, and the slack keeps large spans placeable when
        // small-object pages are scattered (see space/page_resource.rs).
        let max_pages = config.max_heap / PAGE_SIZE;
        let table = PageTable::new(2 * max_pages + 16).map_err(Error::Reserve)?;
        let resource = PageResource::with_store(&table, max_pages, config.page_resource);
        let pools = (0..classes.len())
            .map(|i| SizePool::new(i, classes.slot_size(i), &policy))
            .collect();
        let sizer = HeapSizer::new(config.heap_policy, config.heap_min, max_pages * PAGE_SIZE)
            .with_headroom_max(config.headroom_max);
        let workers =
            Workers::new(config.gc_workers(), |job| in_callback(job)).map_err(Error::Workers)?;
        let timeline = config.trace.as_deref().map(Timeline::new);
        let ephemerons = Ephemerons::new(config.ephemeron_header);
        let generational = config.generational;
        let dirty = if generational && config.dirty_pages {
            match crate::os::SoftDirty::open() {
                Ok(d) => Some(d),
                Err(e) => {
                    eprintln!(
                        "mosaic: MOSAIC_DIRTY_PAGES: {e}; minor collections rescan every unbarriered old object"
                    );
                    None
                }
            }
        } else {
            None
        };
        let core = HeapCore {
            sizer,
            workers,
            timeline,
            config,
            policy,
            classes,
            table,
            resource,
            large: LargeSpace::default(),
            pools,
            embedder,
            counters: GcCounters::default(),
            weak: WeakRefs::default(),
            ephemerons,
            finalizers: Finalizers::default(),
            events: Events::default(),
            sweep_cursor: AtomicUsize::new(0),
            sweepers: AtomicUsize::new(0),
            background_in_flight: AtomicUsize::new(0),
            page_ratio: AtomicUsize::new(1024),
            commit_level: AtomicUsize::new(0),
            mark_work_ns: [AtomicU64::new(0), AtomicU64::new(0)],
            minor_window: parking_lot::Mutex::new([(0, 0); 4]),
            pause_pages: [AtomicUsize::new(0), AtomicUsize::new(0)],
            pending_trim: AtomicU8::new(0),
            pins: Pins::default(),
            keep: KeepPages::default(),
            generations: Generations::new(generational),
            own_marks: parking_lot::Mutex::new(Vec::new()),
            dirty,
            compact_request: AtomicU8::new(0),
        };
        Ok(core)
    }

    /// Runs `f` with a sweep context; afterwards releases buffered pages,
    /// recomputes the trim target if a pool finished its cycle, and
    /// decommits a bounded number of excess free pages. A panic from
    /// `on_free` is caught and returned in [`Swept::panic`]: the caller
    /// resumes it once its own state is consistent.
    pub fn with_sweeper<R>(&self, f: impl FnOnce(&mut SweepCtx<'_>) -> R) -> Swept<R> {
        self.sweep_as("lazy sweep", f)
    }

    /// [`HeapCore::with_sweeper`], recorded on the timeline as `span`.
    fn sweep_as<R>(&self, span: &'static str, f: impl FnOnce(&mut SweepCtx<'_>) -> R) -> Swept<R> {
        let start = Instant::now();
        let _busy = SweeperGuard::enter(&self.sweepers);
        let mut release = ReleaseBuffer::default();
        let mut panic = PanicSlot::default();
        // The whole sweep counts as a callback (once, not per `on_free`).
        let mut on_free = |a: usize| {
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
        let value = in_callback(|| f(&mut cx));
        let pages = cx.swept;
        release.flush(&self.resource);
        let _ = self.trim_step(TRIM_PAGES_PER_STEP);
        if pages > 0 {
            self.span(span, start, Some(("pages", pages as u64)));
        }
        Swept {
            value,
            pages,
            panic,
        }
    }

    /// Records a span of the calling thread on the timeline, if any.
    #[inline]
    pub fn span(&self, name: &'static str, start: Instant, arg: Option<(&'static str, u64)>) {
        if let Some(t) = &self.timeline {
            t.span(name, start, arg);
        }
    }

    /// Is another thread sweeping now (and so perhaps about to give pages
    /// back)? Only meaningful outside [`HeapCore::with_sweeper`].
    pub fn sweeping_elsewhere(&self) -> bool {
        self.sweepers.load(Acquire) != 0
    }

    /// Sweeps one page of the next pool (round robin) other than `except`
    /// that still has unswept pages: "a little of every pool".
    pub fn sweep_another_pool(&self, cx: &mut SweepCtx<'_>, except: usize) {
        let n = self.pools.len();
        let start = self.sweep_cursor.fetch_add(1, Relaxed);
        for i in 0..n {
            let k = (start + i) % n;
            if k != except && self.pools[k].sweep_step(cx) {
                return;
            }
        }
    }

    /// Whether this collection (`minor` or full) is small enough for the
    /// collecting thread alone (`Config::parallel_min_live`). A full one
    /// is if the previous collection found less live than that, the heap
    /// has committed less than 8 times as much, and the previous full one
    /// (the previous minor one, before the first full) marked in less
    /// than [`PARALLEL_MIN_MARK`] on one thread. A minor one is judged by
    /// what minor collections do: each of the last four minor ones kept
    /// less than `parallel_min_live` and marked in less than that time,
    /// and less than 8 times as much was allocated since the last
    /// collection (the pages it sweeps). The heap's whole live size, which
    /// a minor collection does not mark, made every minor collection of a
    /// heap over 4 MiB live parallel, and the wake-up of the workers was
    /// most of a pause that kept a few hundred objects (GCBench with
    /// holes: 156 of 287 pauses, about 100 µs each). The first minor one is
    /// judged as a full one. The kept bytes and the marking time are
    /// scaled by how much the heap grew since the previous pause (pages
    /// in use at its start and at this one's): a heap that grows fourfold
    /// between two collections (a program building its data) marks up to
    /// four times as much, and judged by the previous figures alone its
    /// first large collection ran on one thread.
    pub fn is_small(&self, minor: bool) -> bool {
        let min = self.config.parallel_min_live as u64;
        let minor_work = self.mark_work_ns[1].load(Relaxed);
        let by_minors = minor && minor_work != 0;
        let (live, work, swept) = if by_minors {
            let w = self.minor_window.lock();
            (
                w.iter().map(|x| x.1).max().unwrap_or(0),
                w.iter().map(|x| x.0).max().unwrap_or(0),
                self.sizer.allocated(),
            )
        } else {
            let work = match self.mark_work_ns[usize::from(minor)].load(Relaxed) {
                0 => self.mark_work_ns[usize::from(!minor)].load(Relaxed),
                w => w,
            };
            (
                self.counters.last_marked_bytes.load(Relaxed),
                work,
                (self.resource.committed_pages() * PAGE_SIZE) as u64,
            )
        };
        let (now, before) = (
            self.pause_pages[0].load(Relaxed) as u64,
            self.pause_pages[1].load(Relaxed) as u64,
        );
        // Growth in 1/16ths, at least 1 (a first collection has nothing
        // to scale: its previous figures are zero).
        let growth = now
            .saturating_mul(16)
            .checked_div(before)
            .map_or(16, |g| g.max(16));
        let grown = |x: u64| x.saturating_mul(growth) / 16;
        grown(live) < min
            && swept < min.saturating_mul(8)
            && grown(work) < PARALLEL_MIN_MARK.as_nanos() as u64
    }

    /// Records how long this collection's marking would have taken on one
    /// thread (`Marked::work`: on several workers their busy time, not
    /// their wake-ups or their waits for work, which would keep a quick
    /// collection parallel on a loaded machine), for
    /// [`HeapCore::is_small`].
    pub fn note_mark_work(&self, work: Duration, bytes: usize, minor: bool) {
        let ns = work.as_nanos().min(u64::MAX as u128) as u64;
        self.mark_work_ns[usize::from(minor)].store(ns, Relaxed);
        if minor {
            let mut w = self.minor_window.lock();
            w.rotate_right(1);
            w[0] = (ns, bytes as u64);
        }
    }

    /// Notes how many pages the ending cycle's target took (at the start
    /// of a pause, before the sweep frees any: the most pages in use at
    /// once since the last pause), and the pages in use at this pause's
    /// start beside the previous pause's (`is_small`). The most, not those
    /// in use now: with two threads, pages that lazy sweeps gave back and
    /// took again left 9–27 in use at the pauses of a cycle that needed 36
    /// (`size_classes.c 2`), and the pages above the low figures were
    /// decommitted and faulted back in every cycle.
    pub fn note_peak_pages(&self) {
        let in_use = self.resource.in_use_pages();
        let previous = self.pause_pages[0].swap(in_use, Relaxed);
        self.pause_pages[1].store(previous, Relaxed);
        let pages = self.resource.take_peak_in_use() * PAGE_SIZE;
        let target = (self.sizer.target() as usize).max(PAGE_SIZE);
        // (No upper bound: `room_pages` bounds what it counts.)
        let ratio = (pages / (target / 1024).max(1)).max(1024);
        self.page_ratio.store(ratio, Relaxed);
    }

    /// Sweeps every unswept page of every pool. Returns a panic caught
    /// from `on_free` (the sweep completed regardless).
    #[must_use = "a panic from on_free must be resumed"]
    pub fn finish_sweeping(&self) -> PanicSlot {
        self.finish_sweeping_as(false)
    }

    /// [`HeapCore::finish_sweeping`] by a mutator with the world running
    /// (before it stops the world): its time counts as a lazy sweep step,
    /// as a mutator's sweeping does.
    #[must_use = "a panic from on_free must be resumed"]
    pub fn finish_sweeping_before_pause(&self) -> PanicSlot {
        self.finish_sweeping_as(true)
    }

    fn finish_sweeping_as(&self, step: bool) -> PanicSlot {
        if !self.pools.iter().any(|p| p.has_unswept()) {
            // (A page background sweeping took is swept when it returns.)
            self.wait_for_background_page();
            return PanicSlot::default();
        }
        let t = Instant::now();
        let swept = self.sweep_as("finish sweep", |cx| {
            for p in self.pools.iter() {
                p.finish_sweep(cx);
            }
        });
        let _ = self.trim_step(usize::MAX);
        self.wait_for_background_page();
        if step {
            self.counters.record_sweep_step(t.elapsed());
        } else {
            self.counters.add_sweep(t.elapsed());
        }
        swept.panic
    }

    /// Whether any pool still has unswept pages.
    pub fn has_unswept(&self) -> bool {
        self.pools.iter().any(|p| p.has_unswept())
    }

    /// Decommits up to `max` free pages beyond the commit level: pages in
    /// use plus free pages kept committed stay within the room the heap
    /// target takes, which is what the heap will grow back to before its
    /// next collection anyway (decommitting those would only make the
    /// allocator fault them in again). When the target falls, so does the
    /// committed memory, with the hysteresis of [`HeapCore::update_commit_level`].
    pub fn trim_step(&self, max: usize) -> usize {
        let level = self.commit_level.load(Relaxed).max(self.room_pages());
        let target = level.min(self.resource.max_pages());
        let keep = target.saturating_sub(self.resource.in_use_pages());
        self.resource.trim(&self.table, keep, max)
    }

    /// The pages the heap target takes: its bytes scaled by the ratio of
    /// pages in use to target bytes that the last cycle reached before its
    /// collection (from 1 up), since the next cycle fills pages the same
    /// way (the target counts object bytes, while pages in use also hold
    /// their slots' fragmentation: partly filled pages of many classes).
    /// Without the ratio a heap whose pages outgrew its byte target
    /// decommitted every page the sweep freed and faulted it back in at
    /// once (Guile compiling on the drop-in: 57,000 page faults instead of
    /// 7,600). A heap whose live set falls still shrinks at once: the
    /// ratio scales the new, lower target.
    ///
    /// The ratio counts at most 4 beyond a room of [`SMALL_ROOM`]: a small
    /// heap of many size classes holds a page per class however few bytes
    /// each takes between collections (`size_classes.c` on the drop-in: 19
    /// pages for a 256 KiB target), and trimming the pages beyond 4× the
    /// target decommitted two or three pages every collection that the
    /// next cycle faulted in again (4,500 `madvise` calls in 1,714
    /// collections, page faults and TLB shootdowns a quarter of the run).
    fn room_pages(&self) -> usize {
        let kib = self.sizer.target() as usize / 1024;
        let ratio = self.page_ratio.load(Relaxed);
        let room = kib * ratio / PAGE_SIZE;
        let bounded = kib * ratio.min(BOUNDED_PAGE_RATIO) / PAGE_SIZE;
        room.min(bounded.max(SMALL_ROOM / PAGE_SIZE))
    }

    /// Sets the commit level from the room the new target takes, at the
    /// end of a collection; returns whether it fell (free pages beyond it
    /// are then decommitted after the pause). The level rises with the
    /// room at once but falls only when the room falls below
    /// [`COMMIT_LEVEL_FALL`] of it: a heap at a steady size sees its target
    /// move by a few percent from one collection to the next, and
    /// decommitting the few pages of every small dip made the next cycle
    /// fault them in again (Guile's threads load on the drop-in: a trim
    /// after 183 of 494 collections, one to nine pages each, with
    /// `madvise` and page faults 3.5% of the run's samples). The pages kept
    /// are within the room of a recent target, so peak memory barely moves
    /// (the same on GCBench and Guile compiling, 2% more on Guile's
    /// threads load); a heap whose live set falls by more than an eighth
    /// shrinks at once.
    pub fn update_commit_level(&self) -> bool {
        let room = self.room_pages();
        let level = self.commit_level.load(Relaxed);
        let (num, den) = COMMIT_LEVEL_FALL;
        if room >= level {
            self.commit_level.store(room, Relaxed);
            false
        } else if room * den < level * num {
            self.commit_level.store(room, Relaxed);
            true
        } else {
            false
        }
    }

    /// Leaves `what` to decommit when the world runs again (called during
    /// a pause; the collecting thread then calls
    /// [`HeapCore::trim_after_pause`]).
    pub fn defer_trim(&self, what: TrimAfterPause) {
        self.pending_trim.fetch_max(what as u8, Relaxed);
    }

    /// Decommits what the last pause left (`defer_trim`), with the world
    /// running: a bounded number of pages per hold of the page resource's
    /// lock, as sweep steps trim, until none is left, and no more than the
    /// free pages queued when it starts (pages that sweeps release
    /// meanwhile are the sweeps' to trim). Called by the thread that ran
    /// the pause, after resuming the others.
    pub fn trim_after_pause(&self) {
        let what = self.pending_trim.swap(0, Relaxed);
        if what == 0 {
            return;
        }
        self.trim_in_pieces(what >= TrimAfterPause::All as u8, || {});
    }

    /// Decommits every free page the page resource holds, with the world
    /// running, in the pieces `trim_after_pause` takes, calling `between`
    /// after each (the caller's safepoint: a big heap's release must not
    /// hold up another thread's pause); returns the pages decommitted. The
    /// commit level falls to the room of the target (the hysteresis of
    /// [`HeapCore::update_commit_level`] starts again from there).
    pub fn release_free_pages(&self, between: impl FnMut()) -> usize {
        let pages = self.trim_in_pieces(true, between);
        self.commit_level.store(self.room_pages(), Relaxed);
        pages
    }

    /// Decommits free pages with the world running, at most
    /// [`TRIM_PAGES_AFTER_PAUSE`] per hold of the page resource's lock
    /// (`between` runs after each piece), until none is left to take or as
    /// many as were queued when it started are done (pages that sweeps
    /// release meanwhile are the sweeps' to trim): every free page with
    /// `all`, else those beyond the commit level (`trim_step`). A `trim`
    /// span on the timeline; returns the pages decommitted.
    fn trim_in_pieces(&self, all: bool, mut between: impl FnMut()) -> usize {
        let start = Instant::now();
        let budget = self.resource.dirty_pages();
        let mut pages = 0;
        while pages < budget {
            let n = if all {
                self.resource.trim(&self.table, 0, TRIM_PAGES_AFTER_PAUSE)
            } else {
                self.trim_step(TRIM_PAGES_AFTER_PAUSE)
            };
            pages += n;
            if n < TRIM_PAGES_AFTER_PAUSE {
                break;
            }
            between();
        }
        if pages > 0 {
            self.span("trim", start, Some(("pages", pages as u64)));
        }
        pages
    }

    /// Clears every mark bit: a collection abandoned after a panic in
    /// `trace` or `roots` leaves the heap exactly as before it. Every pool
    /// page was swept before marking began, so no other mark bit exists.
    pub fn clear_marks(&self) {
        for pool in self.pools.iter() {
            for page in pool.pages() {
                let d = self.table.desc(page);
                d.mark.clear_first(d.bitmap_words());
            }
        }
        self.large.clear_marks(&self.table);
    }

    /// Asks the next collection to compact every pool, filling pages in
    /// `order`.
    pub fn request_compaction(&self, order: CompactOrder) {
        let v = match order {
            CompactOrder::PinnedFirst => 1,
            CompactOrder::Address => 2,
        };
        self.compact_request.store(v, Relaxed);
    }

    /// Whether a full collection starting now may compact: the policy
    /// compacts on its own, verify mode moves everything, or a compaction
    /// is asked for.
    pub fn may_compact(&self) -> bool {
        self.config.compact != CompactPolicy::Never
            || self.config.verify_compaction
            || self.compaction_requested()
    }

    /// Whether a compaction is asked for (the next collection is full).
    pub fn compaction_requested(&self) -> bool {
        self.compact_request.load(Relaxed) != 0
    }

    /// The compaction asked for with [`HeapCore::request_compaction`], if
    /// any; the request is consumed.
    pub fn take_compaction_request(&self) -> Option<CompactOrder> {
        match self.compact_request.swap(0, Relaxed) {
            1 => Some(CompactOrder::PinnedFirst),
            2 => Some(CompactOrder::Address),
            _ => None,
        }
    }

    /// Sets the `keep_referents` bit of slot `slot` of page `page` (`d`),
    /// listing the page when its bitmap is new.
    pub fn set_keep(&self, d: &PageDesc, page: usize, slot: usize) {
        if !d.keep_referents.is_allocated() {
            self.keep.note(page);
        }
        d.keep_referents.set(slot);
    }

    /// Allocates a large object (counted against the heap's allowance);
    /// `None` when no span of pages is free.
    pub fn alloc_large(&self, size: usize, flags: AllocFlags) -> Option<usize> {
        let a = self.large.alloc(&self.table, &self.resource, size, flags)?;
        if flags.contains(AllocFlags::NEEDS_CLEANUP) && flags.contains(AllocFlags::KEEP_REFERENTS) {
            let page = self.table.page_index(a).expect("a heap object");
            self.set_keep(self.table.desc(page), page, 0);
        }
        self.sizer
            .add((size.div_ceil(PAGE_SIZE) * PAGE_SIZE) as u64);
        Some(a)
    }

    /// `addr` as an object of this heap, or a foreign-pointer error.
    pub fn check_object(&self, addr: usize) -> Result<ObjRef, Error> {
        match ObjRef::from_ptr(addr as *mut u8) {
            Some(o) if self.table.object_at(addr).is_some() => Ok(o),
            _ => Err(Error::ForeignPointer { addr }),
        }
    }

    /// The maximum heap size in bytes.
    pub fn max_heap(&self) -> usize {
        self.resource.max_pages() * PAGE_SIZE
    }

    /// Changes the maximum heap size to `bytes`, rounded down to whole
    /// pages: at least one page, at most the maximum the heap was created
    /// with. Returns the new maximum.
    pub fn set_max_heap(&self, bytes: usize) -> Result<usize, Error> {
        let reserved = self.resource.reserved_pages() * PAGE_SIZE;
        if bytes / PAGE_SIZE > self.resource.reserved_pages() {
            return Err(Error::InvalidArgument(format!(
                "max_heap {bytes} is above the {reserved} bytes the heap was created with \
                 (Config::max_heap / MOSAIC_MAX_HEAP sets the most it can ever be)"
            )));
        }
        if bytes < PAGE_SIZE {
            return Err(Error::InvalidArgument(format!(
                "max_heap {bytes} is below one page ({PAGE_SIZE} bytes)"
            )));
        }
        self.resource.set_max_pages(bytes / PAGE_SIZE);
        let max = self.max_heap();
        self.sizer.set_max(max as u64);
        Ok(max)
    }

    /// Sets the side bits for `flags` on the small object at `addr`, just
    /// allocated by the caller: page and slot come from the address alone
    /// (no lookup, no liveness check).
    #[inline]
    pub fn set_small_flags(&self, addr: usize, flags: AllocFlags) {
        let off = addr - self.table.base();
        let d = self.table.desc(off >> PAGE_SHIFT);
        let slot = d.slot_of_offset(off & PAGE_MASK);
        if flags.contains(AllocFlags::NO_POINTERS) {
            d.no_pointers.set(slot);
        }
        if flags.contains(AllocFlags::NEEDS_CLEANUP) {
            d.cleanup.set(slot);
            d.set_has_cleanup(true);
            if flags.contains(AllocFlags::KEEP_REFERENTS) {
                self.set_keep(d, off >> PAGE_SHIFT, slot);
            }
        }
        if flags.contains(AllocFlags::PINNED) {
            d.pin.set(slot);
        }
        if flags.contains(AllocFlags::CONSERVATIVE) {
            d.conservative.set(slot);
        } else if flags.contains(AllocFlags::BARRIERED) {
            d.barriered.set(slot);
        }
    }
}

/// The result of [`HeapCore::with_sweeper`].
pub struct Swept<R> {
    pub value: R,
    /// Pages swept.
    pub pages: usize,
    /// A panic caught from `on_free`, to resume once the caller is consistent.
    pub panic: PanicSlot,
}

impl<E: Embedder> Drop for HeapCore<E> {
    /// Objects that asked for cleanup get it when the heap goes away. A
    /// panicking `on_free` does not stop the others; the first panic
    /// continues afterwards (unless the thread is already unwinding).
    fn drop(&mut self) {
        let mut panics = PanicSlot::default();
        for pool in self.pools.iter() {
            for page in pool.pages() {
                let d = self.table.desc(page);
                if !d.has_cleanup() {
                    continue;
                }
                let base = self.table.page_addr(page);
                d.cleanup.for_each_set(d.slot_count(), |slot| {
                    if d.alloc.get(slot) {
                        let obj = ObjRef::from_addr(base + slot * d.slot_size());
                        panics.call(|| self.embedder.on_free(obj));
                    }
                });
            }
        }
        for a in self.large.objects(&self.table) {
            let head = self.table.page_index(a).expect("large object in heap");
            if self.table.desc(head).cleanup.get(0) {
                panics.call(|| self.embedder.on_free(ObjRef::from_addr(a)));
            }
        }
        if !std::thread::panicking() {
            panics.resume();
        }
    }
}

/// Counts a thread inside [`HeapCore::with_sweeper`] until it has flushed
/// its release buffer (or unwound).
pub(super) struct SweeperGuard<'a>(&'a AtomicUsize);

impl<'a> SweeperGuard<'a> {
    pub(super) fn enter(n: &'a AtomicUsize) -> Self {
        n.fetch_add(1, AcqRel);
        SweeperGuard(n)
    }
}

impl Drop for SweeperGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Release);
    }
}
