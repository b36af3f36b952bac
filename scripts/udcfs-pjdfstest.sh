#!/usr/bin/env bash
# scripts/udcfs-pjdfstest.sh - run the POSIX test suite pjdfstest through udcfs
# (examples/udcfs), once with udcache (--verify) and once with --no-cache,
# each on a fresh backing directory, and compare.
#
#   scripts/udcfs-pjdfstest.sh [DIR...]      (default: rename unlink rmdir mkdir link symlink open)
#
# DIR is a directory of pjdfstest's tests/ (chmod, chown, ...).  Fails (exit
# 1) if a test fails with udcache that passes without it, or if udcfs
# --verify saw a cached answer that disagreed with the store.  Skips (exit 0,
# "skipped: ...") when not root, when /dev/fuse cannot be opened, or when
# udcfs was not built.
#
# Environment:
#   UDCFS           the udcfs binary (default: build/release's, else build/udcfs's)
#   PJDFSTEST_SRC   pjdfstest's source (default tests/pjdfstest: upstream's,
#                   unchanged, its UPSTREAM file names the commit)
#   PJDFSTEST_BUILD where it is copied and built (default build/pjdfstest)
#   UDCFS_BASELINE  failures (default): --no-cache runs only the directories
#                   where a test failed with udcache (if none did, none can
#                   have failed only with it); all: every directory, for the
#                   full tally
#   UDCFS_OPTS      extra udcfs options for both runs (e.g. --store-delay-us 10)
#   KEEP=1          keep the temporary directory (logs, TAP output)
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
if [[ -z ${UDCFS:-} ]]; then
	UDCFS=$here/build/release/examples/udcfs/udcfs
	[[ -x $UDCFS ]] || UDCFS=$here/build/udcfs/examples/udcfs/udcfs
