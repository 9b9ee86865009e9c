#!/usr/bin/env bash
# Data-parallel training with mpirun: N ranks of nmt-train on this machine, or spread over the hosts
# of an Open MPI hostfile (NMT_HOSTFILE). On CPU each rank takes an equal share of its node's cores
# as threads; with CUDA the ranks of a node take distinct GPUs by local rank (each rank logs which
# one and why; more ranks than GPUs on a node is an error unless --allow-shared-gpu).
# Usage: jobs/train_mpirun.sh N [nmt-train arguments...]
#   e.g. jobs/train_mpirun.sh 2 --config configs/multi30k.yaml --data runs/data/multi30k-bpe4000 \
#          --run-dir runs/dp2
#        NMT_HOSTFILE=hosts NMT_DEVICE=cuda jobs/train_mpirun.sh 16 --config configs/big.yaml \
#          --data data/wmt14-en-de --run-dir runs/big16
#        (hosts: one "gpu01 slots=8" line per node; the checkout, the build, the data and the run
#        directory on a file system every host sees at the same path; docs/cluster.md)
# An update holds train.update_batches batches of data.max_*_tokens (default: accumulation x N at
# the start of a fresh run), the same updates on any N; a resume on another N keeps them.
# Exit code: nmt-train's (74, 75 or 130 after a stop with a checkpoint; see
# docs/tools/nmt-train.md); 1 when the build is missing or cannot run the device; 2 for a usage
# error.
# Environment (all optional):
#   NMT_BUILD_DIR         the build holding apps/nmt-train (default build-current/, the CUDA
#                         LibTorch line; build/ is Debian's CPU-only LibTorch). Never built here:
#                         run jobs/build.sh first.
#   NMT_DEVICE            passed as --device (cpu, cuda, cuda:N, auto; default: the config's
#                         train.device); cuda needs a build with CUDA, checked before mpirun starts
#   NMT_HOSTFILE          Open MPI hostfile, passed as --hostfile: ranks fill each host's slots in
#                         order (8 slots a GPU node). Without it every rank runs here.
#   NMT_THREADS_PER_RANK  CPU threads per rank (default: computed by each rank on its own node, its
#                         cores divided by the ranks there, OMPI_COMM_WORLD_LOCAL_SIZE; not this
#                         machine's nproc)
#   NMT_MPIRUN_ARGS       extra mpirun arguments, split on spaces (e.g. "--bind-to core",
#                         "--mca btl_tcp_if_include ib0"). With a hostfile, the NCCL_*, UCX_* and
#                         LD_LIBRARY_PATH variables set here are exported to every rank (-x).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $# -ge 1 && $1 =~ ^[1-9][0-9]*$ ]] || { sed -n '2,30p' "$0"; exit 2; }
ranks=$1
shift
build=${NMT_BUILD_DIR:-$root/build-current}
"$root/jobs/check_build.sh" train_mpirun.sh "$build" "${NMT_DEVICE:-}" || exit 1
train=("$build/apps/nmt-train")
[[ -n "${NMT_DEVICE:-}" ]] && train+=(--device "$NMT_DEVICE")

mpirun_args=(-np "$ranks" --bind-to none)
if [[ -n "${NMT_HOSTFILE:-}" ]]; then
  [[ -f "$NMT_HOSTFILE" ]] || { echo "train_mpirun.sh: NMT_HOSTFILE=$NMT_HOSTFILE: no such file" >&2; exit 2; }
  mpirun_args+=(--hostfile "$NMT_HOSTFILE")
  while IFS= read -r name; do
    mpirun_args+=(-x "$name")
  done < <(compgen -e | grep -E '^(NCCL_|UCX_)|^LD_LIBRARY_PATH$' || true)
else
  mpirun_args+=(--oversubscribe)  # more ranks than cores is allowed on one machine
fi
if [[ -n "${NMT_THREADS_PER_RANK:-}" ]]; then
  [[ $NMT_THREADS_PER_RANK =~ ^[1-9][0-9]*$ ]] ||
    { echo "train_mpirun.sh: NMT_THREADS_PER_RANK=$NMT_THREADS_PER_RANK is not a positive number" >&2; exit 2; }
  launch=("${train[@]}" --threads "$NMT_THREADS_PER_RANK")
else
  # Each rank on its own node: that node's cores over the ranks mpirun placed there. exec keeps the
  # rank's pid, so the signals mpirun forwards reach nmt-train itself.
  # shellcheck disable=SC2016  # expanded by the rank's shell
  launch=(bash -c 'threads=$(($(nproc) / ${OMPI_COMM_WORLD_LOCAL_SIZE:-1}))
    exec "$0" --threads "$((threads > 0 ? threads : 1))" "$@"' "${train[@]}")
fi
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
# shellcheck disable=SC2086  # NMT_MPIRUN_ARGS is a list of words
setsid mpirun "${mpirun_args[@]}" ${NMT_MPIRUN_ARGS:-} "${launch[@]}" "$@" &
pid=$!
# A trapped signal interrupts wait (with 128 + signal); wait again until mpirun has ended, then
# take its own status.
while kill -0 "$pid" 2> /dev/null; do wait "$pid" || true; done
status=0
wait "$pid" || status=$?
# A lost node ends the ranks before rank 0 can tell the tracker (mpirun stops the job within about a
# second of losing a node's daemon): mark the tracked run failed from here.
if ((status != 0 && status != 75 && status != 130)); then
  run_dir=''
  for ((i = 1; i <= $#; i++)); do
    case ${!i} in
      --run-dir=*) run_dir=${!i#--run-dir=} ;;
      --run-dir) next=$((i + 1)); run_dir=${!next:-} ;;
    esac
  done
  [[ -n "$run_dir" ]] && "$root/jobs/mark_run_failed.sh" "$build" "$run_dir"
fi
exit "$status"
