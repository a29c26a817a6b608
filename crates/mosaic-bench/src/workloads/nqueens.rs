//! n-queens over linked lists (seed 003, after HLVM's benchmark): every
//! candidate position is a cons cell `(x, y, next)`; `filter` builds a fresh
//! list of the positions a new queen leaves safe; `search` counts solutions.
//! It allocates huge numbers of short-lived cells.
//!
//! ```text
//! search n qs ps a = match ps with
//!   | []               -> if length qs = n then a + 1 else a
//!   | (x, y) :: rest   -> search n ((x, y) :: qs) (filter (safe x y) rest) (search n qs rest a)
//! ```
//!
//! Check value: the number of solutions (92, 352, 724, 2680 for 8–11).

use mosaic::{Config, Heap, Mutator, ObjRef};

use crate::vm::{FirstWords, Gen, ShadowStack, Vm};

/// A cons cell: `next` first (the one reference), then x and y as two i32.
pub type ConsVm = Vm<FirstWords<1>>;

pub fn solutions(n: u32) -> u64 {
    match n {
        1 => 1,
        4 => 2,
        5 => 10,
        6 => 4,
        7 => 40,
        8 => 92,
        9 => 352,
        10 => 724,
        11 => 2680,
        12 => 14200,
        _ => panic!("no reference count for {n} queens"),
    }
}

/// The search with precise roots: every cell a frame still needs after an
/// allocation is in a shadow-stack slot. Like compiled code, each frame
/// keeps its slots at fixed offsets from a stack pointer it holds in a
/// local (`sp`: the first slot it may use) and publishes the stack's length
/// only right before an allocation, the one point where a collection can
/// start. The published length then covers exactly the slots of the live
/// frames, each written before it was published.
struct Ctx<'a> {
    m: &'a mut Mutator<ConsVm>,
    s: &'a ShadowStack,
    gen: Gen,
    /// The first free slot for `cons` (set by `search` before `filter`).
    sp: usize,
}

#[inline]
fn next(c: ObjRef) -> Option<ObjRef> {
    // SAFETY: cells start with their `next` pointer.
    ObjRef::from_ptr(unsafe { (c.as_ptr() as *const *mut u8).read() })
}

#[inline]
fn xy(c: ObjRef) -> (i32, i32) {
    // SAFETY: x and y follow the pointer.
    unsafe {
        let p = c.as_ptr().add(8) as *const i32;
        (p.read(), p.add(1).read())
    }
}

/// Writes a fresh 16-byte cell: `next`, then x and y.
#[inline]
fn init_cell(c: ObjRef, x: i32, y: i32, tail: Option<ObjRef>) -> ObjRef {
    // SAFETY: a fresh 16-byte cell.
    unsafe {
        (c.as_ptr() as *mut *mut u8).write(tail.map_or(std::ptr::null_mut(), |t| t.as_ptr()));
        let p = c.as_ptr().add(8) as *mut i32;
        p.write(x);
        p.add(1).write(y);
    }
    c
}

/// What the two searches (shadow stack, conservative roots) share: how a
/// cell is made differs, `filter` does not.
trait Cells {
    /// A new cell in front of `tail`.
    fn cons(&mut self, x: i32, y: i32, tail: Option<ObjRef>) -> ObjRef;

    /// The cells of `ps` safe from a queen at (x1, y1), in order, freshly
    /// allocated. `ps` is reachable from the caller's roots.
    fn filter(&mut self, x1: i32, y1: i32, ps: Option<ObjRef>) -> Option<ObjRef> {
        let c = ps?;
        let t = self.filter(x1, y1, next(c));
        let (x2, y2) = xy(c);
        if safe(x1, y1, x2, y2) {
            Some(self.cons(x2, y2, t))
        } else {
            t
        }
    }
}

#[inline]
fn safe(x1: i32, y1: i32, x2: i32, y2: i32) -> bool {
    x1 != x2 && y1 != y2 && x2 - x1 != y2 - y1 && x1 - y2 != x2 - y1
}

impl Cells for Ctx<'_> {
    /// `tail` is rooted (in slot `sp`) while the cell is allocated.
    #[inline(always)]
    fn cons(&mut self, x: i32, y: i32, tail: Option<ObjRef>) -> ObjRef {
        self.cons_at(self.sp, x, y, tail)
    }
}

