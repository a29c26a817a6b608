//! C programs compiled against `include/mosaic.h` and the library cargo just
//! built (static and shared). The install script and pkg-config files are
//! tested in `pkg_config.rs`, misuse of freed handles in `misuse.rs`.

mod support;

use support::{
    build_c_test, checked, compile, repo, run, run_c_test, run_c_test_with, run_with, shared_args,
    static_args, tmp,
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
/// successful call resets the last error. Also against the shared library,
/// whose thread-locals go through `__tls_get_addr`.
#[test]
fn every_failing_call_sets_the_last_error_and_every_success_clears_it() {
    assert_eq!(run_c_test("errors").trim(), "0 failures");
    let exe = tmp("errors-shared").join("errors");
    compile(
        &repo().join("crates/mosaic-capi/tests/c/errors.c"),
        &exe,
        &shared_args(),
    );
    assert_eq!(run(&exe).trim(), "0 failures");
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

/// A user copying the example keeps the `MOSAIC_*` variables, and a bad one
/// is reported.
#[test]
fn minimal_c_example_honours_mosaic_variables() {
    let exe = tmp("minimal-env").join("minimal");
    compile(&repo().join("examples/c/minimal.c"), &exe, &static_args());
    let env = [("MOSAIC_MAX_HEAP", "32M"), ("MOSAIC_STRESS", "97")];
    let out = checked(&exe, run_with(&exe, &env));
    assert!(out.contains(" of 32 MiB max"), "{out}");
    let gcs: u64 = out
        .strip_prefix("mosaic: ")
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no GC count in {out}"));
    // 102001 allocations, a collection every 97.
    assert!(gcs >= 102_001 / 97, "{gcs} GCs: {out}");
    assert!(
        out.contains("list ok: yes, live objects: 2000, strings freed: 1\n"),
        "{out}"
    );
    let bad = run_with(&exe, &[("MOSAIC_GROWTH_FACTOR", "lots")]);
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "mosaic_config_from_env: invalid configuration: MOSAIC_GROWTH_FACTOR=\"lots\""
        ),
        "{stderr}"
    );
}

/// mosaic.h: a Rust panic while C called in prints its message and aborts.
#[test]
fn a_panic_inside_the_library_aborts_with_its_message() {
    use std::os::unix::process::ExitStatusExt;
    let exe = build_c_test("panic", "panic");
    let out = run_with(&exe, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.signal(),
        Some(6),
        "not SIGABRT: {}\n{stderr}",
        out.status
    );
    assert_eq!(stdout, "collecting\n");
    assert!(stderr.contains("mosaic verify: "), "{stderr}");
}

#[test]
fn a_second_mutator_per_thread_is_refused_and_an_exited_threads_mutator_is_detached() {
    assert_eq!(support::run_c_test("threads").trim(), "0 failures");
}

/// Finalizers run once per unreachable object with their data and the
/// running thread's mutator; ordered, unordered, resurrection, notifier,
/// finalizer thread.
#[test]
fn finalizers_run_once_for_unreachable_objects_in_order() {
    assert_eq!(run_c_test("finalizers").trim(), "0 failures");
}

/// Weak handles and weak slots are cleared exactly when their target dies,
/// short ones before finalization, long ones after.
#[test]
fn weak_handles_and_slots_are_cleared_when_their_target_dies() {
    assert_eq!(run_c_test("weak").trim(), "0 failures");
}

/// An ephemeron keeps its value while its key lives; both become NULL when
/// the key dies.
#[test]
fn ephemerons_keep_values_only_while_keys_live() {
    assert_eq!(run_c_test("ephemerons").trim(), "0 failures");
}

/// A conservatively traced buffer (every word handed to
/// `mosaic_visit_ambiguous_range` from `trace`) keeps the objects its words
/// point into alive and in place while every collection compacts.
#[test]
fn conservatively_traced_objects_keep_what_their_words_point_into() {
    assert_eq!(run_c_test("conservative_objects").trim(), "0 failures");
}

/// A large root range given with `mosaic_defer_ambiguous_range` keeps
/// exactly what its words point into, on one GC worker and on two (where
/// it is queued in pieces and shared out).
#[test]
fn a_deferred_root_range_keeps_exactly_what_it_points_into() {
    assert_eq!(run_c_test("deferred_roots").trim(), "0 failures");
}

/// Events arrive START, MARK_END, END with their reason and figures.
#[test]
fn gc_events_arrive_in_order_with_reasons_and_figures() {
    assert_eq!(run_c_test("events").trim(), "0 failures");
}

/// `mutator_roots` gets each mutator's handle and data; what it reports
/// survives.
#[test]
fn mutator_roots_receives_each_mutator_and_its_data() {
    assert_eq!(run_c_test("mutator_roots").trim(), "0 failures");
}

/// Another thread collects while one is inside
/// `mosaic_blocking_enter`..`leave`, which refuses heap work meanwhile.
#[test]
fn blocking_enter_and_leave_let_other_threads_collect() {
    assert_eq!(run_c_test("blocking").trim(), "0 failures");
}

