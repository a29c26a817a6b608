//! Reserving, decommitting and releasing virtual memory.

use std::io;

/// One contiguous range of anonymous virtual memory, aligned to `align`.
///
/// The range is mapped `PROT_READ | PROT_WRITE` with `MAP_NORESERVE`, so it
/// costs no physical memory until touched. Dropping the reservation unmaps it.
#[derive(Debug)]
pub struct Reservation {
    /// Aligned start handed to the user.
    start: usize,
    /// Usable length from `start`.
    len: usize,
    /// What `mmap` returned, for `munmap`.
    raw: usize,
    raw_len: usize,
}

impl Reservation {
    /// Reserves `len` bytes starting at an address aligned to `align`
    /// (a power of two, at least the OS page size).
    pub fn new(len: usize, align: usize) -> io::Result<Self> {
        assert!(align.is_power_of_two());
        let raw_len = len
            .checked_add(align)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "reservation too large"))?;
        // SAFETY: an anonymous private mapping at an address of the kernel's
        // choosing; no existing memory is affected.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                raw_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let raw = raw as usize;
        let start = (raw + align - 1) & !(align - 1);
        Ok(Reservation {
            start,
            len,
            raw,
            raw_len,
        })
    }

    /// First usable (aligned) address.
    pub fn start(&self) -> usize {
        self.start
    }

    /// Usable length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// For each 4 KiB page of the range (from `start`, which is page
    /// aligned), whether it is resident: what was touched and not
    /// decommitted since. Empty if the kernel will not say.
    pub fn resident_pages(&self) -> Vec<bool> {
        const OS_PAGE: usize = 4096;
        let n = self.len.div_ceil(OS_PAGE);
        let mut v = vec![0u8; n];
        // SAFETY: `[start, start + n pages)` lies inside our own mapping
        // (`start` is aligned to at least a page, `raw_len` covers `len`
        // plus the alignment), and `v` has one byte per page.
        let rc =
            unsafe { libc::mincore(self.start as *mut libc::c_void, n * OS_PAGE, v.as_mut_ptr()) };
        if rc != 0 {
            return Vec::new();
        }
        v.into_iter().map(|b| b & 1 != 0).collect()
    }

    /// Gives the physical memory behind `[addr, addr + len)` back to the OS.
    /// The range stays mapped; the next read sees zeroes.
    pub fn decommit(&self, addr: usize, len: usize) {
        assert!(
            addr >= self.start
                && addr
                    .checked_add(len)
                    .is_some_and(|end| end <= self.start + self.len),
            "decommit of {len} bytes at {addr:#x}: outside the reservation"
        );
        // SAFETY: the range lies inside our own mapping (checked above);
        // MADV_DONTNEED on private anonymous memory only drops its contents.
        let rc = unsafe { libc::madvise(addr as *mut libc::c_void, len, libc::MADV_DONTNEED) };
        debug_assert_eq!(rc, 0, "madvise(MADV_DONTNEED) failed");
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // SAFETY: `raw`/`raw_len` are exactly what mmap returned; nothing
        // refers into the range once its owner is dropped.
        unsafe {
            libc::munmap(self.raw as *mut libc::c_void, self.raw_len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservation_is_aligned_writable_and_decommit_zeroes() {
        let r = Reservation::new(1 << 20, 1 << 16).unwrap();
        assert_eq!(r.start() % (1 << 16), 0);
        assert_eq!(r.len(), 1 << 20);
        let p = r.start() as *mut u8;
        // SAFETY: inside the reservation, which is mapped read/write.
        unsafe {
            p.write(7);
            p.add(4096 * 3).write(9);
            assert_eq!(p.read(), 7);
        }
        r.decommit(r.start(), 1 << 16);
        // SAFETY: as above.
        unsafe {
            assert_eq!(p.read(), 0);
            assert_eq!(p.add(4096 * 3).read(), 0);
        }
    }
}
