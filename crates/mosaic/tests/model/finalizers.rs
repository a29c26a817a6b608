//! The model test's finalizers: a closure that logs its run and may
//! allocate, resurrect or register again, and plain functions that log
//! (logged with the id as data, or shared, reading the id from the object);
//! the `Finalizer` op that registers them.

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
                    again: true,
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
/// object's own (its header); `data` is the number of a collection that
/// has completed (the one that queued the object).
pub(super) fn log_ran_shared(m: &mut TestMutator, obj: ObjRef, tag: usize, data: usize) {
    let done = m.heap().stats().collections;
    assert!(
        (1..=done).contains(&(data as u64)),
        "a shared finalizer's data {data}: not a completed collection's number ({done} done)"
    );
    // SAFETY: as in `log_ran`.
    let log = unsafe { &*(tag as *const Mutex<Vec<Event>>) };
    log.lock().push(Event::Ran(header(obj).2, obj.addr()));
}

/// How object `id`'s finalizer is registered.
#[derive(PartialEq, Eq)]
pub(super) enum Form {
    /// The shared finalizer, which reads the id from the object.
    Shared,
    /// The allocation-free form, tagged with the log, the id its data.
    Fn,
    /// A closure (which may allocate, resurrect or register again).
    Closure,
}

/// Plain ones half the time: the allocation-free form, or (a third of
/// those) the shared form; closures otherwise (and always for a finalizer's
/// own registration).
pub(super) fn form(id: u64, fin: &Fin, ephemeron: bool) -> Form {
    let plain = fin.then == Then::Nothing && !fin.alloc && !fin.again && id % 2 == 0;
    if plain && id % 3 == 0 && !ephemeron {
        Form::Shared
    } else if plain {
        Form::Fn
    } else {
        Form::Closure
    }
}

impl Harness {
    /// Checks what `finalizer_fn_of` says of accessible object `id`: the
    /// log's tag and the id while it has a function finalizer (never
    /// queued: it is reachable), nothing otherwise.
    pub(super) fn check_finalizer_fn(&self, id: u64) {
        let n = &self.g.objs[&id];
        let want = n
            .fin
            .filter(|f| form(id, f, n.is_ephemeron()) == Form::Fn)
            .map(|_| (Arc::as_ptr(&self.log) as usize, id as usize));
        let got = self
            .m
            .finalizer_fn_of(self.addr[&id])
            .map(|(_, t, d)| (t, d));
        assert_eq!(got, want, "finalizer_fn_of object {id}");
    }

    /// The `Finalizer` op: registers one on an accessible object (refused
    /// if it has one).
    pub(super) fn register_finalizer(
        &mut self,
        target: usize,
        ordered: bool,
        then: Then,
        alloc: bool,
    ) {
        let Some(id) = pick(&self.g.accessible(), target) else {
            return;
        };
        let order = if ordered {
            FinalizerOrder::Ordered
        } else {
            FinalizerOrder::Unordered
        };
        let fin = Fin {
            order,
            then,
            alloc,
            again: false,
        };
        let obj = self.addr[&id];
        let r = match form(id, &fin, self.g.objs[&id].is_ephemeron()) {
            Form::Shared => self.m.register_shared_finalizer(obj, order),
            Form::Fn => {
                let tag = Arc::as_ptr(&self.log) as usize;
                self.m
                    .register_finalizer_fn(obj, order, log_ran, tag, id as usize)
            }
            Form::Closure => {
                let ids = self.cons.fin_ids.clone();
                let f = finalizer(self.log.clone(), ids, id, fin);
                self.m.register_finalizer(obj, order, f)
            }
        };
        let n = self.g.objs.get_mut(&id).unwrap();
        if n.fin.is_some() {
            assert!(
                matches!(r, Err(Error::AlreadyRegistered { .. })),
                "second finalizer on object {id}: {r:?}"
            );
        } else {
            r.expect("register_finalizer");
            n.fin = Some(fin);
        }
    }
}
