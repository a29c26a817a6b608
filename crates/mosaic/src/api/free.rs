//! Explicit deallocation (`Mutator::free`): an object the program knows
//! to be dead gives its memory back before a collection proves it.
//!
//! A small object's slot is not put back on its page at once (another
//! mutator may be taking runs there, and lazy sweeping owns unswept
//! pages): it stays allocated, is cleared as a fresh slot of its
//! allocation context would be, gets its free tag in its first word
//! (`PageTable::tag_freed`: how a second free is recognised, with no
//! locked write to a side bitmap), and goes on the
//! freeing mutator's list for that context. That mutator's next
//! allocation of the same size and flags takes it before a new run. A
//! flush (each pause, a blocking region, thread exit) gives the rest to
//! their pools, and the next pause, with every mutator stopped and every
//! page swept, makes them free slots before it marks
//! (`SizePool::reclaim_forgotten`): a stale pointer to a freed object
//! keeps nothing. A large object's span goes back to the page resource at
//! once.
//!
//! Invariants: only bits nobody else writes outside a pause are changed
//! (the slot's mark bit, atomically; its unlogged bit); a slot holds its
//! free tag exactly while it waits in a list (taking it back or the
//! pause's reclaim writes its first word back to 0); a
//! slot is reused only by an allocation whose flags are exactly its
//! context's run flags, so no other side bit needs writing on a page
//! another mutator may be allocating on. Objects the collector still has
//! business with (a finalizer, cleanup, an ephemeron, a pin, a weak slot
//! registered inside it, an unswept page, a logged remembered-set entry)
//! are left to the next collection.

use std::sync::atomic::Ordering::Relaxed;

use crate::alloc::{context, run_flags};
use crate::embedder::Embedder;
use crate::error::Error;
use crate::flags::AllocFlags;
use crate::object::ObjRef;
use crate::space::{Located, PageDesc};

use super::Mutator;

/// What [`Mutator::free`] did with an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freed {
    /// Its memory is reusable now: the slot by this mutator's next
    /// allocation of the same size and flags, a large object's pages by
    /// any allocation.
    Now,
    /// Its page waits for the lazy sweep that follows the last
    /// collection: that sweep frees the slot.
    WhenSwept,
    /// The collector still has business with it (a finalizer, cleanup, an
    /// ephemeron, a pin, a weak slot inside it, a remembered-set entry) or
    /// this
    /// mutator holds as many freed slots as it keeps: the next collection
    /// reclaims it, as it would have without the call.
    AtNextCollection,
}

impl<E: Embedder> Mutator<E> {
    /// Frees `obj` explicitly (like bdwgc's `GC_free`): its memory may be
    /// handed out again by the next allocation. Refused for an address
    /// that is not a live object of this heap ([`Error::ForeignPointer`]),
    /// for an object freed twice ([`Error::Misuse`]; a best-effort check:
    /// a second free from another thread is missed while the slot waits
    /// as this mutator's next allocation, and so are two frees racing on
    /// two threads and a second free after the program wrote to the freed
    /// object), inside a blocking region or a
    /// collector callback.
    ///
    /// # Safety
    /// Nothing uses `obj` afterwards: no field, root, weak reference or
    /// stack slot that the program reads again refers to it (a reference
    /// the collector still finds only keeps the memory from reuse after
    /// the next collection, and then holds whatever took its place).
    pub unsafe fn free(&mut self, obj: ObjRef) -> Result<Freed, Error> {
        // SAFETY: the caller's promise.
        unsafe { self.free_sized(obj) }.map(|(freed, _)| freed)
    }

    /// [`Mutator::free`], also giving the bytes the object took (its
    /// slot, or a large object's requested size): what an embedder that
    /// counts freed bytes needs, without a second lookup.
    ///
    /// # Safety
    /// As [`Mutator::free`].
    pub unsafe fn free_sized(&mut self, obj: ObjRef) -> Result<(Freed, usize), Error> {
        self.check_usable("free an object")?;
        self.ensure_attached();
        let addr = obj.addr();
        let located = self.heap.core.table.object_at(addr);
        if let Some(Located::Small { page, slot, start }) = located {
            return self.free_small(page, slot, start);
        }
        let core = &self.heap.core;
        let table = &core.table;
        let generational = core.config.generational;
        match located {
            Some(Located::Large { head, start }) => {
                let d = table.desc(head);
                // (Read before the span goes back: another thread may take
                // it for a new object at once.)
                let size = d.large_size();
                if busy(d, 0, generational, || table.log().is_unlogged(start))
                    || (core.pins.is_pinned(start) && start != self.finalizing)
                    || core.weak.has_slot_within(start, size)
                {
                    return Ok((self.deferred(size), size));
                }
                let bytes = d.span() * crate::space::PAGE_SIZE;
                if !core.large.free_now(table, &core.resource, head) {
                    return Err(double_free(addr));
                }
                core.sizer.give_back(bytes as u64);
                self.freed_now(start, bytes, size);
                Ok((Freed::Now, size))
            }
            _ => Err(Error::ForeignPointer { addr }),
        }
    }

