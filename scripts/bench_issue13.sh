#!/usr/bin/env bash
# Issue 13's figures, side by side (the 'before' and 'after' of the slab and
# latency work): udc-stress's threads workload, the trickle over many
# directories at a binding limit (udcache with its reclaim thread, udcache
# without it, lfht as the noise floor: no eviction at all), the replay of
# the project's 8 traces enlarged with --copies so that the same limits
# bind (one pass; the replay is single-threaded: one replaying thread, with
# the reclaim thread on and off), and frag's RSS growth retained with no
# purge.  Each configuration runs RUNS times,
# interleaved (run 1 of every configuration, then run 2, ...), so that the
# machine's noise spreads over all of them; each cell is the median with
# the spread (min..max).  Markdown on stdout, the commands on stderr, every
# run's JSON in OUT_DIR.
#
#   scripts/bench_issue13.sh UDC_STRESS [RUNS [SECONDS]]   (default 3 runs, 3 s)
#   env: PARKED (default 512), THREADS_LIMIT (16M), TRICKLE_LIMITS ("2M 4M 16M"),
#        TRICKLE_DIRS (64), TRICKLE_THREADS (1), FRAG_NAMES (1000000),
#        REPLAY_COPIES ("2M:400 4M:800 16M:3200": limit:copies, the copies
#        stress/stress.h's REPLAY_COPIES_* found to bind every trace),
#        SKIP ("threads trickle replay frag": the parts to leave out), OUT_DIR
#        (default /tmp/udc-issue13)
#
# Timed figures belong here, never in tests.  Before the slab changes, the
# threads workload at 512 parked threads takes minutes to park them (each
# call past the limit waits for frees under the reclaim lock).
set -euo pipefail
bin=${1:?usage: $0 UDC_STRESS [RUNS [SECONDS]]}
runs=${2:-3}
secs=${3:-3}
parked=${PARKED:-512}
tlimit=${THREADS_LIMIT:-16M}
limits=${TRICKLE_LIMITS:-2M 4M 16M}
dirs=${TRICKLE_DIRS:-64}
tthreads=${TRICKLE_THREADS:-1}
fnames=${FRAG_NAMES:-1000000}
rcopies=${REPLAY_COPIES:-2M:400 4M:800 16M:3200}
traces=$(cd "$(dirname "$0")/../tests/traces" && pwd)
skip=" ${SKIP:-} "
out=${OUT_DIR:-/tmp/udc-issue13}
mkdir -p "$out"

# one NAME ARGS...: run k of configuration NAME, its JSON into $out/NAME.k.json.
one() {
	local name=$1 k=$2
	shift 2
	echo "+ $bin --json $* > $out/$name.$k.json" >&2
	"$bin" --json "$@" >"$out/$name.$k.json" || true # a failed bound exits 1: still a figure
}

configs=()
if [[ $skip != *" threads "* ]]; then
	configs+=("threads-thread|--workload threads --threads $parked --limit $tlimit --seconds $secs")
	configs+=("threads-nothread|--workload threads --threads $parked --limit $tlimit --seconds $secs --no-reclaim-thread")
fi
if [[ $skip != *" trickle "* ]]; then
	for l in $limits; do
		base="--workload trickle --dirs $dirs --threads $tthreads --limit $l --seconds $secs"
		configs+=("trickle-$l-udcache-thread|$base --impl udcache")
		configs+=("trickle-$l-udcache-nothread|$base --impl udcache --no-reclaim-thread")
		configs+=("trickle-$l-lfht|$base --impl lfht")
	done
