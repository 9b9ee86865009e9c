#!/usr/bin/env bash
# scancel of a 2-rank job reporting to a real nmt-trackerd (port file; the job's node is this
# machine): Slurm's SIGTERM makes nmt-train checkpoint and mark the tracked run "preempted" (or
# "killed") before it exits, and the tracker holds its metric points up to the last one logged.
# Usage: scancel_tracker_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON
set -euo pipefail
# shellcheck source=tests/slurm/slurm_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/slurm_test_lib.sh"
slurm_test_init "$@"
start_tracker
tracker=("$bin/nmt-tracker" --port-file "$work/tracker.port")
tiny_config "$work/tiny.yaml" 5000

job=$(NMT_TRACKER_PORT_FILE=$work/tracker.port NMT_TRAIN_ARGS="--experiment scancel" \
  submit_train 2 "$work/run" "$work/tiny.yaml")
wait_step "$work/run" 20 60
scancel "$job"
wait_job_state "$job" CANCELLED 60
left_the_queue() { [[ -z "$(squeue -h -j "$job" 2> /dev/null)" ]]; }
wait_progressing 60 "job $job did not leave the queue" left_the_queue
out=$work/slurm/transformer-base-$job.out
grep -q "checkpointed and stopped (preempted)" "$out" || fail "nmt-train did not checkpoint on scancel"

"${tracker[@]}" runs --experiment scancel --json > "$work/runs.json"
"$python" - "$work/runs.json" <<'PY' || fail "tracked run"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 1, runs
assert runs[0]["status"] in ("preempted", "killed"), runs[0]["status"]
assert runs[0]["world_size"] == 2, runs[0]
print("run", runs[0]["run_id"], runs[0]["status"])
PY
run_id=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"][0]["run_id"])' "$work/runs.json")
last_local=$(grep '"key": "train/loss"' "$work/run/metrics.jsonl" | tail -1 | sed 's/.*"step": \([0-9]*\).*/\1/')
last_tracked=$("${tracker[@]}" metrics "$run_id" train/loss --csv | tail -1 | cut -d, -f1)
[[ -n "$last_local" && "$last_tracked" == "$last_local" ]] ||
  fail "last train/loss point: tracker step ${last_tracked:-none}, run directory step $last_local"
echo ok
