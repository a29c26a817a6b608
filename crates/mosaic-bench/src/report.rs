//! Medians and spreads, tables with ratios, the JSON file and the charts.
//!
//! Columns of the printed tables (and fields of `results.json`'s summary):
//!
//! - `time s` (`time`): median over the repetitions of the benchmark body
//!   timed by the program itself (`TIME ms`, monotonic clock, runtime
//!   start-up and heap set-up excluded; for Java, the last run in the JVM,
//!   after `--jvm-warmup` runs). `ns/alloc` in the alloc workload.
//! - `min–max` (`time_min`, `time_max`): the fastest and slowest repetition.
//! - `x base` (`time_ratio`): the median over the baseline runner's median.
//! - `wall s` (`wall_s`): median wall time of the whole process, spawn to
//!   exit (JVM start-up, JIT and warm-up runs included).
//! - `cpu s` (`cpu_s`): median user + system CPU time of the whole process,
//!   every thread (a runtime's parallel or concurrent GC threads on the
//!   other core show here and not in the time).
//! - `peak MB` (`peak_rss_mb`), `x base` (`rss_ratio`): peak resident set
//!   of the process (`wait4`'s `ru_maxrss`), median, and over the baseline.
//! - `GC ms` (`gc_ms`), `pause p50/p99/max ms`, `GCs` (`collections`): as
//!   each runtime reports them, which is not the same thing everywhere: the
//!   legend under each table (and `gc_time_means`, `pauses_mean` per runner
//!   in results.json) says what they are for each runtime
//!   ([`crate::cases::Runtime::gc_time`]).
//! - `tts_p50_us`, `tts_p99_us`, `tts_max_us`, `tts_count` (Mosaic only):
//!   time to safepoint over the run's collections, medians over the
//!   repetitions; the safepoint workload's table ([`mutators`]).

use std::path::Path;

use serde_json::json;

use crate::cases::{Case, Metric, Runtime};
use crate::process::Outcome;

mod chart;
mod dropin;
mod mutators;

pub use chart::charts;
pub(crate) use chart::load_font;

pub struct Run {
    pub case: usize,
    pub runner: usize,
    pub rep: usize,
    pub outcome: Outcome,
}

/// One runner of one case, over its repetitions.
#[derive(serde::Serialize)]
pub struct Summary {
    pub case: usize,
    pub peer: String,
    pub runtime: Runtime,
    pub runs: usize,
    pub failed: Option<String>,
    pub wrong_check: bool,
    /// Median of the case's metric (seconds of the in-process time, or ns
    /// per allocation), and its spread.
    pub time: Option<f64>,
    pub time_min: Option<f64>,
    pub time_max: Option<f64>,
    /// Process wall time, seconds: median and spread.
    pub wall_s: Option<f64>,
    pub wall_min: Option<f64>,
    pub wall_max: Option<f64>,
    /// Process CPU time (user + system), seconds, median.
    pub cpu_s: Option<f64>,
    pub peak_rss_mb: Option<f64>,
    pub gc_ms: Option<f64>,
    pub pause_p50_us: Option<f64>,
    pub pause_p99_us: Option<f64>,
    pub pause_max_us: Option<f64>,
    pub collections: Option<f64>,
    /// Mosaic's time to safepoint (stop request until every other mutator
    /// parked) over the run's collections: percentiles and sample count.
    pub tts_p50_us: Option<f64>,
    pub tts_p99_us: Option<f64>,
    pub tts_max_us: Option<f64>,
    pub tts_count: Option<f64>,
    /// Time and RSS divided by the case's baseline runner's.
    pub time_ratio: Option<f64>,
    pub rss_ratio: Option<f64>,
}

pub(crate) fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn metric(case: &Case, o: &Outcome) -> Option<f64> {
    match case.metric {
        Metric::Inner => o.inner_ms.map(|ms| ms / 1e3),
        Metric::NsPerAlloc | Metric::NsPerAllocAll => o.get("ns_per_alloc"),
        Metric::TimeToSafepoint => o.get("tts_p50_us"),
    }
}

pub(crate) fn min_max(v: &[f64]) -> (Option<f64>, Option<f64>) {
    (
        v.iter().copied().reduce(f64::min),
        v.iter().copied().reduce(f64::max),
    )
}

