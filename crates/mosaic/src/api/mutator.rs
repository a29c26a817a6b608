//! Mutators: per-thread handles that allocate, hold roots and collect.

use std::sync::Arc;
use std::time::Instant;

use crate::alloc::LocalAllocator;
use crate::collect::{LargeFailure, Root, RootTable};
use crate::embedder::Embedder;
use crate::error::Error;
use crate::flags::AllocFlags;
use crate::object::ObjRef;
use crate::pool::Acquired;
use crate::sched::World;

use super::heap::{Heap, HeapInner};

/// A thread's handle on a heap. Allocation through it is thread-local and
/// lock-free on the fast path. Create one per thread with [`Heap::mutator`].
///
/// A mutator must reach a safepoint now and then so that another thread can
/// collect: every allocation slow path is one, and long loops that do not
/// allocate should call [`Mutator::safepoint`] or run inside
/// [`Mutator::blocking`].
pub struct Mutator<E: Embedder> {
    heap: Arc<HeapInner<E>>,
    local: LocalAllocator,
    /// Copy of the size → class table, one pointer away on the fast path.
    lookup: Box<[u8]>,
    roots: Arc<RootTable>,
    stress_count: u64,
}

/// Ends a pause even if the collection panics (verify mode does).
struct PauseGuard<'a>(&'a World);

impl Drop for PauseGuard<'_> {
    fn drop(&mut self) {
        self.0.resume();
    }
}

/// Re-attaches a mutator after a blocking region, even on panic.
struct Reattach<'a>(&'a World);

impl Drop for Reattach<'_> {
    fn drop(&mut self) {
        self.0.attach();
    }
}

impl<E: Embedder> Mutator<E> {
    pub(crate) fn new(heap: Arc<HeapInner<E>>) -> Self {
        heap.world.attach();
        let roots = Arc::new(RootTable::default());
        heap.root_tables.lock().push(roots.clone());
        let core = &heap.core;
        let local = LocalAllocator::new(core.classes.sizes(), core.config.stress > 0);
        let lookup = core.classes.lookup_table().into();
        Mutator {
            heap,
            local,
            lookup,
            roots,
            stress_count: 0,
        }
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

    /// Allocates `size` zeroed bytes with flags (see [`AllocFlags`]).
    #[inline(always)]
    pub fn alloc_with(&mut self, size: usize, flags: AllocFlags) -> Result<ObjRef, Error> {
        if let Some(&class) = self.lookup.get(size.saturating_add(7) >> 3) {
            if let Some(p) = self.local.bump(class as usize) {
                if !flags.is_empty() {
                    self.heap.core.set_flags(p, flags);
                }
                return Ok(ObjRef::from_heap_addr(p));
            }
        }
        self.alloc_slow(size, flags)
    }

    #[cold]
    #[inline(never)]
    fn alloc_slow(&mut self, size: usize, flags: AllocFlags) -> Result<ObjRef, Error> {
        self.safepoint();
        let stress = self.heap.core.config.stress;
        if stress > 0 {
            self.stress_count += 1;
            if self.stress_count % stress == 0 {
                self.collect();
            }
        }
        match self.heap.core.classes.class_of(size) {
            Some(class) => self.alloc_small(class, flags, size),
            None => self.alloc_large(size, flags),
        }
    }

    fn alloc_small(
        &mut self,
        class: usize,
        flags: AllocFlags,
        size: usize,
    ) -> Result<ObjRef, Error> {
        let heap = self.heap.clone();
        let core = &heap.core;
        let pool = &core.pools[class];
        let mut collected = false;
        loop {
            if self.local.next_run(&core.table, class) {
                let p = self.local.bump(class).expect("a new run has a free slot");
                if !flags.is_empty() {
                    core.set_flags(p, flags);
                }
                return Ok(ObjRef::from_addr(p));
            }
            self.local.report(class, pool);
            let started = Instant::now();
            let (acquired, swept) = core.with_sweeper(|cx| {
                let a = pool.acquire(cx, core.config.sweep_step_pages, collected);
                core.sweep_another_pool(cx, class);
                a
            });
            if swept > 0 {
                let step = started.elapsed();
                pool.note_sweep_step(step);
                core.counters.record_sweep_step(step);
            }
            match acquired {
                Acquired::Page(p) => self.local.set_page(class, p),
                Acquired::Exhausted if core.has_unswept() => core.finish_sweeping(),
                _ if !collected => {
                    self.collect();
                    collected = true;
                }
                _ => return Err(self.out_of_memory(size)),
            }
        }
    }

    fn alloc_large(&mut self, size: usize, flags: AllocFlags) -> Result<ObjRef, Error> {
        let heap = self.heap.clone();
        let core = &heap.core;
        let max = core.max_heap();
        if size > max {
            return Err(Error::TooLarge {
                requested: size,
                max,
            });
        }
        let mut collected = false;
        loop {
            match core.alloc_large(size, flags, !collected) {
                Ok(a) => return Ok(ObjRef::from_addr(a)),
                Err(LargeFailure::Exhausted) if core.has_unswept() => core.finish_sweeping(),
                Err(_) if !collected => {
                    self.collect();
                    collected = true;
                }
                Err(_) => return Err(self.out_of_memory(size)),
            }
        }
    }

    fn out_of_memory(&self, requested: usize) -> Error {
        Error::OutOfMemory {
            requested,
            max_heap: self.heap.core.max_heap(),
        }
    }

    /// Collects garbage now (stop-the-world). If another thread is already
    /// collecting, waits for that collection instead.
    pub fn collect(&mut self) {
        let h = &*self.heap;
        self.local.flush(&h.core.table, &h.core.pools);
        if h.world.stop() {
            let _resume = PauseGuard(&h.world);
            let tables = h.live_root_tables();
            h.core.collect(&tables);
        }
    }

    /// Sweeps every page left unswept by the last collection (like Ruby's
    /// immediate sweep), so per-pool live and free counts are exact.
    pub fn finish_sweep(&mut self) {
        self.heap.core.finish_sweeping();
    }

    /// Parks here if another thread wants to collect.
    #[inline]
    pub fn safepoint(&mut self) {
        if self.heap.world.requested() {
            self.park();
        }
    }

    #[cold]
    fn park(&mut self) {
        let h = &*self.heap;
        self.local.flush(&h.core.table, &h.core.pools);
        h.world.park();
    }

    /// Runs `f` (which must not touch the heap) as a blocking region: other
    /// threads may collect meanwhile without waiting for this one.
    pub fn blocking<R>(&mut self, f: impl FnOnce() -> R) -> R {
        let h = &*self.heap;
        self.local.flush(&h.core.table, &h.core.pools);
        h.world.detach();
        let _reattach = Reattach(&h.world);
        f()
    }

    /// A handle keeping `obj` alive. Fails if `obj` is not an object of this heap.
    pub fn root(&self, obj: ObjRef) -> Result<Root, Error> {
        let obj = self.heap.core.check_object(obj.addr())?;
        Ok(self.roots.make(obj.addr()))
    }

    /// A handle holding nothing yet.
    pub fn empty_root(&self) -> Root {
        self.roots.make(0)
    }
}

impl<E: Embedder> Drop for Mutator<E> {
    fn drop(&mut self) {
        let h = &*self.heap;
        self.local.flush(&h.core.table, &h.core.pools);
        h.world.detach();
    }
}
