//! Finalizers: an object registered with a finalizer is kept alive, with
//! everything it references, until its finalizer has run once; a later
//! collection reclaims it (unless the finalizer made it reachable again).
//!
//! Finalizers never run in the pause: a collection only *chooses* the ready
//! ones and moves them to the ready queue, whose objects are roots until
//! their finalizer runs (`Mutator::run_finalizers`, or the finalizer thread).
//!
//! Two orders, as in the Boehm collector:
//! - [`FinalizerOrder::Unordered`]: chosen as soon as the object is
//!   unreachable from the roots, whatever refers to it. Cycles are
//!   finalized (in no particular order).
//! - [`FinalizerOrder::Ordered`]: if an unreachable finalizable object `A`
//!   reaches another one `B`, `A` is finalized first and `B` only in a
//!   later collection, after `A` is gone. Direct self-references are
//!   ignored, but objects in a longer cycle of ordered finalizable objects
//!   are never finalized (they leak, as with `GC_register_finalizer`).
//!
//! The choice (in the pause, after the strong and ephemeron closure):
//! unordered objects still unmarked are ready; then each unmarked ordered
//! object's *children* are marked (not the object itself); ordered objects
//! that stayed unmarked are ready; finally every ready object is marked, and
//! what it reaches with it.
//!
//! The table is built to cost little per registration (16 bytes, no
//! allocation, no hashing of the object):
//! - The object's `finalizer` bit (its page descriptor) says "registered";
//!   registering sets it atomically, which is also how a second
//!   registration is refused, and unregistering clears it.
//! - Registrations are appended to one log of 16-byte entries: the object's
//!   offset in the heap (in words), its finalizer's *kind* and order packed in one
//!   word, and a data word. A kind (the code to run and its constant
//!   arguments) is interned: a program has few of them.
//!
//! Shared finalizers cost no entry at all: the heap has one shared kind
//! (`Finalizers::set_shared`, the embedder's function for objects that
//! find their finalizer by themselves: a type word, a closure inside the
//! object), and an object registered with it carries its `finalizer` bit
//! plus a `shared_finalizer` bit (and `unordered_finalizer` for the
//! unordered order) on its page. A collection finds them by walking the
//! bitmaps of the pages that ever held one (`shared_pages`: a page is
//! listed when its `shared_finalizer` bitmap is first allocated, and
//! bitmaps are never freed, so each page is listed once).
//!
//! An object's current registration is found ([`Finalizers::registration`])
//! without an index: the log's first `sorted` entries are in object order
//! with one entry per object (as every collection that removed stale
//! entries left them), the rest in the order they were registered. The
//! search reads that unsorted tail backward, then bisects the sorted part;
//! a tail longer than [`SORT_AFTER`] entries is sorted into it first.
//!
//! Invariant: `unordered_finalizer ⊆ shared_finalizer ⊆ finalizer` on
//! every slot. A log entry is current iff its object's bit is set, its
//! `shared_finalizer` bit is clear and it is the last entry for that
//! object in the log. Unregistering leaves a stale
//! entry behind (counted); every pass over the log that needs exactness
//! first removes the stale ones (`Table::compact`). Collections pass over
//! the log once: their work is proportional to the registrations, and the
//! log shrinks when they go away.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering::Relaxed};

use parking_lot::Mutex;
use rustc_hash::FxHashMap;

use crate::embedder::Tracer;
use crate::space::{Located, MarkState, PageDesc, PageKind, PageTable};

/// The order in which dead finalizable objects are finalized.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum FinalizerOrder {
    /// An object reachable from another unreachable *ordered* finalizable
    /// object is finalized after it (a later collection). Cycles of ordered
    /// objects are never finalized. (An object reached only from unordered
    /// ones is finalized with them.)
    Ordered = 0,
    /// Every unreachable finalizable object is finalized at once, cycles
    /// included, in no particular order.
    Unordered = 1,
}

/// What runs a finalizer: `call(mutator, object, a, b, data)`, where `a`
/// and `b` belong to the kind and `data` to the registration. `drop`
/// releases a `data` whose finalizer will never run (`None`: nothing to
/// release). The API layer makes these; the collector only stores them.
#[derive(Clone, Copy)]
pub struct FinalizerKind {
    pub call: unsafe fn(*mut (), usize, usize, usize, usize),
    pub drop: Option<unsafe fn(usize)>,
    pub a: usize,
    pub b: usize,
}

