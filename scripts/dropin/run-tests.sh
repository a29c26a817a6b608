#!/usr/bin/env bash
# Drop-in test harness: runs real, unmodified programs that link Boehm's
# libgc.so.1 (bdwgc 8.2 API) twice, once with the system's library (Debian's
# libgc1 8.2.2) and once with the libgc.so.1 in LIBDIR (by LD_LIBRARY_PATH),
# and compares exit status and output.
#
# Usage: scripts/dropin/run-tests.sh LIBDIR [--only NAME,...] [--list]
#   LIBDIR       a directory holding the replacement libgc.so.1 (given as
#                target/dropin/lib from the repository's root, it is built
#                there first if missing)
#   --only LIST  comma-separated test names, or groups (bdwgc, w3m, cpp,
#                guile, ecl, crystal, mmv, chase, c) meaning every test whose name starts
#                with GROUP-
#   --list       print the test names and exit
# Environment: DROPIN_TIMEOUT (seconds per run, default 120).
#
# Output: one line per test,
#   PASS name (real 0.12 s, mosaic 0.10 s)
#   FAIL name: reason            (followed by the first differing lines)
#   SKIP name: reason            (e.g. the test fails on the real library too)
# then "dropin: N passed, N failed, N skipped". Exit status 1 if any test
# failed, 2 on a usage or setup error, else 0. Each run's stdout, stderr and
# exit status are kept in target/dropin/results/NAME/.
#
# Works with CI=true and no stdin on a fresh Debian bookworm: installs what
# it needs with apt-get when missing (as root), adds a deb-src entry to get
# the libgc source package (for bdwgc's own tests), and caches everything
# it builds under target/dropin/.
#
# The tests:
#  bdwgc-*   bdwgc 8.2.2's own test programs from Debian's source package
#            (apt-get source libgc), built here against the installed
#            headers (/usr/include/gc) and linked with -lgc (and -lgccpp).
#            Several of them (gctest = tests/test.c, subthread_create.c,
#            initsecondarythread.c, the disclaim tests, test_cpp.cc) include
#            the collector's private headers (private/gc_priv.h,
#            gcconfig.h, gc_atomic_ops.h), which libgc-dev does not install,
#            so they cannot be built from the public headers alone. For those
#            an include directory is made whose public headers are links to
#            /usr/include/gc/*.h and whose private/ is copied from the
#            source package; private/gc_priv.h includes "../gc.h", so it too
#            gets the installed gc.h. The least that builds test.c that way
#            is -DGC_THREADS -DGC_BUILTIN_ATOMIC (without the latter,
#            gc_atomic_ops.h wants libatomic_ops' atomic_ops.h). The flags
#            used (CONFIG_DEFS below) are those Debian's configure chose for
#            libgc1 on amd64, so the tests exercise what that library offers
#            (gcj allocation, thread suspension, disclaim, fork handling...).
#            Left out, and why:
#              leaktest, smashtest: their only result is a debug report on
#                stderr (leaks found / smashed objects, with addresses); the
#                exit status is always 0.
#              tracetest: needs GC_generate_random_backtrace, which Debian's
#                libgc.so.1 does not export (built without KEEP_BACK_PTRS).
#              test_atomic_ops: tests the header-only atomic wrappers and
#                makes no call into libgc.
#              cordtest: Debian ships no libcord (and libgc.so.1 has no
#                CORD_* symbols).
#            threadleaktest runs in leak-detection mode and reports leaks on
#            stderr: only its exit status and (empty) stdout are compared.
#  w3m-*     w3m -dump (80 and 200 columns) of the pages in tests-dropin/html
#            and of a generated page of a few MB with tables nested 20 deep;
#            output compared byte for byte.
#  cpp-*     tests-dropin/cpp/gc_cpp_test.cc, a gc_cpp.h client linked with
#            -lgccpp -lgc.
#  guile-*   guile 3.0 (libguile-3.0 links libgc.so.1): its compiler
#            compiling its own installed modules (tests-dropin/guile/
#            compile.scm; ice-9/boot-9 alone, and a dozen others in one
#            process), each .go output compared by checksum, so it must be
#            byte-identical; tests-dropin/guile/workload.scm (weak tables,
#            guardians, threads, string ports, bignums...) and threads.scm
#            (futures, deep recursion, threads sharing a mutex).
#  ecl-*     ECL 21.2 (libecl links libgc.so.1): tests-dropin/ecl/
#            workload.lisp, and ECL's own test suite (make-check: 263 tests,
#            18098 checks, several of them compiling C through gcc) from
#            Debian's source package, run against the installed ecl; its
#            summary and the names of the failing tests are compared (a few
#            fail on the real library too in this setting).
#  crystal-* Crystal 1.6 (the compiler links libgc.so.1, and so does every
#            program it builds): tests-dropin/crystal/workload.cr (trees,
#            a big hash, strings, fibers and channels, deep recursion on a
#            fiber, GMP bignums, JSON, exceptions, finalizers, weak
#            references) and threads.cr (-Dpreview_mt, 4 worker threads
#            sharing a mutex-guarded hash), each compiled from scratch by
#            the compiler running on the library under test and then run
#            on it.
#  c-*       small C programs of ours in tests-dropin/c, linked with -lgc:
#            free_churn.c rewrites a table of strings 4M times, freeing
#            each temporary and each replaced entry with GC_FREE;
#            thread_churn.c runs 6000 short-lived threads that build and
#            check lists while the main thread collects (a hang is a
#            thread stopped holding a lock the collector needs).
#  mmv-*     mmv renaming/copying/linking a few thousand files
#            (tests-dropin/mmv/workload.sh).
#  chase-*   chase resolving a few thousand symbolic links
#            (tests-dropin/chase/workload.sh).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
TESTS_DIR=$ROOT/tests-dropin
OUT=$ROOT/target/dropin
BUILD=$OUT/build
SRC_DIR=$OUT/src
RESULTS=$OUT/results
WORK=$OUT/work
TIMEOUT=${DROPIN_TIMEOUT:-120}
SYSTEM_LIBGC=/usr/lib/x86_64-linux-gnu/libgc.so.1

