//! Ephemerons: key/value pairs whose value is alive only while the key is
//! reachable by other paths (JavaScript's `WeakMap`, Guile's and Racket's
//! weak tables).
//!
//! An ephemeron is a small heap object allocated by
//! `Mutator::alloc_ephemeron`: the embedder's header words
//! (`Config::ephemeron_header` bytes, traced by `trace` like any object's
//! fields, 0 by default), then the key word, then the value word. The
//! marker never follows the key and value: with no header the object is
//! `NO_POINTERS`, and with one the embedder's `trace` must not visit them.
//!
//! What makes it an ephemeron is its `ephemeron` bit in the page
//! descriptor; nothing is kept per ephemeron outside the object. The heap
//! keeps the list of pages that received ephemerons (this file), so that a
//! collection finds the marked ones without walking the heap. After the
//! strong closure, a collection's ephemeron pass (`ephemeron_pass.rs`)
//! finds the fixed point: a value is traced only once its key is marked;
//! at the end, an ephemeron whose key stayed unmarked has its key and
//! value cleared (null), as has the value of an ephemeron with no key (a
//! null key counts as dead). A dead ephemeron's bit goes with its slot
//! when the page is swept.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use parking_lot::Mutex;

use crate::space::{Located, PageKind, PageTable};

/// Bytes of an ephemeron object without header: the key word, then the
/// value word.
pub const EPHEMERON_SIZE: usize = 16;

/// The heap's ephemerons.
#[derive(Default)]
pub struct Ephemerons {
    /// Pages that received an ephemeron since they were last initialised
    /// (duplicates and pages since reused are dropped by each pass).
    pages: Mutex<Vec<u32>>,
    /// Ephemerons allocated since the last collection plus those it found
    /// alive: zero means no pass is needed.
    count: AtomicUsize,
    /// Bytes of embedder header before the key word.
    header: usize,
}

/// The key word of the ephemeron at `e`, whose header is `h` bytes.
pub(super) fn key_word<'a>(e: usize, h: usize) -> &'a AtomicUsize {
    // SAFETY: callers pass a live (allocated) ephemeron: at least `h + 16`
    // bytes, aligned to 8; its key and value words are only accessed
    // atomically (through these two functions) by Mosaic.
    unsafe { &*((e + h) as *const AtomicUsize) }
}

/// The value word of the ephemeron at `e`, whose header is `h` bytes.
pub(super) fn value_word<'a>(e: usize, h: usize) -> &'a AtomicUsize {
    // SAFETY: as in `key_word`.
    unsafe { &*((e + h + 8) as *const AtomicUsize) }
}

impl Ephemerons {
    pub fn new(header: usize) -> Self {
        Ephemerons {
            header,
            ..Default::default()
        }
    }

    /// Bytes of embedder header before the key word.
    pub fn header(&self) -> usize {
        self.header
    }

    /// Records a new ephemeron object, just allocated by the caller (whose
    /// allocation page it is on, as for `HeapCore::set_small_flags`).
    pub fn add(&self, table: &PageTable, e: usize) {
        if let Located::Small { page, slot, .. } = table.locate(e) {
            let d = table.desc(page);
            d.ephemeron.set(slot);
            self.note_page(table, page);
            self.count.fetch_add(1, Relaxed);
        }
    }

    /// Says that `page` holds ephemerons (an allocation, or compaction
    /// moving one there).
    pub(super) fn note_page(&self, table: &PageTable, page: usize) {
        if !table.desc(page).note_ephemerons() {
            self.pages.lock().push(page as u32);
        }
    }

    /// Whether `e` is the start of an object with its ephemeron bit set
    /// (callers check that the object is alive).
    pub fn contains(&self, table: &PageTable, e: usize) -> bool {
        self.any() && self.is_ephemeron(table, e)
    }

    pub fn any(&self) -> bool {
        self.count.load(Relaxed) != 0
    }

    pub fn len(&self) -> usize {
        self.count.load(Relaxed)
    }

    /// Pause: the ephemerons whose mark bit is set (all of them, live, once
    /// marking is over).
    pub(super) fn marked(&self, table: &PageTable) -> Vec<usize> {
        let mut out = Vec::new();
        self.for_each_marked(table, |e| out.push(e));
        out
    }

    /// Pause: calls `f` on each ephemeron whose mark bit is set. Drops
    /// pages that no longer hold ephemerons (and clears their flag, so that
    /// a page is listed iff its flag is set).
    fn for_each_marked(&self, table: &PageTable, mut f: impl FnMut(usize)) {
        let mut pages = self.pages.lock();
        pages.sort_unstable();
        pages.dedup();
        pages.retain(|&p| {
            let p = p as usize;
            let d = table.desc(p);
            if d.kind() != PageKind::Small || !d.has_ephemerons() {
                return false;
            }
            let (base, size) = (table.page_addr(p), d.slot_size());
            let mut any = false;
            for w in 0..d.slot_count().div_ceil(64) {
                let e = d.ephemeron.word(w);
                any |= e & d.alloc.word(w) != 0;
                let mut m = e & d.mark.word(w);
                while m != 0 {
                    f(base + (w * 64 + m.trailing_zeros() as usize) * size);
                    m &= m - 1;
                }
            }
            if !any {
                // Listed again by the next ephemeron allocated here.
                d.forget_ephemerons();
            }
            any
        });
    }

    /// Whether an object starts at `o` with its ephemeron bit set.
    pub(super) fn is_ephemeron(&self, table: &PageTable, o: usize) -> bool {
        matches!(table.locate(o), Located::Small { page, slot, start }
            if start == o && table.desc(page).ephemeron.get(slot))
    }

    /// Pause, after all marking: the marked ephemerons are the live ones.
    pub(super) fn count_live(&self, table: &PageTable) {
        let mut live = 0;
        self.for_each_marked(table, |_| live += 1);
        self.count.store(live, Relaxed);
    }

    /// Compaction: a key or value holding a moved object's old address
    /// (`fwd` maps it) gets the new one. Ephemerons are found where they
    /// are now (their bits moved with them).
    pub fn update_moved(&self, table: &PageTable, fwd: &impl Fn(usize) -> Option<usize>) {
        if !self.any() {
            return;
        }
        let h = self.header;
        self.for_each_marked(table, |e| {
            for w in [key_word(e, h), value_word(e, h)] {
                if let Some(n) = fwd(w.load(Relaxed)) {
                    w.store(n, Relaxed);
                }
            }
        });
    }
}

/// Reads an ephemeron's key and value. Callers checked that `e` is a live
/// ephemeron; the collector clears them only while the world is stopped.
pub fn read(e: usize, h: usize) -> (usize, usize) {
    (key_word(e, h).load(Relaxed), value_word(e, h).load(Relaxed))
}

/// Writes an ephemeron's key and value (an attached mutator; callers
/// checked that `e` is a live ephemeron).
pub fn write(e: usize, h: usize, key: usize, value: usize) {
    key_word(e, h).store(key, Relaxed);
    value_word(e, h).store(value, Relaxed);
}
