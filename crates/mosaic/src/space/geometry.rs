//! Page geometry: the sizes every other file of the space derives from.
//! No imports: the bitmaps (`bitmap.rs`) and the descriptors (`page.rs`)
//! both build on these numbers.

/// log2 of the page size.
pub const PAGE_SHIFT: usize = 16;
/// Pages are 64 KiB and aligned to their size.
pub const PAGE_SIZE: usize = 1 << PAGE_SHIFT;
/// Mask of the offset inside a page.
pub const PAGE_MASK: usize = PAGE_SIZE - 1;
/// Smallest slot size any size-class table may use.
pub const MIN_SLOT_SIZE: usize = 16;
/// Most slots a page can hold (at the minimum slot size).
pub const MAX_SLOTS: usize = PAGE_SIZE / MIN_SLOT_SIZE;
