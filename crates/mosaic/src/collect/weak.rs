//! Weak references: weak handles ([`WeakRoot`]) and weak slots registered
//! inside heap objects (the Boehm collector's "disappearing links").
//!
//! Both come in two kinds ([`WeakKind`]). A *short* reference is cleared as
//! soon as its target is found unreachable, before finalizers are chosen
//! (like Java's `WeakReference`); a *long* one is cleared only when the
//! target is really reclaimed, after finalization kept what it needed (like
//! `GC_register_long_link`).
//!
//! Invariant: clearing happens only inside a pause, after marking, so a
//! weak reference read by a mutator holds either null or a live object.
//! The cost of a collection is proportional to the number of weak
//! references registered, never to the heap: a collection with none pays
//! one relaxed load per table. Registered slots are walked once per pause
//! (the short pass, which also looks at each slot's holder), plus once
//! more only if long ones exist: a registration whose holder was found
//! marked stays, and only the others are looked at again once marking
//! has ended (`WeakPause::finish`).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use rustc_hash::FxHashMap;

use super::handles::Words;
use crate::object::ObjRef;
use crate::space::{MarkState, PageTable};

/// When a weak reference is cleared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum WeakKind {
    /// Cleared when the target becomes unreachable, before its finalizer
    /// (if any) runs.
    #[default]
    Short = 0,
    /// Cleared only when the target is reclaimed: an object kept alive for
    /// its finalizer keeps its long references until it dies for good.
    Long = 1,
}

/// The heap's weak references.
#[derive(Default)]
pub struct WeakRefs {
    /// Weak handles, one table per kind.
    handles: [Arc<HandleTable>; 2],
    /// Registered weak slots: slot address → kind and target (0: the
    /// slot's own contents are the target).
    slots: Mutex<FxHashMap<usize, (WeakKind, usize)>>,
    /// Weak references registered (handles and slots), to skip the work.
    count: AtomicUsize,
    /// Registered slots of the long kind, to skip the long pass.
    long_slots: AtomicUsize,
    /// Slot registrations ever made: `WeakPause::finish` sees whether
    /// one came after the short pass looked at every holder.
    inserted: AtomicU64,
}

/// The weak handles of one kind.
#[derive(Default)]
struct HandleTable {
    words: Mutex<Words>,
    /// Handles alive, readable without the lock (stats from a callback in
    /// the pause, which holds it).
    alive: AtomicUsize,
}

/// A weak handle: holds an object without keeping it alive. [`WeakRoot::get`]
/// answers `None` once the object died (see [`WeakKind`] for when). It may
/// be sent to and read from any thread. Collector callbacks (`trace`,
/// `roots`, `mutator_roots`) may read one but must not drop one (the pause
/// holds the handle tables).
pub struct WeakRoot {
    table: Arc<HandleTable>,
    word: *const AtomicUsize,
    index: u32,
    kind: WeakKind,
}

// SAFETY: the word is atomic and lives in a chunk owned by `table`, which
// the handle keeps alive; taking and giving back words is under its lock.
unsafe impl Send for WeakRoot {}
// SAFETY: as above; `get` is a single atomic load.
unsafe impl Sync for WeakRoot {}

impl WeakRoot {
    /// The object, or `None` if it died (or the handle was made empty).
    ///
    /// While a collection runs, a thread outside it (one in a blocking
    /// region, or with no mutator) waits here until the collection has
    /// cleared what it found dead: it can never read an object the
    /// collection is about to free.
    #[inline]
    pub fn get(&self) -> Option<ObjRef> {
        let words = &self.table.words;
        let _pause = match words.try_lock() {
            Some(g) => Some(g),
            // The collection itself (a callback in the pause) reads as is.
            None if super::callbacks::inside_callback() => None,
            None => Some(words.lock()),
        };
        // SAFETY: the chunk holding the word outlives `self` (see above).
        ObjRef::from_ptr(unsafe { (*self.word).load(Relaxed) } as *mut u8)
    }

