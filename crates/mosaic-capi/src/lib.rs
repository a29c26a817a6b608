//! The C API of Mosaic: `libmosaic.so`, `libmosaic.a` and `include/mosaic.h`.
//!
//! | file | what lives there |
//! |---|---|
//! | `error.rs` | error codes and the per-thread last error |
//! | `handle.rs` | magic words telling live handles from freed ones |
//! | `embedder.rs` | `mosaic_embedder` (C callbacks, `mutator_roots` included) adapted to the Rust `Embedder` trait; `mosaic_visit` |
//! | `config.rs` | `mosaic_config`, defaults and environment |
//! | `heap.rs` | heaps, mutators (handle = Rust mutator + C user data), allocation (aligned too), collection, safepoints, blocking regions |
//! | `roots.rs` | root handles |
//! | `scope.rs` | the scope: LIFO root slots for C locals |
//! | `stats.rs` | `mosaic_stats`, `mosaic_pool_stats`, the summary line |
//!
//! Every function checks its pointers for NULL, and its handles for having
//! been freed (reliably for heaps, best effort for mutators and roots: see
//! `handle.rs`), and reports misuse through `mosaic_last_error()` instead of
//! crashing. Pointers that are not NULL must be ones this library handed out.
#![allow(non_camel_case_types)]

mod config;
mod embedder;
mod error;
mod handle;
mod heap;
mod roots;
mod scope;
mod stats;

pub use config::*;
pub use embedder::*;
pub use error::*;
pub use heap::*;
pub use roots::*;
pub use scope::*;
pub use stats::*;
