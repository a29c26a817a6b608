//! Mutators: per-thread handles that allocate, hold roots and collect.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use crate::alloc::{context, run_flags, LocalAllocator, LocalFlusher};
use crate::collect::{inside_callback, GcReason, LogBuffer, Root, RootTable, Timeline};
use crate::embedder::Embedder;
use crate::error::Error;
use crate::flags::AllocFlags;
use crate::object::ObjRef;
use crate::sched::{self, Detached, MutatorId, ThreadMutator, World};

use super::heap::{Heap, HeapInner};

/// Bytes a mutator allocates before it counts them against the heap's
/// allowance (one shared atomic add per this much allocation).
const REPORT_BYTES: u64 = 32 << 10;

/// A thread's handle on a heap. Allocation through it is thread-local and
/// lock-free on the fast path. Create one per thread with [`Heap::mutator`];
/// it is not `Send`: it belongs to the thread that created it.
///
/// A mutator must reach a safepoint now and then so that another thread can
/// collect: every allocation slow path is one, and long loops that do not
/// allocate should call [`Mutator::safepoint`] or run inside
/// [`Mutator::blocking`]. A thread that exits without dropping its mutator
/// (`std::mem::forget`, a C program that never frees it) has it detached
/// automatically, so it does not hold up later collections.
///
/// ```compile_fail
/// # use mosaic::{Config, Embedder, Heap, ObjRef, Tracer};
/// # struct NoRefs;
/// # unsafe impl Embedder for NoRefs {
/// #     fn trace<T: Tracer>(&self, _: ObjRef, _: &mut T) {}
/// #     fn roots<T: Tracer>(&self, _: &mut T) {}
/// # }
/// let heap = Heap::new(Config::default(), NoRefs).unwrap();
/// let m = heap.mutator().unwrap();
/// std::thread::spawn(move || drop(m)); // error: `Mutator` is not `Send`
/// ```
pub struct Mutator<E: Embedder> {
    pub(super) heap: Arc<HeapInner<E>>,
    local: LocalAllocator,
    /// Copy of the size → class table, one pointer away on the fast path.
    lookup: Box<[u8]>,
    /// The heap uses the default size classes: `alloc_sized` needs no table.
    default_classes: bool,
    stress_count: u64,
    pub(super) link: Arc<Link<E>>,
    /// Inside `enter_blocking` .. `leave_blocking`.
    in_blocking: bool,
    /// What this mutator's write barriers logged (`barrier.rs`).
    log: Arc<LogBuffer>,
    /// Verify mode or a debug build: barriers check their object.
    barrier_checks: bool,
    /// The object whose finalizer this mutator is running (0: none): its
    /// pin is the runner's, and does not stop the finalizer from freeing
    /// it (`free.rs`).
    pub(super) finalizing: usize,
    /// Tied to its thread (the allocation context is not shareable anyway).
    _not_send: PhantomData<*mut ()>,
}

/// The class of a `SIZE`-byte request in the default size classes, as a
/// constant.
struct DefaultClass<const SIZE: usize>;

impl<const SIZE: usize> DefaultClass<SIZE> {
    const CLASS: Option<usize> = crate::pool::SizeClasses::default_class_of(SIZE);
}

/// See [`Mutator::raw_fast_path`]. Each buffer starts with three words:
/// the run's next free byte, its end, and the slot size; bump when
/// `cursor + slot_size <= limit`. The zeroed buffer of class `c` is buffer
/// `c`; `class_of[(size + 7) >> 3]` is the class of `size` bytes (for
/// indexes below `class_of_len`). `safepoint_requested` is non-zero when
/// the thread should call its safepoint. The write barrier's unlogged
/// bits: bit `g % 64` of `log_bits[g / 64]` for `g = (obj - log_base) >> 3`
/// when `obj - log_base < log_len`; a set bit takes the slow path (always
/// taken when `barrier_checks`). All valid while the mutator lives.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct RawFastPath {
    pub buffers: *mut u8,
    pub buffer_size: usize,
    pub class_of: *const u8,
    pub class_of_len: usize,
    pub safepoint_requested: *const u8,
    pub log_base: usize,
    pub log_len: usize,
    pub log_bits: *const u64,
    pub barrier_checks: bool,
}

