//! `--only finalizers` and `--only ephemerons`: what a finalizer and a
//! weak-keyed table entry cost, Mosaic against the Boehm collector and the
//! JVM (G1).
//!
//! - finalizers: N list nodes held by a root; a timed loop registers one
//!   finalizer per node (Mosaic: `register_finalizer(.., Unordered, ..)`
//!   with a closure that captures nothing; Boehm:
//!   `GC_register_finalizer_no_order`; Java: one `Cleaner.register` per
//!   node with a shared action); then the list is dropped, collected, and
//!   every finalizer must run.
//! - ephemerons: a weak-keyed table of N entries, key → value, both fresh
//!   16-byte objects (Mosaic: ephemerons in a rooted array; Boehm: entry
//!   records with a hidden key registered as a disappearing link; Java:
//!   `WeakHashMap`); every 10th key kept, the others dropped, a collection:
//!   exactly the dropped keys' entries must be cleared and every kept one
//!   intact.
//!
//! The workloads: `workloads/refs.rs` (Mosaic's worker),
//! `peers/c/{finalizers,ephemerons}.c`, `peers/java/{Finalizers,
//! Ephemerons}.java`. Each run is a process of its own; repetitions
//! alternate the order of the runners; medians with min–max over the runs
//! whose check passed (a failed run is reported, not timed).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use mosaic_bench::workloads::refs::DEFAULT_N;

use crate::peers::{self, Built};
use crate::process::{self, Outcome};
use crate::report::{median, min_max};
use crate::worker::Spec;

/// One of the two comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    Finalizers,
    Ephemerons,
}

impl Comparison {
    /// The comparison `--only NAME` names, if any.
    pub fn from_name(name: &str) -> Option<Comparison> {
        match name {
            "finalizers" => Some(Comparison::Finalizers),
            "ephemerons" => Some(Comparison::Ephemerons),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Comparison::Finalizers => "finalizers",
            Comparison::Ephemerons => "ephemerons",
        }
    }

    fn spec(self, n: usize) -> Spec {
        match self {
            Comparison::Finalizers => Spec::Finalizers { n },
            Comparison::Ephemerons => Spec::Ephemerons { n },
        }
    }

    fn java_class(self) -> &'static str {
        match self {
            Comparison::Finalizers => "Finalizers",
            Comparison::Ephemerons => "Ephemerons",
        }
    }

    /// The memory figure per item of a run: bytes per finalizer, or bytes
    /// per entry beyond its key and value. Java's is the heap in use (its
    /// RSS follows the heap's growth, not one loop).
    fn bytes(self, o: &Outcome) -> Option<f64> {
        match self {
            Comparison::Finalizers => o
                .get("heap_bytes_per_item")
                .or_else(|| o.get("rss_bytes_per_item")),
            Comparison::Ephemerons => Some(
                o.get("heap_bytes_per_entry")
                    .or_else(|| o.get("rss_bytes_per_entry"))?
                    - o.get("key_value_bytes")?,
            ),
        }
    }

    /// A passed run's check, in words.
    fn check_text(self, o: &Outcome) -> String {
        let g = |k: &str| o.get(k).map_or("?".into(), |v| format!("{v:.0}"));
        match self {
            Comparison::Finalizers => format!("{}/{} ran", g("ran"), g("n")),
            Comparison::Ephemerons => format!(
                "{}/{} kept intact, {} cleared",
                g("kept_ok"),
                g("kept"),
                g("cleared_ok")
            ),
        }
    }
}

/// A runner: its name and command, or why it is skipped.
struct Runner {
    name: &'static str,
    cmd: Result<Command, String>,
}

