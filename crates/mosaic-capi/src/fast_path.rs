//! The inline allocation fast path of mosaic.h: a mutator's allocation
//! buffers and class table exposed to C, so `mosaic_alloc_inline` bumps a
//! pointer without a call, and `mosaic_safepoint_inline` polls a flag.

use mosaic_core::unstable::RawFastPath;

use crate::error::clear_error;
use crate::heap::{mosaic_mutator, mutator_fast_path};

/// One allocation buffer: the current run of a size class. Bump
/// `cursor` by `slot_size` while the result stays `<= limit`; the other
/// words belong to the library.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mosaic_alloc_buffer {
    pub cursor: usize,
    pub limit: usize,
    pub slot_size: usize,
    pub private_: [usize; 3],
}

/// What `mosaic_alloc_inline` reads: `buffers[class_of[(size + 7) >> 3]]`
/// for a size whose index is below `class_of_len` (larger sizes are large
/// objects); `*safepoint_requested` is non-zero while another thread waits
/// for this one to reach a safepoint. What `mosaic_write_barrier_inline`
/// reads: for an object `obj` with `g = (obj - log_base) >> 3` and
/// `obj - log_base < log_len`, bit `g % 64` of `log_bits[g / 64]` set means
/// "old and not yet logged" (call `mosaic_write_barrier`); with
/// `barrier_checks` (verify mode, debug builds) every barrier is a call.
/// Valid while the mutator lives.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mosaic_fast_path {
    pub buffers: *mut mosaic_alloc_buffer,
    pub class_of: *const u8,
    pub class_of_len: usize,
    pub safepoint_requested: *const u8,
    pub log_base: usize,
    pub log_len: usize,
    pub log_bits: *const u64,
    pub barrier_checks: bool,
}

impl From<RawFastPath> for mosaic_fast_path {
    fn from(r: RawFastPath) -> Self {
        assert_eq!(
            r.buffer_size,
            std::mem::size_of::<mosaic_alloc_buffer>(),
            "mosaic_alloc_buffer matches the library's buffers"
        );
        mosaic_fast_path {
            buffers: r.buffers.cast(),
            class_of: r.class_of,
            class_of_len: r.class_of_len,
            safepoint_requested: r.safepoint_requested,
            log_base: r.log_base,
            log_len: r.log_len,
            log_bits: r.log_bits,
            barrier_checks: r.barrier_checks,
        }
    }
}

/// The mutator's fast-path view for `mosaic_alloc_inline` and
/// `mosaic_safepoint_inline` (fetch it once per thread and keep it beside
/// the mutator). NULL for a NULL or freed mutator.
///
/// # Safety
/// `m` must be NULL or a live mutator used only by the calling thread.
#[no_mangle]
pub unsafe extern "C" fn mosaic_mutator_fast_path(
    m: *mut mosaic_mutator,
) -> *const mosaic_fast_path {
    match mutator_fast_path("mosaic_mutator_fast_path", m) {
        Some(f) => {
            clear_error();
            f
        }
        None => std::ptr::null(),
    }
}
