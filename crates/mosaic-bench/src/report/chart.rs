//! The charts: one PNG per workload, bars of time and peak RSS relative
//! to the baseline ([`bar_panel`]), and for heap-sweep the curves against
//! the heap limit ([`sweep_chart`]).

use std::path::Path;

use plotters::prelude::*;

use super::{Case, Summary};

pub(crate) fn load_font() -> Result<(), String> {
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

/// One PNG per workload: time (top) and peak RSS (bottom) relative to the
/// baseline, a bar per runner, grouped by parameter; for heap-sweep, time, collections and peak RSS
/// against the heap multiple ([`sweep_chart`]).
pub fn charts(dir: &Path, cases: &[Case], summary: &[Summary]) -> Result<Vec<String>, String> {
    load_font()?;
    let mut files = Vec::new();
    let mut workloads: Vec<&str> = cases.iter().map(|c| c.workload).collect();
    workloads.dedup();
    for w in workloads {
        if w == "heap-sweep" {
            files.push(sweep_chart(dir, w, cases, summary)?);
            continue;
        }
        if w == "safepoint" {
            // One runner: its ratio to itself says nothing.
            continue;
        }
        let idx: Vec<usize> = (0..cases.len())
            .filter(|&i| cases[i].workload == w)
            .collect();
        let peers: Vec<String> = cases[idx[0]]
            .runners
            .iter()
            .map(|r| r.peer.clone())
            .collect();
        let path = dir.join(format!("{w}.png"));
        let root = BitMapBackend::new(&path, (1000, 900)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let baseline = cases[idx[0]].baseline;
        let panels = root.split_evenly((2, 1));
        type Get = fn(&Summary) -> Option<f64>;
        let metrics: [(&str, Get); 2] = [("time", |s| s.time_ratio), ("peak RSS", |s| s.rss_ratio)];
        for (area, (what, get)) in panels.iter().zip(metrics) {
            let caption = format!("{w}: {what} relative to {baseline} (lower is better)");
            let y_desc = format!("{what} / {baseline}");
            bar_panel(area, &caption, &y_desc, cases, &idx, &peers, |ci, p| {
                summary
                    .iter()
                    .find(|s| s.case == ci && s.peer == p)
                    .and_then(get)
            })?;
        }
        root.present().map_err(|e| e.to_string())?;
        files.push(path.display().to_string());
    }
    Ok(files)
}

/// One bar chart of ratios to the baseline: a cluster of bars per case (its
/// variant written under it, one line per comma-separated part, so that long
/// variants do not run into each other), a bar per runner, and the 1.0 line.
fn bar_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    y_desc: &str,
    cases: &[Case],
    idx: &[usize],
    peers: &[String],
    value: impl Fn(usize, &str) -> Option<f64>,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let ymax = idx
        .iter()
        .flat_map(|&ci| {
            peers
                .iter()
                .filter_map(|p| value(ci, p))
                .collect::<Vec<_>>()
        })
        .fold(1.0f64, f64::max)
        * 1.15;
    let labels: Vec<Vec<&str>> = idx
        .iter()
        .map(|&ci| cases[ci].variant.split(", ").collect())
        .collect();
    let lines = labels.iter().map(Vec::len).max().unwrap_or(1) as u32;
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(12 + 17 * lines)
        .y_label_area_size(50)
        .build_cartesian_2d(0f64..idx.len() as f64, 0f64..ymax)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc(y_desc)
        .draw()
        .map_err(err)?;
    // The cluster's width in pixels bounds the label's font size (about
    // 0.55 em per character).
    let (left, _) = chart.backend_coord(&(0.0, 0.0));
    let (right, _) = chart.backend_coord(&(1.0, 0.0));
    let cluster = (right - left).max(1) as f64;
    for (k, parts) in labels.iter().enumerate() {
        let longest = parts.iter().map(|l| l.chars().count()).max().unwrap_or(1) as f64;
        let size = (cluster * 0.95 / (longest * 0.55)).clamp(8.0, 15.0);
        // Backend coordinates, made relative to this panel.
        let (bx, by) = area.get_base_pixel();
        let (px, py) = chart.backend_coord(&(k as f64 + 0.5, 0.0));
        let (px, py) = (px - bx, py - by);
        for (j, line) in parts.iter().enumerate() {
            let x = px - (line.chars().count() as f64 * size * 0.55 / 2.0) as i32;
            let y = py + 6 + j as i32 * (size as i32 + 2);
            area.draw(&Text::new(line.to_string(), (x, y), ("sans-serif", size)))
                .map_err(err)?;
        }
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
            .map_err(err)?
            .label(p.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(0.0, 1.0), (idx.len() as f64, 1.0)],
            BLACK,
        )))
        .map_err(err)?;
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)?;
    Ok(())
}

