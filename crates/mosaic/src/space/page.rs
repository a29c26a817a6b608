//! Page descriptors: everything the collector knows about one 64 KiB page.

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicU8};

use super::bitmap::{Bitmap, WORDS};
use super::geometry::{MIN_SLOT_SIZE, PAGE_SIZE};
use super::lazy_bitmap::LazyBitmap;

/// What a page is used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PageKind {
    /// In the page resource (or never used).
    Free = 0,
    /// Slots of one size, owned by one size pool.
    Small = 1,
    /// First page of a large object's span; the object starts at the page start.
    LargeHead = 2,
    /// Later page of a large object's span; `span` holds the head's page index.
    LargeTail = 3,
}

/// The descriptor of one page. All-zero bytes are a valid free descriptor,
/// which is what a freshly mapped page table holds.
///
/// For a large object, bit 0 of each bitmap describes the object.
pub struct PageDesc {
    kind: AtomicU8,
    pool: AtomicU8,
    /// Every slot not currently allocated holds only zero bytes.
    zeroed: AtomicBool,
    /// The physical memory is (or may be) resident: the page was touched
    /// after the last decommit.
    committed: AtomicBool,
    /// Some slot on the page has its needs-cleanup bit set.
    has_cleanup: AtomicBool,
    /// An ephemeron was allocated on the page since it was last initialised.
    has_ephemerons: AtomicBool,
    /// An object that holds references but was not allocated `BARRIERED`
    /// (or is conservative) may be on the page: set when such an object
    /// or a run for them is allocated here or compacted to here, cleared
    /// only when the page's bitmaps are. A minor collection looks for old
    /// objects to rescan only on pages with it set.
    has_unbarriered: AtomicBool,
    /// A mutator took a run of slots here (or the page is new) since the
    /// last collection: a minor collection sweeps only such pages.
    young: AtomicBool,
    /// Marked since the last collection but not yet swept: the mark bits,
    /// not the alloc bits, say which slots hold live objects.
    unswept: AtomicBool,
    slot_size: AtomicU32,
    slot_count: AtomicU32,
    /// `ceil(2^32 / slot_size)`: slot index = `(offset * recip) >> 32`.
    recip: AtomicU32,
    /// Large head: pages in the span. Large tail: page index of the head.
    span: AtomicU32,
    /// Large head: requested object size in bytes.
    large_size: AtomicU64,
    /// Slot is marked in the current collection.
    pub mark: Bitmap,
    /// Slot is allocated (or reserved in a mutator's current run).
    pub alloc: Bitmap,
    /// Slot must not move (compaction respects it).
    pub pin: LazyBitmap,
    /// Slot holds a forwarding address (compaction).
    pub forwarded: LazyBitmap,
    /// Slot's object has no references and is never traced.
    pub no_pointers: Bitmap,
    /// `on_free` must be called when the slot's object dies.
    pub cleanup: LazyBitmap,
    /// The slot's object (a cleanup one) keeps its referents alive until
    /// its `on_free` ran (`AllocFlags::KEEP_REFERENTS`). Cleared with
    /// `cleanup`.
    pub keep_referents: LazyBitmap,
    /// The slot's object has a finalizer registered (not yet queued). Set
    /// and cleared atomically by registering mutators (any thread, any
    /// page); only a pause otherwise writes it.
    pub finalizer: LazyBitmap,
    /// The slot's finalizer (its `finalizer` bit is set too) is the heap's
    /// shared one, with no entry in the finalizer log. Same writers as
    /// `finalizer`.
    pub shared_finalizer: LazyBitmap,
    /// The slot's shared finalizer is unordered (set only with
    /// `shared_finalizer`).
    pub unordered_finalizer: LazyBitmap,
    /// The slot's object is an ephemeron (`collect/ephemeron.rs`).
    pub ephemeron: LazyBitmap,
    /// The slot's object is scanned conservatively (`AllocFlags::CONSERVATIVE`).
    pub conservative: LazyBitmap,
    /// The slot's object was allocated `BARRIERED`: generational mode
    /// trusts barriers to log it (others are rescanned by minor collections).
    pub barriered: LazyBitmap,
}

impl PageDesc {
    #[inline(always)]
    pub fn kind(&self) -> PageKind {
        match self.kind.load(Relaxed) {
            1 => PageKind::Small,
            2 => PageKind::LargeHead,
            3 => PageKind::LargeTail,
            _ => PageKind::Free,
        }
    }

    pub fn set_kind(&self, k: PageKind) {
        self.kind.store(k as u8, Relaxed)
    }

