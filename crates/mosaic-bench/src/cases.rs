//! What the suite runs: every workload, its parameters, and its runners.
//!
//! | workload | mode | runners | heap |
//! |---|---|---|---|
//! | `gcbench`, `gcbench-holes` | quick: 2x, 1 thread; full: 1.5/2/3x, 1 and 2 threads | Mosaic (Rust worker; and `mosaic-c`: the Boehm peer's own C program on Mosaic's C API, `peers/c/mosaic_c.h`), Boehm (GC_MALLOC and inline; both also on Mosaic's `libgc.so.1`), Java Serial/Parallel/G1 (warm, and G1 cold), Go | multiple of the peak live size, the same limit for everyone (Boehm: also its initial heap, except with holes) |
//! | `gcbench-scaled` | full, or `--only gcbench-scaled` | Mosaic, Boehm | 2x the live size of GCBench with stretch and long-lived depth L = 16..24 |
//! | `heap-sweep` | quick: 1.5/2/4x; full: 1.25..6x | Mosaic under each `MOSAIC_HEAP_POLICY`, Boehm | GCBench with holes at each multiple of its peak live size |
//! | `binary-trees` | depth 16 quick, 20 full | Mosaic, Boehm (and on Mosaic's `libgc.so.1`), OCaml, Java x3, Go | each runtime's default |
//! | `nqueens` | 8..10 quick, 8..11 full | OCaml, Boehm (and on Mosaic's `libgc.so.1`), malloc, free, bump, Mosaic (shadow stack, and conservative stack roots) | defaults |
//! | `varsize` | 2M / 10M replacements | Mosaic with three size-class layouts | 4 GiB |
//! | `alloc` | 16..512 B | Mosaic (run-time size, compile-time size, UNINIT), bump, bump-zeroed (256 KiB and 4 MiB arenas), glibc, jemalloc, mimalloc | defaults |
//! | `threads` | 1, 2, 4, 8 threads; 2M (quick) / 10M (full) allocations of 16..64 B per thread, 64Ki live per thread | Mosaic, Boehm (and on Mosaic's `libgc.so.1`), glibc, jemalloc, mimalloc | 4x the live size of all rings, the same for Mosaic and Boehm |
//! | `safepoint` | 8 and 32 threads (full: 2, 8, 32), allocating or polling; up to 100 collection requests in 1 s (full: 500 in 10 s) | Mosaic only: time to safepoint, p50/p99/max | default |
//!
//! The last two are in [`mutators`], which says what they measure and why
//! it is fair.
//!
//! `boehm-on-mosaic` and `boehm-inline-on-mosaic` ([`on_mosaic`]) are the
//! Boehm runners' own binaries, arguments and environment run with
//! `LD_LIBRARY_PATH` naming a directory that holds Mosaic's drop-in
//! `libgc.so.1` (`crates/mosaic-gc`, built by the suite:
//! [`crate::peers::mosaic_libgc`]): the same program on the real library and
//! on Mosaic's. Not in gcbench-scaled and heap-sweep.

use std::path::PathBuf;
use std::process::Command;

use mosaic_bench::workloads::{alloc, binary_trees, gcbench, nqueens, varsize};

use crate::peers::{Built, Peers};
use crate::worker::Spec;

mod mutators;

/// One program run (Mosaic or a peer) for a case.
pub struct Runner {
    pub peer: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Why this runner cannot run here.
    pub skip: Option<String>,
    /// Whose collector this is: says what its GC columns mean.
    pub runtime: Runtime,
}

/// The memory manager behind a runner; each reports "GC time" and pauses
/// differently (see [`Runtime::gc_time`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    Mosaic,
    /// Mosaic through its C API, in a C program shared with a peer.
    MosaicC,
    Boehm,
    /// A Boehm peer's own binary run on Mosaic's drop-in `libgc.so.1`
    /// (`crates/mosaic-gc`) through `LD_LIBRARY_PATH`.
    BoehmOnMosaic,
    Java,
    Go,
    OCaml,
    /// malloc/free or a bump allocator: no collector.
    Manual,
}

