#!/usr/bin/env bash
# A data-parallel job fails fast, never hangs: under a real `mpirun -np 2`,
#   1. rank 1 killed with SIGKILL mid-training -> mpirun exits non-zero within 60 s;
#   2. rank 1 frozen with SIGSTOP (a hung rank) -> rank 0's hang detection aborts the job within
#      60 s with a message naming rank 1.
# Usage: dist_failure_test.sh MPIEXEC NMT_PREPROCESS NMT_TRAIN DATA_DIR
set -euo pipefail
mpiexec=$1 preprocess=$2 train=$3 data=$4
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
work=$(mktemp -d)
job=
trap '[[ -n "$job" ]] && kill -9 "$job" 2>/dev/null; rm -rf "$work"' EXIT

# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
make_tiny_shards "$preprocess" "$data" "$work/shards"
args=(--data "$work/shards"
  --set model.layers=1 --set model.d_model=32 --set model.d_ff=64 --set model.heads=2
  --set model.d_k=16 --set model.d_v=16 --set data.max_src_tokens=400 --set data.max_tgt_tokens=400
  --set train.max_steps=1000000 --set train.validate_every=0 --set train.threads=1
  --set checkpoint.every_steps=5 --set dist.hang_timeout_s=8)

# The pid of rank $1 of the running job (Open MPI puts the rank in each process's environment).
rank_pid() {
  for pid in $(pgrep -f "nmt-train.*$work" || true); do
    if tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
      echo "$pid"; return 0
    fi
  done
  return 1
}

# Starts the job, waits until it trains (a checkpoint appears), sends $1 to rank 1, and checks
# that mpirun exits non-zero within 60 s. The job's output is left in $work/$2.log.
fail_rank_1() {
  local signal=$1 name=$2
  "$mpiexec" -np 2 --oversubscribe "$train" "${args[@]}" --run-dir "$work/$name" \
    > "$work/$name.log" 2>&1 &
  job=$!
  # Up to 120 s: a loaded machine starts the job slowly (its end cuts the wait short).
  wait_for_checkpoint "$work/$name" "$job" 1200
  compgen -G "$work/$name/checkpoints/step-*.h5" > /dev/null || { cat "$work/$name.log"; echo "job did not start training"; exit 1; }
  local pid
  pid=$(rank_pid 1) || { echo "rank 1 not found"; exit 1; }
  local start=$SECONDS
  kill "-$signal" "$pid"
  local rc=0
  for _ in $(seq 1 700); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$job" 2>/dev/null; then
    tail -20 "$work/$name.log"; echo "FAIL: mpirun still running 70 s after SIG$signal to rank 1"; exit 1
  fi
  wait "$job" || rc=$?
  job=
  local took=$(( SECONDS - start ))
  echo "SIG$signal to rank 1 (pid $pid): mpirun exited with $rc after ${took} s"
  [[ $rc -ne 0 ]] || { echo "FAIL: mpirun exited 0"; exit 1; }
  (( took <= 60 )) || { echo "FAIL: took ${took} s"; exit 1; }
}

fail_rank_1 KILL killed
fail_rank_1 STOP hung
grep -E "rank 1 \(.*\).* (never arrived|arrived but stopped responding)" "$work/hung.log" ||
  { tail -20 "$work/hung.log"; echo "FAIL: no message naming rank 1"; exit 1; }
echo "ok"