fi
if [[ $skip != *" replay "* ]]; then
	targs=""
	for t in "$traces"/*.strace.gz; do targs+=" --trace $t"; done
	for lc in $rcopies; do
		base="--workload replay --impl udcache --passes 1 --limit ${lc%%:*} --copies ${lc#*:}$targs"
		configs+=("replay-${lc%%:*}-thread|$base")
		configs+=("replay-${lc%%:*}-nothread|$base --no-reclaim-thread")
	done
fi
if [[ $skip != *" frag "* ]]; then
	configs+=("frag|--workload frag --names $fnames")
fi

for k in $(seq "$runs"); do
	for c in "${configs[@]}"; do
		# shellcheck disable=SC2086 # the arguments are words
		one "${c%%|*}" "$k" ${c#*|}
	done
done

python3 - "$out" "$runs" "$parked" "$tlimit" "$dirs" "$tthreads" "$limits" "$skip" "$rcopies" <<'EOF'
import json, sys
out, runs, parked, tlimit, dirs, tthreads, limits, skip, rcopies = sys.argv[1:]
runs = int(runs)

def load(name):
    r = []
    for k in range(1, runs + 1):
        try:
            with open(f"{out}/{name}.{k}.json") as f:
                r.append(json.load(f))
        except (OSError, ValueError):
            pass
    return r

def cell(ds, fn, fmt):
    v = sorted(fn(d) for d in ds)
    if not v:
        return "-"
    return f"{fmt(v[(len(v) - 1) // 2])} ({fmt(v[0])}..{fmt(v[-1])})"

def ns(x):
    if x >= 1e6: return f"{x / 1e6:.1f} ms"
    if x >= 1e3: return f"{x / 1e3:.1f} µs"
    return f"{x:.0f} ns"

mib = lambda x: f"{x / 1048576:.2f}"
rate = lambda x: f"{x / 1e6:.2f} M/s" if x >= 1e6 else f"{x / 1e3:.1f} K/s" if x >= 1e4 else f"{x:.0f}/s"
num = lambda x: f"{x:.0f}"
ratio = lambda x: f"{x:.3f}"
pct = lambda x: f"{x:.1f}%"

def lat_cols(ds):
    return [cell(ds, lambda d: d["latency_ns"][k], ns) for k in ("p50", "p99", "p99_99", "max")] + \
           [cell(ds, lambda d: d["latency_ns"]["over_1ms"], num)]

print(f"Each cell: the median of {runs} runs (min..max).\n")
if " threads " not in skip:
    print(f"### threads: {parked} parked threads, limit {tlimit}\n")
    print("| reclaim thread | park s | bytes_used parked (MiB) | RSS parked (MiB) | max bytes_used / limit | "
          "memory bound | calls/s | p50 | p99 | p99.99 | max | calls > 1 ms | RSS max (MiB) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, label in (("threads-thread", "on"), ("threads-nothread", "off")):
        ds = load(name)
        if not ds:
            continue
        bounds = "/".join(sorted(set(d["memory"]["bound"] for d in ds)))
        print("| " + " | ".join([label, cell(ds, lambda d: d["park_seconds"], lambda x: f"{x:.2f}"),
              cell(ds, lambda d: d["parked_bytes_used"], mib), cell(ds, lambda d: d["parked_rss"], mib),
              cell(ds, lambda d: d["memory"]["max_vs_limit"], ratio), bounds,
              cell(ds, lambda d: d["ops_per_sec"], rate)] + lat_cols(ds) +
              [cell(ds, lambda d: d["memory"]["rss_max"], mib)]) + " |")
    print()
if " trickle " not in skip:
    print(f"### trickle: unique misses over {dirs} directories, {tthreads} client thread(s)\n")
    print("| limit | impl | misses/s | p50 | p99 | p99.99 | max | calls > 1 ms | max bytes_used / limit | "
          "memory bound | RSS max (MiB) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for l in limits.split():
        for impl, label in (("udcache-thread", "udcache, reclaim thread"),
                            ("udcache-nothread", "udcache, no reclaim thread"),
                            ("lfht", "lfht (no eviction: the floor)")):
            ds = load(f"trickle-{l}-{impl}")
            if not ds:
                continue
            bounds = "/".join(sorted(set(d["memory"]["bound"] for d in ds)))
            if impl == "lfht":
                bounds = "(unbounded)"
            print("| " + " | ".join([l, label, cell(ds, lambda d: d["ops_per_sec"], rate)] + lat_cols(ds) +
                  [cell(ds, lambda d: d["memory"]["max_vs_limit"], ratio), bounds,
                   cell(ds, lambda d: d["memory"]["rss_max"], mib)]) + " |")
    print()
if " replay " not in skip:
    print("### replay: the 8 project traces, --copies so that the limit binds, 1 pass, "
          "1 replaying thread\n")
    print("Max bytes_used / limit and the memory bound: the worst of the 8 traces (each has a "
          "cache of its own).\n")
    print("| limit | copies | reclaim thread | max bytes_used / limit | memory bound | "
          "wrong answers | cache errors | evictions (all traces) | seconds (all traces) |")
    print("|---|---|---|---|---|---|---|---|---|")
    worst = lambda d: max(t["memory"]["max_vs_limit"] for t in d["traces"])
    for lc in rcopies.split():
        l, n = lc.split(":")
        for mode, label in (("thread", "on"), ("nothread", "off")):
            ds = load(f"replay-{l}-{mode}")
            if not ds:
                continue
            bounds = "/".join(sorted(set(t["memory"]["bound"] for d in ds for t in d["traces"])))
            print("| " + " | ".join([l, n, label, cell(ds, worst, ratio), bounds,
                  cell(ds, lambda d: d["wrong_answers"], num),
                  cell(ds, lambda d: sum(t["cache_errors"] for t in d["traces"]), num),
                  cell(ds, lambda d: sum(t["evictions_end"] for t in d["traces"]), num),
                  cell(ds, lambda d: sum(t["seconds"] for t in d["traces"]), lambda x: f"{x:.1f}")]) + " |")
    print()
if " frag " not in skip:
    ds = load("frag")
    if ds:
        print(f"### frag: {ds[0]['names']} negatives, {ds[0]['remove_ratio'] * 100:.0f}% removed, 2 s idle, no purge\n")
        print("| figure | udcache | malloc baseline |")
        print("|---|---|---|")
        print(f"| RSS growth retained (2 s idle) | {cell(ds, lambda d: d['rss_growth_retained_pct'], pct)} | "
              f"{cell(ds, lambda d: d['malloc_rss_growth_retained_pct'], pct)} |")
        for t in ("0ms", "500ms", "1000ms", "2000ms"):
            g = lambda d, side: (d[f"{side}_idle"][f"rss_{t}"] - d[f"{side}_rss"]["baseline"]) / \
                max(1, d[f"{side}_rss"]["growth"]) * 100
            print(f"| RSS - before, % of growth, at {t} idle | {cell(ds, lambda d: g(d, 'udcache'), pct)} | "
                  f"{cell(ds, lambda d: g(d, 'malloc'), pct)} |")
        print(f"| RSS growth (MiB) | {cell(ds, lambda d: d['udcache_rss']['growth'], mib)} | "
              f"{cell(ds, lambda d: d['malloc_rss']['growth'], mib)} |")
        print(f"| bytes_used retained | {cell(ds, lambda d: d['udcache_bytes_used']['retained_pct'], pct)} | - |")
        print(f"| RSS retained after an explicit jemalloc purge (the library never purges) | "
              f"{cell(ds, lambda d: d['udcache_rss_purged']['retained_pct'], pct)} | "
              f"{cell(ds, lambda d: d['malloc_rss_purged']['retained_pct'], pct)} |")
        print()
EOF
