#!/usr/bin/env bash
# scripts/test.sh - build and run every test in the release, ASan+UBSan and
# TSan builds, then the fuzzer for a minute.  CI runs exactly this (.ci/run).
#
# Usage: scripts/test.sh [preset...]   (default: release asan-ubsan tsan fuzz)
# The tsan preset's ctest runs the plain programs (Criterion cannot start
# under TSan): the differential stress, the udc-stress smoke runs and the
# multi-threaded tsan-stress runs of tests/CMakeLists.txt.
# For each preset: configure, build, then `ctest --preset <preset>`, which runs
# the Criterion executables.  "fuzz" is scripts/fuzz.sh instead: the libFuzzer
# harness (tests/fuzz) replays its regressions and seeds, then fuzzes for
# UDC_FUZZ_SECONDS (60).  Every preset is run even if an earlier one fails;
# the exit status is non-zero if any failed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/deps.sh

# Sanitizer settings for the asan-ubsan build (harmless for the others):
# stop at the first report with a stack trace, and check for leaks at exit.
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:print_stacktrace=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-print_suppressions=0:suppressions=$PWD/scripts/lsan.supp}"
# For the tsan preset: stop at the first report; tsan.supp suppresses
# liburcu's own code only (our RCU orderings: common/rcu_tsan.h).
if [[ -z "${TSAN_OPTIONS:-}" ]]; then
	TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
	if [[ -f scripts/tsan.supp ]]; then
		TSAN_OPTIONS+=":suppressions=$PWD/scripts/tsan.supp"
	fi
	export TSAN_OPTIONS
fi

if (($# > 0)); then
	presets=("$@")
else
	presets=(release asan-ubsan tsan fuzz)
fi

failed=()
for preset in "${presets[@]}"; do
	echo
	echo "==================== preset: $preset ===================="
	if [[ "$preset" == fuzz ]]; then
		if ./scripts/fuzz.sh "${UDC_FUZZ_SECONDS:-60}"; then
			echo "==================== preset $preset: PASSED ===================="
		else
			echo "==================== preset $preset: FAILED ===================="
			failed+=("$preset")
		fi
		continue
	fi
	if cmake --preset "$preset" &&
		cmake --build --preset "$preset" -j"$(nproc)" &&
		ctest --preset "$preset" --no-tests=error; then
		echo "==================== preset $preset: PASSED ===================="
	else
		echo "==================== preset $preset: FAILED ===================="
		failed+=("$preset")
	fi
done

echo
if ((${#failed[@]} > 0)); then
	echo "test.sh: FAILED presets: ${failed[*]} (passed: $((${#presets[@]} - ${#failed[@]})) of ${#presets[@]})"
	exit 1
fi
echo "test.sh: all presets passed: ${presets[*]}"
