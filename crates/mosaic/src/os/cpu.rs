//! CPU time of the whole process; which CPU a thread runs on, and keeping
//! a thread off one for a while.

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

/// The CPU the calling thread is running on (it may move at any time
/// after), or `None` if the OS does not say.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: no arguments; returns -1 on failure.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

/// The calling thread's CPU affinity as it was before [`step_off_cpu`];
/// restored when dropped. Not `Send`: affinity calls here name the calling
/// thread, so it must be dropped on the thread that made it.
pub struct OffCpu {
    saved: libc::cpu_set_t,
    _this_thread: std::marker::PhantomData<*const ()>,
}

/// Moves the calling thread off `cpu` until the result is dropped: its
/// affinity mask less that CPU, which makes the kernel migrate it at once.
/// `None` (nothing changed) if the mask cannot be read or set, or if `cpu`
/// is the only CPU it allows.
pub fn step_off_cpu(cpu: usize) -> Option<OffCpu> {
    let size = std::mem::size_of::<libc::cpu_set_t>();
    if cpu >= 8 * size {
        return None;
    }
    // SAFETY: an all-zero `cpu_set_t` is a valid (empty) set.
    let mut saved: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `saved` is a writable set of `size` bytes; 0 is this thread.
    if unsafe { libc::sched_getaffinity(0, size, &mut saved) } != 0 {
        return None;
    }
    let mut narrowed = saved;
    // SAFETY: `cpu` is below the set's capacity (checked above).
    unsafe { libc::CPU_CLR(cpu, &mut narrowed) };
    // SAFETY: reads a valid set.
    if unsafe { libc::CPU_COUNT(&narrowed) } == 0 {
        return None;
    }
    // SAFETY: a valid set of `size` bytes; 0 is this thread.
    if unsafe { libc::sched_setaffinity(0, size, &narrowed) } != 0 {
        return None;
    }
    Some(OffCpu {
        saved,
        _this_thread: std::marker::PhantomData,
    })
}

impl Drop for OffCpu {
    fn drop(&mut self) {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: the mask this thread had, read by `step_off_cpu`.
        unsafe { libc::sched_setaffinity(0, size, &self.saved) };
    }
}

#[cfg(test)]
mod tests {
    use super::process_cpu_time;

    #[test]
    fn stepping_off_a_cpu_moves_the_thread_and_dropping_restores_its_mask() {
        fn mask() -> Vec<bool> {
            // SAFETY: an all-zero set is a valid (empty) set.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            let size = std::mem::size_of::<libc::cpu_set_t>();
            // SAFETY: a writable set of `size` bytes; 0 is this thread.
            let rc = unsafe { libc::sched_getaffinity(0, size, &mut set) };
            assert_eq!(rc, 0);
            // SAFETY: indices below the set's capacity.
            (0..8 * size)
                .map(|c| unsafe { libc::CPU_ISSET(c, &set) })
                .collect()
        }
        let before = mask();
        let allowed = before.iter().filter(|&&b| b).count();
        let cpu = super::current_cpu().expect("Linux says which CPU");
        assert!(before[cpu]);
        match super::step_off_cpu(cpu) {
            Some(off) => {
                assert!(allowed > 1);
                let during = mask();
                assert!(!during[cpu], "the CPU is out of the mask");
                assert_eq!(during.iter().filter(|&&b| b).count(), allowed - 1);
                // sched_setaffinity moves the calling thread before returning.
                assert_ne!(super::current_cpu(), Some(cpu));
                drop(off);
                assert_eq!(mask(), before, "the old mask is back");
            }
            None => assert_eq!(allowed, 1, "only a single allowed CPU refuses"),
        }
        assert!(super::step_off_cpu(usize::MAX).is_none());
    }

    #[test]
    fn cpu_time_grows_with_work_not_with_sleep() {
        let t0 = process_cpu_time();
        assert!(t0 > std::time::Duration::ZERO);
        // Work until the process has used 10 ms more CPU: on a loaded
        // machine 30 ms of wall time may give this thread less than that,
        // so the bound is generous; a clock that did not count work would
        // never get there.
        let mut x = 0u64;
        let start = std::time::Instant::now();
        let mut t1 = t0;
        while t1 - t0 < std::time::Duration::from_millis(10)
            && start.elapsed() < std::time::Duration::from_secs(20)
        {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            t1 = process_cpu_time();
        }
        std::hint::black_box(x);
        assert!(
            t1 - t0 >= std::time::Duration::from_millis(10),
            "{t0:?} -> {t1:?} after {:?} of work",
            start.elapsed()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
        let t2 = process_cpu_time();
        // Other test threads may run meanwhile; a sleep itself costs ~0.
        assert!(t2 >= t1);
    }
}
