//! Model-based randomized test: random allocation, linking, overwriting,
//! root drops, finalizers (both orders; some resurrect their object, some
//! register a new finalizer, some allocate and so may collect), weak
//! handles and weak slots (short and long), ephemerons, pins, ambiguous
//! roots (in half the cases a deferred range, `Tracer::defer_ambiguous_range`)
//! and compactions (`model/moving.rs`), conservative objects and
//! their words (`model/conservative.rs`), explicit frees (`model/free.rs`)
//! and collections, checked against a plain Rust model of the object graph
//! and of what a collection does (`common/model_graph.rs`), in several
//! collector configurations (lazy, verify, stress, eager sweep, Ruby's size
//! pools, every heap policy, compaction; verify and stress with 1, 2 and 4
//! GC workers).
//!
//! After every collection, explicit, inside an allocation or inside a
//! finalizer: the marker marked exactly the model's count and queued
//! exactly its number of finalizers; no pinned object and nothing an
//! ambiguous word (a root's or a conservative object's) points into moved;
//! every object the model still has is at the address the harness tracks
//! (`on_move` replayed) with its exact contents (header, fields, byte
//! patterns, weak slots and ephemeron words, each null exactly when the
//! model cleared it, conservative objects' words); weak handles read what
//! the model says; the heap's counts of weak handles, weak slots,
//! ephemerons and finalizers match (`model/check.rs`). After sweeping, the
//! live count equals the model's, and `on_free` ran for exactly the dead
//! objects that asked for cleanup; for those allocated `KEEP_REFERENTS`
//! (one container in seven) it read the headers of what they referenced,
//! which must be the ids the model says they referenced. Finalizers run exactly in the model's
//! queue order (each once, on the right object). Some collections are made
//! to panic inside `trace`: they must be abandoned without losing, freeing,
//! clearing or queueing anything.

#[path = "model/check.rs"]
mod check;
mod common;
#[path = "model/conservative.rs"]
mod conservative;
#[path = "model/keep.rs"]
mod keep;
#[path = "model/finalizers.rs"]
mod model_finalizers;
#[path = "model/free.rs"]
mod model_free;
#[path = "common/model_graph.rs"]
mod model_graph;
#[path = "model/moving.rs"]
mod moving;
#[path = "model/regression.rs"]
mod regression;
#[path = "model/strategy.rs"]
mod strategy;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use common::*;

use model_graph::{Fin, Graph, Kind, Node, Outcome, Then};
use mosaic::{
    AllocFlags, CompactPolicy, Config, Error, FinalizerOrder, GcEvent, HeapPolicy, ObjRef, Root,
    SizeClassPreset, WeakKind, WeakRoot,
};
use parking_lot::Mutex;
use proptest::prelude::*;
use std::sync::atomic::Ordering::Relaxed;
use strategy::{cases, op};

#[derive(Clone, Debug)]
enum Op {
    New {
        kind: Kind,
        root: bool,
        into: (usize, usize),
    },
    /// An ephemeron on accessible objects (or none), rooted or stored into
    /// a container.
    NewEphemeron {
        key: Option<usize>,
        value: Option<usize>,
        root: bool,
        into: (usize, usize),
    },
    SetEphemeron {
        target: usize,
        key: Option<usize>,
        value: Option<usize>,
    },
    Link {
        src: usize,
        field: usize,
        dst: Option<usize>,
    },
    Rewrite {
        target: usize,
        seed: u8,
    },
    /// Drops a root handle or a global.
    DropRoot {
        index: usize,
    },
    /// Registers a finalizer (refused if the object has one).
    Finalizer {
        target: usize,
        ordered: bool,
        then: Then,
        alloc: bool,
    },
    /// Removes a finalizer (if registered and not queued yet).
    Unfinalize {
        target: usize,
    },
    WeakHandle {
        target: usize,
        long: bool,
    },
    DropWeak {
        index: usize,
    },
    /// Stores into a weak box's slot, registering it first if it is not.
    WeakSlot {
        holder: usize,
        field: usize,
        long: bool,
        dst: Option<usize>,
    },
    UnregisterSlot {
        holder: usize,
        field: usize,
    },
    RunFinalizers,
    Collect,
    /// A minor collection (full outside generational mode).
    CollectYoung,
    /// A collection whose `trace` panics on one container it would trace:
    /// it must be abandoned cleanly, losing nothing.
    PanickingCollect {
        target: usize,
    },
    /// Pins, ambiguous roots, compactions, resize hints (`model/moving.rs`).
    Moving(moving::MovingOp),
    /// Conservative objects and their words (`model/conservative.rs`).
    Conservative(conservative::ConsOp),
    /// Frees an object only a root refers to (`model/free.rs`).
    Free(usize),
}

