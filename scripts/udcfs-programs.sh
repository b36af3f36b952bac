#!/usr/bin/env bash
# scripts/udcfs-programs.sh - real programs through udcfs, with udcache and
# with --no-cache, over a store with a round trip per name lookup and per
# GETATTR.
#
#   scripts/udcfs-programs.sh            (prints a markdown table on stdout)
#
# For each program, each store delay / attr delay pair (CONFIGS, "S/A" in
# microseconds) and each mode (udcache, --no-cache): a fresh backing
# directory, a mount (-f --stats -o allow_other, kernel entry/attr
# timeouts 0), the program run under it and timed, udcfs's statistics
# for each timed step (SIGUSR1 before and after it), and the step's output
# kept to compare the two modes.  Steps:
#
#   git clone   git clone -q --no-hardlinks of this repository (a bare
#               snapshot of HEAD taken at start, so that commits made
#               meanwhile change nothing) into the mount
#   git status  then `git status` in it 3 times
#   python      `python3 -B -S -c 'import ...'` 5 times, PYTHONPATH in
#               the mount, holding copies (cp -a: the .pyc stay valid) of
#               the stdlib's email json http xml unittest and Debian's
#               pygments and yaml
#   tar -x      `tar -x` of `git archive HEAD` into the mount
#   rm -rf      then `rm -rf` of that tree
#   build       cmake configure + `cmake --build -j2 --target udcache` of
#               an extracted copy of this project (tests, stress off)
#
# Environment: UDCFS (default build/release's udcfs), PROGRAMS (default
# "git python tar build"), CONFIGS (default "200/200 0/0 200/0 0/200"),
# READDIR_DELAY (default 0: us slept in each READDIR request the store
# answers, udcfs --readdir-delay-us, in every configuration),
# KEEP=1 keeps the work directory.  READDIRPLUS entries are stat'ed in the
# store (after --store-delay-us each) in both modes: the table counts them.  Details (per-step statistics, the
# logs) go to stderr.  Skips (exit 0) without root, /dev/fuse or udcfs.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
UDCFS=${UDCFS:-$here/build/release/examples/udcfs/udcfs}
PROGRAMS=${PROGRAMS:-git python tar build}
CONFIGS=${CONFIGS:-200/200 0/0 200/0 0/200}
READDIR_DELAY=${READDIR_DELAY:-0}
PY=${PY:-/usr/bin/python3}

skip() { echo "skipped: $*"; exit 0; }
[[ $(id -u) -eq 0 ]] || skip "needs root (allow_other)"
{ exec 9<>/dev/fuse; } 2>/dev/null || skip "/dev/fuse cannot be opened"
exec 9>&-
[[ -x $UDCFS ]] || skip "udcfs is not built ($UDCFS)"

