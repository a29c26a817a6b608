//! Initialisation, collections, statistics, warnings and the tuning calls.
//!
//! Tuning calls that have no meaning on Mosaic (incremental mode, mark
//! thread start, time limits) are accepted and remembered, so that their
//! getters answer what was set.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering::Relaxed};

use crate::data::{self, Word};
use crate::heap::{heap, heap_if_created, DISABLED};
use crate::threads::{self, with_mutator};

pub type WarnProc = Option<unsafe extern "C" fn(*mut c_char, Word)>;
pub type StartCallback = Option<unsafe extern "C" fn()>;
pub type StopFunc = Option<unsafe extern "C" fn() -> c_int>;

static WARN_PROC: AtomicUsize = AtomicUsize::new(0);
static START_CALLBACK: AtomicUsize = AtomicUsize::new(0);
static STOP_FUNC: AtomicUsize = AtomicUsize::new(0);
/// Bytes allocated before the current cycle (for `GC_get_total_bytes`).
static ALLOCATED_BEFORE: AtomicU64 = AtomicU64::new(0);
/// `GC_set_*` values with nothing behind them, kept for their getters.
static SETTINGS: [AtomicI64; 16] = [const { AtomicI64::new(0) }; 16];

/// Prints a warning through the program's warn procedure (bdwgc's: a
/// printf format and one word), or on stderr.
pub fn warn(msg: &str) {
    let p = WARN_PROC.load(Relaxed);
    if p != 0 {
        // Escape '%' so the message is its own format.
        let escaped = msg.replace('%', "%%");
        if let Ok(c) = std::ffi::CString::new(escaped) {
            // SAFETY: the program's warn procedure, with a format it can print.
            let f: unsafe extern "C" fn(*mut c_char, Word) = unsafe { std::mem::transmute(p) };
            unsafe { f(c.as_ptr().cast_mut(), 0) };
            return;
        }
    }
    eprint!("{msg}");
}

/// Stops the program with a message (through `GC_on_abort` if set).
pub fn abort_with(msg: &str) -> ! {
    match (data::on_abort(), std::ffi::CString::new(msg)) {
        // SAFETY: the program's abort hook (by default, ours: it prints).
        (Some(f), Ok(c)) => unsafe { f(c.as_ptr()) },
        _ => eprintln!("{msg}"),
    }
    std::process::abort()
}

/// Called inside each pause, at its start, with the bytes allocated since
/// the previous one.
pub fn collection_started(allocated: u64) {
    ALLOCATED_BEFORE.fetch_add(allocated, Relaxed);
}

/// The program's start callback (`GC_set_start_callback`), called as a
/// collection begins to stop the world, before any thread is stopped by a
/// signal (as bdwgc calls it before stopping the world: a thread stopped
/// inside `malloc` would hold up a callback that calls it).
pub fn run_start_callback() {
    let p = START_CALLBACK.load(Relaxed);
    if p != 0 {
        // SAFETY: the program's start callback (it must not allocate, as in bdwgc).
        let f: unsafe extern "C" fn() = unsafe { std::mem::transmute(p) };
        unsafe { f() };
    }
}

#[no_mangle]
pub extern "C" fn GC_init() {
    let _errno = crate::errno::ErrnoKept::new();
    data::init();
    // The heap's creator sets `GC_stackbottom` (`threads::set_main`).
    heap();
    threads::current();
}

#[no_mangle]
pub extern "C" fn GC_is_init_called() -> c_int {
    c_int::from(heap_if_created().is_some())
}

#[no_mangle]
pub extern "C" fn GC_deinit() {}

/// An explicit collection, with every page swept after it; `release`:
/// every free page then goes back to the OS (bdwgc's unmapping).
fn collect(release: bool) {
    if data::dont_gc() != 0 || DISABLED.load(Relaxed) > 0 {
        return;
    }
    with_mutator(|m| {
        if release {
            m.collect_and_release();
        } else {
            m.collect();
            m.finish_sweep();
        }
    });
    crate::finalize::after_allocation();
}

