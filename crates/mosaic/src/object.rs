//! Object references.

use std::ptr::NonNull;

/// The address of an object allocated by Mosaic. Copying it is free; reading
/// or writing the object through it is the embedder's business (and
/// `unsafe`). It is `Send` and `Sync` because it is only an address.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct ObjRef(NonNull<u8>);

// SAFETY: an ObjRef is an address; every access through it is unsafe and
// synchronised by the embedder.
unsafe impl Send for ObjRef {}
// SAFETY: as above.
unsafe impl Sync for ObjRef {}

impl ObjRef {
    /// Wraps a non-null address. Nothing is checked; see `Heap::is_object`.
    pub fn from_ptr(p: *mut u8) -> Option<ObjRef> {
        NonNull::new(p).map(ObjRef)
    }

    #[inline(always)]
    pub(crate) fn from_addr(a: usize) -> ObjRef {
        ObjRef(NonNull::new(a as *mut u8).expect("null object address"))
    }

    /// From an address inside the heap's reservation, which is never null.
    #[inline(always)]
    pub(crate) fn from_heap_addr(a: usize) -> ObjRef {
        debug_assert_ne!(a, 0);
        // SAFETY: callers pass addresses of slots inside the heap's mapping,
        // which mmap never places at address 0.
        ObjRef(unsafe { NonNull::new_unchecked(a as *mut u8) })
    }

    #[inline(always)]
    pub fn as_ptr(self) -> *mut u8 {
        self.0.as_ptr()
    }

    #[inline(always)]
    pub fn addr(self) -> usize {
        self.0.as_ptr() as usize
    }
}

impl std::fmt::Debug for ObjRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ObjRef({:#x})", self.addr())
    }
}
