//! C programs written against bdwgc's installed header (`/usr/include/gc`,
//! Debian's libgc-dev), linked with `-lgc` against Mosaic's libgc.so and run
//! on it: threads that never call in are stopped and scanned, a thread
//! blocked in `read` keeps its data, bad input gets bdwgc's answers,
//! finalizers and disappearing links behave as bdwgc documents, a collection
//! never waits for a malloc lock a stopped thread holds, `GC_set_max_heap_size`
//! works after `GC_INIT`, collection and thread events come in bdwgc's
//! order, a disclaim procedure sees an object a weak map revived,
//! `GC_malloc_many`'s lists are whole and kept by their heads, the
//! library loaded with `dlopen` works, and fibers work as runtimes built on
//! bdwgc run them (stack bottoms moved, allocation inside a collection), a
//! program with every floating-point trap on neither traps in the
//! collector nor finds a flag it raised, and calls that succeed leave
//! `errno` alone. (bdwgc's own
//! tests, w3m and other packaged programs run in `scripts/dropin/run-tests.sh`.)
//!
//! Without the header the tests say so and pass (`.ci/run` installs it).

use std::path::{Path, PathBuf};
use std::process::Command;

fn header_missing() -> bool {
    if Path::new("/usr/include/gc/gc.h").exists() {
        return false;
    }
    eprintln!("SKIPPED: /usr/include/gc/gc.h not found (apt-get install libgc-dev)");
    true
}

/// `target/<profile>` with libgc.so freshly built (cargo does not rebuild a
/// crate's cdylib for its integration tests), and a directory holding it
/// under its soname.
fn lib_dir() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().unwrap();
            let dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
            let mut cmd = Command::new(env!("CARGO"));
            cmd.args(["build", "-p", "mosaic-gc", "--lib"]);
            if dir.file_name().is_some_and(|n| n == "release") {
                cmd.arg("--release");
            }
            assert!(
                cmd.status().expect("cargo runs").success(),
                "building libgc.so failed"
            );
            let so = dir.join("libgc.so");
            assert!(so.exists(), "{} was not built", so.display());
            let link_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mosaic-gc-lib");
            std::fs::create_dir_all(&link_dir).unwrap();
            for name in ["libgc.so.1", "libgc.so"] {
                let l = link_dir.join(name);
                let _ = std::fs::remove_file(&l);
                std::os::unix::fs::symlink(&so, &l).unwrap();
            }
            link_dir
        })
        .clone()
}

/// Builds `tests/c/<name>.c` against the installed header and Mosaic's
/// library, runs it on Mosaic's library, and returns its output.
fn run_c(name: &str) -> String {
    run_c_with(name, &[])
}

/// [`run_c`] with more environment variables.
fn run_c_with(name: &str, env: &[(&str, &str)]) -> String {
    run_c_linked(name, &["-lgc"], env)
}

/// [`run_c_with`], linked with `link` (instead of `-lgc`).
fn run_c_linked(name: &str, link: &[&str], env: &[(&str, &str)]) -> String {
    run_c_output(name, link, env).0
}

/// [`run_c_linked`]'s standard output and standard error.
fn run_c_output(name: &str, link: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let lib = lib_dir();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/c/{name}.c"));
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let status = Command::new("cc")
        .args(["-O1", "-Wall", "-Werror", "-pthread", "-I/usr/include/gc"])
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&lib)
        .args(link)
        .status()
        .expect("cc runs");
    assert!(status.success(), "compiling {} failed", src.display());
    let out = Command::new("timeout")
        .arg("120")
        .arg(&exe)
        .env("LD_LIBRARY_PATH", &lib)
        .env_remove("MOSAIC_VERIFY")
        .envs(env.iter().copied())
        .output()
        .expect("the program runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{name} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    (stdout, stderr.into_owned())
}

/// Every line of the program's report ends in "ok", and there are `n`.
fn all_ok(out: &str, n: usize) {
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), n, "report:\n{out}");
    for l in lines {
        assert!(l.ends_with(": ok"), "{l}\nreport:\n{out}");
    }
}

