//! Compaction: objects move, references follow, pinned objects stay, pages
//! empty and go back to the OS (issue 10, seed 001).

mod common;

use common::*;
use mosaic::{AllocFlags, CompactOrder, Config, ObjRef};

fn config() -> Config {
    Config {
        gc_threads: 2,
        ..small_config()
    }
}

/// A list of `n` pairs (ids 1..=n) with `garbage` dead pairs allocated
/// after each, rooted in a global; returns the head.
fn sparse_list(
    m: &mut TestMutator,
    vm_globals: &parking_lot::Mutex<Vec<usize>>,
    n: u64,
    garbage: usize,
) {
    vm_globals.lock().push(0);
    let mut id = 1_000_000;
    for i in (1..=n).rev() {
        let head = ObjRef::from_ptr(vm_globals.lock()[0] as *mut u8);
        let p = new_pair(m, i, head, None).unwrap();
        vm_globals.lock()[0] = p.addr();
        for _ in 0..garbage {
            id += 1;
            new_pair(m, id, None, None).unwrap();
        }
    }
}

fn list_ids(head: usize) -> Vec<u64> {
    let mut out = Vec::new();
    let mut p = ObjRef::from_ptr(head as *mut u8);
    while let Some(o) = p {
        out.push(header(o).2);
        p = field(o, 0);
    }
    out
}

#[test]
fn compaction_moves_objects_updates_references_and_frees_pages() {
    // A fixed 64 MiB heap: no collection while the list is built, so the
    // garbage between its cells is not reused and the pages end 1/8 full.
    let h = heap(Config {
        heap_policy: mosaic::HeapPolicy::Fixed,
        max_heap: 64 << 20,
        ..config()
    });
    let mut m = h.mutator().unwrap();
    sparse_list(&mut m, &h.embedder().globals, 20_000, 7);
    m.collect();
    m.finish_sweep();
    let before = h.stats();
    let pages_before = before.pool_pages();
    m.compact().unwrap();
    let s = h.stats();
    assert_eq!(s.compactions, 1);
    let c = s.last_compaction;
    assert!(c.objects_moved > 10_000, "{c:?}");
    assert!(c.pages_emptied > 0, "{c:?}");
    assert_eq!(h.embedder().moves.lock().len() as u64, c.objects_moved);
    let head = h.embedder().globals.lock()[0];
    assert_eq!(list_ids(head), (1..=20_000).collect::<Vec<_>>());
    m.finish_sweep();
    let after = h.stats();
    // 20 000 pairs of 32 bytes fill about 10 pages; they were spread over
    // about 80.
    assert!(
        after.pool_pages() * 4 < pages_before,
        "pages {pages_before} -> {}",
        after.pool_pages()
    );
    assert!(after.decommitted_bytes > before.decommitted_bytes);
    // The heap works on: allocate over the freed slots, collect, check.
    for i in 0..50_000u64 {
        new_pair(&mut m, 5_000_000 + i, None, None).unwrap();
    }
    m.collect();
    let head = h.embedder().globals.lock()[0];
    assert_eq!(list_ids(head).len(), 20_000);
}

#[test]
fn pinned_objects_and_objects_held_by_ambiguous_words_stay() {
    let h = heap(config());
    let mut m = h.mutator().unwrap();
    let mut pinned = Vec::new();
    let mut counted = Vec::new();
    let mut ambiguous = Vec::new();
    let mut movable = Vec::new();
    let mut roots = Vec::new();
    let mut counted_roots = Vec::new();
    for i in 0..3000u64 {
        for _ in 0..5 {
            new_pair(&mut m, 9_000_000 + i, None, None).unwrap();
        }
        match i % 4 {
            0 => {
                let o = m.alloc_with(32, AllocFlags::PINNED).unwrap();
                // SAFETY: a fresh 32-byte object: write a pair header.
                unsafe { (o.as_ptr() as *mut u64).write(PAIR as u64) };
                set_field_raw(o, i);
                roots.push(m.root(o).unwrap());
                pinned.push(o);
            }
            1 => {
                let o = new_pair(&mut m, i, None, None).unwrap();
                m.pin(o).unwrap();
                m.pin(o).unwrap();
                counted_roots.push(m.root(o).unwrap());
                counted.push(o);
            }
            2 => {
                let o = new_pair(&mut m, i, None, None).unwrap();
                // An interior pointer: 20 bytes in.
                h.embedder().ambiguous.lock().push(o.addr() + 20);
                ambiguous.push(o);
            }
            _ => {
                let o = new_pair(&mut m, i, None, None).unwrap();
                h.embedder().globals.lock().push(o.addr());
                movable.push(i);
            }
        }
    }
    m.compact().unwrap();
    assert!(h.stats().last_compaction.objects_moved > 0);
    for (r, &o) in roots.iter().zip(&pinned) {
        assert_eq!(r.get(), Some(o), "a PINNED object moved");
        assert!(h.is_pinned(o));
    }
    for (r, &o) in counted_roots.iter().zip(&counted) {
        assert_eq!(r.get(), Some(o), "a pinned object moved");
        assert!(h.is_pinned(o));
    }
    for &o in &ambiguous {
        assert_eq!(
            header(o).0,
            PAIR,
            "an object held only by an ambiguous word was freed or moved"
        );
    }
    let globals = h.embedder().globals.lock().clone();
    let ids: Vec<u64> = globals
        .iter()
        .map(|&g| header(ObjRef::from_ptr(g as *mut u8).unwrap()).2)
        .collect();
    assert_eq!(ids, movable);
    // Unpinned twice, the object may move; a third unpin is refused.
    let o = counted[0];
    m.unpin(o).unwrap();
    assert!(h.is_pinned(o));
    m.unpin(o).unwrap();
    assert!(!h.is_pinned(o));
    assert!(m.unpin(o).is_err());
    // Dropping the ambiguous words frees those objects.
    h.embedder().ambiguous.lock().clear();
    let marked_before = h.stats().last_marked;
    m.collect();
    assert_eq!(
        h.stats().last_marked,
        marked_before - ambiguous.len() as u64
    );
}

