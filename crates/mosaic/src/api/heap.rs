//! The heap handle shared by all mutators, and what the heap and its
//! mutators share ([`HeapInner`]): the collector's state, the world, the
//! root tables, and the wake-up of whoever runs finalizers (the notifier
//! and the finalizer thread's signal, which `finalizers.rs` waits on).
//!
//! The lowest file of the API: it imports no other API file but
//! `stats.rs`; `mutator.rs` (which adds [`Heap::mutator`]) and the files
//! that extend `Heap` and `Mutator` import it.

use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use crate::collect::{in_callback, FreeTotals, GcEvent, HeapCore, RootTable};
use crate::config::Config;
use crate::embedder::Embedder;
use crate::error::Error;
use crate::flags::AllocFlags;
use crate::object::ObjRef;
use crate::sched::World;
use crate::space::Located;

use super::stats::Stats;

/// A function called with every GC event ([`Heap::set_event_listener`]).
pub type EventListener = Box<dyn Fn(&GcEvent) + Send + Sync>;

/// A garbage-collected heap. Cheap to clone (it is a reference); the heap is
/// unmapped when the last clone and the last mutator are gone.
pub struct Heap<E: Embedder> {
    pub(crate) inner: Arc<HeapInner<E>>,
}

pub(crate) struct HeapInner<E: Embedder> {
    pub core: HeapCore<E>,
    pub world: World,
    /// Root tables of every mutator (kept while any of their roots lives).
    pub root_tables: Mutex<Vec<Arc<RootTable>>>,
    /// Called when a collection queued finalizers.
    pub notifier: Mutex<Option<Notifier>>,
    /// Wakes the finalizer thread, if started.
    pub finalizer_thread: Mutex<Option<Arc<FinalizerSignal>>>,
    /// Mutators that a signal may stop (`signal_stop.rs`).
    pub signal_slots: Mutex<Vec<SignalSlot>>,
    /// Asked before a collection that allocation made due (`set_collection_gate`).
    pub collection_gate: parking_lot::RwLock<Option<CollectionGate>>,
}

/// See [`Heap::set_collection_gate`].
pub type CollectionGate = Box<dyn Fn() -> bool + Send + Sync>;

/// A mutator that a signal may park: the pause flushes its allocation
/// context for it while `parked` is set (its thread is then inside the
/// signal handler, outside any heap call).
pub(crate) struct SignalSlot {
    pub id: crate::sched::MutatorId,
    pub flusher: crate::alloc::LocalFlusher,
    pub parked: Arc<std::sync::atomic::AtomicBool>,
}

// SAFETY: the flusher is used only by a collector while the owner thread
// is parked in its signal handler (`parked` set), never concurrently with
// the owner; the allocator it points to outlives the slot (the mutator
// removes its slot before dropping the allocator).
unsafe impl Send for SignalSlot {}

impl<E: Embedder> Drop for HeapInner<E> {
    fn drop(&mut self) {
        // First: the background job reads this heap through a raw pointer.
        self.core.workers.clear_background();
        self.stop_finalizer_thread();
    }
}

/// The heap, as background sweeping's job reaches it.
struct InnerPtr<E: Embedder>(*const HeapInner<E>);

// SAFETY: a `HeapInner` is shared between threads anyway (`Arc`, `Sync`
// parts); the pointer is only dereferenced while the heap lives (see
// `Heap::new`).
unsafe impl<E: Embedder> Send for InnerPtr<E> {}
// SAFETY: as for `Send`: only `&HeapInner` is made from it.
unsafe impl<E: Embedder> Sync for InnerPtr<E> {}

impl<E: Embedder> Clone for Heap<E> {
    fn clone(&self) -> Self {
        Heap {
            inner: self.inner.clone(),
        }
    }
}

impl<E: Embedder> HeapInner<E> {
    /// Root tables to scan; forgets those whose mutator and roots are all gone.
    pub fn live_root_tables(&self) -> Vec<Arc<RootTable>> {
        let mut tables = self.root_tables.lock();
        tables.retain(|t| self.keep_table(t, t.in_use()));
        tables.clone()
    }

    /// `keep`, for a `retain` of the root tables (under their lock): a
    /// table that goes gives its owner's free counts to the heap's.
    pub fn keep_table(&self, t: &RootTable, keep: bool) -> bool {
        if !keep {
            t.frees.fold_into(&self.core.counters);
        }
        keep
    }

    /// Explicit frees so far: the heap's counts plus every live mutator's,
    /// summed under the tables' lock (exact).
    pub fn free_totals(&self) -> FreeTotals {
        let tables = self.root_tables.lock();
        let mut totals = self.core.counters.free_totals();
        for t in tables.iter() {
            t.frees.add_to(&mut totals);
        }
        totals
    }
}

