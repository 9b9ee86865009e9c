#!/usr/bin/env bash
# `scontrol requeue` in the middle of a 2-rank job (CPU, dropout on): Slurm's SIGTERM makes
# nmt-train checkpoint at the next update boundary and exit 75 (preempted); the job requeues,
# resumes from that checkpoint with the same job id and run directory, and its final parameters
# are bit-identical to those of the same job run without interruption.
# Usage: requeue_exact_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON
set -euo pipefail
# shellcheck source=tests/slurm/slurm_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/slurm_test_lib.sh"
slurm_test_init "$@"
steps=200
final=$(printf 'checkpoints/step-%08d.h5' "$steps")
tiny_config "$work/tiny.yaml" "$steps"

reference=$(submit_train 2 "$work/reference" "$work/tiny.yaml")
wait_job_state "$reference" COMPLETED 120

job=$(submit_train 2 "$work/run" "$work/tiny.yaml")
wait_step "$work/run" 20 60
scontrol requeue "$job"
wait_job_state "$job" COMPLETED 150
[[ "$(job_field "$job" Restarts)" == 1 ]] || fail "job restarted $(job_field "$job" Restarts) times"
out=$work/slurm/transformer-base-$job.out
grep -q "checkpointed and stopped (preempted)" "$out" || { cat "$out"; fail "no checkpoint on SIGTERM"; }
grep -q "restart 1:" "$out" || fail "the requeued job did not start again"
grep -q "resumed from" "$out" || fail "nmt-train did not resume"
# The stop's checkpoint, and the final one: no periodic checkpoint in between (every 100000).
mid=$(find "$work/run/checkpoints" -name 'step-*.h5' ! -name "$(basename "$final")" | wc -l)
[[ $mid -ge 1 ]] || fail "no checkpoint from the stop: $(ls "$work/run/checkpoints")"
compare_params "$work/reference/$final" "$work/run/$final" 0 || fail "resumed parameters differ"
echo ok
