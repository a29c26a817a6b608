//! Address → page → slot, in O(1).
//!
//! The heap is one aligned reservation of `npages` pages; the descriptors sit
//! in a second reservation indexed by page number. A page's descriptor memory
//! is touched only when the page is first used, so a large maximum heap costs
//! address space, not memory.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use super::geometry::{PAGE_MASK, PAGE_SHIFT, PAGE_SIZE};
use super::log_bits::LogBits;
use super::page::{PageDesc, PageKind};
use crate::os::Reservation;

/// What verify mode writes over every word of a slot the sweep frees: not
/// a canonical x86-64 address and not a small integer, so a program that
/// still reads a freed object (a missed root, a missed barrier) sees
/// garbage at once instead of the old contents, and a traced word of it
/// is no heap pointer.
pub const POISON: usize = 0xA5A5_A5A5_A5A5_A5A5;

/// The heap's address range and its page descriptors.
pub struct PageTable {
    heap: Reservation,
    descs: Reservation,
    npages: usize,
    /// The write barrier's unlogged bits (generational mode).
    log: LogBits,
    /// Mixed into the free tags (`free_tag`): random per heap.
    free_secret: usize,
}

/// Where an address falls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Located {
    /// Not inside the heap's range.
    Outside,
    /// Inside the heap, on a page that holds no object.
    FreePage,
    /// Inside a small-object page, past the last whole slot.
    PageTail,
    /// Inside slot `slot` of small-object page `page`; `start` is the slot's address.
    Small {
        page: usize,
        slot: usize,
        start: usize,
    },
    /// Inside the large object whose span starts at page `head`.
    Large { head: usize, start: usize },
}

/// What a collection knows of an address after marking (pause only: every
/// alloc bit is exact then).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkState {
    /// Outside the heap: never collected, always treated as live.
    Outside,
    /// Inside the heap but in no allocated object.
    NotObject,
    /// Inside the allocated object starting at `start`, which is marked.
    Marked(usize),
    /// Inside the allocated object starting at `start`, which is not marked.
    Unmarked(usize),
}

impl PageTable {
    /// Reserves a heap of `npages` pages and its descriptor table.
    pub fn new(npages: usize) -> io::Result<Self> {
        let heap = Reservation::new(npages * PAGE_SIZE, PAGE_SIZE)?;
        let desc_bytes = npages * std::mem::size_of::<PageDesc>();
        let descs = Reservation::new(
            desc_bytes.max(1),
            std::mem::align_of::<PageDesc>().max(4096),
        )?;
        let log = LogBits::new(heap.start(), heap.len())?;
        let free_secret = {
            use std::hash::{BuildHasher, Hasher};
            std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish() as usize
        };
        Ok(PageTable {
            heap,
            descs,
            npages,
            log,
            free_secret,
        })
    }

    /// The write barrier's unlogged bits.
    #[inline(always)]
    pub fn log(&self) -> &LogBits {
        &self.log
    }

    #[inline(always)]
    pub fn base(&self) -> usize {
        self.heap.start()
    }

    pub fn npages(&self) -> usize {
        self.npages
    }

    /// Bytes of address space the heap covers (its maximum size).
    pub fn capacity(&self) -> usize {
        self.heap.len()
    }

    /// Page index of an address inside the heap.
    #[inline(always)]
    pub fn page_index(&self, addr: usize) -> Option<usize> {
        let off = addr.wrapping_sub(self.heap.start());
        (off < self.heap.len()).then_some(off >> PAGE_SHIFT)
    }

    #[inline(always)]
    pub fn page_addr(&self, index: usize) -> usize {
        self.heap.start() + (index << PAGE_SHIFT)
    }

    #[inline(always)]
    pub fn desc(&self, index: usize) -> &PageDesc {
        assert!(index < self.npages);
        // SAFETY: `index < npages`, the table holds `npages` descriptors,
        // the mapping is zero-filled and all-zero is a valid `PageDesc`
        // (atomics only), and it lives as long as `self`.
        unsafe { &*(self.descs.start() as *const PageDesc).add(index) }
    }

    /// The descriptor and slot index of `addr`, an address inside a slot
    /// of a small-object page (no check of the page's kind).
    #[inline(always)]
    pub fn small_slot(&self, addr: usize) -> (&PageDesc, usize) {
        let off = addr - self.heap.start();
        let d = self.desc(off >> PAGE_SHIFT);
        (d, d.slot_of_offset(off & PAGE_MASK))
    }

