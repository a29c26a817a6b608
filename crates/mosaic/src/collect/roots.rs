//! Root handles: an easy way for Rust code to keep objects alive.
//!
//! Each mutator owns a [`RootTable`]: fixed-size chunks of atomic words that
//! never move, so a [`Root`] keeps a pointer to its word and reads it without
//! a lock. Creating and dropping a root takes the table's lock (uncontended:
//! only the owner and a collector during a pause use it).
//!
//! Invariant: no write to a handle is ever lost or reverted, and no value a
//! handle held during a collection is freed by it.
//! - While the table's owner mutator is *attached* (not dropped, not in a
//!   blocking region), only the owner writes its handles and it is parked
//!   during every pause: a plain store suffices.
//! - Otherwise (the mutator was dropped while its roots live on, or the
//!   thread is inside a blocking region), a write takes the table's lock.
//!   The collector holds the lock of *every* table for the whole handle scan
//!   ([`RootTable::scan_all`]), so a write lands entirely before or after it:
//!   moving an object from one handle to another can never hide it.
//! - The scan stores a word back only if the tracer changed it (a moving
//!   collector), with a compare-exchange.
//! - Dropping a handle clears its word under the lock.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

use crate::embedder::Tracer;
use crate::object::ObjRef;

const CHUNK: usize = 256;

type Chunk = Box<[AtomicUsize; CHUNK]>;

/// The root handles of one mutator.
#[derive(Default)]
pub struct RootTable {
    inner: Mutex<Inner>,
    /// The owner mutator is attached: it alone writes the handles, never
    /// during a pause. Read and written only by the owner's thread.
    owner_attached: AtomicBool,
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

    /// Whether the owner mutator is attached (see the module docs). Called
    /// by the owner's thread when it attaches, detaches or goes away.
    pub fn set_owner_attached(&self, attached: bool) {
        self.owner_attached.store(attached, Relaxed);
    }

    /// Visits every non-empty handle of every table, holding all their locks
    /// for the whole scan so that no detached write can interleave with it.
    pub fn scan_all<T: Tracer>(tables: &[Arc<RootTable>], tracer: &mut T) {
        let guards: Vec<MutexGuard<'_, Inner>> = tables.iter().map(|t| t.inner.lock()).collect();
        for inner in &guards {
            visit_words(inner, tracer);
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

fn visit_words<T: Tracer>(inner: &Inner, tracer: &mut T) {
    for chunk in &inner.chunks {
        for w in chunk.iter() {
            let v = w.load(Relaxed);
            if v != 0 {
                let mut p = v as *mut u8;
                tracer.visit(&mut p);
                if p as usize != v {
                    // Only a moving collector changes a root; a concurrent
                    // write (impossible while we hold the lock) would win.
                    let _ = w.compare_exchange(v, p as usize, Relaxed, Relaxed);
                }
            }
        }
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
        let v = obj.map_or(0, |o| o.addr());
        if self.table.owner_attached.load(Relaxed) {
            self.word().store(v, Relaxed)
        } else {
            self.set_detached(v)
        }
    }

    #[cold]
    fn set_detached(&self, v: usize) {
        let _scan = self.table.inner.lock();
        self.word().store(v, Relaxed)
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let mut inner = self.table.inner.lock();
        self.word().store(0, Relaxed);
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
        RootTable::scan_all(std::slice::from_ref(&t), &mut c);
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
        RootTable::scan_all(std::slice::from_ref(&t), &mut c);
        assert_eq!(c.0, vec![48]);
    }

    /// A tracer that dawdles on its first slot, so another thread can act
    /// in the middle of a scan.
    struct Slow(Option<std::sync::mpsc::Sender<()>>);
    impl Tracer for Slow {
        fn visit(&mut self, _: &mut *mut u8) {
            if let Some(tx) = self.0.take() {
                tx.send(()).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
        }
    }

    #[test]
    fn a_write_during_a_scan_is_never_reverted() {
        use std::sync::mpsc::channel;
        // A table whose owner is not attached: its roots may be written
        // while a collector scans them (roots outlive their mutator).
        let t = Arc::new(RootTable::default());
        let (made_tx, made_rx) = channel();
        let (in_scan_tx, in_scan_rx) = channel();
        let (scanned_tx, scanned_rx) = channel::<()>();
        let t2 = t.clone();
        let writer = std::thread::spawn(move || {
            let r = t2.make(16);
            let gone = t2.make(48);
            made_tx.send(()).unwrap();
            in_scan_rx.recv().unwrap();
            r.set(ObjRef::from_ptr(32 as *mut u8));
            drop(gone);
            scanned_rx.recv().unwrap();
            let value = r.get().map(|o| o.addr());
            let mut c = Collect(vec![]);
            RootTable::scan_all(std::slice::from_ref(&t2), &mut c);
            (value, t2.len(), c.0)
        });
        made_rx.recv().unwrap();
        RootTable::scan_all(std::slice::from_ref(&t), &mut Slow(Some(in_scan_tx)));
        scanned_tx.send(()).unwrap();
        let (value, live, words) = writer.join().unwrap();
        assert_eq!(value, Some(32), "the write made during the scan stands");
        assert_eq!(live, 1);
        assert_eq!(words, vec![32], "the dropped root's word stays empty");
    }
}
