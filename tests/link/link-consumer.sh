#!/usr/bin/env bash
# Link tests/link/consumer.c against an installed udcache under ROOT (an
# install prefix, or unpacked Debian packages) through its pkg-config file,
# shared and static, and run both.  Used by scripts/check-install.sh and
# scripts/check-deb.sh.  Usage: link-consumer.sh ROOT
set -euo pipefail
root=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
libdir=$(dirname "$(find "$root" -name udcache.pc -print -quit)")/..
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046 # word splitting of pkg-config's flags is wanted
cc "$src/tests/link/consumer.c" $(pkg-config --cflags --libs udcache) -o "$work/consumer"
LD_LIBRARY_PATH="$libdir" "$work/consumer"
# shellcheck disable=SC2046 # as above
cc "$src/tests/link/consumer.c" $(pkg-config --cflags udcache) "$libdir/libudcache.a" \
	$(pkg-config --static --libs udcache | sed 's/-ludcache\b//') -o "$work/consumer-static"
"$work/consumer-static"