tmp=$(mktemp -d /tmp/udcfs-programs.XXXXXX)
back=$tmp/back mnt=$tmp/mnt log=
mkdir -p "$mnt" "$tmp/out" "$tmp/res"
pid=
unmount() {
	cd /
	if mountpoint -q "$mnt" 2>/dev/null; then
		fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
	fi
	if [[ -n $pid ]]; then
		wait "$pid" 2>/dev/null
		pid=
	fi
}
cleanup() {
	unmount
	if [[ ${KEEP:-0} == 1 ]]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Inputs, taken once.
git clone -q --bare --no-hardlinks "$here" "$tmp/src.git" || exit 1
git -C "$tmp/src.git" archive HEAD >"$tmp/src.tar" || exit 1
pysrc=$tmp/pylib
mkdir -p "$pysrc"
stdlib=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
for p in email json http xml unittest; do cp -a "$stdlib/$p" "$pysrc/"; done
for p in pygments yaml; do
	[[ -d /usr/lib/python3/dist-packages/$p ]] && cp -a "/usr/lib/python3/dist-packages/$p" "$pysrc/"
done
# shellcheck disable=SC2016
pyprog='
import os, sys
import email.parser, email.mime.multipart, email.policy, json, http.client, http.server
import xml.dom.minidom, xml.etree.ElementTree, unittest, unittest.mock
try:
    import yaml, pygments, pygments.lexers, pygments.formatters
    from pygments import highlight
    print(highlight("x = 1\n", pygments.lexers.PythonLexer(), pygments.formatters.NullFormatter()), end="")
except ImportError as e:
    print("no", e.name)
root = os.environ["PYROOT"]
mods = sorted(os.path.relpath(m.__file__, root) for m in list(sys.modules.values())
              if getattr(m, "__file__", None) and m.__file__.startswith(root))
print(len(mods), "modules from the mount")
print("\n".join(mods))
'

# udcfs statistics: SIGUSR1 makes it print them; wait for the print.
snap() {                 # snap FILE: the current statistics into FILE
	local n k
	n=$(grep -c '^udcfs statistics' "$log")
	kill -USR1 "$pid"
	for ((k = 0; k < 200; k++)); do
		(($(grep -c '^udcfs statistics' "$log") > n)) && sleep 0.05 && break
		sleep 0.02
	done
	awk -v n=$((n + 1)) '/^udcfs statistics/ {c++} c == n' "$log" >"$1"
}
stat_of() {              # stat_of FILE LABEL: the first number after LABEL
	sed -n "s/^  $2 *\([0-9]*\).*/\1/p" "$1" | head -1
}
delta() {                # delta BEFORE AFTER LABEL
	echo $(($(stat_of "$2" "$3") - $(stat_of "$1" "$3")))
}

mount_fs() {             # mount_fs MODE STORE_DELAY ATTR_DELAY
	local opts=(-f --stats --store-delay-us "$2" --attr-delay-us "$3" --readdir-delay-us "$READDIR_DELAY")
	[[ $1 == no-cache ]] && opts+=(--no-cache)
	log=$tmp/udcfs.$1.log
	"$UDCFS" "${opts[@]}" -o allow_other "$back" "$mnt" 2>"$log" &
	pid=$!
	local k
	for ((k = 0; k < 100; k++)); do mountpoint -q "$mnt" && break; sleep 0.1; done
	mountpoint -q "$mnt" || { cat "$log" >&2; echo "udcfs did not mount" >&2; exit 1; }
}

# step KEY CHECK CMD...: run CMD, timed, with the statistics around it;
# its stdout and exit status, then CHECK's stdout (run after the second
# statistics, untimed; - for none), are the step's output.
step() {
	local key=$1 check=$2
	shift 2
	snap "$tmp/s0"
	local t0 t1 rc
	t0=$(date +%s.%N)
	"$@" >"$tmp/out/$key" 2>"$tmp/out/$key.err"
	rc=$?
	t1=$(date +%s.%N)
	snap "$tmp/s1"
	echo "exit $rc" >>"$tmp/out/$key"
	[[ $check == - ]] || "$check" >>"$tmp/out/$key" 2>&1
	printf '%s %s %s %s %s %s %s\n' "$(echo "$t1 - $t0" | bc -l)" \
		"$(delta "$tmp/s0" "$tmp/s1" 'store name lookups')" \
		"$(delta "$tmp/s0" "$tmp/s1" 'attr fetches')" \
		"$(delta "$tmp/s0" "$tmp/s1" 'cache hits')" \
		"$( (grep -q 'getattr from cache' "$tmp/s1" && delta "$tmp/s0" "$tmp/s1" 'getattr from cache') || echo 0)" \
		"$(delta "$tmp/s0" "$tmp/s1" 'readdirplus stats')" \
		"$(delta "$tmp/s0" "$tmp/s1" 'listings from cache')" \
		>"$tmp/res/$key"
	echo "  $key: $(cat "$tmp/res/$key") (s, store lookups, store getattrs, cache hits, getattr from cache, readdirplus stats, listings from cache)$([[ $rc -ne 0 ]] && echo " exit $rc: $(head -c 300 "$tmp/out/$key.err")")" >&2
}

# The programs: each runs its steps in the mount (cwd /).
git_clone() { git clone -q --no-hardlinks "$tmp/src.git" "$mnt/repo"; }
list_repo() { (cd "$mnt/repo" && find . | sort); }
git_status3() { local k; for k in 1 2 3; do git -C "$mnt/repo" status || return; done; }
py5() { local k; for k in 1 2 3 4 5; do (cd /tmp && PYROOT="$mnt/lib" PYTHONPATH="$mnt/lib" "$PY" -B -S -c "$pyprog") || return; done; }
tar_x() { mkdir "$mnt/src" && tar -x -C "$mnt/src" -f "$tmp/src.tar"; }
list_src() { (cd "$mnt/src" && find . | sort); }
rm_rf() { rm -rf "$mnt/src"; }
list_mnt() { find "$mnt" | sed "s|^$mnt||" | sort; }
build() {
	cmake -S "$mnt/src" -B "$mnt/build" -DCMAKE_BUILD_TYPE=Release \
		-DUDC_BUILD_TESTS=OFF -DUDC_BUILD_STRESS=OFF >/dev/null &&
	cmake --build "$mnt/build" -j2 --target udcache >/dev/null &&
	echo "built: $(cd "$mnt/build" && find . -name 'libudcache*' -type f | sort)"
}

run_program() {          # run_program PROG MODE CFG
	local prog=$1 mode=$2 cfg=$3
	local sd=${cfg%/*} ad=${cfg#*/}
	rm -rf "$back"
	mkdir -p "$back"
	case $prog in
	python) cp -a "$pysrc" "$back/lib" ;;
	build)  mkdir "$back/src" && tar -x -C "$back/src" -f "$tmp/src.tar" ;;
	esac
	sync
	echo "$prog, store delay $sd us, attr delay $ad us, $mode:" >&2
	mount_fs "$mode" "$sd" "$ad"
	local tag="$sd-$ad-$mode"
	case $prog in
	git)    step "git-clone-$tag" list_repo git_clone
		step "git-status-$tag" - git_status3 ;;
	python) step "python-$tag" - py5 ;;
	tar)    step "tar-$tag" list_src tar_x
		step "rm-$tag" list_mnt rm_rf ;;
	build)  step "build-$tag" - build ;;
	esac
	unmount
	grep -E 'lookups|cache hits|attr fetches|getattr from cache|readdirplus|invalidations' "$log" | tail -7 | sed 's/^/    /' >&2
}

