//! The heap handle shared by all mutators.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::collect::{GcEvent, HeapCore, RootTable};
use crate::config::Config;
use crate::embedder::Embedder;
use crate::error::Error;
use crate::object::ObjRef;
use crate::sched::World;
use crate::space::Located;

use super::finalizers::{FinalizerSignal, Notifier};

/// A function called with every GC event ([`Heap::set_event_listener`]).
pub type EventListener = Box<dyn Fn(&GcEvent) + Send + Sync>;
use super::mutator::Mutator;
use super::stats::Stats;

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
}

impl<E: Embedder> Drop for HeapInner<E> {
    fn drop(&mut self) {
        self.stop_finalizer_thread();
    }
}

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
        tables.retain(|t| t.in_use());
        tables.clone()
    }
}

impl<E: Embedder> Heap<E> {
    /// Creates a heap: reserves `config.max_heap` bytes of address space
    /// (no memory is committed until used).
    pub fn new(config: Config, embedder: E) -> Result<Self, Error> {
        let world = World::new(config.stall_warning());
        Ok(Heap {
            inner: Arc::new(HeapInner {
                core: HeapCore::new(config, embedder)?,
                world,
                root_tables: Mutex::new(Vec::new()),
                notifier: Mutex::new(None),
                finalizer_thread: Mutex::new(None),
            }),
        })
    }

    /// A mutator for the calling thread. A thread may hold one mutator per
    /// heap: a second one is refused with [`Error::MutatorExists`] (it would
    /// deadlock every collection, as the first could never park).
    pub fn mutator(&self) -> Result<Mutator<E>, Error> {
        Mutator::new(self.inner.clone())
    }

    pub fn embedder(&self) -> &E {
        &self.inner.core.embedder
    }

    pub fn config(&self) -> &Config {
        &self.inner.core.config
    }

    /// Whether `p` is the start of an object currently allocated in this heap.
    pub fn is_object(&self, p: *const u8) -> bool {
        self.inner.core.table.object_at(p as usize).is_some()
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

    /// Sets the function called with every GC event (see [`GcEvent`] for
    /// where and when each is emitted); `None` removes it. The listener must
    /// not allocate in the heap or collect (refused with
    /// [`Error::Misuse`] if it tries); a panic in it propagates once the
    /// heap is consistent, like any callback's.
    pub fn set_event_listener(&self, listener: Option<EventListener>) {
        self.inner.core.events.set(listener.map(Arc::from));
    }

    /// A snapshot of the heap's statistics.
    pub fn stats(&self) -> Stats {
        Stats::collect(&self.inner.core, &self.inner.world)
    }
}
