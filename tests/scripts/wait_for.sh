# Sourced by the test clusters' scripts (tests/slurm/slurm_cluster.sh, tests/cluster/cluster.sh).
# wait_for SECONDS DESCRIPTION COMMAND...: until COMMAND succeeds (every 0.1 s); after SECONDS,
# says what did not happen, where the logs are ($dir/log), and fails.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  for _ in $(seq 1 $((seconds * 10))); do "$@" > /dev/null 2>&1 && return 0; sleep 0.1; done
  echo "$(basename "$0"): $what within $seconds s; logs in $dir/log" >&2
  return 1
}
