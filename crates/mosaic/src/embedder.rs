//! The contract between Mosaic and the runtime that embeds it.
//!
//! Two required callbacks: [`Embedder::trace`] reports the reference fields
//! of one object, [`Embedder::roots`] reports the runtime's own root slots.
//! Both hand the collector the *address* of each slot (`&mut *mut u8`), so the
//! same callback serves marking today and reference updating when objects
//! move. The heap is generic over the embedder and the tracer is a generic
//! parameter, so tracing is monomorphised: no dynamic call per edge.

use crate::object::ObjRef;

/// Receives reference slots from the embedder.
pub trait Tracer {
    /// Visits one slot holding a reference: a null pointer, the start of a
    /// heap object, or an address outside the heap (ignored).
    fn visit(&mut self, slot: &mut *mut u8);

    /// Visits one *ambiguous* word: a value that may or may not be a
    /// reference (a word of a C stack, a saved register, a JIT frame, or a
    /// field of a conservatively scanned object). If it points anywhere
    /// inside an allocated object (interior pointers included), that
    /// object is kept alive and **pinned** for this collection: compaction
    /// will not move it, since the word cannot be updated. Any other value
    /// is ignored. From `roots` and `mutator_roots` it is a root; from
    /// `trace` it is an edge of the object being traced, like `visit` but
    /// never updated (an object whose fields are all visited this way is
    /// scanned conservatively), and ordered finalization follows it too.
    fn visit_ambiguous(&mut self, word: usize) {
        let _ = word;
    }

    /// [`Tracer::visit_ambiguous`] on every aligned word of `start..end`.
    ///
    /// # Safety
    /// `start..end` must be readable memory (for instance a stopped
    /// thread's stack), `start` aligned to a word.
    unsafe fn visit_ambiguous_range(&mut self, start: *const usize, end: *const usize) {
        let mut p = start;
        while p < end {
            // SAFETY: inside the readable, aligned range the caller
            // vouches for; the words may belong to another thread's frames
            // (read_word: a load the sanitizers do not instrument).
            self.visit_ambiguous(unsafe { crate::os::stack::read_word(p) });
            // SAFETY: stays within (or one past) the range.
            p = unsafe { p.add(1) };
        }
    }

    /// [`Tracer::visit_ambiguous_range`] for a range that stays as it is
    /// for the rest of the collection's marking: the marker may queue it
    /// and scan it later, in pieces, on any GC worker (as bdwgc's
    /// `GC_push_all` does), so that one large root range (a program's data
    /// segments, a runtime's tables of constants) is shared out instead of
    /// holding one worker while the others wait. Other tracers scan it at
    /// once. For memory that may change or go away once the callback
    /// returns (a buffer on the callback's own stack, the collecting
    /// thread's own frames), use `visit_ambiguous_range`.
    ///
    /// # Safety
    /// As for `visit_ambiguous_range`, and `start..end` stays readable, and
    /// its words unchanged, until the collection's marking has ended: no
    /// thread writes it, frees it or unmaps it during the pause.
    unsafe fn defer_ambiguous_range(&mut self, start: *const usize, end: *const usize) {
        // SAFETY: the caller's promise covers the immediate scan too.
        unsafe { self.visit_ambiguous_range(start, end) }
    }
}

/// The mutator whose roots [`Embedder::mutator_roots`] asks for.
#[derive(Clone, Copy, Debug)]
pub struct MutatorInfo {
    /// Unique among the heap's mutators, never reused.
    pub id: u64,
    /// What the mutator set with [`crate::Mutator::set_data`] (null if nothing).
    pub data: *mut (),
}

