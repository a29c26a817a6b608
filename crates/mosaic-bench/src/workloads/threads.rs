//! Mutator scaling: `threads` threads share one heap, and each makes
//! `allocs` allocations of 16, 32, 48 and 64 bytes in turn (allocation `i`
//! is `16·(1 + i mod 4)` bytes), keeping the last `ring` of them alive in a
//! ring of its own: allocation `i` goes to slot `i mod ring`, replacing (and
//! so dropping) allocation `i − ring`. The live set is bounded: `ring`
//! objects per thread whatever `allocs` is.
//!
//! Each object holds its allocation index and its thread's number (the
//! first two words). When a thread is done it checks every slot of its ring
//! against what it wrote and returns the sum of those words; the check value
//! is the sum over threads ([`Params::expected_check`]).
//!
//! What is timed, the same in every peer (`peers/c/threads.c` for Boehm,
//! glibc, jemalloc and mimalloc): from just before the first thread is
//! started to just after the last one is joined, with a monotonic clock; the
//! heap (or `GC_INIT`) is set up before. Inside it: each thread's start-up
//! (here a [`Mutator`] and the ring's root array; for Boehm the thread's
//! registration by its `pthread_create`), the allocations, the check. The
//! reported figure is that time over all threads' allocations: wall-clock ns
//! per allocation, so perfect scaling on `c` cores divides it by
//! `min(threads, c)`.
//!
//! The objects hold no references and are not cleared: Mosaic allocates
//! them `UNINIT` (not zeroed, never scanned), Boehm with `GC_MALLOC_ATOMIC`
//! (the same), malloc does not clear either.
//!
//! Mosaic's ring is a [`ShadowStack`] of the thread (a root array off
//! the heap, scanned as its mutator's roots until the thread ends); Boehm's is an array allocated with
//! `GC_MALLOC` (scanned; it is in the heap, so it counts in
//! [`Params::live_bytes`]); malloc's is a plain array, and the replaced
//! object is freed. Neither the rings nor their last objects are freed at
//! the end, by anyone.

use std::time::{Duration, Instant};

use mosaic::{AllocFlags, Config, Heap, Mutator};
use serde::{Deserialize, Serialize};

use crate::vm::{FirstWords, ShadowStack, Vm};

/// The objects are leaves: no reference fields.
pub type LeafVm = Vm<FirstWords<0>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    pub threads: usize,
    /// Allocations per thread.
    pub allocs: u64,
    /// Objects each thread keeps alive.
    pub ring: usize,
}

/// The size of allocation `i`: 16, 32, 48, 64 bytes in turn (slots of the
/// same size in Mosaic's and Boehm's 16-byte granules).
#[inline(always)]
pub fn object_size(i: u64) -> usize {
    16 * (1 + (i & 3) as usize)
}

impl Params {
    /// The arguments of `peers/c/threads.c`: `THREADS ALLOCS RING`.
    pub fn peer_args(&self) -> Vec<String> {
        [self.threads as u64, self.allocs, self.ring as u64]
            .iter()
            .map(u64::to_string)
            .collect()
    }

    /// Objects in a thread's ring at the end.
    fn kept(&self) -> u64 {
        self.allocs.min(self.ring as u64)
    }

    /// Live bytes once every ring is full: the ring's objects and its
    /// pointer array (in the heap for Boehm), over all threads.
    pub fn live_bytes(&self) -> usize {
        let ring = self.ring as u64;
        let objects: u64 = (0..ring).map(object_size).sum::<usize>() as u64;
        ((objects + 8 * ring) * self.threads as u64) as usize
    }

    /// [`Params::live_bytes`] without the rings' pointer arrays: what is
    /// live in Mosaic's heap (its rings are root arrays outside it).
    pub fn object_bytes(&self) -> usize {
        self.live_bytes() - 8 * self.ring * self.threads
    }

    pub fn total_allocs(&self) -> u64 {
        self.allocs * self.threads as u64
    }

    /// The sum, over threads and ring slots, of the allocation index and
    /// the thread number each object holds at the end: the last
    /// `min(allocs, ring)` indices of each thread.
    pub fn expected_check(&self) -> u64 {
        let (n, k, t) = (self.allocs, self.kept(), self.threads as u64);
        t * (k * (2 * n - k - 1) / 2) + k * (t * (t - 1) / 2)
    }
}

/// A thread's ring of live objects, rooted by its shadow stack.
pub struct Ring<'a> {
    stack: &'a ShadowStack,
    capacity: usize,
    slot: usize,
    /// Allocations so far.
    pub count: u64,
    tag: u64,
}

