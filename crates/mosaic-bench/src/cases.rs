//! What the suite runs: every workload, its parameters, and its runners.

use std::path::PathBuf;
use std::process::Command;

use mosaic_bench::workloads::{alloc, binary_trees, gcbench, nqueens, varsize};

use crate::peers::{Built, Peers};
use crate::worker::Spec;

/// One program run (Mosaic or a peer) for a case.
pub struct Runner {
    pub peer: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Why this runner cannot run here.
    pub skip: Option<String>,
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

/// Which number is "the time" of a run.
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize)]
pub enum Metric {
    /// Wall time of the whole process.
    Wall,
    /// The program's own timing of its measured loop (`TIME ms`).
    Inner,
    /// Nanoseconds per allocation, reported by the program.
    NsPerAlloc,
}

pub struct Case {
    pub workload: &'static str,
    pub variant: String,
    pub metric: Metric,
    pub expected: Option<u64>,
    /// The runner ratios are computed against.
    pub baseline: &'static str,
    pub runners: Vec<Runner>,
}

fn mosaic(peer: &str, spec: Spec) -> Runner {
    Runner {
        peer: peer.into(),
        program: std::env::current_exe().expect("own executable"),
        args: vec![
            "--worker".into(),
            serde_json::to_string(&spec).expect("spec"),
        ],
        env: vec![],
        skip: None,
    }
}

fn peer(name: &str, built: &Built, args: &[String], env: &[(&str, String)]) -> Runner {
    Runner {
        peer: name.into(),
        program: built.clone().unwrap_or_default(),
        args: args.to_vec(),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        skip: built.as_ref().err().cloned(),
    }
}

fn java(gc: &str, peers: &Peers, heap: Option<usize>, class: &str, args: &[String]) -> Runner {
    let mut a = vec![format!("-XX:+Use{gc}GC")];
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
    }
}

fn s(x: impl ToString) -> String {
    x.to_string()
}

/// Every case of the quick or the full suite.
pub fn all(full: bool, peers: &Peers) -> Vec<Case> {
    let mut cases = Vec::new();

    // GCBench, with and without holes, at heap multiples of its peak live size.
    let factors: &[f64] = if full { &[1.5, 2.0, 3.0] } else { &[2.0] };
    let threads: &[usize] = if full { &[1, 2] } else { &[1] };
    for holes in [false, true] {
        for &t in threads {
            for &f in factors {
                let p = gcbench::Params::standard(holes);
                let heap = (p.peak_live_bytes() as f64 * f) as usize * t;
                let args = [s(holes as u8), s(t)];
                cases.push(Case {
                    workload: if holes { "gcbench-holes" } else { "gcbench" },
                    variant: format!(
                        "{f}x heap ({} MiB), {t} thread{}",
                        heap >> 20,
                        if t > 1 { "s" } else { "" }
                    ),
                    metric: Metric::Wall,
                    expected: Some(p.expected_check()),
                    baseline: "mosaic",
                    runners: vec![
                        mosaic(
                            "mosaic",
                            Spec::Gcbench {
                                params: p,
                                threads: t,
                                max_heap: heap,
                            },
                        ),
                        peer(
                            "boehm",
                            &peers.boehm_gcbench,
                            &args,
                            &[("GC_MAXIMUM_HEAP_SIZE", s(heap))],
                        ),
                        java("Serial", peers, Some(heap), "GCBench", &args),
                        java("Parallel", peers, Some(heap), "GCBench", &args),
                        java("G1", peers, Some(heap), "GCBench", &args),
                        peer(
                            "go",
                            &peers.go_gcbench,
                            &args,
                            &[("GOGC", s("off")), ("GOMEMLIMIT", s(heap))],
                        ),
                    ],
                });
            }
        }
    }

    // binary-trees, each runtime with its default heap policy.
    let depth = if full { 20 } else { 16 };
    let args = [s(depth)];
    cases.push(Case {
        workload: "binary-trees",
        variant: format!("depth {depth}"),
        metric: Metric::Wall,
        expected: Some(binary_trees::expected_check(depth)),
        baseline: "mosaic",
        runners: vec![
            mosaic("mosaic", Spec::BinaryTrees { n: depth }),
            peer("boehm", &peers.boehm_binary_trees, &args, &[]),
            peer("ocaml", &peers.ocaml_binary_trees, &args, &[]),
            java("Serial", peers, None, "BinaryTrees", &args),
            java("Parallel", peers, None, "BinaryTrees", &args),
            java("G1", peers, None, "BinaryTrees", &args),
            peer("go", &peers.go_binary_trees, &args, &[]),
        ],
    });

    // n-queens: the seed's table, normalised to OCaml.
    let ns: &[u32] = if full { &[8, 9, 10, 11] } else { &[8, 9, 10] };
    for &n in ns {
        let repeat = 1u32 << (11 - n).min(4);
        let a = |m: &str| [s(m), s(n), s(repeat)];
        cases.push(Case {
            workload: "nqueens",
            variant: format!("{n} queens x{repeat}"),
            metric: Metric::Inner,
            expected: Some(nqueens::solutions(n)),
            baseline: "ocaml",
            runners: vec![
                peer("ocaml", &peers.ocaml_nqueens, &[s(n), s(repeat)], &[]),
                peer("boehm", &peers.c_nqueens, &a("boehm"), &[]),
                peer("malloc", &peers.c_nqueens, &a("malloc"), &[]),
                peer("free", &peers.c_nqueens, &a("free"), &[]),
                peer("bump", &peers.c_nqueens, &a("bump"), &[]),
                mosaic("mosaic", Spec::Nqueens { n, repeat }),
            ],
        });
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
        metric: Metric::Wall,
        expected: None,
        baseline: "mosaic",
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
        cases.push(Case {
            workload: "alloc",
            variant: format!("{size} B"),
            metric: Metric::NsPerAlloc,
            expected: None,
            baseline: "mosaic",
            runners: vec![
                mosaic("mosaic", m("mosaic")),
                mosaic("bump", m("bump")),
                peer("glibc", &peers.alloc_glibc, &a, &[]),
                peer("jemalloc", &peers.alloc_jemalloc, &a, &[]),
                peer("mimalloc", &peers.alloc_mimalloc, &a, &[]),
            ],
        });
    }
    cases
}
