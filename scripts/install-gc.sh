#!/usr/bin/env bash
# Installs Mosaic's libgc.so.1 (the Boehm collector's API and ABI on
# Mosaic, crates/mosaic-gc) under PREFIX (default /usr/local):
#   lib/mosaic-gc/libgc.so.1   the drop-in library (soname libgc.so.1)
#   bin/mosaic-gc              runs a program on it:
#                                mosaic-gc w3m -dump page.html
#
# Programs linked against Debian's libgc1 run unchanged with
#   LD_LIBRARY_PATH=PREFIX/lib/mosaic-gc program ...
# or through the mosaic-gc command. Builds the library in release mode
# first, unless MOSAIC_LIB_DIR names a directory holding a built libgc.so.
#
#   scripts/install-gc.sh [PREFIX]
set -euo pipefail

prefix="${1:-/usr/local}"
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
if [ -n "${MOSAIC_LIB_DIR:-}" ]; then
    built="$(cd "$MOSAIC_LIB_DIR" && pwd)"
fi

cd "$(dirname "$(readlink -f "$0")")/.."
if [ -z "${built:-}" ]; then
    cargo build --release -p mosaic-gc
    built="$(cd "${CARGO_TARGET_DIR:-target}/release" && pwd)"
fi
[ -f "$built/libgc.so" ] || { echo "install-gc.sh: $built/libgc.so not found" >&2; exit 1; }

install -d "$prefix/lib/mosaic-gc" "$prefix/bin"
install -m 755 "$built/libgc.so" "$prefix/lib/mosaic-gc/libgc.so.1"
# Line tables go (the release profile keeps them for profiles), symbols stay.
if [ -z "${MOSAIC_KEEP_DEBUG:-}" ] && command -v strip >/dev/null; then
    strip --strip-debug "$prefix/lib/mosaic-gc/libgc.so.1"
fi
cat >"$prefix/bin/mosaic-gc" <<EOS
#!/bin/sh
# Runs a program built for the Boehm collector (linked with libgc.so.1) on
# Mosaic's libgc.so.1. Mosaic's MOSAIC_* and bdwgc's GC_* variables apply.
if [ \$# -eq 0 ]; then
    echo "usage: mosaic-gc PROGRAM [ARGS...]" >&2
    exit 2
fi
LD_LIBRARY_PATH="$prefix/lib/mosaic-gc\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
exec "\$@"
EOS
chmod 755 "$prefix/bin/mosaic-gc"
echo "installed Mosaic's libgc.so.1 under $prefix/lib/mosaic-gc and the mosaic-gc command in $prefix/bin"
