//! Shared finalizers (`Heap::set_shared_finalizer`,
//! `Mutator::register_shared_finalizer`): one function for many objects,
//! two bits on each object's page and no entry. They must behave exactly
//! as logged finalizers do: once, outside the pause, for exactly the
//! unreachable objects, in both orders, across compaction and generations,
//! and side by side with logged registrations of the same objects.

mod common;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use common::*;
use mosaic::{Config, Error, FinalizerOrder, ObjRef};
use parking_lot::Mutex;

/// Ids of the objects whose shared finalizer ran, with the tag and data.
static RAN: Mutex<Vec<(u64, usize, usize)>> = Mutex::new(Vec::new());
/// Objects the shared finalizer registers again (by id) instead of
/// letting them go, how many times each.
static AGAIN: Mutex<Vec<u64>> = Mutex::new(Vec::new());
/// Serializes the tests: they share `RAN` and `AGAIN`.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn shared(m: &mut TestMutator, obj: ObjRef, tag: usize, data: usize) {
    let id = header(obj).2;
    RAN.lock().push((id, tag, data));
    let mut again = AGAIN.lock();
    if let Some(i) = again.iter().position(|&a| a == id) {
        again.swap_remove(i);
        drop(again);
        m.register_shared_finalizer(obj, FinalizerOrder::Ordered)
            .expect("registering again from the finalizer");
    }
}

/// The ids that ran since the last call, sorted; checks the tag and that
/// the data is a collection's number.
fn ran(tag: usize) -> Vec<u64> {
    let mut got: Vec<u64> = std::mem::take(&mut *RAN.lock())
        .into_iter()
        .map(|(id, t, d)| {
            assert_eq!(t, tag, "object {id}: tag");
            assert!(d >= 1, "object {id}: data {d} is no collection's number");
            id
        })
        .collect();
    got.sort_unstable();
    got
}

/// A logged finalizer of the tests below: the id, with tag 1.
fn logged(_: &mut TestMutator, obj: ObjRef, tag: usize, data: usize) {
    assert_eq!(tag, 1);
    RAN.lock().push((header(obj).2, 77, data));
}

#[test]
fn many_objects_of_both_orders_beside_logged_ones_are_finalized_once_when_unreachable() {
    let _one = ONE_AT_A_TIME.lock();
    RAN.lock().clear();
    // Room for all of it: no collection before the first one below.
    let heap = heap(Config {
        heap_min: 64 << 20,
        ..small_config()
    });
    heap.set_shared_finalizer(shared, 42).unwrap();
    let mut m = heap.mutator().unwrap();
    let n = 5000u64;
    let mut roots = Vec::new();
    let mut shared_ids = BTreeSet::new();
    let mut logged_ids = BTreeSet::new();
    for i in 0..n {
        // Three sizes (three pools), one large object in a hundred.
        let o = match i % 100 {
            0 => new_vector(&mut m, i, 9000).unwrap(),
            _ if i % 3 == 0 => new_vector(&mut m, i, 5).unwrap(),
            _ => new_pair(&mut m, i, None, None).unwrap(),
        };
        match i % 4 {
            0 => m
                .register_shared_finalizer(o, FinalizerOrder::Ordered)
                .unwrap(),
            1 => m
                .register_shared_finalizer(o, FinalizerOrder::Unordered)
                .unwrap(),
            2 => m
                .register_finalizer_fn(o, FinalizerOrder::Unordered, logged, 1, i as usize)
                .unwrap(),
            _ => {}
        }
        if i % 4 < 2 {
            shared_ids.insert(i);
        } else if i % 4 == 2 {
            logged_ids.insert(i);
        }
        if i % 2 == 0 {
            roots.push(m.root(o).unwrap());
        }
    }
    assert_eq!(
        heap.registered_finalizers(),
        shared_ids.len() + logged_ids.len()
    );
    assert_eq!(heap.stats().collections, 0);
    m.collect();
    let queued = heap.pending_finalizers();
    assert!(RAN.lock().is_empty(), "never inside the collection");
    m.run_finalizers().unwrap();
    let all: Vec<(u64, usize, usize)> = std::mem::take(&mut *RAN.lock());
    assert_eq!(all.len(), queued);
    let mut got_shared: Vec<u64> = all.iter().filter(|r| r.1 == 42).map(|r| r.0).collect();
    let mut got_logged: Vec<(u64, usize)> = all
        .iter()
        .filter(|r| r.1 == 77)
        .map(|r| (r.0, r.2))
        .collect();
    got_shared.sort_unstable();
    got_logged.sort_unstable();
    assert!(
        all.iter().all(|r| r.1 == 77 || r.2 == 1),
        "shared data: the queuing collection's number"
    );
    let odd = |s: &BTreeSet<u64>| s.iter().copied().filter(|i| i % 2 == 1).collect::<Vec<_>>();
    assert_eq!(got_shared, odd(&shared_ids), "the unrooted shared ones");
    assert_eq!(
        got_logged,
        odd(&logged_ids)
            .into_iter()
            .map(|i| (i, i as usize))
            .collect::<Vec<_>>(),
        "the unrooted logged ones, with their data"
    );
    let left = shared_ids.len() + logged_ids.len() - all.len();
    assert_eq!(heap.registered_finalizers(), left);

    // Once only; the finalized objects are reclaimed by the next
    // collection, the rooted ones stay registered.
    m.collect();
    m.run_finalizers().unwrap();
    assert!(RAN.lock().is_empty(), "once only");
    assert_eq!(heap.registered_finalizers(), left);
    drop(roots);
    m.collect();
    m.run_finalizers().unwrap();
    let rest: Vec<u64> = std::mem::take(&mut *RAN.lock())
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(rest.len(), left, "every other one now");
    assert!(rest.iter().all(|i| i % 2 == 0));
    assert_eq!(heap.registered_finalizers(), 0);
    m.collect();
    m.finish_sweep();
    assert_eq!(heap.stats().last_marked, 0, "all reclaimed");
}

