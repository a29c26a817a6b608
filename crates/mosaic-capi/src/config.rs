//! `mosaic_config`: the C view of `mosaic::Config`.

use mosaic_core::{
    CompactOrder, CompactPolicy, Config, HeapPolicy, PageResourceKind, SizeClassPreset,
};

use crate::error::{clear_error, invalid, mosaic_error, report, set_error};

/// `size_classes`: the default table (16-byte granules to 128 B, then four
/// classes per doubling to 8 KiB).
pub const MOSAIC_CLASSES_DEFAULT: u32 = 0;
/// `size_classes`: Ruby's five pools: 40, 80, 160, 320, 640 bytes.
pub const MOSAIC_CLASSES_RUBY: u32 = 1;
/// `size_classes`: the list `class_sizes[0 .. class_count]`.
pub const MOSAIC_CLASSES_CUSTOM: u32 = 2;
/// `heap_policy`: collect when the heap reaches `max_heap`.
pub const MOSAIC_HEAP_FIXED: u32 = 0;
/// `heap_policy`: target = max(live × (1 + `heap_proportional_k`), `heap_min`).
pub const MOSAIC_HEAP_PROPORTIONAL: u32 = 1;
/// `heap_policy`: MemBalancer's target = live + sqrt(live ×
/// `heap_adaptive_scale` × allocation rate / collection speed).
pub const MOSAIC_HEAP_ADAPTIVE: u32 = 2;
/// `page_resource`: free pages in a lock-free queue fed through per-thread
/// release buffers.
pub const MOSAIC_PAGES_LOCKFREE: u32 = 0;
/// `page_resource`: free pages in a list behind one mutex (the baseline of
/// the release-phase benchmark).
pub const MOSAIC_PAGES_MUTEX: u32 = 1;
/// When collections compact: one of the `MOSAIC_COMPACT_NEVER`,
/// `MOSAIC_COMPACT_AUTO` or `MOSAIC_COMPACT_ALWAYS` values (`compact` in
/// `mosaic_config`).
pub type mosaic_compact_policy = u32;
/// `compact`: only `mosaic_compact` and `mosaic_compact_toward` compact
/// (the default: moving objects requires every reference to be reported
/// through `trace`, `roots` and `mutator_roots`).
pub const MOSAIC_COMPACT_NEVER: mosaic_compact_policy = 0;
/// `compact`: each collection also compacts the size pools whose free
/// slots in partly used pages reach their live slots (and two pages'
/// worth).
pub const MOSAIC_COMPACT_AUTO: mosaic_compact_policy = 1;
/// `compact`: every collection compacts every size pool.
pub const MOSAIC_COMPACT_ALWAYS: mosaic_compact_policy = 2;
/// Which pages a compaction fills and which it empties: one of the
/// `MOSAIC_COMPACT_PINNED_FIRST` or `MOSAIC_COMPACT_ADDRESS` values
/// (`compact_toward` in `mosaic_config`, `mosaic_compact_toward`).
pub type mosaic_compact_order = u32;
/// The pages with the most pinned objects are filled first and those with
/// the fewest emptied, so more pages end empty (the default).
pub const MOSAIC_COMPACT_PINNED_FIRST: mosaic_compact_order = 0;
/// The lowest addresses are filled first and the highest emptied (for
/// comparison).
pub const MOSAIC_COMPACT_ADDRESS: mosaic_compact_order = 1;
/// Most size classes a heap can have (the length of `class_sizes`).
pub const MOSAIC_MAX_CLASSES: usize = 64;

