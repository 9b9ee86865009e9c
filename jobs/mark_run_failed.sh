#!/usr/bin/env bash
# Marks a training run's tracked run "failed" when its job ended without rank 0 saying so: a node
# crash or a launcher that killed the ranks (Open MPI's mpirun ends every rank about a second
# after it loses one node's daemon, before nmt-train's hang detection can report). Called by
# jobs/train_mpirun.sh and jobs/slurm/train.sh when the launcher exits with a failure; changes
# nothing when no tracker is set in the environment (NMT_TRACKER_URL or NMT_TRACKER_PORT_FILE, with
# NMT_TRACKER_TOKEN_FILE and NMT_TRACKER_CA_FILE as nmt-tracker reads them), when the run directory
# has no run.json, or when the tracker has the run in any state but "running".
# Usage: jobs/mark_run_failed.sh BUILD_DIR RUN_DIR
set -uo pipefail
build=${1:?usage: mark_run_failed.sh BUILD_DIR RUN_DIR} run_dir=${2:?run directory}
[[ -n "${NMT_TRACKER_URL:-}${NMT_TRACKER_PORT_FILE:-}" && -f "$run_dir/run.json" ]] || exit 0
uid=$(grep -o '"uid": *"[0-9a-f]*"' "$run_dir/run.json" | grep -o '[0-9a-f]\{8,\}')
[[ -n "$uid" ]] || exit 0
tracker=("$build/apps/nmt-tracker")
[[ -n "${NMT_TRACKER_PORT_FILE:-}" && -z "${NMT_TRACKER_URL:-}" ]] &&
  tracker+=(--port-file "$NMT_TRACKER_PORT_FILE")
# The daemon may be unreachable too: a bounded try, never the job's exit status.
run=$(timeout 30 "${tracker[@]}" runs --uid "$uid" --status running --json 2> /dev/null |
  grep -o '"run_id": *[0-9]*' | grep -o '[0-9]*$' | head -1)
[[ -n "$run" ]] || exit 0
if timeout 30 "${tracker[@]}" set-status "$run" failed > /dev/null 2>&1; then
  echo "mark_run_failed.sh: the job ended without a report from rank 0: tracked run $run marked failed"
else
  echo "mark_run_failed.sh: could not mark tracked run $run failed (the tracker did not answer)" >&2
fi
exit 0
