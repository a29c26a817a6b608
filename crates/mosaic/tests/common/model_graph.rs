//! The plain model of `tests/model.rs`: the object graph the test builds,
//! and what one collection must do to it, recomputed from the documented
//! semantics with plain sets (no addresses, no mark bits):
//!
//! 1. `strong`: everything reachable from the root handles, the globals and
//!    the objects waiting in the finalizer queue (plus the scope roots of an
//!    allocation in progress), where a marked ephemeron whose key is marked
//!    makes its value reachable: a fixed point.
//!    Then the fields of every unmarked keeper (`KEEP_REFERENTS`; direct
//!    self-references skipped) are marked with what they reach (still
//!    `strong`), the keepers themselves staying unmarked.
//! 2. Short weak references to objects outside `strong` are cleared.
//! 3. Finalizers: unordered registered objects outside `strong` are chosen;
//!    the children of every ordered registered object outside `strong`
//!    (direct self-references skipped) are marked with what they reach;
//!    ordered objects still unmarked are chosen too. Every chosen object is
//!    then marked with what it reaches: `marked`.
//! 4. Ephemerons in `marked` whose key is not get key and value cleared;
//!    long weak references to objects outside `marked` are cleared; what is
//!    outside `marked` dies (weak slot registrations with their holders).
//!
//! Written as naively as possible, so that it is obviously right: the
//! collector's incremental fixed point is checked against this one.

use std::collections::{BTreeMap, BTreeSet};

use mosaic::{FinalizerOrder, WeakKind};

#[derive(Clone, Debug)]
pub enum Kind {
    Pair,
    Vector(usize),
    Bytes {
        len: usize,
        cleanup: bool,
    },
    /// A weak container: `n` fields that `trace` does not visit, each
    /// possibly registered as a weak slot.
    WeakBox(usize),
    /// The collector's ephemeron: `fields` is `[key, value]`.
    Ephemeron,
}

/// What a finalizer does besides recording that it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Then {
    Nothing,
    /// Stores its object into the globals (resurrection).
    Resurrect,
    /// Registers a new finalizer (same order, doing nothing more) on its
    /// object.
    Reregister,
}

/// A finalizer registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fin {
    pub order: FinalizerOrder,
    pub then: Then,
    /// The finalizer allocates (so it may collect) before `then`.
    pub alloc: bool,
    /// Registered again by the object's own finalizer (`Then::Reregister`),
    /// which always registers a closure.
    pub again: bool,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub kind: Kind,
    /// Pair, vector: strong fields. Weak box: its slots' targets (non-null
    /// only if registered). Ephemeron: key, value.
    pub fields: Vec<Option<u64>>,
    /// Weak box: each slot's registration.
    pub slots: Vec<Option<WeakKind>>,
    pub seed: u8,
    pub fin: Option<Fin>,
    /// Allocated `NEEDS_CLEANUP | KEEP_REFERENTS`: while it is dead and
    /// not yet reclaimed, what it references is marked.
    pub keep: bool,
}

impl Node {
    pub fn new(kind: Kind, id: u64) -> Self {
        let n = match kind {
            Kind::Pair => 2,
            Kind::Vector(n) | Kind::WeakBox(n) => n,
            Kind::Bytes { .. } => 0,
            Kind::Ephemeron => 2,
        };
        let slots = match kind {
            Kind::WeakBox(n) => vec![None; n],
            _ => vec![],
        };
        Node {
            kind,
            fields: vec![None; n],
            slots,
            seed: id as u8,
            fin: None,
            keep: false,
        }
    }

    pub fn is_container(&self) -> bool {
        matches!(self.kind, Kind::Pair | Kind::Vector(_)) && !self.fields.is_empty()
    }

    pub fn is_ephemeron(&self) -> bool {
        matches!(self.kind, Kind::Ephemeron)
    }

    /// Whether the collector calls `trace` on it (not `NO_POINTERS`).
    pub fn is_traced(&self) -> bool {
        matches!(self.kind, Kind::Pair | Kind::Vector(_) | Kind::WeakBox(_))
    }

