#!/usr/bin/env bash
# The CPU thread count follows the process's affinity mask, not the machine's core count: under
# `taskset -c 0` nmt-sysinfo reports 1 CPU and a one-thread matrix product, whatever the machine
# has (skips on a one-CPU machine, where the check cannot fail).
# Usage: cpu_affinity_test.sh BUILD_DIR
set -euo pipefail
sysinfo=$1/apps/nmt-sysinfo
fail() { echo "FAIL: $*"; exit 1; }
cpus_of() { "$@" "$sysinfo" --json --matmul-size 64 | python3 -c 'import json, sys; print(json.load(sys.stdin)["cpus"])'; }
all=$(cpus_of env)
mask=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
[[ $all == "$mask" ]] || fail "nmt-sysinfo reports $all CPUs, the affinity mask holds $mask"
((all > 1)) || { echo "one CPU here: nothing to narrow"; exit 77; }
one=$(cpus_of taskset -c 0)
[[ $one == 1 ]] || fail "under taskset -c 0 nmt-sysinfo reports $one CPUs, not 1"
echo "PASS: $all CPUs, 1 under taskset -c 0"
