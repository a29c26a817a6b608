//! Heap configuration: every knob, its default, and its environment variable.
//!
//! | field | default | variable | meaning |
//! |---|---|---|---|
//! | `max_heap` | 4 GiB | `MOSAIC_MAX_HEAP` | hard cap: the heap (small pages + large objects) never exceeds it; the `fixed` policy's target. Accepts `K`/`M`/`G` suffixes. `Heap::set_max_heap` lowers it at run time (and raises it back up to this) |
//! | `heap_policy` | `adaptive` (scale 256 MiB) | `MOSAIC_HEAP_POLICY` | when to collect: `fixed`, `proportional[:k]` or `adaptive[:scale]` (see [`HeapPolicy`]) |
//! | `headroom_max` | 3.0 | `MOSAIC_HEADROOM_MAX` | the adaptive policy's headroom is at most this many times the live bytes plus one such share, at most 4 MiB, per further thread that ran in parallel between collections, at most the CPUs (target ≤ live × (1 + this) + (n − 1) × min(live × this, 4 MiB) for n running threads, then at least `heap_min`): the square-root rule alone gives a small live set under a high allocation rate many times its size (a 41 MB soak at 4 threads sat at 7–9×). 0: no cap |
//! | `heap_min` | 1 MiB | `MOSAIC_HEAP_MIN` | the target never goes below this (and it is the target before the first collection); at most `max_heap`: `MOSAIC_MAX_HEAP` below the default heap_min lowers heap_min with it, an explicit `MOSAIC_HEAP_MIN` above `MOSAIC_MAX_HEAP` is an error |
//! | `size_classes` | `Mosaic` | `MOSAIC_SIZE_CLASSES` | `mosaic` (16 B granules to 128 B, then 4 per doubling to 8 KiB), `ruby` (40, 80, 160, 320, 640), or a comma list |
//! | `initial_slots` | 10 000 | `MOSAIC_INITIAL_SLOTS` | slots each pool may take as fresh pages before it must sweep first (at least one page, at most 4 MiB per pool) |
//! | `growth_factor` | 1.8 | `MOSAIC_GROWTH_FACTOR` | a churning pool short of free slots multiplies its page budget by this |
//! | `growth_max` | 64 MiB | `MOSAIC_GROWTH_MAX` | most bytes one growth step may add to a pool's budget (0: unbounded) |
//! | `free_min_ratio` | 0.20 | `MOSAIC_FREE_MIN` | below this free-slot ratio after sweeping, a churning pool grows |
//! | `free_goal_ratio` | 0.40 | `MOSAIC_FREE_GOAL` | free ratio a shrinking pool aims for |
//! | `free_max_ratio` | 0.65 | `MOSAIC_FREE_MAX` | above this free ratio a pool's budget shrinks and spare pages are decommitted |
//! | `stable_ratio` | 0.10 | `MOSAIC_STABLE_RATIO` | a pool that handed out fewer than this fraction of its slots since the last collection is *stable* and may run full without growing |
//! | `lazy_sweep` | true | `MOSAIC_LAZY_SWEEP` | sweep pages on demand after a pause (false: sweep everything inside the pause) |
//! | `background_sweep` | true | `MOSAIC_BACKGROUND_SWEEP` | between pauses, while the heap counts fewer running mutators than CPUs, a GC worker sweeps unswept pages ahead of the mutators and clears their free slots (pages with objects that asked for cleanup are left to the mutators); needs a GC worker besides the collecting thread (`gc_threads` other than 1) |
//! | `sweep_step_pages` | 4 | `MOSAIC_SWEEP_STEP` | pages an allocation may sweep looking for space before taking a fresh page (while the pool is under budget) |
//! | `verify` | false | `MOSAIC_VERIFY` | check every reference after each marking; panic with a diagnostic on the first bad one; the sweep fills freed small-object slots with `0xA5` bytes (a missed root then reads garbage at once) |
//! | `generational` | false | `MOSAIC_GENERATIONAL` | sticky-mark-bit generations: most collections are minor (mark from the roots, the remembered set and the objects allocated without `AllocFlags::BARRIERED`; sweep only pages allocated into since the last collection), full ones when the heap policy's target nears or a minor pays too little (`collect/generations.rs`). Safe without barriers: unbarriered objects are rescanned by every minor collection |
//! | `dirty_pages` | false | `MOSAIC_DIRTY_PAGES` | generational mode for programs without barriers: a minor collection rescans only the unbarriered old objects on OS pages written since the last collection, read from Linux's soft-dirty bits (`/proc/self/pagemap`, cleared through `/proc/self/clear_refs` at the end of every collection); without kernel support, a warning and every such object is rescanned. Needs `generational` |
//! | `stress` | 0 | `MOSAIC_STRESS` | collect every N allocations (0: off) |
//! | `gc_threads` | 0 | `MOSAIC_GC_THREADS` | GC workers, the collecting thread included (0: the machine's available parallelism; 1: the collecting thread alone) |
//! | `parallel_min_live` | 4 MiB | `MOSAIC_PARALLEL_MIN_LIVE` | a collection runs on every GC worker only if the previous one found at least this many bytes live (or the heap has committed 8 times as much, or the previous collection's marking took 0.5 ms or more on one thread: `collect::heap::PARALLEL_MIN_MARK`; both figures scaled by how much the pages in use grew since the previous pause); smaller ones run on the collecting thread alone, since waking the workers costs more than they save (about 100 µs a pause on 2 cores). 0: always every worker |
//! | `parallel_help_us` | 100 | `MOSAIC_PARALLEL_HELP_US` | a collection that runs on the collecting thread alone (see `parallel_min_live`) hands the rest of its marking to every GC worker once it has marked this many microseconds with enough work on its stack to share (judged by the previous collections, one that keeps far more than they did would otherwise run its whole length on one thread); 0: as soon as there is enough to share |
//! | `page_resource` | `LockFree` | `MOSAIC_PAGE_RESOURCE` | how free dirty pages are kept: `lockfree` (a lock-free queue fed through per-thread release buffers) or `mutex` (a free list behind one lock, taken per page: seed 004's baseline, for comparison) |
//! | `trace` | none | `MOSAIC_TRACE` | write a Chrome trace-event JSON timeline of every pause and lazy sweep step to this path when the heap is dropped (opens in Perfetto and chrome://tracing) |
//! | `compact` | `Never` | `MOSAIC_COMPACT` | when collections compact: `never` (only `Mutator::compact`), `auto` (pools whose free slots in partly used pages reach their live slots) or `always` (see [`CompactPolicy`]) |
//! | `compact_toward` | `PinnedFirst` | `MOSAIC_COMPACT_TOWARD` | which pages a compaction fills: `pinned` (the pages with the most pinned objects first, seed 001) or `address` (the lowest addresses first, for comparison) |
//! | `verify_compaction` | false | `MOSAIC_VERIFY_COMPACTION` | every collection moves every movable object to fresh pages, then checks that no reference still holds an old address (panics naming the stale slot) |
//! | `ephemeron_header` | 0 | — | bytes of embedder header (a multiple of 8, at most 512) at the start of every ephemeron, before its key and value words: `trace` sees the ephemeron and visits the header's references, never the key or value (see `Mutator::alloc_ephemeron`) |
//! | `stall_warning_ms` | 1000 | `MOSAIC_STALL_WARNING_MS` | a collection that has waited this long for mutators to reach a safepoint prints, once, which mutators and threads it waits for (0: never) |
//!
//! The heap policy decides *when* to collect (`collect/heap_sizing.rs`);
//! the pool knobs (`initial_slots` to `stable_ratio`) only decide how the
//! heap's pages are shared among pools: a pool under its page budget takes
//! fresh pages after a bounded lazy sweep, a pool at its budget sweeps all
//! its pages before taking more (seed 000). Neither ever triggers a
//! collection.
//!
//! An unknown `MOSAIC_*` variable (a misspelling such as `MOSAIC_STRES`) is
//! reported once per process on stderr, with the closest known name.

