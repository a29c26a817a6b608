//! The release phase of a pause: empty pages go back to the page resource
//! on every GC worker (seed 004).
//!
//! After marking, most of a high-turnover heap is pages with no marked
//! object. Lazy sweeping would find each one later, in some allocation's
//! slow path; instead the workers find them in the pause, from the mark
//! bitmap alone, and release them at once. Partly live pages, and empty
//! pages whose dead objects asked for cleanup (`on_free` belongs to the
//! sweep, outside the pause), stay unswept for lazy sweeping.
//!
//! The phase, in order:
//! 1. (coordinator) dead large objects leave the large-object list, and
//!    every pool's unswept pages (just set by `begin_cycle`) are gathered
//!    into one flat list;
//! 2. (every worker) take dead large objects one at a time, then pages in
//!    chunks of [`CHUNK`], both from atomic cursors. A page whose mark
//!    bitmap is clear and that has no cleanup bit is cleared, set `Free`
//!    and put in the worker's own [`ReleaseBuffer`]; a dead large object
//!    gets its `on_free` and its span goes back to the clean set. Each
//!    worker flushes its buffer once, when its share is done;
//! 3. (coordinator) each pool drops the released pages from its unswept
//!    list and counts them as swept (`SizePool::take_released`).
//!
//! Invariant: a page is examined by exactly one worker (the cursor hands
//! out disjoint chunks), it is released at most once, and every page
//! released is in the page resource before `Workers::run` returns, so the
//! coordinator and the mutators that resume after the pause see it.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::callbacks::PanicSlot;
use super::heap::HeapCore;
use crate::embedder::Embedder;
use crate::object::ObjRef;
use crate::space::{PageKind, ReleaseBuffer};

/// Pages a worker takes from the cursor at a time.
pub const CHUNK: usize = 32;

/// What the release phase did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Released {
    /// Empty small-object pages given back.
    pub pages: usize,
    /// Dead large objects freed.
    pub large: usize,
    pub time: Duration,
}

/// One worker's count for one pool: pages released, objects they held.
#[derive(Clone, Copy, Default)]
struct PoolTally {
    pages: usize,
    freed: usize,
}

/// Runs the release phase (see the module docs). Call after every pool's
/// `begin_cycle`, with the world stopped. A panic from a large object's
/// `on_free` is added to `panics` after every object was freed.
pub fn release_phase<E: Embedder>(core: &HeapCore<E>, panics: &mut PanicSlot) -> Released {
    let start = Instant::now();
    let dead_large = core
        .large
        .unlink_dead(&core.table, core.config.generational);
    let mut pages = Vec::new();
    for pool in core.pools.iter() {
        pool.unswept_pages(&mut pages);
    }
    let next_large = AtomicUsize::new(0);
    let next_page = AtomicUsize::new(0);
    let totals = Mutex::new(vec![PoolTally::default(); core.pools.len()]);
    let caught = Mutex::new(PanicSlot::default());
    core.workers.run(&|_| {
        let t = Instant::now();
        let mut panic = PanicSlot::default();
        let mut on_free = |a: usize| {
            panic.call(|| core.embedder.on_free(ObjRef::from_addr(a)));
        };
        loop {
            let i = next_large.fetch_add(1, Relaxed);
            let Some(&head) = dead_large.get(i) else {
                break;
            };
            core.large
                .free_dead(&core.table, &core.resource, head, &mut on_free);
        }
        let mut mine = vec![PoolTally::default(); core.pools.len()];
        let mut buffer = ReleaseBuffer::for_phase();
        loop {
            let from = next_page.fetch_add(CHUNK, Relaxed);
            if from >= pages.len() {
                break;
            }
            for &p in &pages[from..(from + CHUNK).min(pages.len())] {
                let p = p as usize;
                let d = core.table.desc(p);
                if d.has_cleanup() || !d.mark.is_clear(d.slot_count()) {
                    continue;
                }
                let t = &mut mine[d.pool()];
                t.pages += 1;
                t.freed += d.alloc.count_first(d.bitmap_words());
                d.clear_bitmaps();
                d.finish_sweep_publish();
                d.set_zeroed(false);
                d.set_kind(PageKind::Free);
                buffer.release(&core.resource, p);
            }
        }
        buffer.flush(&core.resource);
        let released = mine.iter().map(|t| t.pages as u64).sum();
        core.span("release", t, Some(("pages", released)));
        let mut totals = totals.lock();
        for (t, m) in totals.iter_mut().zip(&mine) {
            t.pages += m.pages;
            t.freed += m.freed;
        }
        drop(totals);
        caught.lock().merge(panic);
    });
    panics.merge(caught.into_inner());
    let mut out = Released {
        large: dead_large.len(),
        ..Released::default()
    };
    for (pool, t) in core.pools.iter().zip(totals.into_inner()) {
        if t.pages > 0 {
            pool.take_released(&core.table, t.pages, t.freed, &core.policy);
            out.pages += t.pages;
        }
    }
    out.time = start.elapsed();
    out
}
