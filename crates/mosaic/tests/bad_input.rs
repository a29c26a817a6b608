//! Bad input gets a clear error and loses nothing.

mod common;

use common::*;
use mosaic::{AllocFlags, Config, Error, ObjRef, PAGE_SIZE};

#[test]
fn size_zero_returns_distinct_usable_objects() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let a = m.alloc(0).unwrap();
    let b = m.alloc(0).unwrap();
    assert_ne!(a, b);
    assert!(heap.is_object(a.as_ptr()));
    assert_eq!(heap.object_size(a).unwrap(), 16);
}

#[test]
fn sizes_beyond_the_maximum_are_refused_and_the_heap_keeps_working() {
    let heap = heap(Config {
        max_heap: 16 << 20,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let keep = new_pair(&mut m, 1, None, None).unwrap();
    let _r = m.root(keep).unwrap();
    for size in [usize::MAX, usize::MAX - 7, (16 << 20) + 1, 1 << 40] {
        match m.alloc(size) {
            Err(Error::TooLarge { requested, max }) => {
                assert_eq!((requested, max), (size, 16 << 20));
                let msg = Error::TooLarge { requested, max }.to_string();
                assert!(msg.contains("object too large"), "{msg}");
            }
            other => panic!("{size}: {other:?}"),
        }
    }
    assert_eq!(header(keep).2, 1);
    let p = new_pair(&mut m, 2, Some(keep), None).unwrap();
    assert_eq!(field(p, 0), Some(keep));
}

#[test]
fn heap_exhaustion_is_an_error_and_the_heap_recovers() {
    let heap = heap(Config {
        max_heap: 8 << 20,
        ..small_config()
    });
    let mut m = heap.mutator().unwrap();
    let list = m.empty_root();
    let mut n = 0u64;
    let err = loop {
        match new_vector(&mut m, n, 30) {
            Ok(v) => {
                set_field(v, 0, list.get());
                list.set(Some(v));
                n += 1;
            }
            Err(e) => break e,
        }
    };
    match &err {
        Error::OutOfMemory {
            requested,
            max_heap,
        } => assert_eq!((*requested, *max_heap), (HEADER + 240, 8 << 20)),
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("out of memory"), "{err}");
    // 256-byte slots in 8 MiB: nearly all of it was usable.
    assert!(
        n as usize > (8 << 20) / 256 * 9 / 10,
        "only {n} objects fit"
    );
    // Nothing was lost: the whole list is intact.
    assert_eq!(reachable_ids(list.get()).len() as u64, n);
    // A large request also fails cleanly while the heap is full.
    assert!(matches!(
        m.alloc(3 * PAGE_SIZE),
        Err(Error::OutOfMemory { .. })
    ));
    // Dropping the list makes room again, for small and large objects.
    list.set(None);
    for i in 0..n {
        new_vector(&mut m, i, 30).unwrap();
    }
    let big = m.alloc(4 << 20).unwrap();
    assert!(heap.is_object(big.as_ptr()));
}

#[test]
fn foreign_interior_and_freed_pointers_are_rejected() {
    let heap = heap(small_config());
    let mut m = heap.mutator().unwrap();
    let on_stack = 5u64;
    let stack_ptr = ObjRef::from_ptr(&on_stack as *const u64 as *mut u8).unwrap();
    let boxed = Box::new([0u8; 64]);
    let malloc_ptr = ObjRef::from_ptr(boxed.as_ptr() as *mut u8).unwrap();
    let obj = new_pair(&mut m, 1, None, None).unwrap();
    let interior = ObjRef::from_ptr(obj.as_ptr().wrapping_add(8)).unwrap();
    for bad in [stack_ptr, malloc_ptr, interior] {
        match m.root(bad) {
            Err(Error::ForeignPointer { addr }) => assert_eq!(addr, bad.addr()),
            other => panic!("{bad:?}: {other:?}"),
        }
        assert!(matches!(
            heap.object_size(bad),
            Err(Error::ForeignPointer { .. })
        ));
        assert!(!heap.is_object(bad.as_ptr()));
    }
    assert!(heap.check_object(std::ptr::null()).is_err());
    // A dead object's address stops being an object once it is swept.
    m.collect();
    m.finish_sweep();
    let e = m.root(obj).unwrap_err();
    assert!(
        e.to_string()
            .contains("is not the start of an object allocated by this heap"),
        "{e}"
    );
    // Another heap's object is foreign here.
    let other = common::heap(small_config());
    let mut m2 = other.mutator().unwrap();
    let theirs = m2.alloc(32).unwrap();
    assert!(m.root(theirs).is_err());
}

#[test]
fn unknown_flag_bits_are_refused() {
    assert_eq!(AllocFlags::from_bits(128), None);
    assert_eq!(AllocFlags::from_bits(64), Some(AllocFlags::KEEP_REFERENTS));
    assert_eq!(AllocFlags::from_bits(32), Some(AllocFlags::BARRIERED));
    assert_eq!(AllocFlags::from_bits(16), Some(AllocFlags::CONSERVATIVE));
    assert_eq!(
        AllocFlags::from_bits(3),
        Some(AllocFlags::NO_POINTERS | AllocFlags::NEEDS_CLEANUP)
    );
}

#[test]
fn bad_configuration_is_an_error_not_a_crash() {
    for (c, needle) in [
        (
            Config {
                max_heap: 100,
                ..Config::default()
            },
            "max_heap",
        ),
        (
            Config {
                growth_factor: 0.5,
                ..Config::default()
            },
            "growth_factor",
        ),
        (
            Config {
                free_goal_ratio: 0.9,
                ..Config::default()
            },
            "free_min_ratio",
        ),
        (
            Config {
                sweep_step_pages: 0,
                ..Config::default()
            },
            "sweep_step_pages",
        ),
        (
            Config {
                size_classes: mosaic::SizeClassPreset::Custom(vec![24, 16]),
                ..Config::default()
            },
            "ascend",
        ),
    ] {
        let e = mosaic::Heap::new(c, TestVm::default())
            .err()
            .expect("must fail");
        assert!(e.to_string().contains(needle), "{e}");
    }
}
