//! A small dynamic object model for tests: pairs, vectors, byte strings and
//! weak boxes.
//!
//! Layout: a 16-byte header `{ tag: u32, len: u32, id: u64 }`, then `len`
//! reference fields (pairs, vectors and weak boxes) or `len` bytes (byte
//! strings, which are allocated `NO_POINTERS` and must never be traced).
//! A weak box's fields are not visited by `trace`: they are weak slots,
//! registered with the collector by the test (a weak container). The
//! collector's ephemerons have no header: tests never read one as a test
//! object.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use mosaic::{AllocFlags, Config, Embedder, Error, Heap, Mutator, ObjRef, Tracer};
use parking_lot::Mutex;

pub const PAIR: u32 = 1;
pub const VECTOR: u32 = 2;
pub const BYTES: u32 = 3;
pub const WEAKBOX: u32 = 4;
/// `len` words after the header, each visited as an ambiguous word (a
/// conservatively scanned object).
pub const CONSERV: u32 = 5;
/// Allocated `AllocFlags::CONSERVATIVE`: the collector scans its words
/// itself and must never call `trace` on it.
pub const FLAGGED: u32 = 6;
pub const HEADER: usize = 16;

/// One `on_move`: (from, to, old size, new size).
pub type Move = (usize, usize, usize, usize);

/// What a keeper's `on_free` read: its id and, per field, (address, the
/// id in that object's header).
pub type FreedRefs = (u64, Vec<(usize, u64)>);

/// A test's extra work inside `on_free`.
pub type FreeHook = Box<dyn Fn(ObjRef) + Send + Sync>;

#[derive(Default)]
pub struct TestVm {
    /// Ids of objects whose `on_free` ran (shared, so it outlives the heap).
    pub freed: std::sync::Arc<Mutex<Vec<u64>>>,
    /// For each keeper (a pair or vector whose id passes [`is_keeper`],
    /// allocated `KEEP_REFERENTS`) whose `on_free` ran: its id and, for
    /// each field, the address it held and the id in that object's header
    /// (0 and 0 for null; an ephemeron has no header).
    pub freed_refs: Mutex<Vec<FreedRefs>>,
    /// Extra roots reported through `Embedder::roots`.
    pub globals: Mutex<Vec<usize>>,
    pub traced: AtomicUsize,
    /// `trace` panics on the object with this id (0: never).
    pub panic_trace_id: AtomicU64,
    /// `on_free` panics on the object with this id (0: never), after recording it.
    pub panic_free_id: AtomicU64,
    /// Called by `on_free` after recording (tests that call back into the heap).
    pub free_hook: Mutex<Option<FreeHook>>,
    /// Called by `roots`, inside the pause (tests that read the heap there).
    pub roots_hook: Mutex<Option<Box<dyn Fn() + Send + Sync>>>,
    /// Words reported to `roots` as an ambiguous range (a fake C stack).
    pub ambiguous: Mutex<Vec<usize>>,
    /// Report `ambiguous` with `Tracer::defer_ambiguous_range` instead: its
    /// words copied, far apart, into `deferred` (long enough for the marker
    /// to queue it in pieces), which stays as it is until the next `roots`.
    pub defer_ambiguous: std::sync::atomic::AtomicBool,
    deferred: Mutex<Vec<usize>>,
    /// Every `on_move`: (from, to, old size, new size).
    pub moves: std::sync::Arc<Mutex<Vec<Move>>>,
    /// `resize` answers: object id → the size it wants.
    pub resize_to: Mutex<std::collections::HashMap<u64, usize>>,
}

/// Words of `TestVm::deferred` per ambiguous word.
const DEFER_SPREAD: usize = 40;

pub type TestHeap = Heap<TestVm>;
pub type TestMutator = Mutator<TestVm>;

// SAFETY: `trace` visits every strong reference field of the layout above
// (a weak box's fields are weak slots the collector clears), and `roots`
// every global.
unsafe impl Embedder for TestVm {
    // `trace` only reads the object (the slots it visits are never written
    // while marking): it may run twice for one object, so every test with
    // several GC workers, the model test's included, marks with plain
    // stores and own bits (`collect/own_marks.rs`), as the drop-in does.
    // (The C API's embedder keeps the default: atomic mark bits.)
    const TRACE_TWICE_OK: bool = true;