usage() {
    sed -n '6,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# ---------------------------------------------------------------- arguments

LIBDIR=""
ONLY=""
LIST_ONLY=0
while [ $# -gt 0 ]; do
    case "$1" in
        --only) [ $# -ge 2 ] || usage; ONLY=$2; shift 2 ;;
        --only=*) ONLY=${1#--only=}; shift ;;
        --list) LIST_ONLY=1; shift ;;
        -h|--help) usage ;;
        -*) echo "unknown option: $1" >&2; usage ;;
        *) [ -z "$LIBDIR" ] || usage; LIBDIR=$1; shift ;;
    esac
done

# ---------------------------------------------------------------- the tests
# Each test: a name, the command that runs it (a shell function, called in
# a fresh work directory with the program's environment already set), how
# its stdout is compared (exact, digits = numbers masked, digits-uniq = the
# same with repeated lines collapsed, gctest = its
# verdict lines with numbers masked, none = not compared) and whether its
# stderr is compared (exact) or not (ignore).

ALL_TESTS=()
declare -A T_CMD T_STDOUT T_STDERR T_BIN T_XFAIL
# A test the drop-in is known not to pass yet, with the reason: its failure
# is reported as XFAIL (and does not fail the run), its success as XPASS.
xfail() { T_XFAIL[$1]=$2; }
add_test() { # name cmd stdout-mode stderr-mode binary-for-ldd
    ALL_TESTS+=("$1")
    T_CMD[$1]=$2
    T_STDOUT[$1]=$3
    T_STDERR[$1]=$4
    T_BIN[$1]=$5
}

# bdwgc's tests (built by build_bdwgc into $BUILD/bdwgc).
B=$BUILD/bdwgc
run_bdwgc() { "$B/$1" "${@:2}"; }
add_test bdwgc-gctest "run_bdwgc gctest" gctest ignore "$B/gctest"
# The same test.c as a C program without gcj, disclaim and thread
# suspension (Debian's configuration minus those).
add_test bdwgc-gctest-c "run_bdwgc gctest-c" gctest ignore "$B/gctest-c"
add_test bdwgc-hugetest "run_bdwgc hugetest" exact ignore "$B/hugetest"
add_test bdwgc-middletest "run_bdwgc middletest" digits ignore "$B/middletest"
add_test bdwgc-realloc_test "run_bdwgc realloc_test" digits-uniq ignore "$B/realloc_test"
add_test bdwgc-staticrootstest "run_bdwgc staticrootstest" exact ignore "$B/staticrootstest"
add_test bdwgc-threadleaktest "run_bdwgc threadleaktest" exact ignore "$B/threadleaktest"
add_test bdwgc-threadkey_test "run_bdwgc threadkey_test" exact ignore "$B/threadkey_test"
add_test bdwgc-subthreadcreate_test "run_bdwgc subthreadcreate_test" digits ignore "$B/subthreadcreate_test"
add_test bdwgc-initsecondarythread_test "run_bdwgc initsecondarythread_test" exact ignore "$B/initsecondarythread_test"
add_test bdwgc-disclaim_test "run_bdwgc disclaim_test" exact ignore "$B/disclaim_test"
# The same 20 times over (3 s on Mosaic, 10 on the real library): a closure run inside a lazy sweep step
# once let a collection park its thread there, and one run in six failed.
repeat_bdwgc() { local i; for i in $(seq "$1"); do run_bdwgc "${@:2}" || return; done; }
add_test bdwgc-disclaim_test-x20 "repeat_bdwgc 20 disclaim_test" exact ignore "$B/disclaim_test"
add_test bdwgc-disclaim_weakmap_test "run_bdwgc disclaim_weakmap_test" digits ignore "$B/disclaim_weakmap_test"
# With a 64 KiB first heap (many more collections, so weak-map lookups
# often revive objects a collection has queued): it failed about 1 run in
# 4 before the revival fix of 2026-11-28; about 45 s for both libraries.
add_test bdwgc-disclaim_weakmap_test-small-x4 "GC_INITIAL_HEAP_SIZE=65536 repeat_bdwgc 4 disclaim_weakmap_test" \
    digits ignore "$B/disclaim_weakmap_test"
