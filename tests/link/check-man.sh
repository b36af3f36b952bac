#!/usr/bin/env bash
# The man pages are the header's (scripts/gen-man.py --check: a change to a
# function's comment without regenerating them fails here), one per
# UDC_API function, and groff reads each (and udc-stress(1)) with no warning.
# Usage: check-man.sh SOURCE_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
python3 "$src/scripts/gen-man.py" --check "$src/include/udcache.h" "$src/man"
missing=""
for f in $(grep -oP 'UDC_API\s+[^;(]*?\b\Kudc_\w+(?=\()' "$src/include/udcache.h"); do
	[ -f "$src/man/man3/$f.3" ] || missing="$missing $f"
done
if [ -n "$missing" ]; then
	echo "check-man: no page for:$missing" >&2
	exit 1
fi
# udc-stress(1) is written by hand: its version must be the header's.
version=$(sed -n 's/^#define UDC_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' \
	"$src/include/udcache.h" | paste -sd.)
if ! grep -q "\"udcache $version\"" "$src/man/man1/udc-stress.1"; then
	echo "check-man: man/man1/udc-stress.1 does not say udcache $version" >&2
	exit 1
fi
cd "$src/man"
for page in man3/*.3 man1/*.1; do
	warnings=$(groff -man -ww -z -Tutf8 "$page" 2>&1)
	if [ -n "$warnings" ]; then
		echo "check-man: $page: $warnings" >&2
		exit 1
	fi
done
echo "check-man: $(ls man3/*.3 | wc -l) pages, the header's, and udc-stress(1), read by groff with no warning"
