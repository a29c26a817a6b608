//! Per-allocation flags, shared by every layer.

/// Flags given to an allocation. Combine with `|`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AllocFlags(u32);

impl AllocFlags {
    /// No flag.
    pub const NONE: AllocFlags = AllocFlags(0);
    /// The object holds no references: the collector never traces it.
    pub const NO_POINTERS: AllocFlags = AllocFlags(1);
    /// Call the embedder's `on_free` when the object dies.
    pub const NEEDS_CLEANUP: AllocFlags = AllocFlags(2);
    /// The object must never move (respected by compaction).
    pub const PINNED: AllocFlags = AllocFlags(4);
    /// Not cleared: the object's bytes are **whatever was there before**
    /// (an old object's bytes), not zeroes, so the caller must overwrite
    /// all of it (a byte string, an array of numbers). Implies
    /// `NO_POINTERS`: the collector never reads it. Like the Boehm
    /// collector's `GC_MALLOC_ATOMIC`. Large objects come zeroed anyway.
    pub const UNINIT: AllocFlags = AllocFlags(8);
    /// Scanned conservatively: every aligned word of the slot is an
    /// ambiguous reference (as if `trace` called
    /// [`crate::Tracer::visit_ambiguous`] on each), so `trace` is never
    /// called for it. What such a word points into (interior pointers
    /// included) is kept alive and pinned for that collection. A pointer
    /// one past the end of the object keeps it alive only if it still
    /// falls inside the slot: ask for one byte more if that must hold
    /// (the Boehm collector's "extra byte"). Ignored with `NO_POINTERS`.
    pub const CONSERVATIVE: AllocFlags = AllocFlags(16);
    /// The embedder promises a write barrier ([`crate::Mutator::write_barrier`])
    /// for every store of a reference into this object, except stores made
    /// before the mutator's next allocation or safepoint after allocating
    /// it (the object is young then). In generational mode (`Config::generational`) an
    /// old object with this flag is traced by a minor collection only if
    /// a barrier logged it; an object without it is rescanned by every
    /// minor collection (so an embedder can adopt barriers type by type).
    /// Without generational mode the flag changes nothing. Ignored with
    /// `CONSERVATIVE` (a conservatively scanned object is always rescanned).
    pub const BARRIERED: AllocFlags = AllocFlags(32);
    /// With `NEEDS_CLEANUP`: what the object references stays alive until
    /// its [`crate::Embedder::on_free`] has run, so `on_free` may read
    /// those objects (the Boehm collector's disclaim procedures with
    /// "mark from all", on which its `GC_finalized_malloc` is built). Each
    /// collection traces the fields of the dead such objects (not the
    /// objects themselves, so a reference to itself does not keep one); a
    /// chain of them takes a collection per link to reclaim, and objects
    /// with this flag in a longer cycle keep each other forever.
    /// Ignored without `NEEDS_CLEANUP` and with `NO_POINTERS`.
    pub const KEEP_REFERENTS: AllocFlags = AllocFlags(64);
    const ALL: u32 = 127;

    /// Flags from raw bits; `None` if an unknown bit is set.
    pub const fn from_bits(bits: u32) -> Option<AllocFlags> {
        if bits & !Self::ALL == 0 {
            Some(AllocFlags(bits))
        } else {
            None
        }
    }

    pub const fn bits(self) -> u32 {
        self.0
    }

    #[inline(always)]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    #[inline(always)]
    pub const fn contains(self, other: AllocFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// These flags and those of `other` (`|` in a `const`).
    #[inline(always)]
    pub const fn with(self, other: AllocFlags) -> AllocFlags {
        AllocFlags(self.0 | other.0)
    }

    /// These flags without those of `other`.
    #[inline(always)]
    pub const fn without(self, other: AllocFlags) -> AllocFlags {
        AllocFlags(self.0 & !other.0)
    }
}

impl std::ops::BitOr for AllocFlags {
    type Output = AllocFlags;
    fn bitor(self, rhs: AllocFlags) -> AllocFlags {
        AllocFlags(self.0 | rhs.0)
    }
}
