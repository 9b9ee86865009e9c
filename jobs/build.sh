#!/usr/bin/env bash
# Configures (once) and builds the project (Release, Ninja, ccache) against one of two LibTorch
# lines:
#   --libtorch debian   Debian's libtorch-dev 1.13 (CPU), into build/ (the default)
#   --libtorch current  the pinned CUDA LibTorch of jobs/libtorch-current.txt, fetched by
#                       jobs/fetch_libtorch.sh, into build-current/
# $NMT_BUILD_DIR overrides the folder. Other arguments go to CMake's configure step, e.g.
# -DNMT_WERROR=ON, or -DCMAKE_PREFIX_PATH=/opt/libtorch to build against a cluster's own LibTorch.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/jobs/libtorch_line.sh"
parse_libtorch_line "$@"
set -- "${NMT_REST_ARGS[@]+"${NMT_REST_ARGS[@]}"}"
build=${NMT_BUILD_DIR:-$root/$(libtorch_build_dir "$NMT_LIBTORCH_LINE")}
jobs=${NMT_BUILD_JOBS:-$(nproc)}

line_args=()
if [[ "$NMT_LIBTORCH_LINE" == current ]]; then
  prefix=$("$root/jobs/fetch_libtorch.sh")
  line_args=(-DNMT_LIBTORCH_LINE=current "-DCMAKE_PREFIX_PATH=$prefix/torch")
fi

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [[ ! -f "$build/CMakeCache.txt" || $# -gt 0 ]]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${line_args[@]}" "$@"
fi
start=$(date +%s)
cmake --build "$build" --parallel "$jobs"
echo "build: done in $(($(date +%s) - start)) s ($build, LibTorch line $NMT_LIBTORCH_LINE)"
