//! Layer 5 — collection: roots, marking, verification, and the pause itself.
//!
//! | file | what lives there |
//! |---|---|
//! | `core.rs` | [`HeapCore`]: every part of a heap below the API, the pause body ([`HeapCore::collect`]), large allocation, trimming |
//! | `mark.rs` | the marker: explicit mark stack, edge filtering, tracing |
//! | `verify.rs` | verify mode's independent walk and its diagnostics |
//! | `roots.rs` | root handles for Rust embedders |
//! | `counters.rs` | timing and pause histograms |
//! | `callbacks.rs` | embedder callbacks that panic: the heap is made consistent, then the panic continues |
//!
//! A pause: finish sweeping the previous cycle (so every alloc bit is exact)
//! → mark from handles and the embedder's roots → verify (if asked) → sweep
//! large objects eagerly → every pool's pages become unswept → (eager mode:
//! sweep them now). Mutators then sweep lazily as they allocate.

mod callbacks;
mod core;
mod counters;
mod mark;
mod roots;
mod verify;

pub use self::core::{HeapCore, LargeFailure};
pub use counters::{Distribution, GcCounters};
pub use roots::{Root, RootTable};