add_test bdwgc-disclaim_bench "run_bdwgc disclaim_bench" none ignore "$B/disclaim_bench"
add_test bdwgc-test_cpp "run_bdwgc test_cpp" exact ignore "$B/test_cpp"
# Incremental mode (GC_ENABLE_INCREMENTAL): bdwgc's own, and Mosaic's
# generations with soft-dirty tracking on the drop-in.
add_test bdwgc-gctest-incremental "GC_ENABLE_INCREMENTAL=1 run_bdwgc gctest" gctest ignore "$B/gctest"


# w3m: each page at 80 and at 200 columns.
run_w3m() {
    local page=$1
    w3m -dump -T text/html -I UTF-8 -O UTF-8 "$page" || return $?
    echo "=================== -cols 200"
    w3m -dump -cols 200 -T text/html -I UTF-8 -O UTF-8 "$page"
}
for page in lists tables forms entities; do
    add_test "w3m-$page" "run_w3m $TESTS_DIR/html/$page.html" exact exact /usr/bin/w3m
done
run_w3m_nested() {
    awk -v BLOCKS=40 -v DEPTH=20 -v ROWS=20000 -f "$TESTS_DIR/gen-nested-tables.awk" > nested.html || return 99
    run_w3m nested.html
}
add_test w3m-nested-tables run_w3m_nested exact exact /usr/bin/w3m

# The gc_cpp.h client (built by build_cpp).
add_test cpp-gc_cpp_test "$BUILD/cpp/gc_cpp_test" exact ignore "$BUILD/cpp/gc_cpp_test"

# Packaged programs.
LIBGUILE=/usr/lib/x86_64-linux-gnu/libguile-3.0.so.1
# Guile's compiler on its own modules; stdout: each output's checksum.
run_guile_compile() {
    guile --no-auto-compile "$TESTS_DIR/guile/compile.scm" "$@" || return $?
    sha256sum -- *.go
}
GUILE_MODULES="srfi/srfi-1 ice-9/match ice-9/format ice-9/pretty-print ice-9/regex \
ice-9/getopt-long srfi/srfi-19 ice-9/optargs srfi/srfi-43 ice-9/rdelim web/uri sxml/simple"
add_test guile-compile-boot-9 "run_guile_compile ice-9/boot-9" exact ignore $LIBGUILE
add_test guile-compile-modules "run_guile_compile $GUILE_MODULES" exact ignore $LIBGUILE
add_test guile-workload "guile --no-auto-compile -s $TESTS_DIR/guile/workload.scm" exact ignore $LIBGUILE
add_test guile-workload-incremental "GC_ENABLE_INCREMENTAL=1 guile --no-auto-compile -s $TESTS_DIR/guile/workload.scm" exact ignore $LIBGUILE
add_test guile-threads "guile --no-auto-compile -s $TESTS_DIR/guile/threads.scm" exact ignore $LIBGUILE
LIBECL=/usr/lib/x86_64-linux-gnu/libecl.so.21
add_test ecl-workload "ecl --norc --load $TESTS_DIR/ecl/workload.lisp" exact ignore $LIBECL
# ECL's own suite, configured as its Makefile would for an installed ecl
# (the library directory has no BUILD-STAMP; cmp.fas marks it instead).
run_ecl_suite() {
    sed -e "s|@true_srcdir@|$ECL_SRC/src|; s|@builddir@|$PWD|; s|@prefix@|/usr|" \
        -e 's|"./BUILD-STAMP"|"./cmp.fas"|' "$ECL_SRC/src/tests/config.lsp.in" > config.lsp \
        || return 99
    ecl -norc -load config.lsp -eval "(ecl-tests::run-tests '(make-check))" -eval "(ext:quit)"
}
add_test ecl-suite run_ecl_suite ecl-suite ignore $LIBECL
# Crystal 1.6: its compiler (which itself runs on libgc.so.1, and forks for
# code generation) builds a program from scratch (a fresh HOME: an empty
# cache), and the program runs on the same library; stdout compared.
CRYSTAL=/usr/bin/crystal
add_test crystal-workload \
    "crystal build $TESTS_DIR/crystal/workload.cr -o workload && ./workload" exact ignore $CRYSTAL
# The multi-threaded runtime (-Dpreview_mt) on 4 threads.
add_test crystal-threads \
    "crystal build -Dpreview_mt $TESTS_DIR/crystal/threads.cr -o threads && CRYSTAL_WORKERS=4 ./threads" \
    exact ignore $CRYSTAL
add_test mmv-workload "$TESTS_DIR/mmv/workload.sh ." exact exact /usr/bin/mmv
add_test c-free-churn "$BUILD/c/free_churn" exact ignore "$BUILD/c/free_churn"
add_test c-thread-churn "$BUILD/c/thread_churn" exact ignore "$BUILD/c/thread_churn"
add_test chase-workload "$TESTS_DIR/chase/workload.sh ." exact exact /usr/bin/chase

if [ "$LIST_ONLY" = 1 ]; then
    printf '%s\n' "${ALL_TESTS[@]}"
    exit 0
fi
[ -n "$LIBDIR" ] || usage

SELECTED=()
if [ -z "$ONLY" ]; then
    SELECTED=("${ALL_TESTS[@]}")