impl FinalizerKind {
    fn key(&self) -> [usize; 4] {
        [
            self.call as usize,
            self.drop.map_or(0, |d| d as usize),
            self.a,
            self.b,
        ]
    }
}

/// The data of a registration dropped unrun, with its release function.
type Grave = (unsafe fn(usize), usize);

/// A finalizer chosen by a collection, waiting to run: an [`Entry`]
/// (16 bytes: a collection may queue millions) whose order bit is unused.
type Queued = Entry;

/// A finalizer popped from the queue, to run now.
pub struct Ready {
    pub obj: usize,
    pub kind: FinalizerKind,
    pub data: usize,
}

/// Why a registration was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum RegisterError {
    /// The object has a finalizer already.
    AlreadyRegistered,
    /// More distinct kinds than an entry can name.
    TooManyKinds,
    /// A shared registration before [`Finalizers::set_shared`].
    NoSharedKind,
}

/// The longest unsorted tail of the log [`Finalizers::registration`]
/// searches before sorting it: at most this many entries are read
/// backward, and a sort is paid for by at least this many registrations.
const SORT_AFTER: usize = 4096;

/// `Finalizers::shared` before a shared kind is set.
const NO_SHARED: u32 = u32::MAX;

/// Granules of 8 bytes (every object starts on one: slot sizes are
/// multiples of 8) in an entry's offset: 128 TiB of heap.
const OFFSET_BITS: u32 = 44;
const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;
/// Kinds an entry can name (19 bits; the top bit is the order).
const MAX_KINDS: usize = 1 << (63 - OFFSET_BITS);
const ORDERED: u64 = 1 << 63;

/// One registration: the object (granule offset), kind and order in one
/// word, then the data word.
#[derive(Clone, Copy)]
struct Entry {
    packed: u64,
    data: usize,
}

impl Entry {
    fn obj(&self, base: usize) -> usize {
        base + (((self.packed & OFFSET_MASK) as usize) << 3)
    }
    fn kind(&self) -> usize {
        ((self.packed & !ORDERED) >> OFFSET_BITS) as usize
    }
    fn ordered(&self) -> bool {
        self.packed & ORDERED != 0
    }
    fn with_obj(self, base: usize, obj: usize) -> Entry {
        let off = ((obj - base) >> 3) as u64;
        Entry {
            packed: (self.packed & !OFFSET_MASK) | off,
            ..self
        }
    }
}

#[derive(Default)]
struct Table {
    log: Vec<Entry>,
    /// `log[..sorted]` is in object order, one entry per object; the
    /// entries after it were pushed since (see the module docs).
    sorted: usize,
    /// Entries left behind by unregistering (see the module docs).
    stale: usize,
    kinds: Vec<FinalizerKind>,
    kind_ids: FxHashMap<[usize; 4], u32>,
}

/// The heap's finalizers.
pub struct Finalizers {
    table: Mutex<Table>,
    /// The shared kind's id in `Table::kinds` (`NO_SHARED`: none yet).
    shared: AtomicU32,
    /// Pages whose `shared_finalizer` bitmap was allocated (each once).
    shared_pages: Mutex<Vec<u32>>,
    /// Chosen objects whose finalizer has not run yet (roots until then).
    ready: Mutex<VecDeque<Queued>>,
    /// Data of dropped registrations whose release runs embedder code:
    /// released on a mutator's next call here, never inside a pause.
    graveyard: Mutex<Vec<Grave>>,
    graves: AtomicBool,
    count: AtomicUsize,
    /// Set when a collection queued finalizers; taken by the notifier.
    queued: AtomicBool,
}

/// The `finalizer` bit of the object starting at `obj`; none if `obj` is
/// no slot's or large object's start (a stale entry's address may now be
/// inside another object).
fn bit(table: &PageTable, obj: usize) -> Option<(&PageDesc, usize)> {
    match table.locate(obj) {
        Located::Small { page, slot, start } if start == obj => Some((table.desc(page), slot)),
        Located::Large { head, start } if start == obj => Some((table.desc(head), 0)),
        _ => None,
    }
}

/// Whether the object at `obj` has a finalizer registered in the log
/// (not a shared one).
fn registered_bit(table: &PageTable, obj: usize) -> bool {
    bit(table, obj).is_some_and(|(d, s)| d.finalizer.get(s) && !d.shared_finalizer.get(s))
}

