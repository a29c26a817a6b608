//! What the model test checks after a collection: the heap's counts of
//! weak handles, weak slots, ephemerons and finalizers, the weak handles'
//! targets, and every object the model has, allocated at the address the
//! harness tracks (`on_move` replayed) with its exact contents.

use super::common::*;
use super::model_graph::Kind;
use super::Harness;

impl Harness {
    /// The heap agrees with the model: counts, weak handles, contents.
    pub(super) fn check_state(&self) {
        let stats = self.heap.stats();
        let counts = (
            stats.weak_handles,
            stats.weak_slots,
            stats.ephemerons,
            stats.finalizers_registered,
            stats.finalizers_pending,
        );
        let model = (
            self.g.handles.len(),
            self.g.slot_count(),
            self.g.ephemeron_count(),
            self.g.finalizer_count(),
            self.g.queue.len(),
        );
        assert_eq!(
            counts, model,
            "(weak handles, weak slots, ephemerons, finalizers registered, pending)"
        );
        for (i, (w, h)) in self.weak.iter().zip(&self.g.handles).enumerate() {
            assert_eq!(w.get(), self.addr_of(h.1), "weak handle {i} on {:?}", h);
        }
        self.check_contents();
    }

    /// Every object the model has is allocated at its address with its
    /// exact contents.
    pub(super) fn check_contents(&self) {
        for (&id, mo) in &self.g.objs {
            let o = self.addr[&id];
            assert!(
                self.heap.is_object(o.as_ptr()),
                "object {id} is no longer allocated"
            );
            // Between pauses every allocated object reads as marked.
            assert_eq!(
                self.heap.is_marked(o.as_ptr()),
                Some(true),
                "is_marked of {id}"
            );
            if mo.is_ephemeron() {
                let key = self.heap.ephemeron_key(o).expect("an ephemeron");
                let value = self.heap.ephemeron_value(o).expect("an ephemeron");
                assert_eq!(key, self.addr_of(mo.fields[0]), "key of ephemeron {id}");
                let v = self.addr_of(mo.fields[1]);
                assert_eq!(value, v, "value of ephemeron {id} ({:?})", mo.fields);
                continue;
            }
            if self.cons.is_conservative(id) {
                self.check_conservative(id, o);
                continue;
            }
            let (tag, len, hid) = header(o);
            assert_eq!(hid, id, "header id of object {id}");
            match mo.kind {
                Kind::Pair => assert_eq!((tag, len), (PAIR, 2)),
                Kind::Vector(n) => assert_eq!((tag, len as usize), (VECTOR, n)),
                Kind::WeakBox(n) => assert_eq!((tag, len as usize), (WEAKBOX, n)),
                Kind::Bytes { len: n, .. } => {
                    assert_eq!((tag, len as usize), (BYTES, n));
                    assert!(bytes_match(o, mo.seed), "bytes of object {id} changed");
                }
                Kind::Ephemeron => unreachable!(),
            }
            for (i, f) in mo.fields.iter().enumerate() {
                assert_eq!(
                    field(o, i),
                    self.addr_of(*f),
                    "field {i} of object {id} ({:?})",
                    mo.slots.get(i)
                );
            }
        }
    }
}