fn runners(which: Comparison, n: usize, build_dir: &Path, jvm_warmup: u32) -> Vec<Runner> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers");
    let mut mosaic = Command::new(std::env::current_exe().expect("own executable"));
    let spec = serde_json::to_string(&which.spec(n)).expect("spec");
    mosaic.arg("--worker").arg(spec);
    let boehm: Built = peers::cc(
        &src.join("c").join(format!("{}.c", which.name())),
        &build_dir.join(format!("boehm_{}", which.name())),
        &["-lgc", "-lpthread"],
        Some(("gc.h", "libgc-dev")),
    );
    let classes = [which.java_class(), "MemoryProbe"];
    let java = peers::javac(&src, &build_dir.join("java"), &classes).map(|dir| {
        let mut c = Command::new("java");
        c.arg("-XX:+UseG1GC")
            .arg(format!("-Dmosaic.warmup={jvm_warmup}"))
            .arg("-cp")
            .arg(dir)
            .arg(which.java_class())
            .arg(n.to_string());
        c
    });
    vec![
        Runner {
            name: "mosaic",
            cmd: Ok(mosaic),
        },
        Runner {
            name: "boehm",
            cmd: boehm.map(|exe| {
                let mut c = Command::new(exe);
                c.arg(n.to_string());
                c
            }),
        },
        Runner {
            name: "java-g1",
            cmd: java,
        },
    ]
}

/// Why a run does not count: its error, or its failed check.
fn failure(which: Comparison, o: &Outcome) -> Option<String> {
    if o.check() == Some(1) && o.error.is_none() {
        return None;
    }
    if o.check().is_some() {
        return Some(format!("check failed: {}", which.check_text(o)));
    }
    Some(
        o.error
            .clone()
            .unwrap_or_else(|| "no check in the result".into()),
    )
}

/// `median (min–max)` of `v` with `digits` decimals; `-` if empty.
fn cell(v: &[f64], digits: usize) -> String {
    match (median(v.to_vec()), min_max(v)) {
        (Some(m), (Some(lo), Some(hi))) => {
            format!("{m:.digits$} ({lo:.digits$}–{hi:.digits$})")
        }
        _ => "-".into(),
    }
}

/// Prints a markdown table, columns padded to their widest cell: the
/// first and last (names, words) aligned left, the others (figures) right.
fn markdown(header: &[&str], rows: &[Vec<String>]) {
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain(std::iter::once(header[i].chars().count()))
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let left = |i: usize| i == 0 || i + 1 == widths.len();
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, &w))| {
                let pad = " ".repeat(w - c.chars().count());
                if left(i) {
                    format!("{c}{pad}")
                } else {
                    format!("{pad}{c}")
                }
            })
            .collect();
        println!("| {} |", padded.join(" | "));
    };
    line(header.iter().map(|h| h.to_string()).collect());
    // Each cell is padded with a space on either side: its rule is w + 2
    // wide, ending with ':' when right-aligned.
    let rule: Vec<String> = widths
        .iter()
        .enumerate()
        .map(|(i, &w)| match left(i) {
            true => "-".repeat(w + 2),
            false => format!("{}:", "-".repeat(w + 1)),
        })
        .collect();
    println!("|{}|", rule.join("|"));
    for r in rows {
        line(r.clone());
    }
}

