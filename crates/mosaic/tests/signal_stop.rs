//! Threads that never poll safepoints, stopped by a signal: while another
//! thread collects over and over, a thread spinning in code that makes no
//! heap call (its list held only in locals and registers) is parked by a
//! signal handler, its stack scanned, and its allocation context flushed
//! for it; the list survives, in place, and the spinner allocates again
//! afterwards from a fresh run. A thread that puts a pause's first signal
//! off (as one inside a call that must not stop) gets another: the
//! collector calls the stop hook again until every thread has stopped.

mod common;

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use common::*;
use mosaic::{Config, ObjRef, SignalParker};

const SIG: i32 = libc::SIGUSR2;

thread_local! {
    static PARKER: Cell<*const SignalParker<TestVm>> = const { Cell::new(std::ptr::null()) };
}

static PARKS: AtomicUsize = AtomicUsize::new(0);
/// The next signal is put off (as by a thread inside a call that must not
/// stop), and counted here.
static PUT_OFF: AtomicBool = AtomicBool::new(false);
static PUT_OFF_COUNT: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_signal(_: i32) {
    if PUT_OFF.swap(false, SeqCst) {
        PUT_OFF_COUNT.fetch_add(1, SeqCst);
        return;
    }
    let p = PARKER.with(|p| p.get());
    if !p.is_null() {
        // SAFETY: the spinner set the pointer to its parker, which it keeps
        // alive while the pointer is set; it makes no heap call while
        // spinning, so the signal interrupts none.
        if unsafe { (*p).park() } {
            PARKS.fetch_add(1, SeqCst);
        }
    }
}

fn install_handler() {
    // SAFETY: a plain handler for a signal nothing else here uses.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(SIG, &sa, std::ptr::null_mut()), 0);
    }
}

/// A stop hook that signals the spinner whose pthread id is in `tid` (0:
/// none yet, or gone), unless the collector is that thread.
fn signal_hook(tid: Arc<AtomicUsize>) -> Box<dyn Fn() + Send + Sync> {
    Box::new(move || {
        let t = tid.load(SeqCst);
        // SAFETY: pthread_self has no preconditions.
        if t != 0 && t != unsafe { libc::pthread_self() } as usize {
            // SAFETY: the spinner clears its id before it exits.
            unsafe { libc::pthread_kill(t as libc::pthread_t, SIG) };
        }
    })
}

#[inline(never)]
fn build(m: &mut TestMutator, n: u64) -> ObjRef {
    let mut head = new_pair(m, 1, None, None).unwrap();
    for i in 2..=n {
        head = new_pair(m, i, Some(head), None).unwrap();
        new_pair(m, 0, None, None).unwrap();
    }
    head
}

fn sum_ids(head: ObjRef) -> u64 {
    let mut s = 0;
    let mut p = Some(head);
    while let Some(o) = p {
        s += header(o).2;
        p = field(o, 0);
    }
    s
}

#[test]
fn a_thread_that_never_polls_is_stopped_by_a_signal_and_its_stack_scanned() {
    install_handler();
    for gc_threads in [1, 2] {
        let h = heap(Config {
            gc_threads,
            verify: true,
            ..small_config()
        });
        let spinner_tid = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let ready = Arc::new(AtomicBool::new(false));
        {
            let tid = spinner_tid.clone();
            h.set_stop_hook(Some(signal_hook(tid)));
        }
        let n = 5_000u64;
        let spinner = {
            let (h, tid, stop, ready) =
                (h.clone(), spinner_tid.clone(), stop.clone(), ready.clone());
            std::thread::spawn(move || {
                let mut m = h.mutator().unwrap();
                m.set_conservative_stack(true).unwrap();
                let parker = m.signal_parker();
                PARKER.with(|p| p.set(&parker));
                // SAFETY: pthread_self has no preconditions.
                tid.store(unsafe { libc::pthread_self() } as usize, SeqCst);
                let head = std::hint::black_box(build(&mut m, n));
                // A partly used run stays in the context while spinning.
                let extra = new_pair(&mut m, 77, None, None).unwrap();
                ready.store(true, SeqCst);
                let mut rounds = 0u64;
                // No heap call in here: only reads of the objects.
                while !stop.load(SeqCst) {
                    assert_eq!(sum_ids(head), n * (n + 1) / 2);
                    assert_eq!(header(extra).2, 77);
                    rounds += 1;
                }
                PARKER.with(|p| p.set(std::ptr::null()));
                tid.store(0, SeqCst);
                // The context was flushed meanwhile: it allocates again.
                let more = build(&mut m, 100);
                assert_eq!(sum_ids(more), 5050);
                assert_eq!(sum_ids(head), n * (n + 1) / 2);
                std::hint::black_box((head, extra));
                rounds
            })
        };
        while !ready.load(SeqCst) {
            std::thread::yield_now();
        }
        let mut m = h.mutator().unwrap();
        let before = PARKS.load(SeqCst);
        for _ in 0..20 {
            for i in 0..2_000 {
                new_pair(&mut m, i, None, None).unwrap();
            }
            m.collect();
            // Held by the spinner's locals alone, the list is marked.
            assert!(h.stats().last_marked > n);
        }
        stop.store(true, SeqCst);
        let rounds = spinner.join().unwrap();
        assert!(rounds > 0);
        assert!(
            PARKS.load(SeqCst) - before >= 20,
            "the spinner was parked by the signal in every pause"
        );
        h.set_stop_hook(None);
    }
}

