//! The rest of the embedder interface: GC events, per-mutator roots and
//! data, the scope of root slots, blocking regions as a pair, aligned
//! allocation, and callbacks that try to allocate.

mod common;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use common::*;
use mosaic::{
    AllocFlags, Config, Embedder, Error, GcEvent, GcReason, Heap, MutatorInfo, ObjRef, Tracer,
};
use parking_lot::Mutex;

fn record(heap: &TestHeap) -> Arc<Mutex<Vec<GcEvent>>> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    heap.set_event_listener(Some(Box::new(move |e| {
        assert!(mosaic::inside_callback());
        l.lock().push(*e)
    })));
    log
}

/// The start event comes once the world has stopped; it carries the time
/// that took, which a listener could not see otherwise.
#[test]
fn the_start_event_carries_the_time_to_reach_the_safepoint() {
    let heap = heap(small_config());
    let log = record(&heap);
    let (tx, rx) = std::sync::mpsc::channel();
    // A joined thread, not a scoped one: ThreadSanitizer sees the join
    // (pthread_join) order the thread's last writes before the heap's drop.
    let h2 = heap.clone();
    let t = std::thread::spawn(move || {
        let mut m = h2.mutator().unwrap();
        tx.send(()).unwrap();
        // Attached, not polling: the collection waits for this thread.
        std::thread::sleep(std::time::Duration::from_millis(300));
        m.safepoint();
    });
    {
        let mut m = heap.mutator().unwrap();
        rx.recv().unwrap();
        m.collect();
    }
    t.join().unwrap();
    let events = log.lock().clone();
    let tts = events.iter().find_map(|e| match *e {
        GcEvent::CollectionStart {
            time_to_safepoint, ..
        } => Some(time_to_safepoint),
        _ => None,
    });
    let pause = events.iter().find_map(|e| match *e {
        GcEvent::CollectionEnd { pause, .. } => Some(pause),
        _ => None,
    });
    let (tts, pause) = (tts.unwrap(), pause.unwrap());
    assert!(tts >= std::time::Duration::from_millis(100), "{events:?}");
    assert!(tts <= pause, "{events:?}");
}

#[test]
fn events_bracket_each_collection_with_its_reason_and_figures() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let log = record(&heap);
    let a = new_bytes(&mut m, 1, 1000, AllocFlags::NONE).unwrap();
    let _r = m.root(a).unwrap();
    m.collect();
    let events = log.lock().clone();
    let kinds: Vec<_> = events
        .iter()
        .filter(|e| !matches!(e, GcEvent::HeapResize { .. }))
        .collect();
    assert_eq!(kinds.len(), 3, "{events:?}");
    let GcEvent::CollectionStart { number, reason, .. } = *kinds[0] else {
        panic!("{:?}", kinds[0])
    };
    assert_eq!((number, reason), (1, GcReason::Explicit));
    let GcEvent::MarkEnd {
        number,
        marked_objects,
        marked_bytes,
        ..
    } = *kinds[1]
    else {
        panic!("{:?}", kinds[1])
    };
    let slot = heap.object_size(a).unwrap() as u64;
    assert_eq!((number, marked_objects, marked_bytes), (1, 1, slot));
    let GcEvent::CollectionEnd {
        number,
        reason,
        live_bytes,
        heap_bytes,
        pause,
        finalizers_queued,
        target_bytes,
        allocation_rate,
    } = *kinds[2]
    else {
        panic!("{:?}", kinds[2])
    };
    assert_eq!((number, reason, live_bytes), (1, GcReason::Explicit, slot));
    assert!(heap_bytes >= mosaic::PAGE_SIZE && pause > std::time::Duration::ZERO);
    assert_eq!(finalizers_queued, 0);
    // Proportional (k = 1): twice the live bytes, but never below heap_min.
    assert_eq!(target_bytes, 256 << 10);
    assert!(allocation_rate > 0.0);
    let s = heap.stats();
    assert_eq!(s.last_marked_bytes, slot);
    assert_eq!(s.heap_target, 256 << 10);
    let d = s.last_heap_decision.expect("decided");
    assert_eq!((d.live_bytes, d.target_bytes), (slot, 256 << 10));
    // target − live, but never under the minimum allowance (256 KiB).
    assert_eq!(d.allowance_bytes, ((256 << 10) - slot).max(256 << 10));

    // Allocation-triggered collections say so, and growth reports resizes.
    log.lock().clear();
    let list = new_vector(&mut m, 2, 1).unwrap();
    let _l = m.root(list).unwrap();
    for i in 0..50_000u64 {
        let p = new_pair(&mut m, 3 + i, field(list, 0), None).unwrap();
        set_field(list, 0, Some(p));
    }
    let events = log.lock().clone();
    // Each allocation-triggered collection came once the allowance was
    // used up (mutators report allocation 32 KiB at a time).
    let mut allocation_triggered = 0;
    let mut last_end = None;
    for e in &events {
        match *e {
            GcEvent::CollectionEnd {
                target_bytes,
                live_bytes,
                ..
            } => last_end = Some((target_bytes, live_bytes)),
            GcEvent::CollectionStart {
                reason: GcReason::Allocation,
                allocated_bytes,
                target_bytes,
                ..
            } => {
                if let Some((t, live)) = last_end {
                    assert_eq!(target_bytes, t);
                    assert!(allocated_bytes >= t as u64 - live, "{events:?}");
                    allocation_triggered += 1;
                }
            }
            _ => {}
        }
    }
    assert!(allocation_triggered > 0, "{events:?}");
    let resizes: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            GcEvent::HeapResize {
                old_bytes,
                new_bytes,
            } => Some((*old_bytes, *new_bytes)),
            _ => None,
        })
        .collect();
    assert!(
        !resizes.is_empty(),
        "a growing heap reports its new size target"
    );
    assert!(
        resizes.windows(2).all(|w| w[0].1 == w[1].0),
        "consecutive: {resizes:?}"
    );
    assert!(
        resizes.last().unwrap().1 > resizes[0].0,
        "grew: {resizes:?}"
    );
    heap.set_event_listener(None);
    log.lock().clear();
    m.collect();
    assert!(log.lock().is_empty(), "removed");
}

