//! The heap survives panicking callbacks, racing roots and misuse (issue 6).
//!
//! Each test reproduces one defect an independent audit found; each failed
//! on the code before its fix.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc;
use std::time::Duration;

use common::*;
use mosaic::{AllocFlags, Config, ObjRef, PAGE_SIZE};

/// Runs `f` on a thread and fails the test if it has not finished in `secs`
/// (a deadlock must fail the test, not hang the suite).
fn within<T: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(Ok(v)) => v,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("{what}: still running after {secs} s (deadlock)"),
    }
}

// Item 1: a panic inside `trace` must not leave mark bits behind.
#[test]
fn a_panic_in_trace_abandons_the_collection_cleanly() {
    quiet_expected_panics();
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let c = new_pair(&mut m, 3, None, None).unwrap();
    let b = new_pair(&mut m, 2, Some(c), None).unwrap();
    let a = new_pair(&mut m, 1, Some(b), None).unwrap();
    let root = m.root(a).unwrap();
    heap.embedder().panic_trace_id.store(1, Relaxed);
    let r = catch_unwind(AssertUnwindSafe(|| m.collect()));
    assert!(r.is_err(), "the embedder's panic propagates");
    heap.embedder().panic_trace_id.store(0, Relaxed);
    // The heap is consistent: the next collection marks a, b and c.
    m.collect();
    assert_eq!(heap.stats().last_marked, 3);
    m.finish_sweep();
    for i in 0..20_000 {
        new_pair(&mut m, 100 + i, None, None).unwrap();
    }
    let a = root.get().unwrap();
    assert_eq!(field(a, 0), Some(b));
    assert_eq!(field(b, 0), Some(c));
    assert_eq!(
        [header(a).2, header(b).2, header(c).2],
        [1, 2, 3],
        "no live slot was handed out again"
    );
    assert_eq!(reachable_ids([a]).len(), 3);
}

// Item 1, the roots callback too.
#[test]
fn a_panic_in_roots_abandons_the_collection_cleanly() {
    quiet_expected_panics();
    struct PanickyRoots(
        std::sync::atomic::AtomicBool,
        parking_lot::Mutex<Vec<usize>>,
    );
    // SAFETY: objects are 32-byte pairs of references; roots are the globals.
    unsafe impl mosaic::Embedder for PanickyRoots {
        fn trace<T: mosaic::Tracer>(&self, obj: ObjRef, t: &mut T) {
            let f = obj.as_ptr() as *mut *mut u8;
            // SAFETY: every object is a pair.
            unsafe {
                t.visit(&mut *f);
                t.visit(&mut *f.add(1));
            }
        }
        fn roots<T: mosaic::Tracer>(&self, t: &mut T) {
            for g in self.1.lock().iter_mut() {
                let mut p = *g as *mut u8;
                t.visit(&mut p);
            }
            if self.0.load(Relaxed) {
                panic!("test: roots panics");
            }
        }
    }
    let heap = mosaic::Heap::new(
        small_config(),
        PanickyRoots(Default::default(), Default::default()),
    )
    .unwrap();
    let mut m = heap.mutator().unwrap();
    let leaf = m.alloc(16).unwrap();
    let top = m.alloc(16).unwrap();
    // SAFETY: a fresh 16-byte pair.
    unsafe { (top.as_ptr() as *mut *mut u8).write(leaf.as_ptr()) };
    heap.embedder().1.lock().push(top.addr());
    heap.embedder().0.store(true, Relaxed);
    assert!(catch_unwind(AssertUnwindSafe(|| m.collect())).is_err());
    heap.embedder().0.store(false, Relaxed);
    m.collect();
    assert_eq!(heap.stats().last_marked, 2, "top and leaf are marked again");
}

/// Pairs (live, rooted, each holding a child string) interleaved on the same
/// pages with dead strings that ask for cleanup.
fn live_and_dead_cleanup_objects(m: &mut TestMutator, n: u64) -> Vec<mosaic::Root> {
    let mut roots = vec![];
    for i in 0..n {
        let child = new_bytes(m, 10_000 + i, 8, AllocFlags::NONE).unwrap();
        let r = m.root(child).unwrap();
        let p = new_pair(m, 20_000 + i, r.get(), None).unwrap();
        roots.push(m.root(p).unwrap());
        new_bytes(m, 30_000 + i, 16, AllocFlags::NEEDS_CLEANUP).unwrap();
    }
    roots
}