/// `GC_get_expl_freed_bytes_since_gc` counts every `GC_free` (each
/// thread counts its own, and an exited thread's count stays) until a
/// collection.
#[test]
fn explicit_frees_are_counted_on_every_thread_until_a_collection() {
    if header_missing() {
        return;
    }
    all_ok(&run_c("explicit_free"), 9);
}

/// `GC_gcollect_and_unmap` (and `GC_gcollect` with
/// `GC_set_force_unmap_on_gcollect(1)`) gives the free heap back to the
/// OS; live objects stay intact.
#[test]
fn a_collection_that_unmaps_gives_the_free_heap_back() {
    if header_missing() {
        return;
    }
    all_ok(&run_c("unmap"), 4);
}

/// `GC_PRINT_STATS=1` logs two lines per collection, as bdwgc logs its
/// "Marking for collection #N after M allocated bytes" and its end: the
/// start (bytes allocated since the last one, heap, target) and the end
/// (live bytes, heap, pause), numbered from 1 in order.
#[test]
fn print_stats_logs_the_start_and_end_of_every_collection() {
    if header_missing() {
        return;
    }
    let (out, err) = run_c_output("unmap", &["-lgc"], &[("GC_PRINT_STATS", "1")]);
    all_ok(&out, 4);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("mosaic-gc: collection #"))
        .collect();
    assert!(lines.len() >= 6, "too few collections logged:\n{err}");
    assert_eq!(lines.len() % 2, 0, "a start without its end:\n{err}");
    let field = |l: &str, after: &str| -> u64 {
        let rest = &l[l
            .find(after)
            .unwrap_or_else(|| panic!("no {after:?} in {l:?}"))
            + after.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits
            .parse()
            .unwrap_or_else(|_| panic!("no number after {after:?} in {l:?}"))
    };
    for (i, pair) in lines.chunks(2).enumerate() {
        let (start, end) = (pair[0], pair[1]);
        let n = i as u64 + 1;
        assert_eq!(field(start, "#"), n, "{start}");
        assert_eq!(field(end, "#"), n, "{end}");
        assert!(
            start.contains(" KiB allocated, heap ") && start.contains(" KiB, target "),
            "{start}"
        );
        assert!(
            end.contains(" KiB live, heap ") && end.contains(", pause "),
            "{end}"
        );
        assert!(
            field(start, "heap ") > 0 && field(start, "target ") > 0,
            "{start}"
        );
    }
    // The program's last collections keep its 4 MiB list (and its pages).
    let last = lines[lines.len() - 1];
    let n = lines.len() / 2;
    assert!(field(last, &format!("#{n}: ")) >= 4096, "{last}");
    assert!(field(last, "heap ") >= 4096, "{last}");
}

#[test]
fn threads_that_never_call_in_are_stopped_and_scanned() {
    if header_missing() {
        return;
    }
    all_ok(&run_c("spinning_threads"), 4);
}

/// A large `GC_add_roots` range (queued in pieces for two markers) keeps
/// its objects; a thread the collector does not stop removes and unmaps
/// ranges while collections run, and no collection reads one afterwards.
#[test]
fn added_roots_are_marked_on_two_markers_and_removed_safely() {
    if header_missing() {
        return;
    }
    all_ok(
        &run_c_with(
            "added_roots",
            &[("GC_MARKERS", "2"), ("MOSAIC_PARALLEL_MIN_LIVE", "0")],
        ),
        2,
    );
}

#[test]
fn bad_input_gets_a_clear_answer_and_loses_nothing() {
    if header_missing() {
        return;
    }
    all_ok(&run_c("bad_input"), 4);
}

#[test]
fn finalizers_and_disappearing_links() {
    if header_missing() {
        return;
    }
    all_ok(&run_c("finalizers_links"), 7);
}

#[test]
fn a_disclaim_procedure_sees_a_revival_made_before_a_later_collection() {
    if header_missing() {
        return;
    }
    all_ok(&run_c("disclaim_revival"), 4);
}

#[test]
fn malloc_many_lists_are_linked_sized_distinct_and_kept_by_their_heads() {
    if header_missing() {
        return;
    }
    all_ok(&run_c("malloc_many"), 4);
}

#[test]
fn kinds_and_mark_procedures() {
    if header_missing() {
        return;
    }
    all_ok(&run_c("kinds_mark_procs"), 10);
}