impl RawFastPath {
    /// The index in `buffers` of class 0's buffer for allocations with
    /// `flags`, when a bump is all their fast path does (the runs of those
    /// buffers give their slots every one of `flags`); class `c`'s buffer
    /// is then at that index plus `c`. `None` for flags that also need a
    /// side bit written per object (such allocations must call the
    /// library).
    pub fn bump_buffers(&self, flags: AllocFlags) -> Option<usize> {
        flags
            .without(run_flags(flags))
            .is_empty()
            .then(|| context(0, flags))
    }
}

/// What the thread's registry knows of a mutator (see `sched/threads.rs`).
pub(super) struct Link<E: Embedder> {
    heap: Arc<HeapInner<E>>,
    id: MutatorId,
    flusher: LocalFlusher,
    pub(super) roots: Arc<RootTable>,
    /// Detached because its thread exited; re-attached on its next use.
    orphaned: AtomicBool,
    /// Inside a blocking region (read by the signal parker, same thread).
    pub(super) in_blocking: AtomicBool,
    /// Parked in a signal handler (`signal_stop.rs`).
    pub(super) signal_parked: Arc<AtomicBool>,
}

impl<E: Embedder> ThreadMutator for Link<E> {
    fn heap_key(&self) -> usize {
        Arc::as_ptr(&self.heap) as usize
    }

    fn thread_exited(&self) {
        let core = &self.heap.core;
        // Inside a blocking region a collection may be scanning the scope:
        // rejoin first (waiting for it to end), then clear it.
        if self.heap.world.detached(self.id).is_some() {
            self.heap.world.attach(self.id);
        }
        // SAFETY: the mutator is alive (a dropped one leaves the registry
        // first) and its thread is running its exit destructors, not it.
        let bytes = unsafe { self.flusher.flush(&core.table, &core.pools) };
        core.sizer.add(bytes);
        self.roots.set_owner_attached(false);
        // The thread's frames are gone: its scope slots dangle.
        self.roots.clear_scope();
        self.roots.set_conservative_stack(None);
        self.orphaned.store(true, Relaxed);
        self.heap.world.detach(self.id, Detached::ThreadExited);
    }
}

/// Ends a pause even if the collection panics (verify mode does).
/// Records the restart as `resume` on the timeline, if there is one.
struct PauseGuard<'a>(&'a World, Option<&'a Timeline>);

impl Drop for PauseGuard<'_> {
    fn drop(&mut self) {
        let start = std::time::Instant::now();
        self.0.resume();
        if let Some(t) = self.1 {
            t.span("resume", start, None);
        }
    }
}

/// Re-attaches a mutator after a blocking region, even on panic.
struct Reattach<'a>(&'a World, MutatorId, &'a RootTable, &'a AtomicBool);

impl Drop for Reattach<'_> {
    fn drop(&mut self) {
        self.0.attach(self.1);
        self.2.set_owner_attached(true);
        self.3.store(false, Relaxed);
    }
}

impl<E: Embedder> Heap<E> {
    /// A mutator for the calling thread. A thread may hold one mutator per
    /// heap: a second one is refused with [`Error::MutatorExists`] (it would
    /// deadlock every collection, as the first could never park).
    pub fn mutator(&self) -> Result<Mutator<E>, Error> {
        Mutator::new(self.inner.clone(), false)
    }

    /// [`Heap::mutator`], also on a thread that is running its exit
    /// destructors (where `mutator` refuses with [`Error::ThreadExiting`]):
    /// for a C library whose thread-key destructors may still allocate.
    ///
    /// # Safety
    /// On an exiting thread the mutator is not detached automatically when
    /// the thread ends: the caller must drop it on this thread before the
    /// thread is gone, or every later collection waits for it.
    pub unsafe fn mutator_on_exiting_thread(&self) -> Result<Mutator<E>, Error> {
        Mutator::new(self.inner.clone(), true)
    }
}

