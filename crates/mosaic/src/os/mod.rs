//! Layer 1 — the operating system.
//!
//! Every `mmap`, `munmap` and `madvise` in Mosaic lives in this module. The
//! layers above see only [`Reservation`] (one contiguous, aligned range of
//! virtual memory that is committed lazily by first touch and decommitted with
//! `madvise(MADV_DONTNEED)`), [`rss_bytes`], [`process_cpu_time`],
//! [`current_cpu`] and [`step_off_cpu`] (a GC thread moving off the CPU of
//! the thread that woke it) and
//! [`SoftDirty`] (the pages written since a point in time) and
//! [`SignalsHeld`] (asynchronous signals held off on a thread for a scope)
//! and [`with_default_float_env`] / [`reset_float_env`] (the collector's
//! arithmetic under the default floating-point environment, whatever
//! traps the program enabled).
//!
//! Invariant: memory inside a reservation is readable and writable for the
//! whole life of the reservation; decommitting never changes protection, it
//! only gives the physical pages back, and the next touch sees zeroes. (We do
//! not `mprotect` per page: alternating protections would split the mapping
//! into one VMA per page and hit the kernel's map-count limit on big heaps.)

mod cpu;
mod dirty;
mod float_env;
mod rss;
mod signals;
pub mod stack;
mod vm;

pub use cpu::{current_cpu, process_cpu_time, step_off_cpu};
pub use dirty::{SoftDirty, OS_PAGE};
pub use float_env::{reset_float_env, with_default_float_env};
pub use rss::rss_bytes;
pub use signals::SignalsHeld;
pub use vm::Reservation;
