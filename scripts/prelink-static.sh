#!/usr/bin/env bash
# Make the installed static library: one relocatable object that exports
# udcache's API (udc_*) and nothing else, with a private copy of jemalloc.
#
#   scripts/prelink-static.sh OUT.o JEMALLOC_PIC_A OBJECT...
#
# JEMALLOC_PIC_A "-": no private jemalloc (steps 1 and 2 skipped); the
# embedder links the shared one.
#
# 1. jemalloc: libjemalloc_pic.a's members in one object, every global it
#    defines renamed __udc_je_<name> (malloc, free and calloc included), so that it answers udcache's calls only and never
#    the process's malloc: linking libjemalloc.so instead made jemalloc the
#    allocator of every program that linked libudcache.a (issue 17).
# 2. udcache's objects, partially linked, their calls of jemalloc's own API
#    (mallocx, sdallocx, ...) renamed the same way.  Their calls of
#    malloc/calloc/free stay the process's: a hash table's struct is freed
#    by liburcu with free(), so it must come from the process's malloc.
# 3. Both linked into one object, and every global but the API localised:
#    an embedder with its own hash_name() or dir_get() links (the archive
#    exported 140 globals before, 121 of them unprefixed).
set -euo pipefail
out=$1 jemalloc=$2
shift 2
LD=${LD:-ld}
OBJCOPY=${OBJCOPY:-objcopy}
NM=${NM:-nm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

api=(mallocx sdallocx dallocx nallocx mallctl rallocx xallocx sallocx mallctlnametomib mallctlbymib)
"$LD" -r -o "$tmp/udc.o" "$@"
# Objects built for LTO (CMakeLists.txt, UDC_LTO) are fat: their plain code
# is kept, their GIMPLE goes (an embedder's -flto would read it, with the
# symbols step 3 localises still global in it).
"$OBJCOPY" --wildcard --remove-section='.gnu.lto_*' --remove-section='.gnu.debuglto_*' \
	--strip-symbol=__gnu_lto_v1 --strip-symbol=__gnu_lto_slim "$tmp/udc.o"
if [ "$jemalloc" = - ]; then
	cp "$tmp/udc.o" "$tmp/all.o"
else
	# Every member but C++'s operator new (jemalloc_cpp: udcache is C);
	# ld.lld's -r takes objects, not an archive alone.
	mkdir "$tmp/je" && (cd "$tmp/je" && ar x "$jemalloc" && rm -f jemalloc_cpp*.o)
	"$LD" -r -o "$tmp/je.o" "$tmp"/je/*.o
	"$NM" -g --defined-only "$tmp/je.o" | awk '{ print $3, "__udc_je_" $3 }' >"$tmp/je.map"
	"$OBJCOPY" --redefine-syms="$tmp/je.map" "$tmp/je.o"
	for s in "${api[@]}"; do echo "$s __udc_je_$s"; done >"$tmp/api.map"
	"$OBJCOPY" --redefine-syms="$tmp/api.map" "$tmp/udc.o"
	"$LD" -r -o "$tmp/all.o" "$tmp/udc.o" "$tmp/je.o"
fi
"$NM" -g --defined-only "$tmp/all.o" | awk '$3 ~ /^udc_/ { print $3 }' >"$tmp/keep"
if ! [ -s "$tmp/keep" ]; then
	echo "prelink-static: no udc_ symbol in the objects" >&2
	exit 1
fi
"$OBJCOPY" --keep-global-symbols="$tmp/keep" "$tmp/all.o" "$out"
