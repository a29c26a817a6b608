//! Resident set size of the whole process.

/// The process's resident set size in bytes, read from `/proc/self/statm`
/// (0 if it cannot be read).
pub fn rss_bytes() -> usize {
    let Ok(text) = std::fs::read_to_string("/proc/self/statm") else {
        return 0;
    };
    let pages: usize = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * page.max(0) as usize
}

#[cfg(test)]
mod tests {
    #[test]
    fn rss_is_positive_and_grows_when_touching_memory() {
        let before = super::rss_bytes();
        assert!(before > 0);
        let mut v = vec![0u8; 64 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        let after = super::rss_bytes();
        assert!(after >= before + (32 << 20), "{before} -> {after}");
        std::hint::black_box(&v);
    }
}