fn check_live(roots: &[mosaic::Root]) {
    for (i, r) in roots.iter().enumerate() {
        let p = r.get().unwrap();
        assert_eq!(header(p).2, 20_000 + i as u64, "pair {i}");
        let child = field(p, 0).unwrap();
        assert_eq!(header(child).2, 10_000 + i as u64, "child of pair {i}");
        assert!(bytes_match(child, (10_000 + i as u64) as u8));
    }
}

// Item 2: a panic inside `on_free` during lazy sweeping.
#[test]
fn a_panic_in_on_free_while_sweeping_lazily_leaves_the_page_consistent() {
    quiet_expected_panics();
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let n = 3000;
    let roots = live_and_dead_cleanup_objects(&mut m, n);
    // The last dead object: the collections during setup cannot have freed it.
    let victim = 30_000 + n - 1;
    heap.embedder().panic_free_id.store(victim, Relaxed);
    m.collect();
    // Allocation sweeps lazily and meets the panicking on_free.
    let mut panicked = false;
    for i in 0..200_000u64 {
        let r = catch_unwind(AssertUnwindSafe(|| {
            new_bytes(&mut m, 50_000 + i, 16, AllocFlags::NONE).unwrap();
        }));
        if r.is_err() {
            panicked = true;
            break;
        }
    }
    assert!(panicked, "on_free({victim}) ran during a lazy sweep step");
    heap.embedder().panic_free_id.store(0, Relaxed);
    check_live(&roots);
    m.collect();
    m.finish_sweep();
    check_live(&roots);
    assert_eq!(heap.stats().last_marked, 2 * n);
    assert_eq!(
        heap.stats().live_objects(),
        2 * n,
        "every dead slot was freed"
    );
    let mut freed: Vec<u64> = heap.embedder().freed.lock().clone();
    freed.sort_unstable();
    assert_eq!(
        freed,
        (30_000..30_000 + n).collect::<Vec<_>>(),
        "on_free ran exactly once for each dead cleanup object"
    );
    for i in 0..50_000 {
        new_pair(&mut m, 90_000 + i, None, None).unwrap();
    }
    check_live(&roots);
}

