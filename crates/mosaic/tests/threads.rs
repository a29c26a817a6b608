//! Several mutators on several threads: allocation stays thread-local,
//! collections stop everyone, and every thread's data survives intact.

mod common;

use std::sync::Arc;

use common::*;
use mosaic::Config;

fn build_tree(m: &mut TestMutator, depth: u32, id: &mut u64) -> mosaic::ObjRef {
    *id += 1;
    let me = *id;
    if depth == 0 {
        return new_pair(m, me, None, None).unwrap();
    }
    let l = build_tree(m, depth - 1, id);
    let r_root = m.root(l).unwrap(); // building `r` may collect
    let r = build_tree(m, depth - 1, id);
    let r_keep = m.root(r).unwrap(); // the next allocation may collect
    new_pair(m, me, r_root.get(), r_keep.get()).unwrap()
}

fn check_tree(o: mosaic::ObjRef, depth: u32) -> usize {
    if depth == 0 {
        assert_eq!((field(o, 0), field(o, 1)), (None, None));
        return 1;
    }
    1 + check_tree(field(o, 0).unwrap(), depth - 1) + check_tree(field(o, 1).unwrap(), depth - 1)
}

/// Four mutators, in verify mode with 1, 2 and 4 GC workers, and in stress
/// mode (a collection every 200 allocations) with 4 workers and the mutex
/// page store.
#[test]
fn threads_allocate_collect_and_keep_their_trees() {
    for (gc_threads, stress) in [(1, 0), (2, 0), (4, 0), (4, 200)] {
        trees_on_four_threads(Config {
            verify: true,
            gc_threads,
            stress,
            page_resource: store(gc_threads),
            ..small_config()
        });
    }
}

fn trees_on_four_threads(config: Config) {
    let heap = heap(config);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let heap = heap.clone();
            std::thread::spawn(move || {
                let mut m = heap.mutator().unwrap();
                let mut id = t * 1_000_000;
                let keep = build_tree(&mut m, 10, &mut id);
                let root = m.root(keep).unwrap();
                for round in 0..30 {
                    let mut junk = t * 1_000_000 + 500_000;
                    build_tree(&mut m, 8, &mut junk);
                    if round % 10 == t as usize {
                        m.collect();
                    }
                    assert_eq!(check_tree(root.get().unwrap(), 10), 2047);
                }
                m.blocking(|| std::thread::sleep(std::time::Duration::from_millis(5)));
                assert_eq!(check_tree(root.get().unwrap(), 10), 2047);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = heap.stats();
    assert!(s.collections >= 4, "{s}");
    let mut m = heap.mutator().unwrap();
    m.collect();
    assert_eq!(heap.stats().last_marked, 0, "all threads' roots are gone");
}

#[test]
fn a_thread_in_a_blocking_region_does_not_hold_up_collections() {
    let heap = heap(small_config());
    let (tx, rx) = std::sync::mpsc::channel();
    let done = Arc::new(std::sync::Barrier::new(2));
    let h2 = heap.clone();
    let d2 = done.clone();
    let t = std::thread::spawn(move || {
        let mut m = h2.mutator().unwrap();
        let p = new_pair(&mut m, 42, None, None).unwrap();
        let r = m.root(p).unwrap();
        m.blocking(|| {
            tx.send(()).unwrap();
            d2.wait();
        });
        assert_eq!(header(r.get().unwrap()).2, 42);
    });
    rx.recv().unwrap();
    let mut m = heap.mutator().unwrap();
    m.collect(); // must not wait for the blocked thread
    assert_eq!(heap.stats().last_marked, 1, "its roots are still scanned");
    done.wait();
    t.join().unwrap();
}

/// Eight threads (on however few cores) keep rings of live objects in a
/// heap 3.3 times their live pages and allocate fast enough to fill it again
/// between one thread's collection and the next time that thread runs.
/// A thread that waited for another's collection and then found the heap
/// full again must collect itself, not report out of memory (it did, in
/// about half the runs of the `threads` benchmark at 8 threads).
#[test]
fn a_full_heap_shared_by_eight_threads_is_not_out_of_memory() {
    const RING: usize = 4096;
    const ALLOCS: u64 = 200_000;
    // Live: 8 rings of 4096 32-byte objects (16 pages of 64 KiB) and their
    // vectors (large objects, a page each): 24 pages, 1.5 MiB. The heap
    // holds 80 pages: 3.3 times that (the threads' current pages included).
    let heap = heap(Config {
        max_heap: 5 << 20,
        heap_min: 64 << 10,
        heap_policy: mosaic::HeapPolicy::Fixed,
        ..small_config()
    });
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let heap = heap.clone();
            std::thread::spawn(move || {
                let mut m = heap.mutator().unwrap();
                let v = new_vector(&mut m, t, RING).unwrap();
                let ring = m.root(v).unwrap();
                for i in 0..ALLOCS {
                    let id = t << 32 | i;
                    let o = new_bytes(&mut m, id, 16, mosaic::AllocFlags::UNINIT)
                        .unwrap_or_else(|e| panic!("thread {t}, allocation {i}: {e}"));
                    set_field(ring.get().unwrap(), i as usize % RING, Some(o));
                }
                // Slot s holds the last allocation i with i % RING == s.
                let v = ring.get().unwrap();
                for s in 0..RING as u64 {
                    let i = (ALLOCS - 1 - s) / RING as u64 * RING as u64 + s;
                    assert_eq!(header(field(v, s as usize).unwrap()).2, t << 32 | i);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert!(
        heap.stats().collections > 8,
        "the heap filled up many times"
    );
}
