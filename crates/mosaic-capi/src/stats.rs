//! Statistics for C: a struct per heap, one per pool, and the summary line.

use std::ffi::c_char;

use crate::error::{clear_error, invalid, mosaic_error, report};
use crate::heap::{heap_ref, mosaic_heap};

/// Heap-wide statistics (times in nanoseconds).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mosaic_stats {
    pub collections: u64,
    pub mark_time_ns: u64,
    pub sweep_time_ns: u64,
    pub pause_count: u64,
    pub pause_p50_ns: u64,
    pub pause_p99_ns: u64,
    pub pause_max_ns: u64,
    pub longest_sweep_step_ns: u64,
    pub last_marked: u64,
    pub live_objects: u64,
    pub pool_count: usize,
    pub pool_pages: usize,
    pub large_objects: usize,
    pub large_pages: usize,
    pub committed_bytes: usize,
    pub max_heap: usize,
    pub rss_bytes: usize,
    /// The heap target now (`MOSAIC_HEAP_*` policy): the next collection
    /// is due when `allocated_since_gc` reaches the target minus the bytes
    /// live after the last collection.
    pub heap_target: usize,
    pub allocated_since_gc: u64,
    /// Bytes found live by the last collection (slot sizes, large objects'
    /// pages).
    pub last_live_bytes: u64,
    /// Allocation rate and collection speed the policy measured at the
    /// last collection (bytes per second, smoothed; 0 before one).
    pub allocation_rate: f64,
    pub collection_speed: f64,
    /// Time from a collection's stop request until every mutator reached
    /// a safepoint (part of each pause): median and maximum.
    pub safepoint_p50_ns: u64,
    pub safepoint_max_ns: u64,
    /// Compactions so far (`mosaic_compact`, or `compact` in
    /// `mosaic_config`).
    pub compactions: u64,
    /// What the last compaction did (0 before one): objects moved, their
    /// bytes (old slot sizes), and pages it left with no live object.
    pub last_compaction_objects_moved: u64,
    pub last_compaction_bytes_moved: u64,
    pub last_compaction_pages_emptied: u64,
    /// Objects moved by every compaction so far.
    pub total_objects_moved: u64,
    /// Objects pinned with `mosaic_pin` now (not counting `MOSAIC_PINNED`
    /// allocations).
    pub pinned_objects: usize,
    /// Generational mode: minor and full collections (both counted in
    /// `collections`), the minor pauses' median, p99 and maximum, objects
    /// traced from the remembered set and unbarriered old objects
    /// rescanned, over all minor collections.
    pub minor_collections: u64,
    pub full_collections: u64,
    pub minor_pause_p50_ns: u64,
    pub minor_pause_p99_ns: u64,
    pub minor_pause_max_ns: u64,
    pub remembered_objects: u64,
    pub rescanned_objects: u64,
    /// Mutators the heap policy counted as running at the last collection
    /// (allocating threads' CPU time over wall time, smoothed; 0 before
    /// one): each one's share of allocation grows the heap target.
    pub running_mutators: f64,
    /// Pages background sweeping swept or cleared between pauses
    /// (`background_sweep` in `mosaic_config`), and the bytes it cleared
    /// ahead of the allocator.
    pub background_pages: u64,
    pub background_cleared_bytes: u64,
}

/// Statistics of one size pool.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mosaic_pool_stats {
    pub slot_size: usize,
    pub pages: usize,
    pub unswept_pages: usize,
    pub budget_pages: usize,
    pub live_slots: u64,
    pub free_slots: u64,
    pub allocated_total: u64,
    pub freed_total: u64,
    pub longest_sweep_step_ns: u64,
}

