//! A parallel marker's own mark bits: what lets the strong closure's
//! workers set the shared mark bits with plain stores instead of an atomic
//! read-modify-write per object.
//!
//! Why: a locked instruction (`lock bts`) per newly marked object stalls
//! the marking loop until the store buffer drains, so the overlapped cache
//! misses that buffered prefetch buys are lost. Measured on the 2-vCPU VM
//! (BENCHMARKS.md, ninth session): with one marker, the atomic form alone
//! doubled the marking time of a heap of small objects; with two markers
//! the parallel pause was slower than the serial one.
//!
//! How: a worker sets an object's bit in the shared map with a plain load
//! and store of the word (`Bitmap::test_and_set`), and the same bit in its
//! own map here, which no other thread writes. Two workers storing the same
//! shared word at once may lose one of the bits. That costs nothing but
//! duplicate work: the object was already traced by the worker that set it,
//! and a worker that later finds the bit clear marks and traces it again.
//! When every worker is done (so no plain store is in flight), the
//! collecting thread ORs the union of the workers' bits into the shared map
//! and counts the closure's objects from it, each once ([`merge_all`]).
//!
//! Only for embedders whose `trace` may run twice for one object
//! (`Embedder::TRACE_TWICE_OK`: the drop-in); the others keep the atomic
//! form, and `trace` at most once per object.
//!
//! What readers see: during a parallel strong closure `Heap::is_marked`
//! (a drop-in mark procedure's `GC_is_marked`) reads the shared bit and,
//! on a marking worker, that worker's own bits ([`marked_by_this_thread`]):
//! what the worker marked reads marked; an object another worker marked
//! in the same instant can read clear, as one about to be marked does;
//! after the
//! closure every bit is exact, so the weak, ephemeron and finalizer
//! phases, verify, compaction and the sweep read exact bits.
//!
//! Invariant: outside a strong closure every word here is zero and no page
//! is listed (a closure abandoned by a panic drops its workers' bits
//! instead); during one, the objects the closure marked are exactly the
//! union of every worker's own bits.
//! Memory: one bit per 16 bytes of heap a worker marked in (1/128), plus a
//! byte per page; committed on first touch and kept for the next closure.

use std::cell::Cell;

use crate::os::Reservation;
use crate::space::{PageKind, PageTable, MAX_SLOTS, PAGE_SHIFT};

const WORDS: usize = MAX_SLOTS / 64;

thread_local! {
    /// The own bits of the marker running on this thread (their first word
    /// and page count), while it marks; (0, 0) otherwise.
    static CURRENT: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// While alive, this thread's marker's own bits are what
/// [`marked_by_this_thread`] reads.
pub struct Published(());

impl Published {
    pub fn new(own: &OwnMarks) -> Self {
        CURRENT.with(|c| c.set((own.words.start(), own.npages)));
        Published(())
    }
}

impl Drop for Published {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set((0, 0)));
    }
}

/// Whether the marker running on this thread (if any) marked slot `slot`
/// of page `page` in the closure in progress: a bit a racing store took
/// out of the shared map is still here.
pub fn marked_by_this_thread(page: usize, slot: usize) -> bool {
    let (base, npages) = CURRENT.with(|c| c.get());
    if base == 0 || page >= npages || slot >= MAX_SLOTS {
        return false;
    }
    // SAFETY: `base` is the first word of a live `OwnMarks`' table of
    // `npages * WORDS` zero-filled words (the `Published` guard is dropped
    // before the marker is done with its bits), written only by this
    // thread's marker, which is inside a callback now (not writing).
    let w = unsafe { *(base as *const u64).add(page * WORDS + slot / 64) };
    w & (1 << (slot % 64)) != 0
}

/// One worker's mark bits for every page of the table, and the pages it
/// set bits on.
pub struct OwnMarks {
    /// `WORDS` words per page, zero-filled.
    words: Reservation,
    /// One byte per page: nonzero when the page is listed in `touched`.
    listed: Reservation,
    touched: Vec<u32>,
    npages: usize,
}

impl OwnMarks {
    /// Own marks for every page of `table` (address space only, until
    /// touched).
    pub fn new(table: &PageTable) -> std::io::Result<Self> {
        let npages = table.npages();
        Ok(OwnMarks {
            words: Reservation::new((npages * WORDS * 8).max(4096), 4096)?,
            listed: Reservation::new(npages.max(4096), 4096)?,
            touched: Vec::new(),
            npages,
        })
    }

