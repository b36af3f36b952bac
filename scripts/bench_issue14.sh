#!/usr/bin/env bash
# scripts/bench_issue14.sh - issue 14, deliverable 1: the replay at scale,
# against the references a cache researcher would use.
#
# For each trace of tests/traces (or the files given) and their mix, the
# trace is enlarged with --copies (separate process trees, interleaved) until
# udcache holds about TARGET_ENTRIES entries unbounded; the unbounded run
# gives the footprint (udcache's bytes_used max).  Then, at 5, 10, 25 and 50%
# of it: udcache, lru-mutex and kernel at the same bytes, and s3fifo and
# Belady's optimum at udcache's mean entry count.  Everything runs with
# --no-reclaim-thread and one --seed (the same interleaving for every
# implementation), 2 passes (the counters are the warm second pass's).
# Prints one markdown table per trace:
#  - backend lookups (component misses; positive/negative) of each, and
#    udcache's against s3fifo's at equal entries;
#  - entries held per MiB of bytes_used (means over the pass), udcache
#    against lru-mutex, and the share of udcache's bytes_used in directory
#    objects at the end (its replay's bytes_parts);
#  - FreeBSD's measure, udcache and lru-mutex: the share of the unbounded
#    cache's negative hits kept, against the share of its negatives held.
#
# Usage: scripts/bench_issue14.sh [trace.strace.gz ...]
# Environment: BUILD (build/release), TARGET_ENTRIES (100000), SEED (1),
# OUT (a directory for the JSON of every run; default a temporary one).
# Every run is under nice -n 19.  About 10 minutes on 2 cores.
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build/release}
TARGET_ENTRIES=${TARGET_ENTRIES:-100000}
SEED=${SEED:-1}
OUT=${OUT:-$(mktemp -d)}
STRESS=$BUILD/stress/udc-stress
PCTS="5 10 25 50"

if [ ! -x "$STRESS" ]; then
	nice -n 19 cmake --preset release >/dev/null
	nice -n 19 cmake --build --preset release -j2 --target udc-stress >/dev/null
fi
if [ $# -gt 0 ]; then TRACES=("$@"); else TRACES=(tests/traces/*.strace.gz); fi
mkdir -p "$OUT"

# run NAME ARGS...: one replay, its JSON in $OUT/NAME.json.
run() {
	local name=$1
	shift
	nice -n 19 "$STRESS" --workload replay --json --no-reclaim-thread --seed "$SEED" \
		--passes 2 "$@" >"$OUT/$name.json"
}

# field FILE KEY: the first trace's KEY.
field() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["traces"][0][sys.argv[2]])' "$1" "$2"
}

# bench NAME COPIES TRACE-ARGS...: every run of one enlarged trace, then its table.
bench() {
	local name=$1 copies=$2
	shift 2
	run "$name-unbounded-udcache" --impl udcache --memory 4G --copies "$copies" "$@"
	run "$name-unbounded-lru-mutex" --impl lru-mutex --memory 4G --copies "$copies" "$@"
	local foot
	foot=$(field "$OUT/$name-unbounded-udcache.json" bytes_used_max)
	for p in $PCTS; do
		local lim=$((foot * p / 100))
		for impl in udcache lru-mutex kernel; do
			run "$name-$p-$impl" --impl "$impl" --memory "$lim" --copies "$copies" "$@"
		done
		local ent
		ent=$(python3 -c 'import sys; print(max(1, round(float(sys.argv[1]))))' \
			"$(field "$OUT/$name-$p-udcache.json" entries_mean)")
		run "$name-$p-s3fifo" --impl s3fifo --entries "$ent" --optimum "$ent" \
			--copies "$copies" "$@"
	done
	python3 - "$OUT" "$name" "$copies" "$foot" $PCTS <<'EOF'
import json, sys
out, name, copies, foot = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pcts = sys.argv[5:]
def load(tag):
    d = json.load(open(f"{out}/{name}-{tag}.json"))
    t = d["traces"][0]
    if t["wrong"] or d["wrong_answers"]:
        sys.exit(f"{name}-{tag}: wrong answers")
    return t
def lookups(t):
    return t["backend_positive"] + t["backend_negative"]
def cell(t):
    return f"{lookups(t)} ({t['backend_positive']}/{t['backend_negative']})"
def per_mib(t):
    b = t["bytes_used_mean"]
    return t["entries_mean"] / (b / 2**20) if b else 0
def dirs_share(t):
    b = t.get("bytes_parts")
    return f"{100 * b['dirs'] / b['total']:.0f}%" if b and b["total"] else "-"
def freebsd(t, u):
    kept = t["negative_hits"] / u["negative_hits"] if u["negative_hits"] else 0
    held = t["negatives_mean"] / u["negatives_mean"] if u["negatives_mean"] else 0
    return f"{100*kept:.0f}% / {100*held:.0f}%"
uu, ul = load("unbounded-udcache"), load("unbounded-lru-mutex")
print(f"\n#### {name} x {copies} copies: {uu['lanes']} lanes, {uu['events']} events, "
      f"{uu['components']} components a pass; footprint {foot/2**20:.1f} MiB, "
      f"{uu['entries_mean']:.0f} entries (udcache unbounded, {uu['bytes_per_entry']:.0f} B/entry)\n")
print(f"Unbounded backend lookups: udcache {cell(uu)}, lru-mutex {cell(ul)}; "
      f"component hit ratio {uu['component_hit_ratio']:.4f}.\n")
print("| limit | udcache | lru-mutex | kernel | entries (udcache) | s3fifo | optimum | udcache / s3fifo "
      "| entries/MiB udcache | entries/MiB lru-mutex | udcache's bytes in directory objects "
      "| neg. hits kept / held udcache | lru-mutex |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for p in pcts:
    u, l, k, s = (load(f"{p}-{i}") for i in ("udcache", "lru-mutex", "kernel", "s3fifo"))
    ratio = lookups(u) / lookups(s) if lookups(s) else 0
    print(f"| {p}% ({foot*int(p)/100/2**20:.2f} MiB) | {cell(u)} | {cell(l)} | {cell(k)} "
          f"| {u['entries_mean']:.0f} | {cell(s)} | {s['optimum_misses']} | {ratio:.3f} "
          f"| {per_mib(u):.0f} | {per_mib(l):.0f} | {dirs_share(u)} | {freebsd(u, uu)} "
          f"| {freebsd(l, ul)} |")
EOF
}

# copies_for TRACE-ARGS...: copies that bring udcache to TARGET_ENTRIES unbounded.
copies_for() {
	run probe --impl udcache --memory 4G "$@"
	python3 -c 'import sys,math; print(max(1, math.ceil(int(sys.argv[1]) / max(1, float(sys.argv[2])))))' \
		"$TARGET_ENTRIES" "$(field "$OUT/probe.json" entries_max)"
}

echo "issue 14: replay at scale (seed $SEED, target $TARGET_ENTRIES entries; JSON in $OUT)"
for t in "${TRACES[@]}"; do
	name=$(basename "$t" .strace.gz)
	bench "$name" "$(copies_for --trace "$t")" --trace "$t"
done
mix=()
for t in "${TRACES[@]}"; do mix+=(--trace "$t"); done
bench mix "$(copies_for --mix "${mix[@]}")" --mix "${mix[@]}"
