//! Finalizers: run once, outside the pause, for exactly the objects that
//! became unreachable; ordered and unordered; resurrection; the notifier and
//! the finalizer thread.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use common::*;
use mosaic::{Error, FinalizerOrder, ObjRef};
use parking_lot::Mutex;

type Log = Arc<Mutex<Vec<u64>>>;

/// Registers a finalizer that logs the object's id.
fn finalize(m: &TestMutator, o: ObjRef, order: FinalizerOrder, log: &Log) {
    let log = log.clone();
    m.register_finalizer(o, order, move |_, obj| log.lock().push(header(obj).2))
        .unwrap();
}

#[test]
fn an_unreachable_object_is_kept_with_its_referents_until_its_finalizer_ran_once() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let log = Log::default();
    let b = new_bytes(&mut m, 2, 40, mosaic::AllocFlags::NONE).unwrap();
    let a = new_pair(&mut m, 1, Some(b), None).unwrap();
    finalize(&m, a, FinalizerOrder::Unordered, &log);
    assert_eq!(heap.registered_finalizers(), 1);

    m.collect();
    assert_eq!(heap.pending_finalizers(), 1, "queued by the collection");
    assert!(log.lock().is_empty(), "never run inside the collection");
    assert_eq!(heap.stats().last_marked, 2, "a and b are kept");
    m.finish_sweep();
    assert!(heap.is_object(a.as_ptr()) && heap.is_object(b.as_ptr()));
    assert_eq!(field(a, 0), Some(b));
    assert!(bytes_match(b, 2));

    m.collect();
    assert_eq!(heap.stats().last_marked, 2, "still queued: still a root");
    assert_eq!(m.run_finalizers().unwrap(), 1);
    assert_eq!(*log.lock(), vec![1]);
    assert_eq!(m.run_finalizers().unwrap(), 0, "once only");

    m.collect();
    m.finish_sweep();
    assert_eq!(heap.stats().last_marked, 0);
    assert!(!heap.is_object(a.as_ptr()) && !heap.is_object(b.as_ptr()));
    assert_eq!(*log.lock(), vec![1]);
}

#[test]
fn a_reachable_object_is_never_finalized() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let log = Log::default();
    let a = new_pair(&mut m, 1, None, None).unwrap();
    let _r = m.root(a).unwrap();
    let inner = new_pair(&mut m, 2, None, None).unwrap();
    set_field(a, 0, Some(inner));
    finalize(&m, a, FinalizerOrder::Ordered, &log);
    finalize(&m, inner, FinalizerOrder::Unordered, &log);
    for _ in 0..3 {
        m.collect();
        assert_eq!(m.run_finalizers().unwrap(), 0);
    }
    assert!(log.lock().is_empty());
    assert_eq!(heap.registered_finalizers(), 2);
}

#[test]
fn ordered_finalization_runs_a_referrer_before_what_it_references() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let log = Log::default();
    // a -> b -> c, all finalizable and unreachable.
    let c = new_pair(&mut m, 3, None, None).unwrap();
    let b = new_pair(&mut m, 2, Some(c), None).unwrap();
    let a = new_pair(&mut m, 1, Some(b), None).unwrap();
    for o in [a, b, c] {
        finalize(&m, o, FinalizerOrder::Ordered, &log);
    }
    let mut rounds = vec![];
    for _ in 0..4 {
        m.collect();
        m.run_finalizers().unwrap();
        rounds.push(log.lock().clone());
    }
    assert_eq!(rounds[0], vec![1]);
    assert_eq!(rounds[1], vec![1, 2]);
    assert_eq!(rounds[2], vec![1, 2, 3]);
    assert_eq!(rounds[3], vec![1, 2, 3]);
}

