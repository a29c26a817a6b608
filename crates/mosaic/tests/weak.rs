//! Weak handles, weak slots (short and long) and ephemerons, including the
//! 100,000-ephemeron chain whose keys are reachable only through each
//! other's values.

mod common;

use common::*;
use mosaic::{AllocFlags, Config, Error, FinalizerOrder, Heap, ObjRef, WeakKind};

/// A byte string with room for `n` pointer words: never traced, so the
/// words hold their targets only weakly once registered.
fn weak_box(m: &mut TestMutator, id: u64, n: usize) -> ObjRef {
    new_bytes(m, id, 8 * n, AllocFlags::NONE).unwrap()
}

fn word_slot(o: ObjRef, i: usize) -> *mut *mut u8 {
    // SAFETY: callers index words within the byte string.
    unsafe { (o.as_ptr().add(HEADER) as *mut *mut u8).add(i) }
}

fn set_word(o: ObjRef, i: usize, v: Option<ObjRef>) {
    // SAFETY: as in word_slot.
    unsafe { word_slot(o, i).write(v.map_or(std::ptr::null_mut(), |v| v.as_ptr())) }
}

fn word(o: ObjRef, i: usize) -> Option<ObjRef> {
    // SAFETY: as in word_slot.
    ObjRef::from_ptr(unsafe { word_slot(o, i).read() })
}

#[test]
fn a_weak_handle_reads_none_exactly_once_its_referent_died() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let live = new_pair(&mut m, 1, None, None).unwrap();
    let _keep = m.root(live).unwrap();
    let dead = new_pair(&mut m, 2, None, None).unwrap();
    let w_live = m.weak_root(live, WeakKind::Short).unwrap();
    let w_dead = m.weak_root(dead, WeakKind::Long).unwrap();
    assert_eq!(w_dead.get(), Some(dead), "not cleared before a collection");
    assert_eq!(heap.stats().weak_handles, 2);
    m.collect();
    assert_eq!(w_live.get(), Some(live));
    assert_eq!(w_dead.get(), None);
    assert_eq!(
        heap.stats().last_marked,
        1,
        "a weak handle keeps nothing alive"
    );
    // A handle may live on another thread.
    let t = std::thread::spawn(move || w_live.get().map(|o| o.addr()));
    assert_eq!(t.join().unwrap(), Some(live.addr()));
    drop(w_dead);
    assert_eq!(heap.stats().weak_handles, 0);
}

#[test]
fn short_references_clear_before_finalization_long_ones_when_reclaimed() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let f = new_pair(&mut m, 1, None, None).unwrap();
    m.register_finalizer(f, FinalizerOrder::Ordered, |_, _| {})
        .unwrap();
    let short = m.weak_root(f, WeakKind::Short).unwrap();
    let long = m.weak_root(f, WeakKind::Long).unwrap();
    // The same through weak slots of a holder object (words of a byte
    // string: never traced, so only weakly held).
    let holder = weak_box(&mut m, 2, 2);
    let _h = m.root(holder).unwrap();
    set_word(holder, 0, Some(f));
    set_word(holder, 1, Some(f));
    // SAFETY: both are words of a live object; the test expects them to be
    // cleared.
    unsafe {
        m.register_weak_slot(word_slot(holder, 0), WeakKind::Short)
            .unwrap();
        m.register_weak_slot(word_slot(holder, 1), WeakKind::Long)
            .unwrap();
    }

    m.collect();
    assert_eq!(short.get(), None, "short: cleared when found unreachable");
    assert_eq!(word(holder, 0), None);
    assert_eq!(
        long.get(),
        Some(f),
        "long: kept while f waits for its finalizer"
    );
    assert_eq!(word(holder, 1), Some(f));
    assert_eq!(m.run_finalizers().unwrap(), 1);
    m.collect();
    assert_eq!(long.get(), None, "long: cleared once f is reclaimed");
    assert_eq!(word(holder, 1), None);
}

