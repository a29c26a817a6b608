//! Allocation fast path: nanoseconds per object, Mosaic against a bump
//! allocator (bumpalo) in the same run, with the same batching.
//!
//! bumpalo allocates from a 256 KiB arena that is reset (outside the timing)
//! whenever it is full, so both allocators work in cache-resident memory and
//! the comparison is of allocation paths, not of page faults. Mosaic runs
//! with its defaults and no survivors, and collects whenever a pool reaches
//! its budget: the slow path, lazy sweeping and collections are inside the
//! timing. `bumpalo_zeroed` also zeroes each object, which is Mosaic's
//! contract (memory handed out is zeroed).

#[path = "common.rs"]
mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mosaic::{Config, Heap};

const ARENA_BYTES: usize = 256 << 10;

fn alloc(c: &mut Criterion) {
    let mut g = c.benchmark_group("alloc");
    g.throughput(Throughput::Elements(1));
    for size in [16usize, 32, 64, 128, 512] {
        let heap = Heap::new(Config::default(), common::Nodes).unwrap();
        let mut m = heap.mutator().unwrap();
        g.bench_with_input(BenchmarkId::new("mosaic", size), &size, |b, &size| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(m.alloc(size).unwrap());
                }
                start.elapsed()
            })
        });
        // Raw bump allocation (memory handed out as it is), and bump
        // allocation that zeroes each object: Mosaic's contract. Two
        // separate loops: a flag tested inside the loop would slow the raw
        // one down and flatter Mosaic.
        g.bench_with_input(BenchmarkId::new("bumpalo", size), &size, |b, &size| {
            bump_loop(b, size, |p, _| black_box(p))
        });
        g.bench_with_input(
            BenchmarkId::new("bumpalo_zeroed", size),
            &size,
            |b, &size| {
                bump_loop(b, size, |p: std::ptr::NonNull<u8>, n| {
                    // SAFETY: `p` points to `n` fresh bytes.
                    unsafe { p.as_ptr().write_bytes(0, n) };
                    black_box(p)
                })
            },
        );
    }
    g.finish();
}

fn bump_loop(
    b: &mut criterion::Bencher<'_>,
    size: usize,
    use_it: impl Fn(std::ptr::NonNull<u8>, usize) -> std::ptr::NonNull<u8>,
) {
    let layout = std::alloc::Layout::from_size_align(size, 16).unwrap();
    let mut bump = bumpalo::Bump::with_capacity(ARENA_BYTES);
    let batch = (ARENA_BYTES / size) as u64;
    b.iter_custom(|iters| {
        let mut total = Duration::ZERO;
        let mut left = iters;
        while left > 0 {
            let n = left.min(batch);
            let start = Instant::now();
            for _ in 0..n {
                use_it(bump.alloc_layout(layout), size);
            }
            total += start.elapsed();
            bump.reset();
            left -= n;
        }
        total
    })
}

criterion_group!(benches, alloc);
criterion_main!(benches);
