//! GCBench (Ellis, Kovac, Boehm): a long-lived tree and a 500 000-double
//! array stay alive while trees of depth 4, 6, …, 16 are built top-down
//! (Populate) and bottom-up (MakeTree), NumIters(d) = 2·TreeSize(18)/TreeSize(d)
//! of each. The "holes" variant allocates a power-law-sized garbage object
//! after every node (fragmentation).
//!
//! [`Params::scaled`] is the same program with the stretch and long-lived
//! trees at depth L (and so NumIters(d) = 2·TreeSize(L)/TreeSize(d)): the
//! live size grows with L while the temporary trees stay at depth 4..16.
//!
//! Check value: `long-lived nodes × 1 000 000 + trees built`, the same in
//! every peer. Every peer times the same part: from just before the first
//! thread starts (after the heap or runtime is set up) to just after the last
//! one finishes, with a monotonic clock, as the published GCBench does.

use std::time::{Duration, Instant};

use mosaic::{AllocFlags, Config, Heap, Mutator, ObjRef};

use super::Rng;
use crate::vm::{FirstWords, Gen, ShadowStack, Vm};

/// GCBench's parameters.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Params {
    pub stretch: u32,
    pub long_lived: u32,
    pub array_size: usize,
    pub min_depth: u32,
    pub max_depth: u32,
    pub holes: bool,
}

/// Bytes of one node as every peer lays it out: two pointers, two ints.
pub const NODE_BYTES: usize = 24;
/// The slot every peer's allocator gives a node (16-byte granules).
pub const NODE_SLOT: usize = 32;

impl Params {
    pub fn standard(holes: bool) -> Self {
        Params {
            stretch: 18,
            long_lived: 16,
            array_size: 500_000,
            min_depth: 4,
            max_depth: 16,
            holes,
        }
    }

    /// GCBench with stretch and long-lived trees of depth `l`, the standard
    /// array and temporary trees of depth 4..16 (no holes).
    pub fn scaled(l: u32) -> Self {
        Params {
            stretch: l,
            long_lived: l,
            ..Self::standard(false)
        }
    }

    /// The arguments every peer program takes for these parameters:
    /// `HOLES THREADS STRETCH LONG_LIVED ARRAY_SIZE MIN_DEPTH MAX_DEPTH`.
    pub fn peer_args(&self, threads: usize) -> Vec<String> {
        [
            self.holes as u64,
            threads as u64,
            self.stretch as u64,
            self.long_lived as u64,
            self.array_size as u64,
            self.min_depth as u64,
            self.max_depth as u64,
        ]
        .iter()
        .map(u64::to_string)
        .collect()
    }

    pub fn tree_size(d: u32) -> u64 {
        (1u64 << (d + 1)) - 1
    }

    pub fn num_iters(&self, d: u32) -> u64 {
        2 * Self::tree_size(self.stretch) / Self::tree_size(d)
    }

    /// Peak live bytes: the stretch tree alone, or the long-lived tree, the
    /// array and the largest temporary tree together.
    pub fn peak_live_bytes(&self) -> usize {
        let stretch = Self::tree_size(self.stretch) as usize * NODE_SLOT;
        let later = (Self::tree_size(self.long_lived) + Self::tree_size(self.max_depth)) as usize
            * NODE_SLOT
            + self.array_size * 8;
        stretch.max(later)
    }

    pub fn expected_check(&self) -> u64 {
        let trees: u64 = (self.min_depth..=self.max_depth)
            .step_by(2)
            .map(|d| 2 * self.num_iters(d))
            .sum();
        Self::tree_size(self.long_lived) * 1_000_000 + trees
    }
}

type GcVm = Vm<FirstWords<2>>;

struct Ctx<'a> {
    m: &'a mut Mutator<GcVm>,
    s: &'a ShadowStack,
    rng: Rng,
    holes: bool,
    gen: Gen,
}

impl Ctx<'_> {
    fn node(&mut self) -> ObjRef {
        self.m
            .alloc_sized::<NODE_BYTES>(self.gen.flags())
            .expect("GCBench node")
    }

    /// A garbage object after each node, in the holes variant: pointer-free
    /// and not cleared, as Boehm's `GC_MALLOC_ATOMIC` in the C peer.
    fn hole(&mut self) {
        if self.holes {
            let size = self.rng.power_law_size();
            self.m.alloc_with(size, AllocFlags::UNINIT).expect("hole");
        }
    }

    /// Top-down: `node` is reachable from a root.
    fn populate(&mut self, depth: u32, node: ObjRef) {
        if depth == 0 {
            return;
        }
        let l = self.node();
        set(node, 0, Some(l));
        self.gen.barrier(self.m, node);
        self.hole();
        let r = self.node();
        set(node, 1, Some(r));
        self.gen.barrier(self.m, node);
        self.hole();
        self.populate(depth - 1, l);
        self.populate(depth - 1, r);
    }

    /// Bottom-up.
    fn make_tree(&mut self, depth: u32) -> ObjRef {
        let base = self.s.len();
        if depth > 0 {
            let l = self.make_tree(depth - 1);
            self.s.push(l);
            let r = self.make_tree(depth - 1);
            self.s.push(r);
        }
        let n = self.node();
        if depth > 0 {
            set(n, 0, Some(self.s.get(base)));
            set(n, 1, Some(self.s.get(base + 1)));
            // `n` was allocated just before: young, no barrier.
        }
        self.s.truncate(base);
        self.s.push(n);
        self.hole();
        self.s.truncate(base);
        n
    }
}

