//! A reliability soak (`--only soak`): does resident memory stay flat while
//! the live set is steady, and fall back once it drops?
//!
//! `threads` mutator threads each keep `slots` rooted slots (a
//! [`ShadowStack`] of the thread), each holding a list of `nodes` objects of
//! 16 to 512 bytes (16-byte steps, uniformly at random; the first word links
//! to the next node). Each thread fills its slots, then, for `steady_s`
//! seconds, replaces a random slot with a fresh list, at full speed: the
//! allocation never stops and the live set stays the same size. Then each
//! thread drops all but its first `slots / 10` slots and goes on replacing
//! random slots among those for `drop_s` seconds.
//!
//! A sampler (the calling thread) reads VmRSS every 250 ms. The figures are
//! RSS above the process before the heap was created (the program's own
//! size drops out), at 25% of the steady phase, at its end, and at the end
//! of the phase after the drop; with the live-byte estimate of each phase
//! (the requested sizes, rounded up to 16 bytes, of the objects the slots
//! hold).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use mosaic::{AllocFlags, Config, Heap, Mutator, ObjRef};
use serde::{Deserialize, Serialize};

use super::refs::rss_kb;
use super::Rng;
use crate::vm::{FirstWords, ShadowStack, Vm};

/// Nodes link through their first word.
pub type SoakVm = Vm<FirstWords<1>>;

/// How often the sampler reads VmRSS.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(250);

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub threads: usize,
    /// Rooted slots per thread.
    pub slots: usize,
    /// Objects in each slot's list.
    pub nodes: usize,
    /// Seconds of the steady phase and of the phase after the drop.
    pub steady_s: f64,
    pub drop_s: f64,
}

impl Params {
    /// The default soak: 4 threads × 4096 slots × 10 objects of 264 bytes
    /// on average, about 41 MiB live.
    pub fn new(steady_s: f64, drop_s: f64) -> Self {
        Params {
            threads: 4,
            slots: 4096,
            nodes: 10,
            steady_s,
            drop_s,
        }
    }

    /// Slots each thread keeps after the drop.
    pub fn kept(&self) -> usize {
        (self.slots / 10).max(1)
    }
}

/// What a soak measured. RSS figures are kB above `base_kb`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// VmRSS before the heap existed, kB.
    pub base_kb: u64,
    /// Live-byte estimates: all slots full, and the slots kept after the drop.
    pub live_bytes: u64,
    pub live_bytes_after_drop: u64,
    /// RSS above `base_kb` when the slots were filled, at 25% of the steady
    /// phase, at its end, and at the end of the phase after the drop.
    pub rss_filled_kb: u64,
    pub rss_25_kb: u64,
    pub rss_steady_end_kb: u64,
    pub rss_drop_end_kb: u64,
    /// Bytes the last collection of the steady phase marked (the collector's
    /// own live figure), and of the whole run.
    pub marked_bytes_steady: u64,
    pub marked_bytes_end: u64,
    /// Collections during the steady phase.
    pub collections_steady: u64,
    /// Lists replaced, over all threads.
    pub replacements: u64,
    /// Objects found in the kept slots at the end, against the expected
    /// count.
    pub nodes_found: u64,
    pub nodes_expected: u64,
    /// Every sample: seconds since the steady phase began, RSS kB above base.
    pub samples: Vec<(f64, u64)>,
}

#[inline]
fn set_next(o: ObjRef, next: ObjRef) {
    // SAFETY: every node is at least 16 bytes and starts with its link.
    unsafe { (o.as_ptr() as *mut *mut u8).write(next.as_ptr()) }
}

#[inline]
fn next(o: ObjRef) -> Option<ObjRef> {
    // SAFETY: as above.
    ObjRef::from_ptr(unsafe { (o.as_ptr() as *mut *mut u8).read() })
}

/// Builds a list of `n` nodes; its head is rooted in the slot above the
/// stack's top while it is built. Returns the head and its estimated bytes.
fn list(m: &mut Mutator<SoakVm>, s: &ShadowStack, rng: &mut Rng, n: usize) -> (ObjRef, u64) {
    let top = s.len();
    let mut bytes = 0;
    for k in 0..n {
        let size = 16 * (1 + (rng.next_u64() % 32) as usize);
        bytes += size as u64;
        // Zeroed (AllocFlags::NONE): the link is traced, null at the tail.
        let o = m.alloc_with(size, AllocFlags::NONE).expect("soak node");
        if k == 0 {
            s.push(o);
        } else {
            set_next(o, s.get(top));
            s.set(top, o);
        }
    }
    let head = s.get(top);
    s.truncate(top);
    (head, bytes)
}

fn count(mut o: Option<ObjRef>) -> u64 {
    let mut n = 0;
    while let Some(x) = o {
        n += 1;
        o = next(x);
    }
    n
}

