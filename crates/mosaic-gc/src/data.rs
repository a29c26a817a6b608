//! bdwgc's exported data objects, with Debian's sizes and initial values.
//!
//! A program that names one of them directly (`GC_dont_gc = 1;`) is linked
//! with a *copy relocation*: the variable then lives in the executable,
//! initialised from this library's value at load time, and the dynamic
//! linker binds every reference to that copy. Code in this library must
//! therefore reach each variable through the address the dynamic linker
//! resolves (`dlsym(RTLD_DEFAULT, name)`), never through its own symbol,
//! or it would read a copy the program never writes.

#![allow(non_upper_case_globals)]

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering::Relaxed};

pub type Word = usize;

macro_rules! exported {
    ($($name:ident : $ty:ty = $init:expr;)*) => {
        $(
            #[no_mangle]
            pub static mut $name: $ty = $init;
        )*
        /// Every variable's name, in `RESOLVED`'s order.
        const NAMES: &[&str] = &[$(stringify!($name)),*];
        /// The resolved address of each variable, by name.
        fn resolve_all() {
            let mut i = 0;
            $(
                resolve(i, stringify!($name), std::ptr::addr_of_mut!($name).cast());
                i += 1;
            )*
            let _ = i;
        }
    };
}

/// An out-of-memory function: returns NULL (or what the client's returns).
pub type OomFn = Option<unsafe extern "C" fn(usize) -> *mut c_void>;
pub type VoidFn = Option<unsafe extern "C" fn()>;
pub type PtrFn = Option<unsafe extern "C" fn(*mut c_void)>;
pub type PtrPtrFn = Option<unsafe extern "C" fn(*mut c_void, *mut c_void)>;
pub type AbortFn = Option<unsafe extern "C" fn(*const c_char)>;
pub type ResizeFn = Option<unsafe extern "C" fn(Word)>;

unsafe extern "C" fn default_oom(_: usize) -> *mut c_void {
    std::ptr::null_mut()
}

/// The initial `GC_push_other_roots`. In bdwgc (threads on) the default
/// procedure is the one that pushes the thread stacks, and programs that
/// install their own chain to it (Crystal: its procedure, then the
/// previous one) or call it unguarded; here stacks are scanned anyway
/// (after the procedure: `Boehm::STACKS_AFTER_ROOTS`), so it does nothing.
unsafe extern "C" fn default_push_other_roots() {}

/// bdwgc's default `GC_on_abort`: the message on stderr (the caller aborts).
unsafe extern "C" fn default_on_abort(msg: *const c_char) {
    if !msg.is_null() {
        // SAFETY: a NUL-terminated message from the caller.
        let m = unsafe { std::ffi::CStr::from_ptr(msg) };
        eprintln!("{}", m.to_string_lossy());
    }
}

exported! {
    GC_all_interior_pointers: c_int = 1;
    GC_java_finalization: c_int = 1;
    GC_dont_gc: c_int = 0;
    GC_dont_expand: c_int = 0;
    GC_dont_precollect: c_int = 0;
    GC_finalize_on_demand: c_int = 0;
    GC_find_leak: c_int = 0;
    GC_full_freq: c_int = 19;
    GC_no_dls: c_int = 0;
    GC_parallel: c_int = 0;
    GC_use_entire_heap: c_int = 0;
    GC_gcj_kind: c_int = 0;
    GC_gcj_debug_kind: c_int = 0;
    GC_free_space_divisor: Word = 3;
    GC_max_retries: Word = 0;
    GC_non_gc_bytes: Word = 0;
    GC_gc_no: Word = 0;
    GC_time_limit: Word = 999_999;
    GC_least_plausible_heap_addr: *mut c_void = std::ptr::null_mut();
    GC_greatest_plausible_heap_addr: *mut c_void = std::ptr::null_mut();
    GC_stackbottom: *mut c_char = std::ptr::null_mut();
    GC_oom_fn: OomFn = Some(default_oom);
    GC_finalizer_notifier: VoidFn = None;
    GC_on_abort: AbortFn = Some(default_on_abort);
    GC_on_heap_resize: ResizeFn = None;
    GC_push_other_roots: VoidFn = Some(default_push_other_roots);
    GC_is_valid_displacement_print_proc: PtrFn = None;
    GC_is_visible_print_proc: PtrFn = None;
    GC_same_obj_print_proc: PtrPtrFn = None;
    GC_objfreelist_ptr: *mut c_void = std::ptr::null_mut();
    GC_aobjfreelist_ptr: *mut c_void = std::ptr::null_mut();
    GC_uobjfreelist_ptr: *mut c_void = std::ptr::null_mut();
    GC_auobjfreelist_ptr: *mut c_void = std::ptr::null_mut();
}

