//! The heap decides when to collect: each policy's target is honoured
//! (collections come when the allowance is used up, never above the
//! maximum heap), collections get rarer as the heap grows, and a big pool
//! judged stable no longer collects once per page.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use common::*;
use mosaic::{
    AllocFlags, Config, FinalizerOrder, GcEvent, GcReason, HeapPolicy, ObjRef, PAGE_SIZE,
};
use parking_lot::Mutex;

const MIB: usize = 1 << 20;

/// Slack between the allowance running out and the collection starting:
/// a mutator counts its allocation 32 KiB at a time, and finishes the
/// page run it is in.
const SLACK: u64 = 32 << 10;

struct Run {
    collections: u64,
    /// (allocated, target in force) at each allocation-triggered start.
    starts: Vec<(u64, usize)>,
    /// (target, live) at each end.
    ends: Vec<(usize, u64)>,
    max_committed: usize,
}

/// Keeps `live` bytes of pairs reachable and allocates `garbage` bytes of
/// pairs that die at once.
fn churn(config: Config, live: usize, garbage: usize) -> Run {
    let max_heap = config.max_heap;
    let heap = heap(config);
    let log: Arc<Mutex<Vec<GcEvent>>> = Arc::default();
    let l = log.clone();
    heap.set_event_listener(Some(Box::new(move |e: &GcEvent| l.lock().push(*e))));
    let mut m = heap.mutator().unwrap();
    let keep = m.empty_root();
    for i in 0..live / 32 {
        let p = new_pair(&mut m, i as u64, keep.get(), None).unwrap();
        keep.set(Some(p));
    }
    for i in 0..garbage / 32 {
        new_pair(&mut m, i as u64, None, None).unwrap();
    }
    let events = log.lock().clone();
    let mut run = Run {
        collections: heap.stats().collections,
        starts: vec![],
        ends: vec![],
        max_committed: 0,
    };
    for e in events {
        match e {
            GcEvent::CollectionStart {
                reason: GcReason::Allocation,
                allocated_bytes,
                target_bytes,
                heap_bytes,
                ..
            } => {
                run.starts.push((allocated_bytes, target_bytes));
                run.max_committed = run.max_committed.max(heap_bytes);
            }
            GcEvent::CollectionEnd {
                target_bytes,
                live_bytes,
                heap_bytes,
                ..
            } => {
                run.ends.push((target_bytes, live_bytes));
                run.max_committed = run.max_committed.max(heap_bytes);
            }
            _ => {}
        }
    }
    let s = heap.stats();
    run.max_committed = run.max_committed.max(s.committed_bytes);
    assert!(run.max_committed <= max_heap, "committed above the maximum");
    run
}

/// Every allocation-triggered collection after the first started once the
/// allowance set by the previous one was used up, and not much later.
fn assert_collections_near_target(run: &Run) {
    assert!(run.starts.len() >= 3, "{} collections", run.collections);
    for (i, &(allocated, target)) in run.starts.iter().enumerate().skip(1) {
        let (t, live) = run.ends[i - 1];
        assert_eq!(target, t);
        let allowance = (t as u64 - live).max(256 << 10);
        assert!(
            allocated >= allowance && allocated <= allowance + SLACK + PAGE_SIZE as u64,
            "collection {i}: allocated {allocated}, allowance {allowance}"
        );
    }
}

/// Runs count against the allowance when a mutator takes them, so a run
/// is bounded: the first small object of each of 8 size classes must not
/// use up a 256 KiB first allowance (whole fresh pages, counted 64 KiB per
/// class, did after 8 objects: a tiny C program collected 4 times and a
/// Crystal program before its runtime was set up).
#[test]
fn first_objects_of_a_few_size_classes_do_not_make_a_collection_due() {
    let heap = heap(Config {
        heap_policy: HeapPolicy::Proportional { k: 1.0 },
        heap_min: 256 << 10,
        ..Config::default()
    });
    let mut m = heap.mutator().unwrap();
    let mut keep = Vec::new();
    for round in 0..4 {
        for size in [16, 32, 48, 64, 96, 128, 256, 512] {
            let o = m.alloc_with(size, AllocFlags::NO_POINTERS).unwrap();
            keep.push(m.root(o).unwrap());
        }
        assert_eq!(
            heap.stats().collections,
            0,
            "after {} objects",
            8 * (round + 1)
        );
    }
}

