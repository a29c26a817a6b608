//! Layer 6 — collection: the heap's state, the phases of a collection, and
//! the one file that runs them in order.
//!
//! | file | what lives there |
//! |---|---|
//! | `heap.rs` | [`HeapCore`]: the heap's state below the API (config, pools, large space, page resource and table, counters, weak/ephemeron/finalizer tables, events, heap sizer, workers, timeline, pins) and the helpers allocation and the pause share: large allocation, a small object's flags, sweeping, trimming |
//! | `background.rs` | background sweeping: a GC worker sweeps and clears pages ahead of the mutators between pauses, on an idle CPU |
//! | `cycle.rs` | one collection, top to bottom: [`run_collection`] calls each phase in the order of DESIGN.md |
//! | `root_scan.rs` | the strong roots of a collection, in tasks for the GC workers |
//! | `closure.rs` | the marking of one collection: strong closure, then the weak phases (ephemerons, short weak, finalizer choice, long weak) |
//! | `mark.rs` | the marker: explicit mark stack, edge filtering, tracing |
//! | `par_mark.rs` | the strong closure on every GC worker (work stealing) |
//! | `own_marks.rs` | a parallel marker's own mark bits, merged when the closure ends, so that shared mark bits need no atomic update |
//! | `ephemeron_pass.rs` | the ephemeron fixed point of one collection |
//! | `generations.rs` | generational mode's state: the remembered set (per-mutator logs), which collections are minor, the counts |
//! | `minor.rs` | a minor collection's steps: choosing the kind of a pause, tracing the remembered set, rescanning unbarriered old objects |
//! | `verify.rs` | verify mode's independent walk and its diagnostics |
//! | `compact/` | compaction (seed 001): which pools (`policy.rs`), the plan with pinned-first page order and cross-pool moves (`plan.rs`), moving on the GC workers (`evacuate.rs`), updating and checking references (`update.rs`); the steps are in `compact/mod.rs` |
//! | `release.rs` | the release phase: empty pages and dead large objects given back on every GC worker |
//! | `roots.rs` | root handles for Rust embedders |
//! | `handles.rs` | chunked handle words shared by strong and weak handles |
//! | `weak.rs` | weak handles (`WeakRoot`) and registered weak slots, short and long |
//! | `ephemeron.rs` | the set of ephemeron objects and their two words |
//! | `finalize.rs` | finalizer registrations, ordered and unordered choice, the ready queue |
//! | `pins.rs` | counted pins (`Mutator::pin`) and the pin bits a compaction sets for them and for ambiguous roots |
//! | `heap_sizing.rs` | when to collect: the heap target, allowance and the fixed / proportional / adaptive policies |
//! | `events.rs` | GC events and the listener |
//! | `counters.rs` | timing, pause histograms, compaction stats |
//! | `timeline.rs` | the pause timeline (`MOSAIC_TRACE`) |
//! | `callbacks.rs` | embedder callbacks that panic: the heap is made consistent, then the panic continues; the "inside a callback" flag |
//!
//! Imports go one way (checked by `scripts/check-imports.sh`): the tables
//! and tools (`roots.rs`, `weak.rs`, `ephemeron.rs`, `finalize.rs`,
//! `mark.rs`, `counters.rs`, ...) import no other collect file but each
//! other; `heap.rs` imports the tables and no phase; every phase imports
//! `heap.rs` and never `cycle.rs`; only `cycle.rs` imports the phases.
//!
//! A collection (`cycle.rs`): finish sweeping the previous cycle (so every
//! alloc bit is exact) → roots → mark → weak phases → verify (if asked) →
//! compact (if asked or fragmented) → every pool's pages become unswept and
//! the release phase gives back the empty ones (eager mode: sweep the rest
//! now) → the heap policy sets the next target. Mutators then sweep lazily
//! as they allocate.

mod background;
mod callbacks;
mod closure;
mod compact;
mod counters;
mod cycle;
mod ephemeron;
mod ephemeron_pass;
mod events;
mod finalize;
mod generations;
mod handles;
mod heap;
mod heap_sizing;
mod keep;
mod mark;
mod minor;
mod own_marks;
mod par_mark;
mod pins;
mod release;
mod root_scan;
mod roots;
mod timeline;
mod verify;
mod weak;

pub use callbacks::{in_callback, inside_callback, PanicSlot};
pub use counters::{CompactionStats, Distribution, FreeTotals, GcCounters};
pub use cycle::run_collection;
pub use ephemeron::EPHEMERON_SIZE;
pub(crate) use ephemeron::{read as ephemeron_read, write as ephemeron_write};
pub use events::{GcEvent, GcReason};
pub use finalize::{FinalizerKind, FinalizerOrder, RegisterError};
pub use generations::LogBuffer;
pub use heap::HeapCore;
pub use heap_sizing::HeapDecision;
pub(crate) use own_marks::marked_by_this_thread;
pub use roots::{Root, RootTable};
pub use timeline::Timeline;
pub use weak::{SlotError, WeakKind, WeakRoot};
