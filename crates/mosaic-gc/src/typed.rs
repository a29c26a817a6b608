//! Explicitly typed objects (`gc_typed.h`): scanned precisely, from a
//! bitmap of the words that may hold pointers.
//!
//! `GC_make_descriptor` returns the address of an interned, never freed
//! [`Descr`] (non-zero); 0 means "no pointers". A typed object is
//! allocated with Mosaic's plain flags (traced by `Boehm::trace`) and two
//! trailing words at the end of its slot: the element size in bytes (the
//! whole object, or one element of a `GC_calloc_explicitly_typed` array),
//! then the descriptor. `trace` visits, for each element, the words whose
//! bit is set, as ambiguous words (interior pointers allowed, as bdwgc).

use std::ffi::c_void;

use mosaic::{AllocFlags, ObjRef, Tracer};
use parking_lot::Mutex;

use crate::heap::heap;
use crate::threads::with_mutator;

/// A layout: `len` words, bit `i` of `bits` set when word `i` may point.
pub struct Descr {
    len: usize,
    bits: Vec<usize>,
}

static INTERNED: Mutex<Vec<&'static Descr>> = Mutex::new(Vec::new());

const W: usize = std::mem::size_of::<usize>();

#[no_mangle]
pub unsafe extern "C" fn GC_make_descriptor(bm: *const usize, len: usize) -> usize {
    let words = len.div_ceil(usize::BITS as usize);
    let mut bits = vec![0usize; words];
    if !bm.is_null() && words > 0 {
        // SAFETY: the caller's bitmap covers `len` bits.
        bits.copy_from_slice(unsafe { std::slice::from_raw_parts(bm, words) });
    }
    // Bits past `len` are not ours.
    if len % (usize::BITS as usize) != 0 {
        if let Some(last) = bits.last_mut() {
            *last &= (1usize << (len % usize::BITS as usize)) - 1;
        }
    }
    if bits.iter().all(|&b| b == 0) {
        return 0;
    }
    crate::threads::guarded(|| {
        let mut interned = INTERNED.lock();
        if let Some(d) = interned.iter().find(|d| d.len == len && d.bits == bits) {
            return *d as *const Descr as usize;
        }
        let d: &'static Descr = Box::leak(Box::new(Descr { len, bits }));
        interned.push(d);
        d as *const Descr as usize
    })
}

fn alloc_typed(elem: usize, total: usize, d: usize) -> *mut c_void {
    if d == 0 {
        return crate::alloc::alloc(total, crate::alloc::Kind::Atomic);
    }
    let Some(size) = total
        .checked_next_multiple_of(W)
        .and_then(|t| t.checked_add(2 * W))
    else {
        return crate::alloc::out_of_memory(total);
    };
    let o = match with_mutator(|m| m.alloc_with(size, AllocFlags::NONE)) {
        Ok(o) => o,
        Err(_) => return crate::alloc::out_of_memory(total),
    };
    let slot = heap().object_size(o).unwrap_or(size);
    // SAFETY: the last two words of the fresh object's slot.
    unsafe {
        let tail = o.as_ptr().add(slot - 2 * W).cast::<usize>();
        tail.write(elem.max(W));
        tail.add(1).write(d);
    }
    crate::finalize::after_allocation();
    o.as_ptr().cast()
}

#[no_mangle]
pub extern "C" fn GC_malloc_explicitly_typed(n: usize, d: usize) -> *mut c_void {
    alloc_typed(n, n, d)
}

#[no_mangle]
pub extern "C" fn GC_malloc_explicitly_typed_ignore_off_page(n: usize, d: usize) -> *mut c_void {
    alloc_typed(n, n, d)
}

#[no_mangle]
pub extern "C" fn GC_calloc_explicitly_typed(n: usize, lb: usize, d: usize) -> *mut c_void {
    match n.checked_mul(lb) {
        Some(total) => alloc_typed(lb, total, d),
        None => crate::alloc::out_of_memory(usize::MAX),
    }
}

/// Visits the pointer words of a typed object whose slot is `slot` bytes.
pub fn trace<T: Tracer>(obj: ObjRef, slot: usize, t: &mut T) {
    if slot < 2 * W {
        return;
    }
    let base = obj.as_ptr().cast::<usize>();
    // SAFETY: the trailer written at allocation, inside the slot.
    let (elem, d) = unsafe {
        let tail = base.byte_add(slot - 2 * W);
        (tail.read(), tail.add(1).read())
    };
    if d == 0 || elem == 0 {
        return;
    }
    // SAFETY: an interned, never freed descriptor.
    let d = unsafe { &*(d as *const Descr) };
    let body = slot - 2 * W;
    let mut start = 0;
    while start + W <= body {
        for i in 0..d.len.min(elem / W) {
            if d.bits[i / usize::BITS as usize] >> (i % usize::BITS as usize) & 1 == 1 {
                let off = start + i * W;
                if off + W > body {
                    break;
                }
                // SAFETY: a word inside the object.
                t.visit_ambiguous(unsafe { base.byte_add(off).read() });
            }
        }
        start += elem;
    }
}
