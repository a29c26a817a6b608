//! `mosaic-bench`: Mosaic and real peers, side by side, in one command.
//!
//! ```text
//! cargo run --release -p mosaic-bench            # --quick: 3 repetitions, about 4 minutes on 2 cores
//! cargo run --release -p mosaic-bench -- --full  # everything, 5 repetitions
//! cargo run --release -p mosaic-bench -- --only gcbench-scaled --scaled-depths 16 --reps 1
//! cargo run --release -p mosaic-bench -- --only gcbench --jvm-warmup 5
//! cargo run --release -p mosaic-bench -- --only gcbench,nqueens --runners boehm,boehm-on-mosaic  # Boehm's binaries on the real libgc.so.1 and on Mosaic's
//! cargo run --release -p mosaic-bench -- --full --only gcbench --variants '2x heap'     # GCBench at 2x, 1 and 2 threads, with and without holes
//! cargo run --release -p mosaic-bench -- --only footprint   # an almost empty heap's RSS, Mosaic and Boehm
//! cargo run --release -p mosaic-bench -- --only finalizers  # a finalizer per object: ns and bytes each, Mosaic, Boehm, Java
//! cargo run --release -p mosaic-bench -- --only ephemerons  # a weak-keyed table: ns and bytes per entry, Mosaic, Boehm, Java
//! cargo run --release -p mosaic-bench -- --only soak         # Mosaic alone: RSS flat under a steady live set, falling after a drop
//! cargo run --release -p mosaic-bench -- --only soak --soak-seconds 120,60 --reps 3
//! ```
//!
//! Every run is a separate process (Mosaic's too, through the hidden `worker`
//! subcommand), so wall time and peak RSS are measured the same way for
//! everyone. Repetitions alternate peers (each repetition starts the rotation
//! at a different runner) rather than running one peer after another.
//! Results: a table per case on stdout, `bench-results/results.json`, and a
//! PNG chart per workload (for heap-sweep: time, collections and peak RSS
//! against the heap limit).
//!
//! What is measured (the same way for every runtime):
//!
//! - **time** (the main figure): every program — Mosaic's worker, the Boehm
//!   C programs, Java, Go, OCaml — times the benchmark body itself with a
//!   monotonic clock (Rust `Instant`, C and OCaml `clock_gettime
//!   (CLOCK_MONOTONIC)`, Java `System.nanoTime`, Go `time.Since`) and prints
//!   `TIME ms`, as the published GCBench does. Runtime start-up (JVM boot,
//!   `GC_INIT`, heap creation) is outside it. Java runs its benchmark
//!   `--jvm-warmup N` times (default 3) in the same JVM before the reported
//!   run (TIME, GC counts and GC time are the last run's alone), so JIT
//!   compilation is mostly outside it; `java-g1-cold` (no warm-up) shows the
//!   cold figure beside it.
//! - **wall**: the whole process, spawn to exit, kept as a second column.
//! - **cpu**: user + system CPU time of the process, every thread: the
//!   work a runtime's GC threads do on the other core, which neither the
//!   time nor (for concurrent collectors) the GC ms column shows.
//! - **peak RSS**: `ru_maxrss` of the process from `wait4`.
//! - **GC ms, pauses, GCs**: as each runtime reports them; they do not mean
//!   the same thing everywhere, so each table has a legend line per runtime
//!   (see `cases::Runtime::gc_time`, and `gc_time_means` in results.json).
//!
//! Table columns: `time s` (median; `ns/alloc` for alloc and threads, the
//! median time to safepoint for safepoint), `min–max` (the
//! fastest and slowest repetition), `x base` (ratio to the table's baseline
//! runner), `wall s` (median process wall time), `cpu s`, `peak MB` and its `x base`,
//! `GC ms`, `pause p50/p99/max ms`, `GCs`. Medians over `--reps`
//! repetitions (default 3 quick, 5 full).
//!
//! Workloads (see `cases.rs` for the parameters of each mode): gcbench and
//! gcbench-holes at heap limits that are multiples of the peak live size;
//! gcbench-scaled (full only, or `--only gcbench-scaled`): live size up to
//! about 1 GiB at twice that heap, Mosaic and Boehm; heap-sweep: one workload
//! from 1.25x to 6x the live size, Mosaic under each `MOSAIC_HEAP_POLICY`
//! and Boehm; binary-trees; n-queens; varsize; alloc (with `bump` and
//! `bump-zeroed` floors); threads: allocation throughput with 1 to 8
//! mutator threads, Mosaic, Boehm and three mallocs; safepoint: Mosaic's
//! time to safepoint with 8 and 32 threads (tables of both after the
//! others). Mosaic's worker builds its heap from
//! `Config::from_env()`, so `MOSAIC_*` variables set on a runner (or in the
//! suite's environment) apply.
//!
//! In gcbench, gcbench-holes, binary-trees, n-queens and threads, every
//! Boehm runner has a twin `…-on-mosaic`: the same binary, arguments and
//! environment with `LD_LIBRARY_PATH` naming a directory that holds Mosaic's
//! drop-in `libgc.so.1` (`crates/mosaic-gc`, built by the suite into
//! `target/mosaic-bench-peers/mosaic-libgc/`); a table after the others
//! compares each pair.

