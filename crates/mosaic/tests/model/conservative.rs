//! The model test's conservative objects (`AllocFlags::CONSERVATIVE`):
//! the collector reads every aligned word of such an object as an
//! ambiguous reference (interior pointers count) and never calls `trace`
//! on it; what a word points into is kept alive and pinned for that
//! collection.
//!
//! Operations: allocating conservative objects (small, medium and large,
//! some asked with one extra byte, as the Boehm collector's embedders do),
//! precise vectors asked with one extra byte, and writing a word of a
//! conservative object: the start of a live object, an interior pointer
//! (any byte inside its size), one past the end of an object asked with
//! the extra byte (which must keep it alive), the end of any object (in its
//! slot's slack, the next slot, or nowhere), an address a collection just
//! freed (a dead object's or a moved object's old one), the last word of a
//! page holding an object (beyond the last slot of a small page; inside a
//! large object's last page, which counts as the object's), any address in
//! the heap's first 16 MiB, garbage (small numbers, odd values, `0xdead…`)
//! or 0.
//!
//! The model: in `Graph`, a conservative object is a `Kind::Vector` whose
//! `fields` are what its words (header included) *resolve to*, recomputed
//! before every collection against the model's live objects and the
//! address ranges an ambiguous word finds them by: its slot (from
//! `Heap::object_size` when it was allocated or moved), or a large
//! object's whole pages (`Heap::object_containing`'s rule). Every word is
//! resolved, whatever its origin, so a garbage or freed address that a
//! later allocation or compaction put an object under is an edge too. The
//! graph then treats those edges as a vector's: followed when the object
//! is marked, in the strong closure as in finalization (an ordered
//! object's words into itself are skipped, like a vector's
//! self-references). The objects a marked conservative object's words
//! resolve to are pinned for that collection: none may appear in its
//! `on_move` calls. `check_contents` reads each conservative object's
//! header, words (never rewritten by the collector) and zeroed slot tail.
//!
//! Since a freed address can come back as any new object, the objects
//! finalizers allocate are in the model too (ids from `1 << 40`, logged by
//! the finalizer with their address and slot size): garbage, unless a word
//! now points into one.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use mosaic::{AllocFlags, Config, ObjRef, SizeClassPreset, PAGE_SIZE};
use proptest::prelude::*;

use super::common::*;
use super::model_graph::{Kind, Node};
use super::{pick, Harness};

#[derive(Clone, Debug)]
pub enum ConsOp {
    /// A conservative object of `words` zero words after its header,
    /// asked with one byte more if `padded`; rooted or stored into an
    /// accessible container.
    New {
        words: usize,
        padded: bool,
        root: bool,
        into: (usize, usize),
    },
    /// A precise vector asked with one byte more than its fields need.
    NewPadded {
        len: usize,
        root: bool,
        into: (usize, usize),
    },
    /// Writes a word of an accessible conservative object.
    Write {
        target: usize,
        word: usize,
        value: Word,
    },
}

/// What a conservative object's word is set to (`usize`s pick).
#[derive(Clone, Debug)]
pub enum Word {
    /// The start of a live object.
    Start(usize),
    /// `offset` (modulo its size) bytes into a live object.
    Interior(usize, usize),
    /// One past the end of a live object asked with the extra byte.
    PastEnd(usize),
    /// The end of any live object: its slot's slack, the next slot, or
    /// nothing.
    End(usize),
    /// A little past an address a collection freed.
    Freed(usize, usize),
    /// The last word of the page an object ends in.
    PageTail(usize),
    /// Anywhere in the first 16 MiB of the heap's reservation (where a
    /// test heap's pages are).
    InHeap(usize),
    Garbage(usize),
    Zero,
}

fn words() -> impl Strategy<Value = usize> {
    prop_oneof![
        6 => 1usize..40,
        // Large with Ruby's pools (over 640 bytes).
        1 => 40usize..1000,
        // Large objects (over 8 KiB).
        1 => 1025usize..3000,
    ]
}

fn garbage() -> impl Strategy<Value = usize> {
    prop_oneof![
        0usize..4096,
        any::<usize>().prop_map(|v| v | 1),
        prop::sample::select(vec![
            0xdead,
            0xdead_beef,
            0xdead_beef_dead_beef,
            usize::MAX,
            usize::MAX - 7,
            1 << 47,
        ]),
    ]
}