use crate::error::Error;
use crate::pool::{GrowthPolicy, SizeClasses};
use crate::space::{PageResourceKind, PAGE_SIZE};

/// The most header bytes an ephemeron may have (`Config::ephemeron_header`).
pub const MAX_EPHEMERON_HEADER: usize = 512;

/// Which size-class table a heap uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SizeClassPreset {
    /// 16-byte granules to 128 B, then four classes per doubling to 8 KiB.
    Mosaic,
    /// Ruby's five size pools: 40, 80, 160, 320, 640 bytes.
    Ruby,
    /// An explicit ascending list of slot sizes (multiples of 8, 16 B to 16 KiB).
    Custom(Vec<usize>),
}

/// When the heap collects: how the heap target is set after each
/// collection from the bytes found live `L`. A collection is due when the
/// bytes allocated since the last one reach `target − L`. Every target is
/// at least `heap_min` and at most `max_heap`, which stays a hard cap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HeapPolicy {
    /// Target = `max_heap`: use the whole configured heap and collect when
    /// it is full (a fixed heap: Whippet's, `-Xms` = `-Xmx`).
    Fixed,
    /// Target = `max(L × (1 + k), heap_min)`: `k` = 1 is Go's `GOGC=100`.
    /// `k` is between 0.05 and 100.
    Proportional { k: f64 },
    /// MemBalancer's square-root rule (Kirisame et al., PLDI 2022): target
    /// = `L + sqrt(L × scale × g / s)`, with `g` the allocation rate and `s`
    /// the collection speed measured online. `scale` (bytes, 1 KiB to
    /// 1 TiB) is the tuning constant: with `g = s`, a heap of `scale` live
    /// bytes gets as much again as headroom; larger heaps get
    /// proportionally less.
    Adaptive { scale: usize },
}

