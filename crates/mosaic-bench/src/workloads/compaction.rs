//! Compaction experiments (seed 001, Ruby PR #8420 "Compaction should
//! prioritise pages with more pinned objects"), one heap per call, run in a
//! worker process of `--only compaction` so that RSS is the process's own.
//!
//! - [`diagram`]: the PR's first script. Four runs of 40-byte objects
//!   keeping (and pinning) one in 7, 5, 2 and 1, the rest garbage; then one
//!   movable "wrapper" per kept object, allocated after them (the PR's
//!   `Fiddle::Pinned` objects), pointing at it. Collect, dump, compact in
//!   the given page order, dump.
//! - [`rss`]: the PR's second script. A block of garbage, then groups of
//!   one kept, pinned object and 50 more (garbage in the PR; kept reachable
//!   with [`RssSetup::FiftyKept`]), then the wrappers; collect (unless
//!   [`RssSetup::NoPriorCollect`]), compact; RSS, committed bytes and the
//!   compaction's time. [`RssSetup::SparseOld`] keeps a few objects of the
//!   garbage block, so its pages are sparse instead of empty.
//! - [`throughput`]: records of power-law sizes, 80% dropped at random,
//!   each survivor pointing at another; collect, compact: bytes moved per
//!   second of compaction.
//! - [`varsize`]: the variable-size workload's churn, then 80% of its
//!   records dropped at random: committed bytes and RSS with and without a
//!   compaction.
//!
//! Objects use [`Counted`]: a reference count word, then references.

use std::time::Duration;

use mosaic::{CompactOrder, Config, Heap, HeapPolicy, Mutator, ObjRef, Root};
use serde::{Deserialize, Serialize};

use super::{varsize as vs, Rng};
use crate::vm::{Counted, Vm};

pub type CountedVm = Vm<Counted>;

/// Size of the objects of the controlled heaps: Ruby's 40-byte slot (Mosaic's
/// 48-byte size class).
pub const OBJ: usize = 40;

/// The page order a compaction fills and empties in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    Address,
    PinnedFirst,
}

impl Order {
    pub const BOTH: [Order; 2] = [Order::PinnedFirst, Order::Address];

    pub fn compact_order(self) -> CompactOrder {
        match self {
            Order::Address => CompactOrder::Address,
            Order::PinnedFirst => CompactOrder::PinnedFirst,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Order::Address => "address",
            Order::PinnedFirst => "pinned-first",
        }
    }
}

/// What the 50 objects of each group of [`rss`] are, and whether a plain
/// collection precedes the compaction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RssSetup {
    /// The PR's script: the 50 are garbage, the movable objects are the
    /// wrappers allocated after all groups; `GC.start` then `GC.compact`.
    #[default]
    Seed,
    /// The same heap, compacted without the collection before (the empty
    /// pages of the garbage block are still the pool's when it plans).
    NoPriorCollect,
    /// The 50 are kept reachable (movable); no wrappers.
    FiftyKept,
    /// The seed script, but one object in every [`SPARSE_EVERY`] of the
    /// garbage block stays reachable (movable), so the block's pages are
    /// sparse rather than empty after the collection, as old pages of a
    /// long-running heap are. Not the seed's experiment: it shows where
    /// the page order matters when emptied pages are given back.
    SparseOld,
}

/// One object in this many of [`RssSetup::SparseOld`]'s garbage block stays.
pub const SPARSE_EVERY: usize = 50;

impl RssSetup {
    pub const ALL: [RssSetup; 4] = [
        RssSetup::Seed,
        RssSetup::NoPriorCollect,
        RssSetup::FiftyKept,
        RssSetup::SparseOld,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RssSetup::Seed => "seed script (collect, compact)",
            RssSetup::NoPriorCollect => "seed script, compact without prior collect",
            RssSetup::FiftyKept => "50 movable kept per pinned (brief's variant)",
            RssSetup::SparseOld => "seed script, 1 in 50 of the garbage block kept (variant)",
        }
    }
}

/// One worker run of an experiment.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "experiment", rename_all = "kebab-case")]
pub enum Experiment {
    Diagram {
        order: Order,
        per_run: usize,
        /// Where the heap dumps go.
        before: String,
        after: String,
    },
    Rss {
        order: Order,
        setup: RssSetup,
        params: RssParams,
    },
    Throughput {
        gc_threads: usize,
        records: usize,
    },
    Varsize {
        compact: bool,
        params: vs::Params,
    },
}

