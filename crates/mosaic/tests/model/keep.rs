//! The model test's keepers (`AllocFlags::KEEP_REFERENTS`, one container
//! in seven: `common::is_keeper`): when one dies, the harness records what
//! its fields held; after sweeping, what its `on_free` read
//! (`TestVm::freed_refs`: each field's address and the id in that
//! object's header) must be exactly that.

use super::model_graph::Dead;
use super::Harness;

/// A dead keeper's id and, per field, the address it held (0: null) and
/// the id of the object there (`None` for an ephemeron, which has no
/// header to read back: only its address counts).
pub type Expected = (u64, Vec<(usize, Option<u64>)>);

impl Harness {
    /// Records what the dead keeper `d` referenced (the harness still
    /// knows every address: its referents survive this collection).
    pub(super) fn keeper_died(&mut self, d: &Dead) {
        let refs = (d.node.fields.iter())
            .map(|f| {
                f.map_or((0, Some(0)), |f| {
                    let ephemeron = f != d.id && self.g.objs[&f].is_ephemeron();
                    (self.addr[&f].addr(), (!ephemeron).then_some(f))
                })
            })
            .collect();
        self.dead_refs.push((d.id, refs));
    }

    /// What each dead keeper's `on_free` read was still there: the same
    /// objects, at the same addresses.
    pub(super) fn check_keepers_read(&self) {
        let mut seen = self.heap.embedder().freed_refs.lock().clone();
        let mut expected = self.dead_refs.clone();
        seen.sort();
        expected.sort_by_key(|e| e.0);
        let ok = seen.len() == expected.len()
            && seen.iter().zip(&expected).all(|((k, got), (k2, want))| {
                k == k2
                    && got.len() == want.len()
                    && got
                        .iter()
                        .zip(want)
                        .all(|(g, w)| g.0 == w.0 && w.1.map_or(true, |id| g.1 == id))
            });
        assert!(
            ok,
            "what dead keepers referenced, read by on_free: {seen:?}, expected {expected:?}"
        );
    }
}
