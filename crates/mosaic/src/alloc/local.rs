//! Bump-through-free-runs allocation into a mutator's current pages.

use std::ptr::NonNull;

use crate::flags::AllocFlags;
use crate::pool::SizePool;
use crate::space::{PageTable, PAGE_SIZE};

/// No current page.
pub const NO_PAGE: usize = usize::MAX;

/// The allocation state for one size pool. `repr(C)` with the run first:
/// the C header's inline fast path reads `cursor`, `limit` and `slot_size`
/// (`mosaic_alloc_buffer`).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct LocalPool {
    cursor: usize,
    limit: usize,
    slot_size: usize,
    page: usize,
    /// Next slot index to search for a free run.
    next_slot: usize,
    /// Slots reserved in runs and not yet reported to the pool.
    unreported: i64,
}

/// The most bytes a run that starts a page takes (at least one slot). Runs
/// count against the heap's allowance when they are taken, so a run of a
/// whole fresh page counted 64 KiB for the first small object of each size
/// class: a program touching a handful of classes had "allocated" the
/// first collection's 256 KiB allowance after a few KiB of objects (a
/// Crystal program collected before its runtime had set up the state its
/// collection callbacks use; a tiny C program collected 4 times). Only a
/// page's first run is bounded, so a fresh page costs two slow paths, not
/// one (bounding every run, four per page, made binary-trees 4% slower).
const MAX_RUN_BYTES: usize = 16 << 10;

/// Most size classes a table may have (see `SizeClasses::new`).
const MAX_CLASSES: usize = 64;

/// Allocation contexts: one per class for zeroed runs, then one per class
/// for runs that are not cleared (`AllocFlags::UNINIT`), at `class + 64`,
/// then one per class for conservatively scanned objects, at `class + 128`,
/// then one per class for zeroed `BARRIERED` objects, at `class + 192`.
pub const CONTEXTS: usize = 4 * MAX_CLASSES;

/// The context of `class` for an allocation with `flags`: zeroed runs;
/// uncleared runs for `UNINIT` (their slots get the no-pointers bit when
/// the run is taken); zeroed runs whose slots get the conservative bit when
/// the run is taken, for `CONSERVATIVE` (so neither fast path writes a
/// page descriptor per object); zeroed runs whose slots get the barriered
/// bit when the run is taken, for `BARRIERED`.
#[inline(always)]
pub const fn context(class: usize, flags: AllocFlags) -> usize {
    if flags.contains(AllocFlags::UNINIT) {
        class + MAX_CLASSES
    } else if flags.contains(AllocFlags::CONSERVATIVE) && !flags.contains(AllocFlags::NO_POINTERS) {
        class + 2 * MAX_CLASSES
    } else if flags.contains(AllocFlags::BARRIERED) {
        class + 3 * MAX_CLASSES
    } else {
        class
    }
}

/// The flags a context's runs already give their slots (or, for
/// `BARRIERED` in the conservative context, ignore: a conservative object
/// is rescanned by every minor collection, whatever it promised).
#[inline(always)]
pub const fn context_flags(ctx: usize) -> AllocFlags {
    match ctx / MAX_CLASSES {
        1 => AllocFlags::UNINIT,
        2 => AllocFlags::CONSERVATIVE.with(AllocFlags::BARRIERED),
        3 => AllocFlags::BARRIERED,
        _ => AllocFlags::NONE,
    }
}

/// [`context_flags`] of `context(class, flags)`, for any class: what the
/// runs an allocation with `flags` comes from give their slots. A constant
/// when `flags` is one (the fast path then tests nothing for them).
#[inline(always)]
pub const fn run_flags(flags: AllocFlags) -> AllocFlags {
    context_flags(context(0, flags))
}

/// A mutator's allocation context: one current page and run per pool and
/// kind of run (zeroed; not cleared and pointer-free; zeroed and
/// conservative). A fixed array indexed by `context % CONTEXTS`, so the
/// fast path has no bounds check.
///
/// An uncleared run skips zeroing and sets the no-pointers bit of all its
/// slots when it is taken (the unused rest is cleared again on flush), so
/// its fast path is the same bump as the zeroed one.
///
/// The array is a raw heap allocation (not a `Box`) so that a
/// [`LocalFlusher`] can flush it when the owning thread exits while the
/// mutator was leaked, without aliasing a unique `Box`.
pub struct LocalAllocator {
    pools: NonNull<Locals>,
    /// Hand out one slot per run (stress mode: every allocation takes the slow path).
    single_slot_runs: bool,
    /// Generational mode: a run's slots get their unlogged bits cleared.
    generational: bool,
}