impl Default for Finalizers {
    fn default() -> Self {
        Finalizers {
            table: Mutex::default(),
            shared: AtomicU32::new(NO_SHARED),
            shared_pages: Mutex::default(),
            ready: Mutex::default(),
            graveyard: Mutex::default(),
            graves: AtomicBool::new(false),
            count: AtomicUsize::new(0),
            queued: AtomicBool::new(false),
        }
    }
}

impl Table {
    /// Removes the stale entries: those whose object's bit is clear, and
    /// all but the last entry of an object. Their data goes to `dead`.
    fn compact(&mut self, table: &PageTable, dead: &mut Vec<Grave>) {
        if self.stale == 0 {
            return;
        }
        self.stale = 0;
        let base = table.base();
        // Sorted by object, stable: an object's last entry comes last.
        self.log.sort_by_key(|e| e.packed & OFFSET_MASK);
        let kinds = &self.kinds;
        let mut keep = Vec::with_capacity(self.log.len());
        let n = self.log.len();
        for i in 0..n {
            let e = self.log[i];
            let last =
                i + 1 == n || (self.log[i + 1].packed & OFFSET_MASK) != (e.packed & OFFSET_MASK);
            if last && registered_bit(table, e.obj(base)) {
                keep.push(e);
            } else if let Some(d) = kinds[e.kind()].drop {
                dead.push((d, e.data));
            }
        }
        self.log = keep;
        self.sorted = self.log.len();
    }

    /// Sorts the log into object order (no stale entry may be left:
    /// `stale` is 0, so every object has one entry).
    fn sort(&mut self) {
        debug_assert_eq!(self.stale, 0);
        self.log.sort_unstable_by_key(|e| e.packed & OFFSET_MASK);
        self.sorted = self.log.len();
    }

    /// The current entry of the object at granule offset `key`, whose
    /// `finalizer` bit is set and `shared_finalizer` bit clear: the last
    /// entry for it in the unsorted tail (every later registration of an
    /// object follows its unregistration, so the last is current), else
    /// its one entry in the sorted part.
    fn find(&self, key: u64) -> Option<Entry> {
        let off = |e: &Entry| e.packed & OFFSET_MASK;
        if let Some(e) = self.log[self.sorted..].iter().rev().find(|e| off(e) == key) {
            return Some(*e);
        }
        let head = &self.log[..self.sorted];
        head.binary_search_by_key(&key, off).ok().map(|i| head[i])
    }

    /// The id of `kind`, interned now if new (`None`: too many kinds).
    fn intern(&mut self, kind: FinalizerKind) -> Option<u32> {
        if let Some(&id) = self.kind_ids.get(&kind.key()) {
            return Some(id);
        }
        if self.kinds.len() >= MAX_KINDS {
            return None;
        }
        let id = self.kinds.len() as u32;
        self.kinds.push(kind);
        self.kind_ids.insert(kind.key(), id);
        Some(id)
    }

    fn shrink(&mut self) {
        if self.log.capacity() > 64 && self.log.len() < self.log.capacity() / 4 {
            self.log.shrink_to(self.log.len() * 2);
        }
    }
}

impl Finalizers {
    /// Registers a finalizer for the object at `obj` (a checked object).
    pub fn register(
        &self,
        table: &PageTable,
        obj: usize,
        order: FinalizerOrder,
        kind: FinalizerKind,
        data: usize,
    ) -> Result<(), RegisterError> {
        self.release_graves();
        let (d, s) = bit(table, obj).ok_or(RegisterError::AlreadyRegistered)?;
        // The bit is set and the entry pushed under the lock: a `compact`
        // on another thread must never see the bit set before the entry
        // (it would keep an older, stale entry of the object as current).
        let mut t = self.table.lock();
        if !d.finalizer.test_and_set_atomic(s) {
            return Err(RegisterError::AlreadyRegistered);
        }
        let Some(id) = t.intern(kind) else {
            d.finalizer.test_and_clear_atomic(s);
            return Err(RegisterError::TooManyKinds);
        };
        let order = if order == FinalizerOrder::Ordered {
            ORDERED
        } else {
            0
        };
        let packed = (((obj - table.base()) >> 3) as u64) | ((id as u64) << OFFSET_BITS) | order;
        t.log.push(Entry { packed, data });
        self.count.fetch_add(1, Relaxed);
        Ok(())
    }

