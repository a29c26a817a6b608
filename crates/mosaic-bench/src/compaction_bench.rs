//! `--only compaction`: seed 001's experiments on Mosaic's compaction
//! (`workloads/compaction.rs` says what each run does), plus n-queens with
//! conservative stack roots against OCaml.
//!
//! Every Mosaic run is a worker process of its own (the hidden `--worker`
//! subcommand), so RSS is that run's. Compared variants alternate: each
//! repetition starts at a different one. Figures are medians over the
//! repetitions with their min–max. Prints a markdown table per
//! experiment; writes `compaction.json` (every run's raw figures) and the
//! three heap diagrams `seed001-{before,after-address,after-pinned}.png`
//! (from the heap dumps, with `mosaic-heapviz`) to the output directory.
//!
//! 1. **diagram**: the PR's controlled heap (one object in 7, 5, 2 and 1
//!    kept and pinned, then movable wrappers), compacted by address in one
//!    process and pinned-first in another; pages used and emptied.
//! 2. **rss**: the PR's RSS script (a block of garbage, groups of one
//!    pinned object and 50 more, the wrappers after), pinned-first against
//!    address order: RSS and committed bytes after the compaction, and its
//!    time.
//! 3. **throughput**: compaction of a heap with 80% of its records dropped
//!    at random, 1 and 2 GC workers: MB moved per second.
//! 4. **varsize**: the variable-size workload's heap with 80% of its
//!    records dropped, compacted or not: committed bytes and RSS.
//! 5. **nqueens-conservative**: n-queens with the cells in Rust locals and
//!    the stack scanned conservatively, against OCaml and Mosaic's shadow
//!    stack.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mosaic_bench::workloads::compaction::{Experiment, Order, RssParams, RssSetup};
use mosaic_bench::workloads::varsize;
use mosaic_heapviz::{read_dump_file, render_png, DiagramOptions, PageOrder};
use serde_json::{json, Map, Value};

use crate::cases;
use crate::peers;
use crate::process::{self, Outcome};
use crate::report::{self, min_max};
use crate::worker::Spec;

/// Kept objects per density of the diagram heap (the PR: 32 000; fewer
/// keep the pictures small: about 110 page columns).
const DIAGRAM_PER_RUN: usize = 8000;
/// Records of the throughput heap (quick; twice as many with `--full`).
const THROUGHPUT_RECORDS: usize = 1_000_000;

fn worker(experiment: Experiment, timeout: Duration) -> Outcome {
    let spec = Spec::Compaction { experiment };
    let mut cmd = Command::new(std::env::current_exe().expect("own executable"));
    cmd.arg("--worker")
        .arg(serde_json::to_string(&spec).expect("spec"));
    let o = process::run(&mut cmd, timeout);
    if let Some(e) = &o.error {
        eprintln!("compaction: a run failed: {e}");
    }
    o
}

fn med(v: &[f64]) -> f64 {
    report::median(v.to_vec()).unwrap_or(f64::NAN)
}

fn spread(v: &[f64], digits: usize) -> String {
    match min_max(v) {
        (Some(lo), Some(hi)) => format!("{lo:.digits$}–{hi:.digits$}"),
        _ => "-".into(),
    }
}

/// The values of `key` over the successful runs.
fn values(runs: &[&Outcome], key: &str) -> Vec<f64> {
    runs.iter()
        .filter(|o| o.error.is_none())
        .filter_map(|o| o.get(key))
        .collect()
}

/// A raw run for compaction.json: its labels, then what it measured.
fn raw(labels: Value, o: &Outcome) -> Value {
    json!({ "labels": labels, "outcome": o })
}

pub fn run(reps: usize, full: bool, out: &Path, timeout: Duration) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    let mut json = Map::new();
    json.insert("reps".into(), json!(reps));
    json.insert("full".into(), json!(full));
    println!(
        "# Compaction (seed 001), {reps} repetition(s), variants alternating; medians, min–max\n"
    );

    json.insert("diagram".into(), diagram(out, timeout)?);
    json.insert("rss".into(), rss(reps.max(5), timeout));
    json.insert("throughput".into(), throughput(reps, full, timeout));
    json.insert("varsize".into(), varsize(reps, full, timeout));
    json.insert("nqueens_conservative".into(), nqueens(reps, full, timeout));

    let path = out.join("compaction.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&Value::Object(json)).expect("json"),
    )
    .map_err(|e| e.to_string())?;
    eprintln!("raw results: {}", path.display());
    Ok(())
}

