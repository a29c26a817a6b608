//! Generational mode (`Config::generational`): minor collections behind
//! the write barrier, the remembered set, unbarriered objects, the rules
//! for weak references, ephemerons and finalizers in a minor collection,
//! and verify mode catching a missing barrier. The model test
//! (`model.rs`) runs every configuration with generations too; these are
//! the named cases.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use common::*;
use mosaic::{AllocFlags, Config, FinalizerOrder, ObjRef, WeakKind};

fn gen_config() -> Config {
    Config {
        generational: true,
        gc_threads: 1,
        ..small_config()
    }
}

/// A pair allocated with the barrier promise.
fn barriered_pair(m: &mut TestMutator, id: u64) -> ObjRef {
    try_barriered_pair(m, id).unwrap()
}

fn try_barriered_pair(m: &mut TestMutator, id: u64) -> Result<ObjRef, mosaic::Error> {
    let size = HEADER + 16;
    let p = m.alloc_with(size, AllocFlags::BARRIERED)?;
    // SAFETY: a fresh zeroed object of `size` bytes.
    unsafe {
        let w = p.as_ptr() as *mut u32;
        w.write(PAIR);
        w.add(1).write(2);
        (p.as_ptr().add(8) as *mut u64).write(id);
    }
    Ok(p)
}

fn plain_pair(m: &mut TestMutator, id: u64) -> ObjRef {
    let p = m.alloc(HEADER + 16).unwrap();
    // SAFETY: as above.
    unsafe {
        let w = p.as_ptr() as *mut u32;
        w.write(PAIR);
        w.add(1).write(2);
        (p.as_ptr().add(8) as *mut u64).write(id);
    }
    p
}

#[test]
fn a_young_object_stored_with_the_barrier_survives_minor_collections() {
    let heap = heap(gen_config());
    let mut m = heap.mutator().unwrap();
    let old = barriered_pair(&mut m, 1);
    let root = m.root(old).unwrap();
    m.collect();
    assert_eq!(heap.stats().full_collections, 1);
    // `old` is old now; a young pair goes into it, with the barrier.
    let young = barriered_pair(&mut m, 2);
    set_field(old, 0, Some(young));
    m.write_barrier(old);
    // Garbage beside it, young and old.
    for i in 0..100 {
        barriered_pair(&mut m, 100 + i);
    }
    m.collect_young();
    let s = heap.stats();
    assert_eq!((s.minor_collections, s.full_collections), (1, 1));
    assert_eq!(s.remembered_objects, 1, "the logged old pair");
    assert_eq!(
        s.last_marked, 1,
        "the minor collection marked only the young pair"
    );
    assert_eq!(header(field(old, 0).unwrap()).2, 2);
    // Logged once per cycle: a second barrier before the next collection
    // finds the object logged already; with no barrier, nothing is
    // remembered.
    m.write_barrier(old);
    m.write_barrier(old);
    for i in 0..100 {
        barriered_pair(&mut m, 200 + i);
    }
    m.collect_young();
    assert_eq!(heap.stats().remembered_objects, 2);
    for i in 0..100 {
        barriered_pair(&mut m, 300 + i);
    }
    m.collect_young();
    let s = heap.stats();
    assert_eq!((s.minor_collections, s.remembered_objects), (3, 2));
    m.finish_sweep();
    assert_eq!(heap.stats().live_objects(), 2, "the 100 young pairs died");
    assert_eq!(header(field(old, 0).unwrap()).2, 2);
    drop(root);
}

#[test]
fn old_garbage_waits_for_a_full_collection() {
    let heap = heap(gen_config());
    let mut m = heap.mutator().unwrap();
    let a = barriered_pair(&mut m, 1);
    let root = m.root(a).unwrap();
    m.collect();
    drop(root);
    m.collect_young();
    m.finish_sweep();
    assert_eq!(
        heap.stats().live_objects(),
        1,
        "old: kept by the minor collection"
    );
    m.collect();
    m.finish_sweep();
    assert_eq!(
        heap.stats().live_objects(),
        0,
        "the full collection frees it"
    );
}