fn ns(d: std::time::Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

/// Fills `out` with the heap's statistics.
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mosaic_heap_stats(
    heap: *const mosaic_heap,
    out: *mut mosaic_stats,
) -> mosaic_error {
    const F: &str = "mosaic_heap_stats";
    let Some(h) = heap_ref(F, heap) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    if out.is_null() {
        return invalid(F, "out is NULL");
    }
    let s = h.stats();
    let st = mosaic_stats {
        collections: s.collections,
        mark_time_ns: ns(s.mark_time),
        sweep_time_ns: ns(s.sweep_time),
        pause_count: s.pauses.count,
        pause_p50_ns: ns(s.pauses.p50),
        pause_p99_ns: ns(s.pauses.p99),
        pause_max_ns: ns(s.pauses.max),
        longest_sweep_step_ns: ns(s.longest_sweep_step()),
        last_marked: s.last_marked,
        live_objects: s.live_objects(),
        pool_count: s.pools.len(),
        pool_pages: s.pool_pages(),
        large_objects: s.large.objects,
        large_pages: s.large.pages,
        committed_bytes: s.committed_bytes,
        max_heap: s.max_heap,
        rss_bytes: s.rss_bytes,
        heap_target: s.heap_target,
        allocated_since_gc: s.allocated_since_gc,
        last_live_bytes: s.last_marked_bytes,
        allocation_rate: s.last_heap_decision.map_or(0.0, |d| d.allocation_rate),
        collection_speed: s.last_heap_decision.map_or(0.0, |d| d.collection_speed),
        safepoint_p50_ns: ns(s.time_to_safepoint.p50),
        safepoint_max_ns: ns(s.time_to_safepoint.max),
        compactions: s.compactions,
        last_compaction_objects_moved: s.last_compaction.objects_moved,
        last_compaction_bytes_moved: s.last_compaction.bytes_moved,
        last_compaction_pages_emptied: s.last_compaction.pages_emptied,
        total_objects_moved: s.compaction_totals.objects_moved,
        pinned_objects: s.pinned_objects,
        minor_collections: s.minor_collections,
        full_collections: s.full_collections,
        minor_pause_p50_ns: ns(s.minor_pauses.p50),
        minor_pause_p99_ns: ns(s.minor_pauses.p99),
        minor_pause_max_ns: ns(s.minor_pauses.max),
        remembered_objects: s.remembered_objects,
        rescanned_objects: s.rescanned_objects,
        running_mutators: s.last_heap_decision.map_or(0.0, |d| d.running_mutators),
        background_pages: s.background_pages,
        background_cleared_bytes: s.background_cleared_bytes,
    };
    // SAFETY: non-null and writable per the contract.
    unsafe { out.write(st) };
    clear_error();
    mosaic_error::MOSAIC_OK
}

/// Fills `out` with the statistics of pool `index` (0 ..< pool_count).
///
/// # Safety
/// As `mosaic_heap_stats`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_heap_pool_stats(
    heap: *const mosaic_heap,
    index: usize,
    out: *mut mosaic_pool_stats,
) -> mosaic_error {
    const F: &str = "mosaic_heap_pool_stats";
    let Some(h) = heap_ref(F, heap) else {
        return mosaic_error::MOSAIC_ERR_INVALID_ARGUMENT;
    };
    if out.is_null() {
        return invalid(F, "out is NULL");
    }
    let s = h.stats();
    let Some(p) = s.pools.get(index) else {
        return invalid(
            F,
            &format!(
                "pool {index} does not exist (the heap has {})",
                s.pools.len()
            ),
        );
    };
    let ps = mosaic_pool_stats {
        slot_size: p.slot_size,
        pages: p.pages,
        unswept_pages: p.unswept_pages,
        budget_pages: p.budget_pages,
        live_slots: p.live_slots,
        free_slots: p.free_slots,
        allocated_total: p.allocated_total,
        freed_total: p.freed_total,
        longest_sweep_step_ns: ns(p.longest_sweep_step),
    };
    // SAFETY: non-null and writable per the contract.
    unsafe { out.write(ps) };
    clear_error();
    mosaic_error::MOSAIC_OK
}

/// Writes the one-line summary into `buf` (NUL-terminated, truncated to
/// `len`). Returns the summary's full length, like `snprintf`; 0 with
/// `MOSAIC_ERR_INVALID_ARGUMENT` for a NULL or freed heap.
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`; `buf` NULL or writable
/// for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mosaic_stats_summary(
    heap: *const mosaic_heap,
    buf: *mut c_char,
    len: usize,
) -> usize {
    let Some(h) = heap_ref("mosaic_stats_summary", heap) else {
        return 0;
    };
    let line = h.stats().summary();
    if !buf.is_null() && len > 0 {
        let n = line.len().min(len - 1);
        // SAFETY: `buf` is writable for `len` bytes and `n + 1 <= len`.
        unsafe {
            std::ptr::copy_nonoverlapping(line.as_ptr(), buf.cast(), n);
            buf.add(n).write(0);
        }
    }
    clear_error();
    line.len()
}

/// Changes the heap's maximum size to `bytes` (rounded down to whole
/// pages): lowered at run time, or raised back up to at most the
/// `max_heap` the heap was created with. Returns the new maximum. Memory
/// in use above a lowered maximum stays; allocations that need more pages
/// collect, then fail with `MOSAIC_ERR_OUT_OF_MEMORY`. Any thread. Errors
/// (0 returned): `MOSAIC_ERR_INVALID_ARGUMENT` for `bytes` above the
/// creation maximum or below one page, a NULL or freed heap.
///
/// # Safety
/// `heap` must be NULL or from `mosaic_heap_new`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_set_max_heap(heap: *const mosaic_heap, bytes: usize) -> usize {
    const F: &str = "mosaic_set_max_heap";
    let Some(h) = heap_ref(F, heap) else {
        return 0;
    };
    match h.set_max_heap(bytes) {
        Ok(max) => {
            clear_error();
            max
        }
        Err(e) => {
            report(F, &e);
            0
        }
    }
}