impl<E: Embedder> Heap<E> {
    /// Creates a heap: reserves `config.max_heap` bytes of address space
    /// (no memory is committed until used).
    pub fn new(config: Config, embedder: E) -> Result<Self, Error> {
        let world = World::new(config.stall_warning());
        let inner = Arc::new(HeapInner {
            core: HeapCore::new(config, embedder)?,
            world,
            root_tables: Mutex::new(Vec::new()),
            notifier: Mutex::new(None),
            finalizer_thread: Mutex::new(None),
            signal_slots: Mutex::new(Vec::new()),
            collection_gate: parking_lot::RwLock::new(None),
        });
        if inner.core.config.background_sweep {
            let heap = InnerPtr(Arc::as_ptr(&inner));
            inner
                .core
                .workers
                .set_background(Arc::new(move |stop: &dyn Fn() -> bool| {
                    let heap = &heap;
                    // SAFETY: the job runs only between `set_background`
                    // here and `clear_background` in `HeapInner::drop`,
                    // which returns once no thread runs it: the heap lives
                    // (in its `Arc`, at this address) all that time.
                    let inner = unsafe { &*heap.0 };
                    inner
                        .core
                        .sweep_in_background(&|| inner.world.requested(), stop);
                }));
        }
        Ok(Heap { inner })
    }

    /// Installs (or removes) a gate asked, on the allocating thread, each
    /// time allocation has made a collection due: `false` lets the heap
    /// grow instead (the Boehm collector's `GC_disable` / `GC_dont_gc`).
    /// Collections asked for explicitly, and those a full heap needs
    /// (`max_heap` reached), are not gated. It must not call into the heap.
    pub fn set_collection_gate(&self, gate: Option<CollectionGate>) {
        *self.inner.collection_gate.write() = gate;
    }

    pub fn embedder(&self) -> &E {
        &self.inner.core.embedder
    }

    pub fn config(&self) -> &Config {
        &self.inner.core.config
    }

    /// Lowers the maximum heap size to `bytes` (rounded down to whole
    /// pages), or raises it back up to at most the `max_heap` the heap was
    /// created with (its reservation). Returns the new maximum. Memory in
    /// use above a lowered maximum stays: allocations that need more pages
    /// collect, then fail with [`Error::OutOfMemory`] while the live data
    /// does not fit. [`Stats::max_heap`](crate::Stats) reads the current
    /// value; [`Heap::config`] keeps the one the heap was created with.
    pub fn set_max_heap(&self, bytes: usize) -> Result<usize, Error> {
        self.inner.core.set_max_heap(bytes)
    }

    /// Whether `p` is the start of an object currently allocated in this heap.
    pub fn is_object(&self, p: *const u8) -> bool {
        self.inner.core.table.object_at(p as usize).is_some()
    }

    /// The start of the live object `p` points into (interior pointers
    /// included; a large object's whole pages count), if any.
    pub fn object_containing(&self, p: *const u8) -> Option<ObjRef> {
        let a = self.inner.core.table.object_containing(p as usize)?;
        ObjRef::from_ptr(a as *mut u8)
    }

    /// [`Heap::object_containing`] with the object's usable size (slot
    /// size, or a large object's size), from one lookup.
    pub fn object_containing_sized(&self, p: *const u8) -> Option<(ObjRef, usize)> {
        let t = &self.inner.core.table;
        let (start, size) = match t.locate(p as usize) {
            Located::Small { page, slot, start } if t.desc(page).slot_is_live(slot) => {
                (start, t.desc(page).slot_size())
            }
            Located::Large { head, start } if t.desc(head).alloc.get(0) => {
                (start, t.desc(head).large_size())
            }
            _ => return None,
        };
        Some((ObjRef::from_ptr(start as *mut u8)?, size))
    }

    /// Whether the object `p` points into (interior pointers included) is
    /// marked: during a pause, by the collection in progress (what a
    /// conservative runtime's mark procedure or finalizer logic asks, the
    /// Boehm collector's `GC_is_marked`); between pauses every allocated
    /// object counts as marked (it survived the last collection or was
    /// allocated since). `None` when `p` is not inside a live object.
    pub fn is_marked(&self, p: *const u8) -> Option<bool> {
        let t = &self.inner.core.table;
        let (d, page, slot) = match t.locate(p as usize) {
            Located::Small { page, slot, .. } if t.desc(page).slot_is_live(slot) => {
                (t.desc(page), page, slot)
            }
            Located::Large { head, .. } if t.desc(head).alloc.get(0) => (t.desc(head), head, 0),
            _ => return None,
        };
        if !self.inner.world.pause_on() {
            return Some(true);
        }
        // (On a parallel marker's thread, what it marked itself reads
        // marked even if a racing store took the shared bit out for now.)
        Some(d.mark.get(slot) || crate::collect::marked_by_this_thread(page, slot))
    }

    /// The address range the heap's objects can occupy (its reservation):
    /// every object lies in `start..end`.
    pub fn address_range(&self) -> std::ops::Range<usize> {
        let t = &self.inner.core.table;
        t.base()..t.base() + t.capacity()
    }

    /// Checks that `p` is an object of this heap.
    pub fn check_object(&self, p: *const u8) -> Result<ObjRef, Error> {
        self.inner.core.check_object(p as usize)
    }