#[test]
fn a_missing_barrier_is_caught_by_verify_mode_at_the_next_minor_collection() {
    quiet_expected_panics();
    let heap = heap(Config {
        verify: true,
        ..gen_config()
    });
    let mut m = heap.mutator().unwrap();
    let old = barriered_pair(&mut m, 1);
    let _root = m.root(old).unwrap();
    m.collect();
    let young = barriered_pair(&mut m, 2);
    // The planted bug: a store into an old barriered object, no barrier.
    set_field(old, 0, Some(young));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.collect_young()));
    let msg = r.expect_err("verify mode must catch the missing barrier");
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("minor collection") && msg.contains("write barrier"),
        "{msg}"
    );
    assert!(msg.contains("did not mark"), "{msg}");
}

#[test]
fn unbarriered_objects_are_rescanned_by_every_minor_collection() {
    let heap = heap(Config {
        verify: true,
        ..gen_config()
    });
    let mut m = heap.mutator().unwrap();
    let old = plain_pair(&mut m, 1);
    let _root = m.root(old).unwrap();
    m.collect();
    for round in 0..3u64 {
        let young = plain_pair(&mut m, 10 + round);
        // No barrier: the object made no promise.
        set_field(old, 1, Some(young));
        // Garbage, so that each minor collection pays and the next is minor.
        for i in 0..1000 {
            plain_pair(&mut m, 1000 + i);
        }
        m.collect_young();
        assert_eq!(header(field(old, 1).unwrap()).2, 10 + round);
    }
    let s = heap.stats();
    assert_eq!(s.minor_collections, 3);
    assert!(s.rescanned_objects >= 3, "{}", s.rescanned_objects);
    assert_eq!(s.remembered_objects, 0);
}

#[test]
fn minor_collection_rules_for_weak_references_ephemerons_and_finalizers() {
    let heap = heap(Config {
        verify: true,
        ..gen_config()
    });
    let mut m = heap.mutator().unwrap();
    // Old: a holder, an object only a weak handle will reach, an
    // ephemeron key.
    let holder = barriered_pair(&mut m, 1);
    let _r = m.root(holder).unwrap();
    let old_weak = barriered_pair(&mut m, 2);
    let old_key = barriered_pair(&mut m, 3);
    let old_fin = barriered_pair(&mut m, 4);
    let keep = [
        m.root(old_weak).unwrap(),
        m.root(old_key).unwrap(),
        m.root(old_fin).unwrap(),
    ];
    let ran = Arc::new(AtomicUsize::new(0));
    let r2 = ran.clone();
    m.register_finalizer(old_fin, FinalizerOrder::Unordered, move |_, _| {
        r2.fetch_add(10, Relaxed);
    })
    .unwrap();
    m.collect();
    drop(keep);
    // Young: an object only a weak handle reaches, an ephemeron key, a
    // finalizable object; all unreachable.
    let young_weak = barriered_pair(&mut m, 5);
    let w_old = m.weak_root(old_weak, WeakKind::Short).unwrap();
    let w_young = m.weak_root(young_weak, WeakKind::Long).unwrap();
    let value = barriered_pair(&mut m, 6);
    let e_old = m.alloc_ephemeron(Some(old_key), Some(value)).unwrap();
    let young_key = barriered_pair(&mut m, 7);
    let value2 = barriered_pair(&mut m, 8);
    let e_young = m.alloc_ephemeron(Some(young_key), Some(value2)).unwrap();
    set_field(holder, 0, Some(e_old));
    set_field(holder, 1, Some(e_young));
    m.write_barrier(holder);
    let young_fin = barriered_pair(&mut m, 9);
    let r3 = ran.clone();
    m.register_finalizer(young_fin, FinalizerOrder::Unordered, move |_, _| {
        r3.fetch_add(1, Relaxed);
    })
    .unwrap();
    m.collect_young();
    // An unreached young object: its weak handle is cleared, its
    // finalizer queued. An old object counts as live until a full
    // collection: its weak handle stays, its finalizer waits.
    assert!(w_young.get().is_none());
    assert_eq!(w_old.get(), Some(old_weak));
    // An ephemeron whose key is old keeps its value; one whose key is
    // young and unreached is cleared.
    assert_eq!(heap.ephemeron_value(e_old).unwrap(), Some(value));
    assert_eq!(heap.ephemeron_key(e_young).unwrap(), None);
    assert_eq!(heap.ephemeron_value(e_young).unwrap(), None);
    m.run_finalizers().unwrap();
    assert_eq!(ran.load(Relaxed), 1, "the young object's finalizer only");
    // The full collection sees the old generation's garbage.
    m.collect();
    m.run_finalizers().unwrap();
    assert_eq!(ran.load(Relaxed), 11);
    assert!(w_old.get().is_none());
    assert_eq!(heap.ephemeron_value(e_old).unwrap(), None);
}

