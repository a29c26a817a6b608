//! Item 15 of issue 6: freed handles used again are reported, not crashes.
//! `tests/c/misuse.c` runs one scenario per process, so a crash in one
//! cannot hide the others.

mod support;

use std::process::Command;

use support::{build_c_test, checked};

fn scenario(which: &str) {
    let exe = build_c_test("misuse", &format!("misuse-{which}"));
    let out = Command::new(&exe)
        .arg(which)
        .env_remove("MOSAIC_VERIFY")
        .output()
        .unwrap();
    assert_eq!(checked(&exe, out).trim(), format!("{which}: 0 failures"));
}

#[test]
fn a_root_freed_twice_is_an_error_and_the_heap_stays_sound() {
    scenario("root");
}

#[test]
fn a_mutator_freed_twice_or_used_after_free_is_an_error() {
    scenario("mutator");
}

#[test]
fn a_freed_heap_used_again_is_an_error() {
    scenario("heap");
}
