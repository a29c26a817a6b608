#!/usr/bin/env bash
# Installs the benchmark peers from Debian's packages: the Boehm collector,
# jemalloc, mimalloc, OCaml, OpenJDK 17, Go, and a font for the charts.
# Needs root (apt-get). mosaic-bench skips any peer that is still missing and
# says which package provides it.
set -euo pipefail
packages=(build-essential pkg-config libgc-dev libjemalloc-dev libmimalloc-dev ocaml-nox
          openjdk-17-jdk-headless fonts-dejavu-core)
command -v go >/dev/null || packages+=(golang-go)
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${packages[@]}"
echo "peers installed: $(command -v ocamlopt) $(command -v javac) $(command -v go)"
