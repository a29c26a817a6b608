//! C callbacks behind the Rust `Embedder` trait.
//!
//! The tracer handed to C is a small struct holding a monomorphised thunk and
//! the Rust tracer it forwards to; `mosaic_visit` makes one indirect call per
//! edge (the design accepts one call per object or edge for C embedders).
//! `mosaic_visit_ambiguous` and `mosaic_visit_ambiguous_range` forward to
//! the same tracer's ambiguous-word methods.

use std::ffi::{c_char, c_void, CStr};

use mosaic_core::{Embedder, MutatorInfo, ObjRef, Tracer};

use crate::heap::{mosaic_mutator, mutator_user_data};

/// Reports the reference fields of `obj`: call `mosaic_visit(tracer, &field)`
/// for each one. Runs during a collection (see `mosaic_embedder`).
pub type mosaic_trace_fn =
    Option<unsafe extern "C" fn(ctx: *mut c_void, obj: *mut c_void, tracer: *mut mosaic_tracer)>;
/// Reports the runtime's root slots: `mosaic_visit(tracer, &slot)` for each.
/// Runs during a collection (see `mosaic_embedder`).
pub type mosaic_roots_fn =
    Option<unsafe extern "C" fn(ctx: *mut c_void, tracer: *mut mosaic_tracer)>;
/// Called for each dead object allocated with `MOSAIC_NEEDS_CLEANUP`, when
/// its page is swept (see `mosaic_embedder`).
pub type mosaic_free_fn = Option<unsafe extern "C" fn(ctx: *mut c_void, obj: *mut c_void)>;
/// Reports the root slots of one mutator `m` (its interpreter stack, its
/// saved registers): `mosaic_visit(tracer, &slot)` for each. `mutator_data`
/// is what `mosaic_mutator_set_data` set for `m` (NULL if nothing). Runs
/// during a collection, for each mutator (see `mosaic_embedder`).
pub type mosaic_mutator_roots_fn = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        m: *mut mosaic_mutator,
        mutator_data: *mut c_void,
        tracer: *mut mosaic_tracer,
    ),
>;

/// Called for each object a compaction moved, once its bytes are at `to`
/// (see `mosaic_embedder`).
pub type mosaic_move_fn = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        from: *mut c_void,
        to: *mut c_void,
        old_size: usize,
        new_size: usize,
    ),
>;
/// The size `obj` (now in a slot of `size` bytes) would best have, or 0 for
/// no preference (see `mosaic_embedder`).
pub type mosaic_resize_fn =
    Option<unsafe extern "C" fn(ctx: *mut c_void, obj: *mut c_void, size: usize) -> usize>;
/// A short static name of `obj`'s type for heap dumps, or NULL (see
/// `mosaic_embedder`).
pub type mosaic_type_name_fn =
    Option<unsafe extern "C" fn(ctx: *mut c_void, obj: *mut c_void) -> *const c_char>;

