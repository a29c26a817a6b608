//! Finalizers as the embedder sees them: registering, running the ready
//! ones, being told when some are ready, and the optional finalizer thread.
//! The choice of what to finalize is `collect/finalize.rs`; the notifier
//! and the thread's wake-up signal are held by the heap (`heap.rs`).

use std::sync::{Arc, Weak};

use crate::collect::{FinalizerKind, FinalizerOrder, RegisterError, Root, RootTable};
use crate::embedder::Embedder;
use crate::error::Error;
use crate::object::ObjRef;

use super::heap::{FinalizerSignal, Heap, HeapInner, Notifier};
use super::mutator::Mutator;

/// A finalizer given as a plain function: `f(mutator, object, tag, data)`.
pub type FinalizerFn<E> = fn(&mut Mutator<E>, ObjRef, usize, usize);

/// Whether `kind` was made from a [`FinalizerFn`] (by
/// `register_finalizer_fn` or `set_shared_finalizer`): such a kind names
/// the function in `a`, a closure's has 0 there.
fn made_by_fn(kind: &FinalizerKind) -> bool {
    kind.a != 0
}

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
    /// it holds as a plain `ObjRef` may move, as anywhere: what `f`
    /// captures is not traced, so keep heap objects it needs in a
    /// [`crate::Root`], or reach them from `obj`). Finalizers still
    /// registered or queued when the heap is dropped never run (what they
    /// captured is dropped; `on_free` still runs). Refused if `obj` is not
    /// an object of this heap or already has a finalizer.
    ///
    /// A closure that captures nothing is stored in 16 bytes with no
    /// allocation; one that captures something is boxed besides (see
    /// [`Mutator::register_finalizer_fn`] for the allocation-free form
    /// with a data word).
    pub fn register_finalizer(
        &self,
        obj: ObjRef,
        order: FinalizerOrder,
        f: impl FnOnce(&mut Mutator<E>, ObjRef) + Send + 'static,
    ) -> Result<(), Error> {
        let (kind, data) = closure_kind::<E, _>(f);
        let r = self.register_kind(obj, order, kind, data);
        if r.is_err() {
            if let Some(d) = kind.drop {
                // SAFETY: the registration was refused: `data` is still ours.
                unsafe { d(data) }
            }
        }
        r
    }

    /// [`Mutator::register_finalizer`] with a plain function: `f(m, obj,
    /// tag, data)` runs once, on the same terms. Nothing is allocated: the
    /// registration costs 16 bytes. `data` belongs to this registration;
    /// `(f, tag)` pairs are interned for the heap's life (a tag is meant to
    /// be shared by many objects: a type, a C function pointer), and a heap
    /// accepts about half a million distinct pairs. Neither word is traced
    /// or updated when objects move: to reach a heap object from the
    /// finalizer, reach it from `obj`, or root and pin it yourself.
    pub fn register_finalizer_fn(
        &self,
        obj: ObjRef,
        order: FinalizerOrder,
        f: FinalizerFn<E>,
        tag: usize,
        data: usize,
    ) -> Result<(), Error> {
        let kind = FinalizerKind {
            call: call_fn::<E>,
            drop: None,
            a: f as usize,
            b: tag,
        };
        self.register_kind(obj, order, kind, data)
    }

    /// Registers the heap's shared finalizer ([`Heap::set_shared_finalizer`])
    /// for `obj`, on the terms of [`Mutator::register_finalizer`]. It costs
    /// two bits on `obj`'s page and no entry anywhere, so a heap can have
    /// millions: for objects whose finalizer is known from the object
    /// itself (its type word, a closure it holds), as the Boehm
    /// collector's disclaim procedures are. The shared function is given
    /// `obj`, its tag and, as data, the number of the collection that
    /// found `obj` unreachable ([`crate::GcEvent::CollectionStart`]'s `number`):
    /// an embedder that lets the program keep such an object after that
    /// collection (a weak table's lookup) can tell whether that happened
    /// before or after it. Refused if `obj` is not an object of
    /// this heap or already has a finalizer, or if no shared finalizer was
    /// set.
    pub fn register_shared_finalizer(
        &self,
        obj: ObjRef,
        order: FinalizerOrder,
    ) -> Result<(), Error> {
        self.check_attached("register a finalizer")?;
        let core = &self.heap.core;
        let obj = core.check_object(obj.addr())?;
        core.finalizers
            .register_shared(&core.table, obj.addr(), order)
            .map_err(|e| register_error(e, obj.addr()))
    }

    fn register_kind(
        &self,
        obj: ObjRef,
        order: FinalizerOrder,
        kind: FinalizerKind,
        data: usize,
    ) -> Result<(), Error> {
        self.check_attached("register a finalizer")?;
        let core = &self.heap.core;
        let obj = core.check_object(obj.addr())?;
        core.finalizers
            .register(&core.table, obj.addr(), order, kind, data)
            .map_err(|e| register_error(e, obj.addr()))
    }

    /// The function, tag and data `obj`'s finalizer was registered with by
    /// [`Mutator::register_finalizer_fn`], if it has one that a collection
    /// has not queued yet (`None` for no finalizer, a closure's, or the
    /// shared one). So an embedder needs no table of its own to answer
    /// "what was registered" (the Boehm collector's registration calls
    /// return the previous function and data). Cost: a look at the
    /// object's bit, and for a registered object a search of at most a few
    /// thousand recent registrations plus a binary search of the rest.
    pub fn finalizer_fn_of(&self, obj: ObjRef) -> Option<(FinalizerFn<E>, usize, usize)> {
        self.check_usable("look up a finalizer").ok()?;
        let core = &self.heap.core;
        let obj = core.check_object(obj.addr()).ok()?;
        let (kind, data) = core.finalizers.registration(&core.table, obj.addr())?;
        if !made_by_fn(&kind) {
            return None;
        }
        // SAFETY: a nonzero `a` was made from a `FinalizerFn<E>` by
        // `register_finalizer_fn`, for this heap's `E`.
        let f = unsafe { std::mem::transmute::<usize, FinalizerFn<E>>(kind.a) };
        Some((f, kind.b, data))
    }

    /// Removes `obj`'s finalizer if it has not been queued yet; whether it
    /// had one.
    pub fn unregister_finalizer(&self, obj: ObjRef) -> bool {
        // (In a blocking region or a callback, nothing is unregistered.)
        self.check_attached("unregister a finalizer").is_ok()
            && self
                .heap
                .core
                .finalizers
                .unregister(&self.heap.core.table, obj.addr())
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
            let Some(ready) = core.finalizers.pop_ready(&core.table) else {
                return Ok(n);
            };
            let addr = ready.obj;
            // Rooted and pinned while the finalizer runs: it holds `obj` as
            // a plain reference, and a collection it causes may compact.
            // The mutator's finalizing slot does both for one store; a
            // finalizer run from inside another one (the slot is taken)
            // gets a handle and a counted pin. Released even if it panics.
            let outer_slot = self.link.roots.set_finalizing(addr);
            let held = if outer_slot == 0 {
                Held::Slot(self.link.roots.clone())
            } else {
                self.link.roots.set_finalizing(outer_slot);
                core.pins.pin(addr);
                Held::Pinned(
                    self.link.roots.make(addr),
                    PinnedWhileRunning(self.heap.clone(), addr),
                )
            };
            let outer = std::mem::replace(&mut self.finalizing, addr);
            n += 1;
            let this = (self as *mut Mutator<E>).cast();
            // SAFETY: `call` is the trampoline the registration made for
            // this heap's embedder type, given its own kind words and data
            // once (the entry is gone from the queue), and this mutator.
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
                (ready.kind.call)(this, addr, ready.kind.a, ready.kind.b, ready.data)
            }));
            self.finalizing = outer;
            drop(held);
            if let Err(p) = ran {
                std::panic::resume_unwind(p);
            }
        }
    }
}

