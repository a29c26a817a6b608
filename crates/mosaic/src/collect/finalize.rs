//! Finalizers: an object registered with a finalizer is kept alive, with
//! everything it references, until its finalizer has run once; a later
//! collection reclaims it (unless the finalizer made it reachable again).
//!
//! Finalizers never run in the pause: a collection only *chooses* the ready
//! ones and moves them to the ready queue, whose objects are roots until
//! their finalizer runs (`Mutator::run_finalizers`, or the finalizer thread).
//!
//! Two orders, as in the Boehm collector:
//! - [`FinalizerOrder::Unordered`]: chosen as soon as the object is
//!   unreachable from the roots, whatever refers to it. Cycles are
//!   finalized (in no particular order).
//! - [`FinalizerOrder::Ordered`]: if an unreachable finalizable object `A`
//!   reaches another one `B`, `A` is finalized first and `B` only in a
//!   later collection, after `A` is gone. Direct self-references are
//!   ignored, but objects in a longer cycle of ordered finalizable objects
//!   are never finalized (they leak, as with `GC_register_finalizer`).
//!
//! The choice (in the pause, after the strong and ephemeron closure):
//! unordered objects still unmarked are ready; then each unmarked ordered
//! object's *children* are marked (not the object itself); ordered objects
//! that stayed unmarked are ready; finally every ready object is marked, and
//! what it reaches with it.
//!
//! The payload is opaque here (the API layer stores the embedder's callback).

use std::any::Any;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

use parking_lot::Mutex;
use rustc_hash::FxHashMap;

use crate::embedder::Tracer;
use crate::space::{MarkState, PageTable};

/// The order in which dead finalizable objects are finalized.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum FinalizerOrder {
    /// An object reachable from another unreachable *ordered* finalizable
    /// object is finalized after it (a later collection). Cycles of ordered
    /// objects are never finalized. (An object reached only from unordered
    /// ones is finalized with them.)
    Ordered = 0,
    /// Every unreachable finalizable object is finalized at once, cycles
    /// included, in no particular order.
    Unordered = 1,
}

/// What the API layer attaches to a registration.
pub type Payload = Box<dyn Any + Send>;

/// The heap's finalizers.
#[derive(Default)]
pub struct Finalizers {
    registered: Mutex<FxHashMap<usize, (FinalizerOrder, Payload)>>,
    /// Chosen objects whose finalizer has not run yet (roots until then).
    ready: Mutex<VecDeque<(usize, Payload)>>,
    count: AtomicUsize,
    /// Set when a collection queued finalizers; taken by the notifier.
    queued: AtomicBool,
}

impl Finalizers {
    /// Registers `obj`; refused (payload returned) if it already has one.
    pub fn register(
        &self,
        obj: usize,
        order: FinalizerOrder,
        payload: Payload,
    ) -> Result<(), Payload> {
        let mut r = self.registered.lock();
        if r.contains_key(&obj) {
            return Err(payload);
        }
        r.insert(obj, (order, payload));
        self.count.store(r.len(), Relaxed);
        Ok(())
    }

    /// Removes `obj`'s registration (not a queued one); whether it had one.
    pub fn unregister(&self, obj: usize) -> bool {
        let mut r = self.registered.lock();
        let had = r.remove(&obj).is_some();
        self.count.store(r.len(), Relaxed);
        had
    }

    /// Whether any finalizer is registered.
    pub fn any(&self) -> bool {
        self.count.load(Relaxed) != 0
    }

    pub fn registered(&self) -> usize {
        self.count.load(Relaxed)
    }

    /// Finalizers chosen and waiting to run.
    pub fn pending(&self) -> usize {
        self.ready.lock().len()
    }

    /// The next ready finalizer, oldest first.
    pub fn pop_ready(&self) -> Option<(usize, Payload)> {
        self.ready.lock().pop_front()
    }

    /// Whether a collection queued finalizers since the last call.
    pub fn take_queued(&self) -> bool {
        self.queued.swap(false, Relaxed)
    }

    /// Compaction: registrations follow their moved objects (`fwd` maps
    /// old addresses to new ones). The ready queue is a root, updated with
    /// the others ([`Finalizers::scan_ready`]).
    pub fn update_moved(&self, fwd: &impl Fn(usize) -> Option<usize>) {
        if !self.any() {
            return;
        }
        let mut r = self.registered.lock();
        let moved: Vec<(usize, usize)> = r.keys().filter_map(|&o| fwd(o).map(|n| (o, n))).collect();
        for (o, n) in moved {
            let v = r.remove(&o).expect("key just listed");
            r.insert(n, v);
        }
    }

    /// Pause: visits the objects of the ready queue (they are roots).
    pub fn scan_ready<T: Tracer>(&self, tracer: &mut T) {
        for (obj, _) in self.ready.lock().iter_mut() {
            let mut p = *obj as *mut u8;
            tracer.visit(&mut p);
            *obj = p as usize;
        }
    }

    /// Pause, after the strong closure: the objects to finalize now. The
    /// caller marks them. `mark_children(obj)` must trace `obj`'s fields
    /// (skipping references to `obj` itself) and drain.
    pub fn choose(&self, table: &PageTable, mut mark_children: impl FnMut(usize)) -> Vec<usize> {
        let r = self.registered.lock();
        let unmarked = |o: usize| matches!(table.mark_state(o), MarkState::Unmarked(_));
        let mut ready: Vec<usize> = r
            .iter()
            .filter(|(&o, (order, _))| *order == FinalizerOrder::Unordered && unmarked(o))
            .map(|(&o, _)| o)
            .collect();
        let ordered: Vec<usize> = r
            .iter()
            .filter(|(&o, (order, _))| *order == FinalizerOrder::Ordered && unmarked(o))
            .map(|(&o, _)| o)
            .collect();
        drop(r);
        for &o in &ordered {
            mark_children(o);
        }
        ready.extend(ordered.into_iter().filter(|&o| unmarked(o)));
        ready
    }

    /// Pause: moves the chosen objects' registrations to the ready queue
    /// (in address order, so runs are reproducible).
    pub fn enqueue(&self, mut chosen: Vec<usize>) {
        if chosen.is_empty() {
            return;
        }
        chosen.sort_unstable();
        let mut r = self.registered.lock();
        let mut q = self.ready.lock();
        for o in chosen {
            if let Some((_, payload)) = r.remove(&o) {
                q.push_back((o, payload));
            }
        }
        self.count.store(r.len(), Relaxed);
        self.queued.store(true, Relaxed);
    }
}
