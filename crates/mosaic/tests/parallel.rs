//! Parallel marking on several GC workers (issue 9): big graphs whose
//! marking must be shared out (work stealing), counted exactly, and a panic
//! on a worker thread that abandons the collection cleanly.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::Relaxed;

use common::*;
use mosaic::{Config, ObjRef};

fn config(gc_threads: usize) -> Config {
    Config {
        gc_threads,
        ..small_config()
    }
}

/// A complete binary tree of `depth` levels of pairs, ids 1.. in
/// breadth-first order; returns the root.
fn tree(m: &mut TestMutator, depth: u32) -> ObjRef {
    // Bottom-up, a level at a time, each level rooted while the next is built.
    let mut level: Vec<mosaic::Root> = Vec::new();
    for d in (0..depth).rev() {
        let first = 1u64 << d;
        let mut next = Vec::with_capacity(1 << d);
        for i in 0..(1u64 << d) {
            let kids = if level.is_empty() {
                (None, None)
            } else {
                let k = 2 * i as usize;
                (level[k].get(), level[k + 1].get())
            };
            let p = new_pair(m, first + i, kids.0, kids.1).unwrap();
            next.push(m.root(p).unwrap());
        }
        level = next;
    }
    level[0].get().unwrap()
}

/// Checks every node of the tree below `root` has its id and children.
fn check_tree(root: ObjRef, depth: u32) {
    let mut stack = vec![(root, 1u64, 0u32)];
    let mut seen = 0u64;
    while let Some((o, id, d)) = stack.pop() {
        assert_eq!(header(o).2, id, "node {id} intact");
        seen += 1;
        let (l, r) = (field(o, 0), field(o, 1));
        if d + 1 < depth {
            stack.push((l.expect("left child"), 2 * id, d + 1));
            stack.push((r.expect("right child"), 2 * id + 1, d + 1));
        } else {
            assert!(l.is_none() && r.is_none());
        }
    }
    assert_eq!(seen, (1 << depth) - 1);
}

/// Sweeps, then allocates 200,000 pairs: allocation reuses every free
/// slot, so a node of the tree below `root` that no worker marked is
/// overwritten, and the check that follows finds it.
fn fill_free_slots_then_check(m: &mut TestMutator, root: ObjRef, depth: u32) {
    m.finish_sweep();
    for i in 0..200_000u64 {
        new_pair(m, 2_000_000 + i, None, None).unwrap();
    }
    check_tree(root, depth);
}

/// Deep and wide graphs are marked exactly, whatever the worker count:
/// work moves between workers (the tree's levels are shared out, a long
/// list is not), and nothing is lost or marked twice.
#[test]
fn marking_counts_every_object_once_with_any_number_of_workers() {
    for workers in [1, 2, 3, 4, 8] {
        let heap = heap(config(workers));
        let mut m = heap.mutator().unwrap();
        let depth = 17;
        let root = tree(&mut m, depth);
        let root = m.root(root).unwrap();
        // A 50 000-long list beside it: one worker's work, nothing to share.
        let list = m.empty_root();
        for i in 0..50_000u64 {
            let head = new_pair(&mut m, 1_000_000 + i, list.get(), None).unwrap();
            list.set(Some(head));
        }
        for _ in 0..3 {
            m.collect();
            assert_eq!(
                heap.stats().last_marked,
                (1 << depth) - 1 + 50_000,
                "{workers} workers"
            );
        }
        fill_free_slots_then_check(&mut m, root.get().unwrap(), depth);
        let mut o = list.get();
        let mut n = 0;
        while let Some(x) = o {
            assert_eq!(header(x).2, 1_000_000 + 49_999 - n);
            n += 1;
            o = field(x, 0);
        }
        assert_eq!(n, 50_000);
    }
}