mod cases;
mod compaction_bench;
mod footprint_bench;
mod peers;
mod process;
mod refs_bench;
mod release_bench;
mod report;
mod soak_bench;
mod worker;

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Parser, Debug)]
#[command(
    name = "mosaic-bench",
    about = "Mosaic against the Boehm GC, malloc, OCaml, the JVM and Go"
)]
pub struct Args {
    /// Run every workload and parameter with repetitions (default: --quick).
    #[arg(long)]
    full: bool,
    /// The short suite (the default): 3 repetitions, smaller parameters.
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// Repetitions of every run, alternating which runner goes first (default: 3 quick, 5 full).
    #[arg(long)]
    reps: Option<usize>,
    /// Only workloads whose name contains one of these (gcbench, gcbench-holes,
    /// gcbench-scaled, heap-sweep, binary-trees, nqueens, varsize, alloc,
    /// threads, safepoint). A
    /// full-only workload (gcbench-scaled) runs in quick mode when named exactly.
    /// `release` alone runs the release-phase experiment (lock-free against
    /// mutex page store, 1 to 8 GC workers; Mosaic only, in this process).
    /// `compaction` alone runs seed 001's compaction experiments (heap
    /// diagrams, RSS pinned-first against address order, compaction
    /// throughput, the varsize heap compacted, n-queens with conservative
    /// stack roots against OCaml; see `compaction_bench.rs`).
    /// `footprint` alone: an almost empty heap's RSS, Mosaic and Boehm.
    /// `finalizers` and `ephemerons` (alone or together): a finalizer per
    /// object and a weak-keyed table, Mosaic, Boehm and Java (see
    /// `refs_bench.rs`).
    /// `soak` alone: a reliability soak of Mosaic alone (4 threads, about
    /// 40 MiB live replaced at full speed, then 90% of it dropped): RSS
    /// drift over the steady phase and RSS after the drop (see
    /// `soak_bench.rs`; default 1 repetition).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Only runners with one of these names (e.g. `mosaic,boehm,boehm-on-mosaic`;
    /// default: all). Ratios need the case's baseline runner among them.
    #[arg(long, value_delimiter = ',')]
    runners: Vec<String>,
    /// Only cases whose variant contains one of these (e.g. `2x heap` for
    /// GCBench at twice its live size, `8 threads`; default: all).
    #[arg(long, value_delimiter = ',')]
    variants: Vec<String>,
    /// Seconds of the soak's steady phase and of its phase after the drop
    /// (`--only soak`).
    #[arg(long, value_delimiter = ',', default_values_t = [30, 15])]
    soak_seconds: Vec<u64>,
    /// Runs of each Java benchmark in the same JVM before the one reported
    /// (its TIME and GC figures are that last run's alone; 0: one cold run).
    /// A `java-g1-cold` runner (no warm-up) is always beside the warm ones.
    #[arg(long, default_value_t = 3)]
    jvm_warmup: u32,
    /// Tree depths L of gcbench-scaled (live size about 32·2^(L+1) bytes).
    #[arg(long, value_delimiter = ',', default_values_t = cases::SCALED_DEPTHS)]
    scaled_depths: Vec<u32>,
    /// Where results.json and the charts go.
    #[arg(long, default_value = "bench-results")]
    out: PathBuf,
    /// Seconds before a run is killed.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// Internal: run one Mosaic workload (a JSON spec) and print its result.
    #[arg(long, hide = true)]
    worker: Option<String>,
}