fn pick(v: &[u64], i: usize) -> Option<u64> {
    (!v.is_empty()).then(|| v[i % v.len()])
}

fn kind_of(long: bool) -> WeakKind {
    if long {
        WeakKind::Long
    } else {
        WeakKind::Short
    }
}

/// What the harness replays on the model, in order: collections (objects
/// marked, then finalizers queued, from the event listener), finalizers
/// starting (id, address) and the pairs they allocate (id, address, slot).
enum Event {
    /// Objects marked, finalizers queued, moves, whether minor.
    Collected(u64, Option<usize>, Vec<Move>, bool),
    Ran(u64, usize),
    Allocated(u64, usize, usize),
}

type Log = Arc<Mutex<Vec<Event>>>;

/// The plain model plus the real heap it shadows.
struct Harness {
    heap: TestHeap,
    m: TestMutator,
    g: Graph,
    addr: HashMap<u64, ObjRef>,
    /// The root handles of `g.roots`, in the same order.
    roots: Vec<Root>,
    /// The weak handles of `g.handles`, in the same order.
    weak: Vec<WeakRoot>,
    dead_cleanup: BTreeSet<u64>,
    /// Dead keepers and what their fields held when they died
    /// (`model/keep.rs`).
    dead_refs: Vec<keep::Expected>,
    next_id: u64,
    log: Log,
    /// Counted pins of each object (`Mutator::pin`).
    pins: HashMap<u64, u32>,
    /// Panicking collections may panic on objects first traced by
    /// finalization, after short weak references were cleared.
    late_panics: bool,
    /// Conservative objects, and where ambiguous words find objects.
    cons: conservative::ConsState,
    /// Generational mode: collections may be minor; stores go through
    /// the write barrier.
    generational: bool,
}

impl Harness {
    fn new(config: Config, late_panics: bool) -> Self {
        let cons = conservative::ConsState::new(&config);
        let generational = config.generational;
        let heap = heap(config);
        let log = Log::default();
        let l = log.clone();
        let moved = heap.embedder().moves.clone();
        heap.set_event_listener(Some(Box::new(move |e| match *e {
            GcEvent::MarkEnd {
                marked_objects,
                minor,
                ..
            } => l
                .lock()
                .push(Event::Collected(marked_objects, None, vec![], minor)),
            GcEvent::CollectionEnd {
                finalizers_queued, ..
            } => match l.lock().last_mut() {
                Some(Event::Collected(_, q, m, _)) => {
                    *q = Some(finalizers_queued);
                    *m = std::mem::take(&mut *moved.lock());
                }
                _ => panic!("CollectionEnd without MarkEnd"),
            },
            _ => {}
        })));
        let tag = Arc::as_ptr(&log) as usize;
        heap.set_shared_finalizer(model_finalizers::log_ran_shared, tag)
            .unwrap();
        let m = heap.mutator().unwrap();
        Harness {
            heap,
            m,
            g: Graph::default(),
            addr: HashMap::new(),
            roots: Vec::new(),
            weak: Vec::new(),
            dead_cleanup: BTreeSet::new(),
            dead_refs: Vec::new(),
            next_id: 1,
            log,
            late_panics,
            pins: HashMap::new(),
            cons,
            generational,
        }
    }

    fn addr_of(&self, id: Option<u64>) -> Option<ObjRef> {
        id.map(|id| self.addr[&id])
    }

