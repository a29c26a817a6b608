//! The workloads, written from their published descriptions. Each peer
//! (C, OCaml, Java, Go) in `peers/` runs the same algorithm and reports the
//! same check value.

pub mod alloc;
pub mod binary_trees;
pub mod compaction;
pub mod gcbench;
pub mod nqueens;
pub mod refs;
pub mod release;
pub mod safepoint;
pub mod soak;
pub mod threads;
pub mod varsize;

/// Deterministic xorshift64*, the same in every peer, so "random" sizes and
/// indices are identical everywhere.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A power-law size: 16·2^k bytes with probability 2^-(k+1) (k ≤ 7),
    /// plus a uniform part below that, so sizes fall in 16..4096.
    #[inline]
    pub fn power_law_size(&mut self) -> usize {
        let r = self.next_u64();
        let k = (r.trailing_zeros()).min(7);
        let base = 16usize << k;
        base + (self.next_u64() as usize % base)
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn rng_matches_the_peers_reference_values() {
        // Computed independently (Python); the C, Java and Go peers use the
        // same three shifts and multiplier.
        let mut r = Rng::new(42);
        assert_eq!(r.next_u64(), 0x56ce_4ab7_719b_a3a0);
        let mut r = Rng::new(42);
        let sizes: Vec<usize> = (0..2000).map(|_| r.power_law_size()).collect();
        assert!(sizes.iter().all(|&s| (16..4096).contains(&s)));
        let small = sizes.iter().filter(|&&s| s < 32).count();
        assert!(
            (800..1200).contains(&small),
            "about half are 16..31 B: {small}"
        );
    }
}
