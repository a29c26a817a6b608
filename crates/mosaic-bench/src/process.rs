//! Running one measured process: wall time from spawn to exit, peak RSS and
//! CPU time (user + system, all threads) from `wait4`'s rusage, and the
//! `RESULT {json}` / `TIME ms` lines it prints.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

/// What one run measured.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Outcome {
    pub wall_s: f64,
    /// User plus system CPU time of the whole process (every thread: a
    /// collector's helper threads on other cores show here, not in wall
    /// time).
    pub cpu_s: f64,
    /// The program's own timing of its measured part, when it reports one.
    pub inner_ms: Option<f64>,
    pub peak_rss_mb: f64,
    pub result: Map<String, Value>,
    pub error: Option<String>,
}

impl Outcome {
    pub fn get(&self, key: &str) -> Option<f64> {
        self.result.get(key).and_then(Value::as_f64)
    }

    pub fn check(&self) -> Option<u64> {
        self.result.get("check").and_then(Value::as_u64)
    }
}

/// Runs `cmd` to completion (killed after `timeout`).
pub fn run(cmd: &mut Command, timeout: Duration) -> Outcome {
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null());
    let start = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Outcome {
                error: Some(format!("cannot start {:?}: {e}", cmd.get_program())),
                ..Outcome::default()
            }
        }
    };
    let pid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let killer = std::thread::spawn(move || {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            // SAFETY: signal 0 only checks that the process exists.
            if unsafe { libc::kill(pid, 0) } != 0 {
                return false;
            }
        }
        // SAFETY: killing our own child that overran its time limit.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        true
    });
    let mut out = String::new();
    let _ = stdout.read_to_string(&mut out);
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child; `status` and `usage` are valid.
    unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall_s = start.elapsed().as_secs_f64();
    let timed_out = killer.join().unwrap_or(false);
    let err = err_reader.join().unwrap_or_default();
    // Reaped by wait4 already; std's Child must not wait again.
    std::mem::forget(child);
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let mut o = Outcome {
        wall_s,
        cpu_s: secs(usage.ru_utime) + secs(usage.ru_stime),
        peak_rss_mb: usage.ru_maxrss as f64 / 1024.0,
        ..Outcome::default()
    };
    for line in out.lines() {
        if let Some(j) = line.strip_prefix("RESULT ") {
            match serde_json::from_str::<Value>(j) {
                Ok(Value::Object(m)) => o.result = m,
                _ => o.error = Some(format!("unreadable result: {j}")),
            }
        } else if let Some(t) = line.strip_prefix("TIME ") {
            o.inner_ms = t.trim().parse().ok();
        }
    }
    let exited_ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    if timed_out {
        o.error = Some(format!("killed after {}s", timeout.as_secs()));
    } else if !exited_ok || o.result.is_empty() {
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output");
        o.error = Some(format!(
            "failed: {}",
            last.chars().take(160).collect::<String>()
        ));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_result_time_and_rss_are_read() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo 'TIME 12.5'; echo 'RESULT {\"check\": 7}'; head -c 30000000 /dev/zero | tail -c 1 >/dev/null"]);
        let o = run(&mut c, Duration::from_secs(30));
        assert_eq!(o.error, None);
        assert_eq!(o.check(), Some(7));
        assert_eq!(o.inner_ms, Some(12.5));
        assert!(o.wall_s > 0.0 && o.peak_rss_mb > 0.5, "{o:?}");
        assert!(o.cpu_s > 0.0 && o.cpu_s < 30.0, "{o:?}");
    }

    #[test]
    fn failures_and_timeouts_are_reported() {
        let o = run(
            Command::new("sh").args(["-c", "echo boom >&2; exit 3"]),
            Duration::from_secs(30),
        );
        assert!(o.error.as_deref().unwrap().contains("boom"), "{o:?}");
        let o = run(Command::new("sleep").arg("5"), Duration::from_millis(200));
        assert!(o.error.as_deref().unwrap().contains("killed"), "{o:?}");
        let o = run(
            &mut Command::new("/nonexistent/peer"),
            Duration::from_secs(1),
        );
        assert!(o.error.as_deref().unwrap().contains("cannot start"));
    }
}