    /// Accessible objects satisfying `f`, in id order.
    fn accessible(&self, f: impl Fn(&Node) -> bool) -> Vec<u64> {
        let mut v = self.g.accessible();
        v.retain(|id| f(&self.g.objs[id]));
        v
    }

    /// Replays on the model what happened since the last call: collections
    /// (an allocation may collect; `extra` are its scope roots), each
    /// checked against what the listener saw, and finalizers run (oldest
    /// first, their object rooted while they run). Whether it collected.
    fn sync(&mut self, extra: &[u64]) -> bool {
        let log: Vec<Event> = std::mem::take(&mut *self.log.lock());
        let mut running: Option<(u64, Fin)> = None;
        let mut collected = false;
        for e in log {
            match e {
                Event::Collected(marked, queued, moves, minor) => {
                    let mut roots = extra.to_vec();
                    roots.extend(running.map(|r| r.0));
                    self.resolve_conservative();
                    assert!(!minor || self.generational, "a minor collection");
                    let out = self.g.simulate_kind(&roots, minor);
                    assert_eq!(
                        marked as usize,
                        out.marked.len() - out.already,
                        "objects marked vs the model's (minor: {minor}): {out:?}"
                    );
                    assert_eq!(queued, Some(out.chosen.len()), "finalizers queued");
                    self.cons.pinned = self.conservative_pins(&out.marked);
                    self.apply(&out);
                    self.apply_moves(&moves);
                    if self.generational {
                        // Whatever a collection kept is old now.
                        self.g.old = self.g.objs.keys().copied().collect();
                    }
                    collected = true;
                }
                Event::Ran(id, a) => {
                    self.finalized(running.take());
                    assert!(!self.g.queue.is_empty(), "finalizer of {id} ran unqueued");
                    let (next, fin) = self.g.queue.remove(0);
                    assert_eq!((id, a), (next, self.addr[&next].addr()), "next finalizer");
                    running = Some((id, fin));
                }
                Event::Allocated(id, a, size) => self.finalizer_allocated(id, a, size),
            }
        }
        self.finalized(running);
        collected
    }

    /// A finalizer returned: what it did.
    fn finalized(&mut self, ran: Option<(u64, Fin)>) {
        let Some((id, fin)) = ran else { return };
        match fin.then {
            Then::Nothing => {}
            Then::Resurrect => self.g.globals.push(id),
            Then::Reregister => {
                let n = self.g.objs.get_mut(&id).unwrap();
                n.fin = n.fin.or(Some(Fin {
                    then: Then::Nothing,
                    again: true,
                    ..fin
                }));
            }
        }
    }

    fn apply(&mut self, out: &Outcome) {
        let addr = &self.addr;
        for d in self.g.apply(out, |id| addr[&id].addr()) {
            if let Kind::Bytes { cleanup: true, .. } = d.node.kind {
                self.dead_cleanup.insert(d.id);
            }
            if d.node.keep {
                self.dead_cleanup.insert(d.id);
                self.keeper_died(&d);
            }
            let a = self.addr.remove(&d.id).unwrap();
            self.cons.died(d.id, a.addr());
        }
    }

    /// Adds a new object to the model, after the collections its
    /// allocation made; checks the heap if there were some.
    fn add(&mut self, id: u64, o: ObjRef, node: Node, collected: bool) {
        self.g.objs.insert(id, node);
        self.addr.insert(id, o);
        self.cons
            .placed(id, self.heap.object_size(o).expect("an object"));
        if collected {
            self.check_state();
        }
    }

    /// Roots a new object, or stores it into an accessible container.
    fn place(&mut self, id: u64, root: bool, into: (usize, usize)) {
        let o = self.addr[&id];
        if root {
            self.roots.push(self.m.root(o).expect("root"));
            self.g.roots.push(id);
            return;
        }
        let containers = self.containers();
        if let Some(c) = pick(&containers, into.0).filter(|&c| c != id) {
            let f = into.1 % self.g.objs[&c].fields.len();
            self.g.objs.get_mut(&c).unwrap().fields[f] = Some(id);
            set_field(self.addr[&c], f, Some(o));
            self.m.write_barrier(self.addr[&c]);
        }
    }

