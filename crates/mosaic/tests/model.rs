//! Model-based randomized test: random allocation, linking, overwriting,
//! root drops and collections, checked against a plain Rust model of the
//! object graph, in several collector configurations (lazy, verify, stress,
//! eager sweep, Ruby's size pools).
//!
//! After every collection: the marker found exactly the model's reachable
//! objects, each keeps its exact contents (header, fields pointing at the
//! right objects, byte patterns), and after sweeping, the heap's live count
//! equals the model's and `on_free` ran for exactly the dead objects that
//! asked for cleanup. Some collections are made to panic inside `trace`:
//! they must be abandoned without losing or freeing anything.

mod common;

use std::collections::{BTreeSet, HashMap};

use common::*;
use mosaic::{AllocFlags, Config, ObjRef, Root, SizeClassPreset};
use proptest::prelude::*;
use std::sync::atomic::Ordering::Relaxed;

#[derive(Clone, Debug)]
enum Kind {
    Pair,
    Vector(usize),
    Bytes { len: usize, cleanup: bool },
}

#[derive(Clone, Debug)]
enum Op {
    New {
        kind: Kind,
        root: bool,
        into: (usize, usize),
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
    DropRoot {
        index: usize,
    },
    Collect,
    /// A collection whose `trace` panics on one reachable container: it must
    /// be abandoned cleanly, losing nothing.
    PanickingCollect {
        target: usize,
    },
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        3 => Just(Kind::Pair),
        2 => (0usize..40).prop_map(Kind::Vector),
        2 => (0usize..600, any::<bool>()).prop_map(|(len, cleanup)| Kind::Bytes { len, cleanup }),
        1 => (600usize..9000, any::<bool>()).prop_map(|(len, cleanup)| Kind::Bytes { len, cleanup }),
        1 => (9000usize..150_000, any::<bool>()).prop_map(|(len, cleanup)| Kind::Bytes { len, cleanup }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (kind(), prop::bool::weighted(0.3), any::<(usize, usize)>())
            .prop_map(|(kind, root, into)| Op::New { kind, root, into }),
        6 => (any::<usize>(), any::<usize>(), prop::option::weighted(0.8, any::<usize>()))
            .prop_map(|(src, field, dst)| Op::Link { src, field, dst }),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(target, seed)| Op::Rewrite { target, seed }),
        3 => any::<usize>().prop_map(|index| Op::DropRoot { index }),
        1 => Just(Op::Collect),
        1 => any::<usize>().prop_map(|target| Op::PanickingCollect { target }),
    ]
}

struct MObj {
    kind: Kind,
    fields: Vec<Option<u64>>,
    seed: u8,
}

/// The plain model plus the real heap it shadows.
struct Harness {
    heap: TestHeap,
    m: TestMutator,
    objs: HashMap<u64, MObj>,
    addr: HashMap<u64, ObjRef>,
    roots: Vec<(u64, Root)>,
    dead_cleanup: BTreeSet<u64>,
    next_id: u64,
}

impl Harness {
    fn new(config: Config) -> Self {
        let heap = heap(config);
        let m = heap.mutator().unwrap();
        Harness {
            heap,
            m,
            objs: HashMap::new(),
            addr: HashMap::new(),
            roots: Vec::new(),
            dead_cleanup: BTreeSet::new(),
            next_id: 1,
        }
    }

