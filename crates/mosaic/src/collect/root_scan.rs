//! The strong roots of a collection (step 2 of a collection, `cycle.rs`):
//! root handles with every live mutator's scope slots and
//! `Embedder::mutator_roots`, the embedder's `roots`, and the objects
//! waiting in the finalizer queue.
//!
//! They come in tasks so that parallel marking (`par_mark.rs`) can hand
//! them to different workers: [`ROOT_TASKS`] fixed ones, then one per
//! root table for its owner's `Embedder::mutator_roots` (a runtime's
//! per-thread roots can be most of a pause: two threads' 65,536-slot
//! rings were one worker's 0.8 ms while the other idled). The serial
//! marker (`closure.rs`) and verify mode (`verify.rs`, through `cycle.rs`)
//! visit them all with [`scan_roots`]. The handle scan is one task, so
//! every root table's lock is held for the whole of it
//! (`RootTable::scan_all`); `mutator_roots` needs no lock (its mutator is
//! stopped).

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
    for task in 0..strong_task_count(handles) {
        scan_root_task(core, handles, task, tracer);
    }
}

/// Runs every task of [`root_task_count`]: what the serial marker starts from.
pub fn scan_marking_roots<E: Embedder, T: Tracer>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    tracer: &mut T,
) {
    for task in 0..root_task_count(core, handles) {
        scan_root_task(core, handles, task, tracer);
    }
}

/// The fixed tasks of the strong roots (before one per root table).
pub const ROOT_TASKS: usize = 3;

/// The strong roots' tasks: the fixed ones and one per root table.
pub fn strong_task_count(handles: &[Arc<RootTable>]) -> usize {
    ROOT_TASKS + handles.len()
}

/// The tasks the marker runs: the strong roots, then (a minor collection)
/// the remembered set and the rescan of unbarriered old objects
/// (`generations.rs`).
pub fn root_task_count<E: Embedder>(core: &HeapCore<E>, handles: &[Arc<RootTable>]) -> usize {
    strong_task_count(handles) + core.generations.extra_tasks()
}

/// Visits the roots of one task: 0, the handle tables with every mutator's
/// scope slots (one task, so the scan holds every table's lock throughout)
/// and their conservative stacks; 1, the embedder's `roots` (then the
/// stacks instead, if `Embedder::STACKS_AFTER_ROOTS`); 2, the finalizer
/// queue; then one task per root table, its owner's `mutator_roots`; then
/// a minor collection's extra tasks (`generations.rs`).
pub fn scan_root_task<E: Embedder, T: Tracer>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    task: usize,
    tracer: &mut T,
) {
    match task {
        0 => RootTable::scan_all(handles, !E::STACKS_AFTER_ROOTS, tracer, |_, _| {}),
        1 => {
            core.embedder.roots(tracer);
            if E::STACKS_AFTER_ROOTS {
                RootTable::scan_stacks(handles, tracer);
            }
        }
        2 => core.finalizers.scan_ready(&core.table, tracer),
        t if t < strong_task_count(handles) => handles[t - ROOT_TASKS]
            .visit_mutator_roots(tracer, &mut |m, t| core.embedder.mutator_roots(m, t)),
        t => minor::scan_task(core, t - strong_task_count(handles), tracer),
    }
}