impl HeapPolicy {
    /// `k` of the proportional policy when none is given.
    pub const DEFAULT_K: f64 = 1.0;
    /// `scale` of the adaptive policy when none is given.
    pub const DEFAULT_SCALE: usize = 256 << 20;

    /// The policy's name: `fixed`, `proportional` or `adaptive`.
    pub fn name(&self) -> &'static str {
        match self {
            HeapPolicy::Fixed => "fixed",
            HeapPolicy::Proportional { .. } => "proportional",
            HeapPolicy::Adaptive { .. } => "adaptive",
        }
    }

    /// Parses `fixed`, `proportional`, `proportional:0.5`, `adaptive` or
    /// `adaptive:64M`.
    pub fn parse(s: &str) -> Option<HeapPolicy> {
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n.trim(), Some(a.trim())),
            None => (s.trim(), None),
        };
        match name.to_ascii_lowercase().as_str() {
            "fixed" if arg.is_none() => Some(HeapPolicy::Fixed),
            "proportional" => Some(HeapPolicy::Proportional {
                k: arg.map_or(Some(Self::DEFAULT_K), |a| a.parse().ok())?,
            }),
            "adaptive" => Some(HeapPolicy::Adaptive {
                scale: arg.map_or(Some(Self::DEFAULT_SCALE), parse_bytes)?,
            }),
            _ => None,
        }
    }

    fn validate(&self) -> Result<(), String> {
        match *self {
            HeapPolicy::Proportional { k } if !(0.05..=100.0).contains(&k) => Err(format!(
                "heap_policy proportional: k {k} must be between 0.05 and 100"
            )),
            HeapPolicy::Adaptive { scale } if !(1 << 10..=1 << 40).contains(&scale) => Err(
                format!("heap_policy adaptive: scale {scale} must be between 1 KiB and 1 TiB"),
            ),
            _ => Ok(()),
        }
    }
}

/// Heap configuration. Build with `Config::default()` (or
/// [`Config::from_env`]) and adjust fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub max_heap: usize,
    pub heap_policy: HeapPolicy,
    pub headroom_max: f64,
    pub heap_min: usize,
    pub size_classes: SizeClassPreset,
    pub initial_slots: usize,
    pub growth_factor: f64,
    pub growth_max: usize,
    pub free_min_ratio: f64,
    pub free_goal_ratio: f64,
    pub free_max_ratio: f64,
    pub stable_ratio: f64,
    pub lazy_sweep: bool,
    pub background_sweep: bool,
    pub sweep_step_pages: usize,
    pub verify: bool,
    pub generational: bool,
    pub dirty_pages: bool,
    pub stress: u64,
    pub gc_threads: usize,
    pub parallel_min_live: usize,
    pub parallel_help_us: u64,
    pub page_resource: PageResourceKind,
    pub trace: Option<std::path::PathBuf>,
    pub stall_warning_ms: u64,
    pub compact: CompactPolicy,
    pub compact_toward: CompactOrder,
    pub verify_compaction: bool,
    pub ephemeron_header: usize,
}

