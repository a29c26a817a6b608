//! Verify mode: after marking, walk the graph again from the roots and check
//! that every reference is the start of an allocated, marked object.
//!
//! The walk is independent of the marker (its own visited set and queue), so
//! it catches both embedder bugs (a `trace` that reports a field holding an
//! interior or dangling pointer) and collector bugs (an object reachable but
//! not marked). The diagnostic names the slot, the object holding it, the
//! page, pool and slot the bad value points into.

use std::collections::HashSet;

use super::mark::trace_object;
use crate::embedder::{Embedder, Tracer};
use crate::space::{Located, MarkState, PageTable};

/// Checks the heap; returns the number of reachable objects, or a diagnostic.
pub fn verify<E: Embedder>(
    table: &PageTable,
    embedder: &E,
    marked: usize,
    roots: impl FnOnce(&mut Verifier<'_>),
) -> Result<usize, String> {
    let mut v = Verifier {
        table,
        visited: HashSet::new(),
        queue: Vec::new(),
        holder: None,
        error: None,
    };
    roots(&mut v);
    while let Some(obj) = v.queue.pop() {
        if v.error.is_some() {
            break;
        }
        v.holder = Some(obj);
        trace_object(table, embedder, obj, &mut v);
    }
    if let Some(e) = v.error {
        return Err(e);
    }
    // Fewer reachable than marked is legal: a thread without an attached
    // mutator may drop a root between the marker's scan and this one.
    let reachable = v.visited.len();
    if reachable > marked {
        return Err(format!(
            "{reachable} objects are reachable from the roots but the marker marked {marked}"
        ));
    }
    Ok(reachable)
}

/// The tracer of the verification walk.
pub struct Verifier<'h> {
    table: &'h PageTable,
    visited: HashSet<usize>,
    queue: Vec<usize>,
    /// The object whose fields are being visited; `None` while visiting roots.
    holder: Option<usize>,
    error: Option<String>,
}

impl Verifier<'_> {
    fn describe(&self, addr: usize) -> String {
        match self.table.locate(addr) {
            Located::Small { page, slot, .. } => {
                let d = self.table.desc(page);
                format!(
                    "slot {slot} of page {page} (pool {}, {}-byte slots)",
                    d.pool(),
                    d.slot_size()
                )
            }
            Located::Large { head, .. } => format!("the large object at page {head}"),
            Located::FreePage => "a free page".into(),
            Located::PageTail => "the unused tail of a page".into(),
            Located::Outside => "outside the heap".into(),
        }
    }

    fn problem(&self, v: usize) -> Option<String> {
        let (start, alloc, marked) = match self.table.locate(v) {
            Located::Outside => return None,
            Located::FreePage => return Some("on a page that holds no objects".into()),
            Located::PageTail => {
                return Some(format!(
                    "in the unused tail of page {}",
                    self.table.page_index(v)?
                ))
            }
            Located::Small { page, slot, start } => {
                let d = self.table.desc(page);
                (start, d.alloc.get(slot), d.mark.get(slot))
            }
            Located::Large { head, start } => {
                let d = self.table.desc(head);
                (start, d.alloc.get(0), d.mark.get(0))
            }
        };
        if start != v {
            return Some(format!(
                "{} bytes into {}, not at an object's start",
                v - start,
                self.describe(start)
            ));
        }
        if !alloc {
            return Some(format!("a free slot: {}", self.describe(v)));
        }
        if !marked {
            return Some(format!(
                "an object the marker did not mark: {}",
                self.describe(v)
            ));
        }
        None
    }
}

impl Tracer for Verifier<'_> {
    fn visit(&mut self, slot: &mut *mut u8) {
        let v = *slot as usize;
        if v == 0 || self.error.is_some() {
            return;
        }
        if let Some(what) = self.problem(v) {
            let place = match self.holder {
                None => "a root slot".to_string(),
                Some(h) => {
                    let s = slot as *mut *mut u8 as usize;
                    format!(
                        "the field at offset {} of object {h:#x} ({})",
                        s.wrapping_sub(h) as isize,
                        self.describe(h)
                    )
                }
            };
            self.error = Some(format!("{place} holds {v:#x}, which is {what}"));
            return;
        }
        let no_pointers = match self.table.locate(v) {
            Located::Small { page, slot, .. } => self.table.desc(page).no_pointers.get(slot),
            Located::Large { head, .. } => self.table.desc(head).no_pointers.get(0),
            // Outside the heap (a static object, a C global): legal, and
            // not an object the marker could have marked.
            _ => return,
        };
        if self.visited.insert(v) && !no_pointers {
            self.queue.push(v);
        }
    }

    fn visit_ambiguous(&mut self, word: usize) {
        if self.error.is_some() {
            return;
        }
        match self.table.mark_state(word) {
            MarkState::Unmarked(start) => {
                self.error = Some(format!(
                    "an ambiguous word (a root, or a conservatively traced field) holds {word:#x}, inside {}, which the marker did not mark",
                    self.describe(start)
                ));
            }
            MarkState::Marked(start) => self.visit(&mut (start as *mut u8)),
            _ => {}
        }
    }
}