impl Ctx<'_> {
    fn length(mut l: Option<ObjRef>) -> u32 {
        let mut n = 0;
        while let Some(c) = l {
            n += 1;
            l = next(c);
        }
        n
    }

    /// A new cell in front of `tail`, allocated with the slots below `sp`
    /// (and `tail`, in slot `sp`) published as roots.
    #[inline(always)]
    fn cons_at(&mut self, sp: usize, x: i32, y: i32, tail: Option<ObjRef>) -> ObjRef {
        let mut top = sp;
        if let Some(t) = tail {
            self.s.put(top, t);
            top += 1;
        }
        self.cell_at(top, x, y, tail)
    }

    /// A new cell in front of `tail` (which the caller has rooted),
    /// allocated with the slots below `top` published as roots.
    #[inline(always)]
    fn cell_at(&mut self, top: usize, x: i32, y: i32, tail: Option<ObjRef>) -> ObjRef {
        self.s.truncate(top);
        let c = self.m.alloc_sized::<16>(self.gen.flags()).expect("cons");
        // Initialised before any other allocation: young, no barrier.
        init_cell(c, x, y, tail)
    }

    /// Counts solutions. `ps` and `qs` are reachable from the slots below
    /// `sp`: the board is in slot 0, and each frame puts what it passes
    /// on (its new `qs` and the filtered list) in its own two slots; the
    /// first recursive call passes a suffix of `ps` and the same `qs`.
    fn search(&mut self, sp: usize, n: u32, qs: Option<ObjRef>, ps: Option<ObjRef>, a: u64) -> u64 {
        let Some(c) = ps else {
            return if Self::length(qs) == n { a + 1 } else { a };
        };
        let rest = next(c);
        let (x, y) = xy(c);
        let a = self.search(sp, n, qs, rest, a);
        // `qs` is rooted already (the caller's): no slot for it.
        let qs2 = self.cell_at(sp, x, y, qs);
        // `qs2` is used after `filter`, which allocates (`rest` is
        // reachable from `c`).
        self.s.put(sp, qs2);
        self.sp = sp + 1;
        let filtered = self.filter(x, y, rest);
        if let Some(f) = filtered {
            self.s.put(sp + 1, f);
        }
        self.search(sp + 2, n, Some(qs2), filtered, a)
    }
}

/// Builds the n·n candidate positions and roots the list in slot 0 of `s`
/// (which must be empty); [`search_board`] then counts the solutions.
pub fn board(m: &mut Mutator<ConsVm>, s: &ShadowStack, n: u32) {
    assert!(s.is_empty(), "the board takes slot 0");
    let gen = Gen::of_mutator(m);
    let mut cx = Ctx { m, s, gen, sp: 0 };
    let mut ps = None;
    for i in (1..=n as i32).rev() {
        for j in (1..=n as i32).rev() {
            ps = Some(cx.cons(i, j, ps));
        }
    }
    cx.s.put(0, ps.expect("a board of n·n cells"));
    cx.s.truncate(1);
}

/// Counts the solutions over the board rooted in slot 0 (left there).
pub fn search_board(m: &mut Mutator<ConsVm>, s: &ShadowStack, n: u32) -> u64 {
    let ps = s.get(0);
    let gen = Gen::of_mutator(m);
    let mut cx = Ctx { m, s, gen, sp: 1 };
    let r = cx.search(1, n, None, Some(ps), 0);
    cx.s.truncate(1);
    r
}

/// Counts the solutions for `n` queens.
pub fn solve(m: &mut Mutator<ConsVm>, s: &ShadowStack, n: u32) -> u64 {
    board(m, s, n);
    let r = search_board(m, s, n);
    s.truncate(0);
    r
}

/// The same search with no shadow stack: the cells are held in Rust locals
/// and arguments only, and the mutator scans its own stack and registers
/// conservatively (`Mutator::set_conservative_stack`). Every cell a frame
/// still needs is used after the call that may collect (`cons` writes
/// `tail` after allocating; `filter` and `search` read `c` and `qs` after
/// their recursive calls), so the word stays in the frame or a
/// callee-saved register, which the allocation slow path records before
/// a collection.
struct Conservative<'a> {
    m: &'a mut Mutator<ConsVm>,
    gen: Gen,
}

