#!/usr/bin/env bash
# Language runtimes on both libgc.so.1: the same Guile, ECL and Crystal binaries run
# with Debian's library and with the one in LIBDIR (by LD_LIBRARY_PATH),
# alternating which goes first, each case REPS times; wall time and peak
# RSS (GNU time's %e and %M) per run; medians with the spread (min-max).
#
# Usage: scripts/dropin/bench-runtimes.sh LIBDIR [--reps N] [--only CASE,...]
#   LIBDIR  a directory holding the replacement libgc.so.1 (as for
#           scripts/dropin/run-tests.sh: target/dropin/lib is built first)
# Cases:
#   guile-compile   Guile's compiler compiling 12 of its own modules in one
#                   process (tests-dropin/guile/compile.scm)
#   guile-boot-9    the same for ice-9/boot-9.scm alone
#   guile-threads-1 tests-dropin/guile/threads.scm 1 3000: one thread
#                   allocating (3000 rounds of 1000 pairs and vectors)
#   guile-threads-2 the same with 2 threads, each doing as much: the
#                   scaling line is 2 x time(1 thread) / time(2 threads)
#   ecl-workload    tests-dropin/ecl/workload.lisp
#   crystal-check   Crystal's compiler type-checking tests-dropin/crystal/
#                   workload.cr and the standard library it requires
#                   (crystal build --no-codegen: the part that runs on the
#                   collector; code generation is LLVM's, in malloc memory)
#   crystal-build   the whole build of that program from an empty cache
#   crystal-program the built program itself (built once beforehand)
# Needs guile-3.0, ecl, crystal (with libgmp-dev) and GNU time (installed
# by apt-get when missing and root). Prints one table; nothing is written
# elsewhere.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
TESTS_DIR=$ROOT/tests-dropin
REPS=5
ONLY=""
LIBDIR=""
usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) [ $# -ge 2 ] || usage; REPS=$2; shift 2 ;;
        --only) [ $# -ge 2 ] || usage; ONLY=$2; shift 2 ;;
        -h|--help) usage ;;
        -*) usage ;;
        *) [ -z "$LIBDIR" ] || usage; LIBDIR=$1; shift ;;
    esac
done
[ -n "$LIBDIR" ] || usage
if [ ! -e "$LIBDIR/libgc.so.1" ] && [ "$LIBDIR" = target/dropin/lib ]; then
    (cd "$ROOT" && cargo build --release -q -p mosaic-gc) || exit 2
    mkdir -p "$LIBDIR" && cp "$ROOT/target/release/libgc.so" "$LIBDIR/libgc.so.1"
fi
[ -e "$LIBDIR/libgc.so.1" ] || { echo "error: $LIBDIR/libgc.so.1 does not exist" >&2; exit 2; }
LIBDIR=$(cd "$LIBDIR" && pwd -P)

