//! Collector behaviour: deep graphs, large objects, cleanup, flags, growth,
//! bounded lazy sweeping, verify diagnostics, stats.

mod common;

use common::*;
use mosaic::{AllocFlags, Config, Decision, ObjRef, PAGE_SIZE};

#[test]
fn ten_million_node_list_marks_without_recursion() {
    let heap = heap(Config {
        max_heap: 2 << 30,
        ..Config::default()
    });
    let mut m = heap.mutator().unwrap();
    let head = m.empty_root();
    const N: u64 = 10_000_000;
    for id in 0..N {
        let p = new_pair(&mut m, id, head.get(), None).unwrap();
        head.set(Some(p));
    }
    m.collect();
    assert_eq!(heap.stats().last_marked, N);
    // Walk it: every node survived with its id, in order.
    let mut cur = head.get();
    let mut expect = N;
    while let Some(p) = cur {
        expect -= 1;
        assert_eq!(header(p).2, expect);
        cur = field(p, 0);
    }
    assert_eq!(expect, 0);
}

#[test]
fn unreachable_objects_are_reclaimed_and_their_slots_reused() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let keep = new_vector(&mut m, 0, 100).unwrap();
    let root = m.root(keep).unwrap();
    for i in 0..100 {
        let p = new_pair(&mut m, 1 + i, None, None).unwrap();
        set_field(keep, i as usize, Some(p));
    }
    for i in 0..50_000 {
        new_pair(&mut m, 1000 + i, None, None).unwrap();
    }
    m.collect();
    m.finish_sweep();
    let s = heap.stats();
    assert_eq!(s.last_marked, 101);
    assert_eq!(s.live_objects(), 101);
    let pair_pool = s.pools.iter().find(|p| p.slot_size == 32).unwrap();
    assert_eq!(pair_pool.live_slots, 100);
    let pages_before = pair_pool.pages;
    // Reallocating the same amount reuses the freed slots: the pool grows
    // by at most what the heap allows between collections.
    let allowance_pages = (256 << 10) / PAGE_SIZE;
    for i in 0..40_000 {
        new_pair(&mut m, 100_000 + i, None, None).unwrap();
    }
    let pair_pool = heap
        .stats()
        .pools
        .into_iter()
        .find(|p| p.slot_size == 32)
        .unwrap();
    assert!(
        pair_pool.pages <= pages_before.max(1) + allowance_pages + 1,
        "{} > {pages_before} + {allowance_pages}",
        pair_pool.pages
    );
    assert_eq!(reachable_ids([root.get().unwrap()]).len(), 101);
}

#[test]
fn large_objects_survive_while_reachable_and_are_freed_eagerly() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let holder = new_vector(&mut m, 0, 4).unwrap();
    let _root = m.root(holder).unwrap();
    // Each object is reachable before the next allocation (which may collect).
    let big = new_bytes(&mut m, 1, 3 * PAGE_SIZE, AllocFlags::NONE).unwrap();
    set_field(holder, 0, Some(big));
    let big_vec = new_vector(&mut m, 2, 5000).unwrap(); // 40 KB of pointers, traced
    set_field(holder, 1, Some(big_vec));
    let small = new_pair(&mut m, 3, None, None).unwrap();
    set_field(big_vec, 4999, Some(small));
    let before = heap.stats().collections;
    // Garbage bigger than the heap's allowance: a collection comes first.
    new_bytes(&mut m, 4, 10 * PAGE_SIZE, AllocFlags::NONE).unwrap();
    let s = heap.stats();
    assert_eq!(s.collections, before + 1);
    assert_eq!(s.large.objects, 3);
    m.collect();
    let s = heap.stats();
    assert_eq!(
        s.last_marked, 4,
        "holder, big, big_vec and the pair it points to"
    );
    assert_eq!(
        s.large.objects, 2,
        "the dead large object is freed in the pause"
    );
    assert!(bytes_match(big, 1));
    assert_eq!(field(big_vec, 4999), Some(small));
    assert_eq!(heap.object_size(big).unwrap(), HEADER + 3 * PAGE_SIZE);
    // Interior pointers into a large object keep it alive too (conservative-friendly).
    set_field(
        holder,
        0,
        ObjRef::from_ptr(big.as_ptr().wrapping_add(PAGE_SIZE + 8)),
    );
    m.collect();
    assert_eq!(heap.stats().large.objects, 2);
}