/// A panic in `trace` on any worker abandons the collection: every worker
/// stops, the marks are cleared, the panic reaches the collecting thread,
/// and the next collection is exact.
#[test]
fn a_panic_in_trace_on_a_worker_abandons_the_collection() {
    quiet_expected_panics();
    let heap = heap(config(4));
    let mut m = heap.mutator().unwrap();
    let depth = 15;
    let root = tree(&mut m, depth);
    let root = m.root(root).unwrap();
    for victim in [3u64, 1 << 10, (1 << 14) + 77] {
        heap.embedder().panic_trace_id.store(victim, Relaxed);
        let r = catch_unwind(AssertUnwindSafe(|| m.collect()));
        assert!(r.is_err(), "the panic on node {victim} propagates");
        heap.embedder().panic_trace_id.store(0, Relaxed);
        m.collect();
        assert_eq!(heap.stats().last_marked, (1 << depth) - 1);
    }
    fill_free_slots_then_check(&mut m, root.get().unwrap(), depth);
}

/// The release phase (seed 004) on 1 to 8 workers, with either page store:
/// exactly the empty pages go back in the pause, counted once each; pages
/// with a survivor or with dead objects that asked for cleanup stay for the
/// lazy sweep; dead large objects are freed with their `on_free`; and every
/// page given back is handed out again, zeroed, without touching a
/// survivor.
#[test]
fn the_release_phase_gives_back_exactly_the_empty_pages() {
    use mosaic::{AllocFlags, HeapPolicy, PageResourceKind};
    use std::collections::BTreeSet;
    for store in [PageResourceKind::LockFree, PageResourceKind::Mutex] {
        for workers in [1, 2, 3, 4, 8] {
            let heap = heap(Config {
                heap_policy: HeapPolicy::Fixed,
                page_resource: store,
                // (The unswept pages are counted: none swept in the
                // background.)
                background_sweep: false,
                ..config(workers)
            });
            let mut m = heap.mutator().unwrap();
            // 400 pages of 32-byte pairs; the first pair of every third page
            // survives, chained from one root.
            let keep = m.empty_root();
            let mut pages = BTreeSet::new();
            let mut kept_pages = BTreeSet::new();
            let mut kept = 0u64;
            for i in 0..400 * 2048u64 {
                let p = new_pair(&mut m, i, keep.get(), None).unwrap();
                let page = p.addr() >> 16;
                pages.insert(page);
                if page % 3 == 0 && kept_pages.insert(page) {
                    keep.set(Some(p));
                    kept += 1;
                }
            }
            // Dead 48-byte objects that ask for cleanup, and large objects:
            // every other one dead, half of those with cleanup.
            for i in 0..5_000u64 {
                new_bytes(&mut m, 10_000_000 + i, 32, AllocFlags::NEEDS_CLEANUP).unwrap();
            }
            let large = m.empty_root();
            let mut live_pages = kept_pages.clone();
            for i in 0..20u64 {
                let flags = if i % 4 == 1 {
                    AllocFlags::NEEDS_CLEANUP
                } else {
                    AllocFlags::NONE
                };
                let o = new_bytes(&mut m, 20_000_000 + i, 100_000, flags).unwrap();
                if i % 2 == 0 {
                    let v = new_pair(&mut m, 30_000_000 + i, large.get(), Some(o)).unwrap();
                    large.set(Some(v));
                    pages.insert(v.addr() >> 16);
                    live_pages.insert(v.addr() >> 16);
                }
            }
            let s = heap.stats();
            assert_eq!(s.collections, 0, "no collection while filling");
            let pool48 = |s: &mosaic::Stats| s.pools.iter().find(|p| p.slot_size == 48).cloned();
            let cleanup_pages = pool48(&s).unwrap().pages;
            m.collect();
            let s = heap.stats();
            let what = format!("{store:?}, {workers} workers");
            assert_eq!(s.last_marked, kept + 20, "{what}");
            let empty = (pages.len() - live_pages.len()) as u64;
            assert_eq!(s.last_released_pages, empty, "{what}");
            let pool32 = s.pools.iter().find(|p| p.slot_size == 32).unwrap();
            assert_eq!(pool32.pages_released, empty, "{what}");
            assert_eq!(pool32.pages, live_pages.len(), "{what}");
            assert_eq!(pool32.unswept_pages, live_pages.len(), "{what}");
            let p48 = pool48(&s).unwrap();
            assert_eq!(
                p48.unswept_pages, cleanup_pages,
                "cleanup pages stay: {what}"
            );
            assert_eq!(s.large.objects, 10, "{what}");
            assert_eq!(s.release_phases.count, 1, "{what}");
            let mut freed = heap.embedder().freed.lock().clone();
            freed.sort_unstable();
            let dead_large: Vec<u64> = (0..20)
                .filter(|i| i % 4 == 1)
                .map(|i| 20_000_000 + i)
                .collect();
            assert_eq!(freed, dead_large, "large on_free once each: {what}");
            m.finish_sweep();
            assert_eq!(heap.embedder().freed.lock().len(), 5 + 5_000, "{what}");
            // Allocate over every page given back: each allocation must be
            // zeroed (checked by new_pair) and no survivor overwritten.
            for i in 0..600 * 2048u64 {
                new_pair(&mut m, 40_000_000 + i, None, None).unwrap();
            }
            let mut o = keep.get();
            let mut n = 0;
            while let Some(x) = o {
                assert!(header(x).2 < 400 * 2048, "{what}");
                assert_eq!(x.addr() >> 16, *kept_pages.iter().rev().nth(n).unwrap());
                n += 1;
                o = field(x, 0);
            }
            assert_eq!(n as u64, kept, "{what}");
        }
    }
}

