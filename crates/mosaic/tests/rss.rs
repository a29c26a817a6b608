//! RSS falls when the heap shrinks. Its own test binary (its own process),
//! so no other test's memory moves the number.

mod common;

use common::*;
use mosaic::{AllocFlags, Config};

#[test]
fn garbage_pages_are_decommitted_and_rss_falls() {
    let heap = heap(Config {
        max_heap: 1 << 30,
        ..Config::default()
    });
    let mut m = heap.mutator().unwrap();
    let list = m.empty_root();
    // ~200 MB of live byte strings (1 KiB each), then drop them all.
    for i in 0..200_000u64 {
        let b = new_bytes(&mut m, i, 1000, AllocFlags::NONE).unwrap();
        let p = new_pair(&mut m, i, Some(b), list.get()).unwrap();
        list.set(Some(p));
    }
    m.collect();
    m.finish_sweep();
    let full = heap.stats();
    assert!(full.committed_bytes > 200 << 20, "{full}");
    list.set(None);
    m.collect();
    m.finish_sweep();
    let empty = heap.stats();
    assert_eq!(empty.live_objects(), 0);
    assert!(
        empty.committed_bytes < 16 << 20,
        "committed {} MiB",
        empty.committed_bytes >> 20
    );
    assert!(
        empty.rss_bytes + (150 << 20) < full.rss_bytes,
        "RSS {} MiB -> {} MiB",
        full.rss_bytes >> 20,
        empty.rss_bytes >> 20
    );
}