pub fn summarize(cases: &[Case], runs: &[Run]) -> Vec<Summary> {
    let mut out = Vec::new();
    for (ci, case) in cases.iter().enumerate() {
        let first = out.len();
        for (ri, r) in case.runners.iter().enumerate() {
            let mine: Vec<&Outcome> = runs
                .iter()
                .filter(|x| x.case == ci && x.runner == ri)
                .map(|x| &x.outcome)
                .collect();
            let ok: Vec<&Outcome> = mine.iter().copied().filter(|o| o.error.is_none()).collect();
            let col = |f: &dyn Fn(&Outcome) -> Option<f64>| {
                median(ok.iter().filter_map(|o| f(o)).collect())
            };
            let times: Vec<f64> = ok.iter().filter_map(|o| metric(case, o)).collect();
            let walls: Vec<f64> = ok.iter().map(|o| o.wall_s).collect();
            let wrong = case
                .expected
                .is_some_and(|e| ok.iter().any(|o| o.check() != Some(e)));
            // A run that printed no time for a timed case is a failure too.
            let untimed = (times.len() < ok.len())
                .then(|| "no TIME line in the program's output".to_string());
            let (time_min, time_max) = min_max(&times);
            let (wall_min, wall_max) = min_max(&walls);
            out.push(Summary {
                case: ci,
                peer: r.peer.clone(),
                runtime: r.runtime,
                runs: mine.len(),
                failed: r
                    .skip
                    .clone()
                    .or_else(|| mine.iter().find_map(|o| o.error.clone()))
                    .or(untimed),
                wrong_check: wrong,
                time: median(times),
                time_min,
                time_max,
                wall_s: median(walls),
                wall_min,
                wall_max,
                cpu_s: col(&|o| Some(o.cpu_s)),
                peak_rss_mb: col(&|o| Some(o.peak_rss_mb)),
                gc_ms: col(&|o| o.get("gc_ms")),
                pause_p50_us: col(&|o| o.get("pause_p50_us")),
                pause_p99_us: col(&|o| o.get("pause_p99_us")),
                pause_max_us: col(&|o| o.get("pause_max_us")),
                collections: col(&|o| o.get("collections")),
                tts_p50_us: col(&|o| o.get("tts_p50_us")),
                tts_p99_us: col(&|o| o.get("tts_p99_us")),
                tts_max_us: col(&|o| o.get("tts_max_us")),
                tts_count: col(&|o| o.get("tts_count")),
                time_ratio: None,
                rss_ratio: None,
            });
        }
        let base = out[first..]
            .iter()
            .find(|s| s.peer == case.baseline)
            .map(|s| (s.time, s.peak_rss_mb));
        if let Some((bt, br)) = base {
            for s in &mut out[first..] {
                s.time_ratio = s.time.zip(bt).map(|(a, b)| a / b);
                s.rss_ratio = s.peak_rss_mb.zip(br).map(|(a, b)| a / b);
            }
        }
    }
    out
}

fn f(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |v| format!("{v:.digits$}"))
}

fn pauses(s: &Summary) -> String {
    match (s.pause_p50_us, s.pause_p99_us, s.pause_max_us) {
        (Some(a), Some(b), Some(c)) => format!("{:.2}/{:.2}/{:.2}", a / 1e3, b / 1e3, c / 1e3),
        _ => "-".into(),
    }
}

fn spread(s: &Summary, digits: usize) -> String {
    match (s.time_min, s.time_max) {
        (Some(a), Some(b)) => format!("{a:.digits$}–{b:.digits$}"),
        _ => "-".into(),
    }
}

/// The legend under a table: what the time columns and, per runtime in
/// it, the GC columns mean.
fn legend(case: &Case, reps: usize, jvm_warmup: u32) -> Vec<String> {
    let mut lines = vec![match case.metric {
        Metric::Inner => format!(
            "time: the benchmark body timed in-process (monotonic clock, start-up excluded), median and min–max of {reps} run(s); wall: the whole process"
        ),
        Metric::NsPerAlloc => format!(
            "ns/alloc: the allocation loop timed in-process, median and min–max of {reps} run(s); wall: the whole process"
        ),
        Metric::NsPerAllocAll | Metric::TimeToSafepoint => mutators::legend(case.metric, reps),
    }];
    lines.push(
        "cpu: user + system CPU time of the whole process, every thread (start-up included)".into(),
    );
    let mut seen: Vec<Runtime> = Vec::new();
    for r in &case.runners {
        if seen.contains(&r.runtime) {
            continue;
        }
        seen.push(r.runtime);
        let name = format!("{:?}", r.runtime).to_lowercase();
        let mut line = format!("{name}: GC ms = {}", r.runtime.gc_time());
        if !matches!(r.runtime, Runtime::OCaml | Runtime::Manual) {
            line += &format!("; pauses = {}", r.runtime.pauses());
        }
        if r.runtime == Runtime::Java {
            line += &match jvm_warmup {
                0 => "; one cold run per JVM (JIT warm-up in the time)".to_string(),
                n => format!(
                    "; the last of {} runs in one JVM (java-g1-cold: one cold run, JIT warm-up in the time)",
                    n + 1
                ),
            };
        }
        lines.push(line);
    }
    lines
}

