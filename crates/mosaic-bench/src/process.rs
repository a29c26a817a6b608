//! Running one measured process: wall time from spawn to exit, peak RSS and
//! CPU time (user + system, all threads) from `wait4`'s rusage, and the
//! `RESULT {json}` / `TIME ms` lines it prints.
//!
//! On Linux a child's `ru_maxrss` is never below the peak RSS of the
//! process that forked it (`exec` keeps the high-water mark of the memory
//! it replaces, which for a child of this process is this process's). The
//! suite's own process grows to tens of MB, which would floor every
//! program's peak RSS there. So runs go through a launcher: this binary
//! again (`mosaic-bench --launch PROGRAM ARGS...`), freshly started and
//! small, which forks the program, waits for it and prints its rusage as
//! a `RUSAGE {json}` line. The floor is then the launcher's own few MB, the
//! same for every program ([`launcher_floor_mb`]).

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
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

/// This executable, if it is `mosaic-bench` (and so has `--launch`); not
/// in unit tests, whose executable is the test harness.
fn launcher() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    (exe.file_name()? == "mosaic-bench").then_some(exe)
}

/// `cmd` as a run of the launcher: the same program, arguments,
/// environment and directory.
fn through_launcher(exe: &PathBuf, cmd: &Command) -> Command {
    let mut l = Command::new(exe);
    l.arg("--launch")
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => l.env(k, v),
            None => l.env_remove(k),
        };
    }
    if let Some(d) = cmd.get_current_dir() {
        l.current_dir(d);
    }
    l
}

/// `mosaic-bench --launch PROGRAM ARGS...`: runs the program with this
/// process's standard streams, then prints `RUSAGE {"peak_rss_mb", "cpu_s",
/// "wall_s"}` of the program alone and exits with its status (128 + the
/// signal if it was killed). The program is killed if the launcher dies.
pub fn launch(argv: &[OsString]) -> ! {
    let Some((prog, rest)) = argv.split_first() else {
        eprintln!("usage: mosaic-bench --launch PROGRAM [ARGS...]");
        std::process::exit(2);
    };
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let mut cmd = Command::new(prog);
    cmd.args(rest);
    // SAFETY: runs in the forked child before exec and calls only prctl,
    // getppid and _exit, which are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != me {
                libc::_exit(137);
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cannot start {prog:?}: {e}");
            std::process::exit(127);
        }
    };
    let (status, usage) = wait(child.id() as libc::pid_t);
    let wall_s = start.elapsed().as_secs_f64();
    // Reaped by wait4 already; std's Child must not wait again.
    std::mem::forget(child);
    println!(
        "RUSAGE {}",
        serde_json::json!({
            "peak_rss_mb": usage.ru_maxrss as f64 / 1024.0,
            "cpu_s": cpu_seconds(&usage),
            "wall_s": wall_s,
        })
    );
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    std::process::exit(code);
}

/// Waits for child `pid`: its wait status and rusage.
fn wait(pid: libc::pid_t) -> (libc::c_int, libc::rusage) {
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child; `status` and `usage` are valid.
    unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    (status, usage)
}

fn cpu_seconds(usage: &libc::rusage) -> f64 {
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// The peak RSS the launcher reports for a program that uses almost no
/// memory (a shell printing a result line): the floor under every peak
/// RSS of the suite. `None` without the launcher (unit tests).
pub fn launcher_floor_mb() -> Option<f64> {
    launcher()?;
    let o = run(
        Command::new("sh").args(["-c", "echo 'RESULT {\"check\": 0}'"]),
        Duration::from_secs(30),
    );
    o.error.is_none().then_some(o.peak_rss_mb)
}

/// Runs `cmd` to completion (killed after `timeout`), through the launcher
/// when this is `mosaic-bench`.
pub fn run(cmd: &mut Command, timeout: Duration) -> Outcome {
    match launcher() {
        Some(exe) => run_direct(&mut through_launcher(&exe, cmd), timeout),
        None => run_direct(cmd, timeout),
    }
}

/// Runs `cmd` itself: its rusage is read by this process (peak RSS floored
/// at this process's), unless it is the launcher, whose `RUSAGE` line is
/// the program's own.
fn run_direct(cmd: &mut Command, timeout: Duration) -> Outcome {
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
    let (status, usage) = wait(pid);
    let wall_s = start.elapsed().as_secs_f64();
    let timed_out = killer.join().unwrap_or(false);
    let err = err_reader.join().unwrap_or_default();
    // Reaped by wait4 already; std's Child must not wait again.
    std::mem::forget(child);
    let mut o = Outcome {
        wall_s,
        cpu_s: cpu_seconds(&usage),
        peak_rss_mb: usage.ru_maxrss as f64 / 1024.0,
        ..Outcome::default()
    };
    for line in out.lines() {
        if let Some(j) = line.strip_prefix("RUSAGE ") {
            let u: Value = serde_json::from_str(j).unwrap_or_default();
            let f = |k: &str| u.get(k).and_then(Value::as_f64);
            if let (Some(rss), Some(cpu), Some(wall)) = (f("peak_rss_mb"), f("cpu_s"), f("wall_s"))
            {
                (o.peak_rss_mb, o.cpu_s, o.wall_s) = (rss, cpu, wall);
            }
        } else if let Some(j) = line.strip_prefix("RESULT ") {
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