/// The curve GC papers plot: for each runner, time, collections and peak
/// RSS against the heap limit as a multiple of the peak live size.
fn sweep_chart(
    dir: &Path,
    workload: &str,
    cases: &[Case],
    summary: &[Summary],
) -> Result<String, String> {
    let idx: Vec<usize> = (0..cases.len())
        .filter(|&i| cases[i].workload == workload && cases[i].heap_factor.is_some())
        .collect();
    let Some(&first) = idx.first() else {
        return Err(format!("no {workload} cases"));
    };
    let peers: Vec<String> = cases[first]
        .runners
        .iter()
        .map(|r| r.peer.clone())
        .collect();
    type Get = fn(&Summary) -> Option<f64>;
    let panels: [(&str, Get); 3] = [
        ("time (s)", |s| s.time),
        ("collections", |s| s.collections),
        ("peak RSS (MB)", |s| s.peak_rss_mb),
    ];
    let xs: Vec<f64> = idx.iter().filter_map(|&i| cases[i].heap_factor).collect();
    let xmin = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let xmax = xs.iter().copied().fold(0.0, f64::max);
    let span = (xmax - xmin).max(0.5);
    let path = dir.join(format!("{workload}.png"));
    let root = BitMapBackend::new(&path, (1500, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let root = root
        .titled(
            &format!("{workload}: GCBench with holes against the heap limit"),
            ("sans-serif", 24),
        )
        .map_err(|e| e.to_string())?;
    for (k, (area, (label, get))) in root
        .split_evenly((1, panels.len()))
        .into_iter()
        .zip(panels)
        .enumerate()
    {
        let point = |ci: usize, p: &str| -> Option<(f64, f64)> {
            let s = summary
                .iter()
                .find(|s| s.case == ci && s.peer == p && s.failed.is_none())?;
            Some((cases[ci].heap_factor?, get(s)?))
        };
        let ymax = idx
            .iter()
            .flat_map(|&ci| peers.iter().filter_map(move |p| point(ci, p)))
            .map(|(_, y)| y)
            .fold(0.0f64, f64::max)
            .max(1e-9)
            * 1.15;
        let mut chart = ChartBuilder::on(&area)
            .caption(label, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((xmin - span * 0.05)..(xmax + span * 0.05), 0f64..ymax)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("heap limit / peak live size")
            .draw()
            .map_err(|e| e.to_string())?;
        for (pi, p) in peers.iter().enumerate() {
            let color = Palette99::pick(pi).to_rgba();
            let pts: Vec<(f64, f64)> = idx.iter().filter_map(|&ci| point(ci, p)).collect();
            let series = chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(|e| e.to_string())?;
            if k == 0 {
                series.label(p.as_str()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                });
            }
            chart
                .draw_series(pts.iter().map(|&xy| Circle::new(xy, 3, color.filled())))
                .map_err(|e| e.to_string())?;
        }
        if k == 0 {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .position(SeriesLabelPosition::LowerRight)
                .draw()
                .map_err(|e| e.to_string())?;
        }
    }
    root.present().map_err(|e| e.to_string())?;
    Ok(path.display().to_string())
}
