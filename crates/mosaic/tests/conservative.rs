//! Conservative scanning of a mutator's own stack: objects held only in
//! Rust locals survive collections and are pinned; the objects they reach
//! precisely may still move, and their references are updated.

mod common;

use common::*;
use mosaic::{Config, ObjRef};

#[inline(never)]
fn build(m: &mut TestMutator, n: u64) -> ObjRef {
    let mut head = new_pair(m, 1, None, None).unwrap();
    for i in 2..=n {
        head = new_pair(m, i, Some(head), None).unwrap();
        // Garbage between the cells, and collections on the way.
        new_pair(m, 0, None, None).unwrap();
        if i % 5000 == 0 {
            m.collect();
        }
    }
    head
}

fn ids(head: ObjRef) -> Vec<u64> {
    let mut out = Vec::new();
    let mut p = Some(head);
    while let Some(o) = p {
        out.push(header(o).2);
        p = field(o, 0);
    }
    out
}

#[test]
fn a_list_held_only_in_locals_survives_and_its_head_stays() {
    let h = heap(Config {
        gc_threads: 2,
        ..small_config()
    });
    let mut m = h.mutator().unwrap();
    m.set_conservative_stack(true).unwrap();
    assert!(m.conservative_stack());
    let head = build(&mut m, 20_000);
    let head = std::hint::black_box(head);
    m.collect();
    assert_eq!(ids(head), (1..=20_000).rev().collect::<Vec<_>>());
    assert!(h.stats().last_marked >= 20_000);
    // Compaction moves the cells the head reaches (they are referenced
    // precisely) but not the head, which only a stack word holds.
    m.compact().unwrap();
    let head = std::hint::black_box(head);
    assert_eq!(
        header(head).2,
        20_000,
        "the head stayed where the stack says"
    );
    assert_eq!(ids(head).len(), 20_000);
    assert!(h.stats().last_compaction.objects_moved > 0);
    std::hint::black_box(&head);
    // Off again: the same words no longer keep anything.
    m.set_conservative_stack(false).unwrap();
    m.collect();
    assert_eq!(h.stats().last_marked, 0);
}

#[test]
fn another_threads_stack_is_scanned_while_it_is_parked() {
    let h = heap(Config {
        gc_threads: 1,
        ..small_config()
    });
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let h2 = h.clone();
    let t = std::thread::spawn(move || {
        let mut m = h2.mutator().unwrap();
        m.set_conservative_stack(true).unwrap();
        let head = build(&mut m, 3000);
        ready_tx.send(()).unwrap();
        // Park at safepoints (the main thread collects meanwhile) until done.
        while done_rx.try_recv().is_err() {
            m.safepoint();
            std::thread::yield_now();
        }
        let head = std::hint::black_box(head);
        ids(head).len()
    });
    ready_rx.recv().unwrap();
    let mut m = h.mutator().unwrap();
    for i in 0..20_000u64 {
        new_pair(&mut m, 100_000 + i, None, None).unwrap();
    }
    m.collect();
    m.collect();
    assert!(h.stats().last_marked >= 3000, "{}", h.stats().last_marked);
    done_tx.send(()).unwrap();
    assert_eq!(t.join().unwrap(), 3000);
}

/// A conservative object holding, as raw words, an interior pointer into
/// each of `n` pairs, a pointer to one's start, and garbage values.
/// `flagged`: allocated `AllocFlags::CONSERVATIVE` instead of traced by a
/// `trace` that visits each word as ambiguous.
fn conservative_holder(m: &mut TestMutator, n: u64, flagged: bool) -> (ObjRef, Vec<(u64, usize)>) {
    let holder = if flagged {
        new_flagged_conservative(m, 1_000, n as usize + 3).unwrap()
    } else {
        new_conservative(m, 1_000, n as usize + 3).unwrap()
    };
    let _r = m.root(holder).unwrap();
    let mut held = Vec::new();
    for i in 0..n {
        let p = new_pair(m, 2_000 + i, None, None).unwrap();
        // Interior (into the header's id word) for most; the start for one.
        // Stored before any other allocation: the pair is in no root
        // until then.
        let word = if i == 0 {
            p.addr()
        } else {
            p.addr() + 8 + (i as usize % 8)
        };
        set_word(holder, i as usize, word);
        held.push((2_000 + i, p.addr()));
        // Garbage in between: only the words keep the pairs.
        new_pair(m, 9_000 + i, None, None).unwrap();
    }
    set_word(holder, n as usize, 0xdead_beef);
    set_word(holder, n as usize + 1, usize::MAX);
    set_word(holder, n as usize + 2, 42);
    (holder, held)
}

/// Every `(id, address)` pair is still an object at its address, with its id.
fn assert_held_in_place(heap: &TestHeap, held: &[(u64, usize)], gc_threads: usize) {
    for &(id, addr) in held {
        let p = ObjRef::from_ptr(addr as *mut u8).unwrap();
        assert!(
            heap.is_object(p.as_ptr()),
            "pair {id} freed ({gc_threads} workers)"
        );
        assert_eq!(header(p).2, id, "pair {id} moved or overwritten");
    }
}

