//! Root handles: an easy way for Rust code to keep objects alive.
//!
//! Each mutator owns a [`RootTable`]: handle words (`handles.rs`) that never
//! move, so a [`Root`] keeps a pointer to its word and reads it without a
//! lock. Creating and dropping a root takes the table's lock (uncontended:
//! only the owner and a collector during a pause use it). The table also
//! holds the mutator's *scope*, a LIFO stack of root-slot addresses pushed
//! and popped without a lock (cheap precise roots for C locals), and the
//! embedder's data pointer for the mutator, handed to
//! `Embedder::mutator_roots` at each collection.
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

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

use super::counters::FreeCounts;
use super::handles::Words;
use crate::embedder::{MutatorInfo, Tracer};
use crate::object::ObjRef;
use crate::os::stack::{here, spill_registers, SAVED_REGISTERS};

/// The roots of one mutator: its handles, its scope of root slots, and the
/// data the embedder's `mutator_roots` callback receives for it.
#[derive(Default)]
pub struct RootTable {
    inner: Mutex<Words>,
    /// The owner mutator is attached: it alone writes the handles, never
    /// during a pause. Read and written only by the owner's thread.
    owner_attached: AtomicBool,
    /// The owner mutator exists (not dropped): its scope and data are scanned.
    owner_alive: AtomicBool,
    /// The owner's id, for `MutatorInfo`.
    id: AtomicUsize,
    /// The embedder's pointer for this mutator (`Mutator::set_data`).
    data: AtomicPtr<()>,
    /// Addresses of root slots pushed by the owner (a LIFO scope). Written
    /// only by the owner while attached; read by the collector in a pause,
    /// when the owner is parked (or detached, and then not using it).
    scope: UnsafeCell<Vec<usize>>,
    /// Conservative scanning of the owner thread's stack: the stack's top
    /// address, 0 when off.
    stack_top: AtomicUsize,
    /// Where the owner's stack ended when it last stopped (parked, began a
    /// collection, entered a blocking region); 0 before that.
    stack_low: AtomicUsize,
    /// The owner's callee-saved registers when it last stopped.
    registers: [AtomicUsize; SAVED_REGISTERS],
    /// The object whose finalizer the owner is running (0: none): a root
    /// visited as an ambiguous word, so it is kept and pinned, at the cost
    /// of a store (no handle, no counted pin). Written by the owner only.
    finalizing: AtomicUsize,
    /// The owner's explicit frees, counted by the owner alone (folded into
    /// the heap's counters when the table goes).
    pub frees: FreeCounts,
}

// SAFETY: `scope` is the only non-Sync field. It is written only by the
// owner thread while attached and read only by the collector while the
// owner is parked or detached (see the field's comment), so the two never
// overlap; the world's handshake orders them.
unsafe impl Sync for RootTable {}

/// A handle that keeps one object (or nothing) alive until dropped.
/// Not `Send`: it belongs to the thread of the mutator that made it.
pub struct Root {
    table: Arc<RootTable>,
    word: *const AtomicUsize,
    index: u32,
}

impl RootTable {
    /// The table of a new mutator.
    pub fn for_mutator(id: usize) -> Arc<Self> {
        let t = RootTable::default();
        t.id.store(id, Relaxed);
        t.owner_alive.store(true, Relaxed);
        // SAFETY: the table is not shared yet.
        unsafe { (*t.scope.get()).reserve(256) };
        Arc::new(t)
    }

    /// A new handle holding `value` (0 for none).
    pub fn make(self: &Arc<Self>, value: usize) -> Root {
        let (word, index) = self.inner.lock().take(value);
        Root {
            table: self.clone(),
            word,
            index,
        }
    }

    /// Whether the owner mutator is attached (see the module docs). Called
    /// by the owner's thread when it attaches, detaches or goes away.
    pub fn set_owner_attached(&self, attached: bool) {
        self.owner_attached.store(attached, Relaxed);
    }

    /// Makes `obj` (0: none) the object whose finalizer the owner runs;
    /// returns the previous one.
    pub fn set_finalizing(&self, obj: usize) -> usize {
        self.finalizing.swap(obj, Relaxed)
    }

    /// Empties the finalizing slot if it holds `obj` (freed by its own
    /// finalizer: a later collection must not find the slot's memory
    /// through it).
    pub fn forget_finalizing(&self, obj: usize) {
        let _ = self.finalizing.compare_exchange(obj, 0, Relaxed, Relaxed);
    }