#[test]
fn a_weak_slot_registration_ends_with_its_holder_and_bad_slots_are_refused() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let target = new_pair(&mut m, 1, None, None).unwrap();
    let _t = m.root(target).unwrap();
    let holder = weak_box(&mut m, 2, 1);
    set_word(holder, 0, Some(target));
    let slot = word_slot(holder, 0);
    // SAFETY: a word of a live object.
    unsafe { m.register_weak_slot(slot, WeakKind::Short).unwrap() };
    // SAFETY: (refused calls: nothing is registered)
    let twice = unsafe { m.register_weak_slot(slot, WeakKind::Long) };
    assert!(
        matches!(twice, Err(Error::AlreadyRegistered { .. })),
        "{twice:?}"
    );
    let mut outside: *mut u8 = std::ptr::null_mut();
    // SAFETY: refused before anything is written.
    let r = unsafe { m.register_weak_slot(&mut outside, WeakKind::Short) };
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    // SAFETY: refused (misaligned).
    let r = unsafe { m.register_weak_slot((slot as usize + 1) as *mut *mut u8, WeakKind::Short) };
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    assert_eq!(heap.stats().weak_slots, 1);
    m.collect();
    assert_eq!(
        heap.stats().weak_slots,
        0,
        "the holder died: its registration went"
    );
    // Its memory may be reused by an object whose field must stay untouched.
    m.finish_sweep();
    let reuse = (0..64)
        .map(|i| new_vector(&mut m, 10 + i, 1).unwrap())
        .collect::<Vec<_>>();
    let roots: Vec<_> = reuse.iter().map(|&o| m.root(o).unwrap()).collect();
    let dead = new_pair(&mut m, 99, None, None).unwrap();
    for &o in &reuse {
        set_field(o, 0, Some(dead));
    }
    m.collect();
    assert!(
        reuse.iter().all(|&o| field(o, 0) == Some(dead)),
        "no stale registration cleared a strong field"
    );
    assert!(!m.unregister_weak_slot(std::ptr::null_mut()));
    drop(roots);
}

#[test]
fn an_ephemeron_keeps_its_value_exactly_while_its_key_lives() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let key = new_pair(&mut m, 1, None, None).unwrap();
    let key_root = m.root(key).unwrap();
    let value = new_pair(&mut m, 2, None, None).unwrap();
    let table = new_vector(&mut m, 3, 1).unwrap();
    let _t = m.root(table).unwrap();
    let e = m.alloc_ephemeron(Some(key), Some(value)).unwrap();
    set_field(table, 0, Some(e));
    assert_eq!(heap.stats().ephemerons, 1);

    m.collect();
    assert_eq!(heap.ephemeron_key(e).unwrap(), Some(key));
    assert_eq!(heap.ephemeron_value(e).unwrap(), Some(value));
    assert_eq!(heap.stats().last_marked, 4, "key, value, table, ephemeron");

    drop(key_root);
    m.collect();
    assert_eq!(heap.ephemeron_key(e).unwrap(), None);
    assert_eq!(heap.ephemeron_value(e).unwrap(), None);
    assert_eq!(heap.stats().last_marked, 2, "table and ephemeron");
    m.finish_sweep();
    assert!(!heap.is_object(value.as_ptr()));

    // A value referring to its own key does not keep the key alive.
    let k2 = new_pair(&mut m, 4, None, None).unwrap();
    let v2 = new_pair(&mut m, 5, Some(k2), None).unwrap();
    m.ephemeron_set(e, Some(k2), Some(v2)).unwrap();
    m.collect();
    assert_eq!(heap.ephemeron_key(e).unwrap(), None);
    assert_eq!(heap.stats().last_marked, 2);

    // The ephemeron itself dies with its table.
    set_field(table, 0, None);
    m.collect();
    assert_eq!(heap.stats().ephemerons, 0);
}

