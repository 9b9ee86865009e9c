#!/usr/bin/env bash
# Hang rules around a LongWait, deterministically (tests/hang_probe.cpp): rank 0's long solo work
# is waited for; a rank that does not reach the barrier is reported by rank 0 within seconds, and
# a rank 0 frozen inside the barrier by the others.
# Usage: hang_probe_test.sh MPIEXEC HANG_PROBE
set -euo pipefail
mpiexec=$1 probe=$2
log=$(mktemp)
job='' root=''
trap 'kill -9 $root $job 2>/dev/null || true; pkill -9 -f "$probe frozen-root" || true; rm -f "$log"' EXIT

# The background job $job must end non-zero within 30 s and log a line matching $2. The hang
# timeout is 2 s; the rest is slack for mpirun's start and teardown on a loaded machine.
expect_abort() {
  local name=$1 pattern=$2 start=$SECONDS rc=0
  for _ in $(seq 1 300); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$job" 2>/dev/null; then
    cat "$log"; echo "FAIL: $name: the job still runs 30 s later"; exit 1
  fi
  wait "$job" || rc=$?
  job=''
  echo "$name: exit $rc after $(( SECONDS - start )) s"
  [[ $rc -ne 0 ]] || { cat "$log"; echo "FAIL: $name: exit 0"; exit 1; }
  grep -E "$pattern" "$log" || { cat "$log"; echo "FAIL: $name: no message naming the hung rank"; exit 1; }
}

"$mpiexec" -np 2 --oversubscribe "$probe" slow-root > "$log" 2>&1 ||
  { cat "$log"; echo "FAIL: slow-root: the others did not wait for rank 0's solo work"; exit 1; }
grep -q "barrier passed" "$log" || { cat "$log"; echo "FAIL: slow-root: no barrier"; exit 1; }
echo "slow-root: 6 s of rank-0 work inside a LongWait with a 2 s hang timeout: waited for"

# late-peer: rank 1 reaches the barrier 45 s late.
"$mpiexec" -np 2 --oversubscribe "$probe" late-peer > "$log" 2>&1 &
job=$!
expect_abort late-peer "rank 1 \(.*\) never arrived \(collective 'barrier'"

# frozen-root: 3 ranks; freeze rank 0 once it is at the barrier (rank 2 arrives 8 s later).
"$mpiexec" -np 3 --oversubscribe "$probe" frozen-root > "$log" 2>&1 &
job=$!
for _ in $(seq 1 300); do
  root=$(sed -n 's/^rank 0 at the barrier, pid \([0-9]*\)$/\1/p' "$log")
  [[ -n "$root" ]] && break
  sleep 0.1
done
[[ -n "$root" ]] || { cat "$log"; echo "FAIL: frozen-root: rank 0 not at the barrier"; exit 1; }
# Rank 0 prints just before it enters the barrier: give it time to get there (and announce its
# arrival) before freezing it, or the others would rightly wait for it as for solo work.
sleep 1
kill -STOP "$root"
expect_abort frozen-root "rank 0 \(.*\) \(silent for [0-9]+ s\) arrived but stopped responding"
echo "ok"