/// With many size classes in use on a small heap, the unused rest of the
/// allocating thread's runs does not count towards a collection: 50
/// classes of garbage on a 256 KiB allowance collected once per ~70
/// objects (each class's run counted whole when taken: 15,000 collections
/// for 1M objects of a C program, 7× bdwgc's), where the bytes used give
/// one collection per allowance. Also with two threads.
#[test]
fn unused_runs_of_many_size_classes_do_not_make_a_collection_due() {
    const ALLOWANCE: u64 = 256 << 10;
    let heap = heap(Config {
        heap_policy: HeapPolicy::Proportional { k: 1.0 },
        heap_min: ALLOWANCE as usize,
        ..Config::default()
    });
    let churn = |n: usize| {
        let mut m = heap.mutator().unwrap();
        let mut bytes = 0u64;
        for i in 0..n {
            let len = i % 50;
            new_vector(&mut m, i as u64, len).unwrap();
            bytes += (HEADER + 8 * len) as u64;
        }
        bytes
    };
    // One collection per allowance allocated, give or take the slots'
    // rounding up and the runs a collection finds half used: 1.04x the
    // ideal count measured (627 collections, 3.7x, before).
    let bytes = churn(200_000);
    let one = heap.stats().collections;
    let most = bytes * 5 / 4 / ALLOWANCE + 2;
    assert!(
        one > 0 && one <= most,
        "one thread: {one} collections for {bytes} bytes (at most {most})"
    );
    // Two threads: the other's runs count whole, so they are capped at a
    // 64th of the allowance on a small heap (1.11x measured; 1.52x
    // without the cap).
    let bytes = std::thread::scope(|s| {
        let other = s.spawn(|| churn(100_000));
        churn(100_000) + other.join().unwrap()
    });
    let two = heap.stats().collections - one;
    let most = bytes * 27 / 20 / ALLOWANCE + 2;
    assert!(
        two <= most,
        "two threads: {two} collections for {bytes} bytes (at most {most})"
    );
}

/// A small heap of many size classes holds a page per class, several times
/// its byte target: the free pages each collection leaves are the ones the
/// next cycle takes again, so none is decommitted (two or three a
/// collection were, each faulted back in at once: 85 MiB in 333
/// collections), and the committed memory stays within the small heap's
/// room.
#[test]
fn a_small_heap_of_many_size_classes_keeps_its_pages_committed() {
    let heap = heap(Config {
        heap_policy: HeapPolicy::Proportional { k: 1.0 },
        heap_min: 256 << 10,
        ..Config::default()
    });
    let mut m = heap.mutator().unwrap();
    let mut churn = |n: usize| {
        for i in 0..n {
            new_vector(&mut m, i as u64, i % 100).unwrap();
        }
    };
    churn(50_000);
    let before = heap.stats();
    churn(200_000);
    let after = heap.stats();
    let collections = after.collections - before.collections;
    let decommitted = after.decommitted_bytes - before.decommitted_bytes;
    assert!(collections >= 50, "{collections} collections");
    assert!(
        decommitted <= 4 * 65536,
        "{} KiB decommitted in {collections} collections",
        decommitted >> 10
    );
    assert!(
        after.committed_bytes <= 3 << 20,
        "{} KiB committed",
        after.committed_bytes >> 10
    );
}

#[test]
fn fixed_policy_fills_the_configured_heap_before_collecting() {
    let run = churn(
        Config {
            heap_policy: HeapPolicy::Fixed,
            max_heap: 16 * MIB,
            ..Config::default()
        },
        2 * MIB,
        64 * MIB,
    );
    assert_collections_near_target(&run);
    assert!(run.ends.iter().all(|&(t, _)| t == 16 * MIB));
    // About 64 MiB of garbage in 14 MiB allowances.
    assert!((4..=8).contains(&run.collections), "{}", run.collections);
}