fn set_field_raw(o: ObjRef, id: u64) {
    // SAFETY: a 32-byte object: tag/len word, id, two null fields.
    unsafe {
        (o.as_ptr() as *mut u32).write(PAIR);
        (o.as_ptr() as *mut u32).add(1).write(2);
        (o.as_ptr().add(8) as *mut u64).write(id);
    }
}

#[test]
fn pinned_first_fills_the_pages_with_the_most_pinned_objects() {
    // Four runs of pages, keeping (and pinning) one object in 7, 5, 2 and
    // 1; then movable objects. After a pinned-first compaction, no movable
    // object sits on a page with fewer pinned objects while a page with
    // more pinned objects has a free slot.
    let h = heap(Config {
        gc_threads: 1,
        ..config()
    });
    let mut m = h.mutator().unwrap();
    let mut keep = Vec::new();
    for every in [7, 5, 2, 1] {
        for i in 0..4000u64 {
            let o = new_pair(&mut m, i, None, None).unwrap();
            if i % every == 0 {
                m.pin(o).unwrap();
                keep.push(m.root(o).unwrap());
            }
        }
    }
    for i in 0..6000u64 {
        let o = new_pair(&mut m, 100_000 + i, None, None).unwrap();
        h.embedder().globals.lock().push(o.addr());
    }
    m.collect();
    m.compact_toward(CompactOrder::PinnedFirst).unwrap();
    let dump =
        std::env::temp_dir().join(format!("mosaic-pinned-first-{}.jsonl", std::process::id()));
    m.dump_heap(&dump).unwrap();
    let text = std::fs::read_to_string(&dump).unwrap();
    std::fs::remove_file(&dump).ok();
    // page -> (slots, pinned, movable) for the 32-byte pool.
    let mut pages = std::collections::BTreeMap::<u64, (u64, u64, u64)>::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        match v["type"].as_str().unwrap() {
            "PAGE" if v["slot_size"] == 32 => {
                pages.insert(
                    v["page"].as_u64().unwrap(),
                    (v["slots"].as_u64().unwrap(), 0, 0),
                );
            }
            "OBJECT" if v["size"] == 32 => {
                let e = pages.get_mut(&v["page"].as_u64().unwrap()).unwrap();
                if v["pinned"].as_bool().unwrap() {
                    e.1 += 1;
                } else {
                    e.2 += 1;
                }
            }
            _ => {}
        }
    }
    let pages: Vec<_> = pages.into_values().collect();
    assert!(pages.len() > 3);
    for a in &pages {
        for b in &pages {
            // a has fewer pinned objects and holds movable ones: b, with
            // more pinned objects, must be full.
            if a.1 < b.1 && a.2 > 0 {
                assert_eq!(
                    b.1 + b.2,
                    b.0,
                    "page {b:?} has room but {a:?} got movable objects"
                );
            }
        }
    }
    let ids: Vec<u64> = h
        .embedder()
        .globals
        .lock()
        .iter()
        .map(|&g| header(ObjRef::from_ptr(g as *mut u8).unwrap()).2)
        .collect();
    assert_eq!(ids, (100_000..106_000).collect::<Vec<_>>());
}

