//! C programs compiled against `include/mosaic.h` and the library cargo just
//! built (static and shared), plus the pkg-config file.

use std::path::{Path, PathBuf};
use std::process::Command;

const STATIC_DEPS: &[&str] = &["-lpthread", "-ldl", "-lm", "-lrt", "-lutil", "-lgcc_s"];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `target/<profile>`, with libmosaic.{a,so} freshly built: `cargo test`
/// does not rebuild a crate's cdylib/staticlib outputs for its integration
/// tests, so build them here (once per test binary) with the same cargo.
fn lib_dir() -> PathBuf {
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

fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn compile(src: &Path, out: &Path, args: &[String]) {
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

fn run(exe: &Path) -> String {
    let out = Command::new(exe)
        .env_remove("MOSAIC_VERIFY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{} failed: {}\n{}",
        exe.display(),
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn static_args() -> Vec<String> {
    let mut v = vec![lib_dir().join("libmosaic.a").display().to_string()];
    v.extend(STATIC_DEPS.iter().map(|s| s.to_string()));
    v
}

#[test]
fn c_tree_program_against_the_static_library() {
    let exe = tmp("tree-static").join("tree");
    compile(
        &repo().join("crates/mosaic-capi/tests/c/tree.c"),
        &exe,
        &static_args(),
    );
    assert_eq!(run(&exe).trim(), "0 failures");
}

#[test]
fn c_tree_program_against_the_shared_library() {
    let exe = tmp("tree-shared").join("tree");
    let dir = lib_dir().display().to_string();
    compile(
        &repo().join("crates/mosaic-capi/tests/c/tree.c"),
        &exe,
        &[
            format!("-L{dir}"),
            "-lmosaic".into(),
            format!("-Wl,-rpath,{dir}"),
        ],
    );
    assert_eq!(run(&exe).trim(), "0 failures");
}

#[test]
fn minimal_c_example_runs() {
    let exe = tmp("minimal").join("minimal");
    compile(&repo().join("examples/c/minimal.c"), &exe, &static_args());
    let out = run(&exe);
    assert!(
        out.contains("list ok: yes, live objects: 2000, strings freed: 1\n"),
        "{out}"
    );
    assert!(
        out.contains("strings freed after the heap is gone: 1001"),
        "{out}"
    );
}

#[test]
fn pkg_config_file_describes_an_installed_library() {
    // Lay out an install prefix the way scripts/install-capi.sh does.
    let prefix = tmp("pkgconfig-prefix");
    for d in ["lib/pkgconfig", "include"] {
        std::fs::create_dir_all(prefix.join(d)).unwrap();
    }
    std::fs::copy(
        repo().join("include/mosaic.h"),
        prefix.join("include/mosaic.h"),
    )
    .unwrap();
    std::fs::copy(
        lib_dir().join("libmosaic.a"),
        prefix.join("lib/libmosaic.a"),
    )
    .unwrap();
    let template = std::fs::read_to_string(repo().join("crates/mosaic-capi/mosaic.pc.in")).unwrap();
    let pc = template
        .replace("@PREFIX@", &prefix.display().to_string())
        .replace("@VERSION@", env!("CARGO_PKG_VERSION"));
    std::fs::write(prefix.join("lib/pkgconfig/mosaic.pc"), pc).unwrap();
    let out = Command::new("pkg-config")
        .args(["--static", "--cflags", "--libs", "mosaic"])
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .output()
        .expect("pkg-config is installed (the CI script installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let flags: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect();
    assert!(flags.iter().any(|f| f == "-lmosaic"), "{flags:?}");
    // -lmosaic finds only the static library in this prefix.
    let exe = tmp("pkgconfig-build").join("minimal");
    compile(&repo().join("examples/c/minimal.c"), &exe, &flags);
    assert!(run(&exe).contains("list ok: yes"));
}
