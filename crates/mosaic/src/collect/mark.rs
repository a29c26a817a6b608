//! Marking: a transitive closure from the roots with an explicit stack.
//!
//! The mark stack is a `Vec` on the Rust heap, so the depth of the object
//! graph (a 10-million-node list) never touches the call stack. An edge is
//! marked only if it points into an *allocated* slot; references outside the
//! heap and stale pointers into free slots are ignored (verify mode reports
//! them). Interior pointers mark the object containing them.
//!
//! Objects popped from the stack go through a small FIFO before they are
//! traced, and are prefetched as they enter it ("buffered prefetch", Garner,
//! Blackburn and Frampton, ISMM 2007): by the time an object is traced its
//! cache line has arrived, instead of every object costing a cache miss.
//!
//! A conservative object larger than two chunks (`CHUNK_BYTES`) is scanned
//! a chunk at a time: its first chunk now, the rest queued as ranges that
//! are split again when popped (as bdwgc splits large objects). The mark
//! stack then holds one chunk's referents, not an array's, and the chunks
//! of one large array are shared among parallel workers. A root range the
//! embedder defers (`Tracer::defer_ambiguous_range`: memory that stays as
//! it is until marking ends) is queued the same way, whole.

use super::own_marks::{self, OwnMarks};
use crate::embedder::{Embedder, Tracer};
use crate::object::ObjRef;
use crate::space::{Located, LogBits, PageKind, PageTable, MAX_SLOTS, PAGE_MASK, PAGE_SHIFT};

/// The marker: a mark stack and counts. A *watching* marker (`WATCH`)
/// also lists every object it newly marks, so that ephemerons and
/// finalization can react to objects becoming reachable
/// (`ephemeron_pass.rs`, `closure.rs`); the plain marker, used for the
/// strong closure, pays nothing for it. An `OWN` marker runs beside
/// others and records what it marks in its own bits (`own_marks.rs`); the
/// serial marker's code has no trace of it.
pub struct Marker<'h, const WATCH: bool = false, const OWN: bool = false> {
    table: &'h PageTable,
    base: usize,
    capacity: usize,
    /// Conservative entries carry their size: the whole heap lies below
    /// 2^48, so an entry's high bits are free.
    sized: bool,
    stack: Vec<usize>,
    /// Other markers run at the same time (`par_mark.rs`): mark bits are
    /// set with an atomic read-modify-write (not read when `OWN`).
    atomic: bool,
    /// `OWN`: the bits this marker records what it marks in; shared mark
    /// bits are then set with plain stores.
    own: Option<&'h mut OwnMarks>,
    /// Generational mode: a `BARRIERED` object marked becomes old, so its
    /// unlogged bit is set (`space/log_bits.rs`).
    log: Option<&'h LogBits>,
    /// Objects marked so far.
    pub marked: usize,
    /// Bytes of the objects marked so far (slot sizes, large object sizes).
    pub marked_bytes: usize,
    /// Watching marker: objects marked since the list was last taken.
    pub newly: Vec<usize>,
    /// Objects an ambiguous word pointed into (pinned for this
    /// collection); may hold duplicates. Empty unless `record_pins`.
    pub pins: Vec<usize>,
    /// Whether ambiguous words are listed in `pins`: only when the
    /// collection may compact. A heap of conservative objects meets an
    /// ambiguous word per edge, so the list would otherwise hold one entry
    /// per edge traced.
    record_pins: bool,
}

impl<'h> Marker<'h> {
    pub fn new(table: &'h PageTable) -> Self {
        Marker::blank(table, None)
    }

    /// A marker that runs beside others: mark bits set atomically.
    pub fn parallel(table: &'h PageTable) -> Self {
        Marker {
            atomic: true,
            ..Marker::new(table)
        }
    }

    /// A marker that runs beside others, recording what it marks in `own`
    /// (see `own_marks.rs`), to be merged once every marker is done.
    pub fn parallel_with(table: &'h PageTable, own: &'h mut OwnMarks) -> Marker<'h, false, true> {
        Marker::blank(table, Some(own))
    }

    /// The same marker, now listing what it newly marks.
    pub fn watching(self) -> Marker<'h, true> {
        Marker {
            table: self.table,
            base: self.base,
            capacity: self.capacity,
            sized: self.sized,
            stack: self.stack,
            atomic: self.atomic,
            own: self.own,
            log: self.log,
            marked: self.marked,
            marked_bytes: self.marked_bytes,
            newly: self.newly,
            pins: self.pins,
            record_pins: self.record_pins,
        }
    }
}

