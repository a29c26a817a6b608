//! Explicit frees (`Mutator::free`): the memory is reused at once, without
//! ever being handed out twice, and objects the collector still has
//! business with wait for the next collection. The model test
//! (`model.rs`) frees at random in every configuration too.

mod common;

use std::collections::BTreeSet;

use common::*;
use mosaic::{AllocFlags, Config, Error, FinalizerOrder, Freed, ObjRef};

fn free(m: &mut TestMutator, o: ObjRef) -> Result<Freed, Error> {
    // SAFETY: the tests drop every use of `o` first.
    unsafe { m.free(o) }
}

#[test]
fn a_freed_slot_is_the_next_allocation_of_its_size_and_flags_and_comes_back_cleared() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let keep = new_pair(&mut m, 1, None, None).unwrap();
    let _root = m.root(keep).unwrap();
    let a = new_pair(&mut m, 2, Some(keep), Some(keep)).unwrap();
    let b = new_pair(&mut m, 3, Some(keep), None).unwrap();
    assert_eq!(free(&mut m, a).unwrap(), Freed::Now);
    assert_eq!(free(&mut m, b).unwrap(), Freed::Now);
    // The run still has room: the fast path bumps first.
    let mut seen = BTreeSet::new();
    for i in 0..5000 {
        let o = m.alloc(HEADER + 16).unwrap();
        // SAFETY: a fresh object of HEADER + 16 bytes.
        let words = unsafe { std::slice::from_raw_parts(o.as_ptr() as *const u64, 4) };
        assert_eq!(words, [0; 4], "allocation {i} at {o:?} is not cleared");
        init_uncleared(o, PAIR, 2, 100 + i);
        assert!(seen.insert(o.addr()), "{o:?} handed out twice");
    }
    assert!(seen.contains(&a.addr()) && seen.contains(&b.addr()));
    assert_eq!(header(keep).2, 1);
    let s = heap.stats();
    assert_eq!((s.freed_now, s.frees_deferred), (2, 0));
    assert_eq!(
        s.freed_now_bytes,
        2 * heap.object_size(keep).unwrap() as u64
    );
}

