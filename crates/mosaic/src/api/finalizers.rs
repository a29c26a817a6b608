//! Finalizers as the embedder sees them: registering, running the ready
//! ones, being told when some are ready, and the optional finalizer thread.
//! The choice of what to finalize is `collect/finalize.rs`; the notifier
//! and the thread's wake-up signal are held by the heap (`heap.rs`).

use std::sync::{Arc, Weak};

use crate::collect::FinalizerOrder;
use crate::embedder::Embedder;
use crate::error::Error;
use crate::object::ObjRef;

use super::heap::{FinalizerSignal, Heap, HeapInner, Notifier};
use super::mutator::Mutator;

/// A finalizer: runs once, on a thread with a mutator, with the object.
type FinalizerFn<E> = Box<dyn FnOnce(&mut Mutator<E>, ObjRef) + Send>;

impl<E: Embedder> Mutator<E> {
    /// Registers a finalizer for `obj`: when `obj` becomes unreachable it is
    /// kept alive, with everything it references, until `f` has run once
    /// (see [`FinalizerOrder`] for objects that reach each other); a later
    /// collection then reclaims it, unless `f` made it reachable again.
    ///
    /// `f` never runs inside a pause or an allocation: collections queue
    /// ready finalizers, and they run in [`Mutator::run_finalizers`] (or on
    /// the thread of [`Heap::start_finalizer_thread`]), given that thread's
    /// mutator, so they may allocate and use heap objects. While `f` runs,
    /// its object is rooted and pinned: a compaction that `f` causes does
    /// not move it, so the `ObjRef` `f` is given stays valid (anything else
    /// it holds as a plain `ObjRef` may move, as anywhere). Finalizers still
    /// registered or queued when the heap is dropped never run (`on_free`
    /// still does). Refused if `obj` is not an object of this heap or
    /// already has a finalizer.
    pub fn register_finalizer(
        &self,
        obj: ObjRef,
        order: FinalizerOrder,
        f: impl FnOnce(&mut Mutator<E>, ObjRef) + Send + 'static,
    ) -> Result<(), Error> {
        self.check_usable("register a finalizer")?;
        let core = &self.heap.core;
        let obj = core.check_object(obj.addr())?;
        let f: FinalizerFn<E> = Box::new(f);
        core.finalizers
            .register(obj.addr(), order, Box::new(f))
            .map_err(|_| Error::AlreadyRegistered {
                addr: obj.addr(),
                what: "finalizer",
            })
    }

    /// Removes `obj`'s finalizer if it has not been queued yet; whether it
    /// had one.
    pub fn unregister_finalizer(&self, obj: ObjRef) -> bool {
        // (In a blocking region or a callback, nothing is unregistered.)
        self.check_usable("unregister a finalizer").is_ok()
            && self.heap.core.finalizers.unregister(obj.addr())
    }

    /// Runs every queued finalizer on this thread (oldest first, including
    /// those queued by collections the finalizers cause); returns how many
    /// ran. Refused inside a collector callback or a blocking region. A
    /// panicking finalizer propagates; the ones after it stay queued.
    pub fn run_finalizers(&mut self) -> Result<usize, Error> {
        let mut n = 0;
        loop {
            // Again each time: a finalizer may have entered a blocking
            // region, where popping and rooting would race with a pause.
            self.check_usable("run finalizers")?;
            self.ensure_attached();
            self.safepoint();
            let core = &self.heap.core;
            // Popping and rooting happen with no safepoint in between, so no
            // collection can see the object unrooted.
            let Some((addr, payload)) = core.finalizers.pop_ready() else {
                return Ok(n);
            };
            let root = self.link.roots.make(addr);
            let f = payload
                .downcast::<FinalizerFn<E>>()
                .expect("a finalizer payload is a FinalizerFn");
            let obj = root.get().expect("a rooted finalizable object");
            // Pinned while `f` runs: it holds `obj` as a plain reference,
            // and a collection it causes may compact. Unpinned even if `f`
            // panics.
            core.pins.pin(addr);
            let pin = PinnedWhileRunning(self.heap.clone(), addr);
            n += 1;
            f(self, obj);
            drop(pin);
            drop(root);
        }
    }
}

