#!/usr/bin/env bash
# scripts/stress.sh - build the release preset and run udc-stress.
#
# Usage: scripts/stress.sh [udc-stress options...]
# With no options udc-stress runs its default workload (see --help).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/deps.sh

echo "==> configure + build: release" >&2
cmake --preset release
cmake --build --preset release -j"$(nproc)"

echo "==> build/release/stress/udc-stress $*" >&2
exec ./build/release/stress/udc-stress "$@"