else
    IFS=',' read -r -a wanted <<< "$ONLY"
    for w in "${wanted[@]}"; do
        found=0
        for t in "${ALL_TESTS[@]}"; do
            if [ "$t" = "$w" ] || [ "${t%%-*}" = "$w" ]; then
                case " ${SELECTED[*]-} " in *" $t "*) ;; *) SELECTED+=("$t") ;; esac
                found=1
            fi
        done
        [ $found = 1 ] || { echo "no test or group named '$w' (see --list)" >&2; exit 2; }
    done
fi
declare -A GROUPS_WANTED
for t in "${SELECTED[@]}"; do GROUPS_WANTED[${t%%-*}]=1; done
want_group() { [ -n "${GROUPS_WANTED[$1]-}" ]; }

# ---------------------------------------------------------------- LIBDIR

if [ ! -e "$LIBDIR/libgc.so.1" ] && [ "$LIBDIR" = target/dropin/lib ]; then
    # The README's example: build Mosaic's library into it first.
    echo "building Mosaic's libgc.so.1 into $LIBDIR (cargo build --release -p mosaic-gc)"
    (cd "$ROOT" && cargo build --release -q -p mosaic-gc) || exit 2
    mkdir -p "$LIBDIR" && cp "$ROOT/target/release/libgc.so" "$LIBDIR/libgc.so.1"
fi
if [ ! -e "$LIBDIR/libgc.so.1" ]; then
    echo "error: $LIBDIR/libgc.so.1 does not exist" >&2
    exit 2
fi
LIBDIR=$(cd "$LIBDIR" && pwd -P)

# ---------------------------------------------------------------- setup
# What each group needs from Debian; installed only when missing.

note() { echo "-- $*"; }
declare -A SKIP_GROUP   # group -> reason its tests are skipped

