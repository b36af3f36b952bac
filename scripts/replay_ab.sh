#!/usr/bin/env bash
# scripts/replay_ab.sh - two builds of udc-stress side by side on the
# enlarged replays (issue 14): backend lookups of the second pass at a set of
# limits, RUNS runs of each binary interleaved (A, B, A, B...) so that the
# machine's drift hits both alike; prints, per row, the medians with their
# range and the change, and the negatives' backend lookups and mean entries.
#
# Usage: scripts/replay_ab.sh A/udc-stress B/udc-stress
# Environment: RUNS (3); ROWS, "trace:copies:bytes ..." (default: every
# project trace at 5% of its footprint, git-commit at 10%, and five rows at
# 25-50%; the footprints are scripts/bench_issue14.sh's).  About 40 s a run
# of both on 2 cores.
set -euo pipefail

cd "$(dirname "$0")/.."
A=$1 B=$2
RUNS=${RUNS:-3}
ROWS=${ROWS:-"bash-path:1316:608174 gcc:313:500000 git-commit:1042:807403 git-commit:1042:1604321
git-status:1613:671088 make-build:1924:702545 node-require:2128:692060 perl-modules:618:576716
tar-rm:75:587202 perl-modules:618:2894070 make-build:1924:7025459 gcc:313:2495610
bash-path:1316:6050283 git-status:1613:6689914"}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

for ((r = 1; r <= RUNS; r++)); do
	for row in $ROWS; do
		IFS=: read -r trace copies bytes <<<"$row"
		for side in A B; do
			bin=$A
			[ "$side" = B ] && bin=$B
			"$bin" --workload replay --json --no-reclaim-thread --seed 1 --passes 2 \
				--impl udcache --memory "$bytes" --copies "$copies" \
				--trace "tests/traces/$trace.strace.gz" |
				python3 -c 'import json, sys
t = json.load(sys.stdin)["traces"][0]
print(sys.argv[1], sys.argv[2], t["backend_calls"], t["backend_negative"], t["entries_mean"])' \
					"$trace@$bytes" "$side" >>"$out"
		done
	done
done

python3 - "$out" <<'PY'
import collections, statistics as st, sys
runs = collections.defaultdict(list)
order = []
for line in open(sys.argv[1]):
    row, side, calls, neg, ent = line.split()
    if row not in order:
        order.append(row)
    runs[row, side].append((int(calls), int(neg), float(ent)))
print("| replay@bytes | A calls | B calls | change | A neg. | B neg. | A entries | B entries |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for row in order:
    a, b = runs[row, "A"], runs[row, "B"]
    med = lambda xs, i: st.median(x[i] for x in xs)
    rng = lambda xs: "%d (%d..%d)" % (med(xs, 0), min(x[0] for x in xs), max(x[0] for x in xs))
    print("| %s | %s | %s | %+.1f%% | %d | %d | %.0f | %.0f |" % (
        row, rng(a), rng(b), 100 * (med(b, 0) - med(a, 0)) / med(a, 0),
        med(a, 1), med(b, 1), med(a, 2), med(b, 2)))
PY