#[test]
fn cross_pool_moves_put_resized_objects_in_their_new_pool() {
    let h = heap(config());
    let mut m = h.mutator().unwrap();
    let mut vs = Vec::new();
    for i in 0..500u64 {
        let v = new_vector(&mut m, i + 1, 2).unwrap(); // 32 bytes
        set_field(
            v,
            0,
            Some(new_pair(&mut m, 10_000 + i, None, None).unwrap()),
        );
        vs.push(m.root(v).unwrap());
    }
    // Every other vector wants 100 bytes (a grown array).
    for i in (0..500u64).step_by(2) {
        h.embedder().resize_to.lock().insert(i + 1, 100);
    }
    m.compact().unwrap();
    h.embedder().resize_to.lock().clear();
    let s = h.stats();
    assert_eq!(s.last_compaction.cross_pool_moves, 250);
    let moves = h.embedder().moves.lock().clone();
    assert_eq!(moves.iter().filter(|m| m.2 == 32 && m.3 > 32).count(), 250);
    for (i, r) in vs.iter().enumerate() {
        let v = r.get().unwrap();
        let size = h.object_size(v).unwrap();
        assert_eq!(size >= 100, i % 2 == 0, "vector {i} is {size} bytes");
        assert_eq!(header(v).2, i as u64 + 1);
        assert_eq!(header(field(v, 0).unwrap()).2, 10_000 + i as u64);
    }
    m.collect();
}

#[test]
fn verify_compaction_moves_everything_and_catches_an_unreported_reference() {
    let h = heap(Config {
        verify_compaction: true,
        ..config()
    });
    let mut m = h.mutator().unwrap();
    let a = new_pair(&mut m, 1, None, None).unwrap();
    let b = new_pair(&mut m, 2, Some(a), None).unwrap();
    let r = m.root(b).unwrap();
    for _ in 0..3 {
        let before = r.get().unwrap();
        m.collect();
        let after = r.get().unwrap();
        assert_ne!(
            before, after,
            "verify_compaction moves every movable object"
        );
        assert_eq!(header(field(after, 0).unwrap()).2, 1);
    }
    // A weak box's fields are not reported by `trace`: a strong reference
    // hidden there is stale after a move, and the check names its slot.
    let hidden = new_pair(&mut m, 3, None, None).unwrap();
    let _keep = m.root(hidden).unwrap();
    let wb = new_weakbox(&mut m, 4, 1).unwrap();
    set_field(wb, 0, Some(hidden));
    let _wb = m.root(wb).unwrap();
    quiet_expected_panics();
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.collect()))
        .expect_err("a stale reference must be reported");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("mosaic verify compaction") && msg.contains("offset 16 of object"),
        "{msg}"
    );
}

/// A pointer-free object's words are data, whatever they hold: the
/// verifier must not report one that equals a moved object's old address
/// (it did, on the slack of an uncleared byte string: the model test's
/// regression case), and compaction must not rewrite it.
#[test]
fn verify_compaction_ignores_addresses_in_pointer_free_objects() {
    let h = heap(Config {
        verify_compaction: true,
        ..config()
    });
    let mut m = h.mutator().unwrap();
    let target = new_pair(&mut m, 1, None, None).unwrap();
    let _t = m.root(target).unwrap();
    let old = target.addr();
    let mut strings = Vec::new();
    for (id, flags) in [(2, AllocFlags::NONE), (3, AllocFlags::UNINIT)] {
        let s = new_bytes(&mut m, id, 16, flags).unwrap();
        // SAFETY: the byte string holds 16 bytes after its header.
        unsafe { (s.as_ptr().add(HEADER) as *mut usize).write(old) };
        strings.push(m.root(s).unwrap());
    }
    m.collect();
    assert_ne!(_t.get().unwrap().addr(), old, "the pair moved");
    for s in &strings {
        let s = s.get().unwrap();
        // SAFETY: as above.
        let word = unsafe { (s.as_ptr().add(HEADER) as *const usize).read() };
        assert_eq!(word, old, "a byte string's bytes are never rewritten");
    }
}

/// A finalizer is handed its object as a plain `ObjRef`; if it allocates
/// (and so may collect and compact), that object must stay where it is
/// until the finalizer returns. The model test found a finalizer that
/// allocated, then resurrected its object by its old address.
#[test]
fn an_object_stays_put_while_its_finalizer_runs() {
    let h = heap(Config {
        verify_compaction: true,
        ..config()
    });
    let mut m = h.mutator().unwrap();
    let child = new_pair(&mut m, 8, None, None).unwrap();
    let obj = new_pair(&mut m, 7, Some(child), None).unwrap();
    m.register_finalizer(obj, mosaic::FinalizerOrder::Unordered, |m, obj| {
        let before = obj.addr();
        m.collect(); // moves every movable object
        assert_eq!(obj.addr(), before);
        assert_eq!(header(obj).2, 7, "the object is still at its address");
        assert_eq!(header(field(obj, 0).unwrap()).2, 8);
        m.heap().embedder().globals.lock().push(obj.addr()); // resurrect
    })
    .unwrap();
    m.collect(); // queues the finalizer
    assert_eq!(m.run_finalizers().unwrap(), 1);
    m.collect();
    m.collect();
    let g = ObjRef::from_ptr(h.embedder().globals.lock()[0] as *mut u8).unwrap();
    assert!(!h.is_pinned(g), "unpinned once the finalizer returned");
    assert_eq!(header(g).2, 7, "the resurrected object survived, moved");
    assert_eq!(header(field(g, 0).unwrap()).2, 8);
}