pub fn print(cases: &[Case], summary: &[Summary], reps: usize, jvm_warmup: u32) {
    println!("Mosaic benchmark suite: {reps} repetition(s) alternating which runner goes first; medians, min–max; ratios are against each table's baseline.\n");
    for (ci, case) in cases.iter().enumerate() {
        let (unit, digits) = match case.metric {
            Metric::NsPerAlloc | Metric::NsPerAllocAll => ("ns/alloc", 2),
            Metric::Inner => ("time s", 3),
            Metric::TimeToSafepoint => ("tts p50 µs", 1),
        };
        println!(
            "== {} — {} (baseline: {}) ==",
            case.workload, case.variant, case.baseline
        );
        println!(
            "{:<24} {:>9} {:>15} {:>7} {:>8} {:>8} {:>9} {:>7} {:>9} {:>22} {:>6}",
            "peer",
            unit,
            "min–max",
            "x base",
            "wall s",
            "cpu s",
            "peak MB",
            "x base",
            "GC ms",
            "pause p50/p99/max ms",
            "GCs"
        );
        for s in summary.iter().filter(|s| s.case == ci) {
            if let Some(why) = &s.failed {
                println!("{:<24} {why}", s.peer);
                continue;
            }
            println!(
                "{:<24} {:>9} {:>15} {:>7} {:>8} {:>8} {:>9} {:>7} {:>9} {:>22} {:>6}{}",
                s.peer,
                f(s.time, digits),
                spread(s, digits),
                f(s.time_ratio, 2),
                f(s.wall_s, 3),
                f(s.cpu_s, 3),
                f(s.peak_rss_mb, 1),
                f(s.rss_ratio, 2),
                f(s.gc_ms, 1),
                pauses(s),
                f(s.collections, 0),
                if s.wrong_check { "  WRONG RESULT" } else { "" }
            );
        }
        // The legend once per workload, under its last table.
        if !matches!(cases.get(ci + 1), Some(next) if next.workload == case.workload) {
            for line in legend(case, reps, jvm_warmup) {
                println!("  {line}");
            }
        }
        println!();
    }
    nqueens_table(cases, summary);
    mutators::threads_table(cases, summary);
    dropin::table(cases, summary);
    mutators::safepoint_table(cases, summary);
}

/// The seed's table: time relative to OCaml per memory manager and n.
fn nqueens_table(cases: &[Case], summary: &[Summary]) {
    let qs: Vec<usize> = (0..cases.len())
        .filter(|&i| cases[i].workload == "nqueens")
        .collect();
    if qs.is_empty() {
        return;
    }
    println!("== n-queens: time relative to OCaml, and peak RSS MB (seed 003 measured Boehm 1.4-1.7, malloc 2.2-3.1, free 1.9-2.3, bump 1.4-1.7, its region prototype 1.04-1.20) ==");
    print!("{:<24}", "");
    for &c in &qs {
        print!("{:>18}", cases[c].variant);
    }
    println!();
    for peer in [
        "ocaml",
        "boehm",
        "boehm-inline",
        "boehm-on-mosaic",
        "boehm-inline-on-mosaic",
        "malloc",
        "free",
        "bump",
        "mosaic",
        "mosaic-conservative",
    ] {
        print!("{peer:<24}");
        for &c in &qs {
            let s = summary.iter().find(|s| s.case == c && s.peer == peer);
            let cell = format!(
                "{} {}MB",
                f(s.and_then(|s| s.time_ratio), 2),
                f(s.and_then(|s| s.peak_rss_mb), 1)
            );
            print!("{cell:>18}");
        }
        println!();
    }
    println!();
}

/// How the suite was run, for results.json.
pub struct Settings {
    pub full: bool,
    pub reps: usize,
    pub jvm_warmup: u32,
}