    fn reachable(&self) -> BTreeSet<u64> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<u64> = self.roots.iter().map(|r| r.0).collect();
        while let Some(id) = stack.pop() {
            if seen.insert(id) {
                stack.extend(self.objs[&id].fields.iter().flatten());
            }
        }
        seen
    }

    /// Forgets objects the model can no longer reach (they are garbage now).
    fn prune(&mut self) {
        let live = self.reachable();
        let dead: Vec<u64> = self
            .objs
            .keys()
            .filter(|id| !live.contains(id))
            .copied()
            .collect();
        for id in dead {
            if let Kind::Bytes { cleanup: true, .. } = self.objs[&id].kind {
                self.dead_cleanup.insert(id);
            }
            self.objs.remove(&id);
            self.addr.remove(&id);
        }
    }

    /// Reachable containers with at least one field, in a stable order.
    fn containers(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .objs
            .iter()
            .filter(|(_, o)| !o.fields.is_empty())
            .map(|(&id, _)| id)
            .collect();
        v.sort_unstable();
        v
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::New { kind, root, into } => {
                let id = self.next_id;
                self.next_id += 1;
                let o = match *kind {
                    Kind::Pair => new_pair(&mut self.m, id, None, None),
                    Kind::Vector(n) => new_vector(&mut self.m, id, n),
                    Kind::Bytes { len, cleanup } => {
                        let flags = if cleanup {
                            AllocFlags::NEEDS_CLEANUP
                        } else {
                            AllocFlags::NONE
                        };
                        new_bytes(&mut self.m, id, len, flags)
                    }
                }
                .expect("allocation");
                let fields = match kind {
                    Kind::Pair => vec![None; 2],
                    Kind::Vector(n) => vec![None; *n],
                    Kind::Bytes { .. } => vec![],
                };
                self.objs.insert(
                    id,
                    MObj {
                        kind: kind.clone(),
                        fields,
                        seed: id as u8,
                    },
                );
                self.addr.insert(id, o);
                let containers = self.containers();
                if *root {
                    self.roots.push((id, self.m.root(o).expect("root")));
                } else if !containers.is_empty() {
                    let c = containers[into.0 % containers.len()];
                    let f = into.1 % self.objs[&c].fields.len();
                    if c != id {
                        self.objs.get_mut(&c).unwrap().fields[f] = Some(id);
                        set_field(self.addr[&c], f, Some(o));
                    }
                }
                self.prune();
            }
            Op::Link { src, field, dst } => {
                let containers = self.containers();
                if containers.is_empty() {
                    return;
                }
                let c = containers[src % containers.len()];
                let f = field % self.objs[&c].fields.len();
                let mut all: Vec<u64> = self.objs.keys().copied().collect();
                all.sort_unstable();
                let d = dst.map(|d| all[d % all.len()]);
                self.objs.get_mut(&c).unwrap().fields[f] = d;
                set_field(self.addr[&c], f, d.map(|d| self.addr[&d]));
                self.prune();
            }
            Op::Rewrite { target, seed } => {
                let mut bytes: Vec<u64> = self
                    .objs
                    .iter()
                    .filter(|(_, o)| matches!(o.kind, Kind::Bytes { .. }))
                    .map(|(&id, _)| id)
                    .collect();
                if bytes.is_empty() {
                    return;
                }
                bytes.sort_unstable();
                let id = bytes[target % bytes.len()];
                self.objs.get_mut(&id).unwrap().seed = *seed;
                fill_bytes(self.addr[&id], *seed);
            }
            Op::DropRoot { index } => {
                if !self.roots.is_empty() {
                    let i = index % self.roots.len();
                    self.roots.swap_remove(i);
                    self.prune();
                }
            }
            Op::Collect => self.collect_and_check(),
            Op::PanickingCollect { target } => {
                let containers = self.containers();
                if containers.is_empty() {
                    return;
                }
                let id = containers[target % containers.len()];
                self.heap.embedder().panic_trace_id.store(id, Relaxed);
                let m = &mut self.m;
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.collect()));
                self.heap.embedder().panic_trace_id.store(0, Relaxed);
                assert!(r.is_err(), "tracing object {id} panics");
                self.check_contents();
            }
        }
    }

    fn collect_and_check(&mut self) {
        self.m.collect();
        let stats = self.heap.stats();
        assert_eq!(
            stats.last_marked as usize,
            self.objs.len(),
            "marked objects vs model's reachable"
        );
        self.check_contents();
        self.m.finish_sweep();
        let stats = self.heap.stats();
        assert_eq!(
            stats.live_objects() as usize,
            self.objs.len(),
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
    }

    fn check_contents(&self) {
        for (&id, mo) in &self.objs {
            let o = self.addr[&id];
            assert!(
                self.heap.is_object(o.as_ptr()),
                "object {id} is no longer allocated"
            );
            let (tag, len, hid) = header(o);
            assert_eq!(hid, id, "header id of object {id}");
            match mo.kind {
                Kind::Pair => assert_eq!((tag, len), (PAIR, 2)),
                Kind::Vector(n) => assert_eq!((tag, len as usize), (VECTOR, n)),
                Kind::Bytes { len: n, .. } => {
                    assert_eq!((tag, len as usize), (BYTES, n));
                    assert!(bytes_match(o, mo.seed), "bytes of object {id} changed");
                }
            }
            for (i, f) in mo.fields.iter().enumerate() {
                assert_eq!(
                    field(o, i),
                    f.map(|c| self.addr[&c]),
                    "field {i} of object {id}"
                );
            }
        }
    }
}

fn run(config: Config, ops: &[Op]) {
    quiet_expected_panics();
    let mut h = Harness::new(config);
    for op in ops {
        h.apply(op);
    }
    h.collect_and_check();
    // Everything dies once the roots go.
    let cleanup_alive: BTreeSet<u64> = h
        .objs
        .iter()
        .filter(|(_, o)| matches!(o.kind, Kind::Bytes { cleanup: true, .. }))
        .map(|(&id, _)| id)
        .collect();
    h.roots.clear();
    h.prune();
    h.collect_and_check();
    assert_eq!(h.heap.stats().live_objects(), 0);
    assert!(cleanup_alive.is_subset(&h.dead_cleanup));
}

fn cases() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("MOSAIC_MODEL_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(24),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn lazy_sweeping(ops in prop::collection::vec(op(), 1..700)) {
        run(small_config(), &ops);
    }

    #[test]
    fn verify_mode(ops in prop::collection::vec(op(), 1..700)) {
        run(Config { verify: true, ..small_config() }, &ops);
    }

    #[test]
    fn stress_mode(ops in prop::collection::vec(op(), 1..500)) {
        run(Config { verify: true, stress: 3, ..small_config() }, &ops);
    }

    #[test]
    fn eager_sweeping(ops in prop::collection::vec(op(), 1..700)) {
        run(Config { lazy_sweep: false, ..small_config() }, &ops);
    }

    #[test]
    fn ruby_size_pools(ops in prop::collection::vec(op(), 1..700)) {
        run(Config { size_classes: SizeClassPreset::Ruby, verify: true, ..small_config() }, &ops);
    }
}
