#!/usr/bin/env bash
# A run directory belongs to one training at a time, and a run killed at any moment loses and
# mixes nothing, through the command line as users and requeued jobs run it:
#   1. two nmt-train started together on one directory: one trains, the other fails at once naming
#      the holder (host, pid, since); the same for two --resume; every checkpoint is one run's;
#   2. a checkpoint temporary left by a killed write (step-N.h5.tmp.PID) is removed at the next
#      start, with a log line; a checkpoint whose step attribute was changed with h5py is refused;
#   3. a tracked run SIGKILLed right after a checkpoint lands, then between two log lines, and
#      resumed each time: metrics.jsonl has one line per (key, step), the daemon (a real
#      nmt-trackerd on 127.0.0.1) has every step's point exactly once, the killed attempts are
#      marked crashed and the last is finished.
# Usage: run_dir_test.sh BUILD_DIR PYTHON DATA_DIR
set -euo pipefail
# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
tracked_test_init "$@"

make_tiny_shards "$bin/nmt-preprocess" "$data" "$work/shards"
train=("$bin/nmt-train" --data "$work/shards" --log-level info "${tiny_model_settings[@]}"
  --set train.threads=1 --set train.log_every=1 --set checkpoint.keep_last=50)

# The uids of a directory's checkpoints, one line each (h5py).
checkpoint_uids() {
  "$python" - "$1"/checkpoints/step-*.h5 <<'PY'
import sys
import h5py
for path in sys.argv[1:]:
    with h5py.File(path, "r") as f:
        uid = f.attrs.get("run_uid", b"")
        print(uid.decode() if isinstance(uid, bytes) else uid)
PY
}

# 1. Two trainings on one directory.
echo "== two trainers started together"
both=("${train[@]}" --run-dir "$work/shared" --set train.validate_every=0
  --set checkpoint.every_steps=5 --set train.max_steps=120)
"${both[@]}" --set train.seed=1 > "$work/a.out" 2> "$work/a.err" &
a=$!
"${both[@]}" --set train.seed=2 > "$work/b.out" 2> "$work/b.err" &
b=$!
rc_a=0 rc_b=0
wait "$a" || rc_a=$?
wait "$b" || rc_b=$?
echo "exit codes: $rc_a and $rc_b"
if ((rc_a == 0 && rc_b != 0)); then loser=b; elif ((rc_b == 0 && rc_a != 0)); then loser=a; else
  fail "both or neither trained (exit codes $rc_a and $rc_b): $(tail -n 2 "$work/a.err" "$work/b.err")"
fi
grep -E "is in use by nmt-train \(pid [0-9]+ on host .+, since [0-9T:-]+Z\)" "$work/$loser.err" > /dev/null ||
  fail "the refused trainer does not name the holder: $(tail -3 "$work/$loser.err")"
uids=$(checkpoint_uids "$work/shared" | sort -u)
[[ $(wc -l <<< "$uids") == 1 && -n "$uids" ]] || fail "checkpoints of several runs: $uids"
grep -q "\"uid\": \"$uids\"" "$work/shared/run.json" || fail "the checkpoints' uid is not run.json's"

echo "== two resumes started together"
"${both[@]}" --set train.max_steps=240 --resume > "$work/c.out" 2> "$work/c.err" &
c=$!
"${both[@]}" --set train.max_steps=240 --resume > "$work/d.out" 2> "$work/d.err" &
d=$!
rc_c=0 rc_d=0
wait "$c" || rc_c=$?
wait "$d" || rc_d=$?
echo "exit codes: $rc_c and $rc_d"
((rc_c == 0 && rc_d != 0 || rc_d == 0 && rc_c != 0)) ||
  fail "two resumes: exit codes $rc_c and $rc_d"
grep -q "is in use by nmt-train" "$work/c.err" "$work/d.err" || fail "no holder named"

echo "== a resume after deleting run.lock under a running trainer"
held=("${train[@]}" --run-dir "$work/held" --set train.validate_every=0
  --set checkpoint.every_steps=100000 --set train.max_steps=100000)
"${held[@]}" > "$work/held.out" 2> "$work/held.err" &
holder=$!
wait_while_running "$holder" 120 test -s "$work/held/run.lock" ||
  fail "the trainer did not record itself in run.lock: $(tail -3 "$work/held.err")"
rm "$work/held/run.lock"
rc=0
"${held[@]}" --resume > "$work/second.out" 2> "$work/second.err" || rc=$?
kill -0 "$holder" 2> /dev/null || fail "the running trainer ended: $(tail -3 "$work/held.err")"
kill -KILL "$holder"
wait "$holder" 2> /dev/null || true
((rc != 0)) || fail "a second trainer ran on the directory once run.lock was deleted"
grep -q "is in use by a process that has not recorded itself in .*run.lock (was it deleted?)" \
  "$work/second.err" || fail "the refusal does not say the record is gone: $(tail -3 "$work/second.err")"

# 2. A checkpoint write killed half-way leaves its temporary; the next start removes it.
echo "== stale temporaries"
stale=$work/shared/checkpoints/step-00000245.h5.tmp.4194000
head -c 100000 /dev/zero > "$stale"
"${both[@]}" --set train.max_steps=245 --resume > /dev/null 2> "$work/e.err" ||
  fail "resume: $(tail -3 "$work/e.err")"
