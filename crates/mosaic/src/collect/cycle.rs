//! One collection, top to bottom, in the order of DESIGN.md's "A
//! collection, in order". This file only sequences: each step lives in
//! its own module, which imports the heap's state (`heap.rs`) and never
//! this file.
//!
//! | step | what happens | where |
//! |---|---|---|
//! | 1 stop | every mutator flushes its allocation context and parks; the time to reach the safepoints counts in the pause | the caller (`api/slow_path.rs`, `World::stop`), then [`run_collection`] |
//! | | the previous cycle's sweep is finished, so every alloc bit is exact; `CollectionStart` | `heap.rs` (`finish_sweeping`), `events.rs` |
//! | 2 roots | handles, scopes and `mutator_roots`, `roots`, the finalizer queue | `root_scan.rs` |
//! | 3 mark | the strong closure, serial or on every GC worker | `closure.rs`, `mark.rs`, `par_mark.rs` |
//! | 4 weak phases | ephemerons to a fixed point → short weak cleared → finalizers chosen → long weak cleared | `closure.rs`, `ephemeron_pass.rs`, `weak.rs`, `finalize.rs` |
//! | | verify mode's own walk; `MarkEnd` | `verify.rs` |
//! | 5 compact | when asked or when the policy says so | `compact/`, `pins.rs` |
//! | 6 release | pools' pages become unswept; empty pages and dead large objects go back on every worker; eager mode sweeps the rest | `release.rs` |
//! | 7 resume | counters; the heap policy sets the next target (`HeapResize`); `CollectionEnd`; the caller resumes the world and calls the finalizer notifier | `heap_sizing.rs`, `counters.rs` |
//!
//! A panic from `trace` or `roots` (steps 2–4, or verify) abandons the
//! collection with no mark bit left set; a panic from `on_free`, `on_move`,
//! `resize` or the event listener is resumed once the pause's bookkeeping
//! is complete (see `callbacks.rs`).

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::callbacks::{in_callback, PanicSlot};
use super::closure::{self, Marked};
use super::compact::{self, Compacted};
use super::events::{GcEvent, GcReason};
use super::generations::MinorSample;
use super::heap::{HeapCore, TrimAfterPause};
use super::heap_sizing::CollectionSample;
use super::minor;
use super::release::release_phase;
use super::root_scan::scan_roots;
use super::roots::RootTable;
use super::verify::verify;
use crate::embedder::Embedder;
use crate::space::PAGE_SIZE;

/// Runs one collection. The world must be stopped and every mutator's
/// allocation context flushed (step 1, done by the caller). `handles` are
/// the root tables to scan. `stop_start` is when the world was asked to
/// stop: the pause counts the time mutators took to reach their
/// safepoints.
pub fn run_collection<E: Embedder>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    reason: GcReason,
    stop_start: Instant,
) {
    in_callback(|| pause(core, handles, reason, stop_start))
}