/// Scope slots keep their objects alive until closed; scopes nest.
#[test]
fn scope_slots_keep_objects_alive_until_closed() {
    assert_eq!(run_c_test("scope").trim(), "0 failures");
}

/// `mosaic_alloc_aligned` aligns as asked; `mosaic_alloc` keeps the
/// header's alignment promise.
#[test]
fn inline_fast_path_and_uninit_allocations() {
    let out = run_c_test("inline");
    println!("{out}");
    assert!(out.trim().ends_with("0 failures"), "{out}");
    assert!(out.contains("ns/alloc 32 B"), "{out}");
}

/// Generational mode from C: barriered stores with the inline barrier,
/// unbarriered objects, a bulk copy, minor collections' counts and
/// events, in plain and verify mode; prints the barrier's cost.
#[test]
fn generational_mode_with_the_inline_write_barrier() {
    let out = run_c_test("generational");
    println!("{out}");
    assert!(out.trim().ends_with("0 failures"), "{out}");
    assert!(out.contains("ns/store with barrier"), "{out}");
    let exe = build_c_test("generational", "generational-verify");
    let out = std::process::Command::new(&exe)
        .arg("verify")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.trim() == "0 failures",
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn aligned_allocations_are_aligned() {
    assert_eq!(run_c_test("aligned").trim(), "0 failures");
}

/// Bad input to the new functions, and callbacks that allocate, collect or
/// block, are error codes; the heap works on.
#[test]
fn bad_input_to_the_embedder_interface_is_an_error_not_a_crash() {
    assert_eq!(run_c_test("bad_input").trim(), "0 failures");
}

/// The shared library too: its thread-locals (the last error, the
/// "inside a callback" flag) go through `__tls_get_addr`, and the
/// finalizer thread is spawned from inside it.
#[test]
fn finalizers_and_bad_input_against_the_shared_library() {
    for name in ["finalizers", "bad_input"] {
        let exe = tmp(&format!("{name}-shared")).join(name);
        compile(
            &repo().join(format!("crates/mosaic-capi/tests/c/{name}.c")),
            &exe,
            &shared_args(),
        );
        assert_eq!(run(&exe).trim(), "0 failures", "{name}");
    }
}

/// Compaction from C: a pinned cell keeps its address while the others
/// move (`on_move`, `resize`), the list stays intact, ambiguous words keep
/// their objects in place, the stats agree, the heap dump has its lines;
/// with `mosaic_conservative_stack`, a list held only in a C local
/// survives collections that compact. Misuse is refused.
#[test]
fn compaction_moves_unpinned_objects_and_conservative_stacks_keep_locals() {
    let exe = build_c_test("compact", "compact");
    let dump = tmp("compact-dump").join("heap.jsonl");
    let out = std::process::Command::new(&exe)
        .arg(&dump)
        .env_remove("MOSAIC_VERIFY")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert_eq!(checked(&exe, out).trim(), "0 failures");
    let text = std::fs::read_to_string(&dump).unwrap();
    let mut lines = text.lines();
    let heap = lines.next().unwrap_or_default();
    assert!(heap.starts_with("{\"type\":\"HEAP\""), "{heap}");
    let objects = text
        .lines()
        .filter(|l| l.contains("\"type\":\"OBJECT\""))
        .count();
    let pages = text
        .lines()
        .filter(|l| l.contains("\"type\":\"PAGE\""))
        .count();
    assert!(
        objects >= 4000 && pages > 0,
        "{objects} objects, {pages} pages"
    );
    assert!(heap.contains(&format!("\"objects\":{objects}")), "{heap}");
}

/// `MOSAIC_COMPACT`, `MOSAIC_COMPACT_TOWARD` and `MOSAIC_VERIFY_COMPACTION`
/// reach `mosaic_config_from_env`; a bad value is a configuration error.
#[test]
fn compaction_variables_reach_the_c_config() {
    let out = run_c_test_with(
        "config_compact",
        &[
            ("MOSAIC_COMPACT", "auto"),
            ("MOSAIC_COMPACT_TOWARD", "address"),
            ("MOSAIC_VERIFY_COMPACTION", "1"),
        ],
    );
    assert_eq!(out.trim(), "0 failures");
}

/// `MOSAIC_KEEP_REFERENTS`: `on_free` reads what a dead keeper referenced;
/// chains lose a link per collection; without the flag nothing is kept.
#[test]
fn keepers_referents_live_until_their_on_free() {
    assert_eq!(run_c_test("keep_referents").trim(), "0 failures");
}

/// `mosaic_free`: freed memory is reused at once and cleared, a large
/// object's pages come back, bad frees are errors that lose nothing.
#[test]
fn freed_objects_are_reused_at_once_and_bad_frees_are_refused() {
    assert_eq!(run_c_test("free").trim(), "0 failures");
}
