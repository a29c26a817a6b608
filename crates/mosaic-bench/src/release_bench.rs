//! `--only release`: seed 004's experiment, the release phase with the
//! lock-free page store against the mutex-protected free list, at 1, 2, 4
//! and 8 GC workers (`workloads/release.rs` says what one run does).
//!
//! Mosaic against itself, so it runs in this process: one heap per
//! configuration and repetition, configurations in a rotating order (each
//! repetition starts at a different one, and lock-free and mutex
//! alternate), the median of each run's rounds taken per run, then the
//! median and spread over repetitions. Prints a table, writes
//! `release.json` and `release.png` (release time against workers, one line
//! per store) to the output directory.

use std::path::Path;

use mosaic::PageResourceKind;
use mosaic_bench::workloads::release::{self, ReleaseRun};
use plotters::prelude::*;

const WORKERS: [usize; 4] = [1, 2, 4, 8];
const STORES: [PageResourceKind; 2] = [PageResourceKind::LockFree, PageResourceKind::Mutex];
/// Pages allocated (and mostly released) per collection: 512 MiB quick.
const PAGES: usize = 8192;
const ROUNDS: usize = 5;

/// The median of a non-empty list (every configuration runs at least once).
fn median(v: Vec<f64>) -> f64 {
    crate::report::median(v).expect("at least one value")
}

/// One configuration over every repetition: the per-run medians.
struct Row {
    store: PageResourceKind,
    workers: usize,
    runs: Vec<f64>,
    pages: u64,
}

pub fn run(reps: usize, full: bool, out: &Path) -> Result<(), String> {
    let pages = if full { 2 * PAGES } else { PAGES };
    let mut configs: Vec<(PageResourceKind, usize)> = Vec::new();
    for w in WORKERS {
        for s in STORES {
            configs.push((s, w));
        }
    }
    let mut rows: Vec<Row> = configs
        .iter()
        .map(|&(store, workers)| Row {
            store,
            workers,
            runs: Vec::new(),
            pages: 0,
        })
        .collect();
    let mut raw: Vec<ReleaseRun> = Vec::new();
    for rep in 0..reps {
        for k in 0..configs.len() {
            let i = (k + rep) % configs.len();
            let (store, workers) = configs[i];
            eprintln!("release: rep {rep}, {store:?}, {workers} workers");
            let r = release::run(store, workers, pages, ROUNDS);
            rows[i].runs.push(median(r.release_us.clone()));
            rows[i].pages = median(r.pages_released.iter().map(|&p| p as f64).collect()) as u64;
            raw.push(r);
        }
    }
    println!(
        "\n## release: {pages} pages of 32-byte objects per collection, 15 in 16 empty; release-phase time, median of {ROUNDS} collections per run, {reps} runs"
    );
    println!(
        "| workers | store | pages released | release ms (median) | min–max | mutex / lock-free |"
    );
    println!("|---|---|---|---|---|---|");
    for pair in rows.chunks(2) {
        let lf = median(pair[0].runs.clone());
        for r in pair {
            let m = median(r.runs.clone());
            let (lo, hi) = crate::report::min_max(&r.runs);
            let (lo, hi) = (lo.expect("a run"), hi.expect("a run"));
            println!(
                "| {} | {:?} | {} | {:.3} | {:.3}–{:.3} | {} |",
                r.workers,
                r.store,
                r.pages,
                m / 1e3,
                lo / 1e3,
                hi / 1e3,
                if r.store == PageResourceKind::Mutex {
                    format!("{:.2}x", m / lf)
                } else {
                    String::new()
                }
            );
        }
    }
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    let json = serde_json::json!({ "pages": pages, "rounds": ROUNDS, "reps": reps, "runs": raw });
    std::fs::write(
        out.join("release.json"),
        serde_json::to_string_pretty(&json).expect("json"),
    )
    .map_err(|e| e.to_string())?;
    chart(&out.join("release.png"), &rows)
}

fn chart(path: &Path, rows: &[Row]) -> Result<(), String> {
    crate::report::load_font()?;
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let ymax = rows
        .iter()
        .map(|r| median(r.runs.clone()) / 1e3)
        .fold(0f64, f64::max)
        * 1.15;
    let root = BitMapBackend::new(path, (900, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut c = ChartBuilder::on(&root)
        .caption(
            "Release phase: lock-free vs mutex page store (lower is better)",
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .build_cartesian_2d(0u32..9u32, 0f64..ymax)
        .map_err(|x| e(&x))?;
    c.configure_mesh()
        .x_desc("GC workers")
        .y_desc("release phase, ms (median)")
        .x_labels(10)
        .draw()
        .map_err(|x| e(&x))?;
    for (store, colour) in [(STORES[0], BLUE), (STORES[1], RED)] {
        let pts: Vec<(u32, f64)> = rows
            .iter()
            .filter(|r| r.store == store)
            .map(|r| (r.workers as u32, median(r.runs.clone()) / 1e3))
            .collect();
        c.draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
            .map_err(|x| e(&x))?
            .label(format!("{store:?}"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour));
        c.draw_series(pts.iter().map(|&p| Circle::new(p, 4, colour.filled())))
            .map_err(|x| e(&x))?;
    }
    c.configure_series_labels()
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))
}