steps_of() {
	case $1 in
	git) echo "git-clone:git_clone git-status:git_status_(3x)" ;;
	python) echo "python:python_imports_(5x)" ;;
	tar) echo "tar:tar_-x rm:rm_-rf" ;;
	build) echo "build:cmake_build" ;;
	esac
}

start=$SECONDS
for cfg in $CONFIGS; do
	for prog in $PROGRAMS; do
		for mode in udcache no-cache; do
			run_program "$prog" "$mode" "$cfg"
		done
	done
done
echo "total $((SECONDS - start)) s" >&2

# The table.
echo "| program | store delay (µs) | attr delay (µs) | udcache (s) | --no-cache (s) | speedup | store name lookups (udcache / no-cache) | getattrs to the store (udcache / no-cache) | cache hits (lookup / getattr) | READDIRPLUS entries stat'ed (udcache / no-cache) | listings from the cache | outputs identical |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
for prog in $PROGRAMS; do
	for s in $(steps_of "$prog"); do
		key=${s%%:*} name=${s#*:}
		name=${name//_/ }
		for cfg in $CONFIGS; do
			sd=${cfg%/*} ad=${cfg#*/}
			u=$tmp/res/$key-$sd-$ad-udcache n=$tmp/res/$key-$sd-$ad-no-cache
			[[ -f $u && -f $n ]] || continue
			read -r ut ul ua uh ug ur uc <"$u"
			read -r nt nl na _ _ nr _ <"$n"
			same=yes
			cmp -s "$tmp/out/$key-$sd-$ad-udcache" "$tmp/out/$key-$sd-$ad-no-cache" || same=no
			printf '| %s | %s | %s | %.2f | %.2f | %.1fx | %s / %s | %s / %s | %s / %s | %s / %s | %s | %s |\n' \
				"$name" "$sd" "$ad" "$ut" "$nt" "$(echo "$nt / $ut" | bc -l)" \
				"$ul" "$nl" "$ua" "$na" "$uh" "$ug" "$ur" "$nr" "$uc" "$same"
			if [[ $same == no ]]; then
				echo "$key $cfg: outputs differ:" >&2
				diff "$tmp/out/$key-$sd-$ad-udcache" "$tmp/out/$key-$sd-$ad-no-cache" | head -20 >&2
			fi
		done
	done
done
