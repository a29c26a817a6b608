//! The README's C build lines, as a user runs them: `scripts/install-capi.sh`
//! installs both libraries into a fresh prefix (from the libraries cargo
//! just built, through `MOSAIC_LIB_DIR`), then each `cc $(pkg-config ...)`
//! line of the README builds `examples/c/minimal.c` as `prog.c`. Every
//! program must start without `LD_LIBRARY_PATH`; the static build must not
//! need `libmosaic.so` and the shared one must.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::{checked, lib_dir, repo, run_with, tmp};

/// The README's `cc $(pkg-config ...)` commands (up to a closing backtick
/// or the end of the line).
fn readme_build_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mut commands = Vec::new();
    let mut rest = readme.as_str();
    while let Some(i) = rest.find("cc $(pkg-config") {
        let tail = &rest[i..];
        let end = tail.find(['`', '\n']).unwrap_or(tail.len());
        commands.push(tail[..end].trim().to_string());
        rest = &tail[end..];
    }
    commands
}

fn install(prefix: &Path) {
    let out = Command::new(repo().join("scripts/install-capi.sh"))
        .arg(prefix)
        .env("MOSAIC_LIB_DIR", lib_dir())
        .output()
        .expect("bash runs");
    checked(Path::new("scripts/install-capi.sh"), out);
    for f in [
        "lib/libmosaic.a",
        "lib/libmosaic.so",
        "include/mosaic.h",
        "lib/pkgconfig/mosaic.pc",
        "lib/pkgconfig/mosaic-static.pc",
    ] {
        assert!(prefix.join(f).is_file(), "the script did not install {f}");
    }
    assert_eq!(
        std::fs::read(prefix.join("include/mosaic.h")).unwrap(),
        std::fs::read(repo().join("include/mosaic.h")).unwrap()
    );
}

/// Runs `command` with `sh` in a fresh directory holding only `prog.c`;
/// returns the one file it created.
fn build(command: &str, dir: &Path, prefix: &Path) -> PathBuf {
    std::fs::copy(repo().join("examples/c/minimal.c"), dir.join("prog.c")).unwrap();
    let out = Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .output()
        .unwrap();
    checked(Path::new(command), out);
    let made: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "prog.c")
        .collect();
    assert_eq!(made.len(), 1, "`{command}` made {made:?}");
    made[0].clone()
}

fn dynamic_section(exe: &Path) -> String {
    let out = Command::new("readelf").arg("-d").arg(exe).output().unwrap();
    checked(Path::new("readelf"), out)
}

#[test]
fn readme_build_lines_work_against_an_installed_prefix() {
    let prefix = tmp("pkgconfig-prefix");
    install(&prefix);
    let commands = readme_build_commands();
    let (mut shared, mut static_) = (0, 0);
    for (i, command) in commands.iter().enumerate() {
        let exe = build(command, &tmp(&format!("pkgconfig-build-{i}")), &prefix);
        let out = checked(&exe, run_with(&exe, &[]));
        assert!(
            out.contains("list ok: yes, live objects: 2000"),
            "`{command}`: {out}"
        );
        let dynamic = dynamic_section(&exe);
        let needs_so = dynamic.contains("Shared library: [libmosaic.so]");
        if command.contains("mosaic-static") || command.contains("--static") {
            assert!(!needs_so, "`{command}` linked libmosaic.so:\n{dynamic}");
            static_ += 1;
        } else {
            assert!(
                needs_so,
                "`{command}` did not link libmosaic.so:\n{dynamic}"
            );
            let rpath = format!("[{}]", prefix.join("lib").display());
            assert!(
                dynamic.contains(&rpath),
                "`{command}`: no rpath {rpath}:\n{dynamic}"
            );
            shared += 1;
        }
    }
    assert_eq!(
        (shared, static_),
        (1, 1),
        "the README should show one shared and one static build: {commands:?}"
    );
}
