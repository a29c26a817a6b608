//! Layer 4 — the per-mutator allocation context.
//!
//! A mutator owns one current page per size pool and a run of free slots
//! inside it (`cursor..limit`). The fast path bumps `cursor` by the pool's
//! slot size: no lock, no atomic read-modify-write, no metadata write. When
//! the run is used up, the slow path finds the next run of free slots in the
//! same page from its alloc bitmap, marks the whole run allocated and zeroes
//! it in bulk; when the page has no run left, the pool gives it another page
//! (see `pool::SizePool::acquire`).
//!
//! Invariant: a page is the current page of at most one mutator, and slots of
//! a mutator's current run have their alloc bits set before they are handed
//! out. Flushing (before a collection, or when the mutator goes away) clears
//! the alloc bits of the unused rest of the run, so during a pause the alloc
//! bitmaps are exact.

mod local;

pub use local::{context, run_flags, LocalAllocator, LocalFlusher, LocalPool};