#[test]
fn unordered_finalization_runs_a_whole_cycle_at_once_and_ordered_never_does() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let log = Log::default();
    let cycle = |m: &mut TestMutator, base: u64, order| {
        let a = new_pair(m, base, None, None).unwrap();
        let b = new_pair(m, base + 1, Some(a), None).unwrap();
        set_field(a, 0, Some(b));
        finalize(m, a, order, &log);
        finalize(m, b, order, &log);
    };
    cycle(&mut m, 10, FinalizerOrder::Unordered);
    cycle(&mut m, 20, FinalizerOrder::Ordered);
    // An ordered object referring to itself is still finalized.
    let me = new_pair(&mut m, 30, None, None).unwrap();
    set_field(me, 1, Some(me));
    finalize(&m, me, FinalizerOrder::Ordered, &log);
    for _ in 0..3 {
        m.collect();
        m.run_finalizers().unwrap();
    }
    let mut got = log.lock().clone();
    got.sort_unstable();
    assert_eq!(
        got,
        vec![10, 11, 30],
        "the ordered cycle 20 <-> 21 is never finalized"
    );
    assert_eq!(heap.registered_finalizers(), 2);
    m.collect();
    m.finish_sweep();
    assert_eq!(
        heap.stats().live_objects(),
        2,
        "the ordered cycle leaks, as documented"
    );
}

#[test]
fn a_finalizer_may_allocate_and_resurrect_its_object() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let a = new_pair(&mut m, 1, None, None).unwrap();
    m.register_finalizer(a, FinalizerOrder::Ordered, move |m, obj| {
        // Allocating inside a finalizer is allowed: it runs outside the pause.
        let fresh = new_pair(m, 2, Some(obj), None).unwrap();
        m.heap().embedder().globals.lock().push(fresh.addr());
    })
    .unwrap();
    m.collect();
    assert_eq!(m.run_finalizers().unwrap(), 1);
    for _ in 0..2 {
        m.collect();
    }
    m.finish_sweep();
    let fresh = ObjRef::from_ptr(heap.embedder().globals.lock()[0] as *mut u8).unwrap();
    assert_eq!(field(fresh, 0), Some(a), "resurrected by the finalizer");
    assert!(heap.is_object(a.as_ptr()));
    assert_eq!(heap.stats().last_marked, 2);
    assert_eq!(
        heap.pending_finalizers(),
        0,
        "a finalizer runs once, not again"
    );
}

#[test]
fn registering_twice_or_a_foreign_object_is_refused_and_unregistering_works() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let log = Log::default();
    let a = new_pair(&mut m, 1, None, None).unwrap();
    finalize(&m, a, FinalizerOrder::Ordered, &log);
    let again = m.register_finalizer(a, FinalizerOrder::Unordered, |_, _| {});
    assert!(
        matches!(again, Err(Error::AlreadyRegistered { addr, .. }) if addr == a.addr()),
        "{again:?}"
    );
    let mut local = 0u64;
    let foreign = ObjRef::from_ptr(&mut local as *mut u64 as *mut u8).unwrap();
    assert!(matches!(
        m.register_finalizer(foreign, FinalizerOrder::Ordered, |_, _| {}),
        Err(Error::ForeignPointer { .. })
    ));
    assert!(m.unregister_finalizer(a));
    assert!(!m.unregister_finalizer(a));
    m.collect();
    assert_eq!(m.run_finalizers().unwrap(), 0);
    assert!(log.lock().is_empty());
}

#[test]
fn the_notifier_is_told_and_the_finalizer_thread_runs_them() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let notified = Arc::new(AtomicUsize::new(0));
    let n = notified.clone();
    heap.set_finalizer_notifier(Some(Box::new(move || {
        assert!(
            mosaic::inside_callback(),
            "the notifier counts as a callback"
        );
        n.fetch_add(1, Relaxed);
    })));
    let log = Log::default();
    let a = new_pair(&mut m, 1, None, None).unwrap();
    finalize(&m, a, FinalizerOrder::Ordered, &log);
    m.collect();
    assert_eq!(notified.load(Relaxed), 1);
    m.collect();
    assert_eq!(notified.load(Relaxed), 1, "nothing new queued");

    heap.start_finalizer_thread().unwrap();
    assert!(matches!(
        heap.start_finalizer_thread(),
        Err(Error::Misuse(_))
    ));
    let b = new_pair(&mut m, 2, None, None).unwrap();
    finalize(&m, b, FinalizerOrder::Ordered, &log);
    m.collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while log.lock().len() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "finalizer thread idle"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let mut got = log.lock().clone();
    got.sort_unstable();
    assert_eq!(got, vec![1, 2], "the thread ran the old and the new one");
    assert_eq!(heap.pending_finalizers(), 0);
}