#[test]
fn proportional_policy_targets_live_times_one_plus_k() {
    let run = churn(
        Config {
            heap_policy: HeapPolicy::Proportional { k: 0.5 },
            heap_min: MIB,
            ..Config::default()
        },
        4 * MIB,
        64 * MIB,
    );
    assert_collections_near_target(&run);
    for &(target, live) in &run.ends {
        let want = ((live as f64 * 1.5) as usize).max(MIB);
        assert_eq!(target, want);
    }
    // Once the live set is built: 64 MiB of garbage in 2 MiB allowances.
    assert!((30..=50).contains(&run.collections), "{}", run.collections);
}

#[test]
fn adaptive_policy_collections_come_at_its_targets() {
    let scale = 8 * MIB;
    let run = churn(
        Config {
            heap_policy: HeapPolicy::Adaptive { scale },
            heap_min: MIB,
            ..Config::default()
        },
        8 * MIB,
        64 * MIB,
    );
    assert_collections_near_target(&run);
    for &(target, live) in run.ends.iter().skip(1) {
        assert!(target as u64 > live, "headroom above live");
    }
}

#[test]
fn adaptive_target_follows_the_square_root_rule_from_its_own_measurements() {
    let scale = 8 * MIB;
    let heap = heap(Config {
        heap_policy: HeapPolicy::Adaptive { scale },
        heap_min: MIB,
        ..Config::default()
    });
    let mut m = heap.mutator().unwrap();
    let keep = m.empty_root();
    for i in 0..(4 * MIB / 32) as u64 {
        let p = new_pair(&mut m, i, keep.get(), None).unwrap();
        keep.set(Some(p));
    }
    for i in 0..(32 * MIB / 32) as u64 {
        new_pair(&mut m, i, None, None).unwrap();
    }
    let d = heap.stats().last_heap_decision.expect("collected");
    assert!(d.allocation_rate > 0.0 && d.collection_speed > 0.0, "{d:?}");
    let headroom =
        (d.live_bytes as f64 * scale as f64 * d.allocation_rate / d.collection_speed).sqrt();
    let want = (d.live_bytes as f64 + headroom).max(MIB as f64) as u64;
    assert!(d.target_bytes.abs_diff(want) <= 1, "{d:?}: want {want}");
}

#[test]
fn collections_get_rarer_as_the_heap_grows() {
    let counts: Vec<u64> = [8, 16, 32]
        .iter()
        .map(|&mb| {
            churn(
                Config {
                    heap_policy: HeapPolicy::Fixed,
                    max_heap: mb * MIB,
                    ..Config::default()
                },
                2 * MIB,
                64 * MIB,
            )
            .collections
        })
        .collect();
    assert!(counts.windows(2).all(|w| w[0] > w[1]), "{counts:?}");
}

/// The collapse seen on ~1 GiB heaps: a pool whose growth step is under
/// `stable_ratio` of its slots was judged stable and, with per-pool
/// triggers, ran one full collection per page it took. Here a small
/// `growth_max` makes a 128 MiB pool "stable" the same way.
#[test]
fn a_big_stable_pool_does_not_collect_once_per_page() {
    let heap = heap(Config {
        max_heap: 1 << 30,
        growth_max: MIB,
        ..Config::default()
    });
    let mut m = heap.mutator().unwrap();
    let keep = m.empty_root();
    let n = 128 * MIB / 32;
    for i in 0..n as u64 {
        let p = new_pair(&mut m, i, keep.get(), None).unwrap();
        keep.set(Some(p));
    }
    let s = heap.stats();
    // The default (adaptive) policy from a 4 MiB floor grows the target by
    // at least the square root of live × 256 MiB each time: a handful of
    // collections (per page: over 2000).
    assert!(s.collections <= 12, "{} collections", s.collections);
    m.collect();
    assert_eq!(heap.stats().last_marked, n as u64);
}