fi
PJDFSTEST_SRC=${PJDFSTEST_SRC:-$here/tests/pjdfstest}
PJDFSTEST_BUILD=${PJDFSTEST_BUILD:-$here/build/pjdfstest}
UDCFS_BASELINE=${UDCFS_BASELINE:-failures}
UDCFS_OPTS=${UDCFS_OPTS:-}
dirs=("$@")
((${#dirs[@]})) || dirs=(rename unlink rmdir mkdir link symlink open)

skip() { echo "skipped: $*"; exit 0; }

[[ $(id -u) -eq 0 ]] || skip "pjdfstest needs root (it changes uids)"
{ exec 9<>/dev/fuse; } 2>/dev/null || skip "/dev/fuse cannot be opened"
exec 9>&-
[[ -x $UDCFS ]] || skip "udcfs is not built ($UDCFS): cmake --build build/udcfs --target udcfs"
command -v prove >/dev/null || skip "prove (perl) is not installed"
command -v fusermount3 >/dev/null || skip "fusermount3 is not installed (fuse3)"
[[ -d $PJDFSTEST_SRC ]] || skip "no pjdfstest source at $PJDFSTEST_SRC"

# Build pjdfstest (once; again when the source is newer).
if [[ ! -x $PJDFSTEST_BUILD/pjdfstest || $PJDFSTEST_SRC/pjdfstest.c -nt $PJDFSTEST_BUILD/pjdfstest ]]; then
	echo "building pjdfstest in $PJDFSTEST_BUILD"
	rm -rf "$PJDFSTEST_BUILD"
	mkdir -p "$(dirname "$PJDFSTEST_BUILD")"
	cp -r "$PJDFSTEST_SRC" "$PJDFSTEST_BUILD"
	if ! (cd "$PJDFSTEST_BUILD" && autoreconf -ifs && ./configure && make pjdfstest) \
		>"$PJDFSTEST_BUILD.log" 2>&1; then
		echo "pjdfstest build failed: see $PJDFSTEST_BUILD.log" >&2
		exit 1
	fi
fi
for d in "${dirs[@]}"; do
	[[ -d $PJDFSTEST_BUILD/tests/$d ]] || { echo "no such pjdfstest directory: $d" >&2; exit 2; }
done

tmp=$(mktemp -d /tmp/udcfs-pjdfstest.XXXXXX)
chmod 755 "$tmp"
mnt=$tmp/mnt
pid=
cleanup() {
	cd /
	if mountpoint -q "$mnt" 2>/dev/null; then
		fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
	fi
	[[ -n $pid ]] && kill "$pid" 2>/dev/null
	if [[ ${KEEP:-0} == 1 ]]; then
		echo "kept $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# run MODE OPTS...: mount, run prove on each directory, unmount.
# Leaves $tmp/MODE/<dir>.tap and $tmp/MODE/udcfs.log; returns udcfs's status.
run() {
	local mode=$1; shift
	local out=$tmp/$mode back=$tmp/$mode/back
	mkdir -p "$out" "$back" "$mnt"
	chmod 755 "$back"
	# shellcheck disable=SC2086
	"$UDCFS" -f --stats "$@" $UDCFS_OPTS -o allow_other,default_permissions \
		"$back" "$mnt" 2>"$out/udcfs.log" &
	pid=$!
	local k
	for ((k = 0; k < 100; k++)); do
		mountpoint -q "$mnt" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if ! mountpoint -q "$mnt"; then
		echo "udcfs ($mode) did not mount:" >&2
		cat "$out/udcfs.log" >&2
		return 1
	fi
	for d in "${dirs[@]}"; do
		echo "== $mode: $d"
		mkdir -p "$mnt/$d" && chmod 755 "$mnt/$d"
		(cd "$mnt/$d" && prove -v -r "$PJDFSTEST_BUILD/tests/$d") >"$out/$d.tap" 2>&1
		tail -1 "$out/$d.tap"
	done
	cd /
	fusermount3 -u "$mnt" || umount -l "$mnt"
	local rc=0
	wait "$pid" || rc=$?
	pid=
	return $rc
}

# results FILE.tap: "testfile:number ok|notok|todo|skip" per test point.
results() {
	awk '
		/^\/.*\.t \.\./ { f = $1; sub(/.*\/tests\//, "", f); next }
		/^(not )?ok [0-9]+/ {
			st = ($1 == "ok") ? "ok" : "notok"; n = ($1 == "ok") ? $2 : $3
			if ($0 ~ /# *TODO/) st = "todo"
			else if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) st = "skip"
			print f ":" n, st
		}' "$1"
}

verify_rc=0
run udcache --verify || verify_rc=$?
all_dirs=("${dirs[@]}")
if [[ $UDCFS_BASELINE == failures ]]; then
	# Only where something failed with udcache: elsewhere nothing can
	# fail with it and pass without.
	dirs=()
	for d in "${all_dirs[@]}"; do
		grep -q '^Result: PASS' "$tmp/udcache/$d.tap" || dirs+=("$d")
	done
fi
nocache_rc=0
if ((${#dirs[@]})); then
	run nocache --no-cache || nocache_rc=$?
fi
for d in "${all_dirs[@]}"; do   # a directory not run without: no line
	[[ -f $tmp/nocache/$d.tap ]] || { mkdir -p "$tmp/nocache"; : >"$tmp/nocache/$d.tap"; }
done
dirs=("${all_dirs[@]}")

status=0
printf '\n%-10s | %21s | %21s\n' "" "udcache (--verify)" "--no-cache"
printf '%-10s | %6s %6s %7s | %6s %6s %7s\n' directory tests ok "not ok" tests ok "not ok"
tot=(0 0 0 0 0 0)
for d in "${dirs[@]}"; do
	results "$tmp/udcache/$d.tap" >"$tmp/udcache/$d.res"
	results "$tmp/nocache/$d.tap" >"$tmp/nocache/$d.res"
	row=()
	for m in udcache nocache; do
		t=$(wc -l <"$tmp/$m/$d.res")
		n=$(grep -c ' notok$' "$tmp/$m/$d.res")
		row+=("$t" $((t - n)) "$n")
	done
	printf '%-10s | %6d %6d %7d | %6d %6d %7d\n' "$d" "${row[@]}"
	for k in 0 1 2 3 4 5; do tot[k]=$((tot[k] + row[k])); done
	# Every test point that fails with udcache and passes (or is missing) without.
	while read -r key st; do
		[[ $st == notok ]] || continue
		other=$(awk -v k="$key" '$1 == k { print $2 }' "$tmp/nocache/$d.res")
		if [[ $other != notok ]]; then
			echo "REGRESSION: $key fails with udcache, ${other:-missing} with --no-cache"
			status=1
		fi
	done <"$tmp/udcache/$d.res"
	# A file whose test count differs (a test script that died early).
	if [[ -s $tmp/nocache/$d.tap && ${row[0]} -ne ${row[3]} ]]; then
		echo "REGRESSION: $d ran ${row[0]} test points with udcache, ${row[3]} without"
		status=1
	fi
done
printf '%-10s | %6d %6d %7d | %6d %6d %7d\n' total "${tot[@]}"

if [[ $(grep -c ' notok$' "$tmp"/nocache/*.res 2>/dev/null | awk -F: '{s += $2} END {print s+0}') -gt 0 ]]; then
	echo
	echo "failing with --no-cache too (the passthrough's, not udcache's):"
	cat "$tmp"/nocache/*.res | awk '$2 == "notok" { print "  " $1 }' | head -50
fi
echo
grep -E 'verify checks|lookups|cache hits|store name' "$tmp/udcache/udcfs.log" | sed 's/^/udcache: /'
if grep -q 'VERIFY MISMATCH' "$tmp/udcache/udcfs.log" || [[ $verify_rc -eq 3 ]]; then
	echo "FAIL: udcfs --verify saw cached answers that disagree with the store:"
	grep 'VERIFY MISMATCH' "$tmp/udcache/udcfs.log" | head -20
	status=1
elif [[ $verify_rc -ne 0 ]]; then
	echo "FAIL: udcfs (udcache) exited with status $verify_rc"
	tail -20 "$tmp/udcache/udcfs.log"
	status=1
fi
if [[ $nocache_rc -ne 0 ]]; then
	echo "note: udcfs --no-cache exited with status $nocache_rc"
fi
if [[ $status -eq 0 ]]; then
	echo "PASS: no test fails with udcache that passes without"
else
	KEEP=1
fi
exit $status
