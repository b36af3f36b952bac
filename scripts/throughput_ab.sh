#!/usr/bin/env bash
# scripts/throughput_ab.sh - issue 16's write-path targets, two builds side
# by side: ops/s of churn and rename at 1 thread and mixed at 1 and 2
# threads, for A's udcache, B's udcache and B's baselines (lru-mutex,
# kernel), RUNS runs of each interleaved (every row's runs in turn) so that
# the machine's drift hits them alike.  Prints, per row, the medians with
# their range, B against A, and B against the row's target baseline.
#
# Usage: scripts/throughput_ab.sh A/udc-stress B/udc-stress
# Environment: RUNS (3), SECONDS_PER_RUN (3), ROWS ("workload:threads:baseline
# ...", default the four targets' rows).  About a minute a run on 2 cores.
set -euo pipefail

A=$1 B=$2
RUNS=${RUNS:-3}
SECS=${SECONDS_PER_RUN:-3}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

rows=${ROWS:-"churn:1:lru-mutex rename:1:lru-mutex mixed:1:kernel mixed:2:kernel"}
for ((r = 1; r <= RUNS; r++)); do
	for row in $rows; do
		IFS=: read -r wl threads base <<<"$row"
		for side in A B base; do
			bin=$B impl=udcache
			[ "$side" = A ] && bin=$A
			[ "$side" = base ] && impl=$base
			"$bin" --csv --workload "$wl" --impl "$impl" --threads "$threads" \
				--seconds "$SECS" 2>/dev/null |
				python3 -c 'import csv, sys
row = list(csv.DictReader(sys.stdin))[0]
if row["wrong"] != "0":
    sys.exit("wrong answers: " + row["wrong"])
print(sys.argv[1], sys.argv[2], row["ops_per_sec"])' "$wl@$threads" "$side" >>"$out"
		done
	done
done

python3 - "$out" "$A" "$B" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    row, side, ops = line.split()
    runs.setdefault(row, {}).setdefault(side, []).append(float(ops))
def cell(v):
    return f"{statistics.median(v) / 1e3:,.0f} k ({min(v) / 1e3:,.0f}..{max(v) / 1e3:,.0f})"
print(f"A = {sys.argv[2]}, B = {sys.argv[3]}; ops/s, medians of {len(next(iter(runs.values()))['A'])} runs (range)\n")
print("| workload@threads | A udcache | B udcache | B / A | baseline (B's) | B / baseline |")
print("|---|---:|---:|---:|---:|---:|")
for row, s in runs.items():
    a, b, base = (statistics.median(s[k]) for k in ("A", "B", "base"))
    print(f"| {row} | {cell(s['A'])} | {cell(s['B'])} | {b / a:.2f}x | {cell(s['base'])} | {b / base:.2f}x |")
EOF