    /// What `trace` visits.
    pub fn strong(&self) -> impl Iterator<Item = u64> + '_ {
        let s: &[Option<u64>] = match self.kind {
            Kind::Pair | Kind::Vector(_) => &self.fields,
            _ => &[],
        };
        s.iter().flatten().copied()
    }
}

/// The model's heap: every object allocated and not yet found dead by a
/// collection, and everything that refers to them from outside.
#[derive(Default)]
pub struct Graph {
    pub objs: BTreeMap<u64, Node>,
    /// Root handles (the harness keeps the `Root`s in the same order).
    pub roots: Vec<u64>,
    /// Objects stored into the embedder's globals by their finalizers.
    pub globals: Vec<u64>,
    /// Chosen objects whose finalizer has not run yet (roots until then),
    /// oldest first: a collection queues its choice in address order.
    pub queue: Vec<(u64, Fin)>,
    /// Weak handles: kind and target (the harness keeps the `WeakRoot`s).
    pub handles: Vec<(WeakKind, Option<u64>)>,
    /// Objects an ambiguous word points into (roots, and pinned).
    pub ambiguous: Vec<u64>,
    /// Generational mode: the objects the last collection kept (old). A
    /// minor collection keeps them all and traces them as if they were
    /// roots (the barrier's invariant: an old object that may point to a
    /// young one is remembered, or allocated without a barrier and
    /// rescanned).
    pub old: BTreeSet<u64>,
}

/// What one collection finds.
#[derive(Debug)]
pub struct Outcome {
    /// Reachable from the roots (ephemerons included): step 1.
    pub strong: BTreeSet<u64>,
    /// Marked at the end: `strong` plus what finalization keeps.
    pub marked: BTreeSet<u64>,
    /// Objects whose finalizer this collection queues.
    pub chosen: BTreeSet<u64>,
    /// A minor collection: old objects in `marked` (marked before it began).
    pub already: usize,
}

/// What `Graph::apply` removed.
pub struct Dead {
    pub id: u64,
    pub node: Node,
}

impl Graph {
    /// Adds to `marked` everything reachable from `start`, to the
    /// ephemeron fixed point; keys in `live_keys` count as marked.
    fn closure(
        &self,
        marked: &mut BTreeSet<u64>,
        live_keys: &BTreeSet<u64>,
        start: impl IntoIterator<Item = u64>,
    ) {
        let mut stack: Vec<u64> = start.into_iter().collect();
        loop {
            while let Some(id) = stack.pop() {
                if marked.insert(id) {
                    stack.extend(self.objs[&id].strong());
                }
            }
            for (id, n) in &self.objs {
                if let (true, [Some(k), Some(v)]) = (n.is_ephemeron(), &n.fields[..]) {
                    let key_live = marked.contains(k) || live_keys.contains(k);
                    if marked.contains(id) && key_live && !marked.contains(v) {
                        stack.push(*v);
                    }
                }
            }
            if stack.is_empty() {
                return;
            }
        }
    }

    /// What a collection would find now; `extra` are roots of the moment
    /// (the scope of an allocation in progress).
    pub fn simulate(&self, extra: &[u64]) -> Outcome {
        self.simulate_kind(extra, false)
    }