impl<'h, const OWN: bool> Marker<'h, false, OWN> {
    fn blank(table: &'h PageTable, own: Option<&'h mut OwnMarks>) -> Self {
        Marker {
            table,
            base: table.base(),
            capacity: table.capacity(),
            sized: table.base().saturating_add(table.capacity()) <= 1 << ENTRY_SIZE_SHIFT,
            stack: Vec::with_capacity(4096),
            atomic: false,
            own,
            log: None,
            marked: 0,
            marked_bytes: 0,
            newly: Vec::new(),
            pins: Vec::new(),
            record_pins: true,
        }
    }

    /// The same marker, setting the unlogged bit of every barriered object
    /// it marks when `on` (generational mode).
    pub fn generational(self, on: bool) -> Self {
        Marker {
            log: on.then(|| self.table.log()),
            ..self
        }
    }

    /// The same marker, listing the objects ambiguous words point into
    /// only when `on` (the collection may compact).
    pub fn recording_pins(self, on: bool) -> Self {
        Marker {
            record_pins: on,
            ..self
        }
    }
}

impl<'h, const WATCH: bool, const OWN: bool> Marker<'h, WATCH, OWN> {
    /// Marks the object at (or containing) `addr` and queues it for
    /// tracing, as if a slot held `addr`.
    pub fn mark_addr(&mut self, addr: usize) {
        self.mark(addr);
    }

    /// Makes this marker's own bits (an `OWN` marker's) what
    /// [`own_marks::marked_by_this_thread`] reads on this thread until the
    /// guard is dropped.
    pub fn publish_own(&self) -> own_marks::Published {
        own_marks::Published::new(self.own.as_deref().expect("an OWN marker has its bits"))
    }

