#!/usr/bin/env bash
# jobs/slurm/base-1node.sbatch (1 node x 2 ranks) and jobs/slurm/big-multinode.sbatch (2 nodes x 2
# ranks) run as written, submitted from the login node through jobs/slurm/submit.sh, a tiny
# config given through the scripts' own override variables (NMT_CONFIG, NMT_TRAIN_ARGS), resized
# for this machine on sbatch's command line (no GPU, one CPU a rank). Both finish COMPLETED with
# their final checkpoint, report to the tracker on the login node over the network (its token,
# NMT_TRACKER_URL); then on a compute node nmt-average averages each run's checkpoints and
# nmt-evaluate --record scores the average, and the tracker holds the eval of both runs.
# Usage: job_scripts_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON
set -euo pipefail
# shellcheck source=tests/cluster/cluster_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster_test_lib.sh"
cluster_test_init "$@"
start_tracker
export NMT_TRACKER_URL=$tracker_url NMT_TRACKER_TOKEN_FILE=$work/token
steps=24
CHECKPOINT_EVERY=6 tiny_config "$work/tiny.yaml" "$steps"

base=$(NMT_TRAIN_ARGS="--experiment scripts-base" submit base-1node.sbatch "$work/base" \
  "$work/tiny.yaml" --ntasks-per-node=2)
big=$(NMT_TRAIN_ARGS="--experiment scripts-big" submit big-multinode.sbatch "$work/big" \
  "$work/tiny.yaml" --nodes=2 --ntasks-per-node=2)
wait_job_state "$base" COMPLETED 150
wait_job_state "$big" COMPLETED 150
grep -q "2 rank(s) on 1 node(s)" "$work/slurm/transformer-base-$base.out" || fail "base: not 2 ranks on 1 node"
grep -q "4 rank(s) on 2 node(s)" "$work/slurm/transformer-big-multinode-$big.out" ||
  { cat "$work/slurm/transformer-big-multinode-$big.out"; fail "big-multinode: not 4 ranks on 2 nodes"; }
[[ "$(job_field "$big" NodeList)" == "node[1-2]" ]] || fail "big-multinode ran on $(job_field "$big" NodeList)"

for run in base big; do
  [[ -f "$work/$run/$(printf 'checkpoints/step-%08d.h5' "$steps")" ]] || fail "$run: no final checkpoint"
  on node2 "$bin/nmt-average" --run-dir "$work/$run" --last 4 --output "$work/$run/averaged.h5" \
    --log-level warn > /dev/null || fail "$run: nmt-average"
  on node2 "$bin/nmt-evaluate" --checkpoint "$work/$run/averaged.h5" --run-dir "$work/$run" \
    --split valid --sentences 50 --beam 2 --threads 1 --record --log-level warn > "$work/$run.eval" ||
    fail "$run: nmt-evaluate --record"
  tracked_run "scripts-$run" > "$work/$run.json"
  "$python" - "$work/$run.json" "$run" <<'PY' || fail "$run: the tracked run"
import json, sys
run = json.load(open(sys.argv[1])); info = run.get("run", run)
assert info["status"] == "finished", info["status"]
evals = run["evals"]
assert len(evals) == 1 and evals[0]["split"] == "valid" and evals[0]["bleu"] is not None, evals
print(f"{sys.argv[2]}: finished, world size {info['world_size']}, valid BLEU {evals[0]['bleu']:.2f} recorded")
PY
done
echo ok