/// Bytes reserved in runs and not yet counted against the heap's
/// allowance, kept beside the pools so that a [`LocalFlusher`] reaches them.
#[repr(C)]
struct Locals {
    pools: [LocalPool; CONTEXTS],
    run_bytes: u64,
    /// Slots freed explicitly by the owner since its last flush, per
    /// context: each is still allocated, holds what a fresh slot of the
    /// context holds but for its free tag (`PageTable::tag_freed`) in its
    /// first word. Taken again before a new
    /// run; a flush (every pause) gives the rest to their pools, and the
    /// next pause makes them free slots (`SizePool::reclaim_forgotten`).
    /// Allocated on the first explicit free (6 KiB: most mutators never
    /// free, and a program may run thousands of threads).
    freed: Option<Box<[Vec<usize>; CONTEXTS]>>,
}

/// Most slots one context keeps for reuse between two flushes (beyond,
/// freed objects wait for the next collection).
pub const MAX_FREED: usize = 1 << 14;

/// Flushes a [`LocalAllocator`] from elsewhere (a thread-exit hook).
pub struct LocalFlusher(NonNull<Locals>);

impl LocalAllocator {
    pub fn new(slot_sizes: &[usize], single_slot_runs: bool, generational: bool) -> Self {
        assert!(slot_sizes.len() <= MAX_CLASSES);
        // Unused entries have an empty run and never get a page. Built in
        // place (12 KiB): not on the stack of a thread that may be short.
        let layout = std::alloc::Layout::new::<Locals>();
        // SAFETY: `Locals` is not zero-sized.
        let p = unsafe { std::alloc::alloc(layout) }.cast::<Locals>();
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        for i in 0..CONTEXTS {
            let lp = LocalPool {
                cursor: 0,
                limit: 0,
                slot_size: slot_sizes
                    .get(i % MAX_CLASSES)
                    .copied()
                    .unwrap_or(usize::MAX / 2),
                page: NO_PAGE,
                next_slot: 0,
                unreported: 0,
            };
            // SAFETY: `p` is a fresh allocation of a `Locals`; each field is
            // written once, through raw places (nothing reads the
            // uninitialised memory).
            unsafe { std::ptr::addr_of_mut!((*p).pools[i]).write(lp) };
        }
        // SAFETY: as above; the last two fields.
        unsafe {
            std::ptr::addr_of_mut!((*p).run_bytes).write(0);
            std::ptr::addr_of_mut!((*p).freed).write(None);
        }
        // SAFETY: every field was written above; allocated by the global
        // allocator with `Locals`'s layout, as a `Box` is.
        let pools = unsafe { Box::from_raw(p) };
        LocalAllocator {
            pools: NonNull::from(Box::leak(pools)),
            single_slot_runs,
            generational,
        }
    }

    #[inline(always)]
    fn locals(&mut self) -> &mut Locals {
        // SAFETY: `pools` came from `Box::leak` in `new` and is freed only in
        // `drop`; `&mut self` excludes other uses through this allocator,
        // and a `LocalFlusher` is used only while the owner is not (see
        // `LocalFlusher::flush`).
        unsafe { self.pools.as_mut() }
    }

    #[inline(always)]
    fn pools(&mut self) -> &mut [LocalPool; CONTEXTS] {
        &mut self.locals().pools
    }

    /// Bytes reserved in runs since the last [`LocalAllocator::take_bytes`].
    #[inline]
    pub fn pending_bytes(&mut self) -> u64 {
        self.locals().run_bytes
    }

    /// The bytes of this allocator's current runs not handed out yet
    /// (a detached run's slot is not counted: it was counted before).
    pub fn unused_run_bytes(&mut self, table: &PageTable) -> u64 {
        self.pools()
            .iter()
            .filter(|lp| lp.cursor < lp.limit && !detached(lp, table))
            .map(|lp| (lp.limit - lp.cursor) as u64)
            .sum()
    }