#[test]
fn a_barrier_on_something_that_is_not_an_object_panics_in_verify_mode() {
    quiet_expected_panics();
    let heap = heap(Config {
        verify: true,
        ..gen_config()
    });
    let mut m = heap.mutator().unwrap();
    let p = barriered_pair(&mut m, 1);
    let _r = m.root(p).unwrap();
    let mut local = 0u64;
    for (what, addr) in [
        ("outside the heap", &mut local as *mut u64 as *mut u8),
        ("not the start", p.as_ptr().wrapping_add(8)),
    ] {
        let bad = ObjRef::from_ptr(addr).unwrap();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.write_barrier(bad)));
        let msg = r.expect_err(what);
        let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("write barrier") && msg.contains(what), "{msg}");
    }
    // The heap is fine afterwards.
    m.collect_young();
    assert_eq!(header(p).2, 1);
}

#[test]
fn a_minor_collection_that_frees_little_makes_the_next_one_full() {
    let heap = heap(Config {
        heap_policy: mosaic::HeapPolicy::Proportional { k: 0.5 },
        heap_min: 256 << 10,
        ..gen_config()
    });
    let mut m = heap.mutator().unwrap();
    // A large object (32 KiB of fields) with the barrier promise.
    let holder = new_vector(&mut m, 1, 4000).unwrap();
    let _r = m.root(holder).unwrap();
    m.collect();
    // Everything allocated from here on stays reachable: no minor
    // collection pays, so every other collection must be full.
    let mut i = 0usize;
    while heap.counters().collections < 8 {
        let p = barriered_pair(&mut m, i as u64 + 10);
        // SAFETY: field `i % 4000` of the holder's 4000 reference fields.
        unsafe { m.write_ref(holder, field_slot(holder, i % 4000), p.as_ptr()) };
        i += 1;
        if i % 4000 == 0 {
            // Keep the old ones too: a chain through the pairs.
            set_field(p, 0, field(holder, 0));
        }
    }
    let s = heap.stats();
    assert!(
        s.full_collections >= 4,
        "minor {} full {}",
        s.minor_collections,
        s.full_collections
    );
}

#[test]
fn old_garbage_is_collected_before_the_heap_is_called_full() {
    let heap = heap(Config {
        max_heap: 4 << 20,
        heap_policy: mosaic::HeapPolicy::Fixed,
        ..gen_config()
    });
    let mut m = heap.mutator().unwrap();
    // 3 MiB of old objects, then garbage.
    let keep = m.empty_root();
    for i in 0..(3 << 20) / 32 {
        let p = barriered_pair(&mut m, i);
        set_field(p, 0, keep.get());
        keep.set(Some(p));
    }
    m.collect();
    keep.set(None);
    // Only a full collection can free them: the allocations below need it.
    for i in 0..(3 << 20) / 32 {
        let p = barriered_pair(&mut m, i);
        set_field(p, 0, keep.get());
        m.write_barrier(p);
        keep.set(Some(p));
    }
    let s = heap.stats();
    assert!(s.full_collections >= 2, "{} full", s.full_collections);
    // A heap full of live objects still says so.
    let r = (0..(2 << 20) / 32).try_for_each(|i| {
        let p = try_barriered_pair(&mut m, i)?;
        set_field(p, 0, keep.get());
        keep.set(Some(p));
        Ok::<(), mosaic::Error>(())
    });
    assert!(matches!(r, Err(mosaic::Error::OutOfMemory { .. })), "{r:?}");
}

