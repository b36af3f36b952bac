#!/usr/bin/env bash
# udcache as another project's subproject (add_subdirectory), configured
# with no build type (issue 17): it adds no test, no udc-stress, no install
# rule to the parent, and still compiles the library optimised.  Configure
# only (seconds).  Usage: check-subproject.sh SOURCE_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/parent"
cat >"$work/parent/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(parent LANGUAGES C)
enable_testing()
add_subdirectory("$src" udcache)
add_executable(app app.c)
target_link_libraries(app PRIVATE udcache::udcache_static)
CMAKE
echo 'int main(void) { return 0; }' >"$work/parent/app.c"
cmake -S "$work/parent" -B "$work/build" -G "Unix Makefiles" >"$work/log" 2>&1 ||
	{ cat "$work/log" >&2; exit 1; }
fail=0
tests=$(cd "$work/build" && ctest -N | sed -n 's/^Total Tests: //p')
if [ "$tests" != 0 ]; then
	echo "check-subproject: the parent has $tests of udcache's tests" >&2
	fail=1
fi
cmake --build "$work/build" --target help >"$work/targets"
if grep -q 'udc-stress\|test_engine' "$work/targets"; then
	echo "check-subproject: the parent builds udc-stress or the tests" >&2
	fail=1
fi
if grep -q 'libudcache\|udcache.h' "$work/build/udcache/cmake_install.cmake"; then
	echo "check-subproject: installing the parent installs udcache" >&2
	fail=1
fi
if ! grep '"command"' "$work/build/compile_commands.json" 2>/dev/null | grep 'engine/cache.c' | grep -q -- '-O2'; then
	# compile_commands.json is udcache's own setting (CMAKE_EXPORT_COMPILE_COMMANDS)
	echo "check-subproject: with no build type, engine/cache.c is compiled without -O2" >&2
	fail=1
fi
[ "$fail" = 0 ] && echo "check-subproject: no test, no udc-stress, no install rule; the library at -O2"
exit "$fail"