#[test]
fn the_finalizer_thread_does_not_keep_the_heap_alive() {
    let freed = {
        let heap = heap(small_config());
        heap.start_finalizer_thread().unwrap();
        let mut m = heap.mutator().unwrap();
        new_bytes(&mut m, 7, 8, mosaic::AllocFlags::NEEDS_CLEANUP).unwrap();
        heap.embedder().freed.clone()
    };
    // Dropping the last handle tore the heap down (on_free ran at teardown).
    assert_eq!(*freed.lock(), vec![7]);
}

#[test]
fn run_finalizers_is_refused_inside_a_blocking_region() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    m.enter_blocking().unwrap();
    assert!(matches!(m.run_finalizers(), Err(Error::Misuse(_))));
    m.leave_blocking().unwrap();
    assert_eq!(m.run_finalizers().unwrap(), 0);
}

#[test]
fn a_finalizer_that_enters_a_blocking_region_stops_the_run_before_the_next() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let log = Log::default();
    for id in 1..=2 {
        let o = new_pair(&mut m, id, None, None).unwrap();
        let log = log.clone();
        m.register_finalizer(o, FinalizerOrder::Unordered, move |m, obj| {
            log.lock().push(header(obj).2);
            m.enter_blocking().unwrap();
        })
        .unwrap();
    }
    m.collect();
    assert_eq!(heap.pending_finalizers(), 2);
    let r = m.run_finalizers();
    assert!(matches!(r, Err(Error::Misuse(_))), "{r:?}");
    assert_eq!(log.lock().len(), 1);
    assert_eq!(
        heap.pending_finalizers(),
        1,
        "the second stays queued (and rooted)"
    );
    m.leave_blocking().unwrap();
    m.collect();
    assert_eq!(
        heap.stats().last_marked,
        1,
        "the queued one is still a root"
    );
    let _ = m.run_finalizers();
    assert_eq!(log.lock().len(), 2);
    m.leave_blocking().unwrap();
}

/// What the plain-function finalizers below saw: (object id, tag, data).
static SEEN: Mutex<Vec<(u64, usize, usize)>> = Mutex::new(Vec::new());

fn seen(_: &mut TestMutator, obj: ObjRef, tag: usize, data: usize) {
    SEEN.lock().push((header(obj).2, tag, data));
}

#[test]
fn function_finalizers_get_their_tag_and_data_after_unregistering_and_compaction() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let n = 600u64;
    let mut roots = Vec::new();
    // id → the (tag, data) its finalizer must see, if it has one.
    let mut expect = std::collections::BTreeMap::new();
    for i in 0..n {
        let o = new_pair(&mut m, i, None, None).unwrap();
        // Garbage between them, so that compaction has pages to empty.
        for _ in 0..7 {
            new_pair(&mut m, n + i, None, None).unwrap();
        }
        let tag = 100 + (i % 3) as usize;
        m.register_finalizer_fn(o, FinalizerOrder::Unordered, seen, tag, i as usize)
            .unwrap();
        expect.insert(i, (tag, i as usize));
        roots.push(m.root(o).unwrap());
    }
    let again =
        m.register_finalizer_fn(roots[7].get().unwrap(), FinalizerOrder::Ordered, seen, 1, 1);
    assert!(
        matches!(again, Err(Error::AlreadyRegistered { .. })),
        "{again:?}"
    );
    for i in (0..n).step_by(4) {
        assert!(m.unregister_finalizer(roots[i as usize].get().unwrap()));
        expect.remove(&i);
        if i % 8 == 0 {
            // Registered again: only the new one may run.
            let o = roots[i as usize].get().unwrap();
            m.register_finalizer_fn(o, FinalizerOrder::Ordered, seen, 7, 10_000 + i as usize)
                .unwrap();
            expect.insert(i, (7, 10_000 + i as usize));
        }
    }
    assert_eq!(heap.registered_finalizers(), expect.len());
    m.compact().unwrap();
    assert!(
        heap.stats().compaction_totals.objects_moved > 0,
        "something moved"
    );
    assert_eq!(heap.registered_finalizers(), expect.len());

    // The odd ids die first, then the rest.
    let mut kept = Vec::new();
    for (i, r) in roots.into_iter().enumerate() {
        if i % 2 == 0 {
            kept.push(r);
        }
    }
    for round in 0..2 {
        m.collect();
        m.run_finalizers().unwrap();
        let mut got = std::mem::take(&mut *SEEN.lock());
        got.sort_unstable();
        let want: Vec<_> = expect
            .iter()
            .filter(|(&i, _)| round == 1 || i % 2 == 1)
            .map(|(&i, &(t, d))| (i, t, d))
            .collect();
        assert_eq!(got, want, "round {round}");
        expect.retain(|&i, _| round == 0 && i % 2 == 0);
        assert_eq!(heap.registered_finalizers(), expect.len());
        kept.clear();
    }
}