#[test]
fn ordered_shared_finalizers_run_a_referrer_first_and_unordered_ones_a_whole_cycle() {
    let _one = ONE_AT_A_TIME.lock();
    RAN.lock().clear();
    let heap = heap(small_config());
    heap.set_shared_finalizer(shared, 5).unwrap();
    let mut m = heap.mutator().unwrap();
    // Ordered chain 1 -> 2 -> 3 (3 reached only through 2).
    let c = new_pair(&mut m, 3, None, None).unwrap();
    let b = new_pair(&mut m, 2, Some(c), None).unwrap();
    let a = new_pair(&mut m, 1, Some(b), None).unwrap();
    // Unordered cycle 10 <-> 11.
    let x = new_pair(&mut m, 10, None, None).unwrap();
    let y = new_pair(&mut m, 11, Some(x), None).unwrap();
    set_field(x, 0, Some(y));
    for o in [a, b, c] {
        m.register_shared_finalizer(o, FinalizerOrder::Ordered)
            .unwrap();
    }
    for o in [x, y] {
        m.register_shared_finalizer(o, FinalizerOrder::Unordered)
            .unwrap();
    }
    let mut order = Vec::new();
    for _ in 0..4 {
        m.collect();
        m.run_finalizers().unwrap();
        order.push(ran(5));
    }
    assert_eq!(
        order,
        vec![vec![1, 10, 11], vec![2], vec![3], vec![]],
        "one link of the ordered chain a collection, the cycle at once"
    );
}