impl Cells for Conservative<'_> {
    #[inline(always)]
    fn cons(&mut self, x: i32, y: i32, tail: Option<ObjRef>) -> ObjRef {
        let c = self.m.alloc_sized::<16>(self.gen.flags()).expect("cons");
        // Initialised before any other allocation: young, no barrier.
        init_cell(c, x, y, tail)
    }
}

impl Conservative<'_> {
    fn search(&mut self, n: u32, qs: Option<ObjRef>, ps: Option<ObjRef>, a: u64) -> u64 {
        let Some(c) = ps else {
            return if Ctx::length(qs) == n { a + 1 } else { a };
        };
        let rest = next(c);
        let a = self.search(n, qs, rest, a);
        let (x, y) = xy(c);
        let qs2 = self.cons(x, y, qs);
        let filtered = self.filter(x, y, rest);
        self.search(n, Some(qs2), filtered, a)
    }
}

/// Turns conservative stack scanning on for `m` and builds the board,
/// held by the caller in a local (no shadow stack, no root).
pub fn board_conservative(m: &mut Mutator<ConsVm>, n: u32) -> Option<ObjRef> {
    m.set_conservative_stack(true)
        .expect("conservative stack scanning");
    let gen = Gen::of_mutator(m);
    let mut cx = Conservative { m, gen };
    let mut ps = None;
    for i in (1..=n as i32).rev() {
        for j in (1..=n as i32).rev() {
            ps = Some(cx.cons(i, j, ps));
        }
    }
    ps
}

/// Counts the solutions over `board` (which the caller keeps in a local).
pub fn search_conservative(m: &mut Mutator<ConsVm>, board: Option<ObjRef>, n: u32) -> u64 {
    let gen = Gen::of_mutator(m);
    Conservative { m, gen }.search(n, None, board, 0)
}

/// Counts the solutions for `n` queens with conservative stack roots.
pub fn solve_conservative(m: &mut Mutator<ConsVm>, n: u32) -> u64 {
    let board = board_conservative(m, n);
    let r = search_conservative(m, board, n);
    std::hint::black_box(board);
    r
}

pub fn run(ns: &[u32], config: Config) -> (Vec<u64>, Heap<ConsVm>) {
    let heap = Heap::new(config, ConsVm::default()).expect("heap");
    let mut m = heap.mutator().unwrap();
    let s = heap.embedder().stack(&mut m, 1 << 16);
    let counts = ns.iter().map(|&n| solve(&mut m, &s, n)).collect();
    drop(m);
    (counts, heap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queens_solutions_are_counted_exactly() {
        // Collections every few allocations too: a cell left unrooted
        // across an allocation is then freed and its slot reused while
        // the search still reads it (verify mode alone sees only pointers
        // to free slots, not reads of them).
        for stress in [997, 5] {
            // On a thread, so that a search that loops for ever over a list
            // made cyclic by a reused slot fails the test instead of
            // hanging it.
            let (done, result) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let (counts, heap) = run(
                    &[4, 5, 6, 7, 8],
                    Config {
                        verify: true,
                        stress,
                        ..Config::default()
                    },
                );
                let _ = done.send((counts, heap.stats().collections));
            });
            let (counts, collections) = result
                .recv_timeout(std::time::Duration::from_secs(120))
                .unwrap_or_else(|e| panic!("stress {stress}: no result ({e:?})"));
            assert_eq!(counts, vec![2, 10, 4, 40, 92], "stress {stress}");
            assert!(collections > 10);
        }
    }

    #[test]
    fn conservative_stack_roots_count_the_same_solutions() {
        let heap = Heap::new(
            Config {
                verify: true,
                stress: 997,
                ..Config::default()
            },
            ConsVm::default(),
        )
        .expect("heap");
        let mut m = heap.mutator().unwrap();
        let counts: Vec<u64> = [4, 5, 6, 7, 8]
            .iter()
            .map(|&n| solve_conservative(&mut m, n))
            .collect();
        assert_eq!(counts, vec![2, 10, 4, 40, 92]);
        assert!(m.conservative_stack());
        drop(m);
        assert!(heap.stats().collections > 10);
    }
}
