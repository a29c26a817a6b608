//! The calling thread's stack and registers, for conservative root scanning.
//!
//! [`stack_top`] asks the platform where the thread's stack ends (its
//! highest address: stacks grow down on every target Mosaic supports);
//! [`spill_registers`] copies the callee-saved registers, the ones that may
//! hold a caller's pointer without it being in any stack frame, into an
//! array; [`here`] is an address inside the caller's frame. A stopped
//! thread's roots are then the words from `here()` (recorded when it
//! stopped) up to its stack top, plus the spilled registers.

/// Callee-saved registers spilled by [`spill_registers`].
pub const SAVED_REGISTERS: usize = 12;

/// The highest address of the calling thread's stack, or `None` if the
/// platform cannot tell. Asked once per thread (`pthread_getattr_np` calls
/// `malloc`, and reads `/proc/self/maps` on the main thread), then cached.
pub fn stack_top() -> Option<usize> {
    thread_local! {
        // 0: not asked yet (a stack never ends at address 0).
        static TOP: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }
    let cached = TOP.try_with(|t| t.get()).unwrap_or(0);
    if cached != 0 {
        return Some(cached);
    }
    let top = ask_stack_top()?;
    let _ = TOP.try_with(|t| t.set(top));
    Some(top)
}

fn ask_stack_top() -> Option<usize> {
    // SAFETY: pthread_getattr_np fills `attr` for the calling thread; it is
    // read only after success and destroyed once.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let r = libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        (r == 0 && !addr.is_null()).then(|| addr as usize + size)
    }
}

/// The callee-saved registers of the calling thread, as they are now.
#[inline(always)]
pub fn spill_registers() -> [usize; SAVED_REGISTERS] {
    let mut regs = [0usize; SAVED_REGISTERS];
    #[cfg(target_arch = "x86_64")]
    // SAFETY: stores six registers into `regs`, which has room for twelve
    // words; no other state changes.
    unsafe {
        std::arch::asm!(
            "mov [{p}], rbx",
            "mov [{p} + 8], rbp",
            "mov [{p} + 16], r12",
            "mov [{p} + 24], r13",
            "mov [{p} + 32], r14",
            "mov [{p} + 40], r15",
            p = in(reg) regs.as_mut_ptr(),
            options(nostack, preserves_flags)
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: stores x19..x30 (twelve registers) into `regs`.
    unsafe {
        std::arch::asm!(
            "stp x19, x20, [{p}]",
            "stp x21, x22, [{p}, #16]",
            "stp x23, x24, [{p}, #32]",
            "stp x25, x26, [{p}, #48]",
            "stp x27, x28, [{p}, #64]",
            "stp x29, x30, [{p}, #80]",
            p = in(reg) regs.as_mut_ptr(),
            options(nostack, preserves_flags)
        );
    }
    regs
}

/// The stack pointer inside this (never inlined) function: below every
/// frame of its caller. Read from the register, not from a local's
/// address (AddressSanitizer moves locals to a heap "fake stack").
#[inline(never)]
pub fn here() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let sp: usize;
        // SAFETY: reads the stack pointer into a register; nothing else.
        unsafe {
            std::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags))
        };
        sp
    }
    #[cfg(target_arch = "aarch64")]
    {
        let sp: usize;
        // SAFETY: as above.
        unsafe {
            std::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags))
        };
        sp
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let marker = 0usize;
        std::hint::black_box(&marker) as *const usize as usize
    }
}

/// Reads the word at `p` with a plain load the sanitizers do not see.
///
/// A conservative scan reads every word of a stack range, including
/// AddressSanitizer's poisoned red zones between locals and words another
/// thread wrote before it stopped; those reads are by design, so they go
/// through an inline-asm load that neither sanitizer instruments (as the
/// Boehm collector marks its stack scan `no_sanitize`).
///
/// # Safety
///
/// `p` is aligned and points into readable memory.
#[inline(always)]
pub unsafe fn read_word(p: *const usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let w: usize;
        // SAFETY: the caller vouches that `p` is readable and aligned.
        unsafe {
            std::arch::asm!("mov {w}, [{p}]", p = in(reg) p, w = out(reg) w,
                options(nostack, preserves_flags, readonly))
        };
        w
    }
    #[cfg(target_arch = "aarch64")]
    {
        let w: usize;
        // SAFETY: as above.
        unsafe {
            std::arch::asm!("ldr {w}, [{p}]", p = in(reg) p, w = out(reg) w,
                options(nostack, preserves_flags, readonly))
        };
        w
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    // SAFETY: as above.
    unsafe {
        p.read_volatile()
    }
}

/// Whether this target can scan its threads' stacks conservatively.
pub const SUPPORTED: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stack_top_is_above_a_local_and_within_the_stack_size() {
        let top = stack_top().expect("linux knows its stacks");
        let local = here();
        assert!(local < top, "{local:#x} below {top:#x}");
        assert!(top - local < 64 << 20, "a test thread's stack is small");
        let t = std::thread::spawn(|| (stack_top().unwrap(), here()))
            .join()
            .unwrap();
        assert!(t.1 < t.0 && t.0 - t.1 < 8 << 20);
    }

    #[test]
    fn read_word_loads_the_word() {
        let words = [0x1234_5678usize, usize::MAX, 0];
        for (i, w) in words.iter().enumerate() {
            // SAFETY: an aligned element of a live array.
            assert_eq!(unsafe { read_word(&words[i]) }, *w);
        }
    }

    #[test]
    fn spilled_registers_are_copied() {
        if !SUPPORTED {
            return;
        }
        let regs = spill_registers();
        // rbp / x29 is the frame pointer or a callee-saved value: at least
        // one register is nonzero on any real thread.
        assert!(regs.iter().any(|&r| r != 0), "{regs:x?}");
    }
}
