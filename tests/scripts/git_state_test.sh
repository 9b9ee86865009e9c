#!/usr/bin/env bash
# cmake/GitState.cmake, which every build runs for run provenance, on a scratch git repository:
# a clean tree is not dirty; an edited tracked file makes it dirty with the SHA-256 of
# `git diff HEAD --binary`; a file only touched, or an untracked one, leaves it clean; the output
# is rewritten only when the state changes (an unchanged tree recompiles nothing); outside a git
# checkout every field is empty.
# Usage: git_state_test.sh SOURCE_DIR
set -euo pipefail
script=$1/cmake/GitState.cmake
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
state() {  # prints the generated initializer: "REVISION", DIRTY, "SHA"
  cmake -DSOURCE_DIR="$work/repo" -DOUTPUT="$work/out.cpp" -P "$script"
  sed -n 's/.*GitState state{\(.*\)};/\1/p' "$work/out.cpp"
}

mkdir "$work/repo"
git -C "$work/repo" init -q
printf 'one\n' > "$work/repo/a.txt"
git -C "$work/repo" add a.txt
git -C "$work/repo" -c user.name=t -c user.email=t@t commit -qm first
revision=$(git -C "$work/repo" rev-parse --short=12 HEAD)

[[ $(state) == "\"$revision\", false, \"\"" ]] || fail "clean tree: $(state)"
before=$(stat -c %Y.%s "$work/out.cpp")
sleep 1.1
state > /dev/null
[[ $(stat -c %Y.%s "$work/out.cpp") == "$before" ]] || fail "an unchanged state rewrote the file"

touch "$work/repo/a.txt"
printf 'notes\n' > "$work/repo/untracked.txt"
[[ $(state) == "\"$revision\", false, \"\"" ]] || fail "touched and untracked files: $(state)"

printf 'two\n' >> "$work/repo/a.txt"
sha=$(git -C "$work/repo" diff HEAD --no-ext-diff --no-color --binary | sha256sum | cut -d' ' -f1)
[[ $(state) == "\"$revision\", true, \"$sha\"" ]] || fail "edited tree: $(state), diff sha $sha"

rm -rf "$work/repo/.git"
[[ $(state) == "\"\", false, \"\"" ]] || fail "outside a checkout: $(state)"
echo PASS