#[test]
fn a_freed_slot_goes_only_to_its_own_kind_of_allocation() {
    // No collection meanwhile (it would reclaim the freed slots for anyone).
    let heap = heap(Config {
        heap_min: 64 << 20,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let atomic = m.alloc_with(HEADER + 16, AllocFlags::UNINIT).unwrap();
    let conservative = m.alloc_with(HEADER + 16, AllocFlags::CONSERVATIVE).unwrap();
    set_word(conservative, 0, 0xdead_beef);
    assert_eq!(free(&mut m, atomic).unwrap(), Freed::Now);
    assert_eq!(free(&mut m, conservative).unwrap(), Freed::Now);
    // Use up the current runs of the three kinds, collecting the addresses.
    let mut plain = BTreeSet::new();
    for _ in 0..5000 {
        plain.insert(m.alloc(HEADER + 16).unwrap().addr());
    }
    assert!(!plain.contains(&atomic.addr()) && !plain.contains(&conservative.addr()));
    let mut got = None;
    for _ in 0..5000 {
        let o = m.alloc_with(HEADER + 16, AllocFlags::CONSERVATIVE).unwrap();
        if o == conservative {
            got = Some(o);
            break;
        }
    }
    let o = got.expect("the conservative slot came back to a conservative allocation");
    assert_eq!(
        heap.object_flags(o).unwrap(),
        AllocFlags::CONSERVATIVE,
        "with its kind"
    );
    // SAFETY: a fresh object of HEADER + 16 bytes.
    assert_eq!(unsafe { *(o.as_ptr() as *const u64) }, 0, "cleared");
    let mut got = false;
    for _ in 0..5000 {
        if m.alloc_with(HEADER + 16, AllocFlags::UNINIT).unwrap() == atomic {
            got = true;
            break;
        }
    }
    assert!(
        got,
        "the pointer-free slot came back to an UNINIT allocation"
    );
    assert!(heap
        .object_flags(atomic)
        .unwrap()
        .contains(AllocFlags::NO_POINTERS));
    assert_eq!(heap.stats().collections, 0);
}

#[test]
fn bad_frees_are_refused_and_lose_nothing() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let keep = new_pair(&mut m, 1, None, None).unwrap();
    let _root = m.root(keep).unwrap();
    let a = new_pair(&mut m, 2, None, None).unwrap();
    assert_eq!(free(&mut m, a).unwrap(), Freed::Now);
    assert!(
        matches!(free(&mut m, a), Err(Error::Misuse(_))),
        "double free"
    );
    let inside = ObjRef::from_ptr((keep.addr() + 8) as *mut u8).unwrap();
    assert!(matches!(
        free(&mut m, inside),
        Err(Error::ForeignPointer { .. })
    ));
    let mut local = [0u64; 4];
    let foreign = ObjRef::from_ptr(local.as_mut_ptr().cast()).unwrap();
    assert!(matches!(
        free(&mut m, foreign),
        Err(Error::ForeignPointer { .. })
    ));
    let big = new_vector(&mut m, 3, 100_000).unwrap();
    assert_eq!(free(&mut m, big).unwrap(), Freed::Now);
    assert!(matches!(
        free(&mut m, big),
        Err(Error::ForeignPointer { .. })
    ));
    m.enter_blocking().unwrap();
    assert!(matches!(free(&mut m, keep), Err(Error::Misuse(_))));
    m.leave_blocking().unwrap();
    m.collect();
    assert_eq!(header(keep), (PAIR, 2, 1));
    // A freed slot the collection found dead is swept, not handed out by
    // the list any more: freeing it again is a foreign pointer.
    m.finish_sweep();
    assert!(matches!(free(&mut m, a), Err(Error::ForeignPointer { .. })));
}

#[test]
fn objects_the_collector_still_needs_wait_for_the_next_collection() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let fin = new_pair(&mut m, 1, None, None).unwrap();
    m.register_finalizer(fin, FinalizerOrder::Ordered, |_, _| {})
        .unwrap();
    let cleanup = m
        .alloc_with(HEADER + 16, AllocFlags::NEEDS_CLEANUP)
        .unwrap();
    init_uncleared(cleanup, PAIR, 2, 2);
    let pinned = new_pair(&mut m, 3, None, None).unwrap();
    m.pin(pinned).unwrap();
    let born_pinned = m.alloc_with(HEADER + 16, AllocFlags::PINNED).unwrap();
    for o in [fin, cleanup, pinned, born_pinned] {
        assert_eq!(free(&mut m, o).unwrap(), Freed::AtNextCollection, "{o:?}");
    }
    assert_eq!(heap.stats().frees_deferred, 4);
}

#[test]
fn an_object_on_a_page_not_yet_swept_is_freed_by_the_sweep() {
    // (The page must stay unswept until the free: no background sweeping.)
    let heap = heap(Config {
        background_sweep: false,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let old = new_pair(&mut m, 1, None, None).unwrap();
    let keep = new_pair(&mut m, 2, None, None).unwrap();
    let roots = [m.root(old).unwrap(), m.root(keep).unwrap()];
    m.collect();
    assert!(heap.stats().pools.iter().any(|p| p.unswept_pages > 0));
    assert_eq!(free(&mut m, old).unwrap(), Freed::WhenSwept);
    assert!(
        matches!(free(&mut m, old), Err(Error::ForeignPointer { .. })),
        "not an object any more"
    );
    m.finish_sweep();
    assert_eq!(
        heap.stats().live_objects(),
        1,
        "the sweep freed it, rooted or not"
    );
    assert_eq!(header(keep), (PAIR, 2, 2));
    assert_eq!(heap.stats().freed_at_sweep, 1);
    drop(roots);
}

#[test]
fn freed_slots_are_forgotten_at_a_collection_and_reclaimed_by_it() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let mut keep = Vec::new();
    let mut roots = Vec::new();
    for i in 0..1000u64 {
        let o = new_pair(&mut m, i, None, None).unwrap();
        if i % 2 == 0 {
            roots.push(m.root(o).unwrap());
            keep.push(o);
        } else {
            assert_eq!(free(&mut m, o).unwrap(), Freed::Now);
        }
    }
    m.collect();
    m.finish_sweep();
    assert_eq!(heap.stats().live_objects(), 500);
    // Everything allocated now is distinct and never a kept object.
    let kept: BTreeSet<usize> = keep.iter().map(|o| o.addr()).collect();
    let mut seen = BTreeSet::new();
    for i in 0..3000 {
        let o = new_pair(&mut m, 10_000 + i, None, None).unwrap();
        assert!(!kept.contains(&o.addr()) && seen.insert(o.addr()));
    }
    for (i, o) in keep.iter().enumerate() {
        assert_eq!(header(*o), (PAIR, 2, 2 * i as u64));
    }
    drop(roots);
}

#[test]
fn a_freed_large_object_gives_its_pages_back_at_once() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let big = new_vector(&mut m, 1, 300_000).unwrap();
    let s = heap.stats();
    assert_eq!(s.large.objects, 1);
    let before = s.allocated_since_gc;
    assert_eq!(free(&mut m, big).unwrap(), Freed::Now);
    let s = heap.stats();
    assert_eq!((s.large.objects, s.large.pages), (0, 0));
    assert!(s.allocated_since_gc < before, "the pages count no more");
    let again = new_vector(&mut m, 2, 300_000).unwrap();
    assert_eq!(again, big, "the same span, reused");
    assert_eq!(header(again), (VECTOR, 300_000, 2));
}

