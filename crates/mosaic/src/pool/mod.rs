//! Layer 3 — size pools.
//!
//! | file | what lives there |
//! |---|---|
//! | `size_class.rs` | the table of slot sizes and the O(1) size → class lookup |
//! | `size_pool.rs` | one pool's pages: swept, available, unswept; taking a page for a mutator |
//! | `sweep.rs` | sweeping one page: dead slots freed, `on_free` called, live slots counted |
//! | `growth.rs` | who decides a pool grows: the policy applied when a pool finishes sweeping |
//!
//! Invariants:
//! - every page of a pool is in exactly one of `pages` (swept this cycle, or
//!   fresh) or `unswept`; `available` is a subset of `pages` with free slots
//!   that no mutator owns;
//! - a sweep step is one page (at most 4096 slots), never "the rest of the heap";
//! - growth is decided per pool, once per cycle, from the live and free slot
//!   counts its own sweep produced.

mod growth;
mod size_class;
mod size_pool;
mod sweep;

pub use growth::{Decision, GrowthPolicy};
pub use size_class::SizeClasses;
#[cfg(test)]
pub use size_class::MAX_CLASS_SIZE;
pub use size_pool::{Acquired, SizePool, SweepCtx};
pub use sweep::{sweep_page, SweepResult};
