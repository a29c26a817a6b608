//! `--only soak`: a reliability soak of Mosaic alone (no peers). Does
//! resident memory stay flat while the live set is steady, and fall back
//! after the live set drops? See `workloads/soak.rs` for the workload.
//!
//! Each repetition is a fresh worker process. The table has a row per
//! repetition: the live-set estimate, RSS (above the process before the
//! heap) at 25% and at the end of the steady phase, their drift (target:
//! within ±5%, either way), RSS at the end of the phase after the drop and its ratio to
//! the live set then (target: below 1.5×), collections, and the longest and
//! 99th-percentile lazy sweep steps (`Stats::sweep_steps`).

use std::process::Command;
use std::time::Duration;

use mosaic_bench::workloads::soak;

use crate::process::{self, Outcome};
use crate::worker::Spec;

/// Drift of RSS over the steady phase, end against 25%, at most this.
pub const DRIFT_TARGET: f64 = 0.05;
/// RSS after the drop over the live set after it, below this.
pub const AFTER_DROP_TARGET: f64 = 1.5;

/// The figures of one repetition.
struct Row {
    live_mb: f64,
    rss_25_mb: f64,
    rss_steady_mb: f64,
    drift: f64,
    rss_drop_mb: f64,
    x_live: f64,
    gcs: f64,
    sweep_max_ms: f64,
    sweep_p99_ms: f64,
}

impl Row {
    fn from(o: &Outcome) -> Option<Row> {
        let mb = |k: &str| o.get(k).map(|v| v / 1024.0);
        let live_mb = o.get("live_bytes")? / (1 << 20) as f64;
        let after_mb = o.get("live_bytes_after_drop")? / (1 << 20) as f64;
        let (rss_25_mb, rss_steady_mb, rss_drop_mb) = (
            mb("rss_25_kb")?,
            mb("rss_steady_end_kb")?,
            mb("rss_drop_end_kb")?,
        );
        Some(Row {
            live_mb,
            rss_25_mb,
            rss_steady_mb,
            drift: rss_steady_mb / rss_25_mb - 1.0,
            rss_drop_mb,
            x_live: rss_drop_mb / after_mb,
            gcs: o.get("collections")?,
            sweep_max_ms: o.get("sweep_step_max_us")? / 1e3,
            sweep_p99_ms: o.get("sweep_step_p99_us")? / 1e3,
        })
    }

    fn verdict(&self) -> String {
        let ok = |b: bool| if b { "ok" } else { "FAIL" };
        format!(
            "drift {} drop {}",
            ok(self.drift.abs() <= DRIFT_TARGET),
            ok(self.x_live < AFTER_DROP_TARGET)
        )
    }
}

/// Runs `reps` soaks of `steady_s` + `drop_s` seconds and prints their
/// table; false if a run failed or missed a target.
pub fn run(reps: usize, steady_s: f64, drop_s: f64, timeout: Duration) -> bool {
    let params = soak::Params::new(steady_s, drop_s);
    let spec = serde_json::to_string(&Spec::Soak { params }).expect("spec");
    let exe = std::env::current_exe().expect("own executable");
    println!(
        "== soak: Mosaic, {} threads × {} slots × {} objects of 16–512 B; \
         steady {steady_s} s, then {} slots each for {drop_s} s ==",
        params.threads,
        params.slots,
        params.nodes,
        params.kept()
    );
    println!(
        "{:>3} {:>8} {:>9} {:>11} {:>8} {:>10} {:>11} {:>6} {:>10} {:>10}  verdict",
        "rep",
        "live MB",
        "RSS@25%",
        "RSS steady",
        "drift %",
        "RSS drop",
        "×live drop",
        "GCs",
        "sweep max",
        "sweep p99"
    );
    let mut ok = true;
    for rep in 1..=reps {
        eprintln!("soak rep {rep}/{reps} ({} s) ...", steady_s + drop_s);
        let mut cmd = Command::new(&exe);
        cmd.arg("--worker").arg(&spec);
        let o = process::run(&mut cmd, timeout);
        if let Some(e) = &o.error {
            println!("{rep:>3} error: {e}");
            ok = false;
            continue;
        }
        let Some(r) = Row::from(&o) else {
            println!("{rep:>3} incomplete result: {:?}", o.result);
            ok = false;
            continue;
        };
        let check = if o.check() == Some(1) {
            ""
        } else {
            ok = false;
            " WRONG CHECK (kept lists damaged)"
        };
        ok &= r.drift.abs() <= DRIFT_TARGET && r.x_live < AFTER_DROP_TARGET;
        println!(
            "{rep:>3} {:>8.1} {:>9.1} {:>11.1} {:>8.1} {:>10.1} {:>11.2} {:>6.0} {:>10.2} {:>10.3}  {}{check}",
            r.live_mb,
            r.rss_25_mb,
            r.rss_steady_mb,
            r.drift * 100.0,
            r.rss_drop_mb,
            r.x_live,
            r.gcs,
            r.sweep_max_ms,
            r.sweep_p99_ms,
            r.verdict()
        );
        if let (Some(base), Some(marked)) = (o.get("base_kb"), o.get("marked_bytes_steady")) {
            println!(
                "    process before the heap {:.1} MB; marked by the last steady GC {:.1} MB; \
                 live after drop {:.1} MB; peak RSS {:.1} MB",
                base / 1024.0,
                marked / (1 << 20) as f64,
                o.get("live_bytes_after_drop").unwrap_or(0.0) / (1 << 20) as f64,
                o.peak_rss_mb
            );
        }
    }
    println!(
        "  RSS columns: VmRSS (sampled every {} ms) minus VmRSS before the heap, MB; \
         drift = steady end / RSS@25% − 1 (target: within ±{:.0}%); ×live drop = RSS drop / live \
         after the drop (target < {AFTER_DROP_TARGET}×); sweep max/p99: lazy sweep steps, ms",
        soak::SAMPLE_EVERY.as_millis(),
        DRIFT_TARGET * 100.0
    );
    ok
}
