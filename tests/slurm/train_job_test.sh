#!/usr/bin/env bash
# jobs/slurm/base-1node.sbatch through jobs/slurm/submit.sh, resized for a CPU node (2 ranks of
# one CPU, NMT_DEVICE=cpu, a tiny config): the output folder is made, srun --mpi=pmix starts a
# 2-rank nmt-train, the job ends COMPLETED with exit code 0 and the final checkpoint is written.
# Usage: train_job_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON
set -euo pipefail
# shellcheck source=tests/slurm/slurm_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/slurm_test_lib.sh"
slurm_test_init "$@"

tiny_config "$work/tiny.yaml" 12
job=$(submit_train 2 "$work/run" "$work/tiny.yaml")
wait_job_state "$job" COMPLETED 90
[[ "$(job_field "$job" ExitCode)" == 0:0 ]] || fail "exit code $(job_field "$job" ExitCode)"
out=$work/slurm/transformer-base-$job.out
[[ -f "$out" ]] || fail "no job output at $out"
grep -q "2 rank(s)" "$out" || { cat "$out"; fail "not a 2-rank run"; }
grep -q "training finished" "$out" || fail "train.sh did not report the end"
[[ -f "$work/run/checkpoints/step-00000012.h5" ]] || fail "no final checkpoint"
echo ok
