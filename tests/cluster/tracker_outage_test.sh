#!/usr/bin/env bash
# The tracker's node unreachable for a while in the middle of a 2-node x 2-rank training: its
# address taken off the login node (connections time out; nothing answers, nothing resets) for 10
# s, then given back. Training goes on meanwhile (steps advance), the client's spool replays what
# the daemon missed, and the tracker ends with exactly the train/loss points of the run
# directory's metrics.jsonl (none lost, none twice) and the run "finished".
# Usage: tracker_outage_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON
set -euo pipefail
# shellcheck source=tests/cluster/cluster_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster_test_lib.sh"
cluster_test_init "$@"
start_tracker
CHECKPOINT_EVERY=50 tiny_config "$work/tiny.yaml" 300 "tracker: {experiment: outage}"
sed -i 's/log_every: 5/log_every: 2/' "$work/tiny.yaml"
hostfile "$work/two-nodes" 2 2
started=$(now_ms)
NMT_TRACKER_URL=$tracker_url NMT_TRACKER_TOKEN_FILE=$work/token \
  start_mpirun_job run "$work/two-nodes" 4
wait_step "$work/run" 20 120
step_at() { grep -o '"step": [0-9]*' "$work/run/metrics.jsonl" | tail -1 | grep -o '[0-9]*$'; }
away=$(step_at)
# The pace so far (start-up included, so slower than training's own) predicts the steps of the
# next 10 s on this machine, loaded or not. A client that blocked on the unreachable daemon would
# make far fewer: at least a third of them (and 10 at most) must come.
predicted=$((away * 10000 / $(elapsed "$started")))
needed=$((predicted / 3 < 10 ? predicted / 3 : 10))
tracker_away
sleep 10
back=$(step_at)
tracker_back
echo "tracker unreachable for 10 s: training went from step $away to $back meanwhile" \
  "($predicted steps predicted, $needed needed)"
((back > away && back - away >= needed)) ||
  fail "training did not go on while the tracker was unreachable"
training_ended() { ! kill -0 "$job_pid" 2> /dev/null; }
wait_progressing 120 "the training did not end" training_ended
status=0
wait "$job_pid" || status=$?
((status == 0)) || { tail -20 "$work/run.log"; fail "the training failed (status $status)"; }

checkpoints_intact "$work/run"
run=$(tracker_get "/api/runs?experiment=outage" | "$python" -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["run_id"])')
tracker_get "/api/runs/$run/metrics?key=train/loss&rank=0" > "$work/tracked.json"
tracker_get "/api/runs/$run" > "$work/run.json"
"$python" - "$work/run/metrics.jsonl" "$work/tracked.json" "$work/run.json" <<'PY' || fail "points"
import json, sys
local = [json.loads(l) for l in open(sys.argv[1])]
local = [m["step"] for m in local if m["key"] == "train/loss"]
tracked = json.load(open(sys.argv[2]))
steps = [p["step"] for p in tracked["points"]]
assert not tracked["downsampled"], "downsampled"
assert len(steps) == len(set(steps)), f"{len(steps) - len(set(steps))} points twice"
assert sorted(set(local)) == sorted(steps), \
    f"run directory {len(set(local))} points, tracker {len(steps)}; missing {sorted(set(local) - set(steps))[:10]}"
status = json.load(open(sys.argv[3])).get("status")
assert status == "finished", status
print(f"{len(steps)} train/loss points in the tracker, all of metrics.jsonl's, none twice; finished")
PY
echo ok