/// Counts its drops.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Relaxed);
    }
}

#[test]
fn what_a_finalizer_captures_is_dropped_once_whether_it_runs_is_unregistered_or_outlives_the_heap()
{
    let drops = Arc::new(AtomicUsize::new(0));
    let ran = Arc::new(AtomicUsize::new(0));
    {
        let heap = heap(small_config());
        let mut m = heap.mutator().unwrap();
        let mut roots = Vec::new();
        for i in 0..300 {
            let o = new_pair(&mut m, i, None, None).unwrap();
            let (c, ran) = (Counted(drops.clone()), ran.clone());
            m.register_finalizer(o, FinalizerOrder::Unordered, move |_, _| {
                let _c = c;
                ran.fetch_add(1, Relaxed);
            })
            .unwrap();
            roots.push(m.root(o).unwrap());
        }
        // A refused registration drops its closure at once.
        let c = Counted(drops.clone());
        assert!(m
            .register_finalizer(
                roots[0].get().unwrap(),
                FinalizerOrder::Ordered,
                move |_, _| drop(c)
            )
            .is_err());
        assert_eq!(drops.load(Relaxed), 1);
        for r in &roots[..100] {
            assert!(m.unregister_finalizer(r.get().unwrap()));
        }
        roots.drain(100..200);
        m.collect();
        assert_eq!(m.run_finalizers().unwrap(), 100);
        assert_eq!(ran.load(Relaxed), 100);
        assert_eq!(
            drops.load(Relaxed),
            201,
            "100 unregistered, 100 run, 1 refused"
        );
        assert_eq!(heap.registered_finalizers(), 100);
        // The heap goes with 100 registered: never run, but dropped.
    }
    assert_eq!(ran.load(Relaxed), 100);
    assert_eq!(drops.load(Relaxed), 301);
}

/// What the threaded test's finalizers saw: (object id, data).
static SEEN_THREADED: Mutex<Vec<(u64, usize)>> = Mutex::new(Vec::new());

fn seen_threaded(_: &mut TestMutator, obj: ObjRef, _: usize, data: usize) {
    SEEN_THREADED.lock().push((header(obj).2, data));
}

