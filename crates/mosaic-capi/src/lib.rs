//! The C API of Mosaic: `libmosaic.so`, `libmosaic.a` and `include/mosaic.h`.
//!
//! | file | what lives there |
//! |---|---|
//! | `error.rs` | error codes and the per-thread last error |
//! | `handle.rs` | magic words telling live handles from freed ones |
//! | `embedder.rs` | `mosaic_embedder` (C callbacks, `mutator_roots`, `on_move`, `resize` and `type_name` included) adapted to the Rust `Embedder` trait; `mosaic_visit`, `mosaic_visit_ambiguous(_range)` |
//! | `config.rs` | `mosaic_config`, its table of fields, variables and defaults, the environment |
//! | `heap.rs` | heaps, mutators (handle = Rust mutator + C user data), allocation (aligned too), collection, safepoints, blocking regions |
//! | `moving.rs` | pins, compaction, conservative stack scanning, heap dumps |
//! | `roots.rs` | root handles |
//! | `scope.rs` | the scope: LIFO root slots for C locals |
//! | `references.rs` | weak handles, weak slots, ephemerons |
//! | `finalizers.rs` | finalizers, their notifier and the finalizer thread |
//! | `events.rs` | `mosaic_event` and the event callback |
//! | `stats.rs` | `mosaic_stats`, `mosaic_pool_stats`, the summary line |
//!
//! Every function checks its pointers for NULL, and its handles for having
//! been freed (reliably for heaps, best effort for mutators, roots and weak
//! handles: see `handle.rs`), and reports misuse through
//! `mosaic_last_error()` instead of crashing. Pointers that are not NULL
//! must be ones this library handed out.
#![allow(non_camel_case_types)]

mod config;
mod embedder;
mod error;
mod events;
mod fast_path;
mod finalizers;
mod free;
mod handle;
mod heap;
mod moving;
mod references;
mod roots;
mod scope;
mod stats;

pub use config::*;
pub use embedder::*;
pub use error::*;
pub use events::*;
pub use fast_path::*;
pub use finalizers::*;
pub use heap::*;
pub use moving::*;
pub use references::*;
pub use roots::*;
pub use scope::*;
pub use stats::*;
