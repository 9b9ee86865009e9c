#!/usr/bin/env bash
# A 2-rank job (CPU, dropout on) stopped twice resumes exactly:
#   1. `scontrol requeue`: Slurm's SIGTERM makes nmt-train checkpoint at the next update boundary
#      and exit 75 (preempted); Slurm requeues the job;
#   2. the time-limit notice (USR1 to the batch shell alone, as --signal=B:USR1@180 sends it):
#      jobs/slurm/train.sh forwards it through srun, nmt-train checkpoints and exits 75, and the
#      script requeues the job itself;
# each restart resumes from that checkpoint with the same job id and run directory, and the final
# parameters are bit-identical to those of the same job run without interruption.
# Usage: requeue_exact_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON
set -euo pipefail
# shellcheck source=tests/slurm/slurm_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/slurm_test_lib.sh"
slurm_test_init "$@"
# 600 steps: long enough that the second stop (at step 120 or later) lands before the end.
run_beside_reference 600
scontrol requeue "$job"
out=$work/slurm/transformer-base-$job.out
wait_progressing 60 "the requeued job $job did not start again" grep -qs "restart 1:" "$out"
grep -q "checkpointed and stopped (preempted)" "$out" || fail "no checkpoint on SIGTERM"
wait_step "$work/run" 120 90
scancel --batch --signal=USR1 "$job"
wait_job_state "$job" COMPLETED 150
[[ "$(job_field "$job" Restarts)" == 2 ]] || fail "job restarted $(job_field "$job" Restarts) times"
grep -q "nmt-train checkpointed; requeueing" "$out" || fail "train.sh did not requeue on USR1"
grep -q "restart 2:" "$out" || fail "the self-requeued job did not start again"
[[ $(grep -c "resumed from" "$out") -eq 2 ]] || fail "nmt-train did not resume twice"
# The stop's checkpoint, and the final one: no periodic checkpoint in between (every 100000).
mid=$(find "$work/run/checkpoints" -name 'step-*.h5' ! -name "$(basename "$final")" | wc -l)
[[ $mid -ge 1 ]] || fail "no checkpoint from the stop: $(ls "$work/run/checkpoints")"
compare_params "$work/reference/$final" "$work/run/$final" 0 || fail "resumed parameters differ"
echo ok
