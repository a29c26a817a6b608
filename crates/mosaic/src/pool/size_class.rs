//! Size classes: which slot size a request of `n` bytes gets.

use crate::space::{MIN_SLOT_SIZE, PAGE_SIZE};

/// Largest slot size a table may contain (at least 4 slots per page).
pub const MAX_CLASS_SIZE: usize = PAGE_SIZE / 4;

/// An ascending table of slot sizes with an O(1) lookup.
#[derive(Clone, Debug)]
pub struct SizeClasses {
    sizes: Vec<usize>,
    /// `lookup[(n + 7) / 8]` is the class of a request of `n` bytes.
    lookup: Box<[u8]>,
}

impl SizeClasses {
    /// 16-byte granules: exact classes up to 128 B, then four classes per
    /// doubling up to 8 KiB. Rounding a request up to its class wastes under
    /// 20% in the worst case (a request one byte above a class boundary) and
    /// about 10% on average over uniformly distributed sizes.
    pub fn mosaic_default() -> Self {
        let mut sizes: Vec<usize> = (1..=8).map(|g| g * 16).collect();
        let mut base = 128;
        while base < 8192 {
            for q in 1..=4 {
                sizes.push(base + base * q / 4);
            }
            base *= 2;
        }
        Self::new(&sizes).expect("default table is valid")
    }

    /// [`SizeClasses::mosaic_default`]'s class of a request of `size`
    /// bytes, computed without the table (at compile time for a constant
    /// size): `None` above 8 KiB.
    pub const fn default_class_of(size: usize) -> Option<usize> {
        if size <= 128 {
            return Some(if size <= 16 { 0 } else { size.div_ceil(16) - 1 });
        }
        if size > 8192 {
            return None;
        }
        // Classes 8.. : four per doubling above 128 (160, 192, 224, 256, ...).
        let mut base = 128;
        let mut class = 8;
        while size > 2 * base {
            base *= 2;
            class += 4;
        }
        let quarter = base / 4;
        Some(class + (size - base).div_ceil(quarter) - 1)
    }

    /// Ruby's five size pools (Variable Width Allocation): 40, 80, 160, 320, 640 B.
    pub fn ruby() -> Self {
        Self::new(&[40, 80, 160, 320, 640]).expect("ruby table is valid")
    }

    /// A custom table: ascending, multiples of 8, from 16 B to 16 KiB, at most 64 classes.
    pub fn new(sizes: &[usize]) -> Result<Self, String> {
        if sizes.is_empty() || sizes.len() > 64 {
            return Err(format!(
                "a size-class table needs 1 to 64 sizes, got {}",
                sizes.len()
            ));
        }
        for (i, &s) in sizes.iter().enumerate() {
            if !(MIN_SLOT_SIZE..=MAX_CLASS_SIZE).contains(&s) || s % 8 != 0 {
                return Err(format!(
                    "size class {s} must be a multiple of 8 between {MIN_SLOT_SIZE} and {MAX_CLASS_SIZE}"
                ));
            }
            if i > 0 && s <= sizes[i - 1] {
                return Err(format!(
                    "size classes must ascend: {} then {s}",
                    sizes[i - 1]
                ));
            }
        }
        let max = *sizes.last().unwrap();
        let mut lookup = vec![0u8; max / 8 + 1];
        let mut class = 0;
        for (i, slot) in lookup.iter_mut().enumerate() {
            while sizes[class] < i * 8 {
                class += 1;
            }
            *slot = class as u8;
        }
        Ok(SizeClasses {
            sizes: sizes.to_vec(),
            lookup: lookup.into_boxed_slice(),
        })
    }

    /// The class for a request of `size` bytes, or `None` when it belongs in
    /// the large-object space.
    #[inline(always)]
    pub fn class_of(&self, size: usize) -> Option<usize> {
        self.lookup
            .get(size.saturating_add(7) >> 3)
            .map(|&c| c as usize)
    }

    /// The raw lookup table (copied into each mutator for the fast path).
    pub fn lookup_table(&self) -> &[u8] {
        &self.lookup
    }

    pub fn slot_size(&self, class: usize) -> usize {
        self.sizes[class]
    }

    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    /// Largest request served from a size pool.
    pub fn max_small(&self) -> usize {
        *self.sizes.last().unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_class_of_agrees_with_the_table() {
        let t = SizeClasses::mosaic_default();
        for size in 0..=9000 {
            assert_eq!(
                SizeClasses::default_class_of(size),
                t.class_of(size),
                "{size}"
            );
        }
    }

    #[test]
    fn default_table_matches_the_design() {
        let c = SizeClasses::mosaic_default();
        assert_eq!(
            &c.sizes()[..10],
            &[16, 32, 48, 64, 80, 96, 112, 128, 160, 192]
        );
        assert_eq!(c.max_small(), 8192);
        assert_eq!(c.len(), 8 + 4 * 6);
        let waste = |n: usize| {
            let slot = c.slot_size(c.class_of(n).unwrap());
            (slot - n) as f64 / slot as f64
        };
        let worst = (129..=8192).map(waste).fold(0.0, f64::max);
        let mean = (129..=8192).map(waste).sum::<f64>() / (8192 - 128) as f64;
        assert!(worst < 0.20, "worst-case waste {worst}");
        assert!(mean < 0.11, "mean waste {mean}");
    }

    #[test]
    fn lookup_picks_the_smallest_class_that_fits() {
        for c in [SizeClasses::mosaic_default(), SizeClasses::ruby()] {
            for n in 0..=c.max_small() {
                let k = c.class_of(n).unwrap();
                assert!(c.slot_size(k) >= n, "{n}");
                assert!(
                    k == 0 || c.slot_size(k - 1) < n,
                    "{n} -> {}",
                    c.slot_size(k)
                );
            }
            assert_eq!(c.class_of(c.max_small() + 1), None);
            assert_eq!(c.class_of(usize::MAX - 7), None);
            assert_eq!(c.class_of(usize::MAX), None);
        }
        let r = SizeClasses::ruby();
        assert_eq!(r.slot_size(r.class_of(41).unwrap()), 80);
    }

    #[test]
    fn bad_tables_are_rejected_with_a_reason() {
        assert!(SizeClasses::new(&[]).unwrap_err().contains("1 to 64"));
        assert!(SizeClasses::new(&[8]).unwrap_err().contains("between"));
        assert!(SizeClasses::new(&[36])
            .unwrap_err()
            .contains("multiple of 8"));
        assert!(SizeClasses::new(&[64, 32]).unwrap_err().contains("ascend"));
    }
}
