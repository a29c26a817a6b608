//! Variable-size objects (seeds 000/002): a table of records with string
//! payloads of 16 B to 4 KiB (power-law sizes), under steady churn: each step
//! replaces a random record. Three layouts:
//!
//! - `mosaic`: payloads inline, Mosaic's default size classes;
//! - `ruby`: Ruby's five pools (40…640 B); a record that does not fit in
//!   640 B keeps its payload in `malloc` memory, as Ruby does;
//! - `pool40`: every record is a 40-byte slot pointing at a `malloc`'d
//!   payload (the design before size pools).
//!
//! Out-of-line payloads are freed by `on_free` (records are NEEDS_CLEANUP).
//! Check value: a checksum over the final table, identical in all layouts.

use std::time::{Duration, Instant};

use mosaic::{AllocFlags, Config, Heap, Mutator, ObjRef, Root, SizeClassPreset};
use serde::{Deserialize, Serialize};

use super::Rng;
use crate::vm::{Counted, Vm};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    Mosaic,
    Ruby,
    Pool40,
}

impl Layout {
    pub const ALL: [Layout; 3] = [Layout::Mosaic, Layout::Ruby, Layout::Pool40];

    pub fn name(self) -> &'static str {
        match self {
            Layout::Mosaic => "mosaic",
            Layout::Ruby => "ruby",
            Layout::Pool40 => "pool40",
        }
    }

    fn classes(self) -> SizeClassPreset {
        match self {
            Layout::Mosaic => SizeClassPreset::Mosaic,
            Layout::Ruby => SizeClassPreset::Ruby,
            Layout::Pool40 => SizeClassPreset::Custom(vec![40]),
        }
    }

    /// Largest inline record (header + payload) for this layout.
    fn max_inline(self) -> usize {
        match self {
            Layout::Mosaic => usize::MAX,
            Layout::Ruby => 640,
            Layout::Pool40 => 0,
        }
    }
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Params {
    pub records: usize,
    pub steps: usize,
}

/// Record header: payload length (u32), out-of-line flag (u32), the seed
/// its bytes were generated from (u64); then the payload bytes inline, or a
/// pointer to malloc'd bytes.
const HEADER: usize = 16;

pub type RecordVm = Vm<Counted>;

fn free_payload(obj: ObjRef) {
    // SAFETY: cleanup records are out-of-line records: header, then the
    // pointer malloc returned.
    unsafe {
        let p = (obj.as_ptr().add(HEADER) as *const *mut libc::c_void).read();
        libc::free(p);
    }
}

#[inline]
fn byte(seed: u64, i: usize) -> u8 {
    (seed as usize).wrapping_mul(13).wrapping_add(i * 7) as u8
}

/// Checks a record's bytes against its seed; returns its contribution to
/// the check value.
fn verify(rec: ObjRef) -> u64 {
    // SAFETY: records have the header above and their payload.
    unsafe {
        let h = rec.as_ptr();
        let len = (h as *const u32).read() as usize;
        let out = (h as *const u32).add(1).read() != 0;
        let seed = (h.add(8) as *const u64).read();
        let p = if out {
            (h.add(HEADER) as *const *const u8).read()
        } else {
            h.add(HEADER) as *const u8
        };
        for i in 0..len {
            assert_eq!(
                p.add(i).read(),
                byte(seed, i),
                "record {seed} byte {i} changed"
            );
        }
        seed.wrapping_mul(4099).wrapping_add(len as u64)
    }
}

/// A heap with `layout`'s size classes on top of `config`.
pub fn heap(layout: Layout, config: Config) -> Heap<RecordVm> {
    let config = Config {
        size_classes: layout.classes(),
        ..config
    };
    Heap::new(config, RecordVm::with_cleanup(free_payload)).expect("heap")
}

/// The churn: a table of `p.records` records (rooted, returned), each step
/// replacing a random one.
pub fn churn(layout: Layout, p: &Params, m: &mut Mutator<RecordVm>) -> Root {
    let table = m.alloc(8 * (p.records + 1)).expect("table");
    // SAFETY: the table is a counted vector: its length, then references.
    unsafe { (table.as_ptr() as *mut usize).write(p.records) };
    let root = m.root(table).unwrap();
    // SAFETY: the references follow the length word.
    let slots = unsafe { (table.as_ptr() as *mut *mut u8).add(1) };
    let mut rng = Rng::new(7);
    for step in 0..p.steps {
        let idx = (rng.next_u64() % p.records as u64) as usize;
        let len = rng.power_law_size() - 16;
        let inline = HEADER + len <= layout.max_inline();
        let size = if inline { HEADER + len } else { HEADER + 8 };
        let flags = if inline {
            AllocFlags::NO_POINTERS
        } else {
            AllocFlags::NO_POINTERS | AllocFlags::NEEDS_CLEANUP
        };
        let rec = m.alloc_with(size, flags).expect("record");
        let h = rec.as_ptr();
        // SAFETY: a fresh record of `size` bytes.
        unsafe {
            (h as *mut u32).write(len as u32);
            (h as *mut u32).add(1).write(!inline as u32);
            let payload = if inline {
                h.add(HEADER)
            } else {
                let q = libc::malloc(len.max(1)) as *mut u8;
                assert!(!q.is_null(), "malloc failed");
                (h.add(HEADER) as *mut *mut u8).write(q);
                q
            };
            for i in 0..len {
                payload.add(i).write(byte(step as u64, i));
            }
            (h.add(8) as *mut u64).write(step as u64);
            slots.add(idx).write(h);
        }
    }
    root
}

/// The check value over the table's records (each one's bytes verified).
pub fn checksum(table: ObjRef, records: usize) -> u64 {
    // SAFETY: the references follow the length word.
    let slots = unsafe { (table.as_ptr() as *const *mut u8).add(1) };
    let mut check = 0u64;
    for i in 0..records {
        // SAFETY: in bounds of the table.
        if let Some(r) = ObjRef::from_ptr(unsafe { slots.add(i).read() }) {
            check = check.wrapping_mul(1_000_003).wrapping_add(verify(r));
        }
    }
    check
}

/// Runs the churn with `layout`'s size classes on top of `config`; returns
/// the check value, the heap and the time of the churn and the final check
/// (heap creation not included).
pub fn run(layout: Layout, p: &Params, config: Config) -> (u64, Heap<RecordVm>, Duration) {
    let heap = heap(layout, config);
    let start = Instant::now();
    let mut m = heap.mutator().unwrap();
    let table = churn(layout, p, &mut m);
    let check = checksum(table.get().expect("table"), p.records);
    drop(table);
    drop(m);
    (check, heap, start.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layout_keeps_the_same_records() {
        let p = Params {
            records: 2000,
            steps: 30_000,
        };
        let checks: Vec<u64> = Layout::ALL
            .iter()
            .map(|&l| {
                let config = Config {
                    max_heap: 256 << 20,
                    ..Config::default()
                };
                run(l, &p, config).0
            })
            .collect();
        assert!(checks[0] != 0);
        assert_eq!(checks[0], checks[1]);
        assert_eq!(checks[0], checks[2]);
    }
}