#[test]
fn no_pointers_objects_are_never_traced() {
    // new_bytes allocates NO_POINTERS; the test embedder panics if one is traced.
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let v = new_vector(&mut m, 0, 2).unwrap();
    let _r = m.root(v).unwrap();
    let b = new_bytes(&mut m, 1, 64, AllocFlags::NONE).unwrap();
    let target = new_pair(&mut m, 2, None, None).unwrap();
    // A pointer-looking value inside the byte string must not keep `target` alive.
    // SAFETY: the byte string has 64 payload bytes.
    unsafe { (b.as_ptr().add(HEADER) as *mut usize).write(target.addr()) };
    set_field(v, 0, Some(b));
    // `UNINIT` alone implies `NO_POINTERS`, for a large object too.
    let big = m.alloc_with(HEADER + 100_000, AllocFlags::UNINIT).unwrap();
    set_field(v, 1, Some(init_uncleared(big, BYTES, 100_000, 3)));
    m.collect();
    assert_eq!(heap.stats().last_marked, 3);
    assert_eq!(
        heap.embedder()
            .traced
            .load(std::sync::atomic::Ordering::Relaxed),
        1,
        "only the vector"
    );
    m.finish_sweep();
    assert!(
        !heap.is_object(target.as_ptr()),
        "the pointer inside the byte string kept nothing alive"
    );
}

#[test]
fn cleanup_runs_once_for_dead_objects_and_at_heap_drop_for_live_ones() {
    let heap = heap(small_config());
    let freed = heap.embedder().freed.clone();
    let mut m = heap.mutator().unwrap();
    let live = new_bytes(&mut m, 1, 10, AllocFlags::NEEDS_CLEANUP).unwrap();
    let root = m.root(live).unwrap();
    new_bytes(&mut m, 2, 10, AllocFlags::NEEDS_CLEANUP).unwrap();
    new_bytes(&mut m, 3, 20_000, AllocFlags::NEEDS_CLEANUP).unwrap(); // large
    new_bytes(&mut m, 4, 10, AllocFlags::NONE).unwrap();
    m.collect();
    m.finish_sweep();
    m.collect();
    m.finish_sweep();
    let mut f = freed.lock().clone();
    f.sort();
    assert_eq!(f, vec![2, 3], "only the dead cleanup objects, once each");
    // A second survivor, never collected; then the heap goes away.
    new_bytes(&mut m, 9, 10, AllocFlags::NEEDS_CLEANUP).unwrap();
    drop(root);
    drop(m);
    assert_eq!(freed.lock().len(), 2, "nothing more while the heap lives");
    drop(heap);
    let mut f = freed.lock().clone();
    f.sort();
    assert_eq!(
        f,
        vec![1, 2, 3, 9],
        "dropping the heap cleans up the survivors, once each"
    );
}

#[test]
fn pinned_flag_is_recorded_and_object_still_collectable() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let p = m.alloc_with(48, AllocFlags::PINNED).unwrap();
    assert!(heap.is_object(p.as_ptr()));
    m.collect();
    m.finish_sweep();
    assert_eq!(
        heap.stats().live_objects(),
        0,
        "pinning does not keep an object alive"
    );
}