#[test]
fn words_of_a_conservatively_traced_object_keep_what_they_point_into_alive_and_in_place() {
    // The flagged holders of 10,000 and 70,000 words are large objects,
    // marked a 4 KiB chunk at a time; the second is longer than one mark
    // stack entry can say (65,535 words), so its rest is queued in pieces.
    for (gc_threads, flagged, n) in [
        (1, false, 200),
        (4, false, 200),
        (1, true, 200),
        (4, true, 200),
        (2, true, 10_000),
        (1, true, 70_000),
        (4, true, 70_000),
    ] {
        // Every collection moves every movable object and checks for stale
        // references; verify mode checks the marking.
        let heap = heap(Config {
            gc_threads,
            verify: true,
            verify_compaction: true,
            ..small_config()
        });
        let mut m = heap.mutator().unwrap();
        let (holder, held) = conservative_holder(&mut m, n, flagged);
        let root = m.root(holder).unwrap();
        for _ in 0..3 {
            m.collect();
            m.finish_sweep();
            let holder = root.get().unwrap();
            assert_eq!(header(holder).2, 1_000);
            assert_held_in_place(&heap, &held, gc_threads);
        }
        // Held by the words alone: the n pairs and the holder.
        assert_eq!(heap.stats().last_marked, n + 1);
        // Clearing the words lets the pairs go.
        let holder = root.get().unwrap();
        for i in 0..n as usize {
            set_word(holder, i, 0);
        }
        m.collect();
        m.finish_sweep();
        assert_eq!(heap.stats().last_marked, 1);
    }
}

#[test]
fn ordered_finalization_follows_ambiguous_words_too() {
    use mosaic::FinalizerOrder;
    use std::sync::{Arc, Mutex};
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    // A reaches B through an ambiguous (interior) word only; both have
    // ordered finalizers: A's runs first, B's only in a later collection.
    let a = new_conservative(&mut m, 1, 1).unwrap();
    let b = new_pair(&mut m, 2, None, None).unwrap();
    set_word(a, 0, b.addr() + 8);
    let log = Arc::new(Mutex::new(Vec::new()));
    for o in [a, b] {
        let log = log.clone();
        m.register_finalizer(o, FinalizerOrder::Ordered, move |_, obj| {
            log.lock().unwrap().push(header(obj).2)
        })
        .unwrap();
    }
    m.collect();
    m.run_finalizers().unwrap();
    assert_eq!(*log.lock().unwrap(), vec![1], "A first, B kept for it");
    m.collect();
    m.run_finalizers().unwrap();
    assert_eq!(*log.lock().unwrap(), vec![1, 2], "then B");
}

#[test]
fn words_of_a_conservative_object_marked_for_its_finalizer_pin_what_they_point_into() {
    use mosaic::FinalizerOrder;
    // The holder is unreachable: only the finalizer pass marks it (and,
    // through its words, the pairs), after the strong closure. The pairs
    // must be pinned as firmly as if the strong closure had found them.
    let heap = heap(Config {
        verify: true,
        verify_compaction: true,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let ran = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let n = 50;
    let mut held = Vec::new();
    {
        let holder = new_flagged_conservative(&mut m, 1_000, n).unwrap();
        let _r = m.root(holder).unwrap();
        for i in 0..n {
            let p = new_pair(&mut m, 5_000 + i as u64, None, None).unwrap();
            new_pair(&mut m, 0, None, None).unwrap();
            set_word(holder, i, p.addr() + 8);
            held.push((5_000 + i as u64, p.addr()));
        }
        let ran2 = ran.clone();
        let expect = held.clone();
        m.register_finalizer(holder, FinalizerOrder::Unordered, move |_, o| {
            // The pairs are where the holder's words say, intact.
            for (i, &(id, addr)) in expect.iter().enumerate() {
                // SAFETY: word i of the (live, finalizing) holder.
                let w = unsafe { *(o.as_ptr().add(HEADER) as *const usize).add(i) };
                assert_eq!(w, addr + 8);
                let p = ObjRef::from_ptr(addr as *mut u8).unwrap();
                assert_eq!(header(p).2, id, "pair {id} moved or overwritten");
            }
            ran2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })
        .unwrap();
    }
    // Moves everything movable at every collection and checks for stale words.
    m.collect();
    m.run_finalizers().unwrap();
    assert_eq!(ran.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[test]
fn a_large_conservative_object_of_odd_length_is_scanned_to_its_last_word() {
    // 20,000 words and 5 bytes: the object ends off a word boundary, and
    // the marker splits it into chunks and pieces from both ends. Every
    // word points into a pair that nothing else keeps.
    const WORDS: usize = 20_000;
    for gc_threads in [1, 2] {
        let heap = heap(Config {
            gc_threads,
            parallel_min_live: 0,
            ..small_config()
        });
        let mut m = heap.mutator().unwrap();
        let holder = m
            .alloc_with(8 * WORDS + 5, mosaic::AllocFlags::CONSERVATIVE)
            .unwrap();
        let root = m.root(holder).unwrap();
        let mut held = Vec::new();
        for i in 0..WORDS {
            let p = new_pair(&mut m, 40_000 + i as u64, None, None).unwrap();
            // Stored before the next allocation (the pair is in no root
            // until then). SAFETY: word `i` of the holder, inside its
            // 8 * WORDS + 5 bytes.
            unsafe {
                (root.get().unwrap().as_ptr() as *mut usize)
                    .add(i)
                    .write(p.addr())
            };
            held.push((40_000 + i as u64, p.addr()));
            new_pair(&mut m, 0, None, None).unwrap();
        }
        for _ in 0..2 {
            m.collect();
            m.finish_sweep();
            assert_held_in_place(&heap, &held, gc_threads);
        }
        assert_eq!(heap.stats().last_marked, WORDS as u64 + 1);
    }
}
