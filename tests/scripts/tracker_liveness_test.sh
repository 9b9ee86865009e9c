#!/usr/bin/env bash
# Runs that die without a word are found, with a real nmt-trackerd (--crashed-after 4) and real
# tiny trainings sending a heartbeat every half second:
#   1. a trainer that lives stays running past the silence the daemon allows;
#   2. a trainer killed with SIGKILL becomes crashed, ended at its last contact, which is before
#      the kill;
#   3. a trainer stopped with SIGSTOP becomes crashed, and running again once SIGCONT lets its
#      heartbeat through; its own end (SIGTERM: preempted, exit 75) is then recorded.
# Usage: tracker_liveness_test.sh BUILD_DIR PYTHON DATA_DIR
set -euo pipefail
# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
tracked_test_init "$@"

silence=4
make_tiny_shards "$bin/nmt-preprocess" "$data" "$work/shards"
start_local_tracker "$bin/nmt-trackerd" "$work/tracker.db" "$work/tracker.port" \
  --crashed-after "$silence"
url=http://127.0.0.1:$(cat "$work/tracker.port")

# start_trainer RUN: a tiny training far longer than the test, heartbeats every 0.5 s; sets pid.
start_trainer() {
  "$bin/nmt-train" --data "$work/shards" --run-dir "$work/$1" --log-level warn \
    "${tiny_model_settings[@]}" --set train.threads=1 --set train.validate_every=0 \
    --set train.max_steps=1000000 --set checkpoint.every_steps=1000 \
    --set tracker.heartbeat_s=0.5 --experiment liveness \
    --tracker-url "$url" > "$work/$1.out" 2>&1 &
  pid=$!
}

# run_state NAME: "STATUS ENDED_AT LAST_CONTACT_AT" of the run named NAME's current attempt
# (absent values print as None); nothing while the daemon has no such run.
run_state() {
  "$python" - "$url" "$1" << 'PY'
import json, sys, urllib.request
url, name = sys.argv[1], sys.argv[2]
runs = json.load(urllib.request.urlopen(f"{url}/api/runs?name={name}", timeout=30))["runs"]
if runs:
    run = json.load(urllib.request.urlopen(f"{url}/api/runs/{runs[0]['run_id']}", timeout=30))
    attempt = run["attempts"][-1]
    assert attempt["status"] == run["status"], (attempt, run["status"])
    print(run["status"], attempt["ended_at"], attempt["last_contact_at"])
PY
}
# wait_for_status NAME STATUS SECONDS: until the run's status is STATUS, at most SECONDS.
wait_for_status() {
  local deadline=$((SECONDS + $3)) state
  while ((SECONDS < deadline)); do
    state=$(run_state "$1")
    [[ "${state%% *}" == "$2" ]] && return 0
    sleep 0.2
  done
  fail "run $1 is not $2 after $3 s: ${state:-not registered}; daemon log: $(cat "$work/tracker.port.out")"
}
now() { "$python" -c 'import time; print(time.time())'; }

echo "== a live trainer stays running past the silence allowed"
start_trainer alive
alive=$pid
wait_for_status alive running 120
sleep $((silence + 2))
[[ "$(run_state alive)" == running* ]] || fail "a live trainer's run: $(run_state alive)"
kill -0 "$alive" || fail "the live trainer ended: $(tail -5 "$work/alive.out")"

echo "== SIGKILL: crashed, ended at the last contact"
start_trainer killed
killed=$pid
wait_for_status killed running 120
killed_at=$(now)
kill -KILL "$killed"
wait "$killed" 2> /dev/null || true
wait_for_status killed crashed 60
read -r _ ended contact <<< "$(run_state killed)"
"$python" -c "
import sys
ended, contact, killed_at, silence = map(float, sys.argv[1:])
assert ended == contact, ('ended_at is not the last contact', ended, contact)
assert contact <= killed_at + 0.5, ('a contact after the kill', contact, killed_at)
assert contact > killed_at - silence, ('the last contact is older than the heartbeats allow', contact, killed_at)
" "$ended" "$contact" "$killed_at" "$silence" || fail "the killed run's times"
grep -q "attempt 1: no heartbeat or status for over" "$work/tracker.port.out" ||
  fail "the daemon did not log the crash: $(cat "$work/tracker.port.out")"
[[ "$(run_state alive)" == running* ]] || fail "the live trainer's run: $(run_state alive)"

echo "== SIGSTOP: crashed; SIGCONT: running again"
kill -STOP "$alive"
wait_for_status alive crashed 60
kill -CONT "$alive"
wait_for_status alive running 60
read -r _ ended _ <<< "$(run_state alive)"
[[ "$ended" == None ]] || fail "the revived run keeps ended_at $ended"
kill -TERM "$alive"
rc=0
wait "$alive" || rc=$?
((rc == 75)) || fail "the trainer stopped with SIGTERM exited with $rc: $(tail -5 "$work/alive.out")"
state=$(run_state alive)
[[ "$state" == preempted* ]] || fail "the trainer's own end (preempted) was not recorded: $state"
echo ok