#[test]
fn churning_pool_grows_and_mostly_empty_pool_shrinks() {
    let heap = heap(Config {
        initial_slots: 2048,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    // Keep many 64-byte objects alive while churning: the pool must grow.
    let keep = m.empty_root();
    let mut count = 0u64;
    for i in 0..200_000u64 {
        let p = new_pair(&mut m, i, keep.get(), None).unwrap();
        if i % 2 == 0 {
            keep.set(Some(p));
            count += 1;
        }
    }
    m.collect();
    m.finish_sweep();
    let s = heap.stats();
    assert_eq!(s.last_marked, count);
    let pool = s.pools.iter().find(|p| p.slot_size == 32).unwrap();
    assert!(s.collections >= 3, "{s}");
    assert!(pool.budget_pages > 1, "budget grew: {pool:?}");
    // Drop everything: after the next cycle the pool shrinks to its floor and
    // its empty pages go back to the page resource.
    keep.set(None);
    m.collect();
    m.finish_sweep();
    let s2 = heap.stats();
    let pool2 = s2.pools.iter().find(|p| p.slot_size == 32).unwrap();
    assert_eq!(pool2.last_decision, Decision::Shrink, "{pool2:?}");
    assert!(pool2.budget_pages < pool.budget_pages);
    assert_eq!(pool2.pages, 0, "every page was empty and released");
    assert!(
        s2.committed_bytes < s.committed_bytes / 4,
        "{} -> {}",
        s.committed_bytes,
        s2.committed_bytes
    );
}

#[test]
fn lazy_sweeping_sweeps_a_bounded_amount_per_allocation() {
    let heap = heap(Config {
        initial_slots: 1 << 20,
        sweep_step_pages: 2,
        heap_min: 16 << 20,
        // (The unswept pages are counted: none swept in the background.)
        background_sweep: false,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let v = new_vector(&mut m, 0, 1).unwrap();
    let _r = m.root(v).unwrap();
    // Fill 40 pages of 32-byte slots with garbage (under the 16 MiB heap
    // target, so no collection yet), plus some 48-byte garbage. One pair in
    // 1000 stays reachable, so no page is empty: the pause's release phase
    // takes only empty pages, and these stay for the lazy sweep.
    let keep = m.empty_root();
    for i in 0..40 * 2048 {
        let p = new_pair(&mut m, i, keep.get(), None).unwrap();
        if i % 1000 == 0 {
            keep.set(Some(p));
        }
    }
    for i in 0..10_000 {
        m.alloc(48).unwrap();
        let _ = i;
    }
    m.collect();
    let unswept = |h: &TestHeap| {
        h.stats()
            .pools
            .iter()
            .map(|p| p.unswept_pages)
            .sum::<usize>()
    };
    let before = unswept(&heap);
    assert!(before >= 40, "{before}");
    // One allocation in the 32-byte pool sweeps one page of it (it is all
    // garbage, so the first page has room) plus one page of another pool.
    new_pair(&mut m, 1, None, None).unwrap();
    let after = unswept(&heap);
    assert!(
        before - after <= 3,
        "swept {} pages for one allocation",
        before - after
    );
    assert!(after > 0);
    let s = heap.stats();
    assert!(s.sweep_steps.count >= 1);
    assert!(s.longest_sweep_step() > std::time::Duration::ZERO);
}

#[test]
fn verify_mode_reports_an_interior_pointer_with_a_precise_diagnostic() {
    let heap = heap(Config {
        verify: true,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let v = new_vector(&mut m, 0, 3).unwrap();
    let _r = m.root(v).unwrap();
    let p = new_pair(&mut m, 1, None, None).unwrap();
    // An embedder bug: a field holding a pointer 8 bytes into an object.
    set_field(v, 2, ObjRef::from_ptr(p.as_ptr().wrapping_add(8)));
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.collect())).unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.starts_with("mosaic verify: the field at offset 32 of object"),
        "{msg}"
    );
    assert!(msg.contains("8 bytes into slot"), "{msg}");
    assert!(msg.contains("32-byte slots"), "{msg}");
    assert!(msg.contains("not at an object's start"), "{msg}");
    // The heap stays usable once the bug is fixed.
    set_field(v, 2, Some(p));
    m.collect();
    assert_eq!(heap.stats().last_marked, 2);
}

#[test]
fn verify_mode_reports_a_dangling_pointer_to_a_freed_slot() {
    let heap = heap(Config {
        verify: true,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let v = new_vector(&mut m, 0, 1).unwrap();
    let _r = m.root(v).unwrap();
    let p = new_pair(&mut m, 1, None, None).unwrap();
    m.collect();
    m.finish_sweep(); // p is freed
    set_field(v, 0, Some(p)); // dangling
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.collect())).unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("which is a free slot"), "{msg}");
}

#[test]
fn verify_mode_poisons_freed_slots_so_a_missed_root_reads_garbage() {
    // A raw pointer kept past a collection (an embedder's missed root):
    // in verify mode the sweep overwrites the dead object, so reading it
    // shows the bug at once; otherwise the sweep leaves memory alone.
    for verify in [true, false] {
        let heap = heap(Config {
            verify,
            ..small_config()
        });
        let mut m = heap.mutator().unwrap();
        let kept = new_vector(&mut m, 1, 4).unwrap();
        let _r = m.root(kept).unwrap();
        let lost = new_vector(&mut m, 2, 4).unwrap();
        let words = |o: ObjRef| -> Vec<usize> {
            // SAFETY: reads the 48-byte slot of a vector of 4 (a header and
            // 4 fields), live or freed: heap memory stays mapped.
            (0..6)
                .map(|i| unsafe { (o.as_ptr() as *const usize).add(i).read() })
                .collect()
        };
        let before = words(lost);
        m.collect();
        m.finish_sweep();
        assert_eq!(header(kept).2, 1, "the rooted object is intact");
        assert_eq!(heap.stats().last_marked, 1);
        if verify {
            assert_eq!(
                words(lost),
                vec![0xA5A5_A5A5_A5A5_A5A5; 6],
                "the freed slot is poisoned"
            );
        } else {
            assert_eq!(words(lost), before, "the sweep does not write freed slots");
        }
        // A new object in a poisoned slot is zeroed as always.
        for _ in 0..64 {
            let o = new_pair(&mut m, 3, None, None).unwrap();
            assert_eq!((field(o, 0), field(o, 1)), (None, None));
        }
    }
}

#[test]
fn embedder_roots_keep_objects_alive() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let p = new_pair(&mut m, 7, None, None).unwrap();
    heap.embedder().globals.lock().push(p.addr());
    new_pair(&mut m, 8, None, None).unwrap();
    m.collect();
    assert_eq!(heap.stats().last_marked, 1);
    assert_eq!(header(p).2, 7);
}

#[test]
fn stats_report_pauses_pools_and_a_summary() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    for i in 0..100_000 {
        new_pair(&mut m, i, None, None).unwrap();
    }
    m.collect();
    let s = heap.stats();
    assert!(s.collections >= 2);
    assert_eq!(s.pauses.count, s.collections);
    assert!(s.pauses.max >= s.pauses.p99 && s.pauses.p99 >= s.pauses.p50);
    // Each pause marks and sweeps real pages: far above the histogram's floor.
    assert!(
        s.pauses.p50 > std::time::Duration::from_nanos(500),
        "{:?}",
        s.pauses
    );
    assert!(s.pauses.total >= s.pauses.max);
    assert!(s.mark_time > std::time::Duration::ZERO);
    let pool = s.pools.iter().find(|p| p.slot_size == 32).unwrap();
    assert_eq!(pool.allocated_total, 100_000);
    assert!(s.rss_bytes > 0 && s.committed_bytes > 0);
    assert_eq!(s.pools.len(), 32);
    let line = s.summary();
    assert!(
        line.starts_with("mosaic: ") && line.contains(" GCs, pause p50 "),
        "{line}"
    );
    assert!(!line.contains('\n'));
}