    /// The owner mutator is dropped: only its handles remain.
    pub fn owner_dropped(&self) {
        self.set_owner_attached(false);
        self.owner_alive.store(false, Relaxed);
        self.clear_scope();
    }

    /// The embedder's data pointer for the owner mutator.
    pub fn set_data(&self, data: *mut ()) {
        self.data.store(data, Relaxed);
    }

    pub fn data(&self) -> *mut () {
        self.data.load(Relaxed)
    }

    /// The owner's scope of root slots. Only the owner thread, attached.
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    pub fn scope_mut(&self) -> &mut Vec<usize> {
        // SAFETY: only the owner calls this, while attached, and never
        // holds the reference across a safepoint; the collector reads the
        // scope only while the owner is parked or detached.
        unsafe { &mut *self.scope.get() }
    }

    /// The scope's depth (any thread that may read it: see `scope`).
    pub fn scope_len(&self) -> usize {
        // SAFETY: a shared read; writes happen only on the owner thread,
        // which is the caller (`Mutator::scope_depth`).
        unsafe { (*self.scope.get()).len() }
    }

    /// Turns conservative scanning of the owner's stack on (`Some(top)`,
    /// the stack's highest address) or off. Called by the owner thread.
    pub fn set_conservative_stack(&self, top: Option<usize>) {
        self.stack_low.store(0, Relaxed);
        self.stack_top.store(top.unwrap_or(0), Relaxed);
    }

    /// Moves the cold end of the scanned stack, keeping the recorded low
    /// end (a fiber switch: `SignalParker::set_stack_top`).
    pub fn move_stack_top(&self, top: usize) {
        self.stack_top.store(top, Relaxed);
    }

    /// The cold end of the scanned stack, if scanning is on.
    pub fn conservative_stack_top(&self) -> Option<usize> {
        Some(self.stack_top.load(Relaxed)).filter(|&t| t != 0)
    }

    /// Whether the owner's stack is scanned conservatively.
    pub fn conservative_stack(&self) -> bool {
        self.stack_top.load(Relaxed) != 0
    }

    /// The owner thread is about to stop (park, collect, block): records
    /// its callee-saved registers and where its stack ends, so that every
    /// frame of its callers is scanned while it is stopped. Not inlined:
    /// the frames above this one are exactly the caller's.
    #[inline(never)]
    pub fn record_stack(&self) {
        if self.stack_top.load(Relaxed) == 0 {
            return;
        }
        let regs = spill_registers();
        for (slot, r) in self.registers.iter().zip(regs) {
            slot.store(r, Relaxed);
        }
        self.stack_low.store(here(), Relaxed);
    }

    /// Visits the owner's recorded stack and registers as ambiguous words.
    fn scan_stack<T: Tracer>(&self, tracer: &mut T) {
        let (top, low) = (self.stack_top.load(Relaxed), self.stack_low.load(Relaxed));
        if top == 0 || low == 0 || low >= top {
            return;
        }
        for r in &self.registers {
            tracer.visit_ambiguous(r.load(Relaxed));
        }
        let low = low & !(std::mem::size_of::<usize>() - 1);
        // SAFETY: the owner thread is stopped (parked, collecting in a
        // frame below `low`, or blocking above it) and its stack from `low`
        // to its top is mapped for as long as the thread lives; an exited
        // thread turned scanning off first (`set_conservative_stack`).
        unsafe { tracer.visit_ambiguous_range(low as *const usize, top as *const usize) };
    }

    /// Forgets every scope slot (the owner thread exited: its frames are gone).
    pub fn clear_scope(&self) {
        self.scope_mut().clear();
    }

    /// Visits every non-empty handle of every table, holding all their locks
    /// for the whole scan so that no detached write can interleave with it;
    /// then each live mutator's scope slots and its `mutator_roots`.
    /// Without `stacks`, conservatively scanned stacks are left out (see
    /// [`RootTable::scan_stacks`]).
    pub fn scan_all<T: Tracer>(
        tables: &[Arc<RootTable>],
        stacks: bool,
        tracer: &mut T,
        mutator_roots: impl FnMut(&MutatorInfo, &mut T),
    ) {
        let guards = RootTable::lock_all(tables);
        Self::scan_locked(tables, &guards, stacks, tracer, mutator_roots);
    }