    #[inline(always)]
    pub fn pool(&self) -> usize {
        self.pool.load(Relaxed) as usize
    }

    #[inline(always)]
    pub fn slot_size(&self) -> usize {
        self.slot_size.load(Relaxed) as usize
    }

    #[inline(always)]
    pub fn slot_count(&self) -> usize {
        self.slot_count.load(Relaxed) as usize
    }

    /// Slot index of a byte offset inside the page, by multiplication.
    #[inline(always)]
    pub fn slot_of_offset(&self, offset: usize) -> usize {
        ((offset as u64 * self.recip.load(Relaxed) as u64) >> 32) as usize
    }

    pub fn zeroed(&self) -> bool {
        self.zeroed.load(Relaxed)
    }

    pub fn set_zeroed(&self, z: bool) {
        self.zeroed.store(z, Relaxed)
    }

    pub fn committed(&self) -> bool {
        self.committed.load(Relaxed)
    }

    pub fn set_committed(&self, c: bool) {
        self.committed.store(c, Relaxed)
    }

    pub fn has_cleanup(&self) -> bool {
        self.has_cleanup.load(Relaxed)
    }

    pub fn set_has_cleanup(&self, c: bool) {
        self.has_cleanup.store(c, Relaxed)
    }

    /// The bitmaps allocated on first use.
    fn lazy(&self) -> [&LazyBitmap; 10] {
        [
            &self.pin,
            &self.forwarded,
            &self.cleanup,
            &self.keep_referents,
            &self.finalizer,
            &self.shared_finalizer,
            &self.unordered_finalizer,
            &self.ephemeron,
            &self.conservative,
            &self.barriered,
        ]
    }

    /// Whether any bitmap was allocated lazily.
    pub fn has_lazy(&self) -> bool {
        self.lazy().iter().any(|b| b.is_allocated())
    }

    /// Frees the lazily allocated bitmaps.
    ///
    /// # Safety
    /// As [`LazyBitmap::free`]: the heap is going away.
    pub unsafe fn free_lazy(&self) {
        for b in self.lazy() {
            // SAFETY: the caller's promise.
            unsafe { b.free() }
        }
    }

    /// Says that the page holds an ephemeron; whether it already said so.
    pub fn note_ephemerons(&self) -> bool {
        self.has_ephemerons.swap(true, Relaxed)
    }

    pub fn has_ephemerons(&self) -> bool {
        self.has_ephemerons.load(Relaxed)
    }

    /// The page holds no ephemeron any more (a pause: none is allocated
    /// meanwhile).
    pub fn forget_ephemerons(&self) {
        self.has_ephemerons.store(false, Relaxed);
    }

    /// Says that an object with references and no barrier promise may be
    /// here from now on.
    #[inline]
    pub fn note_unbarriered(&self) {
        if !self.has_unbarriered.load(Relaxed) {
            self.has_unbarriered.store(true, Relaxed);
        }
    }

    /// Whether an object with references and no barrier promise may be
    /// here (see the field).
    pub fn has_unbarriered(&self) -> bool {
        self.has_unbarriered.load(Relaxed)
    }

    /// Says that a mutator took slots here since the last collection.
    #[inline]
    pub fn note_young(&self) {
        if !self.young.load(Relaxed) {
            self.young.store(true, Relaxed);
        }
    }

    /// Whether slots were taken here since the last collection; forgets it
    /// (a pause: no mutator runs).
    pub fn take_young(&self) -> bool {
        self.young.swap(false, Relaxed)
    }

    /// Marks the page unswept (a collection just marked it).
    pub fn set_unswept(&self) {
        // Release: a reader outside the handshake that sees `true` also
        // sees the mark bits written before it.
        self.unswept.store(true, Release);
    }

    /// Whether the page waits for its sweep.
    pub fn is_unswept(&self) -> bool {
        self.unswept.load(Acquire)
    }

    /// Whether `slot` holds a live object, also while the page is unswept
    /// and while another thread sweeps it. Sweeping publishes the new alloc
    /// bits, then clears `unswept` (release), then clears the mark bits, so:
    /// a set mark bit means live; an unset one read while the page still
    /// reads unswept means dead; otherwise the alloc bits are exact.
    pub fn slot_is_live(&self, slot: usize) -> bool {
        if !self.unswept.load(Acquire) {
            return self.alloc.get(slot);
        }
        if self.mark.get(slot) {
            return true;
        }
        fence(Acquire);
        if self.unswept.load(Acquire) {
            return false;
        }
        self.alloc.get(slot)
    }

