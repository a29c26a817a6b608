//! The model test's finalizers: a closure that logs its run and may
//! allocate, resurrect or register again, and plain functions that log
//! (logged with the id as data, or shared, reading the id from the object).

use std::sync::atomic::AtomicU64;

use super::*;

/// The finalizer of object `id`: logs that it runs, allocates (possibly
/// collecting) if asked, then does `fin.then`. The pair it allocates takes
/// its id from `ids` and is logged: a conservative object's word may
/// come to point into it and keep it.
pub(super) fn finalizer(
    log: Log,
    ids: Arc<AtomicU64>,
    id: u64,
    fin: Fin,
) -> impl FnOnce(&mut TestMutator, ObjRef) + Send {
    move |m, obj| {
        log.lock().push(Event::Ran(id, obj.addr()));
        if fin.alloc {
            let pid = ids.fetch_add(1, Relaxed);
            let p = new_pair(m, pid, None, None).expect("allocation in a finalizer");
            let size = m.heap().object_size(p).expect("an object");
            log.lock().push(Event::Allocated(pid, p.addr(), size));
        }
        let heap = m.heap();
        match fin.then {
            Then::Nothing => {}
            Then::Resurrect => heap.embedder().globals.lock().push(obj.addr()),
            // Refused if the test registered one since the object was
            // queued (the registration counts are checked afterwards).
            Then::Reregister => {
                let again = Fin {
                    then: Then::Nothing,
                    ..fin
                };
                let _ = m.register_finalizer(obj, fin.order, finalizer(log, ids, id, again));
            }
        }
    }
}

/// A plain-function finalizer: `tag` is the harness's log, `data` the id.
pub(super) fn log_ran(_: &mut TestMutator, obj: ObjRef, tag: usize, data: usize) {
    // SAFETY: the tag is `Arc::as_ptr` of the harness's log, which owns the
    // heap and so outlives every finalizer run.
    let log = unsafe { &*(tag as *const Mutex<Vec<Event>>) };
    log.lock().push(Event::Ran(data as u64, obj.addr()));
}

/// The shared finalizer: `tag` is the harness's log; the id is the
/// object's own (its header).
pub(super) fn log_ran_shared(_: &mut TestMutator, obj: ObjRef, tag: usize, data: usize) {
    assert_eq!(data, 0, "a shared finalizer's data");
    // SAFETY: as in `log_ran`.
    let log = unsafe { &*(tag as *const Mutex<Vec<Event>>) };
    log.lock().push(Event::Ran(header(obj).2, obj.addr()));
}
