#!/usr/bin/env python3
"""The share of a run's CPU spent spinning: samples at the `pause` loops.

    scripts/spin_share.py [--threads N] [--seconds S] [--max PCT] [--workloads a,b]
                          [--stress PATH] [--impl NAME] [-- udc-stress options]

Runs udc-stress's workloads with more threads than cores (64 by default)
under `perf record -e cpu-clock`, and counts the samples that land within
a few instructions of a `pause` (a spin-wait loop: a spinlock, a seqlock
read, the mutex's spin before it sleeps), by function.

Why: with more threads than cores a thread can be preempted while it
holds what others spin on, and they then spin through its timeslice.
Issue 16's stop 36 found walks spinning on an odd rename_seq while the
rename was preempted: 48% of a 64-thread `mixed` run's samples, 0.34x the
kernel model's throughput.  A lock that sleeps after a short spin shows
here as a few percent at most.

Exits 1 if a workload spends more than --max percent (default 10) of its
samples spinning.  Needs perf (linux-perf) and perf_event access; a
benchmark, not a test (its figures depend on the machine's scheduling).
"""
import argparse
import bisect
import collections
import os
import re
import subprocess
import sys
import tempfile

SPIN_WINDOW = 24   # bytes either side of a pause counted as its loop

def objdump_sites(dso, cache):
    """(symbol start addresses, sorted `pause` addresses) of dso."""
    if dso not in cache:
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", dso],
                             capture_output=True, text=True).stdout
        starts = {m.group(2): int(m.group(1), 16)
                  for m in re.finditer(r"^([0-9a-f]+) <(.+)>:$", out, re.M)}
        pauses = sorted(int(m.group(1), 16)
                        for m in re.finditer(r"^\s*([0-9a-f]+):\s+pause\b", out, re.M))
        cache[dso] = (starts, pauses)
    return cache[dso]

def near_pause(pauses, addr):
    i = bisect.bisect_left(pauses, addr - SPIN_WINDOW)
    return i < len(pauses) and pauses[i] <= addr + SPIN_WINDOW

def run(stress, workload, threads, seconds, impl, extra):
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-o", data, "--", stress,
               "--workload", workload, "--impl", impl, "--threads", str(threads),
               "--seconds", str(seconds)] + extra
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode:
            sys.exit(f"spin_share: {' '.join(cmd)} failed:\n{res.stderr[-2000:]}")
        # sym+off, not the ip: perf prints a PIE's ips relocated or not
        out = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym,symoff,dso"],
                             capture_output=True, text=True).stdout
    total, spin, by_sym, cache = 0, 0, collections.Counter(), {}
    for line in out.splitlines():
        m = re.match(r"\s*[0-9a-f]+\s+(.*?)(?:\+0x([0-9a-f]+))?\s+\((.*)\)\s*$", line)
        if not m:
            continue
        total += 1
        sym, off, dso = m.group(1), int(m.group(2) or "0", 16), m.group(3)
        if not dso.startswith("/") or not os.path.exists(dso):
            continue   # the kernel, the vdso
        starts, pauses = objdump_sites(dso, cache)
        if sym in starts and near_pause(pauses, starts[sym] + off):
            spin += 1
            by_sym[sym] += 1
    return total, spin, by_sym

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=64)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--max", type=float, default=10.0)
    ap.add_argument("--workloads", default="mixed,churn,rename,trickle,hit")
    ap.add_argument("--stress", default="build/release/stress/udc-stress")
    ap.add_argument("--impl", default="udcache")
    ap.add_argument("extra", nargs="*", help="more udc-stress options, after --")
    a = ap.parse_args()
    bad = False
    print(f"| workload@{a.threads} | samples | spinning | where |")
    print("|---|---:|---:|---|")
    for w in a.workloads.split(","):
        total, spin, by_sym = run(a.stress, w, a.threads, a.seconds, a.impl, a.extra)
        pct = 100.0 * spin / total if total else 0.0
        where = ", ".join(f"{s} {100.0 * n / total:.1f}%" for s, n in by_sym.most_common(3))
        print(f"| {w} | {total} | {pct:.1f}% | {where or '-'} |")
        bad |= pct > a.max
    sys.exit(1 if bad else 0)

if __name__ == "__main__":
    main()
