//! Time to safepoint (Mosaic only): how long a collection waits, from the
//! moment it asks the other mutators to stop until the last of them has
//! parked. Mosaic measures this itself at every collection
//! ([`mosaic::Stats::time_to_safepoint`]: from the stop request, before any
//! marking, to the moment every other attached mutator is parked); this
//! workload only creates the situation and reads the distribution.
//!
//! `threads` worker mutators share one heap and run until told to stop,
//! each keeping a ring of small objects alive as in
//! [`super::threads`]; one more mutator, the requester, asks for up to
//! `requests` collections (`Mutator::collect`), sleeping `interval_us`
//! before each inside a blocking region (so it never holds a collection
//! up), and stops early once `max_ms` have passed: with many more threads
//! than cores the requester itself waits long for a core after each sleep,
//! and a run must stay short. Two kinds of workers:
//!
//! - [`Mode::Allocating`]: allocate without pause. A worker reaches a
//!   safepoint on its allocation slow path (a new run of slots), so
//!   collections the allocations trigger themselves are measured too.
//! - [`Mode::Polling`]: mostly compute, allocating rarely: one allocation,
//!   then [`POLLS_PER_ALLOC`] chunks of [`POLL_WORK`] xorshift steps, each
//!   followed by `Mutator::safepoint()`, the documented poll for code that
//!   runs without allocating.
//!
//! The workers wait for each other (in a blocking region) before the first
//! request. The reported figures are the median, 99th percentile and
//! maximum over every collection of the run (a histogram with 3
//! significant digits). With more threads than cores, a worker that is not
//! on a core cannot see the request until the OS schedules it: the figures
//! are then mostly the scheduler's.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use mosaic::{Config, Heap, Mutator};
use serde::{Deserialize, Serialize};

use super::threads::{LeafVm, Ring};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Allocating,
    Polling,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Allocating => "allocating",
            Mode::Polling => "polling",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// Worker mutators (the requester comes on top).
    pub threads: usize,
    pub mode: Mode,
    /// Collections the requester asks for.
    pub requests: u32,
    /// The requester's sleep before each request, microseconds.
    pub interval_us: u64,
    /// No request starts after this many milliseconds.
    pub max_ms: u64,
    /// Objects each worker keeps alive.
    pub ring: usize,
}

/// Polling workers: xorshift steps between two polls (about a microsecond).
pub const POLL_WORK: u32 = 256;
/// Polling workers: polls between two allocations.
pub const POLLS_PER_ALLOC: u32 = 64;

/// What the workers did.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Collections the requester asked for (each completed).
    pub requests: u32,
    /// Allocations, per worker.
    pub allocs: Vec<u64>,
    /// Safepoint polls outside allocation, per worker.
    pub polls: Vec<u64>,
}

fn allocate(m: &mut Mutator<LeafVm>, ring: &mut Ring<'_>, stop: &AtomicBool) -> u64 {
    loop {
        for _ in 0..64 {
            ring.add(m);
        }
        if stop.load(Relaxed) {
            return 0;
        }
    }
}

fn compute(m: &mut Mutator<LeafVm>, ring: &mut Ring<'_>, stop: &AtomicBool, seed: u64) -> u64 {
    let mut x = seed | 1;
    let mut polls = 0;
    loop {
        ring.add(m);
        for _ in 0..POLLS_PER_ALLOC {
            for _ in 0..POLL_WORK {
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
            }
            black_box(x);
            m.safepoint();
            polls += 1;
        }
        if stop.load(Relaxed) {
            return polls;
        }
    }
}