#[test]
fn an_old_object_freed_in_generational_mode_comes_back_young() {
    let heap = heap(Config {
        generational: true,
        verify: true,
        gc_threads: 1,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let old = new_pair_with(&mut m, 1, None, None, AllocFlags::BARRIERED).unwrap();
    let root = m.root(old).unwrap();
    m.collect();
    m.finish_sweep();
    drop(root);
    assert_eq!(free(&mut m, old).unwrap(), Freed::Now);
    // The next barriered allocation of its size takes the slot back.
    let mut fresh = None;
    for i in 0..5000 {
        let o = new_pair_with(&mut m, 10 + i, None, None, AllocFlags::BARRIERED).unwrap();
        if o == old {
            fresh = Some(o);
            break;
        }
    }
    let fresh = fresh.expect("the freed slot is reused");
    let _root = m.root(fresh).unwrap();
    // A young object stored into it with no barrier (it is young: none is
    // needed) must survive a minor collection: had the slot stayed old,
    // the minor collection would not trace it and verify mode would stop.
    let young = new_pair(&mut m, 99, None, None).unwrap();
    set_field(fresh, 0, Some(young));
    m.collect_young();
    assert_eq!(header(field(fresh, 0).unwrap()), (PAIR, 2, 99));
    m.collect();
    assert_eq!(header(field(fresh, 0).unwrap()), (PAIR, 2, 99));
}

#[test]
fn a_finalizer_may_free_its_own_object() {
    finalizers_free_their_objects(false);
}

/// With background sweeping the pages may be swept before the frees (the
/// slots then wait on the mutator's list): the next collection still
/// finds nothing live.
#[test]
fn a_finalizer_may_free_its_own_object_with_background_sweeping() {
    finalizers_free_their_objects(true);
}

fn finalizers_free_their_objects(background_sweep: bool) {
    let heap = heap(Config {
        background_sweep,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let got = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
    for i in 0..100 {
        let o = new_pair(&mut m, i, None, None).unwrap();
        let got = got.clone();
        m.register_finalizer(o, FinalizerOrder::Ordered, move |m, obj| {
            // SAFETY: unreachable, and nothing uses it after this.
            got.lock().push(unsafe { m.free(obj) }.unwrap());
        })
        .unwrap();
    }
    m.collect();
    assert_eq!(m.run_finalizers().unwrap(), 100);
    let got = got.lock();
    assert_eq!(got.len(), 100);
    assert!(
        got.iter().all(|f| *f != Freed::AtNextCollection),
        "the runner's pin does not stop the free: {got:?}"
    );
    m.finish_sweep();
    if !background_sweep {
        // Every page was unswept at the frees: the sweep freed each slot.
        assert_eq!(heap.stats().live_objects(), 0);
    }
    m.collect();
    m.finish_sweep();
    assert_eq!(heap.stats().live_objects(), 0);
}

/// The run buffer (cursor, limit) of the zeroed context of `size`.
fn run_of(m: &mut TestMutator, size: usize) -> (usize, usize) {
    let fp = m.raw_fast_path();
    let i = (size + 7) >> 3;
    assert!(i < fp.class_of_len);
    // SAFETY: the mutator's lookup table and buffers, valid while it lives;
    // a buffer starts with its cursor and limit.
    unsafe {
        let class = *fp.class_of.add(i) as usize;
        let ctx = fp.bump_buffers(AllocFlags::NONE).unwrap() + class;
        let b = fp.buffers.add(ctx * fp.buffer_size).cast::<usize>();
        (*b, *b.add(1))
    }
}

/// Once the run is used up, a freed slot becomes the run: the next
/// allocation of its size takes it by the fast path (a bump, no call),
/// a second free of it is refused, and a collection that finds it still
/// unused reclaims it.
#[test]
fn with_the_run_used_up_a_freed_slot_becomes_the_run() {
    let heap = heap(Config {
        heap_min: 64 << 20,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let size = HEADER + 16;
    let mut objs = Vec::new();
    // Allocate until the run is used up, on a second page at least.
    loop {
        objs.push(new_pair(&mut m, objs.len() as u64, None, None).unwrap());
        let (cursor, limit) = run_of(&mut m, size);
        let pages = objs[0].addr() >> 16 != objs.last().unwrap().addr() >> 16;
        if cursor == limit && pages {
            break;
        }
        assert!(objs.len() < 100_000, "the run never ran out");
    }
    let collections = heap.stats().collections;
    // Objects off the run's page can become the run.
    let last_page = objs.last().unwrap().addr() >> 16;
    let on_other_page = move |o: &ObjRef| o.addr() >> 16 != last_page;
    let x = objs.remove(objs.iter().position(on_other_page).unwrap());
    assert_eq!(free(&mut m, x).unwrap(), Freed::Now);
    assert_eq!(
        run_of(&mut m, size),
        (x.addr(), x.addr() + size.next_multiple_of(16))
    );
    let again = free(&mut m, x);
    assert!(matches!(again, Err(Error::Misuse(_))), "{again:?}");
    // An allocation that writes a side bit (its page may be another
    // mutator's) does not take it: the slot goes back to the list.
    let pinned = new_pair_with(&mut m, 8, None, None, AllocFlags::PINNED).unwrap();
    assert_ne!(pinned, x);
    assert!(heap.is_pinned(pinned));
    assert_ne!(run_of(&mut m, size).0, x.addr());
    objs.push(pinned);
    // The next plain allocation of its size takes it (from the list if
    // the pinned one's run has no room left, else once that run is used
    // up).
    let mut y = new_pair(&mut m, 7, None, None).unwrap();
    while y != x {
        objs.push(y);
        y = new_pair(&mut m, 7, None, None).unwrap();
        assert!(objs.len() < 200_000, "the freed slot never came back");
    }
    assert!(!heap.is_pinned(y), "no pin bit left behind");
    assert_eq!(header(y).2, 7);
    let (cursor, limit) = run_of(&mut m, size);
    assert_eq!(cursor, limit, "used up again");
    objs.push(y);

    // Freed into the run and never handed out: a collection reclaims it.
    let z = objs.remove(objs.iter().position(on_other_page).unwrap());
    let roots: Vec<_> = objs.iter().map(|&o| m.root(o).unwrap()).collect();
    assert_eq!(free(&mut m, z).unwrap(), Freed::Now);
    assert_eq!(run_of(&mut m, size).0, z.addr(), "the run");
    assert_eq!(
        heap.stats().collections,
        collections,
        "no collection so far"
    );
    m.collect();
    m.finish_sweep();
    assert!(!heap.is_object(z.as_ptr()), "reclaimed");
    assert_eq!(
        heap.stats().last_marked,
        objs.len() as u64,
        "the rooted ones"
    );
    drop(roots);
}

#[test]
fn free_counts_are_exact_across_threads_and_outlive_the_mutators_that_made_them() {
    use std::sync::mpsc;
    let heap = heap(Config {
        heap_min: 64 << 20,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let slot = heap
        .object_size(new_pair(&mut m, 1, None, None).unwrap())
        .unwrap() as u64;
    // Each thread frees 300 objects at once and defers one (a finalizer),
    // then keeps its mutator until told to drop it.
    let (done_tx, done_rx) = mpsc::channel();
    let threads: Vec<_> = (0..3u64)
        .map(|t| {
            let heap = heap.clone();
            let done = done_tx.clone();
            let (go_tx, go_rx) = mpsc::channel::<()>();
            let thread = std::thread::spawn(move || {
                let mut m = heap.mutator().unwrap();
                for i in 0..300 {
                    let o = new_pair(&mut m, t * 1000 + i, None, None).unwrap();
                    assert_eq!(free(&mut m, o).unwrap(), Freed::Now);
                }
                let fin = new_pair(&mut m, t, None, None).unwrap();
                m.register_finalizer(fin, FinalizerOrder::Ordered, |_, _| {})
                    .unwrap();
                assert_eq!(free(&mut m, fin).unwrap(), Freed::AtNextCollection);
                // Parked while the others free and the main thread checks.
                m.enter_blocking().unwrap();
                done.send(()).unwrap();
                go_rx.recv().unwrap();
                m.leave_blocking().unwrap();
            });
            (go_tx, thread)
        })
        .collect();
    for _ in 0..3 {
        done_rx.recv().unwrap();
    }
    let check = |what: &str| {
        let s = heap.stats();
        assert_eq!(
            (s.freed_now, s.freed_now_bytes, s.frees_deferred),
            (900, 900 * slot, 3),
            "{what}"
        );
        assert_eq!(heap.freed_bytes(), 903 * slot, "{what}");
    };
    check("three mutators alive");
    // A mutator that goes hands its counts to the heap: no free is lost
    // or counted twice, whether its table goes at once or at a collection.
    let mut threads = threads.into_iter();
    for (go, thread) in threads.by_ref().take(2) {
        go.send(()).unwrap();
        thread.join().unwrap();
    }
    check("two mutators dropped");
    m.collect();
    check("after a collection");
    for (go, thread) in threads {
        go.send(()).unwrap();
        thread.join().unwrap();
    }
    m.collect();
    check("every freeing mutator gone");
}

#[test]
fn a_walk_of_the_heap_sees_no_freed_object() {
    let heap = heap(Config {
        heap_min: 64 << 20,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let keep: Vec<_> = (0..10)
        .map(|i| {
            let o = new_pair(&mut m, i, None, None).unwrap();
            (m.root(o).unwrap(), o)
        })
        .collect();
    for i in 0..100 {
        let o = new_pair(&mut m, 100 + i, None, None).unwrap();
        assert_eq!(free(&mut m, o).unwrap(), Freed::Now);
    }
    let mut seen = Vec::new();
    m.for_each_object(|o, _| seen.push(o.addr()));
    seen.sort_unstable();
    let mut kept: Vec<usize> = keep.iter().map(|(_, o)| o.addr()).collect();
    kept.sort_unstable();
    assert_eq!(seen, kept, "the walk saw freed objects");
}

#[test]
fn a_second_free_is_refused_after_the_first_thread_flushed_and_from_another_thread() {
    let heap = heap(Config {
        heap_min: 64 << 20,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let keep = new_pair(&mut m, 1, None, None).unwrap();
    let _root = m.root(keep).unwrap();
    // Not the run's last slot: it waits in the list, tagged.
    let a = new_pair(&mut m, 2, None, None).unwrap();
    new_pair(&mut m, 3, None, None).unwrap();
    assert_eq!(free(&mut m, a).unwrap(), Freed::Now);
    // A blocking region flushes the list: the slot is a forgotten free.
    m.enter_blocking().unwrap();
    m.leave_blocking().unwrap();
    let addr = a.addr();
    let h2 = heap.clone();
    std::thread::spawn(move || {
        let mut m2 = h2.mutator().unwrap();
        let a = ObjRef::from_ptr(addr as *mut u8).unwrap();
        assert!(matches!(free(&mut m2, a), Err(Error::Misuse(_))));
    })
    .join()
    .unwrap();
    assert!(matches!(free(&mut m, a), Err(Error::Misuse(_))));
}

#[test]
fn an_uninitialised_slot_reused_after_a_collection_is_freed_again_without_a_write() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let a = m.alloc_with(HEADER + 16, AllocFlags::UNINIT).unwrap();
    let b = m.alloc_with(HEADER + 16, AllocFlags::UNINIT).unwrap();
    let _root = m.root(b).unwrap();
    assert_eq!(free(&mut m, a).unwrap(), Freed::Now);
    // The collection reclaims the listed slot; allocations take it again.
    m.collect();
    m.finish_sweep();
    let mut again = None;
    for _ in 0..20000 {
        let o = m.alloc_with(HEADER + 16, AllocFlags::UNINIT).unwrap();
        if o == a {
            again = Some(o);
            break;
        }
    }
    let o = again.expect("the freed slot came back");
    // Its first word is what the collector left: no free tag.
    assert_eq!(free(&mut m, o).unwrap(), Freed::Now);
}
