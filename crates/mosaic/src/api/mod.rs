//! Layer 7 — the Rust API: [`Heap`], [`Mutator`], [`Stats`].

mod finalizers;
mod heap;
mod mutator;
mod references;
mod stats;

pub use heap::{EventListener, Heap};
pub use mutator::{Mutator, RawFastPath};
pub use stats::{PoolStats, Stats};
