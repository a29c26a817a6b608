//! Parallel marking of the strong closure on the GC workers.
//!
//! Every worker marks from a private stack, exactly as the serial marker
//! does (a `Vec`, buffered prefetch, no atomics per push or pop), and sets
//! mark bits with plain stores too: two workers may reach one object, or
//! store one mark word at once and lose a bit, so each also records what it
//! marked in its own bits (`own_marks.rs`), ORed into the shared ones when
//! every worker is done (atomic read-modify-writes instead if the address
//! space for them is refused). Every `SHARE_EVERY` objects a worker
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
use std::time::{Duration, Instant};

use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use parking_lot::Mutex;

use super::heap::HeapCore;
use super::mark::{is_chunk_entry, Marker};
use super::own_marks::{merge_all, OwnMarks};
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
    /// Objects, bytes and pins marked, and the time spent on roots and
    /// marking (not waiting for work, nor for a wake-up), summed over the
    /// workers.
    marked: Mutex<(usize, usize, Vec<usize>, Duration)>,
}

/// Marks everything reachable from the strong roots on every GC worker.
/// Returns the objects and bytes marked, the objects ambiguous words
/// pinned (when `pins`), and the workers' busy time summed (roots,
/// marking and the merge, not waiting for work or for a wake-up: about
/// what one thread would have taken). A panic from embedder code
/// propagates once every worker has stopped.
pub fn strong_closure<E: Embedder>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    pins: bool,
) -> (usize, usize, Vec<usize>, Duration) {
    on_workers(core, handles, pins, Vec::new())
}

/// The rest of a strong closure that began on the collecting thread alone
/// and called for help (`closure.rs`): the roots are scanned and `work`
/// (mark stack entries of marked objects) is what is left to trace; every
/// worker takes from it. Returns what [`strong_closure`] returns, for
/// the objects marked from here on.
pub fn finish_closure<E: Embedder>(
    core: &HeapCore<E>,
    pins: bool,
    work: Vec<usize>,
) -> (usize, usize, Vec<usize>, Duration) {
    on_workers(core, &[], pins, work)
}

/// [`strong_closure`] with `initial` entries in the injector; the root
/// tasks run only when `initial` is empty (a fresh closure).
fn on_workers<E: Embedder>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    pins: bool,
    initial: Vec<usize>,
) -> (usize, usize, Vec<usize>, Duration) {
    let n = core.workers.count();
    let deques: Vec<Worker<usize>> = (0..n).map(|_| Worker::new_lifo()).collect();
    let injector = Injector::new();
    // (No root task is left to take when the closure is resumed.)
    let first_task = if initial.is_empty() {
        0
    } else {
        usize::MAX / 2
    };
    for e in initial {
        injector.push(e);
    }
    let share = Share {
        injector,
        stealers: deques.iter().map(Worker::stealer).collect(),
        deques: deques.into_iter().map(|d| Mutex::new(Some(d))).collect(),
        term: Termination::new(core.workers.oversubscribed()),
        next_task: AtomicUsize::new(first_task),
        marked: Mutex::new((0, 0, Vec::new(), Duration::ZERO)),
    };
    let owns = own_marks_for(core, n);
    // (A pool thread that comes after the caller's share has returned
    // skips the phase: every joined worker was idle, so no work is left.)
    core.workers.run(&|i| {
        share.term.join();
        let deque = share.deques[i].lock().take().expect("one deque per worker");
        let mut own = owns.as_ref().and_then(|o| o[i].lock().take());
        let (r, marked, bytes, mut found, busy) = match own.as_mut() {
            Some(o) => work(
                core,
                handles,
                &share,
                &deque,
                i,
                pins,
                Marker::parallel_with(&core.table, o),
            ),
            None => work(
                core,
                handles,
                &share,
                &deque,
                i,
                pins,
                Marker::parallel(&core.table),
            ),
        };
        if let (Some(o), Some(owns)) = (own, owns.as_ref()) {
            *owns[i].lock() = Some(o);
        }
        if let Err(p) = r {
            share.term.abort();
            // (The workers' own bits are dropped, unmerged, with `owns`.)
            resume_unwind(p);
        }
        let mut t = share.marked.lock();
        t.0 += marked;
        t.1 += bytes;
        t.2.append(&mut found);
        t.3 += busy;
    });
    let (mut objects, mut bytes, pins, mut busy) = share.marked.into_inner();
    if let Some(owns) = owns {
        // Every worker is done: the shared bits get the union of theirs,
        // and the counts come from it (a worker's own count may include
        // an object another worker marked too).
        let t = Instant::now();
        let mut owns: Vec<OwnMarks> = owns.into_iter().filter_map(|o| o.into_inner()).collect();
        (objects, bytes) = merge_all(&mut owns, &core.table);
        core.span("merge marks", t, None);
        busy += t.elapsed();
        core.own_marks.lock().append(&mut owns);
    }
    (objects, bytes, pins, busy)
}