/// What a runtime tells Mosaic about its objects.
///
/// # Where and when callbacks run
///
/// - `trace`, `roots` and `mutator_roots` run while every other mutator
///   of the heap is stopped (parked at a safepoint or inside a blocking
///   region), on the thread that collects and, with several GC workers
///   (`Config::gc_threads`, one per core by default), on the heap's GC
///   threads too: several threads may call `trace` at the same time, on
///   different objects (on one object too, rarely, if the embedder says
///   so with [`Embedder::TRACE_TWICE_OK`]), and `roots` and the
///   `mutator_roots` calls (one per mutator, each a task of its own) may
///   run on different threads at the same time.
/// - `on_free` runs on the thread that sweeps the dead object's page. With
///   lazy sweeping (the default) that is a mutator's thread inside an
///   allocation (or [`crate::Mutator::finish_sweep`]), *while other mutators
///   keep running*, so several threads may run `on_free` at the same time
///   for different objects. The thread that starts a collection first
///   sweeps what is still unswept, with the world running. It also runs
///   inside a pause: for large objects, with eager sweeping (`lazy_sweep =
///   false`), and for pages another thread's sweep still held when the
///   collection started; at heap teardown, on the thread that drops the
///   last handle.
/// - No callback runs under a lock the API takes: a callback may read
///   [`crate::Heap::stats`]. None may allocate in the heap or collect:
///   allocation slow paths, collections and `run_finalizers` on the thread
///   running a callback are refused with [`crate::Error::Misuse`] (an
///   allocation that `on_free` makes through its thread's mutator may still
///   succeed from that mutator's current run: the check is not on the fast
///   path).
///
/// # Panics
///
/// A panic inside a callback leaves the heap consistent, then propagates to
/// the caller of the Mosaic function that ran it:
///
/// - in `trace` or `roots` (on any GC worker), the collection is
///   abandoned once every worker has stopped: every mark bit is
///   cleared, nothing is freed, the other mutators resume, and the panic
///   continues out of [`crate::Mutator::collect`] (or the allocation that
///   collected). The next collection starts from scratch.
/// - in `on_free`, the object counts as freed, the page (or the pause)
///   being swept is finished, every other `on_free` of that batch still
///   runs, and then the first panic continues out of the allocation,
///   `collect`, `finish_sweep` or heap drop that swept.
///
/// # Safety
///
/// `trace` must visit every reference field of every object it is given, and
/// `roots` every root slot the runtime holds outside handles; a missed
/// reference lets the collector free a live object.
pub unsafe trait Embedder: Send + Sync + 'static {
    /// Calls `tracer.visit` on the address of each reference field of `obj`.
    /// Never called for objects allocated with `NO_POINTERS`.
    fn trace<T: Tracer>(&self, obj: ObjRef, tracer: &mut T);

    /// Calls `tracer.visit` on each root slot of the runtime (globals, stack
    /// maps, ...). Roots held in [`crate::Root`] handles are found without it.
    fn roots<T: Tracer>(&self, tracer: &mut T);

    /// Calls `tracer.visit` on the root slots of one mutator (its
    /// interpreter stack, its registers...). Called once per existing
    /// mutator at each collection (twice in verify mode, whose check walks
    /// the roots again), with the data pointer the mutator set
    /// with [`crate::Mutator::set_data`] (null if none). The mutator is
    /// stopped: parked at a safepoint, or in a blocking region (whose code
    /// must then leave those slots alone), or its thread has exited.
    fn mutator_roots<T: Tracer>(&self, _mutator: &MutatorInfo, _tracer: &mut T) {}

    /// Whether [`Embedder::roots`] may move where a mutator's
    /// conservatively scanned stack ends (bdwgc's push-other-roots
    /// procedure sets the stack bottoms of threads that run fibers, for the
    /// stack scan that follows it). If so, those stacks are scanned after
    /// `roots` returns, in the same root task, instead of with the handles.
    const STACKS_AFTER_ROOTS: bool = false;

    /// Whether `trace` may be called for one object on two GC workers at
    /// once, rarely (it only reads the object and visits what it holds,
    /// and visiting twice is harmless), as the Boehm collector's parallel
    /// marker allows. If so, parallel marking sets mark bits with plain
    /// stores instead of an atomic read-modify-write per object
    /// (`collect/own_marks.rs`: about twice as fast per object on the
    /// machines measured), and two workers racing for one mark word may
    /// both trace an object. Off, `trace` runs at most once per object
    /// and collection. (Objects scanned conservatively, `AllocFlags::
    /// CONSERVATIVE`, are read by the collector itself either way.)
    const TRACE_TWICE_OK: bool = false;

    /// Called exactly once for each dead object allocated with
    /// `NEEDS_CLEANUP`, before its memory is reused, and for each such object
    /// still allocated when the heap is dropped. It must be thread-safe (see
    /// above) and must not touch other heap objects (they may be dead too),
    /// except, for an object also allocated with `KEEP_REFERENTS`, the
    /// objects its fields reference (they stay alive and in place until
    /// this call, unless the heap is being dropped).
    fn on_free(&self, _obj: ObjRef) {}

    /// Called for each object a compaction moved, once its bytes are at
    /// `to` (the first `min(old_size, new_size)` bytes copied, the rest of
    /// a bigger slot zeroed) and before the pause ends. `old_size` and
    /// `new_size` are slot sizes; they differ when [`Embedder::resize`]
    /// asked for another pool. Runs in the pause, on any GC worker, while
    /// other references to the object may still hold `from`: it must not
    /// read other objects' fields, nor `Root` handles of detached
    /// mutators (the compaction holds their locks). Update address-keyed
    /// tables here (an identity hash, a symbol table).
    fn on_move(&self, _from: ObjRef, _to: ObjRef, _old_size: usize, _new_size: usize) {}

    /// The size `obj` would best have now, if it differs from its slot
    /// (a string or array that grew or shrank in place), or `None`. A
    /// compaction moves such an object into the pool of that size
    /// (copying what fits) and reports both sizes to [`Embedder::on_move`].
    /// Asked only for movable objects during a compaction.
    fn resize(&self, _obj: ObjRef, _size: usize) -> Option<usize> {
        None
    }

    /// A short name of the object's type for heap dumps, or `None`.
    fn type_name(&self, _obj: ObjRef) -> Option<&str> {
        None
    }
}
