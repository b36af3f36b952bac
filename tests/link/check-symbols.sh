#!/usr/bin/env bash
# What the libraries export is the API, exactly (issue 17).  Usage:
#   check-symbols.sh HEADER VERSION_SCRIPT LIB.a LIB.so
# - the functions the header declares UDC_API;
# - the version script's global list: the same names;
# - libudcache.a's defined globals: the same names (an embedder's own
#   hash_name() or dir_get() must link);
# - libudcache.so's dynamic exports: the same names, each with a version
#   node of the script.
set -euo pipefail
header=$1 map=$2 archive=$3 shared=$4
NM=${NM:-nm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

grep -oP 'UDC_API\s+[^;(]*?\b\Kudc_\w+(?=\()' "$header" | sort -u >"$tmp/header"
sed -n '/global:/,/local:/p' "$map" | grep -oP '^\s*\Kudc_\w+(?=;)' | sort -u >"$tmp/map"
"$NM" -g --defined-only "$archive" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/archive"
"$NM" -D --defined-only "$shared" | awk 'NF == 3 && $3 !~ /^UDCACHE_/ { print $3 }' |
	sed 's/@.*//' | sort -u >"$tmp/shared"
unversioned=$("$NM" -D --defined-only --with-symbol-versions "$shared" |
	awk 'NF == 3 && $3 !~ /^UDCACHE_/ && $3 !~ /@@?UDCACHE_/ { print $3 }')

if ! [ -s "$tmp/header" ]; then
	echo "check-symbols: no UDC_API function in $header" >&2
	exit 1
fi
for what in map archive shared; do
	if ! diff -u "$tmp/header" "$tmp/$what" >"$tmp/diff"; then
		echo "check-symbols: the $what's exports differ from $header's API (- header, + $what):" >&2
		grep '^[-+]udc\|^[-+][^-+]' "$tmp/diff" | head -20 >&2
		fail=1
	fi
done
if [ -n "$unversioned" ]; then
	echo "check-symbols: $shared exports without a UDCACHE_ version: $unversioned" >&2
	fail=1
fi
[ "$fail" = 0 ] && echo "check-symbols: $(wc -l <"$tmp/header") functions, the header's, exported by both libraries and versioned"
exit "$fail"
