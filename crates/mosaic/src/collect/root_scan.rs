//! The strong roots of a collection (step 2 of a collection, `cycle.rs`):
//! root handles with every live mutator's scope slots and
//! `Embedder::mutator_roots`, the embedder's `roots`, and the objects
//! waiting in the finalizer queue.
//!
//! They come in [`ROOT_TASKS`] tasks so that parallel marking
//! (`par_mark.rs`) can hand them to different workers; the serial marker
//! (`closure.rs`) and verify mode (`verify.rs`, through `cycle.rs`) visit
//! them all with [`scan_roots`]. The handle scan is one task, so every
//! root table's lock is held for the whole of it (`RootTable::scan_all`).

use std::sync::Arc;

use super::heap::HeapCore;
use super::minor;
use super::roots::RootTable;
use crate::embedder::{Embedder, Tracer};

/// Visits every strong root: handles, scopes, `mutator_roots`, `roots`,
/// and the finalizer queue (a minor collection's remembered set and
/// unbarriered old objects are not roots of the object graph: verify mode
/// walks from these alone).
pub fn scan_roots<E: Embedder, T: Tracer>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    tracer: &mut T,
) {
    for task in 0..ROOT_TASKS {
        scan_root_task(core, handles, task, tracer);
    }
}

/// Runs every task of [`root_task_count`]: what the serial marker starts from.
pub fn scan_marking_roots<E: Embedder, T: Tracer>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    tracer: &mut T,
) {
    for task in 0..root_task_count(core) {
        scan_root_task(core, handles, task, tracer);
    }
}

/// The strong roots come in this many tasks (parallel marking hands them
/// to different workers).
pub const ROOT_TASKS: usize = 3;

/// The tasks the marker runs: the strong roots, then (a minor collection)
/// the remembered set and the rescan of unbarriered old objects
/// (`generations.rs`).
pub fn root_task_count<E: Embedder>(core: &HeapCore<E>) -> usize {
    ROOT_TASKS + core.generations.extra_tasks()
}

/// Visits the roots of one task: 0, the handle tables with every mutator's
/// scope slots and `mutator_roots` (one task, so the scan holds every
/// table's lock throughout) and their conservative stacks; 1, the
/// embedder's `roots` (then the stacks instead, if
/// `Embedder::STACKS_AFTER_ROOTS`); 2, the finalizer queue; from 3 on, a
/// minor collection's extra tasks (`generations.rs`).
pub fn scan_root_task<E: Embedder, T: Tracer>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    task: usize,
    tracer: &mut T,
) {
    match task {
        0 => RootTable::scan_all(handles, !E::STACKS_AFTER_ROOTS, tracer, |m, t| {
            core.embedder.mutator_roots(m, t)
        }),
        1 => {
            core.embedder.roots(tracer);
            if E::STACKS_AFTER_ROOTS {
                RootTable::scan_stacks(handles, tracer);
            }
        }
        2 => core.finalizers.scan_ready(&core.table, tracer),
        _ => minor::scan_task(core, task - ROOT_TASKS, tracer),
    }
}