    /// Sets the shared kind: what runs for objects registered with
    /// [`Finalizers::register_shared`] from now on (queued ones keep the
    /// kind they were queued with).
    pub fn set_shared(&self, kind: FinalizerKind) -> Result<(), RegisterError> {
        let mut t = self.table.lock();
        let id = t.intern(kind).ok_or(RegisterError::TooManyKinds)?;
        self.shared.store(id, Relaxed);
        Ok(())
    }

    /// Registers the shared finalizer for the object at `obj` (a checked
    /// object): two bits, no entry.
    pub fn register_shared(
        &self,
        table: &PageTable,
        obj: usize,
        order: FinalizerOrder,
    ) -> Result<(), RegisterError> {
        self.release_graves();
        if self.shared.load(Relaxed) == NO_SHARED {
            return Err(RegisterError::NoSharedKind);
        }
        let (d, s) = bit(table, obj).ok_or(RegisterError::AlreadyRegistered)?;
        // Under the lock, as `register`: a `compact` must see the shared
        // bit with the finalizer bit (or an older entry would look current).
        let _t = self.table.lock();
        if !d.finalizer.test_and_set_atomic(s) {
            return Err(RegisterError::AlreadyRegistered);
        }
        if !d.shared_finalizer.is_allocated() {
            let page = table.page_index(obj).expect("a heap object");
            self.note_shared_page(page);
        }
        d.shared_finalizer.test_and_set_atomic(s);
        if order == FinalizerOrder::Unordered {
            d.unordered_finalizer.test_and_set_atomic(s);
        }
        self.count.fetch_add(1, Relaxed);
        Ok(())
    }

    /// Lists `page` among those whose `shared_finalizer` bitmap exists
    /// (the caller saw it absent, under the table's lock or in a pause).
    pub fn note_shared_page(&self, page: usize) {
        self.shared_pages.lock().push(page as u32);
    }

    /// The kind and data of the registration of the object at `obj` (not a
    /// shared one, not one already queued), if it has one. Searches at
    /// most [`SORT_AFTER`] recent entries and bisects the rest; a longer
    /// unsorted tail is sorted first (after removing stale entries, whose
    /// data a mutator may release: this runs on one, never in a pause).
    pub fn registration(&self, table: &PageTable, obj: usize) -> Option<(FinalizerKind, usize)> {
        self.release_graves();
        let mut t = self.table.lock();
        if !registered_bit(table, obj) {
            return None;
        }
        if t.log.len() - t.sorted > SORT_AFTER {
            if t.stale > 0 {
                let mut dead = Vec::new();
                t.compact(table, &mut dead);
                t.shrink();
                self.bury(dead);
            } else {
                t.sort();
            }
        }
        let key = ((obj - table.base()) >> 3) as u64;
        let e = t.find(key)?;
        Some((t.kinds[e.kind()], e.data))
    }

    /// Visits the data word of every registration in the log whose kind
    /// satisfies `which` (stale ones too, until a collection removes them)
    /// and of every queued one.
    pub fn visit_data(&self, which: impl Fn(&FinalizerKind) -> bool, mut f: impl FnMut(usize)) {
        let wanted: Vec<bool> = {
            let t = self.table.lock();
            let wanted: Vec<bool> = t.kinds.iter().map(&which).collect();
            for e in &t.log {
                if wanted[e.kind()] {
                    f(e.data);
                }
            }
            wanted
        };
        // (One lock at a time: no other path holds both.)
        for q in self.ready.lock().iter() {
            if wanted.get(q.kind()).copied().unwrap_or(false) {
                f(q.data);
            }
        }
    }

    /// Removes `obj`'s registration (not a queued one); whether it had one.
    pub fn unregister(&self, table: &PageTable, obj: usize) -> bool {
        self.release_graves();
        let mut t = self.table.lock();
        let (had, logged) = bit(table, obj).map_or((false, false), |(d, s)| {
            let had = d.finalizer.test_and_clear_atomic(s);
            let shared = had && d.shared_finalizer.test_and_clear_atomic(s);
            if shared {
                d.unordered_finalizer.test_and_clear_atomic(s);
            }
            (had, had && !shared)
        });
        if had {
            self.count.fetch_sub(1, Relaxed);
        }
        if logged {
            // (A shared registration has no entry to leave behind.)
            t.stale += 1;
            // A log mostly made of stale entries is cleaned now, on the
            // mutator (amortized: at least half the log goes).
            if t.stale > 64 && t.stale * 2 > t.log.len() {
                let mut dead = Vec::new();
                t.compact(table, &mut dead);
                t.shrink();
                drop(t);
                release(dead);
            }
        }
        had
    }