/// Removes the pin of an object whose finalizer ran (or panicked).
struct PinnedWhileRunning<E: Embedder>(Arc<HeapInner<E>>, usize);

impl<E: Embedder> Drop for PinnedWhileRunning<E> {
    fn drop(&mut self) {
        self.0.core.pins.unpin(self.1);
    }
}

impl<E: Embedder> Heap<E> {
    /// Finalizers queued and not run yet.
    pub fn pending_finalizers(&self) -> usize {
        self.inner.core.finalizers.pending()
    }

    /// Objects with a finalizer registered and not yet queued.
    pub fn registered_finalizers(&self) -> usize {
        self.inner.core.finalizers.registered()
    }

    /// Sets the function called when a collection has queued finalizers:
    /// on the collecting thread, after the world resumed (possibly inside
    /// the allocation that collected). It should only signal (a flag, a
    /// condition variable): it must not allocate, collect or run the
    /// finalizers itself. `None` removes it.
    pub fn set_finalizer_notifier(&self, f: Option<Box<dyn Fn() + Send + Sync>>) {
        *self.inner.notifier.lock() = f.map(Notifier::from);
    }

    /// Starts a thread (`mosaic-finalizer`) that runs finalizers whenever a
    /// collection queues some, with a mutator of its own. It stops when the
    /// heap is dropped (it does not keep the heap alive while idle). A
    /// panicking finalizer is reported like any thread's panic; the thread
    /// goes on with the next one. Refused if already started.
    pub fn start_finalizer_thread(&self) -> Result<(), Error> {
        self.start_finalizer_thread_with(|heap| {
            if let Ok(mut m) = heap.mutator() {
                let _ = m.run_finalizers();
            }
        })
    }

    /// [`Heap::start_finalizer_thread`] with the embedder's own runner: each
    /// time finalizers are queued, the thread calls `run(&heap)`, which
    /// should make a mutator, call [`Mutator::run_finalizers`] and drop the
    /// mutator before returning (attaching the thread to the runtime
    /// first, for instance). A mutator kept across calls would hold up
    /// every collection while the thread sleeps, and keep the heap alive.
    /// The thread holds the heap only during `run`.
    pub fn start_finalizer_thread_with(
        &self,
        run: impl Fn(&Heap<E>) + Send + 'static,
    ) -> Result<(), Error> {
        let mut slot = self.inner.finalizer_thread.lock();
        if slot.is_some() {
            return Err(Error::Misuse(
                "the finalizer thread is already running".into(),
            ));
        }
        let signal = Arc::new(FinalizerSignal::default());
        let weak: Weak<HeapInner<E>> = Arc::downgrade(&self.inner);
        let s = signal.clone();
        std::thread::Builder::new()
            .name("mosaic-finalizer".into())
            .spawn(move || finalizer_thread(weak, &s, run))
            .map_err(|e| Error::Misuse(format!("cannot start the finalizer thread: {e}")))?;
        *slot = Some(signal);
        drop(slot);
        // Finalizers queued before the thread existed run now.
        if self.pending_finalizers() > 0 {
            self.inner.notify_finalizers();
        }
        Ok(())
    }
}

fn finalizer_thread<E: Embedder>(
    heap: Weak<HeapInner<E>>,
    signal: &FinalizerSignal,
    run: impl Fn(&Heap<E>),
) {
    while signal.wait() {
        let Some(inner) = heap.upgrade() else { return };
        let heap = Heap { inner };
        // After a panic, go on while the panicking runs make progress.
        loop {
            let before = heap.pending_finalizers();
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&heap)));
            let after = heap.pending_finalizers();
            if ran.is_ok() || after == 0 || after >= before {
                break;
            }
        }
    }
}