#[test]
fn bad_ephemerons_are_refused() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let mut local = 0u64;
    let foreign = ObjRef::from_ptr(&mut local as *mut u64 as *mut u8).unwrap();
    let r = m.alloc_ephemeron(Some(foreign), None);
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    let plain = new_pair(&mut m, 1, None, None).unwrap();
    assert!(matches!(
        heap.ephemeron_key(plain),
        Err(Error::InvalidArgument(_))
    ));
    let e = m.alloc_ephemeron(None, None).unwrap();
    assert!(matches!(
        m.ephemeron_set(e, Some(foreign), None),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(heap.ephemeron_key(e).unwrap(), None);
}

/// `n` ephemerons e_i = (k_i, v_i) where v_i refers to k_{i+1}: only k_0 is
/// rooted, so each key is reachable only through the previous value. The
/// ephemerons sit in one rooted vector, in forward or reverse order (the
/// reverse order makes a naive "rescan until nothing changes" quadratic:
/// 5·10^9 visits at 100,000).
fn chain(n: usize, reverse: bool, keep_first_key: bool) {
    let heap = heap(mosaic::Config {
        max_heap: 1 << 30,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let list = new_vector(&mut m, 1, n).unwrap();
    let _l = m.root(list).unwrap();
    let keys = new_vector(&mut m, 2, n + 1).unwrap(); // keeps keys alive while building
    let keys_root = m.root(keys).unwrap();
    for i in 0..=n {
        let k = new_pair(&mut m, 1000 + i as u64, None, None).unwrap();
        set_field(keys, i, Some(k));
    }
    for i in 0..n {
        let next = field(keys, i + 1);
        let v = new_pair(&mut m, 10_000_000 + i as u64, next, None).unwrap();
        let e = m.alloc_ephemeron(field(keys, i), Some(v)).unwrap();
        set_field(list, if reverse { n - 1 - i } else { i }, Some(e));
    }
    let first = m.root(field(keys, 0).unwrap()).unwrap();
    drop(keys_root);
    if !keep_first_key {
        drop(first);
        m.collect();
        // Nothing but the list and its ephemerons: every pair cleared.
        assert_eq!(heap.stats().last_marked, 1 + n as u64);
        for i in 0..n {
            let e = field(list, i).unwrap();
            assert_eq!(heap.ephemeron_value(e).unwrap(), None);
        }
        return;
    }
    m.collect();
    // list + n ephemerons + n + 1 keys + n values (the keys vector died).
    assert_eq!(heap.stats().last_marked, 1 + 3 * n as u64 + 1);
    for i in 0..n {
        let e = field(list, if reverse { n - 1 - i } else { i }).unwrap();
        let k = heap.ephemeron_key(e).unwrap().expect("key alive");
        assert_eq!(header(k).2, 1000 + i as u64);
        let v = heap.ephemeron_value(e).unwrap().expect("value alive");
        assert_eq!(header(v).2, 10_000_000 + i as u64);
    }
    drop(first);
}

#[test]
fn a_chain_of_100k_ephemerons_resolves_in_forward_order() {
    chain(100_000, false, true);
}

#[test]
fn a_chain_of_100k_ephemerons_resolves_in_reverse_order() {
    chain(100_000, true, true);
}

#[test]
fn a_chain_of_100k_ephemerons_dies_with_its_first_key() {
    chain(100_000, true, false);
}

#[test]
fn an_ephemeron_key_kept_for_its_finalizer_keeps_the_value_too() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let table = new_vector(&mut m, 1, 1).unwrap();
    let _t = m.root(table).unwrap();
    let key = new_pair(&mut m, 2, None, None).unwrap();
    let value = new_bytes(&mut m, 3, 10, AllocFlags::NONE).unwrap();
    let e = m.alloc_ephemeron(Some(key), Some(value)).unwrap();
    set_field(table, 0, Some(e));
    m.register_finalizer(key, FinalizerOrder::Ordered, |_, _| {})
        .unwrap();
    m.collect();
    assert_eq!(heap.ephemeron_value(e).unwrap(), Some(value));
    assert!(bytes_match(value, 3));
    m.run_finalizers().unwrap();
    m.collect();
    assert_eq!(heap.ephemeron_key(e).unwrap(), None);
    assert_eq!(heap.ephemeron_value(e).unwrap(), None);
}

#[test]
fn an_ephemeron_without_a_key_keeps_nothing_and_never_dangles() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let value = new_pair(&mut m, 1, None, None).unwrap();
    let e = m.alloc_ephemeron(None, Some(value)).unwrap();
    let _e = m.root(e).unwrap();
    assert_eq!(heap.ephemeron_value(e).unwrap(), Some(value));
    m.collect();
    assert_eq!(heap.stats().last_marked, 1, "only the ephemeron");
    assert_eq!(
        heap.ephemeron_value(e).unwrap(),
        None,
        "cleared with its dead value"
    );
}

#[test]
fn a_panic_out_of_alloc_ephemeron_leaves_no_scope_entry_behind() {
    quiet_expected_panics();
    let heap = heap(mosaic::Config {
        stress: 1,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let p = new_pair(&mut m, 42, None, None).unwrap();
    let _r = m.root(p).unwrap();
    let depth = m.scope_depth();
    heap.embedder()
        .panic_trace_id
        .store(42, std::sync::atomic::Ordering::Relaxed);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        m.alloc_ephemeron(Some(p), None)
    }));
    heap.embedder()
        .panic_trace_id
        .store(0, std::sync::atomic::Ordering::Relaxed);
    assert!(
        r.is_err(),
        "the stress collection inside the allocation panicked"
    );
    assert_eq!(
        m.scope_depth(),
        depth,
        "the key and value slots were popped"
    );
    m.collect();
    assert_eq!(heap.stats().last_marked, 1);
}

