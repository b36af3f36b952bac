#!/usr/bin/env bash
# The static library exports udcache's API and nothing else (issue 17):
# every defined global of every member is udc_*.  Usage: check-symbols.sh LIB.a
set -euo pipefail
lib=$1
extra=$(${NM:-nm} -g --defined-only "$lib" | awk 'NF == 3 && $3 !~ /^udc_/ { print $3 }')
api=$(${NM:-nm} -g --defined-only "$lib" | awk 'NF == 3 && $3 ~ /^udc_/' | wc -l)
if [ -n "$extra" ]; then
	echo "check-symbols: $lib exports $(echo "$extra" | wc -l) globals outside the API:" >&2
	echo "$extra" | head -20 >&2
	exit 1
fi
if [ "$api" -lt 10 ]; then
	echo "check-symbols: $lib exports only $api udc_ functions" >&2
	exit 1
fi
echo "check-symbols: $lib exports $api globals, all udc_*"
