//! Sweeping one page.
//!
//! Called by a mutator's slow path (lazy sweeping), by the collector (eager
//! sweeping, and finishing the previous cycle before marking), always on a
//! page that the caller owns exclusively for the duration of the call.

use crate::space::{PageDesc, PageTable};

/// What sweeping one page found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SweepResult {
    /// Slots still allocated (they were marked).
    pub live: usize,
    /// Slots freed by this sweep (allocated, not marked).
    pub freed: usize,
    /// Slots on the page.
    pub slots: usize,
}

impl SweepResult {
    pub fn free(&self) -> usize {
        self.slots - self.live
    }
}

/// Frees the unmarked allocated slots of a small-object page, calls
/// `on_free(address)` for the dead ones that asked for cleanup, makes the
/// mark bits the new alloc bits and clears the marks — unless `sticky`
/// (generational mode), where the marks stay: they say which objects are
/// old. Word-at-a-time: 64 slots per step, so a page costs at most 64
/// iterations plus the cleanups. With `poison` (verify mode), every freed
/// slot is overwritten with `POISON` (`space/page_table.rs`) after its cleanup.
pub fn sweep_page(
    d: &PageDesc,
    page_addr: usize,
    sticky: bool,
    on_free: &mut dyn FnMut(usize),
    poison: Option<&PageTable>,
) -> SweepResult {
    let n = d.slot_count();
    let size = d.slot_size();
    let cleanup = d.has_cleanup();
    let ephemerons = d.has_ephemerons();
    let mut cleanup_left = false;
    let (mut live, mut freed) = (0, 0);
    for w in 0..n.div_ceil(64) {
        let marked = d.mark.word(w);
        let alloc = d.alloc.word(w);
        let dead = alloc & !marked;
        if dead != 0 {
            freed += dead.count_ones() as usize;
            if cleanup {
                let c = d.cleanup.word(w);
                let mut dc = dead & c;
                while dc != 0 {
                    let slot = w * 64 + dc.trailing_zeros() as usize;
                    on_free(page_addr + slot * size);
                    dc &= dc - 1;
                }
                d.cleanup.retain_word(w, !dead);
                d.keep_referents.retain_word(w, !dead);
            }
            d.clear_object_bits(w, dead, ephemerons);
            if let Some(t) = poison {
                let mut left = dead;
                while left != 0 {
                    let slot = w * 64 + left.trailing_zeros() as usize;
                    t.poison(page_addr + slot * size, size);
                    left &= left - 1;
                }
            }
        }
        if cleanup && d.cleanup.word(w) != 0 {
            cleanup_left = true;
        }
        d.alloc.set_word(w, marked);
        live += marked.count_ones() as usize;
    }
    // Readers may look at this page meanwhile (`PageDesc::slot_is_live`):
    // the alloc bits are exact now; say so before the marks disappear.
    d.finish_sweep_publish();
    if !sticky {
        for w in 0..n.div_ceil(64) {
            d.mark.set_word(w, 0);
        }
    }
    if freed > 0 {
        d.set_zeroed(false);
    }
    if cleanup {
        d.set_has_cleanup(cleanup_left);
    }
    SweepResult {
        live,
        freed,
        slots: n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::space::PageTable;

    #[test]
    fn sweep_frees_unmarked_calls_cleanup_and_keeps_marked() {
        let t = PageTable::new(1).unwrap();
        let d = t.desc(0);
        d.init_small(0, 32);
        d.set_zeroed(true);
        d.alloc.set_range(0, 100);
        for s in [3, 70, 99] {
            d.mark.set(s);
        }
        d.no_pointers.set(5);
        d.no_pointers.set(70);
        d.cleanup.set(4);
        d.cleanup.set(99);
        d.set_has_cleanup(true);
        let mut cleaned = vec![];
        let r = sweep_page(d, 1000, false, &mut |a| cleaned.push(a), None);
        assert_eq!(
            r,
            SweepResult {
                live: 3,
                freed: 97,
                slots: 2048
            }
        );
        assert_eq!(r.free(), 2045);
        assert_eq!(cleaned, vec![1000 + 4 * 32], "only the dead cleanup object");
        assert_eq!(d.alloc.count(), 3);
        assert!(d.alloc.get(70) && d.no_pointers.get(70) && !d.no_pointers.get(5));
        assert_eq!(d.mark.count(), 0);
        assert!(d.cleanup.get(99) && d.has_cleanup());
        assert!(!d.zeroed(), "freed slots hold old bytes");
        // Nothing marked this time: everything dies, the survivor's cleanup runs.
        let r = sweep_page(d, 1000, false, &mut |a| cleaned.push(a), None);
        assert_eq!((r.live, r.freed), (0, 3));
        assert_eq!(cleaned.last(), Some(&(1000 + 99 * 32)));
        assert!(!d.has_cleanup());
    }

    #[test]
    fn a_sticky_sweep_keeps_the_marks_of_the_survivors() {
        let t = PageTable::new(1).unwrap();
        let d = t.desc(0);
        d.init_small(0, 64);
        d.alloc.set_range(0, 10);
        d.barriered.set_range(0, 10);
        d.mark.set(2);
        d.mark.set(7);
        let r = sweep_page(d, 0, true, &mut |_| {}, None);
        assert_eq!((r.live, r.freed), (2, 8));
        assert_eq!(d.alloc.count(), 2);
        assert!(
            d.mark.get(2) && d.mark.get(7) && d.mark.count() == 2,
            "old stays marked"
        );
        assert!(
            d.barriered.get(7) && !d.barriered.get(3),
            "dead slots lose the flag"
        );
        // A young object allocated next to them dies in the next minor
        // sweep; the old ones stay.
        d.alloc.set(3);
        let r = sweep_page(d, 0, true, &mut |_| {}, None);
        assert_eq!((r.live, r.freed), (2, 1));
    }
}
