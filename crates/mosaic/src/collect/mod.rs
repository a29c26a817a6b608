//! Layer 6 — collection: roots, marking, verification, and the pause itself.
//!
//! | file | what lives there |
//! |---|---|
//! | `core.rs` | [`HeapCore`]: every part of a heap below the API, the pause body ([`HeapCore::collect`]), large allocation, trimming |
//! | `mark.rs` | the marker: explicit mark stack, edge filtering, tracing |
//! | `verify.rs` | verify mode's independent walk and its diagnostics |
//! | `roots.rs` | root handles for Rust embedders |
//! | `counters.rs` | timing and pause histograms |
//! | `callbacks.rs` | embedder callbacks that panic: the heap is made consistent, then the panic continues; the "inside a callback" flag |
//! | `closure.rs` | the marking of one collection: strong closure, ephemerons, short weak, finalizer choice, long weak |
//! | `handles.rs` | chunked handle words shared by strong and weak handles |
//! | `weak.rs` | weak handles (`WeakRoot`) and registered weak slots, short and long |
//! | `ephemeron.rs` | ephemeron objects and their linear fixed point |
//! | `finalize.rs` | finalizer registrations, ordered and unordered choice, the ready queue |
//! | `events.rs` | GC events and the listener |
//! | `compact/` | compaction (seed 001): which pools (`policy.rs`), the plan with pinned-first page order and cross-pool moves (`plan.rs`), moving on the GC workers (`evacuate.rs`), updating and checking references (`update.rs`); the steps are in `compact/mod.rs` |
//! | `pins.rs` | counted pins (`Mutator::pin`) and the pin bits a compaction sets for them and for ambiguous roots |
//! | `heap_sizing.rs` | when to collect: the heap target, allowance and the fixed / proportional / adaptive policies |
//!
//! A pause: finish sweeping the previous cycle (so every alloc bit is exact)
//! → mark (`closure.rs`: strong roots, then the weak semantics) → verify (if asked) → sweep
//! large objects eagerly → every pool's pages become unswept → (eager mode:
//! sweep them now). Mutators then sweep lazily as they allocate.

mod callbacks;
mod closure;
mod compact;
mod core;
mod counters;
mod ephemeron;
mod ephemeron_pass;
mod events;
mod finalize;
mod handles;
mod heap_sizing;
mod mark;
mod par_mark;
mod pins;
mod release;
mod roots;
mod timeline;
mod verify;
mod weak;

pub use self::core::HeapCore;
pub use callbacks::{in_callback, inside_callback, PanicSlot};
pub use counters::{CompactionStats, Distribution, GcCounters};
pub use ephemeron::EPHEMERON_SIZE;
pub(crate) use ephemeron::{read as ephemeron_read, write as ephemeron_write};
pub use events::{GcEvent, GcReason};
pub use finalize::FinalizerOrder;
pub use heap_sizing::HeapDecision;
pub use roots::{Root, RootTable};
pub use timeline::Timeline;
pub use weak::{SlotError, WeakKind, WeakRoot};
