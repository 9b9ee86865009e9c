#!/usr/bin/env bash
# Two Slurm jobs whose run directories share a basename in two experiments' folders
# (runs/exp1/tiny, runs/exp2/tiny; different dropout) are two runs in the tracker, not one run
# with two attempts.
# Usage: same_basename_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON
set -euo pipefail
# shellcheck source=tests/slurm/slurm_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/slurm_test_lib.sh"
slurm_test_init "$@"
start_tracker
tiny_config "$work/exp1.yaml" 10 0.1
tiny_config "$work/exp2.yaml" 10 0.3
export NMT_TRACKER_PORT_FILE=$work/tracker.port
one=$(submit_train 1 "$work/runs/exp1/tiny" "$work/exp1.yaml")
two=$(submit_train 1 "$work/runs/exp2/tiny" "$work/exp2.yaml")
wait_job_state "$one" COMPLETED 90
wait_job_state "$two" COMPLETED 90
"$bin/nmt-tracker" --port-file "$work/tracker.port" runs --json > "$work/runs.json"
"$python" - "$work/runs.json" <<'PY' || fail "two runs expected"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
print([(r["run_id"], r["experiment"], r["name"], r["status"], r["attempt"]) for r in runs])
assert len(runs) == 2, f"{len(runs)} run(s)"
assert all(r["status"] == "finished" and r["attempt"] == 1 for r in runs)
PY
echo ok
