//! When to collect: the heap's target, its allowance, and the policies that
//! set them after every collection.
//!
//! The heap as a whole decides when to collect; the pools only decide how
//! the heap's pages are shared (`pool/growth.rs`). After each collection the
//! policy sets the heap **target** from the bytes found live `L`; the
//! **allowance** is `target − L`, and the next collection is due once the
//! bytes allocated since this one (small-object runs and large objects, as
//! mutators report them) reach it.
//!
//! | policy | target after a collection |
//! |---|---|
//! | `Fixed` | `max_heap`: use the whole configured heap, collect when it is full |
//! | `Proportional { k }` | `max(L × (1 + k), heap_min)` (Go's `GOGC = 100·k`) |
//! | `Adaptive { scale }` | `max(L + min(sqrt(L × scale × g / s), cap), heap_min)` (MemBalancer, capped; `cap` below) |
//!
//! Every target is capped at `max_heap`, and the allowance is never below
//! [`MIN_ALLOWANCE`] (a heap nearly full of live data collects often, and an
//! allocation that finds no page gets `OutOfMemory` after one collection).
//! Before the first collection the target is `heap_min` (fixed: `max_heap`).
//!
//! The adaptive policy is the square-root rule of MemBalancer (Kirisame,
//! Shenoy, Panchekha, PLDI 2022): `g` is the allocation rate (bytes
//! allocated per second of mutator time between two collections) and `s`
//! the collection speed (bytes found live per second of collector time:
//! the pause, plus the lazy sweep steps since the previous collection).
//! Both times are the process's **CPU time**, not wall time: the pause's
//! CPU time (every GC worker's, the world being stopped), and the
//! process's CPU time between pauses less the sweep steps. With wall time,
//! GC workers waiting for a core on a busy machine read as a slow
//! collector and the heap grew (n-queens: 9 MB with one worker, 32-45 MB
//! with two beside three busy loops); a heap's size should not depend on
//! what else the machine runs.
//! Both are smoothed: each is a ratio of exponentially weighted byte and
//! time totals (weight [`SMOOTHING`] on the newest sample), so one odd
//! cycle does not swing the heap. `scale` (bytes) is the tuning constant
//! (the paper's `1/c`): when allocation and collection run at the same
//! speed, a heap with `scale` live bytes gets as much again as headroom.
//!
//! The headroom is capped at `headroom_max` times the live bytes (3 by
//! default). The square root grows fastest relative to the live set when
//! the live set is small and allocation fast: a soak of 4 threads over a
//! 41 MB live set sat at 7–9× it, and kept 24× the live set after the set
//! fell to 4 MB; n-queens and binary-trees held 1.7–2× OCaml's memory. With
//! the cap the soak is flat at 4.6× and both small programs fit in 1.3×
//! OCaml's, for more (short) collections (BENCHMARKS.md, issue 19).
//!
//! **Running mutators.** A pause stops every mutator, so with `n` of them
//! running between collections each pause costs `n` threads' time, while
//! the allocation per collection (the allowance) stays what one thread
//! would get: two threads on a small heap collected twice as often and
//! lost twice the time to it (Guile's threads on the drop-in: 257 → 482
//! collections, 1.5× the speed for twice the work). So the cap grows by
//! one share per further running mutator, each share at most
//! [`MUTATOR_ROOM_MAX`]: `cap = L × headroom_max + (n − 1) × min(L ×
//! headroom_max, MUTATOR_ROOM_MAX)`. `n` comes from the parallelism
//! between pauses: the process's CPU time between the end of one full
//! collection and the start of the next, less the minor pauses' CPU time,
//! over the wall time between them, less the minor pauses' wall time,
//! both smoothed like the rates; it is rounded down unless at least
//! [`RUNNING_ROUND_UP`] of a further thread ran (so one mutator beside a
//! half-busy helper thread stays one), and kept between 1 and the CPUs
//! available to the thread that made the heap. An idle thread does not
//! count; a busy thread that is not a mutator does (the process's CPU
//! time is all that is measured), but adds at most one share. The bound
//! per share keeps a large heap's cap where it was (a 41 MB soak on two
//! CPUs: 3× → 3.1×), since only small heaps, whose collections come
//! quickest, need it. The decision reports `running_mutators`.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::config::HeapPolicy;