[[ ! -e "$stale" ]] || fail "the stale temporary is still there"
grep -q "removed .*step-00000245.h5.tmp.4194000 (100000 bytes)" "$work/e.err" ||
  fail "no log line for the removed temporary: $(grep -i tmp "$work/e.err" | head -3)"

# 2b. A resume-relevant attribute changed with h5py (step 245 -> 249) is refused like a flipped bit.
echo "== a changed checkpoint attribute"
"$python" - "$work/shared/checkpoints/step-00000245.h5" <<'PY'
import sys
import h5py
with h5py.File(sys.argv[1], "r+") as f:
    f.attrs.modify("step", 249)
PY
rc=0
"${both[@]}" --set train.max_steps=255 --resume > /dev/null 2> "$work/f.err" || rc=$?
((rc == 1)) || fail "a checkpoint whose step was changed: exit $rc, expected 1"
grep -q "step-00000245.h5: the training state attributes .* fail their checksum" "$work/f.err" ||
  fail "the refusal names no file or checksum: $(tail -n 3 "$work/f.err")"

# 3. SIGKILLs against a tracked run.
echo "== SIGKILL right after a checkpoint, then between two log lines"
start_local_tracker "$bin/nmt-trackerd" "$work/tracker.db" "$work/tracker.port"
url=http://127.0.0.1:$(cat "$work/tracker.port")
tracked=("${train[@]}" --run-dir "$work/tracked" --tracker-url "$url" --experiment run-dir-test
  --set train.validate_every=10 --set checkpoint.every_steps=10 --set train.max_steps=60)
metrics=$work/tracked/metrics.jsonl
# wait_for CONDITION_COMMAND: polls every 10 ms while the training ($pid) runs; its end cuts the
# wait short, and 300 s stop a hung one (a loaded machine trains slowly).
wait_for() {
  local deadline=$((SECONDS + 300))
  while ((SECONDS < deadline)); do
    "$@" && return 0
    kill -0 "$pid" 2> /dev/null || return 1
    sleep 0.01
  done
  return 1
}
last_step() { tail -1 "$metrics" 2> /dev/null | sed -E 's/^\{"step": ([0-9]+),.*/\1/'; }
past_step() { local s; s=$(last_step); [[ -n "$s" ]] && ((s >= $1)); }

"${tracked[@]}" > /dev/null 2> "$work/k1.err" &
pid=$!
wait_for test -f "$work/tracked/checkpoints/step-00000020.h5" || fail "no step-20 checkpoint"
kill -9 "$pid"
wait "$pid" 2> /dev/null || true
echo "killed 1 at step $(last_step), after the checkpoint of step 20 landed"
"${tracked[@]}" --resume > /dev/null 2> "$work/k2.err" &
pid=$!
wait_for past_step 45 || fail "the resumed run did not reach step 45: $(tail -3 "$work/k2.err")"
kill -9 "$pid"
wait "$pid" 2> /dev/null || true
echo "killed 2 at step $(last_step), between two checkpoints"
[[ -f "$work/tracked/checkpoints/step-00000060.h5" ]] && fail "finished before the kill: proves nothing"
"${tracked[@]}" --resume > /dev/null 2> "$work/k3.err" || fail "last resume: $(tail -3 "$work/k3.err")"

"$python" - "$metrics" "$url" "$work/tracked/run.json" <<'PY'
import collections, json, sys, urllib.request
metrics, url, identity = sys.argv[1:]
lines = [json.loads(line) for line in open(metrics)]
counts = collections.Counter((p["key"], p["step"]) for p in lines)
repeated = [k for k, n in counts.items() if n > 1]
assert not repeated, f"metrics.jsonl repeats {len(repeated)} (key, step) pairs, e.g. {repeated[:3]}"
steps = sorted(s for k, s in counts if k == "train/loss")
assert steps == list(range(1, 61)), f"metrics.jsonl train/loss steps: {steps}"
uid = json.load(open(identity))["uid"]
runs = json.load(urllib.request.urlopen(f"{url}/api/runs?uid={uid}"))["runs"]
assert len(runs) == 1, runs
run = json.load(urllib.request.urlopen(f"{url}/api/runs/{runs[0]['run_id']}"))
series = json.load(urllib.request.urlopen(
    f"{url}/api/runs/{run['run_id']}/metrics?key=train/loss&max_points=1000"))
tracked = [p["step"] for p in series["points"]]
assert tracked == list(range(1, 61)), f"the tracker has train/loss at steps {tracked}"
for key in ("train/lr", "valid/ppl"):
    points = json.load(urllib.request.urlopen(
        f"{url}/api/runs/{run['run_id']}/metrics?key={key}&max_points=1000"))["total_points"]
    expected = sum(1 for k, _ in counts if k == key)
    assert points == expected, f"{key}: the tracker has {points} points, metrics.jsonl {expected}"
statuses = [(a["attempt"], a["status"]) for a in run["attempts"]]
assert statuses == [(1, "crashed"), (2, "crashed"), (3, "finished")], statuses
assert run["status"] == "finished", run["status"]
print(f"metrics.jsonl and the tracker: train/loss at each of steps 1..60 once; attempts {statuses}")
PY
echo ok
