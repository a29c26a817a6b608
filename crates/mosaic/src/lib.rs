//! # Mosaic — an embeddable garbage collector
//!
//! A runtime links Mosaic, describes where references live in its objects
//! with an [`Embedder`] (`trace` and `roots`), and gets thread-local
//! allocation into size pools, a mark-sweep collector with bounded lazy
//! sweeping, and a heap policy (fixed, proportional or adaptive) that
//! decides when to collect.
//!
//! ```
//! use mosaic::{Config, Embedder, Heap, ObjRef, Tracer};
//!
//! /// Objects are pairs of references: 16 bytes, two pointer fields.
//! struct Pairs;
//! unsafe impl Embedder for Pairs {
//!     fn trace<T: Tracer>(&self, obj: ObjRef, t: &mut T) {
//!         let fields = obj.as_ptr() as *mut *mut u8;
//!         // SAFETY: every object of this embedder is a pair.
//!         unsafe {
//!             t.visit(&mut *fields);
//!             t.visit(&mut *fields.add(1));
//!         }
//!     }
//!     fn roots<T: Tracer>(&self, _: &mut T) {}
//! }
//!
//! let heap = Heap::new(Config::default(), Pairs).unwrap();
//! let mut m = heap.mutator().unwrap();
//! let a = m.alloc(16).unwrap();
//! let root = m.root(a).unwrap();
//! m.alloc(16).unwrap(); // garbage
//! m.collect();
//! assert_eq!(heap.stats().last_marked, 1);
//! assert_eq!(root.get(), Some(a));
//! ```
//!
//! Layers, lowest first (see ARCHITECTURE.md): `os` → `space` → `pool` →
//! `alloc` → `sched` → `collect` → the API ([`Heap`], [`Mutator`]). The
//! layers are private: the public API is what an embedder needs.

mod alloc;
mod api;
mod collect;
mod config;
mod embedder;
mod error;
mod flags;
mod object;
mod os;
mod pool;
mod sched;
mod space;

pub use api::{
    Counters, DumpSummary, EventListener, FinalizerFn, Freed, Heap, Mutator, PoolStats,
    SignalParker, Stats,
};
pub use collect::{
    inside_callback, CompactionStats, Distribution, FinalizerOrder, GcEvent, GcReason,
    HeapDecision, Root, WeakKind, WeakRoot,
};
pub use config::{parse_bytes, CompactOrder, CompactPolicy, Config, HeapPolicy, SizeClassPreset};
pub use embedder::{Embedder, MutatorInfo, Tracer};
pub use error::Error;
pub use flags::AllocFlags;
pub use object::ObjRef;
pub use os::with_default_float_env;
pub use pool::Decision;
pub use space::{LargeStats, PageResourceKind, PAGE_SIZE};

/// Not part of Mosaic's API: internals the crate's own benchmarks measure
/// directly. May change or disappear in any release.
#[doc(hidden)]
pub mod unstable {
    pub use crate::api::RawFastPath;
    pub use crate::pool::{sweep_page, SweepResult};
    pub use crate::sched::futex;
    pub use crate::space::{PageDesc, PageTable};
}

/// The README's Rust example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctest;