impl<E: Embedder> Mutator<E> {
    /// A mutator for the calling thread, unless it already has one of this heap.
    pub(crate) fn new(heap: Arc<HeapInner<E>>, exiting_ok: bool) -> Result<Self, Error> {
        if sched::holds_mutator(Arc::as_ptr(&heap) as usize) {
            return Err(Error::MutatorExists {
                thread: sched::describe_current_thread(),
            });
        }
        sched::prepare_thread();
        let core = &heap.core;
        let local = LocalAllocator::new(
            core.classes.sizes(),
            core.config.stress > 0,
            core.config.generational,
        );
        let lookup = core.classes.lookup_table().into();
        let default_classes = core.config.size_classes == crate::config::SizeClassPreset::Mosaic;
        // Nothing below can panic between joining the world and returning.
        let id = heap.world.register();
        let roots = RootTable::for_mutator(id as usize);
        let link = Arc::new(Link {
            heap: heap.clone(),
            id,
            flusher: local.flusher(),
            roots: roots.clone(),
            orphaned: AtomicBool::new(false),
            in_blocking: AtomicBool::new(false),
            signal_parked: Arc::new(AtomicBool::new(false)),
        });
        if !sched::hold_mutator(link.clone()) && !exiting_ok {
            // The thread is running its exit destructors: a mutator made now
            // could never be detached for it.
            heap.world.unregister(id);
            return Err(Error::ThreadExiting {
                thread: sched::describe_current_thread(),
            });
        }
        roots.set_owner_attached(true);
        heap.root_tables.lock().push(roots);
        let log = heap.core.generations.register();
        let barrier_checks = heap.core.config.verify || cfg!(debug_assertions);
        Ok(Mutator {
            log,
            barrier_checks,
            heap,
            local,
            lookup,
            default_classes,
            stress_count: 0,
            link,
            in_blocking: false,
            finalizing: 0,
            _not_send: PhantomData,
        })
    }

    /// A mutator whose thread exited takes part in pauses again.
    #[inline]
    pub(super) fn ensure_attached(&self) {
        if self.link.orphaned.load(Relaxed) {
            self.reattach_orphan();
        }
    }

    /// (A mutator whose thread exited is used again by the thread's later
    /// destructors: it takes part in pauses again until dropped. If it is
    /// leaked a second time, nothing detaches it: the stall warning names it.)
    #[cold]
    fn reattach_orphan(&self) {
        self.heap.world.attach(self.link.id);
        self.link.roots.set_owner_attached(true);
        self.link.orphaned.store(false, Relaxed);
    }

    /// The heap this mutator allocates in.
    pub fn heap(&self) -> Heap<E> {
        Heap {
            inner: self.heap.clone(),
        }
    }

    /// Allocates `size` zeroed bytes. Size 0 gets the smallest slot (a
    /// unique address, as with `malloc(0)`).
    #[inline(always)]
    pub fn alloc(&mut self, size: usize) -> Result<ObjRef, Error> {
        self.alloc_with(size, AllocFlags::NONE)
    }

    /// Allocates `size` bytes with flags (see [`AllocFlags`]): zeroed,
    /// unless `flags` has [`AllocFlags::UNINIT`].
    #[inline(always)]
    pub fn alloc_with(&mut self, size: usize, flags: AllocFlags) -> Result<ObjRef, Error> {
        if let Some(&class) = self.lookup.get(size.saturating_add(7) >> 3) {
            if let Some(o) = self.bump(class as usize, flags) {
                return Ok(o);
            }
        }
        self.alloc_slow_sized(size, flags)
    }

    /// [`Mutator::alloc_with`] for a size known at compile time: with the
    /// default size classes the class is a constant, so the fast path is a
    /// bump and a compare, with no table lookup.
    ///
    /// ```
    /// # use mosaic::{AllocFlags, Config, Embedder, Heap, ObjRef, Tracer};
    /// # struct NoRefs;
    /// # unsafe impl Embedder for NoRefs {
    /// #     fn trace<T: Tracer>(&self, _: ObjRef, _: &mut T) {}
    /// #     fn roots<T: Tracer>(&self, _: &mut T) {}
    /// # }
    /// # let heap = Heap::new(Config::default(), NoRefs).unwrap();
    /// let mut m = heap.mutator().unwrap();
    /// let pair = m.alloc_sized::<16>(AllocFlags::NONE).unwrap();
    /// assert_eq!(heap.object_size(pair).unwrap(), 16);
    /// ```
    #[inline(always)]
    pub fn alloc_sized<const SIZE: usize>(&mut self, flags: AllocFlags) -> Result<ObjRef, Error> {
        if self.default_classes {
            if let Some(class) = DefaultClass::<SIZE>::CLASS {
                if let Some(o) = self.bump(class, flags) {
                    return Ok(o);
                }
                return self.alloc_slow(SIZE, Some(class), flags);
            }
        }
        self.alloc_with(SIZE, flags)
    }

