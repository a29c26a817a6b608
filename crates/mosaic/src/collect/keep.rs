//! Objects that keep their referents until their cleanup ran
//! (`AllocFlags::KEEP_REFERENTS`, with `NEEDS_CLEANUP`): the Boehm
//! collector's disclaim procedures with "mark from all".
//!
//! After the strong closure (and the ephemeron fixed point), every such
//! object still unmarked is dead, and its `on_free` will run when the sweep
//! reclaims it. Its fields are traced now, as if it were live, but it is
//! not marked itself: what it references survives this collection, so
//! `on_free` can read it. Another dead keeper that one of them references is
//! marked that way and lives one more collection (a chain takes a
//! collection per link, as in the Boehm collector). Direct
//! self-references are ignored, but keepers in a longer cycle mark each
//! other and are never reclaimed (as with the Boehm collector's "mark from
//! all", and as with ordered finalizers).
//!
//! Invariant: a slot's `keep_referents` bit is set only with its `cleanup`
//! bit, and both are cleared together when the slot is reclaimed. Every
//! page whose `keep_referents` bitmap was ever allocated is in
//! [`KeepPages`] (listed when the bitmap is first allocated, by the
//! allocating mutator or by compaction; a page may be listed twice when two
//! threads race to list it, which costs a second look only).

use parking_lot::Mutex;

use crate::space::{PageKind, PageTable};

/// The pages whose `keep_referents` bitmap exists.
#[derive(Default)]
pub struct KeepPages {
    pages: Mutex<Vec<u32>>,
}

impl KeepPages {
    /// Lists `page` (the caller saw its bitmap unallocated).
    pub fn note(&self, page: usize) {
        self.pages.lock().push(page as u32);
    }

    /// Pause: the dead keepers (allocated, unmarked, `keep_referents` set),
    /// in page order. Duplicate listings are dropped here.
    pub fn dead(&self, table: &PageTable) -> Vec<usize> {
        let mut pages = self.pages.lock();
        if pages.is_empty() {
            return Vec::new();
        }
        pages.sort_unstable();
        pages.dedup();
        let mut out = Vec::new();
        for &page in pages.iter() {
            let page = page as usize;
            let d = table.desc(page);
            if !d.keep_referents.is_allocated() {
                continue;
            }
            let addr = table.page_addr(page);
            match d.kind() {
                PageKind::Small => {
                    let size = d.slot_size();
                    for w in 0..d.slot_count().div_ceil(64) {
                        let mut c = d.keep_referents.word(w) & d.alloc.word(w) & !d.mark.word(w);
                        while c != 0 {
                            let slot = w * 64 + c.trailing_zeros() as usize;
                            c &= c - 1;
                            out.push(addr + slot * size);
                        }
                    }
                }
                PageKind::LargeHead => {
                    if d.keep_referents.get(0) && d.alloc.get(0) && !d.mark.get(0) {
                        out.push(addr);
                    }
                }
                PageKind::Free | PageKind::LargeTail => {}
            }
        }
        out
    }
}