/// Whether explicit collections unmap as `GC_gcollect_and_unmap` does
/// (`GC_set_force_unmap_on_gcollect`, `GC_FORCE_UNMAP_ON_GCOLLECT`).
fn force_unmap() -> bool {
    SETTINGS[1].load(Relaxed) != 0
}

#[no_mangle]
pub extern "C" fn GC_gcollect() {
    collect(force_unmap());
}

/// As bdwgc's: a full collection, then every free page goes back to the
/// OS.
#[no_mangle]
pub extern "C" fn GC_gcollect_and_unmap() {
    collect(true);
}

#[no_mangle]
pub extern "C" fn GC_try_to_collect(stop: StopFunc) -> c_int {
    // The collection is not interruptible: the stop function is asked once.
    if let Some(f) = stop {
        // SAFETY: the program's stop function.
        if unsafe { f() } != 0 {
            return 0;
        }
    }
    collect(force_unmap());
    1
}

#[no_mangle]
pub extern "C" fn GC_collect_a_little() -> c_int {
    // Lazy sweeping is Mosaic's incremental work; nothing else is pending.
    0
}

#[no_mangle]
pub extern "C" fn GC_disable() {
    heap();
    DISABLED.fetch_add(1, Relaxed);
}

#[no_mangle]
pub extern "C" fn GC_enable() {
    DISABLED.fetch_sub(1, Relaxed);
}

#[no_mangle]
pub extern "C" fn GC_is_disabled() -> c_int {
    c_int::from(DISABLED.load(Relaxed) > 0 || data::dont_gc() != 0)
}

#[no_mangle]
pub extern "C" fn GC_expand_hp(_bytes: usize) -> c_int {
    // Mosaic grows the heap itself up to its maximum.
    heap();
    1
}

/// The heap's maximum: before the heap exists it is the maximum the heap
/// is created with; after, the heap's maximum changes at once, at most up
/// to the size the heap was created with (its reservation: the machine's
/// memory over 2, or `GC_MAXIMUM_HEAP_SIZE`). 0: no limit but that one.
/// Pages in use above a lowered maximum stay; allocations that need more
/// collect, then fail through the out-of-memory function.
#[no_mangle]
pub extern "C" fn GC_set_max_heap_size(n: Word) {
    match heap_if_created() {
        None => crate::heap::MAX_HEAP_SET.store(n, Relaxed),
        Some(h) => {
            let page = mosaic::PAGE_SIZE;
            let reserved = h.config().max_heap / page * page;
            let want = if n == 0 {
                reserved
            } else {
                n.clamp(page, reserved)
            };
            let _ = h.set_max_heap(want);
        }
    }
}

/// The bytes an allocation of `i` bytes really takes (its slot, the extra
/// byte counted), or `(size_t)-1` for an index out of the small sizes:
/// bdwgc's size map.
#[no_mangle]
pub extern "C" fn GC_get_size_map_at(i: c_int) -> usize {
    if i < 0 {
        return usize::MAX;
    }
    let n = i as usize + data::extra_byte();
    heap().slot_size_for(n).unwrap_or(usize::MAX)
}

static TOGGLEREF_FUNC: AtomicUsize = AtomicUsize::new(0);

/// Toggle references are kept strong: the object stays alive (bdwgc asks
/// the function whether to weaken each at a collection; keeping it is the
/// safe answer, until the kinds of language runtimes are built).
#[no_mangle]
pub extern "C" fn GC_toggleref_add(obj: *mut c_void, _is_strong_ref: c_int) -> c_int {
    if let Some(o) = crate::alloc::base_of(obj) {
        threads::guarded(|| crate::roots::add_uncollectable(o.addr()));
    }
    0
}
#[no_mangle]
pub extern "C" fn GC_set_toggleref_func(f: *const c_void) {
    TOGGLEREF_FUNC.store(f as usize, Relaxed);
}
#[no_mangle]
pub extern "C" fn GC_get_toggleref_func() -> *const c_void {
    TOGGLEREF_FUNC.load(Relaxed) as *const c_void
}
#[no_mangle]
pub extern "C" fn GC_register_describe_type_fn(_kind: c_int, _f: *const c_void) {}