#[test]
fn a_panicking_listener_propagates_after_the_collection_completed() {
    quiet_expected_panics();
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let dead = new_pair(&mut m, 1, None, None).unwrap();
    heap.set_event_listener(Some(Box::new(|e| {
        if let GcEvent::MarkEnd { .. } = e {
            panic!("test: listener panics");
        }
    })));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.collect()));
    assert!(r.is_err());
    heap.set_event_listener(None);
    m.finish_sweep();
    assert!(
        !heap.is_object(dead.as_ptr()),
        "the collection still freed it"
    );
    assert_eq!(heap.stats().collections, 1);
    m.collect();
    assert_eq!(heap.stats().collections, 2);
}

/// Objects are two-word pairs; each mutator's data points at its "stack"
/// (a vector of object addresses) that `mutator_roots` reports.
struct Stacks {
    seen: Mutex<Vec<(u64, usize)>>,
}

// SAFETY: pairs have exactly two reference words; mutator_roots reports
// every slot of the mutator's stack.
unsafe impl Embedder for Stacks {
    fn trace<T: Tracer>(&self, obj: ObjRef, t: &mut T) {
        let w = obj.as_ptr() as *mut *mut u8;
        // SAFETY: every object is a pair.
        unsafe {
            t.visit(&mut *w);
            t.visit(&mut *w.add(1));
        }
    }
    fn roots<T: Tracer>(&self, _: &mut T) {}
    fn mutator_roots<T: Tracer>(&self, m: &MutatorInfo, t: &mut T) {
        self.seen.lock().push((m.id, m.data as usize));
        if m.data.is_null() {
            return;
        }
        // SAFETY: the data is the mutator's stack, which its thread does
        // not touch while stopped.
        let stack = unsafe { &mut *(m.data as *mut Vec<*mut u8>) };
        for slot in stack.iter_mut() {
            t.visit(slot);
        }
    }
}