/// Workers set mark bits with plain stores and keep their own copy
/// (`collect/own_marks.rs`): two workers storing one mark word at once
/// lose a bit, which the merge must restore. A conservative array whose
/// 4 KiB chunks (shared out among the workers) each point at every
/// `CHUNKS`-th pair makes neighbouring chunks mark neighbouring pairs,
/// the same mark words, at the same moment. A lost bit would free a live
/// pair: every pair keeps its contents through collections and the reuse
/// of every free slot, and each is counted once.
#[test]
fn workers_marking_neighbouring_objects_at_once_lose_no_mark() {
    const CHUNK_WORDS: usize = 512;
    const CHUNKS: usize = 256;
    let n = CHUNK_WORDS * CHUNKS;
    for workers in [2, 3, 4] {
        let heap = heap(config(workers));
        let mut m = heap.mutator().unwrap();
        let arr = new_flagged_conservative(&mut m, 1, n).unwrap();
        let arr = m.root(arr).unwrap();
        // Pair k goes to word (k % CHUNKS) * CHUNK_WORDS + k / CHUNKS: the
        // chunk of its rank modulo CHUNKS (stored at once, so a collection
        // meanwhile keeps it).
        let word = |k: usize| (k % CHUNKS) * CHUNK_WORDS + k / CHUNKS;
        for k in 0..n {
            let p = new_pair(&mut m, 10 + k as u64, None, None).unwrap();
            set_word(arr.get().unwrap(), word(k), p.addr());
        }
        for round in 0..8 {
            m.collect();
            assert_eq!(
                heap.stats().last_marked,
                n as u64 + 1,
                "{workers} workers, round {round}: each object counted once"
            );
            m.finish_sweep();
            // Garbage pairs fill every free slot: a live pair freed by a
            // lost mark would be overwritten.
            for i in 0..20_000u64 {
                new_pair(&mut m, 1 << 40 | i, None, None).unwrap();
            }
            let a = arr.get().unwrap();
            for k in 0..n {
                let p = field(a, word(k)).expect("pair");
                assert_eq!(header(p).2, 10 + k as u64, "{workers} workers: pair {k}");
            }
        }
    }
}

