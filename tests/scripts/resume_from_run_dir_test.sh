#!/usr/bin/env bash
# --resume from a run directory alone, through the command line, with a real nmt-trackerd on
# 127.0.0.1:
#   1. a tiny model trained with --set overrides (one layer, d_model 32, ...), tracked, stopped by
#      SIGTERM after a checkpoint; `nmt-train --run-dir R --resume` (no --config, no --data, no
#      tracker flag) reads R/config.yaml and trains on to train.max_steps as the same tracked run;
#   2. --config configs/base.yaml on a resume of that run is refused naming the differing keys;
#   3. the directory moved to another path, under another name, resumes its own tracked run
#      (attempt 3, finished, its metrics to the new last step; no second run), and run.json
#      records the new path;
#   4. what the daemon then holds: each attempt's run directory (the new path for attempt 3) and
#      provenance (command line, git revision as `git rev-parse` says, LibTorch, device, CPU,
#      precision and why), every checkpoint written as an artifact, and train/tokens equal at each
#      log step to the sum of train/window_tgt_tokens so far, across both resumes.
# Usage: resume_from_run_dir_test.sh BUILD_DIR PYTHON DATA_DIR SOURCE_DIR
set -euo pipefail
# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
build=$(cd "$1" && pwd) python=$2 data=$3 root=$4
bin=$build/apps
[[ -f "$data/val.en.gz" ]] || { echo "Multi30k not found at $data"; exit 77; }
work=$(mktemp -d)
tracker_pid=
pid=
cleanup() {
  if [[ -n "$pid" ]]; then kill -9 "$pid" 2> /dev/null || true; fi
  stop_local_tracker
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

make_tiny_shards "$bin/nmt-preprocess" "$data" "$work/shards"
start_local_tracker "$bin/nmt-trackerd" "$work/tracker.db" "$work/tracker.port"
url=http://127.0.0.1:$(cat "$work/tracker.port")

# tracked_run UID: the daemon's summary of the runs of experiment resume-dir-test, checked to be
# exactly one, of uid UID; prints "RUN_ID NAME STATUS ATTEMPTS LAST_TRAIN_LOSS_STEP".
tracked_run() {
  "$python" - "$url" "$1" <<'PY'
import json, sys, urllib.request
url, uid = sys.argv[1], sys.argv[2]
body = json.load(urllib.request.urlopen(f"{url}/api/runs"))
runs = [r for r in (body["runs"] if isinstance(body, dict) else body)
        if r["experiment"] == "resume-dir-test"]
assert len(runs) == 1, f"{len(runs)} runs in the experiment: {[(r['name'], r['uid']) for r in runs]}"
run = runs[0]
assert run["uid"] == uid, f"the tracked run's uid is {run['uid']}, run.json's {uid}"
points = json.load(urllib.request.urlopen(
    f"{url}/api/runs/{run['run_id']}/metrics?key=train/loss&max_points=100000"))["points"]
print(run["run_id"], run["name"], run["status"], run["attempts"], points[-1]["step"])
PY
}
uid_of() { "$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1/run.json" "$2"; }

echo "== trained with overrides, stopped by SIGTERM after a checkpoint"
first=$work/first
"$bin/nmt-train" --data "$work/shards" --run-dir "$first" --log-level info \
  "${tiny_model_settings[@]}" --set train.threads=1 --set train.validate_every=0 \
  --set train.log_every=1 --set checkpoint.every_steps=2 --set train.max_steps=60 \
  --tracker-url "$url" --experiment resume-dir-test > "$work/1.out" 2> "$work/1.err" &
pid=$!
for _ in $(seq 1 12000); do
  [[ -f "$first/checkpoints/step-00000002.h5" ]] && break
  kill -0 "$pid" 2> /dev/null || break
  sleep 0.01
done
kill -TERM "$pid" 2> /dev/null || true
rc=0
wait "$pid" || rc=$?
pid=
((rc == 75)) || fail "the first run ended with exit code $rc, not 75 (stopped): $(tail -3 "$work/1.err")"
stopped=$(grep -o "stopped (preempted, signal [0-9]*) at step [0-9]*" "$work/1.out" | grep -o '[0-9]*$')
((stopped < 60)) || fail "the first run was not stopped before step 60"
uid=$(uid_of "$first" uid)
echo "stopped at step $stopped; run uid $uid"

echo "== nmt-train --run-dir R --resume, nothing else"
"$bin/nmt-train" --run-dir "$first" --resume --log-level info > "$work/2.out" 2> "$work/2.err" ||
  fail "resume without --config: $(tail -3 "$work/2.err")"
grep -q "config: $first/config.yaml (the run's" "$work/2.err" ||
  fail "no log line naming the config read: $(head -3 "$work/2.err")"
grep -q "resumed from .*step-0*$stopped.h5 at step $stopped" "$work/2.err" ||
  fail "did not resume from step $stopped: $(grep -i resum "$work/2.err" | head -3)"
grep -q "step 60 reached" "$work/2.out" || fail "did not reach step 60: $(cat "$work/2.out")"
grep -q "^  layers: 1$" "$first/config.yaml" || fail "config.yaml lost the override model.layers=1"
read -r run_id name status attempts last < <(tracked_run "$uid")
[[ $name == first && $status == finished && $attempts == 2 && $last == 60 ]] ||
  fail "tracked run $run_id: name $name, status $status, attempts $attempts, last step $last"
echo "resumed from step $stopped to 60 under its own config.yaml; tracked run $run_id, attempt 2"

echo "== --config that differs is refused naming the keys"
rc=0
"$bin/nmt-train" --run-dir "$first" --resume --config "$root/configs/base.yaml" \
  --data "$work/shards" --set train.max_steps=70 --log-level info > /dev/null 2> "$work/3.err" || rc=$?
((rc == 1)) || fail "--config base.yaml on the tiny run: exit code $rc, not 1"
grep -q "different model config (.*layers: 6 vs 1" "$work/3.err" ||
  grep -q "different model config (.*layers: 1 vs 6" "$work/3.err" ||
  fail "the refusal names no differing key: $(tail -2 "$work/3.err")"

echo "== the run directory moved elsewhere, under another name"
mkdir "$work/elsewhere"
mv "$first" "$work/elsewhere/renamed"
moved=$work/elsewhere/renamed
"$bin/nmt-train" --run-dir "$moved" --resume --set train.max_steps=70 --log-level info \
  > "$work/4.out" 2> "$work/4.err" || fail "resume of the moved directory: $(tail -3 "$work/4.err")"
grep -q "step 70 reached" "$work/4.out" || fail "did not reach step 70: $(cat "$work/4.out")"
# A refused registration is logged as "the daemon refused POST /api/runs with 409 (uid ...
# belongs to run ...)"; a bare 409 would also match a tokens/s figure in the step lines.
refusal='daemon refused|belongs to run|untracked'
grep -Eqi "$refusal" "$work/4.err" &&
  fail "the moved run was not tracked: $(grep -Ei "$refusal" "$work/4.err" | head -2)"
[[ $(uid_of "$moved" uid) == "$uid" ]] || fail "run.json's uid changed"
[[ $(uid_of "$moved" run_dir) == "$moved" ]] ||
  fail "run.json records $(uid_of "$moved" run_dir), not the new path $moved"
read -r run_id2 name status attempts last < <(tracked_run "$uid")
[[ $run_id2 == "$run_id" && $name == first && $status == finished && $attempts == 3 && $last == 70 ]] ||
  fail "tracked run $run_id2: name $name, status $status, attempts $attempts, last step $last"
echo "the moved directory resumed tracked run $run_id (attempt 3) to step 70; run.json: $moved"

echo "== provenance, checkpoint artifacts and train/tokens in the daemon"
revision=$(git -C "$root" rev-parse --short=12 HEAD 2> /dev/null || true)
"$python" - "$url" "$run_id" "$first" "$moved" "$revision" "$stopped" <<'PY' ||
import json, sys, urllib.request
url, run_id, first, moved, revision, stopped = sys.argv[1:]
get = lambda path: json.load(urllib.request.urlopen(f"{url}{path}"))
run = get(f"/api/runs/{run_id}")
attempts = run["attempts"]
assert [a["run_dir"] for a in attempts] == [first, first, moved], [a["run_dir"] for a in attempts]
for a in attempts:
    p = a["provenance"]
    assert p["command_line"].split()[0].endswith("nmt-train"), p["command_line"]
    assert "--run-dir " + a["run_dir"] in p["command_line"], p["command_line"]
    if revision:
        assert p["git.revision"] == revision and p["git.dirty"] in ("true", "false"), p
        assert (p["git.dirty"] == "true") == bool(p.get("git.diff_sha256")), p
    assert p["libtorch.line"] in ("current", "debian") and p["libtorch.version"], p
    assert p["device"] == "cpu" and p["cpu"], p
    assert p["precision"] in ("fp32", "bf16") and p["precision.reason"], p
    assert p["world_size"] == 1 and p["hosts"], p
assert "--resume" in attempts[2]["provenance"]["command_line"]
steps = sorted(a["step"] for a in run["artifacts"] if a["kind"] == "checkpoint")
# checkpoint.every_steps 2, and the one the SIGTERM stop wrote
assert steps == sorted(set(range(2, 71, 2)) | {int(stopped)}), steps
assert all(a["path"].startswith(moved + "/checkpoints/")
           for a in run["artifacts"] if a["kind"] == "checkpoint" and a["step"] > 60), run["artifacts"]
series = lambda key: {p["step"]: p["value"] for p in get(
    f"/api/runs/{run_id}/metrics?key={key}&max_points=100000")["points"]}
tokens, window = series("train/tokens"), series("train/window_tgt_tokens")
assert sorted(tokens) == sorted(window) and max(tokens) == 70, (len(tokens), len(window))
total = 0
for step in sorted(window):
    total += window[step]
    assert tokens[step] == total, (step, tokens[step], total)
print(f"3 attempts with provenance, {len(steps)} checkpoint artifacts, "
      f"train/tokens {int(total)} at step 70")
PY
  fail "the daemon's record of run $run_id"
echo PASS