/// Smallest allowance a collection grants (bytes).
pub const MIN_ALLOWANCE: u64 = 256 << 10;

/// The smallest run cap ([`HeapSizer::max_run`]).
pub const MIN_RUN_CAP: u64 = 4 << 10;

/// Weight of the newest sample in the adaptive policy's smoothed rates.
pub const SMOOTHING: f64 = 0.5;

/// Most headroom the cap grows by for each running mutator beyond the
/// first (see "Running mutators" above).
pub const MUTATOR_ROOM_MAX: u64 = 4 << 20;

/// The fraction of a further thread's time that counts it as running.
pub const RUNNING_ROUND_UP: f64 = 0.75;

/// What the heap policy decided at the end of a collection, for stats and
/// events: why the next collection will come when it does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeapDecision {
    /// The policy that decided.
    pub policy: HeapPolicy,
    /// Bytes found live by the collection (slot sizes, large objects).
    pub live_bytes: u64,
    /// Bytes allocated between the previous collection and this one.
    pub allocated_bytes: u64,
    /// The new target: live bytes plus the allowance, at most `max_heap`.
    pub target_bytes: u64,
    /// Bytes that may be allocated before the next collection.
    pub allowance_bytes: u64,
    /// Allocation rate, bytes per second of mutator time (smoothed).
    pub allocation_rate: f64,
    /// Collection speed, live bytes per second of collector time (smoothed).
    pub collection_speed: f64,
    /// Mutators counted as running in parallel between pauses (1 or more;
    /// the adaptive cap grows with it, see the module docs).
    pub running_mutators: f64,
}

/// The heap's collection trigger and its policy.
pub struct HeapSizer {
    policy: HeapPolicy,
    /// The adaptive headroom's cap, in live bytes (0: none).
    headroom_max: f64,
    /// The available CPUs: the most running mutators counted.
    cpus: f64,
    min: u64,
    /// `max_heap`, which [`HeapSizer::set_max`] may change.
    max: AtomicU64,
    /// Bytes allocated since the last collection.
    allocated: AtomicU64,
    /// Allocation that makes the next collection due.
    allowance: AtomicU64,
    target: AtomicU64,
    state: Mutex<State>,
}

struct State {
    /// The process's CPU time when the last pause ended (or the heap was
    /// created).
    cpu_at_end: Duration,
    /// Collector time (lazy sweeping) counted at the last pause's end.
    sweep_at_end: Duration,
    /// Minor collections since the last full one (generational mode):
    /// their pauses' CPU time and the bytes allocated before each.
    minor_cpu: Duration,
    minor_wall: Duration,
    minor_allocated: u64,
    /// Exponentially weighted totals for the allocation rate and collection speed.
    alloc_bytes: f64,
    alloc_secs: f64,
    gc_bytes: f64,
    gc_secs: f64,
    /// When the last full collection's pause ended (none before the first
    /// collection), and the exponentially weighted CPU and wall seconds
    /// between pauses (none yet: `None`): their ratio is the mutators'
    /// parallelism.
    wall_at_end: Option<Instant>,
    parallel_secs: Option<(f64, f64)>,
    last: Option<HeapDecision>,
}

/// What allocation a target leaves room for once `live` bytes are in it
/// (never below [`MIN_ALLOWANCE`]).
fn allowance_for(target: u64, live: u64) -> u64 {
    target.saturating_sub(live).max(MIN_ALLOWANCE)
}

/// One collection as the policy sees it.
#[derive(Clone, Copy, Debug)]
pub struct CollectionSample {
    pub live_bytes: u64,
    /// Of `live_bytes`, what only finalization kept (garbage the next
    /// collection reclaims): it occupies the heap until then, but earns no
    /// headroom, or a program that makes finalizable garbage would grow its
    /// heap with every collection (each one finding all it allocated since
    /// the last "live").
    pub finalization_bytes: u64,
    /// The process's CPU time when the world had stopped, and when the
    /// pause's work was done ([`crate::os::process_cpu_time`]).
    pub cpu_at_start: Duration,
    pub cpu_at_end: Duration,
    /// Total lazy sweep time of the heap so far.
    pub sweep_total: Duration,
    /// When the world had stopped, and when the pause's work was done.
    pub wall_at_start: Instant,
    pub wall_at_end: Instant,
}

