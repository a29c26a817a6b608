//! The release phase on a high-turnover heap (seed 004's experiment):
//! how long the GC workers take to give the empty pages of one collection
//! back, with the lock-free page store against the mutex-protected free
//! list, at several worker counts.
//!
//! Each round allocates `pages` pages of 32-byte objects, of which one
//! object on every 16th page survives (so 15 pages in 16 are empty at the
//! collection, and the pool's sweep cycle stays open: no decommit joins the
//! release phase), then collects. The figure is the release phase's own
//! time in that pause (`Stats::release_phases`, the phase's wall time on
//! the collecting thread, from gathering the pages to every worker's
//! buffer flushed), one value per round after a warm-up round.

use mosaic::{AllocFlags, Config, Heap, HeapPolicy, PageResourceKind};

use crate::vm::{FirstWords, Vm};

/// Objects per 64 KiB page at 32 bytes.
const PER_PAGE: usize = 2048;

/// One configuration's measurements.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ReleaseRun {
    pub store: &'static str,
    pub workers: usize,
    /// Release-phase time of each measured round, in microseconds.
    pub release_us: Vec<f64>,
    /// Pages released in each measured round.
    pub pages_released: Vec<u64>,
}

/// Runs `rounds` measured rounds (plus one warm-up) with `workers` GC
/// workers and the given page store.
pub fn run(store: PageResourceKind, workers: usize, pages: usize, rounds: usize) -> ReleaseRun {
    let config = Config {
        gc_threads: workers,
        page_resource: store,
        heap_policy: HeapPolicy::Fixed,
        max_heap: (pages * 4).max(1 << 14) * mosaic::PAGE_SIZE,
        ..Config::default()
    };
    let heap = Heap::new(config, Vm::<FirstWords<1>>::default()).expect("heap");
    let mut m = heap.mutator().expect("mutator");
    let keep = m.empty_root();
    let mut out = ReleaseRun {
        store: match store {
            PageResourceKind::LockFree => "lock-free",
            PageResourceKind::Mutex => "mutex",
        },
        workers,
        release_us: Vec::new(),
        pages_released: Vec::new(),
    };
    for round in 0..=rounds {
        keep.set(None);
        for i in 0..pages * PER_PAGE {
            let o = m.alloc_sized::<32>(AllocFlags::NONE).expect("alloc");
            if i % (16 * PER_PAGE) == 0 {
                // SAFETY: a fresh 32-byte object; word 0 is its one field.
                unsafe { (o.as_ptr() as *mut usize).write(keep.get().map_or(0, |k| k.addr())) };
                keep.set(Some(o));
            }
        }
        let before = heap.stats().release_phases.total;
        m.collect();
        let s = heap.stats();
        if round > 0 {
            out.release_us
                .push((s.release_phases.total - before).as_secs_f64() * 1e6);
            out.pages_released.push(s.last_released_pages);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifteen_pages_in_sixteen_are_released_each_round() {
        for store in [PageResourceKind::LockFree, PageResourceKind::Mutex] {
            let r = run(store, 2, 256, 2);
            assert_eq!(r.release_us.len(), 2);
            for &p in &r.pages_released {
                // 256 pages, 16 with a survivor; the mutator's last page and
                // the pages lazily swept since may differ by a few.
                assert!((230..=241).contains(&p), "{store:?}: {p} pages released");
            }
            assert!(r.release_us.iter().all(|&t| t > 0.0));
        }
    }
}
