//! Root handles: an easy way for Rust code to keep objects alive.
//!
//! Each mutator owns a [`RootTable`]: fixed-size chunks of atomic words that
//! never move, so a [`Root`] keeps a pointer to its word and reads or writes
//! it without a lock. Creating and dropping a root takes the table's lock
//! (uncontended: only the owner and a collector during a pause use it).
//! The collector visits each word through a copy (load, visit, store back),
//! so it never forms a `&mut` to memory another thread might touch.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::embedder::Tracer;
use crate::object::ObjRef;

const CHUNK: usize = 256;

type Chunk = Box<[AtomicUsize; CHUNK]>;

/// The root handles of one mutator.
#[derive(Default)]
pub struct RootTable {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    chunks: Vec<Chunk>,
    free: Vec<u32>,
    used: usize,
}

/// A handle that keeps one object (or nothing) alive until dropped.
/// Not `Send`: it belongs to the thread of the mutator that made it.
pub struct Root {
    table: Arc<RootTable>,
    word: *const AtomicUsize,
    index: u32,
}

impl RootTable {
    /// A new handle holding `value` (0 for none).
    pub fn make(self: &Arc<Self>, value: usize) -> Root {
        let mut inner = self.inner.lock();
        let index = match inner.free.pop() {
            Some(i) => i as usize,
            None => {
                let i = inner.chunks.len() * CHUNK;
                inner
                    .chunks
                    .push(Box::new(std::array::from_fn(|_| AtomicUsize::new(0))));
                inner.free.extend((i as u32 + 1..(i + CHUNK) as u32).rev());
                i
            }
        };
        inner.used += 1;
        let word: *const AtomicUsize = &inner.chunks[index / CHUNK][index % CHUNK];
        // SAFETY: `word` points into a boxed chunk that lives as long as the
        // table, which the returned Root keeps alive through its Arc.
        unsafe { (*word).store(value, Relaxed) };
        Root {
            table: self.clone(),
            word,
            index: index as u32,
        }
    }

    /// Visits every non-empty handle.
    pub fn visit<T: Tracer>(&self, tracer: &mut T) {
        let inner = self.inner.lock();
        for chunk in &inner.chunks {
            for w in chunk.iter() {
                let v = w.load(Relaxed);
                if v != 0 {
                    let mut p = v as *mut u8;
                    tracer.visit(&mut p);
                    w.store(p as usize, Relaxed);
                }
            }
        }
    }

    /// Handles currently alive.
    pub fn len(&self) -> usize {
        self.inner.lock().used
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Root {
    fn word(&self) -> &AtomicUsize {
        // SAFETY: see `RootTable::make`: the chunk outlives `self`.
        unsafe { &*self.word }
    }

    /// The object held, if any.
    #[inline]
    pub fn get(&self) -> Option<ObjRef> {
        ObjRef::from_ptr(self.word().load(Relaxed) as *mut u8)
    }

    /// Holds `obj` (or nothing) from now on.
    #[inline]
    pub fn set(&self, obj: Option<ObjRef>) {
        self.word().store(obj.map_or(0, |o| o.addr()), Relaxed)
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        self.word().store(0, Relaxed);
        let mut inner = self.table.inner.lock();
        inner.free.push(self.index);
        inner.used -= 1;
    }
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Root({:?})", self.get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Collect(Vec<usize>);
    impl Tracer for Collect {
        fn visit(&mut self, slot: &mut *mut u8) {
            self.0.push(*slot as usize);
            *slot = (*slot as usize + 1) as *mut u8; // pretend the object moved
        }
    }

    #[test]
    fn handles_are_visited_updated_and_recycled() {
        let t = Arc::new(RootTable::default());
        let roots: Vec<Root> = (1..=300).map(|i| t.make(i * 16)).collect();
        let empty = t.make(0);
        assert_eq!(t.len(), 301);
        let mut c = Collect(vec![]);
        t.visit(&mut c);
        assert_eq!(c.0, (1..=300).map(|i| i * 16).collect::<Vec<_>>());
        assert_eq!(
            roots[0].get().unwrap().addr(),
            17,
            "collector's update is visible"
        );
        assert_eq!(empty.get(), None);
        drop(roots);
        assert_eq!(t.len(), 1);
        let again = t.make(48);
        assert_eq!(again.get().unwrap().addr(), 48);
        let mut c = Collect(vec![]);
        t.visit(&mut c);
        assert_eq!(c.0, vec![48]);
    }
}
