//! Which mutators each thread holds.
//!
//! A thread-local list of the mutators created on this thread, for two
//! rules: a thread may hold at most one mutator per heap (a second one would
//! deadlock every collection: the first could never park while the thread
//! runs the second), and a thread that exits without dropping a mutator
//! (leaked, or a C program that never freed it) has it detached, so it
//! cannot hold up every later collection.
//!
//! The list's destructor runs when the thread exits; by then every mutator
//! dropped normally has left the list. The main thread's list is never
//! destroyed (the process is ending).

use std::cell::RefCell;
use std::sync::Arc;

/// A mutator as this registry sees it.
pub trait ThreadMutator {
    /// Identifies the mutator's heap.
    fn heap_key(&self) -> usize;
    /// Its thread exits while it is still alive: flush and detach it.
    fn thread_exited(&self);
}

struct Held(Vec<Arc<dyn ThreadMutator>>);

impl Drop for Held {
    fn drop(&mut self) {
        // Detaching takes the world's and the pools' locks: a signal that
        // would stop this thread (an embedder's stop hook) waits until the
        // mutators are detached, and then finds nothing to park.
        let _held = (!self.0.is_empty()).then(crate::os::SignalsHeld::new);
        for m in std::mem::take(&mut self.0) {
            m.thread_exited();
        }
    }
}

thread_local! {
    static HELD: RefCell<Held> = const { RefCell::new(Held(Vec::new())) };
}

/// Whether the calling thread holds a mutator of the heap `key`.
pub fn holds(key: usize) -> bool {
    HELD.try_with(|h| h.borrow().0.iter().any(|m| m.heap_key() == key))
        .unwrap_or(false)
}

/// Records a mutator created on the calling thread. Returns false when the
/// thread is already exiting (its destructors are running): the mutator
/// then must be dropped by the caller, it will not be detached for it.
pub fn add(m: Arc<dyn ThreadMutator>) -> bool {
    HELD.try_with(|h| h.borrow_mut().0.push(m)).is_ok()
}

/// Readies the calling thread before it joins a heap's world (or, for a
/// GC worker, before its first pause): what the thread-locals it will need
/// register with the C library (a destructor list entry, a `malloc` call)
/// happens now, while no collection can wait for this thread. Once a
/// mutator is registered, a collection may stop other threads anywhere,
/// inside the C library's `malloc` too, holding an arena's lock; a
/// `malloc` of this thread before it reaches a safepoint would then wait
/// for them forever (the C programs of the drop-in, with more threads than
/// glibc has arenas).
pub fn prepare_current() {
    // parking_lot's per-thread data (used when a lock is contended) is
    // created on its first use; a park whose validation fails creates it
    // and returns at once.
    static KEY: u8 = 0;
    // SAFETY: `validate` returns false, so the thread never sleeps and no
    // callback but `validate` runs; the key is a static's address, which
    // no other parking_lot user parks on.
    unsafe {
        parking_lot_core::park(
            &KEY as *const u8 as usize,
            || false,
            || {},
            |_, _| {},
            parking_lot_core::DEFAULT_PARK_TOKEN,
            None,
        );
    }
    // crossbeam's epoch handle (parallel marking's deques pin it).
    let _ = crossbeam_deque::Worker::<usize>::new_lifo()
        .stealer()
        .steal();
    if crate::os::stack::SUPPORTED {
        let _ = crate::os::stack::stack_top();
    }
}

/// Forgets a mutator dropped on the calling thread (no-op elsewhere).
pub fn remove(m: &Arc<dyn ThreadMutator>) {
    let _ = HELD.try_with(|h| {
        h.borrow_mut()
            .0
            .retain(|x| !std::ptr::addr_eq(Arc::as_ptr(x), Arc::as_ptr(m)))
    });
}
