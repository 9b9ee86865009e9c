#!/usr/bin/env bash
# One exit status for argument errors in every tool (common/cli.h): 2 for an unknown flag, a bad
# value or a bad logging flag, with the usage hint on stderr; 0 and the usage for --help. Then the
# tools' own checks of option combinations (UsageError), which run no work either.
# Usage: cli_exit_codes_test.sh TOOL_BINARY...
set -uo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# expect CODE TOOL ARGS...: runs TOOL ARGS and checks its exit status.
expect() {
  local want=$1 tool=$2
  shift 2
  "$tool" "$@" > "$work/out" 2> "$work/err"
  local got=$?
  if [[ $got -ne $want ]]; then
    echo "FAIL: $(basename "$tool") $*: exit $got, expected $want; stderr:" >&2
    head -5 "$work/err" >&2
    failures=$((failures + 1))
  fi
}

declare -A bin
for tool in "$@"; do
  name=$(basename "$tool")
  bin[$name]=$tool
  expect 0 "$tool" --help
  grep -q "Usage: .*$name" "$work/out" || { echo "FAIL: $name --help printed no usage" >&2; failures=$((failures + 1)); }
  expect 2 "$tool" --no-such-flag
  grep -q -- "--help" "$work/err" || { echo "FAIL: $name: no usage hint on stderr" >&2; failures=$((failures + 1)); }
  expect 2 "$tool" --log-level chatty
  expect 2 "$tool" --log-level
done

# Bad values, missing values and the tools' own combination checks, where those tools are given.
if [[ -n ${bin[nmt-bleu]:-} ]]; then
  printf 'a\n' > "$work/ref"
  expect 2 "${bin[nmt-bleu]}" "$work/ref" -i "$work/ref" --width 99
  expect 2 "${bin[nmt-bleu]}" "$work/ref" -i "$work/ref" --metrics meteor
  expect 0 "${bin[nmt-bleu]}" "$work/ref" -i "$work/ref" -b
  expect 1 "${bin[nmt-bleu]}" "$work/ref" -i "$work/missing"  # an error, not a usage error
fi
if [[ -n ${bin[nmt-tracker]:-} ]]; then
  expect 2 "${bin[nmt-tracker]}" runs                      # where is the daemon?
  expect 2 "${bin[nmt-tracker]}" --url http://127.0.0.1:1 compare 1
  expect 2 "${bin[nmt-tracker]}" --url http://127.0.0.1:1 runs --param novalue
  expect 3 "${bin[nmt-tracker]}" --port-file "$work/no-port" runs  # unreachable, its own code
fi
if [[ -n ${bin[nmt-average]:-} ]]; then
  expect 2 "${bin[nmt-average]}" --output "$work/avg.h5"   # neither --run-dir nor --inputs
  expect 2 "${bin[nmt-average]}" --output "$work/avg.h5" --run-dir "$work" --inputs a.h5
fi
if [[ -n ${bin[nmt-sweep]:-} ]]; then
  spec=$(cd "$(dirname "$0")/../.." && pwd)/configs/sweeps/table3.yaml
  expect 2 "${bin[nmt-sweep]}" --spec "$spec" --slurm "$work/t.sbatch" --ranks-per-row 2 \
    --gpus-per-row 4 --sweep-dir "$work/sweep"
  [[ ! -e $work/t.sbatch ]] || { echo "FAIL: nmt-sweep wrote a script" >&2; failures=$((failures + 1)); }
fi
if [[ -n ${bin[nmt-train]:-} ]]; then
  expect 2 "${bin[nmt-train]}" --count-params --precision fp8
  expect 2 "${bin[nmt-train]}" --count-params --device gpu
fi
if [[ -n ${bin[nmt-translate]:-} ]]; then
  expect 2 "${bin[nmt-translate]}" --checkpoint "$work/none.h5" --split test --input "$work/ref"  # one or the other
  expect 2 "${bin[nmt-translate]}" --checkpoint "$work/none.h5" --precision fp8
  expect 2 "${bin[nmt-translate]}" --checkpoint "$work/none.h5" --device cuda:x
  expect 1 "${bin[nmt-translate]}" --checkpoint "$work/none.h5"  # a missing file: an error
fi
if [[ -n ${bin[nmt-evaluate]:-} ]]; then
  expect 2 "${bin[nmt-evaluate]}" --checkpoint "$work/none.h5" --precision half
fi
if [[ -n ${bin[nmt-sysinfo]:-} ]]; then
  expect 2 "${bin[nmt-sysinfo]}" --device tpu
fi
if [[ -n ${bin[nmt-preprocess]:-} ]]; then
  expect 2 "${bin[nmt-preprocess]}" --out "$work/pp" --format csv --train a b
  [[ ! -e $work/pp ]] || { echo "FAIL: nmt-preprocess wrote output" >&2; failures=$((failures + 1)); }
fi

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "cli exit codes: $# tools checked"