    /// Maps any address to what it points into.
    #[inline(always)]
    pub fn locate(&self, addr: usize) -> Located {
        let Some(page) = self.page_index(addr) else {
            return Located::Outside;
        };
        let d = self.desc(page);
        match d.kind() {
            PageKind::Small => {
                let slot = d.slot_of_offset(addr & PAGE_MASK);
                if slot >= d.slot_count() {
                    return Located::PageTail;
                }
                let start = self.page_addr(page) + slot * d.slot_size();
                Located::Small { page, slot, start }
            }
            PageKind::LargeHead => Located::Large {
                head: page,
                start: self.page_addr(page),
            },
            PageKind::LargeTail => {
                let head = d.span();
                Located::Large {
                    head,
                    start: self.page_addr(head),
                }
            }
            PageKind::Free => Located::FreePage,
        }
    }

    /// Whether the object `addr` points into (interior pointers included)
    /// is allocated and marked. Meaningful in a pause, after marking.
    pub fn mark_state(&self, addr: usize) -> MarkState {
        let (d, slot, start) = match self.locate(addr) {
            Located::Outside => return MarkState::Outside,
            Located::FreePage | Located::PageTail => return MarkState::NotObject,
            Located::Small { page, slot, start } => (self.desc(page), slot, start),
            Located::Large { head, start } => (self.desc(head), 0, start),
        };
        if !d.alloc.get(slot) {
            MarkState::NotObject
        } else if d.mark.get(slot) {
            MarkState::Marked(start)
        } else {
            MarkState::Unmarked(start)
        }
    }

    /// The start of the live object containing `addr` (interior addresses
    /// included), if any. Like [`PageTable::object_at`], safe outside a pause.
    pub fn object_containing(&self, addr: usize) -> Option<usize> {
        match self.locate(addr) {
            Located::Small { page, slot, start } if self.desc(page).slot_is_live(slot) => {
                Some(start)
            }
            Located::Large { head, start } if self.desc(head).alloc.get(0) => Some(start),
            _ => None,
        }
    }

    /// The start of the live object `addr` points exactly at, if any. On a
    /// page not yet swept since the last collection, an unmarked object is
    /// dead although its alloc bit is still set: it is not an object.
    #[inline]
    pub fn object_at(&self, addr: usize) -> Option<Located> {
        match self.locate(addr) {
            l @ Located::Small { page, slot, start }
                if start == addr && self.desc(page).slot_is_live(slot) =>
            {
                Some(l)
            }
            l @ Located::Large { head, start } if start == addr && self.desc(head).alloc.get(0) => {
                Some(l)
            }
            _ => None,
        }
    }

    /// Bytes of descriptor memory the first `pages` descriptors occupy, in
    /// whole OS pages (what touching them commits).
    pub fn descriptor_bytes(&self, pages: usize) -> usize {
        (pages * std::mem::size_of::<PageDesc>()).next_multiple_of(4096)
    }

    /// Gives back the memory of the descriptors of pages `[first, first +
    /// n)`, which must be free and decommitted: afterwards they read as
    /// zero, a valid free descriptor (`PageResource` sets what a taken
    /// page needs). Only whole OS pages inside the range go, and none that
    /// holds a descriptor with a lazily allocated bitmap (those stay until
    /// the page table's drop frees them). Returns the bytes given back.
    pub fn decommit_descriptors(&self, first: usize, n: usize) -> usize {
        const OS_PAGE: usize = 4096;
        let size = std::mem::size_of::<PageDesc>();
        let base = self.descs.start();
        let lo = (base + first * size).next_multiple_of(OS_PAGE);
        let hi = (base + (first + n) * size) & !(OS_PAGE - 1);
        let mut given = 0;
        // One `madvise` per run of OS pages that may go.
        let mut run_start = None;
        let mut a = lo;
        while a <= hi {
            // The descriptors this OS page overlaps, all in the range.
            let ok = a < hi && {
                let (i0, i1) = ((a - base) / size, (a + OS_PAGE - 1 - base) / size);
                (i0..=i1).all(|i| !self.desc(i).has_lazy())
            };
            match (ok, run_start) {
                (true, None) => run_start = Some(a),
                (false, Some(start)) => {
                    self.descs.decommit(start, a - start);
                    given += a - start;
                    run_start = None;
                }
                _ => {}
            }
            a += OS_PAGE;
        }
        given
    }

    /// Gives a range of pages' memory back to the OS.
    pub fn decommit(&self, first: usize, count: usize) {
        assert!(
            first <= self.npages && count <= self.npages - first,
            "decommit of pages {first}+{count}: outside the heap"
        );
        self.heap.decommit(self.page_addr(first), count * PAGE_SIZE);
    }