#[test]
fn registering_is_refused_before_the_function_is_set_and_twice_and_unregistering_works() {
    let _one = ONE_AT_A_TIME.lock();
    RAN.lock().clear();
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let a = new_pair(&mut m, 1, None, None).unwrap();
    let ra = m.root(a).unwrap();
    let r = m.register_shared_finalizer(a, FinalizerOrder::Ordered);
    assert!(matches!(r, Err(Error::Misuse(_))), "{r:?}");
    heap.set_shared_finalizer(shared, 9).unwrap();
    m.register_shared_finalizer(a, FinalizerOrder::Ordered)
        .unwrap();
    let twice = m.register_shared_finalizer(a, FinalizerOrder::Unordered);
    assert!(
        matches!(twice, Err(Error::AlreadyRegistered { .. })),
        "{twice:?}"
    );
    let logged_too = m.register_finalizer_fn(a, FinalizerOrder::Ordered, logged, 1, 5);
    assert!(
        matches!(logged_too, Err(Error::AlreadyRegistered { .. })),
        "{logged_too:?}"
    );
    let foreign = Box::new([0u64; 4]);
    let f = ObjRef::from_ptr(foreign.as_ptr() as *mut u8).unwrap();
    assert!(m
        .register_shared_finalizer(f, FinalizerOrder::Ordered)
        .is_err());
    assert_eq!(heap.registered_finalizers(), 1);

    // Unregistered: never runs.
    assert!(m.unregister_finalizer(a));
    assert!(!m.unregister_finalizer(a));
    assert_eq!(heap.registered_finalizers(), 0);

    // A logged registration, dropped, then a shared one: only the shared
    // one runs (the log's stale entry must not come back), once.
    let b = new_pair(&mut m, 2, None, None).unwrap();
    m.register_finalizer_fn(b, FinalizerOrder::Ordered, logged, 1, 2)
        .unwrap();
    assert!(m.unregister_finalizer(b));
    m.register_shared_finalizer(b, FinalizerOrder::Unordered)
        .unwrap();
    // And the other way: shared, dropped, then logged.
    let c = new_pair(&mut m, 3, None, None).unwrap();
    m.register_shared_finalizer(c, FinalizerOrder::Unordered)
        .unwrap();
    assert!(m.unregister_finalizer(c));
    m.register_finalizer_fn(c, FinalizerOrder::Unordered, logged, 1, 3)
        .unwrap();
    drop(ra);
    m.collect();
    m.run_finalizers().unwrap();
    let mut got = std::mem::take(&mut *RAN.lock());
    got.sort_unstable();
    assert_eq!(got, vec![(2, 9, 1), (3, 77, 3)]);
    m.collect();
    m.run_finalizers().unwrap();
    assert!(RAN.lock().is_empty());
}

#[test]
fn the_data_is_the_number_of_the_collection_that_queued_the_object() {
    let _one = ONE_AT_A_TIME.lock();
    RAN.lock().clear();
    let heap = heap(small_config());
    heap.set_shared_finalizer(shared, 5).unwrap();
    let mut m = heap.mutator().unwrap();
    let a = new_pair(&mut m, 1, None, None).unwrap();
    let b = new_pair(&mut m, 2, None, None).unwrap();
    m.register_shared_finalizer(a, FinalizerOrder::Ordered)
        .unwrap();
    m.register_shared_finalizer(b, FinalizerOrder::Unordered)
        .unwrap();
    let keep_b = m.root(b).unwrap();
    m.collect();
    m.collect();
    drop(keep_b);
    // a waits, queued by the first collection, while two more run; b is
    // queued by the third.
    m.collect();
    m.collect();
    assert_eq!(heap.stats().collections, 4);
    assert_eq!(heap.pending_finalizers(), 2);
    m.run_finalizers().unwrap();
    let mut got = std::mem::take(&mut *RAN.lock());
    got.sort_unstable();
    assert_eq!(got, vec![(1, 5, 1), (2, 5, 3)]);
}

#[test]
fn a_shared_finalizer_registering_again_keeps_its_object_for_another_round() {
    let _one = ONE_AT_A_TIME.lock();
    RAN.lock().clear();
    let heap = heap(small_config());
    heap.set_shared_finalizer(shared, 3).unwrap();
    let mut m = heap.mutator().unwrap();
    let b = new_bytes(&mut m, 2, 24, mosaic::AllocFlags::NONE).unwrap();
    let a = new_pair(&mut m, 1, Some(b), None).unwrap();
    m.register_shared_finalizer(a, FinalizerOrder::Ordered)
        .unwrap();
    AGAIN.lock().extend([1, 1]);
    for round in 0..3 {
        m.collect();
        m.run_finalizers().unwrap();
        assert_eq!(ran(3), vec![1], "round {round}");
        m.finish_sweep();
        assert!(heap.is_object(a.as_ptr()) && heap.is_object(b.as_ptr()));
        assert!(bytes_match(b, 2), "round {round}: its referent intact");
    }
    m.collect();
    m.run_finalizers().unwrap();
    assert!(ran(3).is_empty());
    m.finish_sweep();
    assert!(!heap.is_object(a.as_ptr()), "let go after the third run");
}

