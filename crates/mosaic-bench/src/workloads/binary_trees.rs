//! binary-trees (Computer Language Benchmarks Game): a stretch tree of depth
//! n+1, a long-lived tree of depth n, and 2^(n−d+4) trees of each depth
//! d = 4, 6, …, n, each built bottom-up and walked.
//!
//! Every node is allocated, leaves included: a leaf is a node whose two
//! children are null (nil in OCaml), as in every peer.
//!
//! Check value: the sum of every tree's node count, the same in every peer.
//! Timed in-process from the stretch tree to the last check (the heap or
//! runtime set up before), with a monotonic clock, in every peer.

use std::time::{Duration, Instant};

use mosaic::{Config, Heap, Mutator, ObjRef};

use crate::vm::{FirstWords, Gen, ShadowStack, Vm};

pub type TreeVm = Vm<FirstWords<2>>;

pub const MIN_DEPTH: u32 = 4;

pub fn expected_check(n: u32) -> u64 {
    let max = n.max(MIN_DEPTH + 2);
    let size = |d: u32| (1u64 << (d + 1)) - 1;
    let iterations: u64 = (MIN_DEPTH..=max)
        .step_by(2)
        .map(|d| (1u64 << (max - d + MIN_DEPTH)) * size(d))
        .sum();
    size(max + 1) + iterations + size(max)
}

fn make(m: &mut Mutator<TreeVm>, s: &ShadowStack, d: u32, gen: Gen) -> ObjRef {
    if d == 0 {
        return m.alloc_sized::<16>(gen.flags()).expect("node");
    }
    let base = s.len();
    let l = make(m, s, d - 1, gen);
    s.push(l);
    let r = make(m, s, d - 1, gen);
    s.push(r);
    let n = m.alloc_sized::<16>(gen.flags()).expect("node");
    let f = n.as_ptr() as *mut *mut u8;
    // SAFETY: a node is two pointers.
    unsafe {
        f.write(s.get(base).as_ptr());
        f.add(1).write(s.get(base + 1).as_ptr());
    }
    // Initialised before any other allocation: young, no barrier.
    s.truncate(base);
    n
}

fn check(o: ObjRef) -> u64 {
    let f = o.as_ptr() as *const *mut u8;
    // SAFETY: a node is two pointers.
    match unsafe {
        (
            ObjRef::from_ptr(f.read()),
            ObjRef::from_ptr(f.add(1).read()),
        )
    } {
        (Some(l), Some(r)) => 1 + check(l) + check(r),
        _ => 1,
    }
}

/// Runs binary-trees of depth `n`; returns the check value, the heap and
/// the time of the benchmark body (heap creation not included).
pub fn run(n: u32, config: Config) -> (u64, Heap<TreeVm>, Duration) {
    let gen = Gen::of(&config);
    let heap = Heap::new(config, TreeVm::default()).expect("heap");
    let mut m = heap.mutator().unwrap();
    let s = heap.embedder().stack(&mut m, 1 << 10);
    let start = Instant::now();
    let max = n.max(MIN_DEPTH + 2);
    let mut total = check(make(&mut m, &s, max + 1, gen));
    let long_lived = make(&mut m, &s, max, gen);
    s.push(long_lived);
    for d in (MIN_DEPTH..=max).step_by(2) {
        for _ in 0..1u64 << (max - d + MIN_DEPTH) {
            total += check(make(&mut m, &s, d, gen));
        }
    }
    total += check(s.get(0));
    let elapsed = start.elapsed();
    s.truncate(0);
    drop(m);
    (total, heap, elapsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_trees_counts_every_node() {
        let (c, heap, _) = run(
            10,
            Config {
                verify: true,
                // Depth 10 allocates under the default 4 MiB floor.
                heap_min: 256 << 10,
                ..Config::default()
            },
        );
        assert_eq!(c, expected_check(10));
        assert!(heap.stats().collections > 0);
        // Published output for n=10: stretch tree check 4095, long lived 2047.
        assert_eq!(expected_check(10), 4095 + iterations_10() + 2047);
    }

    fn iterations_10() -> u64 {
        // d=4: 1024 trees of 31; d=6: 256 of 127; d=8: 64 of 511; d=10: 16 of 2047.
        1024 * 31 + 256 * 127 + 64 * 511 + 16 * 2047
    }
}
