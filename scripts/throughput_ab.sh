#!/usr/bin/env bash
# scripts/throughput_ab.sh - issue 16's write-path targets, two builds side
# by side: ops/s of churn and rename at 1 thread and mixed at 1 and 2
# threads, and churn and mixed at 64 threads (more threads than cores:
# a lock or a spin that a preempted holder stalls shows there, as stop
# 36's fence-free unlocks and walks spinning on rename_seq did), for A's
# udcache, B's udcache and B's baselines (lru-mutex, kernel), RUNS runs of
# each interleaved (every row's runs in turn) so that
# the machine's drift hits them alike.  Prints, per row, the medians with
# their range, B against A, and B against the row's target baseline.
#
# Usage: scripts/throughput_ab.sh A/udc-stress B/udc-stress
# Environment: RUNS (3), SECONDS_PER_RUN (3), ROWS ("workload:threads:baselines
# [:args] ...", default the rows above; baselines joined by '+', args
# udc-stress options joined by ',', e.g. "hit:2:lfht+kernel+ck_hs:--names,65536"),
# IMPL (udcache: what A and B run, e.g. udcache-value).
# About a minute and a half a run on 2 cores with the default rows.
set -euo pipefail

A=$1 B=$2
RUNS=${RUNS:-3}
SECS=${SECONDS_PER_RUN:-3}
IMPL=${IMPL:-udcache}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

rows=${ROWS:-"churn:1:lru-mutex rename:1:lru-mutex mixed:1:kernel mixed:2:kernel churn:64:lru-mutex mixed:64:kernel"}
for ((r = 1; r <= RUNS; r++)); do
	for row in $rows; do
		IFS=: read -r wl threads bases args <<<"$row"
		IFS=, read -r -a extra <<<"${args:-}"
		label="$wl@$threads${args:+ ${args//,/ }}"
		for side in A B ${bases//+/ }; do
			bin=$B impl=$IMPL
			[ "$side" = A ] && bin=$A
			[ "$side" != A ] && [ "$side" != B ] && impl=$side
			"$bin" --csv --workload "$wl" --impl "$impl" --threads "$threads" \
				--seconds "$SECS" "${extra[@]}" 2>/dev/null |
				python3 -c 'import csv, sys
row = list(csv.DictReader(sys.stdin))[0]
if row["wrong"] != "0":
    sys.exit("wrong answers: " + row["wrong"])
print(sys.argv[1] + "\t" + sys.argv[2] + "\t" + row["ops_per_sec"])' "$label" "$side" >>"$out"
		done
	done
done

python3 - "$out" "$A" "$B" "$IMPL" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    row, side, ops = line.rstrip("\n").split("\t")
    runs.setdefault(row, {}).setdefault(side, []).append(float(ops))
def cell(v):
    return f"{statistics.median(v) / 1e3:,.0f} k ({min(v) / 1e3:,.0f}..{max(v) / 1e3:,.0f})"
print(f"A = {sys.argv[2]}, B = {sys.argv[3]}; ops/s, medians of {len(next(iter(runs.values()))['A'])} runs (range)\n")
print(f"| workload@threads | A {sys.argv[4]} | B {sys.argv[4]} | B / A | baseline (B's) | B / baseline |")
print("|---|---:|---:|---:|---:|---:|")
for row, s in runs.items():
    a, b = (statistics.median(s[k]) for k in ("A", "B"))
    first = True
    for base in (k for k in s if k not in ("A", "B")):
        m = statistics.median(s[base])
        lead = f"| {row} | {cell(s['A'])} | {cell(s['B'])} | {b / a:.2f}x" if first else "| | | |"
        print(f"{lead} | {base} {cell(s[base])} | {b / m:.2f}x |")
        first = False
EOF