/// How the collector finds references. `trace` is required; `roots`,
/// `on_free`, `mutator_roots`, `on_move`, `resize` and `type_name` may be
/// NULL. `ctx` is passed to every callback.
///
/// `trace`, `roots` and `mutator_roots` run while every other mutator is
/// stopped (parked at a safepoint or inside a blocking region), on the
/// collecting thread (the one whose allocation or `mosaic_collect` started
/// the collection) and, with several GC workers (`gc_threads`, one per
/// core by default), on the heap's GC threads too: `trace` may run on
/// several threads at once for different objects, and `roots` and the
/// `mutator_roots` calls of different mutators on different threads at
/// the same time. They must be thread-safe. They must not allocate or call any mosaic function
/// other than `mosaic_visit`: `mosaic_alloc` returns NULL with
/// `MOSAIC_ERR_MISUSE` there, `mosaic_collect` and `mosaic_safepoint`
/// refuse with it, and the collection completes.
///
/// `roots` runs once per collection, and `mutator_roots` once per
/// collection for each mutator of the heap that has not been freed, the
/// collecting one included, with that mutator's handle and its
/// `mosaic_mutator_set_data` pointer (both run twice with `verify`, whose
/// walk scans the roots again). `mutator_roots` is the last field, so
/// initialisers written before it existed leave it NULL; a program built
/// against an older mosaic.h must be recompiled, though. The mutator
/// is stopped: parked, in a blocking region (whose code must then leave
/// the slots it reports alone), or its thread has exited. Use the handle
/// to tell mutators apart; do not call mosaic functions with it there.
///
/// `on_free` runs on the thread that sweeps the dead object. With lazy
/// sweeping (the default) that is mostly an allocating mutator's thread,
/// inside `mosaic_alloc` (or `mosaic_finish_sweep`), while other mutators
/// keep running, so several threads may run `on_free` at the same time for
/// different objects; the collecting thread also sweeps inside the pause
/// (large objects; the thread that starts a collection first sweeps what
/// is left unswept, with the world still running, and the pause sweeps
/// what other threads' sweeps still held then). With
/// eager sweeping (`lazy_sweep = false`) it runs inside the pause. When the
/// heap is torn down it runs on the thread that frees the last handle
/// (`mosaic_heap_free` or `mosaic_mutator_free`). It must be thread-safe,
/// must not allocate or call mosaic functions, and must not touch other
/// heap objects: they may be dead too (except, for an object allocated
/// `MOSAIC_KEEP_REFERENTS`, those its fields reference: they stay alive
/// and in place until its `on_free` ran).
///
/// `on_move`, `resize` and `type_name` serve compaction and heap dumps;
/// they were added last, after `mutator_roots`, so initialisers written
/// before them leave them NULL (a program built against an older mosaic.h
/// must still be recompiled). They follow the rules of `trace`: no
/// allocation, no mosaic call (`mosaic_alloc` and the others refuse with
/// `MOSAIC_ERR_MISUSE`), thread-safe.
///
/// `on_move(ctx, from, to, old_size, new_size)` runs for each object a
/// compaction moved (`mosaic_compact`, or `compact` in `mosaic_config`),
/// in the pause, on any GC worker, once the object's bytes are at `to`
/// (the first min(`old_size`, `new_size`) bytes copied, the rest of a
/// bigger slot zeroed). The sizes are slot sizes; they differ when
/// `resize` asked for another size. Other references may still hold
/// `from` then: read no other object's fields. Update address-keyed
/// tables here (an identity hash, a symbol table).
///
/// `resize(ctx, obj, size)` is asked, during a compaction's pause, for each
/// object that may move: `size` is its slot size now; return the size it
/// would best have (a string or array that grew or shrank in place), or 0
/// for no preference. An object given another size class moves into that
/// class's pool (what fits is copied) and `on_move` gets both sizes. A
/// size no class holds is ignored.
///
/// `type_name(ctx, obj)` names `obj`'s type in heap dumps
/// (`mosaic_dump_heap`), with the world stopped, on the dumping thread:
/// return a NUL-terminated UTF-8 string that stays valid (a string
/// literal), or NULL for none. A string that is not UTF-8 counts as NULL.
///
/// Callbacks must return normally: leaving one by unwinding (`longjmp`, a
/// C++ exception) is undefined behaviour. A Rust panic inside the library
/// cannot cross into C either: if one happens while C called in (verify
/// mode's diagnostic on a corrupt heap, for instance), the library prints
/// its message and aborts the process.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mosaic_embedder {
    pub trace: mosaic_trace_fn,
    pub roots: mosaic_roots_fn,
    pub on_free: mosaic_free_fn,
    pub ctx: *mut c_void,
    pub mutator_roots: mosaic_mutator_roots_fn,
    pub on_move: mosaic_move_fn,
    pub resize: mosaic_resize_fn,
    pub type_name: mosaic_type_name_fn,
}

/// The collector's side of tracing (opaque); pass it to `mosaic_visit`,
/// `mosaic_visit_ambiguous`, `mosaic_visit_ambiguous_range` and
/// `mosaic_defer_ambiguous_range`.
pub struct mosaic_tracer {
    visit: unsafe fn(*mut c_void, *mut *mut u8),
    visit_ambiguous: unsafe fn(*mut c_void, usize),
    visit_ambiguous_range: unsafe fn(*mut c_void, *const usize, *const usize),
    defer_ambiguous_range: unsafe fn(*mut c_void, *const usize, *const usize),
    inner: *mut c_void,
}

pub(crate) struct CEmbedder(pub mosaic_embedder);

// SAFETY: the C embedder promises its callbacks and ctx may be used from any
// mutator thread, concurrently for on_free (documented on mosaic_embedder).
unsafe impl Send for CEmbedder {}
// SAFETY: as above.
unsafe impl Sync for CEmbedder {}

unsafe fn visit_thunk<T: Tracer>(inner: *mut c_void, slot: *mut *mut u8) {
    // SAFETY: `inner` is the `&mut T` stored by `with_tracer` for the
    // duration of the callback; `slot` was checked non-null by mosaic_visit.
    unsafe { (*(inner as *mut T)).visit(&mut *slot) }
}

unsafe fn visit_ambiguous_thunk<T: Tracer>(inner: *mut c_void, word: usize) {
    // SAFETY: `inner` is the `&mut T` stored by `with_tracer` for the
    // duration of the callback.
    unsafe { (*(inner as *mut T)).visit_ambiguous(word) }
}

