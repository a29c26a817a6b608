//! The Mosaic side of a run, executed in a child process of the suite (so
//! peak RSS and wall time are measured the same way as for every peer).
//!
//! Every heap starts from [`Config::from_env`], so `MOSAIC_*` variables set
//! on a runner (e.g. `MOSAIC_HEAP_POLICY` in the heap-sweep workload) take
//! effect; the spec's heap limit, where it has one, overrides
//! `MOSAIC_MAX_HEAP`. Each workload prints `TIME ms`: its body timed
//! in-process with a monotonic clock (`Instant`), heap creation excluded.

use std::time::{Duration, Instant};

use mosaic::{Config, Embedder, Heap, PAGE_SIZE};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use mosaic_bench::workloads::{
    alloc, binary_trees, compaction, gcbench, nqueens, refs, safepoint, soak, threads, varsize,
};
use refs::rss_kb;

/// What a worker process runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "workload", rename_all = "snake_case")]
pub enum Spec {
    Gcbench {
        params: gcbench::Params,
        threads: usize,
        max_heap: usize,
    },
    BinaryTrees {
        n: u32,
    },
    Nqueens {
        n: u32,
        repeat: u32,
        /// Cells held in Rust locals, the stack scanned conservatively,
        /// instead of the shadow stack.
        #[serde(default)]
        conservative: bool,
    },
    Varsize {
        layout: varsize::Layout,
        params: varsize::Params,
        max_heap: usize,
    },
    Alloc {
        allocator: String,
        size: usize,
        count: u64,
    },
    Threads {
        params: threads::Params,
        max_heap: usize,
    },
    Safepoint {
        params: safepoint::Params,
    },
    /// An almost empty heap: resident memory before the heap, after it,
    /// after a mutator and one 16-byte allocation, after a collection.
    Footprint,
    /// One run of a compaction experiment (`--only compaction`).
    Compaction {
        experiment: compaction::Experiment,
    },
    /// `n` list nodes, a finalizer registered on each, dropped, collected
    /// and finalized (`--only finalizers`; [`refs::finalizers`]).
    Finalizers {
        n: usize,
    },
    /// A weak-keyed table of `n` ephemerons, nine keys in ten dropped and
    /// collected (`--only ephemerons`; [`refs::ephemerons`]).
    Ephemerons {
        n: usize,
    },
    /// A steady live set replaced at full speed on several threads, then
    /// nine tenths of it dropped (`--only soak`; [`soak::run`]).
    Soak {
        params: soak::Params,
    },
}

fn stats_json<E: Embedder>(heap: &Heap<E>) -> Map<String, Value> {
    let s = heap.stats();
    let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
    let mut m = Map::new();
    m.insert("collections".into(), json!(s.collections));
    m.insert(
        "gc_ms".into(),
        json!((s.pauses.total + s.sweep_steps.total).as_secs_f64() * 1e3),
    );
    // Generational mode: minor and full collections, minor pauses.
    m.insert("minor_collections".into(), json!(s.minor_collections));
    m.insert("full_collections".into(), json!(s.full_collections));
    m.insert("minor_pause_p50_us".into(), json!(us(s.minor_pauses.p50)));
    m.insert("minor_pause_p99_us".into(), json!(us(s.minor_pauses.p99)));
    m.insert("minor_pause_max_us".into(), json!(us(s.minor_pauses.max)));
    m.insert(
        "pause_total_ms".into(),
        json!(s.pauses.total.as_secs_f64() * 1e3),
    );
    m.insert("pause_p50_us".into(), json!(us(s.pauses.p50)));
    m.insert("pause_p99_us".into(), json!(us(s.pauses.p99)));
    m.insert("pause_max_us".into(), json!(us(s.pauses.max)));
    m.insert(
        "longest_sweep_step_us".into(),
        json!(us(s.longest_sweep_step())),
    );
    // From a collection's stop request until every other mutator parked.
    let tts = &s.time_to_safepoint;
    m.insert("tts_count".into(), json!(tts.count));
    m.insert("tts_p50_us".into(), json!(us(tts.p50)));
    m.insert("tts_p99_us".into(), json!(us(tts.p99)));
    m.insert("tts_max_us".into(), json!(us(tts.max)));
    // Where the memory is at the end (diagnostics, not in the tables).
    m.insert("committed_mb".into(), json!(s.committed_bytes as f64 / 1e6));
    m.insert("metadata_mb".into(), json!(s.metadata_bytes as f64 / 1e6));
    m
}

