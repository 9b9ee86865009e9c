#!/usr/bin/env bash
# Hang rules around a LongWait, deterministically (tests/hang_probe.cpp): rank 0's long solo work
# is waited for; a rank that does not reach the barrier is reported by rank 0 within seconds.
# Usage: hang_probe_test.sh MPIEXEC HANG_PROBE
set -euo pipefail
mpiexec=$1 probe=$2
log=$(mktemp)
trap 'rm -f "$log"' EXIT

"$mpiexec" -np 2 --oversubscribe "$probe" slow-root > "$log" 2>&1 ||
  { cat "$log"; echo "FAIL: slow-root: the others did not wait for rank 0's solo work"; exit 1; }
grep -q "barrier passed" "$log" || { cat "$log"; echo "FAIL: slow-root: no barrier"; exit 1; }
echo "slow-root: 6 s of rank-0 work inside a LongWait with a 2 s hang timeout: waited for"

start=$SECONDS
rc=0
"$mpiexec" -np 2 --oversubscribe "$probe" late-peer > "$log" 2>&1 || rc=$?
took=$(( SECONDS - start ))
echo "late-peer: exit $rc after $took s"
[[ $rc -ne 0 ]] || { cat "$log"; echo "FAIL: late-peer: the job passed a 20 s hang"; exit 1; }
(( took < 15 )) || { cat "$log"; echo "FAIL: late-peer: detected only after $took s"; exit 1; }
grep -E "rank 1 \(.*\) never arrived \(collective 'barrier'" "$log" ||
  { cat "$log"; echo "FAIL: late-peer: no message naming rank 1"; exit 1; }
# frozen-root: 3 ranks; freeze rank 0 once it is at the barrier (rank 2 arrives 4 s later).
start=$SECONDS
"$mpiexec" -np 3 --oversubscribe "$probe" frozen-root > "$log" 2>&1 &
job=$!
root=
for _ in $(seq 1 100); do
  root=$(sed -n 's/^rank 0 at the barrier, pid \([0-9]*\)$/\1/p' "$log")
  [[ -n "$root" ]] && break
  sleep 0.1
done
[[ -n "$root" ]] || { cat "$log"; kill -9 "$job"; echo "FAIL: frozen-root: rank 0 not at the barrier"; exit 1; }
trap 'kill -9 "$root" "$job" 2>/dev/null || true; pkill -9 -f "$probe frozen-root" || true; rm -f "$log"' EXIT
kill -STOP "$root"
for _ in $(seq 1 150); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$job" 2>/dev/null; then
  cat "$log"; echo "FAIL: frozen-root: the job still waits 15 s after rank 0 froze"; exit 1
fi
rc=0
wait "$job" || rc=$?
echo "frozen-root: exit $rc after $(( SECONDS - start )) s"
[[ $rc -ne 0 ]] || { cat "$log"; echo "FAIL: frozen-root: exit 0"; exit 1; }
grep -E "rank 0 \(.*\) \(silent for [0-9]+ s\) arrived but stopped responding" "$log" ||
  { cat "$log"; echo "FAIL: frozen-root: no message naming rank 0"; exit 1; }
echo "ok"