    /// The allocation buffers and the class table, for an inline fast path
    /// written in another language (mosaic.h's `mosaic_alloc_inline`). Not
    /// for Rust code: `alloc` is inlined already.
    #[doc(hidden)]
    pub fn raw_fast_path(&mut self) -> RawFastPath {
        let (log_base, log_len, log_bits) = self.heap.core.table.log().raw();
        RawFastPath {
            log_base,
            log_len,
            log_bits,
            barrier_checks: self.barrier_checks,
            buffers: self.local.buffers().cast(),
            buffer_size: std::mem::size_of::<crate::alloc::LocalPool>(),
            class_of: self.lookup.as_ptr(),
            class_of_len: self.lookup.len(),
            safepoint_requested: self.heap.world.requested_flag(),
        }
    }

    /// The slow path of `alloc_with` (kept out of line: the class lookup
    /// stays off the fast path).
    #[cold]
    #[inline(never)]
    fn alloc_slow_sized(&mut self, size: usize, flags: AllocFlags) -> Result<ObjRef, Error> {
        let class = self.heap.core.classes.class_of(size);
        self.alloc_slow(size, class, flags)
    }

    /// The fast path: a slot of `class` from the current run, if any (an
    /// uncleared run for `UNINIT`: its slots are pointer-free already; a
    /// run for `CONSERVATIVE`: its slots carry the bit already).
    #[inline(always)]
    fn bump(&mut self, class: usize, flags: AllocFlags) -> Option<ObjRef> {
        let ctx = context(class, flags);
        let rest = flags.without(run_flags(flags));
        // A detached run (a freed slot, `api/free.rs`) lies on a page
        // another mutator may be allocating on: only allocations that
        // write no side bit may take it. (`rest` is a constant for
        // constant flags: the fast path keeps no test.)
        if !rest.is_empty() && self.local.run_is_detached(&self.heap.core.table, ctx) {
            return None;
        }
        let p = self.local.bump(ctx)?;
        if !rest.is_empty() {
            self.heap.core.set_small_flags(p, rest);
        }
        Some(ObjRef::from_heap_addr(p))
    }

    /// Allocates `size` zeroed bytes aligned to `align` (a power of two up
    /// to [`crate::PAGE_SIZE`]). Every allocation is aligned to 8 bytes, and
    /// to 16 when its slot size is a multiple of 16; ask here for more (SIMD
    /// data, cache lines). The object gets the smallest size class whose
    /// slots are all aligned, or a large object (page-aligned).
    pub fn alloc_aligned(
        &mut self,
        size: usize,
        align: usize,
        flags: AllocFlags,
    ) -> Result<ObjRef, Error> {
        if !align.is_power_of_two() || align > crate::space::PAGE_SIZE {
            return Err(Error::InvalidArgument(format!(
                "alignment {align} is not a power of two between 1 and {}",
                crate::space::PAGE_SIZE
            )));
        }
        if align <= 8 {
            return self.alloc_with(size, flags);
        }
        let classes = &self.heap.core.classes;
        let aligned = classes
            .class_of(size)
            .and_then(|first| (first..classes.len()).find(|&c| classes.slot_size(c) % align == 0));
        if let Some(o) = aligned.and_then(|class| self.bump(class, flags)) {
            return Ok(o);
        }
        // Above the largest aligned class: a large object starts a page.
        self.alloc_slow(size.max(1), aligned, flags)
    }

    /// The slow path for `size` bytes in `class` (`None`: a large object).
    #[cold]
    fn alloc_slow(
        &mut self,
        size: usize,
        class: Option<usize>,
        flags: AllocFlags,
    ) -> Result<ObjRef, Error> {
        self.check_usable("allocate")?;
        self.ensure_attached();
        self.safepoint();
        let stress = self.heap.core.config.stress;
        if stress > 0 {
            self.stress_count += 1;
            if self.stress_count % stress == 0 {
                self.collect_for(GcReason::Stress, None);
            }
        }
        match class {
            Some(class) => self.alloc_small(class, flags, size),
            None => self.alloc_large(size, flags),
        }
    }

