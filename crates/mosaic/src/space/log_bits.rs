//! The write barrier's side table: one *unlogged* bit per 8-byte granule
//! of the heap's address range, for the granule an object starts in.
//!
//! Invariant (generational mode): the bit of an object is set exactly when
//! the object is old (marked and kept by the last collection), was
//! allocated `BARRIERED`, and no barrier has logged it since that
//! collection. So the barrier's fast path is one load and a test: a clear
//! bit means young, unbarriered, or already logged — nothing to do.
//!
//! - The marker sets the bit of every `BARRIERED` object it marks; a
//!   minor collection sets it again on every object it took from the
//!   remembered set.
//! - A barrier clears it atomically (`take`): only the thread that cleared
//!   it logs the object.
//! - A run of slots handed to a mutator gets its bits cleared
//!   (`clear_range`): a dead object's stale bit never reaches the young
//!   object allocated in its place.
//!
//! The table is one `MAP_NORESERVE` reservation of 1/64 of the heap's
//! address range: never touched outside generational mode, where a read
//! of a page nobody wrote maps the kernel's shared zero page.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::os::Reservation;

/// Bytes of heap per bit.
pub const LOG_GRANULE_SHIFT: usize = 3;

/// The unlogged bits of one heap range.
pub struct LogBits {
    words: Reservation,
    base: usize,
    len: usize,
}

impl LogBits {
    /// The table for `len` bytes of heap from `base`.
    pub fn new(base: usize, len: usize) -> std::io::Result<Self> {
        let bits = len >> LOG_GRANULE_SHIFT;
        let bytes = (bits.div_ceil(64) * 8).max(4096);
        Ok(LogBits {
            words: Reservation::new(bytes, 4096)?,
            base,
            len,
        })
    }

    /// What an inline fast path needs: the heap's base and length, and the
    /// first word of the table (bit `g % 64` of word `g / 64` for granule
    /// `g = (addr - base) >> 3`).
    pub fn raw(&self) -> (usize, usize, *const u64) {
        (self.base, self.len, self.words.start() as *const u64)
    }

    #[inline(always)]
    fn word(&self, granule: usize) -> &AtomicU64 {
        debug_assert!(granule < self.len >> LOG_GRANULE_SHIFT);
        // SAFETY: `granule` indexes the heap range (callers check the
        // offset against `len`), the reservation holds a word for every 64
        // granules, is zero-filled (a valid `AtomicU64`), 8-aligned, and
        // lives as long as `self`.
        unsafe { &*(self.words.start() as *const AtomicU64).add(granule / 64) }
    }

    /// The granule of `addr`, if it is inside the heap.
    #[inline(always)]
    fn granule(&self, addr: usize) -> Option<usize> {
        let off = addr.wrapping_sub(self.base);
        (off < self.len).then_some(off >> LOG_GRANULE_SHIFT)
    }

    /// Whether `addr`'s bit is set (an old barriered object not yet logged).
    #[inline(always)]
    pub fn is_unlogged(&self, addr: usize) -> bool {
        match self.granule(addr) {
            Some(g) => self.word(g).load(Relaxed) & (1 << (g % 64)) != 0,
            None => false,
        }
    }

    /// Sets `addr`'s bit: the object is old and must be logged by the next
    /// barrier on it.
    #[inline]
    pub fn set_unlogged(&self, addr: usize) {
        if let Some(g) = self.granule(addr) {
            let bit = 1 << (g % 64);
            let w = self.word(g);
            if w.load(Relaxed) & bit == 0 {
                w.fetch_or(bit, Relaxed);
            }
        }
    }

    /// Clears `addr`'s bit; whether it was set (the caller logs the object).
    #[inline]
    pub fn take(&self, addr: usize) -> bool {
        match self.granule(addr) {
            Some(g) => {
                let bit = 1 << (g % 64);
                self.word(g).fetch_and(!bit, Relaxed) & bit != 0
            }
            None => false,
        }
    }

    /// Clears the bits of `[start, start + len)` (slots just handed out).
    /// Other threads may set or clear bits of neighbouring objects in the
    /// boundary words meanwhile, so those are cleared atomically.
    pub fn clear_range(&self, start: usize, len: usize) {
        let (Some(first), Some(last)) = (self.granule(start), self.granule(start + len - 1)) else {
            return;
        };
        let end = last + 1;
        let mut g = first;
        while g < end {
            let in_word = (64 - g % 64).min(end - g);
            let mask = if in_word == 64 {
                u64::MAX
            } else {
                ((1u64 << in_word) - 1) << (g % 64)
            };
            let w = self.word(g);
            if w.load(Relaxed) & mask != 0 {
                w.fetch_and(!mask, Relaxed);
            }
            g += in_word;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_per_granule_and_ranges_clear_only_their_own() {
        let base = 1 << 40;
        let l = LogBits::new(base, 1 << 20).unwrap();
        assert!(!l.is_unlogged(base));
        for a in [
            base,
            base + 8,
            base + 64 * 8,
            base + 4096,
            base + (1 << 20) - 8,
        ] {
            l.set_unlogged(a);
            assert!(l.is_unlogged(a));
        }
        assert!(!l.is_unlogged(base + 16));
        assert!(!l.is_unlogged(base - 8) && !l.is_unlogged(base + (1 << 20)));
        assert!(l.take(base + 8) && !l.take(base + 8), "taken once");
        // A range from granule 1 to granule 64 (inclusive) spans two words.
        l.set_unlogged(base + 65 * 8);
        l.clear_range(base + 8, 64 * 8);
        assert!(l.is_unlogged(base), "the granule before the range stays");
        assert!(!l.is_unlogged(base + 64 * 8));
        assert!(
            l.is_unlogged(base + 65 * 8),
            "the granule after the range stays"
        );
        // A foreign address is never unlogged and never logged.
        assert!(!l.take(base - 8));
        l.set_unlogged(8);
        l.clear_range(base + (1 << 20), 64);
    }
}
