//! Telling live handles from freed ones.
//!
//! Each handle struct holds a magic word, `LIVE` while the handle is valid.
//! Freeing writes `DEAD` first, and every function checks the word on entry,
//! so a handle freed twice or used after `*_free` is reported as
//! `MOSAIC_ERR_INVALID_ARGUMENT` instead of corrupting memory.
//!
//! Heaps are rare, so `mosaic_heap_free` drops the heap but keeps its small
//! handle allocated forever as a tombstone: a freed heap is always detected.
//! Mutators and roots are freed for real, so for them the check is best
//! effort. Their C types are opaque; behind them is a [`Guarded`] value
//! whose magic word sits at an offset of at least 16 bytes, past what
//! glibc's allocator writes into a small freed block (tcache: next pointer
//! and key; fast and small bins: fd and bk), so it still reads `DEAD` until
//! the block is reused; reused by something else it reads anything but
//! `LIVE`. Only a block reused by a new handle of the same kind passes the
//! check; mosaic.h calls that case undefined.

use crate::error::invalid;

/// The magic word of a live handle.
pub(crate) const LIVE: u64 = u64::from_le_bytes(*b"liveMOSC");
/// The magic word written when a handle is freed.
pub(crate) const DEAD: u64 = u64::from_le_bytes(*b"deadMOSC");

/// Whether a handle whose magic word reads `magic` (`None`: the handle is
/// NULL) may be used; if not, records why for `function`. `what` names the
/// kind of handle ("root", "mutator", "heap").
#[inline(always)]
pub(crate) fn usable(function: &str, what: &str, magic: Option<u64>) -> bool {
    if magic == Some(LIVE) {
        return true;
    }
    unusable(function, what, magic.is_none());
    false
}

#[cold]
#[inline(never)]
fn unusable(function: &str, what: &str, null: bool) {
    let why = if null {
        format!("{what} is NULL")
    } else {
        format!("{what} was already freed (or is not a {what})")
    };
    invalid(function, &why);
}

/// A mutator's or root's contents followed by its magic word; the C handle
/// points to one of these (allocated by `Box`).
#[repr(C)]
pub(crate) struct Guarded<T> {
    value: T,
    magic: u64,
}

impl<T> Guarded<T> {
    /// A live handle holding `value`, as a raw pointer for C.
    pub(crate) fn into_raw<H>(value: T) -> *mut H {
        const {
            assert!(
                std::mem::offset_of!(Self, magic) >= 16,
                "the magic word must lie past what free() overwrites"
            )
        };
        Box::into_raw(Box::new(Guarded { value, magic: LIVE })).cast()
    }

    /// The handle's magic word (`None` for NULL).
    ///
    /// # Safety
    /// `p` must be NULL or have come from `into_raw`, possibly freed since
    /// (the best-effort case described at the top of this file).
    #[inline(always)]
    unsafe fn magic<H>(p: *const H) -> Option<u64> {
        if p.is_null() {
            return None;
        }
        let at = p
            .cast::<u8>()
            .wrapping_add(std::mem::offset_of!(Self, magic))
            .cast::<u64>();
        // SAFETY: per this function's contract `at` is the aligned magic
        // word of a block that is allocated or was freed to the C
        // allocator, which keeps small blocks mapped. A volatile read
        // makes no assumption about the memory's Rust-level state.
        Some(unsafe { at.read_volatile() })
    }

    /// The handle `p` as a `Guarded<T>` if it is live; `None`, with the
    /// error recorded for `function`, if `p` is NULL or not live. `what`
    /// names the kind of handle.
    ///
    /// # Safety
    /// As `magic`.
    #[inline(always)]
    unsafe fn checked<H>(function: &str, what: &str, p: *const H) -> Option<*mut Self> {
        // SAFETY: per this function's contract.
        usable(function, what, unsafe { Self::magic(p) }).then(|| p.cast_mut().cast())
    }

    /// A pointer to the contents of a live handle (see `checked`), for
    /// callers that borrow one field at a time.
    ///
    /// # Safety
    /// As `magic`.
    #[inline(always)]
    pub(crate) unsafe fn live_ptr<H>(function: &str, what: &str, p: *const H) -> Option<*mut T> {
        // SAFETY: live, so a `Guarded<T>` from `into_raw`, not freed.
        unsafe { Self::checked(function, what, p).map(|g| std::ptr::addr_of_mut!((*g).value)) }
    }

    /// A pointer to the contents of a handle known to be live, unchecked.
    ///
    /// # Safety
    /// `p` must have come from `into_raw` and not have been freed.
    #[inline(always)]
    pub(crate) unsafe fn value_ptr<H>(p: *const H) -> *mut T {
        let g = p.cast_mut().cast::<Self>();
        // SAFETY: per the contract, `g` points to a live `Guarded<T>`.
        unsafe { std::ptr::addr_of_mut!((*g).value) }
    }

    /// The contents of a live handle, shared (see `checked`).
    ///
    /// # Safety
    /// As `magic`; the reference must not outlive the handle.
    #[inline(always)]
    pub(crate) unsafe fn live_ref<'a, H>(function: &str, what: &str, p: *const H) -> Option<&'a T> {
        // SAFETY: live, so a `Guarded<T>` from `into_raw`, not freed.
        unsafe { Self::checked(function, what, p).map(|g| &(*g).value) }
    }

    /// Frees a live handle (its magic word turns `DEAD` first). NULL is
    /// ignored; a handle that is not live is reported for `function`.
    /// Returns whether a handle was freed.
    ///
    /// # Safety
    /// As `magic`; no reference to the handle's contents may exist.
    pub(crate) unsafe fn free<H>(function: &str, what: &str, p: *mut H) -> bool {
        if p.is_null() {
            return false;
        }
        // SAFETY: per this function's contract.
        let Some(g) = (unsafe { Self::checked(function, what, p) }) else {
            return false;
        };
        // SAFETY: live, so `g` came from `into_raw` and is freed only here;
        // DEAD is written before the block goes back to the allocator.
        unsafe {
            (*g).magic = DEAD;
            drop(Box::from_raw(g));
        }
        true
    }
}