/// When collections compact (see the module table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactPolicy {
    /// Only when asked (`Mutator::compact`). The default: moving objects
    /// requires every reference to be reported through `trace` and roots.
    Never,
    /// Each collection compacts the pools whose free slots in partly used
    /// pages are at least their live slots (and two pages' worth).
    Auto,
    /// Every collection compacts every pool.
    Always,
}

/// Which pages a compaction fills and which it empties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactOrder {
    /// Pages with the most pinned objects are filled first, those with the
    /// fewest emptied (seed 001: more pages end empty).
    PinnedFirst,
    /// Lowest addresses filled first, highest emptied.
    Address,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_heap: 4 << 30,
            // Chosen by the heap-size sweep in BENCHMARKS.md: its collection
            // count falls as the heap limit grows, and it used fewer
            // collections than the Boehm collector at every limit.
            headroom_max: 3.0,
            heap_policy: HeapPolicy::Adaptive {
                scale: HeapPolicy::DEFAULT_SCALE,
            },
            heap_min: 1 << 20,
            size_classes: SizeClassPreset::Mosaic,
            initial_slots: 10_000,
            growth_factor: 1.8,
            growth_max: 64 << 20,
            free_min_ratio: 0.20,
            free_goal_ratio: 0.40,
            free_max_ratio: 0.65,
            stable_ratio: 0.10,
            lazy_sweep: true,
            background_sweep: true,
            sweep_step_pages: 4,
            verify: false,
            generational: false,
            dirty_pages: false,
            stress: 0,
            gc_threads: 0,
            parallel_min_live: 4 << 20,
            parallel_help_us: 100,
            page_resource: PageResourceKind::LockFree,
            trace: None,
            stall_warning_ms: 1000,
            compact: CompactPolicy::Never,
            compact_toward: CompactOrder::PinnedFirst,
            verify_compaction: false,
            ephemeron_header: 0,
        }
    }
}

impl Config {
    /// The defaults, overridden by any `MOSAIC_*` environment variable set.
    pub fn from_env() -> Result<Config, Error> {
        Config::default().with_env()
    }

    /// Overrides fields from `MOSAIC_*` environment variables. Warns once
    /// per process about `MOSAIC_*` variables it does not know.
    pub fn with_env(self) -> Result<Config, Error> {
        // (Parsing ratios computes with doubles: `os/float_env.rs`.)
        crate::os::with_default_float_env(|| self.read_env())
    }