#[test]
fn shared_registrations_follow_their_objects_when_compaction_moves_them() {
    let _one = ONE_AT_A_TIME.lock();
    RAN.lock().clear();
    let heap = heap(small_config());
    heap.set_shared_finalizer(shared, 8).unwrap();
    let mut m = heap.mutator().unwrap();
    let n = 600u64;
    let mut roots = Vec::new();
    for i in 0..n {
        let o = new_pair(&mut m, i, None, None).unwrap();
        for _ in 0..7 {
            new_pair(&mut m, n + i, None, None).unwrap();
        }
        let order = if i % 2 == 0 {
            FinalizerOrder::Ordered
        } else {
            FinalizerOrder::Unordered
        };
        m.register_shared_finalizer(o, order).unwrap();
        roots.push(m.root(o).unwrap());
    }
    m.compact().unwrap();
    assert!(heap.stats().compaction_totals.objects_moved > 0);
    assert_eq!(heap.registered_finalizers(), n as usize);
    assert!(ran(8).is_empty(), "nothing finalized: all rooted");
    // A third of them dies.
    let mut want = Vec::new();
    for (i, r) in roots.iter_mut().enumerate() {
        if i % 3 == 0 {
            r.set(None);
            want.push(i as u64);
        }
    }
    m.collect();
    m.run_finalizers().unwrap();
    assert_eq!(ran(8), want);
    drop(roots);
    m.collect();
    m.run_finalizers().unwrap();
    assert_eq!(ran(8).len(), n as usize - want.len());
}

#[test]
fn minor_collections_finalize_young_objects_and_full_ones_the_old() {
    let _one = ONE_AT_A_TIME.lock();
    RAN.lock().clear();
    let heap = heap(Config {
        generational: true,
        gc_threads: 1,
        ..small_config()
    });
    heap.set_shared_finalizer(shared, 4).unwrap();
    let mut m = heap.mutator().unwrap();
    let old = new_pair(&mut m, 1, None, None).unwrap();
    m.register_shared_finalizer(old, FinalizerOrder::Ordered)
        .unwrap();
    let r = m.root(old).unwrap();
    m.collect();
    drop(r);
    let young = new_pair(&mut m, 2, None, None).unwrap();
    m.register_shared_finalizer(young, FinalizerOrder::Unordered)
        .unwrap();
    m.collect_young();
    m.run_finalizers().unwrap();
    assert_eq!(ran(4), vec![2], "the young one by a minor collection");
    m.collect();
    m.run_finalizers().unwrap();
    assert_eq!(ran(4), vec![1], "the old one by a full collection");
}

#[test]
fn threads_registering_at_once_lose_no_registration() {
    let _one = ONE_AT_A_TIME.lock();
    RAN.lock().clear();
    let heap = heap(small_config());
    heap.set_shared_finalizer(shared, 6).unwrap();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let mut m = heap.mutator().unwrap();
                for _ in 0..2000 {
                    let id = next.fetch_add(1, Relaxed) as u64;
                    let o = new_pair(&mut m, id, None, None).unwrap();
                    let order = if id % 2 == 0 {
                        FinalizerOrder::Ordered
                    } else {
                        FinalizerOrder::Unordered
                    };
                    m.register_shared_finalizer(o, order).unwrap();
                }
            });
        }
    });
    let mut m = heap.mutator().unwrap();
    let mut got = Vec::new();
    for _ in 0..3 {
        m.collect();
        m.run_finalizers().unwrap();
        got.extend(ran(6));
    }
    got.sort_unstable();
    assert_eq!(got, (0..8000).collect::<Vec<u64>>());
}