    /// The usable size of an object: its slot size, or a large object's size.
    pub fn object_size(&self, obj: ObjRef) -> Result<usize, Error> {
        let t = &self.inner.core.table;
        match t.object_at(obj.addr()) {
            Some(Located::Small { page, .. }) => Ok(t.desc(page).slot_size()),
            Some(Located::Large { head, .. }) => Ok(t.desc(head).large_size()),
            _ => Err(Error::ForeignPointer { addr: obj.addr() }),
        }
    }

    /// The flags that describe how the live object `obj` is scanned and
    /// kept: `NO_POINTERS` (never scanned: allocated so, or `UNINIT`),
    /// `CONSERVATIVE`, `PINNED`, `NEEDS_CLEANUP`, `KEEP_REFERENTS`; `None` for anything but
    /// the start of a live object.
    pub fn object_flags(&self, obj: ObjRef) -> Option<AllocFlags> {
        let t = &self.inner.core.table;
        let (d, slot) = match t.object_at(obj.addr())? {
            Located::Small { page, slot, .. } => (t.desc(page), slot),
            Located::Large { head, .. } => (t.desc(head), 0),
            _ => return None,
        };
        let mut f = AllocFlags::NONE;
        for (on, flag) in [
            (d.no_pointers.get(slot), AllocFlags::NO_POINTERS),
            (d.conservative.get(slot), AllocFlags::CONSERVATIVE),
            (d.pin.get(slot), AllocFlags::PINNED),
            (d.cleanup.get(slot), AllocFlags::NEEDS_CLEANUP),
            (d.keep_referents.get(slot), AllocFlags::KEEP_REFERENTS),
        ] {
            if on {
                f = f | flag;
            }
        }
        Some(f)
    }

    /// The slot size an allocation of `size` bytes gets, or `None` if it
    /// would be a large object.
    pub fn slot_size_for(&self, size: usize) -> Option<usize> {
        let c = &self.inner.core.classes;
        c.class_of(size).map(|i| c.sizes()[i])
    }

    /// The running counters alone ([`Counters`]): a few atomic loads.
    pub fn counters(&self) -> super::stats::Counters {
        super::stats::Counters::collect(&self.inner.core)
    }

    /// Writes the pause timeline (`Config::trace`, `MOSAIC_TRACE`) now, as
    /// dropping the heap does: for a heap that lives until the process
    /// exits (the drop-in writes it from an `atexit` handler). `Ok(false)`
    /// when no timeline was asked for.
    pub fn write_trace(&self) -> std::io::Result<bool> {
        match &self.inner.core.timeline {
            Some(t) => t.write().map(|()| true),
            None => Ok(false),
        }
    }

    /// Sets the function called with every GC event (see [`GcEvent`] for
    /// where and when each is emitted); `None` removes it. The listener must
    /// not allocate in the heap or collect (refused with
    /// [`Error::Misuse`] if it tries); a panic in it propagates once the
    /// heap is consistent, like any callback's.
    pub fn set_event_listener(&self, listener: Option<EventListener>) {
        self.inner.core.events.set(listener.map(Arc::from));
    }

    /// Bytes of every object freed explicitly ([`crate::Mutator::free`])
    /// since the heap was created, whether its memory was reusable at once
    /// or comes back at a sweep or the next collection (each object's
    /// slot size, a large object's requested size): what bdwgc's
    /// `GC_get_expl_freed_bytes_since_gc` counts between collections.
    pub fn freed_bytes(&self) -> u64 {
        self.inner.free_totals().bytes
    }

    /// A snapshot of the heap's statistics.
    pub fn stats(&self) -> Stats {
        Stats::collect(
            &self.inner.core,
            &self.inner.world,
            self.inner.free_totals(),
        )
    }
}

/// The finalizer notifier.
pub(crate) type Notifier = Arc<dyn Fn() + Send + Sync>;

/// Wakes the finalizer thread.
#[derive(Default)]
pub(crate) struct FinalizerSignal {
    /// (finalizers pending, heap gone)
    state: Mutex<(bool, bool)>,
    cv: Condvar,
}

impl FinalizerSignal {
    fn raise(&self, stop: bool) {
        let mut s = self.state.lock();
        s.0 = true;
        s.1 |= stop;
        self.cv.notify_one();
    }

    /// Waits for work; false once the heap is gone.
    pub(super) fn wait(&self) -> bool {
        let mut s = self.state.lock();
        while !s.0 {
            self.cv.wait(&mut s);
        }
        s.0 = false;
        !s.1
    }
}

impl<E: Embedder> HeapInner<E> {
    /// Collections queued finalizers: call the notifier, wake the thread.
    pub(crate) fn notify_finalizers(&self) {
        if let Some(signal) = &*self.finalizer_thread.lock() {
            signal.raise(false);
        }
        let notifier = self.notifier.lock().clone();
        if let Some(f) = notifier {
            in_callback(|| f());
        }
    }

    /// The heap goes away: the finalizer thread ends.
    pub(crate) fn stop_finalizer_thread(&self) {
        if let Some(signal) = self.finalizer_thread.lock().take() {
            signal.raise(true);
        }
    }
}