    pub fn kind(&self) -> WeakKind {
        self.kind
    }
}

impl Drop for WeakRoot {
    fn drop(&mut self) {
        self.table.words.lock().give_back(self.index);
        self.table.alive.fetch_sub(1, Relaxed);
    }
}

impl std::fmt::Debug for WeakRoot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WeakRoot({:?}, {:?})", self.kind, self.get())
    }
}

/// Weak references found pointing at unmarked objects: (address of the
/// word or slot, the value found there).
#[derive(Default)]
pub struct Doomed {
    words: Vec<(usize, usize)>,
    slots: Vec<(usize, usize)>,
}

/// A weak slot could not be registered.
#[derive(Debug, PartialEq, Eq)]
pub enum SlotError {
    /// The address is not inside a live object of the heap.
    NotInObject,
    /// The address is not aligned to a pointer.
    Misaligned,
    /// The slot is already registered.
    AlreadyRegistered,
}

impl WeakRefs {
    /// A weak handle on `obj` (already checked to be a live object).
    pub fn handle(&self, obj: usize, kind: WeakKind) -> WeakRoot {
        let table = self.handles[kind as usize].clone();
        let (word, index) = {
            let mut words = table.words.lock();
            // Counted under the lock: a pause recounts holding every lock.
            self.count.fetch_add(1, Relaxed);
            table.alive.fetch_add(1, Relaxed);
            words.take(obj)
        };
        WeakRoot {
            table,
            word,
            index,
            kind,
        }
    }

    /// Registers the pointer-sized slot at `slot`, which must lie inside a
    /// live object of `table`'s heap.
    pub fn register_slot(
        &self,
        table: &PageTable,
        slot: usize,
        kind: WeakKind,
    ) -> Result<(), SlotError> {
        if slot % std::mem::align_of::<usize>() != 0 {
            return Err(SlotError::Misaligned);
        }
        if table.object_containing(slot).is_none() {
            return Err(SlotError::NotInObject);
        }
        self.insert_slot(slot, kind, 0)
    }

    fn insert_slot(&self, slot: usize, kind: WeakKind, target: usize) -> Result<(), SlotError> {
        let mut slots = self.slots.lock();
        if slots.contains_key(&slot) {
            return Err(SlotError::AlreadyRegistered);
        }
        slots.insert(slot, (kind, target));
        self.count.fetch_add(1, Relaxed);
        self.inserted.fetch_add(1, Relaxed);
        if kind == WeakKind::Long {
            self.long_slots.fetch_add(1, Relaxed);
        }
        Ok(())
    }

    /// Registers a *disappearing link*: the word at `link` (anywhere:
    /// static data, malloc'd memory or a heap object) is set to null when
    /// `target` dies, and the registration ends then (or when the heap
    /// object holding `link`, if any, dies). The word's contents are
    /// never read: it may hold the target disguised (the Boehm collector's
    /// `GC_HIDE_POINTER`).
    pub fn register_link(
        &self,
        link: usize,
        target: usize,
        kind: WeakKind,
    ) -> Result<(), SlotError> {
        if link % std::mem::align_of::<usize>() != 0 || link == 0 {
            return Err(SlotError::Misaligned);
        }
        self.insert_slot(link, kind, target)
    }

    /// Moves a registration from `from` to `to` (a table rehashed). Errors:
    /// `from` not registered (`NotInObject`), `to` taken (`AlreadyRegistered`).
    pub fn move_slot(&self, from: usize, to: usize) -> Result<(), SlotError> {
        if to % std::mem::align_of::<usize>() != 0 || to == 0 {
            return Err(SlotError::Misaligned);
        }
        let mut slots = self.slots.lock();
        if !slots.contains_key(&from) {
            return Err(SlotError::NotInObject);
        }
        if from == to {
            return Ok(());
        }
        if slots.contains_key(&to) {
            return Err(SlotError::AlreadyRegistered);
        }
        let v = slots.remove(&from).expect("registered");
        slots.insert(to, v);
        // A registration at a new place, whose holder a pause's short pass
        // has not looked at: counted as made (`WeakPause::finish`).
        self.inserted.fetch_add(1, Relaxed);
        Ok(())
    }