/// Runs one comparison (`reps` alternating repetitions, N =
/// [`DEFAULT_N`]) and prints its table; whether every run passed its check.
pub fn run(
    which: Comparison,
    reps: usize,
    build_dir: &Path,
    jvm_warmup: u32,
    timeout: Duration,
) -> bool {
    let n = DEFAULT_N;
    let mut rs = runners(which, n, build_dir, jvm_warmup);
    for r in &rs {
        if let Err(e) = &r.cmd {
            eprintln!("skipping {} in {}: {e}", r.name, which.name());
        }
    }
    let mut runs: Vec<Vec<Outcome>> = vec![Vec::new(); rs.len()];
    let mut failed: Vec<Vec<String>> = vec![Vec::new(); rs.len()];
    for rep in 0..reps {
        for k in 0..rs.len() {
            let i = (k + rep) % rs.len();
            let name = rs[i].name;
            let Ok(cmd) = &mut rs[i].cmd else { continue };
            eprintln!("{} rep {}/{reps}: {name}", which.name(), rep + 1);
            let o = process::run(cmd, timeout);
            match failure(which, &o) {
                Some(why) => {
                    eprintln!("  {name} failed: {why}");
                    failed[i].push(why);
                }
                None => runs[i].push(o),
            }
        }
    }
    let (title, per, bytes, header) = match which {
        Comparison::Finalizers => (
            "finalizers: one finalizer per list node",
            "register ns/item",
            "B/item",
            "finalizers",
        ),
        Comparison::Ephemerons => (
            "ephemerons: a weak-keyed table",
            "ns/insert",
            "B/entry beyond key+value",
            "entries",
        ),
    };
    println!(
        "== {title}, N = {n} {header} (median (min–max) of {reps} run(s), runners alternating) =="
    );
    println!();
    let mut rows = Vec::new();
    for (i, r) in rs.iter().enumerate() {
        if let Err(e) = &r.cmd {
            rows.push(vec![
                r.name.to_string(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                format!("skipped: {e}"),
            ]);
            continue;
        }
        let o = &runs[i];
        let col =
            |f: &dyn Fn(&Outcome) -> Option<f64>| -> Vec<f64> { o.iter().filter_map(f).collect() };
        let per_item = match which {
            Comparison::Finalizers => col(&|o| o.get("ns_per_register")),
            Comparison::Ephemerons => col(&|o| o.get("ns_per_insert")),
        };
        let mut check = match o.first() {
            Some(first) => format!("ok {}/{reps}: {}", o.len(), which.check_text(first)),
            None => format!("FAILED {}/{reps}", failed[i].len()),
        };
        if let Some(why) = failed[i].first() {
            if !o.is_empty() {
                check += &format!("; FAILED {}/{reps}", failed[i].len());
            }
            check += &format!(": {why}");
        }
        rows.push(vec![
            r.name.to_string(),
            cell(&per_item, 1),
            cell(&col(&|o| which.bytes(o)), 1),
            cell(&col(&|o| o.inner_ms), 1),
            cell(&col(&|o| Some(o.peak_rss_mb)), 1),
            check,
        ]);
    }
    markdown(
        &["runner", per, bytes, "total ms", "peak MB", "check"],
        &rows,
    );
    println!();
    let java_rss = |key: &str| {
        let i = rs.iter().position(|r| r.name == "java-g1")?;
        median(runs[i].iter().filter_map(|o| o.get(key)).collect())
    };
    for line in legend(which, jvm_warmup, java_rss) {
        println!("  {line}");
    }
    println!();
    failed.iter().all(Vec::is_empty)
}

/// The lines under a table: what each column is, per runtime where they
/// differ.
fn legend(
    which: Comparison,
    jvm_warmup: u32,
    java_rss: impl Fn(&str) -> Option<f64>,
) -> Vec<String> {
    let java_rss = |key: &str| java_rss(key).map_or("-".into(), |v| format!("{v:.1}"));
    let java_runs = match jvm_warmup {
        0 => "one cold run per JVM".to_string(),
        w => format!("the last of {} runs in one JVM (--jvm-warmup {w})", w + 1),
    };
    let mut lines = match which {
        Comparison::Finalizers => vec![
            "register ns/item: the registration loop alone (in-process, monotonic clock), per finalizer: mosaic register_finalizer(Unordered, a closure capturing nothing), boehm GC_register_finalizer_no_order, java Cleaner.register with one shared Runnable".to_string(),
            format!("B/item: VmRSS after the registration loop minus before it, per finalizer (mosaic, boehm); java-g1: the heap in use (MemoryMXBean, each reading after a System.gc()) after the loop minus before it, as its RSS follows the heap's growth rather than one loop (its VmRSS delta: {} B/item, median)", java_rss("rss_bytes_per_item")),
            "total ms: the whole body: allocating the N nodes (16 bytes: next, id; Java's Node is 24 bytes with its header), registering, dropping the list, collecting and running every finalizer (boehm: GC_gcollect + GC_invoke_finalizers; java: System.gc() and waiting for the Cleaner's thread)".to_string(),
            "check: the finalizers ran N times in all (ran == N), per passed run; a failed run is listed and not in the medians".to_string(),
        ],
        Comparison::Ephemerons => vec![
            "ns/insert: the insertion loop alone (in-process, monotonic clock), per entry: allocate the key and the value, make the entry (mosaic alloc_ephemeron into a rooted array; boehm a GC_MALLOC'd record with the key hidden and GC_general_register_disappearing_link, the value held strongly; java WeakHashMap.put), every key also stored in a strong array".to_string(),
            format!("B/entry beyond key+value: VmRSS after the insertion loop minus before it, per entry, minus 32 bytes: the key and the value as each runtime allocates them (mosaic: two 16-byte objects, no header; boehm: two GC_MALLOC_ATOMIC(16), interior pointers off, so no extra byte; java: two 16-byte objects, 12-byte header and an int id); what is left is the table: its array slot, the entry, the collector's tables. java-g1: the heap in use (MemoryMXBean, after a System.gc()) instead of VmRSS, as its RSS follows the heap's growth rather than one loop (its VmRSS delta, key and value included: {} B/entry, median)", java_rss("rss_bytes_per_entry")),
            "total ms: the whole body: allocating the strong key array, filling the table, keeping every 10th key in a new array, dropping the first, one collection (boehm GC_gcollect; java: System.gc() until map.size() == N/10, every 100 ms, at most 10 s)".to_string(),
            "check: every dropped key's entry cleared (mosaic ephemeron_key and ephemeron_value null; boehm the link NULL; java: map.size() == N/10) and every kept key still maps to the value with its id, per passed run; a failed run is listed and not in the medians".to_string(),
        ],
    };
    lines.push(format!("peak MB: ru_maxrss of the process. java-g1: -XX:+UseG1GC, default heap, {java_runs}; the System.gc() calls of the memory readings are not in its total"));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds both C peers as the suite does and runs them on a small
    /// table: each must pass its own check.
    #[test]
    fn the_c_peers_pass_their_checks() {
        let dir = std::env::temp_dir().join(format!("mosaic-bench-refs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for which in [Comparison::Finalizers, Comparison::Ephemerons] {
            let rs = runners(which, 20_001, &dir, 0);
            let boehm = rs.into_iter().find(|r| r.name == "boehm").unwrap();
            let mut cmd = match boehm.cmd {
                Ok(c) => c,
                // A missing compiler or library is a skip with its package.
                Err(e) => return assert!(e.contains("package"), "{e}"),
            };
            let o = process::run(&mut cmd, Duration::from_secs(60));
            assert_eq!(failure(which, &o), None, "{which:?}: {o:?}");
            assert_eq!(o.get("n"), Some(20_001.0));
            assert!(o.inner_ms.is_some(), "{o:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_check_is_a_failure_that_names_it() {
        let mut o = Outcome {
            result: serde_json::from_str(r#"{"check": 0, "n": 10, "ran": 9}"#).unwrap(),
            ..Outcome::default()
        };
        let why = failure(Comparison::Finalizers, &o).unwrap();
        assert_eq!(why, "check failed: 9/10 ran");
        o.result = serde_json::from_str(r#"{"check": 1, "n": 10, "ran": 10}"#).unwrap();
        assert_eq!(failure(Comparison::Finalizers, &o), None);
        o.error = Some("killed after 1s".into());
        assert!(failure(Comparison::Finalizers, &o).is_some());
        assert_eq!(cell(&[3.0, 1.0, 2.0], 1), "2.0 (1.0–3.0)");
        assert_eq!(cell(&[], 1), "-");
    }
}
