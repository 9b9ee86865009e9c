#!/usr/bin/env bash
# A slow link: node2's link shaped to 8 Mbit/s both ways (tc's tbf; this kernel has no netem) for
# a 2-node x 2-rank training. Training goes on, slower, to the same parameters bit for bit as the
# same run on unshaped links (a slow link changes when the sums arrive, not what they are). The
# shaper's own counters show it held packets back; every checkpoint loads; the tracked run (its
# reports cross the slow link too) is finished.
# Usage: slow_link_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON
set -euo pipefail
# shellcheck source=tests/cluster/cluster_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster_test_lib.sh"
cluster_test_init "$@"
start_tracker
CHECKPOINT_EVERY=5 tiny_job 20
hostfile "$work/two-nodes" 2 2
args=(--config "$work/tiny.yaml" --data "$work/shards" --log-level warn)
start=$(now_ms)
mpirun_train node1 "$work/two-nodes" 4 "${args[@]}" --run-dir "$work/fast" > "$work/fast.log" 2>&1 ||
  { cat "$work/fast.log"; fail "the unshaped run"; }
fast=$(elapsed "$start")
shape node2 8mbit
start=$(now_ms)
NMT_TRACKER_URL=$tracker_url NMT_TRACKER_TOKEN_FILE=$work/token \
  mpirun_train node1 "$work/two-nodes" 4 "${args[@]}" --run-dir "$work/slow" \
  --experiment slow-link > "$work/slow.log" 2>&1 ||
  { cat "$work/slow.log"; fail "the run on a 8 Mbit/s link"; }
slow=$(elapsed "$start")
echo "$steps steps: $fast ms on unshaped links, $slow ms with node2 at 8 Mbit/s"
# The shaper held packets back (tbf counts "overlimits"): the run did meet the slow link.
held=$(ip netns exec "$(node_netns node2)" tc -s qdisc show dev eth0 | grep -o 'overlimits [0-9]*' | grep -o '[0-9]*$')
echo "tbf on node2's eth0: $held packets over the limit"
((held > 0)) || fail "the shaper never held a packet back"
compare_params "$work/fast/$final" "$work/slow/$final" 0 || fail "the slow link changed the result"
checkpoints_intact "$work/slow"
tracked_run slow-link > "$work/run.json"
"$python" -c '
import json, sys
run = json.load(open(sys.argv[1]))
assert run["status"] == "finished", run["status"]
print("tracked run (its reports crossed the slow link too):", run["status"])' "$work/run.json" ||
  fail "the tracked run"
echo ok