    /// Takes the objects pinned by ambiguous words so far.
    pub fn take_pins(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.pins)
    }

    /// Marks the object `addr` points into, if it is allocated and unmarked,
    /// and queues it for tracing unless it has no pointers. Returns the
    /// object's start if `addr` points into an allocated object.
    #[inline(always)]
    fn mark(&mut self, addr: usize) -> Option<usize> {
        let off = addr.wrapping_sub(self.base);
        if off >= self.capacity {
            return None;
        }
        let page = off >> PAGE_SHIFT;
        let d = self.table.desc(page);
        let (d, page, slot, start, size, small) = match d.kind() {
            PageKind::Small => {
                let slot = d.slot_of_offset(off & PAGE_MASK);
                if slot >= d.slot_count() {
                    return None;
                }
                // (A slot index is below `MAX_SLOTS`: the mask only tells
                // the compiler so, which drops the bitmaps' bounds checks.)
                let slot = slot & (MAX_SLOTS - 1);
                let size = d.slot_size();
                (
                    d,
                    page,
                    slot,
                    self.base + (page << PAGE_SHIFT) + slot * size,
                    size,
                    true,
                )
            }
            // A large object occupies whole pages: they are its live bytes.
            PageKind::LargeHead => (
                d,
                page,
                0,
                self.base + (page << PAGE_SHIFT),
                d.span() << PAGE_SHIFT,
                false,
            ),
            PageKind::LargeTail => {
                let head = d.span();
                let hd = self.table.desc(head);
                (
                    hd,
                    head,
                    0,
                    self.base + (head << PAGE_SHIFT),
                    hd.span() << PAGE_SHIFT,
                    false,
                )
            }
            PageKind::Free => return None,
        };
        if !d.alloc.get(slot) {
            return None;
        }
        let first = if OWN {
            // A plain store, which a racing marker may undo: the bit is
            // kept in `own` until the merge (own_marks.rs).
            let first = d.mark.test_and_set(slot);
            if first {
                let own = self.own.as_deref_mut();
                debug_assert!(own.is_some(), "an OWN marker has its bits");
                if let Some(own) = own {
                    own.set(page, slot);
                }
            }
            first
        } else if self.atomic {
            d.mark.test_and_set_atomic(slot)
        } else {
            d.mark.test_and_set(slot)
        };
        if !first {
            return Some(start);
        }
        self.marked += 1;
        self.marked_bytes += size;
        if WATCH {
            self.newly.push(start);
        }
        if !d.no_pointers.get(slot) {
            // Generational mode: a barriered object is old from now on
            // (a pointer-free one never needs logging).
            if let Some(log) = self.log {
                if d.barriered.get(slot) {
                    log.set_unlogged(start);
                }
            }
            // A conservative object is queued with its low bit set (objects
            // are 16-byte aligned) and its size in the high bits: draining
            // scans its words instead of calling `trace`, without looking
            // its page up again.
            let entry = if d.conservative.get(slot) {
                // (A large object's entry carries no size: its pages end
                // after its bytes, which are looked up when it is scanned.)
                if self.sized && small {
                    // (A slot's size in words fits, and its start is below
                    // 2^48 when entries are sized.)
                    range_entry(start, size >> 3)
                } else {
                    start | CONSERVATIVE_TAG
                }
            } else {
                start
            };
            self.stack.push(entry);
        }
        Some(start)
    }

    /// Traces until the mark stack is empty.
    pub fn drain<E: Embedder>(&mut self, embedder: &E) {
        self.drain_sharing(embedder, |_| false);
    }

    /// [`Marker::drain`], offering the mark stack to `share` every
    /// [`SHARE_EVERY`] objects traced (parallel marking gives part of it to
    /// idle workers; the serial marker passes a no-op, which compiles away).
    /// When `share` returns true the drain stops early: the objects it had
    /// popped but not traced go back on the stack, which then holds all
    /// the work left.
    #[inline(always)]
    pub fn drain_sharing<E: Embedder>(
        &mut self,
        embedder: &E,
        mut share: impl FnMut(&mut Vec<usize>) -> bool,
    ) {
        let mut fifo = [0usize; PREFETCH_DISTANCE];
        let (mut head, mut len) = (0usize, 0usize);
        let mut traced = 0u32;
        loop {
            while len < PREFETCH_DISTANCE {
                let Some(obj) = self.stack.pop() else { break };
                prefetch(if self.sized_entries() {
                    obj & ENTRY_ADDR
                } else {
                    obj
                });
                fifo[(head + len) % PREFETCH_DISTANCE] = obj;
                len += 1;
            }
            if len == 0 {
                return;
            }
            let obj = fifo[head];
            head = (head + 1) % PREFETCH_DISTANCE;
            len -= 1;
            let mut split = false;
            if obj & CONSERVATIVE_TAG != 0 {
                let words = if self.sized_entries() {
                    obj >> ENTRY_SIZE_SHIFT
                } else {
                    0
                };
                let range = if words == 0 {
                    let start = obj & !CONSERVATIVE_TAG;
                    // A large object's size need not be a multiple of a
                    // word: its last word is read whole (its pages go on).
                    conservative_end(self.table, start).map(|end| (start, end.next_multiple_of(8)))
                } else {
                    let start = obj & ENTRY_ADDR & !CONSERVATIVE_TAG;
                    Some((start, start + (words << 3)))
                };
                if let Some((start, mut end)) = range {
                    if end - start > 2 * CHUNK_BYTES && self.sized_entries() {
                        end = self.push_rest(start, end);
                        split = true;
                    }
                    // A chunk or more: enough work since the last chance
                    // to share to offer the stack again.
                    split |= end - start >= CHUNK_BYTES;
                    // SAFETY: the entry was made by `mark` (or by
                    // `push_rest`) from an allocated, now marked, object
                    // that `start..end` lies in, or by
                    // `defer_ambiguous_range` from a root range that stays
                    // readable until marking ends: mapped, readable,
                    // aligned.
                    unsafe {
                        self.visit_ambiguous_range(start as *const usize, end as *const usize)
                    }
                }
            } else {
                embedder.trace(ObjRef::from_heap_addr(obj), self);
            }
            traced = traced.wrapping_add(1);
            // A split object offers its chunks to idle workers at once, and
            // so does every chunk scanned (a stack of range entries holds
            // a chunk of work per entry, not an object's).
            if (split || traced % SHARE_EVERY == 0) && share(&mut self.stack) {
                for k in 0..len {
                    self.stack.push(fifo[(head + k) % PREFETCH_DISTANCE]);
                }
                return;
            }
        }
    }

    /// Whether conservative entries carry their size.
    #[inline(always)]
    fn sized_entries(&self) -> bool {
        self.sized
    }

    /// Lends the mark stack (objects marked, not yet traced) to `f`.
    pub fn with_stack(&mut self, f: impl FnOnce(&mut Vec<usize>)) {
        f(&mut self.stack);
    }

    /// Takes the mark stack (the work left after a drain that stopped
    /// early).
    pub fn take_stack(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.stack)
    }

    /// Queues `addr` (an object already marked) for tracing.
    pub fn push(&mut self, addr: usize) {
        self.stack.push(addr);
    }

    /// Splits a conservative range longer than two chunks: queues
    /// `start + CHUNK_BYTES..end` as `SPLIT_PIECES` sized entries or fewer
    /// (pieces of at least a chunk and at most `MAX_ENTRY_WORDS` words, so
    /// more than `SPLIT_PIECES` for a range over 32 MiB; each split again
    /// when it is popped) and returns the end of the first
    /// chunk, to be scanned now. So a large array is marked a chunk at a
    /// time, the mark stack holds about one chunk's referents, and the
    /// pieces are there for idle workers to take. Only with sized entries.
    #[cold]
    fn push_rest(&mut self, start: usize, end: usize) -> usize {
        let first = start + CHUNK_BYTES;
        self.push_range(first, end);
        first
    }

    /// Queues `start..end` (8-aligned, below 2^48, not empty) as
    /// `SPLIT_PIECES` sized entries or fewer, lowest first on top.
    fn push_range(&mut self, start: usize, end: usize) {
        let piece = (end - start)
            .div_ceil(SPLIT_PIECES)
            .next_multiple_of(8)
            .clamp(CHUNK_BYTES, MAX_ENTRY_WORDS << 3);
        let mut to = end;
        while to > start {
            let from = if to - start > piece {
                to - piece
            } else {
                start
            };
            self.stack.push(range_entry(from, (to - from) >> 3));
            to = from;
        }
    }
}

