#!/usr/bin/env bash
# Runs the core crate's multi-threaded tests under AddressSanitizer and/or
# ThreadSanitizer, on the nightly toolchain.
#   scripts/sanitize.sh [address|thread|all] [-- <libtest args, e.g. a filter>]
# Default: all. .ci/run calls it when a nightly toolchain is installed.
#
# Needs a nightly toolchain (`rustup toolchain install nightly`) on x86_64
# Linux, but NOT rust-src / -Zbuild-std: mosaic and its dependencies are
# instrumented, the prebuilt std is not (hence -Cunsafe-allow-abi-mismatch,
# which rustc requires for mixing). `--target <host>` keeps build scripts and
# proc-macros uninstrumented. Each sanitizer has its own target directory
# (target/sanitize-address, target/sanitize-thread) and log
# (target/sanitize-<kind>.log). About 1 minute per sanitizer from cold on a
# 2-core machine, a few seconds warm.
#
# Tests run: `-p mosaic --lib --test threads --test finalizers --test weak
# --test embedding --test robustness` (robustness
# once tests/robustness.rs exists), then `--test conservative --test
# compaction` without ASan's fake stacks; PROPTEST_CASES=16 for any proptest.
# Exits nonzero if a test fails or a sanitizer reports anything: ASan stops
# at the first error, TSan with halt_on_error=1, and the log is grepped for
# reports as well. LeakSanitizer stays on (these tests leak nothing).
#
# What it can and cannot see:
#  - ASan covers Rust-heap memory (root tables, pool metadata, Vecs, Boxes)
#    and unmapped addresses. Objects inside Mosaic's own mmap'd pages are not
#    poisoned, so reading a collected object through a stale ObjRef is NOT an
#    ASan error (checked: no report).
#  - TSan sees mosaic, parking_lot, crossbeam and the tests, including plain
#    accesses to GC-heap memory, but not synchronisation inside std.
#    scripts/tsan-suppressions.txt silences std-internal false reports and
#    crossbeam-deque's intended racy slot read (validated by its CAS).
#    In tests meant for TSan, synchronise with parking_lot / atomics and join
#    threads before dropping the last clone of your own Arc; std's Mutex,
#    RwLock, Condvar, Barrier, OnceLock and thread::scope are invisible to TSan
#    and give false reports in the test's own frames, which are not
#    suppressed.
#  - TSan reports only races that actually overlap in the run it watches
#    (no happens-before between the two accesses), so racy code must run
#    concurrently in the test to be caught.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

kind="${1:-all}"
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
case "$kind" in
    address | thread) kinds=("$kind") ;;
    all) kinds=(address thread) ;;
    *)
        echo "usage: $0 [address|thread|all] [-- test-filter...]" >&2
        exit 2
        ;;
esac

toolchain="${MOSAIC_SANITIZE_TOOLCHAIN:-nightly}"
if ! cargo "+$toolchain" --version >/dev/null 2>&1; then
    echo "sanitize: no '$toolchain' toolchain (rustup toolchain install nightly)" >&2
    exit 1
fi
host=$(rustc "+$toolchain" -vV | sed -n 's/^host: //p')
if [ "$host" != x86_64-unknown-linux-gnu ]; then
    echo "sanitize: only x86_64-unknown-linux-gnu is supported (host is $host)" >&2
    exit 1
fi

tests=(--lib --test threads --test finalizers --test weak --test embedding)
if [ -f crates/mosaic/tests/robustness.rs ]; then
    tests+=(--test robustness)
else
    echo "sanitize: crates/mosaic/tests/robustness.rs not present, skipping it"
fi

moving=(--test conservative --test compaction)

export PROPTEST_CASES=16 MOSAIC_MODEL_CASES=16
export RUST_BACKTRACE=1 CARGO_TERM_COLOR=never

status=0
for k in "${kinds[@]}"; do
    log="$root/target/sanitize-$k.log"
    mkdir -p "$root/target"
    # The prebuilt std is not instrumented; rustc treats -Zsanitizer (thread,
    # at least) as an ABI-changing flag and refuses the mix unless told to.
    # That mix is exactly what "no build-std" means; TSan's blind spots in std
    # are handled by the suppressions file.
    flags="-Zsanitizer=$k -Cunsafe-allow-abi-mismatch=sanitizer -Cforce-frame-pointers=yes"
    case "$k" in
        address)
            # Leak checking stays on: the tests under this script leak nothing.
            export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:exitcode=1:detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
            ;;
        thread)
            # history_size=7: TSan silently drops a race whose earlier access
            # it can no longer find in the thread's history; a longer history
            # caught a planted race in 15/20 runs instead of 10/20 (long
            # racy loop), 20/20 instead of 19/20 (short), at no visible cost.
            export TSAN_OPTIONS="halt_on_error=1:exitcode=66:history_size=7:second_deadlock_stack=1:suppressions=$root/scripts/tsan-suppressions.txt${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
            ;;
    esac
    echo "=== sanitize: $k (target/sanitize-$k, log $log)"
    start=$(date +%s)
    set +e
    RUSTFLAGS="$flags" RUSTDOCFLAGS="$flags" CARGO_TARGET_DIR="$root/target/sanitize-$k" \
        cargo "+$toolchain" test -p mosaic --target "$host" --no-fail-fast "${tests[@]}" -- "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    # Conservative stack scanning and compaction. ASan's fake stacks (its
    # stack-use-after-return mode) move locals to the heap, where no
    # conservative collector can find them, so that mode is off here; the
    # scan's own loads are not instrumented (os/stack.rs read_word).
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_stack_use_after_return=0" \
        RUSTFLAGS="$flags" RUSTDOCFLAGS="$flags" CARGO_TARGET_DIR="$root/target/sanitize-$k" \
        cargo "+$toolchain" test -p mosaic --target "$host" --no-fail-fast "${moving[@]}" -- "$@" 2>&1 | tee -a "$log"
    rc2=${PIPESTATUS[0]}
    [ "$rc" -eq 0 ] && rc=$rc2
    set -e
    secs=$(($(date +%s) - start))
    if grep -qE '^(==[0-9]+==ERROR: AddressSanitizer|==[0-9]+==ERROR: LeakSanitizer|WARNING: ThreadSanitizer|ThreadSanitizer: reported)' "$log"; then
        echo "=== sanitize: $k: sanitizer report(s) in $log" >&2
        [ "$rc" -eq 0 ] && rc=1
    fi
    if [ "$rc" -ne 0 ]; then
        echo "=== sanitize: $k FAILED (exit $rc, ${secs}s)" >&2
        status=1
    else
        echo "=== sanitize: $k passed (${secs}s)"
    fi
done
exit $status
