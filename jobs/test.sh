#!/usr/bin/env bash
# The test command: installs what is missing, builds (warnings are errors), runs every test.
#   jobs/test.sh                     against Debian's LibTorch 1.13, in build/
#   jobs/test.sh --libtorch current  against the pinned CUDA LibTorch, in build-current/ (tests
#                                    that need a GPU compile and skip without one)
# Other arguments go to ctest, e.g. jobs/test.sh -R Vocabulary, or --repeat until-fail:3.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/jobs/libtorch_line.sh"
parse_libtorch_line "$@"
set -- "${NMT_REST_ARGS[@]+"${NMT_REST_ARGS[@]}"}"
"$root/jobs/setup.sh"
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