    fn read_env(self) -> Result<Config, Error> {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            let names = std::env::vars_os().filter_map(|(k, _)| k.into_string().ok());
            for warning in unknown_variables(names) {
                eprintln!("mosaic: {warning}");
            }
        });
        self.with_vars(|k| std::env::var(k).ok())
    }

    /// Overrides fields from a variable lookup (testable without touching the environment).
    pub fn with_vars(mut self, get: impl Fn(&str) -> Option<String>) -> Result<Config, Error> {
        fn bad(var: &str, v: &str, what: &str) -> Error {
            Error::Config(format!("{var}={v:?}: expected {what}"))
        }
        macro_rules! take {
            ($var:literal, $field:expr, $parse:expr, $what:literal) => {
                if let Some(v) = get($var) {
                    $field = $parse(v.trim()).ok_or_else(|| bad($var, &v, $what))?;
                }
            };
        }
        take!(
            "MOSAIC_MAX_HEAP",
            self.max_heap,
            parse_bytes,
            "a size like 512M or 4G"
        );
        take!(
            "MOSAIC_INITIAL_SLOTS",
            self.initial_slots,
            |s: &str| s.parse().ok(),
            "a slot count"
        );
        take!(
            "MOSAIC_GROWTH_FACTOR",
            self.growth_factor,
            |s: &str| s.parse().ok(),
            "a number"
        );
        take!("MOSAIC_GROWTH_MAX", self.growth_max, parse_bytes, "a size");
        take!(
            "MOSAIC_FREE_MIN",
            self.free_min_ratio,
            |s: &str| s.parse().ok(),
            "a ratio"
        );
        take!(
            "MOSAIC_FREE_GOAL",
            self.free_goal_ratio,
            |s: &str| s.parse().ok(),
            "a ratio"
        );
        take!(
            "MOSAIC_FREE_MAX",
            self.free_max_ratio,
            |s: &str| s.parse().ok(),
            "a ratio"
        );
        take!(
            "MOSAIC_STABLE_RATIO",
            self.stable_ratio,
            |s: &str| s.parse().ok(),
            "a ratio"
        );
        take!(
            "MOSAIC_HEAP_POLICY",
            self.heap_policy,
            HeapPolicy::parse,
            "fixed, proportional[:k] or adaptive[:scale], e.g. proportional:0.5 or adaptive:64M"
        );
        // A max_heap below a heap_min nobody set lowers heap_min with it
        // (MOSAIC_MAX_HEAP=512K alone is a valid configuration); an explicit
        // MOSAIC_HEAP_MIN above the maximum is a conflict validate reports.
        if get("MOSAIC_HEAP_MIN").is_none() && self.heap_min > self.max_heap {
            self.heap_min = self.max_heap;
        }
        take!("MOSAIC_HEAP_MIN", self.heap_min, parse_bytes, "a size");
        take!(
            "MOSAIC_HEADROOM_MAX",
            self.headroom_max,
            |s: &str| s.parse().ok(),
            "a ratio to the live bytes, e.g. 3 (0: no cap)"
        );
        take!("MOSAIC_LAZY_SWEEP", self.lazy_sweep, parse_bool, "0 or 1");
        take!(
            "MOSAIC_BACKGROUND_SWEEP",
            self.background_sweep,
            parse_bool,
            "0 or 1"
        );
        take!(
            "MOSAIC_SWEEP_STEP",
            self.sweep_step_pages,
            |s: &str| s.parse().ok(),
            "a page count"
        );
        take!("MOSAIC_VERIFY", self.verify, parse_bool, "0 or 1");
        take!(
            "MOSAIC_GENERATIONAL",
            self.generational,
            parse_bool,
            "0 or 1"
        );
        take!("MOSAIC_DIRTY_PAGES", self.dirty_pages, parse_bool, "0 or 1");
        take!(
            "MOSAIC_STRESS",
            self.stress,
            |s: &str| s.parse().ok(),
            "an allocation count"
        );
        take!(
            "MOSAIC_GC_THREADS",
            self.gc_threads,
            |s: &str| s.parse().ok(),
            "a thread count (0: one per available core)"
        );
        take!(
            "MOSAIC_PARALLEL_MIN_LIVE",
            self.parallel_min_live,
            parse_bytes,
            "a size (0: every collection on every worker)"
        );
        take!(
            "MOSAIC_PARALLEL_HELP_US",
            self.parallel_help_us,
            |s: &str| s.parse().ok(),
            "microseconds (0: at once)"
        );
        take!(
            "MOSAIC_PAGE_RESOURCE",
            self.page_resource,
            |s: &str| match s.to_ascii_lowercase().as_str() {
                "lockfree" | "lock-free" => Some(PageResourceKind::LockFree),
                "mutex" => Some(PageResourceKind::Mutex),
                _ => None,
            },
            "lockfree or mutex"
        );
        take!(
            "MOSAIC_TRACE",
            self.trace,
            |s: &str| (!s.is_empty()).then(|| Some(s.into())),
            "a file path"
        );
        take!(
            "MOSAIC_COMPACT",
            self.compact,
            |s: &str| match s.to_ascii_lowercase().as_str() {
                "never" => Some(CompactPolicy::Never),
                "auto" => Some(CompactPolicy::Auto),
                "always" => Some(CompactPolicy::Always),
                _ => None,
            },
            "never, auto or always"
        );
        take!(
            "MOSAIC_COMPACT_TOWARD",
            self.compact_toward,
            |s: &str| match s.to_ascii_lowercase().as_str() {
                "pinned" => Some(CompactOrder::PinnedFirst),
                "address" => Some(CompactOrder::Address),
                _ => None,
            },
            "pinned or address"
        );
        take!(
            "MOSAIC_VERIFY_COMPACTION",
            self.verify_compaction,
            parse_bool,
            "0 or 1"
        );
        take!(
            "MOSAIC_STALL_WARNING_MS",
            self.stall_warning_ms,
            |s: &str| s.parse().ok(),
            "milliseconds"
        );
        take!(
            "MOSAIC_SIZE_CLASSES",
            self.size_classes,
            parse_preset,
            "mosaic, ruby or a comma list of sizes"
        );
        if let (Some(v), Err(why)) = (get("MOSAIC_SIZE_CLASSES"), self.classes()) {
            return Err(Error::Config(format!("MOSAIC_SIZE_CLASSES={v:?}: {why}")));
        }
        self.validate()?;
        Ok(self)
    }

    /// Checks every value; the error names the field and the allowed range.
    pub fn validate(&self) -> Result<(), Error> {
        let err = |m: String| Err(Error::Config(m));
        if self.max_heap < PAGE_SIZE || self.max_heap > 1 << 40 {
            return err(format!(
                "max_heap {} must be between 64 KiB and 1 TiB",
                self.max_heap
            ));
        }
        self.heap_policy.validate().map_err(Error::Config)?;
        if !(self.headroom_max == 0.0 || (0.05..=1000.0).contains(&self.headroom_max)) {
            return err(format!(
                "headroom_max {} must be 0 (no cap) or between 0.05 and 1000",
                self.headroom_max
            ));
        }
        if self.heap_min < PAGE_SIZE || self.heap_min > self.max_heap {
            return err(format!(
                "heap_min {} must be between 64 KiB and max_heap ({}); lower heap_min \
                 (MOSAIC_HEAP_MIN) with max_heap, or raise max_heap (MOSAIC_MAX_HEAP)",
                self.heap_min, self.max_heap
            ));
        }
        if self.gc_threads > MAX_GC_THREADS {
            return err(format!(
                "gc_threads {} must be at most {MAX_GC_THREADS} (0: one per available core)",
                self.gc_threads
            ));
        }
        if !(self.growth_factor >= 1.0 && self.growth_factor <= 16.0) {
            return err(format!(
                "growth_factor {} must be between 1 and 16",
                self.growth_factor
            ));
        }
        let (a, b, c) = (
            self.free_min_ratio,
            self.free_goal_ratio,
            self.free_max_ratio,
        );
        if !(0.0 < a && a < b && b < c && c < 1.0) {
            return err(format!(
                "need 0 < free_min_ratio ({a}) < free_goal_ratio ({b}) < free_max_ratio ({c}) < 1"
            ));
        }
        if !(0.0..=1.0).contains(&self.stable_ratio) {
            return err(format!(
                "stable_ratio {} must be between 0 and 1",
                self.stable_ratio
            ));
        }
        if self.ephemeron_header % 8 != 0 || self.ephemeron_header > MAX_EPHEMERON_HEADER {
            return err(format!(
                "ephemeron_header {} must be a multiple of 8 of at most {MAX_EPHEMERON_HEADER}",
                self.ephemeron_header
            ));
        }
        if self.sweep_step_pages == 0 {
            return err("sweep_step_pages must be at least 1".into());
        }
        self.classes().map(|_| ()).map_err(Error::Config)
    }

    /// The size-class table this configuration selects.
    pub fn classes(&self) -> Result<SizeClasses, String> {
        match &self.size_classes {
            SizeClassPreset::Mosaic => Ok(SizeClasses::mosaic_default()),
            SizeClassPreset::Ruby => Ok(SizeClasses::ruby()),
            SizeClassPreset::Custom(v) => SizeClasses::new(v),
        }
    }

    /// How long a collection waits for mutators before it says so.
    pub fn stall_warning(&self) -> Option<std::time::Duration> {
        (self.stall_warning_ms > 0).then(|| std::time::Duration::from_millis(self.stall_warning_ms))
    }

    /// The growth policy's knobs.
    pub fn growth_policy(&self) -> GrowthPolicy {
        GrowthPolicy {
            initial_slots: self.initial_slots,
            factor: self.growth_factor,
            max_growth_bytes: self.growth_max,
            free_min: self.free_min_ratio,
            free_goal: self.free_goal_ratio,
            free_max: self.free_max_ratio,
            stable_ratio: self.stable_ratio,
        }
    }
}

