#!/usr/bin/env bash
# Configures (once) and builds the project (Release, Ninja, ccache) against one of two LibTorch
# lines:
#   --libtorch debian   Debian's libtorch-dev 1.13 (CPU), into build/ (the default)
#   --libtorch current  the pinned CUDA LibTorch of jobs/libtorch-current.txt, fetched by
#                       jobs/fetch_libtorch.sh, into build-current/
# $NMT_BUILD_DIR overrides the folder; $NMT_BUILD_TARGET builds one target instead of all (the
# quickstart: tools, the nmt-* executables). Other arguments go to CMake's configure step, e.g.
# -DCMAKE_PREFIX_PATH=/opt/libtorch to build against a cluster's own LibTorch.
# Warnings are errors (-DNMT_WERROR=ON) in every folder this script configures, unless the arguments
# say -DNMT_WERROR=OFF: the quickstart and the test command (jobs/test.sh) then share one build of
# a line, and running one after the other rebuilds nothing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/jobs/libtorch_line.sh"
parse_libtorch_line "$@"
set -- "${NMT_REST_ARGS[@]+"${NMT_REST_ARGS[@]}"}"
build=${NMT_BUILD_DIR:-$root/$(libtorch_build_dir "$NMT_LIBTORCH_LINE")}
jobs=${NMT_BUILD_JOBS:-$(nproc)}

# A folder configured for the other line is not silently switched (its cache would mix the two).
if [[ -f "$build/CMakeCache.txt" ]]; then
  configured=$(sed -n 's/^NMT_LIBTORCH_LINE:[A-Z]*=//p' "$build/CMakeCache.txt")
  if [[ "${configured:-debian}" != "$NMT_LIBTORCH_LINE" ]]; then
    echo "build: $build is configured for the LibTorch line '${configured:-debian}', not" \
      "'$NMT_LIBTORCH_LINE'; choose another NMT_BUILD_DIR or remove that folder" >&2
    exit 2
  fi
fi

line_args=()
fresh=()
if [[ "$NMT_LIBTORCH_LINE" == current ]]; then
  prefix=$("$root/jobs/fetch_libtorch.sh")
  line_args=(-DNMT_LIBTORCH_LINE=current "-DCMAKE_PREFIX_PATH=$prefix/torch")
  # LibTorch's CMake config enables CUDA, which needs nvcc: with every CUDA piece from PyPI
  # (NMT_LIBTORCH_CUDA_LIBS=wheel) the fetched toolkit folder's, else the machine's; CMake does not
  # look in /usr/local/cuda.
  pypi_cuda=$prefix/nvidia/cu13
  if [[ "${NMT_LIBTORCH_CUDA_LIBS:-toolkit}" == wheel ]]; then
    line_args+=("-DCMAKE_CUDA_COMPILER=$pypi_cuda/bin/nvcc" "-DCUDAToolkit_ROOT=$pypi_cuda"
      "-DCUDA_TOOLKIT_ROOT_DIR=$pypi_cuda")
  elif ! command -v nvcc >/dev/null 2>&1; then
    [[ -x /usr/local/cuda/bin/nvcc ]] ||
      { echo "build: the current line needs the CUDA toolkit's nvcc (not on PATH)" >&2; exit 1; }
    line_args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  fi
  # Another pin (or NMT_LIBTORCH_CUDA_LIBS) is another prefix: configure afresh against it, since
  # the cache holds the old one's paths (Torch_DIR, Caffe2_DIR, its libraries, the NCCL probe).
  if [[ -f "$build/CMakeCache.txt" ]] &&
    ! grep -qE "^CMAKE_PREFIX_PATH:[A-Z]+=$prefix/torch\$" "$build/CMakeCache.txt"; then
    fresh=(--fresh)
    grep -qx 'NMT_WERROR:BOOL=ON' "$build/CMakeCache.txt" && line_args+=(-DNMT_WERROR=ON)
  fi
fi

# A new folder gets warnings as errors (an -DNMT_WERROR=OFF in the arguments comes later and wins).
[[ -f "$build/CMakeCache.txt" ]] || line_args+=(-DNMT_WERROR=ON)

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [[ ! -f "$build/CMakeCache.txt" || $# -gt 0 || ${#fresh[@]} -gt 0 ]]; then
  cmake "${fresh[@]+"${fresh[@]}"}" -S "$root" -B "$build" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=Release "${line_args[@]+"${line_args[@]}"}" "$@"
fi
start=$(date +%s)
target=()
[[ -n "${NMT_BUILD_TARGET:-}" ]] && target=(--target "$NMT_BUILD_TARGET")
cmake --build "$build" --parallel "$jobs" "${target[@]+"${target[@]}"}"
echo "build: ${NMT_BUILD_TARGET:-all} done in $(($(date +%s) - start)) s ($build, LibTorch line" \
  "$NMT_LIBTORCH_LINE)"