/// The same when a finalizer runs the queue itself: the outer object and
/// the inner one both stay put and alive while a collection inside the
/// inner finalizer moves everything else.
#[test]
fn objects_of_nested_finalizer_runs_stay_put() {
    let h = heap(Config {
        verify_compaction: true,
        ..config()
    });
    let mut m = h.mutator().unwrap();
    // Allocated first: the queue is in address order within a collection.
    let outer = new_pair(&mut m, 1, None, None).unwrap();
    let inner = new_pair(&mut m, 2, None, None).unwrap();
    assert!(outer.addr() < inner.addr());
    m.register_finalizer(inner, mosaic::FinalizerOrder::Unordered, |m, obj| {
        let before = obj.addr();
        for i in 0..50 {
            new_pair(m, 100 + i, None, None).unwrap();
        }
        m.collect();
        assert_eq!(obj.addr(), before);
        assert_eq!(header(obj).2, 2, "the inner object is intact");
    })
    .unwrap();
    let outer_child = new_pair(&mut m, 3, None, None).unwrap();
    set_field(outer, 0, Some(outer_child));
    m.register_finalizer(outer, mosaic::FinalizerOrder::Unordered, |m, obj| {
        let before = obj.addr();
        // Runs the inner finalizer (queued with this one).
        assert_eq!(m.run_finalizers().unwrap(), 1);
        m.collect();
        assert_eq!(obj.addr(), before, "the outer object did not move");
        assert_eq!(header(obj).2, 1, "the outer object is intact");
        assert_eq!(header(field(obj, 0).unwrap()).2, 3);
    })
    .unwrap();
    m.collect(); // queues both: the outer one first (lower address)
    assert_eq!(m.heap().pending_finalizers(), 2);
    let ran = m.run_finalizers().unwrap();
    assert_eq!(ran, 1, "the outer one here, the inner one inside it");
    assert_eq!(m.heap().pending_finalizers(), 0);
}

#[test]
fn a_dump_lists_every_object_with_its_flags_and_type() {
    let h = heap(config());
    let mut m = h.mutator().unwrap();
    let a = new_pair(&mut m, 1, None, None).unwrap();
    let ra = m.root(a).unwrap();
    let b = new_bytes(&mut m, 2, 40, AllocFlags::NONE).unwrap();
    let rb = m.root(b).unwrap();
    let big = m.alloc_with(200_000, AllocFlags::NO_POINTERS).unwrap();
    let _r = m.root(big).unwrap();
    let (a, b) = (ra.get().unwrap(), rb.get().unwrap());
    m.pin(a).unwrap();
    m.collect();
    let path = std::env::temp_dir().join(format!("mosaic-dump-{}.jsonl", std::process::id()));
    let s = m.dump_heap(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).ok();
    assert_eq!((s.objects, s.pinned), (3, 1));
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "HEAP");
    assert_eq!(lines[0]["objects"], 3);
    let obj = |addr: usize| {
        lines
            .iter()
            .find(|l| l["type"] == "OBJECT" && l["address"] == format!("{addr:#x}"))
            .unwrap_or_else(|| panic!("{addr:#x} not in the dump:\n{text}"))
            .clone()
    };
    let (la, lb, lbig) = (obj(a.addr()), obj(b.addr()), obj(big.addr()));
    assert_eq!(
        (la["type_name"].as_str(), la["pinned"].as_bool()),
        (Some("pair"), Some(true))
    );
    assert_eq!(la["flags"], serde_json::json!(["PINNED"]));
    assert_eq!(lb["flags"], serde_json::json!(["NO_POINTERS"]));
    assert_eq!(lb["type_name"], "bytes");
    assert_eq!(
        (lbig["large"].as_bool(), lbig["size"].as_u64()),
        (Some(true), Some(200_000))
    );
    let pages = lines.iter().filter(|l| l["type"] == "PAGE").count();
    assert_eq!(pages, s.pages);
    assert!(m.dump_heap("/nonexistent-dir/x.jsonl").is_err());
}