/// Each of several mutators' roots (`mutator_roots`, a root task per
/// mutator in a parallel mark) holds the only references to its objects:
/// with 1, 2 and 4 GC workers every collection calls it once per mutator
/// and keeps exactly those objects.
#[test]
fn mutator_roots_of_many_mutators_keep_their_objects_on_any_worker_count() {
    const THREADS: usize = 3;
    const PER_THREAD: usize = 3000;
    for gc_threads in [1, 2, 4] {
        let config = Config {
            gc_threads,
            ..small_config()
        };
        let heap = Heap::new(
            config,
            Stacks {
                seen: Mutex::new(vec![]),
            },
        )
        .unwrap();
        let mut m = heap.mutator().unwrap();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let mut go = Vec::new();
        let mut others = Vec::new();
        for t in 0..THREADS {
            let h = heap.clone();
            let ready = ready_tx.clone();
            let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
            go.push(go_tx);
            others.push(std::thread::spawn(move || {
                let mut m2 = h.mutator().unwrap();
                let mut stack: Vec<*mut u8> = vec![];
                m2.set_data(&mut stack as *mut Vec<*mut u8> as *mut ());
                // Pairs (two null references) with a number in a third
                // word, which `trace` does not visit.
                for i in 0..PER_THREAD {
                    let o = m2.alloc(24).unwrap();
                    // SAFETY: a fresh 24-byte object.
                    unsafe { (o.as_ptr() as *mut usize).add(2).write(t * PER_THREAD + i) };
                    stack.push(o.as_ptr());
                }
                ready.send(()).unwrap();
                m2.blocking(|| go_rx.recv().unwrap());
                stack.iter().enumerate().all(|(i, &p)| {
                    h.is_object(p)
                            // SAFETY: a live object (checked first).
                            && unsafe { *(p as *const usize).add(2) } == t * PER_THREAD + i
                })
            }));
        }
        for _ in 0..THREADS {
            m.blocking(|| ready_rx.recv().unwrap());
        }
        for round in 0..3 {
            heap.embedder().seen.lock().clear();
            m.collect();
            assert_eq!(
                heap.stats().last_marked as usize,
                THREADS * PER_THREAD,
                "{gc_threads} workers, round {round}: every rooted pair, no other"
            );
            let seen = heap.embedder().seen.lock().clone();
            assert_eq!(seen.len(), THREADS + 1, "once per mutator: {seen:?}");
        }
        for g in go {
            g.send(()).unwrap();
        }
        for o in others {
            assert!(
                o.join().unwrap(),
                "{gc_threads} workers: a pair lost or changed"
            );
        }
    }
}

#[test]
fn mutator_roots_receives_each_mutator_with_its_data() {
    let heap = Heap::new(
        small_config(),
        Stacks {
            seen: Mutex::new(vec![]),
        },
    )
    .unwrap();
    let mut m = heap.mutator().unwrap();
    let mut stack: Vec<*mut u8> = vec![];
    m.set_data(&mut stack as *mut Vec<*mut u8> as *mut ());
    assert_eq!(m.data(), &mut stack as *mut Vec<*mut u8> as *mut ());
    let kept = m.alloc(16).unwrap();
    let lost = m.alloc(16).unwrap();
    stack.push(kept.as_ptr());

    // A second thread's mutator with a stack of its own, parked meanwhile.
    let h2 = heap.clone();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let other = std::thread::spawn(move || {
        let mut m2 = h2.mutator().unwrap();
        let mut stack2: Vec<*mut u8> = vec![];
        m2.set_data(&mut stack2 as *mut Vec<*mut u8> as *mut ());
        let o = m2.alloc(16).unwrap();
        stack2.push(o.as_ptr());
        ready_tx.send(o.addr()).unwrap();
        // Wait in a blocking region: the collection scans us meanwhile.
        m2.blocking(|| done_rx.recv().unwrap());
        let alive = h2.is_object(stack2[0]);
        drop(m2);
        alive
    });
    // Wait without holding up a collection the other thread may need.
    let o2 = m.blocking(|| ready_rx.recv().unwrap());
    heap.embedder().seen.lock().clear();
    m.collect();
    m.finish_sweep();
    assert!(heap.is_object(kept.as_ptr()));
    assert!(heap.is_object(o2 as *const u8), "the other mutator's root");
    assert_eq!(heap.stats().last_marked, 2, "kept and o2, not lost");
    // (`lost` may have died earlier and its slot gone to o2.)
    assert!(lost.addr() == o2 || !heap.is_object(lost.as_ptr()));
    let seen = heap.embedder().seen.lock().clone();
    assert_eq!(seen.len(), 2, "once per mutator: {seen:?}");
    assert!(seen
        .iter()
        .any(|&(_, d)| d == &mut stack as *mut _ as usize));
    assert_ne!(seen[0].0, seen[1].0, "distinct ids");
    done_tx.send(()).unwrap();
    assert!(other.join().unwrap());
    heap.embedder().seen.lock().clear();
    m.collect();
    assert_eq!(
        heap.embedder().seen.lock().len(),
        1,
        "a dropped mutator is not scanned"
    );
}