    /// Collects garbage now (stop-the-world). If another thread is already
    /// collecting, waits for that collection instead. A panic from an
    /// embedder callback propagates from here once the heap is consistent
    /// again (see [`Embedder`]).
    ///
    /// # Panics
    /// Inside a blocking region or a collector callback (use
    /// [`Mutator::try_collect`] to get an error instead).
    pub fn collect(&mut self) {
        if let Err(e) = self.try_collect() {
            panic!("mosaic: {e}");
        }
    }

    /// [`Mutator::collect`], refused with [`Error::Misuse`] inside a
    /// blocking region or a collector callback.
    pub fn try_collect(&mut self) -> Result<(), Error> {
        self.try_collect_as(GcReason::Explicit)
    }

    /// A collection the embedder asked for, refused where it cannot run.
    fn try_collect_as(&mut self, reason: GcReason) -> Result<(), Error> {
        self.check_usable("collect")?;
        self.collect_for(reason, None);
        Ok(())
    }

    /// A full collection that then gives every free page back to the OS
    /// (bdwgc's `GC_gcollect_and_unmap`): for a program about to go idle,
    /// or one that just dropped most of its data. Every page is swept
    /// first, so every page the collection left empty is released; the
    /// pages come back committed as allocation needs them. An ordinary
    /// collection keeps the free pages the heap target has room for.
    ///
    /// # Panics
    /// As [`Mutator::collect`].
    pub fn collect_and_release(&mut self) {
        if let Err(e) = self.try_collect_and_release() {
            panic!("mosaic: {e}");
        }
    }

    /// [`Mutator::collect_and_release`], refused as
    /// [`Mutator::try_collect`] is.
    pub fn try_collect_and_release(&mut self) -> Result<(), Error> {
        self.try_collect_as(GcReason::Explicit)?;
        self.finish_sweep();
        let heap = self.heap.clone();
        heap.core.release_free_pages(|| self.safepoint());
        Ok(())
    }

    /// A minor collection (generational mode, `Config::generational`):
    /// marks only what the roots, the remembered set and unbarriered old
    /// objects reach among the objects allocated since the last
    /// collection. Outside generational mode, a full collection.
    ///
    /// # Panics
    /// As [`Mutator::collect`].
    pub fn collect_young(&mut self) {
        if let Err(e) = self.try_collect_young() {
            panic!("mosaic: {e}");
        }
    }

    /// [`Mutator::collect_young`], refused as [`Mutator::try_collect`] is.
    pub fn try_collect_young(&mut self) -> Result<(), Error> {
        self.try_collect_as(GcReason::Young)
    }

    /// [`Mutator::check_usable`], then attached again if its thread had
    /// exited (a late thread-key destructor): for calls that change what
    /// a pause reads (weak registrations, ephemerons), which must wait for
    /// a pause in progress.
    pub(super) fn check_attached(&self, what: &str) -> Result<(), Error> {
        self.check_usable(what)?;
        self.ensure_attached();
        Ok(())
    }

    /// Refuses work this mutator cannot do now.
    pub(super) fn check_usable(&self, what: &str) -> Result<(), Error> {
        if self.in_blocking {
            return Err(Error::Misuse(format!(
                "cannot {what} inside a blocking region (call leave_blocking first)"
            )));
        }
        if inside_callback() {
            return Err(Error::Misuse(format!(
                "cannot {what} inside a collector callback (trace, roots, on_free, an event listener or the finalizer notifier)"
            )));
        }
        Ok(())
    }

    /// Sweeps every page left unswept by the last collection (like Ruby's
    /// immediate sweep), so per-pool live and free counts are exact.
    pub fn finish_sweep(&mut self) {
        if self.in_blocking || inside_callback() {
            return;
        }
        self.ensure_attached();
        self.heap.core.finish_sweeping().resume();
    }

    /// Parks here if another thread wants to collect.
    #[inline]
    pub fn safepoint(&mut self) {
        if self.heap.world.requested() && !self.in_blocking {
            self.park();
        }
    }

    #[cold]
    fn park(&mut self) {
        self.ensure_attached();
        let h = &*self.heap;
        h.core
            .sizer
            .add(self.local.flush(&h.core.table, &h.core.pools));
        self.link.roots.record_stack();
        h.world.park(self.link.id);
    }

