//! Choosing what moves where, on the coordinator, before anything moves.
//!
//! Per size pool (seed 001): the pool's pages are sorted, by pinned live
//! slots (most first, then most live, then address) or by address; the
//! *destination* cursor walks that order from the front, the *source*
//! cursor from the back. Each marked, unpinned object of the source page
//! gets the next free slot of the destination page; the two cursors
//! meeting ends the pool. So the pages with the most pinned objects (which
//! can never be emptied) are filled first and the pages with the fewest
//! are emptied, and more pages end empty.
//!
//! Before that, objects the embedder wants in another pool
//! ([`Embedder::resize`]) are placed in their new pool's destination pages
//! (or fresh pages). In `EvacuateAll` mode (`verify_compaction`) every
//! movable object goes to a fresh page.
//!
//! Planning only sets bits; the bytes move later ([`super::evacuate`]):
//! destination slot: alloc, mark, its no-pointers, cleanup and keep-referents bits copied,
//! pin cleared; source slot: mark and cleanup cleared, forwarded set. A
//! free destination slot is one that is not marked, not forwarded and
//! holds no dead object awaiting `on_free`. So no slot is both read by one
//! move and written by another; and within a pool, a page the two
//! cursors make a source never received an object (it lies beyond the
//! destination cursor), so every object moves at most once.

use std::cmp::Reverse;

use crate::collect::callbacks::PanicSlot;
use crate::collect::heap::HeapCore;
use crate::config::CompactOrder;
use crate::embedder::Embedder;
use crate::object::ObjRef;
use crate::space::{PageDesc, PageTable};

/// One object to move.
#[derive(Clone, Copy, Debug)]
pub struct Move {
    pub from: usize,
    pub to: usize,
    pub old_size: usize,
    pub new_size: usize,
}

/// How a compaction chooses destinations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Two cursors over the pool's pages in this order.
    TwoFinger(CompactOrder),
    /// Every movable object to a fresh page (verification).
    EvacuateAll,
}

/// What to move, and what it touched.
#[derive(Default)]
pub struct Plan {
    pub moves: Vec<Move>,
    /// Pages with a forwarded slot (their forwarded bits are cleared at
    /// the end of the compaction).
    pub sources: Vec<usize>,
    /// Moves into another pool.
    pub cross_pool: usize,
    /// Live pinned objects in the compacted pools.
    pub pinned: usize,
    /// Source pages left with no live object.
    pub emptied: usize,
    /// Per pool: moves into slots that held no object (a move into a dead
    /// object's slot frees that object as it allocates: no change).
    pub moved_in: Vec<u64>,
}

/// The destination cursor of one pool.
struct Dest {
    pages: Vec<usize>,
    at: usize,
    hint: usize,
}

/// Live and pinned-live slots of a page.
pub fn counts(d: &PageDesc) -> (usize, usize) {
    let (mut live, mut pinned) = (0, 0);
    for w in 0..d.slot_count().div_ceil(64) {
        let m = d.mark.word(w);
        live += m.count_ones() as usize;
        pinned += (m & d.pin.word(w)).count_ones() as usize;
    }
    (live, pinned)
}

/// Slots of `d` holding a marked, unpinned object.
fn movable(d: &PageDesc) -> Vec<usize> {
    let mut out = Vec::new();
    for w in 0..d.slot_count().div_ceil(64) {
        let mut m = d.mark.word(w) & !d.pin.word(w);
        while m != 0 {
            out.push(w * 64 + m.trailing_zeros() as usize);
            m &= m - 1;
        }
    }
    out
}

/// The first free slot of `d` at or after `from` (see the module docs).
fn free_slot(d: &PageDesc, from: usize) -> Option<usize> {
    let n = d.slot_count();
    let mut w = from / 64;
    while w * 64 < n {
        let mut free =
            !d.mark.word(w) & !d.forwarded.word(w) & !(d.alloc.word(w) & d.cleanup.word(w));
        if w == from / 64 {
            free &= !0u64 << (from % 64);
        }
        if free != 0 {
            let s = w * 64 + free.trailing_zeros() as usize;
            return (s < n).then_some(s);
        }
        w += 1;
    }
    None
}