/// (a) The controlled heap, its dumps and the three diagrams.
fn diagram(out: &Path, timeout: Duration) -> Result<Value, String> {
    let dumps = out.join("compaction-dumps");
    std::fs::create_dir_all(&dumps).map_err(|e| e.to_string())?;
    let path = |order: Order, when: &str| -> PathBuf {
        dumps.join(format!("seed001-{}-{when}.jsonl", order.name()))
    };
    let mut rows = Vec::new();
    let mut raws = Vec::new();
    for order in [Order::Address, Order::PinnedFirst] {
        let o = worker(
            Experiment::Diagram {
                order,
                per_run: DIAGRAM_PER_RUN,
                before: path(order, "before").display().to_string(),
                after: path(order, "after").display().to_string(),
            },
            timeout,
        );
        raws.push(raw(json!({ "order": order.name() }), &o));
        rows.push((order, o));
    }
    println!(
        "## Seed 001 controlled heap: {DIAGRAM_PER_RUN} objects kept and pinned in each of 1 in 7, 5, 2, 1 (40-byte objects), then {} movable wrappers; collect, compact",
        4 * DIAGRAM_PER_RUN
    );
    println!("| order | pool pages before | pages after | pages emptied | objects moved | compaction ms | wrappers intact |");
    println!("|---|---|---|---|---|---|---|");
    for (order, o) in &rows {
        let g = |k: &str| o.get(k).map_or("-".into(), |v| format!("{v:.0}"));
        println!(
            "| {} | {} | {} | {} | {} | {} | {}/{} |",
            order.name(),
            g("pages_before"),
            g("pages_after"),
            g("pages_emptied"),
            g("objects_moved"),
            o.get("compaction_ms")
                .map_or("-".into(), |v| format!("{v:.2}")),
            g("check"),
            4 * DIAGRAM_PER_RUN
        );
    }
    println!();
    let pool = rows[0].1.get("pool").map(|p| p as usize);
    let pictures = [
        (Order::Address, "before", PageOrder::Address, "before"),
        (Order::Address, "after", PageOrder::Address, "after-address"),
        (
            Order::PinnedFirst,
            "after",
            PageOrder::PinnedFirst,
            "after-pinned",
        ),
    ];
    let mut files = Vec::new();
    for (order, when, page_order, name) in pictures {
        let dump = read_dump_file(path(order, when)).map_err(|e| e.to_string())?;
        let file = out.join(format!("seed001-{name}.png"));
        let title = match name {
            "before" => "Seed 001 heap before compaction (address order)".to_string(),
            "after-address" => "After address-order compaction (address order)".to_string(),
            _ => "After pinned-first compaction (pinned-first order)".to_string(),
        };
        let s = render_png(
            &dump,
            &file,
            &DiagramOptions {
                order: page_order,
                pool,
                title: Some(title),
                cell: 1,
                column: 6,
            },
        )
        .map_err(|e| e.to_string())?;
        println!(
            "{}: {} pages drawn, {} pinned, {} live movable, {} free slots",
            file.display(),
            s.pages,
            s.pinned,
            s.live,
            s.free
        );
        files.push(file.display().to_string());
    }
    println!();
    Ok(json!({ "per_run": DIAGRAM_PER_RUN, "runs": raws, "pictures": files }))
}