    /// Whether any finalizer is registered.
    pub fn any(&self) -> bool {
        self.count.load(Relaxed) != 0
    }

    pub fn registered(&self) -> usize {
        self.count.load(Relaxed)
    }

    /// Finalizers chosen and waiting to run.
    pub fn pending(&self) -> usize {
        self.ready.lock().len()
    }

    /// The next ready finalizer, oldest first.
    pub fn pop_ready(&self, table: &PageTable) -> Option<Ready> {
        self.release_graves();
        let q = self.ready.lock().pop_front()?;
        let kind = self.table.lock().kinds[q.kind()];
        Some(Ready {
            obj: q.obj(table.base()),
            kind,
            data: q.data,
        })
    }

    /// Whether a collection queued finalizers since the last call.
    pub fn take_queued(&self) -> bool {
        self.queued.swap(false, Relaxed)
    }

    /// Releases the data of dropped registrations (a mutator, outside any
    /// pause: the release may run embedder code).
    fn release_graves(&self) {
        if self.graves.load(Relaxed) {
            self.graves.store(false, Relaxed);
            release(std::mem::take(&mut *self.graveyard.lock()));
        }
    }

    /// Pause: keeps the data of dropped registrations for later release.
    fn bury(&self, dead: Vec<Grave>) {
        if !dead.is_empty() {
            self.graveyard.lock().extend(dead);
            self.graves.store(true, Relaxed);
        }
    }

    /// Compaction: registrations follow their moved objects (`fwd` maps
    /// old addresses to new ones; the `finalizer` bits moved with the
    /// objects). The ready queue is a root, updated with the others
    /// ([`Finalizers::scan_ready`]).
    pub fn update_moved(&self, table: &PageTable, fwd: &impl Fn(usize) -> Option<usize>) {
        let mut t = self.table.lock();
        if t.log.is_empty() {
            return;
        }
        // Stale entries first: one could name a free slot an object moves to.
        let mut dead = Vec::new();
        t.compact(table, &mut dead);
        self.bury(dead);
        let base = table.base();
        for e in &mut t.log {
            if let Some(n) = fwd(e.obj(base)) {
                *e = e.with_obj(base, n);
            }
        }
        // The offsets changed: back into object order (one entry per
        // object: `compact` left no stale one).
        t.sort();
    }

    /// Pause: visits the objects of the ready queue (they are roots).
    pub fn scan_ready<T: Tracer>(&self, table: &PageTable, tracer: &mut T) {
        let base = table.base();
        for r in self.ready.lock().iter_mut() {
            let mut p = r.obj(base) as *mut u8;
            tracer.visit(&mut p);
            *r = r.with_obj(base, p as usize);
        }
    }

    /// Pause, after the strong closure: the objects to finalize now. The
    /// caller marks them. `mark_children(obj)` must trace `obj`'s fields
    /// (skipping references to `obj` itself) and drain.
    pub fn choose(&self, table: &PageTable, mut mark_children: impl FnMut(usize)) -> Vec<usize> {
        let unmarked = |o: usize| matches!(table.mark_state(o), MarkState::Unmarked(_));
        let base = table.base();
        let (mut ready, ordered) = {
            let mut t = self.table.lock();
            let mut dead = Vec::new();
            t.compact(table, &mut dead);
            self.bury(dead);
            let (mut ready, mut ordered) = (Vec::new(), Vec::new());
            for e in &t.log {
                let o = e.obj(base);
                if unmarked(o) {
                    if e.ordered() {
                        ordered.push(o);
                    } else {
                        ready.push(o);
                    }
                }
            }
            drop(t);
            self.shared_candidates(table, &mut ready, &mut ordered);
            (ready, ordered)
        };
        // No lock held: `mark_children` runs the embedder's `trace`.
        for &o in &ordered {
            mark_children(o);
        }
        ready.extend(ordered.into_iter().filter(|&o| unmarked(o)));
        ready
    }