/// The low bit of a mark stack entry: the object is scanned conservatively.
const CONSERVATIVE_TAG: usize = 1;

/// A conservative entry's size in words sits above this bit (0: look the
/// object up: a large object). Only when the heap lies below 2^48
/// (`Marker::sized_entries`); otherwise every entry is looked up.
const ENTRY_SIZE_SHIFT: u32 = 48;

/// The address bits of a mark stack entry.
const ENTRY_ADDR: usize = (1 << ENTRY_SIZE_SHIFT) - 1;

/// A large conservative object is scanned this many bytes at a time (see
/// `Marker::push_rest`); one at most twice as long is scanned whole.
const CHUNK_BYTES: usize = 4096;

/// Into how many pieces (at most) the rest of a split range is queued.
const SPLIT_PIECES: usize = 64;

/// The most words a sized entry can say.
const MAX_ENTRY_WORDS: usize = (1 << (usize::BITS - ENTRY_SIZE_SHIFT)) - 1;

/// The sized entry of the `words` words at `start` (8-aligned, below
/// 2^48; `words` from 1 to `MAX_ENTRY_WORDS`), scanned conservatively.
#[inline(always)]
fn range_entry(start: usize, words: usize) -> usize {
    debug_assert!(start & 7 == 0 && start & !ENTRY_ADDR == 0);
    debug_assert!((1..=MAX_ENTRY_WORDS).contains(&words));
    start | words << ENTRY_SIZE_SHIFT | CONSERVATIVE_TAG
}

/// Whether the mark stack entry `e` is a conservative range of at least a
/// chunk (a piece of a split large object): work worth sharing alone.
#[inline]
pub fn is_chunk_entry(e: usize) -> bool {
    e & CONSERVATIVE_TAG != 0 && (e >> ENTRY_SIZE_SHIFT) << 3 >= CHUNK_BYTES
}

/// The end of `obj`'s slot (or large object) if it is an object allocated
/// `CONSERVATIVE` and not `NO_POINTERS`.
pub fn conservative_end(table: &PageTable, obj: usize) -> Option<usize> {
    match table.locate(obj) {
        Located::Small { page, slot, .. } => {
            let d = table.desc(page);
            (d.conservative.get(slot) && !d.no_pointers.get(slot)).then(|| obj + d.slot_size())
        }
        Located::Large { head, .. } => {
            let d = table.desc(head);
            (d.conservative.get(0) && !d.no_pointers.get(0)).then(|| obj + d.large_size())
        }
        _ => None,
    }
}

