//! `AllocFlags::KEEP_REFERENTS`: a dead cleanup object's referents stay
//! alive, with their contents and in place, until its `on_free` ran; chains
//! lose a link per collection; self-references do not keep an object;
//! without the flag nothing is kept.

mod common;

use common::*;
use mosaic::{AllocFlags, CompactPolicy, Config, ObjRef};

const KEEP: AllocFlags = AllocFlags::NEEDS_CLEANUP.with(AllocFlags::KEEP_REFERENTS);

fn pair(
    m: &mut TestMutator,
    id: u64,
    a: Option<ObjRef>,
    b: Option<ObjRef>,
    f: AllocFlags,
) -> ObjRef {
    new_pair_with(m, id, a, b, f).expect("pair")
}

/// The header ids `on_free` read, sorted by the freed object's id; emptied.
fn freed_refs(h: &TestHeap) -> Vec<(u64, Vec<u64>)> {
    let mut v: Vec<(u64, Vec<u64>)> = std::mem::take(&mut *h.embedder().freed_refs.lock())
        .into_iter()
        .map(|(id, refs)| (id, refs.into_iter().map(|r| r.1).collect()))
        .collect();
    v.sort();
    v
}

fn collect(m: &mut TestMutator) {
    m.collect();
    m.finish_sweep();
}

/// Each configuration: lazy and eager sweeping, every object moved by
/// every collection that may move it, generations.
fn configs() -> Vec<Config> {
    vec![
        small_config(),
        Config {
            lazy_sweep: false,
            ..small_config()
        },
        Config {
            verify_compaction: true,
            compact: CompactPolicy::Always,
            verify: true,
            ..small_config()
        },
        Config {
            generational: true,
            ..small_config()
        },
    ]
}

#[test]
fn on_free_reads_what_a_dead_keeper_referenced() {
    for config in configs() {
        let h = heap(config);
        let mut m = h.mutator().unwrap();
        // keeper 5 -> (2 -> 3), 4; nothing else refers to 2, 3 or 4
        // (keepers' ids pass `is_keeper`).
        let three = pair(&mut m, 3, None, None, AllocFlags::NONE);
        let r3 = m.root(three).unwrap();
        let two = pair(&mut m, 2, Some(three), None, AllocFlags::NONE);
        let r2 = m.root(two).unwrap();
        drop(r3);
        let four = new_bytes(&mut m, 4, 40, AllocFlags::NONE).unwrap();
        let r4 = m.root(four).unwrap();
        let keeper = pair(&mut m, 5, Some(two), Some(four), KEEP);
        drop((r2, r4));
        let k = m.root(keeper).unwrap();
        collect(&mut m);
        assert!(freed_refs(&h).is_empty(), "a live keeper is not freed");
        drop(k);
        // The keeper dies; what it references lives one more collection.
        collect(&mut m);
        assert_eq!(freed_refs(&h), vec![(5, vec![2, 4])]);
        assert_eq!(h.embedder().freed.lock().clone(), vec![5]);
        let live = h.stats().live_objects();
        assert_eq!(live, 3, "2, 3 and 4 survive the keeper's collection");
        collect(&mut m);
        assert_eq!(h.stats().live_objects(), 0, "then they go");
    }
}

#[test]
fn a_chain_of_keepers_loses_a_link_per_collection() {
    for config in configs() {
        let h = heap(config);
        let mut m = h.mutator().unwrap();
        // 5 -> 12 -> 19, all keepers; 5 references itself too.
        let three = pair(&mut m, 19, None, None, KEEP);
        let r3 = m.root(three).unwrap();
        let two = pair(&mut m, 12, Some(three), None, KEEP);
        let r2 = m.root(two).unwrap();
        let one = pair(&mut m, 5, Some(two), None, KEEP);
        set_field(one, 1, Some(one));
        m.write_barrier(one);
        drop((r2, r3));
        collect(&mut m);
        assert_eq!(freed_refs(&h), vec![(5, vec![12, 5])]);
        collect(&mut m);
        assert_eq!(freed_refs(&h), vec![(12, vec![19, 0])]);
        collect(&mut m);
        assert_eq!(freed_refs(&h), vec![(19, vec![0, 0])]);
        assert_eq!(h.stats().live_objects(), 0);
    }
}

#[test]
fn without_the_flag_referents_die_with_the_cleanup_object() {
    let h = heap(small_config());
    let mut m = h.mutator().unwrap();
    let two = pair(&mut m, 2, None, None, AllocFlags::NONE);
    let r2 = m.root(two).unwrap();
    let one = pair(&mut m, 1, Some(two), None, AllocFlags::NEEDS_CLEANUP);
    drop(r2);
    let _ = one;
    collect(&mut m);
    assert_eq!(h.embedder().freed.lock().clone(), vec![1]);
    assert_eq!(h.stats().live_objects(), 0, "both die in one collection");
    assert_eq!(
        h.object_flags(pair(&mut m, 12, None, None, KEEP)),
        Some(KEEP),
        "object_flags reports the flag"
    );
}
