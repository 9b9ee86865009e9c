# Sourced by the Slurm test scripts (tests/slurm/*_test.sh): prerequisites, the cluster the CTest
# fixture started (tests/slurm/slurm_cluster.sh), tiny data and configs, job submission through
# jobs/slurm/submit.sh, waiting on job states and training steps, a tracker daemon, and cleanup
# of exactly what the test started (its jobs, its daemon, its folder).
# slurm_test_init BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON   (exits 77 when a test cannot run here)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
slurm_jobs=()
tracker_pid=''

slurm_test_init() {
  build=$1 data=$2 cluster=$3 python=$4
  "$root/tests/slurm/slurm_cluster.sh" check || exit 77
  [[ -f "$data/val.en.gz" ]] || { echo "skip: Multi30k not found at $data"; exit 77; }
  [[ -f "$cluster/env" ]] || { echo "FAIL: no test cluster in $cluster (the slurm_cluster fixture)"; exit 1; }
  # shellcheck source=/dev/null
  source "$cluster/env"
  bin=$build/apps
  work=$(mktemp -d "${TMPDIR:-/tmp}/nmt-slurm-test.XXXXXX")
  trap slurm_test_cleanup EXIT
  # Open MPI ranks started by srun in a container: no ptrace-based single copy between them.
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
  export NMT_BUILD_DIR=$build NMT_DEVICE=cpu NMT_SLURM_LOG_DIR=$work/slurm
  # shellcheck source=tests/scripts/tiny_shards.sh
  source "$root/tests/scripts/tiny_shards.sh"
  make_tiny_shards "$bin/nmt-preprocess" "$data" "$work/shards"
  export NMT_DATA=$work/shards
}

slurm_test_cleanup() {
  local status=$?
  local job
  [[ -f "$work/submitted-jobs" ]] && mapfile -t -O "${#slurm_jobs[@]}" slurm_jobs < "$work/submitted-jobs"
  for job in "${slurm_jobs[@]}"; do scancel --full --signal=KILL "$job" 2> /dev/null || true; done
  for job in "${slurm_jobs[@]}"; do scancel "$job" 2> /dev/null || true; done
  [[ -n "$tracker_pid" ]] && kill "$tracker_pid" 2> /dev/null
  if [[ $status -ne 0 && $status -ne 77 ]]; then
    echo "--- job output (status $status) ---"
    tail -n 15 "$work"/slurm/*.out 2> /dev/null || true
  fi
  [[ -n "${KEEP:-}" ]] && { echo "kept $work"; return; }
  # Wait for the jobs' processes to leave the folder before removing it.
  for _ in $(seq 1 100); do [[ -z "$(squeue -h -t R,CG 2> /dev/null)" ]] && break; sleep 0.2; done
  rm -rf "$work"
}

fail() { echo "FAIL: $*"; exit 1; }

# tiny_config FILE MAX_STEPS [DROPOUT]: a model that trains a step in tens of milliseconds; the
# only checkpoints are the final one and those a stop signal writes. fp32: runs are compared with
# each other, and precision auto can resolve differently in two runs where it times bf16.
tiny_config() {
  cat > "$1" <<YAML
model: {layers: 1, d_model: 32, d_ff: 64, heads: 2, d_k: 16, d_v: 16, dropout: ${3:-0.1}, vocab_size: 400}
data: {dir: $work/shards, max_src_tokens: 300, max_tgt_tokens: 300}
train: {max_steps: $2, warmup_steps: 4, validate_every: 0, log_every: 5, threads: 1, precision: fp32}
checkpoint: {every_steps: 100000, keep_last: 5}
YAML
}

# submit_train RANKS RUN_DIR CONFIG [sbatch arguments...]: jobs/slurm/base-1node.sbatch as a user
# submits it, resized for this machine (RANKS ranks of one CPU, no GPU); prints the job id.
submit_train() {
  local ranks=$1 run_dir=$2 config=$3 id
  shift 3
  id=$(NMT_RUN_DIR=$run_dir NMT_CONFIG=$config "$root/jobs/slurm/submit.sh" \
    "$root/jobs/slurm/base-1node.sbatch" --parsable --ntasks-per-node="$ranks" --gpus-per-task=0 \
    --cpus-per-task=1 --time=10 "$@")
  id=${id%%;*}
  echo "$id" >> "$work/submitted-jobs"  # called in $(...): the cleanup reads the file
  echo "$id"
}

# run_beside_reference STEPS: the 2-rank tiny job of STEPS steps run to its end in
# $work/reference, then the same job started in $work/run and left training past step 20. Sets
# final (the last checkpoint, relative to a run directory) and job (the second job's id).
run_beside_reference() {
  local reference
  final=$(checkpoint_of "$1")
  tiny_config "$work/tiny.yaml" "$1"
  reference=$(submit_train 2 "$work/reference" "$work/tiny.yaml")
  wait_job_state "$reference" COMPLETED 120
  job=$(submit_train 2 "$work/run" "$work/tiny.yaml")
  wait_step "$work/run" 20 60
}

slurm() { "$@"; }  # Slurm's clients, on this host
# shellcheck source=tests/scripts/slurm_waits.sh
source "$root/tests/scripts/slurm_waits.sh"

start_tracker() {  # an nmt-trackerd on 127.0.0.1; its port file is $work/tracker.port
  start_local_tracker "$bin/nmt-trackerd" "$work/tracker.db" "$work/tracker.port" || exit 1
}
