#!/usr/bin/env bash
# A job of 2 nodes x 2 ranks (jobs/slurm/base-1node.sbatch, submitted with --nodes=1-2) loses
# node2: the node is drained and the job requeued (`scontrol requeue`: SIGTERM, nmt-train
# checkpoints at the update boundary and exits 75). Slurm keeps a requeued job's task count (4,
# from its first allocation), so the pending job is shrunk as docs/cluster.md says
# (`scontrol update jobid=J NumNodes=1-2 NumTasks=2`). It comes back on node1 alone with 2 ranks,
# resumes from the checkpoint and continues exactly, checked on the training loss of every step
# against an uninterrupted 2-node run (fp32):
#  - up to the checkpoint the two ran the same 4-rank layout: bit for bit the same;
#  - the 20 steps after the resume: within 1e-4 (relative). The config fixes the global update
#    and dropout follows the global micro-batch, so the data, the masks, the learning rate and
#    Adam's state are the same; only the order of the gradient sums differs (2 ranks adding 2
#    accumulated micro-batches each, against Open MPI's all-reduce of 4), by rounding: about
#    1e-7 here. Training amplifies rounding step by step (it reaches 1e-5 some 60 steps later), so
#    the window is kept short; a resume that lost the data position, the schedule or Adam's
#    moments moves the losses by percents at once.
# Parameters are not compared, for the reason equivalence_test.sh gives. The tracker on the login
# node holds one run of two attempts: the first preempted on both nodes, the second finished on
# node1.
# Usage: requeue_drained_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON
set -euo pipefail
# shellcheck source=tests/cluster/cluster_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster_test_lib.sh"
cluster_test_init "$@"
undrain() { ctl scontrol update nodename=node2 state=resume 2> /dev/null || true; }
trap 's=$?; undrain; cluster_test_cleanup $s' EXIT
start_tracker
export NMT_TRACKER_URL=$tracker_url NMT_TRACKER_TOKEN_FILE=$work/token
steps=120
tiny_config "$work/tiny.yaml" "$steps"
sed -i 's/log_every: 5/log_every: 1, lr_factor: 0.1/' "$work/tiny.yaml"

reference=$(submit base-1node.sbatch "$work/reference" "$work/tiny.yaml" --nodes=2 --ntasks-per-node=2)
wait_job_state "$reference" COMPLETED 150

job=$(NMT_TRAIN_ARGS="--experiment requeued" submit base-1node.sbatch "$work/run" \
  "$work/tiny.yaml" --nodes=1-2 --ntasks-per-node=2)
wait_step "$work/run" 20 90
out=$work/slurm/transformer-base-$job.out
grep -q "4 rank(s) on 2 node(s)" "$out" || { cat "$out"; fail "the job did not start on 2 nodes"; }
ctl scontrol update nodename=node2 state=drain reason=cluster-test
start=$(now_ms)
ctl scontrol requeue "$job"
wait_job_state "$job" PENDING 60
ctl scontrol update jobid="$job" NumNodes=1-2 NumTasks=2
wait_job_state "$job" COMPLETED 180
echo "requeued and finished on node1 alone $(elapsed "$start") ms after the requeue"
grep -q "checkpointed and stopped (preempted)" "$out" || fail "nmt-train did not checkpoint on requeue"
grep -q "restart 1: 2 rank(s) on 1 node(s)" "$out" || { cat "$out"; fail "the requeued job is not 2 ranks on 1 node"; }
grep -q "resumed from" "$out" || fail "nmt-train did not resume"
[[ "$(job_field "$job" NodeList)" == node1 ]] || fail "the requeued job ran on $(job_field "$job" NodeList)"
checkpoints_intact "$work/run"
resumed_at=$(grep -o "resumed from .* at step [0-9]*" "$out" | grep -o '[0-9]*$' | head -1)
"$python" - "$work/reference/metrics.jsonl" "$work/run/metrics.jsonl" "$resumed_at" <<'PY' ||
import json, sys
def losses(path):  # a step logged twice (before the stop, again after the resume): the last
    return {m["step"]: m["value"] for m in map(json.loads, open(path)) if m["key"] == "train/loss"}
reference, run, resumed = losses(sys.argv[1]), losses(sys.argv[2]), int(sys.argv[3])
assert reference.keys() == run.keys(), (len(reference), len(run))
before = [s for s in run if s <= resumed]
after = [s for s in run if resumed < s <= resumed + 20]
assert len(before) >= 10 and len(after) == 20, (resumed, len(before), len(after))
assert all(run[s] == reference[s] for s in before), "the runs differ before the stop"
worst = max(abs(reference[s] - run[s]) / abs(reference[s]) for s in after)
print(f"train/loss: steps 1-{resumed} bit for bit; the 20 steps after the resume on 2 ranks "
      f"within {worst:.2g} (relative) of the uninterrupted run")
assert worst <= 1e-4, worst
PY
  fail "the resumed run differs"
tracked_run requeued > "$work/run.json"
"$python" - "$work/run.json" <<'PY' || fail "the tracked run"
import json, sys
run = json.load(open(sys.argv[1]))
attempts = [(a["attempt"], a["status"], a["world_size"], a["host"]) for a in run["attempts"]]
assert run["status"] == "finished", run["status"]
assert attempts == [(1, "preempted", 4, "node1,node2"), (2, "finished", 2, "node1")], attempts
print("tracked run: attempt 1 preempted on node1,node2 (4 ranks), attempt 2 finished on node1 (2)")
PY
echo ok
