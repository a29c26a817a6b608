#!/usr/bin/env bash
# Installs the C library under PREFIX (default /usr/local):
#   lib/libmosaic.a, lib/libmosaic.so, include/mosaic.h, and the pkg-config
#   files lib/pkgconfig/mosaic.pc (shared library, with an rpath) and
#   lib/pkgconfig/mosaic-static.pc (static library).
#
#   scripts/install-capi.sh [PREFIX]
#
# The installed libraries are stripped of debug info (MOSAIC_KEEP_DEBUG=1
# keeps it). Builds the library in release mode first, unless MOSAIC_LIB_DIR names a
# directory holding an already built libmosaic.a and libmosaic.so (the tests
# install target/debug that way). Then, with PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
# unless PREFIX is a system prefix:
#   cc $(pkg-config --cflags mosaic) prog.c $(pkg-config --libs mosaic) -o prog
#   cc $(pkg-config --cflags mosaic-static) prog.c $(pkg-config --libs mosaic-static) -o prog
set -euo pipefail

# Absolute paths, resolved against the caller's directory.
prefix="${1:-/usr/local}"
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
if [ -n "${MOSAIC_LIB_DIR:-}" ]; then
    built="$(cd "$MOSAIC_LIB_DIR" && pwd)"
fi

cd "$(dirname "$(readlink -f "$0")")/.."
if [ -z "${built:-}" ]; then
    cargo build --release -p mosaic-capi
    built="$(cd "${CARGO_TARGET_DIR:-target}/release" && pwd)"
fi
for f in libmosaic.a libmosaic.so; do
    [ -f "$built/$f" ] || { echo "install-capi.sh: $built/$f not found" >&2; exit 1; }
done

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
install -d "$prefix/lib/pkgconfig" "$prefix/include"
install -m 644 "$built/libmosaic.a" "$prefix/lib/"
install -m 755 "$built/libmosaic.so" "$prefix/lib/"
# The release profile keeps line tables (debug = 1, for profiles): the
# installed copies lose them (libmosaic.a 15 MB -> about 4), unless
# MOSAIC_KEEP_DEBUG=1. Symbols stay, so backtraces still name functions.
if [ -z "${MOSAIC_KEEP_DEBUG:-}" ] && command -v strip >/dev/null; then
    strip --strip-debug "$prefix/lib/libmosaic.a" "$prefix/lib/libmosaic.so"
fi
install -m 644 include/mosaic.h "$prefix/include/"
for pc in mosaic mosaic-static; do
    sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" \
        "crates/mosaic-capi/$pc.pc.in" >"$prefix/lib/pkgconfig/$pc.pc"
done
echo "installed Mosaic $version under $prefix"
case ":$(pkg-config --variable pc_path pkg-config 2>/dev/null):" in
    *":$prefix/lib/pkgconfig:"*) ;;
    *) echo "pkg-config does not search $prefix/lib/pkgconfig: export PKG_CONFIG_PATH=$prefix/lib/pkgconfig" ;;
esac