/// A heap that never collects on its own while a controlled layout is
/// built (the PR's `GC.disable`).
fn fixed(config: Config) -> Config {
    Config {
        heap_policy: HeapPolicy::Fixed,
        max_heap: 2 << 30,
        ..config
    }
}

/// A vector of `n` references (a large object when it exceeds 8 KiB: it
/// never moves), rooted.
fn vector(m: &mut Mutator<CountedVm>, n: usize) -> Root {
    let v = m.alloc(8 * (n + 1)).expect("vector");
    // SAFETY: a fresh vector: its count word first.
    unsafe { (v.as_ptr() as *mut usize).write(n) };
    m.root(v).expect("root")
}

fn set(v: &Root, i: usize, o: Option<ObjRef>) {
    let v = v.get().expect("rooted vector");
    // SAFETY: `i` is below the vector's count (checked by the caller's loop
    // bounds, asserted in debug builds).
    unsafe {
        debug_assert!(i < (v.as_ptr() as *const usize).read());
        (v.as_ptr() as *mut *mut u8)
            .add(1 + i)
            .write(o.map_or(std::ptr::null_mut(), |o| o.as_ptr()));
    }
}

fn get(v: &Root, i: usize) -> Option<ObjRef> {
    let v = v.get().expect("rooted vector");
    // SAFETY: as in `set`.
    ObjRef::from_ptr(unsafe { (v.as_ptr() as *const *mut u8).add(1 + i).read() })
}

/// A 40-byte object with no references: count 0, then a word of payload
/// written, as a Ruby object's header is (so its page is touched and
/// resident, as the PR's objects are).
fn leaf(m: &mut Mutator<CountedVm>) -> ObjRef {
    let o = m.alloc(OBJ).expect("object");
    // SAFETY: a fresh 40-byte object: count 0, then payload.
    unsafe {
        (o.as_ptr() as *mut usize).write(0);
        (o.as_ptr() as *mut usize).add(1).write(0x4f42_4a45_4354);
    }
    o
}

/// A 40-byte object with one reference, to `target` (which must be
/// reachable: it is not rooted across the allocation).
fn wrapper(m: &mut Mutator<CountedVm>, target: ObjRef) -> ObjRef {
    let w = m.alloc(OBJ).expect("wrapper");
    // SAFETY: a fresh 40-byte object: count 1, one reference.
    unsafe {
        (w.as_ptr() as *mut usize).write(1);
        (w.as_ptr() as *mut *mut u8).add(1).write(target.as_ptr());
    }
    w
}

/// The index of the pool holding `OBJ`-byte objects.
fn obj_pool<E: mosaic::Embedder>(heap: &Heap<E>) -> usize {
    heap.stats()
        .pools
        .iter()
        .position(|p| p.slot_size >= OBJ)
        .expect("a pool for 40-byte objects")
}

fn pool_pages<E: mosaic::Embedder>(heap: &Heap<E>, pool: usize) -> usize {
    heap.stats().pools[pool].pages
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// What [`diagram`] saw.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DiagramOut {
    pub order: String,
    pub pool: usize,
    pub pinned: usize,
    pub pages_before: usize,
    pub pages_after: usize,
    pub pages_emptied: u64,
    pub objects_moved: u64,
    pub compaction_ms: f64,
    /// The wrappers still point at their pinned objects, in order.
    pub check: u64,
}

/// The PR's first script with `per_run` kept objects per density (the PR:
/// 32 000); dumps to `before` and `after` (JSON lines).
pub fn diagram(
    order: Order,
    per_run: usize,
    before: &std::path::Path,
    after: &std::path::Path,
    config: Config,
) -> DiagramOut {
    let heap = Heap::new(fixed(config), CountedVm::default()).expect("heap");
    let mut m = heap.mutator().expect("mutator");
    let kept = 4 * per_run;
    let list = vector(&mut m, kept);
    let mut k = 0;
    for every in [7, 5, 2, 1] {
        for _ in 0..per_run {
            let o = leaf(&mut m);
            set(&list, k, Some(o));
            m.pin(o).expect("pin");
            k += 1;
            for _ in 1..every {
                leaf(&mut m);
            }
        }
    }
    let wrappers = vector(&mut m, kept);
    for i in 0..kept {
        let w = wrapper(&mut m, get(&list, i).expect("kept"));
        set(&wrappers, i, Some(w));
    }
    m.collect();
    let pool = obj_pool(&heap);
    m.dump_heap(before).expect("dump before");
    let pages_before = pool_pages(&heap, pool);
    m.compact_toward(order.compact_order()).expect("compact");
    let c = heap.stats().last_compaction;
    let summary = m.dump_heap(after).expect("dump after");
    DiagramOut {
        order: order.name().into(),
        pool,
        pinned: summary.pinned,
        pages_before,
        pages_after: pool_pages(&heap, pool),
        pages_emptied: c.pages_emptied,
        objects_moved: c.objects_moved,
        compaction_ms: ms(c.time),
        check: wrappers_check(&list, &wrappers, kept),
    }
}