/// Heap configuration; fill with `mosaic_config_default` or
/// `mosaic_config_from_env`, then adjust, and pass to `mosaic_heap_new`
/// (NULL there means `mosaic_config_from_env`). Every field, the
/// environment variable that overrides it, its default and meaning:
///
/// | field | variable | default | meaning |
/// |---|---|---|---|
/// | `max_heap` | `MOSAIC_MAX_HEAP` | 4 GiB | hard cap: small pages plus large objects never exceed it; the fixed policy's target (64 KiB to 1 TiB; the variable takes `K`/`M`/`G`/`T` suffixes: `512M`) |
/// | `heap_policy`, `heap_proportional_k`, `heap_adaptive_scale` | `MOSAIC_HEAP_POLICY` | `MOSAIC_HEAP_ADAPTIVE`, scale = 256 MiB, k = 1 | when to collect: the next collection is due when the bytes allocated since the last one reach target − live. `MOSAIC_HEAP_FIXED`: target = `max_heap`. `MOSAIC_HEAP_PROPORTIONAL`: target = max(live × (1 + k), `heap_min`), k from 0.05 to 100 (k = 1 is Go's GOGC=100). `MOSAIC_HEAP_ADAPTIVE` (MemBalancer): target = max(live + sqrt(live × scale × g / s), `heap_min`), g the allocation rate and s the collection speed measured online, scale from 1 KiB to 1 TiB. The variable reads `fixed`, `proportional`, `proportional:0.5`, `adaptive` or `adaptive:64M` |
/// | `heap_min` | `MOSAIC_HEAP_MIN` | 1 MiB | the target never goes below this; it is the target before the first collection (64 KiB to `max_heap`; `MOSAIC_MAX_HEAP` below the default lowers it with it) |
/// | `size_classes`, `class_count`, `class_sizes` | `MOSAIC_SIZE_CLASSES` | `MOSAIC_CLASSES_DEFAULT` | slot sizes of the size pools: `mosaic` (16-byte granules to 128 B, then four per doubling to 8 KiB), `ruby` (40, 80, 160, 320, 640) or a comma list (`16,48,96`); see below |
/// | `initial_slots` | `MOSAIC_INITIAL_SLOTS` | 10000 | slots each pool may take as fresh pages before it must sweep all its pages first (at least one page, at most 4 MiB per pool); pools never trigger collections |
/// | `growth_factor` | `MOSAIC_GROWTH_FACTOR` | 1.8 | a churning pool short of free slots multiplies its page budget by this (1 to 16) |
/// | `growth_max` | `MOSAIC_GROWTH_MAX` | 64 MiB | most bytes one growth step may add to a pool (0: unbounded) |
/// | `free_min_ratio` | `MOSAIC_FREE_MIN` | 0.20 | below this free-slot ratio after sweeping, a churning pool grows |
/// | `free_goal_ratio` | `MOSAIC_FREE_GOAL` | 0.40 | free ratio a shrinking pool aims for |
/// | `free_max_ratio` | `MOSAIC_FREE_MAX` | 0.65 | above this free ratio a pool's budget shrinks and spare pages are decommitted (0 < min < goal < max < 1) |
/// | `stable_ratio` | `MOSAIC_STABLE_RATIO` | 0.10 | a pool that handed out fewer than this fraction of its slots since the last collection is stable and may run full without growing (0 to 1) |
/// | `lazy_sweep` | `MOSAIC_LAZY_SWEEP` | true | sweep pages on demand after a pause, in allocating threads (false: sweep everything inside the pause) |
/// | `background_sweep` | `MOSAIC_BACKGROUND_SWEEP` | true | between pauses, while fewer mutators run than there are CPUs, a GC worker sweeps pages ahead of the allocating threads and clears their free slots (needs `gc_threads` other than 1) |
/// | `sweep_step_pages` | `MOSAIC_SWEEP_STEP` | 4 | pages an allocation may sweep looking for space before taking a fresh page (at least 1) |
/// | `verify` | `MOSAIC_VERIFY` | false | after each marking, walk the heap again and abort with a diagnostic on the first bad reference (roots and `mutator_roots` then run twice per collection); the sweep fills freed small-object slots with `0xA5` bytes, so a missed root reads garbage at once |
/// | `stress` | `MOSAIC_STRESS` | 0 | collect every N allocations (0: off) |
/// | `gc_threads` | `MOSAIC_GC_THREADS` | 0 | GC workers, the collecting thread included (0: one per available core; 1: the collecting thread alone) |
/// | `parallel_min_live` | `MOSAIC_PARALLEL_MIN_LIVE` | 4 MiB | a collection runs on every GC worker only if the previous one found this many bytes live (or the heap committed 8 times as much, or the previous marking took 0.5 ms or more on one thread); smaller ones run on the collecting thread alone (0: always every worker) |
/// | `parallel_help_us` | `MOSAIC_PARALLEL_HELP_US` | 100 | a collection run on the collecting thread alone hands the rest of its marking to every GC worker after this many microseconds, if it has enough work to share (0: as soon as it has) |
/// | `headroom_max` | `MOSAIC_HEADROOM_MAX` | 3.0 | the adaptive policy's headroom is at most this many times the live bytes, plus one such share (at most 4 MiB) per further thread running in parallel between collections, at most the CPUs (0: no cap) |
/// | `ephemeron_header` | (none) | 0 | bytes of embedder header (a multiple of 8, at most 512) before every ephemeron's key and value words: `trace` sees ephemerons and visits the header, never the key and value |
/// | `page_resource` | `MOSAIC_PAGE_RESOURCE` | `MOSAIC_PAGES_LOCKFREE` | how free pages are kept: `MOSAIC_PAGES_LOCKFREE` (`lockfree`) or `MOSAIC_PAGES_MUTEX` (`mutex`, a free list behind one lock, for comparison) |
/// | (none) | `MOSAIC_TRACE` | unset | a path: when set at heap creation, the heap writes a Chrome trace-event JSON timeline of its pauses there when it is destroyed |
/// | `stall_warning_ms` | `MOSAIC_STALL_WARNING_MS` | 1000 | a collection that has waited this long for mutators to reach a safepoint prints once which mutators and threads it waits for (0: never) |
/// | `compact` | `MOSAIC_COMPACT` | `MOSAIC_COMPACT_NEVER` | when collections compact (move objects out of sparse pages): `MOSAIC_COMPACT_NEVER` (`never`: only `mosaic_compact`), `MOSAIC_COMPACT_AUTO` (`auto`: the pools whose free slots in partly used pages reach their live slots) or `MOSAIC_COMPACT_ALWAYS` (`always`: every pool at every collection). See MOVING at the top of this header |
/// | `compact_toward` | `MOSAIC_COMPACT_TOWARD` | `MOSAIC_COMPACT_PINNED_FIRST` | which pages a compaction fills: `MOSAIC_COMPACT_PINNED_FIRST` (`pinned`: the pages with the most pinned objects first) or `MOSAIC_COMPACT_ADDRESS` (`address`: the lowest addresses first, for comparison) |
/// | `generational` | `MOSAIC_GENERATIONAL` | false | generational collection with sticky mark bits: most collections are minor (they mark from the roots, the objects `mosaic_write_barrier` logged and every old object allocated without `MOSAIC_BARRIERED`, and sweep only pages allocated into since the last collection); full ones when the heap target nears or a minor collection pays too little. See GENERATIONS at the top of this header |
/// | `dirty_pages` | `MOSAIC_DIRTY_PAGES` | false | with `generational`: a minor collection rescans only the unbarriered old objects on OS pages written since the last collection (Linux's soft-dirty bits; without them, a warning and everything is rescanned) |
/// | `verify_compaction` | `MOSAIC_VERIFY_COMPACTION` | false | every collection moves every movable object to fresh pages, then checks that no reference the collector knows still holds an old address (the library aborts with a diagnostic naming the stale slot): finds references `trace` or `roots` fails to report |
///
/// Booleans read `1`/`0`, `true`/`false`, `yes`/`no` or `on`/`off`. A bad
/// value makes `mosaic_config_from_env` fail with `MOSAIC_ERR_CONFIG`
/// naming the variable. Any other `MOSAIC_*` variable in the environment is
/// reported once on stderr with the closest known name (a misspelling such
/// as `MOSAIC_STRES` is not silently ignored), except `MOSAIC_BLESS`,
/// `MOSAIC_LIB_DIR`, `MOSAIC_MODEL_CASES` and `MOSAIC_TEST_STALL_CHILD`,
/// which Mosaic's own tests and tools read (the library does not).
///
/// The size-class table is `size_classes`: `MOSAIC_CLASSES_DEFAULT`,
/// `MOSAIC_CLASSES_RUBY`, or `MOSAIC_CLASSES_CUSTOM` for the list in
/// `class_sizes[0 .. class_count]`: 1 to `MOSAIC_MAX_CLASSES` ascending
/// slot sizes, multiples of 8 from 16 to 16384 bytes (a bad list makes
/// `mosaic_heap_new` fail with `MOSAIC_ERR_CONFIG`). The filling functions
/// also write the table of a preset into `class_sizes` and `class_count`;
/// those two fields are read only when `size_classes` is
/// `MOSAIC_CLASSES_CUSTOM`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mosaic_config {
    pub max_heap: usize,
    pub heap_policy: u32,
    pub heap_proportional_k: f64,
    pub heap_adaptive_scale: usize,
    pub heap_min: usize,
    pub size_classes: u32,
    pub class_count: usize,
    pub class_sizes: [u32; MOSAIC_MAX_CLASSES],
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
    pub stress: u64,
    /// GC worker threads, the collecting thread included (0: one per
    /// available core).
    pub gc_threads: usize,
    /// `MOSAIC_PAGES_LOCKFREE` or `MOSAIC_PAGES_MUTEX`.
    pub page_resource: u32,
    /// Milliseconds a collection waits for mutators before it prints which
    /// ones it waits for (0: never).
    pub stall_warning_ms: u64,
    /// When collections compact: `MOSAIC_COMPACT_NEVER`,
    /// `MOSAIC_COMPACT_AUTO` or `MOSAIC_COMPACT_ALWAYS`.
    pub compact: mosaic_compact_policy,
    /// Which pages compactions fill: `MOSAIC_COMPACT_PINNED_FIRST` or
    /// `MOSAIC_COMPACT_ADDRESS`.
    pub compact_toward: mosaic_compact_order,
    /// Every collection moves every movable object and checks that no
    /// known reference still holds an old address.
    pub verify_compaction: bool,
    /// Live bytes (found by the previous collection) from which a
    /// collection runs on every GC worker; smaller ones run on the
    /// collecting thread alone (0: always every worker).
    pub parallel_min_live: usize,
    /// Bytes of embedder header (a multiple of 8, at most 512) at the start
    /// of every ephemeron, before its key and value words; `trace` is
    /// called on ephemerons and visits the header, never the key and value
    /// (see `mosaic_ephemeron_new`).
    pub ephemeron_header: usize,
    /// The adaptive policy's headroom is at most this many times the live
    /// bytes, plus one such share (at most 4 MiB) for each further thread
    /// that ran in parallel between collections, at most the CPUs (0: no
    /// cap).
    pub headroom_max: f64,
    /// Generational collection with sticky mark bits: most collections
    /// are minor. Objects allocated with `MOSAIC_BARRIERED` need
    /// `mosaic_write_barrier` on every store of a reference into them;
    /// others are rescanned by every minor collection.
    pub generational: bool,
    /// With `generational`: a minor collection rescans only the
    /// unbarriered old objects on OS pages written since the last
    /// collection (Linux's soft-dirty bits).
    pub dirty_pages: bool,
    /// A collection run on the collecting thread alone (see
    /// `parallel_min_live`) hands the rest of its marking to every GC
    /// worker after this many microseconds, if it has enough work to
    /// share (0: as soon as it has).
    pub parallel_help_us: u64,
}