    /// Records bit `slot` of page `page` as set by this worker.
    #[inline(always)]
    pub fn set(&mut self, page: usize, slot: usize) {
        assert!(page < self.npages && slot < MAX_SLOTS);
        // SAFETY: `page < npages` and `slot < MAX_SLOTS` (checked above),
        // so both addresses lie inside their zero-filled reservations
        // (`WORDS` 8-aligned words and one byte per page); only the
        // worker holding `&mut self` reads or writes them.
        unsafe {
            let listed = (self.listed.start() as *mut u8).add(page);
            if *listed == 0 {
                *listed = 1;
                self.touched.push(page as u32);
            }
            let w = (self.words.start() as *mut u64).add(page * WORDS + slot / 64);
            *w |= 1 << (slot % 64);
        }
    }

    /// Calls `f(word, bits)` for each nonzero word among the first `words`
    /// of `page` (the page's `bitmap_words`: no bit lies beyond) and zeroes
    /// it; unlists the page. Returns whether it was listed.
    fn take_page(&mut self, page: usize, words: usize, mut f: impl FnMut(usize, u64)) -> bool {
        assert!(page < self.npages);
        // SAFETY: `page < npages` (checked), so its `WORDS` words and its
        // byte lie inside the reservations; we hold `&mut self`.
        unsafe {
            let listed = (self.listed.start() as *mut u8).add(page);
            if *listed == 0 {
                return false;
            }
            *listed = 0;
            let base = (self.words.start() as *mut u64).add(page * WORDS);
            debug_assert!((words..WORDS).all(|w| *base.add(w) == 0));
            for w in 0..words.min(WORDS) {
                let v = *base.add(w);
                if v != 0 {
                    f(w, v);
                    *base.add(w) = 0;
                }
            }
        }
        true
    }
}

/// ORs every worker's bits into `table`'s shared mark bits and clears them
/// (once every marker of the closure is done: a marker's plain store could
/// otherwise undo a merged bit). Returns the objects and bytes the closure
/// marked, each object once: a worker records an object only when it
/// found its shared bit clear, so the union of the workers' bits is
/// exactly what the closure marked (an object two workers marked, its bit
/// lost to a racing store, is in both).
pub fn merge_all(owns: &mut [OwnMarks], table: &PageTable) -> (usize, usize) {
    let (mut objects, mut bytes) = (0, 0);
    for i in 0..owns.len() {
        for page in std::mem::take(&mut owns[i].touched) {
            let page = page as usize;
            let d = table.desc(page);
            let words = d.bitmap_words();
            let mut union = [0u64; WORDS];
            let mut any = false;
            for o in owns[i..].iter_mut() {
                any |= o.take_page(page, words, |w, v| union[w] |= v);
            }
            if !any {
                continue; // merged with an earlier worker's list
            }
            let union = &union[..words];
            let n: usize = union.iter().map(|u| u.count_ones() as usize).sum();
            for (w, &u) in union.iter().enumerate() {
                if u != 0 {
                    d.mark.set_word(w, d.mark.word(w) | u);
                }
            }
            objects += n;
            bytes += n * match d.kind() {
                PageKind::LargeHead => d.span() << PAGE_SHIFT,
                _ => d.slot_size(),
            };
        }
    }
    (objects, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_union_of_every_workers_bits_is_merged_and_counted_once() {
        let t = PageTable::new(4).unwrap();
        t.desc(1).init_small(1, 32);
        t.desc(3).init_small(1, 64);
        let mut owns = vec![OwnMarks::new(&t).unwrap(), OwnMarks::new(&t).unwrap()];
        // Slot 5 was marked by both workers (its shared bit lost to a
        // racing store in between); slot 7 was marked before the closure.
        owns[0].set(1, 5);
        owns[0].set(1, 1000);
        owns[0].set(3, 64);
        owns[1].set(1, 5);
        owns[1].set(1, 6);
        t.desc(1).mark.set(7);
        assert_eq!(merge_all(&mut owns, &t), (4, 3 * 32 + 64));
        for s in [5, 6, 7, 1000] {
            assert!(t.desc(1).mark.get(s), "slot {s}");
        }
        assert!(!t.desc(1).mark.get(8));
        assert!(t.desc(3).mark.get(64));
        // Everything was cleared: nothing is merged a second time.
        t.desc(1).mark.clear_all();
        assert_eq!(merge_all(&mut owns, &t), (0, 0));
        owns[0].set(1, 9);
        assert_eq!(merge_all(&mut owns, &t), (1, 32));
        assert!(!t.desc(1).mark.get(5), "page 1's words were cleared");
    }
}