fn word() -> impl Strategy<Value = Word> {
    prop_oneof![
        4 => any::<usize>().prop_map(Word::Start),
        4 => any::<(usize, usize)>().prop_map(|(t, o)| Word::Interior(t, o)),
        3 => any::<usize>().prop_map(Word::PastEnd),
        1 => any::<usize>().prop_map(Word::End),
        3 => any::<(usize, usize)>().prop_map(|(i, o)| Word::Freed(i, o)),
        1 => any::<usize>().prop_map(Word::PageTail),
        1 => any::<usize>().prop_map(Word::InHeap),
        2 => garbage().prop_map(Word::Garbage),
        1 => Just(Word::Zero),
    ]
}

pub fn op() -> impl Strategy<Value = ConsOp> {
    let place = || (prop::bool::weighted(0.3), any::<(usize, usize)>());
    prop_oneof![
        3 => (words(), prop::bool::weighted(0.3), place())
            .prop_map(|(words, padded, (root, into))| ConsOp::New { words, padded, root, into }),
        1 => (0usize..20, place()).prop_map(|(len, (root, into))| ConsOp::NewPadded { len, root, into }),
        8 => (any::<usize>(), any::<usize>(), word())
            .prop_map(|(target, word, value)| ConsOp::Write { target, word, value }),
    ]
}

/// The harness's record of conservative objects and of where ambiguous
/// words find objects.
pub struct ConsState {
    /// Each conservative object's words after its header.
    objs: BTreeMap<u64, Vec<usize>>,
    /// Objects asked with one extra byte: their size without it.
    padded: HashMap<u64, usize>,
    /// Every model object's extent from its start, for ambiguous words.
    extent: HashMap<u64, usize>,
    /// Addresses recent collections freed (dead objects, moved objects'
    /// old places), newest last.
    freed: VecDeque<usize>,
    /// What the current collection's conservative objects pinned.
    pub pinned: BTreeSet<u64>,
    /// Requests above this are large objects.
    max_small: usize,
    /// Ids of the pairs finalizers allocate.
    pub fin_ids: Arc<AtomicU64>,
}

impl ConsState {
    pub fn new(config: &Config) -> Self {
        let max_small = match &config.size_classes {
            SizeClassPreset::Mosaic => 8192,
            SizeClassPreset::Ruby => 640,
            SizeClassPreset::Custom(sizes) => *sizes.last().unwrap(),
        };
        ConsState {
            objs: BTreeMap::new(),
            padded: HashMap::new(),
            extent: HashMap::new(),
            freed: VecDeque::new(),
            pinned: BTreeSet::new(),
            max_small,
            fin_ids: Arc::new(AtomicU64::new(1 << 40)),
        }
    }

    pub fn is_conservative(&self, id: u64) -> bool {
        self.objs.contains_key(&id)
    }

    pub fn padding(&self, id: u64) -> usize {
        usize::from(self.padded.contains_key(&id))
    }

    /// Where ambiguous words find an object whose slot (`Heap::object_size`)
    /// is `size`: the slot, or a large object's whole pages.
    fn extent_of(&self, size: usize) -> usize {
        if size > self.max_small {
            size.next_multiple_of(PAGE_SIZE)
        } else {
            size
        }
    }

    /// Object `id` is in a new slot of `size` bytes (allocated or moved).
    pub fn placed(&mut self, id: u64, size: usize) {
        self.extent.insert(id, self.extent_of(size));
    }

    pub fn moved(&mut self, id: u64, from: usize, size: usize) {
        self.placed(id, size);
        self.freed_at(from);
    }

    /// Object `id`, at `addr`, died.
    pub fn died(&mut self, id: u64, addr: usize) {
        self.objs.remove(&id);
        self.padded.remove(&id);
        self.extent.remove(&id);
        self.freed_at(addr);
    }

    fn freed_at(&mut self, addr: usize) {
        if self.freed.len() == 64 {
            self.freed.pop_front();
        }
        self.freed.push_back(addr);
    }
}

/// The object `index` (start → (end, id)) has `w` inside, if any.
fn resolve(index: &BTreeMap<usize, (usize, u64)>, w: usize) -> Option<u64> {
    let (_, &(end, id)) = index.range(..=w).next_back()?;
    (w < end).then_some(id)
}

/// Checks that a fresh allocation of `size` bytes is zeroed, then writes
/// its header.
fn init_zeroed(o: ObjRef, size: usize, tag: u32, len: usize, id: u64) -> ObjRef {
    // SAFETY: the object has `size` bytes.
    let bytes = unsafe { std::slice::from_raw_parts(o.as_ptr(), size) };
    assert!(bytes.iter().all(|&b| b == 0), "allocation not zeroed");
    init_uncleared(o, tag, len as u32, id)
}