fn set(o: ObjRef, i: usize, v: Option<ObjRef>) {
    // SAFETY: nodes start with two pointer fields.
    unsafe {
        (o.as_ptr() as *mut *mut u8)
            .add(i)
            .write(v.map_or(std::ptr::null_mut(), |v| v.as_ptr()))
    }
}

fn get(o: ObjRef, i: usize) -> Option<ObjRef> {
    // SAFETY: as above.
    ObjRef::from_ptr(unsafe { (o.as_ptr() as *mut *mut u8).add(i).read() })
}

fn count(o: ObjRef) -> u64 {
    1 + get(o, 0).map_or(0, count) + get(o, 1).map_or(0, count)
}

/// One thread's GCBench.
fn run_one(m: &mut Mutator<GcVm>, s: &ShadowStack, p: &Params, seed: u64, gen: Gen) -> u64 {
    let mut cx = Ctx {
        m,
        s,
        rng: Rng::new(seed),
        holes: p.holes,
        gen,
    };
    cx.make_tree(p.stretch);
    let long_lived = cx.node();
    s.push(long_lived);
    cx.populate(p.long_lived, long_lived);
    let array =
        cx.m.alloc_with(p.array_size * 8, AllocFlags::UNINIT)
            .expect("array");
    s.push(array);
    let a = array.as_ptr() as *mut f64;
    for i in 0..p.array_size / 2 {
        // SAFETY: the array holds `array_size` doubles.
        unsafe { a.add(i).write(1.0 / i as f64) };
    }
    let mut trees = 0;
    for d in (p.min_depth..=p.max_depth).step_by(2) {
        let iters = p.num_iters(d);
        for _ in 0..iters {
            let t = cx.node();
            let base = s.push(t);
            cx.populate(d, t);
            s.truncate(base);
            trees += 1;
        }
        for _ in 0..iters {
            cx.make_tree(d);
            trees += 1;
        }
    }
    // SAFETY: as above.
    assert_eq!(
        unsafe { a.add(1000).read() },
        1.0 / 1000.0,
        "the array survived"
    );
    let nodes = count(s.get(0));
    s.truncate(0);
    nodes * 1_000_000 + trees
}

/// Runs GCBench on `threads` threads sharing one heap; returns the check
/// value (per thread, equal on every thread), the heap, and the time from
/// starting the threads to joining them (heap creation not included).
pub fn run(p: &Params, threads: usize, config: Config) -> (u64, Heap<GcVm>, Duration) {
    let gen = Gen::of(&config);
    let heap = Heap::new(config, GcVm::default()).expect("heap");
    let start = Instant::now();
    let checks: Vec<u64> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let heap = heap.clone();
                sc.spawn(move || {
                    let mut m = heap.mutator().unwrap();
                    let s = heap.embedder().stack(&mut m, 1 << 12);
                    run_one(&mut m, &s, p, 42 + t as u64, gen)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("GCBench thread"))
            .collect()
    });
    let elapsed = start.elapsed();
    assert!(
        checks.windows(2).all(|w| w[0] == w[1]),
        "threads disagree: {checks:?}"
    );
    (checks[0], heap, elapsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(holes: bool) -> Params {
        Params {
            stretch: 12,
            long_lived: 10,
            array_size: 5000,
            min_depth: 4,
            max_depth: 10,
            holes,
        }
    }

    #[test]
    fn gcbench_check_value_matches_the_formula() {
        // With generations, verify mode proves every minor collection:
        // the workload's barriers are complete.
        for (holes, generational) in [(false, false), (true, false), (true, true)] {
            let p = small(holes);
            let config = Config {
                max_heap: (p.peak_live_bytes() * 3).next_multiple_of(mosaic::PAGE_SIZE) + (4 << 20),
                verify: true,
                generational,
                ..Config::default()
            };
            let (check, heap, elapsed) = run(&p, 2, config);
            assert!(elapsed > Duration::ZERO);
            assert_eq!(check, p.expected_check());
            let s = heap.stats();
            assert!(s.collections > 0);
            assert_eq!(s.minor_collections > 0, generational, "{s:?}");
        }
    }

    #[test]
    fn standard_parameters_give_the_published_shape() {
        let p = Params::standard(false);
        assert_eq!(Params::tree_size(16), 131_071);
        assert_eq!(Params::tree_size(18), 524_287);
        assert_eq!(p.num_iters(4), 2 * 524_287 / 31);
        assert_eq!(
            p.num_iters(16),
            8,
            "GCBench prints: Creating 8 trees of depth 16"
        );
        assert_eq!(
            p.peak_live_bytes(),
            524_287 * 32,
            "the stretch tree is the peak"
        );
        assert_eq!(p.peer_args(2), ["0", "2", "18", "16", "500000", "4", "16"]);
    }

    #[test]
    fn scaled_parameters_follow_the_iteration_rule() {
        let p = Params::scaled(20);
        assert_eq!((p.stretch, p.long_lived, p.max_depth), (20, 20, 16));
        assert_eq!(p.num_iters(4), 2 * Params::tree_size(20) / 31);
        // Live: the long-lived tree, the largest temporary tree and the array.
        assert_eq!(
            p.peak_live_bytes(),
            (Params::tree_size(20) + Params::tree_size(16)) as usize * NODE_SLOT + 4_000_000
        );
        assert!(Params::scaled(24).peak_live_bytes() > 1 << 30);
        let small = Params {
            array_size: 5000,
            max_depth: 8,
            ..Params::scaled(10)
        };
        let config = Config {
            max_heap: (small.peak_live_bytes() * 3).next_multiple_of(mosaic::PAGE_SIZE) + (4 << 20),
            verify: true,
            ..Config::default()
        };
        assert_eq!(run(&small, 1, config).0, small.expected_check());
    }
}