pkg_installed() {
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

APT_UPDATED=0
apt_update() {
    [ $APT_UPDATED = 1 ] && return 0
    APT_UPDATED=1
    DEBIAN_FRONTEND=noninteractive apt-get update -q > "$OUT/apt-update.log" 2>&1 \
        || { note "apt-get update failed (see $OUT/apt-update.log)"; return 1; }
}

install_missing() {
    local missing=() p
    for p in "$@"; do pkg_installed "$p" || missing+=("$p"); done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" != 0 ]; then
        note "missing packages ${missing[*]} and not root: cannot install them"
        return 1
    fi
    note "installing ${missing[*]}"
    apt_update
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
        > "$OUT/apt-install.log" 2>&1 \
        || { note "apt-get install ${missing[*]} failed (see $OUT/apt-install.log)"; return 1; }
}

mkdir -p "$OUT" "$BUILD" "$SRC_DIR" "$RESULTS" "$WORK"

# Everything needs a compiler (the probe) and libgc itself; each group its
# program. One apt-get run for all that is missing; if it fails, one per
# group, so that only the groups whose package cannot be had are skipped.
BASE_PKGS=(gcc g++ libc6-dev libgc1 libgc-dev diffutils)
# (A group's value is a space-separated list: Crystal's programs need
# GMP's header and library for `require "big"`, only recommended.)
declare -A GROUP_PKGS=([bdwgc]=dpkg-dev [w3m]=w3m [guile]=guile-3.0 [ecl]=ecl [mmv]=mmv [chase]=chase
                       [crystal]="crystal libgmp-dev")
all_pkgs=("${BASE_PKGS[@]}")
for g in "${!GROUP_PKGS[@]}"; do
    # shellcheck disable=SC2206 # a word list
    want_group "$g" && all_pkgs+=(${GROUP_PKGS[$g]})
done
if ! install_missing "${all_pkgs[@]}"; then
    install_missing "${BASE_PKGS[@]}" || {
        echo "error: cannot install the compiler and libgc-dev" >&2
        exit 2
    }
    for g in "${!GROUP_PKGS[@]}"; do
        want_group "$g" || continue
        # shellcheck disable=SC2086 # a word list
        install_missing ${GROUP_PKGS[$g]} || SKIP_GROUP[$g]="${GROUP_PKGS[$g]} could not be installed"
    done
fi

# Rebuild OUTFILE when it is missing or older than any of the given inputs.
stale() { # outfile input...
    local o=$1 f
    shift
    [ -e "$o" ] || return 0
    for f in "$@"; do [ "$f" -nt "$o" ] && return 0; done
    return 1
}

# The libgc source package, for bdwgc's tests.
ensure_deb_src() {
    if [ -n "$(apt-cache showsrc libgc 2>/dev/null | head -n 1)" ]; then
        return 0
    fi
    if [ "$(id -u)" != 0 ]; then
        note "no deb-src entry for libgc and not root: cannot add one"
        return 1
    fi
    # A deb-src twin of each deb entry of the Debian archive.
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        awk 'BEGIN { RS = ""; ORS = "\n\n" }
             /(^|\n)Types:[^\n]*deb/ && /(^|\n)URIs:[^\n]*debian/ {
                 sub(/(^|\n)Types:[^\n]*/, "\nTypes: deb-src"); sub(/^\n/, ""); print }' \
            /etc/apt/sources.list.d/debian.sources > /etc/apt/sources.list.d/mosaic-src.sources
        note "added /etc/apt/sources.list.d/mosaic-src.sources (deb-src)"
    elif grep -qs '^deb ' /etc/apt/sources.list; then
        sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > /etc/apt/sources.list.d/mosaic-src.list
        note "added /etc/apt/sources.list.d/mosaic-src.list (deb-src)"
    else
        note "found no Debian apt source to derive a deb-src entry from"
        return 1
    fi
    APT_UPDATED=0
    apt_update
}

# A Debian source package unpacked under $SRC_DIR: the first directory
# matching GLOB that holds MARKER, fetched with apt-get source (the
# installed binary package's version first) when none does. Prints it.
fetch_source() { # package binary-package glob marker
    local pkg=$1 bin=$2 glob=$3 marker=$4 d ver
    for d in $SRC_DIR/$glob/; do
        [ -f "$d/$marker" ] && { echo "${d%/}"; return 0; }
    done
    install_missing dpkg-dev >&2 || return 1
    ensure_deb_src >&2 || return 1
    ver=$(dpkg-query -W -f='${source:Version}' "$bin" 2>/dev/null)
    note "apt-get source $pkg${ver:+=$ver} into $SRC_DIR" >&2
    ( cd "$SRC_DIR" && { apt-get source -q "$pkg${ver:+=$ver}" || apt-get source -q "$pkg"; } ) \
        > "$OUT/apt-source-$pkg.log" 2>&1
    for d in $SRC_DIR/$glob/; do
        [ -f "$d/$marker" ] && { echo "${d%/}"; return 0; }
    done
    note "apt-get source $pkg gave no $glob tree (see $OUT/apt-source-$pkg.log)" >&2
    return 1
}

# The libgc source package, for bdwgc's tests; ECL's, for its test suite.
BDWGC_SRC=""
ECL_SRC=""
fetch_bdwgc_source() { BDWGC_SRC=$(fetch_source libgc libgc1 'libgc-8.2.*' tests/test.c); }
fetch_ecl_source() { ECL_SRC=$(fetch_source ecl ecl 'ecl-*' src/tests/config.lsp.in); }

# What Debian's configure decided for libgc1 8.2.2 on amd64 (debian/rules:
# threads=posix, --enable-cplusplus, --with-libatomic-ops=none, defaults
# otherwise). bdwgc's tests choose what to exercise by these.
CONFIG_DEFS="-DGC_THREADS -D_REENTRANT -DPARALLEL_MARK -DTHREAD_LOCAL_ALLOC \
 -DGC_BUILTIN_ATOMIC -DGC_GCJ_SUPPORT -DJAVA_FINALIZATION -DGC_ATOMIC_UNCOLLECTABLE \
 -DENABLE_DISCLAIM -DHANDLE_FORK -DGC_ENABLE_SUSPEND_THREAD -DNO_EXECUTE_PERMISSION \
 -DALL_INTERIOR_POINTERS"
PUBLIC_INC="-I/usr/include/gc"

build_bdwgc() {
    local t=$BDWGC_SRC/tests shim=$BUILD/bdwgc-include h
    mkdir -p "$B"
    # The installed public headers, plus the private ones from the source.
    if stale "$shim/.stamp" /usr/include/gc/gc.h "$BDWGC_SRC/include/private/gc_priv.h"; then
        rm -rf "$shim" && mkdir -p "$shim"
        for h in /usr/include/gc/*.h; do ln -s "$h" "$shim/"; done
        cp -r "$BDWGC_SRC/include/private" "$shim/private"
        touch "$shim/.stamp"
        for h in "$BDWGC_SRC"/include/*.h; do
            cmp -s "$h" "/usr/include/gc/${h##*/}" \
                || note "note: ${h##*/} of the source differs from the installed one"
        done
    fi
    local PRIV="-I$shim $CONFIG_DEFS -pthread"
    local THR="$PUBLIC_INC -DGC_THREADS -pthread"
    local ok=0 log=$OUT/build-bdwgc.log
    : > "$log"
    cc_one() { # output sources-and-flags...
        local o=$1
        shift
        if stale "$o" "$t"/*.c "$t"/*.cc "$shim/.stamp" "$0"; then
            echo "+ $*" >> "$log"
            "$@" -o "$o" >> "$log" 2>&1 || { note "build of ${o##*/} failed (see $log)"; rm -f "$o"; ok=1; }
        fi
    }
    # No threads, public headers only.
    cc_one "$B/hugetest" gcc -O2 -w $PUBLIC_INC "$t/huge_test.c" -lgc
    cc_one "$B/middletest" gcc -O2 -w $PUBLIC_INC "$t/middle.c" -lgc
    cc_one "$B/realloc_test" gcc -O2 -w $PUBLIC_INC "$t/realloc_test.c" -lgc
    cc_one "$B/libstaticrootslib_test.so" gcc -O2 -w -fPIC -shared $PUBLIC_INC "$t/staticrootslib.c" -lgc
    cc_one "$B/libstaticrootslib2_test.so" gcc -O2 -w -fPIC -shared -DSTATICROOTSLIB2 $PUBLIC_INC \
        "$t/staticrootslib.c" -lgc
    cc_one "$B/staticrootstest" gcc -O2 -w -DSTATICROOTSLIB2 $PUBLIC_INC "$t/staticrootstest.c" \
        -L"$B" -lstaticrootslib_test -lstaticrootslib2_test -Wl,-rpath,'$ORIGIN' -lgc
    # Threads, public headers only.
    cc_one "$B/threadleaktest" gcc -O2 -w $THR "$t/thread_leak_test.c" -lgc
    cc_one "$B/threadkey_test" gcc -O2 -w $THR "$t/threadkey_test.c" -lgc
    # These include private headers (see the top of this file).
    cc_one "$B/gctest" gcc -O2 -w $PRIV "$t/test.c" -lgc
    local c_defs=${CONFIG_DEFS//-DGC_GCJ_SUPPORT/}
    c_defs=${c_defs//-DENABLE_DISCLAIM/}
    c_defs=${c_defs//-DGC_ENABLE_SUSPEND_THREAD/}
    cc_one "$B/gctest-c" gcc -O2 -w -I"$shim" $c_defs -pthread "$t/test.c" -lgc
    cc_one "$B/subthreadcreate_test" gcc -O2 -w $PRIV "$t/subthread_create.c" -lgc
    cc_one "$B/initsecondarythread_test" gcc -O2 -w $PRIV "$t/initsecondarythread.c" -lgc
    cc_one "$B/disclaim_test" gcc -O2 -w $PRIV "$t/disclaim_test.c" -lgc
    cc_one "$B/disclaim_weakmap_test" gcc -O2 -w $PRIV "$t/disclaim_weakmap_test.c" -lgc
    cc_one "$B/disclaim_bench" gcc -O2 -w $PRIV "$t/disclaim_bench.c" -lgc
    cc_one "$B/test_cpp" g++ -O2 -w $PRIV "$t/test_cpp.cc" -lgccpp -lgc
    return $ok
}

build_cpp() {
    mkdir -p "$BUILD/cpp"
    local o=$BUILD/cpp/gc_cpp_test
    if stale "$o" "$TESTS_DIR/cpp/gc_cpp_test.cc"; then
        g++ -O2 -Wall $PUBLIC_INC "$TESTS_DIR/cpp/gc_cpp_test.cc" -o "$o" -lgccpp -lgc \
            > "$OUT/build-cpp.log" 2>&1 || { note "build of gc_cpp_test failed (see $OUT/build-cpp.log)"; return 1; }
    fi
}

PROBE=$BUILD/which_libgc
if stale "$PROBE" "$TESTS_DIR/probe/which_libgc.c"; then
    gcc -O2 $PUBLIC_INC "$TESTS_DIR/probe/which_libgc.c" -o "$PROBE" -lgc -ldl \
        || { echo "error: cannot build the probe" >&2; exit 2; }
fi

if want_group c; then
    mkdir -p "$BUILD/c"
    for src in "$TESTS_DIR"/c/*.c; do
        o=$BUILD/c/$(basename "$src" .c)
        if stale "$o" "$src"; then
            gcc -O2 -Wall $PUBLIC_INC "$src" -o "$o" -lgc || note "build of $src failed"
        fi
    done
fi

if want_group bdwgc && [ -z "${SKIP_GROUP[bdwgc]-}" ]; then
    if fetch_bdwgc_source; then
        build_bdwgc || true   # a test whose program did not build is skipped
    else
        SKIP_GROUP[bdwgc]="could not get Debian's libgc source package"
    fi
fi
if want_group cpp; then
    build_cpp || SKIP_GROUP[cpp]="gc_cpp_test.cc did not build"
fi
if want_group ecl && [ -z "${SKIP_GROUP[ecl]-}" ] && [[ " ${SELECTED[*]} " = *" ecl-suite "* ]]; then
    # Only the suite needs the source; without it, just that test is skipped.
    fetch_ecl_source || T_BIN[ecl-suite]=$OUT/no-ecl-source
fi

# ---------------------------------------------------------------- checks
# The plain run must get the system library and the other one LIBDIR's: the
# probe says which file the loader really opened in each case.

# Each run starts from this environment and nothing else (no GC_* variables
# that would change either library's behaviour), plus variables a
# replacement may want for debugging (MOSAIC_*, RUST_BACKTRACE, RUST_LOG).
BASE_ENV=(PATH=/usr/local/bin:/usr/bin:/bin LC_ALL=C.UTF-8 TZ=UTC TERM=dumb GUILE_AUTO_COMPILE=0)
while IFS='=' read -r k _; do
    case "$k" in MOSAIC_*|RUST_BACKTRACE|RUST_LOG) BASE_ENV+=("$k=${!k}") ;; esac
done < <(env)

real_loaded=$(env -i "${BASE_ENV[@]}" "$PROBE" 2>&1 | sed -n 's/^loaded: //p')
mosaic_probe=$(env -i "${BASE_ENV[@]}" LD_LIBRARY_PATH="$LIBDIR" "$PROBE" 2>&1)
mosaic_loaded=$(printf '%s\n' "$mosaic_probe" | sed -n 's/^loaded: //p')
echo "real library:   ${real_loaded:-?} ($(readlink -f "$SYSTEM_LIBGC"))"
echo "mosaic library: ${mosaic_loaded:-?} ($(readlink -f "$LIBDIR/libgc.so.1"))"
if [ "$(dirname "${real_loaded:-/x/y}")" = "$LIBDIR" ]; then
    echo "error: the plain run already loads LIBDIR's libgc.so.1" >&2
    exit 2
fi
probe_ldd=$(LD_LIBRARY_PATH=$LIBDIR ldd "$PROBE" 2>/dev/null | awk '$1 == "libgc.so.1" { print $3; exit }')
if [ "$(dirname "${probe_ldd:-/x/y}")" != "$LIBDIR" ]; then
    echo "error: with LD_LIBRARY_PATH=$LIBDIR, ldd resolves libgc.so.1 to '$probe_ldd'" >&2
    echo "(the tests would not test LIBDIR's library; stopping)" >&2
    exit 2
fi
if [ -n "$mosaic_loaded" ] && [ "$(dirname "$mosaic_loaded")" != "$LIBDIR" ]; then
    echo "error: with LD_LIBRARY_PATH=$LIBDIR the probe runs with $mosaic_loaded" >&2
    echo "(the tests would not test LIBDIR's library; stopping)" >&2
    exit 2
fi
if ! printf '%s\n' "$mosaic_probe" | grep -q '^allocated and collected: ok$'; then
    echo "note: the probe (GC_INIT, one GC_MALLOC, one GC_gcollect) fails with LIBDIR's library:"
    printf '%s\n' "$mosaic_probe" | head -n 5 | cut -c 1-200 | sed 's/^/    /'
fi

# The binary (or library) a test runs must resolve libgc.so.1 into LIBDIR
# under LD_LIBRARY_PATH=LIBDIR.
check_ldd() { # binary -> "" if fine, else a reason
    local bin=$1 path
    [ -e "$bin" ] || { echo "$bin is missing"; return; }
    path=$(LD_LIBRARY_PATH=$LIBDIR ldd "$bin" 2>/dev/null | awk '$1 == "libgc.so.1" { print $3; exit }')
    if [ -z "$path" ]; then
        echo "ldd shows no libgc.so.1 for $bin"
    elif [ "$(dirname "$path")" != "$LIBDIR" ]; then
        echo "with LD_LIBRARY_PATH=LIBDIR, ldd resolves libgc.so.1 of $bin to $path"
    fi
}

# ---------------------------------------------------------------- running

# run_side NAME SIDE: runs test NAME with the real library (SIDE=real) or
# LIBDIR's (SIDE=mosaic) in a fresh work directory at the same path for
# both, so outputs naming paths are alike. Leaves SIDE.out/.err/.rc/.time.
run_side() {
    local name=$1 side=$2 dir=$RESULTS/$1 wd=$WORK/$1 start end rc
    local env_extra=()
    [ "$side" = mosaic ] && env_extra=(LD_LIBRARY_PATH="$LIBDIR")
    rm -rf "$wd" && mkdir -p "$wd/home"
    start=$EPOCHREALTIME
    (
        cd "$wd" || exit 98
        exec env -i "${BASE_ENV[@]}" HOME="$wd/home" B="$B" TESTS_DIR="$TESTS_DIR" \
            ECL_SRC="$ECL_SRC" "${env_extra[@]}" timeout -k 5 "$TIMEOUT" \
            bash -c "$(declare -f run_bdwgc repeat_bdwgc run_w3m run_w3m_nested run_guile_compile \
                run_ecl_suite); ${T_CMD[$name]}"
    ) < /dev/null > "$dir/$side.out" 2> "$dir/$side.err"
    rc=$?
    end=$EPOCHREALTIME
    echo "$rc" > "$dir/$side.rc"
    awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f\n", e - s }' > "$dir/$side.time"
}

normalize() { # mode < stdout
    case "$1" in
        exact) cat ;;
        digits) sed -E 's/[0-9]+/N/g' ;;
        # Numbers masked and repeats collapsed: a progress line printed
        # whenever a figure changes (realloc_test's heap size) depends on
        # how often each collector's figure moves, not on what works.
        digits-uniq) sed -E 's/[0-9]+/N/g' | uniq ;;
        gctest)
            grep -E '^Completed [0-9]+ tests$|^Collector appears to work$|after fork is tested too$|finalization is probably' \
                | sed -E 's/[0-9]+/N/g' ;;
        # ECL's suite: its totals (tests, crashes) and the sorted names of
        # the failing tests (the report's order varies). The
        # multiprocessing tests that check what other threads did within
        # a `sleep` (a new thread must run within 10 ms, a killed one
        # finish within 0.2 s...; every `def-mp-test` too: it fails when a
        # thread the test started has not exited 0.2 s after the body)
        # fail now and then on either library on a loaded machine: their
        # names, found in the source, are left out of the comparison, and
        # so is the count of checks, which such a failure changes (seen:
        # 18,096 on the real library against 18,098 on Mosaic's).
        ecl-suite)
            local timed
            timed=$(awk '/^\((test|def-mp-test) / { name = toupper($2) }
                         /^\(def-mp-test / { print " " name ":" }
                         /\(sleep/ { if (name != "") print " " name ":" }' \
                        "$ECL_SRC/src/tests/normal-tests/multiprocessing.lsp" | sort -u)
            # (An empty pattern would match every line.)
            timed=${timed:-"-- no timed tests --"}
            grep -E '^Did [0-9]+ tests|^ [A-Z][A-Z0-9.-]*:$' \
                | sed -E 's/^(Did [0-9]+ tests.*), [0-9]+ checks\.$/\1./' \
                | grep -v -x -F -e "$timed" | sort ;;
        none) : ;;
    esac
}

describe_rc() {
    local rc=$1
    if [ "$rc" = 124 ]; then
        echo "timed out after ${TIMEOUT}s"
    elif [ "$rc" = 127 ]; then
        echo "exit 127 (not found, or the loader failed)"
    elif [ "$rc" -gt 128 ] && [ "$rc" -le 192 ]; then
        echo "exit $rc (signal $((rc - 128)), SIG$(kill -l $((rc - 128)) 2>/dev/null))"
    else
        echo "exit $rc"
    fi
}

# Print the first differing lines of two files, indented.
show_diff() { # label a b
    echo "    first differences in $1 (real: -, mosaic: +):"
    diff -U1 "$2" "$3" | sed -n '3,$p' | grep -n -m 12 '' | cut -d: -f2- | cut -c 1-200 | sed 's/^/      /'
}

tail_of() { # file
    [ -s "$1" ] && { echo "    last lines of mosaic's stderr:"; tail -n 8 "$1" | cut -c 1-200 | sed 's/^/      /'; }
}

PASSED=0
FAILED=0
SKIPPED=0
XFAILED=0
pass() {
    if [ -n "${T_XFAIL[$1]-}" ]; then
        echo "XPASS $1 (real $2 s, mosaic $3 s): passes although listed as not yet supported"
    else
        echo "PASS $1 (real $2 s, mosaic $3 s)"
    fi
    PASSED=$((PASSED + 1))
}
fail() {
    if [ -n "${T_XFAIL[$1]-}" ]; then
        echo "XFAIL $1: ${T_XFAIL[$1]} ($2)"
        XFAILED=$((XFAILED + 1))
    else
        echo "FAIL $1: $2"
        FAILED=$((FAILED + 1))
    fi
}
skip() { echo "SKIP $1: $2"; SKIPPED=$((SKIPPED + 1)); }

echo "tests: ${#SELECTED[@]}, timeout ${TIMEOUT}s per run, results in ${RESULTS#$ROOT/}/"
want_group bdwgc && echo "left out of bdwgc's tests: leaktest, smashtest (debug reports only), tracetest (needs" \
     "GC_generate_random_backtrace, not in Debian's build), test_atomic_ops (no libgc calls)," \
     "cordtest (no libcord in Debian)"

T0=$EPOCHREALTIME
for name in "${SELECTED[@]}"; do
    group=${name%%-*}
    if [ -n "${SKIP_GROUP[$group]-}" ]; then
        skip "$name" "${SKIP_GROUP[$group]}"
        continue
    fi
    bin=${T_BIN[$name]}
    if [ ! -e "$bin" ]; then
        skip "$name" "$bin was not built or installed"
        continue
    fi
    why=$(check_ldd "$bin")
    if [ -n "$why" ]; then
        fail "$name" "$why"
        continue
    fi
    dir=$RESULTS/$name
    rm -rf "$dir" && mkdir -p "$dir"

    run_side "$name" real
    real_rc=$(cat "$dir/real.rc")
    if [ "$real_rc" != 0 ]; then
        skip "$name" "fails on the real library too ($(describe_rc "$real_rc"))"
        continue
    fi
    run_side "$name" mosaic
    mosaic_rc=$(cat "$dir/mosaic.rc")
    rt=$(cat "$dir/real.time")
    mt=$(cat "$dir/mosaic.time")

    normalize "${T_STDOUT[$name]}" < "$dir/real.out" > "$dir/real.out.cmp"
    normalize "${T_STDOUT[$name]}" < "$dir/mosaic.out" > "$dir/mosaic.out.cmp"
    if [ "$mosaic_rc" != "$real_rc" ]; then
        fail "$name" "$(describe_rc "$mosaic_rc") with mosaic, exit $real_rc with the real library (${dir#$ROOT/}/)"
        cmp -s "$dir/real.out.cmp" "$dir/mosaic.out.cmp" \
            || show_diff stdout "$dir/real.out.cmp" "$dir/mosaic.out.cmp"
        tail_of "$dir/mosaic.err"
        continue
    fi
    if ! cmp -s "$dir/real.out.cmp" "$dir/mosaic.out.cmp"; then
        fail "$name" "stdout differs (compared: ${T_STDOUT[$name]}; ${dir#$ROOT/}/)"
        show_diff stdout "$dir/real.out.cmp" "$dir/mosaic.out.cmp"
        tail_of "$dir/mosaic.err"
        continue
    fi
    if [ "${T_STDERR[$name]}" = exact ] && ! cmp -s "$dir/real.err" "$dir/mosaic.err"; then
        fail "$name" "stderr differs (${dir#$ROOT/}/)"
        show_diff stderr "$dir/real.err" "$dir/mosaic.err"
        continue
    fi
    pass "$name" "$rt" "$mt"
done
T1=$EPOCHREALTIME

echo "time: $(awk -v s="$T0" -v e="$T1" 'BEGIN { printf "%.1f", e - s }') s for the runs"
echo "dropin: $PASSED passed, $FAILED failed, $XFAILED not supported yet (XFAIL), $SKIPPED skipped"
[ "$FAILED" = 0 ]
