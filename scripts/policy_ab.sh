#!/usr/bin/env bash
# scripts/policy_ab.sh - policy variants side by side on issue 14's 36
# replay rows: udcache's backend lookups for each build given, RUNS runs of
# each row (medians, with their range), against the lru-mutex and s3fifo
# columns of one scripts/bench_issue14.sh run; then each build's density
# against the dense fill of the entries it held (issue 14's 1.3x).
#
# The rows (trace, copies, limit) are those of that run: its JSON directory
# (bench_issue14.sh's OUT) gives each trace's lanes and footprint, so every
# variant runs at the very limits the references ran at.  Only udcache is
# run again (lru-mutex is deterministic; s3fifo ran at the entry count of
# that run's udcache, and stays the reference).  udcache's counts move from
# run to run (the grace periods' timing decides what each sweep finds):
# some rows are bimodal, so compare medians, never one run.
#
# Usage: scripts/policy_ab.sh BENCH_OUT BUILD_DIR...
#   e.g. OUT=/tmp/i14 scripts/bench_issue14.sh; scripts/policy_ab.sh /tmp/i14 \
#        /tmp/wA/build/release build/release
# Environment: RUNS (3), SEED (1), ONLY (trace names, space-separated: only
# those rows), JOBS (2: runs at once), KEEP (a directory for the JSON of
# every run; default a temporary one).
# About a minute a build and run on 2 cores.
set -euo pipefail

cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 BENCH_OUT BUILD_DIR..." >&2; exit 2; }
REF=$1
shift
RUNS=${RUNS:-3}
SEED=${SEED:-1}
JOBS=${JOBS:-2}
KEEP=${KEEP:-$(mktemp -d)}

field() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["traces"][0][sys.argv[2]])' "$1" "$2"
}

mix=()
for t in tests/traces/*.strace.gz; do mix+=(--trace "$t"); done

n=0
for build in "$@"; do
	n=$((n + 1))
	for ((r = 1; r <= RUNS; r++)); do
		out=$KEEP/v$n-r$r
		mkdir -p "$out"
		for unb in "$REF"/*-unbounded-udcache.json; do
			name=$(basename "$unb" -unbounded-udcache.json)
			if [ -n "${ONLY:-}" ] && ! [[ " $ONLY " == *" $name "* ]]; then continue; fi
			foot=$(field "$unb" bytes_used_max)
			lanes=$(field "$unb" lanes)
			if [ "$name" = mix ]; then
				targs=(--mix "${mix[@]}")
				copies=$((lanes / (${#mix[@]} / 2)))   # a copy is a lane per trace
			else
				targs=(--trace "tests/traces/$name.strace.gz")
				copies=$lanes
			fi
			for p in 5 10 25 50; do
				nice -n 19 "$build/stress/udc-stress" --workload replay --json \
					--no-reclaim-thread --seed "$SEED" --passes 2 --impl udcache \
					--memory $((foot * p / 100)) --copies "$copies" "${targs[@]}" \
					>"$out/$name-$p-udcache.json" &
				while [ "$(jobs -r | wc -l)" -ge "$JOBS" ]; do sleep 0.2; done
			done
		done
		wait
	done
done

python3 - "$REF" "$KEEP" "$n" "$RUNS" "$@" <<'EOF'
import glob, json, os, statistics, sys
ref, keep, n, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
builds = sys.argv[5:]
def calls(path):
    return json.load(open(path))["traces"][0]["backend_calls"]
rows = sorted({os.path.basename(f)[:-len(".json")] for f in glob.glob(f"{keep}/v1-r1/*.json")},
              key=lambda s: (s.rsplit("-", 2)[0], int(s.rsplit("-", 2)[1])))
print(f"udcache's backend lookups, medians of {runs} runs (range), / lru-mutex's; "
      f"references from {ref}\n")
print("| trace | limit | lru-mutex | s3fifo | " + " | ".join(f"v{i + 1}" for i in range(n)) + " |")
print("|---|---|---:|---:|" + "---:|" * n)
le, s3, tot = [0] * n, [0] * n, [0] * n
for row in rows:
    name, pct, _ = row.rsplit("-", 2)
    l = calls(f"{ref}/{name}-{pct}-lru-mutex.json")
    s = calls(f"{ref}/{name}-{pct}-s3fifo.json")
    cells = []
    for i in range(n):
        xs = [calls(f"{keep}/v{i + 1}-r{r}/{row}.json") for r in range(1, runs + 1)]
        m = statistics.median(xs)
        le[i] += m <= l
        s3[i] += m <= 1.02 * s
        tot[i] += m
        cells.append(f"{m / 1e3:.1f} k ({min(xs) / 1e3:.1f}..{max(xs) / 1e3:.1f}) "
                     f"{m / l:.3f}{'*' if m > l else ''}")
    print(f"| {name} | {pct}% | {l / 1e3:.1f} k | {s / 1e3:.1f} k | " + " | ".join(cells) + " |")
print("\n(* above lru-mutex)\n")
for i, b in enumerate(builds):
    print(f"- v{i + 1} = {b}: {le[i]} rows <= lru-mutex, {s3[i]} within 2% of s3fifo "
          f"(at the reference's entry count), {tot[i] / 1e6:.3f} M backend lookups in all")

# Density against the dense fill: bytes_used per entry cached at the end,
# against what those entries take in full pages with their tables (live slot
# bytes and bucket arrays); then where the rest is.  In brackets: the ratio
# with the directory objects left out.
def density(path):
    t = json.load(open(path))["traces"][0]
    b = t["bytes_parts"]
    ent = max(1, t["nr_negative_end"] + t["nr_positive_end"])
    live = sum(b[k] for k in ("negatives_probation_live", "negatives_main_live",
                              "positives_probation_live", "positives_main_live"))
    dense = live + b["buckets"]
    empty = b["slab_negatives"] + b["slab_positives"] - live
    return (b["total"] / ent, dense / ent, b["total"] / dense, (b["total"] - b["dirs"]) / dense,
            b["dirs"] / b["total"], empty / b["total"], b["buckets"] / b["total"],
            (b["ghosts"] + b["other"]) / b["total"])
for i, build in enumerate(builds):
    print(f"\nv{i + 1}'s density (medians of {runs} runs): bytes a cached entry, against the dense "
          "fill of them\n")
    print("| trace | limit | bytes an entry | dense fill | ratio (less directory objects) | "
          "directory objects | empty slots | tables | ghosts and the rest |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    met = met_nd = 0
    for row in rows:
        name, pct, _ = row.rsplit("-", 2)
        d = [density(f"{keep}/v{i + 1}-r{r}/{row}.json") for r in range(1, runs + 1)]
        m = [statistics.median(x[k] for x in d) for k in range(8)]
        met += m[2] <= 1.3
        met_nd += m[3] <= 1.3
        print(f"| {name} | {pct}% | {m[0]:.0f} | {m[1]:.0f} | {m[2]:.2f}x ({m[3]:.2f}x) | "
              f"{m[4] * 100:.0f}% | {m[5] * 100:.0f}% | {m[6] * 100:.0f}% | {m[7] * 100:.0f}% |")
    print(f"\nWithin 1.3x of the dense fill: {met} rows; without the directory objects: {met_nd}.")
EOF