impl From<&Config> for mosaic_config {
    /// `c` should be valid (`Config::validate`); a table longer than
    /// `MOSAIC_MAX_CLASSES` keeps its true `class_count`, so converting back
    /// reports it.
    fn from(c: &Config) -> Self {
        let size_classes = match c.size_classes {
            SizeClassPreset::Mosaic => MOSAIC_CLASSES_DEFAULT,
            SizeClassPreset::Ruby => MOSAIC_CLASSES_RUBY,
            SizeClassPreset::Custom(_) => MOSAIC_CLASSES_CUSTOM,
        };
        let table: Vec<usize> = match &c.size_classes {
            SizeClassPreset::Custom(v) => v.clone(),
            // A preset's table is always valid.
            _ => c.classes().map(|t| t.sizes().to_vec()).unwrap_or_default(),
        };
        let mut class_sizes = [0; MOSAIC_MAX_CLASSES];
        for (slot, &size) in class_sizes.iter_mut().zip(&table) {
            *slot = u32::try_from(size).unwrap_or(u32::MAX);
        }
        let (heap_policy, k, scale) = match c.heap_policy {
            HeapPolicy::Fixed => (
                MOSAIC_HEAP_FIXED,
                HeapPolicy::DEFAULT_K,
                HeapPolicy::DEFAULT_SCALE,
            ),
            HeapPolicy::Proportional { k } => {
                (MOSAIC_HEAP_PROPORTIONAL, k, HeapPolicy::DEFAULT_SCALE)
            }
            HeapPolicy::Adaptive { scale } => (MOSAIC_HEAP_ADAPTIVE, HeapPolicy::DEFAULT_K, scale),
        };
        mosaic_config {
            max_heap: c.max_heap,
            heap_policy,
            heap_proportional_k: k,
            heap_adaptive_scale: scale,
            heap_min: c.heap_min,
            size_classes,
            class_count: table.len(),
            class_sizes,
            initial_slots: c.initial_slots,
            growth_factor: c.growth_factor,
            growth_max: c.growth_max,
            free_min_ratio: c.free_min_ratio,
            free_goal_ratio: c.free_goal_ratio,
            free_max_ratio: c.free_max_ratio,
            stable_ratio: c.stable_ratio,
            lazy_sweep: c.lazy_sweep,
            background_sweep: c.background_sweep,
            sweep_step_pages: c.sweep_step_pages,
            verify: c.verify,
            stress: c.stress,
            gc_threads: c.gc_threads,
            page_resource: match c.page_resource {
                PageResourceKind::LockFree => MOSAIC_PAGES_LOCKFREE,
                PageResourceKind::Mutex => MOSAIC_PAGES_MUTEX,
            },
            stall_warning_ms: c.stall_warning_ms,
            compact: match c.compact {
                CompactPolicy::Never => MOSAIC_COMPACT_NEVER,
                CompactPolicy::Auto => MOSAIC_COMPACT_AUTO,
                CompactPolicy::Always => MOSAIC_COMPACT_ALWAYS,
            },
            compact_toward: compact_order_to_c(c.compact_toward),
            verify_compaction: c.verify_compaction,
            parallel_min_live: c.parallel_min_live,
            ephemeron_header: c.ephemeron_header,
            headroom_max: c.headroom_max,
            generational: c.generational,
            dirty_pages: c.dirty_pages,
            parallel_help_us: c.parallel_help_us,
        }
    }
}

