//! Finalizers and ephemerons (`--only finalizers`, `--only ephemerons`):
//! what registering a finalizer and filling a weak-keyed table cost, on
//! Mosaic's public API. The C peers (`peers/c/finalizers.c`,
//! `peers/c/ephemerons.c`) and the Java peers (`peers/java/Finalizers.java`,
//! `peers/java/Ephemerons.java`) do the same steps.
//!
//! - [`finalizers`]: `n` list nodes (16 bytes: next, id) held by a root; a
//!   timed loop registers an unordered finalizer per node (a closure that
//!   captures nothing and increments a counter); the list is dropped, a
//!   collection runs and the finalizers run. Check: every one ran.
//! - [`ephemerons`]: `n` ephemerons key → value (two fresh 16-byte objects
//!   holding the entry's id) in a rooted array, the keys held strongly by a
//!   second array while the table is filled; then every 10th key is kept
//!   (a third array), the others dropped, and a collection runs. Check:
//!   exactly the dropped keys' entries read null, and every kept entry
//!   still maps its key to the value with the same id.
//!
//! Both time their whole body (allocation included, heap creation
//! excluded) and read the process's VmRSS around the registration or
//! insertion loop.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use mosaic::{AllocFlags, Config, FinalizerOrder, Heap, Mutator, ObjRef};

use crate::vm::{Counted, FirstWords, ShadowStack, Vm};

/// List nodes: `next` first (the one reference), then the id.
pub type ListVm = Vm<FirstWords<1>>;

/// Arrays start with their length (then that many references); keys and
/// values are allocated `NO_POINTERS` and never traced.
pub type TableVm = Vm<Counted>;

/// The default number of nodes or entries (the same in every peer).
pub const DEFAULT_N: usize = 781_000;

/// Bytes of one key plus one value as Mosaic allocates them (two 16-byte
/// objects; Mosaic has no object header).
pub const KEY_VALUE_BYTES: usize = 32;

/// Resident memory of this process (VmRSS), KiB; 0 if unreadable.
pub fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

#[inline]
fn word(o: ObjRef, i: usize) -> usize {
    // SAFETY: callers read words inside the object (layouts above).
    unsafe { (o.as_ptr() as *const usize).add(i).read() }
}

#[inline]
fn set_word(o: ObjRef, i: usize, v: usize) {
    // SAFETY: callers write words inside the object (layouts above).
    unsafe { (o.as_ptr() as *mut usize).add(i).write(v) }
}

/// What [`finalizers`] measured.
#[derive(Clone, Debug)]
pub struct FinalizerRun {
    pub n: usize,
    /// Finalizers that ran (must be `n`).
    pub ran: u64,
    /// The registration loop's time per finalizer.
    pub ns_per_register: f64,
    /// VmRSS after the registration loop minus before it, per finalizer.
    pub bytes_per_finalizer: f64,
    /// Allocation, registration, collection and running the finalizers.
    pub total: Duration,
}

impl FinalizerRun {
    pub fn ok(&self) -> bool {
        self.ran == self.n as u64
    }
}

/// Finalizers run by [`finalizers`] (a static, so that the closure
/// registered per node captures nothing, as a C function pointer).
static RAN: AtomicU64 = AtomicU64::new(0);

/// Collections tried before giving up on finalizers that did not run.
const MAX_ROUNDS: usize = 10;

/// The finalizer workload (see the module doc).
pub fn finalizers(n: usize, config: Config) -> (FinalizerRun, Heap<ListVm>) {
    let heap = Heap::new(config, ListVm::default()).expect("heap");
    let mut m = heap.mutator().expect("mutator");
    let s = heap.embedder().stack(&mut m, 4);
    RAN.store(0, Relaxed);
    let start = Instant::now();
    build_list(&mut m, &s, n);
    let before = rss_kb();
    let t = Instant::now();
    let mut x = (n > 0).then(|| s.get(0));
    // No allocation in this loop: nothing collects, nothing moves.
    while let Some(node) = x {
        m.register_finalizer(node, FinalizerOrder::Unordered, |_, _| {
            RAN.fetch_add(1, Relaxed);
        })
        .expect("register a finalizer");
        x = ObjRef::from_ptr(word(node, 0) as *mut u8);
    }
    let register = t.elapsed();
    let after = rss_kb();
    s.truncate(0);
    for _ in 0..MAX_ROUNDS {
        m.collect();
        m.run_finalizers().expect("run finalizers");
        if RAN.load(Relaxed) >= n as u64 {
            break;
        }
    }
    let total = start.elapsed();
    drop(m);
    let per = |x: f64| if n == 0 { 0.0 } else { x / n as f64 };
    let run = FinalizerRun {
        n,
        ran: RAN.load(Relaxed),
        ns_per_register: per(register.as_nanos() as f64),
        bytes_per_finalizer: per(after.saturating_sub(before) as f64 * 1024.0),
        total,
    };
    (run, heap)
}

/// `n` nodes (next, id), the list's head in slot 0 of `s`.
fn build_list(m: &mut Mutator<ListVm>, s: &ShadowStack, n: usize) {
    for i in 0..n {
        let x = m.alloc_sized::<16>(AllocFlags::NONE).expect("node");
        if i == 0 {
            s.push(x);
        } else {
            set_word(x, 0, s.get(0).addr());
            s.set(0, x);
        }
        set_word(x, 1, i);
    }
}