/// Sorts a pool's pages into compaction order.
fn ordered(table: &PageTable, mut pages: Vec<usize>, order: CompactOrder) -> Vec<usize> {
    match order {
        CompactOrder::Address => pages.sort_unstable(),
        CompactOrder::PinnedFirst => {
            let mut keyed: Vec<_> = pages
                .iter()
                .map(|&p| {
                    let (live, pinned) = counts(table.desc(p));
                    ((Reverse(pinned), Reverse(live), p), p)
                })
                .collect();
            keyed.sort_unstable();
            pages = keyed.into_iter().map(|(_, p)| p).collect();
        }
    }
    pages
}

struct Planner<'c, E: Embedder> {
    core: &'c HeapCore<E>,
    dests: Vec<Dest>,
    plan: Plan,
    last_source: usize,
}

impl<E: Embedder> Planner<'_, E> {
    /// The next free slot of pool `k`'s destinations, below page index
    /// `limit` of its order; with `fresh`, a fresh page when none is left.
    fn place(&mut self, k: usize, limit: usize, fresh: bool) -> Option<(usize, usize)> {
        let table = &self.core.table;
        let dest = &mut self.dests[k];
        loop {
            if dest.at < dest.pages.len().min(limit) {
                let p = dest.pages[dest.at];
                if let Some(s) = free_slot(table.desc(p), dest.hint) {
                    dest.hint = s + 1;
                    return Some((p, s));
                }
                dest.at += 1;
                dest.hint = 0;
                continue;
            }
            if !fresh || dest.at < dest.pages.len() {
                return None;
            }
            let pool = &self.core.pools[k];
            let p = self.core.resource.acquire_page(table)?;
            table.desc(p).init_small(k, pool.slot_size);
            pool.adopt_page(p);
            dest.pages.push(p);
        }
    }

    /// Records a move of slot `s` of page `p` to slot `s2` of page `p2`.
    fn record(&mut self, p: usize, s: usize, (p2, s2): (usize, usize)) {
        let table = &self.core.table;
        let (d, d2) = (table.desc(p), table.desc(p2));
        let (old_size, new_size) = (d.slot_size(), d2.slot_size());
        if !d2.alloc.get(s2) {
            self.plan.moved_in[d2.pool()] += 1;
        }
        d2.alloc.set(s2);
        d2.mark.set(s2);
        d2.pin.clear(s2);
        if d.no_pointers.get(s) {
            d2.no_pointers.set(s2);
        } else {
            d2.no_pointers.clear(s2);
        }
        if d.cleanup.get(s) {
            d2.cleanup.set(s2);
            d2.set_has_cleanup(true);
            d.cleanup.clear(s);
        } else {
            d2.cleanup.clear(s2);
        }
        // Registered finalizers, ephemerons and conservative scanning follow their objects (the
        // finalizer log and ephemeron pages are updated after the moves).
        if d.shared_finalizer.get(s) && !d2.shared_finalizer.is_allocated() {
            self.core.finalizers.note_shared_page(p2);
        }
        if d.keep_referents.get(s) && !d2.keep_referents.is_allocated() {
            self.core.keep.note(p2);
        }
        for (b, b2) in [
            (&d.keep_referents, &d2.keep_referents),
            (&d.finalizer, &d2.finalizer),
            (&d.shared_finalizer, &d2.shared_finalizer),
            (&d.unordered_finalizer, &d2.unordered_finalizer),
            (&d.ephemeron, &d2.ephemeron),
            (&d.conservative, &d2.conservative),
            (&d.barriered, &d2.barriered),
        ] {
            if b.get(s) {
                b2.set(s2);
                b.clear(s);
            } else {
                b2.clear(s2);
            }
        }
        if d2.ephemeron.get(s2) {
            self.core.ephemerons.note_page(table, p2);
        }
        if !d2.no_pointers.get(s2) && !d2.barriered.get(s2) {
            d2.note_unbarriered();
        }
        // Generational mode: a moved object is old in its new slot (and
        // the new slot's stale bit, if any, is replaced).
        let (from, to) = (
            table.page_addr(p) + s * old_size,
            table.page_addr(p2) + s2 * new_size,
        );
        if self.core.config.generational {
            table.log().clear_range(to, 8);
            if d2.barriered.get(s2) && !d2.no_pointers.get(s2) {
                table.log().set_unlogged(to);
            }
        }
        d.mark.clear(s);
        d.forwarded.set(s);
        if self.last_source != p {
            self.last_source = p;
            self.plan.sources.push(p);
        }
        self.plan.moves.push(Move {
            from,
            to,
            old_size,
            new_size,
        });
    }
}