// Item 2, eager sweeping: the panic surfaces from the pause.
#[test]
fn a_panic_in_on_free_during_an_eager_sweep_propagates_after_the_pause() {
    quiet_expected_panics();
    let heap = heap(Config {
        lazy_sweep: false,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let n = 500;
    let roots = live_and_dead_cleanup_objects(&mut m, n);
    heap.embedder().panic_free_id.store(30_000 + n - 1, Relaxed);
    assert!(catch_unwind(AssertUnwindSafe(|| m.collect())).is_err());
    heap.embedder().panic_free_id.store(0, Relaxed);
    check_live(&roots);
    let mut freed: Vec<u64> = heap.embedder().freed.lock().clone();
    freed.sort_unstable();
    assert_eq!(freed, (30_000..30_000 + n).collect::<Vec<_>>());
    m.collect();
    m.finish_sweep();
    assert_eq!(heap.stats().live_objects(), 2 * n);
    check_live(&roots);
}

// Item 2, large objects: swept in the pause; the panic surfaces after it.
#[test]
fn a_panic_in_on_free_of_a_large_object_frees_every_dead_large_object() {
    quiet_expected_panics();
    // Room for all five objects before any collection.
    let heap = heap(Config {
        heap_min: 16 << 20,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let keep = new_bytes(&mut m, 1, 3 * PAGE_SIZE, AllocFlags::NEEDS_CLEANUP).unwrap();
    let _r = m.root(keep).unwrap();
    for id in 2..=5 {
        new_bytes(&mut m, id, 3 * PAGE_SIZE, AllocFlags::NEEDS_CLEANUP).unwrap();
    }
    heap.embedder().panic_free_id.store(3, Relaxed);
    assert!(catch_unwind(AssertUnwindSafe(|| m.collect())).is_err());
    heap.embedder().panic_free_id.store(0, Relaxed);
    let mut freed = heap.embedder().freed.lock().clone();
    freed.sort_unstable();
    assert_eq!(freed, vec![2, 3, 4, 5]);
    assert_eq!(heap.stats().large.objects, 1);
    assert!(bytes_match(keep, 1));
}

// Item 4: an object that is dead but not yet swept is not an object.
#[test]
fn rooting_a_dead_object_on_an_unswept_page_is_refused() {
    // (The page must stay unswept: no background sweeping.)
    let heap = heap(Config {
        background_sweep: false,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let keep = new_pair(&mut m, 1, None, None).unwrap();
    let _r = m.root(keep).unwrap();
    let dead = new_pair(&mut m, 2, None, None).unwrap();
    m.collect(); // lazy sweeping: the page is unswept now
    assert!(heap.stats().pools.iter().any(|p| p.unswept_pages > 0));
    assert!(!heap.is_object(dead.as_ptr()));
    assert!(m.root(dead).is_err(), "a dead object must not be rooted");
    assert!(heap.object_size(dead).is_err());
    assert!(heap.is_object(keep.as_ptr()), "a live one still is");
    let again = m.root(keep).unwrap();
    m.finish_sweep();
    assert_eq!(header(again.get().unwrap()).2, 1);
    assert!(!heap.is_object(dead.as_ptr()));
}

// Item 5: no callback runs under a lock the API takes.
#[test]
fn on_free_of_a_large_object_may_read_the_stats() {
    within(20, "on_free calling stats", || {
        let heap = heap(small_config());
        let h2 = heap.clone();
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let s2 = seen.clone();
        *heap.embedder().free_hook.lock() = Some(Box::new(move |_| {
            s2.store(h2.stats().large.objects as u64 + 1, Relaxed);
        }));
        let mut m = heap.mutator().unwrap();
        new_bytes(&mut m, 7, 2 * PAGE_SIZE, AllocFlags::NEEDS_CLEANUP).unwrap();
        new_bytes(&mut m, 8, 100, AllocFlags::NEEDS_CLEANUP).unwrap();
        m.collect();
        m.finish_sweep();
        assert!(seen.load(Relaxed) > 0);
        *heap.embedder().free_hook.lock() = None; // breaks the heap → heap cycle
        assert_eq!(heap.embedder().freed.lock().len(), 2);
    });
}

// Item 7: the documented contract — on_free runs on the sweeping thread
// while other mutators keep running.
#[test]
fn on_free_runs_on_the_allocating_thread_while_others_run() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    let heap = heap(small_config());
    let other_running = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let (h2, running, stop2) = (heap.clone(), other_running.clone(), stop.clone());
    let other = std::thread::spawn(move || {
        let mut m = h2.mutator().unwrap();
        while !stop2.load(Relaxed) {
            running.store(true, Relaxed);
            m.safepoint();
        }
    });
    let me = std::thread::current().id();
    let seen = Arc::new(parking_lot::Mutex::new(vec![]));
    let (s2, r2) = (seen.clone(), other_running.clone());
    *heap.embedder().free_hook.lock() = Some(Box::new(move |_| {
        r2.store(false, Relaxed);
        // The other mutator is not stopped: it keeps running meanwhile.
        let t = std::time::Instant::now();
        while !r2.load(Relaxed) && t.elapsed() < Duration::from_secs(5) {}
        s2.lock()
            .push((std::thread::current().id(), r2.load(Relaxed)));
    }));
    let mut m = heap.mutator().unwrap();
    for i in 0..10 {
        new_bytes(&mut m, i + 1, 16, AllocFlags::NEEDS_CLEANUP).unwrap();
    }
    m.collect();
    m.finish_sweep(); // sweeps on this thread, outside the pause
    *heap.embedder().free_hook.lock() = None;
    stop.store(true, Relaxed);
    drop(m);
    other.join().unwrap();
    let seen = seen.lock();
    assert_eq!(seen.len(), 10);
    assert!(seen.iter().all(|&(t, ran)| t == me && ran), "{seen:?}");
}

// Item 10: references outside the heap are legal, also in verify mode.
#[test]
fn verify_mode_accepts_references_to_objects_outside_the_heap() {
    static STATIC_OBJECT: [u64; 4] = [0; 4];
    let heap = heap(Config {
        verify: true,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let outside = ObjRef::from_ptr(STATIC_OBJECT.as_ptr() as *mut u8);
    let p = new_pair(&mut m, 1, outside, None).unwrap();
    let _r = m.root(p).unwrap();
    heap.embedder()
        .globals
        .lock()
        .push(STATIC_OBJECT.as_ptr() as usize + 8);
    m.collect();
    assert_eq!(heap.stats().last_marked, 1);
    assert_eq!(field(p, 0), outside);
}

// Item 11: large objects of 4 GiB and more keep their size.
#[test]
fn a_large_object_of_more_than_4_gib_reports_its_size() {
    let size = (4usize << 30) + 4096 + 3;
    let heap = heap(Config {
        max_heap: 8 << 30,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let big = m.alloc_with(size, AllocFlags::NO_POINTERS).unwrap();
    assert_eq!(heap.object_size(big).unwrap(), size);
    let s = heap.stats();
    assert_eq!(s.large.allocated_bytes, size as u64);
    m.collect();
    let s = heap.stats();
    assert_eq!((s.large.objects, s.large.freed_bytes), (0, size as u64));
}

// Item 13: the maximum heap bounds committed heap memory.
#[test]
fn committed_memory_never_exceeds_the_maximum_heap() {
    let max = 64 << 20;
    let heap = heap(Config {
        max_heap: max,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let mut worst = 0;
    // 16 MiB of live small objects, then 16 MiB of garbage on pages of their
    // own: after sweeping, the garbage pages wait committed in the page
    // resource for the pool to grow back into.
    let keep = m.empty_root();
    for i in 0..(16u64 << 20) / 64 {
        let v = new_vector(&mut m, i, 6).unwrap();
        set_field(v, 0, keep.get());
        keep.set(Some(v));
    }
    for i in 0..(16u64 << 20) / 64 {
        new_vector(&mut m, 1_000_000 + i, 6).unwrap();
    }
    m.collect();
    m.finish_sweep();
    // Large objects then take every page left, from fresh address space.
    let mut bigs = vec![];
    let mut n = 0u64;
    while let Ok(o) = new_bytes(&mut m, n, (1 << 20) - 64, AllocFlags::NONE) {
        bigs.push(m.root(o).unwrap());
        n += 1;
        worst = worst.max(heap.stats().committed_bytes);
        if n > 200 {
            break;
        }
    }
    assert!(n > 0);
    assert!(
        worst <= max,
        "committed {} MiB under a {} MiB maximum",
        worst >> 20,
        max >> 20
    );
    assert_eq!(reachable_ids(keep.get()).len() as u64, (16 << 20) / 64);
}

// Item 6: a thread that exits without dropping its mutator.
#[test]
fn a_thread_that_leaks_its_mutator_does_not_hang_collections() {
    within(20, "collect after a thread leaked its mutator", || {
        let heap = heap(small_config());
        let h2 = heap.clone();
        let leaked = std::thread::spawn(move || {
            let mut m = h2.mutator().unwrap();
            new_pair(&mut m, 1, None, None).unwrap();
            // Leaked: the thread ends without dropping its mutator.
            Box::into_raw(Box::new(m)) as usize
        })
        .join()
        .unwrap();
        let mut m = heap.mutator().unwrap();
        let keep = new_pair(&mut m, 2, None, None).unwrap();
        let _r = m.root(keep).unwrap();
        m.collect();
        assert_eq!(heap.stats().last_marked, 1);
        // SAFETY: the leaked mutator's thread has exited, so nothing else
        // uses it; dropping it here is the "free it later" case.
        drop(unsafe { Box::from_raw(leaked as *mut TestMutator) });
        m.collect();
        assert_eq!(heap.stats().last_marked, 1);
    });
}

// Item 6: two mutators of one heap on one thread would deadlock a collection.
#[test]
fn a_second_mutator_of_the_same_heap_on_one_thread_is_refused() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    match heap.mutator() {
        Err(e @ mosaic::Error::MutatorExists { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("already has a mutator of this heap"), "{msg}");
            assert!(msg.contains("(tid "), "names the thread: {msg}");
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a second mutator on the same thread was accepted"),
    }
    // Another heap is fine, and so is a new mutator once the first is gone.
    let other = common::heap(small_config());
    let _m2 = other.mutator().unwrap();
    let keep = new_pair(&mut m, 1, None, None).unwrap();
    let r = m.root(keep).unwrap();
    drop(m);
    let mut m = heap.mutator().unwrap();
    m.collect();
    assert_eq!(
        heap.stats().last_marked,
        1,
        "the old mutator's roots live on"
    );
    assert_eq!(header(r.get().unwrap()).2, 1);
}

/// Spawns a thread that runs `setup` (which makes a mutator) and then,
/// from a thread-local destructor that runs after Mosaic's exit hook has
/// detached that mutator, the closure `setup` returned: a thread's late
/// destructors using an orphaned mutator.
fn spawn_with_late_destructor(
    setup: impl FnOnce() -> Box<dyn FnOnce()> + Send + 'static,
) -> std::thread::JoinHandle<()> {
    use std::cell::RefCell;
    thread_local! {
        static LATE: RefCell<Option<Box<dyn FnOnce()>>> = const { RefCell::new(None) };
    }
    struct RunLate;
    impl Drop for RunLate {
        fn drop(&mut self) {
            if let Some(f) = LATE.with(|l| l.borrow_mut().take()) {
                f();
            }
        }
    }
    thread_local!(static TRIGGER: RunLate = const { RunLate });
    std::thread::spawn(move || {
        // Thread-local destructors run last-registered first: touching
        // LATE and TRIGGER before the mutator exists makes Mosaic's exit
        // hook (registered by `mutator()`) run first and detach it;
        // TRIGGER's destructor then uses the orphan, which must re-attach.
        LATE.with(|_| {});
        TRIGGER.with(|_| {});
        let late = setup();
        LATE.with(|l| *l.borrow_mut() = Some(late));
    })
}

// Item 6: a mutator leaked by its thread is detached, and if the thread's
// later destructors use it again it takes part in pauses again.
#[test]
fn a_mutator_used_after_its_thread_exit_hook_rejoins_the_world() {
    within(30, "collections around an exiting thread", || {
        let heap = heap(small_config());
        let h2 = heap.clone();
        spawn_with_late_destructor(move || {
            let mut m = h2.mutator().unwrap();
            let seven = new_pair(&mut m, 7, None, None).unwrap();
            let r = m.root(seven).unwrap();
            Box::new(move || {
                for i in 0..5000 {
                    new_pair(&mut m, 100 + i, None, None).unwrap();
                }
                m.collect();
                assert_eq!(h2.stats().last_marked, 1);
                assert_eq!(header(r.get().unwrap()).2, 7);
                drop((r, m, h2));
            })
        })
        .join()
        .unwrap();
        let mut m = heap.mutator().unwrap();
        m.collect();
        m.collect();
        assert_eq!(heap.stats().last_marked, 0);
    });
}

// A mutator whose thread exited, used by a late destructor to change what
// a pause reads (a weak registration), waits for the pause in progress
// (it re-attaches first) instead of changing it under the collector.
#[test]
fn an_orphaned_mutator_waits_for_a_pause_before_touching_weak_state() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    within(30, "a weak registration from an exited thread", || {
        let heap = heap(small_config());
        let h2 = heap.clone();
        let done = Arc::new(AtomicBool::new(false));
        let done2 = done.clone();
        let (ready_tx, ready_rx) = mpsc::channel::<()>();
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let thread = spawn_with_late_destructor(move || {
            let mut m = h2.mutator().unwrap();
            let obj = new_pair(&mut m, 7, None, None).unwrap();
            let r = m.root(obj).unwrap();
            Box::new(move || {
                ready_tx.send(()).unwrap();
                go_rx.recv().unwrap();
                let weak = m.weak_root(obj, mosaic::WeakKind::Short).unwrap();
                done2.store(true, Relaxed);
                assert_eq!(weak.get(), Some(obj));
                drop((weak, r, m, h2));
            })
        });
        ready_rx.recv().unwrap();
        let mut m = heap.mutator().unwrap();
        m.stop_world();
        go_tx.send(()).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let during = done.load(Relaxed);
        m.resume_world();
        thread.join().unwrap();
        assert!(
            !during,
            "the weak handle was made while the world was stopped"
        );
        assert!(done.load(Relaxed));
    });
}

/// Child half of the stall-warning test: run only when asked to.
#[test]
#[ignore = "run by a_stalled_collection_names_the_mutator_it_waits_for"]
fn stalled_collection_child() {
    if std::env::var("MOSAIC_TEST_STALL_CHILD").is_err() {
        return;
    }
    let heap = heap(Config {
        stall_warning_ms: 200,
        ..small_config()
    });
    let h2 = heap.clone();
    let (tx, rx) = mpsc::channel();
    let blocker = std::thread::Builder::new()
        .name("stuck-in-join".into())
        .spawn(move || {
            let _m = h2.mutator().unwrap(); // attached, never polls
            tx.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(1500));
        })
        .unwrap();
    rx.recv().unwrap();
    let mut m = heap.mutator().unwrap();
    m.collect(); // waits until the blocker's mutator is dropped
    blocker.join().unwrap();
    assert_eq!(heap.stats().stall_warnings, 1);
    println!("CHILD DONE");
}

// Item 6: a collection stuck waiting for a mutator says which one, once.
#[test]
fn a_stalled_collection_names_the_mutator_it_waits_for() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "stalled_collection_child",
            "--ignored",
            "--nocapture",
        ])
        .env("MOSAIC_TEST_STALL_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("CHILD DONE"), "{stdout}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("has waited"))
        .collect();
    assert_eq!(warnings.len(), 1, "warned once: {stderr}");
    assert!(
        stderr.contains("\"stuck-in-join\"") && stderr.contains("is running"),
        "names the stuck thread: {stderr}"
    );
    assert!(
        stderr.contains("Mutator::blocking"),
        "says what to do: {stderr}"
    );
}
