//! The one heap of the process, its embedder and its configuration.
//!
//! The heap is created by the first call that needs it (`GC_init`, or any
//! allocation: bdwgc allows calls before `GC_INIT` on Linux) from bdwgc's
//! environment variables (`GC_INITIAL_HEAP_SIZE`, `GC_MAXIMUM_HEAP_SIZE`,
//! `GC_MARKERS`/`GC_NPROCS`, `GC_FREE_SPACE_DIVISOR`, `GC_DONT_GC`,
//! `GC_PRINT_STATS`) on top of Mosaic's `MOSAIC_*` ones.

use std::ffi::c_int;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;

use mosaic::{CompactPolicy, Config, Embedder, GcEvent, Heap, HeapPolicy, ObjRef, Tracer};

/// The embedder: objects are scanned by Mosaic itself (`CONSERVATIVE`) or
/// not at all (atomic); only explicitly typed objects and objects of kinds
/// the program made reach `trace`, told apart by their trailer's last word
/// (a kind's number, or a typed descriptor's address).
pub struct Boehm;

// SAFETY: `trace` visits every pointer word a typed object's descriptor
// names (`typed.rs`) and everything a made kind's descriptor or mark
// procedure names (`kinds.rs`, `mark.rs`); every other object is scanned
// conservatively by the collector; `roots` visits every root range bdwgc
// would (`roots.rs`).
unsafe impl Embedder for Boehm {
    fn trace<T: Tracer>(&self, obj: ObjRef, tracer: &mut T) {
        let Ok(slot) = heap().object_size(obj) else {
            return;
        };
        if slot < std::mem::size_of::<usize>() {
            return;
        }
        // SAFETY: the last word of a live object's slot (a trailer).
        let last = unsafe {
            obj.as_ptr()
                .add(slot - std::mem::size_of::<usize>())
                .cast::<usize>()
                .read()
        };
        if (crate::kinds::FIRST..crate::kinds::MAX_KINDS).contains(&last) {
            crate::kinds::trace(obj, slot, last, tracer);
        } else {
            crate::typed::trace(obj, slot, tracer);
        }
    }

    fn roots<T: Tracer>(&self, tracer: &mut T) {
        crate::roots::scan(tracer);
    }

    /// The program's push-other-roots procedure (run by `roots`) may set
    /// threads' stack bottoms for this collection, as under bdwgc, whose
    /// default procedure is the one that scans thread stacks (Crystal's
    /// multi-threaded runtime sets each thread's to its running fiber's).
    const STACKS_AFTER_ROOTS: bool = true;
    // bdwgc's parallel marker may scan an object twice too; every object
    // here is scanned by the collector or by a client mark procedure.
    const TRACE_TWICE_OK: bool = true;

    /// Only `GC_finalized_malloc`'s small objects ask for cleanup.
    fn on_free(&self, obj: ObjRef) {
        crate::disclaim::on_reclaim(obj);
    }
}

pub type GcHeap = Heap<Boehm>;
pub type GcMutator = mosaic::Mutator<Boehm>;

static HEAP: OnceLock<GcHeap> = OnceLock::new();

/// `GC_disable` nesting count (collections allowed while ≤ 0).
pub static DISABLED: AtomicI64 = AtomicI64::new(0);
/// `GC_PRINT_STATS` was set.
static PRINT_STATS: AtomicBool = AtomicBool::new(false);

/// `GC_enable_incremental` was called before the heap was created.
pub static INCREMENTAL: AtomicBool = AtomicBool::new(false);

/// `GC_set_max_heap_size` before the heap exists (0: not called); the
/// environment's `GC_MAXIMUM_HEAP_SIZE` wins, as in bdwgc's `GC_init`.
pub static MAX_HEAP_SET: AtomicUsize = AtomicUsize::new(0);

/// The heap, created on first use; the thread that creates it is
/// registered then, as bdwgc's initialisation registers its caller.
pub fn heap() -> &'static GcHeap {
    if let Some(h) = HEAP.get() {
        return h;
    }
    let mut created = false;
    let h = {
        // Its locks are never held by a stopped thread.
        let _g = crate::threads::InGc::enter();
        HEAP.get_or_init(|| {
            created = true;
            create()
        })
    };
    if created {
        crate::threads::set_main(crate::threads::current());
    }
    h
}

