//! Moving the planned objects, on every GC worker.
//!
//! Workers take chunks of the plan's moves from an atomic cursor; each
//! move copies the object's bytes to its new slot (zeroing the rest of a
//! bigger slot), leaves the new address in the first word of the old slot,
//! and calls `Embedder::on_move`. Moves are independent (no slot is both a
//! source and a destination: `plan.rs`), so the order does not matter.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use parking_lot::Mutex;

use super::plan::Move;
use crate::collect::callbacks::PanicSlot;
use crate::collect::heap::HeapCore;
use crate::embedder::Embedder;
use crate::object::ObjRef;

/// Moves a worker takes from the cursor at a time.
const CHUNK: usize = 256;

/// Copies every move's object (see the module docs). A panic from
/// `on_move` is added to `panics` once every object has moved.
pub fn evacuate<E: Embedder>(core: &HeapCore<E>, moves: &[Move], panics: &mut PanicSlot) {
    let next = AtomicUsize::new(0);
    let caught = Mutex::new(PanicSlot::default());
    core.workers.run(&|_| {
        let t = Instant::now();
        let mut panic = PanicSlot::default();
        let mut done = 0u64;
        loop {
            let from = next.fetch_add(CHUNK, Relaxed);
            if from >= moves.len() {
                break;
            }
            for m in &moves[from..(from + CHUNK).min(moves.len())] {
                core.table
                    .move_object(m.from, m.to, m.old_size.min(m.new_size), m.new_size);
                panic.call(|| {
                    core.embedder.on_move(
                        ObjRef::from_heap_addr(m.from),
                        ObjRef::from_heap_addr(m.to),
                        m.old_size,
                        m.new_size,
                    )
                });
                done += 1;
            }
        }
        core.span("evacuate", t, Some(("objects", done)));
        caught.lock().merge(panic);
    });
    panics.merge(caught.into_inner());
}