/// One thread's soak; adds its live estimates at the end of the steady
/// phase to `live` and at the end of the phase after the drop to
/// `live_after`; returns the objects found in its kept slots at the end.
#[allow(clippy::too_many_arguments)]
fn mutate(
    m: &mut Mutator<SoakVm>,
    s: &ShadowStack,
    p: &Params,
    seed: u64,
    go: &Barrier,
    live: &AtomicU64,
    live_after: &AtomicU64,
    replacements: &AtomicU64,
) -> u64 {
    let mut rng = Rng::new(seed);
    let mut bytes = vec![0u64; p.slots];
    for b in bytes.iter_mut() {
        let (o, n) = list(m, s, &mut rng, p.nodes);
        s.push(o);
        *b = n;
    }
    m.blocking(|| go.wait());
    let t0 = Instant::now();
    let mut done = 0u64;
    let mut phase = |active: usize, until: Duration, m: &mut Mutator<SoakVm>| {
        while t0.elapsed() < until {
            for _ in 0..16 {
                let j = (rng.next_u64() % active as u64) as usize;
                let (o, n) = list(m, s, &mut rng, p.nodes);
                s.set(j, o);
                bytes[j] = n;
                done += 1;
            }
        }
        bytes[..active].iter().sum::<u64>()
    };
    let steady = Duration::from_secs_f64(p.steady_s);
    live.fetch_add(phase(p.slots, steady, m), Relaxed);
    // The drop: slots above `kept` are no longer scanned.
    s.truncate(p.kept());
    let after = phase(p.kept(), steady + Duration::from_secs_f64(p.drop_s), m);
    live_after.fetch_add(after, Relaxed);
    replacements.fetch_add(done, Relaxed);
    let found = (0..p.kept()).map(|j| count(Some(s.get(j)))).sum();
    s.truncate(0);
    found
}

/// RSS above `base` of the last sample at or before `t` seconds.
fn at(samples: &[(f64, u64)], t: f64) -> u64 {
    samples
        .iter()
        .take_while(|(ts, _)| *ts <= t + 1e-9)
        .last()
        .or(samples.first())
        .map_or(0, |s| s.1)
}

/// Runs the soak on a heap built from `config`.
pub fn run(p: &Params, config: Config) -> (Report, Heap<SoakVm>) {
    assert!(p.threads > 0 && p.slots > 0 && p.nodes > 0);
    let base_kb = rss_kb();
    let heap = Heap::new(config, SoakVm::default()).expect("heap");
    let go = Barrier::new(p.threads + 1);
    let (live, live_after, replacements) =
        (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let mut r = Report {
        base_kb,
        nodes_expected: (p.kept() * p.nodes * p.threads) as u64,
        ..Report::default()
    };
    let above = |kb: u64| kb.saturating_sub(base_kb);
    r.nodes_found = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..p.threads)
            .map(|t| {
                let heap = heap.clone();
                let (go, live, live_after, repl) = (&go, &live, &live_after, &replacements);
                sc.spawn(move || {
                    let mut m = heap.mutator().expect("mutator");
                    let s = heap.embedder().stack(&mut m, p.slots + 1);
                    let seed = 0x50a6_0000 + t as u64;
                    mutate(&mut m, &s, p, seed, go, live, live_after, repl)
                })
            })
            .collect();
        go.wait();
        let t0 = Instant::now();
        r.rss_filled_kb = above(rss_kb());
        let end = p.steady_s + p.drop_s;
        let mut steady_done = false;
        let mut k = 1u32;
        loop {
            let next = SAMPLE_EVERY * k;
            if let Some(d) = next.checked_sub(t0.elapsed()) {
                std::thread::sleep(d);
            }
            let t = t0.elapsed().as_secs_f64();
            r.samples.push((t, above(rss_kb())));
            if !steady_done && t + SAMPLE_EVERY.as_secs_f64() > p.steady_s {
                // The last sample of the steady phase: its collector figures.
                let st = heap.stats();
                r.marked_bytes_steady = st.last_marked_bytes;
                r.collections_steady = st.collections;
                steady_done = true;
            }
            if t >= end || handles.iter().all(|h| h.is_finished()) {
                break;
            }
            k += 1;
        }
        handles
            .into_iter()
            .map(|h| h.join().expect("soak thread"))
            .sum()
    });
    r.live_bytes = live.into_inner();
    r.live_bytes_after_drop = live_after.into_inner();
    r.replacements = replacements.into_inner();
    r.rss_25_kb = at(&r.samples, 0.25 * p.steady_s);
    r.rss_steady_end_kb = at(&r.samples, p.steady_s);
    r.rss_drop_end_kb = r.samples.last().map_or(0, |s| s.1);
    r.marked_bytes_end = heap.stats().last_marked_bytes;
    (r, heap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_soak_keeps_every_kept_list_whole() {
        let p = Params {
            threads: 2,
            slots: 200,
            nodes: 5,
            steady_s: 0.6,
            drop_s: 0.3,
        };
        let config = Config {
            max_heap: 64 << 20,
            heap_min: 1 << 20,
            ..Config::default()
        };
        let (r, heap) = run(&p, config);
        assert_eq!(r.nodes_found, r.nodes_expected);
        assert!(r.replacements > 0 && !r.samples.is_empty());
        assert!(r.live_bytes > r.live_bytes_after_drop);
        assert!(heap.stats().collections > 0);
    }
}