/// A collection abandoned because `trace` panicked must leave the heap as
/// it was. Here `trace` panics on an object only its finalizer keeps, which
/// is first traced after the short weak references to unreachable objects
/// were found (`collect/closure.rs`, step 3 before step 4): they must not
/// be cleared yet.
#[test]
fn an_abandoned_collection_keeps_short_weak_references() {
    quiet_expected_panics();
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let x = new_pair(&mut m, 7, None, None).unwrap();
    let weak = m.weak_root(x, WeakKind::Short).unwrap();
    m.register_finalizer(x, FinalizerOrder::Unordered, |_, _| {})
        .unwrap();
    heap.embedder()
        .panic_trace_id
        .store(7, std::sync::atomic::Ordering::Relaxed);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.collect()));
    heap.embedder()
        .panic_trace_id
        .store(0, std::sync::atomic::Ordering::Relaxed);
    assert!(r.is_err(), "tracing object 7 panics");
    assert_eq!(
        heap.registered_finalizers(),
        1,
        "the finalizer stays registered"
    );
    assert_eq!(weak.get(), Some(x), "the short weak handle is not cleared");
}

#[test]
fn a_callback_in_the_pause_may_read_the_stats_while_weak_handles_exist() {
    let heap = heap(small_config());
    let (tx, rx) = std::sync::mpsc::channel();
    let h = heap.clone();
    std::thread::spawn(move || {
        let mut m = h.mutator().unwrap();
        let o = new_pair(&mut m, 1, None, None).unwrap();
        let _w = m.weak_root(o, WeakKind::Long).unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
        let (s, h2) = (seen.clone(), h.clone());
        *h.embedder().roots_hook.lock() = Some(Box::new(move || {
            *s.lock().unwrap() = Some(h2.stats().weak_handles);
        }));
        m.collect();
        // Break the heap -> hook -> heap cycle.
        *h.embedder().roots_hook.lock() = None;
        let n = *seen.lock().unwrap();
        tx.send(n).unwrap();
    });
    let seen = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the collection finished (no deadlock)");
    assert_eq!(seen, Some(1));
}