unsafe fn visit_ambiguous_range_thunk<T: Tracer>(
    inner: *mut c_void,
    start: *const usize,
    end: *const usize,
) {
    // SAFETY: `inner` as above; `start..end` is readable and `start`
    // aligned (checked and vouched for by mosaic_visit_ambiguous_range).
    unsafe { (*(inner as *mut T)).visit_ambiguous_range(start, end) }
}

unsafe fn defer_ambiguous_range_thunk<T: Tracer>(
    inner: *mut c_void,
    start: *const usize,
    end: *const usize,
) {
    // SAFETY: `inner` as above; `start..end` is readable, aligned and
    // unchanged until marking ends (vouched for by the caller of
    // mosaic_defer_ambiguous_range, bounds checked there).
    unsafe { (*(inner as *mut T)).defer_ambiguous_range(start, end) }
}

fn with_tracer<T: Tracer>(t: &mut T, f: impl FnOnce(*mut mosaic_tracer)) {
    let mut ct = mosaic_tracer {
        visit: visit_thunk::<T>,
        visit_ambiguous: visit_ambiguous_thunk::<T>,
        visit_ambiguous_range: visit_ambiguous_range_thunk::<T>,
        defer_ambiguous_range: defer_ambiguous_range_thunk::<T>,
        inner: t as *mut T as *mut c_void,
    };
    f(&mut ct)
}

// SAFETY: correctness of tracing is the C embedder's promise (see mosaic.h).
unsafe impl Embedder for CEmbedder {
    fn trace<T: Tracer>(&self, obj: ObjRef, tracer: &mut T) {
        if let Some(trace) = self.0.trace {
            // SAFETY: calling the embedder's callback with its own ctx.
            with_tracer(tracer, |t| unsafe {
                trace(self.0.ctx, obj.as_ptr().cast(), t)
            });
        }
    }

    fn roots<T: Tracer>(&self, tracer: &mut T) {
        if let Some(roots) = self.0.roots {
            // SAFETY: as above.
            with_tracer(tracer, |t| unsafe { roots(self.0.ctx, t) });
        }
    }

    fn mutator_roots<T: Tracer>(&self, mutator: &MutatorInfo, tracer: &mut T) {
        let Some(f) = self.0.mutator_roots else {
            return;
        };
        // Every mutator of a C heap is made by `new_mutator_handle`, which
        // sets its data to its handle before it can be scanned.
        let m: *mut mosaic_mutator = mutator.data.cast();
        if m.is_null() {
            return;
        }
        // SAFETY: a mutator is scanned only while it exists, and its handle
        // is freed only together with it (mosaic_mutator_free).
        let data = unsafe { mutator_user_data(m) };
        // SAFETY: calling the embedder's callback with its own ctx.
        with_tracer(tracer, |t| unsafe { f(self.0.ctx, m, data, t) });
    }

    fn on_free(&self, obj: ObjRef) {
        if let Some(f) = self.0.on_free {
            // SAFETY: as above.
            unsafe { f(self.0.ctx, obj.as_ptr().cast()) }
        }
    }

    fn on_move(&self, from: ObjRef, to: ObjRef, old_size: usize, new_size: usize) {
        if let Some(f) = self.0.on_move {
            // SAFETY: as above.
            unsafe {
                f(
                    self.0.ctx,
                    from.as_ptr().cast(),
                    to.as_ptr().cast(),
                    old_size,
                    new_size,
                )
            }
        }
    }

    fn resize(&self, obj: ObjRef, size: usize) -> Option<usize> {
        let f = self.0.resize?;
        // SAFETY: as above.
        let want = unsafe { f(self.0.ctx, obj.as_ptr().cast(), size) };
        (want != 0).then_some(want)
    }

    fn type_name(&self, obj: ObjRef) -> Option<&str> {
        let f = self.0.type_name?;
        // SAFETY: as above.
        let name = unsafe { f(self.0.ctx, obj.as_ptr().cast()) };
        if name.is_null() {
            return None;
        }
        // SAFETY: mosaic_embedder's contract: a non-NULL name is a
        // NUL-terminated string that stays valid (a literal), so it
        // outlives the borrow of `self` it is returned with.
        unsafe { CStr::from_ptr(name) }.to_str().ok()
    }
}

