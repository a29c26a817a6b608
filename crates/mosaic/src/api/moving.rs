//! What a mutator offers for moving objects: pins, compaction, conservative
//! scanning of its own stack.

use crate::collect::GcReason;
use crate::config::CompactOrder;
use crate::embedder::Embedder;
use crate::error::Error;
use crate::object::ObjRef;
use crate::os::stack;
use crate::space::Located;

use super::heap::Heap;
use super::mutator::Mutator;

impl<E: Embedder> Mutator<E> {
    /// Pins `obj`: no compaction moves it until as many [`Mutator::unpin`]
    /// calls as pins. Pinning does not keep it alive. Refused for what is
    /// not an object of this heap.
    pub fn pin(&self, obj: ObjRef) -> Result<(), Error> {
        self.check_attached("pin an object")?;
        let core = &self.heap.core;
        core.pins.pin(core.check_object(obj.addr())?.addr());
        Ok(())
    }

    /// Removes one pin of `obj`. Refused if it has none (a `PINNED`
    /// allocation stays pinned for life and has no pin to remove).
    pub fn unpin(&self, obj: ObjRef) -> Result<(), Error> {
        self.check_attached("unpin an object")?;
        if self.heap.core.pins.unpin(obj.addr()) {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "unpin of {obj:?}, which has no pin"
            )))
        }
    }

    /// Collects and compacts every size pool (like Ruby's `GC.compact`),
    /// filling pages in the configured order (`Config::compact_toward`).
    /// Every object not pinned may move: afterwards, only references the
    /// collector knows of (fields reported by `trace`, roots, handles,
    /// weak references) hold the new addresses; an `ObjRef` kept anywhere
    /// else is stale. Objects an ambiguous word points into stay.
    pub fn compact(&mut self) -> Result<(), Error> {
        let order = self.heap.core.config.compact_toward;
        self.compact_toward(order)
    }

    /// [`Mutator::compact`] with the page order given (to compare orders).
    pub fn compact_toward(&mut self, order: CompactOrder) -> Result<(), Error> {
        self.check_usable("compact")?;
        self.heap.core.request_compaction(order);
        self.collect_for(GcReason::Explicit, None);
        Ok(())
    }

    /// Scans this thread's stack and callee-saved registers conservatively
    /// at every collection (`true`), or stops (`false`). Every word that
    /// points into an object keeps it alive and pinned, so a runtime can
    /// hold objects in plain locals instead of a shadow stack. Words are
    /// recorded where the thread stops (a safepoint, an allocation that
    /// collects, a blocking region): objects held only in registers of
    /// code running inside a blocking region are not seen. Refused where
    /// the platform cannot tell where the stack is.
    pub fn set_conservative_stack(&mut self, on: bool) -> Result<(), Error> {
        if !on {
            self.link.roots.set_conservative_stack(None);
            return Ok(());
        }
        if !stack::SUPPORTED {
            return Err(Error::InvalidArgument(
                "conservative stack scanning is not supported on this architecture".into(),
            ));
        }
        let top = stack::stack_top().ok_or_else(|| {
            Error::InvalidArgument("the platform does not tell where this thread's stack is".into())
        })?;
        self.link.roots.set_conservative_stack(Some(top));
        Ok(())
    }

    /// Whether this thread's stack is scanned conservatively.
    pub fn conservative_stack(&self) -> bool {
        self.link.roots.conservative_stack()
    }
}

impl<E: Embedder> Heap<E> {
    /// Whether `obj` is pinned: allocated `PINNED` or pinned with
    /// [`Mutator::pin`]. (Large objects never move, pinned or not.)
    pub fn is_pinned(&self, obj: ObjRef) -> bool {
        let core = &self.inner.core;
        if core.pins.is_pinned(obj.addr()) {
            return true;
        }
        match core.table.locate(obj.addr()) {
            Located::Small { page, slot, start } if start == obj.addr() => {
                let d = core.table.desc(page);
                d.slot_is_live(slot) && d.pin.get(slot)
            }
            Located::Large { head, start } if start == obj.addr() => {
                core.table.desc(head).pin.get(0)
            }
            _ => false,
        }
    }
}