    /// Fills the bytes `[addr, addr + len)` of the heap with zeroes.
    pub fn zero(&self, addr: usize, len: usize) {
        self.check_range(addr, len, "zeroing");
        // SAFETY: the range is inside the heap reservation (checked), which is
        // mapped read/write; callers only zero memory no live object uses.
        unsafe { std::ptr::write_bytes(addr as *mut u8, 0, len) }
    }

    /// Whether the bytes `[addr, addr + len)` of the heap are all zero:
    /// what a run handed out uncleared from a page marked
    /// [`PageDesc::zeroed`] must hold (checked in debug builds).
    pub(crate) fn is_zero(&self, addr: usize, len: usize) -> bool {
        self.check_range(addr, len, "reading");
        // SAFETY: the range is inside the heap reservation (checked), which
        // is mapped readable; the caller owns it (a run it is taking), so
        // nobody writes it meanwhile.
        let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
        bytes.iter().all(|&b| b == 0)
    }

    /// The word a small object freed explicitly holds at its start while it
    /// waits for reuse (in its mutator's list or its pool's forgotten
    /// frees): derived from its address and a per-heap random secret, odd
    /// (never an aligned pointer, never 0). It is how a second free of the
    /// slot is recognised, from any thread, without a side bit: a live
    /// object holds it only if the program stored exactly it there.
    #[inline(always)]
    fn free_tag(&self, addr: usize) -> usize {
        (addr.rotate_left(29) ^ self.free_secret) | 1
    }

    /// The first word of the small object at `addr`, an allocated slot.
    #[inline(always)]
    fn first_word(&self, addr: usize) -> &AtomicUsize {
        debug_assert!(addr >= self.base() && addr + 8 <= self.base() + self.heap.len());
        debug_assert_eq!(addr % 8, 0);
        // SAFETY: a slot start inside the mapped heap (every slot is at
        // least 16 bytes, a multiple of 8), 8-aligned; the collector reads
        // and writes the word atomically (a buggy program's racing plain
        // store is its own data race, and tears nothing on our side).
        unsafe { &*(addr as *const AtomicUsize) }
    }

    /// Writes the free tag into the slot at `addr` (freed explicitly, its
    /// contents dead).
    #[inline(always)]
    pub fn tag_freed(&self, addr: usize) {
        self.first_word(addr).store(self.free_tag(addr), Relaxed);
    }

    /// Whether the slot at `addr` holds its free tag (freed and waiting).
    #[inline(always)]
    pub fn is_tagged_freed(&self, addr: usize) -> bool {
        self.first_word(addr).load(Relaxed) == self.free_tag(addr)
    }

    /// Clears the free tag of a slot taken back (its first word 0, as a
    /// fresh slot's).
    #[inline(always)]
    pub fn untag_freed(&self, addr: usize) {
        self.first_word(addr).store(0, Relaxed);
    }

    /// Fills the bytes `[addr, addr + len)` of the heap with [`POISON`]
    /// (verify mode's freed slots).
    pub fn poison(&self, addr: usize, len: usize) {
        self.check_range(addr, len, "poisoning");
        // SAFETY: as in `zero`: inside the mapped reservation, and only
        // slots the sweep just freed (no object uses them).
        unsafe { std::ptr::write_bytes(addr as *mut u8, POISON as u8, len) }
    }

    fn check_range(&self, addr: usize, len: usize, what: &str) {
        assert!(
            addr >= self.base()
                && addr
                    .checked_add(len)
                    .is_some_and(|end| end <= self.base() + self.capacity()),
            "{what} of {len} bytes at {addr:#x}: outside the heap"
        );
    }

    /// Compaction: copies `copy` bytes of the slot at `from` to the free
    /// slot at `to` and zeroes the rest of the `to_len`-byte slot, then
    /// leaves `to` as the forwarding address in the first word of `from`.
    pub fn move_object(&self, from: usize, to: usize, copy: usize, to_len: usize) {
        self.check_range(from, copy.max(8), "moving");
        self.check_range(to, to_len, "moving");
        debug_assert!(copy <= to_len && from % 8 == 0);
        // SAFETY: both slots are inside the heap (checked) and distinct
        // (a compaction never moves an object into a slot it reads from);
        // the world is stopped and this worker alone moves this object.
        unsafe {
            std::ptr::copy_nonoverlapping(from as *const u8, to as *mut u8, copy);
            std::ptr::write_bytes((to + copy) as *mut u8, 0, to_len - copy);
            (from as *mut usize).write(to);
        }
    }

