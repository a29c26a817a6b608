//! Background sweeping (`collect/background.rs`): between pauses a GC
//! worker sweeps and clears pages ahead of the allocator. What it clears
//! must be exactly the free memory: live objects keep every word, and
//! every slot handed out afterwards reads as zeroes (the test embedder's
//! allocation helpers assert it).

mod common;

use std::time::{Duration, Instant};

use common::*;
use mosaic::{Config, ObjRef};

const WORDS: usize = 6;

/// The tests of this file run one at a time: the heap counts the running
/// mutators from the process's CPU time, and a second test allocating
/// beside the first would leave no CPU idle for background sweeping.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A word no heap address looks like (its top bits are set).
fn garbage_word(id: u64, i: usize) -> usize {
    (0xA5A5_0000_0000_0000 | (id << 8) | i as u64) as usize
}

fn filled(m: &mut TestMutator, id: u64) -> ObjRef {
    let o = new_conservative(m, id, WORDS).unwrap();
    for i in 0..WORDS {
        set_word(o, i, garbage_word(id, i));
    }
    o
}

fn config(background_sweep: bool) -> Config {
    Config {
        gc_threads: 2,
        background_sweep,
        ..small_config()
    }
}

/// Makes pages of garbage (some wholly dead, some with one object in four
/// kept), collects, and waits until background sweeping has had time to
/// work (its page count stops moving). Returns the kept objects' roots
/// and ids.
fn garbage_then_collect(heap: &TestHeap, m: &mut TestMutator) -> Vec<(mosaic::Root, u64)> {
    let mut kept = Vec::new();
    for id in 1..=40_000u64 {
        let o = filled(m, id);
        if id <= 20_000 && id % 4 == 0 {
            kept.push((m.root(o).unwrap(), id));
        }
    }
    m.collect();
    let start = Instant::now();
    let mut last = (u64::MAX, Instant::now());
    while start.elapsed() < Duration::from_secs(10) {
        let pages = heap.stats().background_pages;
        if pages != last.0 {
            last = (pages, Instant::now());
        } else if last.1.elapsed() > Duration::from_millis(50) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    kept
}

#[test]
fn background_sweeping_clears_only_free_memory() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        eprintln!("skipped: background sweeping needs a second CPU");
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let heap = heap(config(true));
    let mut m = heap.mutator().unwrap();
    let kept = garbage_then_collect(&heap, &mut m);
    let s = heap.stats();
    assert!(s.background_pages > 0, "no page swept in the background");
    assert!(
        s.background_cleared_bytes > 0,
        "no page cleared in the background"
    );
    // Every slot handed out now reads as zeroes (`new_conservative`
    // checks), cleared pages and the others alike.
    for id in 100_000..140_000u64 {
        new_conservative(&mut m, id, WORDS).unwrap();
    }
    // Live objects lost nothing.
    for (root, id) in &kept {
        let o = root.get().unwrap();
        assert_eq!(header(o).2, *id);
        for i in 0..WORDS {
            // SAFETY: a live conservative object of `WORDS` fields.
            let w = unsafe { *(o.as_ptr().add(16) as *const usize).add(i) };
            assert_eq!(w, garbage_word(*id, i), "word {i} of kept object {id}");
        }
    }
    assert_eq!(kept.len(), 5_000);
}

#[test]
fn background_sweeping_can_be_turned_off() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let heap = heap(config(false));
    let mut m = heap.mutator().unwrap();
    let kept = garbage_then_collect(&heap, &mut m);
    let s = heap.stats();
    assert_eq!((s.background_pages, s.background_cleared_bytes), (0, 0));
    assert_eq!(kept.len(), 5_000);
    for id in 100_000..110_000u64 {
        new_conservative(&mut m, id, WORDS).unwrap();
    }
}
