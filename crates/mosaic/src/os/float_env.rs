//! The floating-point environment the collector's own arithmetic runs
//! under.
//!
//! The heap sizer, the pools' growth policy and the generational
//! judgement compute with doubles, on the program's threads (an
//! allocation's slow path, a pause) and on GC threads. A program may run
//! with floating-point exceptions unmasked — ECL traps division by zero,
//! overflow and invalid operations by default, numerical code traps
//! inexact results to find rounding — and a thread starts with the
//! environment of the thread that created it, so a GC thread started by
//! such a program inherits its traps. Rust's code generation assumes the
//! default environment (every exception masked, round to nearest). So:
//!
//! - [`with_default_float_env`] runs a computation under the default
//!   environment and puts the caller's back afterwards, its exception
//!   flags included: the program finds neither a trap nor a flag raised
//!   by the collector's arithmetic, as with bdwgc, which computes with
//!   integers only.
//! - [`reset_float_env`] sets the default for the rest of a thread's life
//!   (GC threads, first thing).
//!
//! `with_default_float_env` is public for embedders whose own code on the
//! collector's behalf computes with floats (the drop-in's configuration
//! and statistics).
//!
//! Invariant: every collector function that computes with floating point
//! runs inside `with_default_float_env` or on a thread that called
//! `reset_float_env`. On targets other than x86-64 both only run the code
//! (their default is what the program left).

/// MXCSR with every exception masked, no flag raised, round to nearest,
/// no flush-to-zero: the state the x86-64 ABI starts a process in.
#[cfg(target_arch = "x86_64")]
const DEFAULT_MXCSR: u32 = 0x1F80;

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn read_mxcsr() -> u32 {
    let mut v: u32 = 0;
    // SAFETY: `stmxcsr` stores the 32-bit MXCSR into `v`, a live local.
    unsafe {
        std::arch::asm!("stmxcsr [{}]", in(reg) &mut v, options(nostack, preserves_flags));
    }
    v
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn write_mxcsr(v: u32) {
    // SAFETY: `ldmxcsr` loads MXCSR from `v`, a live local holding either
    // a value read from the register or the default (no reserved bit set,
    // so it cannot fault). No memory option: the compiler keeps memory
    // accesses on their side of it.
    unsafe {
        std::arch::asm!("ldmxcsr [{}]", in(reg) &v, options(nostack, preserves_flags));
    }
}

/// Runs `f` under the default floating-point environment, then restores
/// the caller's (exception flags included), also when `f` panics.
#[inline]
pub fn with_default_float_env<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        let saved = Restore(read_mxcsr());
        if saved.0 != DEFAULT_MXCSR {
            write_mxcsr(DEFAULT_MXCSR);
        }
        run_apart(f)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        f()
    }
}

/// The caller's MXCSR, put back when dropped if it changed.
#[cfg(target_arch = "x86_64")]
struct Restore(u32);

#[cfg(target_arch = "x86_64")]
impl Drop for Restore {
    #[inline(always)]
    fn drop(&mut self) {
        if read_mxcsr() != self.0 {
            write_mxcsr(self.0);
        }
    }
}

/// Runs `f` in a call of its own whose result is materialised before the
/// call returns. The compiler assumes the default environment and could
/// move arithmetic across an `asm!` block; a call it may not inline, with
/// a result passed through `black_box` (best effort by its documentation,
/// and honoured by rustc today), keeps `f`'s arithmetic between the two
/// switches.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn run_apart<R>(f: impl FnOnce() -> R) -> R {
    std::hint::black_box(f())
}

/// Sets the default floating-point environment on the calling thread for
/// good (a GC thread, before it computes anything).
pub fn reset_float_env() {
    #[cfg(target_arch = "x86_64")]
    write_mxcsr(DEFAULT_MXCSR);
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// Division by zero unmasked (bit 9 clear) and the inexact flag
    /// (bit 5) raised, as a program might leave them.
    const TRAPPING: u32 = (DEFAULT_MXCSR & !(1 << 9)) | (1 << 5);

    #[test]
    fn the_callers_environment_comes_back_and_the_computation_runs_under_the_default() {
        let inside = std::thread::spawn(|| {
            write_mxcsr(TRAPPING);
            let (inside, quotient) = with_default_float_env(|| {
                let x = std::hint::black_box(1.0f64);
                let zero = std::hint::black_box(0.0f64);
                // Would trap under TRAPPING.
                (read_mxcsr(), x / zero)
            });
            let after = read_mxcsr();
            reset_float_env();
            (inside, quotient, after)
        })
        .join()
        .unwrap();
        // (The division raised its flag under the default environment.)
        assert_eq!(inside.0 & !0x3F, DEFAULT_MXCSR);
        assert!(inside.1.is_infinite());
        assert_eq!(inside.2, TRAPPING, "the caller's traps and flags restored");
    }

    #[test]
    fn flags_raised_inside_do_not_leak_to_a_default_caller() {
        let after = std::thread::spawn(|| {
            reset_float_env();
            let third = with_default_float_env(|| std::hint::black_box(1.0f64) / 3.0);
            assert!(third > 0.33);
            read_mxcsr()
        })
        .join()
        .unwrap();
        assert_eq!(after, DEFAULT_MXCSR, "no inexact flag left behind");
    }
}