    /// The word at `addr` (verification reads live objects' words).
    pub fn read_word(&self, addr: usize) -> usize {
        self.check_range(addr, 8, "reading a word");
        // SAFETY: inside the heap (checked), which is mapped read/write;
        // the world is stopped.
        unsafe { (addr as *const usize).read() }
    }

    /// The forwarding address [`PageTable::move_object`] left at `from`.
    #[inline]
    pub fn forwarding(&self, from: usize) -> usize {
        self.check_range(from, 8, "reading a forwarding address");
        // SAFETY: inside the heap (checked); the slot of a moved object,
        // whose first word holds the new address until it is swept.
        unsafe { (from as *const usize).read() }
    }
}

impl Drop for PageTable {
    /// Frees the descriptors' lazily allocated bitmaps, reading only the
    /// descriptor memory that is resident (a descriptor never touched, or
    /// given back, has none).
    fn drop(&mut self) {
        const OS_PAGE: usize = 4096;
        let size = std::mem::size_of::<PageDesc>();
        for (k, _) in self
            .descs
            .resident_pages()
            .into_iter()
            .enumerate()
            .filter(|&(_, r)| r)
        {
            let (i0, i1) = (k * OS_PAGE / size, ((k + 1) * OS_PAGE - 1) / size);
            for i in i0..=i1.min(self.npages.saturating_sub(1)) {
                // SAFETY: the table is being dropped: nothing else can
                // reach its descriptors.
                unsafe { self.desc(i).free_lazy() };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_maps_interior_addresses_to_slot_starts() {
        let t = PageTable::new(8).unwrap();
        t.desc(1).init_small(3, 48);
        t.desc(4).init_large_head(2, 100_000);
        t.desc(5).init_large_tail(4);
        let p1 = t.page_addr(1);
        assert_eq!(
            t.locate(p1 + 48 * 7 + 13),
            Located::Small {
                page: 1,
                slot: 7,
                start: p1 + 48 * 7
            }
        );
        assert_eq!(t.locate(p1 + PAGE_SIZE - 1), Located::PageTail); // 65536 % 48 = 16 tail bytes
        assert_eq!(t.locate(t.page_addr(0)), Located::FreePage);
        assert_eq!(
            t.locate(t.page_addr(5) + 10),
            Located::Large {
                head: 4,
                start: t.page_addr(4)
            }
        );
        assert_eq!(t.locate(t.base() - 1), Located::Outside);
        assert_eq!(t.locate(t.base() + 8 * PAGE_SIZE), Located::Outside);
        assert_eq!(t.object_at(p1 + 48), None, "not allocated yet");
        t.desc(1).alloc.set(1);
        assert!(t.object_at(p1 + 48).is_some());
        assert_eq!(
            t.object_at(p1 + 49),
            None,
            "interior pointer is not an object start"
        );
    }

    #[test]
    #[should_panic(expected = "outside the heap")]
    fn zeroing_a_range_that_wraps_around_is_refused() {
        let t = PageTable::new(2).unwrap();
        t.zero(t.base() + PAGE_SIZE, usize::MAX - PAGE_SIZE);
    }

    #[test]
    #[should_panic(expected = "outside the heap")]
    fn decommitting_pages_past_the_end_is_refused() {
        let t = PageTable::new(2).unwrap();
        t.decommit(1, usize::MAX / PAGE_SIZE);
    }

    #[test]
    fn descriptors_of_free_pages_are_given_back_in_whole_os_pages() {
        let t = PageTable::new(64).unwrap();
        for i in 0..64 {
            t.desc(i).init_small(0, 32);
            t.desc(i).set_kind(PageKind::Free);
        }
        // Page 40's descriptor has a lazily allocated bitmap.
        t.desc(40).pin.set(3);
        let given = t.decommit_descriptors(0, 64);
        let size = std::mem::size_of::<PageDesc>();
        assert!(given >= 64 * size - 3 * 4096, "{given} of {}", 64 * size);
        // A descriptor inside a given-back OS page reads as zero: free.
        let cleared: Vec<usize> = (0..64).filter(|&i| t.desc(i).slot_size() == 0).collect();
        assert!(cleared.len() >= 50, "{cleared:?}");
        assert!(cleared.iter().all(|&i| t.desc(i).kind() == PageKind::Free));
        assert!(!cleared.contains(&40));
        assert!(t.desc(40).pin.get(3) && t.desc(40).slot_size() == 32);
    }
}
