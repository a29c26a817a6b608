//! `--only footprint`: what an almost empty heap costs in resident memory,
//! Mosaic against the Boehm collector.
//!
//! Each run is a fresh process that reads its own VmRSS before the heap
//! exists, after creating it (Mosaic: `Heap::new`; Boehm: `GC_INIT`), after
//! one 16-byte allocation (Mosaic: and its mutator), and after one
//! collection. The figures are those readings minus the first, so the
//! programs' own sizes (Rust's runtime and this binary, a C program) drop
//! out. Mosaic runs with its defaults and again with one GC worker, which
//! shows what the worker threads cost. Runs alternate; medians with
//! min–max over the repetitions.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::peers;
use crate::process::{self, Outcome};
use crate::report::{median, min_max};
use crate::worker::Spec;

/// The steps each run reports, after `base_kb`.
const STEPS: [(&str, &str); 3] = [
    ("heap_kb", "heap"),
    ("alloc_kb", "+1 alloc"),
    ("collect_kb", "+1 GC"),
];

fn runners(peer_exe: Option<PathBuf>) -> Vec<(&'static str, Command)> {
    let exe = std::env::current_exe().expect("own executable");
    let spec = serde_json::to_string(&Spec::Footprint).expect("spec");
    let mosaic = |threads: Option<&str>| {
        let mut c = Command::new(&exe);
        c.arg("--worker").arg(&spec);
        if let Some(t) = threads {
            c.env("MOSAIC_GC_THREADS", t);
        }
        c
    };
    let mut v = vec![
        ("mosaic", mosaic(None)),
        ("mosaic-1-worker", mosaic(Some("1"))),
    ];
    if let Some(p) = peer_exe {
        v.push(("boehm", Command::new(p)));
    }
    v
}

/// Runs the footprint comparison and prints its table.
pub fn run(reps: usize, build_dir: &Path, timeout: Duration) -> Result<(), String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/c/footprint.c");
    let boehm = peers::cc(
        &src,
        &build_dir.join("boehm_footprint"),
        &["-lgc", "-lpthread"],
        Some(("gc.h", "libgc-dev")),
    );
    if let Err(e) = &boehm {
        eprintln!("skipping boehm: {e}");
    }
    let mut rs = runners(boehm.ok());
    let mut runs: Vec<Vec<Outcome>> = vec![Vec::new(); rs.len()];
    for rep in 0..reps {
        for k in 0..rs.len() {
            let i = (k + rep) % rs.len();
            let o = process::run(&mut rs[i].1, timeout);
            if let Some(e) = &o.error {
                return Err(format!("{}: {e}", rs[i].0));
            }
            if o.check() != Some(1) {
                return Err(format!("{}: wrong result {:?}", rs[i].0, o.result));
            }
            runs[i].push(o);
        }
    }
    println!("== footprint: resident memory above the process before the heap, MB (median, min–max of {reps}) ==");
    print!("{:<18} {:>10}", "", "process");
    for (_, name) in STEPS {
        print!(" {:>20}", name);
    }
    println!();
    for (i, (name, _)) in rs.iter().enumerate() {
        let base: Vec<f64> = runs[i].iter().filter_map(|o| o.get("base_kb")).collect();
        print!(
            "{name:<18} {:>10.1}",
            median(base.clone()).unwrap_or(0.0) / 1024.0
        );
        for (key, _) in STEPS {
            let v: Vec<f64> = runs[i]
                .iter()
                .filter_map(|o| Some((o.get(key)? - o.get("base_kb")?) / 1024.0))
                .collect();
            let (lo, hi) = min_max(&v);
            let cell = format!(
                "{:.2} ({:.2}–{:.2})",
                median(v).unwrap_or(0.0),
                lo.unwrap_or(0.0),
                hi.unwrap_or(0.0)
            );
            print!(" {cell:>20}");
        }
        println!();
    }
    println!("  process: VmRSS before the heap; other columns: VmRSS at that step minus it");
    Ok(())
}