/// The heap if it exists already.
pub fn heap_if_created() -> Option<&'static GcHeap> {
    HEAP.get()
}

fn env_bytes(name: &str) -> Option<usize> {
    let v = std::env::var(name).ok()?;
    mosaic::parse_bytes(v.trim())
}

fn physical_memory() -> usize {
    // SAFETY: sysconf has no preconditions.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages > 0 && size > 0 {
        pages as usize * size as usize
    } else {
        4 << 30
    }
}

/// Mosaic's configuration for a bdwgc program (read under the default
/// floating-point environment: the program may trap exceptions, and
/// ratios are doubles).
pub fn config() -> Config {
    mosaic::with_default_float_env(read_config)
}

fn read_config() -> Config {
    let mut c = Config {
        // bdwgc's heap is bounded only by memory (and GC_MAXIMUM_HEAP_SIZE).
        max_heap: (physical_memory() / 2).clamp(1 << 30, 64 << 30),
        compact: CompactPolicy::Never,
        // C threads may legitimately run long between our calls; the
        // stop signal reaches them anyway.
        stall_warning_ms: 10_000,
        // bdwgc's programs expect bdwgc's footprint: the adaptive policy's
        // headroom at most twice the live bytes (the core's default, 3,
        // measured 1.26-1.36x the real library's peak RSS on Guile; 2 is
        // 0.96-1.12x at the same time; BENCHMARKS.md).
        headroom_max: 2.0,
        // bdwgc's own first heap is 256 KiB (64 blocks of 4 KiB); a small
        // program never touches more than it needs (BENCHMARKS.md).
        heap_min: 256 << 10,
        // Off here until an ECL test-suite crash seen once with it on (a
        // boxed float read as type 0, BENCHMARKS.md) is explained;
        // `MOSAIC_BACKGROUND_SWEEP=1` turns it on.
        background_sweep: false,
        ..Config::default()
    };
    if let Some(n) = env_bytes("GC_MAXIMUM_HEAP_SIZE") {
        c.max_heap = n.max(1 << 20);
    } else if MAX_HEAP_SET.load(Relaxed) > 0 {
        c.max_heap = MAX_HEAP_SET.load(Relaxed).max(1 << 20);
    }
    if let Some(n) = env_bytes("GC_INITIAL_HEAP_SIZE") {
        c.heap_min = n.min(c.max_heap);
    }
    for var in ["GC_MARKERS", "GC_NPROCS"] {
        if let Some(n) = std::env::var(var)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
        {
            c.gc_threads = n.clamp(1, 64);
            break;
        }
    }
    // bdwgc's incremental (generational) mode, from GC_enable_incremental
    // before the heap exists or GC_ENABLE_INCREMENTAL: Mosaic's sticky-mark
    // generations, the old objects to rescan found from soft-dirty bits
    // (the program has no write barriers).
    let env_incremental =
        std::env::var("GC_ENABLE_INCREMENTAL").is_ok_and(|v| !matches!(v.trim(), "" | "0"));
    if env_incremental || INCREMENTAL.load(Relaxed) {
        c.generational = true;
        c.dirty_pages = true;
    }
    if let Some(d) = std::env::var("GC_FREE_SPACE_DIVISOR")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        if d >= 1.0 {
            c.heap_policy = HeapPolicy::Proportional {
                k: (1.0 / d).clamp(0.05, 100.0),
            };
        }
    }
    match c.clone().with_env() {
        Ok(c) => c,
        Err(e) => {
            crate::control::warn(&format!("mosaic-gc: {e}; using the defaults\n"));
            c
        }
    }
}