/// Whether `p`'s object is marked: during a collection (a mark
/// procedure's question), by that collection's mark bit; inside a disclaim
/// procedure, whether it was revived (`disclaim.rs`); otherwise every
/// allocated object counts as marked.
#[no_mangle]
pub extern "C" fn GC_is_marked(p: *const c_void) -> c_int {
    if let Some(o) = crate::alloc::base_of(p) {
        if let Some(m) = crate::disclaim::is_marked_in_disclaim(o.addr()) {
            return c_int::from(m);
        }
    }
    match crate::heap::heap_if_created() {
        Some(h) if !p.is_null() => c_int::from(h.is_marked(p.cast()) == Some(true)),
        _ => 0,
    }
}

/// Stops every other registered thread until `GC_start_world_external`
/// (without the safepoint on the way out: this thread holds the pause).
#[no_mangle]
pub extern "C" fn GC_stop_world_external() {
    crate::events::not_collecting(|| crate::threads::with_mutator_no_stop(|m| m.stop_world()));
}

#[no_mangle]
pub extern "C" fn GC_start_world_external() {
    with_mutator(|m| m.resume_world());
}

pub type ReachableProc = Option<unsafe extern "C" fn(*mut c_void, usize, *mut c_void)>;

/// Calls `proc(obj, bytes, data)` for every object allocated now (the
/// program holds the allocation lock; `proc` must not allocate).
#[no_mangle]
pub unsafe extern "C" fn GC_enumerate_reachable_objects_inner(
    proc_: ReachableProc,
    data: *mut c_void,
) {
    let Some(f) = proc_ else { return };
    // bdwgc walks its heap under the allocation lock, sending no events.
    crate::events::silent(|| {
        with_mutator(|m| {
            // SAFETY: the program's function with bdwgc's arguments.
            m.for_each_object(|o, size| unsafe { f(o.as_ptr().cast(), size, data) })
        })
    });
}

// ---- statistics ----

fn stats() -> mosaic::Counters {
    heap().counters()
}

/// The most heap memory ever committed: bdwgc's heap size counts the
/// parts given back to the OS too, so it never shrinks.
static HEAP_HIGH_WATER: AtomicUsize = AtomicUsize::new(0);

#[no_mangle]
pub extern "C" fn GC_get_heap_size() -> usize {
    let now = stats().committed_bytes;
    HEAP_HIGH_WATER.fetch_max(now, Relaxed).max(now)
}

#[no_mangle]
pub extern "C" fn GC_get_free_bytes() -> usize {
    let s = stats();
    GC_get_heap_size().saturating_sub(s.last_marked_bytes as usize + s.allocated_since_gc as usize)
}

#[no_mangle]
pub extern "C" fn GC_get_unmapped_bytes() -> usize {
    let now = stats().committed_bytes;
    GC_get_heap_size().saturating_sub(now)
}

#[no_mangle]
pub extern "C" fn GC_get_bytes_since_gc() -> usize {
    stats().allocated_since_gc as usize
}

#[no_mangle]
pub extern "C" fn GC_get_total_bytes() -> usize {
    (ALLOCATED_BEFORE.load(Relaxed) + stats().allocated_since_gc) as usize
}

#[no_mangle]
pub extern "C" fn GC_get_memory_use() -> usize {
    GC_get_heap_size() - GC_get_free_bytes()
}

#[no_mangle]
pub extern "C" fn GC_get_obtained_from_os_bytes() -> usize {
    GC_get_heap_size()
}

