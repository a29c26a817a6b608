//! The model test's moving part: pins, ambiguous roots holding interior
//! pointers, explicit compactions in both page orders, and resize hints
//! that move vectors into other pools. After each collection the harness
//! replays the `on_move` calls on its addresses, checking that no pinned
//! object and no object an ambiguous word points into moved, and that no
//! object moved twice; `check_contents` then finds every object, with its
//! exact contents and every reference updated, at its new address.

use std::collections::{HashMap, HashSet};

use mosaic::{CompactOrder, ObjRef};
use proptest::prelude::*;

use super::common::*;
use super::model_graph::Kind;
use super::{pick, Harness};

#[derive(Clone, Debug)]
pub enum MovingOp {
    Pin {
        target: usize,
    },
    Unpin {
        target: usize,
    },
    /// An ambiguous word `offset` bytes into an object (a fake C stack).
    Ambiguous {
        target: usize,
        offset: usize,
    },
    DropAmbiguous {
        index: usize,
    },
    Compact {
        address: bool,
    },
    /// A vector wants `extra` bytes more than its fields need.
    Resize {
        target: usize,
        extra: usize,
    },
}

pub fn op() -> impl Strategy<Value = MovingOp> {
    prop_oneof![
        2 => any::<usize>().prop_map(|target| MovingOp::Pin { target }),
        1 => any::<usize>().prop_map(|target| MovingOp::Unpin { target }),
        2 => any::<(usize, usize)>().prop_map(|(target, offset)| MovingOp::Ambiguous { target, offset }),
        1 => any::<usize>().prop_map(|index| MovingOp::DropAmbiguous { index }),
        2 => any::<bool>().prop_map(|address| MovingOp::Compact { address }),
        1 => (any::<usize>(), prop::sample::select(vec![0usize, 8, 48, 200]))
            .prop_map(|(target, extra)| MovingOp::Resize { target, extra }),
    ]
}

impl Harness {
    pub(super) fn apply_moving(&mut self, op: &MovingOp) {
        match *op {
            MovingOp::Pin { target } => {
                let Some(id) = pick(&self.g.accessible(), target) else {
                    return;
                };
                self.m.pin(self.addr[&id]).expect("pin");
                *self.pins.entry(id).or_insert(0) += 1;
                assert!(self.heap.is_pinned(self.addr[&id]));
            }
            MovingOp::Unpin { target } => {
                let pinned: Vec<u64> = self.pins.keys().copied().collect();
                let Some(id) = pick(&pinned, target) else {
                    return;
                };
                self.m.unpin(self.addr[&id]).expect("unpin");
                let n = self.pins.get_mut(&id).unwrap();
                *n -= 1;
                if *n == 0 {
                    self.pins.remove(&id);
                    assert!(self.m.unpin(self.addr[&id]).is_err(), "unpin with no pin");
                }
            }
            MovingOp::Ambiguous { target, offset } => {
                let Some(id) = pick(&self.g.accessible(), target) else {
                    return;
                };
                let o = self.addr[&id];
                let size = self.heap.object_size(o).expect("an object");
                self.heap
                    .embedder()
                    .ambiguous
                    .lock()
                    .push(o.addr() + offset % size);
                self.g.ambiguous.push(id);
            }
            MovingOp::DropAmbiguous { index } => {
                let n = self.g.ambiguous.len();
                if n > 0 {
                    self.g.ambiguous.swap_remove(index % n);
                    self.heap.embedder().ambiguous.lock().swap_remove(index % n);
                }
            }
            MovingOp::Compact { address } => {
                let order = if address {
                    CompactOrder::Address
                } else {
                    CompactOrder::PinnedFirst
                };
                let before = self.heap.stats().compactions;
                self.m.compact_toward(order).expect("compact");
                assert_eq!(self.heap.stats().compactions, before + 1);
                self.after_collect();
            }
            MovingOp::Resize { target, extra } => {
                let mut vectors = self.accessible(|n| matches!(n.kind, Kind::Vector(_)));
                vectors.retain(|&id| !self.cons.is_conservative(id));
                let Some(id) = pick(&vectors, target) else {
                    return;
                };
                let Kind::Vector(n) = self.g.objs[&id].kind else {
                    unreachable!()
                };
                let want = HEADER + 8 * n + extra + self.cons.padding(id);
                self.heap.embedder().resize_to.lock().insert(id, want);
            }
        }
    }

    /// Replays one collection's moves on the harness's addresses.
    pub(super) fn apply_moves(&mut self, moves: &[Move]) {
        self.pins.retain(|id, _| self.g.objs.contains_key(id));
        if moves.is_empty() {
            return;
        }
        let at: HashMap<usize, u64> = self.addr.iter().map(|(&id, o)| (o.addr(), id)).collect();
        let mut moved = HashSet::new();
        for &(from, to, old, new) in moves {
            let id = *at
                .get(&from)
                .unwrap_or_else(|| panic!("on_move from {from:#x}, which is no live object"));
            assert!(
                moved.insert(id),
                "object {id} moved twice in one compaction"
            );
            assert!(!self.pins.contains_key(&id), "pinned object {id} moved");
            assert!(
                !self.g.ambiguous.contains(&id),
                "object {id} under an ambiguous word moved"
            );
            assert!(
                !self.cons.pinned.contains(&id),
                "object {id} under a conservative object's word moved"
            );
            self.cons.moved(id, from, new);
            if let Some(&want) = self.heap.embedder().resize_to.lock().get(&id) {
                assert!(
                    new >= want.min(old),
                    "object {id} moved into a {new}-byte slot"
                );
            }
            self.addr
                .insert(id, ObjRef::from_ptr(to as *mut u8).unwrap());
        }
    }
}