/// The C value of a page order.
fn compact_order_to_c(order: CompactOrder) -> mosaic_compact_order {
    match order {
        CompactOrder::PinnedFirst => MOSAIC_COMPACT_PINNED_FIRST,
        CompactOrder::Address => MOSAIC_COMPACT_ADDRESS,
    }
}

/// The page order a C value names, `None` for an unknown value.
pub(crate) fn compact_order_from_c(order: mosaic_compact_order) -> Option<CompactOrder> {
    match order {
        MOSAIC_COMPACT_PINNED_FIRST => Some(CompactOrder::PinnedFirst),
        MOSAIC_COMPACT_ADDRESS => Some(CompactOrder::Address),
        _ => None,
    }
}

impl mosaic_config {
    /// The Rust `Config`, validated; on error records it for `function`.
    pub(crate) fn to_config(self, function: &str) -> Result<Config, mosaic_error> {
        let bad = |what: String| {
            set_error(
                function,
                mosaic_error::MOSAIC_ERR_CONFIG,
                &format!("invalid configuration: {what}"),
            );
            mosaic_error::MOSAIC_ERR_CONFIG
        };
        let size_classes = match self.size_classes {
            MOSAIC_CLASSES_DEFAULT => SizeClassPreset::Mosaic,
            MOSAIC_CLASSES_RUBY => SizeClassPreset::Ruby,
            MOSAIC_CLASSES_CUSTOM => {
                let n = self.class_count;
                if !(1..=MOSAIC_MAX_CLASSES).contains(&n) {
                    return Err(bad(format!(
                        "class_count {n} must be between 1 and {MOSAIC_MAX_CLASSES}"
                    )));
                }
                let sizes = self.class_sizes[..n].iter().map(|&s| s as usize);
                SizeClassPreset::Custom(sizes.collect())
            }
            other => return Err(bad(format!("unknown size_classes {other}"))),
        };
        let heap_policy = match self.heap_policy {
            MOSAIC_HEAP_FIXED => HeapPolicy::Fixed,
            MOSAIC_HEAP_PROPORTIONAL => HeapPolicy::Proportional {
                k: self.heap_proportional_k,
            },
            MOSAIC_HEAP_ADAPTIVE => HeapPolicy::Adaptive {
                scale: self.heap_adaptive_scale,
            },
            other => return Err(bad(format!("unknown heap_policy {other}"))),
        };
        let page_resource = match self.page_resource {
            MOSAIC_PAGES_LOCKFREE => PageResourceKind::LockFree,
            MOSAIC_PAGES_MUTEX => PageResourceKind::Mutex,
            other => return Err(bad(format!("unknown page_resource {other}"))),
        };
        let compact = match self.compact {
            MOSAIC_COMPACT_NEVER => CompactPolicy::Never,
            MOSAIC_COMPACT_AUTO => CompactPolicy::Auto,
            MOSAIC_COMPACT_ALWAYS => CompactPolicy::Always,
            other => return Err(bad(format!("unknown compact {other}"))),
        };
        let Some(compact_toward) = compact_order_from_c(self.compact_toward) else {
            return Err(bad(format!(
                "unknown compact_toward {}",
                self.compact_toward
            )));
        };
        let c = Config {
            max_heap: self.max_heap,
            heap_policy,
            heap_min: self.heap_min,
            size_classes,
            initial_slots: self.initial_slots,
            growth_factor: self.growth_factor,
            growth_max: self.growth_max,
            free_min_ratio: self.free_min_ratio,
            free_goal_ratio: self.free_goal_ratio,
            free_max_ratio: self.free_max_ratio,
            stable_ratio: self.stable_ratio,
            lazy_sweep: self.lazy_sweep,
            background_sweep: self.background_sweep,
            sweep_step_pages: self.sweep_step_pages,
            verify: self.verify,
            generational: self.generational,
            dirty_pages: self.dirty_pages,
            stress: self.stress,
            gc_threads: self.gc_threads,
            parallel_min_live: self.parallel_min_live,
            parallel_help_us: self.parallel_help_us,
            ephemeron_header: self.ephemeron_header,
            headroom_max: self.headroom_max,
            page_resource,
            // A path has no place in a plain C struct: the trace is asked
            // for through the environment only.
            trace: std::env::var_os("MOSAIC_TRACE")
                .filter(|v| !v.is_empty())
                .map(Into::into),
            stall_warning_ms: self.stall_warning_ms,
            compact,
            compact_toward,
            verify_compaction: self.verify_compaction,
        };
        c.validate().map_err(|e| report(function, &e))?;
        Ok(c)
    }
}