fn create() -> GcHeap {
    crate::data::init();
    crate::data::take_extra_byte();
    let heap = match Heap::new(config(), Boehm) {
        Ok(h) => h,
        Err(e) => crate::control::abort_with(&format!("mosaic-gc: cannot create the heap: {e}")),
    };
    if std::env::var_os("GC_DONT_GC").is_some() {
        DISABLED.store(1, Relaxed);
    }
    if std::env::var_os("GC_PRINT_STATS").is_some() {
        PRINT_STATS.store(true, Relaxed);
    }
    if std::env::var_os("GC_FORCE_UNMAP_ON_GCOLLECT").is_some() {
        crate::control::GC_set_force_unmap_on_gcollect(1);
    }
    if heap.config().trace.is_some() {
        // The heap is never dropped: write the timeline at exit (in this
        // process, not in a child `fork` made).
        // SAFETY: getpid has no preconditions; atexit takes a plain
        // function with no arguments.
        unsafe {
            TRACE_PID.store(libc::getpid(), Relaxed);
            libc::atexit(write_trace_at_exit);
        }
    }
    heap.set_collection_gate(Some(Box::new(collections_allowed)));
    heap.set_event_listener(Some(Box::new(on_event)));
    heap.set_finalizer_notifier(Some(Box::new(crate::finalize::notified)));
    if let Err(e) = heap.set_shared_finalizer(crate::disclaim::on_unreachable, 0) {
        crate::control::abort_with(&format!("mosaic-gc: cannot set up disclaim: {e}"));
    }
    crate::data::set_parallel(c_int::from(heap.config().gc_threads > 1));
    let r = heap.address_range();
    crate::data::set_plausible_bounds(r.start, r.end);
    crate::threads::install(&heap);
    heap
}

/// The process that asked for the timeline.
static TRACE_PID: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// `MOSAIC_TRACE`: the timeline, written when the program exits, with the
/// stop signal deferred (a thread stopped while it held the timeline's
/// lock would hold up the next pause).
extern "C" fn write_trace_at_exit() {
    // SAFETY: getpid has no preconditions.
    if TRACE_PID.load(Relaxed) != unsafe { libc::getpid() } {
        return;
    }
    if let Some(h) = heap_if_created() {
        if let Err(e) = crate::threads::guarded(|| h.write_trace()) {
            crate::control::warn(&format!("mosaic-gc: cannot write the trace: {e}\n"));
        }
    }
}

/// Whether a collection the allocation rate made due may start now.
pub fn collections_allowed() -> bool {
    DISABLED.load(Relaxed) <= 0 && crate::data::dont_gc() == 0 && !crate::reserve::filling_here()
}

fn on_event(e: &GcEvent) {
    match e {
        GcEvent::CollectionStart {
            number,
            allocated_bytes,
            heap_bytes,
            target_bytes,
            ..
        } => {
            crate::control::collection_started(*allocated_bytes);
            if PRINT_STATS.load(Relaxed) {
                // As bdwgc's "Marking for collection #N after M allocated
                // bytes", with the heap committed and the target in force.
                let _ = writeln!(
                    std::io::stderr(),
                    "mosaic-gc: collection #{number} after {} KiB allocated, heap {} KiB, target {} KiB",
                    allocated_bytes >> 10,
                    heap_bytes >> 10,
                    target_bytes >> 10
                );
            }
            let queued = heap_if_created().map_or(0, |h| h.pending_finalizers());
            crate::disclaim::collection_started(*number, queued);
            crate::events::marking();
        }
        GcEvent::MarkEnd { .. } => crate::events::marked(),
        GcEvent::CollectionEnd {
            number,
            live_bytes,
            heap_bytes,
            pause,
            ..
        } => {
            crate::events::restarting();
            crate::data::set_gc_no(*number);
            crate::reserve::collection_ended();
            crate::alloc::collection_ended();
            if PRINT_STATS.load(Relaxed) {
                // Straight to stderr, as bdwgc logs: the program's warn
                // procedure might call `malloc`, and the world is stopped.
                // A failed write (a closed stderr) is ignored, as bdwgc does.
                let ms =
                    mosaic::with_default_float_env(|| format!("{:.3}", pause.as_secs_f64() * 1e3));
                let _ = writeln!(
                    std::io::stderr(),
                    "mosaic-gc: collection #{number}: {} KiB live, heap {} KiB, pause {ms} ms",
                    live_bytes >> 10,
                    heap_bytes >> 10,
                );
            }
        }
        _ => {}
    }
}