missing=()
command -v guile > /dev/null || missing+=(guile-3.0)
command -v ecl > /dev/null || missing+=(ecl)
command -v crystal > /dev/null || missing+=(crystal libgmp-dev)
[ -x /usr/bin/time ] || missing+=(time)
if [ ${#missing[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || { echo "error: missing ${missing[*]} and not root" >&2; exit 2; }
    DEBIAN_FRONTEND=noninteractive apt-get update -q > /dev/null 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
        > /dev/null 2>&1 || { echo "error: cannot install ${missing[*]}" >&2; exit 2; }
fi

MODULES="srfi/srfi-1 ice-9/match ice-9/format ice-9/pretty-print ice-9/regex ice-9/getopt-long \
srfi/srfi-19 ice-9/optargs srfi/srfi-43 ice-9/rdelim web/uri sxml/simple"
declare -A CMD=(
    [guile-compile]="guile --no-auto-compile $TESTS_DIR/guile/compile.scm $MODULES"
    [guile-boot-9]="guile --no-auto-compile $TESTS_DIR/guile/compile.scm ice-9/boot-9"
    [guile-threads-1]="guile --no-auto-compile -s $TESTS_DIR/guile/threads.scm 1 3000"
    [guile-threads-2]="guile --no-auto-compile -s $TESTS_DIR/guile/threads.scm 2 3000"
    [ecl-workload]="ecl --norc --load $TESTS_DIR/ecl/workload.lisp"
    [crystal-check]="crystal build --no-codegen $TESTS_DIR/crystal/workload.cr"
    [crystal-build]="crystal build $TESTS_DIR/crystal/workload.cr -o workload"
    [crystal-program]="\$BIN/crystal-workload"
)
CASES=(guile-compile guile-boot-9 guile-threads-1 guile-threads-2 ecl-workload
       crystal-check crystal-build crystal-program)
if [ -n "$ONLY" ]; then
    IFS=',' read -r -a CASES <<< "$ONLY"
    for c in "${CASES[@]}"; do
        [ -n "${CMD[$c]-}" ] || { echo "error: no case '$c'" >&2; exit 2; }
    done
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ENV=(PATH=/usr/local/bin:/usr/bin:/bin LC_ALL=C.UTF-8 HOME="$WORK" GUILE_AUTO_COMPILE=0
     BIN="$WORK/bin")

# The Crystal program, built once with the real library.
if [[ " ${CASES[*]} " = *" crystal-program "* ]]; then
    mkdir -p "$WORK/bin"
    (cd "$WORK" && env -i "${ENV[@]}" crystal build "$TESTS_DIR/crystal/workload.cr" \
        -o "$WORK/bin/crystal-workload" > /dev/null 2>&1) \
        || { echo "error: cannot build the Crystal program" >&2; exit 1; }
fi

run_once() { # case side -> "seconds kilobytes"
    local c=$1 side=$2 extra=()
    [ "$side" = mosaic ] && extra=(LD_LIBRARY_PATH="$LIBDIR")
    # A fresh home each run: Crystal's cache starts empty.
    rm -rf "$WORK/run" "$WORK/home" && mkdir -p "$WORK/run" "$WORK/home"
    (cd "$WORK/run" && env -i "${ENV[@]}" HOME="$WORK/home" "${extra[@]}" /usr/bin/time -f '%e %M' -o "$WORK/time" \
        bash -c "${CMD[$c]}" > "$WORK/out" 2> "$WORK/err") \
        || { echo "error: $c failed on $side:" >&2; tail -n 5 "$WORK/err" >&2; exit 1; }
    cat "$WORK/time"
}

# median and min-max of the numbers on stdin
stats() { sort -g | awk '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%s %s %s\n", m, v[1], v[NR] }'; }

echo "libgc.so.1: real $(readlink -f /usr/lib/x86_64-linux-gnu/libgc.so.1), mosaic $LIBDIR/libgc.so.1"
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $REPS runs each, alternating order"
printf '%-16s %22s %22s %7s %10s %10s %7s\n' case "real s (min-max)" "mosaic s (min-max)" ratio \
    "real MB" "mosaic MB" "RSS x"
declare -A MED
for c in "${CASES[@]}"; do
    : > "$WORK/real" && : > "$WORK/mosaic"
    for ((i = 0; i < REPS; i++)); do
        if ((i % 2 == 0)); then order=(real mosaic); else order=(mosaic real); fi
        for side in "${order[@]}"; do
            run_once "$c" "$side" >> "$WORK/$side" || exit 1
        done
    done
    read -r rt rlo rhi < <(awk '{ print $1 }' "$WORK/real" | stats)
    read -r mt mlo mhi < <(awk '{ print $1 }' "$WORK/mosaic" | stats)
    read -r rk _ _ < <(awk '{ print $2 }' "$WORK/real" | stats)
    read -r mk _ _ < <(awk '{ print $2 }' "$WORK/mosaic" | stats)
    MED[$c-real]=$rt
    MED[$c-mosaic]=$mt
    awk -v c="$c" -v rt="$rt" -v rlo="$rlo" -v rhi="$rhi" -v mt="$mt" -v mlo="$mlo" -v mhi="$mhi" \
        -v rk="$rk" -v mk="$mk" 'BEGIN {
        printf "%-16s %8.2f (%5.2f-%5.2f) %8.2f (%5.2f-%5.2f) %6.2fx %10.1f %10.1f %6.2fx\n",
            c, rt, rlo, rhi, mt, mlo, mhi, mt / rt, rk / 1024, mk / 1024, mk / rk }'
done
if [ -n "${MED[guile-threads-1-real]-}" ] && [ -n "${MED[guile-threads-2-real]-}" ]; then
    awk -v r1="${MED[guile-threads-1-real]}" -v r2="${MED[guile-threads-2-real]}" \
        -v m1="${MED[guile-threads-1-mosaic]}" -v m2="${MED[guile-threads-2-mosaic]}" 'BEGIN {
        printf "guile threads, scaling from 1 to 2 threads (2 x t1 / t2): real %.2fx, mosaic %.2fx\n",
            2 * r1 / r2, 2 * m1 / m2 }'
fi
