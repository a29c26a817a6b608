//! Boehm's own binaries on Mosaic's `libgc.so.1` against the real library:
//! every `X-on-mosaic` runner beside its runner `X` of the same case (the
//! same program, arguments and environment; see `cases::on_mosaic`).

use super::{f, Case, Metric, Summary};
use crate::cases::Runtime;

/// One program on both libraries, in one case.
pub struct Pair<'a> {
    pub case: &'a Case,
    pub real: &'a Summary,
    pub mosaic: &'a Summary,
}

impl Pair<'_> {
    /// Mosaic's library's time (or ns per allocation) over the real one's:
    /// below 1 when Mosaic's is faster.
    pub fn time_ratio(&self) -> Option<f64> {
        self.mosaic.time.zip(self.real.time).map(|(m, r)| m / r)
    }

    /// Mosaic's library's peak RSS over the real one's.
    pub fn rss_ratio(&self) -> Option<f64> {
        self.mosaic
            .peak_rss_mb
            .zip(self.real.peak_rss_mb)
            .map(|(m, r)| m / r)
    }
}

/// Every drop-in runner that ran, with its real-library runner.
pub fn pairs<'a>(cases: &'a [Case], summary: &'a [Summary]) -> Vec<Pair<'a>> {
    let ok = |ci: usize, peer: &str| {
        summary
            .iter()
            .find(|s| s.case == ci && s.peer == peer && s.failed.is_none())
    };
    let mut out = Vec::new();
    for (ci, case) in cases.iter().enumerate() {
        for r in case
            .runners
            .iter()
            .filter(|r| r.runtime == Runtime::BoehmOnMosaic)
        {
            let Some(real) = r.peer.strip_suffix("-on-mosaic") else {
                continue;
            };
            if let (Some(real), Some(mosaic)) = (ok(ci, real), ok(ci, &r.peer)) {
                out.push(Pair { case, real, mosaic });
            }
        }
    }
    out
}

fn with_spread(s: &Summary, digits: usize) -> String {
    match (s.time, s.time_min, s.time_max) {
        (Some(t), Some(a), Some(b)) => format!("{t:.digits$} [{a:.digits$}–{b:.digits$}]"),
        _ => "-".into(),
    }
}

/// The table: time (median [min–max]) and peak RSS of each program on the
/// real library and on Mosaic's, and Mosaic's over the real one's.
pub fn table(cases: &[Case], summary: &[Summary]) {
    let ps = pairs(cases, summary);
    if ps.is_empty() {
        return;
    }
    println!("== Boehm's binaries on Mosaic's libgc.so.1 (LD_LIBRARY_PATH) against the real one: time s (threads: ns/alloc), median [min–max]; ratios Mosaic's / real (< 1: Mosaic's library faster or smaller) ==");
    println!(
        "{:<44} {:<13} {:>24} {:>24} {:>7} {:>9} {:>9} {:>7} {:>9} {:>9}",
        "case",
        "program",
        "real",
        "mosaic",
        "x real",
        "real MB",
        "mosaic MB",
        "x real",
        "real GC",
        "mosaic GC"
    );
    for p in &ps {
        let digits = match p.case.metric {
            Metric::NsPerAlloc | Metric::NsPerAllocAll => 2,
            _ => 3,
        };
        let case = format!("{} {}", p.case.workload, p.case.variant);
        println!(
            "{:<44} {:<13} {:>24} {:>24} {:>7} {:>9} {:>9} {:>7} {:>9} {:>9}{}",
            case.chars().take(44).collect::<String>(),
            p.real.peer,
            with_spread(p.real, digits),
            with_spread(p.mosaic, digits),
            f(p.time_ratio(), 2),
            f(p.real.peak_rss_mb, 1),
            f(p.mosaic.peak_rss_mb, 1),
            f(p.rss_ratio(), 2),
            f(p.real.gc_ms, 1),
            f(p.mosaic.gc_ms, 1),
            if p.mosaic.wrong_check {
                "  WRONG RESULT on Mosaic's library"
            } else {
                ""
            }
        );
    }
    println!("  the same binary, arguments and GC_* environment on both; GC = ms from GC_EVENT_START to GC_EVENT_END summed over the run, by the program's own callback on both libraries (lazy sweeping in allocations not counted on either)");
    println!();
}

#[cfg(test)]
mod tests {
    use super::super::{summarize, Run};
    use super::*;
    use crate::cases::Runner;
    use crate::process::Outcome;
    use serde_json::json;

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

    #[test]
    fn each_dropin_runner_is_paired_with_its_real_library_runner() {
        let cases = vec![Case {
            workload: "gcbench",
            variant: "2x".into(),
            metric: Metric::Inner,
            expected: Some(0),
            baseline: "mosaic",
            heap_factor: None,
            runners: vec![
                runner("mosaic", Runtime::Mosaic, None),
                runner("boehm", Runtime::Boehm, None),
                runner("boehm-inline", Runtime::Boehm, None),
                runner("boehm-on-mosaic", Runtime::BoehmOnMosaic, None),
                runner(
                    "boehm-inline-on-mosaic",
                    Runtime::BoehmOnMosaic,
                    Some("no libgc.so.1 of Mosaic's"),
                ),
            ],
        }];
        let run = |runner, rep, ms: f64, rss| Run {
            case: 0,
            runner,
            rep,
            outcome: Outcome {
                inner_ms: Some(ms),
                peak_rss_mb: rss,
                result: json!({"check": 0}).as_object().unwrap().clone(),
                ..Outcome::default()
            },
        };
        let runs = vec![
            run(0, 0, 100.0, 30.0),
            run(1, 0, 400.0, 40.0),
            run(1, 1, 300.0, 40.0),
            run(1, 2, 200.0, 40.0),
            run(2, 0, 350.0, 40.0),
            run(3, 0, 150.0, 30.0),
            run(3, 1, 90.0, 50.0),
            run(3, 2, 120.0, 30.0),
        ];
        let s = summarize(&cases, &runs);
        let ps = pairs(&cases, &s);
        // The skipped inline runner has no pair.
        assert_eq!(ps.len(), 1);
        assert_eq!(
            (ps[0].real.peer.as_str(), ps[0].mosaic.peer.as_str()),
            ("boehm", "boehm-on-mosaic")
        );
        assert_eq!(ps[0].time_ratio(), Some(0.4));
        assert_eq!(ps[0].rss_ratio(), Some(0.75));
        assert_eq!(with_spread(ps[0].mosaic, 3), "0.120 [0.090–0.150]");
        table(&cases, &s);
        table(&[], &[]);
    }
}
