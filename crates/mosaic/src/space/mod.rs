//! Layer 2 — the space: pages, their side metadata, and who owns them.
//!
//! | file | what lives there |
//! |---|---|
//! | `geometry.rs` | page size, shift and mask, the smallest slot, the most slots per page |
//! | `bitmap.rs` | one bit per slot, 4096 slots per page, atomic words |
//! | `lazy_bitmap.rs` | a bitmap allocated on a page's first use of it (pin, needs-cleanup, forwarded, finalizer, ephemeron bits) |
//! | `page.rs` | [`PageDesc`]: kind, slot geometry, and the side bitmaps (mark, alloc, no-pointers; lazily: pin, needs-cleanup, forwarded, finalizer, ephemeron) |
//! | `log_bits.rs` | [`LogBits`]: the write barrier's unlogged bit per 8-byte granule (generational mode) |
//! | `page_table.rs` | [`PageTable`]: address → page index → descriptor in O(1); interior address → slot in O(1) by reciprocal multiply |
//! | `page_resource.rs` | [`PageResource`]: free pages, a lock-free queue of single pages plus a coalescing span set; decommit when the heap shrinks |
//! | `large.rs` | [`LargeSpace`]: objects above the largest size class, as whole-page spans, freed eagerly after marking |
//!
//! Invariants:
//! - GC metadata lives here, never in objects: a live object's bytes belong to the embedder.
//! - Pages are [`PAGE_SIZE`] bytes and aligned; a small-object page holds slots of one size.
//! - A page is in exactly one place: free in the page resource, in one size pool,
//!   or part of one large object's span.

mod bitmap;
mod geometry;
mod large;
mod lazy_bitmap;
mod log_bits;
mod page;
mod page_resource;
mod page_table;

pub use geometry::{MAX_SLOTS, MIN_SLOT_SIZE, PAGE_MASK, PAGE_SHIFT, PAGE_SIZE};
pub use large::{LargeSpace, LargeStats};
pub use log_bits::LogBits;
pub use page::{PageDesc, PageKind};
pub use page_resource::{PageResource, PageResourceKind, ReleaseBuffer};
pub use page_table::{Located, MarkState, PageTable};
