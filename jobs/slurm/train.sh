#!/usr/bin/env bash
# The body shared by the Slurm batch scripts in this folder (they set the resources and call it).
#   - one rank per GPU (srun with PMIx); nmt-train takes rank, world size and local rank from MPI
#     and drives the local rank's GPU;
#   - the paper's ~25k tokens per update split over the ranks (NMT_UPDATE_TOKENS / ranks each);
#   - preemption: Slurm signals this script (--signal=B:USR1@180) before it stops the job; the job
#     is requeued, and the requeued job (same run directory) continues with --resume from the
#     newest checkpoint (written every 10 minutes and at the end), so at most 10 minutes are lost.
# Environment: NMT_CONFIG (configs/base.yaml), NMT_DATA (shard directory, required),
#   NMT_RUN_DIR (default runs/<job name>-<job id>), NMT_UPDATE_TOKENS (25000),
#   NMT_BUILD_DIR (build/; a build against the cluster's CUDA LibTorch, see README), NMT_TRAIN_ARGS.
set -euo pipefail
root=${SLURM_SUBMIT_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
ranks=${SLURM_NTASKS:?run this through sbatch (jobs/slurm/*.sbatch)}
config=${NMT_CONFIG:-$root/configs/base.yaml}
data=${NMT_DATA:?set NMT_DATA to the nmt-preprocess shard directory}
run_dir=${NMT_RUN_DIR:-$root/runs/${SLURM_JOB_NAME:-train}-${SLURM_JOB_ID}}
per_rank=$(( ${NMT_UPDATE_TOKENS:-25000} / ranks ))
bin=${NMT_BUILD_DIR:-$root/build}/apps

requeue() {
  echo "$(date -u +%FT%TZ) preemption notice: requeueing job $SLURM_JOB_ID (resumes from $run_dir)"
  scontrol requeue "$SLURM_JOB_ID"
}
trap requeue USR1

echo "$(date -u +%FT%TZ) job $SLURM_JOB_ID (restart ${SLURM_RESTART_COUNT:-0}): $ranks ranks on" \
  "${SLURM_JOB_NUM_NODES:-1} node(s), $per_rank tokens per rank per batch, run $run_dir"
# --kill-on-bad-exit: one failed rank ends the step at once (nmt-train's hang detection covers a
# rank that stops without exiting).
# shellcheck disable=SC2086
srun --mpi=pmix --kill-on-bad-exit=1 --cpu-bind=cores \
  "$bin/nmt-train" --config "$config" --data "$data" --run-dir "$run_dir" --resume \
  --device cuda --set "data.max_src_tokens=$per_rank" --set "data.max_tgt_tokens=$per_rank" \
  ${NMT_TRAIN_ARGS:-} &
wait $! || wait $!  # a trapped USR1 interrupts the first wait; the second waits for srun to end