/// Runs the workload on a heap built from `config`; returns what the
/// workers did, the heap (its `Stats::time_to_safepoint` is the result)
/// and the time the requester took for its requests.
pub fn run(p: &Params, config: Config) -> (Outcome, Heap<LeafVm>, Duration) {
    assert!(p.threads > 0 && p.ring > 0);
    let heap = Heap::new(config, LeafVm::default()).expect("heap");
    let stop = AtomicBool::new(false);
    let ready = Barrier::new(p.threads + 1);
    let (workers, requests, elapsed) = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..p.threads)
            .map(|t| {
                let (heap, stop, ready) = (heap.clone(), &stop, &ready);
                sc.spawn(move || {
                    let mut m = heap.mutator().unwrap();
                    let s = heap.embedder().stack(&mut m, p.ring);
                    let mut ring = Ring::new(&s, p.ring, t as u64);
                    m.blocking(|| ready.wait());
                    let polls = match p.mode {
                        Mode::Allocating => allocate(&mut m, &mut ring, stop),
                        Mode::Polling => compute(&mut m, &mut ring, stop, 42 + t as u64),
                    };
                    let allocs = ring.count;
                    ring.verify();
                    (allocs, polls)
                })
            })
            .collect();
        let mut m = heap.mutator().unwrap();
        m.blocking(|| ready.wait());
        let start = Instant::now();
        let mut requests = 0;
        while requests < p.requests && start.elapsed() < Duration::from_millis(p.max_ms) {
            m.blocking(|| std::thread::sleep(Duration::from_micros(p.interval_us)));
            m.collect();
            requests += 1;
        }
        let elapsed = start.elapsed();
        stop.store(true, Relaxed);
        // Joined in a blocking region: the workers may still collect.
        let workers: Vec<(u64, u64)> = m.blocking(|| {
            handles
                .into_iter()
                .map(|h| h.join().expect("worker"))
                .collect()
        });
        (workers, requests, elapsed)
    });
    let outcome = Outcome {
        requests,
        allocs: workers.iter().map(|w| w.0).collect(),
        polls: workers.iter().map(|w| w.1).collect(),
    };
    (outcome, heap, elapsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_collection_records_its_time_to_safepoint() {
        for mode in [Mode::Allocating, Mode::Polling] {
            let p = Params {
                threads: 3,
                mode,
                requests: 8,
                interval_us: 500,
                max_ms: 60_000,
                ring: 512,
            };
            let config = Config {
                max_heap: 64 << 20,
                heap_min: 1 << 20,
                verify: true,
                ..Config::default()
            };
            let (out, heap, elapsed) = run(&p, config);
            assert!(elapsed >= Duration::from_micros(8 * 500), "{mode:?}");
            assert_eq!(out.requests, 8, "well within max_ms");
            assert_eq!(out.allocs.len(), 3);
            assert!(out.allocs.iter().all(|&n| n > 0), "{out:?}");
            match mode {
                Mode::Allocating => assert!(out.polls.iter().all(|&n| n == 0)),
                Mode::Polling => {
                    for (&a, &n) in out.allocs.iter().zip(&out.polls) {
                        assert_eq!(n, a * POLLS_PER_ALLOC as u64, "{out:?}");
                    }
                }
            }
            let s = heap.stats();
            assert!(s.collections >= 8, "{mode:?}: {s}");
            let tts = &s.time_to_safepoint;
            assert_eq!(tts.count, s.collections, "one sample per collection");
            assert!(tts.p50 > Duration::ZERO && tts.p50 <= tts.p99 && tts.p99 <= tts.max);
            assert!(tts.max <= s.pauses.max, "the wait is part of the pause");
        }
    }

    #[test]
    fn the_requester_stops_at_its_deadline() {
        let p = Params {
            threads: 2,
            mode: Mode::Polling,
            requests: 1_000_000,
            interval_us: 1000,
            max_ms: 50,
            ring: 16,
        };
        let (out, heap, elapsed) = run(&p, Config::default());
        assert!(out.requests >= 1 && out.requests <= 50, "{out:?}");
        assert!(elapsed >= Duration::from_millis(50));
        assert!(heap.stats().time_to_safepoint.count >= out.requests as u64);
    }
}