impl Runtime {
    /// What the "GC ms" column means for this runtime.
    pub fn gc_time(self) -> &'static str {
        match self {
            Runtime::Mosaic => "stop-the-world pauses (Stats.pauses) plus the lazy sweep steps allocations took (Stats.sweep_steps)",
            Runtime::MosaicC => "mark_time_ns + sweep_time_ns of mosaic_heap_stats: every collection's marking and all sweeping, in pauses and in allocations",
            Runtime::Boehm => "each collection from GC_EVENT_START to GC_EVENT_END: stopped-world marking plus its finish under the allocator lock; lazy sweeping inside allocations not counted",
            Runtime::BoehmOnMosaic => "as for boehm, by the same code in the same binary: each collection from GC_EVENT_START (before the world stops) to GC_EVENT_END (after it restarts); lazy sweeping inside allocations not counted",
            Runtime::Java => "GarbageCollectorMXBean.getCollectionTime() over the reported run: young and full collection pauses in whole ms; in JDK 17, G1's remark/cleanup pauses and concurrent marking not counted",
            Runtime::Go => "MemStats.PauseTotalNs over the run: stop-the-world phases only; concurrent marking (on other cores), mark assists and sweeping not counted",
            Runtime::OCaml => "not reported; GCs = minor + major collections",
            Runtime::Manual => "no collector",
        }
    }

    /// What the pause percentiles are for this runtime.
    pub fn pauses(self) -> &'static str {
        match self {
            Runtime::Mosaic => "every stop-the-world pause, ns clock",
            Runtime::Boehm | Runtime::BoehmOnMosaic => "the GC ms intervals, one per collection",
            Runtime::Java => "GC notification durations of the reported run, whole ms",
            Runtime::Go => "the last 256 (at most) stop-the-world pauses of the run",
            Runtime::OCaml | Runtime::Manual | Runtime::MosaicC => "not reported",
        }
    }
}

impl Runner {
    pub fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.args);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }
}

/// Which number is "the time" of a run. Process wall time (spawn to exit)
/// is always kept beside it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize)]
pub enum Metric {
    /// The program's own timing of the benchmark body (`TIME ms`), with a
    /// monotonic clock, runtime start-up excluded.
    Inner,
    /// Nanoseconds per allocation, reported by the program.
    NsPerAlloc,
    /// Wall-clock nanoseconds per allocation over every thread: the time
    /// from starting the threads to joining them, over all their
    /// allocations (`ns_per_alloc`).
    NsPerAllocAll,
    /// Mosaic's median time to safepoint over the run's collections, µs
    /// (`tts_p50_us`).
    TimeToSafepoint,
}

pub struct Case {
    pub workload: &'static str,
    pub variant: String,
    pub metric: Metric,
    pub expected: Option<u64>,
    /// The runner ratios are computed against.
    pub baseline: &'static str,
    /// The heap limit as a multiple of the peak live size, where the chart
    /// plots against it (heap-sweep).
    pub heap_factor: Option<f64>,
    pub runners: Vec<Runner>,
}

/// What to build the cases for.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub full: bool,
    /// Runs of a Java benchmark in the same JVM before the reported one.
    pub jvm_warmup: u32,
    /// Tree depths L of gcbench-scaled.
    pub scaled_depths: Vec<u32>,
    /// Workloads named exactly by `--only`: the full-only ones among them
    /// are built in quick mode too.
    pub named: Vec<String>,
}

impl Options {
    fn wants(&self, workload: &str) -> bool {
        self.full || self.named.iter().any(|n| n == workload)
    }
}

/// The n-queens repetitions for `n` queens (about the same work for each n).
/// Runs every case's runners `reps` times, each repetition starting the
/// rotation at a different runner (so no runner always goes first);
/// `before(case, runner, rep)` is called before each run. Skipped runners
/// are left out.
pub fn run_alternating(
    cases: &[Case],
    reps: usize,
    timeout: std::time::Duration,
    mut before: impl FnMut(&Case, &Runner, usize),
) -> Vec<crate::report::Run> {
    let mut runs = Vec::new();
    for rep in 0..reps {
        for (ci, case) in cases.iter().enumerate() {
            let n = case.runners.len();
            for k in 0..n {
                let ri = (k + rep) % n;
                let r = &case.runners[ri];
                if r.skip.is_some() {
                    continue;
                }
                before(case, r, rep);
                runs.push(crate::report::Run {
                    case: ci,
                    runner: ri,
                    rep,
                    outcome: crate::process::run(&mut r.command(), timeout),
                });
            }
        }
    }
    runs
}

