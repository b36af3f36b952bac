#!/usr/bin/env bash
# scripts/deps.sh - make sure the Debian 12 packages the build needs are installed.
#
# Quiet when everything is present.  Missing packages are installed with apt-get
# when run as root; otherwise the script prints the exact command to run as root
# and exits 1.
set -euo pipefail

PACKAGES=(
	cmake
	make
	gcc
	pkg-config
	liburcu-dev
	libck-dev
	libjemalloc-dev
	libcriterion-dev
	systemtap-sdt-dev
	gnuplot-nox
	clang
	libclang-rt-14-dev
	python3
	groff-base
	valgrind
	libfuse3-dev
	fuse3
	autoconf
	automake
	libtool
)

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps.sh: dpkg-query not found: this script expects Debian 12 (bookworm)." >&2
	echo "deps.sh: install by hand: ${PACKAGES[*]}" >&2
	exit 1
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
	# "ii " = desired install, currently installed, no error flag.
	if [[ "$status" != ii* ]]; then
		missing+=("$pkg")
	fi
done

if ((${#missing[@]} == 0)); then
	exit 0
fi

echo "deps.sh: missing Debian packages: ${missing[*]}" >&2
if [[ "$(id -u)" -ne 0 ]]; then
	echo "deps.sh: run this as root, then retry:" >&2
	echo "  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}" >&2
	exit 1
fi

apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
