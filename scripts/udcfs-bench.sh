#!/usr/bin/env bash
# scripts/udcfs-bench.sh - time path walks through udcfs with udcache and
# with --no-cache, over a store with a round trip per name lookup.
#
#   scripts/udcfs-bench.sh [DIRS [FILES [PASSES [DELAY_US]]]]   (default 20 200 5 200)
#
# Makes DIRS directories of FILES files in a backing directory, mounts it
# (entry/attr timeouts 0: every lookup reaches the daemon), and times
# PASSES of `stat` over every file, for each mode; prints the time and
# udcfs's statistics (store name lookups, cache hits).  Skips (exit 0)
# without root, /dev/fuse or a built udcfs.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
UDCFS=${UDCFS:-$here/build/udcfs/examples/udcfs/udcfs}
ndirs=${1:-20} nfiles=${2:-200} passes=${3:-5} delay=${4:-200}

skip() { echo "skipped: $*"; exit 0; }
[[ $(id -u) -eq 0 ]] || skip "needs root"
{ exec 9<>/dev/fuse; } 2>/dev/null || skip "/dev/fuse cannot be opened"
exec 9>&-
[[ -x $UDCFS ]] || skip "udcfs is not built ($UDCFS)"

tmp=$(mktemp -d /tmp/udcfs-bench.XXXXXX)
back=$tmp/back mnt=$tmp/mnt
mkdir -p "$back" "$mnt"
pid=
cleanup() {
	cd /
	mountpoint -q "$mnt" 2>/dev/null && { fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"; }
	[[ -n $pid ]] && kill "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for ((d = 0; d < ndirs; d++)); do
	mkdir "$back/d$d"
	(cd "$back/d$d" && for ((f = 0; f < nfiles; f++)); do : >"f$f"; done)
done
echo "tree: $ndirs x $nfiles files; $passes passes of stat over every file; store delay $delay us"

for mode in udcache no-cache; do
	opts=(--store-delay-us "$delay" --attr-delay-us "$delay" --stats)
	[[ $mode == no-cache ]] && opts+=(--no-cache)
	"$UDCFS" -f "${opts[@]}" -o allow_other "$back" "$mnt" 2>"$tmp/$mode.log" &
	pid=$!
	for ((k = 0; k < 100; k++)); do mountpoint -q "$mnt" && break; sleep 0.1; done
	mountpoint -q "$mnt" || { cat "$tmp/$mode.log"; exit 1; }
	start=$(date +%s.%N)
	for ((p = 0; p < passes; p++)); do
		(cd "$mnt" && find . -type f -print0 | xargs -0 -P 4 -n 100 stat -c %s >/dev/null)
	done
	end=$(date +%s.%N)
	fusermount3 -u "$mnt"
	wait "$pid"
	pid=
	printf '%-9s %8.2f s\n' "$mode" "$(echo "$end - $start" | bc -l)"
	grep -E 'lookups|cache hits|attr fetches|readdirplus' "$tmp/$mode.log" | sed 's/^/  /'
done