    fn apply_op(&mut self, op: &Op) {
        match *op {
            Op::New {
                ref kind,
                root,
                into,
            } => {
                let id = self.next_id;
                self.next_id += 1;
                let m = &mut self.m;
                let o = match *kind {
                    Kind::Pair => new_pair_with(m, id, None, None, container_flags(id)),
                    Kind::Vector(n) => new_vector_with(m, id, n, container_flags(id)),
                    Kind::WeakBox(n) => new_weakbox(m, id, n),
                    Kind::Bytes { len, cleanup } => {
                        let flags = if cleanup {
                            AllocFlags::NEEDS_CLEANUP
                        } else {
                            AllocFlags::NONE
                        };
                        // Every other byte string is not cleared: the
                        // harness overwrites all of it, and its old bytes
                        // must never be traced.
                        let uninit = if id % 2 == 1 {
                            AllocFlags::UNINIT
                        } else {
                            AllocFlags::NONE
                        };
                        new_bytes(m, id, len, flags | uninit)
                    }
                    Kind::Ephemeron => unreachable!(),
                }
                .expect("allocation");
                let collected = self.sync(&[]);
                let mut node = Node::new(kind.clone(), id);
                node.keep = matches!(kind, Kind::Pair | Kind::Vector(_)) && is_keeper(id);
                self.add(id, o, node, collected);
                self.place(id, root, into);
            }
            Op::NewEphemeron {
                key,
                value,
                root,
                into,
            } => {
                let all = self.g.accessible();
                let k = key.and_then(|i| pick(&all, i));
                let v = value.and_then(|i| pick(&all, i));
                let e = self
                    .m
                    .alloc_ephemeron(self.addr_of(k), self.addr_of(v))
                    .expect("ephemeron");
                // The allocation keeps key and value alive while it collects.
                let collected = self.sync(&[k, v].into_iter().flatten().collect::<Vec<_>>());
                let id = self.next_id;
                self.next_id += 1;
                let mut node = Node::new(Kind::Ephemeron, id);
                node.fields = vec![k, v];
                self.add(id, e, node, collected);
                self.place(id, root, into);
            }
            Op::SetEphemeron { target, key, value } => {
                let all = self.g.accessible();
                let Some(e) = pick(&self.accessible(|n| n.is_ephemeron()), target) else {
                    return;
                };
                let k = key.and_then(|i| pick(&all, i));
                let v = value.and_then(|i| pick(&all, i));
                self.m
                    .ephemeron_set(self.addr[&e], self.addr_of(k), self.addr_of(v))
                    .expect("ephemeron_set");
                let n = self.g.objs.get_mut(&e).unwrap();
                n.fields = vec![k, v];
            }
            Op::Link { src, field, dst } => {
                let Some(c) = pick(&self.containers(), src) else {
                    return;
                };
                let f = field % self.g.objs[&c].fields.len();
                let d = dst.and_then(|d| pick(&self.g.accessible(), d));
                self.g.objs.get_mut(&c).unwrap().fields[f] = d;
                set_field(self.addr[&c], f, self.addr_of(d));
                self.m.write_barrier(self.addr[&c]);
            }
            Op::Rewrite { target, seed } => {
                let bytes = self.accessible(|n| matches!(n.kind, Kind::Bytes { .. }));
                let Some(id) = pick(&bytes, target) else {
                    return;
                };
                self.g.objs.get_mut(&id).unwrap().seed = seed;
                fill_bytes(self.addr[&id], seed);
            }
            Op::DropRoot { index } => {
                let (r, n) = (self.roots.len(), self.g.globals.len());
                if r + n == 0 {
                    return;
                }
                let i = index % (r + n);
                if i < r {
                    self.roots.swap_remove(i);
                    self.g.roots.swap_remove(i);
                } else {
                    let id = self.g.globals.swap_remove(i - r);
                    let a = self.addr[&id].addr();
                    let mut globals = self.heap.embedder().globals.lock();
                    let at = globals.iter().position(|&g| g == a).expect("global");
                    globals.swap_remove(at);
                }
            }
            Op::Finalizer {
                target,
                ordered,
                then,
                alloc,
            } => self.register_finalizer(target, ordered, then, alloc),
            Op::Unfinalize { target } => {
                let Some(id) = pick(&self.g.accessible(), target) else {
                    return;
                };
                self.check_finalizer_fn(id);
                let had = self.g.objs.get_mut(&id).unwrap().fin.take().is_some();
                assert_eq!(self.m.unregister_finalizer(self.addr[&id]), had);
            }
            Op::WeakHandle { target, long } => {
                let Some(id) = pick(&self.g.accessible(), target) else {
                    return;
                };
                let kind = kind_of(long);
                self.weak
                    .push(self.m.weak_root(self.addr[&id], kind).expect("weak_root"));
                self.g.handles.push((kind, Some(id)));
            }
            Op::DropWeak { index } => {
                if !self.weak.is_empty() {
                    let i = index % self.weak.len();
                    self.weak.swap_remove(i);
                    self.g.handles.swap_remove(i);
                }
            }
            Op::WeakSlot {
                holder,
                field,
                long,
                dst,
            } => {
                let boxes = self.accessible(|n| matches!(n.kind, Kind::WeakBox(n) if n > 0));
                let Some(h) = pick(&boxes, holder) else {
                    return;
                };
                let d = dst.and_then(|d| pick(&self.g.accessible(), d));
                let o = self.addr[&h];
                let f = field % self.g.objs[&h].fields.len();
                set_field(o, f, self.addr_of(d));
                let slot = field_slot(o, f);
                // SAFETY: the slot holds null or an object; the test expects
                // the collector to clear it.
                let r = unsafe { self.m.register_weak_slot(slot, kind_of(long)) };
                let n = self.g.objs.get_mut(&h).unwrap();
                n.fields[f] = d;
                if n.slots[f].is_some() {
                    assert!(
                        matches!(r, Err(Error::AlreadyRegistered { .. })),
                        "slot {f} of {h} registered twice: {r:?}"
                    );
                } else {
                    r.expect("register_weak_slot");
                    n.slots[f] = Some(kind_of(long));
                }
            }
            Op::UnregisterSlot { holder, field } => {
                let boxes = self.accessible(|n| matches!(n.kind, Kind::WeakBox(n) if n > 0));
                let Some(h) = pick(&boxes, holder) else {
                    return;
                };
                let o = self.addr[&h];
                let n = self.g.objs.get_mut(&h).unwrap();
                let f = field % n.fields.len();
                let was = n.slots[f].take().is_some();
                n.fields[f] = None;
                assert_eq!(self.m.unregister_weak_slot(field_slot(o, f)), was);
                set_field(o, f, None);
            }
            Op::Moving(ref op) => self.apply_moving(op),
            Op::Conservative(ref op) => self.apply_conservative(op),
            Op::Free(target) => self.free_one(target),
            Op::RunFinalizers => self.run_finalizers(),
            Op::Collect => self.collect_and_check(),
            Op::CollectYoung => {
                self.m.collect_young();
                self.after_collect();
            }
            Op::PanickingCollect { target } => {
                self.resolve_conservative();
                let out = self.g.simulate(&[]);
                let candidates = if self.late_panics {
                    &out.marked
                } else {
                    &out.strong
                };
                let traced: Vec<u64> = candidates
                    .iter()
                    .copied()
                    .filter(|&id| self.g.objs[&id].is_traced() && !self.cons.is_conservative(id))
                    .collect();
                let Some(id) = pick(&traced, target) else {
                    return;
                };
                self.heap.embedder().panic_trace_id.store(id, Relaxed);
                let m = &mut self.m;
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.collect()));
                self.heap.embedder().panic_trace_id.store(0, Relaxed);
                assert!(r.is_err(), "tracing object {id} panics");
                // The abandoned collection cleared every mark: nothing is old.
                self.g.old.clear();
                assert!(self.log.lock().is_empty(), "an abandoned collection ended");
                // Nothing cleared, queued or forgotten.
                self.check_state();
            }
        }
    }

    fn run_finalizers(&mut self) {
        let queued = self.g.queue.len();
        let n = self.m.run_finalizers().expect("run_finalizers");
        let collected = self.sync(&[]);
        assert!(
            self.g.queue.is_empty(),
            "finalizers left: {:?}",
            self.g.queue
        );
        assert!(n >= queued, "run_finalizers ran {n} of {queued}");
        assert_eq!(self.heap.pending_finalizers(), 0);
        if collected {
            self.check_state();
        }
        assert_eq!(
            self.heap.registered_finalizers(),
            self.g.finalizer_count(),
            "finalizers registered after running"
        );
    }

    fn collect_and_check(&mut self) {
        self.m.collect();
        self.after_collect();
    }

    /// Checks an explicit collection (or compaction) just made.
    fn after_collect(&mut self) {
        assert!(self.sync(&[]), "an explicit collection");
        self.check_state();
        self.m.finish_sweep();
        let stats = self.heap.stats();
        assert_eq!(
            stats.live_objects() as usize,
            self.g.objs.len(),
            "live objects after sweeping"
        );
        let freed: BTreeSet<u64> = self.heap.embedder().freed.lock().iter().copied().collect();
        assert_eq!(
            freed.len(),
            self.heap.embedder().freed.lock().len(),
            "on_free ran twice for an object"
        );
        assert_eq!(
            freed, self.dead_cleanup,
            "on_free ran for exactly the dead cleanup objects"
        );
        self.check_keepers_read();
    }
}

