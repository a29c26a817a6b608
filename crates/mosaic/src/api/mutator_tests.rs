//! Slow-path races that need the heap's insides to set up.

use std::sync::mpsc;
use std::time::Duration;

use crate::space::PAGE_SIZE;
use crate::{AllocFlags, Config, Embedder, Error, Heap, HeapPolicy, ObjRef, Tracer};

struct NoRefs;

// SAFETY: objects hold no references and the runtime has no roots.
unsafe impl Embedder for NoRefs {
    fn trace<T: Tracer>(&self, _obj: ObjRef, _tracer: &mut T) {}
    fn roots<T: Tracer>(&self, _tracer: &mut T) {}
}

/// A thread that swept every page of the heap empty holds them in its
/// release buffer until its sweep ends; an allocation that finds the page
/// resource empty meanwhile must wait for them, not report out of memory
/// (seen in CI as a flaky OutOfMemory on the 2-thread GCBench test).
#[test]
fn an_allocation_waits_for_pages_another_thread_is_releasing() {
    let config = Config {
        max_heap: 16 * PAGE_SIZE,
        heap_policy: HeapPolicy::Fixed,
        heap_min: 4 * PAGE_SIZE,
        ..Config::default()
    };
    let heap = Heap::new(config, NoRefs).unwrap();
    let mut m = heap.mutator().unwrap();
    // Every page full of rooted 32-byte objects that ask for cleanup, so
    // the pause's release phase leaves their pages to the lazy sweep.
    let mut roots = Vec::new();
    loop {
        match m.alloc_with(32, AllocFlags::NO_POINTERS | AllocFlags::NEEDS_CLEANUP) {
            Ok(o) => roots.push(m.root(o).unwrap()),
            Err(Error::OutOfMemory { .. }) => break,
            Err(e) => panic!("{e}"),
        }
    }
    let filled = roots.len();
    assert!(filled * 32 > 12 * PAGE_SIZE, "only {filled} objects fit");
    drop(roots);
    m.collect();
    let core = &heap.inner.core;
    assert!(
        core.has_unswept(),
        "the pause leaves the dead pages unswept"
    );
    let (swept_tx, swept_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let before = heap.stats().collections;
    std::thread::scope(|s| {
        s.spawn(move || {
            // Another thread's sweep, stopped after it released every page
            // into its buffer and before it flushes them.
            let _ = core.with_sweeper(|cx| {
                for pool in core.pools.iter() {
                    pool.finish_sweep(cx);
                }
                swept_tx.send(()).unwrap();
                let _ = release_rx.recv_timeout(Duration::from_millis(300));
            });
        });
        swept_rx.recv().unwrap();
        // A different size class: the allocation needs a fresh page.
        let o = m.alloc_with(200, AllocFlags::NO_POINTERS);
        release_tx.send(()).ok();
        assert!(o.is_ok(), "{o:?} while the other thread held every page");
    });
    assert_eq!(
        heap.stats().collections,
        before,
        "it waited for the pages instead of collecting"
    );
}

/// A dropped mutator's root table leaves the heap's list at once unless a
/// handle still needs it (a program running thousands of short threads
/// between two collections kept every table, and the memory under it).
#[test]
fn a_dropped_mutator_leaves_its_root_table_unless_a_handle_needs_it() {
    let heap = Heap::new(Config::default(), NoRefs).unwrap();
    let tables = || heap.inner.root_tables.lock().len();
    let keep = heap.mutator().unwrap();
    assert_eq!(tables(), 1);
    for _ in 0..100 {
        std::thread::scope(|s| {
            s.spawn(|| drop(heap.mutator().unwrap()));
        });
    }
    assert_eq!(tables(), 1, "only the live mutator's table");
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut m = heap.mutator().unwrap();
            let o = m.alloc(32).unwrap();
            let root = m.root(o).unwrap();
            drop(m);
            assert_eq!(tables(), 2, "kept for the handle");
            assert_eq!(root.get(), Some(o));
            drop(root);
        });
    });
    assert_eq!(heap.inner.live_root_tables().len(), 1, "pruned later");
    drop(keep);
    assert_eq!(tables(), 0);
}