    /// Forgets a registered slot; whether it was registered.
    pub fn unregister_slot(&self, slot: usize) -> bool {
        // Counted down under the lock: a pause recounts holding it.
        let mut slots = self.slots.lock();
        let removed = slots.remove(&slot);
        if let Some((kind, _)) = removed {
            self.forget(kind);
        }
        drop(slots);
        removed.is_some()
    }

    /// Counts a slot registration ended.
    fn forget(&self, kind: WeakKind) {
        self.count.fetch_sub(1, Relaxed);
        if kind == WeakKind::Long {
            self.long_slots.fetch_sub(1, Relaxed);
        }
    }

    /// Whether any weak reference may exist (handles dropped since are
    /// counted until the next collection).
    pub fn any(&self) -> bool {
        self.count.load(Relaxed) != 0
    }

    /// Whether a registered weak slot lies in `[start, start + len)` (an
    /// object about to be freed explicitly): probes each word or scans
    /// the table, whichever is shorter. Inline for the usual answer, no
    /// weak reference at all.
    #[inline]
    pub fn has_slot_within(&self, start: usize, len: usize) -> bool {
        self.any() && self.has_slot_within_slow(start, len)
    }

    #[inline(never)]
    fn has_slot_within_slow(&self, start: usize, len: usize) -> bool {
        let slots = self.slots.lock();
        let words = len / 8;
        if slots.len() < words {
            slots.keys().any(|&s| (start..start + len).contains(&s))
        } else {
            (0..words).any(|i| slots.contains_key(&(start + 8 * i)))
        }
    }

    /// Registered weak slots.
    pub fn slot_count(&self) -> usize {
        self.slots.lock().len()
    }

    /// Pause: holds both weak handle tables for the whole marking, so that
    /// [`WeakRoot::get`] from a thread outside the pause waits until the
    /// pause has cleared what it found dead.
    pub fn pause(&self) -> WeakPause<'_> {
        WeakPause {
            refs: self,
            handles: [self.handles[0].words.lock(), self.handles[1].words.lock()],
            recheck: Vec::new(),
            holders_seen: None,
        }
    }

    /// Weak handles alive.
    pub fn handle_count(&self) -> usize {
        self.handles.iter().map(|t| t.alive.load(Relaxed)).sum()
    }
}

/// The weak references during one pause (see [`WeakRefs::pause`]).
pub struct WeakPause<'a> {
    refs: &'a WeakRefs,
    handles: [MutexGuard<'a, Words>; 2],
    /// Registered slots whose holder the short pass did not find marked
    /// (finalization may still mark it, or it is not a heap object):
    /// `finish` decides on them.
    recheck: Vec<usize>,
    /// `WeakRefs::inserted` when the short pass looked at every holder;
    /// `None` before (then `finish` looks at every registration).
    holders_seen: Option<u64>,
}

