#!/usr/bin/env bash
# The test command: installs what is missing, builds (warnings are errors), runs every test.
# Extra arguments go to ctest, e.g. jobs/test.sh -R Vocabulary
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/jobs/setup.sh"
build=${NMT_BUILD_DIR:-$root/build}
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  NMT_BUILD_DIR=$build "$root/jobs/build.sh" -DNMT_WERROR=ON
else
  NMT_BUILD_DIR=$build "$root/jobs/build.sh"
fi
start=$(date +%s)
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" "$@"
echo "tests: done in $(( $(date +%s) - start )) s"