/// How many wrappers still point at their kept object (all of them, or
/// compaction broke a reference).
fn wrappers_check(list: &Root, wrappers: &Root, n: usize) -> u64 {
    (0..n)
        .filter(|&i| {
            let w = get(wrappers, i).expect("wrapper");
            // SAFETY: wrappers hold their count, then one reference.
            let t = unsafe { (w.as_ptr() as *const *mut u8).add(1).read() };
            Some(t) == get(list, i).map(|o| o.as_ptr())
        })
        .count() as u64
}

/// The PR's second script's sizes: 288 000 objects of garbage, 36 000
/// groups of 1 + 50.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct RssParams {
    pub garbage: usize,
    pub groups: usize,
    pub per_group: usize,
}

impl RssParams {
    pub const SEED: RssParams = RssParams {
        garbage: 288_000,
        groups: 36_000,
        per_group: 50,
    };
}

/// What [`rss`] measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RssOut {
    pub order: String,
    pub setup: RssSetup,
    /// Process RSS and committed heap bytes right after the compaction,
    /// and after a `finish_sweep` that follows it.
    pub rss_mb: f64,
    pub committed_mb: f64,
    pub rss_swept_mb: f64,
    pub committed_swept_mb: f64,
    pub pool_pages_before: usize,
    pub pool_pages_after: usize,
    pub compaction_ms: f64,
    pub objects_moved: u64,
    pub pages_emptied: u64,
    pub check: u64,
}

const MB: f64 = 1024.0 * 1024.0;

pub fn rss(order: Order, setup: RssSetup, p: RssParams, config: Config) -> RssOut {
    let heap = Heap::new(fixed(config), CountedVm::default()).expect("heap");
    let mut m = heap.mutator().expect("mutator");
    let sparse = setup == RssSetup::SparseOld;
    let old = vector(&mut m, if sparse { p.garbage / SPARSE_EVERY } else { 0 });
    for i in 0..p.garbage {
        let o = leaf(&mut m);
        if sparse && i % SPARSE_EVERY == 0 && i / SPARSE_EVERY < p.garbage / SPARSE_EVERY {
            set(&old, i / SPARSE_EVERY, Some(o));
        }
    }
    let list = vector(&mut m, p.groups);
    let keep_all = setup == RssSetup::FiftyKept;
    let kept = vector(&mut m, if keep_all { p.groups * p.per_group } else { 0 });
    for g in 0..p.groups {
        let o = leaf(&mut m);
        set(&list, g, Some(o));
        m.pin(o).expect("pin");
        for j in 0..p.per_group {
            let x = leaf(&mut m);
            if keep_all {
                set(&kept, g * p.per_group + j, Some(x));
            }
        }
    }
    let wrappers = vector(&mut m, if keep_all { 0 } else { p.groups });
    if !keep_all {
        for g in 0..p.groups {
            let w = wrapper(&mut m, get(&list, g).expect("kept"));
            set(&wrappers, g, Some(w));
        }
    }
    let pool = obj_pool(&heap);
    if setup != RssSetup::NoPriorCollect {
        m.collect();
    }
    let pool_pages_before = pool_pages(&heap, pool);
    m.compact_toward(order.compact_order()).expect("compact");
    let s = heap.stats();
    let c = s.last_compaction;
    let (rss_mb, committed_mb) = (s.rss_bytes as f64 / MB, s.committed_bytes as f64 / MB);
    m.finish_sweep();
    let s = heap.stats();
    let check = if keep_all {
        (0..p.groups * p.per_group)
            .filter(|&i| get(&kept, i).is_some())
            .count() as u64
    } else {
        let kept = if sparse { p.garbage / SPARSE_EVERY } else { 0 };
        let old_kept = (0..kept).filter(|&i| get(&old, i).is_some()).count() as u64;
        wrappers_check(&list, &wrappers, p.groups) + old_kept
    };
    RssOut {
        order: order.name().into(),
        setup,
        rss_mb,
        committed_mb,
        rss_swept_mb: s.rss_bytes as f64 / MB,
        committed_swept_mb: s.committed_bytes as f64 / MB,
        pool_pages_before,
        pool_pages_after: s.pools[pool].pages,
        compaction_ms: ms(c.time),
        objects_moved: c.objects_moved,
        pages_emptied: c.pages_emptied,
        check,
    }
}