    /// Pause: the unmarked objects with a shared finalizer, by order.
    fn shared_candidates(
        &self,
        table: &PageTable,
        unordered: &mut Vec<usize>,
        ordered: &mut Vec<usize>,
    ) {
        for &page in self.shared_pages.lock().iter() {
            let page = page as usize;
            let d = table.desc(page);
            let addr = table.page_addr(page);
            match d.kind() {
                PageKind::Small => {
                    let (size, n) = (d.slot_size(), d.slot_count());
                    for w in 0..n.div_ceil(64) {
                        let mut c = d.shared_finalizer.word(w) & !d.mark.word(w);
                        while c != 0 {
                            let slot = w * 64 + c.trailing_zeros() as usize;
                            c &= c - 1;
                            let o = addr + slot * size;
                            if d.unordered_finalizer.get(slot) {
                                unordered.push(o);
                            } else {
                                ordered.push(o);
                            }
                        }
                    }
                }
                PageKind::LargeHead => {
                    if d.shared_finalizer.get(0) && !d.mark.get(0) {
                        if d.unordered_finalizer.get(0) {
                            unordered.push(addr);
                        } else {
                            ordered.push(addr);
                        }
                    }
                }
                PageKind::Free | PageKind::LargeTail => {}
            }
        }
    }

    /// Pause: moves the chosen objects' registrations to the ready queue
    /// (in address order, so runs are reproducible). A shared
    /// registration's data becomes `number`, the collection's.
    pub fn enqueue(&self, table: &PageTable, mut chosen: Vec<usize>, number: u64) {
        if chosen.is_empty() {
            return;
        }
        if cfg!(debug_assertions) {
            // Only for the check below; the queue is sorted on its own.
            chosen.sort_unstable();
        }
        let base = table.base();
        let shared = (self.shared.load(Relaxed) as u64) << OFFSET_BITS;
        let mut moved = Vec::with_capacity(chosen.len());
        for &o in &chosen {
            if let Some((d, s)) = bit(table, o) {
                d.finalizer.clear(s);
                if d.shared_finalizer.get(s) {
                    d.shared_finalizer.clear(s);
                    d.unordered_finalizer.clear(s);
                    moved.push(Queued {
                        packed: shared | ((o - base) >> 3) as u64,
                        data: number as usize,
                    });
                }
            }
        }
        if !cfg!(debug_assertions) {
            drop(chosen);
            chosen = Vec::new();
        }
        let mut t = self.table.lock();
        // No stale entry here (`choose` removed them): a clear bit means
        // chosen. (Order kept; the sorted part shrinks by what leaves it.)
        let (sorted, mut index, mut left) = (t.sorted, 0, 0);
        t.log.retain(|e| {
            let o = e.obj(base);
            index += 1;
            if registered_bit(table, o) {
                return true;
            }
            if index <= sorted {
                left += 1;
            }
            debug_assert!(chosen.binary_search(&o).is_ok());
            moved.push(Queued {
                packed: e.packed & !ORDERED,
                data: e.data,
            });
            false
        });
        t.sorted = sorted - left;
        t.shrink();
        drop(t);
        drop(chosen);
        moved.sort_unstable_by_key(|r| r.packed & OFFSET_MASK);
        self.count.fetch_sub(moved.len(), Relaxed);
        let mut ready = self.ready.lock();
        if ready.is_empty() {
            // No copy: the queue takes the vector's buffer.
            *ready = VecDeque::from(moved);
        } else {
            ready.extend(moved);
        }
        self.queued.store(true, Relaxed);
    }
}

fn release(dead: Vec<Grave>) {
    for (d, data) in dead {
        // SAFETY: each pair is a registration's own release function and
        // data, dropped once (the entry holding them is gone).
        unsafe { d(data) }
    }
}

impl Drop for Finalizers {
    fn drop(&mut self) {
        // Finalizers registered or queued when the heap goes never run;
        // what they hold is released.
        let t = self.table.get_mut();
        let mut dead: Vec<_> = std::mem::take(self.graveyard.get_mut());
        // Every entry, stale or not, holds its own data.
        for e in &t.log {
            if let Some(d) = t.kinds[e.kind()].drop {
                dead.push((d, e.data));
            }
        }
        for r in self.ready.get_mut().drain(..) {
            if let Some(d) = t.kinds[r.kind()].drop {
                dead.push((d, r.data));
            }
        }
        release(dead);
    }
}
