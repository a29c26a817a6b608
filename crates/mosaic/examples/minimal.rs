//! A minimal Rust embedder: a tiny interpreter's values (integers, cons
//! cells, strings) living in a Mosaic heap.
//!
//! Run with `cargo run --release -p mosaic-example-minimal` (this file is
//! also the mosaic crate's example `minimal`, which builds its
//! dev-dependencies first).

use mosaic::{AllocFlags, Config, Embedder, Heap, ObjRef, Tracer};

/// Every value starts with a tag word.
#[repr(C)]
struct Cons {
    tag: u64,
    car: *mut u8,
    cdr: *mut u8,
}

#[repr(C)]
struct Str {
    tag: u64,
    len: u64,
    bytes: [u8; 32],
}

const CONS: u64 = 1;
const STR: u64 = 2;

/// The runtime: knows its object layouts, has no roots of its own (the
/// example keeps its roots in Mosaic handles).
struct Vm;

// SAFETY: `trace` reports both reference fields of every cons cell; strings
// are allocated NO_POINTERS and never traced.
unsafe impl Embedder for Vm {
    fn trace<T: Tracer>(&self, obj: ObjRef, t: &mut T) {
        // SAFETY: every traced object is a cons cell.
        let c = unsafe { &mut *(obj.as_ptr() as *mut Cons) };
        debug_assert_eq!(c.tag, CONS);
        t.visit(&mut c.car);
        t.visit(&mut c.cdr);
    }

    fn roots<T: Tracer>(&self, _: &mut T) {}
}

fn string(m: &mut mosaic::Mutator<Vm>, text: &str) -> ObjRef {
    let o = m
        .alloc_with(std::mem::size_of::<Str>(), AllocFlags::NO_POINTERS)
        .expect("alloc");
    // SAFETY: a fresh, zeroed allocation of the right size.
    let s = unsafe { &mut *(o.as_ptr() as *mut Str) };
    s.tag = STR;
    s.len = text.len().min(32) as u64;
    s.bytes[..s.len as usize].copy_from_slice(&text.as_bytes()[..s.len as usize]);
    o
}

fn cons(m: &mut mosaic::Mutator<Vm>, car: ObjRef, cdr: Option<ObjRef>) -> ObjRef {
    let o = m.alloc(std::mem::size_of::<Cons>()).expect("alloc");
    // SAFETY: a fresh, zeroed allocation of the right size.
    let c = unsafe { &mut *(o.as_ptr() as *mut Cons) };
    c.tag = CONS;
    c.car = car.as_ptr();
    c.cdr = cdr.map_or(std::ptr::null_mut(), |o| o.as_ptr());
    o
}

fn main() {
    let live = run();
    println!("live objects after the last collection: {live}");
}

/// Builds a list of 10 000 strings while making a million garbage cells,
/// collects, and checks the list. Returns the number of live objects found.
pub fn run() -> u64 {
    let heap = Heap::new(Config::from_env().expect("MOSAIC_* variables"), Vm).expect("heap");
    let mut m = heap.mutator().unwrap();
    let list = m.empty_root();
    for i in 0..10_000 {
        let s = string(&mut m, &format!("value {i}"));
        let keep = m.root(s).unwrap(); // `cons` may collect: keep `s` alive
        let cell = cons(&mut m, keep.get().unwrap(), list.get());
        list.set(Some(cell));
        for _ in 0..100 {
            let junk = string(&mut m, "garbage");
            cons(&mut m, junk, None);
        }
    }
    m.collect();
    let mut n = 10_000;
    let mut cur = list.get();
    while let Some(cell) = cur {
        n -= 1;
        // SAFETY: the list holds cons cells whose car is a string.
        let (c, s) = unsafe {
            let c = &*(cell.as_ptr() as *const Cons);
            (c, &*(c.car as *const Str))
        };
        assert_eq!(&s.bytes[..s.len as usize], format!("value {n}").as_bytes());
        cur = ObjRef::from_ptr(c.cdr);
    }
    assert_eq!(n, 0);
    let stats = heap.stats();
    println!("{stats}");
    stats.last_marked
}
