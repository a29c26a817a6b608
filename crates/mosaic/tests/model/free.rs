//! The model test's explicit frees: a rooted object that nothing else
//! refers to loses its root and is freed (`Mutator::free`). Freed at once
//! or by the pending sweep, it leaves the model at once (its slot may hold
//! the next object of its size); left to the next collection, it stays in
//! the model as the unreachable object it now is, and that collection
//! finds it dead.

use std::collections::BTreeSet;

use mosaic::{Error, Freed};

use super::{pick, Harness};

impl Harness {
    pub(super) fn free_one(&mut self, target: usize) {
        self.resolve_conservative();
        let g = &self.g;
        // What a dead keeper referenced is read by its `on_free`, which
        // may not have run yet: not the program's to free.
        let freed = self.heap.embedder().freed.lock().clone();
        let kept: BTreeSet<usize> = (self.dead_refs.iter())
            .filter(|(k, _)| !freed.contains(k))
            .flat_map(|(_, refs)| refs.iter().map(|r| r.0))
            .collect();
        let referred: BTreeSet<u64> = (g.objs.values())
            .flat_map(|n| n.fields.iter().flatten().copied())
            .chain(
                g.objs
                    .keys()
                    .copied()
                    .filter(|id| kept.contains(&self.addr[id].addr())),
            )
            .chain(g.globals.iter().copied())
            .chain(g.queue.iter().map(|q| q.0))
            .chain(g.handles.iter().filter_map(|h| h.1))
            .chain(g.ambiguous.iter().copied())
            .collect();
        let candidates: Vec<u64> = (g.roots.iter().copied())
            .filter(|id| {
                let n = &g.objs[id];
                g.roots.iter().filter(|r| *r == id).count() == 1
                    && !referred.contains(id)
                    && n.fin.is_none()
                    && !n.is_ephemeron()
                    && !self.pins.contains_key(id)
            })
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let Some(id) = pick(&candidates, target) else {
            return;
        };
        let i = self.g.roots.iter().position(|&r| r == id).unwrap();
        self.roots.swap_remove(i);
        self.g.roots.swap_remove(i);
        let o = self.addr[&id];
        // SAFETY: nothing in the model refers to the object any more, and
        // the harness forgets it below when its memory is reused.
        match unsafe { self.m.free(o) }.expect("free of an object") {
            Freed::Now | Freed::WhenSwept => {
                self.g.objs.remove(&id);
                self.g.old.remove(&id);
                self.addr.remove(&id);
                self.cons.died(id, o.addr());
                // SAFETY: refused before anything is touched.
                let again = unsafe { self.m.free(o) };
                assert!(
                    matches!(again, Err(Error::Misuse(_) | Error::ForeignPointer { .. })),
                    "a second free of {id}: {again:?}"
                );
            }
            Freed::AtNextCollection => {}
        }
    }
}
