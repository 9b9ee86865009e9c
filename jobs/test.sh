#!/usr/bin/env bash
# The test command: installs what is missing, builds (warnings are errors), runs every test.
#   jobs/test.sh                     against Debian's LibTorch 1.13, in build/
#   jobs/test.sh --libtorch current  against the pinned CUDA LibTorch, in build-current/ (tests
#                                    that need a GPU compile and skip without one)
#   jobs/test.sh --sanitize address,undefined
#                                    ASan and UBSan over every LibTorch-free library and its tests
#                                    (label torch_free), with clang-14 in build-asan/, which
#                                    jobs/fuzz.sh then builds its harnesses in
#   jobs/test.sh --sanitize thread   TSan over the tracker (daemon, store, client) and its tests
#                                    (label tracker), with GCC in build-tsan/
#                                    A sanitizer stage builds only what it runs, against Debian's
#                                    LibTorch, and leaves out the tests labelled no_sanitize
#                                    (docs/testing.md).
# Other arguments go to ctest, e.g. jobs/test.sh -R Vocabulary, or --repeat until-fail:3.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/jobs/libtorch_line.sh"
parse_libtorch_line "$@"
set -- "${NMT_REST_ARGS[@]+"${NMT_REST_ARGS[@]}"}"
sanitize=""
args=()
while (($# > 0)); do
  case "$1" in
    --sanitize=*) sanitize=${1#--sanitize=} ;;
    --sanitize)
      (($# >= 2)) || { echo "--sanitize needs a value: address,undefined or thread" >&2; exit 2; }
      sanitize=$2
      shift
      ;;
    *) args+=("$1") ;;
  esac
  shift
done
set -- "${args[@]+"${args[@]}"}"
"$root/jobs/setup.sh"
if [[ -n "$sanitize" ]]; then
  case "$sanitize" in
    address,undefined | undefined,address)
      stage_dir=build-asan stage_target=torch_free_tests stage_label="^torch_free$" ;;
    thread) stage_dir=build-tsan stage_target=tracker_tests stage_label="^tracker$" ;;
    *) echo "--sanitize: '$sanitize' is no stage (address,undefined or thread)" >&2; exit 2 ;;
  esac
  [[ "$NMT_LIBTORCH_LINE" == debian ]] ||
    { echo "--sanitize: the sanitizer stages build against Debian's LibTorch only" >&2; exit 2; }
  build=${NMT_BUILD_DIR:-$root/$stage_dir}
  # A report fails its test at once, with the stack of where it happened. Set these variables to
  # other values to override.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
  if [[ "$stage_dir" == build-asan ]]; then
    source "$root/jobs/sanitize_build.sh"
    configure_clang_asan_build "$build" "${CXX_FUZZ:-clang++-14}" "${CC_FUZZ:-clang-14}"
    cmake --build "$build" --parallel "${NMT_BUILD_JOBS:-$(nproc)}" --target "$stage_target"
  else
    configure=()
    grep -qx "NMT_SANITIZE:STRING=$sanitize" "$build/CMakeCache.txt" 2>/dev/null ||
      configure=(-DNMT_SANITIZE="$sanitize" -DNMT_WERROR=ON -DNMT_BUILD_BENCH=OFF)
    NMT_BUILD_DIR=$build NMT_BUILD_TARGET=$stage_target "$root/jobs/build.sh" --libtorch debian \
      "${configure[@]+"${configure[@]}"}"
  fi
  start=$(date +%s)
  ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" -L "$stage_label" \
    -LE "^no_sanitize$" "$@"
  echo "tests: done in $(($(date +%s) - start)) s ($build, sanitizers $sanitize)"
  exit 0
fi
build=${NMT_BUILD_DIR:-$root/$(libtorch_build_dir "$NMT_LIBTORCH_LINE")}
# Warnings are errors. jobs/build.sh configures every new folder so, the quickstart's included, and
# the tests then use that build as it is; only a folder configured without (by hand, or by an older
# checkout) is reconfigured here, which rebuilds it.
if ! grep -qx 'NMT_WERROR:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  NMT_BUILD_DIR=$build "$root/jobs/build.sh" --libtorch "$NMT_LIBTORCH_LINE" -DNMT_WERROR=ON
else
  NMT_BUILD_DIR=$build "$root/jobs/build.sh" --libtorch "$NMT_LIBTORCH_LINE"
fi
start=$(date +%s)
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" "$@"
echo "tests: done in $(($(date +%s) - start)) s ($build, LibTorch line $NMT_LIBTORCH_LINE)"