/// Most GC worker threads a heap may have.
pub const MAX_GC_THREADS: usize = 256;

impl Config {
    /// The number of GC workers this configuration asks for: `gc_threads`,
    /// or the available parallelism when it is 0.
    pub fn gc_workers(&self) -> usize {
        match self.gc_threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
        .min(MAX_GC_THREADS)
    }
}

/// Every `MOSAIC_*` variable Mosaic reads: the configuration above, and the
/// ones its own tests and tools read.
const KNOWN_VARIABLES: &[&str] = &[
    "MOSAIC_MAX_HEAP",
    "MOSAIC_HEAP_POLICY",
    "MOSAIC_HEAP_MIN",
    "MOSAIC_HEADROOM_MAX",
    "MOSAIC_SIZE_CLASSES",
    "MOSAIC_INITIAL_SLOTS",
    "MOSAIC_GROWTH_FACTOR",
    "MOSAIC_GROWTH_MAX",
    "MOSAIC_FREE_MIN",
    "MOSAIC_FREE_GOAL",
    "MOSAIC_FREE_MAX",
    "MOSAIC_STABLE_RATIO",
    "MOSAIC_LAZY_SWEEP",
    "MOSAIC_BACKGROUND_SWEEP",
    "MOSAIC_SWEEP_STEP",
    "MOSAIC_VERIFY",
    "MOSAIC_GENERATIONAL",
    "MOSAIC_DIRTY_PAGES",
    "MOSAIC_STRESS",
    "MOSAIC_GC_THREADS",
    "MOSAIC_PARALLEL_MIN_LIVE",
    "MOSAIC_PARALLEL_HELP_US",
    "MOSAIC_PAGE_RESOURCE",
    "MOSAIC_TRACE",
    "MOSAIC_STALL_WARNING_MS",
    "MOSAIC_COMPACT",
    "MOSAIC_COMPACT_TOWARD",
    "MOSAIC_VERIFY_COMPACTION",
    // Tests and tools.
    "MOSAIC_MODEL_CASES",
    "MOSAIC_BLESS",
    "MOSAIC_LIB_DIR",
    "MOSAIC_TEST_STALL_CHILD",
];