impl HeapSizer {
    pub fn new(policy: HeapPolicy, heap_min: usize, max_heap: usize) -> Self {
        let max = max_heap as u64;
        let min = (heap_min as u64).min(max);
        let target = match policy {
            HeapPolicy::Fixed => max,
            _ => min,
        };
        HeapSizer {
            policy,
            headroom_max: 0.0,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()) as f64,
            min,
            max: AtomicU64::new(max),
            allocated: AtomicU64::new(0),
            allowance: AtomicU64::new(target.max(MIN_ALLOWANCE)),
            target: AtomicU64::new(target),
            state: Mutex::new(State {
                cpu_at_end: crate::os::process_cpu_time(),
                sweep_at_end: Duration::ZERO,
                minor_cpu: Duration::ZERO,
                minor_wall: Duration::ZERO,
                minor_allocated: 0,
                alloc_bytes: 0.0,
                alloc_secs: 0.0,
                gc_bytes: 0.0,
                gc_secs: 0.0,
                wall_at_end: None,
                parallel_secs: None,
                last: None,
            }),
        }
    }

    /// Counts `bytes` just allocated.
    #[inline]
    pub fn add(&self, bytes: u64) {
        if bytes != 0 {
            self.allocated.fetch_add(bytes, Relaxed);
        }
    }

    /// Takes back `bytes` counted as allocated since the last collection:
    /// memory freed explicitly and reusable at once (bdwgc subtracts its
    /// explicitly freed bytes the same way).
    pub fn give_back(&self, bytes: u64) {
        let _ = self
            .allocated
            .fetch_update(Relaxed, Relaxed, |a| Some(a.saturating_sub(bytes)));
    }

    /// Whether the allocation since the last collection has used up the
    /// allowance.
    #[inline]
    pub fn due(&self) -> bool {
        self.allocated.load(Relaxed) >= self.allowance.load(Relaxed)
    }

    /// The most bytes one run may take now: a 64th of the allowance, at
    /// least [`MIN_RUN_CAP`]. Runs count whole when they are taken, and a
    /// thread counts only its own runs' unused rest off (see
    /// `Mutator::report_and_due`): on a small heap, other threads' runs of
    /// many size classes would use up the allowance with bytes nobody
    /// allocated (two threads, 50 classes, 256 KiB: four times bdwgc's
    /// collections). On a heap of 4 MiB or more no run is capped.
    #[inline]
    pub fn max_run(&self) -> usize {
        (self.allowance.load(Relaxed) / 64).max(MIN_RUN_CAP) as usize
    }

    /// [`HeapSizer::due`] with `credit` bytes counted as allocated taken
    /// off: the reserved, unused rest of the caller's runs.
    #[inline]
    pub fn due_with_credit(&self, credit: u64) -> bool {
        self.allocated.load(Relaxed).saturating_sub(credit) >= self.allowance.load(Relaxed)
    }

    /// Whether allocating `bytes` more would pass the allowance (a large
    /// object is checked before it is allocated).
    #[inline]
    pub fn would_exceed(&self, bytes: u64) -> bool {
        self.allocated.load(Relaxed).saturating_add(bytes) > self.allowance.load(Relaxed)
    }

    /// Bytes allocated since the last collection.
    pub fn allocated(&self) -> u64 {
        self.allocated.load(Relaxed)
    }

    /// The current heap target in bytes.
    pub fn target(&self) -> u64 {
        self.target.load(Relaxed)
    }

    pub fn policy(&self) -> HeapPolicy {
        self.policy
    }

    /// The last decision, if a collection has happened.
    pub fn last_decision(&self) -> Option<HeapDecision> {
        self.state.lock().last
    }

    /// Applies the policy after a collection (inside the pause, every
    /// mutator stopped and flushed): sets the new target and allowance and
    /// restarts the allocation count.
    pub fn after_collection(&self, s: &CollectionSample) -> HeapDecision {
        let mut st = self.state.lock();
        // Minor collections since the last full one count as collector
        // time, and what was allocated before them as allocation.
        let minor_cpu = std::mem::take(&mut st.minor_cpu);
        let minor_wall = std::mem::take(&mut st.minor_wall);
        let allocated = self.allocated.swap(0, Relaxed) + std::mem::take(&mut st.minor_allocated);
        let swept = s.sweep_total.saturating_sub(st.sweep_at_end);
        let interval = s.cpu_at_start.saturating_sub(st.cpu_at_end);
        let mutator = interval.saturating_sub(swept + minor_cpu);
        let collector = s.cpu_at_end.saturating_sub(s.cpu_at_start) + swept + minor_cpu;
        smooth(&mut st.alloc_bytes, allocated as f64);
        smooth(&mut st.alloc_secs, mutator.as_secs_f64());
        smooth(&mut st.gc_bytes, s.live_bytes as f64);
        smooth(&mut st.gc_secs, collector.as_secs_f64());
        if let Some(end) = st.wall_at_end {
            // (The lazy sweep steps are mutator threads running, and their
            // times are wall times: they stay in.)
            let cpu = interval.saturating_sub(minor_cpu).as_secs_f64();
            let wall = s.wall_at_start.saturating_duration_since(end);
            let wall = wall.saturating_sub(minor_wall).as_secs_f64();
            st.parallel_secs = Some(match st.parallel_secs {
                None => (cpu, wall),
                Some((c, w)) => (
                    c * (1.0 - SMOOTHING) + cpu * SMOOTHING,
                    w * (1.0 - SMOOTHING) + wall * SMOOTHING,
                ),
            });
        }
        let rate = |b: f64, t: f64| if t > 0.0 { b / t } else { 0.0 };
        let g = rate(st.alloc_bytes, st.alloc_secs);
        let speed = rate(st.gc_bytes, st.gc_secs);
        let mutators = self.running_mutators(&st);
        let live = s.live_bytes;
        let kept = s.finalization_bytes.min(live);
        let target = self
            .target_for(live - kept, g, speed, mutators)
            .saturating_add(kept)
            .min(self.max.load(Relaxed));
        let allowance = allowance_for(target, live);
        self.target.store(target, Relaxed);
        self.allowance.store(allowance, Relaxed);
        st.cpu_at_end = s.cpu_at_end;
        st.sweep_at_end = s.sweep_total;
        st.wall_at_end = Some(s.wall_at_end);
        self.decided(&mut st, live, allocated, target, allowance, g, speed)
    }

    /// Whether the mutators counted as running between pauses leave a CPU
    /// idle (background sweeping may use it; `background.rs`).
    pub fn leaves_a_cpu_idle(&self) -> bool {
        self.running_mutators(&self.state.lock()) < self.cpus
    }

    /// The mutators counted as running between pauses (see "Running
    /// mutators" in the module docs).
    fn running_mutators(&self, st: &State) -> f64 {
        let parallelism = match st.parallel_secs {
            Some((cpu, wall)) if wall > 0.0 => cpu / wall,
            _ => 1.0,
        };
        (parallelism + (1.0 - RUNNING_ROUND_UP))
            .floor()
            .clamp(1.0, self.cpus)
    }

    /// Records and returns a decision.
    #[allow(clippy::too_many_arguments)]
    fn decided(
        &self,
        st: &mut State,
        live_bytes: u64,
        allocated_bytes: u64,
        target_bytes: u64,
        allowance_bytes: u64,
        allocation_rate: f64,
        collection_speed: f64,
    ) -> HeapDecision {
        let d = HeapDecision {
            policy: self.policy,
            live_bytes,
            allocated_bytes,
            target_bytes,
            allowance_bytes,
            allocation_rate,
            collection_speed,
            running_mutators: self.running_mutators(st),
        };
        st.last = Some(d);
        d
    }

    /// After a minor collection (generational mode): the target stays as
    /// the last full collection set it, and the allowance is what the old
    /// generation (`live`, bytes believed live) leaves of it. The pause's
    /// CPU time counts as collector time at the next full collection, and
    /// its CPU and wall time (`wall`) are left out of the parallelism.
    pub fn after_minor(
        &self,
        live: u64,
        cpu_at_start: Duration,
        cpu_at_end: Duration,
        wall: Duration,
    ) -> HeapDecision {
        let mut st = self.state.lock();
        let allocated = self.allocated.swap(0, Relaxed);
        st.minor_allocated += allocated;
        st.minor_cpu += cpu_at_end.saturating_sub(cpu_at_start);
        st.minor_wall += wall;
        let target = self.target.load(Relaxed);
        let allowance = allowance_for(target, live);
        self.allowance.store(allowance, Relaxed);
        let rate = |b: f64, t: f64| if t > 0.0 { b / t } else { 0.0 };
        let (g, speed) = (
            rate(st.alloc_bytes, st.alloc_secs),
            rate(st.gc_bytes, st.gc_secs),
        );
        self.decided(&mut st, live, allocated, target, allowance, g, speed)
    }

    /// A new `max_heap` (bytes): targets from now on stay within it, and a
    /// target above it is lowered at once (the next collection comes
    /// sooner; nothing already allocated goes).
    pub fn set_max(&self, max: u64) {
        self.max.store(max, Relaxed);
        if self.target.load(Relaxed) > max || self.policy == HeapPolicy::Fixed {
            let live = self.state.lock().last.map_or(0, |d| d.live_bytes);
            self.target.store(max, Relaxed);
            let allowance = allowance_for(max, live);
            self.allowance.store(allowance, Relaxed);
        }
    }

    /// Counts at most `n` running mutators (tests: the machine's count
    /// otherwise).
    #[cfg(test)]
    fn with_cpus(mut self, n: usize) -> Self {
        self.cpus = n as f64;
        self
    }

    /// Caps the adaptive policy's headroom at `ratio` times the live bytes
    /// (`Config::headroom_max`; 0: no cap).
    pub fn with_headroom_max(mut self, ratio: f64) -> Self {
        self.headroom_max = ratio;
        self
    }

    /// The policy's formula (see the module docs) for `mutators` running
    /// mutators, capped at `max_heap`.
    fn target_for(&self, live: u64, g: f64, s: f64, mutators: f64) -> u64 {
        let want = match self.policy {
            HeapPolicy::Fixed => return self.max.load(Relaxed),
            HeapPolicy::Proportional { k } => live as f64 * (1.0 + k),
            HeapPolicy::Adaptive { scale } => {
                // Without a speed yet (a first, instant collection), be generous.
                let ratio = if s > 0.0 && g > 0.0 { g / s } else { 1.0 };
                let mut headroom = (live as f64 * scale as f64 * ratio).sqrt();
                if self.headroom_max > 0.0 {
                    let share = live as f64 * self.headroom_max;
                    let more = (mutators - 1.0) * share.min(MUTATOR_ROOM_MAX as f64);
                    headroom = headroom.min(share + more);
                }
                live as f64 + headroom
            }
        };
        let max = self.max.load(Relaxed);
        (want as u64).max(self.min.min(max)).min(max)
    }
}