/// Runs the ops in `config`, then again with generations (every
/// configuration runs both ways).
fn run(config: Config, ops: &[Op]) {
    run_with(config, ops, false)
}

fn run_with(config: Config, ops: &[Op], late_panics: bool) {
    run_once(config.clone(), ops, late_panics);
    // Half the cases find the objects to rescan from soft-dirty bits.
    run_once(
        Config {
            generational: true,
            dirty_pages: ops.len() % 2 == 0,
            ..config
        },
        ops,
        late_panics,
    );
}

fn run_once(config: Config, ops: &[Op], late_panics: bool) {
    quiet_expected_panics();
    let mut h = Harness::new(config, late_panics);
    // Half the cases report the ambiguous roots as a deferred range.
    let defer = &h.heap.embedder().defer_ambiguous;
    defer.store((ops.len() / 2) % 2 == 1, Relaxed);
    for (i, op) in ops.iter().enumerate() {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h.apply_op(op)));
        if let Err(p) = r {
            let msg = (p.downcast_ref::<String>().map(String::as_str))
                .or(p.downcast_ref::<&str>().copied())
                .unwrap_or("?");
            panic!("op {i} of {} ({op:?}): {msg}", ops.len());
        }
    }
    h.collect_and_check();
    h.run_finalizers();
    // Once the roots go, everything dies, finalizable objects after their
    // finalizer ran; only ordered ones in cycles (and what they reach) stay.
    h.roots.clear();
    h.g.roots.clear();
    h.heap.embedder().ambiguous.lock().clear();
    h.g.ambiguous.clear();
    for round in 0.. {
        h.heap.embedder().globals.lock().clear();
        h.g.globals.clear();
        let before = h.g.objs.len();
        h.collect_and_check();
        // A chain of dead keepers loses a link per collection.
        if h.g.queue.is_empty() && h.g.objs.len() == before {
            break;
        }
        assert!(round < 10_000, "finalization does not end");
        h.run_finalizers();
    }
    let leaked: Vec<u64> =
        h.g.objs
            .iter()
            .filter(|(_, n)| n.fin.map(|f| f.order) == Some(FinalizerOrder::Ordered) || n.keep)
            .map(|(&id, _)| id)
            .collect();
    assert!(
        !leaked.is_empty() || h.g.objs.is_empty(),
        "objects outlive their roots with no ordered finalizer or keeper cycle left"
    );
    let s = h.heap.stats();
    if std::env::var_os("MOSAIC_MODEL_GEN_DEBUG").is_some() {
        eprintln!(
            "gen {} collections {} minor {} full {} remembered {} rescanned {}",
            h.generational,
            s.collections,
            s.minor_collections,
            s.full_collections,
            s.remembered_objects,
            s.rescanned_objects
        );
    }
    if !h.generational {
        assert_eq!(
            s.minor_collections, 0,
            "minor collections without generations"
        );
    } else {
        assert_eq!(
            s.minor_collections + s.full_collections,
            s.collections,
            "every collection is minor or full"
        );
    }
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn lazy_sweeping(ops in prop::collection::vec(op(), 1..700)) {
        run(Config { gc_threads: 1, ..small_config() }, &ops);
    }

    #[test]
    fn verify_mode(ops in prop::collection::vec(op(), 1..700)) {
        // With 4 workers the free pages sit behind the mutex store.
        for gc_threads in [1, 2, 4] { run(Config { verify: true, gc_threads, page_resource: store(gc_threads), ..small_config() }, &ops) }
    }

    #[test]
    fn stress_mode(ops in prop::collection::vec(op(), 1..500)) {
        for gc_threads in [1, 2, 4] { run(Config { verify: true, stress: 3, gc_threads, page_resource: store(gc_threads), ..small_config() }, &ops) }
    }

    /// Every collection judged small and begun on the collecting thread
    /// alone; with `parallel_help_us` 0, one that traces 64 objects (the
    /// first point where the marker offers its stack) with work left hands
    /// the rest to the second worker (about 300 hand-overs in the default
    /// 24 cases, counted once with a print).
    #[test]
    fn serial_start_calling_for_help(ops in prop::collection::vec(op(), 1..700)) {
        run(Config { verify: true, gc_threads: 2, parallel_min_live: 1 << 30, parallel_help_us: 0, ..small_config() }, &ops);
    }

    /// Background sweeping that also clears (verify mode keeps its
    /// poison instead): a second worker sweeps and clears pages between
    /// the ops' pauses, and every allocation checks it reads as zeroes.
    #[test]
    fn background_sweeping(ops in prop::collection::vec(op(), 1..700)) {
        run(Config { gc_threads: 2, ..small_config() }, &ops);
    }

    #[test]
    fn eager_sweeping(ops in prop::collection::vec(op(), 1..700)) {
        run(Config { lazy_sweep: false, ..small_config() }, &ops);
    }

    #[test]
    fn ruby_size_pools(ops in prop::collection::vec(op(), 1..700)) {
        run(Config { size_classes: SizeClassPreset::Ruby, verify: true, ..small_config() }, &ops);
    }

    /// Every heap policy on the same ops: collections triggered by a full
    /// fixed heap, by a tight proportional target, and by the adaptive rule.
    #[test]
    fn heap_policies(ops in prop::collection::vec(op(), 1..700)) {
        for (heap_policy, max_heap) in [
            (HeapPolicy::Fixed, 8 << 20),
            (HeapPolicy::Proportional { k: 0.1 }, 256 << 20),
            (HeapPolicy::Adaptive { scale: 1 << 20 }, 256 << 20),
        ] {
            run(Config { heap_policy, max_heap, heap_min: 64 << 10, verify: true, ..small_config() }, &ops);
        }
    }

    /// Compaction at every collection (both page orders come from the
    /// ops' explicit compactions), automatic compaction, and
    /// `verify_compaction`, which moves every movable object each time.
    #[test]
    fn compaction(ops in prop::collection::vec(op(), 1..600)) {
        for gc_threads in [1, 2] {
            run(Config { compact: CompactPolicy::Always, verify: true, gc_threads, ..small_config() }, &ops);
        }
        run(Config { compact: CompactPolicy::Auto, ..small_config() }, &ops);
        run(Config { verify_compaction: true, gc_threads: 2, ..small_config() }, &ops);
    }

    /// Collections also panic on objects that only finalization keeps.
    #[test]
    fn late_panics(ops in prop::collection::vec(op(), 1..700)) {
        run_with(small_config(), &ops, true);
    }
}