#[no_mangle]
pub extern "C" fn GC_get_expl_freed_bytes_since_gc() -> usize {
    // (The sum takes the heap's root-table lock, which a collection
    // needs: no stop signal while it is held.)
    crate::threads::guarded(crate::alloc::freed_since_gc)
}

#[no_mangle]
pub extern "C" fn GC_get_gc_no() -> Word {
    heap().counters().collections as Word
}

#[no_mangle]
pub extern "C" fn GC_get_full_gc_total_time() -> std::ffi::c_ulong {
    // (Stats take locks a collection needs: no stop signal meanwhile.)
    crate::threads::guarded(|| heap().stats().pauses.total.as_millis() as std::ffi::c_ulong)
}

#[no_mangle]
pub unsafe extern "C" fn GC_get_heap_usage_safe(
    heap_size: *mut Word,
    free: *mut Word,
    unmapped: *mut Word,
    since_gc: *mut Word,
    total: *mut Word,
) {
    let vals = [
        GC_get_heap_size(),
        GC_get_free_bytes(),
        0,
        GC_get_bytes_since_gc(),
        GC_get_total_bytes(),
    ];
    for (p, v) in [heap_size, free, unmapped, since_gc, total]
        .into_iter()
        .zip(vals)
    {
        if !p.is_null() {
            // SAFETY: the caller's optional out pointers.
            unsafe { *p = v };
        }
    }
}

/// `GC_get_prof_stats`: fills up to `size` bytes of bdwgc 8.2's
/// `struct GC_prof_stats_s` (12 words); returns the bytes filled.
#[no_mangle]
pub unsafe extern "C" fn GC_get_prof_stats(out: *mut Word, size: usize) -> usize {
    let s = stats();
    let vals: [Word; 12] = [
        s.committed_bytes,
        GC_get_free_bytes(),
        0,
        s.allocated_since_gc as Word,
        ALLOCATED_BEFORE.load(Relaxed) as Word,
        data::non_gc_bytes(),
        s.collections as Word,
        heap().config().gc_threads.saturating_sub(1),
        0,
        0,
        0,
        s.committed_bytes,
    ];
    let n = (size / std::mem::size_of::<Word>()).min(vals.len());
    for (i, v) in vals.iter().take(n).enumerate() {
        // SAFETY: `out` has room for `size` bytes.
        unsafe { *out.add(i) = *v };
    }
    n * std::mem::size_of::<Word>()
}

#[no_mangle]
pub unsafe extern "C" fn GC_get_prof_stats_unsafe(out: *mut Word, size: usize) -> usize {
    // SAFETY: as GC_get_prof_stats.
    unsafe { GC_get_prof_stats(out, size) }
}

#[no_mangle]
pub extern "C" fn GC_get_version() -> c_uint {
    (8 << 16) | (2 << 8) | 2
}

// ---- callbacks ----

#[no_mangle]
pub extern "C" fn GC_set_warn_proc(p: WarnProc) {
    WARN_PROC.store(p.map_or(0, |f| f as usize), Relaxed);
}

#[no_mangle]
pub extern "C" fn GC_get_warn_proc() -> WarnProc {
    let p = WARN_PROC.load(Relaxed);
    // SAFETY: stored from a WarnProc.
    (p != 0).then(|| unsafe {
        std::mem::transmute::<usize, unsafe extern "C" fn(*mut c_char, Word)>(p)
    })
}

#[no_mangle]
pub extern "C" fn GC_ignore_warn_proc(_msg: *mut c_char, _arg: Word) {}

#[no_mangle]
pub extern "C" fn GC_set_start_callback(f: StartCallback) {
    START_CALLBACK.store(f.map_or(0, |f| f as usize), Relaxed);
}

#[no_mangle]
pub extern "C" fn GC_get_start_callback() -> StartCallback {
    let p = START_CALLBACK.load(Relaxed);
    // SAFETY: stored from a StartCallback.
    (p != 0).then(|| unsafe { std::mem::transmute::<usize, unsafe extern "C" fn()>(p) })
}

