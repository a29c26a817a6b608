//! The pause timeline (`MOSAIC_TRACE=path.json`): every phase of every
//! pause, on every thread that worked on it, as Chrome trace events.
//!
//! Each thread is a track (its `tid`), named after the thread
//! (`mosaic-gc-N` for GC workers, the mutator threads' own names). The
//! spans: `pause` (the whole collection, on the collecting thread, with
//! its number), `stop` (from the stop request until every mutator reached
//! a safepoint), `finish sweep` (the previous cycle's leftovers), `roots`
//! and `mark` (per worker), `weak` (ephemerons, finalizers, weak
//! references), `verify`, `release` (per worker), `resume`, and
//! `lazy sweep` steps in allocating threads. The file is written when the
//! heap is dropped; it opens in Perfetto (ui.perfetto.dev) and
//! chrome://tracing.
//!
//! Recording costs one lock per span, and only when tracing is on; at
//! most [`MAX_SPANS`] spans are kept (the count of the others is written
//! in the file's metadata).

use std::cell::Cell;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use parking_lot::Mutex;

/// Most spans kept in memory (about 40 bytes each).
pub const MAX_SPANS: usize = 1 << 22;

/// A heap's timeline, and where it goes.
pub struct Timeline {
    path: PathBuf,
    origin: Instant,
    state: Mutex<State>,
    dropped: AtomicU64,
}

#[derive(Default)]
struct State {
    spans: Vec<Span>,
    /// Track id to thread name, for every track that has a span.
    names: HashMap<u64, String>,
}

struct Span {
    name: &'static str,
    track: u64,
    start_ns: u64,
    dur_ns: u64,
    /// One optional number shown with the span (collection number, pages).
    arg: Option<(&'static str, u64)>,
}

thread_local! {
    /// This thread's track id (0: not assigned yet).
    static TRACK: Cell<u64> = const { Cell::new(0) };
}

static NEXT_TRACK: AtomicU64 = AtomicU64::new(1);

/// The calling thread's track id, assigned on first use.
fn track() -> u64 {
    TRACK.with(|t| {
        if t.get() == 0 {
            t.set(NEXT_TRACK.fetch_add(1, Relaxed));
        }
        t.get()
    })
}

impl Timeline {
    /// A timeline to be written to `path`.
    pub fn new(path: &Path) -> Self {
        Timeline {
            path: path.to_owned(),
            origin: Instant::now(),
            state: Mutex::new(State::default()),
            dropped: AtomicU64::new(0),
        }
    }

    /// Records a span of the calling thread from `start` until now.
    pub fn span(&self, name: &'static str, start: Instant, arg: Option<(&'static str, u64)>) {
        let end = Instant::now();
        let span = Span {
            name,
            track: track(),
            start_ns: start.saturating_duration_since(self.origin).as_nanos() as u64,
            dur_ns: end.saturating_duration_since(start).as_nanos() as u64,
            arg,
        };
        let mut st = self.state.lock();
        if st.spans.len() >= MAX_SPANS {
            self.dropped.fetch_add(1, Relaxed);
            return;
        }
        let track = span.track;
        st.names.entry(track).or_insert_with(|| {
            std::thread::current()
                .name()
                .map_or_else(|| format!("thread {track}"), str::to_owned)
        });
        st.spans.push(span);
    }

    /// Writes the trace-event JSON to the timeline's path.
    pub fn write(&self) -> std::io::Result<()> {
        let st = self.state.lock();
        let mut out = std::io::BufWriter::new(std::fs::File::create(&self.path)?);
        writeln!(out, "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[")?;
        let mut first = true;
        let mut sep = |out: &mut std::io::BufWriter<_>| -> std::io::Result<()> {
            if !std::mem::take(&mut first) {
                writeln!(out, ",")?;
            }
            Ok(())
        };
        sep(&mut out)?;
        write!(
            out,
            "{{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{{\"name\":\"mosaic\",\"dropped_spans\":{}}}}}",
            self.dropped.load(Relaxed)
        )?;
        let mut names: Vec<_> = st.names.iter().collect();
        names.sort();
        for (track, name) in names {
            sep(&mut out)?;
            write!(
                out,
                "{{\"ph\":\"M\",\"pid\":1,\"tid\":{track},\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}}",
                json_string(name)
            )?;
        }
        for s in &st.spans {
            sep(&mut out)?;
            write!(
                out,
                "{{\"ph\":\"X\",\"cat\":\"gc\",\"pid\":1,\"tid\":{},\"name\":\"{}\",\"ts\":{}.{:03},\"dur\":{}.{:03}",
                s.track,
                s.name,
                s.start_ns / 1000,
                s.start_ns % 1000,
                s.dur_ns / 1000,
                s.dur_ns % 1000
            )?;
            match s.arg {
                Some((k, v)) => write!(out, ",\"args\":{{\"{k}\":{v}}}}}")?,
                None => write!(out, "}}")?,
            }
        }
        writeln!(out, "\n]}}")?;
        out.flush()
    }
}

impl Drop for Timeline {
    fn drop(&mut self) {
        if let Err(e) = self.write() {
            eprintln!(
                "mosaic: cannot write the trace to {}: {e}",
                self.path.display()
            );
        }
    }
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped_as_json() {
        assert_eq!(json_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}