impl Harness {
    pub(super) fn apply_conservative(&mut self, op: &ConsOp) {
        match *op {
            ConsOp::New {
                words,
                padded,
                root,
                into,
            } => {
                let id = self.next_id;
                self.next_id += 1;
                let size = HEADER + 8 * words;
                let o = (self.m)
                    .alloc_with(size + usize::from(padded), AllocFlags::CONSERVATIVE)
                    .expect("allocation");
                let o = init_zeroed(o, size, FLAGGED, words, id);
                let collected = self.sync(&[]);
                self.cons.objs.insert(id, vec![0; words]);
                if padded {
                    self.cons.padded.insert(id, size);
                }
                self.add(id, o, Node::new(Kind::Vector(words), id), collected);
                self.place(id, root, into);
            }
            ConsOp::NewPadded { len, root, into } => {
                let id = self.next_id;
                self.next_id += 1;
                let size = HEADER + 8 * len;
                let o = self.m.alloc(size + 1).expect("allocation");
                let o = init_zeroed(o, size + 1, VECTOR, len, id);
                let collected = self.sync(&[]);
                self.cons.padded.insert(id, size);
                self.add(id, o, Node::new(Kind::Vector(len), id), collected);
                self.place(id, root, into);
            }
            ConsOp::Write {
                target,
                word,
                ref value,
            } => {
                let mut objs = self.g.accessible();
                objs.retain(|&id| self.cons.is_conservative(id));
                let Some(c) = pick(&objs, target) else {
                    return;
                };
                let Some(w) = self.word_value(value) else {
                    return;
                };
                let words = self.cons.objs.get_mut(&c).unwrap();
                let i = word % words.len();
                words[i] = w;
                set_word(self.addr[&c], i, w);
                self.resolve_conservative();
            }
        }
    }

    /// Accessible pairs and vectors, not conservative objects (whose words
    /// only `ConsOp::Write` sets).
    pub(super) fn containers(&self) -> Vec<u64> {
        let mut v = self.accessible(|n| n.is_container());
        v.retain(|&id| !self.cons.is_conservative(id));
        v
    }

    /// The size object `id` was asked with (without an extra byte), or
    /// its slot's for an ephemeron.
    fn size_of(&self, id: u64) -> usize {
        match self.g.objs[&id].kind {
            Kind::Pair => HEADER + 16,
            Kind::Vector(n) | Kind::WeakBox(n) => HEADER + 8 * n,
            Kind::Bytes { len, .. } => HEADER + len,
            Kind::Ephemeron => self.cons.extent[&id],
        }
    }

    fn word_value(&self, value: &Word) -> Option<usize> {
        let all: Vec<u64> = self.g.objs.keys().copied().collect();
        let at = |id: u64| self.addr[&id].addr();
        Some(match *value {
            Word::Start(t) => at(pick(&all, t)?),
            Word::Interior(t, offset) => {
                let id = pick(&all, t)?;
                at(id) + offset % self.size_of(id)
            }
            Word::PastEnd(t) => {
                let padded: Vec<u64> = self.cons.padded.keys().copied().collect();
                let id = pick(&padded, t)?;
                let w = at(id) + self.cons.padded[&id];
                let end = at(id) + self.cons.extent[&id];
                assert!(w < end, "one past object {id} is outside its slot");
                w
            }
            Word::End(t) => {
                let id = pick(&all, t)?;
                at(id) + self.size_of(id)
            }
            Word::Freed(i, offset) => {
                let freed = &self.cons.freed;
                *freed.get(i % freed.len().max(1))? + offset % 32
            }
            Word::PageTail(t) => {
                let id = pick(&all, t)?;
                let base = self.heap.address_range().start;
                let last = at(id) + self.cons.extent[&id] - 1;
                base + (last - base) / PAGE_SIZE * PAGE_SIZE + PAGE_SIZE - 8
            }
            Word::InHeap(s) => {
                let r = self.heap.address_range();
                r.start + s % (r.end - r.start).min(16 << 20)
            }
            Word::Garbage(w) => w,
            Word::Zero => 0,
        })
    }

    /// Sets every conservative object's `fields` to what its words
    /// (header included) resolve to among the model's objects now.
    pub(super) fn resolve_conservative(&mut self) {
        if self.cons.objs.is_empty() {
            return;
        }
        let index: BTreeMap<usize, (usize, u64)> = (self.g.objs.keys())
            .map(|&id| {
                let a = self.addr[&id].addr();
                (a, (a + self.cons.extent[&id], id))
            })
            .collect();
        for (&id, words) in &self.cons.objs {
            let header = [FLAGGED as usize | words.len() << 32, id as usize];
            let all = header.iter().chain(words);
            let fields = all.map(|&w| resolve(&index, w)).collect();
            self.g.objs.get_mut(&id).unwrap().fields = fields;
        }
    }

