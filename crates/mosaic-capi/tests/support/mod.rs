//! Shared by the tests that compile C programs: the freshly built library,
//! a C compiler invocation and a runner.
#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// What a program linked against `libmosaic.a` also needs.
pub const STATIC_DEPS: &[&str] = &["-lpthread", "-ldl", "-lm", "-lrt", "-lutil", "-lgcc_s"];

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `target/<profile>`, with libmosaic.{a,so} freshly built: `cargo test`
/// does not rebuild a crate's cdylib/staticlib outputs for its integration
/// tests, so build them here (once per test binary) with the same cargo.
pub fn lib_dir() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().unwrap();
            let dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
            let mut cmd = Command::new(env!("CARGO"));
            cmd.args(["build", "-p", "mosaic-capi", "--lib"]);
            if dir.file_name().is_some_and(|n| n == "release") {
                cmd.arg("--release");
            }
            let status = cmd.status().expect("cargo runs");
            assert!(status.success(), "building libmosaic failed");
            for f in ["libmosaic.a", "libmosaic.so"] {
                assert!(
                    dir.join(f).exists(),
                    "{} was not built",
                    dir.join(f).display()
                );
            }
            dir
        })
        .clone()
}

/// A fresh, empty scratch directory.
pub fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compiles `src` (strict warnings) against the checked-in header.
pub fn compile(src: &Path, out: &Path, args: &[String]) {
    let status = Command::new("cc")
        .args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror"])
        .arg("-I")
        .arg(repo().join("include"))
        .arg(src)
        .arg("-o")
        .arg(out)
        .args(args)
        .status()
        .expect("cc runs");
    assert!(status.success(), "compiling {} failed", src.display());
}

/// Runs `exe` with the given extra variables (and without `MOSAIC_VERIFY`
/// or `LD_LIBRARY_PATH` from the test's environment).
pub fn run_with(exe: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(exe);
    cmd.env_remove("MOSAIC_VERIFY")
        .env_remove("LD_LIBRARY_PATH");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// Runs `exe`, asserts it exits 0 and returns its standard output.
pub fn run(exe: &Path) -> String {
    checked(exe, run_with(exe, &[]))
}

/// The standard output of a run that must have exited 0.
pub fn checked(exe: &Path, out: Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{} failed ({}): {}\n{}",
        exe.display(),
        out.status,
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Arguments linking the static library.
pub fn static_args() -> Vec<String> {
    let mut v = vec![lib_dir().join("libmosaic.a").display().to_string()];
    v.extend(STATIC_DEPS.iter().map(|s| s.to_string()));
    v
}

/// Arguments linking the shared library (found at run time via an rpath).
pub fn shared_args() -> Vec<String> {
    let dir = lib_dir().display().to_string();
    vec![
        format!("-L{dir}"),
        "-lmosaic".into(),
        format!("-Wl,-rpath,{dir}"),
        "-pthread".into(),
    ]
}

/// Compiles `tests/c/<name>.c` against the static library and runs it;
/// the program prints "N failures" last and exits nonzero on any.
pub fn run_c_test(name: &str) -> String {
    run_c_test_with(name, &[])
}

/// As `run_c_test`, with extra environment variables.
pub fn run_c_test_with(name: &str, env: &[(&str, &str)]) -> String {
    let exe = build_c_test(name, name);
    checked(&exe, run_with(&exe, env))
}

/// Compiles `tests/c/<name>.c` against the static library into a scratch
/// directory named `dir`; returns the executable.
pub fn build_c_test(name: &str, dir: &str) -> PathBuf {
    let exe = tmp(&format!("{dir}-static")).join(name);
    compile(
        &repo().join(format!("crates/mosaic-capi/tests/c/{name}.c")),
        &exe,
        &static_args(),
    );
    exe
}