#[no_mangle]
pub static GC_debug_header_size: usize = 0;

const SLOTS: usize = 40;
/// The address of each variable the dynamic linker binds the program to;
/// written once (`init`), read without a lock (a collector reads some).
static RESOLVED: [AtomicPtr<c_void>; SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];
static INIT: std::sync::Once = std::sync::Once::new();

fn resolve(i: usize, name: &'static str, own: *mut c_void) {
    let c = std::ffi::CString::new(name).expect("no NUL in a symbol name");
    // SAFETY: dlsym with a valid NUL-terminated name.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c.as_ptr()) };
    RESOLVED[i].store(if p.is_null() { own } else { p }, Relaxed);
}

/// Binds every variable to the copy the program uses (once; the heap's
/// creation does it).
pub fn init() {
    const { assert!(NAMES.len() <= SLOTS) };
    INIT.call_once(resolve_all);
}

fn addr(name: &str) -> *mut c_void {
    init();
    match NAMES.iter().position(|n| *n == name) {
        Some(i) => RESOLVED[i].load(Relaxed),
        None => std::ptr::null_mut(),
    }
}

/// The address of a variable as the program sees it (cached per call site).
macro_rules! var {
    ($name:ident) => {{
        static CACHE: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
        let mut p = CACHE.load(Relaxed);
        if p.is_null() {
            p = addr(stringify!($name));
            if p.is_null() {
                p = std::ptr::addr_of_mut!($name).cast();
            }
            CACHE.store(p, Relaxed);
        }
        p
    }};
}

/// Reads a variable (a volatile load: the program may change it any time).
macro_rules! read {
    ($name:ident : $ty:ty) => {{
        // SAFETY: the address of the variable of that type the program uses.
        unsafe { std::ptr::read_volatile(var!($name).cast::<$ty>()) }
    }};
}

macro_rules! write {
    ($name:ident : $ty:ty = $v:expr) => {{
        // SAFETY: as `read!`.
        unsafe { std::ptr::write_volatile(var!($name).cast::<$ty>(), $v) }
    }};
}

pub fn dont_gc() -> c_int {
    read!(GC_dont_gc: c_int)
}
pub fn all_interior_pointers() -> bool {
    read!(GC_all_interior_pointers: c_int) != 0
}
pub fn set_all_interior_pointers(v: c_int) {
    write!(GC_all_interior_pointers: c_int = v);
    if crate::heap::heap_if_created().is_some() {
        take_extra_byte();
    }
}

/// The byte every request gets with all-interior-pointers on, as the
/// setting was when the heap was made (bdwgc reads it at `GC_init`) or
/// last set through `GC_set_all_interior_pointers`: 0 or 1; `UNSET`
/// before the heap exists.
static EXTRA_BYTE: AtomicUsize = AtomicUsize::new(UNSET);
const UNSET: usize = 2;

/// Reads the setting into the allocation paths' copy (the heap's
/// creation, and the setter afterwards).
pub fn take_extra_byte() {
    EXTRA_BYTE.store(usize::from(all_interior_pointers()), Relaxed);
}

/// The extra byte of every request: one load on the allocation path.
#[inline(always)]
pub fn extra_byte() -> usize {
    let e = EXTRA_BYTE.load(Relaxed);
    if e != UNSET {
        e
    } else {
        extra_byte_before_init()
    }
}

