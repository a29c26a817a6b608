//! Heap dumps: one JSON object per line, like Ruby's `ObjectSpace.dump_all`.
//!
//! Lines, in order: one `HEAP` line (page size, pages in use, objects);
//! one `PAGE` line per small-object page in address order (pool, slot
//! size, slots, live and pinned counts); one `OBJECT` line per live
//! object (address, page, slot, pool, size, pinned, flags, and the
//! embedder's type name when `Embedder::type_name` gives one); large
//! objects have `"large":true` and no slot. The world is stopped and every
//! page swept while the dump is written, so it is one consistent moment.
//! `mosaic-heapviz` draws a dump as seed 001's heap diagrams.

use std::fmt::Write as _;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::collect::HeapCore;
use crate::embedder::Embedder;
use crate::error::Error;
use crate::object::ObjRef;
use crate::space::{PageDesc, PAGE_SIZE};

use super::mutator::Mutator;

/// What a heap dump wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DumpSummary {
    pub pages: usize,
    pub objects: usize,
    pub pinned: usize,
}

impl<E: Embedder> Mutator<E> {
    /// Writes a heap dump to `path` (see the module docs of the format:
    /// JSON lines). Stops the world while writing; does not collect.
    pub fn dump_heap(&mut self, path: impl AsRef<Path>) -> Result<DumpSummary, Error> {
        self.check_usable("dump the heap")?;
        let path = path.as_ref();
        let io = |error| Error::Io {
            what: format!("writing the heap dump {}", path.display()),
            error,
        };
        let file = std::fs::File::create(path).map_err(io)?;
        let mut out = BufWriter::new(file);
        self.with_world_stopped(|core| write_dump(core, &mut out))
            .and_then(|s| out.flush().map(|_| s))
            .map_err(io)
    }
}

fn flags(d: &PageDesc, slot: usize, pinned: bool) -> String {
    let mut f = Vec::new();
    if pinned {
        f.push("\"PINNED\"");
    }
    if d.no_pointers.get(slot) {
        f.push("\"NO_POINTERS\"");
    }
    if d.cleanup.get(slot) {
        f.push("\"NEEDS_CLEANUP\"");
    }
    if d.keep_referents.get(slot) {
        f.push("\"KEEP_REFERENTS\"");
    }
    f.join(",")
}

fn type_name<E: Embedder>(core: &HeapCore<E>, obj: usize) -> String {
    match core.embedder.type_name(ObjRef::from_heap_addr(obj)) {
        None => String::new(),
        Some(name) => {
            let mut s = String::from(",\"type_name\":\"");
            for c in name.chars() {
                match c {
                    '"' => s.push_str("\\\""),
                    '\\' => s.push_str("\\\\"),
                    c if (c as u32) < 0x20 => {
                        let _ = write!(s, "\\u{:04x}", c as u32);
                    }
                    c => s.push(c),
                }
            }
            s.push('"');
            s
        }
    }
}

fn write_dump<E: Embedder>(
    core: &HeapCore<E>,
    out: &mut impl Write,
) -> std::io::Result<DumpSummary> {
    let table = &core.table;
    let mut pages: Vec<usize> = core.pools.iter().flat_map(|p| p.pages()).collect();
    pages.sort_unstable();
    let large = core.large.objects(table);
    let objects: usize = pages
        .iter()
        .map(|&p| table.desc(p).alloc.count())
        .sum::<usize>()
        + large.len();
    writeln!(
        out,
        "{{\"type\":\"HEAP\",\"page_size\":{PAGE_SIZE},\"pages_in_use\":{},\"objects\":{objects}}}",
        core.resource.in_use_pages()
    )?;
    let pinned_at =
        |d: &PageDesc, slot: usize, addr: usize| d.pin.get(slot) || core.pins.is_pinned(addr);
    let mut summary = DumpSummary {
        pages: pages.len(),
        objects,
        pinned: 0,
    };
    for &p in &pages {
        let d = table.desc(p);
        let base = table.page_addr(p);
        let mut pinned = 0;
        d.alloc.for_each_set(d.slot_count(), |s| {
            pinned += pinned_at(d, s, base + s * d.slot_size()) as usize;
        });
        writeln!(
            out,
            "{{\"type\":\"PAGE\",\"page\":{p},\"address\":\"{base:#x}\",\"pool\":{},\"slot_size\":{},\"slots\":{},\"live\":{},\"pinned\":{pinned}}}",
            d.pool(),
            d.slot_size(),
            d.slot_count(),
            d.alloc.count(),
        )?;
    }
    for &p in &pages {
        let d = table.desc(p);
        let base = table.page_addr(p);
        let mut err = Ok(());
        d.alloc.for_each_set(d.slot_count(), |s| {
            let a = base + s * d.slot_size();
            let pinned = pinned_at(d, s, a);
            summary.pinned += pinned as usize;
            if err.is_ok() {
                err = writeln!(
                    out,
                    "{{\"type\":\"OBJECT\",\"address\":\"{a:#x}\",\"page\":{p},\"slot\":{s},\"pool\":{},\"size\":{},\"pinned\":{pinned},\"flags\":[{}]{}}}",
                    d.pool(),
                    d.slot_size(),
                    flags(d, s, pinned),
                    type_name(core, a),
                );
            }
        });
        err?;
    }
    for a in large {
        let head = table.page_index(a).expect("large object in the heap");
        let d = table.desc(head);
        let pinned = pinned_at(d, 0, a);
        summary.pinned += pinned as usize;
        writeln!(
            out,
            "{{\"type\":\"OBJECT\",\"address\":\"{a:#x}\",\"page\":{head},\"size\":{},\"large\":true,\"pinned\":{pinned},\"flags\":[{}]{}}}",
            d.large_size(),
            flags(d, 0, pinned),
            type_name(core, a),
        )?;
    }
    Ok(summary)
}

impl<E: Embedder> Mutator<E> {
    /// Calls `f(object, size)` for every object allocated now (with the
    /// world stopped and every page swept, as for a heap dump): sizes are
    /// slot sizes, or a large object's size. `f` runs as a collector
    /// callback (it cannot allocate or collect). The Boehm collector's
    /// `GC_enumerate_reachable_objects_inner`.
    pub fn for_each_object(&mut self, mut f: impl FnMut(ObjRef, usize)) {
        self.with_world_stopped(|core| {
            let table = &core.table;
            for pool in core.pools.iter() {
                for p in pool.pages() {
                    let d = table.desc(p);
                    let (base, size) = (table.page_addr(p), d.slot_size());
                    d.alloc.for_each_set(d.slot_count(), |s| {
                        f(ObjRef::from_heap_addr(base + s * size), size)
                    });
                }
            }
            for addr in core.large.objects(table) {
                let size = match table.locate(addr) {
                    crate::space::Located::Large { head, .. } => table.desc(head).large_size(),
                    _ => continue,
                };
                f(ObjRef::from_heap_addr(addr), size);
            }
        })
    }
}
