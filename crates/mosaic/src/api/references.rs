//! What a mutator offers beyond allocation: weak handles, weak slots,
//! ephemerons, its scope of root slots and its embedder data.

use crate::collect::{
    ephemeron_read, ephemeron_write, SlotError, WeakKind, WeakRoot, EPHEMERON_SIZE,
};
use crate::embedder::Embedder;
use crate::error::Error;
use crate::flags::AllocFlags;
use crate::object::ObjRef;

use super::heap::Heap;
use super::mutator::Mutator;

impl<E: Embedder> Mutator<E> {
    /// A weak handle on `obj`: it does not keep `obj` alive, and reads
    /// `None` once `obj` died (`kind` says when: see [`WeakKind`]). Fails
    /// if `obj` is not an object of this heap.
    pub fn weak_root(&self, obj: ObjRef, kind: WeakKind) -> Result<WeakRoot, Error> {
        self.check_attached("make a weak handle")?;
        let core = &self.heap.core;
        let obj = core.check_object(obj.addr())?;
        Ok(core.weak.handle(obj.addr(), kind))
    }

    /// Registers a weak slot (a "disappearing link"): the pointer-sized,
    /// aligned word at `slot`, inside a live object of this heap, is set to
    /// null by the collector when the object it points to dies (`kind` says
    /// when). The registration ends when the object holding the slot dies,
    /// or with [`Mutator::unregister_weak_slot`]. Refused for a slot outside
    /// the heap's live objects, a misaligned one, or one registered already.
    ///
    /// # Safety
    /// While registered, the word at `slot` must hold null, a pointer into
    /// the heap, or a pointer outside it, and the embedder must expect the
    /// collector to overwrite it with null during any collection.
    pub unsafe fn register_weak_slot(
        &self,
        slot: *mut *mut u8,
        kind: WeakKind,
    ) -> Result<(), Error> {
        self.check_attached("register a weak slot")?;
        let core = &self.heap.core;
        core.weak
            .register_slot(&core.table, slot as usize, kind)
            .map_err(|e| match e {
                SlotError::AlreadyRegistered => Error::AlreadyRegistered {
                    addr: slot as usize,
                    what: "weak slot registration",
                },
                SlotError::Misaligned => Error::InvalidArgument(format!(
                    "weak slot {slot:p} is not aligned to a pointer"
                )),
                SlotError::NotInObject => Error::InvalidArgument(format!(
                    "weak slot {slot:p} is not inside a live object of this heap"
                )),
            })
    }

    /// Registers a *disappearing link* (the Boehm collector's
    /// `GC_general_register_disappearing_link`): the word at `link` is set
    /// to null when `target` dies (`kind` says when), and the registration
    /// then ends. Unlike a weak slot, `link` may be anywhere (static data,
    /// `malloc`ed memory, a heap object) and its contents are never read: it
    /// may hold `target` disguised so that conservative scans do not see
    /// it. A link inside a heap object is forgotten when that object dies.
    /// Refused for a `target` that is not an object of this heap, a
    /// misaligned or null `link`, or one registered already.
    ///
    /// # Safety
    /// While registered, `link` must stay writable memory that the
    /// collector may set to null during any collection.
    pub unsafe fn register_disappearing_link(
        &self,
        link: *mut *mut u8,
        target: ObjRef,
        kind: WeakKind,
    ) -> Result<(), Error> {
        self.check_attached("register a disappearing link")?;
        let core = &self.heap.core;
        let target = core.check_object(target.addr())?;
        core.weak
            .register_link(link as usize, target.addr(), kind)
            .map_err(|e| match e {
                SlotError::AlreadyRegistered => Error::AlreadyRegistered {
                    addr: link as usize,
                    what: "disappearing link",
                },
                _ => Error::InvalidArgument(format!(
                    "disappearing link {link:p} is null or not aligned to a pointer"
                )),
            })
    }

    /// Moves the registration of the weak slot or disappearing link at
    /// `from` to `to` (a weak table rehashed): `Ok(false)` if `from` was not
    /// registered; refused if `to` is registered already or misaligned.
    pub fn move_weak_slot(&self, from: *mut *mut u8, to: *mut *mut u8) -> Result<bool, Error> {
        self.check_attached("move a weak slot")?;
        match self.heap.core.weak.move_slot(from as usize, to as usize) {
            Ok(()) => Ok(true),
            Err(SlotError::NotInObject) => Ok(false),
            Err(SlotError::AlreadyRegistered) => Err(Error::AlreadyRegistered {
                addr: to as usize,
                what: "weak slot registration",
            }),
            Err(SlotError::Misaligned) => Err(Error::InvalidArgument(format!(
                "weak slot {to:p} is null or not aligned to a pointer"
            ))),
        }
    }

    /// Ends a weak slot's registration; whether it was registered.
    pub fn unregister_weak_slot(&self, slot: *mut *mut u8) -> bool {
        // (In a blocking region or a callback, nothing is unregistered.)
        self.check_attached("unregister a weak slot").is_ok()
            && self.heap.core.weak.unregister_slot(slot as usize)
    }