/// A small heap whose marking is slow (0.5 ms or more on one thread: a
/// runtime's mark procedures, megabytes of root ranges) is marked on every
/// worker from the next collection on, and goes back to the collecting
/// thread alone once marking is quick again; the pause timeline shows one
/// `roots` span per worker that ran a collection.
#[test]
fn slow_marking_of_a_small_heap_moves_to_every_worker_and_back() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    let path = std::env::temp_dir().join(format!("mosaic-par-rule-{}.json", std::process::id()));
    let slow = Arc::new(AtomicBool::new(true));
    {
        let heap = heap(Config {
            gc_threads: 2,
            // Far more than this heap holds: only the time rule applies.
            parallel_min_live: 1 << 30,
            trace: Some(path.clone()),
            ..small_config()
        });
        let s = slow.clone();
        *heap.embedder().roots_hook.lock() = Some(Box::new(move || {
            if s.load(Relaxed) {
                let t = Instant::now();
                while t.elapsed() < Duration::from_millis(2) {
                    std::hint::spin_loop();
                }
            }
        }));
        let mut m = heap.mutator().unwrap();
        let keep = m.empty_root();
        for i in 0..100u64 {
            let p = new_pair(&mut m, i, keep.get(), None).unwrap();
            keep.set(Some(p));
        }
        // 1: serial (nothing measured yet), slow. 2: parallel, slow.
        // 3: parallel (2's marking was slow), quick. Then serial again
        // (at once, unless waking the worker made 3 look slow too).
        for n in 1..=10 {
            if n == 3 {
                slow.store(false, Relaxed);
            }
            m.collect();
        }
        drop(m);
        heap.write_trace().unwrap();
    }
    let per_pause = workers_per_pause(&path);
    assert_eq!(per_pause.len(), 10);
    assert_eq!(
        per_pause[..3],
        [1, 2, 2],
        "workers per pause: {per_pause:?}"
    );
    assert!(
        per_pause[3..].contains(&1),
        "quick marking goes back to one thread: {per_pause:?}"
    );
    assert!(per_pause.iter().all(|&n| n == 1 || n == 2), "{per_pause:?}");
}

/// A timeline span: name, start and length (µs), and its argument's
/// value if it has one.
struct Span {
    name: String,
    ts: f64,
    dur: f64,
    arg: Option<u64>,
}

/// Every span of the trace at `path`, which is removed.
fn trace_spans(path: &std::path::Path) -> Vec<Span> {
    let text = std::fs::read_to_string(path).expect("the trace was written");
    let _ = std::fs::remove_file(path);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| Span {
            name: e["name"].as_str().unwrap().to_string(),
            ts: e["ts"].as_f64().unwrap(),
            dur: e["dur"].as_f64().unwrap(),
            arg: e["args"]
                .as_object()
                .and_then(|a| a.values().next())
                .and_then(|v| v.as_u64()),
        })
        .collect()
}

/// The spans named `name` that start within each pause, per pause in
/// order.
fn spans_per_pause<'s>(spans: &'s [Span], name: &str) -> Vec<Vec<&'s Span>> {
    spans
        .iter()
        .filter(|p| p.name == "pause")
        .map(|p| {
            spans
                .iter()
                .filter(|s| s.name == name && s.ts >= p.ts && s.ts <= p.ts + p.dur)
                .collect()
        })
        .collect()
}

/// The workers each pause of the trace at `path` offered its marking to
/// (the largest `workers` of its `roots` spans: 1 for a serial pause), in
/// order; removes the file. A pool thread that comes after the phase is
/// done skips it, so the count of `roots` spans alone would depend on
/// timing.
fn workers_per_pause(path: &std::path::Path) -> Vec<u64> {
    spans_per_pause(&trace_spans(path), "roots")
        .iter()
        .map(|r| r.iter().filter_map(|s| s.arg).max().unwrap_or(0))
        .collect()
}