/// (b) RSS after compaction, pinned-first against address order.
fn rss(reps: usize, timeout: Duration) -> Value {
    let p = RssParams::SEED;
    let mut raws = Vec::new();
    let mut runs: Vec<(RssSetup, Order, Outcome)> = Vec::new();
    for rep in 0..reps {
        for setup in RssSetup::ALL {
            for k in 0..2 {
                let order = Order::BOTH[(k + rep) % 2];
                eprintln!(
                    "compaction rss: rep {rep}, {}, {}",
                    setup.name(),
                    order.name()
                );
                let o = worker(
                    Experiment::Rss {
                        order,
                        setup,
                        params: p,
                    },
                    timeout,
                );
                raws.push(raw(
                    json!({ "setup": setup, "order": order.name(), "rep": rep }),
                    &o,
                ));
                runs.push((setup, order, o));
            }
        }
    }
    println!(
        "## Seed 001 RSS script: {} objects of garbage, {} groups of 1 pinned + {}, then the movable objects; RSS after the compaction, {reps} runs each",
        p.garbage, p.groups, p.per_group
    );
    println!("| setup | order | pool pages before → after | pages emptied | objects moved | RSS MB | min–max | committed MB | RSS vs address | compaction ms | min–max | time vs address | peak RSS MB |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for setup in RssSetup::ALL {
        let of = |order: Order| -> Vec<&Outcome> {
            runs.iter()
                .filter(|r| r.0 == setup && r.1 == order)
                .map(|r| &r.2)
                .collect()
        };
        let base = of(Order::Address);
        let (base_rss, base_t) = (
            med(&values(&base, "rss_mb")),
            med(&values(&base, "compaction_ms")),
        );
        for order in Order::BOTH {
            let rs = of(order);
            let rss = values(&rs, "rss_mb");
            let t = values(&rs, "compaction_ms");
            let peak: Vec<f64> = rs
                .iter()
                .filter(|o| o.error.is_none())
                .map(|o| o.peak_rss_mb)
                .collect();
            let m = |k: &str| med(&values(&rs, k));
            println!(
                "| {} | {} | {:.0} → {:.0} | {:.0} | {:.0} | {:.1} | {} | {:.1} | {} | {:.2} | {} | {} | {:.1} |",
                setup.name(),
                order.name(),
                m("pool_pages_before"),
                m("pool_pages_after"),
                m("pages_emptied"),
                m("objects_moved"),
                med(&rss),
                spread(&rss, 1),
                m("committed_mb"),
                if order == Order::Address {
                    "1.000".into()
                } else {
                    format!("{:.3}", med(&rss) / base_rss)
                },
                med(&t),
                spread(&t, 2),
                if order == Order::Address {
                    "1.00x".into()
                } else {
                    format!("{:.2}x", med(&t) / base_t)
                },
                med(&peak),
            );
        }
    }
    println!();
    json!({ "params": p, "runs": raws })
}

/// (c) Compaction throughput with 1 and 2 GC workers.
fn throughput(reps: usize, full: bool, timeout: Duration) -> Value {
    let records = if full {
        2 * THROUGHPUT_RECORDS
    } else {
        THROUGHPUT_RECORDS
    };
    let threads = [1usize, 2];
    let mut raws = Vec::new();
    let mut runs: Vec<(usize, Outcome)> = Vec::new();
    for rep in 0..reps {
        for k in 0..threads.len() {
            let gc_threads = threads[(k + rep) % threads.len()];
            eprintln!("compaction throughput: rep {rep}, {gc_threads} GC threads");
            let o = worker(
                Experiment::Throughput {
                    gc_threads,
                    records,
                },
                timeout,
            );
            raws.push(raw(json!({ "gc_threads": gc_threads, "rep": rep }), &o));
            runs.push((gc_threads, o));
        }
    }
    println!("## Compaction throughput: {records} records of 16 B–4 KiB (power law), 80% dropped at random, each survivor pointing at another; collect, compact (pinned-first); {reps} runs each");
    println!("| GC threads | live MB | MB moved | objects moved | pages emptied | compaction ms | min–max | MB moved/s | min–max | references intact |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for t in threads {
        let rs: Vec<&Outcome> = runs.iter().filter(|r| r.0 == t).map(|r| &r.1).collect();
        let m = |k: &str| med(&values(&rs, k));
        let ms = values(&rs, "compaction_ms");
        let rate = values(&rs, "mb_per_s");
        println!(
            "| {t} | {:.1} | {:.1} | {:.0} | {:.0} | {:.2} | {} | {:.0} | {} | {:.0}/{:.0} |",
            m("live_mb"),
            m("bytes_moved") / 1048576.0,
            m("objects_moved"),
            m("pages_emptied"),
            med(&ms),
            spread(&ms, 2),
            med(&rate),
            spread(&rate, 0),
            m("check"),
            m("survivors"),
        );
    }
    println!();
    json!({ "records": records, "runs": raws })
}