/// One warning per unknown `MOSAIC_*` name among `names`, naming the
/// closest known variable when one is close.
fn unknown_variables(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    for name in names {
        if !name.starts_with("MOSAIC_") || KNOWN_VARIABLES.contains(&name.as_str()) {
            continue;
        }
        let closest = KNOWN_VARIABLES
            .iter()
            .map(|k| (edit_distance(&name, k), *k))
            .min()
            .filter(|&(d, _)| d <= 3);
        out.push(match closest {
            Some((_, k)) => format!("unknown variable {name} is ignored (did you mean {k}?)"),
            None => format!("unknown variable {name} is ignored"),
        });
    }
    out
}

/// Levenshtein distance (names are short).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push(
                (prev[j] + usize::from(ca != *cb))
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Parses `123`, `64K`, `512M`, `4G` (also `KiB`/`MB`-style suffixes).
pub fn parse_bytes(s: &str) -> Option<usize> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: usize = s[..digits].parse().ok()?;
    let shift = match s[digits..].trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

fn parse_preset(s: &str) -> Option<SizeClassPreset> {
    match s.to_ascii_lowercase().as_str() {
        "mosaic" | "default" => Some(SizeClassPreset::Mosaic),
        "ruby" => Some(SizeClassPreset::Ruby),
        list => list
            .split(',')
            .map(|x| x.trim().parse().ok())
            .collect::<Option<Vec<usize>>>()
            .map(SizeClassPreset::Custom),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn environment_overrides_defaults() {
        let c = Config::default()
            .with_vars(vars(&[
                ("MOSAIC_MAX_HEAP", "256M"),
                ("MOSAIC_SIZE_CLASSES", "ruby"),
                ("MOSAIC_VERIFY", "1"),
                ("MOSAIC_STRESS", "100"),
                ("MOSAIC_GROWTH_FACTOR", "2.5"),
                ("MOSAIC_LAZY_SWEEP", "off"),
            ]))
            .unwrap();
        assert_eq!(c.max_heap, 256 << 20);
        assert_eq!(c.size_classes, SizeClassPreset::Ruby);
        assert!(c.verify && !c.lazy_sweep);
        assert_eq!((c.stress, c.growth_factor), (100, 2.5));
        let c = Config::default()
            .with_vars(vars(&[("MOSAIC_SIZE_CLASSES", "16, 48,96")]))
            .unwrap();
        assert_eq!(c.classes().unwrap().sizes(), &[16, 48, 96]);
    }

    #[test]
    fn bad_values_name_the_variable() {
        let e = Config::default()
            .with_vars(vars(&[("MOSAIC_MAX_HEAP", "lots")]))
            .unwrap_err();
        assert!(e.to_string().contains("MOSAIC_MAX_HEAP=\"lots\""), "{e}");
        let e = Config::default()
            .with_vars(vars(&[("MOSAIC_FREE_MIN", "0.9")]))
            .unwrap_err();
        assert!(e.to_string().contains("free_min_ratio"), "{e}");
        let e = Config::default()
            .with_vars(vars(&[("MOSAIC_SIZE_CLASSES", "17")]))
            .unwrap_err();
        assert!(e.to_string().contains("multiple of 8"), "{e}");
        assert!(e.to_string().contains("MOSAIC_SIZE_CLASSES=\"17\""), "{e}");
    }

    #[test]
    fn misspelled_variables_are_reported_with_the_closest_name() {
        let names = [
            "MOSAIC_STRES",
            "MOSAIC_VERIFY",
            "PATH",
            "MOSAIC_ZZZZZZZZZZZZ",
        ];
        let w = unknown_variables(names.iter().map(|s| s.to_string()));
        assert_eq!(
            w,
            vec![
                "unknown variable MOSAIC_STRES is ignored (did you mean MOSAIC_STRESS?)"
                    .to_string(),
                "unknown variable MOSAIC_ZZZZZZZZZZZZ is ignored".to_string(),
            ]
        );
        let c = Config::default()
            .with_vars(vars(&[("MOSAIC_STALL_WARNING_MS", "0")]))
            .unwrap();
        assert_eq!(c.stall_warning(), None);
        assert_eq!(
            Config::default().stall_warning(),
            Some(std::time::Duration::from_secs(1))
        );
    }

    #[test]
    fn heap_policies_parse_and_bad_ones_are_clear_errors() {
        let get = |v: &str| {
            Config::default()
                .with_vars(vars(&[("MOSAIC_HEAP_POLICY", v)]))
                .map(|c| c.heap_policy)
        };
        assert_eq!(get("fixed").unwrap(), HeapPolicy::Fixed);
        assert_eq!(
            get("Proportional").unwrap(),
            HeapPolicy::Proportional { k: 1.0 }
        );
        assert_eq!(
            get("proportional:0.5").unwrap(),
            HeapPolicy::Proportional { k: 0.5 }
        );
        assert_eq!(
            get("adaptive").unwrap(),
            HeapPolicy::Adaptive { scale: 256 << 20 }
        );
        assert_eq!(
            get("adaptive:64M").unwrap(),
            HeapPolicy::Adaptive { scale: 64 << 20 }
        );
        for bad in ["gogc", "fixed:3", "proportional:x", "adaptive:lots", ""] {
            let e = get(bad).unwrap_err().to_string();
            assert!(
                e.contains("MOSAIC_HEAP_POLICY") && e.contains("fixed, proportional"),
                "{e}"
            );
        }
        let e = get("proportional:0").unwrap_err().to_string();
        assert!(e.contains("between 0.05 and 100"), "{e}");
        let e = get("adaptive:1").unwrap_err().to_string();
        assert!(e.contains("between 1 KiB and 1 TiB"), "{e}");
        let e = Config::default()
            .with_vars(vars(&[
                ("MOSAIC_HEAP_MIN", "8G"),
                ("MOSAIC_MAX_HEAP", "1G"),
            ]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("heap_min") && e.contains("MOSAIC_MAX_HEAP"),
            "{e}"
        );
        // The maximum alone lowers the default minimum with it.
        let c = Config::default()
            .with_vars(vars(&[("MOSAIC_MAX_HEAP", "512K")]))
            .unwrap();
        assert_eq!((c.max_heap, c.heap_min), (512 << 10, 512 << 10));
        c.validate().unwrap();
        // A maximum above the default minimum leaves it alone.
        let c = Config::default()
            .with_vars(vars(&[("MOSAIC_MAX_HEAP", "64M")]))
            .unwrap();
        assert_eq!(c.heap_min, Config::default().heap_min);
    }

    #[test]
    fn byte_sizes_parse_with_suffixes() {
        assert_eq!(parse_bytes("64K"), Some(65536));
        assert_eq!(parse_bytes("3 GiB"), Some(3 << 30));
        assert_eq!(parse_bytes("12"), Some(12));
        assert_eq!(parse_bytes("12Q"), None);
        assert_eq!(parse_bytes("99999999999T"), None);
    }
}
