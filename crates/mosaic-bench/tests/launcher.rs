//! The launcher (`mosaic-bench --launch`) reports a program's own peak RSS,
//! not the peak of the process that started it: Linux carries the parent's
//! high-water mark into a forked child's `ru_maxrss`, which floored every
//! peak RSS of the suite at the suite's own.

use std::process::Command;

/// Touches `mb` MiB so that this process's RSS is at least that.
fn grow(mb: usize) -> Vec<u8> {
    let mut v = vec![0u8; mb << 20];
    for i in (0..v.len()).step_by(4096) {
        v[i] = 1;
    }
    v
}

/// The `RUSAGE` line's peak RSS from the launcher's output.
fn launched_peak_mb(program: &str, args: &[&str]) -> (f64, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mosaic-bench"))
        .arg("--launch")
        .arg(program)
        .args(args)
        .output()
        .expect("launcher runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RUSAGE "))
        .unwrap_or_else(|| panic!("no RUSAGE line in {stdout:?}"));
    let v: serde_json::Value = serde_json::from_str(line).expect("json");
    (v["peak_rss_mb"].as_f64().expect("peak_rss_mb"), stdout)
}

#[test]
fn a_small_program_is_not_floored_at_a_big_parents_rss() {
    let big = grow(300);
    // Started directly, `true` reports this process's 300 MB.
    // Reaped below by wait4, which std's Child cannot do with a rusage.
    #[allow(clippy::zombie_processes)]
    let direct = Command::new("true").spawn().unwrap();
    let pid = direct.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child.
    unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert!(
        usage.ru_maxrss > 250 << 10,
        "direct: {} KiB",
        usage.ru_maxrss
    );
    // Through the launcher: `true`'s own few MB.
    let (peak, _) = launched_peak_mb("true", &[]);
    assert!(peak < 50.0, "launched true: {peak} MB");
    std::hint::black_box(&big);
}

#[test]
fn a_programs_own_peak_its_output_and_exit_status_come_through() {
    let (peak, out) = launched_peak_mb(
        "sh",
        &[
            "-c",
            "echo 'RESULT {}'; head -c 60000000 /dev/zero | tail -c 1 >/dev/null",
        ],
    );
    // head and tail stream the 60 MB through small buffers: the output
    // passes through and the peak is a real, small figure (not 0).
    assert!(out.starts_with("RESULT {}"), "{out:?}");
    assert!(peak > 0.2 && peak < 100.0, "{peak}");
    let st = Command::new(env!("CARGO_BIN_EXE_mosaic-bench"))
        .args(["--launch", "sh", "-c", "exit 3"])
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(3));
    let st = Command::new(env!("CARGO_BIN_EXE_mosaic-bench"))
        .args(["--launch", "/nonexistent/program"])
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(127));
}