impl<'a> Ring<'a> {
    /// An empty ring of `capacity` slots in `stack` (empty, and at least
    /// that large), for thread number `tag`.
    pub fn new(stack: &'a ShadowStack, capacity: usize, tag: u64) -> Self {
        assert!(capacity > 0 && stack.is_empty());
        Ring {
            stack,
            capacity,
            slot: 0,
            count: 0,
            tag,
        }
    }

    /// Allocates the next object and puts it in its slot.
    #[inline(always)]
    pub fn add(&mut self, m: &mut Mutator<LeafVm>) {
        let i = self.count;
        let o = m
            .alloc_with(object_size(i), AllocFlags::UNINIT)
            .expect("ring object");
        let w = o.as_ptr() as *mut u64;
        // SAFETY: a fresh object of at least 16 bytes, 8-aligned.
        unsafe {
            w.write(i);
            w.add(1).write(self.tag);
        }
        if i < self.capacity as u64 {
            self.stack.push(o);
        } else {
            self.stack.set(self.slot, o);
        }
        self.slot += 1;
        if self.slot == self.capacity {
            self.slot = 0;
        }
        self.count = i + 1;
    }

    /// Checks that every slot holds the last object written to it (its
    /// index and this thread's tag); returns the sum of both over the ring,
    /// and empties it.
    ///
    /// # Panics
    /// If any slot holds something else.
    pub fn verify(&mut self) -> u64 {
        let (n, k) = (self.count, self.capacity as u64);
        let mut sum = 0;
        for j in 0..self.stack.len() as u64 {
            // The last allocation index below n that went to slot j.
            let want = j + (n - 1 - j) / k * k;
            let w = self.stack.get(j as usize).as_ptr() as *const u64;
            // SAFETY: ring objects hold two words written by `add`.
            let (i, tag) = unsafe { (w.read(), w.add(1).read()) };
            assert_eq!(
                (i, tag),
                (want, self.tag),
                "slot {j} of thread {} holds the wrong object",
                self.tag
            );
            sum += i + tag;
        }
        self.stack.truncate(0);
        sum
    }
}

/// Runs the workload on a heap built from `config`; returns the check
/// value, the heap, and the time from starting the threads to joining them
/// (heap creation not included).
pub fn run(p: &Params, config: Config) -> (u64, Heap<LeafVm>, Duration) {
    assert!(p.threads > 0);
    let heap = Heap::new(config, LeafVm::default()).expect("heap");
    let start = Instant::now();
    let sums: Vec<u64> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..p.threads)
            .map(|t| {
                let heap = heap.clone();
                sc.spawn(move || {
                    let mut m = heap.mutator().unwrap();
                    let s = heap.embedder().stack(&mut m, p.ring);
                    let mut ring = Ring::new(&s, p.ring, t as u64);
                    for _ in 0..p.allocs {
                        ring.add(&mut m);
                    }
                    ring.verify()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("allocating thread"))
            .collect()
    });
    let elapsed = start.elapsed();
    (sums.iter().sum(), heap, elapsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ring_holds_what_its_thread_wrote_last() {
        for (threads, allocs, ring) in [(1, 50_000, 1000), (4, 200_003, 4096), (3, 100, 256)] {
            let p = Params {
                threads,
                allocs,
                ring,
            };
            let config = Config {
                max_heap: 64 << 20,
                heap_min: 1 << 20,
                verify: true,
                ..Config::default()
            };
            let (check, heap, elapsed) = run(&p, config);
            assert!(elapsed > Duration::ZERO);
            assert_eq!(check, p.expected_check(), "{p:?}");
            let stats = heap.stats();
            // Every allocation went to the pool of its size: a quarter each.
            for (k, size) in [16, 32, 48, 64].into_iter().enumerate() {
                let pool = stats.pools.iter().find(|q| q.slot_size == size).unwrap();
                let per_thread = (allocs + 3 - k as u64) / 4;
                assert_eq!(
                    pool.allocated_total,
                    per_thread * threads as u64,
                    "{size} B"
                );
            }
            if allocs > 100_000 {
                assert!(stats.collections > 0, "{p:?}: {stats}");
            }
        }
    }

    #[test]
    fn the_check_value_sums_the_last_indices() {
        let p = Params {
            threads: 2,
            allocs: 10,
            ring: 4,
        };
        // Indices 6..=9 on both threads, tags 0 and 1 four times each.
        assert_eq!(p.expected_check(), 2 * (6 + 7 + 8 + 9) + 4);
        let short = Params { allocs: 3, ..p };
        assert_eq!(short.expected_check(), 2 * 3 + 3);
        assert_eq!(p.live_bytes(), 2 * (16 + 32 + 48 + 64 + 32));
        assert_eq!(p.peer_args(), ["2", "10", "4"]);
        assert_eq!(
            (0..5).map(object_size).collect::<Vec<_>>(),
            [16, 32, 48, 64, 16]
        );
    }
}