impl WeakPause<'_> {
    /// Pause, after marking: the weak references of `kind` whose target is
    /// an unmarked object, to clear with [`WeakRefs::clear`]. Finding and
    /// clearing are apart so that short references are cleared only once
    /// no embedder code can abandon the collection any more. The short
    /// pass walks every registered slot and also notes those whose holder
    /// is not marked, for [`WeakPause::finish`]; the long pass walks the
    /// slots only if long ones are registered.
    pub fn unmarked(&mut self, table: &PageTable, kind: WeakKind) -> Doomed {
        let mut doomed = Doomed::default();
        if !self.refs.any() {
            return doomed;
        }
        for w in self.handles[kind as usize].nonzero() {
            let v = w.load(Relaxed);
            if let MarkState::Unmarked(_) = table.mark_state(v) {
                doomed.words.push((w as *const AtomicUsize as usize, v));
            }
        }
        let short = kind == WeakKind::Short;
        if !short && self.refs.long_slots.load(Relaxed) == 0 {
            return doomed;
        }
        let slots = self.refs.slots.lock();
        if short {
            self.recheck.clear();
            self.holders_seen = Some(self.refs.inserted.load(Relaxed));
        }
        for (&slot, &(k, link_target)) in slots.iter() {
            if short && !matches!(table.mark_state(slot), MarkState::Marked(_)) {
                self.recheck.push(slot);
            }
            if k != kind {
                continue;
            }
            let target = if link_target != 0 {
                link_target
            } else {
                // SAFETY: `slot` lies inside an object that was live when it
                // was registered and has not been swept since: registrations
                // of dead holders are dropped by `WeakPause::finish` in the
                // pause that found them dead, before their memory can be
                // reused.
                unsafe { (slot as *const usize).read() }
            };
            if let MarkState::Unmarked(_) = table.mark_state(target) {
                doomed.slots.push((slot, target));
            }
        }
        doomed
    }

    /// Pause: clears what [`WeakRefs::unmarked`] found. A word or slot that
    /// changed since (a handle dropped, a slot unregistered) is left alone.
    pub fn clear(&self, doomed: Doomed) {
        if !doomed.words.is_empty() {
            for (w, v) in doomed.words {
                // SAFETY: handle words live in chunks that are never freed
                // while the table lives; a word given back holds 0, so the
                // exchange leaves it (or a new handle's value) alone.
                let w = unsafe { &*(w as *const AtomicUsize) };
                let _ = w.compare_exchange(v, 0, Relaxed, Relaxed);
            }
        }
        if !doomed.slots.is_empty() {
            let mut slots = self.refs.slots.lock();
            for (slot, v) in doomed.slots {
                let p = slot as *mut usize;
                match slots.get(&slot) {
                    // A disappearing link: cleared, and its registration ends.
                    Some(&(kind, target)) if target == v => {
                        // SAFETY: the embedder registered `link` as a word it
                        // lets the collector clear while registered (a live
                        // heap object's, see `unmarked`, or memory outside
                        // the heap it keeps mapped); the world is stopped.
                        unsafe { p.write(0) };
                        slots.remove(&slot);
                        self.refs.forget(kind);
                    }
                    // SAFETY: still registered, so inside a live object (see
                    // `unmarked`); the world is stopped.
                    Some(&(_, 0)) => unsafe {
                        if p.read() == v {
                            p.write(0);
                        }
                    },
                    _ => {}
                }
            }
        }
    }

    /// Compaction: every weak handle and slot holding the old address of a
    /// moved object (`fwd` maps it) now holds the new one, and the
    /// registration of a slot inside a moved object follows the object.
    pub fn update_moved(&self, fwd: &impl Fn(usize) -> Option<usize>) {
        if !self.refs.any() {
            return;
        }
        for words in &self.handles {
            for w in words.nonzero() {
                if let Some(n) = fwd(w.load(Relaxed)) {
                    w.store(n, Relaxed);
                }
            }
        }
        let mut slots = self.refs.slots.lock();
        let old = std::mem::take(&mut *slots);
        for (slot, (kind, target)) in old {
            let slot = fwd(slot).unwrap_or(slot);
            if target != 0 {
                // A link's word is the embedder's (maybe disguised): only
                // the target it names follows the move.
                slots.insert(slot, (kind, fwd(target).unwrap_or(target)));
                continue;
            }
            let p = slot as *mut usize;
            // SAFETY: a registered slot lies inside a live object (see
            // `unmarked`), now at its new address, whose bytes were copied
            // there; the world is stopped.
            unsafe {
                if let Some(n) = fwd(p.read()) {
                    p.write(n);
                }
            }
            slots.insert(slot, (kind, 0));
        }
    }

    /// Pause, after all marking: drops the registrations of slots whose
    /// holder object dies now, and recounts what is registered. Only the
    /// slots the short pass found unmarked holders for are looked at (a
    /// marked holder stays marked), unless there was no short pass or a
    /// slot was registered after it.
    pub fn finish(self, table: &PageTable) {
        if !self.refs.any() {
            return;
        }
        // A registration ends with the heap object holding it; a link
        // outside the heap lasts until unregistered or cleared.
        let holder_lives = |slot: usize, target: usize| match table.mark_state(slot) {
            MarkState::Marked(_) => true,
            MarkState::Unmarked(_) => false,
            _ => target != 0,
        };
        let mut slots = self.refs.slots.lock();
        if self.holders_seen == Some(self.refs.inserted.load(Relaxed)) {
            for slot in &self.recheck {
                if let Some(&(kind, target)) = slots.get(slot) {
                    if !holder_lives(*slot, target) {
                        slots.remove(slot);
                        self.refs.forget(kind);
                    }
                }
            }
        } else {
            slots.retain(|&slot, &mut (_, target)| holder_lives(slot, target));
            let long = slots.values().filter(|v| v.0 == WeakKind::Long).count();
            self.refs.long_slots.store(long, Relaxed);
        }
        let handles: usize = self.handles.iter().map(|t| t.used()).sum();
        self.refs.count.store(handles + slots.len(), Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page of 48-byte slots: slot 0 a marked (live) holder, slot 1 an
    /// allocated, unmarked (dead) one, slot 2 a marked target.
    fn page() -> (PageTable, [usize; 3]) {
        let t = PageTable::new(4).unwrap();
        let d = t.desc(1);
        d.init_small(3, 48);
        for slot in 0..3 {
            d.alloc.set(slot);
        }
        d.mark.set(0);
        d.mark.set(2);
        let base = t.page_addr(1);
        (t, [base, base + 48, base + 96])
    }

    #[test]
    fn a_registration_moved_after_the_short_pass_is_looked_at_by_finish() {
        let (t, [live, dead, target]) = page();
        let refs = WeakRefs::default();
        refs.register_link(live, target, WeakKind::Short).unwrap();
        let mut pause = refs.pause();
        // The holder is marked: the short pass leaves the slot alone.
        let short = pause.unmarked(&t, WeakKind::Short);
        pause.clear(short);
        // Moved (a thread the pause did not stop) into a dead holder.
        refs.move_slot(live, dead).unwrap();
        pause.finish(&t);
        assert_eq!(refs.slot_count(), 0, "the dead holder's registration went");
        assert!(!refs.any());
    }

    #[test]
    fn finish_looks_again_only_at_what_the_short_pass_found_unmarked_holders_for() {
        let (t, [live, dead, target]) = page();
        let refs = WeakRefs::default();
        refs.register_link(live, target, WeakKind::Short).unwrap();
        refs.register_link(dead, target, WeakKind::Long).unwrap();
        let mut pause = refs.pause();
        let short = pause.unmarked(&t, WeakKind::Short);
        assert_eq!(pause.recheck, vec![dead]);
        pause.clear(short);
        // Finalization marks the dead holder after all: it stays.
        t.desc(1).mark.set(1);
        let long = pause.unmarked(&t, WeakKind::Long);
        pause.clear(long);
        pause.finish(&t);
        assert_eq!(refs.slot_count(), 2);
        assert_eq!(refs.long_slots.load(Relaxed), 1);
        // Unmarked again (the next collection): its registration goes.
        t.desc(1).mark.clear(1);
        let mut pause = refs.pause();
        let short = pause.unmarked(&t, WeakKind::Short);
        pause.clear(short);
        pause.finish(&t);
        assert_eq!(refs.slot_count(), 1);
        assert_eq!(refs.long_slots.load(Relaxed), 0);
        assert!(refs.unregister_slot(live));
        assert!(!refs.any());
    }
}
