#!/usr/bin/env bash
# A run stopped on 2 ranks resumes on 1 (CPU, dropout on): `scontrol requeuehold` stops the 2-rank
# job (SIGTERM: checkpoint at the update boundary), the held job is cancelled, and a 1-rank job on
# the same run directory resumes it. The config defines the global update (and dropout follows
# the global micro-batch), so the final parameters match an uninterrupted 2-rank run within 1e-6.
# Usage: requeue_rescale_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON
set -euo pipefail
# shellcheck source=tests/slurm/slurm_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/slurm_test_lib.sh"
slurm_test_init "$@"
# 600 steps: long enough that the stop lands before the end on a loaded machine.
run_beside_reference 600
scontrol requeuehold "$job"
# Held: pending, with none of its steps still running.
held() {
  [[ "$(job_field "$job" JobState)" == PENDING && -z "$(squeue -h -j "$job" -s 2> /dev/null)" ]]
}
wait_progressing 60 "job $job was not stopped and held" held
grep -q "checkpointed and stopped (preempted)" "$work/slurm/transformer-base-$job.out" ||
  fail "the 2-rank job did not checkpoint on SIGTERM"
scancel "$job"
resumed=$(submit_train 1 "$work/run" "$work/tiny.yaml")
wait_job_state "$resumed" COMPLETED 150
out=$work/slurm/transformer-base-$resumed.out
grep -q "1 rank(s)" "$out" || fail "the resumed job is not a 1-rank run"
grep -q "resumed from" "$out" || fail "nmt-train did not resume"
compare_params "$work/reference/$final" "$work/run/$final" 1e-6 || fail "2 -> 1 rank resume differs"
echo ok
