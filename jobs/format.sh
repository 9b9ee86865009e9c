#!/usr/bin/env bash
# clang-format over every tracked C++ file (.clang-format at the root).
#   jobs/format.sh          rewrites the files in place
#   jobs/format.sh --check  changes nothing; lists the files that differ and exits 1 (CI runs this)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
command -v clang-format >/dev/null || { echo "format: clang-format not found (jobs/setup.sh installs it)" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.hpp' '*.cc')
if [[ "${1:-}" == --check ]]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if ((${#bad[@]} > 0)); then
    printf 'format: not clang-formatted (run jobs/format.sh):\n' >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files clang-formatted"
else
  clang-format -i "${files[@]}"
  echo "format: ${#files[@]} files formatted"
fi
