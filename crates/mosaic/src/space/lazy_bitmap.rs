//! A per-page bitmap that most pages never use (pins, objects that asked
//! for `on_free`, registered finalizers, ephemerons, compaction's
//! forwarded slots): absent until a bit is first set, then allocated (512
//! bytes) and kept until the heap goes.
//!
//! With eight bitmaps in every descriptor, metadata was 4 KiB per 64 KiB
//! page (6% of the heap); the five rare ones now cost a null pointer on
//! pages that never set them, and a page costs 1.6 KiB (2.5%).
//!
//! Invariant: once published, the pointer never changes and the bitmap
//! is freed only by [`LazyBitmap::free`], called when no thread can reach
//! the descriptor any more (the page table's drop). Reads of an absent bitmap
//! see all bits clear.

use std::sync::atomic::{AtomicPtr, Ordering::Acquire, Ordering::Release};

use super::bitmap::Bitmap;

/// A bitmap allocated on first use. All-zero bytes are a valid, absent one.
pub struct LazyBitmap {
    ptr: AtomicPtr<Bitmap>,
}

impl LazyBitmap {
    #[inline(always)]
    fn bits(&self) -> Option<&Bitmap> {
        let p = self.ptr.load(Acquire);
        // SAFETY: a non-null pointer was published (release) by `alloc`
        // from a live box, which stays allocated until `free` (module
        // invariant).
        (!p.is_null()).then(|| unsafe { &*p })
    }

    /// The bitmap, allocated if absent (several threads may race: one
    /// box wins, the others are dropped).
    fn alloc(&self) -> &Bitmap {
        if let Some(b) = self.bits() {
            return b;
        }
        let new = Box::into_raw(Box::new(Bitmap::new()));
        match self
            .ptr
            .compare_exchange(std::ptr::null_mut(), new, Release, Acquire)
        {
            // SAFETY: `new` is the box just published; it lives until `free`.
            Ok(_) => unsafe { &*new },
            Err(cur) => {
                // SAFETY: `new` was never published; `cur` was (by the
                // winner), and lives until `free`.
                unsafe {
                    drop(Box::from_raw(new));
                    &*cur
                }
            }
        }
    }

    /// Whether the bitmap was allocated.
    pub fn is_allocated(&self) -> bool {
        !self.ptr.load(Acquire).is_null()
    }

    #[inline(always)]
    pub fn get(&self, i: usize) -> bool {
        self.bits().is_some_and(|b| b.get(i))
    }

    pub fn set(&self, i: usize) {
        self.alloc().set(i)
    }

    pub fn clear(&self, i: usize) {
        if let Some(b) = self.bits() {
            b.clear(i)
        }
    }

    /// [`Bitmap::set_range`] (allocating the bitmap first).
    pub fn set_range(&self, from: usize, to: usize) {
        self.alloc().set_range(from, to)
    }

    /// [`Bitmap::clear_range`] (nothing to do when absent).
    pub fn clear_range(&self, from: usize, to: usize) {
        if let Some(b) = self.bits() {
            b.clear_range(from, to)
        }
    }

    /// [`Bitmap::test_and_set_atomic`].
    pub fn test_and_set_atomic(&self, i: usize) -> bool {
        self.alloc().test_and_set_atomic(i)
    }

    /// [`Bitmap::test_and_clear_atomic`].
    pub fn test_and_clear_atomic(&self, i: usize) -> bool {
        self.bits().is_some_and(|b| b.test_and_clear_atomic(i))
    }

    #[inline(always)]
    pub fn word(&self, w: usize) -> u64 {
        self.bits().map_or(0, |b| b.word(w))
    }

    /// Keeps only the bits of word `w` that are in `mask`.
    pub fn retain_word(&self, w: usize, mask: u64) {
        if let Some(b) = self.bits() {
            b.set_word(w, b.word(w) & mask)
        }
    }

    /// [`Bitmap::for_each_set`].
    pub fn for_each_set(&self, n: usize, f: impl FnMut(usize)) {
        if let Some(b) = self.bits() {
            b.for_each_set(n, f)
        }
    }

    /// [`Bitmap::clear_first`] (nothing to do when absent).
    pub fn clear_first(&self, words: usize) {
        if let Some(b) = self.bits() {
            b.clear_first(words)
        }
    }

    /// [`Bitmap::is_clear_from`] (true when absent).
    pub fn is_clear_from(&self, words: usize) -> bool {
        self.bits().map_or(true, |b| b.is_clear_from(words))
    }

    /// Frees the bitmap.
    ///
    /// # Safety
    /// No other thread may use the descriptor, now or later, except
    /// through this (now absent) bitmap.
    pub unsafe fn free(&self) {
        let p = self.ptr.swap(std::ptr::null_mut(), Acquire);
        if !p.is_null() {
            // SAFETY: published by `alloc` from `Box::into_raw`, freed once
            // (the swap took it), unused by others (the caller's promise).
            drop(unsafe { Box::from_raw(p) });
        }
    }
}