    /// [`Mutator::free`] of the small object at `start`, slot `slot` of
    /// page `page`.
    fn free_small(
        &mut self,
        page: usize,
        slot: usize,
        start: usize,
    ) -> Result<(Freed, usize), Error> {
        let core = &self.heap.core;
        let table = &core.table;
        let generational = core.config.generational;
        let d = table.desc(page);
        if table.is_tagged_freed(start) {
            return Err(double_free(start));
        }
        let size = d.slot_size();
        if busy(d, slot, generational, || table.log().is_unlogged(start))
            || (core.pins.is_pinned(start) && start != self.finalizing)
            || core.weak.has_slot_within(start, size)
        {
            return Ok((self.deferred(size), size));
        }
        if d.is_unswept() {
            // The mark bit says what the sweep keeps: without it the
            // sweep frees the slot. (A sweep of the page that read the
            // bit already keeps it: the next collection frees it then.)
            d.mark.test_and_clear_atomic(slot);
            core.counters.freed_at_sweep.fetch_add(1, Relaxed);
            self.link.roots.frees.add_later(size as u64);
            return Ok((Freed::WhenSwept, size));
        }
        let Some(flags) = context_flags_of(d, slot) else {
            return Ok((self.deferred(size), size));
        };
        let ctx = context(d.pool(), flags);
        if self.local.holds_in_run(table, ctx, start) {
            // Freed, made the context's run, not handed out since.
            return Err(double_free(start));
        }
        // With the context's run used up, the slot becomes the run: the
        // next allocation of its class takes it by the fast path. Else it
        // waits in the list (its free tag written) for the slow path.
        let as_run = self.local.can_take_as_run(table, ctx, start);
        if !as_run && !self.local.has_freed_room(ctx) {
            return Ok((self.deferred(size), size));
        }
        if !as_run {
            // Waiting in the list: a second free finds the tag. Written
            // first, so that the window in which two threads freeing the
            // object together both pass the check is as short as it can
            // be without a locked write (a misuse the check is best-effort
            // against).
            table.tag_freed(start);
            if !flags.contains(AllocFlags::UNINIT) {
                table.zero(start + 8, size - 8);
            }
        } else if !flags.contains(AllocFlags::UNINIT) {
            table.zero(start, size);
        }
        // Young again: a stale mark (old, generational mode) or unlogged
        // bit must not make the next object look old. (On a swept page the
        // bit is clear outside generational mode: no atomic write then.)
        if d.mark.get(slot) {
            d.mark.test_and_clear_atomic(slot);
        }
        if generational {
            table.log().clear_range(start, size);
        }
        d.note_young();
        if as_run {
            self.local.take_as_run(ctx, start);
        } else {
            self.local.push_freed(ctx, start);
        }
        self.freed_now(start, size, size);
        Ok((Freed::Now, size))
    }

    /// The bookkeeping of an object of `size` bytes freed now (`bytes`
    /// back): counted (in this mutator's own counts), and if it is the
    /// object of the finalizer running on this mutator, the finalizing slot
    /// lets it go and its pin exemption ends (the slot may come back as
    /// another object in this finalizer).
    #[inline]
    fn freed_now(&mut self, start: usize, bytes: usize, size: usize) {
        if start == self.finalizing {
            self.link.roots.forget_finalizing(start);
            self.finalizing = 0;
        }
        self.link.roots.frees.add_now(bytes as u64, size as u64);
    }

    /// A free of `size` bytes left to the next collection.
    fn deferred(&self, size: usize) -> Freed {
        let c = &self.heap.core.counters;
        c.frees_deferred.fetch_add(1, Relaxed);
        self.link.roots.frees.add_later(size as u64);
        Freed::AtNextCollection
    }

    /// A slot this mutator freed, for an allocation of `class` with
    /// `flags`: only when `flags` are exactly what the context's runs give
    /// (anything else would write side bits of a page another mutator may
    /// be allocating on).
    #[inline]
    pub(super) fn reuse_freed(&mut self, class: usize, flags: AllocFlags) -> Option<ObjRef> {
        if !flags.without(run_flags(flags)).is_empty() {
            return None;
        }
        let addr = self
            .local
            .pop_freed(&self.heap.core.table, context(class, flags))?;
        Some(ObjRef::from_heap_addr(addr))
    }
}

/// Whether the collector still has business with the object in slot
/// `slot` of page `d` (slot 0 of a large object's head): a finalizer,
/// cleanup, an ephemeron, a `PINNED` allocation, or (generational mode) a
/// remembered-set entry: an old
/// barriered object whose unlogged bit (`unlogged()`) is clear was logged,
/// and the next minor collection reads its entry.
fn busy(d: &PageDesc, slot: usize, generational: bool, unlogged: impl FnOnce() -> bool) -> bool {
    d.finalizer.get(slot)
        || d.cleanup.get(slot)
        || d.ephemeron.get(slot)
        || d.pin.get(slot)
        || (generational && d.barriered.get(slot) && d.mark.get(slot) && !unlogged())
}

/// The flags of the allocation context whose runs give a slot the side
/// bits that slot `slot` of page `d` has (`None`: a mix no run gives).
#[inline]
fn context_flags_of(d: &PageDesc, slot: usize) -> Option<AllocFlags> {
    let bits = (
        d.no_pointers.get(slot),
        d.conservative.get(slot),
        d.barriered.get(slot),
    );
    match bits {
        (true, false, false) => Some(AllocFlags::UNINIT),
        (false, true, false) => Some(AllocFlags::CONSERVATIVE),
        (false, false, true) => Some(AllocFlags::BARRIERED),
        (false, false, false) => Some(AllocFlags::NONE),
        _ => None,
    }
}

fn double_free(addr: usize) -> Error {
    Error::Misuse(format!("free of {addr:#x}, which was freed already"))
}
