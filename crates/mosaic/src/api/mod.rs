//! Layer 7 — the Rust API: [`Heap`], [`Mutator`], [`Stats`].

mod dump;
mod finalizers;
mod heap;
mod moving;
mod mutator;
mod references;
mod stats;

pub use dump::DumpSummary;
pub use finalizers::FinalizerFn;
pub use heap::{EventListener, Heap};
pub use mutator::free::Freed;
pub use mutator::signal_stop::SignalParker;
pub use mutator::{Mutator, RawFastPath};
pub use stats::{Counters, PoolStats, Stats};
