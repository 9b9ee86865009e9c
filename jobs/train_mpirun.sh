#!/usr/bin/env bash
# Data-parallel training on this machine: N MPI ranks of nmt-train, each with an equal share of the
# cores (or, with CUDA, one GPU per rank by local rank).
# Usage: jobs/train_mpirun.sh N [nmt-train arguments...]
#   e.g. jobs/train_mpirun.sh 2 --config configs/multi30k.yaml --data runs/data/multi30k-bpe4000 \
#          --run-dir runs/dp2
# An update holds train.update_batches batches of data.max_*_tokens (default: accumulation x N at
# the start of a fresh run), the same updates on any N; a resume on another N keeps them.
# Exit code: nmt-train's (75 or 130 after a graceful stop on a signal; see README).
# Environment: NMT_BUILD_DIR (default build/), NMT_THREADS_PER_RANK (default cores / N),
#   NMT_MPIRUN_ARGS (extra mpirun arguments, e.g. "--bind-to core").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $# -ge 1 && $1 =~ ^[0-9]+$ ]] || { sed -n '2,10p' "$0"; exit 2; }
ranks=$1
shift
bin=${NMT_BUILD_DIR:-$root/build}/apps
[[ -x "$bin/nmt-train" ]] || "$root/jobs/build.sh"
threads=${NMT_THREADS_PER_RANK:-$(( $(nproc) / ranks ))}
(( threads >= 1 )) || threads=1
if [[ $EUID -eq 0 ]]; then  # containers often run as root; Open MPI refuses that by default
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# Signals: mpirun forwards SIGUSR1/SIGUSR2 to the ranks but kills them on SIGTERM/SIGINT (SIGKILL
# after one second), too soon for a checkpoint. So mpirun runs in a session of its own (a Ctrl-C
# in the terminal reaches this script only) and this script passes TERM on as USR1 (nmt-train:
# checkpoint, exit 75, "preempted") and INT as USR2 (checkpoint, exit 130, "killed"). A second
# signal is passed on too: nmt-train then exits at once.
pid=''
forward() { [[ -n "$pid" ]] && kill -s "$1" "$pid" 2> /dev/null || true; }
trap 'forward USR1' TERM USR1
trap 'forward USR2' INT USR2
# Threads, not cores, are the unit here: leave binding to the threads the ranks start.
# shellcheck disable=SC2086
setsid mpirun -np "$ranks" --oversubscribe --bind-to none ${NMT_MPIRUN_ARGS:-} \
  "$bin/nmt-train" --threads "$threads" "$@" &
pid=$!
# A trapped signal interrupts wait (with 128 + signal); wait again until mpirun has ended, then
# take its own status.
while kill -0 "$pid" 2> /dev/null; do wait "$pid" || true; done
status=0
wait "$pid" || status=$?
exit "$status"
