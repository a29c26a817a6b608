//! The many-mutator workloads: `threads` (allocation throughput as mutator
//! threads are added) and `safepoint` (Mosaic's time to safepoint).
//!
//! `threads`: the same program for everyone (`workloads/threads.rs`,
//! `peers/c/threads.c`): the same sizes, counts, ring and clock, timed
//! from starting the threads to joining them. The collectors get the same
//! heap limit, [`HEAP_FACTOR`] times the live size of all rings
//! (Mosaic's `max_heap`; Boehm's `GC_MAXIMUM_HEAP_SIZE` and
//! `GC_INITIAL_HEAP_SIZE`, so that Boehm has the memory and not only a cap),
//! and otherwise their defaults (Mosaic's adaptive heap policy and one GC
//! worker per core; Boehm's free-space divisor, with its parallel markers
//! started and no extra byte per object, `peers/c/boehm.h`). The malloc peers free each replaced object and need no limit.
//! `boehm-on-mosaic` is Boehm's binary, limit and environment with
//! Mosaic's drop-in `libgc.so.1` ([`super::on_mosaic`]).
//!
//! Where the runners differ, and which way it leans: Boehm's ring array is
//! in its heap, Mosaic's is a root array outside it, so each collector's
//! limit is [`HEAP_FACTOR`] times what is live *in its own heap* (Boehm's
//! includes the arrays: a little more room for Boehm). The objects hold no
//! references and nobody clears them: Boehm allocates them with
//! `GC_MALLOC_ATOMIC`, Mosaic `UNINIT`, the mallocs plainly.
//!
//! `safepoint`: Mosaic alone; what its own `Stats::time_to_safepoint`
//! recorded at every collection of the run.

use mosaic_bench::workloads::{safepoint, threads};

use super::{boehm_heap_env, mosaic, mosaic_gen, on_mosaic, peer, Case, Metric, Options, Runtime};
use crate::peers::{Built, Peers};
use crate::worker::Spec;

/// The heap limit of the collectors in `threads`, as a multiple of the
/// live size of every thread's ring.
pub const HEAP_FACTOR: usize = 4;

/// Mutator thread counts of `threads`.
pub const THREAD_COUNTS: [usize; 4] = [1, 2, 4, 8];

/// Objects each thread keeps alive in `threads` (about 3 MiB with its
/// pointer array).
pub const RING: usize = 1 << 16;

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// One case per thread count: Mosaic, Boehm and the three mallocs.
pub fn threads(o: &Options, peers: &Peers) -> Vec<Case> {
    let allocs: u64 = if o.full { 10_000_000 } else { 2_000_000 };
    THREAD_COUNTS
        .iter()
        .map(|&t| {
            let p = threads::Params {
                threads: t,
                allocs,
                ring: RING,
            };
            let heap = HEAP_FACTOR * p.object_bytes();
            let boehm_heap = HEAP_FACTOR * p.live_bytes();
            let args = p.peer_args();
            let c = |name: &str, built: &Built| peer(name, Runtime::Manual, built, &args, &[]);
            let boehm = peer(
                "boehm",
                Runtime::Boehm,
                &peers.threads_boehm,
                &args,
                &boehm_heap_env(boehm_heap),
            );
            let dropin = on_mosaic(&boehm, &peers.mosaic_libgc);
            Case {
                workload: "threads",
                variant: format!(
                    "{t} thread{}, {}M allocs each, heap {} MiB",
                    plural(t),
                    allocs / 1_000_000,
                    heap >> 20
                ),
                metric: Metric::NsPerAllocAll,
                expected: Some(p.expected_check()),
                baseline: "mosaic",
                heap_factor: None,
                runners: vec![
                    mosaic(
                        "mosaic",
                        Spec::Threads {
                            params: p,
                            max_heap: heap,
                        },
                    ),
                    mosaic_gen(Spec::Threads {
                        params: p,
                        max_heap: heap,
                    }),
                    boehm,
                    dropin,
                    c("glibc", &peers.threads_glibc),
                    c("jemalloc", &peers.threads_jemalloc),
                    c("mimalloc", &peers.threads_mimalloc),
                ],
            }
        })
        .collect()
}

/// Worker counts of `safepoint`: the quick suite's, and the full one's
/// (which adds as many workers as a small machine has cores).
pub const SAFEPOINT_THREADS: [usize; 2] = [8, 32];
pub const SAFEPOINT_THREADS_FULL: [usize; 3] = [2, 8, 32];