fn smooth(acc: &mut f64, sample: f64) {
    *acc = if *acc == 0.0 {
        sample
    } else {
        *acc * (1.0 - SMOOTHING) + sample * SMOOTHING
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    /// The process's CPU time now: what the sizer's state starts from.
    fn cpu() -> Duration {
        crate::os::process_cpu_time()
    }

    /// The wall clock's origin of the tests' samples.
    fn wall_base() -> Instant {
        static BASE: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        *BASE.get_or_init(Instant::now)
    }

    /// A collection whose pause took `pause_ms` of CPU time from `at`.
    /// One mutator ran between the pauses: wall time passes as the CPU
    /// time does.
    fn sample(live: u64, at: Duration, pause_ms: u64) -> CollectionSample {
        parallel_sample(live, at, pause_ms, 1.0)
    }

    /// As [`sample`], with `parallel` mutators' worth of CPU time running:
    /// wall time passes (and the pause) at `1 / parallel` of the CPU time.
    fn parallel_sample(live: u64, at: Duration, pause_ms: u64, parallel: f64) -> CollectionSample {
        let wall_at_start = wall_base() + at.div_f64(parallel);
        CollectionSample {
            live_bytes: live,
            finalization_bytes: 0,
            cpu_at_start: at,
            cpu_at_end: at + Duration::from_millis(pause_ms),
            sweep_total: Duration::ZERO,
            wall_at_start,
            wall_at_end: wall_at_start + Duration::from_millis(pause_ms).div_f64(parallel),
        }
    }

    #[test]
    fn fixed_uses_the_whole_heap() {
        let h = HeapSizer::new(HeapPolicy::Fixed, 4 << 20, 100 << 20);
        assert_eq!(h.target(), 100 * MIB);
        h.add(99 * MIB);
        assert!(!h.due());
        h.add(MIB);
        assert!(h.due());
        let d = h.after_collection(&sample(40 * MIB, cpu(), 1));
        assert_eq!((d.target_bytes, d.allowance_bytes), (100 * MIB, 60 * MIB));
        assert_eq!(d.allocated_bytes, 100 * MIB);
        assert_eq!(h.allocated(), 0);
    }

    #[test]
    fn proportional_is_live_times_one_plus_k_with_floor_and_cap() {
        let h = HeapSizer::new(HeapPolicy::Proportional { k: 1.0 }, 4 << 20, 100 << 20);
        assert_eq!(h.target(), 4 * MIB);
        let t = cpu();
        assert_eq!(
            h.after_collection(&sample(10 * MIB, t, 1)).target_bytes,
            20 * MIB
        );
        assert_eq!(h.after_collection(&sample(MIB, t, 1)).target_bytes, 4 * MIB);
        let d = h.after_collection(&sample(80 * MIB, t, 1));
        assert_eq!(d.target_bytes, 100 * MIB);
        assert_eq!(d.allowance_bytes, 20 * MIB);
        // A heap full of live data still gets the minimum allowance.
        let d = h.after_collection(&sample(100 * MIB, t, 1));
        assert_eq!(d.allowance_bytes, MIN_ALLOWANCE);
    }

    #[test]
    fn adaptive_headroom_grows_with_the_square_root_of_live_and_rate_ratio() {
        let h = HeapSizer::new(HeapPolicy::Adaptive { scale: 64 << 20 }, 1 << 20, 1 << 40);
        let t0 = cpu();
        // 64 MiB allocated in 1 s of mutator time; 64 MiB live found in 1 s:
        // g = s, so the headroom is sqrt(L × scale) = L when L = scale.
        h.add(64 * MIB);
        let d = h.after_collection(&sample(64 * MIB, t0 + Duration::from_secs(1), 1000));
        let near = |x: f64, want: u64| (x - want as f64).abs() < MIB as f64;
        assert!(near(d.allocation_rate, 64 * MIB), "{d:?}");
        assert!(near(d.target_bytes as f64, 128 * MIB), "{d:?}");
        // Four times the live data: the headroom only doubles.
        h.add(64 * MIB);
        let d = h.after_collection(&sample(256 * MIB, t0 + Duration::from_secs(3), 4000));
        // Smoothed: g = 64 MiB/s still, s = (64+256)/2 MiB over (1+4)/2 s = 64 MiB/s.
        assert!(
            near((d.target_bytes - d.live_bytes) as f64, 128 * MIB),
            "{d:?}"
        );
    }

    #[test]
    fn the_adaptive_headroom_is_capped_at_a_multiple_of_the_live_bytes() {
        let h = HeapSizer::new(HeapPolicy::Adaptive { scale: 256 << 20 }, 1 << 20, 1 << 40)
            .with_headroom_max(3.0);
        let t0 = cpu();
        // 8 MiB live, allocation 64 times faster than collection: the square
        // root asks for sqrt(8 × 256 × 64) = 362 MiB of headroom; the cap
        // allows 3 × 8.
        h.add(512 * MIB);
        let d = h.after_collection(&sample(8 * MIB, t0 + Duration::from_secs(1), 1000));
        assert_eq!(d.target_bytes, 32 * MIB, "{d:?}");
        let uncapped = HeapSizer::new(HeapPolicy::Adaptive { scale: 256 << 20 }, 1 << 20, 1 << 40);
        uncapped.add(512 * MIB);
        let d = uncapped.after_collection(&sample(8 * MIB, t0 + Duration::from_secs(1), 1000));
        assert!(d.target_bytes > 100 * MIB, "{d:?}");
    }

    #[test]
    fn the_cap_grows_by_a_bounded_share_for_each_further_running_mutator() {
        let capped = |cpus| {
            HeapSizer::new(HeapPolicy::Adaptive { scale: 256 << 20 }, 1 << 20, 1 << 40)
                .with_headroom_max(2.0)
                .with_cpus(cpus)
        };
        // 1 MiB live, allocation far faster than collection: the cap
        // decides. (Pauses of 1 s every 3 s of CPU time: the square root
        // asks for more than the cap at either live size.) `parallel` is
        // the mutators' CPU time over the wall time between pauses.
        let run = |h: &HeapSizer, live: u64, parallel: f64| {
            let t0 = cpu();
            let mut d = None;
            for i in 1..=4u32 {
                h.add(512 * MIB);
                let at = t0 + Duration::from_secs(3 * u64::from(i));
                d = Some(h.after_collection(&parallel_sample(live, at, 1000, parallel)));
            }
            d.unwrap()
        };
        let one = run(&capped(8), MIB, 1.0);
        assert_eq!(
            (one.target_bytes, one.running_mutators),
            (3 * MIB, 1.0),
            "{one:?}"
        );
        // Two mutators ran between the pauses: one more share of 2 MiB.
        let two = run(&capped(8), MIB, 2.0);
        assert_eq!(
            (two.target_bytes, two.running_mutators),
            (5 * MIB, 2.0),
            "{two:?}"
        );
        // One mutator beside a half-busy thread is one; 1.8 threads are two.
        assert_eq!(run(&capped(8), MIB, 1.5).target_bytes, 3 * MIB);
        assert_eq!(run(&capped(8), MIB, 1.8).target_bytes, 5 * MIB);
        // Never more than the CPUs.
        let many = run(&capped(4), MIB, 64.0);
        assert_eq!(
            (many.target_bytes, many.running_mutators),
            (9 * MIB, 4.0),
            "{many:?}"
        );
        assert_eq!(run(&capped(1), MIB, 2.0).target_bytes, 3 * MIB);
        // A large heap's share is bounded: 64 MiB live, two mutators.
        let large = run(&capped(8), 64 * MIB, 2.0);
        assert_eq!(
            large.target_bytes,
            192 * MIB + MUTATOR_ROOM_MAX,
            "{large:?}"
        );
    }

    #[test]
    fn minor_pauses_between_full_collections_do_not_hide_running_mutators() {
        let h = HeapSizer::new(HeapPolicy::Adaptive { scale: 256 << 20 }, 1 << 20, 1 << 40)
            .with_headroom_max(2.0)
            .with_cpus(8);
        let (t0, w0) = (cpu(), wall_base());
        // Every 10 s of wall time: two mutators run 4 s (8 s of CPU), a
        // minor pause takes 5 s of wall time on 8 workers (40 s of CPU), a
        // full one 1 s on one.
        let mut d = None;
        for i in 0..4u32 {
            let (cpu0, wall0) = (
                t0 + Duration::from_secs(49 * u64::from(i)),
                w0 + Duration::from_secs(10 * u64::from(i)),
            );
            h.add(512 * MIB);
            let minor_cpu = cpu0 + Duration::from_secs(4);
            h.after_minor(
                MIB,
                minor_cpu,
                minor_cpu + Duration::from_secs(40),
                Duration::from_secs(5),
            );
            h.add(512 * MIB);
            let at = minor_cpu + Duration::from_secs(44);
            let wall_at_start = wall0 + Duration::from_secs(9);
            d = Some(h.after_collection(&CollectionSample {
                live_bytes: MIB,
                finalization_bytes: 0,
                cpu_at_start: at,
                cpu_at_end: at + Duration::from_secs(1),
                sweep_total: Duration::ZERO,
                wall_at_start,
                wall_at_end: wall_at_start + Duration::from_secs(1),
            }));
        }
        let d = d.unwrap();
        assert_eq!(
            (d.running_mutators, d.target_bytes),
            (2.0, 5 * MIB),
            "{d:?}"
        );
    }
}