    /// Takes the bytes reserved in runs, to count them against the heap's
    /// allowance.
    #[inline]
    pub fn take_bytes(&mut self) -> u64 {
        std::mem::take(&mut self.locals().run_bytes)
    }

    /// The first of the [`CONTEXTS`] allocation buffers, for an inline fast
    /// path outside Rust (mosaic.h): valid until this allocator is dropped.
    pub fn buffers(&mut self) -> *mut LocalPool {
        self.locals().pools.as_mut_ptr()
    }

    /// A handle that can flush this context later (see [`LocalFlusher`]).
    pub fn flusher(&self) -> LocalFlusher {
        LocalFlusher(self.pools)
    }

    /// The fast path: the next slot of the current run of context `ctx`
    /// (see [`context`]), if any.
    #[inline(always)]
    pub fn bump(&mut self, ctx: usize) -> Option<usize> {
        let lp = &mut self.pools()[ctx % CONTEXTS];
        let next = lp.cursor + lp.slot_size;
        if next <= lp.limit {
            let p = lp.cursor;
            lp.cursor = next;
            Some(p)
        } else {
            None
        }
    }

    /// Whether context `ctx` keeps another freed slot ([`MAX_FREED`]).
    pub fn has_freed_room(&mut self, ctx: usize) -> bool {
        self.locals()
            .freed
            .as_ref()
            .map_or(true, |f| f[ctx % CONTEXTS].len() < MAX_FREED)
    }

    /// Keeps `addr`, a slot of context `ctx` just freed (its contents
    /// those of a fresh slot but for its free tag), for reuse by this
    /// allocator until its next flush. The caller checked
    /// [`LocalAllocator::has_freed_room`].
    pub fn push_freed(&mut self, ctx: usize, addr: usize) {
        let freed = self
            .locals()
            .freed
            .get_or_insert_with(|| Box::new(std::array::from_fn(|_| Vec::new())));
        let list = &mut freed[ctx % CONTEXTS];
        debug_assert!(list.len() < MAX_FREED);
        list.push(addr);
    }

    /// A slot of context `ctx` freed by this allocator's owner, if any,
    /// its free tag cleared: allocated, and as a fresh slot of the
    /// context.
    #[inline]
    pub fn pop_freed(&mut self, table: &PageTable, ctx: usize) -> Option<usize> {
        let addr = self.locals().freed.as_mut()?[ctx % CONTEXTS].pop()?;
        table.untag_freed(addr);
        Some(addr)
    }

    /// Whether the run of context `ctx` is a slot freed by the owner
    /// (a *detached* run, see [`LocalAllocator::take_as_run`]) still
    /// holding `addr`.
    #[inline]
    pub fn holds_in_run(&mut self, table: &PageTable, ctx: usize, addr: usize) -> bool {
        self.locals().pools[ctx % CONTEXTS].cursor == addr && self.run_is_detached(table, ctx)
    }

    /// Whether context `ctx`'s run is a detached one with its slot still
    /// unused.
    #[inline]
    pub fn run_is_detached(&mut self, table: &PageTable, ctx: usize) -> bool {
        let lp = &self.locals().pools[ctx % CONTEXTS];
        lp.cursor < lp.limit && detached(lp, table)
    }

    /// Gives the unused slot of context `ctx`'s detached run back (its
    /// free tag written): to the freed list, or to `pool` as a
    /// forgotten free when the list is full. For an allocation that may
    /// not take it.
    pub fn detached_to_list(&mut self, table: &PageTable, ctx: usize, pool: &SizePool) {
        if !self.run_is_detached(table, ctx) {
            return;
        }
        let lp = &mut self.locals().pools[ctx % CONTEXTS];
        let addr = lp.cursor;
        lp.cursor = lp.limit;
        table.tag_freed(addr);
        if self.has_freed_room(ctx) {
            self.push_freed(ctx, addr);
        } else {
            pool.forget_freed(std::iter::once(addr));
        }
    }

    /// Whether `addr`, a slot of context `ctx` being freed, can become the
    /// context's run: the run is used up, and the slot is not on the
    /// run's page (a run inside its page is an ordinary run: that is how
    /// [`flush`] tells the two apart).
    #[inline]
    pub fn can_take_as_run(&mut self, table: &PageTable, ctx: usize, addr: usize) -> bool {
        let lp = &self.locals().pools[ctx % CONTEXTS];
        lp.cursor + lp.slot_size > lp.limit
            && (lp.page == NO_PAGE || addr.wrapping_sub(table.page_addr(lp.page)) >= PAGE_SIZE)
    }

