#!/usr/bin/env bash
# nmt-tracker sync against a real nmt-trackerd on 127.0.0.1:
#   1. a tiny run trained with no tracker at all (only run.json, config.yaml, metrics.jsonl,
#      checkpoints, plus an analysis.md), first uploaded in part and then whole, and one trained against a daemon URL nobody listens on
#      (everything in its spool, plus an eval written into it in the spool's format) are synced:
#      each is listed once with its uid, name, experiment and config, as many train/loss points
#      as metrics.jsonl holds, its artifacts, the spooled eval once, and a final status (the tools'
#      own spools: record_offline_test.sh);
#   2. a second sync of both adds nothing: the database dump is identical;
#   3. bad input: a directory without run.json is refused naming the file (exit 1); a loop of
#      symbolic links in a run directory is named, the rest of it and the other directories are
#      synced (exit 1); a malformed line in metrics.jsonl is named by file and line (exit 1) and
#      the points before it stay.
# Usage: tracker_sync_test.sh BUILD_DIR PYTHON DATA_DIR
set -euo pipefail
# shellcheck source=tests/scripts/tiny_shards.sh
source "$(dirname "${BASH_SOURCE[0]}")/tiny_shards.sh"
tracked_test_init "$@"

make_tiny_shards "$bin/nmt-preprocess" "$data" "$work/shards"
train() {  # train RUN_DIR [NMT_TRAIN_ARGS...]: 6 steps, a checkpoint every 2, every step logged
  local run=$1
  shift
  "$bin/nmt-train" --data "$work/shards" --run-dir "$run" --log-level warn \
    "${tiny_model_settings[@]}" --set train.threads=1 --set train.validate_every=0 \
    --set train.log_every=1 --set checkpoint.every_steps=2 --set train.max_steps=6 \
    --experiment sync-test "$@" > "$run.out" 2>&1 || fail "training $run: $(tail -3 "$run.out")"
}

echo "== trained with no tracker, and against a daemon that is not listening"
offline=$work/offline spooled=$work/spooled
train "$offline"
printf '# Analysis\n\nworst sentences...\n' > "$offline/analysis.md"
dead_port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
train "$spooled" --tracker-url "http://127.0.0.1:$dead_port"
spool=$spooled/tracker-spool-rank0.jsonl
[[ -s "$spool" ]] || fail "the run trained against a dead daemon left no spool"
[[ ! -e "$offline/tracker-spool-rank0.jsonl" ]] || fail "the untracked run has a spool"
echo '{"kind":"evals","run_id":null,"body":{"split":"valid","step":6,"checkpoint":"checkpoints/step-00000006.h5","bleu":1.25,"perplexity":321.5,"signature":"offline"}}' >> "$spool"

start_local_tracker "$bin/nmt-trackerd" "$work/tracker.db" "$work/tracker.port"
url=http://127.0.0.1:$(cat "$work/tracker.port")
sync() { "$bin/nmt-tracker" --url "$url" --log-level warn sync "$@"; }

echo "== bad input: no run.json"
mkdir -p "$work/empty"
rc=0
sync "$work/empty" > "$work/bad.out" 2>&1 || rc=$?
((rc == 1)) || fail "sync of a directory without run.json: exit $rc: $(cat "$work/bad.out")"
grep -q "$work/empty/run.json" "$work/bad.out" || fail "the error does not name run.json: $(cat "$work/bad.out")"
[[ "$("$python" -c 'import json, sys, urllib.request; print(len(json.load(urllib.request.urlopen(sys.argv[1] + "/api/runs"))["runs"]))' "$url")" == 0 ]] ||
  fail "a refused sync registered a run"

echo "== a partial upload of the untracked run (its first 10 metric lines), then both runs whole"
mv "$offline/metrics.jsonl" "$work/metrics.full"
head -10 "$work/metrics.full" > "$offline/metrics.jsonl"
sync "$offline" > "$work/sync0.out" || fail "partial sync: $(cat "$work/sync0.out")"
grep -q "10 points sent (10 stored)" "$work/sync0.out" || fail "partial sync: $(cat "$work/sync0.out")"
mv "$work/metrics.full" "$offline/metrics.jsonl"
sync "$offline" "$spooled" > "$work/sync1.out" || fail "sync: $(cat "$work/sync1.out")"
cat "$work/sync1.out"
[[ $(wc -l < "$work/sync1.out") == 2 ]] || fail "not one summary line per run directory"

