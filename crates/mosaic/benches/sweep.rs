//! Lazy sweeping on a 200 MB heap.
//!
//! Part 1 (criterion): the cost of one sweep step — one 64 KiB page of
//! 32-byte slots at several survival rates, with cleanup objects.
//! Part 2 (printed): a 200 MB live heap of 64-byte objects (400 MB
//! allocated, every other object kept),
//! churned through several collections; every lazy sweep step an allocation
//! takes is recorded by the heap, and the longest and p99 are printed.

#[path = "common.rs"]
mod common;

use std::time::Instant;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use mosaic::unstable::{sweep_page, PageTable};
use mosaic::{Config, Heap};

fn sweep_one_page(c: &mut Criterion) {
    let t = PageTable::new(1).unwrap();
    let d = t.desc(0);
    let mut g = c.benchmark_group("sweep_page_32B");
    for live_pct in [0usize, 50, 90, 100] {
        g.bench_with_input(
            BenchmarkId::from_parameter(format!("{live_pct}%_live")),
            &live_pct,
            |b, &pct| {
                b.iter_batched(
                    || {
                        d.init_small(0, 32);
                        d.alloc.set_range(0, 2048);
                        for s in 0..2048 {
                            if s * 100 / 2048 < pct || (s * 37) % 100 < pct {
                                d.mark.set(s);
                            }
                        }
                    },
                    |_| sweep_page(d, t.page_addr(0), false, &mut |_| {}, None),
                    criterion::BatchSize::SmallInput,
                )
            },
        );
    }
    g.finish();
}

fn heap_200mb() {
    let heap = Heap::new(Config::default(), common::Nodes).unwrap();
    let mut m = heap.mutator().unwrap();
    // 400 MB of 64-byte nodes; every other one is kept in a linked list.
    let n = (400usize << 20) / 64;
    let list = m.empty_root();
    for i in 0..n {
        let o = m.alloc(64).unwrap();
        if i % 2 == 0 {
            if let Some(prev) = list.get() {
                common::set(o, 0, prev);
            }
            list.set(Some(o));
        }
    }
    let start = Instant::now();
    // Churn: allocate another 1 GB of garbage, which sweeps the whole heap
    // lazily several times over.
    for _ in 0..(1usize << 30) / 64 {
        m.alloc(64).unwrap();
    }
    let s = heap.stats();
    println!(
        "heap_200mb: {} pool pages ({} MiB), {} collections, {} lazy sweep steps: p50 {:?} p99 {:?} max {:?}; \
         pauses p50 {:?} max {:?}; churn {:?}",
        s.pool_pages(),
        (s.pool_pages() * mosaic::PAGE_SIZE) >> 20,
        s.collections,
        s.sweep_steps.count,
        s.sweep_steps.p50,
        s.sweep_steps.p99,
        s.sweep_steps.max,
        s.pauses.p50,
        s.pauses.max,
        start.elapsed()
    );
}

fn benches(c: &mut Criterion) {
    sweep_one_page(c);
    heap_200mb();
}

criterion_group!(sweep, benches);
criterion_main!(sweep);