/// What [`throughput`] measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ThroughputOut {
    pub gc_threads: usize,
    pub live_mb: f64,
    pub objects_moved: u64,
    pub bytes_moved: u64,
    pub compaction_ms: f64,
    pub mb_per_s: f64,
    pub pages_emptied: u64,
    pub survivors: u64,
    pub check: u64,
}

/// `records` records of power-law sizes (16 B to 4 KiB), each a count
/// word, one reference and payload; 80% dropped at random, every survivor
/// pointing at another survivor; collect, then compact (pinned-first).
pub fn throughput(gc_threads: usize, records: usize, config: Config) -> ThroughputOut {
    let config = Config {
        gc_threads,
        ..fixed(config)
    };
    let heap = Heap::new(config, CountedVm::default()).expect("heap");
    let mut m = heap.mutator().expect("mutator");
    let table = vector(&mut m, records);
    let mut rng = Rng::new(11);
    for i in 0..records {
        let size = rng.power_law_size().max(24);
        let r = m.alloc(size).expect("record");
        // SAFETY: at least 24 bytes: count 1, a null reference, the
        // record's index in the table.
        unsafe {
            (r.as_ptr() as *mut usize).write(1);
            (r.as_ptr() as *mut usize).add(2).write(i);
        }
        set(&table, i, Some(r));
    }
    let mut alive = Vec::new();
    for i in 0..records {
        if rng.next_u64() % 5 == 0 {
            alive.push(i);
        } else {
            set(&table, i, None);
        }
    }
    for &i in &alive {
        let j = alive[(rng.next_u64() % alive.len() as u64) as usize];
        let r = get(&table, i).expect("alive");
        // SAFETY: the reference word of a record.
        unsafe {
            (r.as_ptr() as *mut *mut u8)
                .add(1)
                .write(get(&table, j).expect("alive").as_ptr())
        };
    }
    m.collect();
    m.finish_sweep();
    let live_mb = heap.stats().last_marked_bytes as f64 / MB;
    m.compact_toward(CompactOrder::PinnedFirst)
        .expect("compact");
    let c = heap.stats().last_compaction;
    // Survivors whose reference still leads to the record the table holds
    // at the index that record carries (all of them, or a reference broke).
    let check = alive
        .iter()
        .filter(|&&i| {
            let r = get(&table, i).expect("alive");
            // SAFETY: a record: its reference is another record, whose
            // third word is its index.
            unsafe {
                let t = (r.as_ptr() as *const *mut u8).add(1).read();
                let j = (t as *const usize).add(2).read();
                j < records && get(&table, j).map(|o| o.as_ptr()) == Some(t)
            }
        })
        .count() as u64;
    ThroughputOut {
        gc_threads,
        live_mb,
        objects_moved: c.objects_moved,
        bytes_moved: c.bytes_moved,
        compaction_ms: ms(c.time),
        mb_per_s: c.bytes_moved as f64 / MB / c.time.as_secs_f64().max(1e-9),
        pages_emptied: c.pages_emptied,
        survivors: alive.len() as u64,
        check,
    }
}

/// What [`varsize`] measured: after dropping 80% (collect, finish_sweep)
/// and after the compaction (or a second plain collection).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct VarsizeOut {
    pub compact: bool,
    pub committed_dropped_mb: f64,
    pub rss_dropped_mb: f64,
    pub committed_mb: f64,
    pub rss_mb: f64,
    pub pool_pages_dropped: usize,
    pub pool_pages: usize,
    pub objects_moved: u64,
    pub pages_emptied: u64,
    pub compaction_ms: f64,
    /// The surviving records' checksum (their bytes verified).
    pub check: u64,
}