#[test]
fn scope_slots_are_roots_until_popped() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let depth = m.scope_depth();
    let mut local: *mut u8 = new_pair(&mut m, 1, None, None).unwrap().as_ptr();
    let mut other: *mut u8 = std::ptr::null_mut();
    // SAFETY: both locals outlive their scope entries (popped below).
    unsafe {
        m.scope_push(&mut local);
        m.scope_push(&mut other);
    }
    assert_eq!(m.scope_depth(), depth + 2);
    for i in 0..20_000u64 {
        // Garbage that forces collections while `local` is only in the scope.
        new_pair(&mut m, 100 + i, None, None).unwrap();
    }
    other = new_pair(&mut m, 2, ObjRef::from_ptr(local), None)
        .unwrap()
        .as_ptr();
    m.collect();
    assert_eq!(heap.stats().last_marked, 2);
    let o = ObjRef::from_ptr(other).unwrap();
    assert_eq!(header(o).2, 2);
    assert_eq!(field(o, 0), ObjRef::from_ptr(local));
    m.scope_truncate(depth);
    m.collect();
    assert_eq!(heap.stats().last_marked, 0);
}

#[test]
fn blocking_as_a_pair_lets_others_collect_and_refuses_heap_work() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let kept = new_pair(&mut m, 1, None, None).unwrap();
    let _r = m.root(kept).unwrap();
    m.enter_blocking().unwrap();
    assert!(m.is_blocking());
    assert!(matches!(m.enter_blocking(), Err(Error::Misuse(_))));
    assert!(matches!(m.alloc(16), Err(Error::Misuse(_))));
    assert!(matches!(m.try_collect(), Err(Error::Misuse(_))));
    m.safepoint(); // harmless
    let h2 = heap.clone();
    let collections = std::thread::spawn(move || {
        let mut m2 = h2.mutator().unwrap();
        m2.collect();
        h2.stats().collections
    })
    .join()
    .unwrap();
    assert_eq!(collections, 1, "collected while this thread was blocking");
    m.leave_blocking().unwrap();
    assert!(matches!(m.leave_blocking(), Err(Error::Misuse(_))));
    assert_eq!(header(kept).2, 1);
    new_pair(&mut m, 2, Some(kept), None).unwrap();
    m.collect();
    assert_eq!(heap.stats().collections, 2);
}

#[test]
fn aligned_allocations_are_aligned_and_bad_alignments_refused() {
    let heap = heap(Config::default());
    let mut m = heap.mutator().unwrap();
    for align in [1usize, 8, 16, 32, 64, 128, 4096, mosaic::PAGE_SIZE] {
        for size in [1usize, 24, 100, 1000, 5000, 70_000] {
            let o = m.alloc_aligned(size, align, AllocFlags::NONE).unwrap();
            assert_eq!(o.addr() % align, 0, "size {size} align {align}");
            assert!(heap.object_size(o).unwrap() >= size);
            // SAFETY: the object has at least `size` bytes.
            let bytes = unsafe { std::slice::from_raw_parts(o.as_ptr(), size) };
            assert!(bytes.iter().all(|&b| b == 0), "zeroed");
        }
    }
    for bad in [0usize, 3, 48, 2 * mosaic::PAGE_SIZE] {
        let r = m.alloc_aligned(16, bad, AllocFlags::NONE);
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "{bad}: {r:?}");
    }
    // Flags apply: a NO_POINTERS aligned object is never traced.
    let o = m.alloc_aligned(64, 64, AllocFlags::NO_POINTERS).unwrap();
    let _r = m.root(o).unwrap();
    m.collect();
    assert_eq!(heap.stats().last_marked, 1);
}

/// A byte string freed by the collection whose `on_free` tries to allocate
/// through a mutator of another heap... and through the collecting one.
#[test]
fn callbacks_that_allocate_or_collect_are_refused() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let attempts = Arc::new(AtomicU64::new(0));
    let a = attempts.clone();
    let other = common::heap(small_config());
    let oh = other.clone();
    heap.set_event_listener(Some(Box::new(move |e| {
        if let GcEvent::CollectionStart { .. } = e {
            // A listener holding a mutator of another heap on this thread
            // still may not allocate while inside the callback.
            let mut om = oh.mutator().unwrap();
            assert!(matches!(om.alloc(16), Err(Error::Misuse(_))));
            assert!(matches!(om.try_collect(), Err(Error::Misuse(_))));
            a.fetch_add(1, Relaxed);
        }
    })));
    m.collect();
    assert_eq!(attempts.load(Relaxed), 1);
    assert!(!mosaic::inside_callback());
    heap.set_event_listener(None);
    new_pair(&mut m, 1, None, None).unwrap();
}