/// Plans a compaction of the pools `which` says (see the module docs).
/// A panic from `Embedder::resize` is added to `panics` (the object stays).
pub fn plan<E: Embedder>(
    core: &HeapCore<E>,
    which: &[bool],
    mode: Mode,
    panics: &mut PanicSlot,
) -> Plan {
    let table = &core.table;
    let order_of = match mode {
        Mode::TwoFinger(o) => o,
        Mode::EvacuateAll => CompactOrder::Address,
    };
    let orders: Vec<Vec<usize>> = core
        .pools
        .iter()
        .map(|p| ordered(table, p.pages(), order_of))
        .collect();
    let dests = orders
        .iter()
        .map(|o| Dest {
            pages: if mode == Mode::EvacuateAll {
                Vec::new()
            } else {
                o.clone()
            },
            at: 0,
            hint: 0,
        })
        .collect();
    let mut pl = Planner {
        core,
        dests,
        plan: Plan {
            moved_in: vec![0; core.pools.len()],
            ..Plan::default()
        },
        last_source: usize::MAX,
    };
    // Objects that want another pool, found before anything is placed (a
    // placed object's bytes are not there yet).
    let mut resized = Vec::new();
    for (k, order) in orders.iter().enumerate() {
        if !which[k] {
            continue;
        }
        let size = core.pools[k].slot_size;
        for &p in order {
            let d = table.desc(p);
            pl.plan.pinned += counts(d).1;
            for s in movable(d) {
                let obj = ObjRef::from_heap_addr(table.page_addr(p) + s * size);
                let mut want = None;
                panics.call(|| want = core.embedder.resize(obj, size));
                if let Some(c) = want.and_then(|n| core.classes.class_of(n.max(1))) {
                    if c != k {
                        resized.push((p, s, c));
                    }
                }
            }
        }
    }
    for (p, s, c) in resized {
        if let Some(to) = pl.place(c, usize::MAX, true) {
            pl.record(p, s, to);
            pl.plan.cross_pool += 1;
        }
    }
    for (k, order) in orders.iter().enumerate() {
        if !which[k] {
            continue;
        }
        match mode {
            Mode::EvacuateAll => {
                'pages: for &p in order {
                    for s in movable(table.desc(p)) {
                        let Some(to) = pl.place(k, usize::MAX, true) else {
                            break 'pages;
                        };
                        pl.record(p, s, to);
                    }
                }
            }
            Mode::TwoFinger(_) => {
                let mut src = order.len();
                'sources: while src > 0 {
                    src -= 1;
                    let p = order[src];
                    for s in movable(table.desc(p)) {
                        let Some(to) = pl.place(k, src, false) else {
                            break 'sources;
                        };
                        pl.record(p, s, to);
                    }
                }
            }
        }
    }
    pl.plan.sources.sort_unstable();
    pl.plan.sources.dedup();
    pl.plan.emptied = pl
        .plan
        .sources
        .iter()
        .filter(|&&p| table.desc(p).mark.is_clear(table.desc(p).slot_count()))
        .count();
    pl.plan
}