# check_run RUN_DIR STATUS EVALS: the daemon's run of RUN_DIR's uid, checked against the directory.
check_run() {
  "$python" - "$url" "$@" <<'PY'
import json, os, sys, urllib.request
url, run_dir, status, evals = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
get = lambda path: json.load(urllib.request.urlopen(url + path))
identity = json.load(open(os.path.join(run_dir, "run.json")))
runs = get(f"/api/runs?uid={identity['uid']}")["runs"]
assert len(runs) == 1, f"{len(runs)} runs of uid {identity['uid']}"
run = get(f"/api/runs/{runs[0]['run_id']}")
s = run["summary"] if "summary" in run else run
assert s["uid"] == identity["uid"] and s["name"] == identity["name"], (s["uid"], s["name"])
assert s["experiment"] == "sync-test", s["experiment"]
assert s["status"] == status, f"status {s['status']}, expected {status}"
assert run["config"] == open(os.path.join(run_dir, "config.yaml")).read(), "config differs"
lines = [json.loads(l) for l in open(os.path.join(run_dir, "metrics.jsonl")) if l.strip()]
want = sorted(l["step"] for l in lines if l["key"] == "train/loss" and l["value"] is not None)
series = get(f"/api/runs/{s['run_id']}/metrics?key=train/loss&max_points=100000")
got = [p["step"] for p in series["points"]]
assert got == want and len(want) == 6, f"train/loss steps {got}, metrics.jsonl {want}"
assert len(run["evals"]) == evals, f"{len(run['evals'])} evals, expected {evals}"
ckpts = sorted(os.listdir(os.path.join(run_dir, "checkpoints")))
kinds = sorted(a["kind"] for a in run["artifacts"])
want_kinds = sorted(["checkpoint"] * len([c for c in ckpts if c.startswith("step-")]) +
                    (["analysis"] if os.path.exists(os.path.join(run_dir, "analysis.md")) else []))
assert kinds == want_kinds, f"artifacts {kinds}, expected {want_kinds}"
for a in run["artifacts"]:
    assert a["has_content"] == (a["kind"] == "analysis"), a
# The attempt's run directory and the provenance nmt-train wrote into run.json.
attempt = run["attempts"][-1]
assert attempt["run_dir"] == os.path.abspath(run_dir), attempt["run_dir"]
assert attempt["provenance"] == identity["provenance"], (attempt["provenance"], identity)
assert "--run-dir" in attempt["provenance"]["command_line"] and attempt["provenance"]["cpu"], \
    attempt["provenance"]
print(s["run_id"], s["status"], len(got), len(run["evals"]), len(run["artifacts"]))
PY
}
check_run "$offline" finished 0 || fail "the untracked run"
check_run "$spooled" finished 1 || fail "the spooled run"

# dump: the whole database, row by row, read while the daemon runs (WAL: a consistent snapshot).
dump() { "$python" -c 'import sqlite3, sys; print("\n".join(sqlite3.connect(sys.argv[1]).iterdump()))' "$work/tracker.db"; }
dump > "$work/dump1.sql"

# copy_run FROM TO UID: a copy of run directory FROM at TO, as another run (its own uid).
copy_run() {
  cp -r "$1" "$2"
  rm -f "$2/run.lock"
  "$python" - "$2" "$3" <<'PY'
import json, os, sys
run, uid = sys.argv[1], sys.argv[2]
identity = json.load(open(os.path.join(run, "run.json")))
identity["uid"] = uid
identity["run_dir"] = run
json.dump(identity, open(os.path.join(run, "run.json"), "w"))
PY
}

echo "== second sync: nothing changes"
sync "$offline" "$spooled" > "$work/sync2.out" || fail "second sync: $(cat "$work/sync2.out")"
cat "$work/sync2.out"
[[ $(grep -c "(0 stored)" "$work/sync2.out") == 2 ]] || fail "the second sync stored points again"
dump > "$work/dump2.sql"
diff "$work/dump1.sql" "$work/dump2.sql" > "$work/dump.diff" ||
  fail "the second sync changed the database: $(head -20 "$work/dump.diff")"

echo "== a loop of links in one directory: reported for it alone, the other directory synced"
looped=$work/looped
copy_run "$offline" "$looped" "$(printf 'c%.0s' {1..32})"
ln -s loop2 "$looped/loop1"
ln -s loop1 "$looped/loop2"
ln -s loop1 "$looped/averaged.h5"
rc=0
sync "$looped" "$offline" > "$work/looped.out" 2>&1 || rc=$?
((rc == 1)) || fail "sync beside a loop of links: exit $rc: $(cat "$work/looped.out")"
grep -q "^$offline: run " "$work/looped.out" ||
  fail "the healthy directory was not synced beside the looped one: $(cat "$work/looped.out")"
grep -q "$looped/averaged.h5: a loop of symbolic links" "$work/looped.out" ||
  fail "the loop is not named: $(cat "$work/looped.out")"
"$python" -c 'import json, sys, urllib.request; r = json.load(urllib.request.urlopen(sys.argv[1] + "/api/runs?uid=" + "c" * 32))["runs"]; assert len(r) == 1 and r[0]["status"] == "finished", r' "$url" ||
  fail "the rest of the looped directory was not synced"

echo "== a malformed line in metrics.jsonl"
broken=$work/broken
copy_run "$offline" "$broken" "$(printf 'b%.0s' {1..32})"
"$python" - "$broken" <<'PY'
import os, sys
run = sys.argv[1]
path = os.path.join(run, "metrics.jsonl")
lines = open(path).read().splitlines(True)
lines.insert(4, '{"step": 3, "key": "train/loss", "value": }\n')
open(path, "w").write("".join(lines))
PY
rc=0
sync "$broken" > "$work/broken.out" 2>&1 || rc=$?
((rc == 1)) || fail "sync of a malformed metrics.jsonl: exit $rc: $(cat "$work/broken.out")"
grep -q "$broken/metrics.jsonl:5" "$work/broken.out" ||
  fail "the error does not name metrics.jsonl line 5: $(cat "$work/broken.out")"
"$python" - "$url" "$broken" <<'PY' || fail "the points before the malformed line are not kept"
import json, os, sys, urllib.request
url, run = sys.argv[1], sys.argv[2]
runs = json.load(urllib.request.urlopen(url + "/api/runs?uid=" + "b" * 32))["runs"]
assert len(runs) == 1, runs
lines = [json.loads(l) for l in open(os.path.join(run, "metrics.jsonl")).readlines()[:4]]
for key in {l["key"] for l in lines}:
    series = json.load(urllib.request.urlopen(
        f"{url}/api/runs/{runs[0]['run_id']}/metrics?key={key}&max_points=100000"))
    want = sorted(l["step"] for l in lines if l["key"] == key and l["value"] is not None)
    got = [p["step"] for p in series["points"]]
    assert set(want) <= set(got), (key, want, got)
PY
echo "PASS"
