//! The pause timeline (`Config::trace`, `MOSAIC_TRACE`): the file is valid
//! Chrome trace-event JSON with one track per thread, and every pause shows
//! its phases on the threads that ran them.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::*;
use mosaic::Config;
use serde_json::Value;

/// Spans of one name: (track, start µs, duration µs).
type Spans = BTreeMap<String, Vec<(u64, f64, f64)>>;

fn read(path: &std::path::Path) -> (BTreeMap<u64, String>, Spans) {
    let text = std::fs::read_to_string(path).expect("the trace was written");
    let json: Value = serde_json::from_str(&text).expect("the trace parses as JSON");
    let mut names = BTreeMap::new();
    let mut spans = Spans::new();
    for e in json["traceEvents"].as_array().expect("traceEvents") {
        match e["ph"].as_str().unwrap() {
            "M" if e["name"] == "thread_name" => {
                names.insert(
                    e["tid"].as_u64().unwrap(),
                    e["args"]["name"].as_str().unwrap().to_owned(),
                );
            }
            "M" => assert_eq!(e["args"]["dropped_spans"], 0),
            "X" => spans
                .entry(e["name"].as_str().unwrap().to_owned())
                .or_default()
                .push((
                    e["tid"].as_u64().unwrap(),
                    e["ts"].as_f64().unwrap(),
                    e["dur"].as_f64().unwrap(),
                )),
            other => panic!("unexpected phase {other}"),
        }
    }
    (names, spans)
}

#[test]
fn the_trace_shows_every_phase_of_every_pause_on_its_thread() {
    let path = std::env::temp_dir().join(format!("mosaic-trace-{}.json", std::process::id()));
    let collections = std::thread::Builder::new()
        .name("the-mutator".into())
        .spawn({
            let path = path.clone();
            move || {
                let heap = heap(Config {
                    gc_threads: 2,
                    trace: Some(path),
                    ..small_config()
                });
                let mut m = heap.mutator().unwrap();
                let keep = m.empty_root();
                for i in 0..300_000u64 {
                    let p = new_pair(&mut m, i, keep.get(), None).unwrap();
                    if i % 100 == 0 {
                        keep.set(Some(p));
                    }
                }
                m.collect();
                // Allocation after the pause sweeps the partly live pages.
                for i in 0..10_000u64 {
                    new_pair(&mut m, i, None, None).unwrap();
                }
                heap.stats().collections
            }
        })
        .unwrap()
        .join()
        .unwrap();
    let (names, spans) = read(&path);
    std::fs::remove_file(&path).unwrap();
    let track = |name: &str| {
        names
            .iter()
            .find(|(_, n)| n.as_str() == name)
            .map(|(&t, _)| t)
            .unwrap_or_else(|| panic!("no track named {name}: {names:?}"))
    };
    let (mutator, worker) = (track("the-mutator"), track("mosaic-gc-1"));
    let on = |span: &str, t: u64| {
        spans
            .get(span)
            .map_or(0, |v| v.iter().filter(|s| s.0 == t).count())
    };
    let pauses = &spans["pause"];
    assert_eq!(pauses.len() as u64, collections);
    assert!(collections >= 2, "{collections}");
    for phase in ["stop", "pause", "resume"] {
        assert_eq!(on(phase, mutator) as u64, collections, "{phase}");
    }
    // The collecting thread runs every phase; the pool's thread each one
    // it comes to in time (a late one skips the phase), so at most once a
    // pause, and in some pause at least.
    for phase in ["roots", "mark", "release"] {
        assert_eq!(
            on(phase, mutator) as u64,
            collections,
            "{phase} on worker 0"
        );
        let late = on(phase, worker) as u64;
        assert!(
            late <= collections && late > 0,
            "{phase} on worker 1: {late}"
        );
    }
    assert_eq!(on("weak", mutator) as u64, collections);
    assert!(on("lazy sweep", mutator) > 0, "{:?}", spans.keys());
    // Every worker's phases lie inside a pause.
    for phase in ["roots", "mark", "weak", "release"] {
        for &(t, ts, dur) in &spans[phase] {
            assert!(
                pauses
                    .iter()
                    .any(|&(_, p, pd)| p <= ts && ts + dur <= p + pd + 0.002),
                "{phase} on track {t} at {ts} outside every pause"
            );
        }
    }
    // Lazy sweeping happens outside pauses.
    for &(_, ts, _) in &spans["lazy sweep"] {
        assert!(!pauses.iter().any(|&(_, p, pd)| p < ts && ts < p + pd));
    }
    let tracks: BTreeSet<u64> = spans.values().flatten().map(|s| s.0).collect();
    assert!(
        tracks.iter().all(|t| names.contains_key(t)),
        "every track is named"
    );
}

#[test]
fn an_unwritable_trace_path_is_reported_not_fatal() {
    let heap = heap(Config {
        trace: Some("/nonexistent-dir/trace.json".into()),
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    m.collect();
    assert_eq!(heap.stats().collections, 1);
    drop(m);
    drop(heap);
}

#[test]
fn write_trace_writes_the_timeline_while_the_heap_lives() {
    let path = std::env::temp_dir().join(format!("mosaic-trace-now-{}.json", std::process::id()));
    let h = heap(Config {
        trace: Some(path.clone()),
        ..small_config()
    });
    let mut m = h.mutator().unwrap();
    for _ in 0..3 {
        m.collect();
    }
    assert!(h.write_trace().unwrap(), "a timeline was asked for");
    let (_, spans) = read(&path);
    assert_eq!(
        spans["pause"].len(),
        3,
        "one pause span per collection so far"
    );
    drop(m);
    drop(h);
    let _ = std::fs::remove_file(&path);
    // Without a timeline there is nothing to write.
    let h = heap(small_config());
    assert!(!h.write_trace().unwrap());
}
