//! C programs compiled against `include/mosaic.h` and the library cargo just
//! built (static and shared), plus the pkg-config file.

mod support;

use std::process::Command;

use support::{
    compile, lib_dir, repo, run, run_c_test, run_c_test_with, shared_args, static_args, tmp,
};

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
    compile(
        &repo().join("crates/mosaic-capi/tests/c/tree.c"),
        &exe,
        &shared_args(),
    );
    assert_eq!(run(&exe).trim(), "0 failures");
}

/// Item 8 of issue 6: NULL handles are errors naming the function, and a
/// successful call resets the last error.
#[test]
fn every_failing_call_sets_the_last_error_and_every_success_clears_it() {
    assert_eq!(run_c_test("errors").trim(), "0 failures");
}

/// Item 9 of issue 6: a custom size-class list survives
/// `mosaic_config_from_env`.
#[test]
fn config_from_env_keeps_a_custom_size_class_list() {
    let out = run_c_test_with("config_env", &[("MOSAIC_SIZE_CLASSES", "16,48,96")]);
    assert_eq!(out.trim(), "0 failures");
}

/// The other direction of item 9: a list written into `mosaic_config`.
#[test]
fn custom_size_classes_in_the_config_reach_the_heap_and_bad_lists_are_config_errors() {
    assert_eq!(run_c_test("config_classes").trim(), "0 failures");
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
