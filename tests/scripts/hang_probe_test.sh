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
echo "ok"
