#!/usr/bin/env bash
# Build the Debian packages (debian/: libudcache0.2, libudcache-dev,
# udcache-tools) from a copy of the committed tree with dpkg-buildpackage,
# and check them with lintian: any error fails.  Needs dpkg-dev,
# debhelper, fakeroot and lintian (installed here when run as root).
# Usage: scripts/check-deb.sh [OUTDIR]   (the .deb files are left there)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build/deb}
need=(dpkg-dev debhelper fakeroot lintian)
missing=()
for p in "${need[@]}"; do
	dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' || missing+=("$p")
done
if ((${#missing[@]})); then
	if [ "$(id -u)" != 0 ]; then
		echo "check-deb: missing ${missing[*]}; as root: apt-get install ${missing[*]}" >&2
		exit 1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/udcache-0.2.0"
git -C "$src" archive HEAD | tar -x -C "$work/udcache-0.2.0"
(cd "$work/udcache-0.2.0" && dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1) ||
	{ tail -40 "$work/build.log" >&2; echo "check-deb: dpkg-buildpackage failed" >&2; exit 1; }
mkdir -p "$out"
cp "$work"/*.deb "$work"/*.changes "$out"/
ls "$out"/*.deb
lintian --fail-on error "$work"/*.changes | tee "$work/lintian.log"
# The packages work: unpacked into a scratch root, an embedder
# (tests/link/consumer.c) links the shared and the static library through
# the packaged pkg-config file, and runs.
mkdir "$work/root"
for deb in "$work"/libudcache0.2_*.deb "$work"/libudcache-dev_*.deb; do dpkg -x "$deb" "$work/root"; done
"$src/tests/link/link-consumer.sh" "$work/root"
echo "check-deb: $(ls "$work"/*.deb | wc -l) packages built; lintian: $(grep -c '^E:' "$work/lintian.log" || true) errors, $(grep -c '^W:' "$work/lintian.log" || true) warnings"
