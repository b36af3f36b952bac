#!/usr/bin/env bash
# scripts/fuzz.sh - build the fuzz preset and run the libFuzzer harness.
#
# Usage: scripts/fuzz.sh [seconds]   (default 60)
#
# Configures and builds the fuzz preset (clang, -fsanitize=fuzzer,address,
# undefined, UDC_DEBUG=3) in build/fuzz, replays every input kept in
# tests/fuzz/regressions/ and the seed corpus tests/fuzz/corpus/ once, then
# fuzzes a copy of the corpus and of the distilled one of past long runs
# (tests/fuzz/distilled.tar.gz; the tree's are never written) for the given
# time, single process.  Exits non-zero on any crash, violation of the
# harness's checks, leak or timeout; the input that did it is saved as
# build/fuzz/artifacts/crash-* (or leak-*, timeout-*), to replay with
#   build/fuzz/tests/fuzz/fuzz_api <file>    (UDC_FUZZ_TRACE=1: every op)
# and to keep in tests/fuzz/regressions/ once understood.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

secs="${1:-60}"
if ! [[ "$secs" =~ ^[0-9]+$ ]]; then
	echo "usage: scripts/fuzz.sh [seconds]" >&2
	exit 2
fi
if ! command -v clang >/dev/null 2>&1; then
	echo "fuzz.sh: clang is needed (Debian: apt-get install clang)" >&2
	exit 1
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:print_stacktrace=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

start=$(date +%s)
cfglog=$(mktemp)
cmake --preset fuzz >"$cfglog" 2>&1 || {
	cat "$cfglog"
	rm -f "$cfglog"
	exit 1
}
rm -f "$cfglog"
cmake --build --preset fuzz -j"$(nproc)"
built=$(date +%s)

bin=build/fuzz/tests/fuzz/fuzz_api
artifacts=build/fuzz/artifacts
work=build/fuzz/corpus-run
mkdir -p "$artifacts"
rm -rf "$work"
mkdir -p "$work"

# Every input kept from past findings and every seed, once each.
mapfile -t inputs < <(find tests/fuzz/regressions tests/fuzz/corpus -type f \
	! -name '*.md' ! -name '.*' 2>/dev/null | sort)
if ((${#inputs[@]} > 0)); then
	echo "fuzz.sh: replaying ${#inputs[@]} regression and seed inputs"
	"$bin" -artifact_prefix="$artifacts/" "${inputs[@]}" >"$work.replay.log" 2>&1 || {
		cat "$work.replay.log"
		echo "fuzz.sh: FAILED: a regression or seed input fails (see above)" >&2
		exit 1
	}
fi

cp tests/fuzz/corpus/* "$work/"
# And the distilled corpus of past long runs (tests/fuzz/README.md): a
# minute starts from where they got to, not from the seeds alone.
if [[ -f tests/fuzz/distilled.tar.gz ]]; then
	tar -xzf tests/fuzz/distilled.tar.gz -C "$work" --strip-components=1
fi
echo "fuzz.sh: fuzzing for ${secs}s (build took $((built - start))s)"
if ! "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$artifacts/" "$work" >"$work.log" 2>&1; then
	tail -n 80 "$work.log"
	echo "fuzz.sh: FAILED: a finding; the input is in $artifacts/ (replay: $bin <file>)" >&2
	exit 1
fi
grep -E '^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb' "$work.log" || true
echo "fuzz.sh: no finding in ${secs}s ($(($(date +%s) - start))s in all)"