/// Visits one reference slot: `slot` is the address of a field (or root)
/// holding NULL, an object of the heap, or a pointer outside the heap.
/// Called once per edge, it reports no errors and leaves the last error as
/// it was (NULL arguments are ignored).
///
/// # Safety
/// `tracer` must be the tracer passed to the running callback and `slot`
/// NULL or a valid, writable pointer-sized location.
#[no_mangle]
pub unsafe extern "C" fn mosaic_visit(tracer: *mut mosaic_tracer, slot: *mut *mut c_void) {
    if tracer.is_null() || slot.is_null() {
        return;
    }
    // SAFETY: per this function's contract.
    unsafe { ((*tracer).visit)((*tracer).inner, slot.cast()) }
}

/// Visits one *ambiguous* word: a value that may or may not be a reference
/// (a word of a C stack, a saved register, a JIT frame, a conservatively
/// scanned buffer). If it points anywhere inside an object of the heap
/// (interior pointers included), that object is kept alive and pinned for
/// this collection: a compaction does not move it, since the word cannot
/// be updated. Any other value is ignored. From `roots` or
/// `mutator_roots` the word is a root; from `trace` it is a field of the
/// object being traced that is never updated (an object whose words are all
/// visited this way is scanned conservatively). Like `mosaic_visit`, it
/// reports no errors and leaves the last error as it was (a NULL tracer is
/// ignored).
///
/// # Safety
/// `tracer` must be NULL or the tracer passed to the running callback.
#[no_mangle]
pub unsafe extern "C" fn mosaic_visit_ambiguous(tracer: *mut mosaic_tracer, word: usize) {
    if tracer.is_null() {
        return;
    }
    // SAFETY: per this function's contract.
    unsafe { ((*tracer).visit_ambiguous)((*tracer).inner, word) }
}

/// `mosaic_visit_ambiguous` on every pointer-aligned word from `start` up
/// to `end` (exclusive): a buffer, or a stack segment your runtime manages.
/// `start` is rounded up and `end` down to a multiple of the word size; an
/// empty or reversed range, or a NULL argument, is ignored. Reports no
/// errors, like `mosaic_visit`. Call it from `roots`, `mutator_roots` or
/// `trace` (a conservatively scanned object's words).
///
/// # Safety
/// `tracer` must be NULL or the tracer passed to the running callback, and
/// `start .. end` readable memory that nothing writes during the call.
#[no_mangle]
pub unsafe extern "C" fn mosaic_visit_ambiguous_range(
    tracer: *mut mosaic_tracer,
    start: *const c_void,
    end: *const c_void,
) {
    if tracer.is_null() {
        return;
    }
    if let Some((first, last)) = word_bounds(start, end) {
        // SAFETY: per this function's contract; the bounds are aligned and
        // within the readable range.
        unsafe { ((*tracer).visit_ambiguous_range)((*tracer).inner, first, last) }
    }
}

/// `mosaic_visit_ambiguous_range` for memory that stays readable and
/// unchanged until the collection's marking ends (your program's data,
/// a table of constants, a stopped thread's stack segment): the collector
/// may queue the range and scan it later, in pieces, on any GC worker, so
/// that a large root range is shared out among the workers instead of
/// holding one while the others wait. Bounds, errors and where to call it
/// as for `mosaic_visit_ambiguous_range`. Not for memory the callback is
/// about to change or free (a buffer on its own stack).
///
/// # Safety
/// `tracer` must be NULL or the tracer passed to the running callback, and
/// `start .. end` readable memory that nothing writes, frees or unmaps until
/// the collection's marking has ended.
#[no_mangle]
pub unsafe extern "C" fn mosaic_defer_ambiguous_range(
    tracer: *mut mosaic_tracer,
    start: *const c_void,
    end: *const c_void,
) {
    if tracer.is_null() {
        return;
    }
    if let Some((first, last)) = word_bounds(start, end) {
        // SAFETY: per this function's contract; the bounds are aligned and
        // within the readable range.
        unsafe { ((*tracer).defer_ambiguous_range)((*tracer).inner, first, last) }
    }
}

/// `start` rounded up and `end` down to whole words (keeping the pointers'
/// provenance); `None` for a NULL bound or an empty or reversed range.
fn word_bounds(start: *const c_void, end: *const c_void) -> Option<(*const usize, *const usize)> {
    const WORD: usize = std::mem::size_of::<usize>();
    if start.is_null() || end.is_null() {
        return None;
    }
    let first = (start as usize)
        .checked_add(WORD - 1)
        .map(|a| a & !(WORD - 1))?;
    let last = end as usize & !(WORD - 1);
    if first >= last {
        return None;
    }
    // The rounded bounds stay inside `start .. end`, whose provenance they
    // keep.
    let first = start.cast::<u8>().wrapping_add(first - start as usize);
    let last = end.cast::<u8>().wrapping_sub(end as usize - last);
    Some((first.cast(), last.cast()))
}