/// Own mark bits for each of `n` workers, from the heap's pool (made on
/// first use); `None` if the embedder does not allow an object traced
/// twice (`Embedder::TRACE_TWICE_OK`) or the address space for one cannot
/// be had: then every worker sets mark bits atomically (a worker's plain
/// store could undo another's atomic one).
fn own_marks_for<E: Embedder>(
    core: &HeapCore<E>,
    n: usize,
) -> Option<Vec<Mutex<Option<OwnMarks>>>> {
    if !E::TRACE_TWICE_OK {
        return None;
    }
    let mut pool = core.own_marks.lock();
    while pool.len() < n {
        match OwnMarks::new(&core.table) {
            Ok(o) => pool.push(o),
            Err(_) => return None,
        }
    }
    Some(pool.drain(..n).map(|o| Mutex::new(Some(o))).collect())
}

/// One worker's roots and marking with `m` (listing pins when `pins`).
/// Returns how it ended (a panic from embedder code is caught), the
/// objects, bytes and pins marked (with own bits the counts are replaced
/// by the merge's, which counts an object two workers marked once), and
/// its time on roots and marking less its waits for work.
fn work<E: Embedder, const OWN: bool>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    share: &Share,
    deque: &Worker<usize>,
    me: usize,
    pins: bool,
    m: Marker<'_, false, OWN>,
) -> (std::thread::Result<()>, usize, usize, Vec<usize>, Duration) {
    let mut m = m
        .generational(core.config.generational)
        .recording_pins(pins);
    // `Heap::is_marked` on this thread (a mark procedure's question) also
    // reads this worker's own bits, which a racing store cannot undo.
    let published = OWN.then(|| m.publish_own());
    let start = Instant::now();
    let mut idle = Duration::ZERO;
    let r = catch_unwind(AssertUnwindSafe(|| {
        scan_root_tasks(core, handles, share, &mut m);
        // (The workers the phase was offered to: a pool thread that comes
        // late skips it, so the spans alone do not say.)
        core.span(
            "roots",
            start,
            Some(("workers", share.stealers.len() as u64)),
        );
        let t = Instant::now();
        idle = mark_until_done(core, share, deque, me, &mut m);
        core.span("mark", t, Some(("objects", m.marked as u64)));
    }));
    drop(published);
    let busy = start.elapsed().saturating_sub(idle);
    (r, m.marked, m.marked_bytes, m.take_pins(), busy)
}

fn scan_root_tasks<E: Embedder, const OWN: bool>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    share: &Share,
    m: &mut Marker<'_, false, OWN>,
) {
    loop {
        let task = share.next_task.fetch_add(1, Relaxed);
        if task >= root_task_count(core, handles) {
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

/// Marks until every worker is out of work. Returns the time this worker
/// spent idle, waiting for work to show up.
fn mark_until_done<E: Embedder, const OWN: bool>(
    core: &HeapCore<E>,
    share: &Share,
    deque: &Worker<usize>,
    me: usize,
    m: &mut Marker<'_, false, OWN>,
) -> Duration {
    let mut idle = Duration::ZERO;
    loop {
        m.drain_sharing(&core.embedder, |stack| {
            // Objects are shared in halves of at least `KEEP`; chunks of a
            // split large object one by one (each is a chunk of work).
            let worth = stack.len() >= 2 * KEEP
                || (stack.len() >= 2 && stack.first().is_some_and(|&e| is_chunk_entry(e)));
            if worth && deque.is_empty() {
                let give = stack.len() / 2;
                for o in stack.drain(..give) {
                    deque.push(o);
                }
            }
            false
        });
        match find_work(share, deque, me, &mut idle) {
            Some(o) => m.push(o),
            None => return idle,
        }
    }
}

/// The next object to trace from anywhere, or `None` when marking is done
/// (or abandoned).
fn find_work(
    share: &Share,
    deque: &Worker<usize>,
    me: usize,
    idle: &mut Duration,
) -> Option<usize> {
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
        let t = Instant::now();
        let done = share.term.idle(visible);
        *idle += t.elapsed();
        if done {
            return None;
        }
    }
}