/// What [`ephemerons`] measured.
#[derive(Clone, Debug)]
pub struct EphemeronRun {
    pub n: usize,
    /// Kept keys (every 10th entry).
    pub kept: usize,
    /// Kept entries that still map their key to the value with its id.
    pub kept_ok: usize,
    /// Dropped keys' entries whose key and value read null.
    pub cleared_ok: usize,
    /// The insertion loop's time per entry (key, value and ephemeron
    /// allocated, stored in the table).
    pub ns_per_insert: f64,
    /// VmRSS after the insertion loop minus before it, per entry (key and
    /// value included).
    pub rss_bytes_per_entry: f64,
    /// Allocation, insertion, dropping the keys and the collection.
    pub total: Duration,
}

impl EphemeronRun {
    pub fn ok(&self) -> bool {
        self.kept_ok == self.kept && self.cleared_ok == self.n - self.kept
    }
}

/// Entries whose key is kept: every 10th (ids 0, 10, 20, …).
pub fn kept_count(n: usize) -> usize {
    n.div_ceil(10)
}

/// An array of `len` references (zeroed), its length in word 0.
fn array(m: &mut Mutator<TableVm>, len: usize) -> ObjRef {
    let a = m.alloc(8 * (len + 1)).expect("array");
    set_word(a, 0, len);
    a
}

/// A 16-byte pointer-free object holding `id`.
#[inline]
fn boxed_id(m: &mut Mutator<TableVm>, id: usize) -> ObjRef {
    let o = m
        .alloc_sized::<16>(AllocFlags::NO_POINTERS)
        .expect("16-byte object");
    set_word(o, 0, id);
    o
}

/// The ephemeron workload (see the module doc).
pub fn ephemerons(n: usize, config: Config) -> (EphemeronRun, Heap<TableVm>) {
    let heap = Heap::new(config, TableVm::default()).expect("heap");
    let mut m = heap.mutator().expect("mutator");
    let s = heap.embedder().stack(&mut m, 4);
    let start = Instant::now();
    // Slot 0: every key, strongly, while the table is filled.
    let keys = array(&mut m, n);
    s.push(keys);
    let before = rss_kb();
    let t = Instant::now();
    // Slot 1: the table.
    let table = array(&mut m, n);
    s.push(table);
    for i in 0..n {
        let k = boxed_id(&mut m, i);
        set_word(s.get(0), 1 + i, k.addr());
        let v = boxed_id(&mut m, i);
        // Allocating v may have collected (and moved k): read it again.
        let k = ObjRef::from_ptr(word(s.get(0), 1 + i) as *mut u8);
        let e = m.alloc_ephemeron(k, Some(v)).expect("ephemeron");
        set_word(s.get(1), 1 + i, e.addr());
    }
    let insert = t.elapsed();
    let after = rss_kb();
    let kept = kept_count(n);
    let kept_keys = array(&mut m, kept);
    for j in 0..kept {
        set_word(kept_keys, 1 + j, word(s.get(0), 1 + 10 * j));
    }
    // The kept keys replace every key in slot 0.
    s.set(0, kept_keys);
    m.collect();
    let total = start.elapsed();
    let (table, kept_keys) = (s.get(1), s.get(0));
    let id = |o: Option<ObjRef>| o.map(|o| word(o, 0));
    let (mut kept_ok, mut cleared_ok) = (0, 0);
    for i in 0..n {
        let e = ObjRef::from_ptr(word(table, 1 + i) as *mut u8).expect("ephemeron");
        let key = heap.ephemeron_key(e).expect("an ephemeron");
        let value = heap.ephemeron_value(e).expect("an ephemeron");
        if i % 10 == 0 {
            let held = ObjRef::from_ptr(word(kept_keys, 1 + i / 10) as *mut u8);
            if key.is_some() && key == held && id(key) == Some(i) && id(value) == Some(i) {
                kept_ok += 1;
            }
        } else if key.is_none() && value.is_none() {
            cleared_ok += 1;
        }
    }
    s.truncate(0);
    drop(m);
    let per = |x: f64| if n == 0 { 0.0 } else { x / n as f64 };
    let run = EphemeronRun {
        n,
        kept,
        kept_ok,
        cleared_ok,
        ns_per_insert: per(insert.as_nanos() as f64),
        rss_bytes_per_entry: per(after.saturating_sub(before) as f64 * 1024.0),
        total,
    };
    (run, heap)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Config {
        Config {
            verify: true,
            heap_min: 256 << 10,
            ..Config::default()
        }
    }

    #[test]
    fn every_finalizer_runs_once() {
        let (r, heap) = finalizers(20_000, small());
        assert!(r.ok(), "{r:?}");
        assert_eq!(heap.registered_finalizers(), 0);
        assert_eq!(heap.pending_finalizers(), 0);
    }

    #[test]
    fn exactly_the_dropped_keys_entries_are_cleared() {
        let (r, heap) = ephemerons(20_001, small());
        assert_eq!(r.kept, 2001);
        assert!(r.ok(), "{r:?}");
        assert!(heap.stats().collections > 1, "collections while filling");
    }
}