/// The configuration from the environment (`MOSAIC_*`), with `max_heap`
/// overridden when given.
fn config(max_heap: Option<usize>) -> Config {
    let base = Config::from_env().unwrap_or_else(|e| panic!("MOSAIC_* environment: {e}"));
    match max_heap {
        Some(h) => Config {
            max_heap: h.next_multiple_of(PAGE_SIZE),
            ..base
        },
        None => base,
    }
}

fn print_time(d: Duration) {
    println!("TIME {:.3}", d.as_secs_f64() * 1e3);
}

/// Runs `spec` and prints the TIME and RESULT lines.
pub fn run(spec: &Spec) {
    let mut out = Map::new();
    match spec {
        Spec::Gcbench {
            params,
            threads,
            max_heap,
        } => {
            let (check, heap, t) = gcbench::run(params, *threads, config(Some(*max_heap)));
            print_time(t);
            out = stats_json(&heap);
            out.insert("check".into(), json!(check));
        }
        Spec::BinaryTrees { n } => {
            let (check, heap, t) = binary_trees::run(*n, config(None));
            print_time(t);
            out = stats_json(&heap);
            out.insert("check".into(), json!(check));
        }
        Spec::Nqueens {
            n,
            repeat,
            conservative: true,
        } => {
            let heap = Heap::new(config(None), nqueens::ConsVm::default()).expect("heap");
            let mut m = heap.mutator().unwrap();
            // The board is built before the clock starts, as in the peers;
            // it stays in this frame's local.
            let board = nqueens::board_conservative(&mut m, *n);
            let t = Instant::now();
            let mut solutions = 0;
            for _ in 0..*repeat {
                solutions = nqueens::search_conservative(&mut m, board, *n);
            }
            print_time(t.elapsed());
            std::hint::black_box(board);
            drop(m);
            out = stats_json(&heap);
            out.insert("check".into(), json!(solutions));
        }
        Spec::Nqueens {
            n,
            repeat,
            conservative: false,
        } => {
            let heap = Heap::new(config(None), nqueens::ConsVm::default()).expect("heap");
            let mut m = heap.mutator().unwrap();
            let s = heap.embedder().stack(&mut m, 1 << 16);
            // The board is built before the clock starts, as in the peers.
            nqueens::board(&mut m, &s, *n);
            let t = Instant::now();
            let mut solutions = 0;
            for _ in 0..*repeat {
                solutions = nqueens::search_board(&mut m, &s, *n);
            }
            s.truncate(0);
            print_time(t.elapsed());
            drop(m);
            out = stats_json(&heap);
            out.insert("check".into(), json!(solutions));
        }
        Spec::Varsize {
            layout,
            params,
            max_heap,
        } => {
            let (check, heap, t) = varsize::run(*layout, params, config(Some(*max_heap)));
            print_time(t);
            out = stats_json(&heap);
            out.insert("check".into(), json!(check));
        }
        Spec::Alloc {
            allocator,
            size,
            count,
        } => {
            let ns = match allocator.as_str() {
                "mosaic" => alloc::mosaic(*size, *count, config(None)),
                "mosaic-sized" => alloc::mosaic_sized(*size, *count, config(None), false),
                "mosaic-uninit" => alloc::mosaic_sized(*size, *count, config(None), true),
                "bump" => alloc::bump(*size, *count),
                "bump-zeroed" => alloc::bump_zeroed(*size, *count, alloc::ARENA),
                "bump-zeroed-4m" => alloc::bump_zeroed(*size, *count, alloc::HEAP_CYCLE),
                other => panic!("unknown allocator {other}"),
            };
            out.insert("check".into(), json!(0));
            out.insert("ns_per_alloc".into(), json!(ns));
        }
        Spec::Threads { params, max_heap } => {
            let (check, heap, t) = threads::run(params, config(Some(*max_heap)));
            print_time(t);
            out = stats_json(&heap);
            out.insert("check".into(), json!(check));
            let ns = t.as_nanos() as f64 / params.total_allocs() as f64;
            out.insert("ns_per_alloc".into(), json!(ns));
        }
        Spec::Safepoint { params } => {
            let (o, heap, t) = safepoint::run(params, config(None));
            print_time(t);
            out = stats_json(&heap);
            out.insert("check".into(), json!(o.requests));
            out.insert("requests".into(), json!(o.requests));
            out.insert("allocs".into(), json!(o.allocs.iter().sum::<u64>()));
            out.insert("polls".into(), json!(o.polls.iter().sum::<u64>()));
        }
        Spec::Compaction { experiment } => out = run_compaction(experiment),
        Spec::Footprint => out = footprint(),
        Spec::Soak { params } => {
            let (r, heap) = soak::run(params, config(None));
            out = stats_json(&heap);
            let steps = heap.stats().sweep_steps;
            out.insert("sweep_step_count".into(), json!(steps.count));
            out.insert(
                "sweep_step_p99_us".into(),
                json!(steps.p99.as_secs_f64() * 1e6),
            );
            out.insert(
                "sweep_step_max_us".into(),
                json!(steps.max.as_secs_f64() * 1e6),
            );
            out.insert(
                "check".into(),
                json!(u64::from(r.nodes_found == r.nodes_expected)),
            );
            if let Value::Object(m) = json!(r) {
                out.extend(m);
            }
        }
        Spec::Finalizers { n } => {
            let (r, heap) = refs::finalizers(*n, config(None));
            print_time(r.total);
            out = stats_json(&heap);
            out.insert("check".into(), json!(u64::from(r.ok())));
            out.insert("n".into(), json!(r.n));
            out.insert("ran".into(), json!(r.ran));
            out.insert("ns_per_register".into(), json!(r.ns_per_register));
            out.insert("rss_bytes_per_item".into(), json!(r.bytes_per_finalizer));
        }
        Spec::Ephemerons { n } => {
            let (r, heap) = refs::ephemerons(*n, config(None));
            print_time(r.total);
            out = stats_json(&heap);
            out.insert("check".into(), json!(u64::from(r.ok())));
            out.insert("n".into(), json!(r.n));
            out.insert("kept".into(), json!(r.kept));
            out.insert("kept_ok".into(), json!(r.kept_ok));
            out.insert("cleared_ok".into(), json!(r.cleared_ok));
            out.insert("ns_per_insert".into(), json!(r.ns_per_insert));
            out.insert("rss_bytes_per_entry".into(), json!(r.rss_bytes_per_entry));
            out.insert("key_value_bytes".into(), json!(refs::KEY_VALUE_BYTES));
        }
    }
    println!("RESULT {}", Value::Object(out));
}