    fn trace<T: Tracer>(&self, obj: ObjRef, t: &mut T) {
        self.traced.fetch_add(1, Ordering::Relaxed);
        let (tag, len, id) = header(obj);
        if id != 0 && id == self.panic_trace_id.load(Ordering::Relaxed) {
            panic!("test: trace panics on object {id}");
        }
        match tag {
            PAIR | VECTOR => {
                for i in 0..len as usize {
                    // SAFETY: pairs and vectors have `len` pointer fields after the header.
                    t.visit(unsafe { &mut *field_ptr(obj, i) });
                }
            }
            // Weak slots: not visited.
            WEAKBOX => {}
            CONSERV => {
                for i in 0..len as usize {
                    // SAFETY: `len` words after the header.
                    t.visit_ambiguous(unsafe { *field_ptr(obj, i) } as usize);
                }
            }
            BYTES => panic!("byte string {id} was traced although allocated NO_POINTERS"),
            FLAGGED => panic!("object {id} was traced although allocated CONSERVATIVE"),
            _ => panic!("traced a non-object at {obj:?}: tag {tag}"),
        }
    }

    fn roots<T: Tracer>(&self, t: &mut T) {
        if let Some(hook) = &*self.roots_hook.lock() {
            hook();
        }
        for g in self.globals.lock().iter_mut() {
            let mut p = *g as *mut u8;
            t.visit(&mut p);
            *g = p as usize;
        }
        let words = self.ambiguous.lock();
        if self.defer_ambiguous.load(Ordering::Relaxed) {
            // A root range that outlives this call: rebuilt only here (the
            // next pause's roots, or verify mode's walk and compaction's
            // update, both after marking).
            let mut deferred = self.deferred.lock();
            deferred.clear();
            deferred.resize((words.len() * DEFER_SPREAD).max(3 << 10), 0);
            for (i, &w) in words.iter().enumerate() {
                deferred[i * DEFER_SPREAD + i % DEFER_SPREAD] = w;
            }
            let range = deferred.as_ptr_range();
            // SAFETY: the vector's own words; nothing changes or frees them
            // until `roots` runs again, after this collection's marking.
            unsafe { t.defer_ambiguous_range(range.start, range.end) };
            return;
        }
        let range = words.as_ptr_range();
        // SAFETY: the vector's own words, readable while locked.
        unsafe { t.visit_ambiguous_range(range.start, range.end) };
    }

    fn on_move(&self, from: ObjRef, to: ObjRef, old: usize, new: usize) {
        self.moves.lock().push((from.addr(), to.addr(), old, new));
    }

    fn resize(&self, obj: ObjRef, _size: usize) -> Option<usize> {
        let map = self.resize_to.lock();
        if map.is_empty() {
            return None;
        }
        map.get(&header(obj).2).copied()
    }

    fn type_name(&self, obj: ObjRef) -> Option<&str> {
        Some(match header(obj).0 {
            PAIR => "pair",
            VECTOR => "vector",
            BYTES => "bytes",
            WEAKBOX => "weakbox",
            CONSERV => "conservative",
            FLAGGED => "conservative (flag)",
            _ => return None,
        })
    }

    fn on_free(&self, obj: ObjRef) {
        let (tag, len, id) = header(obj);
        self.freed.lock().push(id);
        if (tag == PAIR || tag == VECTOR) && is_keeper(id) {
            // SAFETY: `len` pointer fields after the header, each null or
            // (a keeper: `KEEP_REFERENTS`) an object kept alive until
            // this call.
            let refs = (0..len as usize)
                .map(|i| {
                    let r = ObjRef::from_ptr(unsafe { *field_ptr(obj, i) });
                    r.map_or((0, 0), |r| (r.addr(), header(r).2))
                })
                .collect();
            self.freed_refs.lock().push((id, refs));
        }
        if let Some(hook) = &*self.free_hook.lock() {
            hook(obj);
        }
        if id != 0 && id == self.panic_free_id.load(Ordering::Relaxed) {
            panic!("test: on_free panics on object {id}");
        }
    }
}

pub fn heap(config: Config) -> TestHeap {
    Heap::new(config, TestVm::default()).expect("heap")
}

/// A small heap that collects often: proportional targets (twice the live
/// bytes) over a 256 KiB floor, tiny initial pools.
pub fn small_config() -> Config {
    Config {
        max_heap: 256 << 20,
        heap_policy: mosaic::HeapPolicy::Proportional { k: 1.0 },
        heap_min: 256 << 10,
        initial_slots: 64,
        // Every collection on every GC worker, however small the heap, so
        // that tests with several workers exercise parallel marking.
        parallel_min_live: 0,
        ..Config::default()
    }
}

