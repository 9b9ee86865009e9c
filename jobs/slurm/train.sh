#!/usr/bin/env bash
# The body shared by the Slurm batch scripts in this folder (they set the resources and call it):
#   - one rank per GPU: the batch scripts ask for --ntasks-per-node = GPUs per node and
#     --gpus-per-task=1, so each rank sees one GPU (cuda:0 to it; with --gpus-per-node instead,
#     local rank i takes cuda:i: trainer/runtime/device_assignment.h, and every rank logs its
#     host, local rank and GPU); srun starts the ranks with PMIx and the job's --cpus-per-task (srun
#     no longer inherits it since Slurm 22.05), and each rank trains with that many threads;
#   - before srun, the build is checked (jobs/check_build.sh): nmt-train must be there, and with
#     NMT_DEVICE=cuda its LibTorch must have CUDA; nothing is ever built here;
#   - the config defines the global update (train.update_batches micro-batches of
#     data.max_*_tokens each, split over the ranks), so the same config trains the same model on
#     8 or 32 GPUs, and a run resumes exactly with another number of ranks: nothing here overrides
#     token budgets per rank (big-multinode.sbatch passes its recipe as NMT_TRAIN_ARGS);
#   - signals: nmt-train checkpoints at the next update boundary and exits 75 ("preempted") on
#     SIGTERM or SIGUSR1.
#       * time limit: Slurm sends USR1 to this script 180 s before (--signal=B:USR1@180); it is
#         forwarded to the ranks through srun, and once nmt-train has checkpointed and exited 75
#         this script requeues the job (scontrol requeue), which resumes from that checkpoint;
#       * scancel, scontrol requeue, preemption, the time limit itself: Slurm sends SIGTERM to
#         every task of every step itself (and to srun, which turns a TERM of its own into a kill
#         of the step, so it is not forwarded), then SIGKILL after KillWait; this script only
#         waits for nmt-train's checkpoint and does not requeue: Slurm requeues the job for
#         `scontrol requeue` and preemption, and scancel ends it;
#   - a requeued job keeps its job id, so the run directory (default runs/<job name>-<job id>)
#     and the tracked run stay the same: nmt-train --resume continues the newest checkpoint and
#     the tracker run (attempt + 1).
# Environment (all optional but NMT_DATA):
#   NMT_DATA          shard directory (nmt-preprocess --out), required
#   NMT_CONFIG        run config (default configs/base.yaml)
#   NMT_RUN_DIR       run directory (default runs/<job name>-<job id>)
#   NMT_DEVICE        cuda (default) or cpu (the tests)
#   NMT_BUILD_DIR     where apps/nmt-train is (default build-current/, the CUDA LibTorch line;
#                     a cluster's own build: docs/cluster.md)
#   NMT_TRAIN_ARGS    more nmt-train arguments, split on spaces (e.g. "--set train.max_steps=1000")
#   NMT_TRACKER_URL, NMT_TRACKER_TOKEN_FILE   report to an nmt-trackerd (docs/slurm.md)
#   NMT_TRACKER_PORT_FILE                     or to one on the job's node, by its port file
#   NMT_SRUN_ARGS     more srun arguments (e.g. "--cpu-bind=cores")
set -euo pipefail
root=${NMT_ROOT:-${SLURM_SUBMIT_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}}
: "${SLURM_JOB_ID:?run this through sbatch (jobs/slurm/submit.sh SCRIPT)}"
config=${NMT_CONFIG:-$root/configs/base.yaml}
data=${NMT_DATA:?set NMT_DATA to the nmt-preprocess shard directory}
run_dir=${NMT_RUN_DIR:-$root/runs/${SLURM_JOB_NAME:-train}-${SLURM_JOB_ID}}
device=${NMT_DEVICE:-cuda}
cpus=${SLURM_CPUS_PER_TASK:-1}
build=${NMT_BUILD_DIR:-$root/build-current}
bin=$build/apps
"$root/jobs/check_build.sh" train.sh "$build" "$device" || exit 1

log() { echo "$(date -u +%FT%TZ) job $SLURM_JOB_ID: $*"; }

train=("$bin/nmt-train" --config "$config" --data "$data" --run-dir "$run_dir" --resume
       --device "$device" --threads "$cpus")
[[ -n "${NMT_TRACKER_URL:-}" ]] && train+=(--set "tracker.url=$NMT_TRACKER_URL")
[[ -n "${NMT_TRACKER_TOKEN_FILE:-}" ]] && train+=(--set "tracker.token_file=$NMT_TRACKER_TOKEN_FILE")
[[ -n "${NMT_TRACKER_PORT_FILE:-}" ]] && train+=(--tracker-port-file "$NMT_TRACKER_PORT_FILE")
# shellcheck disable=SC2206  # NMT_TRAIN_ARGS is a list of words
train+=(${NMT_TRAIN_ARGS:-})

signal=''
srun_pid=''
on_usr1() {
  signal=USR1
  log "time-limit notice (USR1): nmt-train checkpoints and stops, then the job requeues itself"
  [[ -n "$srun_pid" ]] && kill -s USR1 "$srun_pid" 2> /dev/null || true
}
on_term() {
  signal=TERM
  log "SIGTERM (scancel, requeue, preemption or time limit): waiting for nmt-train's checkpoint"
}
trap on_usr1 USR1
trap on_term TERM

log "restart ${SLURM_RESTART_COUNT:-0}: ${SLURM_NTASKS:-1} rank(s) on ${SLURM_JOB_NUM_NODES:-1}" \
  "node(s), $cpus CPU(s) each, device $device, run $run_dir"
# --kill-on-bad-exit: a rank that fails ends the step at once (nmt-train's hang detection covers a
# rank that stops without exiting).
# shellcheck disable=SC2086  # NMT_SRUN_ARGS is a list of words
srun --mpi=pmix --kill-on-bad-exit=1 --cpus-per-task="$cpus" ${NMT_SRUN_ARGS:-} "${train[@]}" &
srun_pid=$!
# A trapped signal interrupts `wait`; wait again until srun has ended, then read its status.
while kill -0 "$srun_pid" 2> /dev/null; do wait "$srun_pid" || true; done
status=0
wait "$srun_pid" || status=$?

if [[ $status -eq 75 && $signal == USR1 ]]; then
  log "nmt-train checkpointed; requeueing (the job resumes from $run_dir)"
  scontrol requeue "$SLURM_JOB_ID"
  exit 0
fi
case $status in
  0) log "training finished" ;;
  74) log "nmt-train checkpointed and stopped: its metrics.jsonl cannot be written (see its log)" ;;
  75) log "nmt-train checkpointed and stopped (preempted)" ;;
  130) log "nmt-train checkpointed and stopped (killed)" ;;
  *)
    log "nmt-train failed (status $status)"
    # A lost node ends the ranks before rank 0 can tell the tracker: say it from here.
    "$root/jobs/mark_run_failed.sh" "$build" "$run_dir"
    ;;
esac
exit "$status"
