#!/usr/bin/env bash
# Data-parallel training on this machine: N MPI ranks of nmt-train, each with an equal share of the
# cores (or, with CUDA, one GPU per rank by local rank).
# Usage: jobs/train_mpirun.sh N [nmt-train arguments...]
#   e.g. jobs/train_mpirun.sh 2 --config configs/multi30k.yaml --data runs/data/multi30k-bpe8000 \
#          --run-dir runs/dp2
# Each rank's batches hold data.max_*_tokens: one update holds N x accumulation x that many.
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
# Threads, not cores, are the unit here: leave binding to the threads the ranks start.
# shellcheck disable=SC2086
exec mpirun -np "$ranks" --oversubscribe --bind-to none ${NMT_MPIRUN_ARGS:-} \
  "$bin/nmt-train" --threads "$threads" "$@"