pub fn varsize(compact: bool, p: &vs::Params, config: Config) -> VarsizeOut {
    let heap = vs::heap(vs::Layout::Mosaic, config);
    let mut m = heap.mutator().expect("mutator");
    let table = vs::churn(vs::Layout::Mosaic, p, &mut m);
    let t = table.get().expect("table");
    // SAFETY: the table is a counted vector of `records` references.
    let slots = unsafe { (t.as_ptr() as *mut *mut u8).add(1) };
    let mut rng = Rng::new(23);
    for i in 0..p.records {
        if rng.next_u64() % 5 != 0 {
            // SAFETY: in bounds of the table.
            unsafe { slots.add(i).write(std::ptr::null_mut()) };
        }
    }
    m.collect();
    m.finish_sweep();
    let s = heap.stats();
    let (committed_dropped_mb, rss_dropped_mb) =
        (s.committed_bytes as f64 / MB, s.rss_bytes as f64 / MB);
    let pool_pages_dropped = s.pool_pages();
    if compact {
        m.compact_toward(CompactOrder::PinnedFirst)
            .expect("compact");
    } else {
        m.collect();
    }
    m.finish_sweep();
    let s = heap.stats();
    let c = s.last_compaction;
    let check = vs::checksum(table.get().expect("table"), p.records);
    VarsizeOut {
        compact,
        committed_dropped_mb,
        rss_dropped_mb,
        committed_mb: s.committed_bytes as f64 / MB,
        rss_mb: s.rss_bytes as f64 / MB,
        pool_pages_dropped,
        pool_pages: s.pool_pages(),
        objects_moved: if compact { c.objects_moved } else { 0 },
        pages_emptied: if compact { c.pages_emptied } else { 0 },
        compaction_ms: if compact { ms(c.time) } else { 0.0 },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Config {
        Config {
            gc_threads: 2,
            // The uncapped square-root heap: the 2,000-record varsize run
            // fragments its pages only with that much headroom (capped at
            // 3x live it stays compact, and compaction finds nothing to move).
            headroom_max: 0.0,
            verify: true,
            ..Config::default()
        }
    }

    #[test]
    fn the_controlled_heap_compacts_around_its_pinned_objects() {
        let dir = std::env::temp_dir();
        let id = std::process::id();
        for order in Order::BOTH {
            let b = dir.join(format!("mosaic-cb-{id}-{}-before.jsonl", order.name()));
            let a = dir.join(format!("mosaic-cb-{id}-{}-after.jsonl", order.name()));
            let o = diagram(order, 2000, &b, &a, small());
            std::fs::remove_file(&b).ok();
            std::fs::remove_file(&a).ok();
            assert_eq!(o.check, 8000, "{o:?}");
            assert_eq!(o.pinned, 8000, "{o:?}");
            assert!(o.objects_moved > 0 && o.pages_emptied > 0, "{o:?}");
            assert!(o.pages_after < o.pages_before, "{o:?}");
        }
    }

    #[test]
    fn rss_setups_keep_every_object() {
        let p = RssParams {
            garbage: 20_000,
            groups: 2000,
            per_group: 50,
        };
        for setup in RssSetup::ALL {
            for order in Order::BOTH {
                let o = rss(order, setup, p, small());
                let want = match setup {
                    RssSetup::FiftyKept => 100_000,
                    RssSetup::SparseOld => 2000 + 20_000 / SPARSE_EVERY as u64,
                    _ => 2000,
                };
                assert_eq!(o.check, want, "{setup:?} {order:?}: {o:?}");
                assert!(o.rss_mb > 0.0 && o.committed_mb > 0.0);
            }
        }
    }

    #[test]
    fn throughput_moves_survivors_and_keeps_their_references() {
        for threads in [1, 2] {
            let o = throughput(threads, 20_000, small());
            assert!(o.objects_moved > 0 && o.bytes_moved > 0, "{o:?}");
            assert_eq!(o.check, o.survivors, "{o:?}");
            assert!((3000..5000).contains(&o.check), "{o:?}");
        }
    }

    #[test]
    fn varsize_records_survive_compaction() {
        let p = vs::Params {
            records: 2000,
            steps: 20_000,
        };
        let a = varsize(true, &p, small());
        let b = varsize(false, &p, small());
        assert_eq!(a.check, b.check);
        assert!(a.objects_moved > 0, "{a:?}");
    }
}
