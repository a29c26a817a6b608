//! Allocation microbenchmark: nanoseconds per allocation of a fixed size,
//! with nothing surviving. Mosaic and two bump allocators run here; malloc+free
//! under glibc, jemalloc and mimalloc run in `peers/c/alloc.c`, with the
//! same loop shape (allocate a window of 256 objects, then free them).
//!
//! Mosaic runs three ways: `mosaic` (size known at run time, a class
//! lookup), `mosaic-sized` (size known at compile time) and `mosaic-uninit`
//! (compile-time size, `UNINIT`: neither cleared nor scanned).
//!
//! Mosaic hands out zeroed memory by default, so [`bump_zeroed`] (a bump allocation
//! followed by zeroing the object's bytes) is the like-for-like floor for
//! it; [`bump`] never touches the memory it hands out. The malloc peers
//! write one byte per object.

use std::hint::black_box;
use std::time::Instant;

use mosaic::{AllocFlags, Config, Heap};

use crate::vm::{FirstWords, Vm};

pub const SIZES: [usize; 6] = [16, 32, 64, 128, 256, 512];

/// Mosaic: `count` allocations of `size` bytes on a heap built from
/// `config`; ns per allocation.
pub fn mosaic(size: usize, count: u64, config: Config) -> f64 {
    let heap = Heap::new(config, Vm::<FirstWords<0>>::default()).expect("heap");
    let mut m = heap.mutator().unwrap();
    let t = Instant::now();
    for _ in 0..count {
        black_box(m.alloc(size).expect("alloc"));
    }
    t.elapsed().as_nanos() as f64 / count as f64
}

/// Mosaic with the size known at compile time ([`mosaic::Mutator::alloc_sized`]),
/// as a compiler for a language runtime would emit it: zeroed memory, or
/// with `uninit` not cleared and pointer-free ([`AllocFlags::UNINIT`]).
/// Sizes outside [`SIZES`] go through [`mosaic`]'s path.
pub fn mosaic_sized(size: usize, count: u64, config: Config, uninit: bool) -> f64 {
    let flags = if uninit {
        AllocFlags::UNINIT
    } else {
        AllocFlags::NONE
    };
    macro_rules! sized {
        ($($n:literal)*) => {
            match size {
                $($n => sized_loop::<$n>(count, config, flags),)*
                _ => mosaic(size, count, config),
            }
        };
    }
    sized!(16 32 64 128 256 512)
}

fn sized_loop<const N: usize>(count: u64, config: Config, flags: AllocFlags) -> f64 {
    let heap = Heap::new(config, Vm::<FirstWords<0>>::default()).expect("heap");
    let mut m = heap.mutator().unwrap();
    let t = Instant::now();
    for _ in 0..count {
        black_box(m.alloc_sized::<N>(flags).expect("alloc"));
    }
    t.elapsed().as_nanos() as f64 / count as f64
}

/// A bump allocator (bumpalo), reset every [`ARENA`] bytes (reset time included):
/// the fastest an allocator that never looks at its memory can be.
pub fn bump(size: usize, count: u64) -> f64 {
    bump_loop(size, count, ARENA, |_| {})
}

/// The bump arena of [`bump`] and [`bump_zeroed`]: it stays in L2.
pub const ARENA: usize = 256 << 10;

/// Mosaic's default heap target with nothing live (`heap_min`): the memory
/// its allocations cycle through between collections.
pub const HEAP_CYCLE: usize = 4 << 20;

/// The same bump allocator, zeroing every object's `size` bytes after
/// allocating it (`std::ptr::write_bytes`), as an allocator that hands out
/// zeroed memory must. The sizes of [`SIZES`] are zeroed with a constant
/// length (inline stores, as compiled code that knows the object's size
/// zeroes it), others through a `memset` call.
/// `arena` is [`ARENA`], or [`HEAP_CYCLE`] to see what walking as much
/// memory as Mosaic does between collections costs (a diagnostic, not a
/// floor).
pub fn bump_zeroed(size: usize, count: u64, arena: usize) -> f64 {
    macro_rules! sized {
        ($($n:literal)*) => {
            match size {
                // SAFETY (every arm): `p` is a fresh allocation of `size` bytes.
                $($n => bump_loop(size, count, arena, |p| unsafe { std::ptr::write_bytes(p, 0, $n) }),)*
                _ => bump_loop(size, count, arena, |p| unsafe { std::ptr::write_bytes(p, 0, size) }),
            }
        };
    }
    sized!(16 32 64 128 256 512)
}

#[inline(always)]
fn bump_loop(size: usize, count: u64, arena_bytes: usize, init: impl Fn(*mut u8)) -> f64 {
    let layout = std::alloc::Layout::from_size_align(size, 16).unwrap();
    let mut arena = bumpalo::Bump::with_capacity(arena_bytes);
    let per_reset = (arena_bytes / size) as u64;
    let t = Instant::now();
    let mut left = count;
    while left > 0 {
        let n = left.min(per_reset);
        for _ in 0..n {
            let p = arena.alloc_layout(layout);
            init(p.as_ptr());
            black_box(p);
        }
        arena.reset();
        left -= n;
    }
    t.elapsed().as_nanos() as f64 / count as f64
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_allocator_reports_a_positive_rate() {
        for s in super::SIZES.into_iter().chain([48]) {
            assert!(super::mosaic(s, 100_000, mosaic::Config::default()) > 0.0);
            for uninit in [false, true] {
                let c = mosaic::Config::default();
                assert!(super::mosaic_sized(s, 100_000, c, uninit) > 0.0);
            }
            assert!(super::bump(s, 100_000) > 0.0);
            assert!(super::bump_zeroed(s, 100_000, super::ARENA) > 0.0);
            assert!(super::bump_zeroed(s, 100_000, super::HEAP_CYCLE) > 0.0);
        }
    }
}
