#!/usr/bin/env bash
# libudcache.so makes no __tls_get_addr call: its hit path's thread-locals
# are initial-exec and the rest (liburcu's reader record, read three times
# a hit) go through TLS descriptors (CMakeLists.txt).  A call per access
# was 42 instructions of a 458-instruction hit, invisible to udc-stress,
# which links the objects statically.  Usage: check-tls.sh LIBUDCACHE.so
set -euo pipefail
lib=$1
dump=$(objdump -d --no-show-raw-insn "$lib")   # fails the test if objdump does
if ! grep -q '<udc_lookup>:' <<<"$dump"; then
	echo "check-tls: no udc_lookup in objdump's disassembly of $lib" >&2
	exit 1
fi
calls=$(grep -c 'call.*<__tls_get_addr' <<<"$dump" || true)
if [[ $calls != 0 ]]; then
	echo "check-tls: $lib calls __tls_get_addr $calls times:" >&2
	awk '/^[0-9a-f]+ <.*>:$/ { fn = $2 } /call.*<__tls_get_addr/ { print "  in " fn }' \
		<<<"$dump" | sort | uniq -c >&2
	exit 1
fi
echo "check-tls: $lib makes no __tls_get_addr call"