#[test]
fn threads_registering_and_unregistering_at_once_leave_exactly_the_last_registration() {
    let heap = heap(small_config());
    let per_thread = 1500u64;
    let expect: Vec<Vec<(u64, usize)>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4u64)
            .map(|t| {
                let heap = heap.clone();
                s.spawn(move || {
                    let mut m = heap.mutator().unwrap();
                    let ids = t * per_thread..(t + 1) * per_thread;
                    let objs: Vec<_> = ids
                        .clone()
                        .map(|i| {
                            let o = new_pair(&mut m, i, None, None).unwrap();
                            m.root(o).unwrap()
                        })
                        .collect();
                    let mut last = vec![None; objs.len()];
                    for round in 0..12usize {
                        for (k, r) in objs.iter().enumerate() {
                            let o = r.get().unwrap();
                            // Unregister about half, register the rest anew.
                            if (k + round) % 2 == 0 && last[k].is_some() {
                                assert!(m.unregister_finalizer(o));
                                last[k] = None;
                            } else if last[k].is_none() {
                                let data = round * 100_000 + k;
                                m.register_finalizer_fn(
                                    o,
                                    FinalizerOrder::Unordered,
                                    seen_threaded,
                                    0,
                                    data,
                                )
                                .unwrap();
                                last[k] = Some(data);
                            }
                        }
                        if round % 4 == 3 {
                            m.collect();
                        }
                    }
                    drop(objs);
                    ids.zip(last)
                        .filter_map(|(i, d)| d.map(|d| (i, d)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let mut want: Vec<(u64, usize)> = expect.into_iter().flatten().collect();
    want.sort_unstable();
    let mut m = heap.mutator().unwrap();
    m.collect();
    m.run_finalizers().unwrap();
    let mut got = std::mem::take(&mut *SEEN_THREADED.lock());
    got.sort_unstable();
    assert_eq!(got.len(), want.len());
    assert_eq!(
        got, want,
        "each finalizer once, with its last registration's data"
    );
    assert_eq!(heap.registered_finalizers(), 0);
}

/// What `finalizer_fn_of` must answer for each object, by id: the tag and
/// data of its function finalizer, if it has one that was not queued.
type Registered = std::collections::BTreeMap<u64, (usize, usize)>;

/// The finalizers this test ran: (id, data).
static COUNTED: Mutex<Vec<(u64, usize)>> = Mutex::new(Vec::new());

fn counted(_: &mut TestMutator, obj: ObjRef, _: usize, data: usize) {
    COUNTED.lock().push((header(obj).2, data));
}

/// Registers `counted` for object `id` with `tag` and `data`, and records
/// that in `want`.
fn register_counted(
    m: &TestMutator,
    want: &mut Registered,
    id: u64,
    o: ObjRef,
    order: FinalizerOrder,
    (tag, data): (usize, usize),
) {
    m.register_finalizer_fn(o, order, counted, tag, data)
        .unwrap();
    want.insert(id, (tag, data));
}

fn check_fn_of(m: &TestMutator, objs: &[Option<mosaic::Root>], want: &Registered) {
    for (i, r) in objs.iter().enumerate() {
        let Some(o) = r.as_ref().and_then(|r| r.get()) else {
            continue;
        };
        let got = m.finalizer_fn_of(o).map(|(_, t, d)| (t, d));
        assert_eq!(got, want.get(&(i as u64)).copied(), "object {i}");
    }
}

#[test]
fn finalizer_fn_of_answers_the_current_registration_through_unregistering_sorting_and_moving() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    // More than the unsorted tail the lookup searches (4096), so that
    // lookups sort it.
    let n = 10_000u64;
    let mut objs = Vec::new();
    let mut want = Registered::new();
    for i in 0..n {
        let o = new_pair(&mut m, i, None, None).unwrap();
        // Garbage between them: compaction has pages to empty.
        new_pair(&mut m, n + i, None, None).unwrap();
        match i % 5 {
            // A closure: not a function registration.
            0 => m
                .register_finalizer(o, FinalizerOrder::Unordered, |_, _| {})
                .unwrap(),
            // None at all.
            1 => {}
            _ => {
                let td = (100 + (i % 3) as usize, 1_000_000 + i as usize);
                register_counted(&m, &mut want, i, o, FinalizerOrder::Ordered, td);
            }
        }
        objs.push(Some(m.root(o).unwrap()));
    }
    check_fn_of(&m, &objs, &want);
    // Unregister every third function registration; register a new one on
    // half of those (the log holds a stale entry and a newer one).
    for i in (0..n).filter(|i| i % 5 >= 2 && i % 3 == 0) {
        let o = objs[i as usize].as_ref().unwrap().get().unwrap();
        assert!(m.unregister_finalizer(o));
        want.remove(&i);
        if i % 2 == 0 {
            let td = (9, 2_000_000 + i as usize);
            register_counted(&m, &mut want, i, o, FinalizerOrder::Unordered, td);
        }
    }
    check_fn_of(&m, &objs, &want);
    // The data words, registered and (after a collection) queued, are all
    // visited: exactly the function registrations' (closures' are not).
    let visited = |heap: &TestHeap| {
        let mut v = Vec::new();
        heap.visit_finalizer_data(|d| v.push(d));
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut all: Vec<usize> = want.values().map(|&(_, d)| d).collect();
    all.sort_unstable();
    // (Unregistered ones may still be visited until a collection.)
    assert!(all.iter().all(|d| visited(&heap).binary_search(d).is_ok()));
    // Objects moved: the answers follow them.
    m.compact().unwrap();
    assert!(heap.stats().compaction_totals.objects_moved > 0);
    check_fn_of(&m, &objs, &want);
    assert_eq!(visited(&heap), all);
    // A quarter die: their finalizers are queued, not registered any more,
    // but their data stay visited until they ran.
    for (i, r) in objs.iter_mut().enumerate() {
        if i % 4 == 1 {
            *r = None;
        }
    }
    m.collect();
    check_fn_of(&m, &objs, &want);
    assert_eq!(visited(&heap), all);
    m.run_finalizers().unwrap();
    let ran = std::mem::take(&mut *COUNTED.lock());
    let mut died: Vec<usize> = want
        .iter()
        .filter(|(&i, _)| i % 4 == 1)
        .map(|(_, &(_, d))| d)
        .collect();
    died.sort_unstable();
    let mut ran_data: Vec<usize> = ran.iter().map(|&(_, d)| d).collect();
    ran_data.sort_unstable();
    assert_eq!(ran_data, died);
    all.retain(|d| !died.contains(d));
    want.retain(|&i, _| i % 4 != 1);
    assert_eq!(visited(&heap), all);
    check_fn_of(&m, &objs, &want);
}

#[test]
fn finalizer_fn_of_reads_the_newest_entry_and_keeps_the_sorted_part_exact() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let mut objs = Vec::new();
    let mut want = Registered::new();
    let register = |m: &mut TestMutator, objs: &mut Vec<_>, want: &mut Registered, i: u64| {
        let o = new_pair(m, i, None, None).unwrap();
        let td = (5, 3_000_000 + i as usize);
        register_counted(m, want, i, o, FinalizerOrder::Ordered, td);
        objs.push(Some(m.root(o).unwrap()));
    };
    for i in 0..200 {
        register(&mut m, &mut objs, &mut want, i);
    }
    // Registered again after unregistering, with no collection since: the
    // recent entries hold the stale one and the current one.
    for i in 10..20u64 {
        let o = objs[i as usize].as_ref().unwrap().get().unwrap();
        assert!(m.unregister_finalizer(o));
        let td = (6, 4_000_000 + i as usize);
        register_counted(&m, &mut want, i, o, FinalizerOrder::Ordered, td);
    }
    check_fn_of(&m, &objs, &want);
    // A collection leaves the 200 in object order; 300 more follow them
    // unsorted; then half the sorted ones die and are queued.
    m.collect();
    check_fn_of(&m, &objs, &want);
    // (Registered from the highest address down: entries after the
    // sorted part are out of order.)
    for i in 200..500 {
        let o = new_pair(&mut m, i, None, None).unwrap();
        objs.push(Some(m.root(o).unwrap()));
    }
    for i in (200..500u64).rev() {
        let o = objs[i as usize].as_ref().unwrap().get().unwrap();
        let td = (7, 5_000_000 + i as usize);
        register_counted(&m, &mut want, i, o, FinalizerOrder::Ordered, td);
    }
    for (i, r) in objs.iter_mut().enumerate().take(200) {
        if i % 2 == 0 {
            *r = None;
            want.remove(&(i as u64));
        }
    }
    m.collect();
    check_fn_of(&m, &objs, &want);
    m.run_finalizers().unwrap();
    let ran = std::mem::take(&mut *COUNTED.lock());
    assert_eq!(ran.iter().filter(|&&(id, _)| id < 500).count(), 100);
}
