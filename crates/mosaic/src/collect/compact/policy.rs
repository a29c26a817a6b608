//! When `MOSAIC_COMPACT=auto` compacts a pool: measured fragmentation.
//!
//! After marking, a pool's pages say exactly what is live. Free slots in
//! pages that also hold live objects are memory the pool cannot give back;
//! compacting pays off when they are at least as many as the live slots
//! (the partly used pages are at most half full on average) and at least
//! two pages' worth (a small pool is not worth a pause).

use super::plan::counts;
use crate::collect::heap::HeapCore;
use crate::embedder::Embedder;
use crate::pool::SizePool;

/// Whether `pool` is fragmented enough to compact (see the module docs).
pub fn fragmented<E: Embedder>(core: &HeapCore<E>, pool: &SizePool) -> bool {
    let (mut live, mut holes) = (0usize, 0usize);
    for p in pool.pages() {
        let d = core.table.desc(p);
        let (n, l) = (d.slot_count(), counts(d).0);
        live += l;
        if l > 0 {
            holes += n - l;
        }
    }
    holes >= live && holes >= 2 * pool.slots_per_page
}
