#!/usr/bin/env bash
# Submits one of this folder's batch scripts (or any script calling jobs/slurm/train.sh) from
# anywhere: makes the output folder first (sbatch does not, and a job whose --output folder is
# missing fails without a word), tells the job where the repository is, and passes the rest to
# sbatch. Prints sbatch's answer (the job id).
#   jobs/slurm/submit.sh SCRIPT [sbatch arguments...]
#   e.g. NMT_DATA=data/wmt14-en-de jobs/slurm/submit.sh jobs/slurm/base-1node.sbatch
#        NMT_DATA=... jobs/slurm/submit.sh jobs/slurm/big-multinode.sbatch --nodes=8
# Environment: NMT_SLURM_LOG_DIR (default runs/slurm: job output as <job name>-<job id>.out,
#   appended to by each restart of a requeued job); everything train.sh reads (NMT_DATA...),
#   exported to the job with the rest of the environment.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[[ $# -ge 1 && -f $1 ]] || { sed -n '2,11p' "$0"; exit 2; }
script=$1
shift
log_dir=${NMT_SLURM_LOG_DIR:-$root/runs/slurm}
mkdir -p "$log_dir"
log_dir=$(cd "$log_dir" && pwd)
# Relative paths a user gives stay relative to where they submit from (the job's working folder).
export NMT_ROOT=$root
exec sbatch --export=ALL --open-mode=append --output="$log_dir/%x-%j.out" "$@" "$script"
