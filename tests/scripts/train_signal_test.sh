#!/usr/bin/env bash
# nmt-train under real signals, with a real nmt-trackerd:
#   1. SIGTERM mid-run: exit 75, a checkpoint at the step it stopped after, the tracked run
#      "preempted" with its last train/loss point; --resume continues the same tracked run
#      (attempt 2) to "finished"; a refused start (no --resume) changes nothing in the tracker.
#   2. two run directories with the same name (exp1/tiny, exp2/tiny) are two tracked runs, and
#      nmt-evaluate --record puts an eval into the right one;
#   3. 2 ranks through jobs/train_mpirun.sh and SIGINT: exit 130, "killed", world size 2.
# Usage: train_signal_test.sh BUILD_DIR PYTHON DATA_DIR
set -euo pipefail
# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
build=$1 python=$2 data=$3
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=$build/apps
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
work=$(mktemp -d)
tracker_pid=
trap 'stop_local_tracker; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

make_tiny_shards "$bin/nmt-preprocess" "$data" "$work/shards"
start_local_tracker "$bin/nmt-trackerd" "$work/tracker.db" "$work/port"

args=(--data "$work/shards" --tracker-port-file "$work/port" --experiment sig --log-level warn
  --set model.layers=1 --set model.d_model=32 --set model.d_ff=64 --set model.heads=2
  --set model.d_k=16 --set model.d_v=16 --set data.max_src_tokens=400 --set data.max_tgt_tokens=400
  --set train.warmup_steps=10 --set train.validate_every=0 --set train.log_every=5
  --set checkpoint.every_steps=0 --set train.threads=1)