/// The page store the model test pairs with a worker count: the mutex
/// free list with 4 workers, the lock-free queue otherwise.
pub fn store(gc_threads: usize) -> mosaic::PageResourceKind {
    if gc_threads == 4 {
        mosaic::PageResourceKind::Mutex
    } else {
        mosaic::PageResourceKind::LockFree
    }
}

pub fn header(obj: ObjRef) -> (u32, u32, u64) {
    let p = obj.as_ptr();
    // SAFETY: every object has a 16-byte header.
    unsafe {
        (
            (p as *const u32).read(),
            (p as *const u32).add(1).read(),
            (p.add(8) as *const u64).read(),
        )
    }
}

fn field_ptr(obj: ObjRef, i: usize) -> *mut *mut u8 {
    // SAFETY: callers index fields within the object's length.
    unsafe { (obj.as_ptr().add(HEADER) as *mut *mut u8).add(i) }
}

/// The address of field `i` (a weak box's slot, to register it).
pub fn field_slot(obj: ObjRef, i: usize) -> *mut *mut u8 {
    assert!(i < header(obj).1 as usize);
    field_ptr(obj, i)
}

/// Checks that a fresh allocation is zeroed, then writes its header.
fn init(obj: ObjRef, size: usize, tag: u32, len: u32, id: u64) -> ObjRef {
    // SAFETY: the object has `size` bytes.
    let bytes = unsafe { std::slice::from_raw_parts(obj.as_ptr(), size) };
    assert!(
        bytes.iter().all(|&b| b == 0),
        "allocation of {size} bytes at {obj:?} is not zeroed"
    );
    init_uncleared(obj, tag, len, id)
}

/// Writes the header of a fresh allocation that may hold old bytes.
pub fn init_uncleared(obj: ObjRef, tag: u32, len: u32, id: u64) -> ObjRef {
    // SAFETY: the 16-byte header fits in every object made here.
    unsafe {
        (obj.as_ptr() as *mut u32).write(tag);
        (obj.as_ptr() as *mut u32).add(1).write(len);
        (obj.as_ptr().add(8) as *mut u64).write(id);
    }
    obj
}

/// The model test's vectors and pairs: two of every three promise write
/// barriers (the model's stores call them); the others are rescanned by
/// every minor collection (generational mode; elsewhere the flag changes
/// nothing).
pub fn container_flags(id: u64) -> AllocFlags {
    let keep = if is_keeper(id) {
        AllocFlags::NEEDS_CLEANUP | AllocFlags::KEEP_REFERENTS
    } else {
        AllocFlags::NONE
    };
    if id % 3 == 0 {
        keep
    } else {
        keep | AllocFlags::BARRIERED
    }
}

/// The ids of keepers: the model test's vectors and pairs allocated
/// `NEEDS_CLEANUP | KEEP_REFERENTS` (one in seven), whose `on_free` reads
/// the headers of what they reference ([`TestVm::freed_refs`]).
pub fn is_keeper(id: u64) -> bool {
    id % 7 == 5
}

pub fn new_vector(m: &mut TestMutator, id: u64, len: usize) -> Result<ObjRef, Error> {
    new_vector_with(m, id, len, AllocFlags::NONE)
}

pub fn new_vector_with(
    m: &mut TestMutator,
    id: u64,
    len: usize,
    flags: AllocFlags,
) -> Result<ObjRef, Error> {
    let size = HEADER + 8 * len;
    Ok(init(
        m.alloc_with(size, flags)?,
        size,
        VECTOR,
        len as u32,
        id,
    ))
}

pub fn new_pair(
    m: &mut TestMutator,
    id: u64,
    a: Option<ObjRef>,
    b: Option<ObjRef>,
) -> Result<ObjRef, Error> {
    new_pair_with(m, id, a, b, AllocFlags::NONE)
}

pub fn new_pair_with(
    m: &mut TestMutator,
    id: u64,
    a: Option<ObjRef>,
    b: Option<ObjRef>,
    flags: AllocFlags,
) -> Result<ObjRef, Error> {
    let size = HEADER + 16;
    let p = init(m.alloc_with(size, flags)?, size, PAIR, 2, id);
    set_field(p, 0, a);
    set_field(p, 1, b);
    // Initialising stores are stores too (the object is young: a no-op).
    m.write_barrier(p);
    Ok(p)
}

