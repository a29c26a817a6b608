//! The heap below the API, and the body of a collection.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

use super::counters::GcCounters;
use super::mark::Marker;
use super::roots::RootTable;
use super::verify::verify;
use crate::config::Config;
use crate::embedder::Embedder;
use crate::error::Error;
use crate::flags::AllocFlags;
use crate::object::ObjRef;
use crate::pool::{GrowthPolicy, SizeClasses, SizePool, SweepCtx};
use crate::space::{LargeSpace, PageResource, PageTable, ReleaseBuffer, PAGE_SIZE};

/// Everything a heap is, minus the mutator bookkeeping of the API layer.
pub struct HeapCore<E: Embedder> {
    pub config: Config,
    pub policy: GrowthPolicy,
    pub classes: SizeClasses,
    pub table: PageTable,
    pub resource: PageResource,
    pub large: LargeSpace,
    pub pools: Box<[SizePool]>,
    pub embedder: E,
    pub counters: GcCounters,
    large_budget: AtomicU64,
    sweep_cursor: AtomicUsize,
    /// Dirty free pages worth keeping committed, set when a pool finishes a
    /// sweep cycle; sweep steps decommit the excess a little at a time.
    trim_keep: AtomicUsize,
}

/// Most pages one sweep step decommits (each is an `madvise` run).
const TRIM_PAGES_PER_STEP: usize = 16;

/// Why a large allocation could not be served right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LargeFailure {
    NeedCollection,
    Exhausted,
}

impl<E: Embedder> HeapCore<E> {
    pub fn new(config: Config, embedder: E) -> Result<Self, Error> {
        config.validate()?;
        let classes = config.classes().map_err(Error::Config)?;
        let policy = config.growth_policy();
        // Twice the maximum heap in address space: the maximum is enforced
        // on pages in use, and the slack keeps large spans placeable when
        // small-object pages are scattered (see space/page_resource.rs).
        let max_pages = config.max_heap / PAGE_SIZE;
        let table = PageTable::new(2 * max_pages + 16).map_err(Error::Reserve)?;
        let resource = PageResource::new(&table, max_pages);
        let pools = (0..classes.len())
            .map(|i| SizePool::new(i, classes.slot_size(i), &policy))
            .collect();
        Ok(HeapCore {
            large_budget: AtomicU64::new(config.large_initial as u64),
            config,
            policy,
            classes,
            table,
            resource,
            large: LargeSpace::default(),
            pools,
            embedder,
            counters: GcCounters::default(),
            sweep_cursor: AtomicUsize::new(0),
            trim_keep: AtomicUsize::new(usize::MAX),
        })
    }