pub fn nqueens_repeat(n: u32) -> u32 {
    1u32 << (11 - n).min(4)
}

/// `nqueens-conservative` (part of `--only compaction`): OCaml, Mosaic with
/// its shadow stack and Mosaic with conservative stack roots, normalised to
/// OCaml, the result count checked. The main suite's `nqueens` case is
/// this one with the C peers added.
pub fn nqueens_conservative(n: u32, ocaml: &Built) -> Case {
    let repeat = nqueens_repeat(n);
    let spec = |conservative| Spec::Nqueens {
        n,
        repeat,
        conservative,
    };
    Case {
        workload: "nqueens-conservative",
        variant: format!("{n} queens x{repeat}"),
        metric: Metric::Inner,
        expected: Some(nqueens::solutions(n)),
        baseline: "ocaml",
        heap_factor: None,
        runners: vec![
            peer(
                "ocaml",
                Runtime::OCaml,
                ocaml,
                &[n.to_string(), repeat.to_string()],
                &[],
            ),
            mosaic("mosaic", spec(false)),
            mosaic_gen(spec(false)),
            mosaic("mosaic-conservative", spec(true)),
        ],
    }
}

/// The GCBench depths L of gcbench-scaled: about 1 GiB live at 24.
pub const SCALED_DEPTHS: [u32; 5] = [16, 18, 20, 22, 24];

fn mosaic_as(peer: &str, runtime: Runtime, spec: Spec, env: &[(&str, &str)]) -> Runner {
    Runner {
        peer: peer.into(),
        program: std::env::current_exe().expect("own executable"),
        args: vec![
            "--worker".into(),
            serde_json::to_string(&spec).expect("spec"),
        ],
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        skip: None,
        runtime,
    }
}

fn mosaic(peer: &str, spec: Spec) -> Runner {
    mosaic_as(peer, Runtime::Mosaic, spec, &[])
}

/// Mosaic with generations (`MOSAIC_GENERATIONAL=1`): the workloads then
/// allocate `BARRIERED` and call the write barrier (`vm::Gen`).
fn mosaic_gen(spec: Spec) -> Runner {
    mosaic_as(
        "mosaic-gen",
        Runtime::Mosaic,
        spec,
        &[("MOSAIC_GENERATIONAL", "1")],
    )
}

fn peer(
    name: &str,
    runtime: Runtime,
    built: &Built,
    args: &[String],
    env: &[(&str, String)],
) -> Runner {
    Runner {
        peer: name.into(),
        program: built.clone().unwrap_or_default(),
        args: args.to_vec(),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        skip: built.as_ref().err().cloned(),
        runtime,
    }
}

fn java(
    gc: &str,
    peers: &Peers,
    o: &Options,
    heap: Option<usize>,
    class: &str,
    args: &[String],
) -> Runner {
    java_runs(gc, peers, o.jvm_warmup, heap, class, args)
}

/// G1 (the JVM's default collector) with no warm-up run, beside the warm
/// runners: what a short-lived Java program pays for JIT compilation.
fn java_cold(peers: &Peers, heap: Option<usize>, class: &str, args: &[String]) -> Runner {
    let mut r = java_runs("G1", peers, 0, heap, class, args);
    r.peer += "-cold";
    r
}

fn java_runs(
    gc: &str,
    peers: &Peers,
    warmup: u32,
    heap: Option<usize>,
    class: &str,
    args: &[String],
) -> Runner {
    let mut a = vec![format!("-XX:+Use{gc}GC")];
    if warmup > 0 {
        a.push(format!("-Dmosaic.warmup={warmup}"));
    }
    if let Some(h) = heap {
        a.push(format!("-Xmx{}k", h.div_ceil(1024)));
    }
    a.push("-cp".into());
    a.push(
        peers
            .java
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    );
    a.push(class.into());
    a.extend(args.iter().cloned());
    Runner {
        peer: format!("java-{}", gc.to_lowercase()),
        program: "java".into(),
        args: a,
        env: vec![],
        skip: peers.java.as_ref().err().cloned(),
        runtime: Runtime::Java,
    }
}

