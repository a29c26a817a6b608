//! Per-page bitmaps, one bit per slot.
//!
//! Words are `AtomicU64` so that descriptors can be shared between threads
//! without `unsafe`; all accesses use `Relaxed` loads and stores (plain `mov`
//! on x86-64). Synchronisation between mutators and the collector comes from
//! the stop-the-world handshake, not from these words. Read-modify-write
//! operations are load + store unless noted, which is correct only while one
//! thread owns the page (a mutator its allocation page, the collector during a
//! pause, a sweeper the page it popped), or while a lost update is repaired
//! afterwards (parallel marking's own bits, `collect/own_marks.rs`).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::geometry::MAX_SLOTS;

/// Number of 64-bit words in a bitmap.
pub const WORDS: usize = MAX_SLOTS / 64;

/// A bitmap with one bit per slot of a page.
pub struct Bitmap {
    words: [AtomicU64; WORDS],
}

impl Default for Bitmap {
    fn default() -> Self {
        Self::new()
    }
}

impl Bitmap {
    /// All bits clear.
    pub fn new() -> Self {
        Bitmap {
            words: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    #[inline(always)]
    pub fn get(&self, i: usize) -> bool {
        self.words[i / 64].load(Relaxed) & (1 << (i % 64)) != 0
    }

    #[inline(always)]
    pub fn set(&self, i: usize) {
        let w = &self.words[i / 64];
        w.store(w.load(Relaxed) | (1 << (i % 64)), Relaxed);
    }

    #[inline(always)]
    pub fn clear(&self, i: usize) {
        let w = &self.words[i / 64];
        w.store(w.load(Relaxed) & !(1 << (i % 64)), Relaxed);
    }

    /// Sets bit `i` and reports whether it was clear before.
    #[inline(always)]
    pub fn test_and_set(&self, i: usize) -> bool {
        let w = &self.words[i / 64];
        let old = w.load(Relaxed);
        let bit = 1 << (i % 64);
        if old & bit != 0 {
            return false;
        }
        w.store(old | bit, Relaxed);
        true
    }

    /// [`Bitmap::test_and_set`] as one atomic read-modify-write, for bits
    /// that several threads may set at once (parallel marking): exactly one
    /// of them sees `true`.
    #[inline(always)]
    pub fn test_and_set_atomic(&self, i: usize) -> bool {
        let w = &self.words[i / 64];
        let bit = 1 << (i % 64);
        if w.load(Relaxed) & bit != 0 {
            return false;
        }
        w.fetch_or(bit, Relaxed) & bit == 0
    }

    /// Clears bit `i` as one atomic read-modify-write and reports whether
    /// it was set: of several threads clearing it, exactly one sees `true`.
    #[inline(always)]
    pub fn test_and_clear_atomic(&self, i: usize) -> bool {
        let w = &self.words[i / 64];
        let bit = 1 << (i % 64);
        if w.load(Relaxed) & bit == 0 {
            return false;
        }
        w.fetch_and(!bit, Relaxed) & bit != 0
    }

    #[inline(always)]
    pub fn word(&self, w: usize) -> u64 {
        self.words[w].load(Relaxed)
    }

    #[inline(always)]
    pub fn set_word(&self, w: usize, v: u64) {
        self.words[w].store(v, Relaxed)
    }

    pub fn clear_all(&self) {
        self.clear_first(WORDS)
    }

    /// Clears the first `words` words (the only ones a page of at most
    /// `64 * words` slots ever sets).
    pub fn clear_first(&self, words: usize) {
        for w in &self.words[..words.min(WORDS)] {
            w.store(0, Relaxed);
        }
    }

    /// Whether every word from `words` on is zero (a debug check of the
    /// bound [`Bitmap::clear_first`] relies on).
    pub fn is_clear_from(&self, words: usize) -> bool {
        self.words[words.min(WORDS)..]
            .iter()
            .all(|w| w.load(Relaxed) == 0)
    }

    /// Whether no bit is set in the first `n` slots.
    pub fn is_clear(&self, n: usize) -> bool {
        (0..n.div_ceil(64)).all(|w| self.word(w) == 0)
    }

    /// Number of set bits.
    pub fn count(&self) -> usize {
        self.count_first(WORDS)
    }

    /// Number of set bits in the first `words` words.
    pub fn count_first(&self, words: usize) -> usize {
        self.words[..words.min(WORDS)]
            .iter()
            .map(|w| w.load(Relaxed).count_ones() as usize)
            .sum()
    }

    /// Sets bits `[from, to)`.
    pub fn set_range(&self, from: usize, to: usize) {
        self.update_range(from, to, |w, m| w | m)
    }

    /// Clears bits `[from, to)`.
    pub fn clear_range(&self, from: usize, to: usize) {
        self.update_range(from, to, |w, m| w & !m)
    }

    fn update_range(&self, from: usize, to: usize, f: impl Fn(u64, u64) -> u64) {
        let mut i = from;
        while i < to {
            let w = i / 64;
            let lo = i % 64;
            let hi = ((w + 1) * 64).min(to) - w * 64;
            let mask = if hi - lo == 64 {
                u64::MAX
            } else {
                ((1u64 << (hi - lo)) - 1) << lo
            };
            self.set_word(w, f(self.word(w), mask));
            i = w * 64 + hi;
        }
    }

    /// First index in `[from, end)` whose bit equals `value`, if any.
    pub fn find(&self, from: usize, end: usize, value: bool) -> Option<usize> {
        let mut i = from;
        while i < end {
            let w = i / 64;
            let mut bits = self.word(w);
            if !value {
                bits = !bits;
            }
            bits &= u64::MAX << (i % 64);
            if bits != 0 {
                let found = w * 64 + bits.trailing_zeros() as usize;
                return (found < end).then_some(found);
            }
            i = (w + 1) * 64;
        }
        None
    }

    /// Calls `f` with the index of every set bit in `[0, n)`.
    pub fn for_each_set(&self, n: usize, mut f: impl FnMut(usize)) {
        for w in 0..n.div_ceil(64) {
            let mut bits = self.word(w);
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                if i >= n {
                    return;
                }
                f(i);
                bits &= bits - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new() -> Box<Bitmap> {
        Box::new(Bitmap {
            words: std::array::from_fn(|_| AtomicU64::new(0)),
        })
    }

    #[test]
    fn ranges_find_and_count_agree_with_a_bool_model() {
        let b = new();
        let mut model = vec![false; MAX_SLOTS];
        let ops = [
            (3, 70, true),
            (64, 128, true),
            (100, 101, false),
            (500, 4096, true),
            (600, 1000, false),
        ];
        for (from, to, set) in ops {
            if set {
                b.set_range(from, to)
            } else {
                b.clear_range(from, to)
            }
            model[from..to].iter_mut().for_each(|x| *x = set);
        }
        assert_eq!(b.count(), model.iter().filter(|x| **x).count());
        for (i, &want) in model.iter().enumerate() {
            assert_eq!(b.get(i), want, "bit {i}");
        }
        for from in [0, 3, 69, 70, 100, 101, 599, 1000, 4095] {
            let want1 = (from..MAX_SLOTS).find(|&i| model[i]);
            let want0 = (from..MAX_SLOTS).find(|&i| !model[i]);
            assert_eq!(b.find(from, MAX_SLOTS, true), want1, "find 1 from {from}");
            assert_eq!(b.find(from, MAX_SLOTS, false), want0, "find 0 from {from}");
        }
        assert_eq!(b.find(0, 3, true), None);
        let mut seen = vec![];
        b.for_each_set(130, |i| seen.push(i));
        assert_eq!(seen, (3..100).chain(101..128).collect::<Vec<_>>());
    }

    #[test]
    fn test_and_set_reports_first_set_only() {
        let b = new();
        assert!(b.test_and_set(77));
        assert!(!b.test_and_set(77));
        b.clear(77);
        assert!(!b.get(77));
        assert!(b.is_clear(4096));
    }

    #[test]
    fn racing_atomic_sets_report_each_bit_once() {
        // Plain spawn and join (not thread::scope, which TSan cannot see).
        let b: std::sync::Arc<Box<Bitmap>> = std::sync::Arc::new(new());
        let wins = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (b, wins) = (b.clone(), wins.clone());
                std::thread::spawn(move || {
                    for i in 0..4096 {
                        if b.test_and_set_atomic(i) {
                            wins.fetch_add(1, Relaxed);
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(wins.load(Relaxed), 4096);
        assert_eq!(b.count(), 4096);
    }
}