    /// Runs `f` with a sweep context; afterwards releases buffered pages,
    /// recomputes the trim target if a pool finished its cycle, and
    /// decommits a bounded number of excess free pages.
    pub fn with_sweeper<R>(&self, f: impl FnOnce(&mut SweepCtx<'_>) -> R) -> (R, usize) {
        let mut release = ReleaseBuffer::default();
        let mut on_free = |a: usize| self.embedder.on_free(ObjRef::from_addr(a));
        let mut cx = SweepCtx {
            table: &self.table,
            resource: &self.resource,
            release: &mut release,
            on_free: &mut on_free,
            policy: &self.policy,
            finished_cycle: false,
            swept: 0,
        };
        let r = f(&mut cx);
        let (finished, swept) = (cx.finished_cycle, cx.swept);
        release.flush(&self.resource);
        if finished {
            self.update_trim_target();
        }
        self.trim_step(TRIM_PAGES_PER_STEP);
        (r, swept)
    }

    /// Sweeps one page of the next pool (round robin) other than `except`
    /// that still has unswept pages: "a little of every pool".
    pub fn sweep_another_pool(&self, cx: &mut SweepCtx<'_>, except: usize) {
        let n = self.pools.len();
        let start = self.sweep_cursor.fetch_add(1, Relaxed);
        for i in 0..n {
            let k = (start + i) % n;
            if k != except && self.pools[k].sweep_step(cx) {
                return;
            }
        }
    }

    /// Sweeps every unswept page of every pool.
    pub fn finish_sweeping(&self) {
        if !self.pools.iter().any(|p| p.has_unswept()) {
            return;
        }
        let t = Instant::now();
        self.with_sweeper(|cx| {
            for p in self.pools.iter() {
                p.finish_sweep(cx);
            }
        });
        self.trim_step(usize::MAX);
        self.counters.add_sweep(t.elapsed());
    }

    /// Whether any pool still has unswept pages.
    pub fn has_unswept(&self) -> bool {
        self.pools.iter().any(|p| p.has_unswept())
    }

    /// Sets how many free pages to keep committed: what the pools in use
    /// may soon grow into.
    fn update_trim_target(&self) {
        let keep: usize = self.pools.iter().map(|p| p.expected_growth()).sum();
        self.trim_keep.store(keep, Relaxed);
    }

    /// Decommits up to `max` free pages beyond the trim target.
    pub fn trim_step(&self, max: usize) {
        self.resource
            .trim(&self.table, self.trim_keep.load(Relaxed), max);
    }

    /// The pause body. The world must be stopped and every mutator's
    /// allocation context flushed. `handles` are the root tables to scan.
    pub fn collect(&self, handles: &[Arc<RootTable>]) {
        let start = Instant::now();
        self.finish_sweeping();

        let mark_start = Instant::now();
        let mut marker = Marker::new(&self.table);
        for t in handles {
            t.visit(&mut marker);
        }
        self.embedder.roots(&mut marker);
        marker.drain(&self.embedder);
        let marked = marker.marked;
        drop(marker);
        let mark_time = mark_start.elapsed();

        let verdict = if self.config.verify {
            verify(&self.table, &self.embedder, marked, |v| {
                for t in handles {
                    t.visit(v);
                }
                self.embedder.roots(v);
            })
            .err()
        } else {
            None
        };

        let sweep_start = Instant::now();
        self.large.sweep(&self.table, &self.resource, |a| {
            self.embedder.on_free(ObjRef::from_addr(a))
        });
        let live_large = (self.large.stats(&self.table).pages * PAGE_SIZE) as f64;
        let budget =
            (live_large * (self.config.growth_factor - 1.0)).max(self.config.large_initial as f64);
        self.large_budget.store(budget as u64, Relaxed);
        for p in self.pools.iter() {
            p.begin_cycle();
        }
        self.counters.add_sweep(sweep_start.elapsed());
        if !self.config.lazy_sweep {
            self.finish_sweeping();
        }

        self.counters.collections.fetch_add(1, Relaxed);
        self.counters
            .mark_ns
            .fetch_add(mark_time.as_nanos() as u64, Relaxed);
        self.counters.last_marked.store(marked as u64, Relaxed);
        self.counters.record_pause(start.elapsed());
        // The pause completed, so the heap stays consistent; now report.
        if let Some(e) = verdict {
            panic!("mosaic verify: {e}");
        }
    }

    /// Allocates a large object, or says why it cannot right now.
    pub fn alloc_large(
        &self,
        size: usize,
        flags: AllocFlags,
        may_collect: bool,
    ) -> Result<usize, LargeFailure> {
        if may_collect
            && self.large.bytes_since_gc() + size as u64 > self.large_budget.load(Relaxed)
        {
            return Err(LargeFailure::NeedCollection);
        }
        self.large
            .alloc(&self.table, &self.resource, size, flags)
            .ok_or(LargeFailure::Exhausted)
    }

    /// `addr` as an object of this heap, or a foreign-pointer error.
    pub fn check_object(&self, addr: usize) -> Result<ObjRef, Error> {
        match ObjRef::from_ptr(addr as *mut u8) {
            Some(o) if self.table.object_at(addr).is_some() => Ok(o),
            _ => Err(Error::ForeignPointer { addr }),
        }
    }

    /// The maximum heap size in bytes.
    pub fn max_heap(&self) -> usize {
        self.resource.max_pages() * PAGE_SIZE
    }

    /// Sets the side bits for `flags` on the object at `addr` (just allocated).
    pub fn set_flags(&self, addr: usize, flags: AllocFlags) {
        let Some(crate::space::Located::Small { page, slot, .. }) = self.table.object_at(addr)
        else {
            return;
        };
        let d = self.table.desc(page);
        if flags.contains(AllocFlags::NO_POINTERS) {
            d.no_pointers.set(slot);
        }
        if flags.contains(AllocFlags::NEEDS_CLEANUP) {
            d.cleanup.set(slot);
            d.set_has_cleanup(true);
        }
        if flags.contains(AllocFlags::PINNED) {
            d.pin.set(slot);
        }
    }
}

impl<E: Embedder> Drop for HeapCore<E> {
    /// Objects that asked for cleanup get it when the heap goes away.
    fn drop(&mut self) {
        for pool in self.pools.iter() {
            for page in pool.pages() {
                let d = self.table.desc(page);
                if !d.has_cleanup() {
                    continue;
                }
                let base = self.table.page_addr(page);
                d.cleanup.for_each_set(d.slot_count(), |slot| {
                    if d.alloc.get(slot) {
                        self.embedder
                            .on_free(ObjRef::from_addr(base + slot * d.slot_size()));
                    }
                });
            }
        }
        self.large.for_each(&self.table, |a| {
            let head = self.table.page_index(a).expect("large object in heap");
            if self.table.desc(head).cleanup.get(0) {
                self.embedder.on_free(ObjRef::from_addr(a));
            }
        });
    }
}