    /// Makes `addr` (checked with [`LocalAllocator::can_take_as_run`];
    /// allocated, holding what a fresh slot of the context holds, no free
    /// tag) the one-slot run of context `ctx`. It stays
    /// counted as allocated: handing it out changes no count, and a flush
    /// that finds it unused gives it to its pool as a forgotten free.
    #[inline]
    pub fn take_as_run(&mut self, ctx: usize, addr: usize) {
        let lp = &mut self.locals().pools[ctx % CONTEXTS];
        lp.cursor = addr;
        lp.limit = addr + lp.slot_size;
    }

    /// Takes the next free run of the current page of context `ctx`, of
    /// at most `max_run` bytes (at least one slot). Returns false when the
    /// page has none left (the page is then no longer current).
    pub fn next_run(&mut self, table: &PageTable, ctx: usize, max_run: usize) -> bool {
        let single = self.single_slot_runs;
        let generational = self.generational;
        let kind = ctx / MAX_CLASSES;
        let locals = self.locals();
        let lp = &mut locals.pools[ctx];
        if lp.page == NO_PAGE {
            return false;
        }
        let d = table.desc(lp.page);
        let n = d.slot_count();
        let Some(first) = d.alloc.find(lp.next_slot, n, false) else {
            lp.page = NO_PAGE;
            lp.cursor = 0;
            lp.limit = 0;
            return false;
        };
        let end = if single {
            first + 1
        } else {
            let end = d.alloc.find(first, n, true).unwrap_or(n);
            let most = if first == 0 {
                max_run.min(MAX_RUN_BYTES)
            } else {
                max_run
            };
            end.min(first + (most / lp.slot_size).max(1))
        };
        d.alloc.set_range(first, end);
        let base = table.page_addr(lp.page);
        let (start, len) = (base + first * lp.slot_size, (end - first) * lp.slot_size);
        if kind == 1 {
            d.no_pointers.set_range(first, end);
        } else {
            if kind != 3 {
                d.note_unbarriered();
            }
            if kind == 2 {
                d.conservative.set_range(first, end);
            } else if kind == 3 {
                d.barriered.set_range(first, end);
            }
            if !d.zeroed() {
                table.zero(start, len);
            } else {
                // A page marked zeroed has every free slot cleared: whoever
                // wrote into this run since (a free slot) broke it.
                debug_assert!(
                    table.is_zero(start, len),
                    "a run of a page marked zeroed holds old bytes (page {}, slots {first}..{end})",
                    lp.page
                );
            }
        }
        d.note_young();
        if generational {
            // Dead objects' stale bits must not make the new ones look old.
            table.log().clear_range(start, len);
        }
        lp.cursor = start;
        lp.limit = start + len;
        lp.next_slot = end;
        lp.unreported += (end - first) as i64;
        locals.run_bytes += len as u64;
        true
    }

    /// Makes `page` (owned by the caller, with a free slot) the current
    /// page of context `ctx`.
    pub fn set_page(&mut self, ctx: usize, page: usize) {
        let lp = &mut self.pools()[ctx];
        debug_assert_eq!(lp.page, NO_PAGE);
        lp.page = page;
        lp.next_slot = 0;
    }

    /// Reports reserved slots of context `ctx` to its pool.
    pub fn report(&mut self, ctx: usize, pool: &SizePool) {
        report(&mut self.pools()[ctx], pool);
    }

    /// Gives every current page back: the unused rest of each run is
    /// un-reserved, counts are reported and pages returned to their pools.
    /// Returns the bytes allocated since the last `take_bytes`, for the
    /// heap's allowance.
    pub fn flush(&mut self, table: &PageTable, pools: &[SizePool]) -> u64 {
        flush(self.locals(), table, pools)
    }
}

impl Drop for LocalAllocator {
    fn drop(&mut self) {
        // SAFETY: allocated by `Box::leak` in `new`, freed once, here.
        drop(unsafe { Box::from_raw(self.pools.as_ptr()) });
    }
}

impl LocalFlusher {
    /// Another handle on the same allocator.
    pub fn clone_handle(&self) -> LocalFlusher {
        LocalFlusher(self.0)
    }

