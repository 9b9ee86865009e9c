#!/usr/bin/env bash
# A job of 2 nodes x 2 ranks (jobs/slurm/base-1node.sbatch, submitted with --nodes=1-2) loses
# node2: the node is drained and the job requeued (`scontrol requeue`: SIGTERM, nmt-train
# checkpoints at the update boundary and exits 75). Slurm keeps a requeued job's task count (4,
# from its first allocation), so the pending job is shrunk as docs/cluster.md says
# (`scontrol update jobid=J NumNodes=1-2 NumTasks=2`). It comes back on node1 alone with 2 ranks,
# resumes from the checkpoint and continues exactly: its final parameters match an uninterrupted
# 2-node run within 1e-5 (the config fixes the global update, and dropout follows the global
# micro-batch). Here they match bit for bit: 2 ranks of 2 accumulated micro-batches add
# (a + b) + (c + d), as Open MPI's all-reduce of 4 small buffers does; the tolerance covers an
# all-reduce algorithm that adds in another order (large buffers: see equivalence_test.sh).
# Usage: requeue_drained_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON
set -euo pipefail
# shellcheck source=tests/cluster/cluster_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster_test_lib.sh"
cluster_test_init "$@"
undrain() { ctl scontrol update nodename=node2 state=resume 2> /dev/null || true; }
trap 'undrain; cluster_test_cleanup' EXIT
steps=200
final=$(printf 'checkpoints/step-%08d.h5' "$steps")
tiny_config "$work/tiny.yaml" "$steps"

reference=$(submit base-1node.sbatch "$work/reference" "$work/tiny.yaml" --nodes=2 --ntasks-per-node=2)
wait_job_state "$reference" COMPLETED 150

job=$(submit base-1node.sbatch "$work/run" "$work/tiny.yaml" --nodes=1-2 --ntasks-per-node=2)
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
compare_params "$work/reference/$final" "$work/run/$final" 1e-5 || fail "the resumed run differs"
echo ok
