#!/usr/bin/env bash
# Fuzzing with libFuzzer: builds the harnesses of fuzz/ with clang-14 (-fsanitize=fuzzer, plus
# ASan and UBSan over the project's code) in build-asan/, the folder `jobs/test.sh --sanitize
# address,undefined` builds and tests the LibTorch-free libraries in (so the two share one build of
# them), then runs each harness for a bounded time, one at a time, and prints the executions of
# each (libFuzzer's final stats).
#   jobs/fuzz.sh                       every harness, 30 s each
#   jobs/fuzz.sh --seconds 60 shard    one harness (fuzz/shard_fuzz.cpp) for 60 s
#   --max-len N                        the largest input tried, in bytes (default 8192)
# Each harness starts from its seeds (fuzz/corpus/NAME) and regression inputs
# (fuzz/regressions/NAME) and adds what it finds to build-asan/corpus/NAME. An input that crashes,
# trips a sanitizer, allocates without bound (over 2 GB), runs over 10 s or breaks a harness's
# check is written to build-asan/crashes/NAME/ and fails the script (exit 1) once every harness
# has run. Keep such an input in fuzz/regressions/NAME/: CTest then replays it in every build.
# $NMT_FUZZ_BUILD_DIR overrides the folder; $CXX_FUZZ and $CC_FUZZ the compilers.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=30
max_len=8192
harnesses=()
while (($# > 0)); do
  case "$1" in
    --seconds) seconds=$2; shift ;;
    --seconds=*) seconds=${1#--seconds=} ;;
    --max-len) max_len=$2; shift ;;
    --max-len=*) max_len=${1#--max-len=} ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "fuzz: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) harnesses+=("$1") ;;
  esac
  shift
done
[[ "$seconds" =~ ^[0-9]+$ && "$seconds" -ge 1 ]] ||
  { echo "fuzz: --seconds must be a positive integer" >&2; exit 2; }
[[ "$max_len" =~ ^[0-9]+$ && "$max_len" -ge 1 ]] ||
  { echo "fuzz: --max-len must be a positive integer" >&2; exit 2; }
build=${NMT_FUZZ_BUILD_DIR:-$root/build-asan}
cxx=${CXX_FUZZ:-clang++-14}
cc=${CC_FUZZ:-clang-14}
command -v "$cxx" >/dev/null ||
  { echo "fuzz: $cxx not found (Debian: apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 1; }

if [[ ${#harnesses[@]} -eq 0 ]]; then
  mapfile -t harnesses < <(cd "$root/fuzz" && ls -- *_fuzz.cpp | sed 's/_fuzz\.cpp$//')
fi
for name in "${harnesses[@]}"; do
  [[ -f "$root/fuzz/${name}_fuzz.cpp" ]] ||
    { echo "fuzz: no harness '$name' (fuzz/${name}_fuzz.cpp)" >&2; exit 2; }
done

source "$root/jobs/sanitize_build.sh"
configure_clang_asan_build "$build" "$cxx" "$cc"
start=$(date +%s)
targets=()
for name in "${harnesses[@]}"; do targets+=("${name}_fuzz"); done
cmake --build "$build" --parallel "${NMT_BUILD_JOBS:-$(nproc)}" --target "${targets[@]}"
echo "fuzz: built ${#targets[@]} harnesses in $(($(date +%s) - start)) s ($build)"

# Scratch files (spools, shards) on memory when there is /dev/shm: some harnesses fsync.
[[ -d /dev/shm && -w /dev/shm ]] && export TMPDIR=${TMPDIR:-/dev/shm}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
summary=()
for name in "${harnesses[@]}"; do
  corpus=$build/corpus/$name
  crashes=$build/crashes/$name
  mkdir -p "$corpus" "$crashes"
  inputs=("$corpus" "$root/fuzz/corpus/$name")
  [[ -d "$root/fuzz/regressions/$name" ]] && inputs+=("$root/fuzz/regressions/$name")
  log=$build/fuzz-$name.log
  echo "fuzz: $name for $seconds s (log: $log)"
  status=0
  "$build/fuzz/${name}_fuzz" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashes/" "${inputs[@]}" \
    >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if ((status != 0)); then
    failed+=("$name")
    grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz finding|.*runtime error)' "$log" | head -5 >&2 || true
    summary+=("$(printf '%-18s %12s execs  FINDING, inputs in %s' "$name" "${runs:-?}" "$crashes")")
  else
    summary+=("$(printf '%-18s %12s execs  %s s, no finding' "$name" "${runs:-?}" "$seconds")")
  fi
done
printf 'fuzz: %s\n' "${summary[@]}"
if ((${#failed[@]} > 0)); then
  echo "fuzz: findings in ${failed[*]}: replay one with  $build/fuzz/NAME_fuzz INPUT" >&2
  exit 1
fi
