//! Parallel marking of the strong closure on the GC workers.
//!
//! Every worker marks from a private stack, exactly as the serial marker
//! does (a `Vec`, buffered prefetch, no atomics per push or pop), except
//! that mark bits are set with an atomic read-modify-write, because two
//! workers may reach one object. Every `SHARE_EVERY` objects a worker
//! whose deque (crossbeam-deque, stealable) is empty moves the older half of
//! its stack there. A worker whose stack runs dry takes from its own deque,
//! then from the injector, then steals from the others.
//!
//! Roots are scanned by the workers too: each takes the next of three root
//! tasks — the handle tables with every mutator's roots (one task, so the
//! collector still holds every table's lock for the whole handle scan), the
//! embedder's `roots`, and the finalizer queue — and pushes most of what
//! it found to the global injector, for every worker to take.
//!
//! Termination (`sched/termination.rs`, checked with loom): a worker that
//! finds no work anywhere counts itself idle and watches the injector and
//! the deques, leaving the idle count when one of them holds work; marking
//! is complete when every worker is idle. A panic in `trace` or a roots
//! callback aborts the phase, which ends every worker's search; the
//! collection is then abandoned by the caller (`cycle.rs`).

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use parking_lot::Mutex;

use super::heap::HeapCore;
use super::mark::Marker;
use super::root_scan::{root_task_count, scan_root_task};
use super::roots::RootTable;
use crate::embedder::Embedder;
use crate::sched::Termination;

/// A worker keeps at least this many objects when it shares its stack.
const KEEP: usize = 16;

/// What the workers of one marking phase share.
struct Share {
    injector: Injector<usize>,
    stealers: Vec<Stealer<usize>>,
    /// Each worker's deque, taken by that worker when the phase starts.
    deques: Vec<Mutex<Option<Worker<usize>>>>,
    term: Termination,
    /// The next root task to take.
    next_task: AtomicUsize,
    /// Objects and bytes marked, summed over the workers.
    marked: Mutex<(usize, usize, Vec<usize>)>,
}

/// Marks everything reachable from the strong roots on every GC worker.
/// Returns the objects and bytes marked and the objects ambiguous words
/// pinned (when `pins`). A panic from embedder code propagates once every worker has
/// stopped.
pub fn strong_closure<E: Embedder>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    pins: bool,
) -> (usize, usize, Vec<usize>) {
    let n = core.workers.count();
    let deques: Vec<Worker<usize>> = (0..n).map(|_| Worker::new_lifo()).collect();
    let share = Share {
        injector: Injector::new(),
        stealers: deques.iter().map(Worker::stealer).collect(),
        deques: deques.into_iter().map(|d| Mutex::new(Some(d))).collect(),
        term: Termination::new(n),
        next_task: AtomicUsize::new(0),
        marked: Mutex::new((0, 0, Vec::new())),
    };
    core.workers.run(&|i| {
        let deque = share.deques[i].lock().take().expect("one deque per worker");
        let mut m = Marker::parallel(&core.table)
            .generational(core.config.generational)
            .recording_pins(pins);
        let r = catch_unwind(AssertUnwindSafe(|| {
            let t = Instant::now();
            scan_root_tasks(core, handles, &share, &mut m);
            core.span("roots", t, None);
            let t = Instant::now();
            mark_until_done(core, &share, &deque, i, &mut m);
            core.span("mark", t, Some(("objects", m.marked as u64)));
        }));
        if let Err(p) = r {
            share.term.abort();
            resume_unwind(p);
        }
        let mut t = share.marked.lock();
        t.0 += m.marked;
        t.1 += m.marked_bytes;
        t.2.append(&mut m.pins);
    });
    share.marked.into_inner()
}

fn scan_root_tasks<E: Embedder>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    share: &Share,
    m: &mut Marker<'_>,
) {
    loop {
        let task = share.next_task.fetch_add(1, Relaxed);
        if task >= root_task_count(core) {
            return;
        }
        scan_root_task(core, handles, task, m);
        // What a root scan found goes to the injector (but a few), so that
        // the other workers start on it at once.
        m.with_stack(|stack| {
            if stack.len() > KEEP {
                for o in stack.drain(KEEP..) {
                    share.injector.push(o);
                }
            }
        });
    }
}

fn mark_until_done<E: Embedder>(
    core: &HeapCore<E>,
    share: &Share,
    deque: &Worker<usize>,
    me: usize,
    m: &mut Marker<'_>,
) {
    loop {
        m.drain_sharing(&core.embedder, |stack| {
            if stack.len() >= 2 * KEEP && deque.is_empty() {
                let give = stack.len() / 2;
                for o in stack.drain(..give) {
                    deque.push(o);
                }
            }
        });
        match find_work(share, deque, me) {
            Some(o) => m.push(o),
            None => return,
        }
    }
}

/// The next object to trace from anywhere, or `None` when marking is done
/// (or abandoned).
fn find_work(share: &Share, deque: &Worker<usize>, me: usize) -> Option<usize> {
    let n = share.stealers.len();
    loop {
        if share.term.aborted() {
            return None;
        }
        if let Some(o) = deque.pop() {
            return Some(o);
        }
        let mut retry = false;
        match share.injector.steal_batch_and_pop(deque) {
            Steal::Success(o) => return Some(o),
            Steal::Retry => retry = true,
            Steal::Empty => {}
        }
        for k in 1..n {
            match share.stealers[(me + k) % n].steal_batch_and_pop(deque) {
                Steal::Success(o) => return Some(o),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
        }
        if retry {
            continue;
        }
        // Nothing anywhere: idle until work shows up or everyone is idle.
        let visible = || !share.injector.is_empty() || share.stealers.iter().any(|s| !s.is_empty());
        if share.term.idle(visible) {
            return None;
        }
    }
}