/// (d) The variable-size heap after dropping 80% of its records, compacted
/// or not.
fn varsize(reps: usize, full: bool, timeout: Duration) -> Value {
    let params = varsize::Params {
        records: 100_000,
        steps: if full { 2_000_000 } else { 1_000_000 },
    };
    let mut raws = Vec::new();
    let mut runs: Vec<(bool, Outcome)> = Vec::new();
    for rep in 0..reps {
        for k in 0..2 {
            let compact = (k + rep) % 2 == 0;
            eprintln!("compaction varsize: rep {rep}, compact {compact}");
            let o = worker(Experiment::Varsize { compact, params }, timeout);
            raws.push(raw(json!({ "compact": compact, "rep": rep }), &o));
            runs.push((compact, o));
        }
    }
    println!(
        "## Variable-size heap: {}k records, {}M replacements, then 80% of the records dropped at random, collect + finish_sweep (\"dropped\"); then compact (or collect again) + finish_sweep; {reps} runs each",
        params.records / 1000,
        params.steps / 1_000_000
    );
    println!("| variant | pool pages dropped → final | committed MB dropped → final | min–max final | RSS MB dropped → final | min–max final | objects moved | compaction ms | check |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut checks = Vec::new();
    for compact in [false, true] {
        let rs: Vec<&Outcome> = runs
            .iter()
            .filter(|r| r.0 == compact)
            .map(|r| &r.1)
            .collect();
        let m = |k: &str| med(&values(&rs, k));
        checks.extend(rs.iter().filter_map(|o| o.check()));
        println!(
            "| {} | {:.0} → {:.0} | {:.1} → {:.1} | {} | {:.1} → {:.1} | {} | {:.0} | {:.2} | {} |",
            if compact {
                "compacted"
            } else {
                "not compacted"
            },
            m("pool_pages_dropped"),
            m("pool_pages"),
            m("committed_dropped_mb"),
            m("committed_mb"),
            spread(&values(&rs, "committed_mb"), 1),
            m("rss_dropped_mb"),
            m("rss_mb"),
            spread(&values(&rs, "rss_mb"), 1),
            m("objects_moved"),
            m("compaction_ms"),
            rs.first()
                .and_then(|o| o.check())
                .map_or("-".into(), |c| format!("{c:#x}")),
        );
    }
    checks.dedup();
    if checks.len() > 1 {
        println!("WRONG RESULT: the surviving records' checksums differ: {checks:?}");
    }
    println!();
    json!({ "params": params, "runs": raws })
}

/// (e) n-queens with conservative stack roots against OCaml.
fn nqueens(reps: usize, full: bool, timeout: Duration) -> Value {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let ocaml = peers::ocaml(
        &root.join("peers"),
        &root.join("../../target/mosaic-bench-peers"),
        "nqueens",
    );
    if let Err(e) = &ocaml {
        eprintln!("skipping ocaml in nqueens-conservative: {e}");
    }
    let ns: &[u32] = if full { &[8, 9, 10, 11] } else { &[8, 9, 10] };
    let cases: Vec<cases::Case> = ns
        .iter()
        .map(|&n| cases::nqueens_conservative(n, &ocaml))
        .collect();
    let runs = cases::run_alternating(&cases, reps, timeout, |case, r, rep| {
        eprintln!(
            "nqueens-conservative: rep {rep}, {}, {}",
            case.variant, r.peer
        );
    });
    let summary = report::summarize(&cases, &runs);
    println!("## n-queens with conservative stack roots (cells in Rust locals, no shadow stack) against OCaml; in-process time, {reps} runs each, runners alternating");
    println!("| n | ocaml s | min–max | mosaic (shadow stack) s | min–max | x OCaml | mosaic-conservative s | min–max | x OCaml | results checked |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (ci, case) in cases.iter().enumerate() {
        let s = |peer: &str| summary.iter().find(|s| s.case == ci && s.peer == peer);
        let cell = |peer: &str| match s(peer) {
            Some(s) if s.failed.is_none() => (
                s.time.map_or("-".into(), |t| format!("{t:.3}")),
                match (s.time_min, s.time_max) {
                    (Some(a), Some(b)) => format!("{a:.3}–{b:.3}"),
                    _ => "-".into(),
                },
                s.time_ratio.map_or("-".into(), |r| format!("{r:.2}x")),
            ),
            Some(s) => (s.failed.clone().unwrap_or_default(), "-".into(), "-".into()),
            None => ("-".into(), "-".into(), "-".into()),
        };
        let (o, om, _) = cell("ocaml");
        let (a, am, ar) = cell("mosaic");
        let (b, bm, br) = cell("mosaic-conservative");
        let wrong: Vec<&str> = summary
            .iter()
            .filter(|s| s.case == ci && s.wrong_check)
            .map(|s| s.peer.as_str())
            .collect();
        println!(
            "| {} | {o} | {om} | {a} | {am} | {ar} | {b} | {bm} | {br} | {} |",
            case.variant,
            if wrong.is_empty() {
                format!("all {}", case.expected.unwrap_or(0))
            } else {
                format!("WRONG: {}", wrong.join(", "))
            }
        );
    }
    println!();
    let raws: Vec<Value> = runs
        .iter()
        .map(|r| {
            raw(
                json!({
                    "variant": cases[r.case].variant,
                    "peer": cases[r.case].runners[r.runner].peer,
                    "rep": r.rep,
                }),
                &r.outcome,
            )
        })
        .collect();
    json!({ "runs": raws, "summary": summary })
}