/// A conservatively scanned object: `len` words, each visited as an
/// ambiguous word (any value; one pointing into an object keeps it alive
/// and in place).
pub fn new_conservative(m: &mut TestMutator, id: u64, len: usize) -> Result<ObjRef, Error> {
    let size = HEADER + 8 * len;
    Ok(init(m.alloc(size)?, size, CONSERV, len as u32, id))
}

/// Like [`new_conservative`], but allocated `AllocFlags::CONSERVATIVE`:
/// the collector reads its words itself (header included, whose small
/// numbers point nowhere).
pub fn new_flagged_conservative(m: &mut TestMutator, id: u64, len: usize) -> Result<ObjRef, Error> {
    let size = HEADER + 8 * len;
    let o = m.alloc_with(size, AllocFlags::CONSERVATIVE)?;
    Ok(init(o, size, FLAGGED, len as u32, id))
}

/// Stores a raw word in field `i` of an object (a conservative object's).
pub fn set_word(obj: ObjRef, i: usize, w: usize) {
    // SAFETY: callers pass an object with more than `i` fields.
    unsafe { *field_ptr(obj, i) = w as *mut u8 };
}

/// A weak box: `len` pointer fields that `trace` does not visit.
pub fn new_weakbox(m: &mut TestMutator, id: u64, len: usize) -> Result<ObjRef, Error> {
    let size = HEADER + 8 * len;
    Ok(init(m.alloc(size)?, size, WEAKBOX, len as u32, id))
}

/// A byte string filled with `pattern(id, i)`.
pub fn new_bytes(
    m: &mut TestMutator,
    id: u64,
    len: usize,
    flags: AllocFlags,
) -> Result<ObjRef, Error> {
    let size = HEADER + len;
    let o = m.alloc_with(size, flags | AllocFlags::NO_POINTERS)?;
    let o = if flags.contains(AllocFlags::UNINIT) {
        init_uncleared(o, BYTES, len as u32, id)
    } else {
        init(o, size, BYTES, len as u32, id)
    };
    fill_bytes(o, id as u8);
    Ok(o)
}

pub fn pattern(seed: u8, i: usize) -> u8 {
    seed.wrapping_mul(31).wrapping_add(i as u8)
}

pub fn fill_bytes(o: ObjRef, seed: u8) {
    let (_, len, _) = header(o);
    for i in 0..len as usize {
        // SAFETY: byte strings hold `len` bytes after the header.
        unsafe { o.as_ptr().add(HEADER + i).write(pattern(seed, i)) }
    }
}

pub fn bytes_match(o: ObjRef, seed: u8) -> bool {
    let (_, len, _) = header(o);
    // SAFETY: as in fill_bytes.
    (0..len as usize).all(|i| unsafe { o.as_ptr().add(HEADER + i).read() } == pattern(seed, i))
}

pub fn field(obj: ObjRef, i: usize) -> Option<ObjRef> {
    assert!(i < header(obj).1 as usize);
    // SAFETY: in bounds (checked).
    ObjRef::from_ptr(unsafe { field_ptr(obj, i).read() })
}

pub fn set_field(obj: ObjRef, i: usize, v: Option<ObjRef>) {
    assert!(i < header(obj).1 as usize);
    // SAFETY: in bounds (checked).
    unsafe { field_ptr(obj, i).write(v.map_or(std::ptr::null_mut(), |o| o.as_ptr())) }
}

/// Ids of every object reachable from `roots` by following strong fields.
pub fn reachable_ids(roots: impl IntoIterator<Item = ObjRef>) -> BTreeSet<u64> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<ObjRef> = roots.into_iter().collect();
    let mut addrs = std::collections::HashSet::new();
    while let Some(o) = stack.pop() {
        if !addrs.insert(o) {
            continue;
        }
        let (tag, len, id) = header(o);
        seen.insert(id);
        if tag == PAIR || tag == VECTOR {
            stack.extend((0..len as usize).filter_map(|i| field(o, i)));
        }
    }
    seen
}

/// Hides the messages of the panics tests provoke on purpose (they contain
/// "test: "); every other panic is reported as usual.
pub fn quiet_expected_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.to_string().contains("test: ") {
                default(info);
            }
        }));
    });
}