fn pause<E: Embedder>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    reason: GcReason,
    start: Instant,
) {
    // 1. Stop: the world is stopped; reaching the safepoints was part of
    // the pause.
    let time_to_safepoint = start.elapsed();
    core.counters.record_safepoint(time_to_safepoint);
    let cpu_at_start = crate::os::process_cpu_time();
    let wall_at_start = Instant::now();
    let number = core.counters.collections.load(Relaxed) + 1;
    core.note_peak_pages();
    let mut panics = core.finish_sweeping();
    // Explicitly freed slots no mutator reused are free slots from now on.
    for p in core.pools.iter() {
        p.reclaim_forgotten(&core.table);
    }
    // The collection's own work starts here (the generations' cost rule
    // compares it between minor and full collections; the previous
    // cycle's leftover sweep is not this collection's).
    let work_start = Instant::now();
    core.events.emit(&mut panics, || GcEvent::CollectionStart {
        number,
        reason,
        heap_bytes: core.resource.committed_pages() * PAGE_SIZE,
        allocated_bytes: core.sizer.allocated(),
        target_bytes: core.sizer.target() as usize,
        time_to_safepoint,
    });

    // Generational mode: minor or full (a full one clears every mark).
    let minor = minor::begin(core, reason, core.compaction_requested(), number);
    // A small heap is collected on this thread alone: waking the GC
    // workers would cost more than they save. (No phase has run on them
    // in this pause yet.)
    core.workers.set_serial(core.is_small(minor));
    // Whether this collection may compact, decided before marking: only
    // then does marking list what ambiguous words pin. A request made
    // after this point waits for the next collection.
    let may_compact = !minor && core.may_compact();

    // 2–4. Roots, mark, weak phases, then verify mode's walk.
    let (marked, verdict, verify_time) = match catch_unwind(AssertUnwindSafe(|| {
        mark_and_verify(core, handles, minor, may_compact)
    })) {
        Ok(r) => r,
        Err(p) => abandon(core, panics, p),
    };
    core.note_mark_work(marked.work, marked.bytes, minor);
    core.events.emit(&mut panics, || GcEvent::MarkEnd {
        number,
        marked_objects: marked.objects as u64,
        marked_bytes: marked.bytes as u64,
        mark_time: marked.time,
        minor,
    });

    // 5. Compact (never in a minor collection).
    core.pins.finish(&core.table);
    let compacted = if !may_compact {
        None
    } else {
        let request = core.take_compaction_request();
        compact::compact(core, handles, &marked.pins, request, &mut panics)
    };
    if let Some(c) = &compacted {
        core.counters.record_compaction(&c.stats);
    }

    // 6. Release.
    for p in core.pools.iter() {
        p.begin_cycle(&core.table, minor);
    }
    let released = release_phase(core, &mut panics);
    // The pause's last parallel phase: the GC threads may sleep now.
    core.workers.rest();
    if compacted.is_some() {
        // What the compaction emptied goes back to the OS as soon as the
        // world runs again.
        core.defer_trim(TrimAfterPause::All);
    }
    core.counters.record_release(released.time);
    core.counters
        .last_released_pages
        .store(released.pages as u64, Relaxed);
    if !core.config.lazy_sweep {
        panics.merge(core.finish_sweeping());
    }

    // 7. Resume: the collection is counted, and the heap policy sets the
    // next target from the bytes found live.
    core.counters.collections.fetch_add(1, Relaxed);
    core.counters
        .mark_ns
        .fetch_add(marked.time.as_nanos() as u64, Relaxed);
    core.counters
        .last_marked
        .store(marked.objects as u64, Relaxed);
    let old_target = core.sizer.target();
    // (The policies compute with doubles: under the default floating-point
    // environment, whatever traps the program runs with; `os/float_env.rs`.)
    let decision = crate::os::with_default_float_env(|| {
        if minor {
            // The old generation grew by what the minor collection kept; the
            // target stays.
            let live = core.generations.after_minor(&MinorSample {
                promoted: marked.bytes as u64,
                promoted_objects: marked.objects as u64,
                allocated: core.sizer.allocated(),
                target: old_target,
                pause: work_start.elapsed().saturating_sub(verify_time),
            });
            core.sizer.after_minor(
                live,
                cpu_at_start,
                crate::os::process_cpu_time(),
                wall_at_start.elapsed(),
            )
        } else {
            core.generations.after_full(
                marked.bytes as u64,
                marked.objects as u64,
                work_start.elapsed().saturating_sub(verify_time),
            );
            core.sizer.after_collection(&CollectionSample {
                live_bytes: marked.bytes as u64,
                finalization_bytes: marked.finalization_bytes as u64,
                cpu_at_start,
                cpu_at_end: crate::os::process_cpu_time(),
                sweep_total: Duration::from_nanos(core.counters.lazy_sweep_ns.load(Relaxed)),
                wall_at_start,
                wall_at_end: Instant::now(),
            })
        }
    });
    core.counters
        .last_marked_bytes
        .store(decision.live_bytes, Relaxed);
    if core.update_commit_level() {
        // The heap shrank: free pages beyond the room of the new target
        // go back to the OS as soon as the world runs again (the lazy
        // sweep may have nothing left to do it).
        core.defer_trim(TrimAfterPause::ToTarget);
    }
    if decision.target_bytes != old_target {
        core.events.emit(&mut panics, || GcEvent::HeapResize {
            old_bytes: old_target as usize,
            new_bytes: decision.target_bytes as usize,
        });
    }
    if let Some(d) = &core.dirty {
        // The next minor collection rescans what is written from now on.
        // (Should the clearing fail, the bits stay set: more is rescanned,
        // nothing is missed.)
        let _ = d.clear();
    }
    let pause = start.elapsed();
    core.counters.record_pause(pause);
    if minor {
        core.counters.record_minor_pause(pause);
    }
    core.span("pause", start, Some(("collection", number)));
    core.events.emit(&mut panics, || GcEvent::CollectionEnd {
        number,
        reason,
        live_bytes: decision.live_bytes,
        heap_bytes: core.resource.committed_pages() * PAGE_SIZE,
        pause,
        finalizers_queued: marked.finalizers,
        target_bytes: decision.target_bytes as usize,
        allocation_rate: decision.allocation_rate,
    });
    // The pause completed, so the heap stays consistent; now report.
    if let Some(e) = verdict {
        if minor {
            panic!(
                "mosaic verify: after a minor collection, {e} (a store into an old BARRIERED object without a write barrier?)"
            );
        }
        panic!("mosaic verify: {e}");
    }
    if let Some(Compacted { stale: Some(e), .. }) = compacted {
        panic!("mosaic verify compaction: {e}");
    }
    panics.resume();
}

/// Steps 2–4 (`closure.rs`), then, in verify mode, an independent walk
/// from the same roots; its diagnostic is reported at the end of the pause.
/// After a minor collection the walk is the full mark that proves it:
/// every object reachable from the roots must be marked (old or kept).
fn mark_and_verify<E: Embedder>(
    core: &HeapCore<E>,
    handles: &[Arc<RootTable>],
    minor: bool,
    may_compact: bool,
) -> (Marked, Option<String>, Duration) {
    let strong = closure::strong_closure(core, handles, may_compact);
    let marked = closure::weak_phases(core, strong);
    let t = Instant::now();
    let verdict = if core.config.verify {
        // A minor collection marked only the young: old objects count too.
        let bound = if minor { usize::MAX } else { marked.objects };
        let v = verify(&core.table, &core.embedder, bound, |v| {
            scan_roots(core, handles, v)
        });
        core.span("verify", t, None);
        v.err()
    } else {
        None
    };
    (marked, verdict, t.elapsed())
}

/// A panic in `trace` or `roots` while marking: the marks go, so the heap
/// is as before the collection, and the panic continues (with the first
/// panic caught earlier in this pause, if any).
fn abandon<E: Embedder>(
    core: &HeapCore<E>,
    mut panics: PanicSlot,
    payload: Box<dyn Any + Send>,
) -> ! {
    core.clear_marks();
    core.generations.abandoned();
    panics.merge(PanicSlot::caught(payload));
    panics.resume();
    unreachable!("a caught panic resumes");
}