/// Fills `out` with the defaults. Returns `MOSAIC_ERR_INVALID_ARGUMENT` if
/// `out` is NULL.
///
/// # Safety
/// `out` must be NULL or point to writable memory for a `mosaic_config`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_config_default(out: *mut mosaic_config) -> mosaic_error {
    if out.is_null() {
        return invalid("mosaic_config_default", "out is NULL");
    }
    // SAFETY: non-null and writable per the contract.
    unsafe { out.write((&Config::default()).into()) };
    clear_error();
    mosaic_error::MOSAIC_OK
}

/// Fills `out` with the defaults overridden by `MOSAIC_*` environment
/// variables. On a bad variable, returns `MOSAIC_ERR_CONFIG` (the message
/// names it) and leaves `out` with the defaults.
///
/// # Safety
/// As `mosaic_config_default`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_config_from_env(out: *mut mosaic_config) -> mosaic_error {
    const F: &str = "mosaic_config_from_env";
    if out.is_null() {
        return invalid(F, "out is NULL");
    }
    let config = Config::from_env();
    let c = config
        .as_ref()
        .map_or_else(|_| Config::default(), Clone::clone);
    // SAFETY: non-null and writable per the contract.
    unsafe { out.write((&c).into()) };
    match config {
        Ok(_) => {
            clear_error();
            mosaic_error::MOSAIC_OK
        }
        Err(e) => report(F, &e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(c: &Config) -> Config {
        mosaic_config::from(c).to_config("test").expect("valid")
    }

    #[test]
    fn every_size_class_table_survives_the_c_struct_both_ways() {
        for preset in [
            SizeClassPreset::Mosaic,
            SizeClassPreset::Ruby,
            SizeClassPreset::Custom(vec![16, 48, 96]),
            SizeClassPreset::Custom((1..=64).map(|i| i * 16).collect()),
        ] {
            let c = Config {
                size_classes: preset,
                max_heap: 1 << 30,
                stress: 7,
                ..Config::default()
            };
            assert_eq!(round_trip(&c), c);
        }
        let ruby = mosaic_config::from(&Config {
            size_classes: SizeClassPreset::Ruby,
            ..Config::default()
        });
        assert_eq!(ruby.size_classes, MOSAIC_CLASSES_RUBY);
        assert_eq!(
            &ruby.class_sizes[..ruby.class_count],
            &[40, 80, 160, 320, 640]
        );
        assert!(ruby.class_sizes[5..].iter().all(|&s| s == 0));
        let default = mosaic_config::from(&Config::default());
        assert_eq!(default.class_count, 32);
        assert_eq!(&default.class_sizes[..3], &[16, 32, 48]);
    }

    #[test]
    fn the_page_resource_survives_the_c_struct_and_a_bad_one_is_an_error() {
        for page_resource in [PageResourceKind::LockFree, PageResourceKind::Mutex] {
            let c = Config {
                page_resource,
                ..Config::default()
            };
            assert_eq!(round_trip(&c), c);
        }
        let mut c = mosaic_config::from(&Config::default());
        assert_eq!(c.page_resource, MOSAIC_PAGES_LOCKFREE);
        c.page_resource = 2;
        assert_eq!(
            c.to_config("test").err(),
            Some(mosaic_error::MOSAIC_ERR_CONFIG)
        );
    }

    #[test]
    fn the_compaction_fields_survive_the_c_struct_and_bad_ones_are_errors() {
        for compact in [
            CompactPolicy::Never,
            CompactPolicy::Auto,
            CompactPolicy::Always,
        ] {
            for compact_toward in [CompactOrder::PinnedFirst, CompactOrder::Address] {
                for verify_compaction in [false, true] {
                    let c = Config {
                        compact,
                        compact_toward,
                        verify_compaction,
                        ..Config::default()
                    };
                    assert_eq!(round_trip(&c), c);
                }
            }
        }
        let mut c = mosaic_config::from(&Config::default());
        assert_eq!(c.compact, MOSAIC_COMPACT_NEVER);
        assert_eq!(c.compact_toward, MOSAIC_COMPACT_PINNED_FIRST);
        assert!(!c.verify_compaction);
        c.compact = 3;
        assert_eq!(
            c.to_config("test").err(),
            Some(mosaic_error::MOSAIC_ERR_CONFIG)
        );
        let msg = crate::error::mosaic_last_error_message();
        // SAFETY: a NUL-terminated thread-local string, read right away.
        let msg = unsafe { std::ffi::CStr::from_ptr(msg) }.to_string_lossy();
        assert!(msg.contains("unknown compact 3"), "{msg}");
        c.compact = MOSAIC_COMPACT_ALWAYS;
        c.compact_toward = 2;
        assert_eq!(
            c.to_config("test").err(),
            Some(mosaic_error::MOSAIC_ERR_CONFIG)
        );
        let msg = crate::error::mosaic_last_error_message();
        // SAFETY: as above.
        let msg = unsafe { std::ffi::CStr::from_ptr(msg) }.to_string_lossy();
        assert!(msg.contains("unknown compact_toward 2"), "{msg}");
    }

    #[test]
    fn every_heap_policy_survives_the_c_struct_and_bad_ones_are_errors() {
        for heap_policy in [
            HeapPolicy::Fixed,
            HeapPolicy::Proportional { k: 0.25 },
            HeapPolicy::Adaptive { scale: 32 << 20 },
        ] {
            let c = Config {
                heap_policy,
                heap_min: 1 << 20,
                ..Config::default()
            };
            assert_eq!(round_trip(&c), c);
        }
        let mut c = mosaic_config::from(&Config::default());
        c.heap_policy = 3;
        assert_eq!(
            c.to_config("test").err(),
            Some(mosaic_error::MOSAIC_ERR_CONFIG)
        );
        c.heap_policy = MOSAIC_HEAP_PROPORTIONAL;
        c.heap_proportional_k = -1.0;
        assert_eq!(
            c.to_config("test").err(),
            Some(mosaic_error::MOSAIC_ERR_CONFIG)
        );
        let msg = crate::error::mosaic_last_error_message();
        // SAFETY: a NUL-terminated thread-local string, read right away.
        let msg = unsafe { std::ffi::CStr::from_ptr(msg) }.to_string_lossy();
        assert!(msg.contains("between 0.05 and 100"), "{msg}");
    }

    #[test]
    fn bad_custom_lists_are_config_errors() {
        let mut c = mosaic_config::from(&Config::default());
        c.size_classes = MOSAIC_CLASSES_CUSTOM;
        for (count, sizes, why) in [
            (0, &[][..], "class_count 0"),
            (65, &[16][..], "class_count 65"),
            (2, &[48, 16][..], "ascend"),
            (1, &[17][..], "multiple of 8"),
            (1, &[32768][..], "multiple of 8"),
        ] {
            c.class_count = count;
            c.class_sizes[..sizes.len()].copy_from_slice(sizes);
            let err = c.to_config("test");
            assert_eq!(err.err(), Some(mosaic_error::MOSAIC_ERR_CONFIG), "{why}");
            let msg = crate::error::mosaic_last_error_message();
            // SAFETY: a NUL-terminated thread-local string, read right away.
            let msg = unsafe { std::ffi::CStr::from_ptr(msg) }.to_string_lossy();
            assert!(msg.starts_with("test: invalid configuration: "), "{msg}");
            assert!(msg.contains(why), "{why}: {msg}");
        }
    }
}