    /// Runs `f` as a blocking region: other threads may collect meanwhile
    /// without waiting for this one. `f` must not touch heap objects (it may
    /// read and write root handles).
    pub fn blocking<R>(&mut self, f: impl FnOnce() -> R) -> R {
        if self.in_blocking {
            return f();
        }
        self.detach_for_blocking();
        let h = &*self.heap;
        let _reattach = Reattach(
            &h.world,
            self.link.id,
            &self.link.roots,
            &self.link.in_blocking,
        );
        f()
    }

    /// Enters a blocking region, for code that blocks where a closure does
    /// not fit (the C API's `mosaic_blocking_enter`). Until
    /// [`Mutator::leave_blocking`], other threads collect without waiting
    /// for this one, and this mutator refuses to allocate or collect
    /// ([`Error::Misuse`]); the code in between must not touch heap
    /// objects, nor push scope slots. Entering twice is refused.
    pub fn enter_blocking(&mut self) -> Result<(), Error> {
        if self.in_blocking {
            return Err(Error::Misuse("already inside a blocking region".into()));
        }
        self.detach_for_blocking();
        self.in_blocking = true;
        Ok(())
    }

    /// Leaves the blocking region entered by [`Mutator::enter_blocking`]
    /// (waiting for a collection in progress to end). Refused outside one.
    pub fn leave_blocking(&mut self) -> Result<(), Error> {
        if !self.in_blocking {
            return Err(Error::Misuse(
                "leave_blocking without enter_blocking".into(),
            ));
        }
        self.in_blocking = false;
        drop(Reattach(
            &self.heap.world,
            self.link.id,
            &self.link.roots,
            &self.link.in_blocking,
        ));
        Ok(())
    }

    /// Whether the mutator is inside `enter_blocking` .. `leave_blocking`.
    pub fn is_blocking(&self) -> bool {
        self.in_blocking
    }

    fn detach_for_blocking(&mut self) {
        self.ensure_attached();
        let h = &*self.heap;
        h.core
            .sizer
            .add(self.local.flush(&h.core.table, &h.core.pools));
        self.link.roots.set_owner_attached(false);
        self.link.roots.record_stack();
        self.link.in_blocking.store(true, Relaxed);
        h.world.detach(self.link.id, Detached::Blocking);
    }

    /// A handle keeping `obj` alive. Fails if `obj` is not an object of this heap.
    pub fn root(&self, obj: ObjRef) -> Result<Root, Error> {
        let obj = self.heap.core.check_object(obj.addr())?;
        Ok(self.link.roots.make(obj.addr()))
    }

    /// A handle holding nothing yet.
    pub fn empty_root(&self) -> Root {
        self.link.roots.make(0)
    }
}

impl<E: Embedder> Drop for Mutator<E> {
    fn drop(&mut self) {
        // Leave the thread's registry first: its exit hook must never see
        // an allocator that is about to be freed.
        let link: Arc<dyn ThreadMutator> = self.link.clone();
        sched::release_mutator(&link);
        let h = &*self.heap;
        // No collector may flush the allocator once it is gone.
        h.signal_slots.lock().retain(|s| s.id != self.link.id);
        // A detached mutator (blocking region, or its thread exited) may be
        // scanned by a collection right now: rejoin first, so that its
        // scope and data are not taken away under the scan.
        if h.world.detached(self.link.id).is_some() {
            h.world.attach(self.link.id);
        }
        h.core
            .sizer
            .add(self.local.flush(&h.core.table, &h.core.pools));
        h.core.generations.unregister(&self.log);
        self.link.roots.owner_dropped();
        // Its table goes now if nothing else needs it (no handle left, no
        // collection holding it), not at the next collection: a program
        // that runs thousands of short threads between collections would
        // keep every one's table (and the allocator pages under them).
        let mine = &self.link.roots;
        h.root_tables.lock().retain(|t| {
            h.keep_table(
                t,
                !Arc::ptr_eq(t, mine) || Arc::strong_count(t) > 2 || !t.is_empty(),
            )
        });
        h.world.unregister(self.link.id);
    }
}

#[path = "slow_path.rs"]
mod slow_path;

#[path = "barrier.rs"]
mod barrier;

#[path = "free.rs"]
pub mod free;

#[path = "signal_stop.rs"]
pub mod signal_stop;

#[cfg(test)]
#[path = "mutator_tests.rs"]
mod tests;
