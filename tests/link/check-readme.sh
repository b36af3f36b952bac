#!/usr/bin/env bash
# README.md's example compiles (warnings are errors) and runs against the
# built static library.  Usage: check-readme.sh README.md INCLUDE_DIR LIB.a
set -euo pipefail
readme=$1 include=$2 lib=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk '/^## Example/ { on = 1 } on && /^```c$/ { code = 1; next } code && /^```$/ { exit } code' \
	"$readme" >"$work/example.c"
if ! [ -s "$work/example.c" ]; then
	echo "check-readme: no \`\`\`c block under '## Example' in $readme" >&2
	exit 1
fi
# shellcheck disable=SC2046 # word splitting of pkg-config's flags is wanted
cc -std=c11 -Wall -Wextra -Werror -I"$include" "$work/example.c" "$lib" \
	$(pkg-config --libs liburcu-memb liburcu-cds ck) -lpthread -ldl -lm \
	-o "$work/example"
"$work/example"
echo "check-readme: README's example ($(wc -l <"$work/example.c") lines) compiles and runs"
