//! CPU time of the whole process.

use std::time::Duration;

/// User plus system CPU time consumed so far by every thread of the
/// process (`CLOCK_PROCESS_CPUTIME_ID`); zero if the clock cannot be read.
/// Unlike wall time it does not grow while the process's threads wait for
/// a core, so what is measured with it does not depend on what else the
/// machine runs.
pub fn process_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    use super::process_cpu_time;

    #[test]
    fn cpu_time_grows_with_work_not_with_sleep() {
        let t0 = process_cpu_time();
        assert!(t0 > std::time::Duration::ZERO);
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(30) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let t1 = process_cpu_time();
        assert!(
            t1 - t0 >= std::time::Duration::from_millis(10),
            "{t0:?} -> {t1:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
        let t2 = process_cpu_time();
        // Other test threads may run meanwhile; a sleep itself costs ~0.
        assert!(t2 >= t1);
    }
}