# api PATH: the daemon's JSON answer; query EXPR: a Python expression over it (`j`).
query() {
  "$python" - "$(cat "$work/port")" "$1" "$2" << 'PY'
import json, sys, urllib.request
j = json.load(urllib.request.urlopen("http://127.0.0.1:%s%s" % (sys.argv[1], sys.argv[2])))
print(eval(sys.argv[3]))
PY
}
run_of() { query "/api/runs?experiment=sig" "[r for r in j['runs'] if r['uid'] == '$1'][0]['$2']"; }
uid_of() { "$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["uid"])' "$1/run.json"; }
# has_metric RUN_DIR N: metrics.jsonl holds N train/loss points.
has_metric() {
  local n
  n=$(grep -cs '"key": "train/loss"' "$1/metrics.jsonl") || true
  ((${n:-0} >= $2))
}
# wait_for_metric RUN_DIR N: until metrics.jsonl holds N train/loss points; fails when the training
# ($pid) ends first, or hangs for 240 s (below the test's timeout, so that this says so).
wait_for_metric() {
  wait_while_running "$pid" 240 has_metric "$1" "$2" ||
    fail "no $2 train/loss points in $1: the training ended, or hung for 240 s"
}
last_loss_step() { grep '"key": "train/loss"' "$1/metrics.jsonl" | tail -1 | sed 's/.*"step": \([0-9]*\).*/\1/'; }

# 1. SIGTERM, resume, refused start
run=$work/runs/term
"$bin/nmt-train" "${args[@]}" --run-dir "$run" --set train.max_steps=100000 > "$work/term.out" &
pid=$!
wait_for_metric "$run" 2
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[[ $rc -eq 75 ]] || fail "SIGTERM: exit $rc, expected 75"
grep -q "stopped (preempted" "$work/term.out" || fail "no stop line: $(cat "$work/term.out")"
ckpt=$(ls "$run/checkpoints" | grep '^step-' | tail -1)
step=$((10#$(echo "$ckpt" | sed 's/step-\([0-9]*\)\.h5/\1/')))
[[ $(last_loss_step "$run") -eq $step ]] || fail "the stop step $step was not logged last"
uid=$(uid_of "$run")
[[ $(run_of "$uid" status) == preempted ]] || fail "status $(run_of "$uid" status), expected preempted"
tracked=$(query "/api/runs/$(run_of "$uid" run_id)/metrics?key=train/loss" "j['points'][-1]['step']")
[[ $tracked -eq $step ]] || fail "the tracker's last train/loss is at step $tracked, not $step"
echo "SIGTERM: exit 75 after step $step, checkpoint $ckpt, tracked run preempted"

"$bin/nmt-train" "${args[@]}" --run-dir "$run" --resume --set "train.max_steps=$((step + 3))" \
  > "$work/resume.out"
grep -q "trained 3 steps" "$work/resume.out" || fail "resume: $(cat "$work/resume.out")"
[[ $(uid_of "$run") == "$uid" ]] || fail "resume changed the run's uid"
[[ $(run_of "$uid" attempt) -eq 2 && $(run_of "$uid" status) == finished ]] ||
  fail "resume: attempt $(run_of "$uid" attempt), status $(run_of "$uid" status)"
rc=0
"$bin/nmt-train" "${args[@]}" --run-dir "$run" > /dev/null 2>&1 || rc=$?
[[ $rc -eq 1 ]] || fail "a start over existing checkpoints exited $rc, expected 1"
[[ $(query "/api/runs?experiment=sig" "len(j['runs'])") -eq 1 ]] || fail "a refused start made a run"
[[ $(run_of "$uid" status) == finished ]] || fail "a refused start changed the status"
echo "resume: attempt 2 of the same run, finished; a refused start changed nothing"

# 2. the same directory name twice
for exp in exp1 exp2; do
  dropout=$([[ $exp == exp1 ]] && echo 0.1 || echo 0.3)
  "$bin/nmt-train" "${args[@]}" --run-dir "$work/runs/$exp/tiny" --set train.max_steps=2 \
    --set "model.dropout=$dropout" > /dev/null
done
one=$(uid_of "$work/runs/exp1/tiny") two=$(uid_of "$work/runs/exp2/tiny")
[[ $one != "$two" ]] || fail "two run directories share a uid"
[[ $(query "/api/runs?experiment=sig" "len([r for r in j['runs'] if r['name'] == 'tiny'])") -eq 2 ]] ||
  fail "exp1/tiny and exp2/tiny are not two runs"
id2=$(run_of "$two" run_id)
[[ $(query "/api/runs/$id2" "j['params']['model.dropout']") == 0.3 ]] || fail "exp2/tiny's params"
"$bin/nmt-evaluate" --checkpoint "$work/runs/exp2/tiny/checkpoints/step-00000002.h5" \
  --split valid --beam 1 --sentences 5 --record --tracker-port-file "$work/port" \
  --log-level warn > /dev/null
[[ $(query "/api/runs/$id2" "len(j['evals'])") -eq 1 &&
  $(query "/api/runs/$(run_of "$one" run_id)" "len(j['evals'])") -eq 0 ]] ||
  fail "nmt-evaluate --record did not record into exp2/tiny's run alone"
echo "same name, two directories: two runs; the eval went to the right one"

# 3. two ranks, SIGINT to jobs/train_mpirun.sh
run=$work/runs/int2
# Job control on: a background job of a script starts with SIGINT ignored, which bash cannot trap;
# as a job of its own it gets SIGINT as from a terminal's Ctrl-C.
set -m
NMT_BUILD_DIR=$build NMT_THREADS_PER_RANK=1 "$root/jobs/train_mpirun.sh" 2 "${args[@]}" \
  --run-dir "$run" --set train.max_steps=100000 > "$work/int.out" 2>&1 &
pid=$!
set +m
wait_for_metric "$run" 2
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[[ $rc -eq 130 ]] || fail "SIGINT to 2 ranks: exit $rc, expected 130: $(tail -5 "$work/int.out")"
uid=$(uid_of "$run")
[[ $(run_of "$uid" status) == killed && $(run_of "$uid" world_size) -eq 2 ]] ||
  fail "2 ranks: status $(run_of "$uid" status), world size $(run_of "$uid" world_size)"
ls "$run/checkpoints" | grep -q '^step-' || fail "2 ranks: no checkpoint"
# The tracker has the resolved config: 2 batches per update (1 per rank), a concrete precision.
params="/api/runs/$(run_of "$uid" run_id)"
[[ $(query "$params" "j['params']['train.update_batches']") == 2 &&
  $(query "$params" "j['params']['train.precision']") != auto ]] || fail "unresolved params tracked"
echo "2 ranks, SIGINT: exit 130, killed, world size 2, checkpoint $(ls "$run/checkpoints" | tail -1)"
echo ok