#[test]
fn threads_suspended_and_resumed() {
    if header_missing() {
        return;
    }
    all_ok(&run_c("suspend_thread"), 6);
}

#[test]
fn collections_never_wait_for_a_malloc_lock_a_stopped_thread_holds() {
    if header_missing() {
        return;
    }
    let env = [
        // Every collection marks on the GC workers.
        ("MOSAIC_PARALLEL_MIN_LIVE", "0"),
        // No per-thread cache: every malloc takes its arena's lock.
        ("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0"),
    ];
    all_ok(&run_c_with("malloc_arenas", &env), 2);
}

#[test]
fn the_maximum_heap_size_changes_after_init() {
    if header_missing() {
        return;
    }
    all_ok(&run_c("max_heap_size"), 2);
}

#[test]
fn collection_and_thread_events_in_bdwgc_order() {
    if header_missing() {
        return;
    }
    all_ok(&run_c("events"), 6);
}

#[test]
fn loaded_with_dlopen_by_a_program_not_linked_with_it() {
    if header_missing() {
        return;
    }
    all_ok(&run_c_linked("dlopened", &["-ldl"], &[]), 5);
}

#[test]
fn fibers_move_stack_bottoms_and_allocate_during_a_collection() {
    if header_missing() {
        return;
    }
    all_ok(&run_c("fibers"), 6);
    // One GC worker: the roots run in order, the program's procedure after
    // the handles (where the stacks were scanned before it could move them).
    all_ok(&run_c_with("fibers", &[("GC_MARKERS", "1")]), 6);
}

/// A program running with every floating-point exception unmasked (ECL
/// traps three by default) allocates and collects without a SIGFPE from
/// the collector's arithmetic, and finds its threads' traps and flags as
/// it left them; also with the traps enabled before `GC_INIT` (GC threads
/// then start with them), with background sweeping, generations and
/// `GC_PRINT_STATS`; and a program with every exception masked finds no
/// flag the collector raised (heap creation in a debug build left one).
#[test]
fn programs_that_trap_floating_point_exceptions() {
    if header_missing() {
        return;
    }
    // Built (and run with the traps set after GC_INIT) once; run again
    // with other arguments and configurations.
    all_ok(&run_c_linked("fp_traps", &["-lgc", "-lm"], &[]), 4);
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fp_traps");
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let out = Command::new("timeout")
            .arg("120")
            .arg(&exe)
            .args(args)
            .env("LD_LIBRARY_PATH", lib_dir())
            .env_remove("MOSAIC_VERIFY")
            .envs(env.iter().copied())
            .output()
            .expect("the program runs");
        assert!(
            out.status.success(),
            "fp_traps {args:?} {env:?}: {}",
            out.status
        );
        all_ok(&String::from_utf8_lossy(&out.stdout), 4);
    };
    // With every exception masked, as most programs run: no flag appears.
    run(&["masked"], &[]);
    let configs: [&[(&str, &str)]; 3] = [
        &[("MOSAIC_BACKGROUND_SWEEP", "1")],
        &[("GC_ENABLE_INCREMENTAL", "1")],
        &[("GC_PRINT_STATS", "1"), ("MOSAIC_PARALLEL_MIN_LIVE", "0")],
    ];
    for env in configs {
        run(&[], env);
    }
    // Traps on before GC_INIT (GC threads start with them), and ratios
    // parsed from the environment then.
    run(
        &["early"],
        &[
            ("MOSAIC_BACKGROUND_SWEEP", "1"),
            ("GC_FREE_SPACE_DIVISOR", "3"),
            ("MOSAIC_FREE_MIN", "0.3"),
        ],
    );
}

/// Allocation and collection calls that succeed leave `errno` as the
/// program set it (the collector's futex waits left EAGAIN / ETIMEDOUT in
/// about 1 of 10,000 allocations of two contending threads), and
/// `GC_do_blocking` / `GC_call_with_alloc_lock` return with the errno the
/// program's function left.
#[test]
fn calls_that_succeed_leave_errno_alone() {
    if header_missing() {
        return;
    }
    all_ok(&run_c("errno_kept"), 3);
    all_ok(
        &run_c_with("errno_kept", &[("MOSAIC_BACKGROUND_SWEEP", "1")]),
        3,
    );
}