/// A compaction experiment's run: its figures as the RESULT object.
fn run_compaction(e: &compaction::Experiment) -> Map<String, Value> {
    let c = config(None);
    let v = match e {
        compaction::Experiment::Diagram {
            order,
            per_run,
            before,
            after,
        } => json!(compaction::diagram(
            *order,
            *per_run,
            before.as_ref(),
            after.as_ref(),
            c
        )),
        compaction::Experiment::Rss {
            order,
            setup,
            params,
        } => json!(compaction::rss(*order, *setup, *params, c)),
        compaction::Experiment::Throughput {
            gc_threads,
            records,
        } => json!(compaction::throughput(*gc_threads, *records, c)),
        compaction::Experiment::Varsize { compact, params } => {
            json!(compaction::varsize(*compact, params, c))
        }
    };
    match v {
        Value::Object(m) => m,
        _ => unreachable!("experiments report objects"),
    }
}

/// The footprint steps (see [`Spec::Footprint`]); the heap is built from the
/// environment, so `MOSAIC_GC_THREADS` and `MOSAIC_HEAP_MIN` apply.
fn footprint() -> Map<String, Value> {
    let base = rss_kb();
    let heap = Heap::new(config(None), nqueens::ConsVm::default()).expect("heap");
    let heap_kb = rss_kb();
    let mut m = heap.mutator().expect("mutator");
    let mutator_kb = rss_kb();
    let obj = m.alloc(16).expect("one allocation");
    let root = m.root(obj).expect("root");
    let alloc_kb = rss_kb();
    m.collect();
    let collect_kb = rss_kb();
    let kept = root.get() == Some(obj);
    let mut out = Map::new();
    out.insert("check".into(), json!(u64::from(kept)));
    for (k, v) in [
        ("base_kb", base),
        ("heap_kb", heap_kb),
        ("mutator_kb", mutator_kb),
        ("alloc_kb", alloc_kb),
        ("collect_kb", collect_kb),
    ] {
        out.insert(k.into(), json!(v));
    }
    out
}