fn register_error(e: RegisterError, addr: usize) -> Error {
    match e {
        RegisterError::AlreadyRegistered => Error::AlreadyRegistered {
            addr,
            what: "finalizer",
        },
        RegisterError::TooManyKinds => {
            Error::Misuse("too many distinct finalizer functions and tags".into())
        }
        RegisterError::NoSharedKind => {
            Error::Misuse("register_shared_finalizer before Heap::set_shared_finalizer".into())
        }
    }
}

/// How the object of a running finalizer is kept and pinned.
enum Held<E: Embedder> {
    /// By the mutator's finalizing slot, emptied on drop.
    Slot(Arc<RootTable>),
    /// By a handle and a counted pin (a nested run).
    #[allow(dead_code)] // Held for their drops.
    Pinned(Root, PinnedWhileRunning<E>),
}

impl<E: Embedder> Drop for Held<E> {
    fn drop(&mut self) {
        if let Held::Slot(t) = self {
            t.set_finalizing(0);
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
    /// Visits the data word of every finalizer registered with
    /// [`Mutator::register_finalizer_fn`] that has not run yet (registered
    /// or queued; one unregistered since the last collection may be
    /// visited too). For an embedder whose data words are references the
    /// collector must see (a C program's client data): call it from
    /// [`Embedder::roots`] with the tracer's `visit_ambiguous`.
    pub fn visit_finalizer_data(&self, f: impl FnMut(usize)) {
        self.inner.core.finalizers.visit_data(made_by_fn, f)
    }

    /// Finalizers queued and not run yet.
    pub fn pending_finalizers(&self) -> usize {
        self.inner.core.finalizers.pending()
    }

    /// Objects with a finalizer registered and not yet queued.
    pub fn registered_finalizers(&self) -> usize {
        self.inner.core.finalizers.registered()
    }

    /// Sets the function run for objects registered with
    /// [`Mutator::register_shared_finalizer`]: `f(m, obj, tag, n)` with `n`
    /// the number of the collection that queued it, on the
    /// terms of [`Mutator::register_finalizer_fn`]. Setting it again
    /// changes what runs for the objects queued from then on (already
    /// queued ones keep the function they were queued with). Counts as one
    /// of the heap's interned `(f, tag)` pairs.
    pub fn set_shared_finalizer(&self, f: FinalizerFn<E>, tag: usize) -> Result<(), Error> {
        let kind = FinalizerKind {
            call: call_fn::<E>,
            drop: None,
            a: f as usize,
            b: tag,
        };
        self.inner
            .core
            .finalizers
            .set_shared(kind)
            .map_err(|e| register_error(e, 0))
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

/// The kind and data word of a closure finalizer: a closure that captures
/// nothing needs no storage, any other one is boxed.
fn closure_kind<E, F>(f: F) -> (FinalizerKind, usize)
where
    E: Embedder,
    F: FnOnce(&mut Mutator<E>, ObjRef) + Send + 'static,
{
    let data = if std::mem::size_of::<F>() == 0 {
        std::mem::forget(f);
        0
    } else {
        Box::into_raw(Box::new(f)) as usize
    };
    let drop = (std::mem::needs_drop::<F>() || std::mem::size_of::<F>() != 0)
        .then_some(drop_closure::<F> as unsafe fn(usize));
    let kind = FinalizerKind {
        call: call_closure::<E, F>,
        drop,
        a: 0,
        b: 0,
    };
    (kind, data)
}

/// Takes back the closure stored by [`closure_kind`].
///
/// # Safety
/// `data` must come from `closure_kind::<_, F>` and not have been taken.
unsafe fn take_closure<F>(data: usize) -> F {
    if std::mem::size_of::<F>() == 0 {
        // SAFETY: a zero-sized value is read from any aligned non-null
        // pointer; `closure_kind` forgot the original, so this is the one.
        unsafe { std::ptr::NonNull::<F>::dangling().as_ptr().read() }
    } else {
        // SAFETY: `data` is the box `closure_kind` leaked, taken once.
        unsafe { *Box::from_raw(data as *mut F) }
    }
}

/// Runs a closure finalizer.
///
/// # Safety
/// `m` is the `Mutator<E>` running finalizers; `data` as in [`take_closure`].
unsafe fn call_closure<E, F>(m: *mut (), obj: usize, _a: usize, _b: usize, data: usize)
where
    E: Embedder,
    F: FnOnce(&mut Mutator<E>, ObjRef) + Send + 'static,
{
    // SAFETY: the caller's promises.
    let (f, m) = unsafe { (take_closure::<F>(data), &mut *m.cast::<Mutator<E>>()) };
    f(m, ObjRef::from_heap_addr(obj));
}

/// Drops a closure finalizer that will never run.
///
/// # Safety
/// As in [`take_closure`].
unsafe fn drop_closure<F>(data: usize) {
    // SAFETY: the caller's promise.
    drop(unsafe { take_closure::<F>(data) });
}

/// Runs a [`FinalizerFn`] finalizer (`a` is the function, `b` the tag).
///
/// # Safety
/// `m` is the `Mutator<E>` running finalizers; `a` a `FinalizerFn<E>`.
unsafe fn call_fn<E: Embedder>(m: *mut (), obj: usize, a: usize, b: usize, data: usize) {
    // SAFETY: `a` was made from a `FinalizerFn<E>` by
    // `register_finalizer_fn`, for this heap's `E`.
    let (f, m) = unsafe {
        (
            std::mem::transmute::<usize, FinalizerFn<E>>(a),
            &mut *m.cast::<Mutator<E>>(),
        )
    };
    f(m, ObjRef::from_heap_addr(obj), b, data);
}
