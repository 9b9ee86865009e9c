#!/usr/bin/env bash
# The CPU thread count follows the process's affinity mask, not the machine's core count: under
# `taskset -c 0` nmt-sysinfo reports 1 CPU and a one-thread matrix product, whatever the machine
# has, and under SLURM_CPUS_PER_TASK=1 (a Slurm job that binds no CPUs) 1 too (skips on a one-CPU
# machine, where the checks cannot fail). Idle OpenMP threads spin briefly (GOMP_SPINCOUNT set by
# the tool itself), unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT, which stay as set.
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
slurm=$(cpus_of env SLURM_CPUS_PER_TASK=1)
[[ $slurm == 1 ]] || fail "with SLURM_CPUS_PER_TASK=1 nmt-sysinfo reports $slurm CPUs, not 1"
wait_of() {
  env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "$@" "$sysinfo" --json --matmul-size 64 |
    python3 -c 'import json, sys; w = json.load(sys.stdin)["openmp_wait"]; print(w["OMP_WAIT_POLICY"], w["GOMP_SPINCOUNT"])'
}
[[ $(wait_of) == "None 10000" ]] || fail "by default the tool runs with $(wait_of), not GOMP_SPINCOUNT=10000"
[[ $(wait_of GOMP_SPINCOUNT=77) == "None 77" ]] || fail "the user's GOMP_SPINCOUNT was not kept: $(wait_of GOMP_SPINCOUNT=77)"
[[ $(wait_of OMP_WAIT_POLICY=active) == "active None" ]] ||
  fail "the user's OMP_WAIT_POLICY was not kept alone: $(wait_of OMP_WAIT_POLICY=active)"
echo "PASS: $all CPUs, 1 under taskset -c 0 and under SLURM_CPUS_PER_TASK=1; OpenMP spin 10000 unless the user sets one"
