#!/usr/bin/env bash
# nmt-trackerd started again at once beside the daemon it replaces, as users do after `kill PID`:
# 50 rounds of kill (SIGTERM and SIGKILL in turn, no pause) and a start on the same database and
# port. Every start listens, answers and takes a write; every run written before a kill is there
# at the end (nothing lost); a daemon stopped with SIGTERM logs that its database is closed.
# A start while another process holds the database waits, then fails naming that process.
# Usage: trackerd_restart_test.sh TRACKERD PYTHON
set -euo pipefail
# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"  # wait_while_running
trackerd=$1 python=$2
work=$(mktemp -d)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]+"${pids[@]}"}"; do
    kill -KILL "$pid" 2> /dev/null || true
    disown "$pid" 2> /dev/null || true  # no "Killed" notice
  done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# start ROUND PORT: a daemon on the test's database; its log is $work/round-ROUND.log.
start() {
  "$trackerd" --db "$work/tracker.db" --port "$2" --port-file "$work/port" --log-level info \
    > "$work/round-$1.log" 2>&1 &
  pid=$!
  pids+=("$pid")
}

# answering ROUND: until the round's daemon logs that it listens (not the one it replaces, which
# may still answer for a moment); fails if it exited first, or hung for 60 s.
answering() {
  wait_while_running "$pid" 60 grep -qs "listening on" "$work/round-$1.log" ||
    fail "round $1: not listening (exited, or hung for 60 s): $(cat "$work/round-$1.log")"
}

# One request: METHOD PATH [BODY]; prints the answer, fails on a non-2xx status.
call() {
  "$python" - "http://127.0.0.1:$port$2" "$1" "${3:-}" << 'PY'
import sys, urllib.request
url, method, body = sys.argv[1], sys.argv[2], sys.argv[3]
request = urllib.request.Request(url, body.encode() if body else None,
                                 {"Content-Type": "application/json"}, method=method)
print(urllib.request.urlopen(request, timeout=30).read().decode())
PY
}

start 0 0
answering 0
port=$(cat "$work/port")
call POST /api/runs '{"experiment": "restart", "name": "r0"}' > /dev/null || fail "round 0: write"
for round in $(seq 1 50); do
  signal=TERM
  ((round % 2 == 0)) && signal=KILL
  old=$pid
  kill "-$signal" "$old"
  [[ $signal == KILL ]] && disown "$old"  # no "Killed" notice
  start "$round" "$port"
  answering "$round"
  call POST /api/runs "{\"experiment\": \"restart\", \"name\": \"r$round\"}" > /dev/null ||
    fail "round $round (after SIG$signal): write refused: $(cat "$work/round-$round.log")"
  if [[ $signal == TERM ]]; then
    wait "$old" || fail "round $round: the daemon stopped by SIGTERM exited with $?"
    grep -q "database .* closed" "$work/round-$((round - 1)).log" ||
      fail "round $round: the stopped daemon did not log its database closed"
  fi
done
[[ "$(cat "$work/port")" == "$port" ]] || fail "the port file no longer names port $port"
call GET "/api/runs?experiment=restart" > "$work/runs.json"
"$python" - "$work/runs.json" << 'PY' || fail "runs lost across the restarts"
import json, sys
names = sorted(run["name"] for run in json.load(open(sys.argv[1]))["runs"])
expected = sorted(f"r{i}" for i in range(51))
assert names == expected, (len(names), sorted(set(expected) - set(names)))
PY

# A start while another process holds the database (a connection in SQLite's exclusive locking
# mode, which keeps the whole file to itself) waits for the busy timeout, then fails naming it.
kill -TERM "$pid"
wait "$pid" || true
"$python" - "$work/tracker.db" "$work/holder.ready" << 'PY' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA locking_mode = EXCLUSIVE")
db.execute("BEGIN EXCLUSIVE")
open(sys.argv[2], "w").close()
time.sleep(60)
PY
holder=$!
pids+=("$holder")
wait_while_running "$holder" 60 test -f "$work/holder.ready" ||
  fail "the holding process did not start"
if "$trackerd" --db "$work/tracker.db" --port 0 > "$work/held.log" 2>&1; then
  fail "a daemon started on a database another process holds"
fi
grep -q "database is locked after waiting [0-9]* s; held by pid $holder (python3)" "$work/held.log" ||
  fail "the refusal does not name the holder (pid $holder): $(cat "$work/held.log")"
echo ok
