//! Compaction that respects pinned objects (seed 001).
//!
//! Runs inside a pause, after marking (every live object is marked, every
//! alloc bit exact) and before the pools' pages become unswept. The steps,
//! and where each lives:
//!
//! 1. **Which pools** (`policy.rs`): all of them for an explicit
//!    `Mutator::compact`, `MOSAIC_COMPACT=always` or `verify_compaction`;
//!    with `auto`, the pools whose free slots in partly used pages reach
//!    their live slots.
//! 2. **Lock out readers**: every root table's lock and both weak handle
//!    tables are held until the last reference is updated, so a thread
//!    outside the pause (blocking, or without a mutator) that reads or
//!    writes a handle waits and then sees the new address.
//! 3. **Pins** (`collect/pins.rs`): counted pins and the objects ambiguous
//!    words pointed into get their pin bit for this compaction.
//! 4. **Plan** (`plan.rs`, coordinator): sort each pool's pages (most
//!    pinned first, or by address), two cursors, cross-pool moves from
//!    `Embedder::resize`; sets the mark/forwarded bits of every move.
//! 5. **Evacuate** (`evacuate.rs`, every GC worker): copy, leave the
//!    forwarding address, `Embedder::on_move`.
//! 6. **Update** (`update.rs`): object fields on every worker, then roots,
//!    weak references, ephemerons and finalizer registrations.
//! 7. **Verify** (`verify_compaction` or `verify`): no reference anywhere
//!    still holds an old address; the diagnostic names the slot.
//! 8. **Clean up**: forwarded bits and the pins of step 3 are cleared.
//!    The emptied pages have no mark bit: the release phase that follows
//!    gives them back, and the pause decommits the free pages (RSS falls).
//!
//! Large objects never move.

mod evacuate;
mod plan;
mod policy;
mod update;

use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

use self::plan::Mode;
use self::update::{trace_live, visit_roots, Forwarder, StaleCheck};
use super::callbacks::PanicSlot;
use super::counters::CompactionStats;
use super::heap::HeapCore;
use super::roots::RootTable;
use crate::config::{CompactOrder, CompactPolicy};
use crate::embedder::Embedder;

pub use policy::fragmented;

/// A compaction's result: its stats and, in verify modes, a diagnostic.
pub struct Compacted {
    pub stats: CompactionStats,
    pub stale: Option<String>,
}

/// Compacts the pools the policy (or `request`) chooses; `None` if none.
/// `ambiguous`: the objects ambiguous words pinned in this collection.
pub fn compact<E: Embedder>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    ambiguous: &[usize],
    request: Option<CompactOrder>,
    panics: &mut PanicSlot,
) -> Option<Compacted> {
    let verify_all = core.config.verify_compaction;
    let all = verify_all || request.is_some() || core.config.compact == CompactPolicy::Always;
    let which: Vec<bool> = core
        .pools
        .iter()
        .map(|p| all || (core.config.compact == CompactPolicy::Auto && fragmented(core, p)))
        .collect();
    if !which.contains(&true) {
        return None;
    }
    let start = Instant::now();
    let guards = RootTable::lock_all(handles);
    let weak = core.weak.pause();
    let pins = core.pins.materialise(&core.table, ambiguous);
    let mode = if verify_all {
        Mode::EvacuateAll
    } else {
        Mode::TwoFinger(request.unwrap_or(core.config.compact_toward))
    };
    let plan = plan::plan(core, &which, mode, panics);
    for (pool, &n) in core.pools.iter().zip(&plan.moved_in) {
        if n > 0 {
            pool.note_moved_in(n);
        }
    }
    core.span(
        "compact plan",
        start,
        Some(("moves", plan.moves.len() as u64)),
    );
    evacuate::evacuate(core, &plan.moves, panics);

    let t = Instant::now();
    let fwd = Forwarder::new(&core.table);
    trace_live(core, "update", || fwd);
    visit_roots(core, handles, &guards, &mut { fwd });
    let f = |v: usize| fwd.forward(v);
    weak.update_moved(&f);
    core.ephemerons.update_moved(&core.table, &f);
    core.finalizers.update_moved(&core.table, &f);
    core.span("update roots", t, None);

    let stale = if verify_all || core.config.verify {
        let t = Instant::now();
        let s = check(core, handles, &guards, &weak);
        core.span("verify compaction", t, None);
        s
    } else {
        None
    };
    for &p in &plan.sources {
        let d = core.table.desc(p);
        d.forwarded.clear_first(d.bitmap_words());
    }
    pins.clear(&core.table);
    drop(weak);
    drop(guards);
    let stats = CompactionStats {
        objects_moved: plan.moves.len() as u64,
        bytes_moved: plan.moves.iter().map(|m| m.old_size as u64).sum(),
        cross_pool_moves: plan.cross_pool as u64,
        pinned_objects: plan.pinned as u64,
        pages_emptied: plan.emptied as u64,
        pools: which.iter().filter(|&&w| w).count() as u32,
        time: start.elapsed(),
    };
    Some(Compacted { stats, stale })
}

/// Looks for a reference still holding an old address, everywhere the
/// update looked (see `update.rs`); the first one found, described.
fn check<E: Embedder>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    guards: &[parking_lot::MutexGuard<'_, super::handles::Words>],
    weak: &super::weak::WeakPause<'_>,
) -> Option<String> {
    let mut c = StaleCheck::new(&core.table);
    c.scan_objects(core);
    visit_roots(core, handles, guards, &mut c);
    let c = Mutex::new(c);
    let probe = |what: &'static str| {
        let c = &c;
        move |v: usize| {
            c.lock().check(v, || format!("a {what}"));
            None
        }
    };
    weak.update_moved(&probe("weak reference"));
    core.ephemerons
        .update_moved(&core.table, &probe("ephemeron"));
    core.finalizers
        .update_moved(&core.table, &probe("finalizer registration"));
    c.into_inner().error
}
