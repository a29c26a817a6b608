//! The benchmarks' embedders: fixed layouts, and per-thread shadow stacks
//! for the pointers a workload holds in locals across allocations (Mosaic is
//! precise; this is the HLVM-style shadow stack the seed discusses).

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use mosaic::{AllocFlags, Config, Embedder, Mutator, MutatorInfo, ObjRef, Tracer};
use parking_lot::Mutex;

/// A stack of root slots owned by one thread. Pushes and pops are plain
/// stores (relaxed atomics); the collector reads it while the thread is
/// stopped.
pub struct ShadowStack {
    slots: Box<[AtomicUsize]>,
    top: AtomicUsize,
}

impl ShadowStack {
    pub fn new(capacity: usize) -> Self {
        ShadowStack {
            slots: (0..capacity).map(|_| AtomicUsize::new(0)).collect(),
            top: AtomicUsize::new(0),
        }
    }

    /// Pushes `obj`; returns its slot index.
    #[inline(always)]
    pub fn push(&self, obj: ObjRef) -> usize {
        let i = self.top.load(Relaxed);
        self.slots[i].store(obj.addr(), Relaxed);
        self.top.store(i + 1, Relaxed);
        i
    }

    #[inline(always)]
    pub fn get(&self, i: usize) -> ObjRef {
        ObjRef::from_ptr(self.slots[i].load(Relaxed) as *mut u8).expect("rooted object")
    }

    /// Overwrites slot `i`, which must be in use (below [`ShadowStack::len`]).
    #[inline(always)]
    pub fn set(&self, i: usize, obj: ObjRef) {
        debug_assert!(i < self.len(), "slot {i} is not in use");
        self.put(i, obj);
    }

    /// Writes slot `i` whether or not it is in use: a frame's slot,
    /// written before [`ShadowStack::truncate`] makes it a root by raising
    /// the length above it. (For embedders that keep their stack pointer
    /// in a local and publish it only before an allocation, as compiled
    /// code does; the collector reads only slots below the length.)
    #[inline(always)]
    pub fn put(&self, i: usize, obj: ObjRef) {
        self.slots[i].store(obj.addr(), Relaxed);
    }

    #[inline(always)]
    pub fn truncate(&self, len: usize) {
        self.top.store(len, Relaxed);
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.top.load(Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn visit<T: Tracer>(&self, t: &mut T) {
        for s in &self.slots[..self.top.load(Relaxed)] {
            let mut p = s.load(Relaxed) as *mut u8;
            t.visit(&mut p);
            s.store(p as usize, Relaxed);
        }
    }
}

/// How a workload's objects hold references.
pub trait Layout: Send + Sync + 'static {
    fn trace<T: Tracer>(obj: ObjRef, t: &mut T);
}

/// Objects whose first `N` words are references.
pub struct FirstWords<const N: usize>;

impl<const N: usize> Layout for FirstWords<N> {
    #[inline(always)]
    fn trace<T: Tracer>(obj: ObjRef, t: &mut T) {
        let f = obj.as_ptr() as *mut *mut u8;
        for i in 0..N {
            // SAFETY: objects of this layout start with N pointer words.
            t.visit(unsafe { &mut *f.add(i) });
        }
    }
}

/// Objects with a header word holding the number of reference words that
/// follow it (vectors of references).
pub struct Counted;

impl Layout for Counted {
    fn trace<T: Tracer>(obj: ObjRef, t: &mut T) {
        let f = obj.as_ptr() as *mut usize;
        // SAFETY: counted objects start with their reference count.
        let n = unsafe { f.read() };
        for i in 0..n {
            // SAFETY: followed by `n` pointer words.
            t.visit(unsafe { &mut *(f.add(1 + i) as *mut *mut u8) });
        }
    }
}

/// The embedder: a layout, the shadow stacks of every thread, and an
/// optional cleanup hook (for records with malloc'd payloads).
pub struct Vm<L: Layout> {
    stacks: Mutex<Vec<Arc<ShadowStack>>>,
    cleanup: Option<fn(ObjRef)>,
    _layout: std::marker::PhantomData<fn() -> L>,
}

impl<L: Layout> Default for Vm<L> {
    fn default() -> Self {
        Vm {
            stacks: Mutex::new(Vec::new()),
            cleanup: None,
            _layout: std::marker::PhantomData,
        }
    }
}

impl<L: Layout> Vm<L> {
    pub fn with_cleanup(f: fn(ObjRef)) -> Self {
        Vm {
            cleanup: Some(f),
            ..Self::default()
        }
    }

    /// A shadow stack for the calling thread's mutator `m` (one per
    /// mutator), scanned at every collection as that mutator's roots
    /// (`mutator_roots`: in a parallel mark each thread's stack is a task
    /// of its own, as a runtime's per-thread stacks would be). The heap's
    /// embedder keeps it as long as the heap lives.
    pub fn stack(&self, m: &mut Mutator<Self>, capacity: usize) -> Arc<ShadowStack> {
        assert!(m.data().is_null(), "one shadow stack per mutator");
        let s = Arc::new(ShadowStack::new(capacity));
        self.stacks.lock().push(s.clone());
        m.set_data(Arc::as_ptr(&s) as *mut ());
        s
    }
}

// SAFETY: `trace` follows the layout every object of this heap has, and
// `mutator_roots` visits every slot in use of the mutator's shadow stack
// (every shadow stack belongs to one mutator, `Vm::stack`).
unsafe impl<L: Layout> Embedder for Vm<L> {
    #[inline(always)]
    fn trace<T: Tracer>(&self, obj: ObjRef, t: &mut T) {
        L::trace(obj, t)
    }

    fn roots<T: Tracer>(&self, _t: &mut T) {}

    fn mutator_roots<T: Tracer>(&self, m: &MutatorInfo, t: &mut T) {
        if m.data.is_null() {
            return;
        }
        // SAFETY: set by `Vm::stack` to a shadow stack that `self.stacks`
        // keeps alive as long as the heap.
        let s = unsafe { &*(m.data as *const ShadowStack) };
        s.visit(t);
    }

    fn on_free(&self, obj: ObjRef) {
        if let Some(f) = self.cleanup {
            f(obj)
        }
    }
}

/// Generational mode as a workload sees it (`MOSAIC_GENERATIONAL`): its
/// objects promise the write barrier (`AllocFlags::BARRIERED`) and every
/// store of a reference into one calls it — except the stores into an
/// object allocated since the mutator's last allocation or safepoint
/// (no collection can have made it old: the barrier contract's
/// exemption). Off, neither the flag nor the call is made, so the
/// non-generational runs pay nothing for it.
#[derive(Clone, Copy, Debug)]
pub struct Gen {
    pub on: bool,
}

impl Gen {
    pub fn of(config: &Config) -> Gen {
        Gen {
            on: config.generational,
        }
    }

    /// The mode of `m`'s heap.
    pub fn of_mutator<E: Embedder>(m: &Mutator<E>) -> Gen {
        Gen::of(m.heap().config())
    }

    #[inline(always)]
    pub fn flags(self) -> AllocFlags {
        if self.on {
            AllocFlags::BARRIERED
        } else {
            AllocFlags::NONE
        }
    }

    #[inline(always)]
    pub fn barrier<E: Embedder>(self, m: &mut Mutator<E>, obj: ObjRef) {
        if self.on {
            m.write_barrier(obj);
        }
    }
}
