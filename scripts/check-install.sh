#!/usr/bin/env bash
# Install a built tree into a scratch prefix and build examples/embed against
# it twice: with find_package(udcache) and with pkg-config; then link
# tests/link/consumer.c (an embedder with functions named as
# udcache's internals, which checks that malloc stays libc's) against the
# installed shared library, and against libudcache.a with pkg-config's
# --static flags, and run both.  Usage:
#   scripts/check-install.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
libdir=$(dirname "$(find "$work/prefix" -name udcache.pc -print -quit)")/..
cmake -S "$src/examples/embed" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake" >/dev/null
LD_LIBRARY_PATH="$libdir" "$work/cmake/embed"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046 # word splitting of pkg-config's flags is wanted
cc "$src/examples/embed/main.c" $(pkg-config --cflags --libs udcache) -o "$work/embed-pc"
LD_LIBRARY_PATH="$libdir" "$work/embed-pc"
"$src/tests/link/link-consumer.sh" "$work/prefix"
echo "1 passed, 0 failed"
