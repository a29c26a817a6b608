//! The summary tables of the many-mutator workloads: throughput against
//! the thread count (`threads`), and Mosaic's time to safepoint
//! (`safepoint`).

use super::{f, Case, Metric, Summary};

/// The first legend line of these workloads' tables: what the main figure is.
pub fn legend(metric: Metric, reps: usize) -> String {
    let what = match metric {
        Metric::TimeToSafepoint => "tts p50 µs: median time from a collection's stop request until every other mutator parked (Mosaic's Stats::time_to_safepoint)",
        _ => "ns/alloc: wall-clock time from starting the threads to joining them (in-process, monotonic clock) over all threads' allocations",
    };
    format!("{what}, median and min–max of {reps} run(s); wall: the whole process")
}

fn cases_of<'a>(cases: &'a [Case], workload: &str) -> Vec<(usize, &'a Case)> {
    cases
        .iter()
        .enumerate()
        .filter(|(_, c)| c.workload == workload)
        .collect()
}

/// The part of a variant before its first comma ("4 threads").
fn head(variant: &str) -> &str {
    variant.split(',').next().unwrap_or(variant)
}

/// Allocations per second over all threads (millions), per runner and
/// thread count, and the speed-up over the first thread count.
pub fn threads_table(cases: &[Case], summary: &[Summary]) {
    let cs = cases_of(cases, "threads");
    let Some(&(_, first)) = cs.first() else {
        return;
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "== threads: million allocations per second over all threads (speed-up over {}; peak RSS MB), {cores} cores ==",
        head(&first.variant)
    );
    print!("{:<16}", "");
    for (_, c) in &cs {
        print!("{:>24}", head(&c.variant));
    }
    println!();
    for r in &first.runners {
        print!("{:<16}", r.peer);
        let run = |ci: usize| {
            summary
                .iter()
                .find(|s| s.case == ci && s.peer == r.peer && s.failed.is_none())
        };
        let rate = |ci: usize| run(ci).and_then(|s| s.time).map(|ns| 1e3 / ns);
        let one = rate(cs[0].0);
        for &(ci, _) in &cs {
            let rss = run(ci)
                .and_then(|s| s.peak_rss_mb)
                .map_or(String::new(), |mb| format!(" {mb:.0}MB"));
            let cell = match (rate(ci), one) {
                (Some(x), Some(b)) => format!("{x:.1} ({:.2}x){rss}", x / b),
                (Some(x), None) => format!("{x:.1}{rss}"),
                _ => "-".into(),
            };
            print!("{cell:>24}");
        }
        println!();
    }
    println!();
}

/// Time to safepoint per case: medians over the runs of each run's p50,
/// p99 and maximum, and of its number of collections.
pub fn safepoint_table(cases: &[Case], summary: &[Summary]) {
    let cs = cases_of(cases, "safepoint");
    if cs.is_empty() {
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "== safepoint (Mosaic only): time from a collection's stop request until every other mutator parked, µs; medians over runs; {cores} cores =="
    );
    println!(
        "{:<46} {:>11} {:>10} {:>10} {:>10}",
        "variant", "collections", "p50", "p99", "max"
    );
    for (ci, c) in cs {
        for s in summary.iter().filter(|s| s.case == ci) {
            if let Some(why) = &s.failed {
                println!("{:<46} {why}", c.variant);
                continue;
            }
            println!(
                "{:<46} {:>11} {:>10} {:>10} {:>10}",
                c.variant,
                f(s.tts_count, 0),
                f(s.tts_p50_us, 1),
                f(s.tts_p99_us, 1),
                f(s.tts_max_us, 1)
            );
        }
    }
    println!("  with more threads than cores, a worker off its core sees the request only when the OS schedules it: the figures are then mostly the scheduler's");
    println!();
}

#[cfg(test)]
mod tests {
    use super::super::{summarize, Run};
    use super::*;
    use crate::cases::{Runner, Runtime};
    use crate::process::Outcome;
    use serde_json::json;

    fn case(workload: &'static str, variant: &str, metric: Metric, peers: &[&str]) -> Case {
        Case {
            workload,
            variant: variant.into(),
            metric,
            expected: None,
            baseline: "mosaic",
            heap_factor: None,
            runners: peers
                .iter()
                .map(|p| Runner {
                    peer: p.to_string(),
                    program: "true".into(),
                    args: vec![],
                    env: vec![],
                    skip: None,
                    runtime: Runtime::Mosaic,
                })
                .collect(),
        }
    }

    fn run(case: usize, runner: usize, rep: usize, fields: serde_json::Value) -> Run {
        let mut result = fields.as_object().unwrap().clone();
        result.insert("check".into(), json!(0));
        Run {
            case,
            runner,
            rep,
            outcome: Outcome {
                inner_ms: Some(100.0),
                result,
                ..Outcome::default()
            },
        }
    }

    #[test]
    fn the_main_figures_are_ns_per_alloc_and_the_median_time_to_safepoint() {
        let cases = vec![
            case(
                "threads",
                "1 thread, 2M",
                Metric::NsPerAllocAll,
                &["mosaic", "boehm"],
            ),
            case(
                "threads",
                "2 threads, 2M",
                Metric::NsPerAllocAll,
                &["mosaic", "boehm"],
            ),
            case(
                "safepoint",
                "8 threads polling",
                Metric::TimeToSafepoint,
                &["mosaic"],
            ),
        ];
        let tts = |p50: f64| json!({"tts_p50_us": p50, "tts_p99_us": 2.0 * p50, "tts_max_us": 3.0 * p50, "tts_count": 10});
        let runs = vec![
            run(0, 0, 0, json!({"ns_per_alloc": 40.0})),
            run(0, 1, 0, json!({"ns_per_alloc": 20.0})),
            run(1, 0, 0, json!({"ns_per_alloc": 20.0})),
            run(1, 1, 0, json!({"ns_per_alloc": 20.0})),
            run(2, 0, 0, tts(100.0)),
            run(2, 0, 1, tts(300.0)),
            run(2, 0, 2, tts(200.0)),
        ];
        let s = summarize(&cases, &runs);
        assert_eq!(s[0].time, Some(40.0), "ns/alloc, not the TIME line");
        assert_eq!(s[1].time_ratio, Some(0.5));
        assert_eq!(s[4].time, Some(200.0));
        assert_eq!(
            (s[4].tts_p99_us, s[4].tts_max_us),
            (Some(400.0), Some(600.0))
        );
        assert_eq!(s[4].tts_count, Some(10.0));
        assert_eq!(head(&cases[1].variant), "2 threads");
        assert!(legend(Metric::TimeToSafepoint, 3).starts_with("tts p50 µs"));
        // Neither table may panic, with or without its workload.
        threads_table(&cases, &s);
        safepoint_table(&cases, &s);
        threads_table(&[], &[]);
        safepoint_table(&[], &[]);
    }
}