/// One case per worker count and kind of worker, Mosaic alone.
pub fn safepoint(o: &Options) -> Vec<Case> {
    let counts: &[usize] = if o.full {
        &SAFEPOINT_THREADS_FULL
    } else {
        &SAFEPOINT_THREADS
    };
    let (requests, max_ms) = if o.full { (500, 10_000) } else { (100, 1000) };
    let mut cases = Vec::new();
    for &t in counts {
        for mode in [safepoint::Mode::Allocating, safepoint::Mode::Polling] {
            let params = safepoint::Params {
                threads: t,
                mode,
                requests,
                interval_us: 2000,
                max_ms,
                ring: 1024,
            };
            cases.push(Case {
                workload: "safepoint",
                variant: format!(
                    "{t} threads {}, ≤{requests} requests in ≤{} s",
                    mode.name(),
                    max_ms / 1000
                ),
                metric: Metric::TimeToSafepoint,
                expected: None,
                baseline: "mosaic",
                heap_factor: None,
                runners: vec![mosaic("mosaic", Spec::Safepoint { params })],
            });
        }
    }
    cases
}

#[cfg(test)]
mod tests {
    use super::super::tests::peers;
    use super::*;

    #[test]
    fn threads_cases_give_every_runner_the_same_program_and_limit() {
        let cases = threads(&Options::default(), &peers());
        assert_eq!(cases.len(), THREAD_COUNTS.len());
        for (case, &t) in cases.iter().zip(&THREAD_COUNTS) {
            let p = threads::Params {
                threads: t,
                allocs: 2_000_000,
                ring: RING,
            };
            assert_eq!(case.expected, Some(p.expected_check()));
            let names: Vec<&str> = case.runners.iter().map(|r| r.peer.as_str()).collect();
            assert_eq!(
                names,
                [
                    "mosaic",
                    "mosaic-gen",
                    "boehm",
                    "boehm-on-mosaic",
                    "glibc",
                    "jemalloc",
                    "mimalloc"
                ]
            );
            // The same program and limit, with generations.
            assert_eq!(case.runners[1].args, case.runners[0].args);
            assert_eq!(
                case.runners[1].env,
                [("MOSAIC_GENERATIONAL".to_string(), "1".to_string())]
            );
            let heap = HEAP_FACTOR * p.object_bytes();
            let spec: serde_json::Value = serde_json::from_str(&case.runners[0].args[1]).unwrap();
            assert_eq!(spec["workload"], "threads");
            assert_eq!(spec["max_heap"], heap);
            assert_eq!(spec["params"]["threads"], t);
            let boehm = &case.runners[2];
            assert_eq!(boehm.args, p.peer_args());
            let limit = (HEAP_FACTOR * p.live_bytes()).to_string();
            let env = [
                ("GC_MAXIMUM_HEAP_SIZE".to_string(), limit.clone()),
                ("GC_INITIAL_HEAP_SIZE".to_string(), limit),
            ];
            assert_eq!(boehm.env, env);
            assert_eq!(boehm.skip, None);
            // The same binary, arguments and limit on Mosaic's libgc.so.1.
            let dropin = &case.runners[3];
            assert_eq!(dropin.runtime, Runtime::BoehmOnMosaic);
            assert_eq!(
                (&dropin.program, &dropin.args),
                (&boehm.program, &boehm.args)
            );
            assert_eq!(dropin.env[..2], env);
            assert_eq!(
                dropin.env[2],
                ("LD_LIBRARY_PATH".to_string(), "/lib/mosaic".to_string())
            );
            for r in &case.runners[4..] {
                assert_eq!(r.args, p.peer_args());
                assert!(r.skip.as_deref().unwrap().contains("not built"));
            }
        }
    }

    #[test]
    fn safepoint_cases_cover_both_kinds_of_worker() {
        let quick = safepoint(&Options::default());
        let variants: Vec<&str> = quick.iter().map(|c| c.variant.as_str()).collect();
        assert_eq!(
            variants,
            [
                "8 threads allocating, ≤100 requests in ≤1 s",
                "8 threads polling, ≤100 requests in ≤1 s",
                "32 threads allocating, ≤100 requests in ≤1 s",
                "32 threads polling, ≤100 requests in ≤1 s"
            ]
        );
        assert!(quick
            .iter()
            .all(|c| c.runners.len() == 1 && c.runners[0].runtime == Runtime::Mosaic));
        let full = Options {
            full: true,
            ..Options::default()
        };
        assert_eq!(safepoint(&full).len(), 6);
    }
}