pub fn write_json(
    path: &Path,
    cases: &[Case],
    runs: &[Run],
    summary: &[Summary],
    settings: &Settings,
) {
    let runtimes = [
        Runtime::Mosaic,
        Runtime::MosaicC,
        Runtime::Boehm,
        Runtime::BoehmOnMosaic,
        Runtime::Java,
        Runtime::Go,
        Runtime::OCaml,
        Runtime::Manual,
    ];
    let doc = json!({
        "mode": if settings.full { "full" } else { "quick" },
        "repetitions": settings.reps,
        "jvm_warmup_runs": settings.jvm_warmup,
        "machine": {
            "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            "os": std::env::consts::OS,
            "arch": std::env::consts::ARCH,
        },
        "peak_rss_floor_mb": crate::process::launcher_floor_mb(),
        "unix_time": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        "columns": {
            "time": "median of the case's metric: Inner = seconds of the benchmark body timed in-process (TIME ms, monotonic clock, start-up excluded; Java: the last run after jvm_warmup_runs); NsPerAlloc = ns per allocation",
            "time_min/time_max": "fastest and slowest repetition",
            "wall_s": "median wall time of the whole process, spawn to exit (start-up, JIT and warm-up runs included)",
            "cpu_s": "median user + system CPU time of the whole process, every thread (start-up included)",
            "peak_rss_mb": "median peak resident set of the program (wait4 ru_maxrss, read by the small launcher process that forked it, so never below peak_rss_floor_mb)",
            "gc_ms, pause_*_us, collections": "as each runtime reports them: see gc_time_means and pauses_mean",
        },
        "gc_time_means": runtimes.iter().map(|r| (format!("{r:?}").to_lowercase(), json!(r.gc_time()))).collect::<serde_json::Map<_, _>>(),
        "pauses_mean": runtimes.iter().map(|r| (format!("{r:?}").to_lowercase(), json!(r.pauses()))).collect::<serde_json::Map<_, _>>(),
        "cases": cases.iter().map(|c| json!({
            "workload": c.workload, "variant": c.variant, "metric": c.metric, "baseline": c.baseline,
            "expected_check": c.expected, "heap_factor": c.heap_factor,
            "runners": c.runners.iter().map(|r| json!({
                "peer": r.peer, "runtime": r.runtime, "program": r.program, "args": r.args, "env": r.env,
                "skipped": r.skip, "gc_time_means": r.runtime.gc_time(), "pauses_mean": r.runtime.pauses(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "runs": runs.iter().map(|r| json!({
            "case": r.case, "peer": cases[r.case].runners[r.runner].peer, "rep": r.rep, "outcome": r.outcome,
        })).collect::<Vec<_>>(),
        "summary": summary,
    });
    std::fs::write(path, serde_json::to_string_pretty(&doc).expect("json"))
        .expect("write results.json");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::Runner;

    fn runner(peer: &str, runtime: Runtime, skip: Option<&str>) -> Runner {
        Runner {
            peer: peer.into(),
            program: "true".into(),
            args: vec![],
            env: vec![],
            skip: skip.map(String::from),
            runtime,
        }
    }

    /// A run whose program reported `inner` seconds and took `wall` seconds.
    fn outcome(inner: f64, wall: f64, rss: f64, check: u64) -> Outcome {
        let mut result = serde_json::Map::new();
        result.insert("check".into(), json!(check));
        result.insert("gc_ms".into(), json!(inner * 100.0));
        result.insert("collections".into(), json!(inner * 10.0));
        Outcome {
            wall_s: wall,
            inner_ms: Some(inner * 1e3),
            peak_rss_mb: rss,
            result,
            ..Outcome::default()
        }
    }

    fn case(workload: &'static str, heap_factor: Option<f64>, runners: Vec<Runner>) -> Case {
        Case {
            workload,
            variant: "v".into(),
            metric: Metric::Inner,
            expected: Some(42),
            baseline: "mosaic",
            heap_factor,
            runners,
        }
    }

    #[test]
    fn medians_spreads_ratios_skips_and_wrong_results() {
        let cases = vec![case(
            "w",
            None,
            vec![
                runner("mosaic", Runtime::Mosaic, None),
                runner("peer", Runtime::Java, None),
                runner("absent", Runtime::Go, Some("not installed")),
            ],
        )];
        let runs = [
            (0, 1.0, 9.0, 10.0, 42),
            (0, 3.0, 5.0, 10.0, 42),
            (0, 2.0, 4.0, 12.0, 42),
            (1, 4.0, 8.0, 20.0, 42),
            (1, 4.4, 8.0, 20.0, 41),
        ]
        .iter()
        .enumerate()
        .map(|(rep, &(runner, inner, wall, rss, check))| Run {
            case: 0,
            runner,
            rep,
            outcome: outcome(inner, wall, rss, check),
        })
        .collect::<Vec<_>>();
        let s = summarize(&cases, &runs);
        assert_eq!(s.len(), 3);
        assert_eq!(
            (s[0].time, s[0].time_min, s[0].time_max),
            (Some(2.0), Some(1.0), Some(3.0)),
            "the in-process time is the main figure"
        );
        assert_eq!(
            (s[0].wall_s, s[0].wall_min, s[0].wall_max),
            (Some(5.0), Some(4.0), Some(9.0))
        );
        assert_eq!(spread(&s[0], 3), "1.000–3.000");
        assert_eq!(s[0].peak_rss_mb, Some(10.0));
        assert_eq!(s[0].time_ratio, Some(1.0));
        assert_eq!(s[1].time, Some(4.2));
        assert_eq!(s[1].time_ratio, Some(2.1));
        assert_eq!(s[1].rss_ratio, Some(2.0));
        assert!(s[1].wrong_check, "one run returned 41");
        assert!(!s[0].wrong_check);
        assert_eq!(s[2].failed.as_deref(), Some("not installed"));
        assert_eq!(s[2].runs, 0);
    }

    #[test]
    fn a_timed_case_without_a_time_is_a_failure() {
        let cases = vec![case(
            "w",
            None,
            vec![runner("mosaic", Runtime::Mosaic, None)],
        )];
        let mut o = outcome(1.0, 2.0, 3.0, 42);
        o.inner_ms = None;
        let runs = vec![Run {
            case: 0,
            runner: 0,
            rep: 0,
            outcome: o,
        }];
        let s = summarize(&cases, &runs);
        assert!(s[0].failed.as_deref().unwrap().contains("TIME"));
    }

    #[test]
    fn the_legend_names_each_runtimes_gc_time() {
        let c = case(
            "w",
            None,
            vec![
                runner("mosaic", Runtime::Mosaic, None),
                runner("mosaic-2", Runtime::Mosaic, None),
                runner("java-g1", Runtime::Java, None),
                runner("go", Runtime::Go, None),
            ],
        );
        let lines = legend(&c, 3, 2);
        assert_eq!(lines.len(), 5, "{lines:?}");
        assert!(lines[0].contains("in-process"));
        assert!(lines[1].starts_with("cpu:"));
        assert!(lines[2].starts_with("mosaic: GC ms = stop-the-world pauses"));
        assert!(lines[3].contains("the last of 3 runs in one JVM"));
        assert!(lines[4].contains("PauseTotalNs"));
    }

    #[test]
    fn json_and_charts_are_written() {
        let runners = || {
            vec![
                runner("mosaic", Runtime::Mosaic, None),
                runner("boehm", Runtime::Boehm, None),
            ]
        };
        let cases = vec![
            case("w", None, runners()),
            case("heap-sweep", Some(1.5), runners()),
            case("heap-sweep", Some(3.0), runners()),
        ];
        let runs: Vec<Run> = (0..cases.len())
            .flat_map(|c| {
                (0..2).map(move |r| Run {
                    case: c,
                    runner: r,
                    rep: 0,
                    outcome: outcome(1.0 + r as f64 * 0.5, 2.0, 5.0 + c as f64, 42),
                })
            })
            .collect();
        let s = summarize(&cases, &runs);
        let dir = std::env::temp_dir().join(format!("mosaic-bench-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let settings = Settings {
            full: false,
            reps: 1,
            jvm_warmup: 0,
        };
        write_json(&dir.join("results.json"), &cases, &runs, &s, &settings);
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap())
                .unwrap();
        assert_eq!(doc["summary"][1]["time_ratio"], json!(1.5));
        assert_eq!(doc["summary"][1]["wall_s"], json!(2.0));
        assert_eq!(doc["runs"].as_array().unwrap().len(), 6);
        assert_eq!(
            doc["cases"][0]["runners"][1]["gc_time_means"],
            json!(Runtime::Boehm.gc_time())
        );
        assert!(doc["gc_time_means"]["go"].is_string());
        match charts(&dir, &cases, &s) {
            Ok(files) => {
                assert_eq!(files.len(), 2);
                assert!(files[1].ends_with("heap-sweep.png"));
                for f in files {
                    let png = std::fs::read(&f).unwrap();
                    assert_eq!(&png[1..4], b"PNG");
                }
            }
            Err(e) => assert!(e.contains("font"), "{e}"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