#[test]
fn ruby_preset_uses_five_pools() {
    let heap = heap(Config {
        size_classes: mosaic::SizeClassPreset::Ruby,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let a = m.alloc(40).unwrap();
    let b = m.alloc(41).unwrap();
    let c = m.alloc(641).unwrap();
    assert_eq!(heap.object_size(a).unwrap(), 40);
    assert_eq!(heap.object_size(b).unwrap(), 80);
    assert_eq!(
        heap.object_size(c).unwrap(),
        641,
        "above 640 B: a large object"
    );
    assert_eq!(
        heap.stats()
            .pools
            .iter()
            .map(|p| p.slot_size)
            .collect::<Vec<_>>(),
        vec![40, 80, 160, 320, 640]
    );
}

#[test]
fn large_object_fits_when_live_small_objects_are_scattered_over_every_other_page() {
    // 8 MiB = 128 pages. Fill 120 pages with live 32-byte pairs, then keep
    // one in every 4096 (one live object on every other page) and ask for a
    // 10-page object: the free pages alternate with live ones and at most 8
    // follow them, so only a heap whose maximum counts pages in use (not
    // addresses) can place it.
    let heap = heap(Config {
        max_heap: 8 << 20,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let all = m.empty_root();
    for i in 0..120 * 2048u64 {
        let p = new_pair(&mut m, i, all.get(), None).unwrap();
        all.set(Some(p));
    }
    // Relink: every 4096th pair joins a chain through field 1.
    let kept = m.empty_root();
    let (mut cur, mut n, mut count) = (all.get(), 0u64, 0u64);
    while let Some(p) = cur {
        cur = field(p, 0);
        set_field(p, 0, None);
        if n % 4096 == 0 {
            set_field(p, 1, kept.get());
            kept.set(Some(p));
            count += 1;
        }
        n += 1;
    }
    all.set(None);
    m.collect();
    m.finish_sweep();
    let s = heap.stats();
    assert_eq!(s.last_marked, count);
    assert_eq!(
        s.pool_pages() as u64,
        count,
        "one page per kept object, the rest released"
    );
    let big =
        new_bytes(&mut m, 1, 10 * PAGE_SIZE - HEADER, AllocFlags::NONE).expect("a fresh span");
    assert!(bytes_match(big, 1));
    let mut walk = 0;
    let mut cur = kept.get();
    while let Some(p) = cur {
        walk += 1;
        cur = field(p, 1);
    }
    assert_eq!(walk, count);
}