#[no_mangle]
pub extern "C" fn GC_set_stop_func(f: StopFunc) {
    STOP_FUNC.store(f.map_or(0, |f| f as usize), Relaxed);
}

#[no_mangle]
pub extern "C" fn GC_get_stop_func() -> StopFunc {
    let p = STOP_FUNC.load(Relaxed);
    // SAFETY: stored from a StopFunc.
    (p != 0).then(|| unsafe { std::mem::transmute::<usize, unsafe extern "C" fn() -> c_int>(p) })
}

#[no_mangle]
pub extern "C" fn GC_set_oom_fn(f: data::OomFn) {
    data::set_oom_fn(f);
}
#[no_mangle]
pub extern "C" fn GC_get_oom_fn() -> data::OomFn {
    data::oom_fn()
}
#[no_mangle]
pub extern "C" fn GC_set_abort_func(f: data::AbortFn) {
    data::set_on_abort(f);
}
#[no_mangle]
pub extern "C" fn GC_get_abort_func() -> data::AbortFn {
    data::on_abort()
}
#[no_mangle]
pub extern "C" fn GC_set_finalizer_notifier(f: data::VoidFn) {
    data::set_finalizer_notifier(f);
}
#[no_mangle]
pub extern "C" fn GC_get_finalizer_notifier() -> data::VoidFn {
    data::finalizer_notifier()
}
#[no_mangle]
pub extern "C" fn GC_set_on_heap_resize(f: data::ResizeFn) {
    data::set_on_heap_resize(f);
}
#[no_mangle]
pub extern "C" fn GC_get_on_heap_resize() -> data::ResizeFn {
    data::on_heap_resize()
}
#[no_mangle]
pub extern "C" fn GC_set_push_other_roots(f: data::VoidFn) {
    data::set_push_other_roots(f);
}
#[no_mangle]
pub extern "C" fn GC_get_push_other_roots() -> data::VoidFn {
    data::push_other_roots()
}

// ---- flags with a variable behind them ----

macro_rules! int_setting {
    ($set:ident, $get:ident, $w:path, $r:path) => {
        #[no_mangle]
        pub extern "C" fn $set(v: c_int) {
            $w(v);
        }
        #[no_mangle]
        pub extern "C" fn $get() -> c_int {
            $r() as c_int
        }
    };
}

int_setting!(
    GC_set_all_interior_pointers,
    GC_get_all_interior_pointers,
    data::set_all_interior_pointers,
    data::all_interior_pointers
);
int_setting!(
    GC_set_finalize_on_demand,
    GC_get_finalize_on_demand,
    data::set_finalize_on_demand,
    data::finalize_on_demand
);
int_setting!(
    GC_set_java_finalization,
    GC_get_java_finalization,
    data::set_java_finalization,
    data::java_finalization
);
int_setting!(GC_set_no_dls, GC_get_no_dls, data::set_no_dls, data::no_dls);
int_setting!(
    GC_set_dont_expand,
    GC_get_dont_expand,
    data::set_dont_expand,
    data::dont_expand
);
int_setting!(
    GC_set_full_freq,
    GC_get_full_freq,
    data::set_full_freq,
    data::full_freq
);
int_setting!(
    GC_set_find_leak,
    GC_get_find_leak,
    data::set_find_leak,
    data::find_leak
);
int_setting!(
    GC_set_dont_precollect,
    GC_get_dont_precollect,
    data::set_dont_precollect,
    data::dont_precollect
);