    /// Allocates an ephemeron: an object holding `key` then `value` (two
    /// pointer words, readable in place), after `Config::ephemeron_header`
    /// bytes of embedder header (none by default: 16 bytes in all). The
    /// value is kept alive only while the key is reachable by other paths;
    /// when the key dies, a collection sets both words to null. Store the
    /// ephemeron in your objects like any reference (a weak table's
    /// buckets). `key` must be an object of this heap (or `None`); `value`
    /// may be anything a traced slot may hold. Nothing is kept outside the
    /// object: an ephemeron costs its slot and nothing more.
    ///
    /// With a header, the ephemeron is traced like any object: write your
    /// header into it (it starts zeroed), and let `trace` visit the
    /// header's references but never the key and value words (which the
    /// collector handles itself).
    pub fn alloc_ephemeron(
        &mut self,
        key: Option<ObjRef>,
        value: Option<ObjRef>,
    ) -> Result<ObjRef, Error> {
        self.check_usable("allocate")?;
        self.check_ephemeron_key(key)?;
        // The allocation may collect: key and value must survive it.
        let (mut k, mut v) = (addr(key) as *mut u8, addr(value) as *mut u8);
        let depth = self.scope_depth();
        // SAFETY: both locals outlive the scope entries, popped below.
        unsafe {
            self.scope_push(&mut k);
            self.scope_push(&mut v);
        }
        let h = self.heap.core.ephemerons.header();
        let flags = if h == 0 {
            AllocFlags::NO_POINTERS
        } else {
            AllocFlags::NONE
        };
        let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.alloc_with(h + EPHEMERON_SIZE, flags)
        }));
        // Popped even if a callback's panic comes out of the allocation.
        self.scope_truncate(depth);
        let e = e.unwrap_or_else(|p| std::panic::resume_unwind(p))?;
        ephemeron_write(e.addr(), h, k as usize, v as usize);
        let core = &self.heap.core;
        core.ephemerons.add(&core.table, e.addr());
        Ok(e)
    }

    /// Replaces an ephemeron's key and value (same rules as
    /// [`Mutator::alloc_ephemeron`]).
    pub fn ephemeron_set(
        &self,
        e: ObjRef,
        key: Option<ObjRef>,
        value: Option<ObjRef>,
    ) -> Result<(), Error> {
        self.check_attached("set an ephemeron")?;
        self.heap().check_ephemeron(e)?;
        self.check_ephemeron_key(key)?;
        let h = self.heap.core.ephemerons.header();
        ephemeron_write(e.addr(), h, addr(key), addr(value));
        Ok(())
    }

    fn check_ephemeron_key(&self, key: Option<ObjRef>) -> Result<(), Error> {
        match key {
            Some(k) if self.heap.core.check_object(k.addr()).is_err() => {
                Err(Error::InvalidArgument(format!(
                    "ephemeron key {:#x} is not an object of this heap",
                    k.addr()
                )))
            }
            _ => Ok(()),
        }
    }

    /// Sets the pointer [`crate::Embedder::mutator_roots`] receives for this
    /// mutator (a runtime keeps its interpreter stack there).
    pub fn set_data(&mut self, data: *mut ()) {
        self.link.roots.set_data(data);
    }

    /// The pointer set with [`Mutator::set_data`] (null if none).
    pub fn data(&self) -> *mut () {
        self.link.roots.data()
    }

    /// Pushes the address of a root slot onto this mutator's scope: until
    /// popped, each collection visits the slot (and updates it if the
    /// object moves). No lock and, below the reserved depth of 256, no
    /// allocation: cheap enough for every local variable.
    ///
    /// # Safety
    /// `slot` must stay a valid, writable pointer slot until it is popped
    /// with [`Mutator::scope_truncate`]; it must hold null, an object of
    /// this heap or a pointer outside the heap.
    ///
    /// # Panics
    /// Inside a blocking region (a collection may be reading the scope).
    #[inline]
    pub unsafe fn scope_push(&mut self, slot: *mut *mut u8) {
        assert!(
            !self.is_blocking(),
            "mosaic: scope_push inside a blocking region"
        );
        self.link.roots.scope_mut().push(slot as usize);
    }

    /// The scope's depth: save it, push slots, then truncate back to it.
    #[inline]
    pub fn scope_depth(&self) -> usize {
        self.link.roots.scope_len()
    }

    /// Pops the scope back to `depth` (a depth above the current one is
    /// ignored).
    ///
    /// # Panics
    /// Inside a blocking region.
    #[inline]
    pub fn scope_truncate(&mut self, depth: usize) {
        assert!(
            !self.is_blocking(),
            "mosaic: scope_truncate inside a blocking region"
        );
        self.link.roots.scope_mut().truncate(depth);
    }
}

fn addr(o: Option<ObjRef>) -> usize {
    o.map_or(0, |o| o.addr())
}

impl<E: Embedder> Heap<E> {
    /// Checks that `e` is an ephemeron of this heap.
    pub fn check_ephemeron(&self, e: ObjRef) -> Result<(), Error> {
        let core = &self.inner.core;
        if self.is_object(e.as_ptr()) && core.ephemerons.contains(&core.table, e.addr()) {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "{:#x} is not an ephemeron of this heap",
                e.addr()
            )))
        }
    }

    /// An ephemeron's key: `None` once the key died (or if it was never set).
    pub fn ephemeron_key(&self, e: ObjRef) -> Result<Option<ObjRef>, Error> {
        self.check_ephemeron(e)?;
        let h = self.inner.core.ephemerons.header();
        Ok(ObjRef::from_ptr(ephemeron_read(e.addr(), h).0 as *mut u8))
    }

    /// An ephemeron's value: `None` once the key died.
    pub fn ephemeron_value(&self, e: ObjRef) -> Result<Option<ObjRef>, Error> {
        self.check_ephemeron(e)?;
        let h = self.inner.core.ephemerons.header();
        Ok(ObjRef::from_ptr(ephemeron_read(e.addr(), h).1 as *mut u8))
    }
}
