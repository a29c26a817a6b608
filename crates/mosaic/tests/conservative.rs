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
