//! `mosaic-bench`: Mosaic and real peers, side by side, in one command.
//!
//! ```text
//! cargo run --release -p mosaic-bench            # --quick: about two minutes
//! cargo run --release -p mosaic-bench -- --full  # everything, 5 repetitions, medians and spread
//! ```
//!
//! Every run is a separate process (Mosaic's too, through the hidden `worker`
//! subcommand), so wall time and peak RSS are measured the same way for
//! everyone. Repetitions alternate peers rather than running one peer after
//! another. Results: a table on stdout, `bench-results/results.json`, and a
//! PNG chart per workload.

mod cases;
mod peers;
mod process;
mod report;
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
    /// The short suite, about two minutes on 2 cores (the default).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// Repetitions of every run (default: 1 quick, 5 full).
    #[arg(long)]
    reps: Option<usize>,
    /// Only workloads whose name contains one of these (gcbench, binary-trees, nqueens, varsize, alloc).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
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
    let args = Args::parse();
    if let Some(spec) = &args.worker {
        let spec: worker::Spec = serde_json::from_str(spec).expect("worker spec");
        worker::run(&spec);
        return;
    }
    let full = args.full;
    let reps = args.reps.unwrap_or(if full { 5 } else { 1 }).max(1);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let build_dir = root.join("../../target/mosaic-bench-peers");
    eprintln!("building peers in {} ...", build_dir.display());
    let peers = peers::Peers::build(&root.join("peers"), &build_dir);
    let mut cases = cases::all(full, &peers);
    if !args.only.is_empty() {
        cases.retain(|c| args.only.iter().any(|o| c.workload.contains(o.as_str())));
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
    let timeout = Duration::from_secs(args.timeout);
    let mut runs = Vec::new();
    for rep in 0..reps {
        for (ci, case) in cases.iter().enumerate() {
            // Alternate: each repetition starts the rotation at a different peer.
            let n = case.runners.len();
            for k in 0..n {
                let ri = (k + rep) % n;
                let r = &case.runners[ri];
                if r.skip.is_some() {
                    continue;
                }
                bar.set_message(format!("{} {} {}", case.workload, case.variant, r.peer));
                let outcome = process::run(&mut r.command(), timeout);
                runs.push(report::Run {
                    case: ci,
                    runner: ri,
                    rep,
                    outcome,
                });
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    let summary = report::summarize(&cases, &runs);
    report::print(&cases, &summary, reps);
    std::fs::create_dir_all(&args.out).expect("output directory");
    report::write_json(
        &args.out.join("results.json"),
        &cases,
        &runs,
        &summary,
        full,
        reps,
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
