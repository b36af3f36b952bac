#!/usr/bin/env bash
# scripts/hit_instructions.sh - instructions per hit (callgrind: repeatable
# on a noisy machine), udcache against the bare rculfhash baseline, the
# figure issue 16 sets (<= 1.1x; udcache-value against lfht-value, the same
# table with a 64-byte value inline in each positive), and the same hits through libudcache.so
# (udc_lookup's, negative too, and udc_resolve's answered by the cache).
#
# Usage: BUILD=build/release scripts/hit_instructions.sh
#   COUNT=1000000 NAMES=65536 (udc-stress's hit workload, 16-byte names,
#   uniform; its tables settled before the hits: impl->settle).
# Prints one row per (impl, kind): instructions per lookup, collected over
# the lookup wrapper only (udc-stress's impl function, or udc-hit-shared's
# hit_once), so set-up and the driver's loop are left out.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${BUILD:-build/release}
count=${COUNT:-1000000}
names=${NAMES:-65536}
stress=$build/stress/udc-stress
shared=$build/stress/udc-hit-shared
for f in "$stress" "$shared"; do
	[[ -x $f ]] || { echo "hit_instructions: no $f (build the release preset)" >&2; exit 1; }
done
command -v valgrind >/dev/null || { echo "hit_instructions: valgrind is not installed" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# per_hit FUNCTION COMMAND...: instructions collected in FUNCTION / count
per_hit() {
	local fn=$1
	shift
	# An LTO build names udc-stress's static functions fn.lto_priv.N.
	valgrind --tool=callgrind --callgrind-out-file="$out/cg" --toggle-collect="$fn" \
		--toggle-collect="$fn.lto_priv.*" "$@" \
		>"$out/log" 2>&1 || { cat "$out/log" >&2; exit 1; }
	awk -v n="$count" '/Collected :/ { printf "%.1f", $NF / n }' "$out/log"
}

printf '| impl | kind | instructions per hit |\n|---|---|---:|\n'
for row in "udcache udcache_lookup 0 positive" "udcache udcache_lookup 1 negative" \
	"udcache-value udcache_value_lookup 0 with-a-value" \
	"lfht lfht_lookup 0 positive" "lfht lfht_lookup 1 negative" \
	"lfht-value lfht_value_lookup 0 with-a-value"; do
	read -r impl fn neg kind <<<"$row"
	n=$(per_hit "$fn" "$stress" --workload hit --impl "$impl" --threads 1 --count "$count" \
		--names "$names" --negative-ratio "$neg" --no-reclaim-thread)
	printf '| %s | %s | %s |\n' "$impl" "$kind" "$n"
done
n=$(per_hit hit_once "$shared" "$names" "$count")
printf '| libudcache.so | positive | %s |\n' "$n"
n=$(per_hit hit_once "$shared" "$names" "$count" negative)
printf '| libudcache.so | negative | %s |\n' "$n"
n=$(per_hit hit_once "$shared" "$names" "$count" resolve)
printf '| libudcache.so | udc_resolve, positive | %s |\n' "$n"