    /// What the conservative objects among `marked` pin.
    pub(super) fn conservative_pins(&self, marked: &BTreeSet<u64>) -> BTreeSet<u64> {
        (self.cons.objs.keys())
            .filter(|id| marked.contains(id))
            .flat_map(|id| self.g.objs[id].fields.iter().flatten().copied())
            .collect()
    }

    /// A finalizer allocated pair `id` at `addr` in a slot of `size`.
    pub(super) fn finalizer_allocated(&mut self, id: u64, addr: usize, size: usize) {
        self.g.objs.insert(id, Node::new(Kind::Pair, id));
        self.addr
            .insert(id, ObjRef::from_ptr(addr as *mut u8).unwrap());
        self.cons.placed(id, size);
    }

    /// Header, words, flags and zeroed slot tail of conservative object
    /// `id` at `o`.
    pub(super) fn check_conservative(&self, id: u64, o: ObjRef) {
        let words = &self.cons.objs[&id];
        let n = words.len();
        let want = (FLAGGED, n as u32, id);
        assert_eq!(header(o), want, "header of conservative object {id}");
        let flags = self.heap.object_flags(o).expect("an object");
        assert!(flags.contains(AllocFlags::CONSERVATIVE), "{id}: {flags:?}");
        let size = self.heap.object_size(o).expect("an object");
        // SAFETY: the object has `size` bytes, the header's 16 first.
        let mem = unsafe {
            std::slice::from_raw_parts(o.as_ptr().add(HEADER) as *const usize, (size - HEADER) / 8)
        };
        assert!(&mem[..n] == words, "words of conservative object {id}");
        let tail = mem[n..].iter().position(|&w| w != 0);
        assert_eq!(tail, None, "slot tail of conservative object {id}");
    }
}

/// The targets of a conservative object's words stay put when the object
/// is only reached in the weak phases: as an ephemeron's value (key
/// alive), or as an object whose finalizer is chosen. The model tests
/// above found such targets moved (`verify_compaction` then reported the
/// word as stale): the pins the weak phases' marking found were dropped.
#[test]
fn conservative_object_marked_in_the_weak_phases_pins() {
    use mosaic::{CompactPolicy, FinalizerOrder};
    for ephemeron in [true, false] {
        let heap = heap(Config {
            compact: CompactPolicy::Always,
            verify_compaction: true,
            ..small_config()
        });
        let mut m = heap.mutator().unwrap();
        let x = new_pair(&mut m, 1, None, None).unwrap();
        let root_x = m.root(x).unwrap();
        let c = new_flagged_conservative(&mut m, 2, 1).unwrap();
        set_word(c, 0, x.addr() + 8);
        let _keep = if ephemeron {
            let key = new_pair(&mut m, 3, None, None).unwrap();
            let e = m.alloc_ephemeron(Some(key), Some(c)).unwrap();
            Some((m.root(key).unwrap(), m.root(e).unwrap()))
        } else {
            m.register_finalizer(c, FinalizerOrder::Unordered, |_, _| {})
                .unwrap();
            None
        };
        m.collect();
        let moves = heap.embedder().moves.lock().clone();
        let how = if ephemeron {
            "an ephemeron"
        } else {
            "finalization"
        };
        assert!(
            moves.iter().all(|mv| mv.0 != x.addr()),
            "the target of a word of an object reached by {how} moved: {moves:x?}"
        );
        assert_eq!(root_x.get(), Some(x));
    }
}

/// A word of a large conservative object pointing into its own last page,
/// past its size, is a self-reference: ambiguous words find a large object
/// by its whole pages (`Heap::object_containing`), so ordered finalization
/// must skip it as it skips a word inside the object's size. A 200-case
/// run of the model tests found the object kept instead (its finalizer
/// never chosen): the range skipped ended at the object's size.
#[test]
fn large_conservative_object_pointing_into_its_own_last_page_is_finalized() {
    use mosaic::FinalizerOrder;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    for past_size in [false, true] {
        let heap = heap(small_config());
        let mut m = heap.mutator().unwrap();
        let c = new_flagged_conservative(&mut m, 1, 1100).unwrap();
        let size = heap.object_size(c).unwrap();
        let w = if past_size {
            c.addr() + size.next_multiple_of(PAGE_SIZE) - 8
        } else {
            c.addr() + size - 8
        };
        assert_eq!(heap.object_containing(w as *const u8), Some(c));
        set_word(c, 0, w);
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        m.register_finalizer(c, FinalizerOrder::Ordered, move |_, _| {
            r.fetch_add(1, SeqCst);
        })
        .unwrap();
        m.collect();
        m.run_finalizers().unwrap();
        let at = if past_size { "past its size" } else { "inside" };
        assert_eq!(ran.load(SeqCst), 1, "a word {at}: finalizer runs");
    }
}
