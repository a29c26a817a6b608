//! The write barrier alone (BENCHMARKS.md, "Generations"): nanoseconds per
//! store of a reference into a heap object, with no collection inside the
//! timing: a plain store, a store with `write_barrier` on an old object
//! already logged this cycle (the common case: one load and a test), on a
//! young object, and with a generational heap's barrier on a heap that is
//! not generational (the bit is always clear).

#[path = "common.rs"]
mod common;

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mosaic::{AllocFlags, Config, Heap, ObjRef};

const FIELDS: usize = 64;

/// Stores `FIELDS` references round-robin into `obj`, `iters` times, with
/// or without the barrier.
fn stores(
    m: &mut mosaic::Mutator<common::Nodes>,
    obj: ObjRef,
    value: ObjRef,
    iters: u64,
    barrier: bool,
) {
    let f = obj.as_ptr() as *mut *mut u8;
    for i in 0..iters as usize {
        // SAFETY: `obj` has FIELDS pointer-sized fields.
        unsafe { f.add(i % FIELDS).write(black_box(value.as_ptr())) };
        if barrier {
            m.write_barrier(obj);
        }
    }
}

fn barrier(c: &mut Criterion) {
    let mut g = c.benchmark_group("barrier");
    g.throughput(Throughput::Elements(1));
    for generational in [true, false] {
        let heap = Heap::new(
            Config {
                generational,
                ..Config::default()
            },
            common::Nodes,
        )
        .unwrap();
        let mut m = heap.mutator().unwrap();
        let old = m.alloc_with(8 * FIELDS, AllocFlags::BARRIERED).unwrap();
        let value = m.alloc_with(16, AllocFlags::BARRIERED).unwrap();
        let _r = (m.root(old).unwrap(), m.root(value).unwrap());
        m.collect();
        m.write_barrier(old); // logged: every later barrier is the fast path
        let young = m.alloc_with(8 * FIELDS, AllocFlags::BARRIERED).unwrap();
        let name = if generational {
            "generational"
        } else {
            "not-generational"
        };
        if generational {
            g.bench_function("plain store", |b| {
                b.iter_custom(|n| {
                    let t = Instant::now();
                    stores(&mut m, old, value, n, false);
                    t.elapsed()
                })
            });
            g.bench_function("store + barrier, old logged", |b| {
                b.iter_custom(|n| {
                    let t = Instant::now();
                    stores(&mut m, old, value, n, true);
                    t.elapsed()
                })
            });
            g.bench_function("store + barrier, young", |b| {
                b.iter_custom(|n| {
                    let t = Instant::now();
                    stores(&mut m, young, value, n, true);
                    t.elapsed()
                })
            });
        } else {
            g.bench_function(format!("store + barrier, {name} heap"), |b| {
                b.iter_custom(|n| {
                    let t = Instant::now();
                    stores(&mut m, old, value, n, true);
                    t.elapsed()
                })
            });
        }
        assert_eq!(
            heap.stats().collections,
            1,
            "no collection inside the timing"
        );
    }
    g.finish();
}

criterion_group!(benches, barrier);
criterion_main!(benches);
