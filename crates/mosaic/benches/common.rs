//! Embedders shared by the benchmarks.
#![allow(dead_code)]

use mosaic::{Embedder, ObjRef, Tracer};

/// Objects are nodes `{ left, right, payload... }`: two reference fields first.
pub struct Nodes;

// SAFETY: every object allocated by the benchmarks is a node whose first
// two words are references (or null).
unsafe impl Embedder for Nodes {
    #[inline(always)]
    fn trace<T: Tracer>(&self, obj: ObjRef, t: &mut T) {
        let f = obj.as_ptr() as *mut *mut u8;
        // SAFETY: nodes have at least two pointer fields.
        unsafe {
            t.visit(&mut *f);
            t.visit(&mut *f.add(1));
        }
    }

    fn roots<T: Tracer>(&self, _: &mut T) {}
}

/// Builds a complete binary tree of `depth` levels bottom-up; returns its root.
pub fn tree(m: &mut mosaic::Mutator<Nodes>, depth: u32, size: usize) -> ObjRef {
    let o = m.alloc(size).unwrap();
    if depth > 1 {
        let keep = m.root(o).unwrap();
        let l = tree(m, depth - 1, size);
        set(o, 0, l);
        let r = tree(m, depth - 1, size);
        set(keep.get().unwrap(), 1, r);
    }
    o
}

pub fn set(o: ObjRef, i: usize, v: ObjRef) {
    // SAFETY: nodes have two pointer fields.
    unsafe { (o.as_ptr() as *mut *mut u8).add(i).write(v.as_ptr()) }
}
