#!/usr/bin/env bash
# A node lost in the middle of a 2-node x 2-rank training (jobs/train_mpirun.sh, reporting to the
# tracker on the login node):
#   link    node2's link cut at the switch (its bridge port down: no reset, packets just stop);
#   crash   every process of node2 killed at once (its slurmd, Open MPI's daemon, its ranks).
# Every surviving rank exits within dist.hang_timeout_s + 10 s (rank 0's grace to name the
# culprit first, HangOptions::root_grace_s) + 20 s (polling, MPI_Abort's teardown of the local
# ranks, a loaded 2-core machine): for `link` the ranks of both nodes (node2 is alive, only cut
# off), for `crash` those of node1. The job's output names the lost ranks' host:
#   link   nmt-train's hang detection, after the hang timeout: rank 0 names node2's ranks (those
#          whose arrival at the collective never came, and those that arrived, then fell silent)
#          and their host; node2's ranks name rank 0, silent;
#   crash  Open MPI: mpirun loses node2's daemon (its connection is closed with the process) and
#          ends the job within seconds, naming node2 ("Remote daemon ... on node node2", or the
#          TCP transport's "Peer host: node2" from the ranks that lost their peers), before the
#          hang timeout; rank 0 is killed with the others, so jobs/train_mpirun.sh
#          marks the tracked run failed (jobs/mark_run_failed.sh).
# The tracked run ends "failed"; every checkpoint written loads with its checksums verified.
# Usage: peer_lost_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON link|crash
set -euo pipefail
# shellcheck source=tests/cluster/cluster_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster_test_lib.sh"
mode=${5:?usage: peer_lost_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON link|crash}
cluster_test_init "${@:1:4}"
# The node crashed by this test comes back for the next (its slurmd; the namespaces stayed).
[[ $mode == crash ]] &&
  trap 's=$?; "$root/tests/cluster/cluster.sh" restart-slurmd "$cluster" node2; cluster_test_cleanup $s' EXIT
hang=15
bound=$((hang + 10 + 20))
start_tracker
HANG_TIMEOUT_S=$hang CHECKPOINT_EVERY=10 tiny_config "$work/tiny.yaml" 100000
hostfile "$work/two-nodes" 2 2
NMT_TRACKER_URL=$tracker_url NMT_TRACKER_TOKEN_FILE=$work/token \
  start_mpirun_job run "$work/two-nodes" 4 --experiment "lost-$mode"
wait_step "$work/run" 30 120
[[ -n "$(node_ranks node2)" ]] || fail "no rank runs on node2"

lost=$(now_ms)
case $mode in
  link) link_down node2; survivors=(node1 node2) ;;
  crash) "$root/tests/cluster/cluster.sh" crash "$cluster" node2; survivors=(node1) ;;
  *) fail "unknown mode $mode" ;;
esac
took=$(wait_ranks_gone "$bound" "${survivors[@]}")
echo "node2 lost ($mode): the surviving ranks (on ${survivors[*]}) exited after $took ms" \
  "(hang timeout ${hang} s, bound ${bound} s)"

if [[ $mode == link ]]; then
  link_up node2
  cut_links=()
fi
# mpirun itself ends once its ranks are gone (its daemon on node2 is reachable again, or dead).
# The wait runs in a subshell: when it fails, mpirun is still killed here.
mpirun_ended() { ! kill -0 "$job_pid" 2> /dev/null; }
(wait_progressing 60 "mpirun did not end after its ranks" mpirun_ended) ||
  { kill -KILL "$job_pid" 2> /dev/null || true; exit 1; }
status=0
wait "$job_pid" || status=$?
echo "mpirun exit status $status after $(elapsed "$lost") ms"
((status != 0)) || fail "a job that lost a node exited 0"

if [[ $mode == link ]]; then
  report=$(rank_output run | grep -E "never arrived|stopped responding" | head -3 || true)
  echo "the ranks' reports: ${report:-none}"
  root_report=$(grep "aborting the job from rank 0 " <<< "$report" || true)
  for named in "rank 2 (node2:" "rank 3 (node2:" "host(s) node2;"; do
    grep -qF "$named" <<< "$root_report" ||
      { rank_output run | tail -20; fail "rank 0's report does not name '$named'"; }
  done
else
  report=$(grep -E "Remote daemon.* on node|Peer host" "$work/run.log" | sort -u || true)
  echo "Open MPI's report: ${report:-none}"
  grep -qE "(Remote daemon.* on node|Peer host:) +node2$" <<< "$report" ||
    { tail -30 "$work/run.log"; fail "the job's output does not name node2"; }
fi
checkpoints_intact "$work/run"
tracked_run "lost-$mode" > "$work/run.json"
"$python" -c '
import json, sys
run = json.load(open(sys.argv[1])); info = run.get("run", run)
assert info["status"] == "failed", info["status"]
print("tracked run:", info["status"])' "$work/run.json" || fail "the tracked run is not failed"
echo ok