/// Visits the words of `[start, end)`, the slot of an allocated
/// `CONSERVATIVE` object (dead or alive, not yet swept), as ambiguous.
pub fn trace_words<T: Tracer>(start: usize, end: usize, t: &mut T) {
    // SAFETY: an object's slot in the heap: mapped, readable, aligned.
    unsafe { t.visit_ambiguous_range(start as *const usize, end as *const usize) }
}

/// Calls `embedder.trace` on `obj`, or, for an object allocated
/// `CONSERVATIVE`, visits each of its words as ambiguous: what every
/// tracing of an object outside the marker's own loop (verify mode,
/// ordered finalization, compaction's update) goes through.
pub fn trace_object<E: Embedder, T: Tracer>(
    table: &PageTable,
    embedder: &E,
    obj: usize,
    t: &mut T,
) {
    match conservative_end(table, obj) {
        // SAFETY: an allocated object of the heap: mapped, readable, aligned.
        Some(end) => unsafe { t.visit_ambiguous_range(obj as *const usize, end as *const usize) },
        None => embedder.trace(ObjRef::from_addr(obj), t),
    }
}

/// Objects traced between two offers of the mark stack to other workers.
pub const SHARE_EVERY: u32 = 64;

/// Objects between the mark stack and tracing (a power of two).
const PREFETCH_DISTANCE: usize = 16;

#[inline(always)]
fn prefetch(addr: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, even on a bad address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(addr as *const i8, std::arch::x86_64::_MM_HINT_T0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

impl<const WATCH: bool, const OWN: bool> Tracer for Marker<'_, WATCH, OWN> {
    #[inline(always)]
    fn visit(&mut self, slot: &mut *mut u8) {
        self.mark(*slot as usize);
    }

    /// Inlined, so that the trait's `visit_ambiguous_range` loop (every
    /// word of a conservative object: every drop-in object's) marks each
    /// word without a call.
    #[inline(always)]
    fn visit_ambiguous(&mut self, word: usize) {
        if let Some(start) = self.mark(word) {
            if self.record_pins {
                self.pins.push(start);
            }
        }
    }

    /// A range longer than two chunks goes on the mark stack in pieces
    /// (sized entries, as a split large object's), which draining scans
    /// and parallel marking shares out; a shorter one is scanned now.
    unsafe fn defer_ambiguous_range(&mut self, start: *const usize, end: *const usize) {
        let (s, e) = (start as usize, end as usize);
        if self.sized_entries()
            && e <= ENTRY_ADDR
            && s & 7 == 0
            && e & 7 == 0
            && e > s
            && e - s > 2 * CHUNK_BYTES
        {
            self.push_range(s, e);
        } else {
            // SAFETY: the caller's promise covers the immediate scan too.
            unsafe { self.visit_ambiguous_range(start, end) }
        }
    }

    /// The trait's loop, inlined where the marker drains its stack: a
    /// conservative object's words are scanned with no call per object.
    #[inline(always)]
    unsafe fn visit_ambiguous_range(&mut self, start: *const usize, end: *const usize) {
        let mut p = start;
        while p < end {
            // SAFETY: inside the readable, aligned range the caller vouches
            // for (read_word: a load the sanitizers do not instrument).
            self.visit_ambiguous(unsafe { crate::os::stack::read_word(p) });
            // SAFETY: stays within (or one past) the range.
            p = unsafe { p.add(1) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_entry_carries_its_start_and_words() {
        let start = 0x7f12_3456_7890;
        for words in [1, 6, MAX_ENTRY_WORDS] {
            let e = range_entry(start, words);
            assert_eq!(e & CONSERVATIVE_TAG, CONSERVATIVE_TAG);
            assert_eq!(e & ENTRY_ADDR & !CONSERVATIVE_TAG, start);
            assert_eq!(e >> ENTRY_SIZE_SHIFT, words);
        }
        // The largest small slot fits in an entry.
        const { assert!(crate::pool::MAX_CLASS_SIZE >> 3 <= MAX_ENTRY_WORDS) };
    }
}