#[test]
fn a_large_object_that_only_old_garbage_keeps_out_gets_a_full_collection() {
    let heap = heap(Config {
        max_heap: 4 << 20,
        heap_policy: mosaic::HeapPolicy::Fixed,
        ..gen_config()
    });
    let mut m = heap.mutator().unwrap();
    let big = m
        .alloc_with(3 << 20, AllocFlags::BARRIERED | AllocFlags::NO_POINTERS)
        .unwrap();
    let r = m.root(big).unwrap();
    m.collect();
    drop(r);
    // Old garbage: no minor collection frees it; the heap is not full.
    let again = m.alloc_with(3 << 20, AllocFlags::NO_POINTERS);
    assert!(again.is_ok(), "{again:?}");
    assert!(heap.stats().full_collections >= 2);
}

#[test]
fn a_conservative_object_ignores_the_barrier_promise_and_is_rescanned() {
    let heap = heap(Config {
        verify: true,
        ..gen_config()
    });
    let mut m = heap.mutator().unwrap();
    let c = m
        .alloc_with(64, AllocFlags::CONSERVATIVE | AllocFlags::BARRIERED)
        .unwrap();
    let _r = m.root(c).unwrap();
    m.collect();
    for round in 0..3u64 {
        let young = barriered_pair(&mut m, 10 + round);
        // No barrier: the flag is ignored for conservative objects.
        // SAFETY: a 64-byte object; word 3 is inside it.
        unsafe { (c.as_ptr() as *mut usize).add(3).write(young.addr()) };
        for i in 0..1000 {
            barriered_pair(&mut m, 1000 + i);
        }
        m.collect_young();
        // SAFETY: as above.
        let w = unsafe { (c.as_ptr() as *const usize).add(3).read() };
        assert_eq!(
            header(ObjRef::from_ptr(w as *mut u8).unwrap()).2,
            10 + round
        );
    }
    assert!(heap.stats().rescanned_objects >= 3);
}

#[test]
fn objects_without_a_barrier_compacted_onto_barriered_pages_are_rescanned() {
    // Minor collections look for old unbarriered objects only on pages
    // flagged for them; compaction can move such objects onto pages that
    // held only BARRIERED ones, and must flag them.
    const PAGE: usize = 64 << 10;
    for flags in [AllocFlags::NONE, AllocFlags::CONSERVATIVE] {
        let heap = heap(Config {
            verify: true,
            heap_policy: mosaic::HeapPolicy::Fixed,
            max_heap: 64 << 20,
            ..gen_config()
        });
        let mut m = heap.mutator().unwrap();
        // Pages of barriered pairs, one in four kept: room to compact into.
        let kept: Vec<_> = (0..6000u64)
            .filter_map(|i| {
                let p = barriered_pair(&mut m, i);
                (i % 4 == 0).then(|| m.root(p).unwrap())
            })
            .collect();
        let barriered_pages: std::collections::HashSet<usize> = kept
            .iter()
            .map(|r| r.get().unwrap().addr() / PAGE)
            .collect();
        // Later pages of pairs without the promise, one in eight kept.
        let plain: Vec<_> = (0..8000u64)
            .filter_map(|i| {
                let p = new_pair_with(&mut m, 100_000 + i, None, None, flags).unwrap();
                (i % 8 == 0).then(|| m.root(p).unwrap())
            })
            .collect();
        m.compact().unwrap();
        m.finish_sweep();
        let moved: Vec<ObjRef> = plain
            .iter()
            .map(|r| r.get().unwrap())
            .filter(|o| barriered_pages.contains(&(o.addr() / PAGE)))
            .collect();
        assert!(
            !moved.is_empty(),
            "{flags:?}: nothing moved onto a barriered page"
        );
        for round in 0..3u64 {
            let id = |k: usize| 1_000_000 + round * 10_000 + k as u64;
            for (k, &o) in moved.iter().enumerate() {
                // No barrier: none was promised for these objects.
                let young = new_pair(&mut m, id(k), None, None).unwrap();
                set_field(o, 1, Some(young));
            }
            m.collect_young();
            for (k, &o) in moved.iter().enumerate() {
                assert_eq!(header(field(o, 1).unwrap()).2, id(k), "{flags:?}");
            }
        }
        assert!(heap.stats().minor_collections >= 3);
    }
}