    /// Sweeping's last step, between publishing the alloc bits and clearing
    /// the mark bits (see [`PageDesc::slot_is_live`]).
    pub fn finish_sweep_publish(&self) {
        self.unswept.store(false, Release);
        fence(Release);
    }

    pub fn span(&self) -> usize {
        self.span.load(Relaxed) as usize
    }

    pub fn large_size(&self) -> usize {
        self.large_size.load(Relaxed) as usize
    }

    /// Clears the per-object bits a free slot must not carry (pointer-free,
    /// pin, conservative, barriered, and ephemeron when `ephemerons`) for
    /// the slots set in `dead`, a mask of bitmap word `w`: sweeping's dead
    /// slots, explicitly freed ones. Cleanup bits are the caller's (it
    /// calls `on_free` first); mark and alloc bits too.
    #[inline]
    pub fn clear_object_bits(&self, w: usize, dead: u64, ephemerons: bool) {
        self.no_pointers
            .set_word(w, self.no_pointers.word(w) & !dead);
        if ephemerons {
            self.ephemeron.retain_word(w, !dead);
        }
        self.pin.retain_word(w, !dead);
        self.conservative.retain_word(w, !dead);
        self.barriered.retain_word(w, !dead);
    }

    /// The bitmap words that hold the bits of this page's slots: no bit
    /// beyond its slot count is ever set (slot indices are checked against
    /// it, runs end at it), so bitmaps are cleared and counted only this
    /// far. A page keeps its count from use to use until `init_small`
    /// gives it a new one, after clearing with the old.
    #[inline]
    pub fn bitmap_words(&self) -> usize {
        self.slot_count().div_ceil(64).min(WORDS)
    }

    /// Whether an allocated slot holds an object that may hold pointers
    /// (its page is worth clearing ahead of the allocator).
    pub fn holds_pointer_objects(&self) -> bool {
        (0..self.bitmap_words()).any(|w| self.alloc.word(w) & !self.no_pointers.word(w) != 0)
    }

    /// Clears every per-slot bitmap (the words of [`PageDesc::bitmap_words`]).
    pub fn clear_bitmaps(&self) {
        let n = self.bitmap_words();
        for b in [&self.mark, &self.alloc, &self.no_pointers] {
            b.clear_first(n);
            debug_assert!(b.is_clear_from(n), "a bit beyond the slot count");
        }
        for b in self.lazy() {
            b.clear_first(n);
            debug_assert!(b.is_clear_from(n), "a bit beyond the slot count");
        }
        self.set_has_cleanup(false);
        self.has_ephemerons.store(false, Relaxed);
        self.has_unbarriered.store(false, Relaxed);
    }

    /// Turns a free page into a small-object page of `pool`.
    pub fn init_small(&self, pool: usize, slot_size: usize) {
        debug_assert!((MIN_SLOT_SIZE..=PAGE_SIZE).contains(&slot_size));
        self.clear_bitmaps();
        self.pool.store(pool as u8, Relaxed);
        self.slot_size.store(slot_size as u32, Relaxed);
        self.slot_count
            .store((PAGE_SIZE / slot_size) as u32, Relaxed);
        self.recip.store(reciprocal(slot_size), Relaxed);
        self.unswept.store(false, Relaxed);
        self.young.store(true, Relaxed);
        self.set_kind(PageKind::Small);
    }

    /// Turns a free page into the head of a large object of `pages` pages.
    pub fn init_large_head(&self, pages: usize, size: usize) {
        self.clear_bitmaps();
        self.span.store(pages as u32, Relaxed);
        self.large_size.store(size as u64, Relaxed);
        self.slot_count.store(1, Relaxed);
        self.set_kind(PageKind::LargeHead);
    }

    /// Turns a free page into a tail page of the large object headed at `head`.
    pub fn init_large_tail(&self, head: usize) {
        self.span.store(head as u32, Relaxed);
        self.set_kind(PageKind::LargeTail);
    }
}

/// `ceil(2^32 / d)`; exact slot indices for every offset below 64 KiB when
/// `d < 65536` (the rounding error stays below `1/d`).
pub fn reciprocal(d: usize) -> u32 {
    (1u64 << 32).div_ceil(d as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reciprocal_slot_index_is_exact_for_every_offset_and_size() {
        for size in (16..=8192).step_by(8).chain([40, 80, 160, 320, 640, 24576]) {
            let r = reciprocal(size) as u64;
            for off in 0..PAGE_SIZE {
                assert_eq!(
                    ((off as u64 * r) >> 32) as usize,
                    off / size,
                    "size {size} off {off}"
                );
            }
        }
    }
}