    /// A full collection, or a `minor` one (the old objects are kept and
    /// trace like roots).
    pub fn simulate_kind(&self, extra: &[u64], minor: bool) -> Outcome {
        let mut marked = BTreeSet::new();
        let none_old = BTreeSet::new();
        let old = if minor { &self.old } else { &none_old };
        let roots = self
            .roots
            .iter()
            .chain(&self.globals)
            .chain(&self.ambiguous)
            .chain(old)
            .copied();
        let queued = self.queue.iter().map(|q| q.0);
        let none = BTreeSet::new();
        self.closure(
            &mut marked,
            &none,
            roots.chain(queued).chain(extra.iter().copied()),
        );
        // Dead keepers: their fields (not themselves, self-references
        // skipped) are marked with what they reach.
        let keepers: Vec<u64> = (self.objs.iter())
            .filter(|(id, n)| n.keep && !marked.contains(id))
            .map(|(&id, _)| id)
            .collect();
        let kept: Vec<u64> = (keepers.iter())
            .flat_map(|&k| self.objs[&k].strong().filter(move |&c| c != k))
            .collect();
        self.closure(&mut marked, &none, kept);
        let strong = marked.clone();
        let unreachable = |order: FinalizerOrder| -> Vec<u64> {
            self.objs
                .iter()
                .filter(|(id, n)| n.fin.map(|f| f.order) == Some(order) && !strong.contains(id))
                .map(|(&id, _)| id)
                .collect()
        };
        let unordered = unreachable(FinalizerOrder::Unordered);
        let ordered = unreachable(FinalizerOrder::Ordered);
        let children: Vec<u64> = ordered
            .iter()
            .flat_map(|&o| self.objs[&o].strong().filter(move |&c| c != o))
            .collect();
        // While their children are marked, unreached ordered objects count
        // as live ephemeron keys (they end up marked either way).
        let live_keys: BTreeSet<u64> = ordered.iter().copied().collect();
        self.closure(&mut marked, &live_keys, children);
        let chosen: BTreeSet<u64> = unordered
            .into_iter()
            .chain(ordered.into_iter().filter(|o| !marked.contains(o)))
            .collect();
        self.closure(&mut marked, &live_keys, chosen.iter().copied());
        Outcome {
            strong,
            marked,
            chosen,
            already: old.len(),
        }
    }

    /// Applies a collection's outcome (`addr` gives an object's address, for
    /// the stale values of keyless ephemerons); returns the dead objects.
    pub fn apply(&mut self, out: &Outcome, addr: impl Fn(u64) -> usize) -> Vec<Dead> {
        let clear = |kind: WeakKind, target: Option<u64>| {
            target.filter(|t| match kind {
                WeakKind::Short => out.strong.contains(t),
                WeakKind::Long => out.marked.contains(t),
            })
        };
        for h in &mut self.handles {
            h.1 = clear(h.0, h.1);
        }
        for (id, n) in &mut self.objs {
            match n.kind {
                Kind::WeakBox(_) => {
                    for (f, k) in n.fields.iter_mut().zip(&n.slots) {
                        if let Some(k) = *k {
                            *f = clear(k, *f);
                        }
                    }
                }
                Kind::Ephemeron if out.marked.contains(id) => match n.fields[..] {
                    [Some(k), _] if !out.marked.contains(&k) => {
                        n.fields = vec![None, None];
                    }
                    // No key is a dead key: the value goes too.
                    [None, Some(_)] => n.fields[1] = None,
                    _ => {}
                },
                _ => {}
            }
        }
        let mut chosen: Vec<u64> = out.chosen.iter().copied().collect();
        chosen.sort_by_key(|&c| addr(c));
        for c in chosen {
            let fin = self.objs.get_mut(&c).unwrap().fin.take().unwrap();
            self.queue.push((c, fin));
        }
        let dead: Vec<u64> = self
            .objs
            .keys()
            .filter(|id| !out.marked.contains(id))
            .copied()
            .collect();
        dead.into_iter()
            .map(|id| Dead {
                id,
                node: self.objs.remove(&id).unwrap(),
            })
            .collect()
    }

    /// What the mutator can get at: the roots, the globals and the weak
    /// handles' targets, and whatever their fields (weak slots and
    /// ephemerons included) lead to.
    pub fn accessible(&self) -> Vec<u64> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<u64> = self.roots.iter().chain(&self.globals).copied().collect();
        stack.extend(self.handles.iter().filter_map(|h| h.1));
        while let Some(id) = stack.pop() {
            if seen.insert(id) {
                stack.extend(self.objs[&id].fields.iter().flatten());
            }
        }
        seen.into_iter().collect()
    }

    /// Weak slots registered (in objects not found dead yet).
    pub fn slot_count(&self) -> usize {
        self.objs
            .values()
            .map(|n| n.slots.iter().flatten().count())
            .sum()
    }

    pub fn ephemeron_count(&self) -> usize {
        self.objs.values().filter(|n| n.is_ephemeron()).count()
    }

    pub fn finalizer_count(&self) -> usize {
        self.objs.values().filter(|n| n.fin.is_some()).count()
    }
}
