#!/usr/bin/env bash
# The same training on 2 nodes x 2 ranks (jobs/train_mpirun.sh with a hostfile, remote ranks
# started through the launch agent), on 1 node x 4 ranks, and on 1 rank accumulating the 4
# micro-batches (train.update_batches: 4): the same parameters.
#  - 2x2 against 1x4: bit for bit. Both are 4 ranks holding the same micro-batches, and Open MPI's
#    all-reduce picks its algorithm (so the order of the sums) from the ranks and the message size,
#    not from the transport: TCP between nodes and shared memory within one add the same numbers in
#    the same order.
#  - 1 rank against 4: the training losses of every logged step within 1e-4 (relative), in fp32.
#    One rank adds the 4 micro-batch gradients one after the other; the all-reduce adds them
#    pairwise. Float addition is not associative, so the sums differ in the last bits. Parameters
#    are not compared: the gradient of an attention key bias is zero but for rounding (softmax
#    ignores a constant added to every score), and Adam, which divides by the gradient's own
#    magnitude, turns that rounding into full-size steps of arbitrary sign (0.4 apart after 40
#    steps here) that change no output. The losses see every parameter that matters; a wrong
#    share of the data or a wrong gradient scale moves them by percents.
# The 2-node run records 2 distinct hosts and world size 4 in the tracker on the login node
# (reached over the network, with its token), and its gradients crossed the nodes' links: the
# bytes through node2's port on the bridge are at least the all-reduced gradients of every step.
# Usage: equivalence_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON
set -euo pipefail
# shellcheck source=tests/cluster/cluster_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster_test_lib.sh"
cluster_test_init "$@"
start_tracker
tiny_job 40
sed -i 's/log_every: 5/log_every: 1/' "$work/tiny.yaml"
hostfile "$work/two-nodes" 2 2
hostfile "$work/one-node" 1 4
train_args=(--config "$work/tiny.yaml" --data "$work/shards" --log-level info)

before=$(link_bytes node2)
start=$(now_ms)
NMT_TRACKER_URL=$tracker_url NMT_TRACKER_TOKEN_FILE=$work/token \
  mpirun_train node1 "$work/two-nodes" 4 "${train_args[@]}" --run-dir "$work/2x2" \
  --experiment equivalence > "$work/2x2.log" 2>&1 || { cat "$work/2x2.log"; fail "2x2 run"; }
echo "2 nodes x 2 ranks: $(elapsed "$start") ms"
crossed=$(($(link_bytes node2) - before))

start=$(now_ms)
mpirun_train node1 "$work/one-node" 4 "${train_args[@]}" --run-dir "$work/1x4" \
  > "$work/1x4.log" 2>&1 || { cat "$work/1x4.log"; fail "1x4 run"; }
echo "1 node x 4 ranks: $(elapsed "$start") ms"
start=$(now_ms)
on node1 "$bin/nmt-train" "${train_args[@]}" --run-dir "$work/1x1" --threads 1 \
  > "$work/1x1.log" 2>&1 || { cat "$work/1x1.log"; fail "1-rank run"; }
echo "1 rank, 4 micro-batches accumulated: $(elapsed "$start") ms"

# Where each rank ran: hosts from the ranks' own log lines.
grep -q "node2" "$work/2x2.log" || fail "no rank of the 2x2 run says it ran on node2"
compare_params "$work/2x2/$final" "$work/1x4/$final" 0 || fail "2x2 and 1x4 differ"
"$python" - "$work/2x2/metrics.jsonl" "$work/1x1/metrics.jsonl" <<'PY' || fail "2x2 and 1 rank differ"
import json, sys
def losses(path):
    return {m["step"]: m["value"] for m in map(json.loads, open(path)) if m["key"] == "train/loss"}
a, b = losses(sys.argv[1]), losses(sys.argv[2])
assert a.keys() == b.keys() and len(a) >= 40, (sorted(a), sorted(b))
worst = max(abs(a[s] - b[s]) / abs(a[s]) for s in a)
print(f"train/loss at {len(a)} steps, 4 ranks against 1: largest relative difference {worst:.2g}")
assert worst <= 1e-4, worst
PY

# Every step all-reduced the gradient (4 bytes a parameter) through node2's link at least once.
params=$("$python" -c '
import h5py, sys
with h5py.File(sys.argv[1], "r") as f:
    print(sum(f["model"][k].size for k in f["model"]))' "$work/2x2/$final")
echo "node2's link carried $crossed bytes; $steps steps x $params parameters x 4 bytes =" \
  "$((steps * params * 4))"
((crossed >= steps * params * 4)) || fail "too few bytes crossed node2's link for the all-reduce"

tracked_run equivalence > "$work/run.json"
"$python" - "$work/run.json" <<'PY' || fail "the tracked 2x2 run"
import json, sys
run = json.load(open(sys.argv[1]))
info = run.get("run", run)
assert info["world_size"] == 4, info["world_size"]
assert info["status"] == "finished", info["status"]
hosts = set(info["host"].split(","))
assert hosts == {"node1", "node2"}, f"hosts recorded: {info['host']}"
print("tracked: world size 4, hosts node1 and node2, finished")
PY
echo ok
