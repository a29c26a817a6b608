//! Marking throughput on a 1-million-node binary tree (2^20 − 1 nodes of 32
//! bytes) with 1, 2 and 4 GC workers (`Config::gc_threads`; 1 is the serial
//! marker). The time measured is the collector's own mark phase (from its
//! counters), not the sweep of the previous cycle.

#[path = "common.rs"]
mod common;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mosaic::{Config, Heap};

fn mark(c: &mut Criterion) {
    let mut g = c.benchmark_group("mark");
    g.sample_size(30);
    for workers in [1, 2, 4] {
        let config = Config {
            gc_threads: workers,
            ..Config::default()
        };
        let heap = Heap::new(config, common::Nodes).unwrap();
        let mut m = heap.mutator().unwrap();
        let root = common::tree(&mut m, 20, 32);
        let _keep = m.root(root).unwrap();
        m.collect();
        let nodes = heap.stats().last_marked;
        assert_eq!(nodes, (1 << 20) - 1);
        g.throughput(Throughput::Elements(nodes));
        g.bench_function(BenchmarkId::new("tree_1M_nodes/workers", workers), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let before = heap.stats().mark_time;
                    m.collect();
                    total += heap.stats().mark_time - before;
                    assert_eq!(heap.stats().last_marked, nodes);
                }
                total
            })
        });
    }
    g.finish();
}

criterion_group!(benches, mark);
criterion_main!(benches);