/// A heap that grew severalfold since the previous pause (a program
/// building its data) is marked on every worker at once: the previous
/// collection's live bytes, scaled by the growth of the pages in use,
/// reach `parallel_min_live`, though unscaled they are far below it (and
/// the first large collection used to run on one thread).
#[test]
fn a_heap_that_grew_severalfold_since_the_last_pause_is_marked_on_every_worker() {
    let path = std::env::temp_dir().join(format!("mosaic-par-growth-{}.json", std::process::id()));
    {
        let heap = heap(Config {
            gc_threads: 2,
            parallel_min_live: 2 << 20,
            // No collection but the test's own.
            heap_min: 64 << 20,
            trace: Some(path.clone()),
            ..small_config()
        });
        let mut m = heap.mutator().unwrap();
        let keep = m.empty_root();
        let add = |m: &mut TestMutator, n: u64| {
            for i in 0..n {
                let p = new_pair(m, i, keep.get(), None).unwrap();
                keep.set(Some(p));
            }
        };
        // About 32 KB live: small, twice (marked well under
        // `PARALLEL_MIN_MARK` even in a debug build).
        add(&mut m, 1_000);
        m.collect();
        m.collect();
        // About 6 MB more: the pages in use grew manyfold.
        add(&mut m, 200_000);
        m.collect();
        // No growth since: judged by the 6 MB found live.
        m.collect();
        assert_eq!(heap.stats().last_marked_bytes, 201_000 * 32);
        drop(m);
        heap.write_trace().unwrap();
    }
    let per_pause = workers_per_pause(&path);
    assert_eq!(per_pause, [1, 1, 2, 2], "workers per pause");
}

/// A collection judged small (`parallel_min_live` far above the heap, and
/// nothing measured yet) starts on the collecting thread alone, and when
/// its marking runs past `parallel_help_us` the rest goes to every worker:
/// the pause's timeline shows the hand-over, the count is exact, and every
/// node survives reuse of the free slots.
#[test]
fn a_collection_judged_small_calls_the_workers_in_when_its_marking_runs_long() {
    let path = std::env::temp_dir().join(format!("mosaic-par-help-{}.json", std::process::id()));
    let depth = 17;
    {
        let heap = heap(Config {
            gc_threads: 2,
            parallel_min_live: 1 << 30,
            parallel_help_us: 50,
            // No collection before the test's own.
            heap_min: 64 << 20,
            trace: Some(path.clone()),
            ..small_config()
        });
        let mut m = heap.mutator().unwrap();
        let root = tree(&mut m, depth);
        let root = m.root(root).unwrap();
        m.collect();
        assert_eq!(heap.stats().last_marked, (1 << depth) - 1);
        fill_free_slots_then_check(&mut m, root.get().unwrap(), depth);
        drop(m);
        heap.write_trace().unwrap();
    }
    let spans = trace_spans(&path);
    // It began alone (the collecting thread's `roots`, offered to one
    // worker), then the rest was offered to both (the collecting thread's
    // second `roots`, with no root task left; the pool thread's too if it
    // came in time, which the test does not count on: a late one skips
    // the phase). A pause parallel from the start has no serial `roots`.
    let mut roots: Vec<&Span> = spans_per_pause(&spans, "roots")[0].clone();
    roots.sort_by(|x, y| x.ts.total_cmp(&y.ts));
    let offered: Vec<u64> = roots.iter().filter_map(|s| s.arg).collect();
    assert_eq!(offered.first(), Some(&1), "began alone: {offered:?}");
    assert_eq!(
        offered.iter().filter(|&&w| w == 1).count(),
        1,
        "{offered:?}"
    );
    assert!(
        offered[1..].iter().all(|&w| w == 2),
        "then both: {offered:?}"
    );
    assert!(offered.len() >= 2, "handed over: {offered:?}");
}