#[cold]
fn extra_byte_before_init() -> usize {
    usize::from(all_interior_pointers())
}
pub fn java_finalization() -> c_int {
    read!(GC_java_finalization: c_int)
}
pub fn set_java_finalization(v: c_int) {
    write!(GC_java_finalization: c_int = v)
}
pub fn finalize_on_demand() -> bool {
    read!(GC_finalize_on_demand: c_int) != 0
}
pub fn set_finalize_on_demand(v: c_int) {
    write!(GC_finalize_on_demand: c_int = v)
}
pub fn no_dls() -> bool {
    read!(GC_no_dls: c_int) != 0
}
pub fn set_no_dls(v: c_int) {
    write!(GC_no_dls: c_int = v)
}
pub fn free_space_divisor() -> Word {
    read!(GC_free_space_divisor: Word)
}
pub fn set_free_space_divisor(v: Word) {
    write!(GC_free_space_divisor: Word = v)
}
pub fn max_retries() -> Word {
    read!(GC_max_retries: Word)
}
pub fn set_max_retries(v: Word) {
    write!(GC_max_retries: Word = v)
}
pub fn full_freq() -> c_int {
    read!(GC_full_freq: c_int)
}
pub fn set_full_freq(v: c_int) {
    write!(GC_full_freq: c_int = v)
}
pub fn dont_expand() -> c_int {
    read!(GC_dont_expand: c_int)
}
pub fn set_dont_expand(v: c_int) {
    write!(GC_dont_expand: c_int = v)
}
pub fn non_gc_bytes() -> Word {
    read!(GC_non_gc_bytes: Word)
}
pub fn set_non_gc_bytes(v: Word) {
    write!(GC_non_gc_bytes: Word = v)
}
pub fn time_limit() -> Word {
    read!(GC_time_limit: Word)
}
pub fn set_time_limit(v: Word) {
    write!(GC_time_limit: Word = v)
}
pub fn set_gc_no(n: u64) {
    write!(GC_gc_no: Word = n as Word)
}
pub fn oom_fn() -> OomFn {
    read!(GC_oom_fn: OomFn)
}
pub fn set_oom_fn(f: OomFn) {
    write!(GC_oom_fn: OomFn = f)
}
pub fn finalizer_notifier() -> VoidFn {
    read!(GC_finalizer_notifier: VoidFn)
}
pub fn set_finalizer_notifier(f: VoidFn) {
    write!(GC_finalizer_notifier: VoidFn = f)
}
pub fn on_abort() -> AbortFn {
    read!(GC_on_abort: AbortFn)
}
pub fn set_on_abort(f: AbortFn) {
    write!(GC_on_abort: AbortFn = f)
}
pub fn push_other_roots() -> VoidFn {
    read!(GC_push_other_roots: VoidFn)
}
/// The program's own push-other-roots procedure (not the default), if any.
pub fn program_push_other_roots() -> VoidFn {
    push_other_roots()
        .filter(|&f| f as usize != default_push_other_roots as unsafe extern "C" fn() as usize)
}
pub fn set_push_other_roots(f: VoidFn) {
    write!(GC_push_other_roots: VoidFn = f)
}
pub fn on_heap_resize() -> ResizeFn {
    read!(GC_on_heap_resize: ResizeFn)
}
pub fn set_on_heap_resize(f: ResizeFn) {
    write!(GC_on_heap_resize: ResizeFn = f)
}
pub fn find_leak() -> c_int {
    read!(GC_find_leak: c_int)
}
pub fn set_find_leak(v: c_int) {
    write!(GC_find_leak: c_int = v)
}
pub fn dont_precollect() -> c_int {
    read!(GC_dont_precollect: c_int)
}
pub fn set_dont_precollect(v: c_int) {
    write!(GC_dont_precollect: c_int = v)
}
pub fn set_parallel(v: c_int) {
    write!(GC_parallel: c_int = v)
}
pub fn stackbottom() -> *mut c_char {
    read!(GC_stackbottom: *mut c_char)
}
pub fn set_stackbottom(p: *mut c_char) {
    write!(GC_stackbottom: *mut c_char = p)
}

/// Publishes the heap's address range as the plausible bounds.
pub fn set_plausible_bounds(lo: usize, hi: usize) {
    write!(GC_least_plausible_heap_addr: *mut c_void = lo as *mut c_void);
    write!(GC_greatest_plausible_heap_addr: *mut c_void = hi as *mut c_void);
}

/// Publishes gcj's kind (`GC_init_gcj_malloc`).
pub fn set_gcj_kinds(k: c_int) {
    write!(GC_gcj_kind: c_int = k);
    write!(GC_gcj_debug_kind: c_int = k);
}