#[no_mangle]
pub extern "C" fn GC_set_free_space_divisor(v: Word) {
    data::set_free_space_divisor(v);
    if heap_if_created().is_none() && v > 0 {
        std::env::set_var("GC_FREE_SPACE_DIVISOR", v.to_string());
    }
}
#[no_mangle]
pub extern "C" fn GC_get_free_space_divisor() -> Word {
    data::free_space_divisor()
}
#[no_mangle]
pub extern "C" fn GC_set_max_retries(v: Word) {
    data::set_max_retries(v);
}
#[no_mangle]
pub extern "C" fn GC_get_max_retries() -> Word {
    data::max_retries()
}
#[no_mangle]
pub extern "C" fn GC_set_non_gc_bytes(v: Word) {
    data::set_non_gc_bytes(v);
}
#[no_mangle]
pub extern "C" fn GC_get_non_gc_bytes() -> Word {
    data::non_gc_bytes()
}
#[no_mangle]
pub extern "C" fn GC_set_time_limit(v: Word) {
    data::set_time_limit(v);
}
#[no_mangle]
pub extern "C" fn GC_get_time_limit() -> Word {
    data::time_limit()
}
#[no_mangle]
pub extern "C" fn GC_get_parallel() -> c_int {
    c_int::from(heap().config().gc_threads > 1)
}

/// Settings with nothing behind them: index into `SETTINGS`.
macro_rules! remembered {
    ($($set:ident, $get:ident, $ty:ty, $i:expr;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $set(v: $ty) {
            SETTINGS[$i].store(v as i64, Relaxed);
        }
        #[no_mangle]
        pub extern "C" fn $get() -> $ty {
            SETTINGS[$i].load(Relaxed) as $ty
        }
    )*};
}

remembered! {
    GC_set_pages_executable, GC_get_pages_executable, c_int, 0;
    GC_set_force_unmap_on_gcollect, GC_get_force_unmap_on_gcollect, c_int, 1;
    GC_set_rate, GC_get_rate, c_int, 2;
    GC_set_max_prior_attempts, GC_get_max_prior_attempts, c_int, 3;
    GC_set_min_bytes_allocd, GC_get_min_bytes_allocd, usize, 4;
    GC_set_allocd_bytes_per_finalizer, GC_get_allocd_bytes_per_finalizer, Word, 5;
    GC_set_manual_vdb_allowed, GC_get_manual_vdb_allowed, c_int, 6;
    GC_set_disable_automatic_collection, GC_get_disable_automatic_collection, c_int, 7;
}

// ---- incremental mode: Mosaic's generations ----

/// Generational mode with dirty-page tracking (`MOSAIC_GENERATIONAL`,
/// `MOSAIC_DIRTY_PAGES`) for a heap created after this call; a heap that
/// exists already keeps its mode, as bdwgc ignores the call once
/// collections have begun in some configurations.
#[no_mangle]
pub extern "C" fn GC_enable_incremental() {
    if heap_if_created().is_none() {
        crate::heap::INCREMENTAL.store(true, Relaxed);
    }
}
#[no_mangle]
pub extern "C" fn GC_is_incremental_mode() -> c_int {
    c_int::from(match heap_if_created() {
        Some(h) => h.config().generational,
        None => crate::heap::INCREMENTAL.load(Relaxed),
    })
}
// ---- accepted, meaningless here ----

