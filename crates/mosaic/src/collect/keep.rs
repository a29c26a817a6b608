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

/// A dead keeper to trace: its start, the end of what refers to itself
/// (its slot or pages), and whether its words are scanned conservatively
/// (then `end` is where they end).
pub struct DeadKeeper {
    pub start: usize,
    pub end: usize,
    pub conservative: bool,
}

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

    /// Pause: calls `f` on each dead keeper (allocated, unmarked,
    /// `keep_referents` set) that holds references (not `NO_POINTERS`), in
    /// page order, with the list locked (no mutator allocates in a pause;
    /// `f` must not list a page). Duplicate listings are dropped here.
    pub fn for_each_dead(&self, table: &PageTable, mut f: impl FnMut(DeadKeeper)) {
        let mut pages = self.pages.lock();
        if pages.is_empty() {
            return;
        }
        pages.sort_unstable();
        pages.dedup();
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
                        let mut c = d.keep_referents.word(w)
                            & d.alloc.word(w)
                            & !d.mark.word(w)
                            & !d.no_pointers.word(w);
                        let conservative = d.conservative.word(w);
                        while c != 0 {
                            let bit = c.trailing_zeros() as usize;
                            c &= c - 1;
                            let start = addr + (w * 64 + bit) * size;
                            f(DeadKeeper {
                                start,
                                end: start + size,
                                conservative: conservative & (1 << bit) != 0,
                            });
                        }
                    }
                }
                PageKind::LargeHead => {
                    let dead = d.keep_referents.get(0) && d.alloc.get(0) && !d.mark.get(0);
                    if dead && !d.no_pointers.get(0) {
                        // Its whole pages, as `traced_end` says.
                        let conservative = d.conservative.get(0);
                        let end = if conservative {
                            addr + d.large_size()
                        } else {
                            addr + (d.span() << crate::space::PAGE_SHIFT)
                        };
                        f(DeadKeeper {
                            start: addr,
                            end,
                            conservative,
                        });
                    }
                }
                PageKind::Free | PageKind::LargeTail => {}
            }
        }
    }
}
