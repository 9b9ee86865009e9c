#!/usr/bin/env bash
# Configures (once) and builds the project into $NMT_BUILD_DIR (default build/, Release, Ninja,
# ccache). Extra arguments go to CMake's configure step, e.g. -DCMAKE_PREFIX_PATH=/opt/libtorch
# to build against a cluster's CUDA LibTorch.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${NMT_BUILD_DIR:-$root/build}
jobs=${NMT_BUILD_JOBS:-$(nproc)}

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [[ ! -f "$build/CMakeCache.txt" || $# -gt 0 ]]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
fi
start=$(date +%s)
cmake --build "$build" --parallel "$jobs"
echo "build: done in $(( $(date +%s) - start )) s ($build)"