fn main() {
    // `--launch PROGRAM ARGS...` (internal, before any argument parsing):
    // run one measured program from a small process (process.rs).
    let argv: Vec<_> = std::env::args_os().skip(1).collect();
    if argv.first().is_some_and(|a| a == "--launch") {
        process::launch(&argv[1..]);
    }
    let args = Args::parse();
    if let Some(spec) = &args.worker {
        let spec: worker::Spec = serde_json::from_str(spec).expect("worker spec");
        worker::run(&spec);
        return;
    }
    let full = args.full;
    let reps = args.reps.unwrap_or(if full { 5 } else { 3 }).max(1);
    if args.only == ["release"] {
        if let Err(e) = release_bench::run(reps, full, &args.out) {
            eprintln!("no chart: {e}");
        }
        return;
    }
    if args.only == ["compaction"] {
        let timeout = Duration::from_secs(args.timeout);
        if let Err(e) = compaction_bench::run(reps, full, &args.out, timeout) {
            eprintln!("compaction: {e}");
            std::process::exit(1);
        }
        return;
    }
    if args.only == ["soak"] {
        let timeout = Duration::from_secs(args.timeout);
        let [steady, after] = args.soak_seconds[..] else {
            eprintln!("--soak-seconds takes two numbers: STEADY,AFTER_DROP");
            std::process::exit(2);
        };
        if !soak_bench::run(
            args.reps.unwrap_or(1).max(1),
            steady as f64,
            after as f64,
            timeout,
        ) {
            eprintln!("soak: a run failed or missed a target (see the verdict column)");
            std::process::exit(1);
        }
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let build_dir = root.join("../../target/mosaic-bench-peers");
    if args.only == ["footprint"] {
        let timeout = Duration::from_secs(args.timeout);
        std::fs::create_dir_all(&build_dir).expect("peer build directory");
        if let Err(e) = footprint_bench::run(reps.max(5), &build_dir, timeout) {
            eprintln!("footprint: {e}");
            std::process::exit(1);
        }
        return;
    }
    let refs: Option<Vec<_>> = args
        .only
        .iter()
        .map(|o| refs_bench::Comparison::from_name(o))
        .collect();
    if let Some(refs) = refs.filter(|r| !r.is_empty()) {
        let timeout = Duration::from_secs(args.timeout);
        std::fs::create_dir_all(&build_dir).expect("peer build directory");
        let mut ok = true;
        for which in refs {
            ok &= refs_bench::run(which, reps, &build_dir, args.jvm_warmup, timeout);
        }
        if !ok {
            eprintln!("FAILED RUNS (see the check column)");
            std::process::exit(1);
        }
        return;
    }
    eprintln!("building peers in {} ...", build_dir.display());
    let peers = peers::Peers::build(&root.join("peers"), &build_dir);
    let options = cases::Options {
        full,
        jvm_warmup: args.jvm_warmup,
        scaled_depths: args.scaled_depths.clone(),
        named: args.only.clone(),
    };
    let mut cases = cases::all(&options, &peers);
    if !args.only.is_empty() {
        cases.retain(|c| args.only.iter().any(|o| c.workload.contains(o.as_str())));
    }
    if !args.variants.is_empty() {
        cases.retain(|c| args.variants.iter().any(|v| c.variant.contains(v.as_str())));
    }
    if !args.runners.is_empty() {
        for c in &mut cases {
            c.runners.retain(|r| args.runners.contains(&r.peer));
        }
        cases.retain(|c| !c.runners.is_empty());
    }
    for c in &cases {
        for r in &c.runners {
            if let Some(why) = &r.skip {
                eprintln!("skipping {} in {}: {why}", r.peer, c.workload);
            }
        }
    }
    let total: usize = cases
        .iter()
        .map(|c| c.runners.iter().filter(|r| r.skip.is_none()).count())
        .sum::<usize>()
        * reps;
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40} {pos}/{len} runs, {elapsed} elapsed, ~{eta} left  {msg}",
        )
        .expect("template"),
    );
    // Before the runs, so that a bad `--out` costs nothing.
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!(
            "error: cannot create the output directory {}: {e}",
            args.out.display()
        );
        std::process::exit(2);
    }
    let timeout = Duration::from_secs(args.timeout);
    let runs = cases::run_alternating(&cases, reps, timeout, |case, r, _| {
        bar.set_message(format!("{} {} {}", case.workload, case.variant, r.peer));
        bar.inc(1);
    });
    bar.finish_and_clear();
    let summary = report::summarize(&cases, &runs);
    report::print(&cases, &summary, reps, args.jvm_warmup);
    report::write_json(
        &args.out.join("results.json"),
        &cases,
        &runs,
        &summary,
        &report::Settings {
            full,
            reps,
            jvm_warmup: args.jvm_warmup,
        },
    );
    match report::charts(&args.out, &cases, &summary) {
        Ok(files) => eprintln!("charts: {}", files.join(", ")),
        Err(e) => eprintln!("no charts: {e}"),
    }
    eprintln!("raw results: {}", args.out.join("results.json").display());
    let wrong: Vec<String> = summary
        .iter()
        .filter(|s| s.wrong_check)
        .map(|s| s.peer.clone())
        .collect();
    if !wrong.is_empty() {
        eprintln!("WRONG RESULTS from: {}", wrong.join(", "));
        std::process::exit(1);
    }
}