    /// Visits the conservatively scanned stack of each live owner, taking
    /// each table's lock in turn (`Embedder::STACKS_AFTER_ROOTS`: what
    /// [`RootTable::scan_all`] left out).
    pub fn scan_stacks<T: Tracer>(tables: &[Arc<RootTable>], tracer: &mut T) {
        for t in tables {
            let _guard = t.inner.lock();
            if t.owner_alive.load(Relaxed) {
                t.scan_stack(tracer);
            }
        }
    }

    /// Takes every table's lock: until the guards drop, no detached thread
    /// reads or writes a handle (a compaction holds them from moving the
    /// first object until every root is updated).
    pub fn lock_all(tables: &[Arc<RootTable>]) -> Vec<MutexGuard<'_, Words>> {
        tables.iter().map(|t| t.inner.lock()).collect()
    }

    /// [`RootTable::scan_all`] with the locks already held (`guards`, from
    /// [`RootTable::lock_all`] on the same tables).
    pub fn scan_locked<T: Tracer>(
        tables: &[Arc<RootTable>],
        guards: &[MutexGuard<'_, Words>],
        stacks: bool,
        tracer: &mut T,
        mut mutator_roots: impl FnMut(&MutatorInfo, &mut T),
    ) {
        for words in guards {
            visit_words(words, tracer);
        }
        for t in tables {
            if !t.owner_alive.load(Relaxed) {
                continue;
            }
            // SAFETY: we are the collector in a pause (see `scope`).
            let scope = unsafe { &*t.scope.get() };
            for &slot in scope {
                // SAFETY: the owner pushed the address of a live, writable
                // pointer slot and keeps it valid until it pops it (the
                // contract of `Mutator::scope_push`).
                tracer.visit(unsafe { &mut *(slot as *mut *mut u8) });
            }
            if stacks {
                t.scan_stack(tracer);
            }
            let f = t.finalizing.load(Relaxed);
            if f != 0 {
                tracer.visit_ambiguous(f);
            }
            t.visit_mutator_roots(tracer, &mut mutator_roots);
        }
    }

    /// Calls `mutator_roots` for this table's owner if it is alive. Needs
    /// no lock: the owner is stopped (parked, or in a blocking region that
    /// leaves those slots alone) and cannot exit during a pause.
    pub fn visit_mutator_roots<T: Tracer>(
        &self,
        tracer: &mut T,
        mutator_roots: &mut impl FnMut(&MutatorInfo, &mut T),
    ) {
        if !self.owner_alive.load(Relaxed) {
            return;
        }
        let info = MutatorInfo {
            id: self.id.load(Relaxed) as u64,
            data: self.data(),
        };
        mutator_roots(&info, tracer);
    }

    /// Handles currently alive.
    pub fn len(&self) -> usize {
        self.inner.lock().used()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the collector still needs this table.
    pub fn in_use(self: &Arc<Self>) -> bool {
        Arc::strong_count(self) > 1 || !self.is_empty()
    }
}

fn visit_words<T: Tracer>(words: &Words, tracer: &mut T) {
    for w in words.nonzero() {
        let v = w.load(Relaxed);
        let mut p = v as *mut u8;
        tracer.visit(&mut p);
        if p as usize != v {
            // Only a moving collector changes a root; a concurrent
            // write (impossible while we hold the lock) would win.
            let _ = w.compare_exchange(v, p as usize, Relaxed, Relaxed);
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
        if self.table.owner_attached.load(Relaxed) {
            ObjRef::from_ptr(self.word().load(Relaxed) as *mut u8)
        } else {
            self.get_detached()
        }
    }

    /// A read from a thread whose mutator is detached waits for a pause
    /// in progress: a compaction may be moving the object it holds.
    #[cold]
    fn get_detached(&self) -> Option<ObjRef> {
        let _scan = self.table.inner.lock();
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
        self.table.inner.lock().give_back(self.index);
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
        RootTable::scan_all(std::slice::from_ref(&t), true, &mut c, |_, _| {});
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
        RootTable::scan_all(std::slice::from_ref(&t), true, &mut c, |_, _| {});
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
            RootTable::scan_all(std::slice::from_ref(&t2), true, &mut c, |_, _| {});
            (value, t2.len(), c.0)
        });
        made_rx.recv().unwrap();
        RootTable::scan_all(
            std::slice::from_ref(&t),
            true,
            &mut Slow(Some(in_scan_tx)),
            |_, _| {},
        );
        scanned_tx.send(()).unwrap();
        let (value, live, words) = writer.join().unwrap();
        assert_eq!(value, Some(32), "the write made during the scan stands");
        assert_eq!(live, 1);
        assert_eq!(words, vec![32], "the dropped root's word stays empty");
    }
}
