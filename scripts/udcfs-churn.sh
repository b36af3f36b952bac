#!/usr/bin/env bash
# scripts/udcfs-churn.sh - several processes churn names under a udcfs
# mount (--verify) for a while; then the tree seen through the mount must
# equal the backing directory's, and udcfs must have seen no cached answer
# that disagreed with the store.
#
#   scripts/udcfs-churn.sh [SECONDS [PROCESSES]]     (default 20 s, 6 processes)
#
# Each process creates, writes, chmods, unlinks, renames (across
# directories), exchanges (RENAME_EXCHANGE), mkdirs, rmdirs, links and
# lists, over a small set of names
# so that they collide.  Skips (exit 0) as udcfs-pjdfstest.sh does.
# UDCFS_OPTS adds udcfs options (e.g. --store-delay-us 50, --memory 262144).
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
UDCFS=${UDCFS:-$here/build/udcfs/examples/udcfs/udcfs}
UDCFS_OPTS=${UDCFS_OPTS:-}
secs=${1:-20}
nproc=${2:-6}

skip() { echo "skipped: $*"; exit 0; }
[[ $(id -u) -eq 0 ]] || skip "needs root (allow_other, fusermount)"
{ exec 9<>/dev/fuse; } 2>/dev/null || skip "/dev/fuse cannot be opened"
exec 9>&-
[[ -x $UDCFS ]] || skip "udcfs is not built ($UDCFS)"

tmp=$(mktemp -d /tmp/udcfs-churn.XXXXXX)
back=$tmp/back mnt=$tmp/mnt
mkdir -p "$back" "$mnt"
pid=
cleanup() {
	cd /
	if mountpoint -q "$mnt" 2>/dev/null; then
		fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
	fi
	[[ -n $pid ]] && kill "$pid" 2>/dev/null
	[[ ${KEEP:-0} == 1 ]] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck disable=SC2086
"$UDCFS" -f --verify --stats $UDCFS_OPTS -o allow_other,default_permissions "$back" "$mnt" 2>"$tmp/udcfs.log" &
pid=$!
for ((k = 0; k < 100; k++)); do
	mountpoint -q "$mnt" && break
	sleep 0.1
done
mountpoint -q "$mnt" || { cat "$tmp/udcfs.log"; echo "udcfs did not mount"; exit 1; }

cd "$mnt" || exit 1
mkdir -p d0 d1 d2 d3

# renameat2(RENAME_EXCHANGE) (coreutils 9.1 has no mv --exchange)
exchange() {
	python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
sys.exit(libc.renameat2(-100, os.fsencode(sys.argv[1]), -100, os.fsencode(sys.argv[2]), 2) != 0)' "$1" "$2"
}

worker() {
	local end=$((SECONDS + secs))
	RANDOM=$1
	local a b
	while ((SECONDS < end)); do
		a=d$((RANDOM % 4))/n$((RANDOM % 12))
		b=d$((RANDOM % 4))/n$((RANDOM % 12))
		case $((RANDOM % 17)) in
		0) : >"$a" ;;
		1) echo "$RANDOM" >>"$a" ;;
		2) rm -f "$a" ;;
		3) mv -f "$a" "$b" ;;
		4) mkdir "$a" ;;
		5) rmdir "$a" ;;
		6) ln "$a" "$b" ;;
		7) ls -la "${a%/*}" >/dev/null ;;
		8) chmod $((RANDOM % 2 ? 600 : 644)) "$a" ;;
		9) stat "$a" >/dev/null ;;
		10) ln -s "x$RANDOM" "$a" ;;
		11) touch "$a"; mv -f "$a" "$b/s" ;;
		12) mkdir -p "$a/x$((RANDOM % 3))" ;;
		13) : >"$a" ;;
		14) mv -n "$a" "$b" ;;
		15) ls "$a" >/dev/null ;;
		16) exchange "$a" "$b" ;;
		esac
	done 2>/dev/null
}

echo "churn: $nproc processes, $secs s"
pids=()
for ((w = 0; w < nproc; w++)); do
	worker $((w * 7919 + 1)) &
	pids+=($!)
done
wait "${pids[@]}"
# Quiet now: the first pass fills and completes every directory, the
# second (and the snapshot's find) are listed from the cache.
ls -laR "$mnt" >/dev/null
ls -laR "$mnt" >/dev/null

snapshot() {
	(cd "$1" && find . -printf '%p %y %i %n %m %s %U %G %T@ %C@\n' | sort)
}
snapshot "$mnt" >"$tmp/mnt.txt"
snapshot "$back" >"$tmp/back.txt"
cd /
fusermount3 -u "$mnt" || umount -l "$mnt"
rc=0
wait "$pid" || rc=$?
pid=

status=0
echo "entries: $(wc -l <"$tmp/back.txt") in the backing directory"
if ! diff -u "$tmp/back.txt" "$tmp/mnt.txt" >"$tmp/diff.txt"; then
	echo "FAIL: the mount and the backing directory differ:"
	head -40 "$tmp/diff.txt"
	status=1
fi
grep -E 'lookups|cache hits|store name|verify|invalidations|fills|listings|exchanges' "$tmp/udcfs.log"
if grep -q 'VERIFY MISMATCH' "$tmp/udcfs.log" || [[ $rc -ne 0 ]]; then
	echo "FAIL: udcfs exited with $rc:"
	grep 'VERIFY MISMATCH' "$tmp/udcfs.log" | head -20
	status=1
fi
listed=$(sed -n 's/^ *listings from cache *\([0-9]*\).*/\1/p' "$tmp/udcfs.log")
if [[ ${listed:-0} -eq 0 ]]; then
	echo "FAIL: no directory was listed from the cache (the check above checked no listing)"
	status=1
fi
exchanged=$(sed -n 's/^ *exchanges *\([0-9]*\).*/\1/p' "$tmp/udcfs.log")
if [[ ${exchanged:-0} -eq 0 ]]; then
	echo "FAIL: no RENAME_EXCHANGE reached udcfs (the churn tested none)"
	status=1
fi
[[ $status -eq 0 ]] && echo "PASS" || KEEP=1
exit $status
