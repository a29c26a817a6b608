//! Medians, tables with ratios, the JSON file and the charts.

use std::path::Path;

use plotters::prelude::*;
use serde_json::json;

use crate::cases::{Case, Metric};
use crate::process::Outcome;

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
    pub runs: usize,
    pub failed: Option<String>,
    pub wrong_check: bool,
    /// Median of the case's metric (seconds, or ns per allocation), and its spread.
    pub time: Option<f64>,
    pub time_min: Option<f64>,
    pub time_max: Option<f64>,
    pub peak_rss_mb: Option<f64>,
    pub gc_ms: Option<f64>,
    pub pause_p50_us: Option<f64>,
    pub pause_p99_us: Option<f64>,
    pub pause_max_us: Option<f64>,
    pub collections: Option<f64>,
    /// Time and RSS divided by the case's baseline runner's.
    pub time_ratio: Option<f64>,
    pub rss_ratio: Option<f64>,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
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
        Metric::Wall => Some(o.wall_s),
        Metric::Inner => o.inner_ms.map(|ms| ms / 1e3),
        Metric::NsPerAlloc => o.get("ns_per_alloc"),
    }
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
            let wrong = case
                .expected
                .is_some_and(|e| ok.iter().any(|o| o.check() != Some(e)));
            out.push(Summary {
                case: ci,
                peer: r.peer.clone(),
                runs: mine.len(),
                failed: r
                    .skip
                    .clone()
                    .or_else(|| mine.iter().find_map(|o| o.error.clone())),
                wrong_check: wrong,
                time: median(times.clone()),
                time_min: times.iter().copied().reduce(f64::min),
                time_max: times.iter().copied().reduce(f64::max),
                peak_rss_mb: col(&|o| Some(o.peak_rss_mb)),
                gc_ms: col(&|o| o.get("gc_ms")),
                pause_p50_us: col(&|o| o.get("pause_p50_us")),
                pause_p99_us: col(&|o| o.get("pause_p99_us")),
                pause_max_us: col(&|o| o.get("pause_max_us")),
                collections: col(&|o| o.get("collections")),
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

pub fn print(cases: &[Case], summary: &[Summary], reps: usize) {
    println!("Mosaic benchmark suite: {reps} repetition(s), medians; ratios are against the first-named baseline of each table.\n");
    for (ci, case) in cases.iter().enumerate() {
        let unit = match case.metric {
            Metric::NsPerAlloc => "ns/alloc",
            _ => "time s",
        };
        println!(
            "== {} — {} (baseline: {}) ==",
            case.workload, case.variant, case.baseline
        );
        println!(
            "{:<16} {:>10} {:>8} {:>9} {:>10} {:>8} {:>9} {:>22} {:>6}",
            "peer",
            unit,
            "spread",
            "x base",
            "peak MB",
            "x base",
            "GC ms",
            "pause p50/p99/max ms",
            "GCs"
        );
        for s in summary.iter().filter(|s| s.case == ci) {
            if let Some(why) = &s.failed {
                println!("{:<16} {why}", s.peer);
                continue;
            }
            let spread = match (s.time_min, s.time_max, s.time) {
                (Some(a), Some(b), Some(m)) if s.runs > 1 && m > 0.0 => {
                    format!("±{:.0}%", (b - a) / m * 50.0)
                }
                _ => String::new(),
            };
            let digits = if case.metric == Metric::NsPerAlloc {
                2
            } else {
                3
            };
            println!(
                "{:<16} {:>10} {:>8} {:>9} {:>10} {:>8} {:>9} {:>22} {:>6}{}",
                s.peer,
                f(s.time, digits),
                spread,
                f(s.time_ratio, 2),
                f(s.peak_rss_mb, 1),
                f(s.rss_ratio, 2),
                f(s.gc_ms, 1),
                pauses(s),
                f(s.collections, 0),
                if s.wrong_check { "  WRONG RESULT" } else { "" }
            );
        }
        println!();
    }
    nqueens_table(cases, summary);
}

/// The seed's table: time relative to OCaml per memory manager and n.
fn nqueens_table(cases: &[Case], summary: &[Summary]) {
    let qs: Vec<usize> = (0..cases.len())
        .filter(|&i| cases[i].workload == "nqueens")
        .collect();
    if qs.is_empty() {
        return;
    }
    println!("== n-queens: time relative to OCaml (seed 003 measured Boehm 1.4-1.7, malloc 2.2-3.1, free 1.9-2.3, bump 1.4-1.7, its region prototype 1.04-1.20) ==");
    print!("{:<10}", "");
    for &c in &qs {
        print!("{:>16}", cases[c].variant);
    }
    println!();
    for peer in ["boehm", "malloc", "free", "bump", "mosaic"] {
        print!("{peer:<10}");
        for &c in &qs {
            let s = summary.iter().find(|s| s.case == c && s.peer == peer);
            print!("{:>16}", f(s.and_then(|s| s.time_ratio), 2));
        }
        println!();
    }
    println!();
}

pub fn write_json(
    path: &Path,
    cases: &[Case],
    runs: &[Run],
    summary: &[Summary],
    full: bool,
    reps: usize,
) {
    let doc = json!({
        "mode": if full { "full" } else { "quick" },
        "repetitions": reps,
        "machine": {
            "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            "os": std::env::consts::OS,
            "arch": std::env::consts::ARCH,
        },
        "unix_time": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        "cases": cases.iter().map(|c| json!({
            "workload": c.workload, "variant": c.variant, "metric": c.metric, "baseline": c.baseline,
            "expected_check": c.expected,
            "runners": c.runners.iter().map(|r| json!({
                "peer": r.peer, "program": r.program, "args": r.args, "env": r.env, "skipped": r.skip,
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

fn load_font() -> Result<(), String> {
    let candidates = [
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/TTF/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    ];
    let bytes = candidates
        .iter()
        .find_map(|p| std::fs::read(p).ok())
        .ok_or(
            "no TrueType font found (package fonts-dejavu-core; run scripts/install-peers.sh)",
        )?;
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
        .map_err(|_| "unreadable font".to_string())
}

/// One PNG per workload: time relative to the baseline, a bar per runner,
/// grouped by parameter.
pub fn charts(dir: &Path, cases: &[Case], summary: &[Summary]) -> Result<Vec<String>, String> {
    load_font()?;
    let mut files = Vec::new();
    let mut workloads: Vec<&str> = cases.iter().map(|c| c.workload).collect();
    workloads.dedup();
    for w in workloads {
        let idx: Vec<usize> = (0..cases.len())
            .filter(|&i| cases[i].workload == w)
            .collect();
        let peers: Vec<String> = cases[idx[0]]
            .runners
            .iter()
            .map(|r| r.peer.clone())
            .collect();
        let value = |ci: usize, p: &str| {
            summary
                .iter()
                .find(|s| s.case == ci && s.peer == p)
                .and_then(|s| s.time_ratio)
        };
        let ymax = idx
            .iter()
            .flat_map(|&ci| peers.iter().filter_map(move |p| value(ci, p)))
            .fold(1.0f64, f64::max)
            * 1.15;
        let path = dir.join(format!("{w}.png"));
        let root = BitMapBackend::new(&path, (1000, 520)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let baseline = cases[idx[0]].baseline;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{w}: time relative to {baseline} (lower is better)"),
                ("sans-serif", 24),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..idx.len() as f64, 0f64..ymax)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc(format!("time / {baseline}"))
            .draw()
            .map_err(|e| e.to_string())?;
        // One label under the middle of each cluster of bars.
        for (k, &ci) in idx.iter().enumerate() {
            let label = &cases[ci].variant;
            let (px, py) = chart.backend_coord(&(k as f64 + 0.5, 0.0));
            let x = px - (label.len() as i32 * 7) / 2;
            root.draw(&Text::new(label.clone(), (x, py + 10), ("sans-serif", 15)))
                .map_err(|e| e.to_string())?;
        }
        let width = 0.8 / peers.len() as f64;
        for (pi, p) in peers.iter().enumerate() {
            let color = Palette99::pick(pi).to_rgba();
            let bars: Vec<Rectangle<(f64, f64)>> = idx
                .iter()
                .enumerate()
                .filter_map(|(k, &ci)| {
                    let v = value(ci, p)?;
                    let x0 = k as f64 + 0.1 + pi as f64 * width;
                    Some(Rectangle::new(
                        [(x0, 0.0), (x0 + width * 0.9, v)],
                        color.filled(),
                    ))
                })
                .collect();
            chart
                .draw_series(bars)
                .map_err(|e| e.to_string())?
                .label(p.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled())
                });
        }
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(0.0, 1.0), (idx.len() as f64, 1.0)],
                BLACK,
            )))
            .map_err(|e| e.to_string())?;
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
        files.push(path.display().to_string());
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::Runner;

    fn runner(peer: &str, skip: Option<&str>) -> Runner {
        Runner {
            peer: peer.into(),
            program: "true".into(),
            args: vec![],
            env: vec![],
            skip: skip.map(String::from),
        }
    }

    fn outcome(wall: f64, rss: f64, check: u64) -> Outcome {
        let mut result = serde_json::Map::new();
        result.insert("check".into(), json!(check));
        result.insert("gc_ms".into(), json!(wall * 100.0));
        Outcome {
            wall_s: wall,
            peak_rss_mb: rss,
            result,
            ..Outcome::default()
        }
    }

    #[test]
    fn medians_ratios_skips_and_wrong_results() {
        let cases = vec![Case {
            workload: "w",
            variant: "v".into(),
            metric: Metric::Wall,
            expected: Some(42),
            baseline: "mosaic",
            runners: vec![
                runner("mosaic", None),
                runner("peer", None),
                runner("absent", Some("not installed")),
            ],
        }];
        let runs = [
            (0, 1.0, 10.0, 42),
            (0, 3.0, 10.0, 42),
            (0, 2.0, 12.0, 42),
            (1, 4.0, 20.0, 42),
            (1, 4.4, 20.0, 41),
        ]
        .iter()
        .enumerate()
        .map(|(rep, &(runner, wall, rss, check))| Run {
            case: 0,
            runner,
            rep,
            outcome: outcome(wall, rss, check),
        })
        .collect::<Vec<_>>();
        let s = summarize(&cases, &runs);
        assert_eq!(s.len(), 3);
        assert_eq!(
            (s[0].time, s[0].time_min, s[0].time_max),
            (Some(2.0), Some(1.0), Some(3.0))
        );
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
    fn json_and_charts_are_written() {
        let cases = vec![Case {
            workload: "w",
            variant: "v".into(),
            metric: Metric::Wall,
            expected: None,
            baseline: "mosaic",
            runners: vec![runner("mosaic", None), runner("peer", None)],
        }];
        let runs = vec![
            Run {
                case: 0,
                runner: 0,
                rep: 0,
                outcome: outcome(1.0, 5.0, 0),
            },
            Run {
                case: 0,
                runner: 1,
                rep: 0,
                outcome: outcome(1.5, 6.0, 0),
            },
        ];
        let s = summarize(&cases, &runs);
        let dir = std::env::temp_dir().join(format!("mosaic-bench-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        write_json(&dir.join("results.json"), &cases, &runs, &s, false, 1);
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap())
                .unwrap();
        assert_eq!(doc["summary"][1]["time_ratio"], json!(1.5));
        assert_eq!(doc["runs"].as_array().unwrap().len(), 2);
        match charts(&dir, &cases, &s) {
            Ok(files) => {
                let png = std::fs::read(&files[0]).unwrap();
                assert_eq!(&png[1..4], b"PNG");
            }
            Err(e) => assert!(e.contains("font"), "{e}"),
        }
    }
}
