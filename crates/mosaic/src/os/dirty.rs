//! Which OS pages a process wrote since a point in time: Linux's
//! soft-dirty bits. Writing `4` to `/proc/self/clear_refs` clears them for
//! the whole process (and write-protects its pages, so the next write to
//! each page faults once and sets its bit again); bit 55 of a page's
//! 8-byte entry in `/proc/self/pagemap` is the bit. Generational mode
//! uses it for programs without write barriers (`Config::dirty_pages`):
//! a minor collection rescans only the old objects on pages written since
//! the last collection.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;

/// Bytes of an OS page (the granule of the soft-dirty bits).
pub const OS_PAGE: usize = 4096;

const SOFT_DIRTY: u64 = 1 << 55;

/// An open pagemap and clear_refs.
pub struct SoftDirty {
    pagemap: File,
    clear_refs: File,
}

impl SoftDirty {
    /// Opens both files and checks that the kernel keeps the bits (a page
    /// written after a clear reads dirty, one not written reads clean);
    /// an error names what is missing.
    pub fn open() -> io::Result<SoftDirty> {
        // SAFETY: sysconf reads a constant of the system.
        if unsafe { libc::sysconf(libc::_SC_PAGESIZE) } != OS_PAGE as libc::c_long {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "OS pages are not 4 KiB",
            ));
        }
        let s = SoftDirty {
            pagemap: File::open("/proc/self/pagemap")?,
            clear_refs: OpenOptions::new()
                .write(true)
                .open("/proc/self/clear_refs")?,
        };
        let mut probe = vec![0u8; 3 * OS_PAGE];
        let base = (probe.as_ptr() as usize).next_multiple_of(OS_PAGE);
        let off = base - probe.as_ptr() as usize;
        probe[off] = 1;
        probe[off + OS_PAGE] = 1;
        s.clear()?;
        // SAFETY: inside `probe`, which lives until the end of this function.
        unsafe { std::ptr::write_volatile(base as *mut u8, 2) };
        let mut bits = [0u64; 2];
        s.read(base, &mut bits)?;
        if bits[0] & SOFT_DIRTY == 0 || bits[1] & SOFT_DIRTY != 0 {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the kernel does not keep soft-dirty bits (CONFIG_MEM_SOFT_DIRTY)",
            ));
        }
        drop(probe);
        Ok(s)
    }

    /// Clears every soft-dirty bit of the process.
    pub fn clear(&self) -> io::Result<()> {
        (&self.clear_refs).write_all(b"4")
    }

    /// The pagemap entries of the OS pages from `addr` (page-aligned).
    fn read(&self, addr: usize, out: &mut [u64]) -> io::Result<()> {
        let mut bytes = vec![0u8; out.len() * 8];
        self.pagemap
            .read_exact_at(&mut bytes, (addr / OS_PAGE * 8) as u64)?;
        for (o, b) in out.iter_mut().zip(bytes.chunks_exact(8)) {
            *o = u64::from_ne_bytes(b.try_into().expect("8 bytes"));
        }
        Ok(())
    }

    /// For the `n` OS pages from `addr` (page-aligned): bit `i` of the
    /// result's word `i / 64` is set if page `i` was written since the
    /// last [`SoftDirty::clear`].
    pub fn dirty(&self, addr: usize, n: usize) -> io::Result<Vec<u64>> {
        let mut entries = vec![0u64; n];
        self.read(addr, &mut entries)?;
        let mut bits = vec![0u64; n.div_ceil(64)];
        for (i, e) in entries.iter().enumerate() {
            if e & SOFT_DIRTY != 0 {
                bits[i / 64] |= 1 << (i % 64);
            }
        }
        Ok(bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_written_after_a_clear_reads_dirty_and_one_not_written_clean() {
        let Ok(s) = SoftDirty::open() else {
            eprintln!("no soft-dirty bits here: skipped");
            return;
        };
        let mut buf = vec![1u8; 8 * OS_PAGE];
        let base = (buf.as_ptr() as usize).next_multiple_of(OS_PAGE);
        let off = base - buf.as_ptr() as usize;
        s.clear().unwrap();
        buf[off + 3 * OS_PAGE + 100] = 7;
        buf[off + 5 * OS_PAGE] = 7;
        let d = s.dirty(base, 6).unwrap();
        assert_eq!(d[0] & 0b111111, 0b101000, "{:b}", d[0]);
        std::hint::black_box(&buf);
    }
}