#[no_mangle]
pub extern "C" fn GC_incremental_protection_needs() -> c_int {
    0
}
#[no_mangle]
pub extern "C" fn GC_start_incremental_collection() {}
#[no_mangle]
pub extern "C" fn GC_start_mark_threads() {}
#[no_mangle]
pub extern "C" fn GC_set_markers_count(n: c_uint) {
    if heap_if_created().is_none() && n > 0 {
        std::env::set_var("GC_MARKERS", n.to_string());
    }
}
#[no_mangle]
pub extern "C" fn GC_start_performance_measurement() {}
/// bdwgc's `struct GC_timeval_s`.
#[repr(C)]
pub struct TimeVal {
    pub ms: std::ffi::c_ulong,
    pub ns: std::ffi::c_ulong,
}
#[no_mangle]
pub extern "C" fn GC_set_time_limit_tv(_tv: TimeVal) {}
#[no_mangle]
pub extern "C" fn GC_get_time_limit_tv() -> TimeVal {
    TimeVal { ms: 999_999, ns: 0 }
}
#[no_mangle]
pub extern "C" fn GC_register_displacement(_offset: usize) {}
#[no_mangle]
pub extern "C" fn GC_debug_register_displacement(_offset: usize) {}
#[no_mangle]
pub extern "C" fn GC_change_stubborn(_p: *const c_void) {}
#[no_mangle]
pub extern "C" fn GC_end_stubborn_change(_p: *const c_void) {}
#[no_mangle]
pub extern "C" fn GC_debug_change_stubborn(_p: *const c_void) {}
#[no_mangle]
pub extern "C" fn GC_debug_end_stubborn_change(_p: *const c_void) {}
#[no_mangle]
pub unsafe extern "C" fn GC_ptr_store_and_dirty(p: *mut c_void, q: *const c_void) {
    // SAFETY: the caller's pointer slot.
    unsafe { *p.cast::<*const c_void>() = q };
}
#[no_mangle]
pub unsafe extern "C" fn GC_debug_ptr_store_and_dirty(p: *mut c_void, q: *const c_void) {
    // SAFETY: as above.
    unsafe { GC_ptr_store_and_dirty(p, q) };
}
#[no_mangle]
pub extern "C" fn GC_incr_bytes_allocd(_n: usize) {}
#[no_mangle]
pub extern "C" fn GC_incr_bytes_freed(_n: usize) {}
#[no_mangle]
pub extern "C" fn GC_noop1(x: Word) {
    std::hint::black_box(x);
}
#[no_mangle]
pub extern "C" fn GC_clear_stack(p: *mut c_void) -> *mut c_void {
    p
}
#[no_mangle]
pub extern "C" fn GC_dump() {}
#[no_mangle]
pub extern "C" fn GC_dump_named(_name: *const c_char) {}
#[no_mangle]
pub extern "C" fn GC_dump_regions() {}
#[no_mangle]
pub extern "C" fn GC_dump_finalization() {}
#[no_mangle]
pub extern "C" fn GC_print_free_list(_kind: c_int, _sz: usize) {}
#[no_mangle]
pub extern "C" fn GC_set_log_fd(_fd: c_int) {}
#[no_mangle]
pub extern "C" fn GC_abort_on_oom() {
    abort_with("mosaic-gc: out of memory");
}
#[no_mangle]
pub extern "C" fn GC_set_await_finalize_proc(_f: *const c_void) {}
#[no_mangle]
pub extern "C" fn GC_get_await_finalize_proc() -> *const c_void {
    std::ptr::null()
}

// ---- the printf family (variadic in C: integer and pointer arguments
// arrive in registers exactly as for these six-word signatures on x86-64) ----

#[no_mangle]
pub unsafe extern "C" fn GC_printf(
    fmt: *const c_char,
    a: Word,
    b: Word,
    c: Word,
    d: Word,
    e: Word,
) {
    // SAFETY: the caller's format and the words its conversions read.
    // Unbuffered, as bdwgc's: the line survives an abort right after it.
    unsafe { dprintf(1, fmt, a, b, c, d, e) };
}

#[no_mangle]
pub unsafe extern "C" fn GC_err_printf(
    fmt: *const c_char,
    a: Word,
    b: Word,
    c: Word,
    d: Word,
    e: Word,
) {
    // SAFETY: as above; stderr is unbuffered.
    unsafe { dprintf(2, fmt, a, b, c, d, e) };
}

#[no_mangle]
pub unsafe extern "C" fn GC_log_printf(
    fmt: *const c_char,
    a: Word,
    b: Word,
    c: Word,
    d: Word,
    e: Word,
) {
    // SAFETY: as above.
    unsafe { dprintf(2, fmt, a, b, c, d, e) };
}

extern "C" {
    fn dprintf(fd: c_int, fmt: *const c_char, ...) -> c_int;
}

/// A C string for messages.
#[allow(dead_code)]
pub fn c_str(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: a NUL-terminated string from the program.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}