/// A heap churning at a steady size reuses the pages it frees rather than
/// giving them to the OS and faulting fresh ones in. (It did not: free
/// pages beyond what the pools "might grow into" were decommitted at every
/// sweep step, so a small-object churn spent most of its time in page
/// faults — 34 000 faults for 160 MB allocated; here 200 MiB went back
/// and forth.) The live set is a ring: each new object replaces the
/// oldest, so every page holds objects of many ages and pages empty out
/// during lazy sweeping, not in the pause; the heap's target is fixed.
#[test]
fn a_heap_churning_at_a_steady_size_keeps_its_free_pages() {
    let heap = heap(Config {
        heap_policy: HeapPolicy::Fixed,
        max_heap: 24 * MIB,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    const RING: usize = 100_000;
    let ring = new_vector(&mut m, 0, RING).unwrap();
    let _r = m.root(ring).unwrap();
    for i in 0..6_000_000u64 {
        // 16, 32, 48 and 64 bytes in turn: four pools churn at once.
        let len = 16 * (i as usize % 4);
        let o = new_bytes(&mut m, i, len, AllocFlags::UNINIT).unwrap();
        set_field(ring, i as usize % RING, Some(o));
    }
    let s = heap.stats();
    assert!(s.collections >= 10, "{s}");
    assert!(
        s.decommitted_bytes <= 2 * MIB as u64,
        "{} MiB decommitted while the heap stayed the same size",
        s.decommitted_bytes >> 20
    );
}

/// `Heap::set_max_heap` lowers the maximum at run time (live data beyond
/// it is refused with `OutOfMemory`, and nothing kept is lost), raises it
/// back up to the size the heap was created with, and refuses more.
#[test]
fn the_maximum_heap_can_be_lowered_and_raised_back_at_run_time() {
    let heap = heap(Config {
        max_heap: 64 * MIB,
        ..Config::default()
    });
    assert_eq!(heap.set_max_heap(8 * MIB).unwrap(), 8 * MIB);
    assert_eq!(heap.stats().max_heap, 8 * MIB);
    let mut m = heap.mutator().unwrap();
    let keep = m.empty_root();
    let mut kept = 0u64;
    let refused = loop {
        match new_pair(&mut m, kept, keep.get(), None) {
            Ok(p) => {
                keep.set(Some(p));
                kept += 1;
            }
            Err(e) => break e,
        }
        assert!(kept < (16 * MIB / 32) as u64, "nothing refused past 8 MiB");
    };
    assert!(
        matches!(refused, mosaic::Error::OutOfMemory { max_heap, .. } if max_heap == 8 * MIB),
        "{refused}"
    );
    assert!(kept * 32 > (4 * MIB) as u64, "refused at {kept} pairs");
    // Raised back: the same allocation succeeds, and every kept pair is there.
    assert_eq!(heap.set_max_heap(64 * MIB).unwrap(), 64 * MIB);
    let p = new_pair(&mut m, kept, keep.get(), None).unwrap();
    keep.set(Some(p));
    m.collect();
    let ids = reachable_ids(keep.get());
    assert_eq!(ids.len() as u64, kept + 1);
    assert!((0..=kept).all(|i| ids.contains(&i)));
    // Never above the reservation, never below a page.
    assert!(heap.set_max_heap(65 * MIB).is_err());
    assert!(heap.set_max_heap(PAGE_SIZE - 1).is_err());
    assert_eq!(heap.stats().max_heap, 64 * MIB);
}

/// The finalizer of `finalizable_garbage_...`: counts its runs.
fn count_run(_: &mut TestMutator, _: ObjRef, _: usize, runs: usize) {
    // SAFETY: `runs` is the address of the test's counter, which outlives
    // the heap.
    unsafe { &*(runs as *const AtomicUsize) }.fetch_add(1, Relaxed);
}

#[test]
fn finalizable_garbage_does_not_grow_the_heap() {
    // Every object but a small live set dies with a finalizer. A collection
    // keeps the ones it finds unreachable until their finalizer has run:
    // if the policy counted them as live, each collection would find all
    // that was allocated since the last one "live" and grow the heap by
    // its headroom (52 MiB by the end here; bdwgc's disclaim_bench reached
    // 300 MB on the drop-in).
    let runs = AtomicUsize::new(0);
    for order in [FinalizerOrder::Unordered, FinalizerOrder::Ordered] {
        let heap = heap(Config {
            max_heap: 256 * MIB,
            ..Config::default()
        });
        let mut m = heap.mutator().unwrap();
        let keep = m.empty_root();
        for i in 0..(MIB / 32) as u64 {
            let p = new_pair(&mut m, i, keep.get(), None).unwrap();
            keep.set(Some(p));
        }
        let objects = 2_000_000;
        let mut peak = 0;
        for i in 0..objects {
            let o = new_pair(&mut m, i as u64, None, None).unwrap();
            m.register_finalizer_fn(o, order, count_run, 0, &runs as *const _ as usize)
                .unwrap();
            if i % 1000 == 0 {
                m.run_finalizers().unwrap();
                peak = peak.max(heap.counters().committed_bytes);
            }
        }
        assert!(
            peak <= 16 * MIB,
            "{order:?}: the heap grew to {:.1} MiB for 1 MiB live",
            peak as f64 / MIB as f64
        );
        let collections = heap.stats().collections;
        assert!(collections >= 5, "{order:?}: {collections} collections");
        drop(m);
    }
    assert!(
        runs.load(Relaxed) > 2_000_000,
        "{} finalizers ran",
        runs.load(Relaxed)
    );
}

/// The pages a collection frees beyond the heap's new target are
/// decommitted after the world resumes, by the thread that collected,
/// before its `collect` returns: the timeline's `trim` span starts after
/// the `pause` span ends (`madvise` of tens of megabytes took 3.3 ms of a
/// 4.7 ms pause when it ran inside), and the committed memory has fallen
/// when `collect` returns.
#[test]
fn pages_freed_beyond_the_target_are_decommitted_after_the_pause() {
    let path = std::env::temp_dir().join(format!("mosaic-trim-{}.json", std::process::id()));
    let heap = heap(Config {
        max_heap: 1 << 30,
        trace: Some(path.clone()),
        ..Config::default()
    });
    let mut m = heap.mutator().unwrap();
    // ~100 MB of live byte strings, collected, then dropped.
    hundred_megabytes_then_dropped(&heap, &mut m);
    m.collect();
    let empty = heap.stats();
    assert!(
        empty.committed_bytes < 16 << 20,
        "committed {} MiB when collect returns",
        empty.committed_bytes >> 20
    );
    drop(m);
    heap.write_trace().unwrap();
    let text = std::fs::read_to_string(&path).expect("the trace was written");
    let _ = std::fs::remove_file(&path);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let spans: Vec<(&str, f64, f64, u64)> = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            (
                e["name"].as_str().unwrap(),
                e["ts"].as_f64().unwrap(),
                e["dur"].as_f64().unwrap(),
                e["args"]["pages"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let last_pause = spans.iter().rfind(|s| s.0 == "pause").expect("a pause");
    let trim = spans.iter().rfind(|s| s.0 == "trim").expect("a trim span");
    assert!(
        trim.1 >= last_pause.1 + last_pause.2,
        "the trim starts at {} us, inside the pause [{}, {}]",
        trim.1,
        last_pause.1,
        last_pause.1 + last_pause.2
    );
    assert!(trim.3 > 1000, "{} pages decommitted", trim.3);
}

/// A panic out of the pause (here an event listener's, resumed once the
/// collection completed) still leaves the committed memory down when it
/// reaches the caller of `collect`: the decommitting after the pause runs
/// on the way out.
#[test]
fn pages_are_decommitted_after_a_pause_that_ends_in_a_panic() {
    quiet_expected_panics();
    let heap = heap(Config {
        max_heap: 1 << 30,
        ..Config::default()
    });
    let mut m = heap.mutator().unwrap();
    // ~100 MB of live byte strings, collected, then dropped.
    hundred_megabytes_then_dropped(&heap, &mut m);
    heap.set_event_listener(Some(Box::new(|e| {
        if let GcEvent::CollectionEnd { .. } = e {
            panic!("test: listener panics");
        }
    })));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.collect()));
    assert!(r.is_err(), "the listener's panic reaches the caller");
    heap.set_event_listener(None);
    let after = heap.stats();
    assert!(
        after.committed_bytes < 16 << 20,
        "committed {} MiB after the panic",
        after.committed_bytes >> 20
    );
}

/// Keeps about 100 MB of byte strings through a collection (the heap has
/// committed more than that), then drops them all.
fn hundred_megabytes_then_dropped(heap: &TestHeap, m: &mut TestMutator) {
    let list = m.empty_root();
    for i in 0..100_000u64 {
        let b = new_bytes(m, i, 1000, AllocFlags::NONE).unwrap();
        let p = new_pair(m, i, Some(b), list.get()).unwrap();
        list.set(Some(p));
    }
    m.collect();
    m.finish_sweep();
    assert!(heap.stats().committed_bytes > 100 << 20);
    list.set(None);
}

/// A heap whose live set wobbles by a few percent keeps the pages of its
/// last peak committed instead of decommitting each dip's few pages and
/// faulting them in again at the next rise (Guile's threads load on the
/// drop-in trimmed after 183 of 494 collections); a fall by more than an
/// eighth still gives pages back at once.
#[test]
fn a_heap_whose_live_set_wobbles_keeps_its_pages_and_one_that_falls_shrinks() {
    let heap = heap(Config {
        heap_policy: HeapPolicy::Proportional { k: 1.0 },
        heap_min: MIB,
        ..Config::default()
    });
    let mut m = heap.mutator().unwrap();
    // 8 MiB live for good, and 512 KiB that comes and goes: targets of
    // 16 and 17 MiB in turn.
    let base = m.empty_root();
    for i in 0..(8 * MIB / 32) as u64 {
        let p = new_pair(&mut m, i, base.get(), None).unwrap();
        base.set(Some(p));
    }
    let extra = m.empty_root();
    let garbage = |m: &mut TestMutator| {
        for i in 0..(24 * MIB / 32) as u64 {
            new_pair(m, i, None, None).unwrap();
        }
    };
    let mut decommitted_at_start = 0;
    for round in 0..12 {
        if round % 2 == 0 {
            for i in 0..(MIB / 2 / 32) as u64 {
                let p = new_pair(&mut m, i, extra.get(), None).unwrap();
                extra.set(Some(p));
            }
        } else {
            extra.set(None);
        }
        garbage(&mut m);
        if round == 1 {
            decommitted_at_start = heap.stats().decommitted_bytes;
        }
    }
    let wobbling = heap.stats().decommitted_bytes - decommitted_at_start;
    assert!(
        wobbling < MIB as u64,
        "{} KiB decommitted while the target moved between 16 and 17 MiB",
        wobbling >> 10
    );
    // Half the live set goes: the heap shrinks.
    let before = heap.stats();
    extra.set(None);
    let mut p = base.get();
    for _ in 0..(4 * MIB / 32) {
        p = field(p.unwrap(), 0);
    }
    base.set(p);
    garbage(&mut m);
    let after = heap.stats();
    assert!(
        after.decommitted_bytes - before.decommitted_bytes > 2 * MIB as u64,
        "{} KiB decommitted after the live set halved (committed {} -> {} MiB)",
        (after.decommitted_bytes - before.decommitted_bytes) >> 10,
        before.committed_bytes >> 20,
        after.committed_bytes >> 20
    );
}

/// `collect_and_release` (bdwgc's `GC_gcollect_and_unmap`) gives back
/// every free page, where an ordinary collection keeps those the target
/// has room for; what is live stays intact and the heap grows again.
#[test]
fn a_collection_that_releases_gives_back_every_free_page() {
    let heap = heap(Config {
        heap_policy: HeapPolicy::Proportional { k: 1.0 },
        heap_min: MIB,
        ..Config::default()
    });
    let mut m = heap.mutator().unwrap();
    // 16 MiB kept (a target of 32 MiB: its room stays committed), and
    // 48 MiB of garbage through it.
    let keep = m.empty_root();
    let n = (16 * MIB / 32) as u64;
    for i in 0..n {
        let p = new_pair(&mut m, i, keep.get(), None).unwrap();
        keep.set(Some(p));
    }
    for i in 0..(48 * MIB / 32) as u64 {
        new_pair(&mut m, i, None, None).unwrap();
    }
    m.collect();
    m.finish_sweep();
    let kept = heap.stats().committed_bytes;
    m.collect_and_release();
    let released = heap.stats().committed_bytes;
    assert!(
        kept > 24 * MIB && released < 20 * MIB,
        "committed {} KiB after a collection, {} KiB after releasing",
        kept >> 10,
        released >> 10
    );
    // The kept list is whole, and allocation commits pages again.
    let mut ids = Vec::new();
    let mut p = keep.get();
    while let Some(o) = p {
        ids.push(header(o).2);
        p = field(o, 0);
    }
    assert_eq!(ids, (0..n).rev().collect::<Vec<_>>());
    for i in 0..(8 * MIB / 32) as u64 {
        new_pair(&mut m, i, None, None).unwrap();
    }
    assert!(heap.stats().committed_bytes > released + 4 * MIB);
}
