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
}

/// What a runtime tells Mosaic about its objects.
///
/// # Safety
///
/// `trace` must visit every reference field of every object it is given, and
/// `roots` every root slot the runtime holds outside handles; a missed
/// reference lets the collector free a live object. Neither may allocate in
/// the heap or block on another mutator: they run while the world is stopped.
pub unsafe trait Embedder: Send + Sync + 'static {
    /// Calls `tracer.visit` on the address of each reference field of `obj`.
    /// Never called for objects allocated with `NO_POINTERS`.
    fn trace<T: Tracer>(&self, obj: ObjRef, tracer: &mut T);

    /// Calls `tracer.visit` on each root slot of the runtime (globals, stack
    /// maps, ...). Roots held in [`crate::Root`] handles are found without it.
    fn roots<T: Tracer>(&self, tracer: &mut T);

    /// Called once for each dead object allocated with `NEEDS_CLEANUP`,
    /// before its memory is reused, and for each such object still alive
    /// when the heap is dropped. It must not touch other heap objects (they
    /// may be dead too).
    fn on_free(&self, _obj: ObjRef) {}
}