#[test]
fn a_thread_that_put_the_signal_off_is_asked_again() {
    install_handler();
    let h = heap(small_config());
    let spinner_tid = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let ready = Arc::new(AtomicBool::new(false));
    {
        let tid = spinner_tid.clone();
        h.set_stop_hook(Some(signal_hook(tid)));
    }
    let spinner = {
        let (h, tid, stop, ready) = (h.clone(), spinner_tid.clone(), stop.clone(), ready.clone());
        std::thread::spawn(move || {
            let mut m = h.mutator().unwrap();
            m.set_conservative_stack(true).unwrap();
            let parker = m.signal_parker();
            PARKER.with(|p| p.set(&parker));
            // SAFETY: pthread_self has no preconditions.
            tid.store(unsafe { libc::pthread_self() } as usize, SeqCst);
            let head = std::hint::black_box(build(&mut m, 1_000));
            ready.store(true, SeqCst);
            while !stop.load(SeqCst) {
                assert_eq!(sum_ids(head), 1_000 * 1_001 / 2);
            }
            PARKER.with(|p| p.set(std::ptr::null()));
            tid.store(0, SeqCst);
        })
    };
    while !ready.load(SeqCst) {
        std::thread::yield_now();
    }
    // Collections on another thread, watched: without a second signal
    // they would wait for the spinner for ever.
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let collector = {
        let h = h.clone();
        std::thread::spawn(move || {
            let mut m = h.mutator().unwrap();
            for _ in 0..10 {
                PUT_OFF.store(true, SeqCst);
                m.collect();
            }
            done_tx.send(()).unwrap();
        })
    };
    let finished = done_rx.recv_timeout(std::time::Duration::from_secs(60));
    stop.store(true, SeqCst);
    assert!(
        finished.is_ok(),
        "a collection waited for ever for a thread that put its signal off"
    );
    collector.join().unwrap();
    spinner.join().unwrap();
    assert!(
        PUT_OFF_COUNT.load(SeqCst) >= 10,
        "every pause's first signal was put off"
    );
    h.set_stop_hook(None);
}

#[test]
fn the_resume_hook_runs_once_per_pause_after_the_world_restarts() {
    let h = heap(small_config());
    let stops = Arc::new(AtomicUsize::new(0));
    let resumes = Arc::new(AtomicUsize::new(0));
    let running_at_resume = Arc::new(AtomicUsize::new(0));
    {
        let stops = stops.clone();
        h.set_stop_hook(Some(Box::new(move || {
            stops.fetch_add(1, SeqCst);
        })));
    }
    {
        let (resumes, running, h2) = (resumes.clone(), running_at_resume.clone(), h.clone());
        h.set_resume_hook(Some(Box::new(move || {
            resumes.fetch_add(1, SeqCst);
            // Even: no pause is on any more.
            if h2.stop_sequence() % 2 == 0 {
                running.fetch_add(1, SeqCst);
            }
        })));
    }
    let mut m = h.mutator().unwrap();
    let keep = build(&mut m, 200);
    let root = m.root(keep).unwrap();
    for _ in 0..5 {
        m.collect();
    }
    // A stop that is not a collection's gets the hook too.
    m.stop_world();
    m.resume_world();
    assert_eq!(stops.load(SeqCst), 6, "one stop hook call per pause");
    assert_eq!(resumes.load(SeqCst), 6, "one resume hook call per pause");
    assert_eq!(
        running_at_resume.load(SeqCst),
        6,
        "the resume hook ran after the world restarted"
    );
    // A panicking resume hook: the panic comes out of the collection, the
    // world runs, and the heap goes on.
    h.set_resume_hook(Some(Box::new(|| panic!("resume hook"))));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.collect()));
    assert!(r.is_err(), "the hook's panic comes out of the collection");
    h.set_resume_hook(None);
    m.collect();
    assert_eq!(sum_ids(root.get().unwrap()), 200 * 201 / 2);
    h.set_stop_hook(None);
}

#[test]
fn no_pause_starts_while_the_last_ones_resume_hook_runs() {
    let h = heap(small_config());
    let in_hook = Arc::new(AtomicBool::new(false));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let hooks = Arc::new(AtomicUsize::new(0));
    {
        let (in_hook, overlaps) = (in_hook.clone(), overlaps.clone());
        h.set_stop_hook(Some(Box::new(move || {
            if in_hook.load(SeqCst) {
                overlaps.fetch_add(1, SeqCst);
            }
        })));
    }
    {
        let (in_hook, hooks) = (in_hook.clone(), hooks.clone());
        h.set_resume_hook(Some(Box::new(move || {
            in_hook.store(true, SeqCst);
            hooks.fetch_add(1, SeqCst);
            // Long enough for the other thread to try to stop the world.
            std::thread::sleep(std::time::Duration::from_micros(300));
            in_hook.store(false, SeqCst);
        })));
    }
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let h = h.clone();
            std::thread::spawn(move || {
                let mut m = h.mutator().unwrap();
                for _ in 0..50 {
                    m.collect();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert!(
        hooks.load(SeqCst) >= 50,
        "the resume hook ran after the pauses"
    );
    assert_eq!(
        overlaps.load(SeqCst),
        0,
        "a pause began while the previous one's resume hook ran"
    );
    h.set_resume_hook(None);
    h.set_stop_hook(None);
}