    /// Flushes the allocator this handle came from.
    ///
    /// # Safety
    /// The allocator must still exist, and must not be in use during the
    /// call (its owner's thread is exiting and no longer runs it).
    pub unsafe fn flush(&self, table: &PageTable, pools: &[SizePool]) -> u64 {
        // SAFETY: per this function's contract.
        flush(unsafe { &mut *self.0.as_ptr() }, table, pools)
    }
}

fn report(lp: &mut LocalPool, pool: &SizePool) {
    if lp.unreported != 0 {
        pool.note_allocated(lp.unreported);
        lp.unreported = 0;
    }
}

/// Whether `lp`'s run is a detached one (a freed slot, outside the run's
/// page), used up or not.
#[inline]
fn detached(lp: &LocalPool, table: &PageTable) -> bool {
    lp.page == NO_PAGE || lp.cursor.wrapping_sub(table.page_addr(lp.page)) >= PAGE_SIZE
}

fn flush(locals: &mut Locals, table: &PageTable, pools: &[SizePool]) -> u64 {
    // Freed slots not reused go to their pool: the next pause frees them.
    for (i, list) in locals
        .freed
        .iter_mut()
        .flat_map(|f| f.iter_mut())
        .enumerate()
    {
        if let (false, Some(pool)) = (list.is_empty(), pools.get(i % MAX_CLASSES)) {
            pool.forget_freed(list.drain(..));
        }
    }
    let mut unused = 0;
    for (i, lp) in locals.pools.iter_mut().enumerate() {
        let Some(pool) = pools.get(i % MAX_CLASSES) else {
            continue;
        };
        if lp.cursor < lp.limit && detached(lp, table) {
            // A freed slot made the run and not handed out: freed again,
            // for the next pause to make free.
            table.tag_freed(lp.cursor);
            pool.forget_freed(std::iter::once(lp.cursor));
            lp.cursor = lp.limit;
        }
        if lp.page != NO_PAGE {
            let d = table.desc(lp.page);
            if lp.cursor < lp.limit {
                let base = table.page_addr(lp.page);
                let from = (lp.cursor - base) / lp.slot_size;
                let to = (lp.limit - base) / lp.slot_size;
                d.alloc.clear_range(from, to);
                match i / MAX_CLASSES {
                    1 => d.no_pointers.clear_range(from, to),
                    2 => d.conservative.clear_range(from, to),
                    3 => d.barriered.clear_range(from, to),
                    _ => {}
                }
                lp.unreported -= (to - from) as i64;
                unused += (lp.limit - lp.cursor) as u64;
            }
            let has_free = d.alloc.find(0, d.slot_count(), false).is_some();
            pool.return_page(lp.page, has_free);
            lp.page = NO_PAGE;
        }
        lp.cursor = 0;
        lp.limit = 0;
        report(lp, pool);
    }
    std::mem::take(&mut locals.run_bytes).saturating_sub(unused)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page of 32-byte slots as pool 0's (context 0: zeroed runs) current
    /// page, its slot 3 holding a free tag (old, non-zero bytes).
    fn page_with_old_bytes(zeroed: bool) -> (PageTable, LocalAllocator) {
        let t = PageTable::new(1).unwrap();
        let d = t.desc(0);
        d.init_small(0, 32);
        d.set_zeroed(zeroed);
        t.tag_freed(t.page_addr(0) + 3 * 32);
        let mut local = LocalAllocator::new(&[32], false, false);
        local.set_page(0, 0);
        (t, local)
    }

    #[test]
    fn a_run_of_a_page_not_known_zeroed_is_cleared() {
        let (t, mut local) = page_with_old_bytes(false);
        assert!(!t.is_zero(t.page_addr(0), 4 * 32));
        assert!(local.next_run(&t, 0, usize::MAX));
        let lp = &local.locals().pools[0];
        assert_eq!(lp.cursor, t.page_addr(0));
        assert!(lp.limit - lp.cursor >= 4 * 32);
        assert!(t.is_zero(lp.cursor, lp.limit - lp.cursor));
    }

    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "a run of a page marked zeroed holds old bytes")]
    fn a_page_marked_zeroed_with_old_bytes_in_a_free_slot_is_caught() {
        let (t, mut local) = page_with_old_bytes(true);
        local.next_run(&t, 0, usize::MAX);
    }
}