/// An ephemeron with a 24-byte embedder header: the test runtime's own
/// header, saying "a vector of one field", then that field, which `trace`
/// visits; the key and value come after it and `trace` never sees them.
fn header_ephemeron(
    m: &mut TestMutator,
    id: u64,
    key: Option<ObjRef>,
    value: Option<ObjRef>,
    field: Option<ObjRef>,
) -> ObjRef {
    let e = m.alloc_ephemeron(key, value).unwrap();
    init_uncleared(e, VECTOR, 1, id);
    set_field(e, 0, field);
    e
}

#[test]
fn an_ephemeron_with_an_embedder_header_is_traced_for_it_and_moves_with_its_key_and_value() {
    // Every collection moves every object (and checks for stale words).
    let heap = heap(Config {
        ephemeron_header: 24,
        verify_compaction: true,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let key = new_pair(&mut m, 1, None, None).unwrap();
    let key_root = m.root(key).unwrap();
    let value = new_pair(&mut m, 2, None, None).unwrap();
    let only_from_header = new_pair(&mut m, 3, None, None).unwrap();
    let e = header_ephemeron(&mut m, 10, Some(key), Some(value), Some(only_from_header));
    let e_root = m.root(e).unwrap();
    assert_eq!(heap.stats().ephemerons, 1);
    m.collect();
    assert!(heap.stats().compaction_totals.objects_moved > 0);
    let (e, key) = (e_root.get().unwrap(), key_root.get().unwrap());
    assert_eq!(header(e), (VECTOR, 1, 10), "the header is the embedder's");
    let (v, h) = (
        heap.ephemeron_value(e).unwrap().unwrap(),
        field(e, 0).unwrap(),
    );
    assert_eq!(
        heap.ephemeron_key(e).unwrap(),
        Some(key),
        "key followed its object"
    );
    assert_eq!((header(v).2, header(h).2), (2, 3));
    assert_eq!(
        heap.stats().last_marked,
        4,
        "key, value, header field, ephemeron"
    );

    drop(key_root);
    m.collect();
    let e = e_root.get().unwrap(); // moved again
    assert_eq!(heap.ephemeron_key(e).unwrap(), None);
    assert_eq!(heap.ephemeron_value(e).unwrap(), None);
    assert_ne!(field(e, 0), Some(h), "moved again");
    assert_eq!(
        field(e, 0).map(|h| header(h).2),
        Some(3),
        "the header's field is kept"
    );
    assert_eq!(
        heap.stats().last_marked,
        2,
        "ephemeron and its header field"
    );
    assert_eq!(heap.stats().ephemerons, 1);
    drop(e_root);
    m.collect();
    assert_eq!(heap.stats().ephemerons, 0);
    m.finish_sweep();
    assert!(!heap.is_object(e.as_ptr()));
    // An object in the freed slot is no ephemeron.
    let again = (0..4000)
        .map(|i| new_pair(&mut m, i, None, None).unwrap())
        .find(|o| o.addr() == e.addr());
    if let Some(o) = again {
        assert!(heap.check_ephemeron(o).is_err());
    }
}

#[test]
fn an_ephemeron_header_must_be_whole_words_and_small() {
    for h in [4, 520] {
        let r = Heap::new(
            Config {
                ephemeron_header: h,
                ..small_config()
            },
            TestVm::default(),
        );
        assert!(
            matches!(r, Err(Error::Config(ref s)) if s.contains("ephemeron_header")),
            "{h}"
        );
    }
}

#[test]
fn disappearing_links_outside_the_heap_hold_disguised_pointers_and_are_cleared_when_the_target_dies(
) {
    for kind in [WeakKind::Short, WeakKind::Long] {
        let h = heap(small_config());
        let mut m = h.mutator().unwrap();
        let kept = new_pair(&mut m, 1, None, None).unwrap();
        let _root = m.root(kept).unwrap();
        let dies = new_pair(&mut m, 2, None, None).unwrap();
        let moved = new_pair(&mut m, 3, None, None).unwrap();
        // Links in malloc'd memory, holding the targets disguised (as
        // GC_HIDE_POINTER does): the collector never reads them.
        let mut links: Box<[usize; 4]> = Box::new([!kept.addr(), !dies.addr(), 0, 0]);
        let base = links.as_mut_ptr().cast::<*mut u8>();
        // SAFETY: the box outlives the registrations (all end below).
        unsafe {
            m.register_disappearing_link(base, kept, kind).unwrap();
            m.register_disappearing_link(base.add(1), dies, kind)
                .unwrap();
            m.register_disappearing_link(base.add(2), moved, kind)
                .unwrap();
            assert!(matches!(
                m.register_disappearing_link(base, dies, kind),
                Err(mosaic::Error::AlreadyRegistered { .. })
            ));
        }
        links[2] = !moved.addr();
        // A rehash moves link 2 to slot 3.
        assert!(m
            .move_weak_slot(unsafe { base.add(2) }, unsafe { base.add(3) })
            .unwrap());
        links[3] = links[2];
        links[2] = 0;
        assert!(!m
            .move_weak_slot(unsafe { base.add(2) }, unsafe { base.add(3) })
            .unwrap());
        m.collect();
        assert_eq!(links[0], !kept.addr(), "a live target's link is left alone");
        assert_eq!(links[1], 0, "a dead target's link is cleared");
        assert_eq!(links[3], 0, "the moved registration was cleared");
        // Cleared links are no longer registered; the live one still is.
        assert!(!m.unregister_weak_slot(unsafe { base.add(1) }));
        assert!(m.unregister_weak_slot(base));
        drop(_root);
        m.collect();
        assert_eq!(links[0], !kept.addr(), "unregistered: never cleared");
    }
}

/// A weak slot whose holder is unreachable but kept for its finalizer
/// keeps its registration (the holder is marked only after the short
/// references were looked at), and a holder that dies for good takes its
/// registrations, short and long, with it; a slot outside any object
/// found dead this way is left alone.
#[test]
fn weak_slots_of_a_holder_kept_for_its_finalizer_stay_registered_until_it_dies() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let target = new_pair(&mut m, 1, None, None).unwrap();
    let _t = m.root(target).unwrap();
    let holder = weak_box(&mut m, 2, 2);
    set_word(holder, 0, Some(target));
    set_word(holder, 1, Some(target));
    // SAFETY: words of a live object.
    unsafe {
        m.register_weak_slot(word_slot(holder, 0), WeakKind::Short)
            .unwrap();
        m.register_weak_slot(word_slot(holder, 1), WeakKind::Long)
            .unwrap();
    }
    m.register_finalizer(holder, FinalizerOrder::Ordered, |_, _| {})
        .unwrap();
    // Another holder with a short slot that simply dies.
    let other = weak_box(&mut m, 3, 1);
    set_word(other, 0, Some(target));
    // SAFETY: a word of a live object.
    unsafe {
        m.register_weak_slot(word_slot(other, 0), WeakKind::Short)
            .unwrap()
    };
    assert_eq!(heap.stats().weak_slots, 3);
    m.collect();
    assert_eq!(
        heap.stats().weak_slots,
        2,
        "the finalizable holder's two slots stay, the dead one's goes"
    );
    assert_eq!(
        word(holder, 0),
        Some(target),
        "a live target is not cleared"
    );
    assert_eq!(word(holder, 1), Some(target));
    assert_eq!(m.run_finalizers().unwrap(), 1);
    m.collect();
    assert_eq!(heap.stats().weak_slots, 0, "the holder died for good");
}
