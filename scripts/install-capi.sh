#!/usr/bin/env bash
# Builds the C library in release mode and installs libmosaic.{a,so},
# mosaic.h and mosaic.pc under PREFIX (default /usr/local).
#   scripts/install-capi.sh [PREFIX]
# Then: cc $(pkg-config --cflags mosaic) prog.c $(pkg-config --libs --static mosaic)
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-/usr/local}"
cargo build --release -p mosaic-capi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
install -d "$prefix/lib/pkgconfig" "$prefix/include"
install -m 644 target/release/libmosaic.a "$prefix/lib/"
install -m 755 target/release/libmosaic.so "$prefix/lib/"
install -m 644 include/mosaic.h "$prefix/include/"
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" crates/mosaic-capi/mosaic.pc.in >"$prefix/lib/pkgconfig/mosaic.pc"
echo "installed Mosaic $version under $prefix"
