//! Allocation microbenchmark: nanoseconds per allocation of a fixed size,
//! with nothing surviving. Mosaic and a bump allocator run here; malloc+free
//! under glibc, jemalloc and mimalloc run in `peers/c/alloc.c`, with the
//! same loop shape (allocate a window of 256 objects, then free them).

use std::hint::black_box;
use std::time::Instant;

use mosaic::{Config, Heap};

use crate::vm::{FirstWords, Vm};

pub const SIZES: [usize; 5] = [16, 32, 64, 128, 512];

/// Mosaic: `count` allocations of `size` bytes; ns per allocation.
pub fn mosaic(size: usize, count: u64) -> f64 {
    let heap = Heap::new(Config::default(), Vm::<FirstWords<0>>::default()).expect("heap");
    let mut m = heap.mutator().unwrap();
    let t = Instant::now();
    for _ in 0..count {
        black_box(m.alloc(size).expect("alloc"));
    }
    t.elapsed().as_nanos() as f64 / count as f64
}

/// A bump allocator (bumpalo), reset every 256 KiB (reset time included):
/// the fastest an allocator that never looks at its memory can be.
pub fn bump(size: usize, count: u64) -> f64 {
    let layout = std::alloc::Layout::from_size_align(size, 16).unwrap();
    let mut arena = bumpalo::Bump::with_capacity(256 << 10);
    let per_reset = ((256 << 10) / size) as u64;
    let t = Instant::now();
    let mut left = count;
    while left > 0 {
        let n = left.min(per_reset);
        for _ in 0..n {
            black_box(arena.alloc_layout(layout));
        }
        arena.reset();
        left -= n;
    }
    t.elapsed().as_nanos() as f64 / count as f64
}

#[cfg(test)]
mod tests {
    #[test]
    fn both_allocators_report_a_positive_rate() {
        for s in super::SIZES {
            assert!(super::mosaic(s, 100_000) > 0.0);
            assert!(super::bump(s, 100_000) > 0.0);
        }
    }
}