fn s(x: impl ToString) -> String {
    x.to_string()
}

/// The environment that gives the Boehm collector `heap` bytes: the cap
/// (`GC_MAXIMUM_HEAP_SIZE`) and, so that it is memory to use and not only a
/// cap, the initial heap (`GC_INITIAL_HEAP_SIZE`) of the same size: Mosaic
/// is given its limit as a budget, Boehm would otherwise grow only as its
/// free-space divisor asks and collect far more often in less memory.
pub(crate) fn boehm_heap_env(heap: usize) -> [(&'static str, String); 2] {
    [
        ("GC_MAXIMUM_HEAP_SIZE", s(heap)),
        ("GC_INITIAL_HEAP_SIZE", s(heap)),
    ]
}

/// GCBench on Boehm: nodes from `GC_MALLOC` ("boehm") and from gc_inline.h's
/// inline free lists ("boehm-inline"), both with `heap` bytes. With holes,
/// Boehm runs out of memory when its whole limit is its initial heap (at 2x:
/// "Out of Memory! Heap size: 31 MiB", also at 90% of the limit; it passes
/// at 75% and with the cap alone), so there it gets the cap alone and grows
/// as its free-space divisor asks: the configuration in which it runs.
fn boehm_gcbench(peers: &Peers, p: &gcbench::Params, threads: usize, heap: usize) -> [Runner; 2] {
    let env = boehm_heap_env(heap);
    let env = if p.holes { &env[..1] } else { &env[..] };
    let args = p.peer_args(threads);
    [
        peer("boehm", Runtime::Boehm, &peers.boehm_gcbench, &args, env),
        peer(
            "boehm-inline",
            Runtime::Boehm,
            &peers.boehm_gcbench_inline,
            &args,
            env,
        ),
    ]
}

/// `real` (a Boehm runner) on Mosaic's drop-in library: the same binary,
/// arguments and environment (its `GC_*` variables, which the drop-in
/// honours), plus `LD_LIBRARY_PATH` naming the directory of Mosaic's
/// `libgc.so.1` (`lib`, [`crate::peers::mosaic_libgc`]). Named
/// `{real}-on-mosaic`; skipped when either is missing.
pub(crate) fn on_mosaic(real: &Runner, lib: &Built) -> Runner {
    let mut env = real.env.clone();
    env.push((
        "LD_LIBRARY_PATH".into(),
        lib.as_ref()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
    ));
    Runner {
        peer: format!("{}-on-mosaic", real.peer),
        program: real.program.clone(),
        args: real.args.clone(),
        env,
        skip: real.skip.clone().or_else(|| {
            lib.as_ref()
                .err()
                .map(|e| format!("no libgc.so.1 of Mosaic's: {e}"))
        }),
        runtime: Runtime::BoehmOnMosaic,
    }
}

/// `boehm` runners followed by the same runners on Mosaic's `libgc.so.1`.
fn with_dropin(boehm: impl IntoIterator<Item = Runner>, lib: &Built) -> Vec<Runner> {
    let real: Vec<Runner> = boehm.into_iter().collect();
    let dropin: Vec<Runner> = real.iter().map(|r| on_mosaic(r, lib)).collect();
    real.into_iter().chain(dropin).collect()
}

fn mib(bytes: usize) -> usize {
    bytes >> 20
}

/// Every case of the quick or the full suite.
pub fn all(o: &Options, peers: &Peers) -> Vec<Case> {
    let full = o.full;
    let mut cases = Vec::new();

    // GCBench, with and without holes, at heap multiples of its peak live size.
    let factors: &[f64] = if full { &[1.5, 2.0, 3.0] } else { &[2.0] };
    let threads: &[usize] = if full { &[1, 2] } else { &[1] };
    for holes in [false, true] {
        for &t in threads {
            for &f in factors {
                let p = gcbench::Params::standard(holes);
                let heap = (p.peak_live_bytes() as f64 * f) as usize * t;
                let args = p.peer_args(t);
                cases.push(Case {
                    workload: if holes { "gcbench-holes" } else { "gcbench" },
                    variant: format!(
                        "{f}x heap ({} MiB), {t} thread{}",
                        mib(heap),
                        if t > 1 { "s" } else { "" }
                    ),
                    metric: Metric::Inner,
                    expected: Some(p.expected_check()),
                    baseline: "mosaic",
                    heap_factor: Some(f),
                    runners: [
                        mosaic(
                            "mosaic",
                            Spec::Gcbench {
                                params: p,
                                threads: t,
                                max_heap: heap,
                            },
                        ),
                        mosaic_gen(Spec::Gcbench {
                            params: p,
                            threads: t,
                            max_heap: heap,
                        }),
                    ]
                    .into_iter()
                    .chain([peer(
                        "mosaic-c",
                        Runtime::MosaicC,
                        &peers.mosaic_c_gcbench,
                        &args,
                        &[("MOSAIC_MAX_HEAP", s(heap))],
                    )])
                    .chain(with_dropin(
                        boehm_gcbench(peers, &p, t, heap),
                        &peers.mosaic_libgc,
                    ))
                    .chain([
                        java("Serial", peers, o, Some(heap), "GCBench", &args),
                        java("Parallel", peers, o, Some(heap), "GCBench", &args),
                        java("G1", peers, o, Some(heap), "GCBench", &args),
                        java_cold(peers, Some(heap), "GCBench", &args),
                        peer(
                            "go",
                            Runtime::Go,
                            &peers.go_gcbench,
                            &args,
                            &[("GOGC", s("off")), ("GOMEMLIMIT", s(heap))],
                        ),
                    ])
                    .collect(),
                });
            }
        }
    }

    // GCBench with the live size scaled (stretch and long-lived depth L),
    // at twice the live size: Mosaic and Boehm.
    if o.wants("gcbench-scaled") {
        for &l in &o.scaled_depths {
            let p = gcbench::Params::scaled(l);
            let live = p.peak_live_bytes();
            let heap = 2 * live;
            cases.push(Case {
                workload: "gcbench-scaled",
                variant: format!("L={l} (live {} MiB, heap {} MiB)", mib(live), mib(heap)),
                metric: Metric::Inner,
                expected: Some(p.expected_check()),
                baseline: "mosaic",
                heap_factor: Some(2.0),
                runners: [mosaic(
                    "mosaic",
                    Spec::Gcbench {
                        params: p,
                        threads: 1,
                        max_heap: heap,
                    },
                )]
                .into_iter()
                .chain(boehm_gcbench(peers, &p, 1, heap))
                .collect(),
            });
        }
    }

    // One workload (GCBench with holes, 1 thread) across heap limits: Mosaic
    // under each heap policy, and Boehm.
    let sweep: &[f64] = if full {
        &[1.25, 1.5, 2.0, 3.0, 4.0, 6.0]
    } else {
        &[1.5, 2.0, 4.0]
    };
    for &f in sweep {
        let p = gcbench::Params::standard(true);
        let heap = (p.peak_live_bytes() as f64 * f) as usize;
        let spec = Spec::Gcbench {
            params: p,
            threads: 1,
            max_heap: heap,
        };
        let mut runners: Vec<Runner> = ["fixed", "proportional", "adaptive"]
            .iter()
            .map(|policy| {
                mosaic_as(
                    &format!("mosaic-{policy}"),
                    Runtime::Mosaic,
                    spec.clone(),
                    &[("MOSAIC_HEAP_POLICY", policy)],
                )
            })
            .collect();
        runners.extend(boehm_gcbench(peers, &p, 1, heap));
        cases.push(Case {
            workload: "heap-sweep",
            variant: format!("{f}x heap ({} MiB)", mib(heap)),
            metric: Metric::Inner,
            expected: Some(p.expected_check()),
            baseline: "mosaic-fixed",
            heap_factor: Some(f),
            runners,
        });
    }

    // binary-trees, each runtime with its default heap policy.
    let depth = if full { 20 } else { 16 };
    let args = [s(depth)];
    let boehm = with_dropin(
        [
            peer(
                "boehm",
                Runtime::Boehm,
                &peers.boehm_binary_trees,
                &args,
                &[],
            ),
            peer(
                "boehm-inline",
                Runtime::Boehm,
                &peers.boehm_binary_trees_inline,
                &args,
                &[],
            ),
        ],
        &peers.mosaic_libgc,
    );
    cases.push(Case {
        workload: "binary-trees",
        variant: format!("depth {depth}"),
        metric: Metric::Inner,
        expected: Some(binary_trees::expected_check(depth)),
        baseline: "mosaic",
        heap_factor: None,
        runners: [
            mosaic("mosaic", Spec::BinaryTrees { n: depth }),
            mosaic_gen(Spec::BinaryTrees { n: depth }),
        ]
        .into_iter()
        .chain(boehm)
        .chain([
            peer(
                "ocaml",
                Runtime::OCaml,
                &peers.ocaml_binary_trees,
                &args,
                &[],
            ),
            java("Serial", peers, o, None, "BinaryTrees", &args),
            java("Parallel", peers, o, None, "BinaryTrees", &args),
            java("G1", peers, o, None, "BinaryTrees", &args),
            java_cold(peers, None, "BinaryTrees", &args),
            peer("go", Runtime::Go, &peers.go_binary_trees, &args, &[]),
        ])
        .collect(),
    });

    // n-queens: the seed's table, normalised to OCaml.
    let ns: &[u32] = if full { &[8, 9, 10, 11] } else { &[8, 9, 10] };
    for &n in ns {
        let repeat = nqueens_repeat(n);
        let a = |m: &str| [s(m), s(n), s(repeat)];
        let c = |name: &str, runtime| peer(name, runtime, &peers.c_nqueens, &a(name), &[]);
        // OCaml and both Mosaic runners, with the C peers after OCaml.
        let mut case = nqueens_conservative(n, &peers.ocaml_nqueens);
        case.workload = "nqueens";
        case.runners.splice(
            1..1,
            with_dropin(
                [
                    c("boehm", Runtime::Boehm),
                    c("boehm-inline", Runtime::Boehm),
                ],
                &peers.mosaic_libgc,
            )
            .into_iter()
            .chain([
                c("malloc", Runtime::Manual),
                c("free", Runtime::Manual),
                c("bump", Runtime::Manual),
            ]),
        );
        cases.push(case);
    }

    // Variable-size records: Mosaic's classes vs Ruby's pools vs 40-byte pool + malloc.
    let params = varsize::Params {
        records: 100_000,
        steps: if full { 10_000_000 } else { 2_000_000 },
    };
    cases.push(Case {
        workload: "varsize",
        variant: format!(
            "{}k records, {}M replacements",
            params.records / 1000,
            params.steps / 1_000_000
        ),
        metric: Metric::Inner,
        expected: None,
        baseline: "mosaic",
        heap_factor: None,
        runners: varsize::Layout::ALL
            .iter()
            .map(|&layout| {
                mosaic(
                    layout.name(),
                    Spec::Varsize {
                        layout,
                        params,
                        max_heap: 4 << 30,
                    },
                )
            })
            .collect(),
    });

    // Allocation microbenchmark.
    let count: u64 = if full { 100_000_000 } else { 20_000_000 };
    for size in alloc::SIZES {
        let a = [s(size), s(count)];
        let m = |allocator: &str| Spec::Alloc {
            allocator: allocator.into(),
            size,
            count,
        };
        let c = |name: &str, built: &Built| peer(name, Runtime::Manual, built, &a, &[]);
        cases.push(Case {
            workload: "alloc",
            variant: format!("{size} B"),
            metric: Metric::NsPerAlloc,
            expected: None,
            baseline: "mosaic",
            heap_factor: None,
            runners: vec![
                mosaic("mosaic", m("mosaic")),
                mosaic("mosaic-sized", m("mosaic-sized")),
                mosaic("mosaic-uninit", m("mosaic-uninit")),
                mosaic_as("bump", Runtime::Manual, m("bump"), &[]),
                mosaic_as("bump-zeroed", Runtime::Manual, m("bump-zeroed"), &[]),
                mosaic_as("bump-zeroed-4m", Runtime::Manual, m("bump-zeroed-4m"), &[]),
                c("glibc", &peers.alloc_glibc),
                c("jemalloc", &peers.alloc_jemalloc),
                c("mimalloc", &peers.alloc_mimalloc),
            ],
        });
    }

    cases.extend(mutators::threads(o, peers));
    cases.extend(mutators::safepoint(o));
    cases
}

#[cfg(test)]
mod tests;
